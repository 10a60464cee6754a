//! The live games and what every game needs (configuration, store, metrics, alarms, the
//! game-over events): the layer below the hub. A game task holds this, never the hub.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use protocol::game::Action;
use protocol::wire::{GameId, GameSummary, Seq};
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::peer::{Peer, PlayerRec};
use crate::store::Store;

/// What a connection asks of a game.
pub enum GameCmd {
    /// Receive the game's events: as a player if `player` has a seat, else as a watcher.
    Subscribe {
        peer: Peer,
        player: Option<Arc<PlayerRec>>,
        after_seq: Option<Seq>,
        /// `peer` is the proxy of a client of another node whose node follows the game's
        /// stream for it: what is for everyone reaches it only through that one
        /// publication ([`Relay`]). Set only by the cluster, for a join or watch its
        /// client's node sent after subscribing to the stream.
        remote: bool,
    },
    Unsubscribe {
        conn: u64,
        /// Answer `left` (or `not_subscribed`) to this peer.
        reply: Option<Peer>,
    },
    Act {
        peer: Peer,
        player: Arc<PlayerRec>,
        action: Action,
        /// When the server read the frame: the action happens at this instant.
        received: Instant,
        /// The last event of the game the client had (see `ClientMessage::Act`).
        seen: Option<protocol::wire::Seq>,
    },
    ClaimAbandonment {
        peer: Peer,
        player: Arc<PlayerRec>,
    },
    /// A connection measured its round trip: published for its seat, if it has one.
    Lag {
        conn: u64,
        rtt_ms: u64,
        /// When it was measured.
        received: Instant,
    },
    /// Offers or accepts (`accept`), or declines, a rematch once the game is over.
    Rematch {
        peer: Peer,
        player: Arc<PlayerRec>,
        accept: bool,
    },
}

impl GameCmd {
    /// A player's command about his seat or his following the game (an action, a claim, a
    /// rematch, a leave): refused to a stranger to a private game as if it did not exist.
    pub fn asks_a_seat(&self) -> bool {
        matches!(
            self,
            GameCmd::Act { .. }
                | GameCmd::ClaimAbandonment { .. }
                | GameCmd::Rematch { .. }
                | GameCmd::Unsubscribe { reply: Some(_), .. }
        )
    }
}

/// Where a game hands the frames meant for everyone once, for the other nodes (issue 18):
/// set by the cluster. The subscriptions marked remote (`GameCmd::Subscribe::remote`) are
/// skipped by a game's own fan-out; their nodes get each frame from this one publication
/// and fan it out themselves.
pub trait Relay: Send + Sync {
    /// One frame for every subscriber of `game` (`seq`: a numbered event's).
    fn publish(&self, game: GameId, seq: Option<Seq>, text: &axum::extract::ws::Utf8Bytes);
}

/// A live game as the rest of the server sees it.
#[derive(Clone)]
pub struct GameHandle {
    pub tx: crate::outbox::Sender<GameCmd>,
    pub summary: Arc<Mutex<GameSummary>>,
    pub seats: [Arc<PlayerRec>; 2],
    /// Game time 0: a message's receipt in game time is measured from it.
    pub start: tokio::time::Instant,
    /// The code of a private game (and of its rematches): not listed; its players follow
    /// it, and a watcher only with this code (`watch_code`).
    pub code: Option<String>,
    /// How long this node may still run the game (for ever on a single node; in a
    /// cluster, while its lease is proven: see `tenure`).
    pub tenure: Arc<crate::tenure::Tenure>,
}

/// Counts a game as being played while held.
pub type PlayingGuard = tokio_util::task::task_tracker::TaskTrackerToken;

/// Counters of the bot seats, for `/metrics` and tests.
#[derive(Default)]
pub struct BotStats {
    pub actions: AtomicU64,
    pub refused: AtomicU64,
}

