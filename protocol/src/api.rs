//! The JSON answers of the HTTP API (`docs/API.md`): ratings, leaderboards, players and
//! tournaments. Shared by the server, which writes them, and the clients, which read them.

use serde::{Deserialize, Serialize};

use crate::rating::{ShownRating, TimeControl};

/// `GET /api/leaderboard?tc=NAME`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Leaderboard {
    pub tc: TimeControl,
    /// Best first; at most [`LEADERBOARD_LIMIT`].
    pub players: Vec<LeaderboardRow>,
}

/// Most rows of a leaderboard.
pub const LEADERBOARD_LIMIT: usize = 100;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaderboardRow {
    /// 1 for the best.
    pub rank: u32,
    pub player_id: String,
    pub name: String,
    #[serde(flatten)]
    pub standing: ControlStanding,
}

/// A player's standing in one control.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ControlStanding {
    pub tc: TimeControl,
    #[serde(flatten)]
    pub rating: ShownRating,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

/// `GET /api/players/{name}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerProfile {
    pub player_id: String,
    pub name: String,
    pub bot: bool,
    /// The controls he played rated games in.
    pub ratings: Vec<ControlStanding>,
    /// His last rating changes, newest first (at most [`HISTORY_LIMIT`]).
    pub history: Vec<RatingChange>,
}

/// Most rows of a player's rating history.
pub const HISTORY_LIMIT: usize = 20;

/// One rated game of a player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingChange {
    /// The game's id, as text.
    pub game: String,
    pub tc: TimeControl,
    pub opponent: String,
    /// 1 win, 0.5 draw, 0 loss.
    pub score: f64,
    pub before: i32,
    pub after: i32,
    /// After the game.
    pub deviation: u32,
    /// Wall clock, ms since the Unix epoch.
    pub at_ms: u64,
}

/// `GET /api/tournaments`: upcoming and running tournaments, then the last finished
/// ones (newest first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentList {
    pub tournaments: Vec<TournamentSummary>,
}

/// Most finished tournaments listed.
pub const FINISHED_LIMIT: usize = 50;

/// A tournament in a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentSummary {
    pub id: String,
    /// `upcoming`, `running`, `finished` or `cancelled`.
    pub state: String,
    pub tc: TimeControl,
    pub rated: bool,
    pub rounds: u32,
    /// Rounds started so far.
    pub round: u32,
    pub players: u32,
    /// When it starts (or started): server wall clock, ms since the Unix epoch.
    pub starts_ms: u64,
}

/// `GET /api/tournaments/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentDetail {
    #[serde(flatten)]
    pub summary: TournamentSummary,
    pub settings: crate::settings::Settings,
    /// Best first, with the tiebreaks.
    pub standings: Vec<StandingRow>,
    /// Every round started, first first.
    pub pairings: Vec<RoundView>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StandingRow {
    pub rank: u32,
    pub player_id: String,
    pub name: String,
    pub score: f64,
    pub buchholz: f64,
    pub sonneborn_berger: f64,
    /// His rating in the control when he joined (the pairing seed).
    pub seed: i32,
    pub withdrawn: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundView {
    pub round: u32,
    pub games: Vec<PairingView>,
    /// The name of the player with the bye, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bye: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingView {
    /// 1 for the first board.
    pub board: u32,
    pub red: String,
    pub black: String,
    /// The game's id as text, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<String>,
    /// `1-0`, `0-1`, `½-½`, `1-0 forfeit`, `0-1 forfeit`, `0-0 forfeit`; absent while
    /// being played.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}
