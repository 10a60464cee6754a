//! The ratings' SQL.

use protocol::api::{RatingChange, HISTORY_LIMIT, LEADERBOARD_LIMIT};
use protocol::rating::{ShownRating, TimeControl};
use skillratings::glicko2::Glicko2Rating;
use sqlx::{Pool, Row, Transaction};

use super::{ms, DbRow, DB};
use crate::glicko::{Change, Rated, RatedGame};

fn rated_of(r: &DbRow) -> Rated {
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

/// A player's stored ratings, by control.
pub async fn ratings_of(
    pool: &Pool<DB>,
    player_id: &str,
) -> anyhow::Result<Vec<(TimeControl, Rated)>> {
    let rows = sqlx::query(
        "SELECT tc, rating, deviation, volatility, games, wins, losses, draws \
         FROM ratings WHERE player_id = $1",
    )
    .bind(player_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            Some((
                TimeControl::parse(&r.get::<String, _>("tc")).ok()?,
                rated_of(r),
            ))
        })
        .collect())
}

/// Applies a rated game to the stored ratings in one transaction: the two players' rows
/// are created if missing, then read and held (`FOR UPDATE` in PostgreSQL, in player id
/// order so that two games ending at once on two nodes cannot deadlock; SQLite's writer
/// lock holds the file), and written with their history rows. A game already applied
/// changes nothing (empty).
pub async fn apply_rated(pool: &Pool<DB>, game: &RatedGame) -> anyhow::Result<Vec<Change>> {
    let mut tx = super::begin(pool).await?;
    let done = sqlx::query("SELECT 1 FROM rating_changes WHERE game_id = $1 LIMIT 1")
        .bind(game.game.to_string())
        .fetch_optional(&mut *tx)
        .await?;
    if done.is_some() {
        return Ok(Vec::new());
    }
    let mut ids = game.players.clone();
    ids.sort();
    let fresh = Rated::default();
    for id in &ids {
        sqlx::query(
            "INSERT INTO ratings (player_id, tc, rating, deviation, volatility, games, wins, \
             losses, draws, updated_ms) VALUES ($1, $2, $3, $4, $5, 0, 0, 0, 0, $6) \
             ON CONFLICT (player_id, tc) DO NOTHING",
        )
        .bind(id)
        .bind(game.tc.name())
        .bind(fresh.glicko.rating)
        .bind(fresh.glicko.deviation)
        .bind(fresh.glicko.volatility)
        .bind(ms(game.at_ms))
        .execute(&mut *tx)
        .await?;
    }
    let lock = if <DB as sqlx::Database>::NAME == "PostgreSQL" {
        " FOR UPDATE"
    } else {
        ""
    };
    let rows = sqlx::query(&format!(
        "SELECT player_id, rating, deviation, volatility, games, wins, losses, draws \
         FROM ratings WHERE tc = $1 AND player_id IN ($2, $3) ORDER BY player_id{lock}"
    ))
    .bind(game.tc.name())
    .bind(&ids[0])
    .bind(&ids[1])
    .fetch_all(&mut *tx)
    .await?;
    let stored = |id: &String| {
        rows.iter()
            .find(|r| &r.get::<String, _>("player_id") == id)
            .map(rated_of)
            .unwrap_or_default()
    };
    let before = [stored(&game.players[0]), stored(&game.players[1])];
    let changes = crate::glicko::changes(game, before);
    for c in &changes {
        write_change(&mut tx, c).await?;
    }
    tx.commit().await?;
    Ok(changes.into())
}

/// Writes a rating change: the rating it leads to, and its history row.
async fn write_change(tx: &mut Transaction<'_, DB>, c: &Change) -> anyhow::Result<()> {
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
    .execute(&mut **tx)
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
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The best rated players of `tc`, best first: (id, name, rating).
pub async fn leaderboard(
    pool: &Pool<DB>,
    tc: TimeControl,
) -> anyhow::Result<Vec<(String, String, Rated)>> {
    let rows = sqlx::query(
        "SELECT r.player_id, p.name, r.rating, r.deviation, r.volatility, r.games, \
         r.wins, r.losses, r.draws FROM ratings r JOIN players p ON p.id = r.player_id \
         WHERE r.tc = $1 AND r.games > 0 ORDER BY r.rating DESC, p.name LIMIT $2",
    )
    .bind(tc.name())
    .bind(LEADERBOARD_LIMIT as i64)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get("player_id"), r.get("name"), rated_of(r)))
        .collect())
}

/// The player whose name has this key: (id, name, bot).
pub async fn player_by_name_key(
    pool: &Pool<DB>,
    key: &str,
) -> anyhow::Result<Option<(String, String, bool)>> {
    Ok(
        sqlx::query("SELECT id, name, is_bot FROM players WHERE name_key = $1")
            .bind(key)
            .fetch_optional(pool)
            .await?
            .map(|p| (p.get("id"), p.get("name"), p.get::<bool, _>("is_bot"))),
    )
}

/// A player's recent rating changes, newest first.
pub async fn rating_history(pool: &Pool<DB>, id: &str) -> anyhow::Result<Vec<RatingChange>> {
    let rows = sqlx::query(
        "SELECT c.game_id, c.tc, c.score, c.rating_before, c.rating_after, \
         c.deviation_after, c.at_ms, COALESCE(o.name, c.opponent_id) AS opponent \
         FROM rating_changes c LEFT JOIN players o ON o.id = c.opponent_id \
         WHERE c.player_id = $1 ORDER BY c.at_ms DESC, c.game_id DESC LIMIT $2",
    )
    .bind(id)
    .bind(HISTORY_LIMIT as i64)
    .fetch_all(pool)
    .await?;
    Ok(rows
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
        .collect())
}
