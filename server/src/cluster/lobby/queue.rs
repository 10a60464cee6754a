//! Node side: a connection's lobby messages wait for the leader in a queue of their own,
//! served in order by a task, so that while one waits for an election (up to two leases)
//! the connection's moves and other game messages go on.

use protocol::wire::LobbyMessage;

use super::*;

/// Lobby messages of one connection waiting for the leader; one more is refused
/// `lobby_unavailable`.
const ASK_QUEUE: usize = 16;

/// A lobby message of a local connection, with the peer its answers go to.
pub(in crate::cluster) struct Asked {
    pub(super) op: LobbyOp,
    pub(super) peer: Peer,
    pub(super) player: Option<Arc<PlayerRec>>,
    /// A seek the node makes again at a new leader (see `ClusterLobby::move_seek`).
    pub(super) moved: bool,
}

impl ClusterLobby {
    /// Node side: queues a lobby message of local connection `peer` (answers to `peer`,
    /// which carries the request's id) for the leader, without waiting.
    pub fn submit(self: &Arc<Self>, peer: Peer, player: Option<Arc<PlayerRec>>, op: LobbyOp) {
        {
            let mut local = self
                .local
                .entry(peer.conn)
                .or_insert_with(|| Local::new(&peer, player.clone()));
            if local.player.is_none() {
                local.player = player.clone();
            }
        }
        self.enqueue(Asked {
            op,
            peer,
            player,
            moved: false,
        });
    }

    /// Queues `asked` for its connection, if it is still open (its queue and task made
    /// on first use).
    pub(super) fn enqueue(self: &Arc<Self>, asked: Asked) {
        let tx = {
            let Some(mut local) = self.local.get_mut(&asked.peer.conn) else {
                return;
            };
            local
                .asks
                .get_or_insert_with(|| {
                    let (tx, rx) = mpsc::channel(ASK_QUEUE);
                    tokio::spawn(self.clone().serve_asks(rx));
                    tx
                })
                .clone()
        };
        let (peer, moved) = (asked.peer.clone(), asked.moved);
        if tx.try_send(asked).is_err() {
            if moved {
                peer.send_msg(&ServerMessage::SeekCancelled);
                return;
            }
            peer.send_msg(&crate::codec::error(
                "lobby_unavailable",
                format!(
                    "{ASK_QUEUE} lobby messages already wait for the lobby: try again in a moment"
                ),
                None,
            ));
        }
    }

    /// One connection's queued lobby messages, in order.
    async fn serve_asks(self: Arc<Self>, mut rx: mpsc::Receiver<Asked>) {
        while let Some(Asked {
            op,
            peer,
            player,
            moved,
        }) = rx.recv().await
        {
            if let LobbyOp::ListGames = op {
                let games = self.summaries().await;
                peer.send_msg(&ServerMessage::Games { games });
                continue;
            }
            // Sent by the node for the client, not by the client: nothing to answer.
            let quiet = matches!(op, LobbyOp::Gone | LobbyOp::CancelSeek { quiet: true });
            let outcome = match self.ask(&peer, player.as_ref(), op.clone()).await {
                // This node took the lead while the message waited for one.
                Outcome::Here if !quiet => self.serve_here(op, peer.clone(), player),
                outcome => outcome,
            };
            if moved {
                // Told `seeking` by the new leader, or paired: else it went.
                if !matches!(outcome, Outcome::Waiting | Outcome::Game(_)) {
                    peer.send_msg(&ServerMessage::SeekCancelled);
                }
            } else if !quiet {
                answer(&peer, outcome);
            }
        }
    }

    /// A queued message served by this node's own hub, which leads the lobby now.
    fn serve_here(&self, op: LobbyOp, peer: Peer, player: Option<Arc<PlayerRec>>) -> Outcome {
        match (player, op) {
            (Some(player), op) => self.host.lobby_op(op, Seeker { player, peer }),
            (None, LobbyOp::ListSeeks) => self.host.lobby_list(false),
            (None, LobbyOp::ListPlayers) => self.host.lobby_list(true),
            // A guest sends nothing else (the connection refuses it first).
            (None, _) => Outcome::Refused,
        }
    }
}

/// What the node tells the client of an outcome (the leader sent the rest itself).
fn answer(peer: &Peer, outcome: Outcome) {
    match outcome {
        Outcome::Seeks(seeks) => {
            peer.send_lobby(&LobbyMessage::Seeks { seeks });
        }
        Outcome::Players(players, online) => {
            peer.send_lobby(&LobbyMessage::Players { players, online });
        }
        Outcome::Unavailable(why) => {
            peer.send_msg(&crate::codec::error(
                "lobby_unavailable",
                format!("the lobby cannot be reached right now ({why}): try again in a moment"),
                None,
            ));
        }
        Outcome::Here | Outcome::Game(_) | Outcome::Done | Outcome::Waiting | Outcome::Refused => {}
    }
}
