//! What the whole server shares: players, live games, the seek lobby, connection counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::ws::Utf8Bytes;
use dashmap::DashMap;
use protocol::settings::Settings;
use protocol::wire::{GameId, GameSummary, ServerMessage};
use tokio::sync::{mpsc, watch, Notify};

use crate::config::Config;
use crate::game::GameCmd;
use crate::limits::{AddressBudget, Connections};
use crate::lobby::Lobby;
use crate::store::{token_hash, PlayerRow, Store};

/// A registered player.
#[derive(Debug)]
pub struct PlayerRec {
    pub id: String,
    pub name: String,
    /// The computer (an in-process bot seat).
    pub bot: bool,
    /// A bot seat's level, as its opponent chose it (kept with the seat, so a rematch
    /// plays at the same level); `None`: the server's `--bot-level`.
    pub bot_level: Option<protocol::bot::BotLevel>,
    /// His ratings by time control, shared by every seat of his (see `ratings`).
    pub ratings: crate::ratings::SharedRatings,
}

/// Why a connection is being closed: websocket close code and reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseReason {
    pub code: u16,
    pub reason: &'static str,
}

/// Tells a connection to close, once.
#[derive(Default)]
pub struct Kill {
    reason: OnceLock<CloseReason>,
    notify: Notify,
}

impl Kill {
    pub fn kill(&self, code: u16, reason: &'static str) {
        if self.reason.set(CloseReason { code, reason }).is_ok() {
            self.notify.notify_waiters();
            self.notify.notify_one();
        }
    }
    pub fn reason(&self) -> Option<CloseReason> {
        self.reason.get().copied()
    }
    /// Resolves once [`Kill::kill`] was called.
    pub async fn killed(&self) -> CloseReason {
        loop {
            let notified = self.notify.notified();
            if let Some(r) = self.reason() {
                return r;
            }
            notified.await;
        }
    }
}

/// Close code for a client that stopped reading.
pub const CLOSE_SLOW: u16 = 1008;
/// Close reason for a watcher (with no seat anywhere) that did not keep up with a game.
pub const CLOSE_FELL_BEHIND: &str = "too slow: fell behind a watched game";

/// The sending side of one connection: a bounded queue of ready-made text frames. Nobody
/// ever waits on it: when it is full, the connection is cut off.
#[derive(Clone)]
pub struct Peer {
    pub conn: u64,
    pub tx: mpsc::Sender<Utf8Bytes>,
    pub kill: Arc<Kill>,
    pub seated: Arc<Seated>,
    /// Set on a copy of the peer handed along with one client message: what its answers
    /// echo (see [`Reply`]).
    pub reply: Option<Arc<Reply>>,
}

/// The client message that frames sent through a peer answer: an error carries its `id`
/// and its receipt instants; any other answer carries its `id`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    pub id: Option<protocol::wire::RequestId>,
    /// The server's wall clock when the message was received (ms since the Unix epoch).
    pub server_ms: u64,
    /// The game time at which it was received, when it concerns a live game.
    pub at_ms: Option<u64>,
}

/// What a connection shares with the games it sits in: those games, kept by the game
/// tasks (a seat can be given by another player's seek), so that the connection reports
/// its lag to exactly them without scanning every game; and its last measured round trip,
/// which a game publishes as soon as the seat joins.
#[derive(Default)]
pub struct Seated {
    games: std::sync::Mutex<Vec<GameId>>,
    /// Milliseconds plus one; 0 until measured.
    lag: std::sync::atomic::AtomicU64,
}

impl Seated {
    pub fn add(&self, game: GameId) {
        let mut games = self.games.lock().expect("seated lock");
        if !games.contains(&game) {
            games.push(game);
        }
    }

    pub fn remove(&self, game: GameId) {
        self.games
            .lock()
            .expect("seated lock")
            .retain(|&g| g != game);
    }

    pub fn list(&self) -> Vec<GameId> {
        self.games.lock().expect("seated lock").clone()
    }

