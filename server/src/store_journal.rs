//! The journal of live games: their rows in `games` (state `playing`) and their entries in
//! `live_entries`, written as they happen. After a stop (SIGTERM or crash) each such game
//! is either handed back to be resumed ([`load`]) or stored as aborted ([`store_aborted`]).

use protocol::game::{AbortReason, Game};
use protocol::record::{Entry, EntryKind};
use protocol::settings::Settings;
use protocol::wire::PlayerRef;
use sqlx::sqlite::SqlitePool;
use sqlx::Row;

use crate::events::TournamentGame;

use super::{gid, read_gid, write_end, GameEnd, GameStart};

/// A game the server was playing when it stopped, rebuilt from its journal.
pub struct LiveGame {
    pub start: GameStart,
    /// The engine with every entry applied (brought up to the last entry's instant).
    pub game: Game,
    /// The entries that replay, in order: a gap (a write lost in a crash) ends them.
    pub entries: Vec<Entry>,
    /// The tournament round it belongs to, if any.
    pub tournament: Option<TournamentGame>,
}

/// Every game still marked live, oldest first, each rebuilt from its journal. Journal
/// rows of games already stored are cleared.
pub(super) async fn load(pool: &SqlitePool) -> anyhow::Result<Vec<LiveGame>> {
    sqlx::query(
        "DELETE FROM live_entries WHERE game_id IN (SELECT id FROM games WHERE state <> 'playing')",
    )
    .execute(pool)
    .await?;
    let rows = sqlx::query(
        "SELECT id, red_id, red_name, black_id, black_name, settings, started_ms, code, rated \
         FROM games WHERE state = 'playing' ORDER BY id",
    )
    .fetch_all(pool)
    .await?;
    let mut live = Vec::with_capacity(rows.len());
    for r in rows {
        let id = match read_gid(&r) {
            Ok(id) => id,
            Err(e) => {
                tracing::error!(error = %e, "unreadable id of a cut-off game");
                continue;
            }
        };
        let settings: Settings = match serde_json::from_str(&r.get::<String, _>("settings")) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(game = %id, error = %e, "unreadable settings of a cut-off game");
                continue;
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
            settings: settings.clone(),
            started_ms: r.get::<i64, _>("started_ms") as u64,
            code: r.get("code"),
            rated: r.get::<Option<i64>, _>("rated").unwrap_or(0) != 0,
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
        let entry_rows =
            sqlx::query("SELECT entry FROM live_entries WHERE game_id = $1 ORDER BY idx")
                .bind(gid(id))
                .fetch_all(pool)
                .await?;
        let mut game = Game::new(settings);
        let mut entries = Vec::new();
        for e in entry_rows {
            let Ok(entry) = serde_json::from_str::<Entry>(&e.get::<String, _>("entry")) else {
                break;
            };
            // Only what replays: a gap (a lost write) ends the record there.
            if entry.apply_to(&mut game).is_err() {
                break;
            }
            entries.push(entry);
        }
        live.push(LiveGame {
            start,
            game,
            entries,
            tournament,
        });
    }
    Ok(live)
}

/// Stores a cut-off game as aborted with reason `crash` (its record up to the last entry
/// that replays), unless its entries already ended it.
pub(super) async fn store_aborted(pool: &SqlitePool, live: LiveGame) -> anyhow::Result<()> {
    let LiveGame {
        start,
        mut game,
        mut entries,
        ..
    } = live;
    let mut reason = None;
    if game.is_playing() {
        let at = game.now();
        game.abort(AbortReason::Shutdown, at);
        entries.push(Entry {
            at_ms: at,
            kind: EntryKind::Abort {
                reason: AbortReason::Shutdown,
            },
        });
        reason = Some("crash");
    }
    let ended_ms = start.started_ms + game.now();
    let end = GameEnd::of(start, &game, entries, ended_ms, reason);
    let mut tx = pool.begin().await?;
    write_end(&mut tx, &end).await?;
    tx.commit().await?;
    Ok(())
}
