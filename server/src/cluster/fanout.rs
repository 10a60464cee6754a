//! One publication per game event for all the other nodes (issue 18), and its fan-out on
//! each node that has clients of the game.
//!
//! - **Owner side** ([`OwnerRelay`]): a game's frames for everyone (numbered events,
//!   watcher counts) skip the proxies of remote clients and are published once on
//!   `tamsk.game.<id>.ev`, as `<seq>\n<frame>` (an empty seq for a frame without one),
//!   through one bounded queue per node. A frame that finds it full is dropped (counted,
//!   logged): the receiving nodes see the gap and repair it.
//! - **Follower side** ([`Fans`]): a node with any local player or watcher of a remote
//!   game subscribes once (before its first request for the game goes out, so nothing
//!   published after the owner answers can be missed) and hands each frame to its
//!   clients' bounded queues as a game task does. A client's own frames (its snapshot,
//!   its resumption's missed events, answers, errors) come on its connection's subject;
//!   the two subjects are not ordered with respect to each other, so each client keeps
//!   the seq it is at and gets an event only if it is the next one: stream events that
//!   come before its snapshot wait in a short window ([`RECENT`]) and are handed over
//!   after it; those it already has are skipped. A client that asks for a snapshot again
//!   (a `join` or `watch` without `after_seq`) while it follows the game here first gets
//!   the events it had not had up to the snapshot's seq, as a local client does: the
//!   snapshot waits for them (at most [`REPAIR_QUIET`]). A client stuck below the
//!   stream (a lost message) is resumed with `after_seq` at the owner, silently: it gets
//!   the missing events, in order, as if nothing happened (or a fresh snapshot, if the
//!   owner no longer has them).
//! - **Adoption** ([`Cluster::adopt`]): a game its owner started by itself for a client of
//!   this node (paired by the lobby's leader, a challenge, a rematch) sends that client
//!   its snapshot as to a local peer, through the leader's relay or the client's proxy,
//!   without this node having asked. The first such snapshot of a game for a connection
//!   makes this node follow the game's stream for it and ask the owner, before anything
//!   the client sends next, for a silent resumption after the snapshot's seq (a `join`
//!   or `watch` with `after_seq`, as a repair): the owner then counts it among the
//!   stream's followers. The frames the owner sent it meanwhile come on its own subject,
//!   in order; those it already has are skipped by seq. Every frame a connection gets
//!   alone goes through [`Cluster::direct`], whichever subject brought it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use bytes::Bytes;
use dashmap::DashMap;
use futures::StreamExt;
use protocol::wire::{GameId, Seq, ServerMessage};
use serde::Deserialize;
use tokio::time::Instant;

use super::{Cluster, Op, Queued, RemoteCmd};
use crate::peer::{Delivery, Peer, CLOSE_FELL_BEHIND, CLOSE_SLOW};

mod adopt;
mod publish;
mod stream;
pub(super) use publish::{ev_subject, OwnerRelay};

/// Events of a game a node keeps for a client whose snapshot comes after them.
const RECENT: usize = 256;
/// A client's gap is not asked for again within this long (its missed events may be on
/// their way); it is looked at again then, events or not.
const REPAIR_QUIET: Duration = Duration::from_millis(200);

/// A frame of a game stream: its seq (none for a watcher count) and the frame.
fn parse_stream(payload: Bytes) -> Option<(Option<Seq>, Utf8Bytes)> {
    let nl = payload.iter().position(|&b| b == b'\n')?;
    let seq = match nl {
        0 => None,
        _ => Some(std::str::from_utf8(&payload[..nl]).ok()?.parse().ok()?),
    };
    let text = Utf8Bytes::try_from(payload.slice(nl + 1..)).ok()?;
    Some((seq, text))
}

/// What a frame on a connection's subject is, as far as its order matters.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    game: Option<GameId>,
    seq: Option<Seq>,
    after_seq: Option<Seq>,
}

/// Follower side: the games this node follows for its clients.
#[derive(Default)]
pub(super) struct Fans {
    games: DashMap<GameId, Arc<GameFan>>,
    /// Creations and removals of fans, one at a time: a client joining never races the
    /// removal of its game's fan.
    changing: tokio::sync::Mutex<()>,
    /// Per local connection: the remote games it is seated in (its lag goes to them).
    seats: DashMap<u64, Vec<RemoteSeat>>,
}

