//! `tamsk`: the TAMSK terminal client.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use protocol::bot::BotLevel;
use protocol::settings::{FullSocket, GameClock, Level, Settings, Setup};
use protocol::wire::ClientMessage;
use tamsk_client::app::{App, Find, Mode};
use tamsk_client::config::{self, Config, DEFAULT_SERVER};
use tamsk_client::gameref::GameRef;
use tamsk_client::net::Net;
use tamsk_client::session::Session;
use tamsk_client::tc::{duration_ms, too_short_for_people, TimeControl};
use tamsk_client::{games, plain, replay, tournament_cli, tui, EXIT_BAD_INPUT, EXIT_IO};

#[derive(Parser, Debug)]
#[command(
    name = "tamsk",
    version,
    about = "TAMSK online: terminal client",
    after_help = "Exit status: 0 success, 1 a file cannot be read or the server cannot be reached, 2 bad input (usage, or a game file that is not valid).\n\nThe server, your name and your player token are remembered in $TAMSK_CONFIG, or $XDG_CONFIG_HOME/tamsk/config.json, or ~/.config/tamsk/config.json: a restarted `tamsk play` takes your seat in a running game again."
)]
struct Cli {
    /// The server's websocket URL (default: the last one used, else the local server
    /// ws://127.0.0.1:7878/ws).
    #[arg(long, global = true, value_name = "URL")]
    server: Option<String>,
    /// Your display name (default: the last one used, else $USER).
    #[arg(long, global = true)]
    name: Option<String>,
    /// Line mode even on a terminal: one line per event, commands read from stdin.
    #[arg(long, global = true)]
    plain: bool,
    /// Line mode with one JSON object per line.
    #[arg(long, global = true)]
    json: bool,
    /// No terminal bell when time runs low (the screen still flashes).
    #[arg(long, global = true)]
    no_bell: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Quick match: play the first player who asks for the same settings (or take your
    /// seat in your running game again).
    #[command(after_long_help = PLAY_HELP)]
    Play {
        /// Play the computer at once: `--bot easy`, `--bot normal` or `--bot hard`
        /// (`--bot` alone: the server's default level).
        #[arg(long, value_name = "LEVEL", num_args = 0..=1)]
        bot: Option<Option<BotArg>>,
        #[command(flatten)]
        settings: SettingsArgs,
    },
    /// Challenge an online player (by name, or player id) to a game with these settings.
    #[command(after_long_help = PLAY_HELP)]
    Challenge {
        /// The player's display name (or player id).
        #[arg(value_name = "NAME")]
        player: String,
        #[command(flatten)]
        settings: SettingsArgs,
    },
    /// Open a private game: the server gives a code for your opponent's `tamsk join`.
    #[command(after_long_help = PLAY_HELP)]
    Host {
        #[command(flatten)]
        settings: SettingsArgs,
    },
    /// Join a private game by its code.
    #[command(after_long_help = PLAY_HELP)]
    Join {
        /// The code the host was given.
        code: String,
    },
    /// Watch a live game; without a game, list the live games to pick from.
    Watch {
        /// The game: its short id as listed (such as #3f9a0c1d) or its full id.
        #[arg(value_parser = parse_game_ref)]
        game: Option<GameRef>,
        /// Watch the private game started from this code (as its host was given it).
        #[arg(long, conflicts_with = "game")]
        code: Option<String>,
    },
    /// The lobby (full screen): open seeks and live games with their watchers; take a
    /// seek (the game starts at once) or watch a game. Signs you in as a player.
    Lobby,
    /// List the live games, then the finished games the server keeps.
    Games {
        /// Only games of this player (by display name).
        #[arg(long)]
        player: Option<String>,
    },
    /// Who you are on the server: your name and player id, from the config file (no
    /// connection is made).
    Whoami,
    /// The best rated players of a time control (with --json: the server's JSON).
    Leaderboard {
        /// classical, standard (the default), rapid or blitz.
        #[arg(long, value_name = "NAME")]
        tc: Option<String>,
    },
    /// Swiss tournaments: create, join, withdraw, show.
    Tournament {
        #[command(subcommand)]
        action: TournamentAction,
    },
    /// Upcoming, running and finished tournaments (with --json: the server's JSON).
    Tournaments,
    /// A player's ratings per time control (deviation, games, wins/losses/draws) and his
    /// recent rating changes (with --json: the server's JSON).
    Player {
        /// The display name.
        name: String,
    },
    /// Replay a game file (a TAMSK record or a network-server move list such as
    /// `d1-d2/13 g1-f1/20`): on a terminal, step through it with the keys; otherwise (or
    /// with --plain or --json) print the final board and the result.
    Replay(replay::Args),
}

const PLAY_HELP: &str = "\
Typed commands (plain mode: one per line on stdin; full screen: after ':'):
  d1-d2            move the hourglass on d1 to d2 and drop a ring there
  d1-d2.           the same move without dropping (a trailing full stop)
  start d1         pick up the hourglass on d1 (a move in two steps)...
  release d2       ...and put it down on d2
  drop             drop a ring on your destination
  drop e4          the penalty ring on e4 (also: penalty e4)
  claim            drop your ring where your opponent did not
  flip             flip the 15-second timer against your opponent (Level 3)
  X@d4, X@d4.      placement set-up: put hourglass X on d4 (and drop, or not)
  resign           resign the game
  win              claim the win once your opponent's reconnection grace ran out
  new              after a game (full screen): another one, found the same way
  rematch          after a game (full screen): offer or accept a rematch, colours swapped
  decline rematch  decline (or withdraw) a rematch
  accept [N]       accept the challenge you received (the last one, or number N)
  decline [N]      decline it
  quit             leave (your seat is kept for the server's reconnection grace)

Keys (full screen): 1 2 3 pick up your hourglasses, arrows move the cursor, Enter puts
the hourglass down and drops, '.' puts it down without dropping, d drop, c claim,
p penalty ring on the cursor, f flip, R resign, W claim the win, ':' type a command,
? help, q quit; after a game n new game, r rematch; y/n answer a challenge.

Plain mode prints one line per event (with --json one object per line, with a
\"type\": start, turn, event, may, error, presence, result, ...); a \"may\" line lists
what you may do now, in notation, whenever that changes.";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BotArg {
    /// For a beginner: never flips the 15-second timer in the opening, takes its time.
    Easy,
    /// One move ahead.
    Normal,
    /// Searches five moves ahead.
    Hard,
}

impl From<BotArg> for BotLevel {
    fn from(l: BotArg) -> BotLevel {
        match l {
            BotArg::Easy => BotLevel::Easy,
            BotArg::Normal => BotLevel::Normal,
            BotArg::Hard => BotLevel::Hard,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SetupArg {
    Standard,
    Placement,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FullSocketArg {
    Lose,
    Reject,
}

#[derive(Args, Debug)]
struct SettingsArgs {
    /// Rules level: 1 no time rules, 2 hourglasses run, 3 hourglasses and the 15-second
    /// timer.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    level: u8,
    /// How the hourglasses start: on the corners, or beside the board.
    #[arg(long, value_enum, default_value = "standard")]
    setup: SetupArg,
    /// The time control: classical (5-min hourglasses, 20-s timer, 3-s drop grace),
    /// standard (3 min, 15 s, 2 s), rapid (90 s, 10 s, 2 s), blitz (45 s, 5 s, 2 s).
    /// The flags below change single values.
    #[arg(long, value_enum, default_value = "standard")]
    tc: TimeControl,
    /// For tests only: the engine's test speeds (3-s hourglasses, 0.3-s timer, 0.2-s drop
    /// grace), too fast for a person; also allows durations under 2 s on the flags below.
    #[arg(long)]
    test_speeds: bool,
    /// Replaced by `--tc blitz` (and `--test-speeds` for the old test speeds).
    #[arg(long, hide = true)]
    blitz: bool,
    /// Sand in one hourglass: 180s, 3m (a unit is needed).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    hourglass: Option<u64>,
    /// Sand in the 15-second timer (Level 3).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    neutral: Option<u64>,
    /// How long after a release the mover may still drop (Levels 2-3).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    drop_grace: Option<u64>,
    /// A turn whose move is not released within this is forfeited ("none": only the
    /// idle bound, 10 times the abort time).
    #[arg(long, value_name = "DURATION|none", value_parser = optional_duration_ms)]
    turn_limit: Option<MaybeMs>,
    /// A game clock per player ("none" for no clock).
    #[arg(long, value_name = "DURATION|none", value_parser = optional_duration_ms)]
    clock: Option<MaybeMs>,
    /// What moving onto a full socket does.
    #[arg(long, value_enum)]
    full_socket: Option<FullSocketArg>,
    /// A casual game: no rating changes. By default a game at a named time control
    /// (unchanged by the flags above) is rated; other settings are always casual.
    #[arg(long)]
    casual: bool,
}

#[derive(Subcommand, Debug)]
enum TournamentAction {
    /// Create a Swiss tournament: prints its id.
    Create {
        /// Rounds (1 to 20).
        #[arg(long)]
        rounds: u32,
        /// The time control: classical, standard, rapid or blitz (Level 3, with a
        /// 20-minute game clock each).
        #[arg(long, value_enum)]
        tc: TimeControl,
        /// Rated games (the settings must then be the control's).
        #[arg(long)]
        rated: bool,
        /// When it starts: 90s, 10m (default 60 s).
        #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
        starts_in: Option<u64>,
        /// The games' settings as JSON instead (e.g. '{"level":3,"game_clock":{"main_ms":600000}}').
        #[arg(long, value_name = "JSON")]
        settings: Option<String>,
    },
    /// Join a tournament (before it starts, or from its next round).
    Join { id: String },
    /// Withdraw from a tournament: you are paired no more.
    Withdraw { id: String },
    /// Standings (score, Buchholz, Sonneborn-Berger), and pairings and results by round.
    Show { id: String },
}

/// Runs a tournament command that speaks as our player over the websocket.
fn ws_command(cli: &Cli, msg: ClientMessage) -> ExitCode {
    let config_path = config::default_path();
    let config = match config_path.as_deref().map(Config::load) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            eprintln!("tamsk: {e}");
            return ExitCode::from(EXIT_IO);
        }
        None => Config::default(),
    };
    let server = server_url(cli, &config);
    let name = cli
        .name
        .clone()
        .or_else(|| config.name.clone())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "player".to_string());
    let json = cli.json;
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let code = runtime.block_on(async {
        let mut asker = tournament_cli::Asker {
            server: &server,
            config,
            config_path: config_path.as_deref(),
            name,
        };
        tournament_cli::answered(tournament_cli::ask(&mut asker, &msg).await, json)
    });
    ExitCode::from(code)
}

/// A duration or "none".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MaybeMs(Option<u64>);

fn optional_duration_ms(text: &str) -> Result<MaybeMs, String> {
    if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("off") {
        Ok(MaybeMs(None))
    } else {
        duration_ms(text).map(|ms| MaybeMs(Some(ms)))
    }
}

impl SettingsArgs {
    fn settings(&self) -> Result<Settings, String> {
        let level = Level::try_from(self.level)?;
        if self.blitz {
            return Err("--blitz is now `--tc blitz` (45-s hourglasses, 5-s timer); the old 3-s test speeds are --test-speeds".into());
        }
        let mut s = if self.test_speeds {
            Settings::blitz(level)
        } else {
            self.tc.settings(level)
        };
        s.setup = match self.setup {
            SetupArg::Standard => Setup::Standard,
            SetupArg::Placement => Setup::Placement,
        };
        if let Some(ms) = self.hourglass {
            s.hourglass_ms = ms;
        }
        if let Some(ms) = self.neutral {
            s.neutral_ms = ms;
        }
        if let Some(ms) = self.drop_grace {
            s.drop_grace_ms = ms;
        }
        if let Some(MaybeMs(limit)) = self.turn_limit {
            s.turn_limit_ms = limit;
        }
        if let Some(MaybeMs(clock)) = self.clock {
            s.game_clock = clock.map(|main_ms| GameClock {
                main_ms,
                increment_ms: 0,
            });
        }
        if let Some(f) = self.full_socket {
            s.full_socket = match f {
                FullSocketArg::Lose => FullSocket::Lose,
                FullSocketArg::Reject => FullSocket::Reject,
            };
        }
        s.validate().map_err(|e| e.to_string())?;
        let short = too_short_for_people(&s);
        if !self.test_speeds && !short.is_empty() {
            return Err(format!(
                "{} under 2 s cannot be met by a person (add --test-speeds for tests)",
                short.join(", ")
            ));
        }
        Ok(s)
    }
}

/// `ws://host:port/ws` from what a person types: `host:port`, `ws://host:port`, ...
fn normalise_server(url: &str) -> String {
    let url = url.trim();
    let with_scheme = if url.contains("://") {
        url.to_string()
    } else {
        format!("ws://{url}")
    };
    let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    if after_scheme.trim_end_matches('/').contains('/') {
        with_scheme
    } else {
        format!("{}/ws", with_scheme.trim_end_matches('/'))
    }
}

fn bad_settings(e: &str) -> ExitCode {
    eprintln!("tamsk: bad settings: {e}");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// The server: `--server`, else the last one used, else the local one.
fn server_url(cli: &Cli, config: &Config) -> String {
    normalise_server(
        cli.server
            .as_deref()
            .or(config.server.as_deref())
            .unwrap_or(DEFAULT_SERVER),
    )
}

/// `tamsk whoami`: the account kept for the server, without connecting.
fn whoami(cli: &Cli) -> ExitCode {
    let path = config::default_path();
    let config = match path.as_deref().map(Config::load) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            eprintln!("tamsk: {e}");
            return ExitCode::from(EXIT_IO);
        }
        None => Config::default(),
    };
    let server = server_url(cli, &config);
    let account = config.account(&server);
    let line = match (account, cli.json) {
        (Some(a), true) => serde_json::json!({
            "type": "whoami", "server": server, "name": a.name, "player_id": a.player_id,
            "game": a.game,
        })
        .to_string(),
        (None, true) => {
            serde_json::json!({ "type": "whoami", "server": server, "name": null }).to_string()
        }
        (Some(a), false) => {
            let mut line = format!(
                "{} (player {}) on {server}",
                tamsk_client::sanitize::strip(&a.name),
                tamsk_client::sanitize::strip(&a.player_id)
            );
            if let Some(g) = a.game {
                line.push_str(&format!(", seated in game {g}"));
            }
            line
        }
        (None, false) => {
            format!("No player on {server} yet: `tamsk play` registers one with your name")
        }
    };
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
    ExitCode::SUCCESS
}

/// Runs a command that only asks the server's HTTP API.
fn http_command<'a, F, Fut>(cli: &'a Cli, run: F) -> ExitCode
where
    F: FnOnce(String, bool) -> Fut,
    Fut: std::future::Future<Output = u8> + 'a,
{
    let config = config::default_path()
        .and_then(|p| Config::load(&p).ok())
        .unwrap_or_default();
    let server = server_url(cli, &config);
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    ExitCode::from(runtime.block_on(run(server, cli.json)))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mode = match &cli.command {
        Command::Replay(args) => {
            // On a terminal: step through it; elsewhere (pipes, referees): the final board.
            let interactive = !cli.plain && !cli.json && std::io::stdout().is_terminal();
            // A file never needs the config; a game number needs the server.
            let server = match replay::game_number(&args.file) {
                Some(_) => {
                    let config = config::default_path()
                        .and_then(|p| Config::load(&p).ok())
                        .unwrap_or_default();
                    server_url(&cli, &config)
                }
                None => String::new(),
            };
            return replay::main(args, cli.json, interactive, &server);
        }
        Command::Whoami => return whoami(&cli),
        Command::Tournaments => {
            return http_command(&cli, |server, json| async move {
                tournament_cli::list(&server, json).await
            })
        }
        Command::Tournament { action } => {
            let msg = match action {
                TournamentAction::Show { id } => {
                    return http_command(&cli, |server, json| async move {
                        tournament_cli::show(&server, id, json).await
                    })
                }
                TournamentAction::Create {
                    rounds,
                    tc,
                    rated,
                    starts_in,
                    settings,
                } => {
                    let settings = match settings.as_deref().map(serde_json::from_str::<Settings>) {
                        None => None,
                        Some(Ok(s)) => Some(s),
                        Some(Err(e)) => {
                            eprintln!("tamsk: --settings is not valid settings JSON: {e}");
                            return ExitCode::from(EXIT_BAD_INPUT);
                        }
                    };
                    ClientMessage::TournamentCreate {
                        rounds: *rounds,
                        tc: (*tc).into(),
                        rated: *rated,
                        starts_in_ms: *starts_in,
                        settings,
                    }
                }
                TournamentAction::Join { id } => ClientMessage::TournamentJoin {
                    tournament: id.clone(),
                },
                TournamentAction::Withdraw { id } => ClientMessage::TournamentWithdraw {
                    tournament: id.clone(),
                },
            };
            return ws_command(&cli, msg);
        }
        Command::Leaderboard { tc } => {
            return http_command(&cli, |server, json| async move {
                tamsk_client::standings::leaderboard(&server, tc.as_deref(), json).await
            })
        }
        Command::Player { name } => {
            return http_command(&cli, |server, json| async move {
                tamsk_client::standings::player(&server, name, json).await
            })
        }
        Command::Play { bot, settings } => {
            let find = match bot {
                Some(level) => Find::Bot(level.map(BotLevel::from)),
                None => Find::Seek,
            };
            match settings.settings() {
                Ok(settings) => Mode::Play { settings, find },
                Err(e) => return bad_settings(&e),
            }
        }
        Command::Challenge { player, settings } => match settings.settings() {
            Ok(settings) => Mode::Play {
                settings,
                find: Find::Challenge(player.clone()),
            },
            Err(e) => return bad_settings(&e),
        },
        Command::Host { settings } => match settings.settings() {
            Ok(settings) => Mode::Play {
                settings,
                find: Find::Host,
            },
            Err(e) => return bad_settings(&e),
        },
        Command::Join { code } => Mode::Play {
            // The host's settings apply; these are only shown while waiting.
            settings: Settings::level(Level::Three),
            find: Find::Code(code.clone()),
        },
        Command::Watch { game, code } => Mode::Watch {
            game: code.clone().map(GameRef::Code).or(game.clone()),
        },
        Command::Lobby => {
            if cli.plain || cli.json || !std::io::stdout().is_terminal() {
                eprintln!(
                    "tamsk: the lobby is a full-screen view: run it on a terminal, without --plain or --json (scripts: tamsk games)"
                );
                return ExitCode::from(EXIT_BAD_INPUT);
            }
            Mode::Lobby
        }
        Command::Games { player } => Mode::Games {
            player: player.clone(),
        },
    };
    let config_path = config::default_path();
    let config = match config_path.as_deref().map(Config::load) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            eprintln!("tamsk: {e}");
            return ExitCode::from(EXIT_IO);
        }
        None => Config::default(),
    };
    let server = server_url(&cli, &config);
    let account = config.account(&server).cloned();
    let name = cli
        .name
        .clone()
        .or_else(|| account.as_ref().map(|a| a.name.clone()))
        .or_else(|| config.name.clone())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "player".to_string());
    // A new name is a new player; the same name (or none given) is us again.
    let account = account.filter(|a| cli.name.as_ref().is_none_or(|n| *n == a.name));
    let mut app = App::new(
        mode.clone(),
        name,
        account.as_ref().map(|a| a.token.clone()),
        Instant::now(),
    );
    app.resume = account.as_ref().and_then(|a| a.game);
    app.bell = !cli.no_bell;
    app.rated = match &cli.command {
        Command::Play { settings, .. } | Command::Challenge { settings, .. } => {
            settings.casual.then_some(false)
        }
        _ => None,
    };
    let plain = cli.plain
        || cli.json
        || matches!(mode, Mode::Games { .. })
        || !std::io::stdout().is_terminal();
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let code = runtime.block_on(async {
        let session = Session {
            app,
            net: Net::new(&server),
            config,
            config_path,
            server: server.clone(),
        };
        if let Mode::Games { player } = &mode {
            let code = plain::run(session, cli.json).await;
            if code != 0 {
                return code;
            }
            return games::stored(&server, player.as_deref(), cli.json).await;
        }
        if plain {
            plain::run(session, cli.json).await
        } else {
            tui::run(session).await
        }
    });
    // A blocking read of stdin may still be waiting: do not wait for it.
    runtime.shutdown_background();
    ExitCode::from(code)
}

