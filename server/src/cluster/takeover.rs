//! Failover: every third of a lease each node scans the games the database has as live.
//! One that runs nowhere here, is older than a lease, and whose owner key names a node
//! whose own key is gone (its lease lapsed: it died, or stalled or lost NATS for longer
//! than a lease), or has no owner key at all, is claimed with a compare-and-set on that
//! key's revision (one node wins) and rebuilt from its journal by [`game::restore`]: game
//! time ran on meanwhile, and its players are away with a fresh grace until they come
//! back (to any node). A key that names this node is its own from before a restart or a
//! lapse: taken back the same way.
//!
//! Why a node's key and not the game's: an owner holds all its games with the one lease
//! of its node (see `lease`), so its games' keys are written once, when it claims them
//! (and again every [`KEY_REWRITE`], so that they outlive no game by much: the bucket's
//! `max_age` is [`KEY_AGE`]).
//!
//! [`game::restore`]: crate::game::restore

use std::sync::Arc;
use std::time::Duration;

use super::Cluster;
use async_nats::jetstream::kv;

/// How long an owner key lives unless written again (the owners' bucket's `max_age`).
/// A key outlives its game only when its owner dies between storing the game's end and
/// deleting the key.
pub const KEY_AGE: Duration = Duration::from_secs(24 * 3600);

/// How often an owner writes each of its games' keys again (compare-and-set), well
/// within [`KEY_AGE`].
pub(super) const KEY_REWRITE: Duration = Duration::from_secs(3600);

impl Cluster {
    /// Takes the live games of the database that nobody owns (their node died, or this
    /// node restarted or lost its lease).
    pub(super) async fn take_over(self: &Arc<Self>) -> anyhow::Result<()> {
        let live = self.rooms.store.live_ids().await?;
        let now = crate::clock::unix_ms();
        let mut owners = self.owners_seen.scan(live.iter().map(|(id, _)| *id));
        for (id, started_ms) in live {
            if self.rooms.games.contains_key(&id) {
                continue;
            }
            // A game just started elsewhere may not have its key yet.
            if now.saturating_sub(started_ms) < self.lease.as_millis() as u64 {
                continue;
            }
            // A node whose own lease is not proven takes nothing: what it took could be
            // taken from it at once, its key being gone.
            if self.lease_state.proven().is_none() {
                return Ok(());
            }
            if self.owner_alive(&mut owners, id).await {
                continue;
            }
            let key = id.to_string();
            let revision = match self.kv.entry(key.clone()).await? {
                Some(e) if e.operation == kv::Operation::Put => {
                    self.owners_seen.saw(id, &e.value);
                    let owner = String::from_utf8_lossy(&e.value).into_owned();
                    if owner != self.node && self.node_alive(&mut owners, &owner).await {
                        continue;
                    }
                    // Its owner's lease lapsed, or it is this node's own key, from
                    // before its restart or its lease's lapse.
                    match self
                        .kv
                        .update(key, self.node.clone().into(), e.revision)
                        .await
                    {
                        Ok(r) => r,
                        Err(_) => continue,
                    }
                }
                _ => match self.create(id).await {
                    Ok(r) => r,
                    Err(_) => continue,
                },
            };
            // Fenced first, then read: the former owner can write nothing more, so the
            // journal read is the whole of it.
            let Some(game) = self.fence_and_load(id).await else {
                continue;
            };
            let (red, black) = (&game.start.red.player_id, &game.start.black.player_id);
            let seats = match (
                (self.resolve)(red.clone()).await,
                (self.resolve)(black.clone()).await,
            ) {
                (Some(r), Some(b)) => [r, b],
                _ => {
                    tracing::error!(game = %id, "a player of a game to take over is unknown");
                    let _ = self.kv.purge(id.to_string()).await;
                    continue;
                }
            };
            self.foreign.remove(&id);
            match crate::game::restore(&self.rooms, game, seats) {
                Ok(_) => {
                    self.stats
                        .takeovers
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::warn!(game = %id, node = %self.node, "took over a game");
                    self.own(id, revision).await;
                }
                Err(game) => {
                    let _ = self.rooms.store.store_aborted(*game).await;
                    let _ = self.kv.purge(id.to_string()).await;
                }
            }
        }
        Ok(())
    }
}
