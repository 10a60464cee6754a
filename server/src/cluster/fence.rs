//! Fencing: no game is played by two nodes at once, even when one stalls past its lease
//! (a long pause, an overload, SIGSTOP) and another takes the game meanwhile.
//!
//! - **The owner stops first.** A game's task runs only while its node can prove its
//!   lease (`tenure`; the node's one lease holds all its games, see `lease`): a renewal
//!   that succeeds proves it for [`proven_part`] of a lease counted from before the
//!   renewal was asked (the key expires a whole lease after NATS received it). A node
//!   that wakes from a stall finds the proof out of date before it does anything else,
//!   and the game is suspended there: nothing stored, nothing announced, its clients told
//!   `game_moved` (they join again, which reaches the new owner). A renewal refused
//!   because the key lapsed ends the tenure of all the node's games at once.
//! - **The database refuses the stale owner.** A takeover adds one to the game row's
//!   `owner_epoch` ([`crate::store::Store::fence_game`]) *before* reading the journal.
//!   Every journal row and the end carry the writer's epoch and are written only if the
//!   row still has it; what is refused makes its node drop the game
//!   ([`Cluster::drop_fenced`]). So even a write queued before a stall cannot land after
//!   the new owner read the journal.
//!
//! [`proven_part`]: crate::tenure::proven_part

use protocol::wire::GameId;

use async_nats::jetstream::kv;
use tokio::time::Instant;

use super::takeover::KEY_REWRITE;
use super::Cluster;
use crate::store::LiveGame;

impl Cluster {
    /// Writes again the owner keys that are due (every [`KEY_REWRITE`], so that none
    /// expires under a live game); lets go of the games that are gone.
    pub(super) async fn rewrite_keys(&self) {
        let now = Instant::now();
        let due: Vec<(GameId, u64, bool)> = self
            .owned
            .iter()
            .filter_map(|o| {
                let gone = !self.rooms.games.contains_key(o.key());
                let due = o.refreshed + KEY_REWRITE <= now;
                (gone || due).then_some((*o.key(), o.revision, gone))
            })
            .collect();
        for (id, revision, gone) in due {
            if gone {
                if let Some((_, o)) = self.owned.remove(&id) {
                    o.server.abort();
                    // Only a key this node still holds goes: a game suspended because
                    // the node's lease lapsed may have a new owner's key by now.
                    if o.tenure.holds() {
                        let _ = self.kv.purge(id.to_string()).await;
                    }
                }
                continue;
            }
            match self
                .kv
                .update(id.to_string(), self.node.clone().into(), revision)
                .await
            {
                Ok(revision) => {
                    if let Some(mut o) = self.owned.get_mut(&id) {
                        o.revision = revision;
                        o.refreshed = Instant::now();
                    }
                }
                // No answer in time (NATS slow or away): tried again at the next turn.
                Err(e) if e.kind() == kv::UpdateErrorKind::TimedOut => {
                    tracing::warn!(game = %id, error = %e, "an owner key's rewrite timed out");
                }
                Err(e) => {
                    // Refused: another node took the game (this node's lease lapsed
                    // meanwhile): the game task stops here (see the module's doc).
                    tracing::error!(game = %id, error = %e, "lost the key of a game");
                    self.lose(id);
                }
            }
        }
    }

    /// This node no longer holds `id`: its commands are no longer served here and its
    /// game task suspends the game.
    pub(super) fn lose(&self, id: GameId) {
        if let Some((_, o)) = self.owned.remove(&id) {
            o.server.abort();
            o.tenure.lose();
        }
        if let Some(g) = self.rooms.games.get(&id) {
            g.tenure.lose();
        }
        self.foreign.insert(id, ());
    }

    /// This node lost `id` (its game task stopped for that reason): it must not answer
    /// the game's commands any more.
    pub(super) fn stale(&self, id: GameId) -> bool {
        self.owned.get(&id).is_none_or(|o| !o.tenure.holds()) && !self.rooms.games.contains_key(&id)
    }

    /// Drops the games whose writes the database refused as a stale owner's.
    pub(super) fn drop_fenced(&self) {
        for id in self.rooms.store.take_fenced() {
            tracing::error!(game = %id, node = %self.node, "fenced: another node took the game");
            self.lose(id);
        }
    }

    /// A takeover, once this node holds the key of `id`: fences the former owner out
    /// (one more on the row's epoch), then reads the journal. `None` (and the key let go)
    /// if the game is no longer live or cannot be read.
    pub(super) async fn fence_and_load(&self, id: GameId) -> Option<LiveGame> {
        let fenced = match self.rooms.store.fence_game(id).await {
            Ok(Some(epoch)) => self.rooms.store.live_game(id).await.map(|g| (epoch, g)),
            Ok(None) => Ok((0, None)),
            Err(e) => Err(e),
        };
        match fenced {
            Ok((epoch, Some(game))) => {
                tracing::info!(game = %id, epoch, "fenced the former owner out");
                Some(game)
            }
            Ok((_, None)) => {
                let _ = self.kv.purge(id.to_string()).await;
                None
            }
            Err(e) => {
                tracing::error!(game = %id, error = %e, "cannot fence a game to take over");
                let _ = self.kv.purge(id.to_string()).await;
                None
            }
        }
    }
}
