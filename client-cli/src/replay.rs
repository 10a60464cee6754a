//! `tamsk replay FILE|GAME [--json]`: the final board and result of a game file, or of a
//! game stored on the server (`GET /games/{id}`).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use protocol::game::{Decision, EndReason, Game, Outcome, Player, Status};
use protocol::record::{self, describe_state, Format, Loaded};
use protocol::render;
use protocol::wire::GameId;
use protocol::Square;
use serde_json::{json, Map, Value};

use crate::gameref::GameRef;
use crate::{EXIT_BAD_INPUT, EXIT_IO};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The game file: a TAMSK record (docs/RECORDS.md) or a plain move list; `-` reads
    /// standard input. A stored game's short id (`#0c1d2e3f`, as `tamsk games` lists it)
    /// or full id, when no file has that name, is fetched from the server.
    pub file: PathBuf,
}

/// A game's id or short id, if `arg` is one and no file has that name.
pub fn game_number(arg: &std::path::Path) -> Option<GameRef> {
    if arg.exists() {
        return None;
    }
    GameRef::parse(arg.to_str()?).ok()
}

/// The stored game a short id names: looked up among the newest 200 stored games.
async fn stored_id(server: &str, game: &GameRef) -> Result<GameId, String> {
    if let GameRef::Full(id) = game {
        return Ok(*id);
    }
    let answer = crate::http::get(server, "/games?limit=200", true).await?;
    let list: serde_json::Value = serde_json::from_str(&answer.body)
        .map_err(|_| "the server's list of games is not JSON".to_string())?;
    let ids = list["games"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["id"].as_str()?.parse().ok());
    game.resolve_ids(ids)
        .map_err(|e| format!("{e} among the 200 newest stored games: give its full id"))
}

/// Fetches a stored game's record from the server behind `server`.
fn fetch(server: &str, game: &GameRef) -> Result<Vec<u8>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let answer = runtime.block_on(async {
        let id = stored_id(server, game).await?;
        crate::http::get(server, &format!("/games/{id}"), false).await
    })?;
    match answer.status {
        200 => Ok(answer.body.into_bytes()),
        404 if answer.body.trim().is_empty() => {
            Err("this server keeps no finished games (no /games)".into())
        }
        _ => Err(crate::sanitize::clean(answer.body.trim())),
    }
}

/// `json`: print one JSON object instead of the board. `interactive`: step through the
/// game full-screen instead of printing the final board. `server`: where a stored game
/// is fetched from.
pub fn main(args: &Args, json: bool, interactive: bool, server: &str) -> ExitCode {
    let (name, bytes) = match game_number(&args.file) {
        Some(game) => match fetch(server, &game) {
            Ok(bytes) => (format!("game {}", game.name()), bytes),
            Err(e) => {
                eprintln!(
                    "tamsk: cannot fetch game {} from {server}: {e}",
                    game.name()
                );
                return ExitCode::from(EXIT_IO);
            }
        },
        None => {
            let name = args.file.display().to_string();
            match read(&args.file) {
                Ok(bytes) => (name, bytes),
                Err(e) => {
                    eprintln!("tamsk: cannot read {name}: {e}");
                    return ExitCode::from(EXIT_IO);
                }
            }
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("tamsk: {name}: {}", not_text(e.as_bytes(), e.utf8_error()));
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let loaded = match record::load(&text) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("tamsk: {name}: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    if interactive && !json {
        return match crate::viewer::run(&name, &loaded) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tamsk: cannot use the terminal ({e}): try --plain");
                ExitCode::from(EXIT_IO)
            }
        };
    }
    let out = if json {
        format!("{}\n", to_json(&loaded))
    } else {
        to_text(&loaded)
    };
    // A closed pipe (`tamsk replay FILE | head`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

fn read(path: &PathBuf) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        Ok(bytes)
    } else {
        std::fs::read(path)
    }
}

