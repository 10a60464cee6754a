//! Which nodes are alive: each node keeps its key (its node id) in the JetStream
//! key-value bucket [`NODES_BUCKET`], whose `max_age` is the lease, by writing it every
//! third of a lease, with the number of live games it runs ([`Heartbeat`]); that key is
//! also the node's lease on all its games (see `lease`). An owner that
//! finds the key of a node gone treats each proxy of that node's clients in its games as a
//! closed connection: a seat is away (with its reconnection grace) instead of looking
//! present until the game ends. The lobby reads the same keys: its leader drops a dead
//! node's seeks, places games by the counts, and lists of games wait for the live nodes.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use dashmap::DashMap;

use async_nats::jetstream::{self, kv};
use protocol::wire::GameId;
use tokio::time::Instant;

use super::Cluster;
use crate::rooms::GameCmd;

/// At most this often, a takeover scan reads the owner key of every game, whoever owned it:
/// a safety net only (an owner reads its own games' keys at every scan), so counted in
/// time, not in scans, which come every third of a lease.
const FULL_SCAN_EVERY: Duration = Duration::from_secs(30);

/// The owners of other nodes' live games, as last read from the owners' bucket. A
/// takeover scan reads a game's key only when its owner's node no longer says it is
/// alive (a game changes owner only once its owner's key is gone, see `takeover`), or
/// when the owner is unknown: one read per node per scan instead of one per game (200
/// games over 2 nodes: 120 JetStream reads a second, about a tenth of the NATS messages
/// of 600 moves a second). A scan every [`FULL_SCAN_EVERY`] reads them all, in case a
/// game's key went (its owner deleted it) while its node lived on.
#[derive(Default)]
pub(super) struct OwnersSeen {
    owners: DashMap<GameId, String>,
    /// When a scan last read every key.
    last_full: std::sync::Mutex<Option<Instant>>,
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
        let now = Instant::now();
        let mut last = self.last_full.lock().expect("last full scan lock");
        let full = last.is_none_or(|at| now >= at + FULL_SCAN_EVERY);
        if full {
            *last = Some(now);
        }
        Scan {
            full,
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
/// creation fails opens the other's. A bucket made with another `max_age` (by nodes of
/// another `--lease-ms`, or of a version whose owner keys lived a lease) is given this
/// one: keys that lapse sooner than their writers expect would end leases that hold.
pub(super) async fn open_bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: Duration,
) -> anyhow::Result<kv::Store> {
    if let Ok(kv) = js.get_key_value(name).await {
        let mut config = kv.status().await?.info.config;
        if config.max_age == max_age {
            return Ok(kv);
        }
        tracing::warn!(
            bucket = name,
            was_ms = config.max_age.as_millis() as u64,
            now_ms = max_age.as_millis() as u64,
            "a key-value bucket's max_age changed (every node of a cluster must have the same --lease-ms)"
        );
        config.max_age = max_age;
        // As the bucket's creation sets it: never longer than the keys live.
        config.duplicate_window = config.duplicate_window.min(max_age);
        js.update_stream(&config)
            .await
            .map_err(|e| anyhow::anyhow!("JetStream key-value bucket {name}: {e}"))?;
        return Ok(js.get_key_value(name).await?);
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
    /// Every third of a lease: closes the proxies of the nodes that no longer say they
    /// are alive.
    pub(super) async fn nodes_tick(&self) {
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
        self.node_alive(scan, &owner).await
    }

    /// Whether `node` still has its key (asked once a scan). Unknown (an error) counts as
    /// alive: a game is taken from its owner only on proof that the owner's lease lapsed.
    pub(super) async fn node_alive(&self, scan: &mut Scan, node: &str) -> bool {
        if let Some(&alive) = scan.alive.get(node) {
            return alive;
        }
        let alive = match self.nodes.entry(node).await {
            Ok(Some(e)) => e.operation == kv::Operation::Put,
            Ok(None) => false,
            Err(_) => true,
        };
        scan.alive.insert(node.to_string(), alive);
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

    #[tokio::test(start_paused = true)]
    async fn a_scan_every_half_minute_reads_every_key_and_games_no_longer_live_are_forgotten() {
        let seen = OwnersSeen::default();
        let (g1, g2) = (GameId::now_v7(), GameId::now_v7());
        let scan = || seen.scan([g1, g2].into_iter()).full;
        assert!(scan(), "the first scan reads every key");
        // Scans a second apart (a third of the default lease).
        let mut fulls = Vec::new();
        for _ in 0..60 {
            tokio::time::advance(Duration::from_secs(1)).await;
            fulls.push(scan());
        }
        let at: Vec<usize> = (0..60).filter(|&i| fulls[i]).collect();
        assert_eq!(at, [29, 59], "every 30 s");
        seen.saw(g1, b"a");
        seen.saw(g2, b"b");
        seen.scan([g2].into_iter());
        assert!(!seen.owners.contains_key(&g1), "g1 ended: forgotten");
        assert_eq!(seen.owners.get(&g2).map(|o| o.clone()), Some("b".into()));
    }
}
