//! Where a game the leader pairs runs: on the node of one of its players, not on the
//! leader. The leader would otherwise carry every paired game of the cluster, and a
//! game between two players of one node would cross NATS for every move.
//!
//! - **The choice** ([`ClusterLobby::placement`]): of the two players' nodes, the one
//!   that runs fewer live games: the leader's own count for itself, for another node the
//!   count its last heartbeat gave (read every turn of the lobby's loop, a quarter lease)
//!   plus the games placed there since. So a node that just joined (or came back) takes
//!   the new games until it carries its share, and a node full of games with the
//!   computer is spared. On a tie, or while a node's count is unknown (a leader's first
//!   turn), the red player's node (seats are drawn at random, so games spread over the
//!   players' nodes as the players do). A game with a seat the leader cannot place (a
//!   peer that is neither a relay nor one of its connections) runs on the leader.
//! - **The start** ([`ClusterLobby::start_at`]): the leader asks that node on
//!   `tamsk.lobby.start.<node>` to start the game with the id, settings and seats it
//!   chose. The node seats its own connection directly and each other seat through a
//!   relay that publishes to the seat's node on `tamsk.lobby.to.<node>`, as the leader's
//!   relays do: that node adopts the game from its snapshot (see `fanout`). The game is
//!   claimed before its first frame leaves for another node (`Cluster::newly_seated`).
//! - **Failure**: a node that is gone (no responders) or refuses (it is shutting down,
//!   or does not know a player) leaves the game to the leader, which starts it itself
//!   with the same id. A node that does not answer in time may still have started it:
//!   the leader then starts nothing, and tells both players `seek_cancelled` (should the
//!   game come up after all, they get its snapshot as well).

use super::*;

/// One seat of a game the leader asks another node to start.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeatAt {
    pub node: String,
    pub conn: u64,
    pub player: String,
    /// What the snapshot answers (the message that made the pairing).
    pub reply: Option<Reply>,
    /// The connection's round trip, when measured (see `game::spawn`).
    pub lag_ms: Option<u64>,
}

/// A game to start, as the leader chose it: `seats` are `[red, black]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StartReq {
    pub game: GameId,
    pub settings: Settings,
    pub rated: Option<bool>,
    pub code: Option<String>,
    pub seats: [SeatAt; 2],
}

pub(super) fn start_subject(node: &str) -> String {
    format!("tamsk.lobby.start.{node}")
}

/// Starts a game on the node that serves it (the leader's own hub, as a fallback).
pub type StartHere = Box<dyn FnOnce() + Send>;

impl ClusterLobby {
    /// Leader side: the node that should run a game between `seekers` (`[red, black]`)
    /// and the seats to tell it, or `None` to run it here.
    pub fn placement(&self, seekers: &[Seeker; 2]) -> Option<(String, [SeatAt; 2])> {
        let seat = |s: &Seeker| -> Option<SeatAt> {
            let (node, conn) = match self.relay_keys.get(&s.peer.conn) {
                Some(key) => key.clone(),
                None if self.local.contains_key(&s.peer.conn) => {
                    (self.cluster.node.clone(), s.peer.conn)
                }
                None => return None,
            };
            Some(SeatAt {
                node,
                conn,
                player: s.player.id.clone(),
                reply: s.peer.reply.as_deref().cloned(),
                lag_ms: s.peer.seated.lag(),
            })
        };
        let seats = [seat(&seekers[0])?, seat(&seekers[1])?];
        let node = self.lighter(&seats[0].node, &seats[1].node);
        if node == self.cluster.node {
            return None;
        }
        if let Some(games) = self.loads.lock().expect("loads lock").get_mut(&node) {
            *games += 1;
        }
        Some((node, seats))
    }

    /// Of `red`'s and `black`'s nodes, the one with fewer live games; `red` on a tie or
    /// when a count is unknown.
    fn lighter(&self, red: &str, black: &str) -> String {
        let games = |node: &str| -> Option<usize> {
            if node == self.cluster.node {
                return Some(self.cluster.rooms.games.len());
            }
            self.loads.lock().expect("loads lock").get(node).copied()
        };
        match (games(red), games(black)) {
            (Some(r), Some(b)) if b < r => black.to_string(),
            _ => red.to_string(),
        }
    }

    /// Leader side: each other node's live games as placement counts them.
    pub fn node_loads(&self) -> Vec<(String, usize)> {
        let mut loads: Vec<(String, usize)> = self
            .loads
            .lock()
            .expect("loads lock")
            .iter()
            .map(|(n, g)| (n.clone(), *g))
            .collect();
        loads.sort();
        loads
    }

    /// Leader side: has `node` start the game `req` (see the module's comment); `here`
    /// starts it on this node instead, should that node be gone or refuse.
    pub fn start_at(self: &Arc<Self>, node: String, req: StartReq, here: StartHere) {
        let lobby = self.clone();
        tokio::spawn(async move {
            let client = &lobby.cluster.client;
            let id = req.game;
            // Their nodes stop remembering the seeks (a leader change would make them
            // again): the pairing is the leader's word, wherever the game runs.
            for seat in req.seats.iter().filter(|s| s.node != lobby.cluster.node) {
                lobby.publish_paired(&seat.node, seat.conn, id).await;
            }
            let body = Bytes::from(serde_json::to_vec(&req).expect("starts serialise"));
            let asked = client.request(start_subject(&node), body);
            let refused = match tokio::time::timeout(ASK_WAIT, asked).await {
                Ok(Ok(msg)) => match serde_json::from_slice::<Result<(), String>>(&msg.payload) {
                    Ok(Ok(())) => {
                        tracing::debug!(game = %id, node = %node, "a paired game runs on a player's node");
                        return;
                    }
                    Ok(Err(why)) => why,
                    Err(e) => format!("bad answer: {e}"),
                },
                Ok(Err(e)) => e.to_string(),
                Err(_) => {
                    tracing::warn!(game = %id, node = %node, "a node did not answer the start of a game: its players are told their seeks went");
                    for seat in &req.seats {
                        lobby.tell_cancelled(seat);
                    }
                    return;
                }
            };
            tracing::warn!(game = %id, node = %node, why = %refused, "a node did not start a paired game: it runs on the lobby's leader");
            here();
        });
    }

