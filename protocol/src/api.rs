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
