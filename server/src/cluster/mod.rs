//! Several nodes over NATS (issue 18): one PostgreSQL database, one NATS server with
//! JetStream, any number of nodes. Absent (`--nats` not given), nothing here runs.
//!
//! - **Ownership.** Each live game is run by exactly one node (its game task, unchanged).
//!   The owner is recorded in the JetStream key-value bucket [`BUCKET`] (key: the game
//!   id; value: the node id). A key is created with `create` (a compare-and-set on "no
//!   key") and changes owner only by a compare-and-set on its revision, once the owner's
//!   lease lapsed. The lease is the node's, not the game's: its key in [`NODES_BUCKET`]
//!   (`max_age`: the lease), renewed every third of a lease, holds all its games (see
//!   `lease` and `takeover`). Why the KV rather than PostgreSQL advisory locks:
//!   an advisory lock belongs to a database session, so it needs one pinned connection
//!   per node held for ever, and a node's death is noticed only when PostgreSQL notices
//!   the socket is dead (TCP keep-alive: minutes by default), while a lease expires at a
//!   time we choose; the KV also tells every node who owns a game (to route to it)
//!   without a query, and keeps ownership traffic off the database that stores moves.
//! - **Playing and watching a game owned elsewhere.** A node that has no game G sends
//!   its client's commands to `tamsk.game.<G>.cmd` (request/reply; only the owner is
//!   subscribed, so "no responders" means nobody runs G). The owner represents that
//!   client by a proxy [`Peer`] in the game task (so seats, presence, snapshots,
//!   resumption with `after_seq`, watcher counts and answers are exactly those of a
//!   local client); what the game queues for that proxy alone (answers, snapshots, missed
//!   events) is published on `tamsk.conn.<node>.<conn>.f`, to which the client's node
//!   subscribed before its first request; what is for everyone is published once per
//!   game on `tamsk.game.<G>.ev` and fanned out by each node ([`fanout`]). On the lobby's
//!   leader, a client known to the lobby already has a peer there, its relay (see
//!   [`lobby`]): the relay is its proxy, and its own frames go through the lobby's
//!   subject instead.
//! - **Remote subscriptions.** A game skips a subscriber's peer for what is for everyone
//!   only when the subscription says so (`GameCmd::Subscribe::remote`), which is set for
//!   the joins and watches that come through `Cluster::command`: their node subscribed
//!   to the stream before asking. A game the owner starts by itself for a remote client
//!   (the lobby's pairing, an accepted challenge, a rematch) seats its relay or proxy as
//!   a local peer, so its first frames (the snapshot, anything right after) go to that
//!   client alone; its node, on that snapshot, subscribes to the stream and asks for a
//!   silent resumption after the snapshot's seq (`fanout`'s adoption), which makes the
//!   subscription remote. From then on it gets the game's events from the stream only.
//! - **Actions travel one way.** Joins, watches and the like are requests (the owner
//!   answers each: accepted or refused); an action (and a lag report) is published
//!   without waiting, as a move would be sent to a local game: a move costs one NATS
//!   message to the owner instead of two, and the client's next command does not wait
//!   for the answer to the last. The owner tells only a refusal, as an error frame on
//!   the connection's subject. An action sent while nobody serves its game (its owner
//!   just died) carries a reply subject, `tamsk.conn.<node>.<conn>.unserved.<game>`, on
//!   which NATS itself answers "no responders": the client is told `game_moving` (the
//!   database still has the game live: another node takes it over) or `unknown_game`,
//!   as for a request.
//! - **Time of remote actions.** Nodes' clocks are not shared: a command carries its age
//!   (time since its frame was read, on the client's node) and the owner dates it that
//!   much before its receipt, capped at [`AGE_CAP`]. Lag measurements travel the same way.
//! - **Failover.** Every node scans the games the database says are live; one that runs
//!   nowhere here and whose owner's lease lapsed (its node died) is claimed with a
//!   compare-and-set (one node wins) and rebuilt from its journal by [`game::restore`]:
//!   game time ran on meanwhile, and its players are away with a fresh grace until they
//!   come back (to any node). See `takeover`.
//! - **The lobby** is one for all nodes, kept by an elected leader: see [`lobby`].

