//! Glicko-2 ratings, one per player and named time control, through the `skillratings`
//! crate with lichess's parameters: a new player starts at 1500 with deviation 500 and
//! volatility 0.09; τ is 0.75. Each rated game is a rating period of its own (as on
//! lichess: ratings move after every game). A rating is provisional (shown `1500?`) while
//! its deviation is at least 110.
//!
//! Which games are rated: those whose settings are a named time control
//! ([`protocol::rating::TimeControl::of`]), between two different players (the bot counts
//! as a player), that the players asked to be rated (the default for named controls) and
//! that finished: aborted games change nothing.
//!
//! The ratings task consumes [`GameOver`] events: it updates the players' ratings in the
//! database, from those stored there, and in memory (each [`PlayerRec`] holds his,
//! shared by every seat of his), with one history row per player and game (`ratings`,
//! `rating_changes`).

use std::sync::Arc;

use protocol::game::Player;
use protocol::rating::{ShownRating, TimeControl};
use tokio::sync::mpsc;

use crate::events::{Ending, GameOver};
pub use crate::glicko::*;
use crate::peer::PlayerRec;
use crate::store::Store;

/// Events taken from the queue at once.
const BATCH: usize = 256;

/// What `tc` shows beside `player`'s name.
pub fn shown(player: &PlayerRec, tc: Option<TimeControl>) -> Option<ShownRating> {
    let tc = tc?;
    Some(player.ratings.lock().expect("ratings lock").get(tc).shown())
}

/// Whether a game of `settings` between `players` is rated, when `asked` (`None`: the
/// default, rated for a named control).
pub fn is_rated(
    asked: Option<bool>,
    control: Option<TimeControl>,
    players: [&PlayerRec; 2],
) -> bool {
    asked.unwrap_or(true) && control.is_some() && players[0].id != players[1].id
}

/// The game of `event` if it moves ratings: rated, finished (not aborted), between two
/// different players.
pub fn rated_game(event: &GameOver) -> Option<RatedGame> {
    let (Some(tc), true) = (event.control, event.rated) else {
        return None;
    };
    if matches!(event.ending, Ending::Aborted { .. }) || event.players[0].id == event.players[1].id
    {
        return None;
    }
    Some(RatedGame {
        game: event.game,
        tc,
        players: [event.players[0].id.clone(), event.players[1].id.clone()],
        score: event.score(Player::Red)?,
        at_ms: event.ended_ms,
    })
}

/// Applies a game-over event to its players' ratings in memory, from the ratings they
/// hold there; the changes to store. Games that are not rated, or aborted, change nothing.
/// (With a database, the ratings task starts from the stored ratings instead: see
/// [`spawn`].)
pub fn apply(event: &GameOver) -> Vec<Change> {
    let Some(game) = rated_game(event) else {
        return Vec::new();
    };
    let [red, black] = &event.players;
    let before = [
        red.ratings.lock().expect("ratings lock").get(game.tc),
        black.ratings.lock().expect("ratings lock").get(game.tc),
    ];
    let changes = changes(&game, before);
    remember(&event.players, &changes);
    changes.into()
}

/// Sets the players' ratings in memory to those the changes lead to.
fn remember(players: &[Arc<PlayerRec>; 2], changes: &[Change]) {
    for c in changes {
        if let Some(p) = players.iter().find(|p| p.id == c.player_id) {
            let mut ratings = p.ratings.lock().expect("ratings lock");
            ratings.by_tc.insert(c.tc, c.after);
        }
    }
}

