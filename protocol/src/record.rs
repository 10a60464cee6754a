//! Game records: what happened in a game, entry by entry with its instant, so that the
//! engine can replay it exactly.
//!
//! The same [`Entry`] serves three places: the server's game task applies entries as they
//! come, clients apply them to their own replica of the game, and a [`Record`] is the
//! list of them.
//!
//! Here: entries, records and replaying them; the text format (writing, reading, the
//! header, importing a network move list) is in submodules.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::game::{AbortReason, Action, ActionError, Event, Game, Player};
use crate::settings::Settings;

use crate::game::Status;
use crate::notation::{self, parse_action, Notation, NotationError};
use crate::settings::{FullSocket, GameClock, Level, Setup};

mod format;
mod header;
mod move_list;
mod read;
mod write;

pub use format::{
    Format, Loaded, Position, RecordError, RecordErrorKind, RecordFile, MOVE_LIST_STEP_MS,
    RECORD_MAGIC, RECORD_VERSION,
};
pub use move_list::move_list_settings;
pub use read::{detect, load};
pub use write::{describe_state, result_line};

/// Something that happened to a game at an instant (ms of game time).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// What an [`Entry`] does to the game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum EntryKind {
    /// A player's accepted action, at the instant the server read it. `lag_ms` is the
    /// server's lag estimate for him then and `comp_ms` the compensation the action used
    /// (see `docs/RULES.md`, lag compensation): both for the record only; the engine
    /// derives them again from the `lag` entries.
    Act {
        player: Player,
        action: Action,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lag_ms: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comp_ms: Option<u32>,
    },
    /// The server's lag estimate for `player` changed (round trip, ms): it moves the
    /// deadlines that judge him.
    Lag { player: Player, lag_ms: u32 },
    /// Time passed: the events due up to this instant (deaths, expiries, passes, ...).
    Advance,
    /// The server ended the game for a player who left and did not come back.
    Abandon { player: Player },
    /// Both players left and neither came back within his grace: decided as at the end
    /// (or aborted if a player had not moved yet).
    BothAbsent,
    /// The server called the game off (shutdown).
    Abort { reason: AbortReason },
}

/// A lag figure as an entry keeps it (`u32` ms, 49 days, so that an entry is 32 bytes: a
/// live game keeps all of its own in memory): a larger one is kept as `u32::MAX`.
pub fn entry_ms(ms: u64) -> u32 {
    u32::try_from(ms).unwrap_or(u32::MAX)
}

impl EntryKind {
    /// An action with no lag figures.
    pub fn act(player: Player, action: Action) -> EntryKind {
        EntryKind::Act {
            player,
            action,
            lag_ms: None,
            comp_ms: None,
        }
    }
}

impl Entry {
    /// Applies this entry to `game`, returning the events it caused.
    pub fn apply_to(&self, game: &mut Game) -> Result<Vec<Event>, ActionError> {
        match &self.kind {
            EntryKind::Act { player, action, .. } => game.apply(*player, *action, self.at_ms),
            EntryKind::Lag { player, lag_ms } => {
                let events = game.advance(self.at_ms);
                game.set_lag(*player, (*lag_ms).into());
                Ok(events)
            }
            EntryKind::Advance => Ok(game.advance(self.at_ms)),
            EntryKind::Abandon { player } => Ok(game.abandon(*player, self.at_ms)),
            EntryKind::BothAbsent => Ok(game.end_both_absent(self.at_ms)),
            EntryKind::Abort { reason } => Ok(game.abort(*reason, self.at_ms)),
        }
    }
}

/// A whole game: its settings, players and entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    pub settings: Settings,
    /// Display names, when known.
    pub red: Option<String>,
    pub black: Option<String>,
    pub entries: Vec<Entry>,
    /// The instant the record was closed; the game is advanced to it after the last entry.
    pub end_ms: Option<u64>,
}

impl Record {
    /// Replays the record from the start. Fails at the first entry the engine refuses,
    /// naming its index.
    pub fn replay(&self) -> Result<Game, (usize, ActionError)> {
        let mut game = Game::new(self.settings.clone());
        for (i, entry) in self.entries.iter().enumerate() {
            entry.apply_to(&mut game).map_err(|e| (i, e))?;
        }
        if let Some(end) = self.end_ms {
            game.advance(end);
        }
        Ok(game)
    }
}

impl Record {
    /// The game entry by entry, for a replay viewer: one [`Step`] per entry with the
    /// state after it, then, if the record has an `end_ms`, a last step for the advance
    /// to it (`entry` is an `Advance` at `end_ms`, `index == entries.len()`). Stops after
    /// the first refused entry, which it yields as an error with its index.
    pub fn steps(&self) -> Steps<'_> {
        Steps {
            record: self,
            game: Some(Game::new(self.settings.clone())),
            index: 0,
        }
    }
}

/// One step of [`Record::steps`].
#[derive(Clone, Debug)]
pub struct Step {
    /// Index of the entry in `Record::entries` (`entries.len()` for the closing advance).
    pub index: usize,
    pub entry: Entry,
    /// What the entry caused.
    pub events: Vec<Event>,
    /// The game after the entry.
    pub game: Game,
}

/// Iterator of [`Record::steps`].
#[derive(Clone, Debug)]
pub struct Steps<'a> {
    record: &'a Record,
    game: Option<Game>,
    index: usize,
}

impl Iterator for Steps<'_> {
    type Item = Result<Step, (usize, ActionError)>;

    fn next(&mut self) -> Option<Self::Item> {
        let game = self.game.as_mut()?;
        let index = self.index;
        let entry = match self.record.entries.get(index) {
            Some(e) => e.clone(),
            None => match self.record.end_ms {
                Some(end) if index == self.record.entries.len() => Entry {
                    at_ms: end,
                    kind: EntryKind::Advance,
                },
                _ => {
                    self.game = None;
                    return None;
                }
            },
        };
        self.index += 1;
        match entry.apply_to(game) {
            Ok(events) => Some(Ok(Step {
                index,
                entry,
                events,
                game: game.clone(),
            })),
            Err(e) => {
                self.game = None;
                Some(Err((index, e)))
            }
        }
    }
}

#[cfg(test)]
mod text_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// A live game keeps every entry it made in memory (for reconnections and its record):
    /// their size is per-game memory at scale (BENCHMARKS.md, issue 14).
    #[test]
    fn an_entry_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
    }

    #[test]
    fn a_lag_past_32_bits_is_kept_as_the_largest_figure() {
        assert_eq!(entry_ms(150), 150);
        assert_eq!(entry_ms(u64::from(u32::MAX)), u32::MAX);
        assert_eq!(entry_ms(u64::from(u32::MAX) + 1), u32::MAX);
        assert_eq!(entry_ms(u64::MAX), u32::MAX);
    }
}
