//! A connection as games and the lobby see it: who the player is ([`PlayerRec`]) and
//! where his frames go ([`Peer`], a bounded queue nobody waits on), plus the one-shot
//! close signal ([`Kill`]). A leaf: it knows no game, lobby or hub.

use std::sync::{Arc, OnceLock};

use axum::extract::ws::Utf8Bytes;
use protocol::wire::{GameId, LobbyMessage, ServerMessage};
use tokio::sync::Notify;

use crate::codec::{encode, encode_reply, Reply};

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
    pub ratings: crate::glicko::SharedRatings,
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
/// Close reason for a client whose outbound queue is full.
pub const QUEUE_FULL: &str = "outbound queue full: the client stopped reading";
/// Close reason for a watcher (with no seat anywhere) that did not keep up with a game.
pub const CLOSE_FELL_BEHIND: &str = "too slow: fell behind a watched game";

/// Where a peer's frames go: a websocket's write side (written at once, see `wire`), or a
/// queue its owner reads (an in-process bot seat, a proxy for another node's connection,
/// tests).
#[derive(Clone)]
pub enum Outlet {
    Wire(Arc<crate::wire::Wire>),
    Queue(crate::outbox::Sender<Utf8Bytes>),
}

impl From<crate::outbox::Sender<Utf8Bytes>> for Outlet {
    fn from(tx: crate::outbox::Sender<Utf8Bytes>) -> Outlet {
        Outlet::Queue(tx)
    }
}

/// Why a frame was not taken.
enum Refusal {
    Full,
    Closed,
}

/// Watchers a game (or a node's fan of another node's game) writes its frames to itself;
/// past them, a crowd's frames are handed to each watcher's own connection task to write
/// (see `wire`). Writing is a system call a frame (about 10 us); a game with thousands of
/// watchers would otherwise hold its next command that long, on one core, while the
/// connections' tasks spread the writes over every core. Seats are always written at once.
pub const DIRECT_WATCHERS: usize = 16;

impl Outlet {
    /// Sends a frame. `watched`: a frame of a game the connection only watches, with the
    /// backlog past which it is refused (`Full`) and whether the game has a crowd of
    /// watchers (the frame is then left to the connection's task to write, see
    /// [`DIRECT_WATCHERS`]); a queue's reader reads it either way.
    fn try_send(&self, text: Utf8Bytes, watched: Option<(usize, bool)>) -> Result<(), Refusal> {
        match self {
            Outlet::Wire(wire) => {
                let sent = match watched {
                    None => wire.send(text),
                    Some((backlog, crowd)) => wire.send_watched(text, backlog, !crowd),
                };
                sent.map_err(|e| match e {
                    crate::wire::Refused::Full => Refusal::Full,
                    crate::wire::Refused::Closed => Refusal::Closed,
                })
            }
            Outlet::Queue(tx) => {
                if let Some((backlog, _)) = watched {
                    if tx.max_capacity() - tx.capacity() >= backlog.min(tx.max_capacity()) {
                        return Err(Refusal::Full);
                    }
                }
                tx.try_send(text).map_err(|e| match e {
                    crate::outbox::TrySendError::Full(_) => Refusal::Full,
                    crate::outbox::TrySendError::Closed(_) => Refusal::Closed,
                })
            }
        }
    }

    /// Frames waiting to be written or read.
    fn waiting(&self) -> usize {
        match self {
            Outlet::Wire(wire) => wire.waiting(),
            Outlet::Queue(tx) => tx.max_capacity() - tx.capacity(),
        }
    }

    fn max_waiting(&self) -> usize {
        match self {
            Outlet::Wire(wire) => wire.max_waiting(),
            Outlet::Queue(tx) => tx.max_capacity(),
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Outlet::Wire(wire) => wire.is_closed(),
            Outlet::Queue(tx) => tx.is_closed(),
        }
    }
}

/// The sending side of one connection: its frames are written at once or wait in a
/// bounded queue. Nobody ever waits on it: when it is full, the connection is cut off.
#[derive(Clone)]
pub struct Peer {
    pub conn: u64,
    pub tx: Outlet,
    pub kill: Arc<Kill>,
    pub seated: Arc<Seated>,
    /// Set on a copy of the peer handed along with one client message: what its answers
    /// echo (see [`Reply`]).
    pub reply: Option<Arc<Reply>>,
}

