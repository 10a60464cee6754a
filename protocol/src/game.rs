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

use serde::{Deserialize, Serialize};

use crate::board::{Square, SQUARES};
use crate::lag::Credit;
use crate::settings::{FullSocket, Level, Settings, Setup};

/// Rings each player starts with.
pub const RINGS_EACH: u8 = 32;

/// A player whose turns lapse this many times in a row ends the game (`docs/RULES.md`,
/// decision 15).
pub const IDLE_TURNS: u8 = 3;

/// Without a `turn_limit_ms`, a turn lapses after this many times `abort_ms` (the idle
/// bound, decision 15).
pub const IDLE_BOUND_ABORTS: u64 = 10;

/// One of the two players.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    Red,
    Black,
}

impl Player {
    pub const BOTH: [Player; 2] = [Player::Red, Player::Black];

    pub fn other(self) -> Player {
        match self {
            Player::Red => Player::Black,
            Player::Black => Player::Red,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Player::Red => "red",
            Player::Black => "black",
        }
    }
    /// The three hourglasses of this player.
    pub fn glasses(self) -> [Glass; 3] {
        let base = self.index() as u8 * 3;
        [Glass(base), Glass(base + 1), Glass(base + 2)]
    }
}

impl std::fmt::Display for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Player::Red => "Red",
            Player::Black => "Black",
        })
    }
}

impl std::str::FromStr for Player {
    type Err = String;
    fn from_str(s: &str) -> Result<Player, String> {
        match s.to_ascii_lowercase().as_str() {
            "red" => Ok(Player::Red),
            "black" => Ok(Player::Black),
            _ => Err(format!("'{s}' is not a player: expected red or black")),
        }
    }
}

/// One of the six hourglasses. Red's are labelled X, Y, Z (starting on d1, g4, a4) and
/// Black's A, B, C (starting on a1, g1, d7), as on the network server's diagram.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Glass(u8);

const LABELS: [char; 6] = ['X', 'Y', 'Z', 'A', 'B', 'C'];
const START_SQUARES: [&str; 6] = ["d1", "g4", "a4", "a1", "g1", "d7"];

impl Glass {
    pub const ALL: [Glass; 6] = [Glass(0), Glass(1), Glass(2), Glass(3), Glass(4), Glass(5)];

    pub fn owner(self) -> Player {
        if self.0 < 3 {
            Player::Red
        } else {
            Player::Black
        }
    }
    pub fn index(self) -> usize {
        self.0 as usize
    }
    pub fn label(self) -> char {
        LABELS[self.0 as usize]
    }
    pub fn from_label(label: char) -> Option<Glass> {
        let upper = label.to_ascii_uppercase();
        LABELS
            .iter()
            .position(|&l| l == upper)
            .map(|i| Glass(i as u8))
    }
    /// Where this hourglass stands in the standard set-up.
    pub fn start_square(self) -> Square {
        START_SQUARES[self.0 as usize]
            .parse()
            .expect("valid start square")
    }
    fn bit(self) -> u8 {
        1 << self.0
    }
}

impl std::fmt::Display for Glass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.label())
    }
}

impl std::fmt::Debug for Glass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.label())
    }
}

impl Serialize for Glass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_char(self.label())
    }
}

impl<'de> Deserialize<'de> for Glass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Glass, D::Error> {
        let c = char::deserialize(d)?;
        Glass::from_label(c).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "'{c}' is not an hourglass: expected X, Y, Z, A, B or C"
            ))
        })
    }
}

impl schemars::JsonSchema for Glass {
    fn schema_name() -> String {
        "Glass".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut schema = <String as schemars::JsonSchema>::json_schema(gen).into_object();
        schema.enum_values = Some(LABELS.iter().map(|c| c.to_string().into()).collect());
        schema.metadata().description =
            Some("An hourglass: Red's X, Y, Z or Black's A, B, C.".into());
        schema.into()
    }
}

/// What a player can do. A client may send a move in two steps (`start`, `release`) or at
/// once (`move`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Pick up (and, Levels 2-3, flip) the hourglass on `from`.
    Start {
        from: Square,
    },
    /// Put the hourglass in hand down on `to`.
    Release {
        to: Square,
    },
    /// Start and release at once; with `drop`, also drop a ring on `to` when the rules allow.
    Move {
        from: Square,
        to: Square,
        #[serde(default)]
        drop: bool,
    },
    /// Placement set-up: put an hourglass from beside the board on `to`.
    Place {
        glass: Glass,
        to: Square,
        #[serde(default)]
        drop: bool,
    },
    /// Drop a ring on the destination of one's last move.
    Drop,
    /// Drop one's own ring on the opponent's destination, where he did not drop.
    Claim,
    /// The penalty ring: one extra ring on any socket that is not full.
    PenaltyDrop {
        at: Square,
    },
    /// Level 3: flip the 15-second timer against the player on turn.
    Flip,
    Resign,
}

