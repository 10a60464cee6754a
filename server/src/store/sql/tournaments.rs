//! The tournaments' SQL.

use protocol::api::{TournamentSummary, FINISHED_LIMIT};
use protocol::rating::TimeControl;
use sqlx::types::Json;
use sqlx::{Pool, Row};

use super::{ms, DB};
use crate::store::{game_id_of_text, game_id_text};
use crate::swiss::{Entrant, GameResult, Pairing, Round};
use crate::tournament_model::{TPlayer, TState, Tournament};

pub async fn insert_tournament(pool: &Pool<DB>, t: &Tournament) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO tournaments (id, created_by, rounds, tc, settings, rated, starts_ms, \
         state, round, created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&t.id)
    .bind(&t.created_by)
    .bind(t.rounds as i64)
    .bind(t.tc.name())
    .bind(Json(&t.settings))
    .bind(t.rated)
    .bind(ms(t.starts_ms))
    .bind(t.state.as_str())
    .bind(t.played.len() as i64)
    .bind(ms(t.created_ms))
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn set_tournament_state(
    pool: &Pool<DB>,
    id: &str,
    state: TState,
    round: u32,
    finished_ms: Option<u64>,
) -> anyhow::Result<()> {
    sqlx::query("UPDATE tournaments SET state = $2, round = $3, finished_ms = $4 WHERE id = $1")
        .bind(id)
        .bind(state.as_str())
        .bind(round as i64)
        .bind(finished_ms.map(ms))
        .execute(pool)
        .await?;
    Ok(())
}

pub async fn insert_tournament_player(
    pool: &Pool<DB>,
    id: &str,
    p: &TPlayer,
    joined_ms: u64,
) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO tournament_players (tournament_id, player_id, name, seed, \
         joined_round, withdrawn, joined_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) \
         ON CONFLICT (tournament_id, player_id) DO UPDATE SET withdrawn = excluded.withdrawn",
    )
    .bind(id)
    .bind(&p.entrant.id)
    .bind(&p.name)
    .bind(p.entrant.rating)
    .bind(p.entrant.joined as i64)
    .bind(p.entrant.withdrawn)
    .bind(ms(joined_ms))
    .execute(pool)
    .await?;
    Ok(())
}

/// Writes a new round's pairings (and its bye) in one transaction.
pub async fn insert_tournament_round(
    pool: &Pool<DB>,
    id: &str,
    number: u32,
    round: &Round,
) -> anyhow::Result<()> {
    let mut tx = super::begin(pool).await?;
    let rows = round
        .pairings
        .iter()
        .map(|p| (p.red.as_str(), Some(p.black.as_str())))
        .chain(round.bye.iter().map(|b| (b.as_str(), None)));
    for (board, (red, black)) in rows.enumerate() {
        sqlx::query(
            "INSERT INTO tournament_pairings (tournament_id, round, board, red_id, black_id) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(number as i64)
        .bind(board as i64)
        .bind(red)
        .bind(black)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

pub async fn set_tournament_game(
    pool: &Pool<DB>,
    id: &str,
    round: u32,
    board: usize,
    game: &protocol::wire::GameId,
) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE tournament_pairings SET game_id = $4 \
         WHERE tournament_id = $1 AND round = $2 AND board = $3",
    )
    .bind(id)
    .bind(round as i64)
    .bind(board as i64)
    .bind(game_id_text(game))
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn set_tournament_result(
    pool: &Pool<DB>,
    id: &str,
    round: u32,
    board: usize,
    result: GameResult,
) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE tournament_pairings SET red_score = $4, black_score = $5, forfeit = $6 \
         WHERE tournament_id = $1 AND round = $2 AND board = $3",
    )
    .bind(id)
    .bind(round as i64)
    .bind(board as i64)
    .bind(result.red)
    .bind(result.black)
    .bind(result.forfeit)
    .execute(pool)
    .await?;
    Ok(())
}

