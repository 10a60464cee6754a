//! This node's lease: its key in [`NODES_BUCKET`], whose `max_age` is the lease, is the
//! one proof that it still runs its games. The key is written with a compare-and-set on
//! the revision the node wrote last, every third of a lease, by a task of its own (a
//! long takeover scan cannot delay it). A write that succeeds proves, for
//! [`proven_part`] of a lease counted from before it was asked, that no other node takes
//! over any game of this node: another node takes a game only once its owner's key is
//! gone (see `takeover`), and the key lives a whole lease from when NATS received it. So
//! each success extends the tenure of every game the node owns, in memory: one NATS
//! write per node per third of a lease, however many games it runs. (Until session 15
//! each game had a lease of its own, refreshed every third of a lease: 4,000 live games
//! were 2,000 JetStream writes a second, most of a node's and of nats-server's CPU at
//! 400 moves a second.)
//!
//! A write refused because the key is no longer the one this node wrote (it lapsed: the
//! node stalled, or was cut off from NATS, longer than a lease) ends the tenure of every
//! game at once, and the node takes a key again: its games may have been taken over
//! meanwhile; those that were not are taken back by its own takeover scan (their owner
//! key still names it), rebuilt from their journals like anyone else's.
//!
//! [`NODES_BUCKET`]: super::NODES_BUCKET
//! [`proven_part`]: crate::tenure::proven_part

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use async_nats::jetstream::kv;
use bytes::Bytes;
use protocol::wire::GameId;
use tokio::time::Instant;

use super::nodes::Heartbeat;
use super::Cluster;

/// The revision of this node's key it wrote last, and until when that write is proven.
#[derive(Default)]
pub(super) struct NodeLease {
    revision: AtomicU64,
    proven: Mutex<Option<Instant>>,
}

impl NodeLease {
    /// Until when this node's lease is proven, if it is now.
    pub(super) fn proven(&self) -> Option<Instant> {
        let proven = *self.proven.lock().expect("node lease lock");
        proven.filter(|until| Instant::now() < *until)
    }

    fn set(&self, revision: u64, proven: Option<Instant>) {
        self.revision.store(revision, Ordering::SeqCst);
        *self.proven.lock().expect("node lease lock") = proven;
    }
}

impl Cluster {
    fn heartbeat(&self) -> Bytes {
        let beat = Heartbeat {
            games: self.rooms.games.len(),
        };
        serde_json::to_vec(&beat)
            .expect("heartbeats serialise")
            .into()
    }

    /// Takes this node's key: at start, before it serves anyone, and again after its
    /// lease lapsed. A key of this node's id still there is its own from before (a
    /// restart within a lease, or the lapsed lease's deletion marker): written over.
    pub(super) async fn take_node_key(&self) -> anyhow::Result<()> {
        let asked = Instant::now();
        let last = match self.nodes.entry(&self.node).await? {
            Some(e) => e.revision,
            None => 0,
        };
        let revision = self
            .nodes
            .update(&self.node, self.heartbeat(), last)
            .await?;
        self.leased(revision, asked);
        Ok(())
    }

    /// Takes this node's key at start (see [`super::at_start`]).
    pub(super) async fn take_node_key_at_start(&self) -> anyhow::Result<()> {
        super::at_start("this node's key", || self.take_node_key()).await
    }

    /// The key was written with `revision`, asked at `asked`: every owned game is held
    /// for the proven part of a lease from then.
    fn leased(&self, revision: u64, asked: Instant) {
        let until = asked + crate::tenure::proven_part(self.lease);
        self.lease_state.set(revision, Some(until));
        for o in self.owned.iter() {
            o.tenure.extend(until);
        }
    }

    /// Renews this node's lease (every third of a lease, see `renew_loop`).
    pub(super) async fn renew(&self) {
        let asked = Instant::now();
        let revision = self.lease_state.revision.load(Ordering::SeqCst);
        let error = match self
            .nodes
            .update(&self.node, self.heartbeat(), revision)
            .await
        {
            Ok(revision) => return self.leased(revision, asked),
            Err(e) => e,
        };
        // Refused, or no answer in time: only a key that is no longer this node's last
        // write proves the lease lapsed. Otherwise nothing is proven either way: the games
        // stop when their proven part runs out, unless a later renewal gets through.
        let lapsed = match self.nodes.entry(&self.node).await {
            Ok(Some(e)) => e.revision != revision || e.operation != kv::Operation::Put,
            Ok(None) => true,
            Err(_) => false,
        };
        if !lapsed {
            tracing::warn!(error = %error, "this node's lease was not renewed");
            return;
        }
        tracing::error!(
            node = %self.node,
            "this node's lease lapsed (it stalled or lost NATS for longer than a lease): its games stop here"
        );
        self.lapsed().await;
    }

    /// This node stops for good, every game of it stopped and their journals written: its
    /// key goes, so that the other nodes take its games (suspended, live in the database)
    /// at their next scan, not a lease later when the key would have expired. Not while a
    /// game task of it still runs (its tenure runs out first, a lease after the last
    /// renewal), nor once the key is another run's (the same node id started again).
    pub async fn leave(&self) {
        if !self.rooms.games.is_empty() {
            return;
        }
        let ours = self.lease_state.revision.load(Ordering::SeqCst);
        if matches!(self.nodes.entry(&self.node).await, Ok(Some(e)) if e.revision == ours) {
            match self.nodes.delete(&self.node).await {
                Ok(()) => tracing::info!(node = %self.node, "left the cluster"),
                Err(e) => tracing::warn!(error = %e, "cannot delete this node's key"),
            }
        }
    }

    /// Every game of this node may have been taken over: each stops here (see `fence`),
    /// and the node takes a key again. A game nobody took is taken back by the takeover
    /// scan, from its journal.
    async fn lapsed(&self) {
        let _claiming = self.claims.lock().await;
        self.lease_state.set(0, None);
        let owned: Vec<GameId> = self.owned.iter().map(|o| *o.key()).collect();
        for id in owned {
            self.lose(id);
        }
        if let Err(e) = self.take_node_key().await {
            tracing::warn!(error = %e, "cannot take this node's key again");
        }
    }
}
