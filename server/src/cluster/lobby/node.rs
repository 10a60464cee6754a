//! A node's side: its clients' lobby messages sent to the leader, and the frames the
//! leader sends back handed to their sockets.

use super::*;

impl ClusterLobby {
    /// Node side: hands frames the leader sent to this node's connections.
    pub(super) async fn deliver(self: Arc<Self>, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            let p = &msg.payload;
            if p.len() < 9 {
                continue;
            }
            let conn = u64::from_be_bytes(p[..8].try_into().expect("8 bytes"));
            let peer = {
                let Some(mut local) = self.local.get_mut(&conn) else {
                    continue;
                };
                if p[8] == FRAME_PAIRED {
                    local.seeking = false;
                    continue;
                }
                local.peer.clone()
            };
            // The relay is also the connection's proxy in the leader's games: their
            // frames are ordered with the games' streams like those of any owner.
            if let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(msg.payload.slice(9..)) {
                self.cluster.direct(conn, &peer, text).await;
            }
        }
    }

    /// Node side: the leader, unless it is this node (then the hub serves locally).
    pub fn remote(&self) -> bool {
        !self.leading()
    }

    /// Node side: a local connection said hello.
    pub async fn said_hello(&self, player: &Arc<PlayerRec>, peer: &Peer) {
        self.local.insert(
            peer.conn,
            Local {
                peer: peer.replying(None),
                player: Some(player.clone()),
                seeking: false,
            },
        );
        if self.remote() {
            self.ask(peer, Some(player), LobbyOp::Online).await;
        }
    }

    /// Node side: a local connection closed.
    pub fn closed(self: &Arc<Self>, conn: u64) {
        let Some((_, local)) = self.local.remove(&conn) else {
            return;
        };
        if let Some(leader) = self.leader_node().filter(|_| self.remote()) {
            let lobby = self.clone();
            tokio::spawn(async move {
                let req = LobbyReq {
                    node: lobby.cluster.node.clone(),
                    conn,
                    player: local.player.map(|p| p.id.clone()),
                    reply: None,
                    op: LobbyOp::Gone,
                };
                let body = serde_json::to_vec(&req).expect("requests serialise");
                let asked = lobby
                    .cluster
                    .client
                    .request(at_subject(&leader), body.into());
                let _ = tokio::time::timeout(ASK_WAIT, asked).await;
            });
        }
    }

    /// Node side: sends a client's lobby message to the leader and waits for what it did.
    pub async fn ask(&self, peer: &Peer, player: Option<&Arc<PlayerRec>>, op: LobbyOp) -> Outcome {
        let seeks = matches!(op, LobbyOp::Seek { .. } | LobbyOp::Host { .. });
        let ends_seek = matches!(
            op,
            LobbyOp::CancelSeek { .. }
                | LobbyOp::AcceptSeek { .. }
                | LobbyOp::JoinCode { .. }
                | LobbyOp::AcceptChallenge { .. }
        );
        self.local.entry(peer.conn).or_insert_with(|| Local {
            peer: peer.replying(None),
            player: player.cloned(),
            seeking: false,
        });
        let Some(leader) = self.leader_node() else {
            return Outcome::Unavailable("no node leads the lobby yet".into());
        };
        let req = LobbyReq {
            node: self.cluster.node.clone(),
            conn: peer.conn,
            player: player.map(|p| p.id.clone()),
            reply: peer.reply.as_deref().cloned(),
            op,
        };
        let body = serde_json::to_vec(&req).expect("requests serialise");
        let asked = self
            .cluster
            .client
            .request(at_subject(&leader), body.into());
        let outcome = match tokio::time::timeout(ASK_WAIT, asked).await {
            Ok(Ok(msg)) => serde_json::from_slice(&msg.payload)
                .unwrap_or_else(|e| Outcome::Unavailable(format!("bad lobby answer: {e}"))),
            Ok(Err(e)) => Outcome::Unavailable(e.to_string()),
            Err(_) => Outcome::Unavailable("the lobby's node did not answer".into()),
        };
        if let Some(mut l) = self.local.get_mut(&peer.conn) {
            match outcome {
                Outcome::Waiting if seeks => l.seeking = true,
                Outcome::Game(_) if ends_seek || seeks => l.seeking = false,
                Outcome::Done if ends_seek => l.seeking = false,
                _ => {}
            }
        }
        outcome
    }
}
