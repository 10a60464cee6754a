//! Game records: what happened in a game, entry by entry with its instant, so that the
//! engine can replay it exactly.
//!
//! The same [`Entry`] serves three places: the server's game task applies entries as they
//! come, clients apply them to their own replica of the game, and a [`Record`] is the
//! list of them.

use serde::{Deserialize, Serialize};

use crate::game::{AbortReason, Action, ActionError, Event, Game, Player};
use crate::settings::Settings;

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
    /// A player's accepted action.
    Act { player: Player, action: Action },
    /// Time passed: the events due up to this instant (deaths, expiries, passes, ...).
    Advance,
    /// The server ended the game for a player who left and did not come back.
    Abandon { player: Player },
    /// The server called the game off (shutdown).
    Abort { reason: AbortReason },
}

impl Entry {
    /// Applies this entry to `game`, returning the events it caused.
    pub fn apply_to(&self, game: &mut Game) -> Result<Vec<Event>, ActionError> {
        match &self.kind {
            EntryKind::Act { player, action } => game.apply(*player, *action, self.at_ms),
            EntryKind::Advance => Ok(game.advance(self.at_ms)),
            EntryKind::Abandon { player } => Ok(game.abandon(*player, self.at_ms)),
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
