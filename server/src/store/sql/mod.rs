//! The store's SQL, written once and compiled once per backend: `store/sqlite.rs` and
//! `store/postgres.rs` each include this folder as their module `sql`, with `super::DB`
//! their sqlx database (`Sqlite`, `Postgres`). The statements are those both read alike
//! (`$n` parameters, `ON CONFLICT`, `excluded.`); the values are bound as the Rust types
//! whose encoding both schemas agree on: `i64` for BIGINT, `f64` for DOUBLE PRECISION,
//! `bool` for flags (INTEGER 0/1 in SQLite, BOOLEAN in PostgreSQL), `Json` for JSON
//! (TEXT in SQLite, JSONB in PostgreSQL), `String` for ids and text.

use protocol::record::Entry;
use protocol::wire::{GameId, PlayerRef};
use sqlx::types::Json;
use sqlx::{Pool, QueryBuilder, Row, Transaction};

use super::DB;
use crate::store::{Batches, GameEnd, PlayerRow, StoredGame, StoredRecord, Write};

pub mod batches;
pub mod journal;
pub mod ratings;
pub mod tournaments;

/// A transaction, begun as this backend begins them (`BEGIN`).
pub(crate) async fn begin(pool: &Pool<DB>) -> sqlx::Result<Transaction<'static, DB>> {
    pool.begin_with(super::BEGIN).await
}

/// A row of this backend.
pub(crate) type DbRow = <DB as sqlx::Database>::Row;

/// Stores a new player at once; false: the name (or the token) is taken.
pub async fn register_player(pool: &Pool<DB>, row: &PlayerRow) -> anyhow::Result<bool> {
    let done = insert_player(row).execute(pool).await?;
    Ok(done.rows_affected() == 1)
}

fn insert_player(
    p: &PlayerRow,
) -> sqlx::query::Query<'_, DB, <DB as sqlx::Database>::Arguments<'_>> {
    sqlx::query(
        "INSERT INTO players (id, name, name_key, token_hash, created_ms, is_bot) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(&p.id)
    .bind(&p.name)
    .bind(crate::limits::name_key(&p.name))
    .bind(&p.token_hash)
    .bind(ms(p.created_ms))
    .bind(p.is_bot)
}

/// The player whose `column` (a unique one: `id`, `token_hash`) holds `value`.
pub async fn player_where(
    pool: &Pool<DB>,
    column: &'static str,
    value: &str,
) -> anyhow::Result<Option<PlayerRow>> {
    let row = sqlx::query(&format!(
        "SELECT id, name, token_hash, created_ms, is_bot FROM players WHERE {column} = $1"
    ))
    .bind(value)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| PlayerRow {
        id: r.get("id"),
        name: r.get("name"),
        token_hash: r.get("token_hash"),
        created_ms: r.get::<i64, _>("created_ms") as u64,
        is_bot: r.get::<bool, _>("is_bot"),
    }))
}

/// Stored (finished or aborted) games, newest first: those of the player with this name if
/// given, with an id below `before` if given.
pub async fn recent_games(
    pool: &Pool<DB>,
    player: Option<&str>,
    before: Option<GameId>,
    limit: usize,
) -> anyhow::Result<Vec<StoredGame>> {
    let rows = sqlx::query(&format!(
        "SELECT {GAME_COLUMNS} FROM games \
         WHERE state <> 'playing' AND ($1 IS NULL OR red_name = $1 OR black_name = $1) \
         AND id < $2 ORDER BY id DESC LIMIT $3"
    ))
    .bind(player)
    // Hyphenated lower-case UUIDs compare as text in the order of the ids (byte order:
    // PostgreSQL's id columns are COLLATE "C").
    .bind(before.map_or_else(|| "~".to_string(), gid))
    .bind(limit as i64)
    .fetch_all(pool)
    .await?;
    rows.iter().map(stored_game).collect()
}