/// Sand of an hourglass: `top_ms` in the upper chamber at instant `since_ms`, flowing while
/// positive. Remaining at `t` is `max(0, top_ms - (t - since_ms))`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Sand {
    pub top_ms: u64,
    pub since_ms: u64,
}

impl Sand {
    pub fn remaining(self, now: u64) -> u64 {
        self.top_ms
            .saturating_sub(now.saturating_sub(self.since_ms))
    }
    /// The instant the top empties.
    pub fn empties_at(self) -> u64 {
        self.since_ms + self.top_ms
    }
}

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

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EndReason {
    /// Neither player can move any more.
    NoMoves,
    /// The same position occurred for the third time.
    Repetition,
    /// `player` released an hourglass onto a full socket.
    FullSocket {
        player: Player,
    },
    Resigned {
        player: Player,
    },
    /// `player`'s game clock ran out.
    Clock {
        player: Player,
    },
    /// `player` left and did not come back within the grace.
    Abandoned {
        player: Player,
    },
    /// `player` let his turns lapse [`IDLE_TURNS`] times in a row while the other played.
    Idle {
        player: Player,
    },
    /// Both players let their turns lapse: decided as at the end, on rings.
    BothIdle,
    /// Both players were absent past their reconnection graces: decided as at the end,
    /// on rings.
    BothAbsent,
}

impl EndReason {
    pub fn describe(&self) -> String {
        match self {
            EndReason::NoMoves => "neither player can move".into(),
            EndReason::Repetition => "the same position occurred three times".into(),
            EndReason::FullSocket { player } => format!("{player} moved onto a full socket"),
            EndReason::Resigned { player } => format!("{player} resigned"),
            EndReason::Clock { player } => format!("{player}'s game clock ran out"),
            EndReason::Abandoned { player } => format!("{player} abandoned the game"),
            EndReason::Idle { player } => {
                format!("{player} let {IDLE_TURNS} turns in a row lapse")
            }
            EndReason::BothIdle => "both players let their turns lapse".into(),
            EndReason::BothAbsent => "both players left the game".into(),
        }
    }
}

/// How the winner was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Fewer rings left.
    Rings,
    /// Equal rings, decided by the last living hourglass.
    Tiebreak,
    /// Equal rings (Level 1), or a tiebreak in which every group was mixed.
    Draw,
    /// The game was lost outright (full socket, resignation, clock, abandonment).
    Forfeit,
}

/// One hourglass in the tiebreak line-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineupEntry {
    pub glass: Glass,
    pub player: Player,
    /// Projected death instant for a running hourglass, actual for a dead one.
    pub dies_at_ms: u64,
    pub running: bool,
}

/// The last-living-hourglass tiebreak (rules page, section 6).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tiebreak {
    /// Latest death first.
    pub lineup: Vec<LineupEntry>,
    /// Index in `lineup` of the first entry of the group that decided, if any did.
    pub deciding_index: Option<usize>,
}

/// Rings left in each holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rings {
    pub red: u8,
    pub black: u8,
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Player>,
    pub reason: EndReason,
    pub decision: Decision,
    pub rings: Rings,
    pub tiebreak: Option<Tiebreak>,
    pub ended_at_ms: u64,
}

impl Outcome {
    /// One line in words: "Red wins: neither player can move; 20 rings left to 22".
    pub fn describe(&self) -> String {
        let head = match self.winner {
            Some(p) => format!("{p} wins"),
            None => "Draw".to_string(),
        };
        let how = match self.decision {
            Decision::Rings => format!(
                "fewer rings left ({} to {})",
                self.rings.red.min(self.rings.black),
                self.rings.red.max(self.rings.black)
            ),
            Decision::Tiebreak => {
                format!("equal rings ({}), last living hourglass", self.rings.red)
            }
            Decision::Draw => format!("equal rings ({})", self.rings.red),
            Decision::Forfeit => {
                format!("rings {} red, {} black", self.rings.red, self.rings.black)
            }
        };
        format!("{head}: {}; {how}", self.reason.describe())
    }
}

/// Why a game was called off without a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AbortReason {
    /// `player` did not make his first move in time.
    NoFirstMove { player: Player },
    /// The server shut down before the game ended.
    Shutdown,
    /// Both players were absent past their graces before both had made a first move.
    BothAbsent,
}

/// Where a game stands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    Playing,
    Finished { outcome: Outcome },
    Aborted { reason: AbortReason, at_ms: u64 },
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

