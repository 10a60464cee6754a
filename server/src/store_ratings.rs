//! The ratings in the database: read when a player comes, written by the ratings task,
//! listed by the HTTP API. A [`Store::detached`] store keeps none and finds none.

use protocol::api::{
    ControlStanding, Leaderboard, LeaderboardRow, PlayerProfile, RatingChange, HISTORY_LIMIT,
    LEADERBOARD_LIMIT,
};
use protocol::rating::{ShownRating, TimeControl};
use skillratings::glicko2::Glicko2Rating;
use sqlx::Row;

use crate::ratings::{Change, PlayerRatings, Rated};
use crate::store::Store;

fn ms(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

fn rated_of(r: &sqlx::sqlite::SqliteRow) -> Rated {
    Rated {
        glicko: Glicko2Rating {
            rating: r.get("rating"),
            deviation: r.get("deviation"),
            volatility: r.get("volatility"),
        },
        games: r.get::<i64, _>("games") as u32,
        wins: r.get::<i64, _>("wins") as u32,
        losses: r.get::<i64, _>("losses") as u32,
        draws: r.get::<i64, _>("draws") as u32,
    }
}

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
        let mut out = PlayerRatings::default();
        let Some(pool) = &self.pool else {
            return Ok(out);
        };
        let rows = sqlx::query(
            "SELECT tc, rating, deviation, volatility, games, wins, losses, draws \
             FROM ratings WHERE player_id = $1",
        )
        .bind(player_id)
        .fetch_all(pool)
        .await?;
        for r in rows {
            if let Ok(tc) = TimeControl::parse(&r.get::<String, _>("tc")) {
                out.by_tc.insert(tc, rated_of(&r));
            }
        }
        Ok(out)
    }

    /// Stores rating changes (and the ratings they lead to) in one transaction.
    pub async fn write_rating_changes(&self, changes: &[Change]) -> anyhow::Result<()> {
        let Some(pool) = &self.pool else {
            return Ok(());
        };
        let mut tx = pool.begin().await?;
        for c in changes {
            let a = &c.after;
            sqlx::query(
                "INSERT INTO ratings (player_id, tc, rating, deviation, volatility, games, wins, \
                 losses, draws, updated_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                 ON CONFLICT (player_id, tc) DO UPDATE SET rating = excluded.rating, \
                 deviation = excluded.deviation, volatility = excluded.volatility, \
                 games = excluded.games, wins = excluded.wins, losses = excluded.losses, \
                 draws = excluded.draws, updated_ms = excluded.updated_ms",
            )
            .bind(&c.player_id)
            .bind(c.tc.name())
            .bind(a.glicko.rating)
            .bind(a.glicko.deviation)
            .bind(a.glicko.volatility)
            .bind(a.games as i64)
            .bind(a.wins as i64)
            .bind(a.losses as i64)
            .bind(a.draws as i64)
            .bind(ms(c.at_ms))
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO rating_changes (game_id, player_id, opponent_id, tc, score, \
                 rating_before, deviation_before, rating_after, deviation_after, \
                 volatility_after, at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                 ON CONFLICT (game_id, player_id) DO NOTHING",
            )
            .bind(&c.game)
            .bind(&c.player_id)
            .bind(&c.opponent_id)
            .bind(c.tc.name())
            .bind(c.score)
            .bind(c.before.rating)
            .bind(c.before.deviation)
            .bind(a.glicko.rating)
            .bind(a.glicko.deviation)
            .bind(a.glicko.volatility)
            .bind(ms(c.at_ms))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The best rated players of `tc`, best first (provisional ones included, marked).
    pub async fn leaderboard(&self, tc: TimeControl) -> anyhow::Result<Leaderboard> {
        let mut players = Vec::new();
        if let Some(pool) = &self.pool {
            let rows = sqlx::query(
                "SELECT r.player_id, p.name, r.rating, r.deviation, r.volatility, r.games, \
                 r.wins, r.losses, r.draws FROM ratings r JOIN players p ON p.id = r.player_id \
                 WHERE r.tc = $1 AND r.games > 0 ORDER BY r.rating DESC, p.name LIMIT $2",
            )
            .bind(tc.name())
            .bind(LEADERBOARD_LIMIT as i64)
            .fetch_all(pool)
            .await?;
            for (i, r) in rows.iter().enumerate() {
                players.push(LeaderboardRow {
                    rank: i as u32 + 1,
                    player_id: r.get("player_id"),
                    name: r.get("name"),
                    standing: standing(tc, &rated_of(r)),
                });
            }
        }
        Ok(Leaderboard { tc, players })
    }

    /// The player named `name` (any case), his ratings and recent rating changes.
    pub async fn player_profile(&self, name: &str) -> anyhow::Result<Option<PlayerProfile>> {
        let Some(pool) = &self.pool else {
            return Ok(None);
        };
        let Some(p) = sqlx::query("SELECT id, name, is_bot FROM players WHERE name_key = $1")
            .bind(crate::limits::name_key(name))
            .fetch_optional(pool)
            .await?
        else {
            return Ok(None);
        };
        let id: String = p.get("id");
        let ratings = self.ratings_of(&id).await?;
        let rows = sqlx::query(
            "SELECT c.game_id, c.tc, c.score, c.rating_before, c.rating_after, \
             c.deviation_after, c.at_ms, COALESCE(o.name, c.opponent_id) AS opponent \
             FROM rating_changes c LEFT JOIN players o ON o.id = c.opponent_id \
             WHERE c.player_id = $1 ORDER BY c.at_ms DESC, c.game_id DESC LIMIT $2",
        )
        .bind(&id)
        .bind(HISTORY_LIMIT as i64)
        .fetch_all(pool)
        .await?;
        let history = rows
            .iter()
            .filter_map(|r| {
                let tc = TimeControl::parse(&r.get::<String, _>("tc")).ok()?;
                let after = ShownRating::new(r.get("rating_after"), r.get("deviation_after"));
                Some(RatingChange {
                    game: r.get("game_id"),
                    tc,
                    opponent: r.get("opponent"),
                    score: r.get("score"),
                    before: r.get::<f64, _>("rating_before").round() as i32,
                    after: after.rating,
                    deviation: after.deviation,
                    at_ms: r.get::<i64, _>("at_ms").max(0) as u64,
                })
            })
            .collect();
        Ok(Some(PlayerProfile {
            player_id: id,
            name: p.get("name"),
            bot: p.get::<i64, _>("is_bot") != 0,
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