/// A stored game with its record; `None` if there is none (or it is still live).
pub async fn game(pool: &Pool<DB>, id: GameId) -> anyhow::Result<Option<StoredRecord>> {
    let row = sqlx::query(&format!(
        "SELECT {GAME_COLUMNS}, record_json, record_text FROM games \
         WHERE id = $1 AND state <> 'playing'"
    ))
    .bind(gid(id))
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let game = stored_game(&row)?;
    let json: Option<Json<serde_json::Value>> = row.try_get("record_json")?;
    let text: Option<String> = row.get("record_text");
    Ok(Some(StoredRecord {
        game,
        record: json.map_or(serde_json::Value::Null, |j| j.0),
        text: text.unwrap_or_default(),
    }))
}

const GAME_COLUMNS: &str = "id, red_id, red_name, black_id, black_name, level, settings, state, \
     winner, reason, result, move_count, started_ms, ended_ms";

fn stored_game(r: &DbRow) -> anyhow::Result<StoredGame> {
    let settings: Json<serde_json::Value> = r.try_get("settings")?;
    Ok(StoredGame {
        id: read_gid(r)?,
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
        level: r.get::<i64, _>("level") as u8,
        settings: settings.0,
        state: r.get("state"),
        winner: r.get("winner"),
        reason: r.get("reason"),
        result: r.get("result"),
        move_count: r.get::<i64, _>("move_count") as u64,
        started_ms: r.get::<i64, _>("started_ms") as u64,
        ended_ms: r.get::<Option<i64>, _>("ended_ms").map(|v| v as u64),
    })
}

/// A game id as the database keeps it: the hyphenated UUID, text.
pub fn gid(id: GameId) -> String {
    id.hyphenated().to_string()
}

/// The `id` column of a games row.
pub(crate) fn read_gid(r: &DbRow) -> anyhow::Result<GameId> {
    let text: String = r.try_get("id")?;
    text.parse()
        .map_err(|e| anyhow::anyhow!("game id {text:?} is not a UUID: {e}"))
}

