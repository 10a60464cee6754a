//! Server settings: limits and timings. Everything has a production default; tests use
//! short ones.
//!
//! `Config` is also the `tamsk-server` binary's command line (`clap::Args`, flattened into
//! its parser): a field with `#[arg(long, env)]` is a flag, the others are `skip`ped and
//! keep [`Config::default`]'s value. The doc comments are for the code; `help = ...` is
//! what `--help` prints. Durations are given in milliseconds (`--drain-ms`).

use std::path::PathBuf;
use std::time::Duration;

/// Limits and timings of a server. The fields are in the order `--help` lists them.
#[derive(Clone, Debug, clap::Args)]
pub struct Config {
    /// At shutdown, how long live games may go on before they are suspended (or aborted
    /// without `resume_games`).
    #[arg(long = "drain-ms", value_name = "DRAIN_MS", env = "TAMSK_DRAIN_MS", default_value = "30000", value_parser = millis, help = "At shutdown (SIGTERM, ctrl-c), how long live games may go on before the rest are suspended to be resumed at the next start (or, with `--resume-games false`, aborted and stored)")]
    pub drain: Duration,
    /// Games live when the server stops (SIGTERM after the drain, or a crash) are taken up
    /// again at the next start from their journal; off: they are stored as aborted
    /// (`shutdown` or `crash`).
    #[arg(long, env = "TAMSK_RESUME_GAMES", default_value_t = true, action = clap::ArgAction::Set, help = "Games still live when the server stops (after the drain, or in a crash) are resumed from the database at the next start; `false`: they are stored as aborted")]
    pub resume_games: bool,
    /// A NATS server (`nats://host:port`, with JetStream): this node is one of several
    /// that share the games through it (see `cluster` and docs/OPERATIONS.md). `None`: a
    /// single node, as always.
    #[arg(
        long = "nats",
        value_name = "NATS",
        env = "TAMSK_NATS",
        help = "A NATS server with JetStream (`nats://host:port`): this node joins the others that use it (and the same PostgreSQL `--db`): games are owned through a JetStream key-value lease, played and watched from any node, and taken over when their node dies. Absent: a single node"
    )]
    pub nats_url: Option<String>,
    /// This node's id among the nodes (`None`: a new UUID v7 at each start).
    #[arg(
        long,
        env = "TAMSK_NODE_ID",
        help = "This node's id among the nodes (default: a new UUID v7 at each start)"
    )]
    pub node_id: Option<String>,
    /// How long a node's ownership of a game lasts unless refreshed (it is refreshed every
    /// third of it): after a node's death, its games are taken over within about this long.
    #[arg(long = "lease-ms", value_name = "LEASE_MS", env = "TAMSK_LEASE_MS", default_value = "3000", value_parser = millis, help = "How long a node's lease on its games lasts unless renewed (every third of it): a dead node's games are taken over after about this long (their players' sand runs meanwhile). The same on every node of a cluster")]
    pub lease: Duration,
    /// How long a disconnected player keeps his seat before the opponent may claim.
    #[arg(long = "reconnect-grace-ms", value_name = "RECONNECT_GRACE_MS", env = "TAMSK_RECONNECT_GRACE_MS", default_value = "60000", value_parser = millis, help = "How long a disconnected player keeps his seat before the opponent may claim the win")]
    pub reconnect_grace: Duration,
    /// Once an absent player's grace ran out, how long his opponent has to claim the win
    /// before the server ends the game for him (no game waits forever).
    #[arg(long = "claim-window-ms", value_name = "CLAIM_WINDOW_MS", env = "TAMSK_CLAIM_WINDOW_MS", default_value = "60000", value_parser = millis, help = "After an absent player's grace ran out: how long the opponent has to claim the win before the server ends the game as abandoned (won by the player who stayed)")]
    pub claim_window: Duration,
    /// A text frame longer than this is refused with `frame_too_large` (a strike).
    #[arg(
        long,
        env = "TAMSK_MAX_FRAME_BYTES",
        default_value_t = 4096,
        help = "Largest accepted text message, in bytes"
    )]
    pub max_frame_bytes: usize,
    /// Messages per second a connection may send on average...
    #[arg(
        long,
        env = "TAMSK_RATE_PER_SEC",
        default_value_t = 20,
        help = "Messages per second per connection (average)"
    )]
    pub rate_per_sec: u32,
    /// ...with bursts of this many.
    #[arg(
        long,
        env = "TAMSK_RATE_BURST",
        default_value_t = 40,
        help = "Burst of messages per connection"
    )]
    pub rate_burst: u32,
    /// Open connections (plain HTTP and websockets) per client address. Beyond it a
    /// connection is only answered with a refusal (HTTP 429, or the websocket error
    /// `too_many_connections` and 1008), and beyond twice it closed at once.
    #[arg(
        long,
        env = "TAMSK_MAX_CONNS_PER_IP",
        default_value_t = 16,
        help = "Open connections per client address"
    )]
    pub max_conns_per_ip: usize,
    /// Messages waiting for one connection's socket; a connection whose queue is full is
    /// cut off (it stopped reading).
    #[arg(
        long,
        env = "TAMSK_OUTBOUND_QUEUE",
        default_value_t = 256,
        help = "Frames queued per connection before a client that stopped reading is cut off"
    )]
    pub outbound_queue: usize,
    /// At most this many of a connection's queued messages may come from games it only
    /// watches (the rest of `outbound_queue` is kept for its own games and answers): a
    /// watcher this far behind is dropped from the game, told why, and closed unless it
    /// has a seat somewhere.
    #[arg(
        long,
        env = "TAMSK_WATCH_BACKLOG",
        default_value_t = 128,
        help = "Of those, at most this many from games the connection only watches: a watcher further behind is dropped from the game (and closed unless it has a seat)"
    )]
    pub watch_backlog: usize,
    /// Watcher counts go out at most this often per game (changes in between are
    /// coalesced into one count).
    #[arg(long = "watchers-interval-ms", value_name = "WATCHERS_INTERVAL_MS", env = "TAMSK_WATCHERS_INTERVAL_MS", default_value = "500", value_parser = millis, help = "Watcher counts go out at most this often per game")]
    pub watchers_interval: Duration,
    /// Events logged per game for reconnects (one small record each, see
    /// [`crate::history`]): a client that comes back resumes with exactly the events it
    /// missed if they are logged and fit in its queue (else it gets a snapshot). Beyond
    /// this many the oldest are forgotten; a game's own bounds keep it far below.
    #[arg(
        long,
        env = "TAMSK_HISTORY",
        default_value_t = 4096,
        help = "Events logged per game for reconnects (one 16-byte record each); beyond it the oldest are forgotten"
    )]
    pub history: usize,
    /// Open connections in all; beyond it new ones are closed at once...
    #[arg(
        long,
        env = "TAMSK_MAX_CONNECTIONS",
        default_value_t = 16_384,
        help = "Open connections in all; the last --connection-reserve of them answer only /healthz"
    )]
    pub max_connections: usize,
    /// ...and the last this many only answer `/healthz` (and refuse the rest with 503), so
    /// that health checks get through when the server is full.
    #[arg(long, env = "TAMSK_CONNECTION_RESERVE", default_value_t = 64, help = None)]
    pub connection_reserve: usize,
    /// A request's head must arrive within this long of the connection opening, or of
    /// the previous answer on a kept-alive connection (so it is also the idle keep-alive
    /// timeout); else the connection is closed.
    #[arg(long = "http-header-timeout-ms", value_name = "HTTP_HEADER_TIMEOUT_MS", env = "TAMSK_HTTP_HEADER_TIMEOUT_MS", default_value = "10000", value_parser = millis, help = "A request head must arrive within this long (also the idle keep-alive timeout)")]
    pub http_header_timeout: Duration,
    /// HTTP requests (not `/healthz`, not the websocket upgrade) per address per second,
    /// in bursts of `http_rate_burst`; beyond it 429.
    #[arg(
        long,
        env = "TAMSK_HTTP_RATE_PER_SEC",
        default_value_t = 20,
        help = "HTTP requests per address per second (not /healthz), and their burst"
    )]
    pub http_rate_per_sec: u32,
    #[arg(long, env = "TAMSK_HTTP_RATE_BURST", default_value_t = 40, help = None)]
    pub http_rate_burst: u32,
    /// New connections per address per minute, in bursts of `ip_conn_burst`; beyond it a
    /// connection is refused like one over `max_conns_per_ip` (`connecting_too_fast`).
    #[arg(
        long,
        env = "TAMSK_IP_CONN_PER_MIN",
        default_value_t = 120,
        help = "New connections per address per minute, and their burst"
    )]
    pub ip_conn_per_min: u32,
    #[arg(long, env = "TAMSK_IP_CONN_BURST", default_value_t = 60, help = None)]
    pub ip_conn_burst: u32,
    /// Messages per address per second over all its connections (websocket pings
    /// included), in bursts of `ip_rate_burst`: a breach counts as a strike, like the
    /// per-connection rate.
    #[arg(
        long,
        env = "TAMSK_IP_RATE_PER_SEC",
        default_value_t = 60,
        help = "Messages per address per second over all its connections, and their burst"
    )]
    pub ip_rate_per_sec: u32,
    #[arg(long, env = "TAMSK_IP_RATE_BURST", default_value_t = 120, help = None)]
    pub ip_rate_burst: u32,
    /// New players (hello with a name) per address per minute, in bursts of
    /// `ip_register_burst`; beyond it `registering_too_fast`.
    #[arg(
        long,
        env = "TAMSK_IP_REGISTER_PER_MIN",
        default_value_t = 10,
        help = "New players per address per minute, and their burst"
    )]
    pub ip_register_per_min: u32,
    #[arg(long, env = "TAMSK_IP_REGISTER_BURST", default_value_t = 20, help = None)]
    pub ip_register_burst: u32,
    /// Players kept in memory (by token) beyond those in use: over it, the idle ones are
    /// forgotten (the database keeps them; a returning player is read back).
    #[arg(
        long,
        env = "TAMSK_MAX_PLAYERS_CACHED",
        default_value_t = 50_000,
        help = "Players kept in memory; over it the idle ones are forgotten (the database has them)"
    )]
    pub max_players_cached: usize,
    /// Writes waiting for the database (queue and overflow) beyond which no new game
    /// starts and no new player registers (`server_busy`) until they drain; the games
    /// being played go on and are all stored.
    #[arg(
        long,
        env = "TAMSK_STORE_BACKLOG_LIMIT",
        default_value_t = 100_000,
        help = "Database writes waiting beyond which no new game or player is taken (server_busy)"
    )]
    pub store_backlog_limit: usize,
    /// How often the server pings each connection to measure lag.
    #[arg(long = "ping-interval-ms", value_name = "PING_INTERVAL_MS", env = "TAMSK_PING_INTERVAL_MS", default_value = "5000", value_parser = millis, help = "Lag-measuring ping interval")]
    pub ping_interval: Duration,
    /// The abort bound of every game (`abort_ms`): fixed by the rules page at 30 s, not a
    /// player's choice; an operator may shorten it on a test server (`--abort-ms`).
    #[arg(long, env = "TAMSK_ABORT_MS", default_value_t = 30_000, value_parser = setting("abort_ms"), help = "Test servers only: the abort bound of every game (a first move not made within it aborts the game). The rules page fixes it at 30 s; players cannot choose it")]
    pub abort_ms: u64,
    /// The late-release bound of every Level 3 game (`late_release_ms`): fixed by the rules
    /// page at 5 s; an operator may change it on a test server (`--late-release-ms`).
    #[arg(long, env = "TAMSK_LATE_RELEASE_MS", default_value_t = 5_000, value_parser = setting("late_release_ms"), help = "Test servers only: how long a Level 3 move in hand may still be released after the 15-second timer ran out on it. The rules page fixes it at 5 s")]
    pub late_release_ms: u64,
    /// Threads of the games' own runtime (`lanes`): game tasks run there, away from the
    /// sockets. 0: games run on the server's runtime (the default: measured cheaper, and
    /// no later, on 2 cores; see docs/ARCHITECTURE.md).
    #[arg(
        long,
        env = "TAMSK_GAME_THREADS",
        default_value_t = 0,
        help = "Threads that run only the games (deadlines, moves, fan-out), apart from the ones serving sockets; 0 (the default) runs games on the sockets' threads, which measured cheaper (docs/ARCHITECTURE.md)"
    )]
    pub game_threads: usize,
    /// Real-time (`SCHED_FIFO`) priority of the threads that announce deadlines: the alarm
    /// thread and the games' own threads (`--game-threads`). 0: off (the default). See
    /// `priority` and docs/OPERATIONS.md.
    #[arg(
        long,
        env = "TAMSK_REALTIME_PRIORITY",
        default_value_t = Config::default().realtime_priority,
        value_parser = clap::value_parser!(u8).range(0..=99),
        help = "Real-time (SCHED_FIFO) priority, 1-99, of the threads that announce deadlines: the alarm thread and the games' own threads (--game-threads), so that a death or an expiry is told on time on busy cores. Needs CAP_SYS_NICE (or an rtprio limit); refused, they run at normal priority with a warning. 0: off"
    )]
    pub realtime_priority: u8,
    /// Nice value of the runtime's threads (the sockets' and, by default, the games'):
    /// set by the binary when it builds its runtime (`priority::worker_thread`).
    #[arg(
        long,
        env = "TAMSK_WORKER_NICE",
        default_value_t = Config::default().worker_nice,
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(i32).range(-20..=19),
        help = "Nice value, -20 to 19, of the threads that serve the sockets and run the games, so that on cores shared with other work a move or a deadline waits less for a core. Below 0 needs CAP_SYS_NICE; refused, they keep their nice value with a warning. 0: leave it"
    )]
    pub worker_nice: i32,
    /// Reverse proxies and load balancers whose `X-Forwarded-For` names the client (see
    /// `forwarded`): addresses or networks. None by default.
    #[arg(
        long,
        env = "TAMSK_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_parser = crate::forwarded::parse_net,
        help = "Reverse proxies or load balancers in front of this server (addresses or networks, comma-separated: 10.0.0.5,10.1.0.0/16): a connection from one of them is counted, for every per-address limit, under the client address its X-Forwarded-For header names. From any other address the header is ignored. None by default"
    )]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// Connections from this machine (loopback addresses) are outside the per-address
    /// budgets and cap unless this is set (see `limits::exempt`).
    #[arg(long, env = "TAMSK_BUDGET_LOOPBACK", default_value_t = false, action = clap::ArgAction::Set, help = "Apply the per-address cap and budgets (--max-conns-per-ip, --ip-*, --http-rate-*) to connections from this machine's own loopback addresses too. Off by default: local tools, health checks and load tests connect from one address. A proxy on this machine belongs in --trusted-proxies, whose clients are then budgeted one by one")]
    pub budget_loopback: bool,
    /// A message longer than this closes the connection at once (1009). Also the largest
    /// websocket frame accepted.
    #[arg(skip = Config::default().hard_max_message_bytes)]
    pub hard_max_message_bytes: usize,
    /// Strikes (rate or size breaches) within `strike_window` after which the connection
    /// is closed.
    #[arg(skip = Config::default().max_strikes)]
    pub max_strikes: u32,
    #[arg(skip = Config::default().strike_window)]
    pub strike_window: Duration,
    /// Commands waiting for one game task; beyond it a command is refused with `game_busy`.
    #[arg(skip = Config::default().game_queue)]
    pub game_queue: usize,
    /// How long a finished game stays listed and joinable.
    #[arg(skip = Config::default().linger)]
    pub linger: Duration,
    /// The first ping, this long after the connection opens (so that a player's lag is
    /// known when his game starts); `None`: after `ping_interval` like the others.
    #[arg(skip = Config::default().first_ping)]
    pub first_ping: Option<Duration>,
    /// A connection that sends nothing (not even a pong) for this long is closed.
    #[arg(skip = Config::default().idle_timeout)]
    pub idle_timeout: Duration,
    /// Kernel send buffer of each accepted socket (small keeps per-socket memory small
    /// and makes a client that stops reading show up quickly). `None`: the system's.
    #[arg(skip = Config::default().socket_send_buffer)]
    pub socket_send_buffer: Option<usize>,
    /// Websocket write buffer of each connection.
    #[arg(skip = Config::default().ws_write_buffer)]
    pub ws_write_buffer: usize,
    /// Websocket read buffer of each connection: clients send small frames, and the
    /// buffer is allocated (and zero-filled before each read) for every connection.
    #[arg(skip = Config::default().ws_read_buffer)]
    pub ws_read_buffer: usize,
    /// The SQLite database file (created on first run); `None`: a private in-memory
    /// database that goes with the process.
    #[arg(skip)]
    pub db_path: Option<PathBuf>,
    /// A PostgreSQL database (`postgres://user:password@host:port/name`): when set, the
    /// store is there and `db_path` is not used.
    #[arg(skip)]
    pub db_url: Option<String>,
    /// How the computer takes its time.
    #[arg(skip = Config::default().bot)]
    pub bot: protocol::bot::BotConfig,
    /// How long a challenge waits for an answer.
    #[arg(skip = Config::default().challenge_timeout)]
    pub challenge_timeout: Duration,
    /// The rating range of rated quick match (`matching`).
    #[arg(skip = Config::default().match_range)]
    pub match_range: crate::matching::Range,
    /// How long a game task waits for its end to be stored before announcing it anyway.
    #[arg(skip = Config::default().store_ack_timeout)]
    pub store_ack_timeout: Duration,
    /// Game deadlines wake from the alarm thread (sub-millisecond), not tokio's
    /// millisecond timer. Off only for tests on tokio's paused clock, which the alarm
    /// thread does not see.
    #[arg(skip = Config::default().precise_timer)]
    pub precise_timer: bool,
    /// Fault drill (tests only, no flag): this node drops every n-th message of each game
    /// stream it follows, as if NATS had lost it, to exercise the repair of gaps (0: off).
    #[arg(skip = Config::default().fanout_loss_every)]
    pub fanout_loss_every: u64,
}