/// The tournament with this id, as stored.
pub async fn load_tournament(pool: &Pool<DB>, id: &str) -> anyhow::Result<Option<Tournament>> {
    let Some(r) = sqlx::query(
        "SELECT id, created_by, rounds, tc, settings, rated, starts_ms, state, round, \
         created_ms FROM tournaments WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let tc = TimeControl::parse(&r.get::<String, _>("tc")).map_err(anyhow::Error::msg)?;
    let state = TState::parse(&r.get::<String, _>("state"))?;
    let started = r.get::<i64, _>("round").max(0) as usize;
    let players = sqlx::query(
        "SELECT player_id, name, seed, joined_round, withdrawn FROM tournament_players \
         WHERE tournament_id = $1 ORDER BY joined_ms, player_id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|p| TPlayer {
        entrant: Entrant {
            id: p.get("player_id"),
            rating: p.get("seed"),
            joined: p.get::<i64, _>("joined_round").max(0) as u32,
            withdrawn: p.get::<bool, _>("withdrawn"),
        },
        name: p.get("name"),
    })
    .collect();
    let rows = sqlx::query(
        "SELECT round, board, red_id, black_id, game_id, red_score, black_score, forfeit \
         FROM tournament_pairings WHERE tournament_id = $1 ORDER BY round, board",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let mut played = vec![Round::default(); started];
    let mut games = vec![Vec::new(); started];
    for p in rows {
        let n = p.get::<i64, _>("round") as usize;
        if n == 0 || n > started {
            continue;
        }
        let red: String = p.get("red_id");
        let Some(black) = p.get::<Option<String>, _>("black_id") else {
            played[n - 1].bye = Some(red);
            continue;
        };
        let result = match (
            p.get::<Option<f64>, _>("red_score"),
            p.get::<Option<f64>, _>("black_score"),
        ) {
            (Some(red), Some(black)) => Some(GameResult {
                red,
                black,
                forfeit: p.get::<bool, _>("forfeit"),
            }),
            _ => None,
        };
        played[n - 1].pairings.push(Pairing { red, black, result });
        games[n - 1].push(
            p.get::<Option<String>, _>("game_id")
                .and_then(|g| game_id_of_text(&g)),
        );
    }
    Ok(Some(Tournament {
        id: r.get("id"),
        created_by: r.get("created_by"),
        rounds: r.get::<i64, _>("rounds").max(0) as u32,
        tc,
        settings: r.try_get::<Json<_>, _>("settings")?.0,
        rated: r.get::<bool, _>("rated"),
        starts_ms: r.get::<i64, _>("starts_ms").max(0) as u64,
        state,
        players,
        played,
        games,
        created_ms: r.get::<i64, _>("created_ms").max(0) as u64,
    }))
}

/// The ids of the tournaments not over (to go on after a restart).
pub async fn live_tournament_ids(pool: &Pool<DB>) -> anyhow::Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM tournaments WHERE state IN ('upcoming', 'running') ORDER BY starts_ms",
    )
    .fetch_all(pool)
    .await?)
}

/// Upcoming and running tournaments (soonest first), then the last finished ones.
pub async fn tournament_summaries(pool: &Pool<DB>) -> anyhow::Result<Vec<TournamentSummary>> {
    let rows = sqlx::query(
        "SELECT * FROM (SELECT t.id, t.state, t.tc, t.rated, t.rounds, t.round, t.starts_ms, \
         (SELECT COUNT(*) FROM tournament_players p WHERE p.tournament_id = t.id \
          AND NOT p.withdrawn) AS players \
         FROM tournaments t WHERE t.state IN ('upcoming', 'running') ORDER BY t.starts_ms) AS live \
         UNION ALL SELECT * FROM (SELECT t.id, t.state, t.tc, t.rated, t.rounds, t.round, \
         t.starts_ms, (SELECT COUNT(*) FROM tournament_players p \
          WHERE p.tournament_id = t.id AND NOT p.withdrawn) AS players \
         FROM tournaments t WHERE t.state NOT IN ('upcoming', 'running') \
         ORDER BY t.starts_ms DESC LIMIT $1) AS done",
    )
    .bind(FINISHED_LIMIT as i64)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(TournamentSummary {
                id: r.get("id"),
                state: r.get("state"),
                tc: TimeControl::parse(&r.get::<String, _>("tc")).map_err(anyhow::Error::msg)?,
                rated: r.get::<bool, _>("rated"),
                rounds: r.get::<i64, _>("rounds").max(0) as u32,
                round: r.get::<i64, _>("round").max(0) as u32,
                players: r.get::<i64, _>("players").max(0) as u32,
                starts_ms: r.get::<i64, _>("starts_ms").max(0) as u64,
            })
        })
        .collect()
}
