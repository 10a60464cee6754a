//! The `tamsk-server` binary as a process: a crash (SIGKILL) right after a game's end is
//! announced still finds the game stored at the next start on the same database file; a
//! game cut off by a crash is resumed at the next start (or, with `--resume-games false`,
//! stored as aborted); SIGTERM drains, stores and exits 0.

use std::time::Duration;

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, GameId, ServerMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod common;
use common::*;

async fn stored(addr: &str, id: GameId) -> serde_json::Value {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("http");
    let req = format!(
        "GET /games/{id} HTTP/1.1\r\nHost: t\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    serde_json::from_str(out.split_once("\r\n\r\n").unwrap().1).expect("JSON")
}

#[tokio::test]
async fn a_crash_after_the_end_loses_nothing_and_sigterm_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tamsk.db");

    // A game ends; the process is killed the moment the end reaches a player.
    let server = Server::start(&db, 0);
    let (mut red, mut black, finished) = game(&server.addr).await;
    act(&mut red, finished, Action::Resign).await;
    until_event(&mut black, |e| matches!(e, Event::GameEnded { .. })).await;
    server.kill_hard();
    drop((red, black));

    // A game being played when the process is killed.
    let server = Server::start(&db, 0);
    let v = stored(&server.addr, finished).await;
    assert_eq!(v["state"], "finished");
    assert_eq!(v["reason"], "resigned");
    let (mut red, mut black, cut) = game(&server.addr).await;
    assert!(cut > finished, "ids continue after a restart");
    let action = Action::Move {
        from: "d1".parse().unwrap(),
        to: "d2".parse().unwrap(),
        drop: true,
    };
    act(&mut red, cut, action).await;
    // (Its release is implied by the entry: not in the frame.)
    until_act(&mut black).await;
    // The entry is written in the background: wait until it is in the file (another
    // process's state: nothing to await but the file itself).
    let written = async {
        use sqlx::ConnectOptions;
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .read_only(true)
            .connect()
            .await
            .expect("open the file");
        loop {
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM live_entries WHERE game_id = $1")
                .bind(cut.to_string())
                .fetch_one(&mut conn)
                .await
                .unwrap_or(0);
            if n > 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT, written)
        .await
        .expect("the move is written");
    server.kill_hard();
    drop((red, black));

    // At the next start without resumption, the cut-off game is stored as aborted, with
    // its move.
    let server = Server::start_with(&db, 200, &["--resume-games", "false"], &[]);
    let v = stored(&server.addr, cut).await;
    assert_eq!(v["state"], "aborted");
    assert_eq!(v["reason"], "crash");
    assert_eq!(v["move_count"], 1);
    let record: protocol::record::Record = serde_json::from_value(v["record"].clone()).unwrap();
    assert!(record.replay().is_ok());

    // SIGTERM with a live game: drained, aborted, stored, exit 0.
    let (_red, _black, live) = game(&server.addr).await;
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    let server = Server::start(&db, 0);
    let v = stored(&server.addr, live).await;
    assert_eq!(
        (v["state"].as_str(), v["reason"].as_str()),
        (Some("aborted"), Some("shutdown"))
    );
    assert!(server.terminate().success());
}

/// The bounds the rules page fixes (`abort_ms`, `late_release_ms`) are the operator's: a
/// test server sets them by flag or environment variable, and every game has them.
#[tokio::test]
async fn the_operator_sets_the_fixed_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        &dir.path().join("t.db"),
        0,
        &["--late-release-ms", "800"],
        &[("TAMSK_ABORT_MS", "700")],
    );
    let mut a = player(&server.addr, "Ann").await;
    send(
        &mut a,
        &ClientMessage::Seek {
            settings: Settings::blitz(Level::Three),
            rated: None,
        },
    )
    .await;
    match recv(&mut a).await {
        ServerMessage::Seeking { settings } => {
            assert_eq!((settings.abort_ms, settings.late_release_ms), (700, 800))
        }
        other => panic!("expected seeking, got {other:?}"),
    }
}

/// A player who says hello: his connection and his token.
async fn player_with_token(
    addr: &str,
    name: Option<&str>,
    token: Option<&str>,
) -> (Ws, Vec<GameId>, String) {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("connect");
    let hello = ClientMessage::Hello {
        version: 1,
        name: name.map(Into::into),
        token: token.map(Into::into),
        guest: false,
    };
    send(&mut ws, &hello).await;
    match recv(&mut ws).await {
        ServerMessage::Welcome { token, games, .. } => (ws, games, token),
        other => panic!("expected welcome, got {other:?}"),
    }
}

/// A move (with its drop) for `seat`, which is on turn.
fn a_whole_move(game: &protocol::game::Game, seat: Player) -> Action {
    game.legal_actions(seat)
        .into_iter()
        .find(|a| matches!(a, Action::Move { drop: true, .. } | Action::Place { .. }))
        .expect("a move")
}

