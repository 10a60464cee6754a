//! A hostile display name (terminal escapes, a bell, a title change) prints harmlessly,
//! whether it is our own name refused by the real server or names and messages sent by a
//! server that does not check them.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::game::{Game, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, SandTable, SeatInfo, ServerMessage, Snapshot};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_tungstenite::tungstenite::Message;

const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;pwn\u{7}evil";
const WAIT: Duration = Duration::from_secs(30);

fn config(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    let _ = std::fs::remove_file(&path);
    path
}

/// No byte of the output may start a terminal control sequence.
fn assert_harmless(what: &str, bytes: &[u8]) {
    let text = String::from_utf8(bytes.to_vec()).expect("UTF-8 output");
    for c in text.chars() {
        assert!(
            c == '\n' || !(c.is_control() || ('\u{80}'..='\u{9f}').contains(&c)),
            "{what}: control character U+{:04X} in {text:?}",
            c as u32
        );
    }
}

async fn run_tamsk(config: &PathBuf, args: &[&str], stdin: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(args)
        .env("TAMSK_CONFIG", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run tamsk");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    // Kept open: the session ends on its own.
    let out = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("tamsk ends")
        .unwrap();
    drop(input);
    out
}

#[tokio::test]
async fn our_own_hostile_name_refused_by_the_real_server_prints_harmlessly() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(server::run(listener, async {
        let _ = stopped.await;
    }));
    let cfg = config("own-name");
    for json in [false, true] {
        let mut args = vec!["--server", &url, "--name", HOSTILE, "play"];
        if json {
            args.push("--json");
        } else {
            args.push("--plain");
        }
        let out = run_tamsk(&cfg, &args, "").await;
        assert_eq!(out.status.code(), Some(1), "refused: exit 1");
        assert_harmless("stdout", &out.stdout);
        assert_harmless("stderr", &out.stderr);
        let text = String::from_utf8(out.stdout).unwrap();
        // The code is for programs (JSON), the reason for people (both).
        assert_eq!(text.contains("bad_name"), json, "{text}");
        assert!(text.contains("unprintable"), "the server's reason: {text}");
    }
    let _ = stop.send(());
    server.await.unwrap();
}

/// A server that sends hostile names and messages: welcome, a game with a hostile
/// opponent, a refusal with a hostile message, then a resignation to end the game.
async fn hostile_server(listener: tokio::net::TcpListener) {
    let (tcp, _) = listener.accept().await.unwrap();
    let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
    let send = |m: ServerMessage| Message::Text(serde_json::to_string(&m).unwrap().into());
    // hello
    let hello = ws.next().await.unwrap().unwrap();
    let hello: ClientMessage = serde_json::from_str(hello.to_text().unwrap()).unwrap();
    assert!(matches!(hello, ClientMessage::Hello { .. }));
    ws.send(send(ServerMessage::Welcome {
        version: 1,
        player_id: format!("id{HOSTILE}"),
        name: HOSTILE.into(),
        token: "t".into(),
        server_ms: 0,
        games: vec![],
    }))
    .await
    .unwrap();
    let game = Game::new(Settings::level(Level::One));
    let seat = |name: &str| SeatInfo {
        player_id: "x".into(),
        name: name.into(),
        connected: true,
        grace_until_ms: None,
        lag_ms: None,
        rating: None,
    };
    // Whatever the client asks next (a seek), it gets a game.
    loop {
        let m = ws.next().await.unwrap().unwrap();
        if m.to_text().unwrap().contains("seek") {
            break;
        }
    }
    ws.send(send(ServerMessage::Snapshot(Box::new(Snapshot {
        game: protocol::wire::GameId::from_u64_pair(0, 7),
        seq: 0,
        now_ms: 0,
        seat: Some(Player::Black),
        red: seat(HOSTILE),
        black: seat("me"),
        watchers: 0,
        sand: SandTable::of(&game),
        view: protocol::view::GameView::of(&game, &[]),
        rated: false,
        tc: None,
    }))))
    .await
    .unwrap();
    ws.send(send(ServerMessage::Error {
        code: format!("code{HOSTILE}"),
        message: format!("message {HOSTILE}"),
        game: Some(protocol::wire::GameId::from_u64_pair(0, 7)),
        id: None,
        server_ms: None,
        at_ms: None,
    }))
    .await
    .unwrap();
    let mut after = game.clone();
    let entry = protocol::record::Entry {
        at_ms: 10,
        kind: protocol::record::EntryKind::act(Player::Red, protocol::Action::Resign),
    };
    let events = entry.apply_to(&mut after).unwrap();
    ws.send(send(ServerMessage::Event(Box::new(
        protocol::wire::GameEvent {
            game: protocol::wire::GameId::from_u64_pair(0, 7),
            seq: 1,
            now_ms: 10,
            change: protocol::wire::Change::play(entry, events),
        },
    ))))
    .await
    .unwrap();
    // Until the client goes.
    while let Some(Ok(_)) = ws.next().await {}
}

#[tokio::test]
async fn hostile_strings_from_a_server_print_harmlessly() {
    for json in [false, true] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let server = tokio::spawn(hostile_server(listener));
        let cfg = config(if json { "server-json" } else { "server-plain" });
        let mut args = vec!["--server", &url, "--name", "me", "play"];
        args.push(if json { "--json" } else { "--plain" });
        let out = run_tamsk(&cfg, &args, "").await;
        assert!(out.status.success(), "{out:?}");
        assert_harmless("stdout", &out.stdout);
        assert_harmless("stderr", &out.stderr);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("evil"), "the name is shown, defused: {text}");
        assert!(text.contains("Red resigned"), "{text}");
        if !json {
            assert!(text.contains("?[2J?]0;pwn?evil"), "{text}");
        }
        server.await.unwrap();
        // The config file holds the defused name too.
        let saved = std::fs::read_to_string(&cfg).unwrap();
        assert!(!saved.contains('\u{1b}'), "{saved}");
    }
}