/// Parses a duration given in milliseconds.
fn millis(text: &str) -> Result<Duration, String> {
    text.parse()
        .map(Duration::from_millis)
        .map_err(|e| format!("{e}"))
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

/// The defaults of the flags are written twice, in `#[arg(default_value...)]` (for
/// `--help`) and here: `tests::the_flags_default_to_default` keeps them equal.
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
            lease: Duration::from_secs(3),
            fanout_loss_every: 0,
            precise_timer: true,
            game_threads: 0,
            // On: at 18,000 sockets on 2 cores the alarm thread's own wake-up was most of
            // the timers' late tail, and the thread does almost no work (BENCHMARKS.md,
            // session 19).
            realtime_priority: 10,
            // Ahead of other work on shared cores: at 18,000 sockets on 2 cores, with the
            // load generator on the same cores, move p99 fell by about a third
            // (BENCHMARKS.md, session 21).
            worker_nice: -10,
            trusted_proxies: Vec::new(),
            budget_loopback: false,
            abort_ms: protocol::settings::Settings::default().abort_ms,
            late_release_ms: protocol::settings::Settings::default().late_release_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, FromArgMatches};

    /// The command line without the environment (a `TAMSK_...` variable set where the
    /// tests run must not change what is compared).
    fn command() -> clap::Command {
        Config::augment_args(clap::Command::new("t")).mut_args(|a| a.env(None))
    }

    #[test]
    fn the_flags_default_to_default() {
        let matches = command().try_get_matches_from(["t"]).unwrap();
        let parsed = Config::from_arg_matches(&matches).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{:?}", Config::default()));
    }

    #[test]
    fn durations_are_milliseconds_and_bad_values_are_refused() {
        let matches = command()
            .try_get_matches_from(["t", "--drain-ms", "1500", "--abort-ms", "20000"])
            .unwrap();
        let parsed = Config::from_arg_matches(&matches).unwrap();
        assert_eq!(parsed.drain, Duration::from_millis(1500));
        assert_eq!(parsed.abort_ms, 20_000);
        let err = command()
            .try_get_matches_from(["t", "--lease-ms", "soon"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(err.to_string().contains("--lease-ms"), "{err}");
        let range = protocol::settings::range("abort_ms");
        let too_big = (range.max + 1).to_string();
        let err = command()
            .try_get_matches_from(["t", "--abort-ms", too_big.as_str()])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }

    #[test]
    fn a_realtime_priority_is_1_to_99_on_by_default_and_0_turns_it_off() {
        let parsed = |args: &[&str]| {
            let matches = command().try_get_matches_from(args)?;
            Config::from_arg_matches(&matches)
        };
        assert_eq!(parsed(&["t"]).unwrap().realtime_priority, 10);
        assert_eq!(
            parsed(&["t", "--realtime-priority", "0"])
                .unwrap()
                .realtime_priority,
            0
        );
        assert_eq!(parsed(&["t"]).unwrap().worker_nice, -10);
        assert_eq!(
            parsed(&["t", "--worker-nice", "-5"]).unwrap().worker_nice,
            -5
        );
        assert!(parsed(&["t", "--worker-nice", "-21"]).is_err());
        assert!(parsed(&["t", "--worker-nice", "20"]).is_err());
        let on = parsed(&["t", "--realtime-priority", "10", "--game-threads", "1"]).unwrap();
        assert_eq!((on.realtime_priority, on.game_threads), (10, 1));
        for bad in ["100", "-1", "high"] {
            let arg = format!("--realtime-priority={bad}");
            let err = parsed(&["t", arg.as_str()]).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{bad}");
            assert!(err.to_string().contains("--realtime-priority"), "{err}");
        }
    }

    #[test]
    fn trusted_proxies_are_a_list_of_addresses_and_networks() {
        let matches = command()
            .try_get_matches_from(["t", "--trusted-proxies", "10.0.0.0/8,127.0.0.1"])
            .unwrap();
        let parsed = Config::from_arg_matches(&matches).unwrap();
        let nets: Vec<String> = parsed
            .trusted_proxies
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(nets, ["10.0.0.0/8", "127.0.0.1/32"]);
        let err = command()
            .try_get_matches_from(["t", "--trusted-proxies", "10.0.0.0/8,lb.local"])
            .unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(err.to_string().contains("lb.local"), "{err}");
    }
}
