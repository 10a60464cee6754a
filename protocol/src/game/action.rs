//! What a player may ask of the engine ([`Action`]) and the exact reason an action is
//! refused ([`ActionError`]).

use super::*;

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
    #[error(
        "the 15-second timer is still running: {:.1} s left (it empties at {until_ms} ms of game time)",
        *left_ms as f64 / 1000.0
    )]
    NeutralRunning { until_ms: u64, left_ms: u64 },
    /// The timer is empty, but its expiry on `player` (on turn) waits out his lag
    /// compensation until `until_ms`: a flip would cancel it (RULES.md decision 16).
    #[error(
        "the 15-second timer ran out on {player}, whose answer may still arrive within his lag compensation: {:.1} s left (until {until_ms} ms of game time)",
        *left_ms as f64 / 1000.0
    )]
    NeutralJudging {
        player: Player,
        until_ms: u64,
        left_ms: u64,
    },
    /// Not the engine's: the server's, for an `act` whose `seq` shows it was sent before
    /// the turn it would act in began (a move meant for a turn that was forfeited on the
    /// way, say): it is not played in a position its player has not seen.
    #[error("sent before the turn changed: you had seen event {seen}, this turn began at event {turn_seq}; nothing was played")]
    Stale { seen: u64, turn_seq: u64 },
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
            // The timer is still running as far as the flipper is concerned.
            ActionError::NeutralRunning { .. } | ActionError::NeutralJudging { .. } => {
                "neutral_running"
            }
            ActionError::Stale { .. } => "stale_action",
        }
    }
}