/// Why an action was refused. The game is unchanged.
#[derive(
    Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum ActionError {
    #[error("the game is over")]
    GameOver,
    #[error("time went backwards: {now} ms is before the game's {last} ms")]
    TimeWentBackwards { now: u64, last: u64 },
    #[error("it is not {player}'s turn")]
    NotYourTurn { player: Player },
    #[error("neither player can move any more: the game ends when the last drops are made")]
    Ending,
    #[error("no hourglass stands on {square}")]
    NoHourglass { square: Square },
    #[error("the hourglass on {square} belongs to the other player")]
    NotYourHourglass { square: Square },
    #[error("the hourglass on {square} is dead and can never move")]
    HourglassDead { square: Square },
    #[error("the hourglass on {square} has no adjacent free socket")]
    Blocked { square: Square },
    #[error(
        "the first three moves must use three different hourglasses: {glass} has moved already"
    )]
    OpeningRule { glass: Glass },
    #[error("{glass} is already in hand: release it first (touch-move)")]
    AlreadyHolding { glass: Glass },
    #[error("no hourglass is in hand")]
    NotHolding,
    #[error("{to} is not adjacent to {from}")]
    NotAdjacent { from: Square, to: Square },
    #[error("{square} is occupied")]
    Occupied { square: Square },
    #[error("{square} is full")]
    SocketFull { square: Square },
    #[error("placement set-up: hourglasses beside the board must be placed first")]
    MustPlace,
    #[error("this game has no hourglasses to place")]
    NothingToPlace,
    #[error("{glass} is not {player}'s")]
    NotYourGlass { glass: Glass, player: Player },
    #[error("{glass} is on the board already")]
    AlreadyPlaced { glass: Glass },
    #[error("no rings left")]
    NoRings,
    #[error("no drop is open: the window after your release has closed or you already dropped")]
    NoDrop,
    #[error("nothing to claim: the mover dropped, the window closed, or it is not open yet")]
    NoClaim,
    #[error("no penalty ring is owed on this move")]
    NoPenalty,
    #[error("the 15-second timer is only used from Level 3")]
    NoNeutralTimer,
    #[error("only the player who is not on turn may flip the 15-second timer")]
    FlipOnOwnTurn,
    #[error("the 15-second timer is still running until {until_ms} ms")]
    NeutralRunning { until_ms: u64 },
}

impl ActionError {
    /// A stable code for the wire.
    pub fn code(&self) -> &'static str {
        match self {
            ActionError::GameOver => "game_over",
            ActionError::TimeWentBackwards { .. } => "time_went_backwards",
            ActionError::NotYourTurn { .. } => "not_your_turn",
            ActionError::Ending => "ending",
            ActionError::NoHourglass { .. } => "no_hourglass",
            ActionError::NotYourHourglass { .. } => "not_your_hourglass",
            ActionError::HourglassDead { .. } => "hourglass_dead",
            ActionError::Blocked { .. } => "blocked",
            ActionError::OpeningRule { .. } => "opening_rule",
            ActionError::AlreadyHolding { .. } => "already_holding",
            ActionError::NotHolding => "not_holding",
            ActionError::NotAdjacent { .. } => "not_adjacent",
            ActionError::Occupied { .. } => "occupied",
            ActionError::SocketFull { .. } => "socket_full",
            ActionError::MustPlace => "must_place",
            ActionError::NothingToPlace => "nothing_to_place",
            ActionError::NotYourGlass { .. } => "not_your_glass",
            ActionError::AlreadyPlaced { .. } => "already_placed",
            ActionError::NoRings => "no_rings",
            ActionError::NoDrop => "no_drop",
            ActionError::NoClaim => "no_claim",
            ActionError::NoPenalty => "no_penalty",
            ActionError::NoNeutralTimer => "no_neutral_timer",
            ActionError::FlipOnOwnTurn => "flip_on_own_turn",
            ActionError::NeutralRunning { .. } => "neutral_running",
        }
    }
}

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