/// A remote game a local connection is seated in, and the round trip last sent to its
/// owner for that seat.
pub(super) struct RemoteSeat {
    pub(super) game: GameId,
    pub(super) lag_sent: Option<u64>,
    /// The connection's seats, told of this one (so that it is pinged as a player).
    pub(super) seated: Arc<crate::peer::Seated>,
}

pub(super) struct GameFan {
    game: GameId,
    state: Mutex<FanState>,
    task: OnceLock<tokio::task::AbortHandle>,
    /// Wakes the stream task when a client's frame set a new [`FanState::recheck`].
    wake: tokio::sync::Notify,
}

#[derive(Default)]
struct FanState {
    clients: HashMap<u64, FanClient>,
    /// The last [`RECENT`] events of the stream, by seq.
    recent: BTreeMap<Seq, Utf8Bytes>,
    /// The highest seq the stream brought.
    top: Seq,
    /// Stream messages received (for the loss drill).
    received: u64,
    /// When a client stuck below the stream during a quiet time is looked at again.
    recheck: Option<Instant>,
}

struct FanClient {
    peer: Peer,
    /// Its player (a seat), for a repair's join.
    player: Option<String>,
    seat: bool,
    /// The last event it was given; `None` until its snapshot or resumption comes.
    at: Option<Seq>,
    /// When it joins again while followed here: the last event it was given before. The
    /// events after it up to its new snapshot's seq go to it before the snapshot, as a
    /// local client gets them (they were sent before it).
    before: Option<Seq>,
    /// That snapshot, while those events are still on their way on the stream (the two
    /// subjects are not ordered): it waits for them, at most [`REPAIR_QUIET`] (then they
    /// are lost, and it goes without them: it has them all anyway).
    held: Option<Held>,
    /// Repairs asked and not answered yet: their `resumed` is not passed on.
    repairing: u32,
    /// No repair is asked before this (one may be under way).
    quiet_until: Option<Instant>,
}

struct Held {
    seq: Seq,
    text: Utf8Bytes,
    until: Instant,
}

/// What must be done once the fan's lock is released.
enum Effect {
    /// A watcher did not keep up: dropped from the game.
    Behind { conn: u64, peer: Peer },
    /// A client is stuck below the stream: resume it at the owner after `at`.
    Repair { conn: u64, at: Seq, seat: bool },
}

impl FanClient {
    /// `crowd`: the fan has more than [`crate::peer::DIRECT_WATCHERS`] clients, whose
    /// watchers' frames are left to their connections' tasks to write.
    fn deliver(&self, text: &Utf8Bytes, backlog: usize, crowd: bool) -> Delivery {
        if self.seat {
            match self.peer.send(text.clone()) {
                true => Delivery::Sent,
                false => Delivery::Gone,
            }
        } else {
            self.peer.send_watched(text.clone(), backlog, crowd)
        }
    }
}

impl FanState {
    /// More clients than a fan writes to itself (see [`FanClient::deliver`]).
    fn crowd(&self) -> bool {
        self.clients.len() > crate::peer::DIRECT_WATCHERS
    }

    /// Gives `conn` the kept events that follow the one it is at, in order. False: it is
    /// gone or behind (`effects` says which) and was removed.
    fn advance(&mut self, conn: u64, backlog: usize, effects: &mut Vec<Effect>) -> bool {
        let crowd = self.crowd();
        let Some(c) = self.clients.get_mut(&conn) else {
            return false;
        };
        if let Some((seq, until)) = c.held.as_ref().map(|h| (h.seq, h.until)) {
            // A snapshot waiting for the events sent before it.
            while let Some(b) = c.before.filter(|&b| b < seq) {
                let Some(ev) = self.recent.get(&(b + 1)) else {
                    break;
                };
                match c.deliver(ev, backlog, crowd) {
                    Delivery::Sent => c.before = Some(b + 1),
                    delivery => {
                        self.drop_client(conn, delivery, effects);
                        return false;
                    }
                }
            }
            if c.before.is_some_and(|b| b < seq) && Instant::now() < until {
                self.recheck = Some(self.recheck.map_or(until, |r| r.min(until)));
                return true;
            }
            let held = c.held.take().expect("held");
            c.before = None;
            match c.deliver(&held.text, backlog, crowd) {
                Delivery::Sent => c.at = Some(seq),
                delivery => {
                    self.drop_client(conn, delivery, effects);
                    return false;
                }
            }
        }
        while let Some(next) = c.at.and_then(|a| self.recent.get(&(a + 1))) {
            match c.deliver(next, backlog, crowd) {
                Delivery::Sent => c.at = c.at.map(|a| a + 1),
                delivery => {
                    self.drop_client(conn, delivery, effects);
                    return false;
                }
            }
        }
        true
    }

