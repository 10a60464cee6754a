//! The journal's SQL: the games still marked live, with their entries.

use std::collections::{HashMap, HashSet};

use protocol::record::Entry;
use protocol::settings::Settings;
use protocol::wire::{GameId, PlayerRef};
use sqlx::types::Json;
use sqlx::{Pool, Row};

use super::{clear_journal, gid, read_gid, write_end, DB};
use crate::events::TournamentGame;
use crate::store::journal::Cut;
use crate::store::{GameEnd, GameStart};

/// Every game still marked live, oldest first. Journal rows of games already stored are
/// cleared (a batched journal's by the writer when it starts: `batches::seed`).
pub async fn load(pool: &Pool<DB>) -> anyhow::Result<Vec<Cut>> {
    if !super::super::BATCHED_JOURNAL {
        sqlx::query(
            "DELETE FROM live_entries WHERE game_id IN \
             (SELECT id FROM games WHERE state <> 'playing')",
        )
        .execute(pool)
        .await?;
    }
    let rows = sqlx::query(&format!(
        "SELECT {LIVE_COLUMNS} FROM games WHERE state = 'playing' ORDER BY id"
    ))
    .fetch_all(pool)
    .await?;
    let ids: HashSet<GameId> = rows.iter().filter_map(|r| read_gid(r).ok()).collect();
    let mut batched = batched_entries(pool, &ids).await?;
    let mut live = Vec::with_capacity(rows.len());
    for r in rows {
        if let Some(cut) = cut_of(pool, &r, batched.as_mut()).await? {
            live.push(cut);
        }
    }
    Ok(live)
}

/// A batched journal's entries of the games `ids`, read together; `None` for a keyed
/// journal (each game's read on its own).
async fn batched_entries(
    pool: &Pool<DB>,
    ids: &HashSet<GameId>,
) -> anyhow::Result<Option<HashMap<GameId, Vec<Option<Entry>>>>> {
    if super::super::BATCHED_JOURNAL {
        Ok(Some(super::batches::entries(pool, ids).await?))
    } else {
        Ok(None)
    }
}

/// The id and start (ms since the Unix epoch) of every game still marked live: one
/// query, no journal read (a takeover scan's, every third of a lease on every node).
pub async fn live_ids(pool: &Pool<DB>) -> anyhow::Result<Vec<(GameId, u64)>> {
    let rows = sqlx::query("SELECT id, started_ms FROM games WHERE state = 'playing'")
        .fetch_all(pool)
        .await?;
    Ok(rows
        .iter()
        .filter_map(|r| Some((read_gid(r).ok()?, r.get::<i64, _>("started_ms") as u64)))
        .collect())
}

/// Whether game `id` is marked live.
pub async fn is_live(pool: &Pool<DB>, id: GameId) -> anyhow::Result<bool> {
    let row = sqlx::query("SELECT 1 FROM games WHERE id = $1 AND state = 'playing'")
        .bind(gid(id))
        .fetch_optional(pool)
        .await?;
    Ok(row.is_some())
}

const LIVE_COLUMNS: &str = "id, red_id, red_name, black_id, black_name, settings, started_ms, \
     code, rated, owner_epoch, red_grace_until_ms, black_grace_until_ms";

/// The live game `id`, if it still is.
pub async fn load_one(pool: &Pool<DB>, id: GameId) -> anyhow::Result<Option<Cut>> {
    let row = sqlx::query(&format!(
        "SELECT {LIVE_COLUMNS} FROM games WHERE id = $1 AND state = 'playing'"
    ))
    .bind(gid(id))
    .fetch_optional(pool)
    .await?;
    match row {
        Some(r) => {
            let mut batched = batched_entries(pool, &HashSet::from([id])).await?;
            cut_of(pool, &r, batched.as_mut()).await
        }
        None => Ok(None),
    }
}

/// A takeover: one more on the live game's `owner_epoch` (the fencing token), which
/// refuses from now on the writes of whoever ran it before; the new epoch, or `None` if
/// the game is not live any more.
pub async fn fence(pool: &Pool<DB>, id: GameId) -> anyhow::Result<Option<u64>> {
    let epoch: Option<i64> = sqlx::query_scalar(
        "UPDATE games SET owner_epoch = owner_epoch + 1 \
         WHERE id = $1 AND state = 'playing' RETURNING owner_epoch",
    )
    .bind(gid(id))
    .fetch_optional(pool)
    .await?;
    Ok(epoch.map(|e| e as u64))
}

/// A live game's row with its tournament round and journal (from `batched`, if read
/// already); `None` if it does not read.
async fn cut_of(
    pool: &Pool<DB>,
    r: &super::DbRow,
    batched: Option<&mut HashMap<GameId, Vec<Option<Entry>>>>,
) -> anyhow::Result<Option<Cut>> {
    {
        let id: GameId = match read_gid(r) {
            Ok(id) => id,
            Err(e) => {
                tracing::error!(error = %e, "unreadable id of a cut-off game");
                return Ok(None);
            }
        };
        let settings: Settings = match r.try_get::<Json<Settings>, _>("settings") {
            Ok(s) => s.0,
            Err(e) => {
                tracing::error!(game = %id, error = %e, "unreadable settings of a cut-off game");
                return Ok(None);
            }
        };
        let start = GameStart {
            id,
            red: PlayerRef {
                player_id: r.get("red_id"),
                name: r.get("red_name"),
                rating: None,
            },
            black: PlayerRef {
                player_id: r.get("black_id"),
                name: r.get("black_name"),
                rating: None,
            },
            settings,
            started_ms: r.get::<i64, _>("started_ms") as u64,
            code: r.get("code"),
            rated: r.get::<Option<bool>, _>("rated").unwrap_or(false),
            owner_epoch: r.get::<i64, _>("owner_epoch") as u64,
        };
        let tournament =
            sqlx::query("SELECT tournament_id, round FROM tournament_pairings WHERE game_id = $1")
                .bind(gid(id))
                .fetch_optional(pool)
                .await?
                .map(|t| TournamentGame {
                    tournament: t.get("tournament_id"),
                    round: t.get::<i64, _>("round") as u32,
                });
        let entries = match batched {
            Some(batched) => batched.remove(&id).unwrap_or_default(),
            None => sqlx::query("SELECT entry FROM live_entries WHERE game_id = $1 ORDER BY idx")
                .bind(gid(id))
                .fetch_all(pool)
                .await?
                .iter()
                .map(|e| e.try_get::<Json<Entry>, _>("entry").ok().map(|j| j.0))
                .collect(),
        };
        let away_until = ["red_grace_until_ms", "black_grace_until_ms"].map(|column| {
            r.try_get::<Option<i64>, _>(column)
                .ok()
                .flatten()
                .map(|t| t as u64)
        });
        Ok(Some(Cut {
            start,
            tournament,
            entries,
            away_until,
        }))
    }
}

/// Stores a game that is over, in a transaction of its own.
pub async fn store_end(pool: &Pool<DB>, end: &GameEnd) -> anyhow::Result<()> {
    let mut tx = super::begin(pool).await?;
    if !write_end(&mut tx, end).await? {
        anyhow::bail!("game {}: another node owns it now", end.start.id);
    }
    clear_journal(&mut tx, end.start.id).await?;
    tx.commit().await?;
    Ok(())
}
