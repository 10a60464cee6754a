//! The PostgreSQL backend: a database named by a `postgres://` URL, migrations in
//! `server/migrations_pg` (the same tables as SQLite's final schema, in PostgreSQL's
//! types).

use std::str::FromStr;
use std::time::Duration;

use super::OpenError;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

/// The database the shared SQL is compiled for here.
pub type DB = sqlx::Postgres;

/// How every transaction begins (SQLite's differs: see `sqlite::BEGIN`).
pub const BEGIN: &str = "BEGIN";

/// Locks the game rows a journal insert checks the owner's epoch against, until the
/// transaction ends: a takeover's update of the epoch waits for it (or the insert, if
/// second, sees the new epoch), so no row of a former owner lands after a new owner
/// read the journal. SQLite has no such clause and needs none (one writer at a time).
pub const SHARE_LOCK: &str = " FOR SHARE OF g";

/// A row per journal entry, keyed by game and index (PostgreSQL logs rows, not pages, and
/// a takeover reads one game's entries by the key): see `sql/batches.rs` for SQLite's.
pub const BATCHED_JOURNAL: bool = false;

// The same SQL, compiled for this backend's `DB` (on purpose: see `sql/mod.rs`).
#[allow(clippy::duplicate_mod)]
#[path = "sql/mod.rs"]
pub(crate) mod sql;

/// Whether `target` names a PostgreSQL database (a `postgres://` or `postgresql://` URL).
pub fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// A pooled connection idle at least this long is pinged before it is used.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// A pool of at most `connections` to the database at `url`.
pub async fn connect(url: &str, connections: u32) -> Result<PgPool, OpenError> {
    let options = PgConnectOptions::from_str(url)
        .map_err(OpenError::BadUrl)?
        .application_name("tamsk-server");
    PgPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(Duration::from_secs(10))
        // A connection idle a while is checked before use (the server may have closed
        // it: it is then replaced); one used a moment ago is not. sqlx's default checks
        // every time, a round trip to PostgreSQL per use: the journal's writer takes a
        // connection for each batch, and the pings were a tenth of a node's CPU (perf,
        // 2-node benchmark).
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= IDLE_CHECK {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
        .connect_with(options)
        .await
        .map_err(|source| OpenError::Connect {
            redacted_url: redact(url),
            source,
        })
}

/// Connects to the database at `url` and runs the migrations (under PostgreSQL's
/// advisory lock: nodes starting together migrate once).
pub async fn open(url: &str) -> Result<PgPool, OpenError> {
    let pool = connect(url, 8).await?;
    sqlx::migrate!("./migrations_pg").run(&pool).await?;
    Ok(pool)
}

/// The URL without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            let user = user.split(':').next().unwrap_or("");
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}