/// What a connection shares with the games it sits in: those games, kept by the game
/// tasks (a seat can be given by another player's seek), so that the connection reports
/// its lag to exactly them without scanning every game; and its last measured round trip,
/// which a game publishes as soon as the seat joins.
#[derive(Default)]
pub struct Seated {
    games: std::sync::Mutex<Vec<GameId>>,
    /// The games of other nodes it sits in (see `cluster::fanout`): their lag goes by
    /// NATS, but the connection must be measured as often as for a game of this node.
    remote: std::sync::Mutex<Vec<GameId>>,
    /// Milliseconds plus one; 0 until measured.
    lag: std::sync::atomic::AtomicU64,
}

fn add_to(games: &std::sync::Mutex<Vec<GameId>>, game: GameId) {
    let mut games = games.lock().expect("seated lock");
    if !games.contains(&game) {
        games.push(game);
    }
}

fn remove_from(games: &std::sync::Mutex<Vec<GameId>>, game: GameId) {
    games.lock().expect("seated lock").retain(|&g| g != game);
}

impl Seated {
    /// Whether the connection sits in a game, here or on another node: its lag judges a
    /// player then, so it is measured at every ping (see `connection::socket`).
    pub fn any(&self) -> bool {
        !self.games.lock().expect("seated lock").is_empty()
            || !self.remote.lock().expect("seated lock").is_empty()
    }

    pub fn add_remote(&self, game: GameId) {
        add_to(&self.remote, game)
    }

    pub fn remove_remote(&self, game: GameId) {
        remove_from(&self.remote, game)
    }

    pub fn add(&self, game: GameId) {
        add_to(&self.games, game)
    }

    pub fn remove(&self, game: GameId) {
        remove_from(&self.games, game)
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
    /// Sends a frame; false if the connection is gone or was cut off for not reading.
    pub fn send(&self, text: Utf8Bytes) -> bool {
        match self.tx.try_send(text, None) {
            Ok(()) => true,
            Err(Refusal::Full) => {
                self.kill.kill(CLOSE_SLOW, QUEUE_FULL);
                false
            }
            Err(Refusal::Closed) => false,
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

    /// Sends a frame of a game this connection watches, unless `backlog` frames already
    /// wait: the rest of the queue is kept for the connection's own traffic (its seats,
    /// its answers), so that other people's games can never fill it. `crowd`: the game
    /// has more than [`DIRECT_WATCHERS`] watchers here, and the frame is left to the
    /// connection's task to write.
    pub fn send_watched(&self, text: Utf8Bytes, backlog: usize, crowd: bool) -> Delivery {
        if self.kill.reason().is_some() {
            return Delivery::Gone;
        }
        // One look at the queue: refused past the backlog, or sent.
        match self.tx.try_send(text, Some((backlog, crowd))) {
            Ok(()) => Delivery::Sent,
            Err(Refusal::Full) => Delivery::Behind,
            Err(Refusal::Closed) => Delivery::Gone,
        }
    }

    /// Frames this peer can still be sent without filling its queue; for a game it only
    /// watches (`watch_backlog` given), without passing that backlog.
    pub fn room(&self, watch_backlog: Option<usize>) -> usize {
        let waiting = self.tx.waiting();
        let free = self.tx.max_waiting().saturating_sub(waiting);
        match watch_backlog {
            Some(backlog) => free.min(backlog.saturating_sub(waiting)),
            None => free,
        }
    }

    pub fn is_gone(&self) -> bool {
        self.tx.is_closed() || self.kill.reason().is_some()
    }
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

/// A player waiting for an opponent with the same settings.
pub struct Seeker {
    pub player: Arc<PlayerRec>,
    pub peer: Peer,
}

impl Peer {
    /// Tests: a peer of connection `conn` with no socket behind it, and the queue its
    /// frames go to.
    #[cfg(test)]
    pub(crate) fn detached(conn: u64, cap: usize) -> (Peer, crate::outbox::Receiver<Utf8Bytes>) {
        let (tx, rx) = crate::outbox::channel(cap);
        let peer = Peer {
            conn,
            tx: tx.into(),
            kill: Default::default(),
            seated: Default::default(),
            reply: None,
        };
        (peer, rx)
    }

    pub fn send_lobby(&self, msg: &LobbyMessage) -> bool {
        match self.reply.as_ref().and_then(|r| r.id.as_ref()) {
            Some(id) => self.send(crate::codec::with_id(msg, id)),
            None => self.send(crate::codec::encode_lobby(msg)),
        }
    }
}
