//! Which nodes are alive: each node keeps its key (its node id) in the JetStream
//! key-value bucket [`NODES_BUCKET`], whose `max_age` is the lease, by writing it every
//! third of a lease, with the number of live games it runs ([`Heartbeat`]). An owner that
//! finds the key of a node gone treats each proxy of that node's clients in its games as a
//! closed connection: a seat is away (with its reconnection grace) instead of looking
//! present until the game ends. The lobby reads the same keys: its leader drops a dead
//! node's seeks, places games by the counts, and lists of games wait for the live nodes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use dashmap::DashMap;

use async_nats::jetstream::{self, kv};
use protocol::wire::GameId;

use super::Cluster;
use crate::rooms::GameCmd;

/// Every this many takeover scans, the owner key of every game is read, whoever owned it.
const FULL_SCAN_EVERY: u64 = 10;

/// The owners of other nodes' live games, as last read from the owners' bucket. A
/// takeover scan reads a game's key only when its owner's node no longer says it is
/// alive (its keys expire together with its games' leases, both written every third of
/// a lease), or when the owner is unknown: one read per node per scan instead of one per
/// game (200 games over 2 nodes: 120 JetStream reads a second, about a tenth of the
/// NATS messages of 600 moves a second). Every [`FULL_SCAN_EVERY`]th scan reads them
/// all, in case a game's lease lapsed while its node lived on.
#[derive(Default)]
pub(super) struct OwnersSeen {
    owners: DashMap<GameId, String>,
    scans: AtomicU64,
}

/// One scan's view: which owners are alive, each asked once.
pub(super) struct Scan {
    full: bool,
    alive: HashMap<String, bool>,
}

impl OwnersSeen {
    /// Begins a scan of the `live` games (the others are forgotten: bounded by the
    /// database's live games).
    pub(super) fn scan(&self, live: impl Iterator<Item = GameId>) -> Scan {
        let live: HashSet<GameId> = live.collect();
        self.owners.retain(|id, _| live.contains(id));
        Scan {
            full: self
                .scans
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(FULL_SCAN_EVERY),
            alive: HashMap::new(),
        }
    }

    /// The owners' bucket says `node` owns `game`.
    pub(super) fn saw(&self, game: GameId, node: &[u8]) {
        self.owners
            .insert(game, String::from_utf8_lossy(node).into_owned());
    }
}

/// What a node's key says (its value in [`NODES_BUCKET`]).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Heartbeat {
    /// The live games the node runs.
    pub games: usize,
}

/// The key-value bucket of the live nodes.
pub const NODES_BUCKET: &str = "tamsk_nodes";

/// Opens (or creates) the nodes' bucket, whose keys live a lease.
pub(super) async fn bucket(js: &jetstream::Context, lease: Duration) -> anyhow::Result<kv::Store> {
    open_bucket(js, NODES_BUCKET, lease).await
}

/// Opens the key-value bucket `name` (history 1, keys expiring after `max_age`), creating
/// it if missing. Nodes started together may both find it missing: the one whose
/// creation fails opens the other's.
pub(super) async fn open_bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
) -> anyhow::Result<kv::Store> {
    if let Ok(kv) = js.get_key_value(name).await {
        return Ok(kv);
    }
    let created = js
        .create_key_value(kv::Config {
            bucket: name.into(),
            history: 1,
            max_age,
            ..Default::default()
        })
        .await;
    match created {
        Ok(kv) => Ok(kv),
        Err(e) => js
            .get_key_value(name)
            .await
            .map_err(|_| anyhow::anyhow!("JetStream key-value bucket {name}: {e}")),
    }
}

impl Cluster {
    pub(super) async fn say_alive(&self) {
        let beat = Heartbeat {
            games: self.rooms.games.len(),
        };
        let beat = serde_json::to_vec(&beat).expect("heartbeats serialise");
        if let Err(e) = self.nodes.put(&self.node, beat.into()).await {
            tracing::warn!(error = %e, "cannot say this node is alive");
        }
    }

    /// Every third of a lease: says this node is alive, and closes the proxies of the
    /// nodes that no longer say so.
    pub(super) async fn nodes_tick(&self) {
        self.say_alive().await;
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

    /// Whether `game` is owned, as last read, by another node that is still alive (so
    /// there is nothing to take over and its key need not be read).
    pub(super) async fn owner_alive(&self, scan: &mut Scan, game: GameId) -> bool {
        if scan.full {
            return false;
        }
        let Some(owner) = self.owners_seen.owners.get(&game).map(|o| o.clone()) else {
            return false;
        };
        if owner == self.node {
            return false;
        }
        if let Some(&alive) = scan.alive.get(&owner) {
            return alive;
        }
        // Unknown (an error) counts as not alive: the game's own key is read.
        let alive = matches!(self.nodes.entry(&owner).await,
            Ok(Some(e)) if e.operation == kv::Operation::Put);
        scan.alive.insert(owner, alive);
        alive
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tenth_scan_reads_every_key_and_games_no_longer_live_are_forgotten() {
        let seen = OwnersSeen::default();
        let (g1, g2) = (GameId::now_v7(), GameId::now_v7());
        let fulls: Vec<bool> = (0..2 * FULL_SCAN_EVERY)
            .map(|_| seen.scan([g1, g2].into_iter()).full)
            .collect();
        let expected: Vec<bool> = (0..2 * FULL_SCAN_EVERY)
            .map(|i| i % FULL_SCAN_EVERY == 0)
            .collect();
        assert_eq!(fulls, expected);
        seen.saw(g1, b"a");
        seen.saw(g2, b"b");
        seen.scan([g2].into_iter());
        assert!(!seen.owners.contains_key(&g1), "g1 ended: forgotten");
        assert_eq!(seen.owners.get(&g2).map(|o| o.clone()), Some("b".into()));
    }
}
