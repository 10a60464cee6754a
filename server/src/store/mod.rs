//! Storage: players, games, journals, ratings and tournaments, in SQLite (a file, the
//! default) or PostgreSQL (`--db postgres://...`) through sqlx.
//!
//! The seam between the game and the database is this [`Store`]: one concrete handle
//! whatever the backend, holding an enum of pools ([`Db`]). Each backend is a module
//! (`sqlite.rs`, `postgres.rs`: connecting, migrations) that includes the one SQL folder
//! (`sql/`) compiled for its own sqlx database, and each method of the store runs the
//! same function of the backend it has ([`on_db!`]). Callers never see which it is.
//!
//! One writer task owns every write. Others hand it [`Write`]s through a bounded queue and
//! never wait for the database: [`Store::submit`] returns at once (when the queue is full,
//! a small task waits for room instead of the caller). The writer takes whatever is
//! queued, writes it in one transaction and then answers the acknowledgements, so a game
//! task can announce its end only once the game is on disk.
//!
//! The entries of live games are written as they happen; a game cut off by a crash is
//! stored as aborted (reason `crash`) with its record at the next start ([`Store::open`]),
//! or resumed ([`Store::open_resuming`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use protocol::wire::GameId;
use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::{mpsc, oneshot, Notify};

/// Runs `$call` with `$sql` the SQL module of the backend of `$db` (an `Option` of a
/// [`Db`], owned or borrowed) and `$pool` its pool; `$none` without a database (a
/// [`Store::detached`] store).
macro_rules! on_db {
    ($db:expr, $none:expr, |$sql:ident, $pool:ident| $call:expr) => {
        match $db {
            None => $none,
            Some($crate::store::Db::Sqlite($pool)) => {
                use $crate::store::sqlite::sql as $sql;
                $call
            }
            Some($crate::store::Db::Postgres($pool)) => {
                use $crate::store::postgres::sql as $sql;
                $call
            }
        }
    };
}

mod batches;
pub(crate) use batches::Batches;
mod error;
pub use error::OpenError;
mod fence;
pub(crate) use fence::Fenced;
mod journal;
mod rows;
pub use rows::*;
// The writer thread's task and the overflow in front of its queue.
mod writer;
pub use journal::LiveGame;
use writer::{writer, Overflow};
pub mod postgres;
mod ratings;
pub mod sqlite;
mod tournaments;

/// The pool of the store's backend.
#[derive(Clone)]
pub(crate) enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Db {
    async fn close(&self) {
        match self {
            Db::Sqlite(pool) => pool.close().await,
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

/// Lowers the calling thread's priority (nice 10), and so that of the threads it starts
/// (SQLite's worker thread of the writer's connection inherits it). The writer's work
/// can wait a few milliseconds; a move cannot: on a machine with few cores, a batch's
/// commit or a WAL checkpoint took a core from the games and their sockets at the
/// moment a move was due out (the p99 of move-to-opponent). Under contention the writer
/// still gets about a tenth of a core, and its queue and overflow take the rest.
fn yield_to_games() {
    if crate::priority::nice(10).is_err() {
        tracing::debug!("store writer: could not lower its priority");
    }
}

/// Where the store keeps its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A private in-memory SQLite database that goes with the process.
    Memory,
    /// An SQLite database file (created on first run).
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its `postgres://` URL.
    Postgres(String),
}

impl Location {
    /// `--db`: a `postgres://` (or `postgresql://`) URL, else the path of an SQLite file.
    pub fn parse(db: &str) -> Location {
        if postgres::is_url(db) {
            Location::Postgres(db.to_string())
        } else {
            Location::Sqlite(PathBuf::from(db))
        }
    }

    /// A server's: its PostgreSQL URL if it has one, else its SQLite file, else memory.
    pub fn of(config: &crate::config::Config) -> Location {
        match (&config.db_url, &config.db_path) {
            (Some(url), _) => Location::Postgres(url.clone()),
            (None, Some(path)) => Location::Sqlite(path.clone()),
            (None, None) => Location::Memory,
        }
    }

    /// Whether several nodes can share it (the database of a cluster): PostgreSQL's. An
    /// SQLite file is one process's (and its journal is kept without the fencing of a
    /// takeover: `sql/batches.rs`).
    pub fn shared(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }

    /// For logs: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::Memory => "memory".into(),
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => postgres::redact(url),
        }
    }
}

