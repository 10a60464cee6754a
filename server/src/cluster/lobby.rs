//! One lobby for every node (issue 18): seeks, quick match, private codes, challenges and
//! who is online are kept by a single node, the **lobby leader**, in its hub's ordinary
//! lobby; the other nodes send their clients' lobby messages to it and deliver what it
//! sends back. Why one leader rather than shared rows or per-player keys: pairing reads
//! and changes several seeks at once (the same player's other seeks, rating ranges that
//! widen with time, the oldest match first), which one process under one lock does
//! exactly as a single node does, with the code a single node runs; double pairing is
//! then impossible as long as there is one leader at a time, which the lease below
//! guarantees.
//!
//! - **Leadership: a JetStream key-value lease**, like game ownership. The bucket
//!   [`LOBBY_BUCKET`] (`max_age`: the lease) has the key `leader` (value: node id and a
//!   fresh epoch per term), created with a compare-and-set on "no key" and refreshed with
//!   a compare-and-set on the revision last written, every quarter of the lease. A leader
//!   serves lobby commands only until half a lease after it *sent* its last successful
//!   refresh ([`ClusterLobby::leading`]), while another node can create the key only
//!   once a whole lease has passed since that refresh was written: the two terms never
//!   overlap (unless a process's monotonic clock runs at less than half the server's
//!   rate, or it freezes inside the few microseconds of synchronous code between that
//!   check and a pairing).
//! - **Commands.** A node that is not the leader sends each lobby message of its clients
//!   to `tamsk.lobby.at.<leader>` (request/reply, one at a time per connection, so in
//!   order); the leader serves them one at a time. Each remote connection is represented
//!   on the leader by a relay [`Peer`]: what the lobby or a game queues for it is
//!   published on `tamsk.lobby.to.<node>` (the connection's id, then the frame) and the
//!   node hands it to the socket (in its games' order: `Cluster::direct`). The relay is
//!   also that connection's proxy for the games the leader runs (`Cluster::proxies`), so
//!   a game started by a pairing seats it directly and its later commands (`forward`)
//!   reach the same peer. Such a game's first frames go through the relay; on its
//!   snapshot the connection's node follows the game's stream and has the relay made a
//!   remote subscriber (see the `fanout` module's adoption), so the game's events then
//!   go once on the stream for every remote client, not once per relay. A relay that
//!   still follows games stays their proxy after its connection left the lobby, until
//!   each game is told the connection closed (or its node died).
//! - **Games a pairing creates** are claimed at once through the ownership lease before
//!   a relay delivers their first frame (so the remote player's first move finds the
//!   game's subject served). They run on the red player's node (see `place`); on the
//!   leader only when that player is the leader's own.
//! - **Heartbeats.** Each node refreshes `node.<id>` in the same bucket; the leader drops
//!   the connections of a node whose key expired (its seeks, challenges and online
//!   players go). When the leader changes, every node announces its online players to
//!   the new one and makes its clients' waiting seeks again there (they were in the old
//!   leader's memory): the client is told `seeking` again, or gets its game. What cannot
//!   be moved is cancelled (`seek_cancelled`): a hosted game's code (the old leader's),
//!   or a seek the new leader refuses.
//! - **No leader yet** (a cluster starting, or a dead leader's key still there): a
//!   client's lobby message waits for the election, looking again at each turn of the
//!   loop, at most two leases, before it is refused `lobby_unavailable`; a node that took
//!   the lead meanwhile serves it itself ([`Outcome::Here`]).
//! - **Lists of games** (`list_games`, the games in a `welcome`) are gathered from every
//!   node (`tamsk.lobby.games`, one answer per live node, at most [`GATHER_WAIT`]). The
//!   live nodes are those whose heartbeat the last turn read, any node that answered a
//!   list since, and (on the leader) any node a lobby message came from since: a node
//!   that started since then is missed by the others for at most a quarter of a lease.
//!   A connection's `list_games` waits in its lobby queue, not in its message loop.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::kv;
use bytes::{BufMut, Bytes, BytesMut};
use dashmap::DashMap;
use futures::StreamExt;
use protocol::settings::Settings;
use protocol::wire::{
    ChallengeId, GameId, GameSummary, PlayerRef, SeekId, SeekInfo, ServerMessage, LIST_LIMIT,
};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Cluster;