    pub fn set_lag(&self, rtt_ms: u64) {
        self.lag.store(
            rtt_ms.saturating_add(1),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    pub fn lag(&self) -> Option<u64> {
        let v = self.lag.load(std::sync::atomic::Ordering::Relaxed);
        v.checked_sub(1)
    }
}

impl Peer {
    /// Queues a frame; false if the connection is gone or was cut off for not reading.
    pub fn send(&self, text: Utf8Bytes) -> bool {
        match self.tx.try_send(text) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.kill.kill(
                    CLOSE_SLOW,
                    "outbound queue full: the client stopped reading",
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    pub fn send_msg(&self, msg: &ServerMessage) -> bool {
        match &self.reply {
            Some(reply) => self.send(encode_reply(msg, reply)),
            None => self.send(encode(msg)),
        }
    }

    /// This peer, for the answers to one client message.
    pub fn replying(&self, reply: Option<Arc<Reply>>) -> Peer {
        Peer {
            reply,
            ..self.clone()
        }
    }

    /// Queues a frame of a game this connection watches, unless `backlog` frames already
    /// wait: the rest of the queue is kept for the connection's own traffic (its seats,
    /// its answers), so that other people's games can never fill it.
    pub fn send_watched(&self, text: Utf8Bytes, backlog: usize) -> Delivery {
        if self.is_gone() {
            return Delivery::Gone;
        }
        let waiting = self.tx.max_capacity() - self.tx.capacity();
        if waiting >= backlog.min(self.tx.max_capacity()) {
            return Delivery::Behind;
        }
        if self.send(text) {
            Delivery::Sent
        } else {
            Delivery::Gone
        }
    }

    /// Frames this peer can still be sent without filling its queue; for a game it only
    /// watches (`watch_backlog` given), without passing that backlog.
    pub fn room(&self, watch_backlog: Option<usize>) -> usize {
        let free = self.tx.capacity();
        match watch_backlog {
            Some(backlog) => {
                let waiting = self.tx.max_capacity() - free;
                free.min(backlog.saturating_sub(waiting))
            }
            None => free,
        }
    }

    pub fn is_gone(&self) -> bool {
        self.tx.is_closed() || self.kill.reason().is_some()
    }
}

/// Serialises an answer to one client message: an error gets its id and receipt
/// instants, any other message its id.
pub fn encode_reply(msg: &ServerMessage, reply: &Reply) -> Utf8Bytes {
    match msg {
        ServerMessage::Error {
            code,
            message,
            game,
            id,
            server_ms,
            at_ms,
        } => encode(&ServerMessage::Error {
            code: code.clone(),
            message: message.clone(),
            game: *game,
            id: id.clone().or_else(|| reply.id.clone()),
            server_ms: server_ms.or(Some(reply.server_ms)),
            at_ms: at_ms.or(game.and(reply.at_ms)),
        }),
        _ => match &reply.id {
            Some(id) => with_id(msg, id),
            None => encode(msg),
        },
    }
}

/// A frame with `"id"` added beside its `"type"`.
pub fn with_id(msg: &impl serde::Serialize, id: &protocol::wire::RequestId) -> Utf8Bytes {
    let mut value = serde_json::to_value(msg).expect("server messages always serialise");
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "id".into(),
            serde_json::to_value(id).expect("an id serialises"),
        );
    }
    serde_json::to_string(&value)
        .expect("server messages always serialise")
        .into()
}

/// What became of a frame for a watcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    Sent,
    /// Too many of the connection's frames wait: it does not keep up.
    Behind,
    /// The connection is gone or was cut off.
    Gone,
}

/// Serialises a message once, for any number of sockets.
pub fn encode(msg: &ServerMessage) -> Utf8Bytes {
    let mut text = serde_json::to_string(msg).expect("server messages always serialise");
    // The buffer grew by doubling; frames are kept (game history, queues), so they keep
    // only their own bytes.
    text.shrink_to_fit();
    text.into()
}

/// Why a new player was not registered.
#[derive(Debug, PartialEq, Eq)]
pub enum Unregistered {
    /// Another player has the name, or one equal but for case.
    NameTaken,
    StorageUnavailable,
}

/// A live game as the rest of the server sees it.
#[derive(Clone)]
pub struct GameHandle {
    pub tx: mpsc::Sender<GameCmd>,
    pub summary: Arc<Mutex<GameSummary>>,
    pub seats: [Arc<PlayerRec>; 2],
    /// Game time 0: a message's receipt in game time is measured from it.
    pub start: tokio::time::Instant,
    /// The code of a private game (and of its rematches): not listed; its players follow
    /// it, and a watcher only with this code (`watch_code`).
    pub code: Option<String>,
}

/// A player waiting for an opponent with the same settings.
pub struct Seeker {
    pub player: Arc<PlayerRec>,
    pub peer: Peer,
}

/// Per-address budgets (see [`Config`]).
pub struct Budgets {
    pub messages: AddressBudget,
    pub connections: AddressBudget,
    pub registrations: AddressBudget,
    pub http: AddressBudget,
}

impl Budgets {
    fn new(config: &Config) -> Budgets {
        Budgets {
            messages: AddressBudget::per_second(config.ip_rate_per_sec, config.ip_rate_burst),
            connections: AddressBudget::per_minute(config.ip_conn_per_min, config.ip_conn_burst),
            registrations: AddressBudget::per_minute(
                config.ip_register_per_min,
                config.ip_register_burst,
            ),
            http: AddressBudget::per_second(config.http_rate_per_sec, config.http_rate_burst),
        }
    }