    async fn publish_paired(&self, node: &str, conn: u64, game: GameId) {
        let paired = frame(conn, FRAME_PAIRED, game.to_string().as_bytes());
        let _ = self.cluster.client.publish(to_subject(node), paired).await;
    }

    /// Leader side: a game starts here for `seekers`: the nodes of those who are relays
    /// are told they were paired, as for a game placed elsewhere. (A relay's own first
    /// frame of the game says so too, but a relay that is a connection's proxy in a game
    /// here already sends on the connection's subject, which does not.)
    pub fn tell_paired(self: &Arc<Self>, seekers: &[Seeker; 2], game: GameId) {
        let remote: Vec<(String, u64)> = seekers
            .iter()
            .filter_map(|s| self.relay_keys.get(&s.peer.conn).map(|k| k.clone()))
            .collect();
        if remote.is_empty() {
            return;
        }
        let lobby = self.clone();
        tokio::spawn(async move {
            for (node, conn) in remote {
                lobby.publish_paired(&node, conn, game).await;
            }
        });
    }

    /// Leader side: tells a seat's connection its seek went (through its relay, or to
    /// this node's own connection).
    fn tell_cancelled(&self, seat: &SeatAt) {
        let peer = if seat.node == self.cluster.node {
            self.local.get(&seat.conn).map(|l| l.peer.clone())
        } else {
            let key = (seat.node.clone(), seat.conn);
            self.relays.get(&key).map(|r| r.peer.clone())
        };
        if let Some(peer) = peer {
            peer.send_msg(&ServerMessage::SeekCancelled);
        }
    }

    /// Node side: starts the games the leader places here, one at a time.
    pub(super) async fn serve_starts(self: Arc<Self>, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            let answer = match serde_json::from_slice::<StartReq>(&msg.payload) {
                Ok(req) => self.start_here(req).await,
                Err(e) => Err(format!("bad start request: {e}")),
            };
            if let Some(reply) = msg.reply {
                let body = serde_json::to_vec(&answer).expect("answers serialise");
                let _ = self.cluster.client.publish(reply, body.into()).await;
            }
        }
    }

    async fn start_here(&self, req: StartReq) -> Result<(), String> {
        let rooms = &self.cluster.rooms;
        if rooms.closed_for_new_games() {
            return Err("the node is shutting down".into());
        }
        if rooms.games.contains_key(&req.game) {
            // Asked again (never expected): it runs.
            return Ok(());
        }
        let [red, black] = req.seats;
        let seekers = [self.seeker(red).await?, self.seeker(black).await?];
        let options = crate::game::Options {
            rated: req.rated,
            code: req.code,
            tournament: None,
        };
        crate::game::spawn(rooms.clone(), req.game, req.settings, seekers, options);
        Ok(())
    }

    /// Node side: a seat of a game placed here: this node's connection, or a relay to the
    /// seat's node (its proxy here, for what that node sends for it later).
    async fn seeker(&self, seat: SeatAt) -> Result<Seeker, String> {
        let player = (self.cluster.resolve)(seat.player.clone())
            .await
            .ok_or_else(|| format!("unknown player {}", seat.player))?;
        let peer = if seat.node == self.cluster.node {
            // Closed meanwhile: the seat is away from the start, as on one node.
            let local = self.local.get(&seat.conn).map(|l| l.peer.clone());
            local.unwrap_or_else(|| self.cluster.rooms.empty_seat_peer())
        } else {
            let key = (seat.node.clone(), seat.conn);
            let proxy = self.cluster.proxies.get(&key).map(|p| p.clone());
            match proxy.clone().filter(|p| !p.is_gone()) {
                Some(p) => p,
                None => {
                    let id = self.cluster.proxy_id(&key, proxy.as_ref());
                    let peer = self.relay_peer(&seat.node, seat.conn, id);
                    if let Some(lag) = seat.lag_ms {
                        peer.seated.set_lag(lag);
                    }
                    self.cluster.proxies.insert(key.clone(), peer.clone());
                    self.placed.insert(key, peer.conn);
                    peer
                }
            }
        };
        Ok(Seeker {
            player,
            peer: peer.replying(seat.reply.map(Arc::new)),
        })
    }

    /// Node side: the relays made for games placed here whose connections never
    /// followed them (closed before the game's first frame reached their node), once
    /// they sit in no game any more, are forgotten; the others go as a proxy does, when
    /// their node says the connection closed.
    pub(super) fn forget_placed(&self) {
        let idle: Vec<((String, u64), u64)> = self
            .placed
            .iter()
            .map(|p| (p.key().clone(), *p.value()))
            .collect();
        for (key, conn) in idle {
            let proxy = self.cluster.proxies.get(&key).map(|p| p.clone());
            let Some(proxy) = proxy.filter(|p| p.conn == conn) else {
                // Gone from the proxies already (its node said it closed).
                self.placed.remove(&key);
                continue;
            };
            if proxy.seated.list().is_empty() && !self.cluster.follows_any(&key) {
                self.cluster.proxies.remove_if(&key, |_, p| p.conn == conn);
                self.placed.remove(&key);
            }
        }
    }
}
