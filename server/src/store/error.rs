//! Why the database could not be opened.

use std::path::PathBuf;

/// Why opening a store's database failed. The messages name what failed and where (a
/// PostgreSQL URL without its password, see [`super::postgres::redact`]).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot open database {}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: sqlx::Error,
    },
    #[error("bad PostgreSQL URL: {0}")]
    BadUrl(#[source] sqlx::Error),
    #[error("cannot connect to PostgreSQL at {redacted_url}: {source}")]
    Connect {
        redacted_url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("database migration failed: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    /// Anything else sqlx reports (opening the in-memory database).
    #[error(transparent)]
    Sqlx(#[from] sqlx::Error),
}