pub struct Rooms {
    pub config: Config,
    pub store: Store,
    /// Changed only through `insert_game` and `remove_game`, which keep `by_player`.
    pub games: DashMap<GameId, GameHandle>,
    /// The live games of each seated player: a connection's hello and its clean-up ask
    /// for a player's games, and scanning every game for each would make a crowd of
    /// connections cost the square of the games.
    by_player: DashMap<String, Vec<GameId>>,
    /// One more at each game inserted or removed (after the change): a cluster's lease
    /// loop looks through the games for new ones only when it moved.
    changes: AtomicU64,
    next_conn: AtomicU64,
    /// Shutdown, in order: live games are stopped (suspended for the next start, or
    /// aborted), then connections close.
    pub stop_games: crate::stop::Stop,
    pub stop_conns: crate::stop::Stop,
    /// Every game task: shutdown waits for them before closing connections.
    pub game_tasks: TaskTracker,
    /// Every connection task: `run` waits for them before it returns.
    pub conn_tasks: TaskTracker,
    /// Games being played (not over), one token each: shutdown drains them.
    pub(crate) playing: TaskTracker,
    pub bot_stats: BotStats,
    /// Shutting down: no new games; live ones may still finish.
    pub(crate) draining: std::sync::atomic::AtomicBool,
    pub metrics: crate::metrics::Metrics,
    /// Precise wake-ups for game deadlines (`None`: tokio's timer, as on a paused clock).
    pub alarms: Option<crate::alarm::Alarms>,
    /// The games' own threads (`None`: games run on the server's runtime).
    pub lanes: Option<crate::lanes::Lanes>,
    /// The server's runtime, for what game tasks start that is not a game (a bot seat's
    /// planning must not hold up other games' deadlines).
    pub io: Option<tokio::runtime::Handle>,
    /// Where finished games are published (ratings, tournaments).
    pub events: crate::events::GameEvents,
    /// Set when this node is one of several (see [`Relay`]).
    pub relay: std::sync::OnceLock<Arc<dyn Relay>>,
}

impl Rooms {
    pub fn new(config: Config, store: Store) -> Rooms {
        let alarms = if config.precise_timer {
            crate::alarm::Alarms::start(config.realtime_priority)
                .inspect_err(|e| tracing::warn!(error = %e, "no alarm thread: tokio's timer"))
                .ok()
        } else {
            None
        };
        let lanes = (config.game_threads > 0)
            .then(|| {
                crate::lanes::Lanes::start(config.game_threads, config.realtime_priority)
                    .inspect_err(
                        |e| tracing::warn!(error = %e, "no game thread: games share the runtime"),
                    )
                    .ok()
            })
            .flatten();
        Rooms {
            io: tokio::runtime::Handle::try_current().ok(),
            lanes,
            config,
            store,
            games: DashMap::new(),
            by_player: DashMap::new(),
            changes: AtomicU64::new(0),
            next_conn: AtomicU64::new(1),
            stop_games: Default::default(),
            stop_conns: Default::default(),
            game_tasks: TaskTracker::new(),
            conn_tasks: TaskTracker::new(),
            playing: TaskTracker::new(),
            bot_stats: BotStats::default(),
            draining: Default::default(),
            metrics: Default::default(),
            alarms,
            events: Default::default(),
            relay: Default::default(),
        }
    }

    /// Starts a game's task: on the games' threads if there are some.
    pub fn spawn_game<F>(&self, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        match &self.lanes {
            Some(lanes) => lanes.spawn(&self.game_tasks, task),
            None => {
                self.game_tasks.spawn(task);
            }
        }
    }

    /// Starts a task that is not a game on the server's runtime, wherever it is asked.
    pub fn spawn_io<F>(&self, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        match &self.io {
            Some(io) => {
                io.spawn(task);
            }
            None => {
                tokio::spawn(task);
            }
        }
    }

    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// A peer for a seat the server gives a player who is not connected (a tournament
    /// game, or a pairing whose connection closed meanwhile): nothing is delivered; he
    /// takes his seat with `join` when he comes.
    pub fn empty_seat_peer(&self) -> Peer {
        let (tx, _) = crate::outbox::channel(1);
        Peer {
            conn: self.next_conn_id(),
            tx: tx.into(),
            kill: Default::default(),
            seated: Default::default(),
            reply: None,
        }
    }

    pub fn is_shutting_down(&self) -> bool {
        self.stop_games.is_cancelled() || self.draining.load(Ordering::SeqCst)
    }