mod games;
mod node;
mod place;
mod queue;
mod serve;
use crate::codec::Reply;
use crate::peer::{Peer, PlayerRec, Seeker};
pub use place::{SeatAt, StartHere, StartReq};

/// The key-value bucket of the lobby's leader and of the nodes' heartbeats.
pub const LOBBY_BUCKET: &str = "tamsk_lobby";
const LEADER_KEY: &str = "leader";
/// Open seeks one player may have in the shared lobby at once (over all his connections).
pub const MAX_SEEKS_PER_PLAYER: usize = 4;
/// Remote connections the leader represents at most; beyond, lobby messages are refused.
pub const MAX_RELAYS: usize = 200_000;
/// How long a node waits for the leader's answer.
const ASK_WAIT: Duration = Duration::from_secs(3);
/// The leader's answer to a request that reached it after its term ended.
const NOT_LEADING: &str = "this node does not lead the lobby";
/// How long a node waits for the other nodes' lists of games.
pub const GATHER_WAIT: Duration = Duration::from_millis(500);

fn at_subject(node: &str) -> String {
    format!("tamsk.lobby.at.{node}")
}

fn to_subject(node: &str) -> String {
    format!("tamsk.lobby.to.{node}")
}

const GAMES_SUBJECT: &str = "tamsk.lobby.games";

fn node_key(node: &str) -> String {
    format!("node.{node}")
}

/// A lobby message of a client of another node.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LobbyOp {
    /// The connection said hello (or is announced again to a new leader).
    Online,
    /// The connection closed.
    Gone,
    Seek {
        settings: Settings,
        rated: Option<bool>,
    },
    /// `quiet`: withdrawn because the client started a game with the computer (no answer).
    CancelSeek {
        quiet: bool,
    },
    ListSeeks,
    ListPlayers,
    /// A tournament message: tournaments are run by the leader (see `hub::tournament`).
    Tournament(crate::tournament_model::TournamentOp),
    /// The live games of every node: gathered by the asking node itself (in the
    /// connection's lobby queue, so the wait does not hold up its moves), never sent to
    /// the leader.
    ListGames,
    AcceptSeek {
        seek: SeekId,
    },
    Host {
        settings: Settings,
    },
    JoinCode {
        code: String,
    },
    Challenge {
        to: String,
        settings: Settings,
        rated: Option<bool>,
    },
    AcceptChallenge {
        challenge: ChallengeId,
    },
    DeclineChallenge {
        challenge: ChallengeId,
    },
    CancelChallenge {
        challenge: ChallengeId,
    },
}

/// What the leader did. Answers and errors meant for the client went through its relay
/// (in order with the rest); this tells its node what to remember.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Outcome {
    Done,
    /// A seek (open or private) waits.
    Waiting,
    /// A game started with this connection in it.
    Game(GameId),
    /// Refused (the client was told through its relay).
    Refused,
    Seeks(Vec<SeekInfo>),
    Players(Vec<PlayerRef>, u32),
    /// Not (or no longer) the leader, or unreachable: the node tells the client.
    Unavailable(String),
    /// This node leads the lobby now (it did not when the message was handed to
    /// [`ClusterLobby::ask`]): its own hub serves the message, as on one node.
    Here,
}

#[derive(Serialize, Deserialize)]
struct LobbyReq {
    node: String,
    conn: u64,
    player: Option<String>,
    reply: Option<Reply>,
    op: LobbyOp,
}

