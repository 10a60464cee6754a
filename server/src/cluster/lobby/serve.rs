//! The leader's side: the lobby messages of other nodes' clients, served one at a time,
//! and the relays that carry what the lobby and the games send those clients.

use super::*;

impl ClusterLobby {
    /// Leader side: a remote connection closed (or its node died).
    pub(super) fn gone(&self, node: &str, conn: u64) {
        let Some((_, relay)) = self.relays.remove(&(node.to_string(), conn)) else {
            return;
        };
        self.relay_keys.remove(&relay.peer.conn);
        // The relay stays the proxy of the games it still follows here: each lets go of
        // it on the `Closed` its node sends (or when its node is found dead).
        let key = (node.to_string(), conn);
        if !self.cluster.follows_any(&key) {
            self.cluster
                .proxies
                .remove_if(&key, |_, p| p.conn == relay.peer.conn);
        }
        self.host.lobby_op(
            LobbyOp::Gone,
            Seeker {
                player: relay.player.clone(),
                peer: relay.peer.clone(),
            },
        );
        relay.peer.kill.kill(1001, "connection closed");
    }

    /// Leader side: the relay of a remote connection (made on its first message).
    fn relay(&self, node: &str, conn: u64, player: &Arc<PlayerRec>) -> Option<Peer> {
        let key = (node.to_string(), conn);
        if let Some(r) = self.relays.get(&key) {
            return Some(r.peer.clone());
        }
        if self.relays.len() >= MAX_RELAYS {
            return None;
        }
        // A connection that already follows a game here (this node became the leader
        // since) keeps the peer it has in it: a second one in the proxies' place would
        // leave the game's unknown to its later commands (its leave, its close).
        let proxy = self.cluster.proxies.get(&key).map(|p| p.clone());
        let peer = match proxy.clone().filter(|p| !p.is_gone()) {
            Some(proxy) => proxy,
            None => {
                let id = self.cluster.proxy_id(&key, proxy.as_ref());
                let peer = self.relay_peer(node, conn, id);
                self.cluster.proxies.insert(key.clone(), peer.clone());
                peer
            }
        };
        self.relay_keys.insert(peer.conn, key.clone());
        self.relays.insert(
            key,
            Relay {
                peer: peer.clone(),
                player: player.clone(),
                online: false,
            },
        );
        Some(peer)
    }

    /// A peer (`id`: see [`Cluster::proxy_id`]) whose frames go to connection `conn` of
    /// `node`, through that node's lobby subject (see [`relay_out`]).
    pub(super) fn relay_peer(&self, node: &str, conn: u64, id: u64) -> Peer {
        let rooms = &self.cluster.rooms;
        let (tx, rx) = crate::outbox::channel(rooms.config.outbound_queue);
        let peer = Peer {
            conn: id,
            tx: tx.into(),
            kill: Default::default(),
            seated: Default::default(),
            reply: None,
        };
        tokio::spawn(relay_out(
            self.cluster.clone(),
            peer.clone(),
            node.to_string(),
            conn,
            rx,
        ));
        peer
    }

    /// Leader side: serves the lobby messages of the other nodes' clients, one at a time.
    pub(super) async fn serve(self: Arc<Self>, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            let outcome = match serde_json::from_slice::<LobbyReq>(&msg.payload) {
                Ok(req) => self.serve_one(req).await,
                Err(e) => Outcome::Unavailable(format!("bad lobby request: {e}")),
            };
            if let Some(reply) = msg.reply {
                let body = serde_json::to_vec(&outcome).expect("outcomes serialise");
                let _ = self.cluster.client.publish(reply, body.into()).await;
            }
        }
    }

    async fn serve_one(&self, req: LobbyReq) -> Outcome {
        // A node the heartbeats read last did not show yet (it just started): the lists
        // gathered from every node wait for its answer from now on.
        self.saw_node(&req.node);
        if let LobbyOp::Gone = req.op {
            self.gone(&req.node, req.conn);
            return Outcome::Done;
        }
        if !self.leading() {
            return Outcome::Unavailable(NOT_LEADING.into());
        }
        match req.op {
            LobbyOp::ListSeeks => return self.host.lobby_list(false),
            LobbyOp::ListPlayers => return self.host.lobby_list(true),
            _ => {}
        }
        let Some(id) = req.player else {
            return Outcome::Unavailable("say hello first".into());
        };
        let Some(player) = (self.cluster.resolve)(id.clone()).await else {
            return Outcome::Unavailable(format!("unknown player {id}"));
        };
        let Some(relay) = self.relay(&req.node, req.conn, &player) else {
            return Outcome::Unavailable("the lobby is full: try again later".into());
        };
        if let LobbyOp::Online = req.op {
            let key = (req.node.clone(), req.conn);
            let already = self
                .relays
                .get_mut(&key)
                .is_none_or(|mut r| std::mem::replace(&mut r.online, true));
            if already {
                return Outcome::Done;
            }
        }
        // The term is checked again right before the pairing (see the module's comment):
        // resolving the player may have waited for the database.
        if !self.leading() {
            return Outcome::Unavailable(NOT_LEADING.into());
        }
        let peer = relay.replying(req.reply.map(Arc::new));
        self.host.lobby_op(req.op, Seeker { player, peer })
    }
}

/// Leader side: publishes what is queued for a remote connection, in order. A frame of a
/// game this node has not claimed yet waits for the claim (the first frames of a game
/// just started by a pairing): the client's first command must find the game served.
async fn relay_out(
    cluster: Arc<Cluster>,
    peer: Peer,
    node: String,
    conn: u64,
    mut rx: crate::outbox::Receiver<axum::extract::ws::Utf8Bytes>,
) {
    let subject = to_subject(&node);
    let mut known: HashSet<GameId> = HashSet::new();
    while let Some(text) = rx.recv().await {
        for game in cluster.newly_seated(&peer, &mut known).await {
            let paired = frame(conn, FRAME_PAIRED, game.to_string().as_bytes());
            let _ = cluster.client.publish(subject.clone(), paired).await;
        }
        let body = frame(conn, FRAME_TEXT, text.as_bytes());
        if cluster.client.publish(subject.clone(), body).await.is_err() {
            break;
        }
    }
}
