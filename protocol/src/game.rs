//! The rules engine: a TAMSK game that changes only through [`Game::apply`] and
//! [`Game::advance`].
//!
//! Sans-IO: time is a value passed in (milliseconds since the game started). Every call
//! first brings the game up to that instant (hourglass deaths, 15-second expiries, drop
//! graces, passes, ...) and reports what happened as [`Event`]s, in order, each stamped
//! with the instant it happened at. [`Game::next_deadline`] tells a server when to wake up
//! next, so that nothing is announced late. Advancing in one step or in many gives the
//! same state and the same events.
//!
//! The decisions this engine takes where the rulebook leaves room are in `docs/RULES.md`.
//!
//! This file holds the game's state and reading it; the pieces, actions, events and the
//! end are in submodules, as are applying an action, judging it, and time.

use serde::{Deserialize, Serialize};

use crate::board::{Square, SQUARES};
use crate::lag::Credit;
use crate::settings::{FullSocket, Level, Settings, Setup};

mod action;
mod apply;
mod bounds;
mod end;
mod event;
mod legal;
mod pieces;
mod time;

pub use action::{Action, ActionError};
pub use end::{AbortReason, Decision, EndReason, LineupEntry, Outcome, Rings, Status, Tiebreak};
pub use event::{DropKind, Event, ForfeitReason, PassReason};
pub use pieces::{Glass, Player, Sand};
pub use time::Due;

/// Rings each player starts with.
pub const RINGS_EACH: u8 = 32;

/// A player whose turns lapse this many times in a row ends the game (`docs/RULES.md`,
/// decision 15).
pub const IDLE_TURNS: u8 = 3;

/// Without a `turn_limit_ms`, a turn lapses after this many times `abort_ms` (the idle
/// bound, decision 15).
pub const IDLE_BOUND_ABORTS: u64 = 10;

/// One hourglass's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GlassState {
    pub glass: Glass,
    /// `None` while beside the board (placement set-up).
    pub square: Option<Square>,
    pub sand: Sand,
    /// Flipped at least once (Levels 2-3). An unstarted hourglass never dies.
    pub started: bool,
    pub dead_at_ms: Option<u64>,
}

impl GlassState {
    pub fn is_dead(&self) -> bool {
        self.dead_at_ms.is_some()
    }
    /// Sand left in the top at `now`.
    pub fn remaining(&self, now: u64) -> u64 {
        if self.started && !self.is_dead() {
            self.sand.remaining(now)
        } else {
            0
        }
    }
    /// The instant a running hourglass will die, if it runs.
    pub fn death_at(&self) -> Option<u64> {
        (self.started && !self.is_dead()).then(|| self.sand.empties_at())
    }
}

/// The hourglass a player holds: picked up on `from` at `since_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Held {
    pub player: Player,
    pub glass: Glass,
    pub from: Square,
    pub since_ms: u64,
    /// Level 3: the 15-second timer ran out on this move; it must be released by this
    /// instant or it stays where it was.
    pub late_until_ms: Option<u64>,
}

/// What may still be dropped after a release on `square`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Window {
    pub mover: Player,
    pub square: Square,
    pub opened_ms: u64,
    /// The mover's own drop is still open.
    pub drop_open: bool,
    /// The mover's penalty ring is still open.
    pub penalty_open: bool,
    pub dropped: bool,
    /// The opponent may claim (once open) unless the mover drops.
    pub claim_allowed: bool,
    /// The mover's lag compensation when the window opened: his grace ends (and the
    /// opponent's claim opens) this much after `drop_grace_ms`.
    #[serde(default)]
    pub comp_ms: u64,
}

/// The 15-second timer.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Neutral {
    pub sand: Sand,
    /// The player whose turn it judges, and that turn's number; `None` once it no longer
    /// judges anyone.
    pub target: Option<(Player, u32)>,
}

/// A repetition key: per square occupant player and rings, holders, next player.
type PositionKey = [u8; SQUARES + 3];

