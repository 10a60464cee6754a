//! Owner side of the games played from other nodes: the commands of their clients, served
//! for each game this node owns, and the proxy that stands for each such client in the
//! games (see the parent module: "Playing and watching a game owned elsewhere").

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use protocol::wire::GameId;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{conn_subject, Answer, Cluster, Op, RemoteCmd, AGE_CAP};
use crate::codec::{encode, encode_reply, game_error};
use crate::peer::Peer;
use crate::rooms::GameCmd;

impl Cluster {
    /// Owner side: answers the commands of clients on other nodes for game `id`.
    pub(super) async fn serve_game(self: Arc<Self>, id: GameId, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            if self.stale(id) {
                // Another node runs the game now: it answers (two answers would race).
                break;
            }
            let cmd = match serde_json::from_slice::<RemoteCmd>(&msg.payload) {
                Ok(cmd) => cmd,
                Err(e) => {
                    let answer = Answer::refused("bad_command", e.to_string());
                    if let Some(reply) = msg.reply {
                        let body = serde_json::to_vec(&answer).expect("answers serialise");
                        let _ = self.client.publish(reply, body.into()).await;
                    }
                    continue;
                }
            };
            if cmd.op.oneway() {
                // Only a refusal of an action is told, as a frame for the client's
                // socket: a lag report is the node's, not the client's, and goes unanswered.
                let (node, conn, reply) = (cmd.node.clone(), cmd.conn, cmd.reply.clone());
                let told = matches!(cmd.op, Op::Act { .. });
                let answer = self.command(id, cmd).await;
                if let (true, Some((code, message))) = (told, answer.error) {
                    let error = game_error(&code, message, id);
                    let frame = match reply {
                        Some(mut reply) => {
                            reply.at_ms = reply.at_ms.or(answer.at_ms);
                            encode_reply(&error, &reply)
                        }
                        None => encode(&error),
                    };
                    let _ = self
                        .client
                        .publish(conn_subject(&node, conn), Bytes::from(frame))
                        .await;
                }
                continue;
            }
            let answer = self.command(id, cmd).await;
            if let Some(reply) = msg.reply {
                let body = serde_json::to_vec(&answer).expect("answers serialise");
                let _ = self.client.publish(reply, body.into()).await;
            }
        }
    }

    /// Owner side: the games `peer` was seated in since `known` was last brought up to
    /// date. Those this node runs are claimed first: a game just started here (by the
    /// lobby, a challenge or a rematch) must be served to the other nodes before its
    /// first frame reaches a remote player, whose node then sends its first command.
    pub(super) async fn newly_seated(
        self: &Arc<Self>,
        peer: &Peer,
        known: &mut HashSet<GameId>,
    ) -> Vec<GameId> {
        let seated = peer.seated.list();
        known.retain(|g| seated.contains(g));
        let mut new = Vec::new();
        for game in seated {
            if !known.insert(game) {
                continue;
            }
            if self.rooms.games.contains_key(&game) {
                self.claim(game).await;
            }
            new.push(game);
        }
        new
    }

    /// The id of a new proxy of `key` (the owner's, or the lobby leader's relay, which is
    /// the same), in place of `old`, gone (its connection closed, or it was cut off). While
    /// `key` follows a game here, that game holds the old peer by its id, and lets go of it
    /// only on an `Unsubscribe` with the id of the proxy in `proxies` when its node's
    /// `Closed` (or `Leave`) comes: the new one keeps the old one's id. With a fresh id the
    /// game would never let go (seen: a new leader's relay remade for a remote watcher's
    /// online announcement that came after his `Gone`, so the `Closed` that came next
    /// unsubscribed the new id, and the game counted the closed watcher for ever).
    pub(super) fn proxy_id(&self, key: &(String, u64), old: Option<&Peer>) -> u64 {
        match old {
            Some(old) if self.follows_any(key) => old.conn,
            _ => self.rooms.next_conn_id(),
        }
    }

    /// The proxy of a client of another node (created on its first command).
    fn proxy(self: &Arc<Self>, node: &str, conn: u64) -> Peer {
        let key = (node.to_string(), conn);
        let old = self.proxies.get(&key).map(|p| p.clone());
        if let Some(p) = &old {
            if !p.is_gone() {
                return p.clone();
            }
        }
        let (tx, mut rx) = crate::outbox::channel::<axum::extract::ws::Utf8Bytes>(
            self.rooms.config.outbound_queue,
        );
        let peer = Peer {
            conn: self.proxy_id(&key, old.as_ref()),
            tx: tx.into(),
            kill: Default::default(),
            seated: Default::default(),
            reply: None,
        };
        let client = self.client.clone();
        let subject = conn_subject(node, conn);
        let cluster = self.clone();
        let seats = peer.clone();
        tokio::spawn(async move {
            let mut known = HashSet::new();
            while let Some(text) = rx.recv().await {
                // A rematch's first frames wait for its claim (see `newly_seated`).
                cluster.newly_seated(&seats, &mut known).await;
                if client
                    .publish(subject.clone(), Bytes::from(text))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        self.proxies.insert(key, peer.clone());
        peer
    }

    /// Owner side: one command of a client of another node.
    async fn command(self: &Arc<Self>, id: GameId, cmd: RemoteCmd) -> Answer {
        let refuse = |code: &str, message: String| Answer::refused(code, message);
        let Some(handle) = self.rooms.game(id) else {
            return refuse("unknown_game", format!("there is no live game {id}"));
        };
        if cmd.node == self.node {
            // A client of this very node, whose command left before the game started
            // running here (a takeover): served as a remote client of its own node, it
            // would get every event twice, from the game and from the stream. Its next
            // try finds the game here and is served directly: `game_moving`, which
            // clients try again (`unknown_game` would send a page to the game's replay).
            return refuse(
                "game_moving",
                format!("game {id} now runs on this node: join or watch it again"),
            );
        }
        if let Op::Closed = cmd.op {
            // One `Closed` comes per game the connection followed here: each game lets go
            // of the proxy, which is forgotten with the last of them.
            let key = (cmd.node.clone(), cmd.conn);
            let peer = self.proxies.get(&key).map(|p| p.clone());
            self.follows(&cmd.node, cmd.conn, id, false);
            self.following.remove_if(&key, |_, games| games.is_empty());
            let last = !self.follows_any(&key);
            if let Some(peer) = peer {
                let _ = handle
                    .tx
                    .send(GameCmd::Unsubscribe {
                        conn: peer.conn,
                        reply: None,
                    })
                    .await;
                if last {
                    self.proxies.remove_if(&key, |_, p| p.conn == peer.conn);
                }
            }
            return Answer::default();
        }
        // Dated when its node read it, not when it got here (at most AGE_CAP back).
        let now = Instant::now();
        let received = now
            .checked_sub(Duration::from_micros(cmd.age_us).min(AGE_CAP))
            .unwrap_or(now);
        if let Op::Lag { rtt_ms } = cmd.op {
            // Only for a client already in the game (a proxy exists), best effort.
            if let Some(peer) = self.proxies.get(&(cmd.node.clone(), cmd.conn)) {
                let _ = handle.tx.try_send(GameCmd::Lag {
                    conn: peer.conn,
                    rtt_ms,
                    received,
                });
            }
            return Answer::default();
        }
        let seat = cmd
            .player
            .as_ref()
            .and_then(|p| handle.seats.iter().find(|s| &s.id == p).cloned());
        let player = match (&seat, &cmd.player) {
            (Some(s), _) => Some(s.clone()),
            (None, Some(p)) => (self.resolve)(p.clone()).await,
            (None, None) => None,
        };
        // A private game is not there for a client with no seat in it that does not follow
        // it: whatever it asks is answered as for a game that does not exist (as on one
        // node: `connection::handle`, `hidden`).
        let following = self
            .following
            .get(&(cmd.node.clone(), cmd.conn))
            .is_some_and(|games| games.contains(&id));
        let hidden = handle.code.is_some() && seat.is_none() && !following;
        if hidden && !matches!(cmd.op, Op::Watch { .. }) {
            return refuse("unknown_game", format!("there is no live game {id}"));
        }
        // From here on the client may know of the game: what it is told carries the game
        // time of its command (the connection's node could not date it: the game is not
        // there), as on one node.
        let at_ms = received.saturating_duration_since(handle.start).as_millis() as u64;
        let refuse = |code: &str, message: String| Answer {
            error: Some((code.into(), message)),
            at_ms: Some(at_ms),
        };
        let reply = cmd.reply.map(|mut r| {
            r.at_ms.get_or_insert(at_ms);
            Arc::new(r)
        });
        let base = self.proxy(&cmd.node, cmd.conn);
        let peer = base.replying(reply);
        let game_cmd = match cmd.op {
            Op::Join { after_seq } => {
                // A private game is not there for others (as on one node).
                if seat.is_none() && handle.code.is_some() {
                    return refuse("unknown_game", format!("there is no live game {id}"));
                }
                if seat.is_none() {
                    return refuse(
                        "not_a_player",
                        "you have no seat in this game: use watch to follow it".into(),
                    );
                }
                GameCmd::Subscribe {
                    peer,
                    player: seat,
                    after_seq,
                    // Its node subscribed to the game's stream before asking.
                    remote: true,
                }
            }
            Op::Watch { after_seq, code } => {
                // A private game: for its players, those who give its code, and a
                // watcher who already follows it (resuming after a gap).
                if hidden && code != handle.code {
                    return refuse("unknown_game", format!("there is no live game {id}"));
                }
                GameCmd::Subscribe {
                    peer,
                    player: None,
                    after_seq,
                    remote: true,
                }
            }
            Op::Leave { answer } => GameCmd::Unsubscribe {
                conn: base.conn,
                reply: answer.then_some(peer),
            },
            Op::Act { action, seen } => match player {
                Some(player) => GameCmd::Act {
                    peer,
                    player,
                    action,
                    received,
                    seen,
                },
                None => return refuse("hello_first", "say hello first".into()),
            },
            Op::Claim => match player {
                Some(player) => GameCmd::ClaimAbandonment { peer, player },
                None => return refuse("hello_first", "say hello first".into()),
            },
            Op::Rematch { accept } => match player {
                Some(player) => GameCmd::Rematch {
                    peer,
                    player,
                    accept,
                },
                None => return refuse("hello_first", "say hello first".into()),
            },
            Op::Closed | Op::Lag { .. } => unreachable!("handled above"),
        };
        let follows = match &game_cmd {
            GameCmd::Subscribe { .. } => Some(true),
            GameCmd::Unsubscribe { .. } => Some(false),
            _ => None,
        };
        match handle.tx.try_send(game_cmd) {
            Ok(()) => {
                if let Some(follows) = follows {
                    self.follows(&cmd.node, cmd.conn, id, follows);
                }
                Answer::default()
            }
            Err(mpsc::error::TrySendError::Full(_)) => refuse(
                "game_busy",
                "the game is busy: try again in a moment".into(),
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                refuse("unknown_game", format!("there is no live game {id}"))
            }
        }
    }
}
