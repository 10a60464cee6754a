//! What a snapshot shows of a game: a documented, stable view built from the engine's
//! public reading methods, never its private struct, so that the engine may change its
//! insides without breaking clients. Every field is described in `docs/PROTOCOL.md`
//! (section Snapshots).
//!
//! A client that keeps an exact replica (to check moves locally and apply later entries)
//! rebuilds it with [`GameView::replica`]: the view carries the game's entries so far,
//! which the engine replays from the settings.

use serde::{Deserialize, Serialize};

use crate::board::Square;
use crate::game::{ActionError, Game, Glass, GlassState, Neutral, Player, Status};
use crate::record::Entry;
use crate::settings::Settings;

/// A value per player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PerPlayer<T> {
    pub red: T,
    pub black: T,
}

impl<T> PerPlayer<T> {
    fn of(f: impl Fn(Player) -> T) -> PerPlayer<T> {
        PerPlayer {
            red: f(Player::Red),
            black: f(Player::Black),
        }
    }
    pub fn get(&self, player: Player) -> &T {
        match player {
            Player::Red => &self.red,
            Player::Black => &self.black,
        }
    }
}

/// One socket of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SocketView {
    pub square: Square,
    /// Rings on it.
    pub rings: u8,
    /// Most rings it takes.
    pub capacity: u8,
    /// The hourglass standing on it.
    pub glass: Option<Glass>,
}

/// An hourglass in hand: picked up from `from` at `since_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldView {
    pub player: Player,
    pub glass: Glass,
    pub from: Square,
    pub since_ms: u64,
    /// Level 3, after the 15-second timer ran out on this move: it must be released by
    /// this instant or it stays where it was.
    pub late_until_ms: Option<u64>,
}

/// An open drop window after `mover`'s release on `square`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowView {
    pub mover: Player,
    pub square: Square,
    pub opened_ms: u64,
    /// The mover may still drop his ring.
    pub drop_open: bool,
    /// The mover may still drop a penalty ring he is owed.
    pub penalty_open: bool,
    /// The mover dropped on it.
    pub dropped: bool,
    /// The opponent may claim from `claim_opens_ms` unless the mover drops.
    pub claim_allowed: bool,
    pub claim_opens_ms: u64,
}

/// A game at instant `at_ms`, as a snapshot shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GameView {
    pub settings: Settings,
    /// The game time the engine has been brought up to.
    pub at_ms: u64,
    /// `{"state":"playing"}`, `{"state":"finished","outcome":{...}}` or
    /// `{"state":"aborted","reason":{...},"at_ms":...}`.
    pub status: Status,
    /// Neither player can move: the game ends once the last drop windows close.
    pub ending: bool,
    /// Every socket, `a1` to `g4` in board order.
    pub board: Vec<SocketView>,
    /// Rings left in each holder.
    pub holders: PerPlayer<u8>,
    /// The six hourglasses with their sand (as in `sand`).
    pub glasses: Vec<GlassState>,
    /// The player on turn (next in turn order once the game is over).
    pub turn: Player,
    pub turn_started_ms: u64,
    /// The move in progress of the player on turn.
    pub held: Option<HeldView>,
    /// A move still in hand after the 15-second timer ran out on it (Level 3).
    pub late: Option<HeldView>,
    /// Open drop windows (at most one per mover).
    pub windows: Vec<WindowView>,
    /// A penalty ring is owed to the player (Level 3).
    pub penalty_owed: PerPlayer<bool>,
    /// The 15-second timer, as in `sand` (`target` `null` when it judges nobody).
    pub neutral: Neutral,
    /// Game clock left per player at `at_ms` (`null` without a game clock).
    pub clocks: Option<PerPlayer<u64>>,
    /// Completed moves per player.
    pub moves_made: PerPlayer<u32>,
    /// Each player's lag compensation now, `min(lag, quota)` (docs/RULES.md, decision
    /// 16): every deadline that judges him (the 15-second timer on his turn, his
    /// `late_until_ms`, his turn limit or idle bound, his game clock, his first-move
    /// abort) comes this much after its nominal instant. A window's `claim_opens_ms`
    /// has the mover's already (fixed when it opened).
    pub compensation_ms: PerPlayer<u64>,
    /// Everything that happened so far, in order (as in `play` events): replayed from
    /// the settings, it gives the engine's state exactly ([`GameView::replica`]).
    pub entries: Vec<Entry>,
}

/// The entries of a view do not replay: entry `index` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("entry {index} of the snapshot does not replay: {error}")]
pub struct ReplayError {
    pub index: usize,
    pub error: ActionError,
}