pub mod lobby;

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::kv;
use dashmap::DashMap;
use protocol::game::Action;
use protocol::wire::{GameId, Seq};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::codec::Reply;
use crate::peer::{Peer, PlayerRec};
use crate::rooms::Rooms;

mod fence;
mod lease;
mod nodes;
mod takeover;
pub use nodes::NODES_BUCKET;
pub use takeover::KEY_AGE as OWNER_KEY_AGE;
mod codes;
mod fanout;
mod follow;
mod owner;
mod ratings;
mod results;

/// Commands of one local connection waiting for the owners of remote games: its rate
/// limit keeps it far below this; a client that fills it anyway is cut off.
const FOLLOW_QUEUE: usize = 64;

/// Tries of a start-up step against JetStream before the node gives up (see [`at_start`]).
const START_ATTEMPTS: u32 = 6;
/// How long one such try may take.
const START_TRY: Duration = Duration::from_secs(2);

/// Runs a start-up step against JetStream (opening a bucket, taking this node's key),
/// each try cut short at [`START_TRY`] and tried again after a growing pause: a request
/// that goes unanswered (seen in the tests with two nodes starting at once on a busy
/// machine: the first request lost, the next answered at once) would otherwise hold the
/// node, which serves nobody yet, for the NATS client's whole request timeout (10 s).
pub(super) async fn at_start<T, F, Fut>(what: &str, mut step: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let mut pause = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        let tried = tokio::time::timeout(START_TRY, step())
            .await
            .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {START_TRY:?}")));
        match tried {
            Err(e) if attempt < START_ATTEMPTS => {
                tracing::warn!(error = %e, attempt, "{what}: not yet, trying again");
                tokio::time::sleep(pause).await;
                pause *= 2;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// The most a command's age may move it back in time at the owner: as far as lag
/// compensation itself goes, so a node cannot date actions earlier than that.
pub const AGE_CAP: Duration = Duration::from_millis(protocol::lag::LAG_MAX_MS);

/// The key-value bucket of the owners of live games.
pub const BUCKET: &str = "tamsk_game_owners";

/// Finds a player by id (the hub's cache, then the database).
pub type Resolve = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<Arc<PlayerRec>>> + Send>> + Send + Sync,
>;

/// What a client on another node asks of a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Op {
    Join {
        after_seq: Option<Seq>,
    },
    Watch {
        after_seq: Option<Seq>,
        /// The code of a private game, which only its players and those who have its
        /// code may watch (`watch_code`, see `codes`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    Leave {
        answer: bool,
    },
    Act {
        action: Action,
        /// The client's `seq` (an older node sends none: not checked).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seen: Option<protocol::wire::Seq>,
    },
    Claim,
    /// The client's measured round trip (for its seat's lag compensation).
    Lag {
        rtt_ms: u64,
    },
    Rematch {
        accept: bool,
    },
    /// The client's connection closed.
    Closed,
}

/// A command sent to a game's owner.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RemoteCmd {
    pub node: String,
    pub conn: u64,
    pub player: Option<String>,
    pub reply: Option<Reply>,
    pub op: Op,
    /// Microseconds since the client's node read the frame (see [`AGE_CAP`]).
    #[serde(default)]
    pub age_us: u64,
}

impl Op {
    /// Sent without waiting for an answer (actions and lag reports): the owner tells
    /// only the refusal of an action, as an error frame on the connection's subject, and
    /// NATS answers an action nobody serves on [`unserved_subject`] (see `follow`).
    fn oneway(&self) -> bool {
        matches!(self, Op::Act { .. } | Op::Lag { .. })
    }
}

impl Cluster {
    /// A command of this node's connection `conn`, for no player, answered to no request
    /// (the callers fill in what they have).
    fn remote_cmd(&self, conn: u64, op: Op) -> RemoteCmd {
        RemoteCmd {
            node: self.node.clone(),
            conn,
            player: None,
            reply: None,
            op,
            age_us: 0,
        }
    }
}

/// A command of a local connection on its way to a game's owner.
pub(crate) struct Queued {
    game: GameId,
    cmd: RemoteCmd,
    /// When its frame was read (its age is measured when it is sent).
    read: Option<Instant>,
    /// Sent by this node to repair a gap in the game's stream.
    repair: bool,
}

/// The owner's answer: accepted (what follows comes on the connection's subject), or
/// refused with an error code and message.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Answer {
    pub error: Option<(String, String)>,
    /// The game time at which the owner dated the command, for a refusal about a game
    /// the client may know of (an error about a live game carries it, as on one node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
}