    /// No new games start (shutting down).
    pub fn closed_for_new_games(&self) -> bool {
        self.draining.load(Ordering::SeqCst) || self.is_shutting_down()
    }

    /// Held by a game task while its game is being played.
    pub fn playing_guard(&self) -> PlayingGuard {
        self.playing.token()
    }

    /// Games being played.
    pub fn playing_count(&self) -> usize {
        self.playing.len()
    }

    /// A new live game.
    pub fn insert_game(&self, id: GameId, handle: GameHandle) {
        for seat in &handle.seats {
            let mut games = self.by_player.entry(seat.id.clone()).or_default();
            if !games.contains(&id) {
                games.push(id);
            }
        }
        self.games.insert(id, handle);
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    /// How many times a game was inserted or removed so far (see `changes`).
    pub fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// A game that is no longer live here.
    pub fn remove_game(&self, id: GameId) {
        let Some((_, handle)) = self.games.remove(&id) else {
            return;
        };
        self.changes.fetch_add(1, Ordering::SeqCst);
        for seat in &handle.seats {
            self.by_player.remove_if_mut(&seat.id, |_, games| {
                games.retain(|&g| g != id);
                games.is_empty()
            });
        }
    }

    /// Live games in which `player_id` has a seat.
    pub fn games_of(&self, player_id: &str) -> Vec<GameId> {
        let mut ids = self
            .by_player
            .get(player_id)
            .map(|g| g.clone())
            .unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// Up to `limit` live games with an id above `after`, by id; and whether more follow.
    pub fn summaries(&self, after: Option<GameId>, limit: usize) -> (Vec<GameSummary>, bool) {
        let mut ids: Vec<GameId> = self
            .games
            .iter()
            .filter(|g| g.code.is_none())
            .map(|g| *g.key())
            .filter(|&id| after.is_none_or(|after| id > after))
            .collect();
        ids.sort_unstable();
        let more = ids.len() > limit;
        let list = ids
            .into_iter()
            .take(limit)
            .filter_map(|id| {
                self.games
                    .get(&id)
                    .map(|g| g.summary.lock().expect("summary lock").clone())
            })
            .collect();
        (list, more)
    }

    pub fn game(&self, id: GameId) -> Option<GameHandle> {
        self.games.get(&id).map(|g| g.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str) -> Arc<PlayerRec> {
        Arc::new(PlayerRec {
            id: id.into(),
            name: id.into(),
            bot: false,
            bot_level: None,
            ratings: Default::default(),
        })
    }

    fn handle(red: &str, black: &str) -> GameHandle {
        let them = |id: &str| protocol::wire::PlayerRef {
            player_id: id.into(),
            name: id.into(),
            rating: None,
        };
        let settings = protocol::settings::Settings::default();
        GameHandle {
            tx: crate::outbox::channel(1).0,
            summary: Arc::new(Mutex::new(GameSummary {
                game: GameId::nil(),
                level: settings.level,
                settings,
                red: them(red),
                black: them(black),
                move_count: 0,
                watchers: 0,
                state: "playing".into(),
                rated: false,
                tc: None,
            })),
            seats: [player(red), player(black)],
            start: Instant::now(),
            code: None,
            tenure: Arc::new(crate::tenure::Tenure::forever()),
        }
    }

    #[tokio::test]
    async fn a_players_games_are_those_he_is_seated_in_until_they_are_removed() {
        let rooms = Rooms::new(Config::default(), Store::detached());
        let (a, b) = (GameId::from_u128(1), GameId::from_u128(2));
        rooms.insert_game(b, handle("ann", "bob"));
        rooms.insert_game(a, handle("cat", "ann"));
        assert_eq!(rooms.games_of("ann"), vec![a, b]);
        assert_eq!(rooms.games_of("bob"), vec![b]);
        assert_eq!(rooms.games_of("dan"), Vec::<GameId>::new());
        rooms.remove_game(b);
        assert_eq!(rooms.games_of("ann"), vec![a]);
        assert_eq!(rooms.games_of("bob"), Vec::<GameId>::new());
        rooms.remove_game(b);
        rooms.remove_game(a);
        assert!(rooms.games_of("ann").is_empty() && rooms.by_player.is_empty());
    }
}