    /// Forgets the addresses whose budgets are full again.
    pub fn forget_idle(&self) {
        for b in [
            &self.messages,
            &self.connections,
            &self.registrations,
            &self.http,
        ] {
            b.forget_idle();
        }
    }
}

pub struct Hub {
    pub config: Config,
    pub store: Store,
    /// By the hash of their secret token: players seen since the start (the others are
    /// in the store).
    players: DashMap<String, Arc<PlayerRec>>,
    /// The cache size at which idle players are next forgotten.
    next_forget: std::sync::atomic::AtomicUsize,
    pub games: DashMap<GameId, GameHandle>,
    pub(crate) lobby: Mutex<Lobby>,
    next_conn: AtomicU64,
    pub conns: Connections,
    /// What each client address may do, over all its connections.
    pub budgets: Budgets,
    /// Tells connections to close (after the games were aborted).
    pub shutdown: watch::Receiver<bool>,
    /// Tells game tasks to abort.
    pub stop_games: watch::Receiver<bool>,
    /// Cloned into every game task; taken out at shutdown to wait for the games.
    games_alive: Mutex<Option<mpsc::Sender<()>>>,
    /// Held by every task through its `Arc<Hub>`; `run` waits until all are gone.
    _alive: mpsc::Sender<()>,
    /// The computer, who plays anyone at once.
    pub bot: Arc<PlayerRec>,
    pub bot_stats: crate::bot::BotStats,
    /// Games being played (not over): shutdown drains them.
    playing: Arc<(std::sync::atomic::AtomicUsize, Notify)>,
    /// Shutting down: no new games; live ones may still finish.
    draining: std::sync::atomic::AtomicBool,
    pub metrics: crate::metrics::Metrics,
    /// Precise wake-ups for game deadlines (`None`: tokio's timer, as on a paused clock).
    pub alarms: Option<crate::alarm::Alarms>,
    /// Where finished games are published (ratings, tournaments).
    pub events: crate::events::GameEvents,
    /// The tournaments not over.
    pub tournaments: crate::tournament::Tournaments,
}

/// Counts a game as being played while held.
pub struct PlayingGuard(Arc<(std::sync::atomic::AtomicUsize, Notify)>);

impl Drop for PlayingGuard {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::SeqCst);
        self.0 .1.notify_waiters();
    }
}

