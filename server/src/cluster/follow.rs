//! Client side of a game owned by another node: the commands of each local connection
//! go to the owner in order, through a bounded queue, with the age of each; what the
//! owner sends that connection alone comes back on its subject.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use protocol::wire::GameId;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{
    cmd_subject, conn_subjects, unserved_subject, Answer, Cluster, Op, Queued, RemoteCmd,
    FOLLOW_QUEUE,
};
use crate::codec::{game_error, Reply};
use crate::peer::{Peer, CLOSE_SLOW};
use crate::rooms::GameCmd;
use bytes::Bytes;

/// How long a join or watch of a game nobody serves yet is asked again (see
/// `Cluster::request`).
const NEW_GAME_WAIT: Duration = Duration::from_millis(300);

impl Cluster {
    /// Client side: hands a command for a game this node does not run to its owner.
    /// Returns false when it is not one that travels (a lag report goes by [`Cluster::lag`]),
    /// or when the connection was cut off for filling its queue.
    pub fn forward(self: &Arc<Self>, game: GameId, cmd: GameCmd) -> bool {
        let (peer, player, op, read) = match cmd {
            GameCmd::Subscribe {
                peer,
                player,
                after_seq,
                ..
            } => {
                let op = match player {
                    Some(_) => Op::Join { after_seq },
                    None => Op::Watch {
                        after_seq,
                        code: None,
                    },
                };
                (peer, player, op, None)
            }
            GameCmd::Unsubscribe {
                reply: Some(peer), ..
            } => (peer, None, Op::Leave { answer: true }, None),
            GameCmd::Act {
                peer,
                player,
                action,
                received,
                seen,
            } => (peer, Some(player), Op::Act { action, seen }, Some(received)),
            GameCmd::ClaimAbandonment { peer, player } => (peer, Some(player), Op::Claim, None),
            GameCmd::Rematch {
                peer,
                player,
                accept,
            } => (peer, Some(player), Op::Rematch { accept }, None),
            GameCmd::Unsubscribe { reply: None, .. } | GameCmd::Lag { .. } => return false,
        };
        let cmd = RemoteCmd {
            player: player.map(|p| p.id.clone()),
            reply: peer.reply.as_deref().cloned(),
            ..self.remote_cmd(peer.conn, op)
        };
        let queued = Queued {
            game,
            cmd,
            read,
            repair: false,
        };
        self.queue(&peer, queued)
    }