impl Answer {
    /// Refused, with no game time.
    pub fn refused(code: &str, message: String) -> Answer {
        Answer {
            error: Some((code.into(), message)),
            at_ms: None,
        }
    }
}

struct Owned {
    revision: u64,
    /// When its key was last written (again every `takeover::KEY_REWRITE`).
    refreshed: Instant,
    server: tokio::task::JoinHandle<()>,
    /// The game task's hold, extended at each renewal of the node's lease (see `lease`).
    tenure: Arc<crate::tenure::Tenure>,
}

pub struct Cluster {
    pub node: String,
    client: async_nats::Client,
    kv: kv::Store,
    rooms: Arc<Rooms>,
    lease: Duration,
    resolve: Resolve,
    /// Games this node owns.
    owned: DashMap<GameId, Owned>,
    /// Local games whose key another node holds (never expected; not claimed again).
    foreign: DashMap<GameId, ()>,
    /// Owner side: the proxies of clients of other nodes, by (node, conn).
    proxies: DashMap<(String, u64), Peer>,
    /// Client side: the command queue of each local connection that follows a game
    /// owned elsewhere.
    /// The nodes' liveness bucket (see `nodes`), which holds this node's lease.
    nodes: kv::Store,
    /// This node's lease (see `lease`).
    lease_state: lease::NodeLease,
    /// Owner side: the games each proxy joined or watches, by (node, conn).
    following: DashMap<(String, u64), HashSet<GameId>>,
    followers: DashMap<u64, mpsc::Sender<Queued>>,
    /// Client side: the remote games this node follows for its clients.
    fans: fanout::Fans,
    /// The owners of other nodes' games, as last read (see `nodes::OwnersSeen`).
    owners_seen: nodes::OwnersSeen,
    /// Held while claiming new games, by the lease loop or at once by [`Cluster::claim`].
    claims: tokio::sync::Mutex<()>,
    /// Owner side: the one publication of each game's frames for the other nodes.
    relay: Arc<fanout::OwnerRelay>,
    /// Counters for `/metrics`.
    pub stats: ClusterStats,
}

/// What a node of a cluster counts, for `/metrics` (`tamsk_cluster_*`).
#[derive(Default)]
pub struct ClusterStats {
    /// Games this node took over from their journal (their owner's lease ran out).
    pub takeovers: std::sync::atomic::AtomicU64,
    /// Resumptions asked at a game's owner for a client of this node that missed frames of
    /// the game's stream (a gap).
    pub repairs: std::sync::atomic::AtomicU64,
    /// Commands of this node's clients answered `game_moving` (the game's node was gone).
    pub moving: std::sync::atomic::AtomicU64,
    /// Players' ratings moved by other nodes' games, received (see `ratings`).
    pub ratings_received: std::sync::atomic::AtomicU64,
}

