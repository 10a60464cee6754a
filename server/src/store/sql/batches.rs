//! The journal in batch rows, the layout of the backends whose `BATCHED_JOURNAL` is set
//! (SQLite's): each of the writer's transactions appends one row to `live_batches`, its
//! `body` a JSON array of `[game id, index, entry]`, one per journal entry it writes. A
//! row per entry, keyed by game and index, went into its game's place among all the live
//! games': SQLite writes whole pages to its log, so with 1,000 live games a transaction
//! of 60 entries rewrote about 60 pages of the key's index, and the store's thread took a
//! seventh of the server's CPU at 3,000 moves a second (two fifths of that with batch
//! rows, one fifth with the writer's 50-ms gathering besides: BENCHMARKS.md, session 18).
//! Rows only ever go in at the end.
//!
//! The cost is in reading and clearing: a game's entries are found by reading every row
//! (only at a start, or when a game is taken over, which SQLite's single node never does),
//! and a row is deleted once every game with an entry in it is stored (`store::Batches`,
//! kept by the writer). A view, `live_entries`, shows the rows' entries as the keyed
//! table had them (`sqlite3 tamsk.db "SELECT * FROM live_entries"`).

use std::collections::{HashMap, HashSet};

use futures::TryStreamExt;
use protocol::record::Entry;
use protocol::wire::GameId;
use sqlx::{Pool, QueryBuilder, Row, Transaction};

use super::{read_gid, DB};
use crate::store::Batches;

/// Ids of rows deleted by one statement.
const DELETE_IDS: usize = 500;

/// Appends the pending journal rows (game, writer's epoch, index, entry) as one batch
/// row and empties `rows`. No entry is refused as a stale owner's: only nodes of a
/// cluster take games over (`fence`), and a cluster's database is PostgreSQL's (a node
/// with `--nats` and an SQLite file does not start: `store::Location::shared`).
pub async fn write(
    tx: &mut Transaction<'_, DB>,
    rows: &mut Vec<(GameId, u64, u64, &Entry)>,
    batches: &mut Batches,
) -> anyhow::Result<()> {
    let body: Vec<(GameId, u64, &Entry)> = rows
        .drain(..)
        .map(|(game, _, idx, entry)| (game, idx, entry))
        .collect();
    if body.is_empty() {
        return Ok(());
    }
    // Sized for about 190 bytes an entry (a move's is about 150): a batch holds hundreds,
    // and growing the text by doubling was a tenth of the writer's time (`perf`).
    let mut text = Vec::with_capacity(body.len() * 192);
    serde_json::to_writer(&mut text, &body)?;
    let id: i64 = sqlx::query_scalar("INSERT INTO live_batches (body) VALUES ($1) RETURNING id")
        .bind(String::from_utf8(text)?)
        .fetch_one(&mut **tx)
        .await?;
    batches.written(id, body.iter().map(|e| e.0));
    Ok(())
}

/// Deletes the rows in which none of the live games has entries any more once `ids` are
/// stored. If the delete fails, those rows stay until the next start (`seed`).
pub async fn forget(pool: &Pool<DB>, ids: &[GameId], batches: &mut Batches) -> anyhow::Result<()> {
    delete(pool, &batches.forget(ids)).await
}

async fn delete(pool: &Pool<DB>, rows: &[i64]) -> anyhow::Result<()> {
    for chunk in rows.chunks(DELETE_IDS) {
        let mut query = QueryBuilder::<DB>::new("DELETE FROM live_batches WHERE id IN (");
        let mut list = query.separated(", ");
        for id in chunk {
            list.push_bind(*id);
        }
        query.push(")");
        query.build().execute(pool).await?;
    }
    Ok(())
}

/// The writer's start: which rows hold entries of which live games, from the rows
/// themselves; rows with none (their games stored or aborted since) are deleted.
pub async fn seed(pool: &Pool<DB>, batches: &mut Batches) -> anyhow::Result<()> {
    if !super::super::BATCHED_JOURNAL {
        return Ok(());
    }
    let live: HashSet<GameId> = sqlx::query("SELECT id FROM games WHERE state = 'playing'")
        .fetch_all(pool)
        .await?
        .iter()
        .filter_map(|r| read_gid(r).ok())
        .collect();
    let mut dead = Vec::new();
    // Streamed: after a crash at a high rate the rows can be many megabytes.
    let mut rows = sqlx::query("SELECT id, body FROM live_batches ORDER BY id").fetch(pool);
    while let Some(r) = rows.try_next().await? {
        let id: i64 = r.get("id");
        let games: Vec<GameId> = match serde_json::from_str::<
            Vec<(GameId, u64, serde::de::IgnoredAny)>,
        >(r.get::<&str, _>("body"))
        {
            Ok(body) => body
                .into_iter()
                .map(|e| e.0)
                .filter(|g| live.contains(g))
                .collect(),
            Err(e) => {
                tracing::error!(row = id, error = %e, "an unreadable journal batch: deleted");
                Vec::new()
            }
        };
        if games.is_empty() {
            dead.push(id);
        } else {
            batches.written(id, games);
        }
    }
    drop(rows);
    delete(pool, &dead).await
}

/// The entries of the live games `of` (in index order; `None` for one that does not
/// read), from every row.
pub async fn entries(
    pool: &Pool<DB>,
    of: &HashSet<GameId>,
) -> anyhow::Result<HashMap<GameId, Vec<Option<Entry>>>> {
    let mut found: HashMap<GameId, Vec<(u64, Option<Entry>)>> = HashMap::new();
    if of.is_empty() {
        return Ok(HashMap::new());
    }
    let mut rows = sqlx::query("SELECT id, body FROM live_batches ORDER BY id").fetch(pool);
    while let Some(r) = rows.try_next().await? {
        let body = r.get::<&str, _>("body");
        let body: Vec<(GameId, u64, serde_json::Value)> = match serde_json::from_str(body) {
            Ok(body) => body,
            Err(e) => {
                let id: i64 = r.get("id");
                tracing::error!(row = id, error = %e, "an unreadable journal batch");
                continue;
            }
        };
        for (game, idx, entry) in body {
            if of.contains(&game) {
                let entry = serde_json::from_value(entry).ok();
                found.entry(game).or_default().push((idx, entry));
            }
        }
    }
    Ok(found
        .into_iter()
        .map(|(game, mut entries)| {
            // Written in order; a batch written again after a failure may repeat some.
            entries.sort_by_key(|e| e.0);
            entries.dedup_by_key(|e| e.0);
            (game, entries.into_iter().map(|e| e.1).collect())
        })
        .collect())
}