/// Writes waiting for the writer task. Room is allocated only as it fills (tokio's queue
/// grows by blocks of 32), so a large bound costs nothing while the writer keeps up; a
/// burst of game starts and moves (thousands a second under load) fits in it instead of
/// overflowing into a waiting task per write.
pub const WRITE_QUEUE: usize = 65_536;
/// Counters of the store, for `/metrics`.
#[derive(Default)]
pub struct StoreStats {
    pub writes: AtomicU64,
    pub write_errors: AtomicU64,
    pub queue_full: AtomicU64,
    pub games_stored: AtomicU64,
}

/// The handle everyone shares.
#[derive(Clone)]
pub struct Store {
    tx: mpsc::Sender<Write>,
    /// `None` for a [`Store::detached`] store.
    pub(crate) db: Option<Db>,
    pub stats: Arc<StoreStats>,
    overflow: Arc<Overflow>,
    /// Games whose writes the database refused as a stale owner's.
    fenced: Arc<Fenced>,
    /// Tells the writer to stop gathering: a write someone waits for was queued, or the
    /// queue is filling (see `writer`).
    urgent: Arc<Notify>,
}

impl Store {
    /// Opens (creating it on first run) the SQLite database file at `path`, or a private
    /// in-memory database when `path` is `None`; runs the migrations, stores the games a
    /// crash cut off, and starts the writer task.
    pub async fn open(path: Option<&Path>) -> anyhow::Result<Store> {
        Store::open_with(path, WRITE_QUEUE).await
    }

    /// [`Store::open`] with a writer queue of `queue` writes (before the overflow).
    pub async fn open_with(path: Option<&Path>, queue: usize) -> anyhow::Result<Store> {
        let (store, live) =
            Store::open_inner(&sqlite_location(path), queue, false, writer::GATHER).await?;
        debug_assert!(live.is_empty());
        Ok(store)
    }

    /// [`Store::open_with`] with writes nobody waits for gathered for up to `gather`.
    #[cfg(test)]
    pub(crate) async fn open_gathering(
        path: Option<&Path>,
        gather: Duration,
    ) -> anyhow::Result<Store> {
        Ok(
            Store::open_inner(&sqlite_location(path), WRITE_QUEUE, false, gather)
                .await?
                .0,
        )
    }

    /// Opens the database like [`Store::open`], but hands over the games a stop cut off
    /// (SIGTERM or crash) to be resumed instead of storing them as aborted.
    pub async fn open_resuming(path: Option<&Path>) -> anyhow::Result<(Store, Vec<LiveGame>)> {
        Store::open_inner(&sqlite_location(path), WRITE_QUEUE, true, writer::GATHER).await
    }

    /// Opens the database at `location` (SQLite or PostgreSQL); with `resume`, hands over
    /// the games a stop cut off like [`Store::open_resuming`], else stores them as aborted
    /// like [`Store::open`] (and the list is empty).
    pub async fn open_at(
        location: &Location,
        resume: bool,
    ) -> anyhow::Result<(Store, Vec<LiveGame>)> {
        Store::open_inner(location, WRITE_QUEUE, resume, writer::GATHER).await
    }