/// A TAMSK game. Changes only through [`Game::apply`], [`Game::advance`] and the
/// server-side endings ([`Game::abandon`], [`Game::abort`], [`Game::end_both_absent`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Game {
    settings: Settings,
    now_ms: u64,
    status: Status,
    #[serde(with = "big_array")]
    #[schemars(with = "Vec<u8>")]
    rings: [u8; SQUARES],
    #[serde(with = "big_array")]
    #[schemars(with = "Vec<Option<Glass>>")]
    occupant: [Option<Glass>; SQUARES],
    holders: [u8; 2],
    glasses: [GlassState; 6],
    turn: Player,
    /// Counts turns; the 15-second timer judges one turn by its number.
    turn_no: u32,
    turn_started_ms: u64,
    /// The move in progress of the player on turn.
    held: Option<Held>,
    /// A move still in hand after the 15-second timer ran out on it (Level 3).
    late: Option<Held>,
    /// Open drop windows, by mover.
    windows: [Option<Window>; 2],
    penalty_owed: [bool; 2],
    neutral: Neutral,
    /// Completed moves per player.
    moves_made: [u32; 2],
    /// Bitmask of hourglasses moved in each player's first three moves.
    opening_used: [u8; 2],
    first_turn_ms: [Option<u64>; 2],
    /// Game clock left per player at the start of his current turn.
    clock_ms: [u64; 2],
    /// Neither player can move: the game ends once the last drop windows close.
    ending: bool,
    /// The end (or abort) has been reported as an event.
    end_announced: bool,
    /// Positions since the last ring was dropped, with how often each occurred.
    #[schemars(with = "Vec<(Vec<u8>, u8)>")]
    #[serde(with = "position_list")]
    positions: Vec<(PositionKey, u8)>,
    /// Lag compensation per player.
    #[serde(default)]
    credit: [Credit; 2],
    /// Turns of each player that lapsed in a row (forfeited), reset by his next move.
    #[serde(default)]
    lapsed: [u8; 2],
}

/// Serde for arrays longer than serde's built-in 32.
mod big_array {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize, const N: usize>(
        a: &[T; N],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        a.as_slice().serialize(s)
    }

    pub fn deserialize<'de, D, T, const N: usize>(d: D) -> Result<[T; N], D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        let v = Vec::<T>::deserialize(d)?;
        let len = v.len();
        v.try_into()
            .map_err(|_| serde::de::Error::custom(format!("expected {N} entries, found {len}")))
    }
}

mod position_list {
    use super::PositionKey;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(list: &[(PositionKey, u8)], s: S) -> Result<S::Ok, S::Error> {
        list.iter()
            .map(|(k, n)| (k.to_vec(), *n))
            .collect::<Vec<_>>()
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(PositionKey, u8)>, D::Error> {
        let raw = Vec::<(Vec<u8>, u8)>::deserialize(d)?;
        raw.into_iter()
            .map(|(k, n)| {
                PositionKey::try_from(k.as_slice())
                    .map(|key| (key, n))
                    .map_err(|_| serde::de::Error::custom("bad position key"))
            })
            .collect()
    }
}

impl Game {
    /// A new game at instant 0, Red on turn.
    pub fn new(settings: Settings) -> Game {
        let placement = settings.setup == Setup::Placement;
        let mut occupant = [None; SQUARES];
        let glasses = Glass::ALL.map(|glass| {
            let square = (!placement).then(|| glass.start_square());
            if let Some(sq) = square {
                occupant[sq.index()] = Some(glass);
            }
            GlassState {
                glass,
                square,
                sand: Sand::default(),
                started: false,
                dead_at_ms: None,
            }
        });
        let clock = settings.game_clock.map_or(0, |c| c.main_ms);
        let mut game = Game {
            settings,
            now_ms: 0,
            status: Status::Playing,
            rings: [0; SQUARES],
            occupant,
            holders: [RINGS_EACH; 2],
            glasses,
            turn: Player::Red,
            turn_no: 0,
            turn_started_ms: 0,
            held: None,
            late: None,
            windows: [None; 2],
            penalty_owed: [false; 2],
            neutral: Neutral::default(),
            moves_made: [0; 2],
            opening_used: [0; 2],
            first_turn_ms: [Some(0), None],
            clock_ms: [clock; 2],
            ending: false,
            end_announced: false,
            positions: Vec::new(),
            credit: [Credit::default(); 2],
            lapsed: [0; 2],
        };
        game.count_position(Player::Red);
        game
    }