impl GameView {
    /// The view of `game`, whose entries so far are `entries`.
    pub fn of(game: &Game, entries: &[Entry]) -> GameView {
        let at = game.now();
        let held = |h: &crate::game::Held| HeldView {
            player: h.player,
            glass: h.glass,
            from: h.from,
            since_ms: h.since_ms,
            late_until_ms: h.late_until_ms,
        };
        let mut neutral = *game.neutral();
        if game.neutral_judges().is_none() {
            neutral.target = None;
        }
        GameView {
            settings: game.settings().clone(),
            at_ms: at,
            status: game.status().clone(),
            ending: game.is_ending(),
            board: Square::ALL
                .iter()
                .map(|&square| SocketView {
                    square,
                    rings: game.rings_on(square),
                    capacity: square.capacity(),
                    glass: game.occupant(square),
                })
                .collect(),
            holders: PerPlayer::of(|p| game.rings_left(p)),
            glasses: game.glasses().to_vec(),
            turn: game.turn(),
            turn_started_ms: game.turn_started_ms(),
            held: game.held().map(held),
            late: game.late().map(held),
            windows: Player::BOTH
                .iter()
                .filter_map(|&p| game.window(p))
                .map(|w| WindowView {
                    mover: w.mover,
                    square: w.square,
                    opened_ms: w.opened_ms,
                    drop_open: w.drop_open,
                    penalty_open: w.penalty_open,
                    dropped: w.dropped,
                    claim_allowed: w.claim_allowed,
                    claim_opens_ms: game.claim_opens_at(w),
                })
                .collect(),
            penalty_owed: PerPlayer::of(|p| game.penalty_owed(p)),
            neutral,
            clocks: game
                .settings()
                .game_clock
                .map(|_| PerPlayer::of(|p| game.clock_left(p, at).expect("the game has a clock"))),
            moves_made: PerPlayer::of(|p| game.moves_made(p)),
            compensation_ms: PerPlayer::of(|p| game.credit(p).available()),
            entries: entries.to_vec(),
        }
    }

    /// Completed moves of both players.
    pub fn move_count(&self) -> u32 {
        self.moves_made.red + self.moves_made.black
    }

    /// The engine's state at `at_ms`: the entries replayed from the settings. Equal to the
    /// server's own engine when the view was taken.
    pub fn replica(&self) -> Result<Game, ReplayError> {
        let mut game = Game::new(self.settings.clone());
        for (index, entry) in self.entries.iter().enumerate() {
            entry
                .apply_to(&mut game)
                .map_err(|error| ReplayError { index, error })?;
        }
        if game.now() < self.at_ms {
            // Time passed without an event (the server brought its engine up to the
            // instant of the snapshot): nothing happens in it, by construction.
            game.advance(self.at_ms);
        }
        Ok(game)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Action;
    use crate::record::EntryKind;
    use crate::settings::Level;

    /// Plays `n` legal moves (the first legal action each time) with time passing, and
    /// returns the game with its entries.
    fn played(settings: Settings, n: usize) -> (Game, Vec<Entry>) {
        let mut game = Game::new(settings);
        let mut entries = Vec::new();
        let mut t = 0;
        for _ in 0..n {
            if !game.is_playing() {
                break;
            }
            t += 150;
            let events = game.advance(t);
            if !events.is_empty() {
                entries.push(Entry {
                    at_ms: t,
                    kind: EntryKind::Advance,
                });
            }
            let player = game.turn();
            let Some(action) = game
                .legal_actions(player)
                .into_iter()
                .find(|a| matches!(a, Action::Move { drop: true, .. }))
            else {
                break;
            };
            game.apply(player, action, t).expect("a legal action");
            entries.push(Entry {
                at_ms: t,
                kind: EntryKind::act(player, action),
            });
        }
        // Time passes without an event.
        game.advance(t + 1);
        (game, entries)
    }

    #[test]
    fn the_replica_of_a_view_is_the_engine() {
        for level in [Level::One, Level::Two, Level::Three] {
            let (game, entries) = played(Settings::blitz(level), 12);
            let view = GameView::of(&game, &entries);
            assert_eq!(view.replica().unwrap(), game, "level {level:?}");
            assert_eq!(view.board.len(), 37);
            assert_eq!(
                view.holders.red as u32
                    + view.holders.black as u32
                    + view.board.iter().map(|s| s.rings as u32).sum::<u32>(),
                64
            );
            let back: GameView =
                serde_json::from_str(&serde_json::to_string(&view).unwrap()).unwrap();
            assert_eq!(back, view);
        }
    }

    #[test]
    fn a_view_that_does_not_replay_says_where() {
        let (game, mut entries) = played(Settings::blitz(Level::One), 4);
        // Black has nothing to claim at the start: the engine refuses it.
        entries.insert(
            0,
            Entry {
                at_ms: 0,
                kind: EntryKind::act(Player::Black, Action::Claim),
            },
        );
        let view = GameView::of(&game, &entries);
        assert_eq!(view.replica().unwrap_err().index, 0);
    }
}