    fn drop_client(&mut self, conn: u64, delivery: Delivery, effects: &mut Vec<Effect>) {
        if let Some(c) = self.clients.remove(&conn) {
            if delivery == Delivery::Behind {
                effects.push(Effect::Behind { conn, peer: c.peer });
            }
        }
    }

    /// Asks for the repair of `conn` if it is stuck below the stream.
    fn check_gap(&mut self, conn: u64, now: Instant, effects: &mut Vec<Effect>) {
        let top = self.top;
        let Some(c) = self.clients.get_mut(&conn) else {
            return;
        };
        let Some(at) = c.at else { return };
        if at >= top {
            return;
        }
        if let Some(q) = c.quiet_until.filter(|&q| q > now) {
            self.recheck = Some(self.recheck.map_or(q, |r| r.min(q)));
            return;
        }
        c.repairing += 1;
        c.quiet_until = Some(now + REPAIR_QUIET);
        effects.push(Effect::Repair {
            conn,
            at,
            seat: c.seat,
        });
    }
}

impl GameFan {
    /// A frame of the game's stream.
    fn on_stream(
        &self,
        seq: Option<Seq>,
        text: Utf8Bytes,
        backlog: usize,
        loss_every: u64,
    ) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut st = self.state.lock().expect("fan lock");
        st.received += 1;
        if loss_every > 0 && st.received.is_multiple_of(loss_every) {
            return effects;
        }
        // The seats first, as on the owner (`GameTask::fan_out`): a player's turn is on the
        // clock.
        let mut conns: Vec<(bool, u64)> = st.clients.iter().map(|(k, c)| (!c.seat, *k)).collect();
        conns.sort_unstable();
        let conns = conns.into_iter().map(|(_, conn)| conn);
        match seq {
            None => {
                let crowd = st.crowd();
                for conn in conns {
                    let Some(c) = st.clients.get(&conn) else {
                        continue;
                    };
                    if c.at.is_none() {
                        continue;
                    }
                    match c.deliver(&text, backlog, crowd) {
                        Delivery::Sent => {}
                        d => st.drop_client(conn, d, &mut effects),
                    }
                }
            }
            Some(seq) => {
                st.top = st.top.max(seq);
                st.recent.insert(seq, text);
                while st.recent.len() > RECENT {
                    st.recent.pop_first();
                }
                let now = Instant::now();
                for conn in conns {
                    if st.advance(conn, backlog, &mut effects) {
                        st.check_gap(conn, now, &mut effects);
                    }
                }
            }
        }
        effects
    }

    /// The quiet time of a stuck client is over: is it still stuck?
    fn recheck(&self, backlog: usize) -> Vec<Effect> {
        let mut effects = Vec::new();
        let mut st = self.state.lock().expect("fan lock");
        st.recheck = None;
        let now = Instant::now();
        let conns: Vec<u64> = st.clients.keys().copied().collect();
        for conn in conns {
            if st.advance(conn, backlog, &mut effects) {
                st.check_gap(conn, now, &mut effects);
            }
        }
        effects
    }

    fn follows(&self, conn: u64) -> bool {
        self.state
            .lock()
            .expect("fan lock")
            .clients
            .contains_key(&conn)
    }

    /// A resumption asked by this node for `conn` is on its way: its `resumed` is not
    /// passed on, and no repair is asked meanwhile.
    fn expect_resumed(&self, conn: u64) {
        let mut st = self.state.lock().expect("fan lock");
        if let Some(c) = st.clients.get_mut(&conn) {
            c.repairing += 1;
            c.quiet_until = Some(Instant::now() + REPAIR_QUIET);
        }
    }

    /// A resumption asked by this node for `conn` was refused: nothing of it will come.
    /// The client keeps its place; a gap is asked again when the stream shows it.
    fn repair_failed(&self, conn: u64) {
        let mut st = self.state.lock().expect("fan lock");
        if let Some(c) = st.clients.get_mut(&conn) {
            c.repairing = c.repairing.saturating_sub(1);
        }
    }

    /// A frame of `conn`'s own that orders it in the game. False: `conn` does not follow
    /// the game here (the frame goes straight to it).
    fn on_direct(
        &self,
        conn: u64,
        head: &Head,
        text: Utf8Bytes,
        backlog: usize,
    ) -> (bool, Vec<Effect>) {
        let mut effects = Vec::new();
        let mut guard = self.state.lock().expect("fan lock");
        let st = &mut *guard;
        let crowd = st.crowd();
        let Some(c) = st.clients.get_mut(&conn) else {
            return (false, effects);
        };
        let delivered = match (head.kind, head.seq, head.after_seq) {
            ("snapshot", Some(seq), _) => {
                c.repairing = c.repairing.saturating_sub(1);
                c.quiet_until = None;
                if c.before.is_some() {
                    // Joined again here: `advance` gives it the events it has not had
                    // up to the snapshot's, then the snapshot.
                    c.at = None;
                    let until = Instant::now() + REPAIR_QUIET;
                    c.held = Some(Held { seq, text, until });
                    Delivery::Sent
                } else {
                    c.at = Some(seq);
                    c.deliver(&text, backlog, crowd)
                }
            }
            ("resumed", _, Some(after)) => {
                // Never back: events it already has are not given twice.
                c.at = Some(c.at.map_or(after, |a| a.max(after)));
                c.before = None;
                // Its missed events follow on this subject: no repair meanwhile.
                c.quiet_until = Some(Instant::now() + REPAIR_QUIET);
                if c.repairing > 0 {
                    c.repairing -= 1;
                    Delivery::Sent
                } else {
                    c.deliver(&text, backlog, crowd)
                }
            }
            ("event", Some(seq), _) => match c.at {
                Some(a) if seq == a + 1 => {
                    c.at = Some(seq);
                    c.deliver(&text, backlog, crowd)
                }
                Some(a) if seq <= a => Delivery::Sent,
                // Not expected (an event always follows its snapshot or `resumed`).
                _ => {
                    tracing::debug!(game = %self.game, conn, seq, "an event out of order: skipped");
                    Delivery::Sent
                }
            },
            _ => c.deliver(&text, backlog, crowd),
        };
        if delivered != Delivery::Sent {
            st.drop_client(conn, delivered, &mut effects);
            return (true, effects);
        }
        let recheck = st.recheck;
        if st.advance(conn, backlog, &mut effects) {
            st.check_gap(conn, Instant::now(), &mut effects);
        }
        if st.recheck != recheck {
            self.wake.notify_one();
        }
        (true, effects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::WakeLog;

    fn client(conn: u64, seat: bool) -> (FanClient, crate::outbox::Receiver<Utf8Bytes>) {
        let (peer, rx) = Peer::detached(conn, 8);
        let client = FanClient {
            peer,
            player: seat.then(|| format!("p{conn}")),
            seat,
            at: Some(0),
            before: None,
            held: None,
            repairing: 0,
            quiet_until: None,
        };
        (client, rx)
    }

    #[test]
    fn a_relayed_frame_reaches_the_seats_first_and_the_watchers_after() {
        let fan = GameFan {
            game: GameId::now_v7(),
            state: Mutex::new(FanState::default()),
            task: OnceLock::new(),
            wake: Default::default(),
        };
        let log = WakeLog::default();
        let mut queues = Vec::new();
        // One seat among six watchers, in a map of random order.
        let who = ["seat", "w2", "w3", "w4", "w5", "w6", "w7"];
        for (conn, who) in (1..).zip(who) {
            let (c, mut rx) = client(conn, who == "seat");
            log.watch(&mut rx, who);
            fan.state.lock().unwrap().clients.insert(conn, c);
            queues.push(rx);
        }
        let effects = fan.on_stream(None, Utf8Bytes::from_static("{}"), 8, 0);
        assert!(effects.is_empty());
        let order = log.order();
        assert_eq!(order.len(), 7, "{order:?}");
        assert_eq!(order[0], "seat", "{order:?}");
        for rx in &mut queues {
            assert_eq!(rx.try_recv().map(|t| t.to_string()), Ok("{}".to_string()));
        }
    }
}