impl Hub {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: Config,
        store: Store,
        shutdown: watch::Receiver<bool>,
        stop_games: watch::Receiver<bool>,
        games_alive: mpsc::Sender<()>,
        alive: mpsc::Sender<()>,
    ) -> Hub {
        let bot = Arc::new(PlayerRec {
            id: crate::bot::BOT_ID.into(),
            name: crate::bot::BOT_NAME.into(),
            bot: true,
            bot_level: None,
            ratings: Default::default(),
        });
        store.submit(crate::store::Write::Player(
            PlayerRow {
                id: bot.id.clone(),
                name: bot.name.clone(),
                // Nobody can present a token with this hash.
                token_hash: format!("bot:{}", uuid::Uuid::new_v4().simple()),
                created_ms: crate::connection::unix_ms(),
                is_bot: true,
            },
            None,
        ));
        let alarms = if config.precise_timer {
            crate::alarm::Alarms::start()
                .inspect_err(|e| tracing::warn!(error = %e, "no alarm thread: tokio's timer"))
                .ok()
        } else {
            None
        };
        let budgets = Budgets::new(&config);
        Hub {
            events: Default::default(),
            tournaments: Default::default(),
            alarms,
            bot,
            bot_stats: crate::bot::BotStats::default(),
            playing: Arc::default(),
            draining: Default::default(),
            metrics: Default::default(),
            stop_games,
            games_alive: Mutex::new(Some(games_alive)),
            config,
            store,
            players: DashMap::new(),
            next_forget: Default::default(),
            games: DashMap::new(),
            lobby: Mutex::new(Lobby::default()),
            next_conn: AtomicU64::new(1),
            conns: Connections::default(),
            budgets,
            shutdown,
            _alive: alive,
        }
    }

    /// A token held by a game task while it runs.
    pub fn game_alive_token(&self) -> Option<mpsc::Sender<()>> {
        self.games_alive.lock().expect("alive lock").clone()
    }

    /// Stops handing out game tokens; the caller waits for the last one to go.
    pub fn stop_counting_games(&self) {
        self.games_alive.lock().expect("alive lock").take();
    }

    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    pub fn is_shutting_down(&self) -> bool {
        *self.stop_games.borrow() || self.draining.load(Ordering::SeqCst)
    }

    /// A game against the computer, at once (seats drawn at random).
    pub fn play_bot(
        self: &Arc<Self>,
        settings: Settings,
        level: Option<protocol::bot::BotLevel>,
        rated: Option<bool>,
        seeker: Seeker,
    ) -> GameId {
        self.cancel_seek(seeker.peer.conn);
        // The same player (id, name) as every bot seat, at the level asked for.
        let player = match level {
            None => self.bot.clone(),
            Some(level) => Arc::new(PlayerRec {
                id: self.bot.id.clone(),
                name: self.bot.name.clone(),
                bot: true,
                bot_level: Some(level),
                ratings: self.bot.ratings.clone(),
            }),
        };
        let bot = Seeker {
            peer: crate::bot::seat_peer(self, &player),
            player,
        };
        self.start_game(settings, rated, [seeker, bot], crate::lobby::Seats::Random)
    }

    /// No new games start (shutting down).
    pub fn closed_for_new_games(&self) -> bool {
        self.draining.load(Ordering::SeqCst) || self.is_shutting_down()
    }

    /// Held by a game task while its game is being played.
    pub fn playing_guard(&self) -> PlayingGuard {
        self.playing.0.fetch_add(1, Ordering::SeqCst);
        PlayingGuard(self.playing.clone())
    }

    /// Games being played.
    pub fn playing_count(&self) -> usize {
        self.playing.0.load(Ordering::SeqCst)
    }

    /// Shutdown, first part: no new games; seeks and challenges are withdrawn; every
    /// client is told; then waits until the live games are over or `drain` has passed.
    pub async fn drain(&self, drain: std::time::Duration) {
        self.draining.store(true, Ordering::SeqCst);
        self.cancel_all_seeks();
        self.close_all_challenges();
        self.broadcast(&protocol::wire::LobbyMessage::ShuttingDown {
            drain_ms: drain.as_millis() as u64,
            server_ms: crate::connection::unix_ms(),
        });
        let deadline = tokio::time::Instant::now() + drain;
        loop {
            let ended = self.playing.1.notified();
            let left = self.playing_count();
            if left == 0 {
                tracing::info!("drained: no game is being played");
                return;
            }
            tokio::select! {
                _ = ended => {}
                _ = tokio::time::sleep_until(deadline) => {
                    tracing::info!(games = left, "drain period over");
                    return;
                }
            }
        }
    }

    /// Registers a new player under a fresh secret token, once he is stored.
    pub async fn register(&self, name: String) -> Result<(String, Arc<PlayerRec>), Unregistered> {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let hash = token_hash(&token);
        let player = Arc::new(PlayerRec {
            // 128 bits (UUID v7: time-ordered, 74 random bits), so that ids never collide.
            id: uuid::Uuid::now_v7().simple().to_string(),
            name,
            bot: false,
            bot_level: None,
            ratings: Default::default(),
        });
        let row = PlayerRow {
            id: player.id.clone(),
            name: player.name.clone(),
            token_hash: hash.clone(),
            created_ms: crate::connection::unix_ms(),
            is_bot: false,
        };
        match self.store.register_player(&row).await {
            Ok(true) => {}
            Ok(false) => return Err(Unregistered::NameTaken),
            Err(e) => {
                tracing::error!(error = %e, "storing a new player failed");
                return Err(Unregistered::StorageUnavailable);
            }
        }
        self.remember(hash, player.clone());
        Ok((token, player))
    }

    /// The player with this token: seen since the start, or stored.
    pub async fn player_by_token(&self, token: &str) -> anyhow::Result<Option<Arc<PlayerRec>>> {
        let hash = token_hash(token);
        if let Some(p) = self.players.get(&hash) {
            return Ok(Some(p.clone()));
        }
        let Some(row) = self.store.player_by_token_hash(&hash).await? else {
            return Ok(None);
        };
        self.cache_row(row).await.map(Some)
    }

    /// The player with this id: the bot, seen since the start, or stored (and then kept
    /// like a player who said hello, so that every seat of his shares one record).
    pub async fn player_by_id(&self, id: &str) -> anyhow::Result<Option<Arc<PlayerRec>>> {
        if id == self.bot.id {
            return Ok(Some(self.bot.clone()));
        }
        if let Some(p) = self.players.iter().find(|p| p.id == id) {
            return Ok(Some(p.clone()));
        }
        let Some(row) = self.store.player_by_id(id).await? else {
            return Ok(None);
        };
        self.cache_row(row).await.map(Some)
    }

    /// A stored player, kept in the cache under his token's hash.
    async fn cache_row(&self, row: PlayerRow) -> anyhow::Result<Arc<PlayerRec>> {
        let hash = row.token_hash.clone();
        let ratings = self.store.ratings_of(&row.id).await?;
        let player = self
            .players
            .entry(hash.clone())
            .or_insert_with(|| {
                Arc::new(PlayerRec {
                    id: row.id,
                    name: row.name,
                    bot: row.is_bot,
                    bot_level: None,
                    ratings: Arc::new(Mutex::new(ratings)),
                })
            })
            .clone();
        self.forget_idle_players();
        Ok(player)
    }

    /// A peer for a seat the server gives a player who is not online (a tournament
    /// game): nothing is delivered; he takes his seat with `join` when he comes.
    pub fn empty_seat_peer(&self) -> Peer {
        let (tx, _) = mpsc::channel(1);
        Peer {
            conn: self.next_conn_id(),
            tx,
            kill: Arc::default(),
            seated: Arc::default(),
            reply: None,
        }
    }

    fn remember(&self, hash: String, player: Arc<PlayerRec>) {
        self.players.insert(hash, player);
        self.forget_idle_players();
    }

    /// Over `max_players_cached`, forgets the players nobody else holds (not online, not
    /// seated, not waiting): the database has them. Runs again only once the cache has
    /// grown by an eighth of the bound, so a cache full of players in use costs one pass
    /// per so many new ones, not one per hello.
    fn forget_idle_players(&self) {
        let max = self.config.max_players_cached;
        let len = self.players.len();
        if len <= max || len < self.next_forget.load(Ordering::Relaxed) {
            return;
        }
        self.players.retain(|_, p| Arc::strong_count(p) > 1);
        self.players.shrink_to_fit();
        let left = self.players.len();
        self.next_forget
            .store(left.max(max) + max / 8 + 1, Ordering::Relaxed);
        tracing::debug!(before = len, after = left, "forgot idle players");
    }

    /// Players kept in memory.
    pub fn players_cached(&self) -> usize {
        self.players.len()
    }

    /// Live games in which `player_id` has a seat.
    pub fn games_of(&self, player_id: &str) -> Vec<GameId> {
        let mut ids: Vec<GameId> = self
            .games
            .iter()
            .filter(|g| g.seats.iter().any(|s| s.id == player_id))
            .map(|g| *g.key())
            .collect();
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
