//! `tamsk-bot`: the TAMSK bot as an external client of a live server.

use clap::Parser;
use protocol::settings::Settings;
use server::bot_client::{run, Find, Notice, Options};
use tracing_subscriber::EnvFilter;

/// Plays TAMSK against people on a server, over the websocket protocol.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The server's websocket.
    #[arg(long, env = "TAMSK_URL", default_value = "ws://127.0.0.1:7878/ws")]
    url: String,
    /// The bot's display name (a new player).
    #[arg(long, default_value = "Sandy (bot)")]
    name: String,
    /// Come back as the player with this token instead.
    #[arg(long, env = "TAMSK_BOT_TOKEN")]
    token: Option<String>,
    /// Quick match with these settings (JSON, e.g. '{"level":3}').
    #[arg(long, conflicts_with_all = ["host", "join", "accept_challenges"])]
    seek: Option<String>,
    /// Host a private game with these settings (JSON); the code is printed.
    #[arg(long, conflicts_with_all = ["join", "accept_challenges"])]
    host: Option<String>,
    /// Join the private game with this code.
    #[arg(long, conflicts_with = "accept_challenges")]
    join: Option<String>,
    /// Wait for challenges and accept them.
    #[arg(long, conflicts_with = "tournament")]
    accept_challenges: bool,
    /// Join this tournament and play all its games (until it is over).
    #[arg(long, value_name = "ID", conflicts_with_all = ["seek", "host", "join"])]
    tournament: Option<String>,
    /// Games to play (0: until stopped).
    #[arg(long, default_value_t = 1)]
    games: u32,
    /// Milliseconds the bot takes over a move when no deadline is near (default: its
    /// level's).
    #[arg(long)]
    think_ms: Option<u64>,
    /// How well it plays: easy (no timer flips in the opening, slow flips after it),
    /// normal (one move ahead), hard (searches five).
    #[arg(long, value_enum, default_value = "normal")]
    level: LevelArg,
}

/// The bot's level on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum LevelArg {
    Easy,
    Normal,
    Hard,
}

fn settings(json: &str) -> anyhow::Result<Settings> {
    serde_json::from_str(json).map_err(|e| anyhow::anyhow!("bad settings {json}: {e}"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Logs to stderr: stdout carries the code, the token and the results.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let games = if args.tournament.is_some() {
        0
    } else {
        args.games
    };
    let find = match (&args.seek, &args.host, &args.join) {
        _ if args.tournament.is_some() => {
            Find::Tournament(args.tournament.clone().unwrap_or_default())
        }
        (Some(s), _, _) => Find::Seek(settings(s)?),
        (_, Some(s), _) => Find::Host(settings(s)?),
        (_, _, Some(code)) => Find::JoinCode(code.clone()),
        _ if args.accept_challenges => Find::AcceptChallenges,
        _ => Find::Seek(Settings::default()),
    };
    let options = Options {
        url: args.url,
        name: args.name,
        token: args.token,
        find,
        games,
        config: {
            let level = match args.level {
                LevelArg::Easy => protocol::bot::BotLevel::Easy,
                LevelArg::Normal => protocol::bot::BotLevel::Normal,
                LevelArg::Hard => protocol::bot::BotLevel::Hard,
            };
            let config = level.config();
            protocol::bot::BotConfig {
                think_ms: args.think_ms.unwrap_or(config.think_ms),
                ..config
            }
        },
    };
    // Who it plays as, at once: a bot whose node died is started again against another
    // node with `--token` while its game waits for it.
    let report = run(options, |notice| match notice {
        Notice::Welcome { player, token } => {
            println!("player: {player}");
            println!("token: {token}");
        }
        Notice::Code(code) => println!("code: {code}"),
    })
    .await?;
    for (game, status) in &report.games {
        let result = match status {
            protocol::game::Status::Finished { outcome } => outcome.describe(),
            protocol::game::Status::Aborted { .. } => "aborted".to_string(),
            protocol::game::Status::Playing => "unfinished".to_string(),
        };
        println!("game {game}: {result}");
    }
    println!("actions: {} (refused {})", report.actions, report.refused);
    if report.reconnects > 0 {
        println!("reconnections: {}", report.reconnects);
    }
    Ok(())
}