    /// Client side: queues a command of local connection `peer`; false when the
    /// connection was cut off for filling its queue.
    pub(super) fn queue(self: &Arc<Self>, peer: &Peer, queued: Queued) -> bool {
        match self.follower(peer).try_send(queued) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                // As a client that stops reading: its commands pile up faster than the
                // owners answer them.
                peer.kill.kill(
                    CLOSE_SLOW,
                    "too many commands waiting for games on other nodes",
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Client side: the command queue of local connection `peer` for the owners of
    /// remote games (its task started on first use).
    pub(super) fn follower(self: &Arc<Self>, peer: &Peer) -> mpsc::Sender<Queued> {
        self.followers
            .entry(peer.conn)
            .or_insert_with(|| {
                let (tx, rx) = mpsc::channel(FOLLOW_QUEUE);
                let base = peer.replying(None);
                tokio::spawn(self.clone().follow(base, rx));
                tx
            })
            .clone()
    }

    /// Client side: a local connection measured its round trip: the owners of the
    /// remote games it is seated in are told (best effort, as for local games).
    pub fn lag(&self, conn: u64, rtt_ms: u64, received: Instant) {
        for game in self.lag_due(conn, rtt_ms) {
            let Some(tx) = self.followers.get(&conn).map(|t| t.clone()) else {
                return;
            };
            let _ = tx.try_send(Queued {
                game,
                cmd: self.remote_cmd(conn, Op::Lag { rtt_ms }),
                read: Some(received),
                repair: false,
            });
        }
    }

    /// Client side: a local connection closed: its owners forget its proxies.
    pub fn closed(&self, conn: u64) {
        self.followers.remove(&conn);
    }

    /// Client side: the owner of `game` seated this node's connection `conn` (a game
    /// started by a pairing), which closed before the game's first frame got here, so this
    /// node never follows the game for it and would never say it closed: the owner is told
    /// now, and the seat is away (its player can come back, or his opponent claim).
    pub(super) fn closed_before_seated(self: &Arc<Self>, game: GameId, conn: u64) {
        let cluster = self.clone();
        tokio::spawn(async move {
            let cmd = cluster.remote_cmd(conn, Op::Closed);
            let _ = cluster.request(game, &cmd, false).await;
        });
    }

    /// Client side: the commands of one local connection, in order, and what the owners
    /// send it.
    async fn follow(self: Arc<Self>, peer: Peer, mut rx: mpsc::Receiver<Queued>) {
        let conn = peer.conn;
        // Subscribed before the first request goes out (same NATS connection, so the
        // server has the subscription before the owner answers).
        let sub = match self.client.subscribe(conn_subjects(&self.node, conn)).await {
            Ok(sub) => sub,
            Err(e) => {
                tracing::error!(error = %e, "cannot follow a remote game");
                self.followers.remove(&conn);
                return;
            }
        };
        let to_socket = peer.clone();
        let cluster = self.clone();
        // The request id of the last one-way action sent to each game, for the error
        // should NATS say nobody serves it (one entry per game followed).
        let last_acts: Arc<std::sync::Mutex<HashMap<GameId, Option<Reply>>>> = Arc::default();
        let acts = last_acts.clone();
        let forwarder = tokio::spawn(async move {
            let mut sub = sub;
            while let Some(msg) = sub.next().await {
                if let Some(status) = msg.status {
                    // Not a frame: NATS's own answer to a one-way action.
                    let unserved = status == async_nats::StatusCode::NO_RESPONDERS;
                    let game = msg.subject.rsplit('.').next().and_then(|g| g.parse().ok());
                    if let (true, Some(game)) = (unserved, game) {
                        let reply = acts.lock().expect("acts lock").get(&game).cloned();
                        let (code, message) = cluster.unserved(game).await;
                        to_socket
                            .replying(reply.flatten().map(Arc::new))
                            .send_msg(&game_error(code, message, game));
                    }
                    continue;
                }
                let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(msg.payload) else {
                    continue;
                };
                if !cluster.direct(conn, &to_socket, text).await {
                    break;
                }
            }
        });
        let mut games = HashSet::new();
        while let Some(Queued {
            game,
            mut cmd,
            read,
            repair,
        }) = rx.recv().await
        {
            games.insert(game);
            let following = matches!(cmd.op, Op::Join { .. } | Op::Watch { .. });
            match &cmd.op {
                // The game's stream first: nothing published after the owner's answer
                // is missed. A repair keeps the client's place.
                Op::Join { .. } | Op::Watch { .. } if !repair => {
                    let player = match cmd.op {
                        Op::Join { .. } => cmd.player.clone(),
                        _ => None,
                    };
                    self.fan_add(game, &peer, player).await;
                }
                Op::Leave { .. } => {
                    last_acts.lock().expect("acts lock").remove(&game);
                    self.fan_remove(game, conn).await
                }
                _ => {}
            }
            let reply = cmd.reply.clone();
            if let Some(read) = read {
                cmd.age_us = read.elapsed().as_micros() as u64;
            }
            if cmd.op.oneway() {
                // One way (see the parent module): a refusal comes as a frame.
                let body: Bytes = serde_json::to_vec(&cmd).expect("commands serialise").into();
                let sent = if let Op::Act { .. } = cmd.op {
                    remember(&last_acts, game, reply.clone());
                    let unserved = unserved_subject(&self.node, conn, game);
                    self.client
                        .publish_with_reply(cmd_subject(game), unserved, body)
                        .await
                } else {
                    self.client.publish(cmd_subject(game), body).await
                };
                if let Err(e) = sent {
                    tracing::warn!(game = %game, error = %e, "a command for another node was not sent");
                }
                continue;
            }
            let answer = self.request(game, &cmd, !repair).await;
            if let Some((code, message)) = answer.error {
                if let (
                    true,
                    Op::Join {
                        after_seq: Some(at),
                    }
                    | Op::Watch {
                        after_seq: Some(at),
                        ..
                    },
                ) = (repair && self.rooms.game(game).is_some(), &cmd.op)
                {
                    // The game was taken over by this very node while the resumption was
                    // on its way (the owner refuses its own node's clients): joined here.
                    self.rehome(game, conn, *at);
                    continue;
                }
                if repair && code != "unknown_game" {
                    // This node's own resumption (a repair, or the adoption of a game its
                    // owner started for the client) could not be served now (the game is
                    // busy, or did not answer): the client keeps its place and what it
                    // gets; a gap the stream shows is asked again.
                    tracing::debug!(game = %game, conn, code, "a resumption of this node's was refused");
                    self.repair_failed(game, conn);
                    continue;
                }
                if following {
                    self.fan_remove(game, conn).await;
                }
                let reply = reply.map(|mut r| {
                    r.at_ms = r.at_ms.or(answer.at_ms);
                    Arc::new(r)
                });
                peer.replying(reply)
                    .send_msg(&game_error(&code, message, game));
            }
        }
        for game in games {
            self.fan_remove(game, conn).await;
            let cmd = self.remote_cmd(conn, Op::Closed);
            let _ = self.request(game, &cmd, false).await;
        }
        forwarder.abort();
    }

    async fn request(&self, game: GameId, cmd: &RemoteCmd, client_asked: bool) -> Answer {
        let body: Bytes = serde_json::to_vec(cmd).expect("commands serialise").into();
        // A game a pairing just started is served on its subject once its owner claimed
        // it, a few milliseconds after its players got their snapshots: a watch or join
        // right then (a watcher told of the game by its player) finds nobody yet, so
        // those two are asked again for a little while before the game is called unknown.
        // Only a client's own: this node's resumptions (repairs, adoptions) have their
        // own handling of a game nobody serves.
        let patient = client_asked && matches!(cmd.op, Op::Join { .. } | Op::Watch { .. });
        let give_up = Instant::now() + NEW_GAME_WAIT;
        loop {
            let asked = self.client.request(cmd_subject(game), body.clone());
            let answer = tokio::time::timeout(Duration::from_secs(5), asked).await;
            let nobody = matches!(&answer, Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders);
            if nobody && !(patient && Instant::now() < give_up) {
                let (code, message) = self.unserved(game).await;
                return Answer::refused(code, message);
            }
            if !nobody {
                return Self::answer(answer);
            }
            // Should this node take the game over meanwhile, it answers the next try
            // itself, `game_moving` (see `Cluster::command`): served locally on the
            // client's own next try.
            tokio::time::sleep(NEW_GAME_WAIT / 10).await;
        }
    }

    /// Why nobody serves `game`: its node is gone and another one takes it over (the
    /// database still has it live: `game_moving`, the client tries again after the
    /// game's next event), or it is over and gone (`unknown_game`). Asked only when NATS
    /// answered "no responders", so at most once per command the client sent.
    pub(super) async fn unserved(&self, game: GameId) -> (&'static str, String) {
        match self.rooms.store.is_live(game).await {
            Ok(true) => {
                self.stats
                    .moving
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                (
                    "game_moving",
                    format!(
                        "the node running game {game} is gone; another node takes it over within \
                     seconds: act again after the game's next event"
                    ),
                )
            }
            _ => ("unknown_game", format!("there is no live game {game}")),
        }
    }

    fn answer(
        answer: Result<
            Result<async_nats::Message, async_nats::RequestError>,
            tokio::time::error::Elapsed,
        >,
    ) -> Answer {
        match answer {
            Ok(Ok(msg)) => serde_json::from_slice(&msg.payload).unwrap_or_default(),
            // "No responders" is answered before, by `unserved`.
            Ok(Err(e)) => Answer::refused("game_unreachable", e.to_string()),
            Err(_) => Answer::refused(
                "game_unreachable",
                "the game's node did not answer: try again in a moment".into(),
            ),
        }
    }
}

/// Keeps the request id of the last one-way action for `game`; bounded: the ids of
/// games acted in long ago are of no use.
fn remember(
    acts: &std::sync::Mutex<HashMap<GameId, Option<Reply>>>,
    game: GameId,
    reply: Option<Reply>,
) {
    let mut last = acts.lock().expect("acts lock");
    if last.len() >= FOLLOW_QUEUE && !last.contains_key(&game) {
        last.clear();
    }
    last.insert(game, reply);
}