/// What the leader's hub does with a lobby message of a remote client. The hub implements
/// it: the cluster sits below the hub and cannot name it.
pub trait LobbyHost: Send + Sync {
    /// Serves `op` for `seeker` (whose peer is the relay, answering the message).
    fn lobby_op(&self, op: LobbyOp, seeker: Seeker) -> Outcome;
    /// The open seeks, or (`players`) who is online: for anyone, a guest too.
    fn lobby_list(&self, players: bool) -> Outcome;
    /// This node stopped leading: every seek and challenge goes; the relays' connections
    /// leave the lobby silently (their nodes tell them). Its own clients' open seeks are
    /// taken out silently and answered (connection, settings, rated), to be made again at
    /// the next leader, if `keep_seeks` (a lost lease); else (shutdown), and for a hosted
    /// game's code, their seekers are told `seek_cancelled`.
    fn lobby_reset(
        &self,
        relays: Vec<(Arc<PlayerRec>, u64)>,
        keep_seeks: bool,
    ) -> Vec<(u64, Settings, bool)>;
    /// This node leads now: it takes up what the leader runs (the tournaments, from the
    /// database).
    fn lobby_led(&self);
}

/// A remote connection as the leader holds it.
struct Relay {
    peer: Peer,
    player: Arc<PlayerRec>,
    /// Announced online in this term.
    online: bool,
}

/// A local connection as its node holds it.
struct Local {
    peer: Peer,
    player: Option<Arc<PlayerRec>>,
    /// What it waits for at the leader (as far as this node knows).
    seeking: Option<Waiting>,
    /// Its challenges waiting at the leader for an answer (as far as this node knows:
    /// added by `challenge_sent`, gone with `challenge_closed` or its next game, one of
    /// which may be a challenge's acceptance). At most [`MAX_TRACKED_CHALLENGES`].
    challenges: HashSet<ChallengeId>,
    /// The challenges this node told it were closed when the leader changed (those of
    /// `challenges` then): a `challenge_closed` for one of them that the old leader sent
    /// (alive, stepping down) is not passed on, or it would be told twice. Replaced at
    /// the next change of leader, so at most [`MAX_TRACKED_CHALLENGES`].
    told_closed: HashSet<ChallengeId>,
    /// Its lobby messages waiting for the leader, in order (see `queue`).
    asks: Option<mpsc::Sender<queue::Asked>>,
}

impl Local {
    fn new(peer: &Peer, player: Option<Arc<PlayerRec>>) -> Local {
        Local {
            peer: peer.replying(None),
            player,
            seeking: None,
            challenges: HashSet::new(),
            told_closed: HashSet::new(),
            asks: None,
        }
    }
}

/// Bounds [`Local::challenges`] (the leader allows a player far fewer at once).
const MAX_TRACKED_CHALLENGES: usize = 32;

/// What a local connection waits for at the leader.
#[derive(Clone, Debug)]
enum Waiting {
    /// A seek: made again at the next leader should this one go.
    Seek {
        settings: Settings,
        rated: Option<bool>,
    },
    /// A hosted game's code, which goes with the leader that gave it.
    Host,
}

pub struct ClusterLobby {
    cluster: Arc<Cluster>,
    kv: kv::Store,
    host: Arc<dyn LobbyHost>,
    /// Leader side: the revision of the leader key last written and until when this node
    /// may serve; `None`: not leading.
    term: Mutex<Option<(u64, Instant)>>,
    /// Node side: the leader key's value as last read (node id, space, epoch).
    leader: Mutex<Option<String>>,
    relays: DashMap<(String, u64), Relay>,
    /// Leader side: the remote connection of each relay, by the relay's own conn id.
    relay_keys: DashMap<u64, (String, u64)>,
    /// Node side: the relays made for the seats of games placed here (see `place`).
    placed: DashMap<(String, u64), u64>,
    local: DashMap<u64, Local>,
    /// The nodes with a live heartbeat as last read (this one included).
    nodes: Mutex<HashSet<String>>,
    /// Bumped at the end of each turn of the loop: a message waiting for a leader looks
    /// again then (see [`ClusterLobby::ask`]).
    turns: tokio::sync::watch::Sender<u64>,
}

/// Frame kinds on `tamsk.lobby.to.<node>`.
const FRAME_TEXT: u8 = 0;
const FRAME_PAIRED: u8 = 1;

