//! Which nodes are alive: each node keeps its key (its node id) in the JetStream
//! key-value bucket [`NODES_BUCKET`], whose `max_age` is the lease, by writing it every
//! third of a lease. An owner that finds the key of a node gone treats each proxy of that
//! node's clients in its games as a closed connection: a seat is away (with its
//! reconnection grace) instead of looking present until the game ends.

use std::collections::HashSet;
use std::time::Duration;

use async_nats::jetstream::{self, kv};
use protocol::wire::GameId;

use super::Cluster;
use crate::rooms::GameCmd;

/// The key-value bucket of the live nodes.
pub const NODES_BUCKET: &str = "tamsk_nodes";

/// Opens (or creates) the nodes' bucket, whose keys live a lease.
pub(super) async fn bucket(js: &jetstream::Context, lease: Duration) -> anyhow::Result<kv::Store> {
    match js.get_key_value(NODES_BUCKET).await {
        Ok(kv) => Ok(kv),
        Err(_) => js
            .create_key_value(kv::Config {
                bucket: NODES_BUCKET.into(),
                history: 1,
                max_age: lease,
                ..Default::default()
            })
            .await
            .map_err(|e| anyhow::anyhow!("JetStream key-value bucket {NODES_BUCKET}: {e}")),
    }
}

impl Cluster {
    /// Every third of a lease: says this node is alive, and closes the proxies of the
    /// nodes that no longer say so.
    pub(super) async fn nodes_tick(&self) {
        if let Err(e) = self.nodes.put(&self.node, Default::default()).await {
            tracing::warn!(error = %e, "cannot say this node is alive");
        }
        let nodes: HashSet<String> = self.proxies.iter().map(|p| p.key().0.clone()).collect();
        for node in nodes {
            let alive = match self.nodes.entry(&node).await {
                Ok(Some(e)) => e.operation == kv::Operation::Put,
                Ok(None) => false,
                // Unknown is not dead: try again at the next tick.
                Err(_) => true,
            };
            if !alive {
                self.node_died(&node).await;
            }
        }
    }

    /// The proxies of `node`'s clients are closed connections now: their seats are away.
    async fn node_died(&self, node: &str) {
        let conns: Vec<(String, u64)> = self
            .proxies
            .iter()
            .filter(|p| p.key().0 == node)
            .map(|p| p.key().clone())
            .collect();
        tracing::warn!(
            node,
            proxies = conns.len(),
            "a node is gone: its clients are away"
        );
        for key in conns {
            let Some((_, peer)) = self.proxies.remove(&key) else {
                continue;
            };
            let games = self.following.remove(&key).map(|(_, g)| g);
            for game in games.unwrap_or_default() {
                let Some(handle) = self.rooms.game(game) else {
                    continue;
                };
                // Told `left` (in case the node was only cut off from NATS for a while
                // and its client still listens: it knows to join again).
                let leave = handle.tx.send(GameCmd::Unsubscribe {
                    conn: peer.conn,
                    reply: Some(peer.clone()),
                });
                // Bounded: a game whose queue stays full is left as it is (its next
                // event to the proxy finds nobody reading, as before).
                if tokio::time::timeout(Duration::from_millis(200), leave)
                    .await
                    .is_err()
                {
                    tracing::warn!(game = %game, "a game too busy to drop a dead node's proxy");
                }
            }
        }
    }

    /// Owner side: whether the proxy of (`node`, `conn`) follows any game here.
    pub(super) fn follows_any(&self, key: &(String, u64)) -> bool {
        self.following.get(key).is_some_and(|g| !g.is_empty())
    }

    /// Owner side: the proxy of (`node`, `conn`) follows `game` (it joined or watches).
    pub(super) fn follows(&self, node: &str, conn: u64, game: GameId, follows: bool) {
        let key = (node.to_string(), conn);
        if follows {
            self.following.entry(key).or_default().insert(game);
        } else if let Some(mut games) = self.following.get_mut(&key) {
            games.remove(&game);
        }
    }
}