/// Reads events until the entry of one is a player's action.
async fn until_act(ws: &mut Ws) {
    loop {
        if let ServerMessage::Event(ev) = recv(ws).await {
            if ev
                .entry()
                .is_some_and(|e| matches!(e.kind, protocol::record::EntryKind::Act { .. }))
            {
                return;
            }
        }
    }
}

/// The next entry of the game (a `play` or `lag` event); an error is a failure.
async fn next_entry(ws: &mut Ws) -> protocol::record::Entry {
    loop {
        match recv(ws).await {
            ServerMessage::Event(ev) => {
                if let Some(entry) = ev.entry() {
                    return entry;
                }
            }
            ServerMessage::Error { code, message, .. } => panic!("{code}: {message}"),
            _ => {}
        }
    }
}

/// The next snapshot, skipping anything else.
async fn snapshot(ws: &mut Ws) -> protocol::wire::Snapshot {
    loop {
        if let ServerMessage::Snapshot(s) = recv(ws).await {
            return *s;
        }
    }
}

/// kill -9 in the middle of a game against the computer: at the next start the game goes
/// on from its journal. The player comes back with his token, finds his game, gets it
/// whole, and the computer (its seat taken again by the new process) answers his move.
#[tokio::test]
async fn a_game_cut_by_a_crash_resumes_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tamsk.db");
    let server = Server::start(&db, 0);
    let (mut ws, _, token) = player_with_token(&server.addr, Some("Pia"), None).await;
    // Level 2 with 3-minute glasses: nothing runs out while the server is down.
    let settings = Settings::level(Level::Two);
    send(
        &mut ws,
        &ClientMessage::PlayBot {
            settings,
            level: None,
            rated: None,
        },
    )
    .await;
    let snap = snapshot(&mut ws).await;
    let (id, seat) = (snap.game, snap.seat.expect("a seat"));
    let mut game = snap.view.replica().expect("replays");
    // Until one move each way has been released (and Pia's is hers).
    let mut entries = snap.view.entries.len();
    while game.move_count() < 2 {
        if game.turn() == seat && game.is_playing() {
            let action = a_whole_move(&game, seat);
            act(&mut ws, id, action).await;
        }
        loop {
            if let ServerMessage::Event(ev) = recv(&mut ws).await {
                if let Some(entry) = ev.entry() {
                    entry
                        .apply_to(&mut game)
                        .expect("the server's entry replays");
                    entries += 1;
                    break;
                }
            }
        }
    }
    // Every entry Pia has seen is in the file before the crash (written in the
    // background: nothing to await in another process but the file itself).
    let written = async {
        use sqlx::ConnectOptions;
        let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .read_only(true)
            .connect()
            .await
            .expect("open the file");
        loop {
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM live_entries WHERE game_id = $1")
                .bind(id.to_string())
                .fetch_one(&mut conn)
                .await
                .unwrap_or(0);
            if n as usize >= entries {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT, written)
        .await
        .expect("the entries are written");
    server.kill_hard();
    drop(ws);

    let server = Server::start(&db, 0);
    let (mut ws, games, _) = player_with_token(&server.addr, None, Some(&token)).await;
    assert_eq!(games, [id], "the game is live again");
    send(
        &mut ws,
        &ClientMessage::Join {
            game: id,
            after_seq: None,
        },
    )
    .await;
    let snap = snapshot(&mut ws).await;
    assert_eq!(snap.seat, Some(seat));
    let mut resumed = snap.view.replica().expect("replays");
    assert!(
        resumed.move_count() >= 2,
        "the moves before the crash are kept"
    );
    let bot = if seat == Player::Red {
        &snap.black
    } else {
        &snap.red
    };
    assert!(bot.connected, "the computer sits at its seat again");
    // Pia moves when it is her turn; the computer answers.
    let moves = resumed.move_count();
    while resumed.move_count() < moves + 2 && resumed.is_playing() {
        if resumed.turn() == seat {
            let action = a_whole_move(&resumed, seat);
            act(&mut ws, id, action).await;
        }
        let entry = next_entry(&mut ws).await;
        entry.apply_to(&mut resumed).expect("replays");
    }
    assert!(resumed.move_count() >= moves + 2 || !resumed.is_playing());
    assert!(server.terminate().success());
}

/// A node of a cluster needs a database the nodes share: with `--nats` and an SQLite
/// file the server says so and does not start (before it tries NATS: nothing listens on
/// the port given here).
#[tokio::test]
async fn a_cluster_node_on_an_sqlite_file_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_tamsk-server"));
    cmd.args([
        "--listen",
        "127.0.0.1:0",
        "--nats",
        "nats://127.0.0.1:9",
        "--db",
    ])
    .arg(dir.path().join("t.db"))
    .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(30), cmd.output())
        .await
        .expect("the server gives up at once")
        .expect("run tamsk-server");
    assert!(!out.status.success(), "it must not start");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("--nats needs a PostgreSQL database"),
        "the reason, in: {said}"
    );
}