impl Cluster {
    /// Frames of this node's games not published for the other nodes (the publication
    /// queue was full); the other nodes repair the gaps.
    pub fn frames_dropped(&self) -> u64 {
        self.relay.lost.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn cmd_subject(game: GameId) -> String {
    format!("tamsk.game.{game}.cmd")
}

/// What the owner sends one client of another node: frames for its socket.
fn conn_subject(node: &str, conn: u64) -> String {
    format!("tamsk.conn.{node}.{conn}.f")
}

/// Where NATS says that nobody serves `game` when a one-way action for it was sent (a
/// "no responders" status, which the server sends to a message's reply subject).
fn unserved_subject(node: &str, conn: u64, game: GameId) -> String {
    format!("tamsk.conn.{node}.{conn}.unserved.{game}")
}

/// Everything for one client of this node: [`conn_subject`] and [`unserved_subject`].
fn conn_subjects(node: &str, conn: u64) -> String {
    format!("tamsk.conn.{node}.{conn}.>")
}

impl Cluster {
    /// Connects to NATS, opens (or creates) the owners' bucket and starts the lease and
    /// takeover loop, which ends when the games are stopped.
    pub async fn start(
        rooms: Arc<Rooms>,
        nats_url: &str,
        resolve: Resolve,
    ) -> anyhow::Result<Arc<Cluster>> {
        let node = rooms
            .config
            .node_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        let lease = crate::tenure::lease_of(&rooms.config);
        // Reconnection waits double from 1 ms as in async-nats, but up to a sixth of a
        // lease instead of 4 s: once NATS is back, a node renews its lease and its games
        // change hands within moments (seen: 3 s after a 5-s outage with the default).
        let most = lease / 6;
        let client = async_nats::ConnectOptions::new()
            .reconnect_delay_callback(move |attempts| {
                let exp = u32::try_from(attempts.saturating_sub(1)).unwrap_or(u32::MAX);
                Duration::from_millis(2_u64.saturating_pow(exp)).min(most)
            })
            .name(format!("tamsk-{node}"))
            .connect(nats_url)
            .await
            .map_err(|e| anyhow::anyhow!("NATS at {nats_url}: {e}"))?;
        let js = async_nats::jetstream::new(client.clone());
        let kv = at_start(BUCKET, || {
            nodes::open_bucket(&js, BUCKET, takeover::KEY_AGE)
        })
        .await?;
        let nodes = at_start(nodes::NODES_BUCKET, || nodes::bucket(&js, lease)).await?;
        let relay = fanout::OwnerRelay::start(client.clone());
        // The games hand it what they publish once for the other nodes.
        if rooms.relay.set(relay.clone()).is_err() {
            anyhow::bail!("this node already joined a cluster");
        }
        let cluster = Arc::new(Cluster {
            node,
            client,
            kv,
            rooms,
            lease,
            resolve,
            owned: DashMap::new(),
            foreign: DashMap::new(),
            proxies: DashMap::new(),
            followers: DashMap::new(),
            nodes,
            following: DashMap::new(),
            fans: Default::default(),
            owners_seen: Default::default(),
            claims: Default::default(),
            lease_state: Default::default(),
            relay,
            stats: Default::default(),
        });
        // Alive before it serves anyone: a node that saw one of its clients first, and
        // then no key for it, would take it for dead and drop that client's proxies.
        cluster
            .take_node_key_at_start()
            .await
            .map_err(|e| anyhow::anyhow!("this node's key in {NODES_BUCKET}: {e}"))?;
        tracing::info!(node = %cluster.node, lease_ms = lease.as_millis() as u64, "joined the cluster");
        cluster.serve_codes().await?;
        tokio::spawn(cluster.clone().lease_loop());
        tokio::spawn(cluster.clone().renew_loop());
        Ok(cluster)
    }

    /// Who owns `game` now, by the key-value bucket.
    pub async fn owner(&self, game: GameId) -> Option<String> {
        let entry = self.kv.entry(game.to_string()).await.ok()??;
        if entry.operation != kv::Operation::Put {
            return None;
        }
        Some(String::from_utf8_lossy(&entry.value).into_owned())
    }

    /// Games this node owns.
    pub fn owned_games(&self) -> Vec<GameId> {
        self.owned.iter().map(|o| *o.key()).collect()
    }

    async fn lease_loop(self: Arc<Self>) {
        let stop = self.rooms.stop_games.clone();
        let tick = Duration::from_millis(50);
        let scan_every = self.lease / 3;
        let mut next_scan = Instant::now();
        // The local games are looked through only when one came or went (or at a scan):
        // 4,000 live games looked through every tick were a tenth of an idle node's CPU.
        let mut seen = None;
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(tick) => {}
            }
            self.drop_fenced();
            let changes = self.rooms.changes();
            let scan = Instant::now() >= next_scan;
            if seen != Some(changes) || scan {
                seen = Some(changes);
                self.claim_new().await;
                self.rewrite_keys().await;
            }
            if scan {
                next_scan = Instant::now() + scan_every;
                self.nodes_tick().await;
                if let Err(e) = self.take_over().await {
                    tracing::warn!(error = %e, "takeover scan failed");
                }
            }
        }
        for o in self.owned.iter() {
            o.server.abort();
        }
    }

