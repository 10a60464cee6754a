//! What the engine reports: every [`Event`], stamped with its instant, and the reasons
//! it carries (how a ring was dropped, why a turn was forfeited or passed).

use super::*;

/// How a ring came to be dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DropKind {
    /// The mover's ring on his destination.
    Regular,
    /// The opponent's ring where the mover did not drop.
    Claim,
    /// The extra ring of a penalty.
    Penalty,
}

/// Why a turn was forfeited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitReason {
    /// Level 3: the 15-second timer ran out before the move was started.
    NeutralTimer,
    /// The turn limit (or, without one, the idle bound) ran out before the move was
    /// released: a glass in hand stays where it was, its flip stands.
    TurnLimit,
    /// Level 3: the hourglass held when the 15-second timer ran out was not released
    /// within the late-release bound: it stays where it was, its flip stands.
    LateRelease,
}

/// Why a player cannot move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PassReason {
    /// Every live hourglass is boxed in by hourglasses and full sockets.
    Blocked,
    /// All his hourglasses are dead.
    AllDead,
    /// Placement set-up: no socket is free to place on.
    NoFreeSocket,
}

impl PassReason {
    pub fn describe(self) -> &'static str {
        match self {
            PassReason::Blocked => {
                "every live hourglass is boxed in by hourglasses and full sockets"
            }
            PassReason::AllDead => "all his hourglasses are dead",
            PassReason::NoFreeSocket => "no socket is free to place an hourglass on",
        }
    }
}

/// Something that happened, at instant `at` (ms of game time).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// `player` picked up `glass` on `from`; `sand` is its sand after the flip.
    MoveStarted {
        at: u64,
        player: Player,
        glass: Glass,
        from: Square,
        sand: Sand,
    },
    /// The hourglass in hand was put down on `to`. `late`: after the 15-second timer ran
    /// out on it (the turn had already passed). The opponent's turn starts now unless late.
    MoveReleased {
        at: u64,
        player: Player,
        glass: Glass,
        from: Square,
        to: Square,
        /// Omitted when `false`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        late: bool,
    },
    /// Placement set-up: `glass` was put on `to` with a full top (Levels 2-3).
    Placed {
        at: u64,
        player: Player,
        glass: Glass,
        to: Square,
        sand: Sand,
    },
    /// A ring was dropped on `square`; `left` is what `player` has left.
    RingDropped {
        at: u64,
        player: Player,
        square: Square,
        kind: DropKind,
        left: u8,
    },
    /// The mover's drop grace ran out without his drop; the opponent may now claim if the
    /// rules allow it.
    DropGraceEnded {
        at: u64,
        mover: Player,
        square: Square,
    },
    /// `by` flipped the 15-second timer against `target`'s turn.
    NeutralFlipped {
        at: u64,
        by: Player,
        target: Player,
        sand: Sand,
    },
    /// The 15-second timer ran out on `target`'s turn. `started`: he had started his move
    /// (he may still release it within the late-release allowance).
    NeutralExpired {
        at: u64,
        target: Player,
        started: bool,
    },
    /// `player` earned the penalty ring for his next move.
    PenaltyEarned {
        at: u64,
        player: Player,
    },
    /// `player`'s turn was forfeited; the other player is on turn.
    TurnForfeited {
        at: u64,
        player: Player,
        reason: ForfeitReason,
    },
    /// The hourglass held after the 15-second timer ran out was not released in time: it
    /// stays on `square`, its flip stands.
    LateReleaseMissed {
        at: u64,
        player: Player,
        glass: Glass,
        square: Square,
    },
    /// `glass` ran out of sand on `square`. `in_hand`: it was being moved; that move is void.
    HourglassDied {
        at: u64,
        glass: Glass,
        square: Square,
        /// Omitted when `false`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        in_hand: bool,
    },
    /// `player` cannot move and is passed (no penalty).
    Passed {
        at: u64,
        player: Player,
        reason: PassReason,
    },
    /// `player`'s turn starts (after a release, a pass or a forfeit).
    TurnStarted {
        at: u64,
        player: Player,
    },
    GameEnded {
        at: u64,
        outcome: Outcome,
    },
    GameAborted {
        at: u64,
        reason: AbortReason,
    },
    /// `player`'s action beat a deadline that judged him only thanks to his lag
    /// compensation: `comp_ms` of it was used (see [`crate::lag`]).
    LagCompensated {
        at: u64,
        player: Player,
        comp_ms: u64,
    },
}

impl Event {
    pub fn at(&self) -> u64 {
        match self {
            Event::MoveStarted { at, .. }
            | Event::MoveReleased { at, .. }
            | Event::Placed { at, .. }
            | Event::RingDropped { at, .. }
            | Event::DropGraceEnded { at, .. }
            | Event::NeutralFlipped { at, .. }
            | Event::NeutralExpired { at, .. }
            | Event::PenaltyEarned { at, .. }
            | Event::TurnForfeited { at, .. }
            | Event::LateReleaseMissed { at, .. }
            | Event::HourglassDied { at, .. }
            | Event::Passed { at, .. }
            | Event::TurnStarted { at, .. }
            | Event::GameEnded { at, .. }
            | Event::GameAborted { at, .. }
            | Event::LagCompensated { at, .. } => *at,
        }
    }
}
