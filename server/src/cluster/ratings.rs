//! Ratings moved by a game on one node, told to the others. Each node keeps the ratings
//! of the players it holds in memory (what its snapshots show and, on the lobby's leader,
//! what matching reads); a rated game's changes are computed and stored by the node that
//! ran it, from the stored ratings, so nothing is lost, but the other nodes showed the
//! old figure until the player came back to them fresh. Now the node that ran the game
//! publishes the new ratings on [`SUBJECT`] and every other node sets them on the players
//! it holds. A message that arrives after a newer one (two games of one player ending on
//! two nodes at once) changes nothing: a rating is only replaced by one with more games.

use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use protocol::rating::TimeControl;
use serde::{Deserialize, Serialize};
use skillratings::glicko2::Glicko2Rating;

use super::Cluster;
use crate::glicko::{Change, Rated};

/// Where a node publishes the ratings its games moved.
const SUBJECT: &str = "tamsk.ratings";

#[derive(Serialize, Deserialize)]
struct Shared {
    /// The node that ran the game (it has set them already).
    node: String,
    ratings: Vec<SharedRating>,
}

/// One player's rating in one control after a game.
#[derive(Serialize, Deserialize)]
struct SharedRating {
    player_id: String,
    tc: TimeControl,
    rating: f64,
    deviation: f64,
    volatility: f64,
    games: u32,
    wins: u32,
    losses: u32,
    draws: u32,
}

impl Cluster {
    /// Tells the other nodes the ratings a game of this node moved (best effort: a node
    /// that misses it shows the old figure, as before, until it reads the player again).
    pub fn share_ratings(self: &Arc<Self>, changes: &[Change]) {
        if changes.is_empty() {
            return;
        }
        let shared = Shared {
            node: self.node.clone(),
            ratings: changes
                .iter()
                .map(|c| SharedRating {
                    player_id: c.player_id.clone(),
                    tc: c.tc,
                    rating: c.after.glicko.rating,
                    deviation: c.after.glicko.deviation,
                    volatility: c.after.glicko.volatility,
                    games: c.after.games,
                    wins: c.after.wins,
                    losses: c.after.losses,
                    draws: c.after.draws,
                })
                .collect(),
        };
        let body: Bytes = serde_json::to_vec(&shared)
            .expect("ratings serialise")
            .into();
        let client = self.client.clone();
        tokio::spawn(async move {
            if let Err(e) = client.publish(SUBJECT, body).await {
                tracing::warn!(error = %e, "the ratings a game moved were not told to the other nodes");
            }
        });
    }

    /// The ratings other nodes' games moved, as they come: (player, control, rating).
    pub async fn shared_ratings(
        self: &Arc<Self>,
    ) -> anyhow::Result<impl Stream<Item = Vec<(String, TimeControl, Rated)>> + use<>> {
        let sub = self.client.subscribe(SUBJECT).await?;
        let cluster = self.clone();
        Ok(sub.filter_map(move |msg| {
            let cluster = cluster.clone();
            async move {
                let shared: Shared = serde_json::from_slice(&msg.payload).ok()?;
                if shared.node == cluster.node {
                    return None;
                }
                cluster.stats.ratings_received.fetch_add(
                    shared.ratings.len() as u64,
                    std::sync::atomic::Ordering::Relaxed,
                );
                Some(
                    shared
                        .ratings
                        .into_iter()
                        .map(|r| {
                            let rated = Rated {
                                glicko: Glicko2Rating {
                                    rating: r.rating,
                                    deviation: r.deviation,
                                    volatility: r.volatility,
                                },
                                games: r.games,
                                wins: r.wins,
                                losses: r.losses,
                                draws: r.draws,
                            };
                            (r.player_id, r.tc, rated)
                        })
                        .collect(),
                )
            }
        }))
    }
}