    /// Renews this node's lease every third of a lease, on a task of its own: a long
    /// takeover scan in the lease loop cannot make it lapse.
    async fn renew_loop(self: Arc<Self>) {
        let stop = self.rooms.stop_games.clone();
        let every = self.lease / 3;
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(every) => {}
            }
            self.renew().await;
        }
    }

    /// Claims the local games that have no key yet (new ones).
    async fn claim_new(self: &Arc<Self>) {
        let _claiming = self.claims.lock().await;
        let new: Vec<GameId> = self
            .rooms
            .games
            .iter()
            .map(|g| *g.key())
            .filter(|id| !self.owned.contains_key(id) && !self.foreign.contains_key(id))
            .collect();
        for id in new {
            match self.create(id).await {
                Ok(revision) => self.own(id, revision).await,
                Err(e) => {
                    tracing::error!(game = %id, error = %e, "a new game is owned by another node");
                    if let Some(g) = self.rooms.games.get(&id) {
                        g.tenure.lose();
                    }
                    self.foreign.insert(id, ());
                }
            }
        }
    }

    /// Claims a game started here at once rather than at the loop's next turn: the lobby
    /// starts games with players on other nodes, whose first command must find the game's
    /// subject served. True if this node owns it.
    async fn claim(self: &Arc<Self>, id: GameId) -> bool {
        let _claiming = self.claims.lock().await;
        if self.owned.contains_key(&id) {
            return true;
        }
        if self.foreign.contains_key(&id) || !self.rooms.games.contains_key(&id) {
            return false;
        }
        match self.create(id).await {
            Ok(revision) => {
                self.own(id, revision).await;
                true
            }
            Err(e) => {
                tracing::error!(game = %id, error = %e, "a new game is owned by another node");
                if let Some(g) = self.rooms.games.get(&id) {
                    g.tenure.lose();
                }
                self.foreign.insert(id, ());
                false
            }
        }
    }

    /// Creates the key of `game` with this node as owner, only if there is none (or only
    /// a deletion marker): a compare-and-set on the key's last revision.
    async fn create(&self, game: GameId) -> anyhow::Result<u64> {
        let key = game.to_string();
        match self.kv.update(&key, self.node.clone().into(), 0).await {
            Ok(revision) => Ok(revision),
            Err(first) => match self.kv.entry(&key).await? {
                Some(e) if e.operation != kv::Operation::Put => Ok(self
                    .kv
                    .update(&key, self.node.clone().into(), e.revision)
                    .await?),
                _ => Err(first.into()),
            },
        }
    }

    /// Serves the commands of a game now owned here, by a key written with `revision`.
    async fn own(self: &Arc<Self>, id: GameId, revision: u64) {
        let Some(tenure) = self.rooms.games.get(&id).map(|g| g.tenure.clone()) else {
            return;
        };
        // Held as long as the node's lease is proven (a game is taken from this node only
        // once its lease lapsed); at once unproven while the lease is being taken again.
        tenure.extend(self.lease_state.proven().unwrap_or_else(Instant::now));
        let server = match self.client.subscribe(cmd_subject(id)).await {
            Ok(sub) => tokio::spawn(self.clone().serve_game(id, sub)),
            Err(e) => {
                tracing::error!(game = %id, error = %e, "cannot serve a game's commands");
                tokio::spawn(async {})
            }
        };
        tracing::debug!(game = %id, node = %self.node, "owns the game");
        self.owned.insert(
            id,
            Owned {
                revision,
                refreshed: Instant::now(),
                server,
                tenure,
            },
        );
    }
}
