//! Glicko-2 through the `skillratings` crate with lichess's parameters: a player's
//! standing in each named time control and the update after one game. A leaf: pure
//! figures, no players, games or storage (see `ratings` for those).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use protocol::rating::{ShownRating, TimeControl};
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

/// A new player's rating, deviation and volatility (lichess).
pub const START: Glicko2Rating = Glicko2Rating {
    rating: 1500.0,
    deviation: 500.0,
    volatility: 0.09,
};
/// The system constant τ (lichess).
pub const TAU: f64 = 0.75;

/// The Glicko-2 configuration of every rated game.
pub fn config() -> Glicko2Config {
    Glicko2Config {
        tau: TAU,
        ..Glicko2Config::new()
    }
}

/// A player's standing in one control.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rated {
    pub glicko: Glicko2Rating,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

impl Default for Rated {
    fn default() -> Rated {
        Rated {
            glicko: START,
            games: 0,
            wins: 0,
            losses: 0,
            draws: 0,
        }
    }
}

impl Rated {
    pub fn shown(&self) -> ShownRating {
        ShownRating::new(self.glicko.rating, self.glicko.deviation)
    }

    /// After one more game scored `score` (1, 0.5, 0) with rating `glicko`.
    fn after(mut self, glicko: Glicko2Rating, score: f64) -> Rated {
        self.glicko = glicko;
        self.games += 1;
        if score > 0.75 {
            self.wins += 1;
        } else if score < 0.25 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
        self
    }
}

/// A player's ratings by control; a control he never played rated is at [`START`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlayerRatings {
    pub by_tc: BTreeMap<TimeControl, Rated>,
}

impl PlayerRatings {
    pub fn get(&self, tc: TimeControl) -> Rated {
        self.by_tc.get(&tc).copied().unwrap_or_default()
    }
}

/// A player's ratings, shared by every seat of his.
pub type SharedRatings = Arc<Mutex<PlayerRatings>>;

/// Both players' ratings after one game: `score` is the first player's (1, 0.5, 0).
pub fn update(a: &Rated, b: &Rated, score: f64) -> (Rated, Rated) {
    let outcome = if score > 0.75 {
        Outcomes::WIN
    } else if score < 0.25 {
        Outcomes::LOSS
    } else {
        Outcomes::DRAW
    };
    let (ga, gb) = glicko2(&a.glicko, &b.glicko, &outcome, &config());
    (a.after(ga, score), b.after(gb, 1.0 - score))
}

/// One player's change in one rated game, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub game_id: protocol::wire::GameId,
    pub game: String,
    pub player_id: String,
    pub opponent_id: String,
    pub tc: TimeControl,
    pub score: f64,
    pub before: Glicko2Rating,
    pub after: Rated,
    pub at_ms: u64,
}
/// A finished rated game, as the ratings need it.
#[derive(Clone, Debug)]
pub struct RatedGame {
    pub game: protocol::wire::GameId,
    pub tc: TimeControl,
    /// `[red, black]`.
    pub players: [String; 2],
    /// Red's score: 1, 0.5 or 0.
    pub score: f64,
    pub at_ms: u64,
}

/// The two changes (red's, then black's) `game` makes to the ratings it starts from.
pub fn changes(game: &RatedGame, before: [Rated; 2]) -> [Change; 2] {
    let (r, b) = update(&before[0], &before[1], game.score);
    let [red, black] = &game.players;
    let change = |player: &String, opponent: &String, score: f64, before: &Rated, after| Change {
        game_id: game.game,
        game: game.game.to_string(),
        player_id: player.clone(),
        opponent_id: opponent.clone(),
        tc: game.tc,
        score,
        before: before.glicko,
        after,
        at_ms: game.at_ms,
    };
    [
        change(red, black, game.score, &before[0], r),
        change(black, red, 1.0 - game.score, &before[1], b),
    ]
}
