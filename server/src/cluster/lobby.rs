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
//!   game's subject served). They run on the node of one of their players, the one with
//!   fewer live games (see `place`).
//! - **Heartbeats.** The lobby reads the nodes' keys in `tamsk_nodes` (see `nodes`), which
//!   carry the live games each runs (`{"games":N}`, which the leader places by); the leader drops
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

use std::collections::{HashMap, HashSet};
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
mod lead;
mod node;
mod place;
mod queue;
mod serve;
use crate::codec::Reply;
use crate::peer::{Peer, PlayerRec, Seeker};
pub use place::{SeatAt, StartHere, StartReq};

/// The key-value bucket of the lobby's leader (the nodes' heartbeats are their keys in
/// `tamsk_nodes`, see `nodes`).
pub const LOBBY_BUCKET: &str = "tamsk_lobby";
const LEADER_KEY: &str = "leader";
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
    /// Leader side: the live games of each other node, as its heartbeat last said, plus
    /// the games placed there since (see `place`).
    loads: Mutex<HashMap<String, usize>>,
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
        let mut js = async_nats::jetstream::new(cluster.client.clone());
        // The lobby's requests are worth a lease at most (a renewal answered later finds
        // the term over anyway); the client's default, 10 s, held a starting node's first
        // turn, and so its start, that long when an answer was lost (seen in the tests
        // with two nodes starting at once: the next turn's requests were answered at once).
        js.set_timeout(cluster.lease.max(Duration::from_secs(1)));
        let kv = super::at_start(LOBBY_BUCKET, || {
            super::nodes::open_bucket(&js, LOBBY_BUCKET, cluster.lease)
        })
        .await?;
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
            loads: Mutex::new(HashMap::new()),
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
}
