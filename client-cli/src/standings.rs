//! `tamsk leaderboard` and `tamsk player NAME`: the server's HTTP API (`docs/API.md`)
//! as text, or its JSON as it came (`--json`).

use protocol::api::{Leaderboard, PlayerProfile};
use serde::de::DeserializeOwned;

use crate::http::{encode, get};
use crate::sanitize::clean;
use crate::{EXIT_BAD_INPUT, EXIT_IO};

/// Asks `path` of the server behind `ws_url`: its JSON, or a message and an exit status.
pub async fn fetch<T: DeserializeOwned>(
    ws_url: &str,
    path: &str,
) -> Result<(T, String), (String, u8)> {
    let answer = get(ws_url, path, true).await.map_err(|e| (e, EXIT_IO))?;
    if answer.status != 200 {
        let v: serde_json::Value = serde_json::from_str(&answer.body).unwrap_or_default();
        let message = v["message"].as_str().map(clean).unwrap_or_else(|| {
            format!(
                "the server answered HTTP {}: {}",
                answer.status,
                clean(answer.body.trim())
            )
        });
        let code = if (400..500).contains(&answer.status) {
            EXIT_BAD_INPUT
        } else {
            EXIT_IO
        };
        return Err((message, code));
    }
    let value = serde_json::from_str(&answer.body)
        .map_err(|e| (format!("unexpected answer from the server: {e}"), EXIT_IO))?;
    Ok((value, answer.body))
}

/// Prints what `fetch` got: the lines, or the JSON; an error on stderr.
pub fn print<T>(
    got: Result<(T, String), (String, u8)>,
    json: bool,
    lines: fn(&T) -> Vec<String>,
) -> u8 {
    match got {
        Ok((value, body)) => {
            if json {
                println!("{}", body.trim());
            } else {
                for l in lines(&value) {
                    println!("{l}");
                }
            }
            0
        }
        Err((message, code)) => {
            eprintln!("tamsk: {message}");
            code
        }
    }
}

/// The leaderboard as text lines.
pub fn leaderboard_lines(board: &Leaderboard) -> Vec<String> {
    if board.players.is_empty() {
        return vec![format!("No rated {} games yet", board.tc)];
    }
    let mut out = vec![
        format!("Leaderboard: {}", board.tc),
        format!(
            "{:>4}  {:<24} {:>6} {:>4} {:>6}  {:>3}/{:>3}/{:>3}",
            "#", "player", "rating", "RD", "games", "W", "L", "D"
        ),
    ];
    for row in &board.players {
        let s = &row.standing;
        out.push(format!(
            "{:>4}  {:<24} {:>6} {:>4} {:>6}  {:>3}/{:>3}/{:>3}",
            row.rank,
            clean(&row.name),
            s.rating.to_string(),
            s.rating.deviation,
            s.games,
            s.wins,
            s.losses,
            s.draws
        ));
    }
    out
}

/// A player's ratings and recent rating changes as text lines.
pub fn player_lines(p: &PlayerProfile) -> Vec<String> {
    let mut out = vec![format!(
        "{}{}  (player {})",
        clean(&p.name),
        if p.bot { " [bot]" } else { "" },
        clean(&p.player_id)
    )];
    if p.ratings.is_empty() {
        out.push("No rated games yet".into());
    }
    for s in &p.ratings {
        out.push(format!(
            "  {:<10} {:>6} ±{:<4} {} games: {} won, {} lost, {} drawn",
            s.tc.to_string(),
            s.rating.to_string(),
            s.rating.deviation,
            s.games,
            s.wins,
            s.losses,
            s.draws
        ));
    }
    if !p.history.is_empty() {
        out.push("Recent rated games, newest first:".into());
    }
    for h in &p.history {
        let result = if h.score > 0.75 {
            "won"
        } else if h.score < 0.25 {
            "lost"
        } else {
            "drew"
        };
        out.push(format!(
            "  game {}  {:<9} {} against {}  {} -> {} ({:+})",
            clean(&h.game),
            h.tc.to_string(),
            result,
            clean(&h.opponent),
            h.before,
            h.after,
            h.after - h.before
        ));
    }
    out
}

/// `tamsk leaderboard [--tc NAME]`.
pub async fn leaderboard(ws_url: &str, tc: Option<&str>, json: bool) -> u8 {
    let path = match tc {
        Some(tc) => format!("/api/leaderboard?tc={}", encode(tc)),
        None => "/api/leaderboard".into(),
    };
    print(
        fetch::<Leaderboard>(ws_url, &path).await,
        json,
        leaderboard_lines,
    )
}

/// `tamsk player NAME`.
pub async fn player(ws_url: &str, name: &str, json: bool) -> u8 {
    let path = format!("/api/players/{}", encode(name));
    print(
        fetch::<PlayerProfile>(ws_url, &path).await,
        json,
        player_lines,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::api::{ControlStanding, LeaderboardRow, RatingChange};
    use protocol::rating::{ShownRating, TimeControl};

    #[test]
    fn ratings_read_as_text() {
        let standing = ControlStanding {
            tc: TimeControl::Blitz,
            rating: ShownRating::new(1662.3, 290.3),
            games: 1,
            wins: 1,
            losses: 0,
            draws: 0,
        };
        let board = Leaderboard {
            tc: TimeControl::Blitz,
            players: vec![LeaderboardRow {
                rank: 1,
                player_id: "p1".into(),
                name: "Rita".into(),
                standing: standing.clone(),
            }],
        };
        let lines = leaderboard_lines(&board);
        assert!(
            lines[2].contains("Rita") && lines[2].contains("1662?"),
            "{lines:?}"
        );
        let profile = PlayerProfile {
            player_id: "p1".into(),
            name: "Rita".into(),
            bot: false,
            ratings: vec![standing],
            history: vec![RatingChange {
                game: "7".into(),
                tc: TimeControl::Blitz,
                opponent: "Bert".into(),
                score: 1.0,
                before: 1500,
                after: 1662,
                deviation: 290,
                at_ms: 1,
            }],
        };
        let lines = player_lines(&profile);
        assert!(
            lines[1].contains("blitz") && lines[1].contains("±290"),
            "{lines:?}"
        );
        assert!(
            lines[3].contains("won against Bert  1500 -> 1662 (+162)"),
            "{lines:?}"
        );
        let empty = Leaderboard {
            tc: TimeControl::Rapid,
            players: vec![],
        };
        assert_eq!(leaderboard_lines(&empty), ["No rated rapid games yet"]);
    }
}
