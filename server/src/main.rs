//! `tamsk-server`: the live TAMSK server.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use server::Config;
use tracing_subscriber::EnvFilter;

/// jemalloc instead of glibc's malloc: with 18,000 sockets it kept 0.8 KB less per socket
/// (glibc keeps what a burst freed in its per-thread arenas) and spent no more CPU per
/// move (BENCHMARKS.md, issue 14). mimalloc, tried before, kept 4-5 KB more.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// TAMSK online: authoritative real-time websocket server.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address to listen on; the websocket is at /ws, health at /healthz.
    #[arg(long, env = "TAMSK_LISTEN", default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// Connections the kernel may hold for the server before it accepts them (capped by
    /// `net.core.somaxconn`): a burst beyond it waits a second or more to connect.
    #[arg(long, env = "TAMSK_LISTEN_BACKLOG", default_value_t = server::LISTEN_BACKLOG, display_order = 0)]
    listen_backlog: u32,
    /// The database: players, games (and the journals of live ones), ratings and
    /// tournaments. A path: an SQLite file, created on first run. A
    /// `postgres://user:password@host:port/name` URL: that PostgreSQL database (migrated on
    /// start).
    #[arg(long, env = "TAMSK_DB", default_value = "tamsk.db")]
    db: String,
    // The limits and timings: `server::Config`'s fields are the flags from here on.
    #[command(flatten)]
    config: Config,
    /// Structured (JSON) logs. Log level from RUST_LOG (default info).
    // Listed where it always was, right after --lease-ms: clap numbers the flags in the
    // order they are declared (--listen 0, --listen-backlog 1 though shown as 0, --db 2,
    // then Config's from 3: --lease-ms is 7) and sorts a tie by name.
    #[arg(
        display_order = 7,
        long,
        env = "TAMSK_LOG_JSON",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    log_json: bool,
    /// No longer used (the history is a compact log, bounded by --history); accepted so
    /// that old deployments still start.
    #[arg(long, env = "TAMSK_HISTORY_BYTES", hide = true)]
    history_bytes: Option<usize>,
    /// How well the computer plays in `play_bot` games: easy (no timer flips in the
    /// opening, slow flips after it), normal (one move ahead), hard (searches five).
    #[arg(long, env = "TAMSK_BOT_LEVEL", value_enum, default_value = "normal")]
    bot_level: BotLevelArg,
}

/// The bot's level on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum BotLevelArg {
    Easy,
    Normal,
    Hard,
}

impl From<BotLevelArg> for protocol::bot::BotLevel {
    fn from(l: BotLevelArg) -> Self {
        match l {
            BotLevelArg::Easy => protocol::bot::BotLevel::Easy,
            BotLevelArg::Normal => protocol::bot::BotLevel::Normal,
            BotLevelArg::Hard => protocol::bot::BotLevel::Hard,
        }
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    if args.log_json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .init();
    } else {
        tracing_subscriber::fmt().with_env_filter(filter).init();
    }
    // The runtime's threads take the configured nice value as they start (its blocking
    // threads too: they are rare, and the store's threads set their own).
    let nice = args.config.worker_nice;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(move || server::priority::worker_thread(nice))
        .build()?
        .block_on(serve(args))
}

async fn serve(args: Args) -> anyhow::Result<()> {
    if args.history_bytes.is_some() {
        tracing::warn!("--history-bytes (TAMSK_HISTORY_BYTES) is no longer used: the history is bounded by --history");
    }
    let defaults = Config::default();
    let mut config = args.config;
    (config.db_path, config.db_url) = match server::store::Location::parse(&args.db) {
        server::store::Location::Postgres(url) => (None, Some(url)),
        _ => (Some(PathBuf::from(&args.db)), None),
    };
    // What follows from the flags: a larger frame limit raises the hard one, and a slower
    // ping the idle timeout (three pings missed), never below their defaults.
    config.hard_max_message_bytes = defaults
        .hard_max_message_bytes
        .max(config.max_frame_bytes * 4);
    config.idle_timeout = defaults.idle_timeout.max(config.ping_interval * 3);
    config.bot = protocol::bot::BotLevel::from(args.bot_level).config();
    let listener = server::bind(args.listen, args.listen_backlog).await?;
    tracing::info!(db = %server::store::Location::of(&config).describe(), "database");
    server::try_run_with(listener, config, shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