fn frame(conn: u64, kind: u8, body: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(9 + body.len());
    b.put_u64(conn);
    b.put_u8(kind);
    b.put_slice(body);
    b.freeze()
}

impl ClusterLobby {
    pub async fn start(
        cluster: Arc<Cluster>,
        host: Arc<dyn LobbyHost>,
    ) -> anyhow::Result<Arc<ClusterLobby>> {
        let js = async_nats::jetstream::new(cluster.client.clone());
        let kv = super::nodes::open_bucket(&js, LOBBY_BUCKET, cluster.lease).await?;
        let client = &cluster.client;
        let requests = client.subscribe(at_subject(&cluster.node)).await?;
        let deliveries = client.subscribe(to_subject(&cluster.node)).await?;
        let games = client.subscribe(GAMES_SUBJECT).await?;
        let starts = client
            .subscribe(place::start_subject(&cluster.node))
            .await?;
        let lobby = Arc::new(ClusterLobby {
            cluster,
            kv,
            host,
            term: Mutex::new(None),
            leader: Mutex::new(None),
            relays: DashMap::new(),
            relay_keys: DashMap::new(),
            placed: DashMap::new(),
            local: DashMap::new(),
            nodes: Mutex::new(HashSet::new()),
            turns: tokio::sync::watch::Sender::new(0),
        });
        tokio::spawn(lobby.clone().serve(requests));
        tokio::spawn(lobby.clone().deliver(deliveries));
        tokio::spawn(lobby.clone().answer_games(games));
        tokio::spawn(lobby.clone().serve_starts(starts));
        lobby.turn().await;
        tokio::spawn(lobby.clone().run());
        Ok(lobby)
    }

    /// Whether this node is the lobby's leader now (its lease confirmed recently enough).
    pub fn leading(&self) -> bool {
        self.term
            .lock()
            .expect("term lock")
            .is_some_and(|(_, until)| Instant::now() < until)
    }

    fn leader_node(&self) -> Option<String> {
        let leader = self.leader.lock().expect("leader lock");
        leader
            .as_deref()
            .and_then(|v| v.split(' ').next())
            .map(str::to_string)
    }