    // ----- reading the state -----

    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// The instant the game has been brought up to.
    pub fn now(&self) -> u64 {
        self.now_ms
    }
    pub fn status(&self) -> &Status {
        &self.status
    }
    pub fn is_playing(&self) -> bool {
        matches!(self.status, Status::Playing)
    }
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.status {
            Status::Finished { outcome } => Some(outcome),
            _ => None,
        }
    }
    /// The player on turn (next in turn order once the game is over).
    pub fn turn(&self) -> Player {
        self.turn
    }
    pub fn turn_started_ms(&self) -> u64 {
        self.turn_started_ms
    }
    pub fn rings_left(&self, player: Player) -> u8 {
        self.holders[player.index()]
    }
    pub fn rings(&self) -> Rings {
        Rings {
            red: self.holders[0],
            black: self.holders[1],
        }
    }
    pub fn rings_on(&self, square: Square) -> u8 {
        self.rings[square.index()]
    }
    pub fn is_full(&self, square: Square) -> bool {
        self.rings[square.index()] >= square.capacity()
    }
    pub fn occupant(&self, square: Square) -> Option<Glass> {
        self.occupant[square.index()]
    }
    pub fn glass(&self, glass: Glass) -> &GlassState {
        &self.glasses[glass.index()]
    }
    pub fn glasses(&self) -> &[GlassState; 6] {
        &self.glasses
    }
    pub fn neutral(&self) -> &Neutral {
        &self.neutral
    }
    /// The player whose turn the 15-second timer is judging, if any: a flip judges the turn
    /// it was made in, so once that turn is over the sand runs out judging nobody.
    pub fn neutral_judges(&self) -> Option<Player> {
        let (player, turn_no) = self.neutral.target?;
        let judging =
            self.is_playing() && !self.ending && player == self.turn && turn_no == self.turn_no;
        judging.then_some(player)
    }

    /// The move in progress of the player on turn.
    pub fn held(&self) -> Option<&Held> {
        self.held.as_ref()
    }
    /// A move still in hand after the 15-second timer ran out on it.
    pub fn late(&self) -> Option<&Held> {
        self.late.as_ref()
    }
    /// The open drop window after `mover`'s last release, if any.
    pub fn window(&self, mover: Player) -> Option<&Window> {
        self.windows[mover.index()].as_ref()
    }
    pub fn penalty_owed(&self, player: Player) -> bool {
        self.penalty_owed[player.index()]
    }
    /// Completed moves of `player`.
    pub fn moves_made(&self, player: Player) -> u32 {
        self.moves_made[player.index()]
    }
    /// Completed moves of both players.
    pub fn move_count(&self) -> u32 {
        self.moves_made[0] + self.moves_made[1]
    }
    /// Game clock left for `player` at `now`, if the game has a clock.
    pub fn clock_left(&self, player: Player, now: u64) -> Option<u64> {
        self.settings.game_clock?;
        let base = self.clock_ms[player.index()];
        Some(if self.clock_runs_for(player) {
            base.saturating_sub(now.saturating_sub(self.turn_started_ms))
        } else {
            base
        })
    }
    /// Neither player can move; the game ends when the last drop windows close.
    pub fn is_ending(&self) -> bool {
        self.ending
    }
    /// The instant from which the opponent may claim on `window`.
    pub fn claim_opens_at(&self, window: &Window) -> u64 {
        if self.settings.level.timed() {
            window.opened_ms + self.settings.drop_grace_ms + window.comp_ms
        } else {
            window.opened_ms
        }
    }

    /// Whether `player` has a possible move: a live hourglass with an adjacent socket that
    /// is unoccupied and not full (or, while placing, any such socket).
    pub fn can_move(&self, player: Player) -> bool {
        if self.has_unplaced(player) {
            return Square::ALL.iter().any(|&s| self.free(s));
        }
        player.glasses().iter().any(|&g| self.glass_can_move(g))
    }

    fn pass_reason(&self, player: Player) -> PassReason {
        if self.has_unplaced(player) {
            PassReason::NoFreeSocket
        } else if player
            .glasses()
            .iter()
            .all(|g| self.glasses[g.index()].is_dead())
        {
            PassReason::AllDead
        } else {
            PassReason::Blocked
        }
    }

    fn glass_can_move(&self, glass: Glass) -> bool {
        let state = &self.glasses[glass.index()];
        match state.square {
            Some(sq) if !state.is_dead() => sq.neighbours().iter().any(|&n| self.free(n)),
            _ => false,
        }
    }

    /// Unoccupied and not full.
    fn free(&self, square: Square) -> bool {
        self.occupant[square.index()].is_none() && !self.is_full(square)
    }

    fn has_unplaced(&self, player: Player) -> bool {
        player
            .glasses()
            .iter()
            .any(|g| self.glasses[g.index()].square.is_none())
    }

    fn clock_runs_for(&self, player: Player) -> bool {
        self.settings.game_clock.is_some()
            && self.is_playing()
            && !self.ending
            && self.turn == player
    }

    fn holds(&self, player: Player) -> Option<&Held> {
        self.held
            .as_ref()
            .filter(|h| h.player == player)
            .or(self.late.as_ref().filter(|h| h.player == player))
    }
}

#[cfg(test)]
mod tests;