pub fn ms(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// Writes a batch of the writer's queue in one transaction; answers the games whose
/// journal rows or end were refused as a stale owner's (see `GameStart::owner_epoch`).
/// `journal`: the writer's account of a batched journal's rows (see `batches`).
pub async fn write_batch(
    pool: &Pool<DB>,
    batch: &[Write],
    journal: &mut Batches,
) -> anyhow::Result<Vec<GameId>> {
    let mut refused = Vec::new();
    if batch.iter().all(|w| matches!(w, Write::Flush(_))) {
        return Ok(refused);
    }
    let mut tx = begin(pool).await?;
    let mut entries = Vec::new();
    for w in batch {
        match w {
            Write::Player(p, _) => {
                insert_player(p).execute(&mut *tx).await?;
            }
            Write::GameStarted(g) => {
                sqlx::query(
                    "INSERT INTO games (id, red_id, red_name, black_id, black_name, level, \
                     settings, state, move_count, started_ms, code, rated, owner_epoch) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, 'playing', 0, $8, $9, $10, $11) \
                     ON CONFLICT (id) DO NOTHING",
                )
                .bind(gid(g.id))
                .bind(&g.red.player_id)
                .bind(&g.red.name)
                .bind(&g.black.player_id)
                .bind(&g.black.name)
                .bind(g.settings.level.number() as i64)
                .bind(Json(&g.settings))
                .bind(ms(g.started_ms))
                .bind(&g.code)
                .bind(g.rated)
                .bind(ms(g.owner_epoch))
                .execute(&mut *tx)
                .await?;
            }
            Write::Entry {
                game,
                epoch,
                idx,
                entry,
            } => {
                entries.push((*game, *epoch, *idx, entry));
                if entries.len() == ENTRY_ROWS {
                    write_entries(&mut tx, &mut entries, &mut refused, journal).await?;
                }
            }
            Write::Absence {
                game,
                epoch,
                player,
                grace_until_ms,
            } => {
                // Only by the game's owner (its epoch), as its journal rows.
                let column = match player {
                    protocol::game::Player::Red => "red_grace_until_ms",
                    protocol::game::Player::Black => "black_grace_until_ms",
                };
                sqlx::query(&format!(
                    "UPDATE games SET {column} = $1 \
                     WHERE id = $2 AND owner_epoch = $3 AND state = 'playing'"
                ))
                .bind(grace_until_ms.map(ms))
                .bind(gid(*game))
                .bind(ms(*epoch))
                .execute(&mut *tx)
                .await?;
            }
            Write::GameEnded(end, _) => {
                // The journal rows of this game go in before its end deletes them.
                write_entries(&mut tx, &mut entries, &mut refused, journal).await?;
                if !write_end(&mut tx, end).await? {
                    refused.push(end.start.id);
                }
            }
            Write::Flush(_) => {}
        }
    }
    write_entries(&mut tx, &mut entries, &mut refused, journal).await?;
    tx.commit().await?;
    refused.sort_unstable();
    refused.dedup();
    Ok(refused)
}

/// Journal rows inserted by one statement: a statement per move cost the writer a round
/// trip to the database each, which at thousands of moves a second was most of its time
/// (3 bound values a row, well under SQLite's limit of 32,766 and PostgreSQL's 65,535).
const ENTRY_ROWS: usize = 512;

/// Inserts the pending journal rows, if any, with one statement, and empties `rows`
/// (game, writer's epoch, index, entry). A row goes in only if its game's row has the
/// writer's `owner_epoch` (else another node took the game over since): the games of
/// rows left out are added to `refused`. A batched journal (`super::BATCHED_JOURNAL`,
/// never a cluster's) gets one row for them all instead (`batches::write`).
async fn write_entries(
    tx: &mut Transaction<'_, DB>,
    rows: &mut Vec<(GameId, u64, u64, &Entry)>,
    refused: &mut Vec<GameId>,
    journal: &mut Batches,
) -> anyhow::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    if super::BATCHED_JOURNAL {
        return batches::write(tx, rows, journal).await;
    }
    let count = rows.len() as u64;
    let mut writers: Vec<(GameId, u64)> = rows.iter().map(|r| (r.0, r.1)).collect();
    writers.sort_unstable();
    writers.dedup();
    // `VALUES` names its columns column1.. in both databases; the `WHERE` also settles
    // SQLite's reading of `ON CONFLICT` after a `SELECT`.
    let mut insert = QueryBuilder::<DB>::new(
        "INSERT INTO live_entries (game_id, idx, entry) \
         SELECT v.column1, v.column2, v.column3 FROM (",
    );
    insert.push_values(rows.drain(..), |mut row, (game, epoch, idx, entry)| {
        row.push_bind(gid(game))
            .push_bind(ms(idx))
            .push_bind(Json(entry.clone()))
            .push_bind(ms(epoch));
    });
    insert.push(") AS v JOIN games g ON g.id = v.column1 WHERE g.owner_epoch = v.column4");
    insert.push(super::SHARE_LOCK);
    insert.push(" ON CONFLICT (game_id, idx) DO NOTHING");
    let done = insert.build().execute(&mut **tx).await?;
    if done.rows_affected() < count {
        // Fewer rows: either refused, or already there (a batch written again one by
        // one after a failure). Only the epochs tell which; the common case pays nothing.
        for (game, epoch) in writers {
            let now: Option<i64> =
                sqlx::query_scalar("SELECT owner_epoch FROM games WHERE id = $1")
                    .bind(gid(game))
                    .fetch_optional(&mut **tx)
                    .await?;
            if now != Some(ms(epoch)) {
                refused.push(game);
            }
        }
    }
    Ok(())
}

