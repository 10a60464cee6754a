//! The SQLite backend: a database file (or a private in-memory database), migrations in
//! `server/migrations`.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use super::OpenError;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

/// The database the shared SQL is compiled for here.
pub type DB = sqlx::Sqlite;

/// No row locks in SQLite: its writers take turns (see `postgres::SHARE_LOCK`).
pub const SHARE_LOCK: &str = "";

/// How every transaction begins: taking the write lock at once. A deferred transaction
/// that read before another connection (the writer's) committed could not write after:
/// SQLite refuses it at once with `database is locked` (codes 5 and 517, which no busy
/// timeout waits out), and a rated game went unrated when games ended together. Taken at
/// `BEGIN`, the lock is waited for (`busy_timeout`) like any other.
pub const BEGIN: &str = "BEGIN IMMEDIATE";

/// The journal in batch rows, appended at the end (`sql/batches.rs`): SQLite writes
/// whole pages to its log, and a row per entry in its game's place rewrote a page each.
pub const BATCHED_JOURNAL: bool = true;

// The same SQL, compiled for this backend's `DB` (on purpose: see `sql/mod.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "sql/mod.rs"]
pub(crate) mod sql;

/// The options of every connection to the database file at `path`.
fn file_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // With WAL, every commit survives a crash of the process.
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true)
        // Statement journals (a multi-row insert in a transaction) in memory, not in
        // temporary files; and 8 MiB of page cache instead of 2: the journal's index
        // pages were read again from the file at every batch (measured with
        // `examples/store_bench`: 30 -> 25 us of CPU per journal entry).
        .pragma("temp_store", "memory")
        .pragma("cache_size", "-8192")
}

/// The writer's own connection to the database file at `path` (opened after [`open`]):
/// one connection, so its page cache stays warm. In WAL mode a connection drops its
/// whole cache when another one wrote since its last transaction, and a pool handed the
/// writer any of four in turn.
pub async fn open_writer(path: &Path) -> Result<SqlitePool, OpenError> {
    SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(file_options(path))
        .await
        .map_err(|source| OpenError::File {
            path: path.to_path_buf(),
            source,
        })
}

/// Opens (creating it on first run) the database file at `path`, or a private in-memory
/// database when `path` is `None`, and runs the migrations.
pub async fn open(path: Option<&Path>) -> Result<SqlitePool, OpenError> {
    let pool = match path {
        Some(path) => SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(file_options(path))
            .await
            .map_err(|source| OpenError::File {
                path: path.to_path_buf(),
                source,
            })?,
        None => {
            // One connection: every connection to ":memory:" is a database of its own.
            let options = SqliteConnectOptions::from_str("sqlite::memory:")?;
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await?
        }
    };
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}
