//! Tournaments in the database: every change the runner makes is written before it goes
//! on, so that a restart finds the tournament where it was ([`Store::load_tournament`]).

use protocol::api::TournamentSummary;

use crate::store::Store;
use crate::swiss::{GameResult, Round};
use crate::tournament_model::{TPlayer, TState, Tournament};

impl Store {
    pub async fn insert_tournament(&self, t: &Tournament) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::insert_tournament(pool, t).await
        })
    }

    pub async fn set_tournament_state(
        &self,
        id: &str,
        state: TState,
        round: u32,
        finished_ms: Option<u64>,
    ) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::set_tournament_state(pool, id, state, round, finished_ms).await
        })
    }

    pub async fn insert_tournament_player(
        &self,
        id: &str,
        p: &TPlayer,
        joined_ms: u64,
    ) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::insert_tournament_player(pool, id, p, joined_ms).await
        })
    }

    /// Writes a new round's pairings (and its bye) in one transaction.
    pub async fn insert_tournament_round(
        &self,
        id: &str,
        number: u32,
        round: &Round,
    ) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::insert_tournament_round(pool, id, number, round).await
        })
    }

    pub async fn set_tournament_game(
        &self,
        id: &str,
        round: u32,
        board: usize,
        game: &protocol::wire::GameId,
    ) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::set_tournament_game(pool, id, round, board, game).await
        })
    }

    pub async fn set_tournament_result(
        &self,
        id: &str,
        round: u32,
        board: usize,
        result: GameResult,
    ) -> anyhow::Result<()> {
        on_db!(&self.db, Ok(()), |sql, pool| {
            sql::tournaments::set_tournament_result(pool, id, round, board, result).await
        })
    }

    /// The tournament with this id, as stored.
    pub async fn load_tournament(&self, id: &str) -> anyhow::Result<Option<Tournament>> {
        on_db!(&self.db, Ok(None), |sql, pool| {
            sql::tournaments::load_tournament(pool, id).await
        })
    }

    /// The ids of the tournaments not over (to go on after a restart).
    pub async fn live_tournament_ids(&self) -> anyhow::Result<Vec<String>> {
        on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::tournaments::live_tournament_ids(pool).await
        })
    }

    /// Upcoming and running tournaments (soonest first), then the last finished ones.
    pub async fn tournament_summaries(&self) -> anyhow::Result<Vec<TournamentSummary>> {
        on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::tournaments::tournament_summaries(pool).await
        })
    }
}
