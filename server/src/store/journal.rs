//! The journal of live games: their rows in `games` (state `playing`) and their entries
//! (SQLite's `live_batches`, PostgreSQL's `live_entries`), written as they happen. After a stop (SIGTERM or crash) each such game
//! is either handed back to be resumed ([`load`]) or stored as aborted ([`store_aborted`]).

use protocol::game::{AbortReason, Game};
use protocol::record::{Entry, EntryKind};
use protocol::wire::GameId;

use crate::events::TournamentGame;

use super::{Db, GameEnd, GameStart};

/// A game the server was playing when it stopped, rebuilt from its journal.
pub struct LiveGame {
    pub start: GameStart,
    /// The engine with every entry applied (brought up to the last entry's instant).
    pub game: Game,
    /// The entries that replay, in order: a gap (a write lost in a crash) ends them.
    pub entries: Vec<Entry>,
    /// The tournament round it belongs to, if any.
    pub tournament: Option<TournamentGame>,
    /// Per seat (Red, Black) away at the cut, the end of his grace (game time; past if it
    /// ran out).
    pub away_until: [Option<u64>; 2],
}

/// A game still marked live, as stored: its start, tournament round and journal entries
/// (in order; `None` for an entry that does not read).
pub(crate) struct Cut {
    pub start: GameStart,
    pub tournament: Option<TournamentGame>,
    pub entries: Vec<Option<Entry>>,
    pub away_until: [Option<u64>; 2],
}

/// Every game still marked live, oldest first, each rebuilt from its journal. Journal
/// rows of games already stored are cleared.
pub(super) async fn load(db: &Db) -> anyhow::Result<Vec<LiveGame>> {
    let cuts = on_db!(Some(db), Ok(Vec::new()), |sql, pool| sql::journal::load(
        pool
    )
    .await)?;
    Ok(cuts.into_iter().map(rebuild).collect())
}

/// The live game `id`, rebuilt from its journal, if it still is live.
pub(super) async fn load_one(db: &Db, id: GameId) -> anyhow::Result<Option<LiveGame>> {
    let cut = on_db!(Some(db), Ok(None), |sql, pool| sql::journal::load_one(
        pool, id
    )
    .await)?;
    Ok(cut.map(rebuild))
}

fn rebuild(cut: Cut) -> LiveGame {
    let mut game = Game::new(cut.start.settings.clone());
    let mut entries = Vec::new();
    for entry in cut.entries {
        // Only what replays: a gap (a lost write) ends the record there.
        let Some(entry) = entry else { break };
        if entry.apply_to(&mut game).is_err() {
            break;
        }
        entries.push(entry);
    }
    LiveGame {
        start: cut.start,
        game,
        entries,
        tournament: cut.tournament,
        away_until: cut.away_until,
    }
}

/// Stores a cut-off game as aborted with reason `crash` (its record up to the last entry
/// that replays), unless its entries already ended it. Before the writer starts.
pub(super) async fn store_aborted(db: &Db, live: LiveGame) -> anyhow::Result<()> {
    let end = aborted_end(live);
    on_db!(Some(db), Ok(()), |sql, pool| sql::journal::store_end(
        pool, &end
    )
    .await)
}

/// A cut-off game's end as aborted with reason `crash` (its record up to the last entry
/// that replays), unless its entries already ended it.
pub(super) fn aborted_end(live: LiveGame) -> GameEnd {
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
    GameEnd::of(start, &game, entries, ended_ms, reason)
}
