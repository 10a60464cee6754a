//! What the whole server shares: players, the lobby, tournaments, connection counts and
//! budgets, over the live games ([`Rooms`]). The layer above the games and the lobby's
//! pure state; connections and HTTP sit on top of it.

mod challenges;
pub mod cluster_lobby;
mod lobby;
mod matching;
pub mod metrics;
pub mod tournament;

pub use matching::spawn_sweeper;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use protocol::settings::Settings;
use protocol::wire::GameId;

use crate::config::Config;
use crate::limits::{AddressBudget, Connections};
use crate::lobby::Lobby;
use crate::peer::{PlayerRec, Seeker};
use crate::rooms::Rooms;
use crate::store::{token_hash, PlayerRow, Store};

/// Why a new player was not registered.
#[derive(Debug, PartialEq, Eq)]
pub enum Unregistered {
    /// Another player has the name, or one equal but for case.
    NameTaken,
    StorageUnavailable,
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
            messages: AddressBudget::per_second(config.ip_rate_per_sec, config.ip_rate_burst)
                .sparing(config),
            connections: AddressBudget::per_minute(config.ip_conn_per_min, config.ip_conn_burst)
                .sparing(config),
            registrations: AddressBudget::per_minute(
                config.ip_register_per_min,
                config.ip_register_burst,
            )
            .sparing(config),
            http: AddressBudget::per_second(config.http_rate_per_sec, config.http_rate_burst)
                .sparing(config),
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
    /// The live games and what they share (configuration, store, metrics...): the layer
    /// below. `hub.config`, `hub.store`, `hub.games`... reach it through `Deref`.
    pub rooms: Arc<Rooms>,
    /// By the hash of their secret token: players seen since the start (the others are
    /// in the store).
    players: DashMap<String, Arc<PlayerRec>>,
    /// The cache size at which idle players are next forgotten.
    next_forget: std::sync::atomic::AtomicUsize,
    pub(crate) lobby: Mutex<Lobby>,
    pub conns: Connections,
    /// What each client address may do, over all its connections.
    pub budgets: Budgets,
    /// The computer, who plays anyone at once.
    pub bot: Arc<PlayerRec>,
    /// The tournaments not over.
    pub tournaments: crate::hub::tournament::Tournaments,
    /// The other nodes (`--nats`): games owned elsewhere are reached through it.
    pub cluster: std::sync::OnceLock<Arc<crate::cluster::Cluster>>,
    /// The lobby shared by the nodes (`--nats`), see [`cluster_lobby`].
    pub cluster_lobby: std::sync::OnceLock<Arc<crate::cluster::lobby::ClusterLobby>>,
}

impl std::ops::Deref for Hub {
    type Target = Rooms;
    fn deref(&self) -> &Rooms {
        &self.rooms
    }
}

impl Hub {
    #[allow(clippy::too_many_arguments)]
    pub fn new(config: Config, store: Store) -> Hub {
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
                created_ms: crate::clock::unix_ms(),
                is_bot: true,
            },
            None,
        ));
        let budgets = Budgets::new(&config);
        Hub {
            rooms: Arc::new(Rooms::new(config, store)),
            tournaments: Default::default(),
            cluster: Default::default(),
            cluster_lobby: Default::default(),
            bot,
            players: DashMap::new(),
            next_forget: Default::default(),
            lobby: Mutex::new(Lobby::default()),
            conns: Connections::default(),
            budgets,
        }
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
            peer: crate::bot::seat_peer(&self.rooms, &player),
            player,
        };
        self.start_game(settings, rated, [seeker, bot], crate::lobby::Seats::Random)
    }

    /// Whether a game not stored yet is being played: `Some` with the node that runs it on
    /// several nodes (this one or, by the ownership bucket, another), `Some(None)` on a
    /// single node. A private game of this node is not (its id says nothing to a stranger);
    /// one of another node is, the bucket knowing only its owner.
    pub async fn live_on(&self, id: GameId) -> Option<Option<String>> {
        let cluster = self.cluster.get();
        if let Some(h) = self.game(id) {
            // A private game is not there for strangers (the protocol's `watch` says so).
            return h.code.is_none().then(|| cluster.map(|c| c.node.clone()));
        }
        Some(Some(cluster?.owner(id).await?))
    }

    /// Shutdown, first part: no new games; seeks and challenges are withdrawn; every
    /// client is told; then waits until the live games are over or `drain` has passed.
    pub async fn drain(&self, drain: std::time::Duration) {
        self.draining.store(true, Ordering::SeqCst);
        // Several nodes: another takes the lobby at once; the seekers of the others are
        // told by their own nodes, not `shutting_down` by this one.
        if let Some(lobby) = self.cluster_lobby.get() {
            lobby.resign().await;
        }
        self.cancel_all_seeks();
        self.close_all_challenges();
        self.announce_shutdown(drain.as_millis() as u64);
        // No game starts any more: once the last one being played ends, it is drained.
        self.playing.close();
        match tokio::time::timeout(drain, self.playing.wait()).await {
            Ok(()) => tracing::info!("drained: no game is being played"),
            Err(_) => tracing::info!(games = self.playing_count(), "drain period over"),
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
            created_ms: crate::clock::unix_ms(),
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

    /// A rating another node's game moved: set on the player if this node holds him and
    /// its rating here counts fewer games (a message that comes after a newer one changes
    /// nothing). A scan of the cache: once per player of a rated game that ends.
    pub fn rating_moved(
        &self,
        player_id: &str,
        tc: protocol::rating::TimeControl,
        rated: crate::ratings::Rated,
    ) {
        let set = |p: &PlayerRec| {
            let mut ratings = p.ratings.lock().expect("ratings lock");
            if ratings.get(tc).games < rated.games {
                ratings.by_tc.insert(tc, rated);
            }
        };
        if player_id == self.bot.id {
            set(&self.bot);
        } else if let Some(p) = self.players.iter().find(|p| p.id == player_id) {
            set(&p);
        }
    }

    /// Players kept in memory.
    pub fn players_cached(&self) -> usize {
        self.players.len()
    }
}
