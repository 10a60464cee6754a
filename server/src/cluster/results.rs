//! Tournament results between nodes: the lobby's leader runs the tournaments and starts
//! their games, but a game may end on another node (the leader changed during a round, or
//! the game was taken over after its node died). Every node publishes the result of each
//! tournament game that ends there on [`SUBJECT`]; every node's tournament runner hears
//! them, and the leader's records those of the tournaments it runs (once: a result already
//! recorded is ignored, its own included).

use futures::StreamExt;

use super::Cluster;
use crate::tournament_model::TournamentResult;

const SUBJECT: &str = "tamsk.tournament.over";

impl Cluster {
    /// Tells every node a tournament game ended here.
    pub async fn tell_tournament_result(&self, result: &TournamentResult) {
        let body = serde_json::to_vec(result).expect("results serialise");
        if let Err(e) = self.client.publish(SUBJECT, body.into()).await {
            tracing::warn!(game = %result.game, error = %e, "a tournament result was not published");
        }
    }

    /// The tournament results every node tells (this one's too).
    pub async fn tournament_results(
        &self,
    ) -> anyhow::Result<impl futures::Stream<Item = TournamentResult> + Unpin + Send> {
        let sub = self.client.subscribe(SUBJECT).await?;
        Ok(sub.filter_map(|msg| futures::future::ready(serde_json::from_slice(&msg.payload).ok())))
    }
}