    async fn run(self: Arc<Self>) {
        let stop = self.cluster.rooms.stop_games.clone();
        let mut tick = tokio::time::interval(self.cluster.lease / 4);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tick.tick() => {}
            }
            self.turn().await;
        }
        self.resign().await;
    }

    /// One turn of the loop: heartbeat, leadership, dead nodes, the leader as seen.
    async fn turn(self: &Arc<Self>) {
        let node = &self.cluster.node;
        if let Err(e) = self.kv.put(node_key(node), Bytes::new()).await {
            tracing::warn!(error = %e, "lobby heartbeat failed");
        }
        if let Ok(keys) = self.kv.keys().await {
            let live = keys
                .filter_map(|k| async move { k.ok() })
                .filter(|k| futures::future::ready(k.starts_with("node.")))
                .collect::<Vec<String>>()
                .await;
            let live = live
                .into_iter()
                .filter_map(|k| k.strip_prefix("node.").map(str::to_string))
                .collect();
            *self.nodes.lock().expect("nodes lock") = live;
        }
        let draining = self.cluster.rooms.closed_for_new_games();
        let term = *self.term.lock().expect("term lock");
        match term {
            Some(_) if draining => self.resign().await,
            Some((revision, _)) => {
                let sent = Instant::now();
                let value = self.leader.lock().expect("leader lock").clone();
                let value = value.unwrap_or_default();
                match self.kv.update(LEADER_KEY, value.into(), revision).await {
                    Ok(r) => self.extend(r, sent),
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the lobby's lease");
                        self.step_down(true);
                    }
                }
            }
            None if !draining => self.try_lead().await,
            None => {}
        }
        self.read_leader().await;
        if self.leading() {
            self.drop_dead_nodes().await;
        } else {
            self.forget_relays();
        }
        self.forget_placed();
        self.turns.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Not leading: the relays of a past term are kept only while they sit in a game this
    /// node runs (their connections' nodes now tell another leader when they close).
    fn forget_relays(&self) {
        let idle: Vec<(String, u64)> = self
            .relays
            .iter()
            .filter(|r| r.peer.is_gone() || r.peer.seated.list().is_empty())
            .map(|r| r.key().clone())
            .collect();
        for key in idle {
            if let Some((_, relay)) = self.relays.remove(&key) {
                self.relay_keys.remove(&relay.peer.conn);
                // A relay that still follows a game here stays its proxy (see `gone`).
                let conn = relay.peer.conn;
                if !self.cluster.follows_any(&key) {
                    self.cluster.proxies.remove_if(&key, |_, p| p.conn == conn);
                }
            }
        }
    }

    fn extend(&self, revision: u64, sent: Instant) {
        *self.term.lock().expect("term lock") = Some((revision, sent + self.cluster.lease / 2));
    }

    async fn try_lead(self: &Arc<Self>) {
        let value = format!("{} {}", self.cluster.node, uuid::Uuid::now_v7().simple());
        let sent = Instant::now();
        let created = match self.kv.update(LEADER_KEY, value.clone().into(), 0).await {
            Ok(r) => Some(r),
            Err(_) => match self.kv.entry(LEADER_KEY).await {
                Ok(Some(e)) if e.operation != kv::Operation::Put => self
                    .kv
                    .update(LEADER_KEY, value.clone().into(), e.revision)
                    .await
                    .ok(),
                _ => None,
            },
        };
        if let Some(revision) = created {
            tracing::info!(node = %self.cluster.node, "leads the lobby");
            self.extend(revision, sent);
            self.host.lobby_led();
            self.changed_leader(Some(value));
        }
    }

    /// Reads who leads; reacts when it changed.
    async fn read_leader(self: &Arc<Self>) {
        let value = match self.kv.entry(LEADER_KEY).await {
            Ok(Some(e)) if e.operation == kv::Operation::Put => {
                Some(String::from_utf8_lossy(&e.value).into_owned())
            }
            Ok(_) => None,
            Err(_) => return,
        };
        if value.is_some() {
            self.changed_leader(value);
        }
    }

    /// Records the leader; when it is a new one, this node's seekers are told their seeks
    /// went (they were in the old leader's memory) and its online players are announced
    /// to the new one.
    fn changed_leader(self: &Arc<Self>, value: Option<String>) {
        {
            let mut leader = self.leader.lock().expect("leader lock");
            if *leader == value {
                return;
            }
            *leader = value.clone();
        }
        let led = self.term.lock().expect("term lock").is_some();
        if led && !value_is_mine(&value, &self.cluster.node) {
            self.step_down(true);
        }
        // Also for the first leader this node sees: its clients had no seek anywhere then,
        // but those that said hello before it was elected are announced to it.
        let seekers: Vec<(Peer, Option<Arc<PlayerRec>>, Waiting)> = self
            .local
            .iter_mut()
            .filter_map(|mut l| {
                let waiting = l.seeking.take()?;
                Some((l.peer.clone(), l.player.clone(), waiting))
            })
            .collect();
        // Challenges were in the old leader's memory too: their challengers are told
        // (a challenge names its challenged player, who may have left meanwhile, so it
        // is not made again).
        for mut l in self.local.iter_mut() {
            l.told_closed = std::mem::take(&mut l.challenges);
            for &challenge in &l.told_closed {
                l.peer.send(crate::codec::encode_lobby(
                    &protocol::wire::LobbyMessage::ChallengeClosed {
                        challenge,
                        reason: "lobby_moved".into(),
                    },
                ));
            }
        }
        let announce: Vec<(Peer, Arc<PlayerRec>)> = if self.leading() {
            Vec::new()
        } else {
            self.local
                .iter()
                .filter_map(|l| Some((l.peer.clone(), l.player.clone()?)))
                .collect()
        };
        let lobby = self.clone();
        // Announced before the seeks move, so that whatever their seekers do next finds
        // every player of this node online at the new leader.
        tokio::spawn(async move {
            for (peer, player) in announce {
                lobby.announce(&peer, &player).await;
            }
            for (peer, player, waiting) in seekers {
                lobby.move_seek(peer, player, waiting);
            }
        });
    }

    /// Tells the new leader a client of this node is online. The key that named it may
    /// have been read a moment before its term began (it refuses then): asked again at
    /// each turn of the loop, for at most two leases.
    async fn announce(&self, peer: &Peer, player: &Arc<PlayerRec>) {
        let until = Instant::now() + 2 * self.cluster.lease;
        let mut turns = self.turns.subscribe();
        while let Outcome::Unavailable(_) = self.ask(peer, Some(player), LobbyOp::Online).await {
            if self.leading()
                || !self.local.contains_key(&peer.conn)
                || tokio::time::timeout_at(until, turns.changed())
                    .await
                    .is_err()
            {
                return;
            }
        }
    }

    /// A seek this node's client had at the old leader, made again at the new one: the
    /// client is told `seeking` again, or gets its game. A hosted game's code, or a seek
    /// the new leader refuses (or cannot be reached for), is cancelled. Queued with the
    /// connection's own lobby messages (see `queue`), so a cancel it sent, or its closing,
    /// comes after, in order; nothing is made for a connection already closed.
    fn move_seek(self: &Arc<Self>, peer: Peer, player: Option<Arc<PlayerRec>>, waiting: Waiting) {
        let (Waiting::Seek { settings, rated }, Some(player)) = (waiting, player) else {
            peer.send_msg(&ServerMessage::SeekCancelled);
            return;
        };
        self.enqueue(queue::Asked {
            op: LobbyOp::Seek { settings, rated },
            peer,
            player: Some(player),
            moved: true,
        });
    }

    /// Stops leading: the lobby's state goes (see [`LobbyHost::lobby_reset`]). With
    /// `keep_seeks` (the lease was lost, the node lives on), its own clients' open seeks
    /// are marked to be made again at the next leader, as every other node's are.
    fn step_down(&self, keep_seeks: bool) {
        *self.term.lock().expect("term lock") = None;
        let relays: Vec<(Arc<PlayerRec>, u64)> = self
            .relays
            .iter_mut()
            .map(|mut r| {
                r.online = false;
                (r.player.clone(), r.peer.conn)
            })
            .collect();
        for (conn, settings, rated) in self.host.lobby_reset(relays, keep_seeks) {
            // A connection closed meanwhile has nothing to make again.
            if let Some(mut local) = self.local.get_mut(&conn) {
                local.seeking = Some(Waiting::Seek {
                    settings,
                    rated: Some(rated),
                });
            }
        }
    }

    /// Shutdown: leaves the lead at once, so that another node takes it.
    pub async fn resign(&self) {
        if self.term.lock().expect("term lock").is_none() {
            return;
        }
        self.step_down(false);
        let _ = self.kv.purge(LEADER_KEY).await;
        tracing::info!(node = %self.cluster.node, "left the lobby's lead");
    }

    /// Leader side: the connections of nodes whose heartbeat expired leave the lobby.
    async fn drop_dead_nodes(&self) {
        let nodes: HashSet<String> = self.relays.iter().map(|r| r.key().0.clone()).collect();
        for node in nodes {
            let alive = matches!(
                self.kv.entry(node_key(&node)).await,
                Ok(Some(e)) if e.operation == kv::Operation::Put
            );
            if alive {
                continue;
            }
            tracing::warn!(node = %node, "a node's heartbeat expired: its lobby entries go");
            let conns: Vec<u64> = self
                .relays
                .iter()
                .filter(|r| r.key().0 == node)
                .map(|r| r.key().1)
                .collect();
            for conn in conns {
                self.gone(&node, conn);
            }
        }
    }
}

fn value_is_mine(value: &Option<String>, node: &str) -> bool {
    value
        .as_deref()
        .and_then(|v| v.split(' ').next())
        .is_some_and(|n| n == node)
}
