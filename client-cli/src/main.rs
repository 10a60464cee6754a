//! `tamsk`: the TAMSK terminal client.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use protocol::bot::BotLevel;
use protocol::settings::{Level, PartialSettings, Settings};
use protocol::wire::ClientMessage;
use tamsk_client::app::{App, Find, Mode};
use tamsk_client::config::{self, Config, DEFAULT_SERVER};
use tamsk_client::gameref::GameRef;
use tamsk_client::net::Net;
use tamsk_client::session::Session;
use tamsk_client::tc::{duration_ms, TimeControl};
use tamsk_client::{games, plain, replay, tournament_cli, tui, EXIT_BAD_INPUT, EXIT_IO};

// The game settings on the command line (`--level`, `--clock`, ...) and the bot.
mod settings_args;
use settings_args::*;

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
    /// Your player token, to be the same player at another address: another node of a
    /// cluster whose own node is down, say (default: the token remembered for --server; the
    /// config file keeps each server's under `accounts`).
    #[arg(
        long,
        global = true,
        env = "TAMSK_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    token: Option<String>,
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
    /// The lobby (full screen): open seeks, live games with their watchers and the other
    /// players online; take a seek (the game starts at once), watch a game or challenge a
    /// player. Signs you in as a player.
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
    /// Swiss tournaments: create, join, withdraw, cancel, show.
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
        /// The games' settings as JSON: the fields given change the control's (e.g.
        /// '{"game_clock":{"main_ms":600000}}'; a tournament whose settings are not the
        /// control's cannot be rated).
        #[arg(long, value_name = "JSON")]
        settings: Option<String>,
    },
    /// Join a tournament (before it starts, or from its next round).
    Join { id: String },
    /// Withdraw from a tournament: you are paired no more (you cannot join it again).
    Withdraw { id: String },
    /// Cancel a tournament you created, before it starts: its players are told.
    Cancel { id: String },
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
            // A file never needs the config; a stored game (by id or short id) needs the server.
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
                    // Sent as given: the server fills the rest from the control's.
                    let settings = match settings
                        .as_deref()
                        .map(serde_json::from_str::<PartialSettings>)
                    {
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
                TournamentAction::Cancel { id } => ClientMessage::TournamentCancel {
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
    // A new name is a new player; the same name (or none given) is us again. A token
    // given is that player, whatever the name.
    let account = account.filter(|a| cli.name.as_ref().is_none_or(|n| *n == a.name));
    let token = cli
        .token
        .clone()
        .or_else(|| account.as_ref().map(|a| a.token.clone()));
    let mut app = App::new(mode.clone(), name, token, Instant::now());
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
#[path = "main_tests.rs"]
mod tests;
