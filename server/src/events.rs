//! Domain events: the one place where a finished (or aborted) game is published inside
//! the server. A game task publishes its [`GameOver`] once the store has the game on disk
//! (or did not answer in time); ratings and tournaments subscribe to it instead of being
//! called from the game loop.
//!
//! Each subscriber has a bounded queue. Publishing waits for room in every queue (it runs
//! in the ended game's own task, never in a connection), so a slow consumer slows the
//! announcement of game ends rather than losing one.

use std::sync::{Arc, Mutex};

use protocol::game::Player;
use protocol::rating::TimeControl;
use protocol::settings::Settings;
use protocol::wire::GameId;
use tokio::sync::mpsc;

use crate::peer::PlayerRec;

/// Events a subscriber's queue holds before publishing waits.
pub const EVENT_QUEUE: usize = 4096;

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Played to its end: `winner` `None` is a draw.
    Finished { winner: Option<Player> },
    /// Aborted: it counts for no rating. `no_show`: the players who did not make their
    /// first move in time (none when the server stopped).
    Aborted { no_show: Vec<Player> },
}

/// A game that is over, as its consumers see it.
#[derive(Clone, Debug)]
pub struct GameOver {
    pub game: GameId,
    /// `[red, black]`.
    pub players: [Arc<PlayerRec>; 2],
    pub settings: Settings,
    /// The named time control its settings are played at, if any.
    pub control: Option<TimeControl>,
    /// Rated: it changes both players' ratings in `control` (see `ratings`).
    pub rated: bool,
    pub ending: Ending,
    /// The machine-readable reason (`no_moves`, `resigned`, `no_first_move`, ...).
    pub reason: String,
    pub move_count: u32,
    /// Wall clock, ms since the Unix epoch.
    pub ended_ms: u64,
    /// Played for a tournament.
    pub tournament: Option<TournamentGame>,
}

/// Which tournament pairing a game is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentGame {
    pub tournament: String,
    pub round: u32,
}

impl GameOver {
    /// The score of `seat`: 1 for a win, 0.5 for a draw, 0 for a loss; `None` when aborted.
    pub fn score(&self, seat: Player) -> Option<f64> {
        match self.ending {
            Ending::Finished { winner: None } => Some(0.5),
            Ending::Finished { winner: Some(w) } => Some(if w == seat { 1.0 } else { 0.0 }),
            Ending::Aborted { .. } => None,
        }
    }
}

/// The game-over publisher. Subscribers are few and fixed (ratings, tournaments), so the
/// list is small and bounded by the code that subscribes.
#[derive(Default)]
pub struct GameEvents {
    subscribers: Mutex<Vec<mpsc::Sender<Arc<GameOver>>>>,
}

impl GameEvents {
    /// A new subscriber's queue.
    pub fn subscribe(&self) -> mpsc::Receiver<Arc<GameOver>> {
        let (tx, rx) = mpsc::channel(EVENT_QUEUE);
        self.subscribers.lock().expect("events lock").push(tx);
        rx
    }

    /// Hands `event` to every subscriber, waiting for room; subscribers that are gone are
    /// dropped.
    pub async fn publish(&self, event: GameOver) {
        let event = Arc::new(event);
        let subscribers = self.subscribers.lock().expect("events lock").clone();
        let mut gone = false;
        for tx in subscribers {
            if tx.send(event.clone()).await.is_err() {
                gone = true;
            }
        }
        if gone {
            self.subscribers
                .lock()
                .expect("events lock")
                .retain(|tx| !tx.is_closed());
        }
    }

    /// Closes every subscriber's queue (at shutdown, once the games are over): their
    /// consumers handle what is queued, then end.
    pub fn close(&self) {
        self.subscribers.lock().expect("events lock").clear();
    }
}