/// The client's runtime (one thread: a terminal game needs no more); the exit code if
/// it cannot start.
fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("tamsk: cannot start: {e}");
            ExitCode::from(EXIT_IO)
        })
}

fn parse_game_ref(text: &str) -> Result<GameRef, String> {
    GameRef::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(optional_duration_ms("5m"), Ok(MaybeMs(Some(300_000))));
        assert_eq!(optional_duration_ms("none"), Ok(MaybeMs(None)));
        assert!(optional_duration_ms("5").is_err(), "a unit is needed");
    }

    fn play(args: &[&str]) -> Result<Settings, String> {
        let cli = Cli::parse_from([&["tamsk", "play"], args].concat());
        let Command::Play { settings, .. } = cli.command else {
            panic!()
        };
        settings.settings()
    }

    #[test]
    fn time_controls_by_name_and_test_speeds_only_on_request() {
        let s = play(&["--tc", "blitz"]).unwrap();
        assert_eq!((s.hourglass_ms, s.neutral_ms), (45_000, 5_000));
        let s = play(&["--tc", "rapid", "--clock", "5m"]).unwrap();
        assert_eq!(s.hourglass_ms, 90_000);
        assert_eq!(s.game_clock.unwrap().main_ms, 300_000);
        assert_eq!(play(&[]).unwrap(), Settings::level(Level::Three));
        let e = play(&["--hourglass", "1s"]).unwrap_err();
        assert!(e.contains("--hourglass under 2 s"), "{e}");
        let e = play(&["--blitz"]).unwrap_err();
        assert!(e.contains("--tc blitz"), "{e}");
        let s = play(&["--test-speeds"]).unwrap();
        assert_eq!(s.hourglass_ms, 3_000);
    }

    fn bot_of(args: &[&str]) -> Result<Option<Option<BotArg>>, clap::error::ErrorKind> {
        match Cli::try_parse_from([&["tamsk", "play"], args].concat()) {
            Ok(Cli {
                command: Command::Play { bot, .. },
                ..
            }) => Ok(bot),
            Ok(_) => panic!("not play"),
            Err(e) => Err(e.kind()),
        }
    }

    #[test]
    fn bot_levels_by_name() {
        assert_eq!(bot_of(&["--bot", "easy"]), Ok(Some(Some(BotArg::Easy))));
        assert_eq!(
            bot_of(&["--bot", "hard", "--level", "2"]),
            Ok(Some(Some(BotArg::Hard)))
        );
        assert_eq!(bot_of(&["--bot=normal"]), Ok(Some(Some(BotArg::Normal))));
        // Alone, the server chooses; absent, no bot.
        assert_eq!(bot_of(&["--bot"]), Ok(Some(None)));
        assert_eq!(bot_of(&["--bot", "--tc", "blitz"]), Ok(Some(None)));
        assert_eq!(bot_of(&[]), Ok(None));
        assert_eq!(
            bot_of(&["--bot", "expert"]),
            Err(clap::error::ErrorKind::InvalidValue)
        );
        assert_eq!(BotLevel::from(BotArg::Easy), BotLevel::Easy);
    }

    #[test]
    fn server_urls() {
        assert_eq!(normalise_server("localhost:7878"), "ws://localhost:7878/ws");
        assert_eq!(normalise_server("ws://h:1"), "ws://h:1/ws");
        assert_eq!(normalise_server("ws://h:1/"), "ws://h:1/ws");
        assert_eq!(normalise_server("ws://h:1/ws"), "ws://h:1/ws");
        assert_eq!(normalise_server("wss://h/tamsk/ws"), "wss://h/tamsk/ws");
    }

    #[test]
    fn play_settings() {
        let cli = Cli::parse_from([
            "tamsk",
            "play",
            "--level",
            "2",
            "--test-speeds",
            "--turn-limit",
            "none",
        ]);
        let Command::Play { settings, bot } = cli.command else {
            panic!()
        };
        assert_eq!(bot, None);
        let s = settings.settings().unwrap();
        assert_eq!(s.level, Level::Two);
        assert_eq!(s.hourglass_ms, 3_000);
        assert_eq!(s.turn_limit_ms, None);
        let cli = Cli::parse_from(["tamsk", "--server", "x:1", "play", "--hourglass", "0s"]);
        let Command::Play { settings, .. } = cli.command else {
            panic!()
        };
        assert!(settings.settings().is_err(), "out of range");
        assert_eq!(cli.server.as_deref(), Some("x:1"));
        // The challenged player and one's own --name are different things.
        let cli = Cli::parse_from(["tamsk", "challenge", "Ben", "--name", "Cid"]);
        assert_eq!(cli.name.as_deref(), Some("Cid"));
        let Command::Challenge { player, .. } = cli.command else {
            panic!()
        };
        assert_eq!(player, "Ben");
    }
}
