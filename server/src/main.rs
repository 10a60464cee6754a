//! `tamsk-server`: the live TAMSK server.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use server::Config;
use tracing_subscriber::EnvFilter;

/// TAMSK online: authoritative real-time websocket server.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address to listen on; the websocket is at /ws, health at /healthz.
    #[arg(long, env = "TAMSK_LISTEN", default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// The database: players, games (and the journals of live ones), ratings and
    /// tournaments. A path: an SQLite file, created on first run. A
    /// `postgres://user:password@host:port/name` URL: that PostgreSQL database (migrated on
    /// start).
    #[arg(long, env = "TAMSK_DB", default_value = "tamsk.db")]
    db: String,
    /// At shutdown (SIGTERM, ctrl-c), how long live games may go on before the rest are
    /// suspended to be resumed at the next start (or, with `--resume-games false`, aborted
    /// and stored).
    #[arg(long, env = "TAMSK_DRAIN_MS", default_value_t = 30_000)]
    drain_ms: u64,
    /// Games still live when the server stops (after the drain, or in a crash) are resumed
    /// from the database at the next start; `false`: they are stored as aborted.
    #[arg(long, env = "TAMSK_RESUME_GAMES", default_value_t = true, action = clap::ArgAction::Set)]
    resume_games: bool,
    /// A NATS server with JetStream (`nats://host:port`): this node joins the others that
    /// use it (and the same PostgreSQL `--db`): games are owned through a JetStream
    /// key-value lease, played and watched from any node, and taken over when their node
    /// dies. Absent: a single node.
    #[arg(long, env = "TAMSK_NATS")]
    nats: Option<String>,
    /// This node's id among the nodes (default: a new UUID v7 at each start).
    #[arg(long, env = "TAMSK_NODE_ID")]
    node_id: Option<String>,
    /// How long a node's ownership of a game lasts unless refreshed: a dead node's games
    /// are taken over after about this long.
    #[arg(long, env = "TAMSK_LEASE_MS", default_value_t = 6_000)]
    lease_ms: u64,
    /// Structured (JSON) logs. Log level from RUST_LOG (default info).
    #[arg(
        long,
        env = "TAMSK_LOG_JSON",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    log_json: bool,
    /// How long a disconnected player keeps his seat before the opponent may claim the win.
    #[arg(long, env = "TAMSK_RECONNECT_GRACE_MS", default_value_t = 60_000)]
    reconnect_grace_ms: u64,
    /// After an absent player's grace ran out: how long the opponent has to claim the win
    /// before the server ends the game as abandoned (won by the player who stayed).
    #[arg(long, env = "TAMSK_CLAIM_WINDOW_MS", default_value_t = 60_000)]
    claim_window_ms: u64,
    /// Largest accepted text message, in bytes.
    #[arg(long, env = "TAMSK_MAX_FRAME_BYTES", default_value_t = 4096)]
    max_frame_bytes: usize,
    /// Messages per second per connection (average).
    #[arg(long, env = "TAMSK_RATE_PER_SEC", default_value_t = 20)]
    rate_per_sec: u32,
    /// Burst of messages per connection.
    #[arg(long, env = "TAMSK_RATE_BURST", default_value_t = 40)]
    rate_burst: u32,
    /// Open connections per client address.
    #[arg(long, env = "TAMSK_MAX_CONNS_PER_IP", default_value_t = 16)]
    max_conns_per_ip: usize,
    /// Frames queued per connection before a client that stopped reading is cut off.
    #[arg(long, env = "TAMSK_OUTBOUND_QUEUE", default_value_t = 256)]
    outbound_queue: usize,
    /// Of those, at most this many from games the connection only watches: a watcher
    /// further behind is dropped from the game (and closed unless it has a seat).
    #[arg(long, env = "TAMSK_WATCH_BACKLOG", default_value_t = 128)]
    watch_backlog: usize,
    /// Watcher counts go out at most this often per game.
    #[arg(long, env = "TAMSK_WATCHERS_INTERVAL_MS", default_value_t = 500)]
    watchers_interval_ms: u64,
    /// Events logged per game for reconnects (at most 40 bytes each); beyond it the oldest
    /// are forgotten.
    #[arg(long, env = "TAMSK_HISTORY", default_value_t = 4096)]
    history: usize,
    /// No longer used (the history is a compact log, bounded by --history); accepted so
    /// that old deployments still start.
    #[arg(long, env = "TAMSK_HISTORY_BYTES", hide = true)]
    history_bytes: Option<usize>,
    /// Open connections in all; the last --connection-reserve of them answer only /healthz.
    #[arg(long, env = "TAMSK_MAX_CONNECTIONS", default_value_t = 16_384)]
    max_connections: usize,
    #[arg(long, env = "TAMSK_CONNECTION_RESERVE", default_value_t = 64)]
    connection_reserve: usize,
    /// A request head must arrive within this long (also the idle keep-alive timeout).
    #[arg(long, env = "TAMSK_HTTP_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    http_header_timeout_ms: u64,
    /// HTTP requests per address per second (not /healthz), and their burst.
    #[arg(long, env = "TAMSK_HTTP_RATE_PER_SEC", default_value_t = 20)]
    http_rate_per_sec: u32,
    #[arg(long, env = "TAMSK_HTTP_RATE_BURST", default_value_t = 40)]
    http_rate_burst: u32,
    /// New connections per address per minute, and their burst.
    #[arg(long, env = "TAMSK_IP_CONN_PER_MIN", default_value_t = 120)]
    ip_conn_per_min: u32,
    #[arg(long, env = "TAMSK_IP_CONN_BURST", default_value_t = 60)]
    ip_conn_burst: u32,
    /// Messages per address per second over all its connections, and their burst.
    #[arg(long, env = "TAMSK_IP_RATE_PER_SEC", default_value_t = 60)]
    ip_rate_per_sec: u32,
    #[arg(long, env = "TAMSK_IP_RATE_BURST", default_value_t = 120)]
    ip_rate_burst: u32,
    /// New players per address per minute, and their burst.
    #[arg(long, env = "TAMSK_IP_REGISTER_PER_MIN", default_value_t = 10)]
    ip_register_per_min: u32,
    #[arg(long, env = "TAMSK_IP_REGISTER_BURST", default_value_t = 20)]
    ip_register_burst: u32,
    /// Players kept in memory; over it the idle ones are forgotten (the database has them).
    #[arg(long, env = "TAMSK_MAX_PLAYERS_CACHED", default_value_t = 50_000)]
    max_players_cached: usize,
    /// Database writes waiting beyond which no new game or player is taken (server_busy).
    #[arg(long, env = "TAMSK_STORE_BACKLOG_LIMIT", default_value_t = 100_000)]
    store_backlog_limit: usize,
    /// Lag-measuring ping interval.
    #[arg(long, env = "TAMSK_PING_INTERVAL_MS", default_value_t = 5_000)]
    ping_interval_ms: u64,
    /// Test servers only: the abort bound of every game (a first move not made within it
    /// aborts the game). The rules page fixes it at 30 s; players cannot choose it.
    #[arg(long, env = "TAMSK_ABORT_MS", default_value_t = 30_000, value_parser = setting("abort_ms"))]
    abort_ms: u64,
    /// Test servers only: how long a Level 3 move in hand may still be released after the
    /// 15-second timer ran out on it. The rules page fixes it at 5 s.
    #[arg(long, env = "TAMSK_LATE_RELEASE_MS", default_value_t = 5_000, value_parser = setting("late_release_ms"))]
    late_release_ms: u64,
    /// Threads that run only the games (deadlines, moves, fan-out), apart from the ones
    /// serving sockets, so deaths and expiries are announced at their instant under load;
    /// 0 runs games on the sockets' threads.
    #[arg(long, env = "TAMSK_GAME_THREADS", default_value_t = 1)]
    game_threads: usize,
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