/// Where a file stops being UTF-8 text, in the same terms as the record reader's errors.
fn not_text(bytes: &[u8], error: std::str::Utf8Error) -> String {
    let good = &bytes[..error.valid_up_to()];
    let text = std::str::from_utf8(good).expect("valid up to here");
    let line = text.matches('\n').count() + 1;
    let column = text.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    let byte = bytes[error.valid_up_to()];
    format!(
        "line {line}, column {column}: byte 0x{byte:02x} is not text: a game file is UTF-8 text"
    )
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The final board, the rings left and the result, for people.
pub fn to_text(loaded: &Loaded) -> String {
    let game = &loaded.game;
    let record = &loaded.file.record;
    let mut out = String::new();
    let names = [(Player::Red, &record.red), (Player::Black, &record.black)];
    if names.iter().any(|(_, n)| n.is_some()) {
        let who: Vec<String> = names
            .iter()
            .map(|(p, n)| format!("{p}: {}", n.as_deref().unwrap_or("?")))
            .collect();
        out.push_str(&who.join("   "));
        out.push_str("\n\n");
    }
    out.push_str(&render::render(game, game.now()));
    out.push('\n');
    let rings = game.rings();
    out.push_str(&format!(
        "Rings left: Red {}, Black {}\n",
        rings.red, rings.black
    ));
    out.push_str(&format!(
        "Moves: {} (level {}{}), game time {} s\n",
        game.move_count(),
        record.settings.level.number(),
        match loaded.format {
            Format::MoveList => ", imported network move list",
            Format::Record => "",
        },
        seconds(game.now())
    ));
    let result = match game.status() {
        Status::Playing => format!(
            "{} ({} moves played)",
            describe_state(game),
            game.move_count()
        ),
        _ => describe_state(game),
    };
    out.push_str(&format!("Result: {result}\n"));
    if let Some(tiebreak) = game.outcome().and_then(|o| o.tiebreak.as_ref()) {
        let lineup: Vec<String> = tiebreak
            .lineup
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mark = if Some(i) == tiebreak.deciding_index {
                    " <- decides"
                } else {
                    ""
                };
                let how = if e.running { "runs out" } else { "died" };
                format!(
                    "{} ({}) {how} at {}{mark}",
                    e.glass,
                    e.player,
                    seconds(e.dies_at_ms)
                )
            })
            .collect();
        out.push_str("Tiebreak, last living hourglass first:\n");
        for l in lineup {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out
}

fn reason_code(reason: &EndReason) -> &'static str {
    match reason {
        EndReason::NoMoves => "no_moves",
        EndReason::Repetition => "repetition",
        EndReason::FullSocket { .. } => "full_socket",
        EndReason::Resigned { .. } => "resigned",
        EndReason::Clock { .. } => "clock",
        EndReason::Abandoned { .. } => "abandoned",
        EndReason::Idle { .. } => "idle",
        EndReason::BothIdle => "both_idle",
        EndReason::BothAbsent => "both_absent",
    }
}

fn decision_code(decision: Decision) -> &'static str {
    match decision {
        Decision::Rings => "rings",
        Decision::Tiebreak => "tiebreak",
        Decision::Draw => "draw",
        Decision::Forfeit => "forfeit",
    }
}

fn board_json(game: &Game) -> Value {
    let mut board = Map::new();
    for s in Square::ALL {
        board.insert(
            s.to_string(),
            json!({
                "rings": game.rings_on(s),
                "spare": s.capacity() - game.rings_on(s),
                "glass": game.occupant(s).map(|g| g.label().to_string()),
            }),
        );
    }
    Value::Object(board)
}

fn glasses_json(game: &Game) -> Value {
    let mut glasses = Map::new();
    for g in game.glasses() {
        glasses.insert(
            g.glass.label().to_string(),
            json!({
                "player": g.glass.owner(),
                "square": g.square,
                "started": g.started,
                "dead_at_ms": g.dead_at_ms,
                "sand_ms": g.remaining(game.now()),
            }),
        );
    }
    Value::Object(glasses)
}

/// The JSON summary: `rings`, `finished`, `winner`, `reason` and more.
pub fn to_json(loaded: &Loaded) -> Value {
    let game = &loaded.game;
    let record = &loaded.file.record;
    let outcome: Option<&Outcome> = game.outcome();
    let (status, reason) = match game.status() {
        Status::Playing => ("playing", None),
        Status::Finished { outcome } => ("finished", Some(outcome.reason.describe())),
        Status::Aborted { .. } => ("aborted", Some(describe_state(game))),
    };
    json!({
        "rings": { "red": game.rings().red, "black": game.rings().black },
        "finished": outcome.is_some(),
        "over": !game.is_playing(),
        "winner": outcome.and_then(|o| o.winner),
        "reason": reason,
        "reason_code": outcome.map(|o| reason_code(&o.reason)),
        "decision": outcome.map(|o| decision_code(o.decision)),
        "tiebreak": outcome.and_then(|o| o.tiebreak.clone()),
        "status": status,
        "result": describe_state(game),
        "turn": (status == "playing").then(|| game.turn()),
        "moves": game.move_count(),
        "entries": record.entries.len(),
        "level": record.settings.level.number(),
        "settings": record.settings,
        "format": match loaded.format {
            Format::Record => "record",
            Format::MoveList => "move_list",
        },
        "end_ms": outcome.map_or(game.now(), |o| o.ended_at_ms),
        "players": { "red": record.red, "black": record.black },
        "board": board_json(game),
        "glasses": glasses_json(game),
    })
}