/// Attempts at storing a game's rating changes, and the wait after the first failure
/// (doubled after each).
const ATTEMPTS: u32 = 4;
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// [`Store::apply_rated`], tried again after a failure (a database restarting, a
/// connection lost): a game applied already changes nothing, so a second try that finds
/// the first one committed after all is harmless.
async fn apply_stored(store: &Store, game: &RatedGame) -> anyhow::Result<Option<Vec<Change>>> {
    let mut wait = RETRY_AFTER;
    let mut attempt = 1;
    loop {
        match store.apply_rated(game).await {
            Err(e) if attempt < ATTEMPTS => {
                tracing::warn!(game = %game.game, attempt, error = %e, "storing rating changes failed: trying again");
                tokio::time::sleep(wait).await;
                wait *= 2;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// The ratings task: applies every game-over event in order and stores the changes, then
/// tells each player (`rating_changed`). With a database, each game's changes start from
/// the ratings stored there, read and written in one transaction that holds the two
/// players' rows (several nodes end games of the same player: a node's memory may be
/// behind), and the players' ratings in memory are set to the results; a game already
/// stored (ended again after a takeover) changes nothing. Without one, they start from
/// memory. `tell` delivers a message to a player's connections, wherever they are;
/// `share` hands each game's changes to the other nodes, if any.
pub fn spawn(
    store: Store,
    tell: impl Fn(&str, &protocol::wire::LobbyMessage) + Send + 'static,
    share: impl Fn(&[Change]) + Send + 'static,
    mut rx: mpsc::Receiver<Arc<GameOver>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut batch = Vec::with_capacity(BATCH);
        while rx.recv_many(&mut batch, BATCH).await > 0 {
            for event in batch.drain(..) {
                let Some(game) = rated_game(&event) else {
                    continue;
                };
                let changes = match apply_stored(&store, &game).await {
                    Ok(Some(changes)) => {
                        remember(&event.players, &changes);
                        changes
                    }
                    Ok(None) => apply(&event),
                    Err(e) => {
                        tracing::error!(game = %game.game, error = %e, "storing rating changes failed");
                        continue;
                    }
                };
                share(&changes);
                for c in &changes {
                    tell(
                        &c.player_id,
                        &protocol::wire::LobbyMessage::RatingChanged {
                            game: c.game_id,
                            tc: c.tc,
                            before: ShownRating::new(c.before.rating, c.before.deviation),
                            after: c.after.shown(),
                        },
                    );
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillratings::glicko2::{glicko2_rating_period, Glicko2Config, Glicko2Rating};
    use skillratings::Outcomes;

    /// Glickman's worked example ("Example of the Glicko-2 system", τ = 0.5): a 1500/200
    /// player beats a 1400/30, loses to a 1550/100 and to a 1700/300 in one period.
    #[test]
    fn the_papers_worked_example() {
        let player = Glicko2Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        };
        let opp = |rating, deviation| Glicko2Rating {
            rating,
            deviation,
            volatility: 0.06,
        };
        let results = [
            (opp(1400.0, 30.0), Outcomes::WIN),
            (opp(1550.0, 100.0), Outcomes::LOSS),
            (opp(1700.0, 300.0), Outcomes::LOSS),
        ];
        let config = Glicko2Config {
            tau: 0.5,
            ..Glicko2Config::new()
        };
        let after = glicko2_rating_period(&player, &results, &config);
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.deviation - 151.52).abs() < 0.01, "{after:?}");
        assert!((after.volatility - 0.05999).abs() < 0.00001, "{after:?}");
    }

    #[test]
    fn a_rated_game_moves_both_ratings_with_lichess_parameters() {
        let (a, b) = update(&Rated::default(), &Rated::default(), 1.0);
        assert!(a.glicko.rating > 1500.0 && b.glicko.rating < 1500.0);
        assert!((a.glicko.rating - 1500.0 - (1500.0 - b.glicko.rating)).abs() < 1e-9);
        assert!(a.glicko.deviation < 500.0 && a.shown().provisional);
        assert_eq!((a.games, a.wins, a.losses, a.draws), (1, 1, 0, 0));
        assert_eq!((b.games, b.wins, b.losses, b.draws), (1, 0, 1, 0));
        let (c, d) = update(&a, &b, 0.5);
        assert_eq!((c.draws, d.draws, c.games), (1, 1, 2));
        // The favourite loses points on a draw.
        assert!(c.glicko.rating < a.glicko.rating);
        // Many games bring the deviation under the provisional bound.
        let (mut x, mut y) = (Rated::default(), Rated::default());
        for i in 0..30 {
            (x, y) = update(&x, &y, if i % 3 == 0 { 0.0 } else { 1.0 });
        }
        assert!(!x.shown().provisional, "{x:?}");
        assert_eq!(x.games, 30);
    }

    #[test]
    fn only_named_controls_between_two_players_are_rated_by_default() {
        let p = |id: &str| PlayerRec {
            id: id.into(),
            name: id.into(),
            bot: false,
            bot_level: None,
            ratings: SharedRatings::default(),
        };
        let (a, b) = (p("a"), p("b"));
        let std = Some(TimeControl::Standard);
        assert!(is_rated(None, std, [&a, &b]));
        assert!(!is_rated(Some(false), std, [&a, &b]));
        assert!(!is_rated(Some(true), None, [&a, &b]));
        assert!(!is_rated(None, std, [&a, &a]));
    }
}
