//! The ratings in the database: read when a player comes, written by the ratings task,
//! listed by the HTTP API. A [`Store::detached`] store keeps none and finds none.

use protocol::api::{ControlStanding, Leaderboard, LeaderboardRow, PlayerProfile};
use protocol::rating::TimeControl;

use crate::glicko::{Change, PlayerRatings, Rated, RatedGame};
use crate::store::Store;

fn standing(tc: TimeControl, r: &Rated) -> ControlStanding {
    ControlStanding {
        tc,
        rating: r.shown(),
        games: r.games,
        wins: r.wins,
        losses: r.losses,
        draws: r.draws,
    }
}

impl Store {
    /// A player's stored ratings.
    pub async fn ratings_of(&self, player_id: &str) -> anyhow::Result<PlayerRatings> {
        let rows = on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::ratings::ratings_of(pool, player_id).await
        })?;
        let mut out = PlayerRatings::default();
        out.by_tc.extend(rows);
        Ok(out)
    }

    /// Applies a rated game to the stored ratings (see `sql::ratings::apply_rated`): the
    /// changes, from the ratings stored before it; empty if it was applied already;
    /// `None` without a database.
    pub async fn apply_rated(&self, game: &RatedGame) -> anyhow::Result<Option<Vec<Change>>> {
        on_db!(&self.db, Ok(None), |sql, pool| {
            sql::ratings::apply_rated(pool, game).await.map(Some)
        })
    }

    /// The best rated players of `tc`, best first (provisional ones included, marked).
    pub async fn leaderboard(&self, tc: TimeControl) -> anyhow::Result<Leaderboard> {
        let rows = on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::ratings::leaderboard(pool, tc).await
        })?;
        let players = rows
            .into_iter()
            .enumerate()
            .map(|(i, (player_id, name, rated))| LeaderboardRow {
                rank: i as u32 + 1,
                player_id,
                name,
                standing: standing(tc, &rated),
            })
            .collect();
        Ok(Leaderboard { tc, players })
    }

    /// The player named `name` (any case), his ratings and recent rating changes.
    pub async fn player_profile(&self, name: &str) -> anyhow::Result<Option<PlayerProfile>> {
        let key = crate::limits::name_key(name);
        let found = on_db!(&self.db, Ok(None), |sql, pool| {
            sql::ratings::player_by_name_key(pool, &key).await
        })?;
        let Some((id, name, bot)) = found else {
            return Ok(None);
        };
        let ratings = self.ratings_of(&id).await?;
        let history = on_db!(&self.db, Ok(Vec::new()), |sql, pool| {
            sql::ratings::rating_history(pool, &id).await
        })?;
        Ok(Some(PlayerProfile {
            player_id: id,
            name,
            bot,
            ratings: ratings
                .by_tc
                .iter()
                .filter(|(_, r)| r.games > 0)
                .map(|(tc, r)| standing(*tc, r))
                .collect(),
            history,
        }))
    }
}
