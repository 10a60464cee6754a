//! `watch_code` across nodes: a private game runs on one node, and a watcher who has its
//! code may be connected to any other. Each node answers `tamsk.code.<CODE>` with the id
//! of its live game started from that code, and stays silent when it has none; the
//! watcher's node then watches the game at its owner giving the code, which the owner
//! checks (see `owner`: a private game is not watched by id alone).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use protocol::wire::GameId;

use super::{Cluster, Op, Queued, RemoteCmd};
use crate::peer::Peer;

/// How long a node waits for the node of a code's game: every node but the owner stays
/// silent, so an unknown code costs this wait.
const CODE_WAIT: Duration = Duration::from_millis(300);

fn code_subject(code: &str) -> String {
    format!("tamsk.code.{code}")
}

impl Cluster {
    /// Owner side: answers, for each game of this node started from a code, who asks
    /// for that code.
    pub(super) async fn serve_codes(self: &Arc<Self>) -> anyhow::Result<()> {
        let mut sub = self.client.subscribe(code_subject("*")).await?;
        let cluster = self.clone();
        tokio::spawn(async move {
            while let Some(msg) = sub.next().await {
                let (Some(reply), Some(code)) = (msg.reply, msg.subject.rsplit('.').next()) else {
                    continue;
                };
                if let Some(game) = cluster.local_game_of_code(code) {
                    let _ = cluster
                        .client
                        .publish(reply, Bytes::from(game.to_string()))
                        .await;
                }
            }
        });
        Ok(())
    }

    /// The newest live game of this node started from `code` (already checked).
    fn local_game_of_code(&self, code: &str) -> Option<GameId> {
        self.rooms
            .games
            .iter()
            .filter(|g| g.code.as_deref() == Some(code))
            .map(|g| *g.key())
            .max()
    }

    /// Client side: the live game started from `code` (checked) on any other node.
    pub async fn find_code(&self, code: &str) -> Option<GameId> {
        let asked = self.client.request(code_subject(code), Bytes::new());
        let msg = tokio::time::timeout(CODE_WAIT, asked).await.ok()?.ok()?;
        std::str::from_utf8(&msg.payload).ok()?.parse().ok()
    }

    /// Client side: local connection `peer` watches `game`, owned elsewhere, with its
    /// code. Returns false when the connection was cut off for filling its queue.
    pub fn watch_code(self: &Arc<Self>, game: GameId, code: String, peer: Peer) -> bool {
        let queued = Queued {
            game,
            cmd: RemoteCmd {
                reply: peer.reply.as_deref().cloned(),
                ..self.remote_cmd(
                    peer.conn,
                    Op::Watch {
                        after_seq: None,
                        code: Some(code),
                    },
                )
            },
            read: None,
            repair: false,
        };
        self.queue(&peer, queued)
    }
}
