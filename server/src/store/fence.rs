//! Fencing of live games between the nodes of a cluster (issue 18): the epoch a
//! takeover raises ([`Store::fence_game`]), and the games whose writes the database
//! refused as a stale owner's ([`Store::take_fenced`]). The checks themselves are in the
//! SQL (`sql/mod.rs`: `write_entries`, `write_end`).

use std::collections::HashSet;
use std::sync::Mutex;

use protocol::wire::GameId;

use super::{journal, LiveGame, Store};

/// Games whose journal rows or end the database refused because another node took them
/// over (their row's `owner_epoch` is no longer the writer's), until the cluster layer
/// takes them ([`Store::take_fenced`]) to stop running them.
#[derive(Default)]
pub(crate) struct Fenced(Mutex<HashSet<GameId>>);

/// Most games kept as fenced: more is only possible if nobody takes them (a single node
/// never has any), and then forgetting some loses nothing (the game task also checks its
/// lease).
const FENCED_MAX: usize = 4096;

impl Fenced {
    pub(crate) fn add(&self, games: impl IntoIterator<Item = GameId>) {
        let mut set = self.0.lock().expect("fenced lock");
        for game in games {
            tracing::warn!(game = %game, "a write refused: another node owns the game now");
            if set.len() < FENCED_MAX {
                set.insert(game);
            }
        }
    }
}

impl Store {
    /// The live game `id` as stored, rebuilt from its journal (after [`Store::fence_game`]:
    /// every entry its former owner could still write is in).
    pub async fn live_game(&self, id: GameId) -> anyhow::Result<Option<LiveGame>> {
        match &self.db {
            Some(db) => journal::load_one(db, id).await,
            None => Ok(None),
        }
    }

    /// Takes the still live game `id` over from whoever ran it: adds one to its row's
    /// `owner_epoch`, so that from now on the database refuses the journal rows and the
    /// end of any former owner still running it. `None`: the game is no longer live.
    pub async fn fence_game(&self, id: GameId) -> anyhow::Result<Option<u64>> {
        on_db!(&self.db, Ok(None), |sql, pool| sql::journal::fence(
            pool, id
        )
        .await)
    }

    /// Whether a write of `id` was refused as a stale owner's (and not yet taken).
    pub fn was_fenced(&self, id: GameId) -> bool {
        self.fenced.0.lock().expect("fenced lock").contains(&id)
    }

    /// The games whose writes were refused as a stale owner's since the last call.
    pub fn take_fenced(&self) -> Vec<GameId> {
        let mut set = self.fenced.0.lock().expect("fenced lock");
        set.drain().collect()
    }
}
