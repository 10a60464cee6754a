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

// The same SQL, compiled for this backend's `DB` (on purpose: see `sql/mod.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "sql/mod.rs"]
pub(crate) mod sql;

/// Opens (creating it on first run) the database file at `path`, or a private in-memory
/// database when `path` is `None`, and runs the migrations.
pub async fn open(path: Option<&Path>) -> Result<SqlitePool, OpenError> {
    let pool = match path {
        Some(path) => {
            let options = SqliteConnectOptions::new()
                .filename(path)
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                // With WAL, every commit survives a crash of the process.
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(true);
            SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options)
                .await
                .map_err(|source| OpenError::File {
                    path: path.to_path_buf(),
                    source,
                })?
        }
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
