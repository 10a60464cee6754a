//! `tamsk games`: after the live games (over the websocket), the finished games the
//! server keeps (`GET /games?player=NAME`), newest first.

use serde_json::{json, Value};

use crate::app::Output;
use crate::sanitize::clean;

fn text_of(v: &Value, key: &str) -> String {
    clean(v[key].as_str().unwrap_or_default())
}

/// One stored game in a line: "#12  Ann (Red) vs Ben (Black)  Level 3  finished  40 moves
/// Red wins: ...".
pub fn stored_line(g: &Value) -> String {
    let mut line = format!(
        "{}  {} (Red) vs {} (Black)  Level {}  {}  {} moves",
        g["id"]
            .as_str()
            .and_then(|id| id.parse().ok())
            .map(crate::gameref::short_id)
            .unwrap_or_default(),
        clean(g["red"]["name"].as_str().unwrap_or("?")),
        clean(g["black"]["name"].as_str().unwrap_or("?")),
        g["level"].as_u64().unwrap_or_default(),
        text_of(g, "state"),
        g["move_count"].as_u64().unwrap_or_default(),
    );
    let result = text_of(g, "result");
    if !result.is_empty() {
        line.push_str("  ");
        line.push_str(&result);
    }
    line
}

/// The lines for a `GET /games` answer.
pub fn stored_output(status: u16, body: &str, player: Option<&str>) -> Result<Vec<Output>, String> {
    if status == 404 && body.trim().is_empty() {
        return Ok(vec![Output {
            kind: "stored_games",
            text: "This server keeps no finished games".into(),
            data: json!({ "games": [] }),
        }]);
    }
    let v: Value = serde_json::from_str(body).map_err(|_| {
        format!(
            "unexpected answer from the server (HTTP {status}): {}",
            clean(body.trim())
        )
    })?;
    if status != 200 {
        return Err(format!(
            "the server refused: {} ({})",
            text_of(&v, "message"),
            text_of(&v, "error")
        ));
    }
    let games = v["games"].as_array().cloned().unwrap_or_default();
    let head = match (player, games.is_empty()) {
        (Some(p), true) => format!("No finished games of {}", clean(p)),
        (None, true) => "No finished games".to_string(),
        (Some(p), false) => format!("Finished games of {}, newest first:", clean(p)),
        (None, false) => "Finished games, newest first:".to_string(),
    };
    let mut out = vec![Output {
        kind: "stored_games",
        text: head,
        data: json!({ "count": games.len() }),
    }];
    for g in games {
        out.push(Output {
            kind: "stored_game",
            text: stored_line(&g),
            data: json!({ "summary": g }),
        });
    }
    Ok(out)
}

/// Prints the finished games; returns the exit status.
pub async fn stored(server: &str, player: Option<&str>, json: bool) -> u8 {
    let path = match player {
        Some(p) => format!("/games?player={}", crate::http::encode(p)),
        None => "/games".to_string(),
    };
    let result = crate::http::get(server, &path, true)
        .await
        .and_then(|a| stored_output(a.status, &a.body, player));
    match result {
        Ok(lines) => {
            // Not println!: a reader that stops early (`| head`) closes the pipe, which
            // is no reason to panic.
            crate::plain::print(lines, json);
            0
        }
        Err(e) => {
            eprintln!("tamsk: cannot list finished games: {}", clean(&e));
            crate::EXIT_IO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_games_in_lines() {
        let body = r#"{"games":[{"id":"0193a3f0-7c1e-7d3a-9f2b-00000000000c","red":{"player_id":"a","name":"Ann\u001b[2J"},"black":{"player_id":"b","name":"Ben"},"level":3,"settings":{},"state":"finished","winner":"red","reason":"no_moves","result":"Red wins: neither player can move; fewer rings left (3 to 5)","move_count":40,"started_ms":0,"ended_ms":5}]}"#;
        let out = stored_output(200, body, Some("Ben")).unwrap();
        assert_eq!(out[0].text, "Finished games of Ben, newest first:");
        assert_eq!(
            out[1].text,
            "#0000000c  Ann?[2J (Red) vs Ben (Black)  Level 3  finished  40 moves  Red wins: neither player can move; fewer rings left (3 to 5)"
        );
        assert_eq!(
            out[1].data["summary"]["id"],
            "0193a3f0-7c1e-7d3a-9f2b-00000000000c"
        );
    }

    #[test]
    fn no_games_an_old_server_and_a_refusal() {
        let out = stored_output(200, r#"{"games":[]}"#, None).unwrap();
        assert_eq!(out[0].text, "No finished games");
        let out = stored_output(404, "", None).unwrap();
        assert_eq!(out[0].text, "This server keeps no finished games");
        let e = stored_output(
            400,
            r#"{"error":"bad_player","message":"player must be a name"}"#,
            None,
        )
        .unwrap_err();
        assert_eq!(e, "the server refused: player must be a name (bad_player)");
    }
}