/// A timed thing that is due, in the order they are handled at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Due {
    /// This hourglass runs out.
    Death(Glass),
    /// The 15-second timer runs out on the player on turn.
    NeutralExpiry,
    /// A glass taken up when the 15-second timer ran out must be put down by then.
    LateRelease,
    /// This mover's drop grace ends (and his opponent's claim opens).
    DropGrace(Player),
    /// While neither player can move: this mover's window closes.
    WindowClose(Player),
    /// This player has not made his first move: the game is aborted.
    Abort(Player),
    /// The turn limit (or the idle bound) of the player on turn.
    TurnLimit,
    /// The game clock of the player on turn.
    Clock,
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

    // ----- actions -----

    /// Brings the game up to `now`, then applies `player`'s action. Returns everything that
    /// happened, in order (what was due by `now` first), or why the action was refused. A
    /// refused action changes nothing, not even the game's instant: what was due by `now`
    /// is still reported by the next call.
    pub fn apply(
        &mut self,
        player: Player,
        action: Action,
        now: u64,
    ) -> Result<Vec<Event>, ActionError> {
        let mut events = Vec::new();
        self.apply_into(player, action, now, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`] into a caller's buffer. On an error, nothing is added to `events`.
    pub fn apply_into(
        &mut self,
        player: Player,
        action: Action,
        now: u64,
        events: &mut Vec<Event>,
    ) -> Result<(), ActionError> {
        if now < self.now_ms {
            return Err(ActionError::TimeWentBackwards {
                now,
                last: self.now_ms,
            });
        }
        // Judge the action as the game will be at `now`, without changing anything yet.
        if self.next_deadline().is_some_and(|t| t <= now) {
            // Something is due first: judge on a copy brought up to `now` (rare on a
            // server, which advances at every deadline).
            let mut ahead = self.clone();
            ahead.advance_into(now, &mut Vec::new());
            ahead.check(player, action)?;
        } else {
            let last = self.now_ms;
            self.now_ms = now;
            if let Err(error) = self.check(player, action) {
                self.now_ms = last;
                return Err(error);
            }
        }
        self.advance_into(now, events);
        let compensating = self.compensating(player, now);
        self.perform(player, action, events);
        // Anything the action made due at this very instant (an hourglass flipped with a
        // full top dies at once), then passes.
        self.settle(events);
        self.credit_action(player, action, &compensating, events);
        self.advance_into(now, events);
        Ok(())
    }

    /// Charges `player` the compensation his action used: the deadlines judging him that
    /// had nominally passed and that the action did away with. A completed move earns a
    /// gain.
    fn credit_action(
        &mut self,
        player: Player,
        action: Action,
        compensating: &[(u64, Due)],
        events: &mut Vec<Event>,
    ) {
        let now = self.now_ms;
        let pending = if compensating.is_empty() {
            Vec::new()
        } else {
            self.compensating(player, now)
        };
        let needed = compensating
            .iter()
            .filter(|d| !pending.contains(d))
            .map(|&(t, _)| now + 1 - t)
            .max();
        let credit = &mut self.credit[player.index()];
        if let Some(needed) = needed {
            let comp_ms = credit.charge(needed);
            if let Some(&(ran_out, _)) = compensating.iter().find(|d| d.1 == Due::Clock) {
                // The clock was charged the whole turn (down to zero): what is left is what
                // the compensation bought beyond its nominal end.
                self.clock_ms[player.index()] += (ran_out + comp_ms).saturating_sub(now);
            }
            events.push(Event::LagCompensated {
                at: now,
                player,
                comp_ms,
            });
        }
        if matches!(
            action,
            Action::Move { .. } | Action::Release { .. } | Action::Place { .. }
        ) {
            self.credit[player.index()].gain();
        }
    }

    /// Refuses `action` with the precise reason, or accepts it. Reads only.
    pub fn check(&self, player: Player, action: Action) -> Result<(), ActionError> {
        if !self.is_playing() {
            return Err(ActionError::GameOver);
        }
        match action {
            Action::Start { from } => self.check_start(player, from).map(|_| ()),
            Action::Release { to } => {
                let held = self.holds(player).ok_or(ActionError::NotHolding)?;
                self.check_release(held.from, to)
            }
            Action::Move { from, to, .. } => {
                self.check_start(player, from)?;
                self.check_release(from, to)
            }
            Action::Place { glass, to, .. } => self.check_place(player, glass, to),
            Action::Drop => {
                let w = self.windows[player.index()]
                    .filter(|w| w.drop_open)
                    .ok_or(ActionError::NoDrop)?;
                self.check_ring(player, w.square)
            }
            Action::Claim => {
                let w = self.windows[player.other().index()].ok_or(ActionError::NoClaim)?;
                // Only the player now on turn claims (rules page, section 4).
                if self.ending {
                    return Err(ActionError::Ending);
                }
                if self.turn != player {
                    return Err(ActionError::NotYourTurn { player });
                }
                if w.dropped
                    || !w.claim_allowed
                    || self.now_ms < self.claim_opens_at(&w)
                    || self.holds(player).is_some()
                {
                    return Err(ActionError::NoClaim);
                }
                self.check_ring(player, w.square)
            }
            Action::PenaltyDrop { at } => {
                self.windows[player.index()]
                    .filter(|w| w.penalty_open)
                    .ok_or(ActionError::NoPenalty)?;
                self.check_ring(player, at)
            }
            Action::Flip => {
                if self.settings.level != Level::Three {
                    return Err(ActionError::NoNeutralTimer);
                }
                if self.ending {
                    return Err(ActionError::Ending);
                }
                if self.turn == player {
                    return Err(ActionError::FlipOnOwnTurn);
                }
                if self.neutral.sand.remaining(self.now_ms) > 0 {
                    return Err(ActionError::NeutralRunning {
                        until_ms: self.neutral.sand.empties_at(),
                    });
                }
                Ok(())
            }
            Action::Resign => Ok(()),
        }
    }

    fn check_turn(&self, player: Player) -> Result<(), ActionError> {
        if self.ending {
            return Err(ActionError::Ending);
        }
        if self.turn != player {
            return Err(ActionError::NotYourTurn { player });
        }
        if let Some(held) = self.holds(player) {
            return Err(ActionError::AlreadyHolding { glass: held.glass });
        }
        Ok(())
    }

    fn check_start(&self, player: Player, from: Square) -> Result<Glass, ActionError> {
        self.check_turn(player)?;
        if self.has_unplaced(player) {
            return Err(ActionError::MustPlace);
        }
        let glass = self
            .occupant(from)
            .ok_or(ActionError::NoHourglass { square: from })?;
        if glass.owner() != player {
            return Err(ActionError::NotYourHourglass { square: from });
        }
        if self.glasses[glass.index()].is_dead() {
            return Err(ActionError::HourglassDead { square: from });
        }
        let reject = self.settings.full_socket == FullSocket::Reject;
        let open = |n: &Square| self.occupant(*n).is_none() && !(reject && self.is_full(*n));
        if !from.neighbours().iter().any(open) {
            return Err(ActionError::Blocked { square: from });
        }
        if self.opening_applies(player) {
            let used = self.opening_used[player.index()];
            if used & glass.bit() != 0
                && player
                    .glasses()
                    .iter()
                    .any(|&g| used & g.bit() == 0 && self.glass_can_move(g))
            {
                return Err(ActionError::OpeningRule { glass });
            }
        }
        Ok(glass)
    }

    fn opening_applies(&self, player: Player) -> bool {
        self.settings.level.timed()
            && self.settings.setup == Setup::Standard
            && self.moves_made[player.index()] < 3
    }

    fn check_release(&self, from: Square, to: Square) -> Result<(), ActionError> {
        if !from.touches(to) {
            return Err(ActionError::NotAdjacent { from, to });
        }
        if self.occupant(to).is_some() {
            return Err(ActionError::Occupied { square: to });
        }
        if self.settings.full_socket == FullSocket::Reject && self.is_full(to) {
            return Err(ActionError::SocketFull { square: to });
        }
        Ok(())
    }

    fn check_place(&self, player: Player, glass: Glass, to: Square) -> Result<(), ActionError> {
        if self.settings.setup != Setup::Placement {
            return Err(ActionError::NothingToPlace);
        }
        self.check_turn(player)?;
        if glass.owner() != player {
            return Err(ActionError::NotYourGlass { glass, player });
        }
        if self.glasses[glass.index()].square.is_some() {
            return Err(ActionError::AlreadyPlaced { glass });
        }
        if self.occupant(to).is_some() {
            return Err(ActionError::Occupied { square: to });
        }
        if self.is_full(to) {
            return Err(ActionError::SocketFull { square: to });
        }
        Ok(())
    }

    fn check_ring(&self, player: Player, square: Square) -> Result<(), ActionError> {
        if self.is_full(square) {
            return Err(ActionError::SocketFull { square });
        }
        if self.holders[player.index()] == 0 {
            return Err(ActionError::NoRings);
        }
        Ok(())
    }

    /// Carries out a checked action.
    fn perform(&mut self, player: Player, action: Action, events: &mut Vec<Event>) {
        let now = self.now_ms;
        match action {
            Action::Start { from } => self.start(player, from, events),
            Action::Release { to } => self.release(player, to, events),
            Action::Move { from, to, drop } => {
                self.start(player, from, events);
                // A flip that leaves an empty top kills the hourglass in hand at once.
                self.advance_into(now, events);
                if self.held.is_some_and(|h| h.player == player) {
                    self.release(player, to, events);
                    if drop && self.check(player, Action::Drop).is_ok() {
                        self.drop_ring(player, to, DropKind::Regular, events);
                    }
                }
            }
            Action::Place { glass, to, drop } => {
                self.close_windows_for_start();
                if !self.is_playing() {
                    return;
                }
                let state = &mut self.glasses[glass.index()];
                state.square = Some(to);
                if self.settings.level.timed() {
                    state.started = true;
                    state.sand = Sand {
                        top_ms: self.settings.hourglass_ms,
                        since_ms: now,
                    };
                }
                let sand = state.sand;
                self.occupant[to.index()] = Some(glass);
                events.push(Event::Placed {
                    at: now,
                    player,
                    glass,
                    to,
                    sand,
                });
                self.complete_move(player, glass, to, false, events);
                if drop && self.check(player, Action::Drop).is_ok() {
                    self.drop_ring(player, to, DropKind::Regular, events);
                }
            }
            Action::Drop => {
                let square = self.windows[player.index()].expect("checked").square;
                self.drop_ring(player, square, DropKind::Regular, events);
            }
            Action::Claim => {
                let mover = player.other();
                let square = self.windows[mover.index()].expect("checked").square;
                self.drop_ring(player, square, DropKind::Claim, events);
                self.close_window(mover);
            }
            Action::PenaltyDrop { at } => self.drop_ring(player, at, DropKind::Penalty, events),
            Action::Flip => {
                let sand = Sand {
                    top_ms: self.settings.neutral_ms,
                    since_ms: now,
                };
                self.neutral = Neutral {
                    sand,
                    target: Some((self.turn, self.turn_no)),
                };
                events.push(Event::NeutralFlipped {
                    at: now,
                    by: player,
                    target: self.turn,
                    sand,
                });
            }
            Action::Resign => {
                self.finish_outright(player.other(), EndReason::Resigned { player }, events);
            }
        }
    }

    fn start(&mut self, player: Player, from: Square, events: &mut Vec<Event>) {
        let now = self.now_ms;
        self.close_windows_for_start();
        if !self.is_playing() {
            // The move that completed with that window repeated a position a third time.
            return;
        }
        let glass = self.occupant(from).expect("checked");
        let state = &mut self.glasses[glass.index()];
        if self.settings.level.timed() {
            // Flip: the sand that had run down is now on top.
            let top = self.settings.hourglass_ms - state.remaining(now);
            state.sand = Sand {
                top_ms: top,
                since_ms: now,
            };
            state.started = true;
        }
        let sand = state.sand;
        self.held = Some(Held {
            player,
            glass,
            from,
            since_ms: now,
            late_until_ms: None,
        });
        events.push(Event::MoveStarted {
            at: now,
            player,
            glass,
            from,
            sand,
        });
    }

    fn release(&mut self, player: Player, to: Square, events: &mut Vec<Event>) {
        let now = self.now_ms;
        let late = self.late.is_some_and(|h| h.player == player);
        let held = if late {
            self.late.take()
        } else {
            self.held.take()
        }
        .expect("checked");
        let glass = held.glass;
        self.occupant[held.from.index()] = None;
        self.occupant[to.index()] = Some(glass);
        self.glasses[glass.index()].square = Some(to);
        events.push(Event::MoveReleased {
            at: now,
            player,
            glass,
            from: held.from,
            to,
            late,
        });
        if self.is_full(to) {
            // Only reachable with `full_socket = lose`: checked otherwise.
            self.moves_made[player.index()] += 1;
            self.finish_outright(player.other(), EndReason::FullSocket { player }, events);
            return;
        }
        self.complete_move(player, glass, to, late, events);
    }

    /// Book-keeping shared by a release and a placement: counts the move, opens the drop
    /// window and hands over the turn.
    fn complete_move(
        &mut self,
        player: Player,
        glass: Glass,
        to: Square,
        late: bool,
        events: &mut Vec<Event>,
    ) {
        let now = self.now_ms;
        let i = player.index();
        if self.opening_applies(player) {
            self.opening_used[i] |= glass.bit();
        }
        self.moves_made[i] += 1;
        self.lapsed[i] = 0;
        let penalty = std::mem::take(&mut self.penalty_owed[i]) && self.holders[i] > 0;
        if !late {
            if let Some(clock) = self.settings.game_clock {
                self.clock_ms[i] = self.clock_ms[i].saturating_sub(now - self.turn_started_ms)
                    + clock.increment_ms;
                self.turn_started_ms = now;
            }
            self.begin_turn(player.other(), events);
            if !self.is_playing() {
                return;
            }
        }
        let opponent_holding = self.holds(player.other()).is_some();
        self.windows[i] = Some(Window {
            mover: player,
            square: to,
            opened_ms: now,
            drop_open: true,
            penalty_open: penalty,
            dropped: false,
            claim_allowed: !opponent_holding,
            comp_ms: self.credit[i].available(),
        });
        self.tidy_window(player);
    }

    fn drop_ring(
        &mut self,
        player: Player,
        square: Square,
        kind: DropKind,
        events: &mut Vec<Event>,
    ) {
        let i = player.index();
        self.rings[square.index()] += 1;
        self.holders[i] -= 1;
        // Ring counts only fall, so no earlier position can occur again.
        self.positions.clear();
        events.push(Event::RingDropped {
            at: self.now_ms,
            player,
            square,
            kind,
            left: self.holders[i],
        });
        if let Some(w) = self.windows[i].as_mut() {
            match kind {
                DropKind::Regular => {
                    w.drop_open = false;
                    w.dropped = true;
                }
                DropKind::Penalty => w.penalty_open = false,
                DropKind::Claim => {}
            }
        }
        self.tidy_window(Player::Black);
        self.tidy_window(Player::Red);
    }

    /// Closes a window once nothing more can be dropped on it, ever.
    fn tidy_window(&mut self, mover: Player) {
        let Some(w) = self.windows[mover.index()] else {
            return;
        };
        let claimant = mover.other();
        let mover_can = (w.drop_open && !self.is_full(w.square) || w.penalty_open)
            && self.holders[mover.index()] > 0;
        let claim_can = !w.dropped
            && w.claim_allowed
            && !self.is_full(w.square)
            && self.holders[claimant.index()] > 0;
        if !mover_can && !claim_can {
            self.close_window(mover);
        }
    }

    /// A move is complete once its window has closed: count its position.
    fn close_window(&mut self, mover: Player) {
        if self.windows[mover.index()].take().is_some() {
            self.count_position(mover.other());
        }
    }

    /// A move start closes every window open before it.
    fn close_windows_for_start(&mut self) {
        for p in Player::BOTH {
            self.close_window(p);
            if !self.is_playing() {
                return;
            }
        }
    }

    /// Counts the current position; a third occurrence ends the game.
    fn count_position(&mut self, next: Player) {
        let mut key = [0u8; SQUARES + 3];
        for (i, k) in key.iter_mut().take(SQUARES).enumerate() {
            let occ = self.occupant[i].map_or(0, |g| 1 + g.owner().index() as u8);
            *k = occ << 4 | self.rings[i];
        }
        key[SQUARES] = self.holders[0];
        key[SQUARES + 1] = self.holders[1];
        key[SQUARES + 2] = next as u8;
        let count = match self.positions.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.positions.push((key, 1));
                1
            }
        };
        if count >= 3 {
            self.finish_on_rings(EndReason::Repetition);
        }
    }

    // ----- the end -----

    /// Charges the player on turn for the time since his turn (or the last charge) began.
    fn charge_clock(&mut self) {
        if self.settings.game_clock.is_some() && !self.ending {
            let i = self.turn.index();
            self.clock_ms[i] = self.clock_ms[i].saturating_sub(self.now_ms - self.turn_started_ms);
            self.turn_started_ms = self.now_ms;
        }
    }

    fn stop(&mut self, status: Status) {
        self.charge_clock();
        self.status = status;
        self.windows = [None; 2];
        self.held = None;
        self.late = None;
        self.neutral.target = None;
    }

    /// Reports the end of the game, once.
    fn announce_end(&mut self, events: &mut Vec<Event>) {
        if self.end_announced {
            return;
        }
        match &self.status {
            Status::Playing => return,
            Status::Finished { outcome } => events.push(Event::GameEnded {
                at: self.now_ms,
                outcome: outcome.clone(),
            }),
            Status::Aborted { reason, .. } => events.push(Event::GameAborted {
                at: self.now_ms,
                reason: *reason,
            }),
        }
        self.end_announced = true;
    }

    fn finish_outright(&mut self, winner: Player, reason: EndReason, events: &mut Vec<Event>) {
        let outcome = Outcome {
            winner: Some(winner),
            reason,
            decision: Decision::Forfeit,
            rings: self.rings(),
            tiebreak: None,
            ended_at_ms: self.now_ms,
        };
        self.stop(Status::Finished { outcome });
        self.announce_end(events);
    }

    fn finish_on_rings(&mut self, reason: EndReason) {
        let outcome = self.outcome_on_rings(reason);
        self.stop(Status::Finished { outcome });
    }

    fn outcome_on_rings(&self, reason: EndReason) -> Outcome {
        let rings = self.rings();
        let (winner, decision, tiebreak) = match rings.red.cmp(&rings.black) {
            std::cmp::Ordering::Less => (Some(Player::Red), Decision::Rings, None),
            std::cmp::Ordering::Greater => (Some(Player::Black), Decision::Rings, None),
            std::cmp::Ordering::Equal if !self.settings.level.timed() => {
                (None, Decision::Draw, None)
            }
            std::cmp::Ordering::Equal => {
                let tiebreak = self.tiebreak();
                let winner = tiebreak.deciding_index.map(|i| tiebreak.lineup[i].player);
                let decision = if winner.is_some() {
                    Decision::Tiebreak
                } else {
                    Decision::Draw
                };
                (winner, decision, Some(tiebreak))
            }
        };
        Outcome {
            winner,
            reason,
            decision,
            rings,
            tiebreak,
            ended_at_ms: self.now_ms,
        }
    }

    /// The last-living-hourglass line-up at the current instant (rules page, section 6).
    pub fn tiebreak(&self) -> Tiebreak {
        let now = self.now_ms;
        let running: Vec<LineupEntry> = self
            .glasses
            .iter()
            .filter(|g| g.remaining(now) > 0)
            .map(|g| LineupEntry {
                glass: g.glass,
                player: g.glass.owner(),
                dies_at_ms: g.sand.empties_at(),
                running: true,
            })
            .collect();
        let mut lineup = if running.is_empty() {
            self.glasses
                .iter()
                .filter_map(|g| {
                    g.dead_at_ms.map(|t| LineupEntry {
                        glass: g.glass,
                        player: g.glass.owner(),
                        dies_at_ms: t,
                        running: false,
                    })
                })
                .collect()
        } else {
            running
        };
        lineup.sort_by(|a, b| b.dies_at_ms.cmp(&a.dies_at_ms).then(a.glass.cmp(&b.glass)));
        let mut deciding_index = None;
        let mut start = 0;
        while start < lineup.len() {
            let t = lineup[start].dies_at_ms;
            let end = lineup[start..]
                .iter()
                .position(|e| e.dies_at_ms != t)
                .map_or(lineup.len(), |n| start + n);
            let first = lineup[start].player;
            if lineup[start..end].iter().all(|e| e.player == first) {
                deciding_index = Some(start);
                break;
            }
            start = end;
        }
        Tiebreak {
            lineup,
            deciding_index,
        }
    }

    /// The server's ending for a player who left and did not come back within the grace.
    pub fn abandon(&mut self, player: Player, now: u64) -> Vec<Event> {
        let mut events = self.advance(now);
        if self.is_playing() {
            self.finish_outright(player.other(), EndReason::Abandoned { player }, &mut events);
        }
        events
    }

    /// Calls the game off without a result (server shutdown).
    pub fn abort(&mut self, reason: AbortReason, now: u64) -> Vec<Event> {
        let mut events = self.advance(now);
        if self.is_playing() {
            self.stop(Status::Aborted {
                reason,
                at_ms: self.now_ms,
            });
            self.announce_end(&mut events);
        }
        events
    }

    // ----- what may be done -----

    /// Every action `player` may take at the game's current instant. [`Game::apply`] at
    /// this instant accepts exactly these (for `Move` and `Place`, with and without drop).
    pub fn legal_actions(&self, player: Player) -> Vec<Action> {
        let mut out = Vec::new();
        self.legal_actions_into(player, &mut out);
        out
    }

    /// [`Game::legal_actions`] into a caller's buffer (cleared first).
    pub fn legal_actions_into(&self, player: Player, out: &mut Vec<Action>) {
        out.clear();
        if !self.is_playing() {
            return;
        }
        out.push(Action::Resign);
        if self.check(player, Action::Flip).is_ok() {
            out.push(Action::Flip);
        }
        if self.check_turn(player).is_ok() {
            if self.has_unplaced(player) {
                for glass in player.glasses() {
                    if self.glasses[glass.index()].square.is_some() {
                        continue;
                    }
                    for to in Square::ALL {
                        if self.free(to) {
                            out.push(Action::Place {
                                glass,
                                to,
                                drop: true,
                            });
                            out.push(Action::Place {
                                glass,
                                to,
                                drop: false,
                            });
                        }
                    }
                }
            } else {
                for glass in player.glasses() {
                    let Some(from) = self.glasses[glass.index()].square else {
                        continue;
                    };
                    if self.check_start(player, from).is_err() {
                        continue;
                    }
                    out.push(Action::Start { from });
                    for &to in from.neighbours() {
                        if self.check_release(from, to).is_ok() {
                            out.push(Action::Move {
                                from,
                                to,
                                drop: true,
                            });
                            out.push(Action::Move {
                                from,
                                to,
                                drop: false,
                            });
                        }
                    }
                }
            }
        }
        if let Some(held) = self.holds(player) {
            for &to in held.from.neighbours() {
                if self.check_release(held.from, to).is_ok() {
                    out.push(Action::Release { to });
                }
            }
        }
        if self.check(player, Action::Drop).is_ok() {
            out.push(Action::Drop);
        }
        if self.check(player, Action::Claim).is_ok() {
            out.push(Action::Claim);
        }
        if self.windows[player.index()].is_some_and(|w| w.penalty_open) {
            for at in Square::ALL {
                if self.check_ring(player, at).is_ok() {
                    out.push(Action::PenaltyDrop { at });
                }
            }
        }
    }
}

#[path = "game_bounds.rs"]
mod bounds;

#[path = "game_time.rs"]
mod time;

#[cfg(test)]
#[path = "game_tests.rs"]
mod tests;
