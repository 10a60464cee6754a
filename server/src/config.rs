//! Server settings: limits and timings. Everything has a production default; tests use
//! short ones.

use std::path::PathBuf;
use std::time::Duration;

/// Limits and timings of a server.
#[derive(Clone, Debug)]
pub struct Config {
    /// A text frame longer than this is refused with `frame_too_large` (a strike).
    pub max_frame_bytes: usize,
    /// A message longer than this closes the connection at once (1009). Also the largest
    /// websocket frame accepted.
    pub hard_max_message_bytes: usize,
    /// Messages per second a connection may send on average...
    pub rate_per_sec: u32,
    /// ...with bursts of this many.
    pub rate_burst: u32,
    /// Strikes (rate or size breaches) within `strike_window` after which the connection
    /// is closed.
    pub max_strikes: u32,
    pub strike_window: Duration,
    /// Open connections (plain HTTP and websockets) per client address. Beyond it a
    /// connection is only answered with a refusal (HTTP 429, or the websocket error
    /// `too_many_connections` and 1008), and beyond twice it closed at once.
    pub max_conns_per_ip: usize,
    /// Open connections in all; beyond it new ones are closed at once...
    pub max_connections: usize,
    /// ...and the last this many only answer `/healthz` (and refuse the rest with 503), so
    /// that health checks get through when the server is full.
    pub connection_reserve: usize,
    /// A request's head must arrive within this long of the connection opening, or of
    /// the previous answer on a kept-alive connection (so it is also the idle keep-alive
    /// timeout); else the connection is closed.
    pub http_header_timeout: Duration,
    /// HTTP requests (not `/healthz`, not the websocket upgrade) per address per second,
    /// in bursts of `http_rate_burst`; beyond it 429.
    pub http_rate_per_sec: u32,
    pub http_rate_burst: u32,
    /// New connections per address per minute, in bursts of `ip_conn_burst`; beyond it a
    /// connection is refused like one over `max_conns_per_ip` (`connecting_too_fast`).
    pub ip_conn_per_min: u32,
    pub ip_conn_burst: u32,
    /// Messages per address per second over all its connections (websocket pings
    /// included), in bursts of `ip_rate_burst`: a breach counts as a strike, like the
    /// per-connection rate.
    pub ip_rate_per_sec: u32,
    pub ip_rate_burst: u32,
    /// New players (hello with a name) per address per minute, in bursts of
    /// `ip_register_burst`; beyond it `registering_too_fast`.
    pub ip_register_per_min: u32,
    pub ip_register_burst: u32,
    /// Messages waiting for one connection's socket; a connection whose queue is full is
    /// cut off (it stopped reading).
    pub outbound_queue: usize,
    /// At most this many of a connection's queued messages may come from games it only
    /// watches (the rest of `outbound_queue` is kept for its own games and answers): a
    /// watcher this far behind is dropped from the game, told why, and closed unless it
    /// has a seat somewhere.
    pub watch_backlog: usize,
    /// Watcher counts go out at most this often per game (changes in between are
    /// coalesced into one count).
    pub watchers_interval: Duration,
    /// Commands waiting for one game task; beyond it a command is refused with `game_busy`.
    pub game_queue: usize,
    /// Writes waiting for the database (queue and overflow) beyond which no new game
    /// starts and no new player registers (`server_busy`) until they drain; the games
    /// being played go on and are all stored.
    pub store_backlog_limit: usize,
    /// Players kept in memory (by token) beyond those in use: over it, the idle ones are
    /// forgotten (the database keeps them; a returning player is read back).
    pub max_players_cached: usize,
    /// Events logged per game for reconnects (one small record each, see
    /// [`crate::history`]): a client that comes back resumes with exactly the events it
    /// missed if they are logged and fit in its queue (else it gets a snapshot). Beyond
    /// this many the oldest are forgotten; a game's own bounds keep it far below.
    pub history: usize,
    /// How long a disconnected player keeps his seat before the opponent may claim.
    pub reconnect_grace: Duration,
    /// Once an absent player's grace ran out, how long his opponent has to claim the win
    /// before the server ends the game for him (no game waits forever).
    pub claim_window: Duration,
    /// How long a finished game stays listed and joinable.
    pub linger: Duration,
    /// How often the server pings each connection to measure lag.
    pub ping_interval: Duration,
    /// The first ping, this long after the connection opens (so that a player's lag is
    /// known when his game starts); `None`: after `ping_interval` like the others.
    pub first_ping: Option<Duration>,
    /// A connection that sends nothing (not even a pong) for this long is closed.
    pub idle_timeout: Duration,
    /// Kernel send buffer of each accepted socket (small keeps per-socket memory small
    /// and makes a client that stops reading show up quickly). `None`: the system's.
    pub socket_send_buffer: Option<usize>,
    /// Websocket write buffer of each connection.
    pub ws_write_buffer: usize,
    /// Websocket read buffer of each connection: clients send small frames, and the
    /// buffer is allocated (and zero-filled before each read) for every connection.
    pub ws_read_buffer: usize,
    /// The SQLite database file (created on first run); `None`: a private in-memory
    /// database that goes with the process.
    pub db_path: Option<PathBuf>,
    /// A PostgreSQL database (`postgres://user:password@host:port/name`): when set, the
    /// store is there and `db_path` is not used.
    pub db_url: Option<String>,
    /// At shutdown, how long live games may go on before they are suspended (or aborted
    /// without `resume_games`).
    pub drain: Duration,
    /// Games live when the server stops (SIGTERM after the drain, or a crash) are taken up
    /// again at the next start from their journal; off: they are stored as aborted
    /// (`shutdown` or `crash`).
    pub resume_games: bool,
    /// How the computer takes its time.
    pub bot: protocol::bot::BotConfig,
    /// How long a challenge waits for an answer.
    pub challenge_timeout: Duration,
    /// The rating range of rated quick match (`matching`).
    pub match_range: crate::matching::Range,
    /// How long a game task waits for its end to be stored before announcing it anyway.
    pub store_ack_timeout: Duration,
    /// Game deadlines wake from the alarm thread (sub-millisecond), not tokio's
    /// millisecond timer. Off only for tests on tokio's paused clock, which the alarm
    /// thread does not see.
    pub precise_timer: bool,
    /// The abort bound of every game (`abort_ms`): fixed by the rules page at 30 s, not a
    /// player's choice; an operator may shorten it on a test server (`--abort-ms`).
    pub abort_ms: u64,
    /// The late-release bound of every Level 3 game (`late_release_ms`): fixed by the rules
    /// page at 5 s; an operator may change it on a test server (`--late-release-ms`).
    pub late_release_ms: u64,
    /// A NATS server (`nats://host:port`, with JetStream): this node is one of several
    /// that share the games through it (see `cluster` and docs/OPERATIONS.md). `None`: a
    /// single node, as always.
    pub nats_url: Option<String>,
    /// This node's id among the nodes (`None`: a new UUID v7 at each start).
    pub node_id: Option<String>,
    /// How long a node's ownership of a game lasts unless refreshed (it is refreshed every
    /// third of it): after a node's death, its games are taken over within about this long.
    pub lease: Duration,
    /// Fault drill (tests only, no flag): this node drops every n-th message of each game
    /// stream it follows, as if NATS had lost it, to exercise the repair of gaps (0: off).
    pub fanout_loss_every: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_frame_bytes: 4 * 1024,
            hard_max_message_bytes: 64 * 1024,
            rate_per_sec: 20,
            rate_burst: 40,
            max_strikes: 10,
            strike_window: Duration::from_secs(10),
            max_conns_per_ip: 16,
            max_connections: 16_384,
            connection_reserve: 64,
            http_header_timeout: Duration::from_secs(10),
            http_rate_per_sec: 20,
            http_rate_burst: 40,
            ip_conn_per_min: 120,
            ip_conn_burst: 60,
            ip_rate_per_sec: 60,
            ip_rate_burst: 120,
            ip_register_per_min: 10,
            ip_register_burst: 20,
            outbound_queue: 256,
            watch_backlog: 128,
            watchers_interval: Duration::from_millis(500),
            game_queue: 256,
            max_players_cached: 50_000,
            store_backlog_limit: 100_000,
            history: 4096,
            reconnect_grace: Duration::from_secs(60),
            claim_window: Duration::from_secs(60),
            linger: Duration::from_secs(60),
            ping_interval: Duration::from_secs(5),
            first_ping: Some(Duration::from_millis(200)),
            idle_timeout: Duration::from_secs(30),
            socket_send_buffer: Some(32 * 1024),
            ws_write_buffer: 8 * 1024,
            ws_read_buffer: 1024,
            db_path: None,
            db_url: None,
            store_ack_timeout: Duration::from_secs(5),
            challenge_timeout: Duration::from_secs(60),
            match_range: crate::matching::Range::default(),
            bot: protocol::bot::BotConfig::default(),
            drain: Duration::from_secs(30),
            resume_games: true,
            nats_url: None,
            node_id: None,
            lease: Duration::from_secs(6),
            fanout_loss_every: 0,
            precise_timer: true,
            abort_ms: protocol::settings::Settings::default().abort_ms,
            late_release_ms: protocol::settings::Settings::default().late_release_ms,
        }
    }
}