/// Parses a fixed setting within its range (`protocol::settings::RANGES`).
fn setting(name: &'static str) -> impl Fn(&str) -> Result<u64, String> + Clone {
    move |text| {
        let value: u64 = text.parse().map_err(|e| format!("{e}"))?;
        protocol::settings::range(name)
            .check(value)
            .map_err(|e| e.to_string())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
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
    let defaults = Config::default();
    if args.history_bytes.is_some() {
        tracing::warn!("--history-bytes (TAMSK_HISTORY_BYTES) is no longer used: the history is bounded by --history");
    }
    let (db_path, db_url) = match server::store::Location::parse(&args.db) {
        server::store::Location::Postgres(url) => (None, Some(url)),
        _ => (Some(PathBuf::from(&args.db)), None),
    };
    let config = Config {
        reconnect_grace: Duration::from_millis(args.reconnect_grace_ms),
        claim_window: Duration::from_millis(args.claim_window_ms),
        max_frame_bytes: args.max_frame_bytes,
        hard_max_message_bytes: defaults
            .hard_max_message_bytes
            .max(args.max_frame_bytes * 4),
        rate_per_sec: args.rate_per_sec,
        rate_burst: args.rate_burst,
        max_conns_per_ip: args.max_conns_per_ip,
        max_connections: args.max_connections,
        max_players_cached: args.max_players_cached,
        store_backlog_limit: args.store_backlog_limit,
        connection_reserve: args.connection_reserve,
        http_header_timeout: Duration::from_millis(args.http_header_timeout_ms),
        http_rate_per_sec: args.http_rate_per_sec,
        http_rate_burst: args.http_rate_burst,
        ip_conn_per_min: args.ip_conn_per_min,
        ip_conn_burst: args.ip_conn_burst,
        ip_rate_per_sec: args.ip_rate_per_sec,
        ip_rate_burst: args.ip_rate_burst,
        ip_register_per_min: args.ip_register_per_min,
        ip_register_burst: args.ip_register_burst,
        outbound_queue: args.outbound_queue,
        watch_backlog: args.watch_backlog,
        watchers_interval: Duration::from_millis(args.watchers_interval_ms),
        history: args.history,
        ping_interval: Duration::from_millis(args.ping_interval_ms),
        idle_timeout: defaults
            .idle_timeout
            .max(Duration::from_millis(args.ping_interval_ms * 3)),
        db_path,
        db_url,
        drain: Duration::from_millis(args.drain_ms),
        resume_games: args.resume_games,
        nats_url: args.nats,
        node_id: args.node_id,
        lease: Duration::from_millis(args.lease_ms),
        abort_ms: args.abort_ms,
        late_release_ms: args.late_release_ms,
        game_threads: args.game_threads,
        bot: protocol::bot::BotLevel::from(args.bot_level).config(),
        ..defaults
    };
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
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