/// Stores a game that is over (its row and record); its journal is cleared later
/// ([`forget_journals`]; until then the rows are only those of a game no longer live,
/// which nothing reads, and a start clears any left). False (and nothing written): the
/// row's `owner_epoch` is not the writer's (another node took the game over).
pub async fn write_end(tx: &mut Transaction<'_, DB>, end: &GameEnd) -> anyhow::Result<bool> {
    let g = &end.start;
    let done = sqlx::query(
        "INSERT INTO games (id, red_id, red_name, black_id, black_name, level, settings, \
         state, winner, reason, result, move_count, started_ms, ended_ms, record_json, \
         record_text, owner_epoch) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
         ON CONFLICT (id) DO UPDATE SET state = excluded.state, winner = excluded.winner, \
         reason = excluded.reason, result = excluded.result, \
         move_count = excluded.move_count, ended_ms = excluded.ended_ms, \
         record_json = excluded.record_json, record_text = excluded.record_text \
         WHERE games.owner_epoch = excluded.owner_epoch",
    )
    .bind(gid(g.id))
    .bind(&g.red.player_id)
    .bind(&g.red.name)
    .bind(&g.black.player_id)
    .bind(&g.black.name)
    .bind(g.settings.level.number() as i64)
    .bind(Json(&g.settings))
    .bind(end.state)
    .bind(end.winner.map(|p| p.to_string().to_lowercase()))
    .bind(&end.reason)
    .bind(&end.result)
    .bind(end.move_count as i64)
    .bind(ms(g.started_ms))
    .bind(ms(end.ended_ms))
    .bind(Json(&end.record.record))
    .bind(end.record.to_text())
    .bind(ms(g.owner_epoch))
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Clears the journal of a game that is stored (a batched journal's rows go when the
/// writer starts, once no live game has entries in them: `batches::seed`).
pub async fn clear_journal(tx: &mut Transaction<'_, DB>, id: GameId) -> anyhow::Result<()> {
    if super::BATCHED_JOURNAL {
        return Ok(());
    }
    sqlx::query("DELETE FROM live_entries WHERE game_id = $1")
        .bind(gid(id))
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Games whose journals are cleared by one statement.
const FORGET_IDS: usize = 500;

/// Clears the journals of games that are stored, in one transaction: the writer's sweep
/// (see `writer::SWEEP`). A game's journal rows are spread over as many of the table's
/// pages as it had entries (rows go in in the order they come, every game's between the
/// others'), so clearing each at its end rewrote about a page a move; swept together,
/// each page is rewritten once for all the games that ended meanwhile.
pub async fn forget_journals(
    pool: &Pool<DB>,
    ids: &[GameId],
    journal: &mut Batches,
) -> anyhow::Result<()> {
    if super::BATCHED_JOURNAL {
        return batches::forget(pool, ids, journal).await;
    }
    let mut tx = begin(pool).await?;
    for chunk in ids.chunks(FORGET_IDS) {
        let mut delete = QueryBuilder::<DB>::new("DELETE FROM live_entries WHERE game_id IN (");
        let mut list = delete.separated(", ");
        for id in chunk {
            list.push_bind(gid(*id));
        }
        delete.push(")");
        delete.build().execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// The indexes of a game's journal entries in the order they were written (SQLite's
/// batched journal, through its view; tests).
#[allow(dead_code)]
#[cfg(test)]
pub async fn live_entry_order(pool: &Pool<DB>, id: GameId) -> anyhow::Result<Vec<i64>> {
    Ok(
        sqlx::query_scalar("SELECT idx FROM live_entries WHERE game_id = $1 ORDER BY batch, pos")
            .bind(gid(id))
            .fetch_all(pool)
            .await?,
    )
}

/// Journal rows left of a game (tests; of SQLite only so far).
#[allow(dead_code)]
#[cfg(test)]
pub async fn live_entry_count(pool: &Pool<DB>, id: GameId) -> anyhow::Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM live_entries WHERE game_id = $1")
            .bind(gid(id))
            .fetch_one(pool)
            .await?,
    )
}