    async fn open_inner(
        location: &Location,
        queue: usize,
        resume: bool,
        gather: Duration,
    ) -> anyhow::Result<(Store, Vec<LiveGame>)> {
        let db = match location {
            Location::Memory => Db::Sqlite(sqlite::open(None).await?),
            Location::Sqlite(path) => Db::Sqlite(sqlite::open(Some(path)).await?),
            Location::Postgres(url) => Db::Postgres(postgres::open(url).await?),
        };
        let mut live = journal::load(&db).await?;
        if !resume {
            let n = live.len();
            for game in live.drain(..) {
                journal::store_aborted(&db, game).await?;
            }
            if n > 0 {
                tracing::warn!(games = n, "stored games cut off by a stop as aborted");
            }
        }
        let (tx, rx) = mpsc::channel(queue.max(1));
        let stats = Arc::new(StoreStats::default());
        // The writer has a thread (and a small runtime) of its own: each statement is a
        // round trip to the database, and on the main runtime, when it is busy with
        // thousands of connections, every round trip waited its turn behind them (a batch
        // took 100 ms; game ends wait for their commit). SQLite's connections are threads
        // of their own; the writer has its own (see `sqlite::open_writer`). PostgreSQL's
        // are sockets of a runtime, so the writer opens its own on its runtime.
        let (writer_db, writer_stats) = (db.clone(), stats.clone());
        let fenced = Arc::new(Fenced::default());
        let writer_fenced = fenced.clone();
        let urgent = Arc::new(Notify::new());
        let writer_urgent = urgent.clone();
        let writer_location = location.clone();
        let (ready_tx, ready_rx) = oneshot::channel::<anyhow::Result<()>>();
        std::thread::Builder::new()
            .name("tamsk-store".into())
            .spawn(move || {
                yield_to_games();
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::anyhow!("store writer: {e}")));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let db = match writer_location {
                        Location::Postgres(url) => match postgres::connect(&url, 2).await {
                            Ok(pool) => Db::Postgres(pool),
                            Err(e) => {
                                let _ = ready_tx.send(Err(e.into()));
                                return;
                            }
                        },
                        Location::Sqlite(path) => match sqlite::open_writer(&path).await {
                            Ok(pool) => Db::Sqlite(pool),
                            Err(e) => {
                                let _ = ready_tx.send(Err(e.into()));
                                return;
                            }
                        },
                        // Every connection to ":memory:" is a database of its own.
                        Location::Memory => writer_db,
                    };
                    let _ = ready_tx.send(Ok(()));
                    writer(db, rx, writer_stats, writer_fenced, writer_urgent, gather).await
                })
            })?;
        ready_rx
            .await
            .map_err(|_| anyhow::anyhow!("store writer did not start"))??;
        let overflow = Arc::new(Overflow::default());
        overflow.start_forwarding(&tx);
        let store = Store {
            tx,
            db: Some(db),
            stats,
            overflow,
            fenced,
            urgent,
        };
        Ok((store, live))
    }

    /// The id and start instant (ms since the Unix epoch) of every game the database has
    /// as live (for a node that takes over the games of another, see `cluster`; it
    /// reads the journal of a game it takes, and only then).
    pub async fn live_ids(&self) -> anyhow::Result<Vec<(GameId, u64)>> {
        on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::journal::live_ids(pool).await
        })
    }

    /// Whether the database has game `id` as live (started and not yet stored as over).
    pub async fn is_live(&self, id: GameId) -> anyhow::Result<bool> {
        on_db!(&self.db, Ok(false), |sql, pool| {
            sql::journal::is_live(pool, id).await
        })
    }

    /// Stores a cut-off game that will not be resumed as aborted (reason `crash`). Through
    /// the writer, like every game's end, so that it clears the game's journal (a batched
    /// journal's rows are the writer's to delete: `sql/batches.rs`).
    pub async fn store_aborted(&self, game: LiveGame) -> anyhow::Result<()> {
        if self.db.is_none() {
            return Ok(());
        }
        let id = game.start.id;
        let (ack, stored) = oneshot::channel();
        self.submit(Write::GameEnded(
            Box::new(journal::aborted_end(game)),
            Some(ack),
        ));
        match stored.await {
            Ok(true) => Ok(()),
            Ok(false) => anyhow::bail!("game {id}: not stored as aborted (see the log)"),
            Err(_) => anyhow::bail!("game {id}: the store's writer is gone"),
        }
    }

    /// A store that keeps nothing and acknowledges every write at once (tests of timing
    /// on a paused clock, where a database thread would let the clock run away).
    pub fn detached() -> Store {
        let (tx, mut rx) = mpsc::channel::<Write>(WRITE_QUEUE);
        tokio::spawn(async move {
            while let Some(w) = rx.recv().await {
                match w {
                    Write::Player(_, Some(ack)) | Write::GameEnded(_, Some(ack)) => {
                        let _ = ack.send(true);
                    }
                    Write::Flush(ack) => {
                        let _ = ack.send(());
                    }
                    _ => {}
                }
            }
        });
        let overflow = Arc::new(Overflow::default());
        overflow.start_forwarding(&tx);
        Store {
            tx,
            db: None,
            stats: Arc::default(),
            overflow,
            fenced: Arc::default(),
            urgent: Arc::default(),
        }
    }

    /// Queues a write without ever waiting. When the queue is full, it waits in the
    /// overflow (in order, behind any write already there) for the forwarding task; the
    /// server takes no new games or players while [`Store::backlogged`].
    pub fn submit(&self, write: Write) {
        let mut overflow = self.overflow.writes.lock().expect("overflow lock");
        if !overflow.is_empty() {
            overflow.push_back(write);
            return;
        }
        let urgent = write.awaited() || self.tx.capacity() < self.tx.max_capacity() / 2;
        if urgent {
            self.urgent.notify_one();
        }
        match self.tx.try_send(write) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(write)) => {
                overflow.push_back(write);
                self.overflow.more.notify_one();
                let before = self.stats.queue_full.fetch_add(1, Ordering::Relaxed);
                // Logged at the 1st, 2nd, 4th, 8th, ... time: an overloaded store must
                // not also flood the log (the count is in /metrics).
                if (before + 1).is_power_of_two() {
                    tracing::warn!(
                        times = before + 1,
                        "store queue full: writes wait in the overflow"
                    );
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::error!("store writer gone: a write is lost");
            }
        }
    }

    /// Waits until everything submitted so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        self.submit(Write::Flush(tx));
        let _ = rx.await;
    }

    /// Writes waiting, in the queue and in the overflow.
    pub fn backlog(&self) -> usize {
        self.queued() + self.overflow.len()
    }

    /// More than `limit` writes wait: take no new games or players until it drains.
    pub fn backlogged(&self, limit: usize) -> bool {
        self.backlog() > limit
    }

    /// Writes waiting for the writer.
    pub fn queued(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Stores a new player at once (not through the writer: the answer says whether the
    /// name is free); `Ok(false)`: another player has the name, or one equal but for case.
    pub async fn register_player(&self, row: &PlayerRow) -> anyhow::Result<bool> {
        on_db!(&self.db, Ok(true), |sql, pool| sql::register_player(
            pool, row
        )
        .await)
    }

    /// Stores a new player and waits until it is on disk (for a connection, never a game).
    pub async fn add_player(&self, row: PlayerRow) -> bool {
        let (tx, rx) = oneshot::channel();
        self.submit(Write::Player(row, Some(tx)));
        rx.await.unwrap_or(false)
    }

    /// The player with this token hash.
    pub async fn player_by_token_hash(&self, hash: &str) -> anyhow::Result<Option<PlayerRow>> {
        self.player_where("token_hash", hash).await
    }

    /// The player with this id.
    pub async fn player_by_id(&self, id: &str) -> anyhow::Result<Option<PlayerRow>> {
        self.player_where("id", id).await
    }

    /// The player whose `column` (a unique one: `id`, `token_hash`) holds `value`.
    async fn player_where(
        &self,
        column: &'static str,
        value: &str,
    ) -> anyhow::Result<Option<PlayerRow>> {
        on_db!(&self.db, Ok(None), |sql, pool| sql::player_where(
            pool, column, value
        )
        .await)
    }

    /// Stored (finished or aborted) games, newest first: those of the player with this
    /// name if given, with an id below `before` if given.
    pub async fn recent_games(
        &self,
        player: Option<&str>,
        before: Option<GameId>,
        limit: usize,
    ) -> anyhow::Result<Vec<StoredGame>> {
        on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::recent_games(pool, player, before, limit).await
        })
    }

    /// A stored game with its record; `None` if there is none (or it is still live).
    pub async fn game(&self, id: GameId) -> anyhow::Result<Option<StoredRecord>> {
        on_db!(&self.db, Ok(None), |sql, pool| sql::game(pool, id).await)
    }
}

/// An SQLite file, or memory.
fn sqlite_location(path: Option<&Path>) -> Location {
    path.map_or(Location::Memory, |p| Location::Sqlite(p.to_path_buf()))
}

#[cfg(test)]
mod tests;
