//! A lost connection is not the end of a game: `tamsk` connects again on its own, says
//! hello with its token and asks for exactly the events after the last one it saw.
//! Played against a scripted server that drops the first connection mid-game.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::game::{Action, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::{Level, Settings};
use protocol::wire::{
    Change, ClientMessage, GameEvent, SandTable, SeatInfo, ServerMessage, Snapshot,
};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::process::Command;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// The game of these tests.
fn gid(n: u64) -> protocol::wire::GameId {
    protocol::wire::GameId::from_u64_pair(0, n)
}

const WAIT: Duration = Duration::from_secs(30);

type Ws = WebSocketStream<tokio::net::TcpStream>;

async fn send(ws: &mut Ws, m: ServerMessage) {
    ws.send(Message::Text(serde_json::to_string(&m).unwrap().into()))
        .await
        .unwrap();
}

/// The next message the client sends that is not a ping or pong.
async fn receive(ws: &mut Ws) -> ClientMessage {
    loop {
        let m = ws.next().await.expect("client message").unwrap();
        let Ok(text) = m.to_text() else { continue };
        let msg: ClientMessage = serde_json::from_str(text).unwrap();
        if !matches!(msg, ClientMessage::Ping { .. } | ClientMessage::Pong { .. }) {
            return msg;
        }
    }
}

fn event(game: &mut Game, seq: u64, at_ms: u64, player: Player, action: Action) -> ServerMessage {
    let entry = Entry {
        at_ms,
        kind: EntryKind::act(player, action),
    };
    let events = entry.apply_to(game).unwrap();
    ServerMessage::Event(Box::new(GameEvent {
        game: gid(7),
        seq,
        now_ms: at_ms,
        change: Change::play(entry, events),
    }))
}

async fn server(listener: TcpListener) -> Vec<ClientMessage> {
    let mut game = Game::new(Settings::level(Level::One));
    let seat = |name: &str| SeatInfo {
        player_id: name.into(),
        name: name.into(),
        connected: true,
        grace_until_ms: None,
        lag_ms: None,
        rating: None,
    };
    let welcome = |games| ServerMessage::Welcome {
        version: 1,
        player_id: "me".into(),
        name: "Bea".into(),
        token: "tok".into(),
        server_ms: 0,
        games,
    };
    // First connection: a new player, a game, one move, then the connection breaks.
    let (tcp, _) = listener.accept().await.unwrap();
    let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
    let hello = receive(&mut ws).await;
    send(&mut ws, welcome(vec![])).await;
    let seek = receive(&mut ws).await;
    assert!(matches!(seek, ClientMessage::Seek { .. }), "{seek:?}");
    send(
        &mut ws,
        ServerMessage::Snapshot(Box::new(Snapshot {
            game: gid(7),
            seq: 0,
            now_ms: 0,
            seat: Some(Player::Black),
            red: seat("Rob"),
            black: seat("Bea"),
            watchers: 0,
            sand: SandTable::of(&game),
            view: protocol::view::GameView::of(&game, &[]),
            rated: false,
            tc: None,
        })),
    )
    .await;
    let mv = Action::Move {
        from: "d1".parse().unwrap(),
        to: "d2".parse().unwrap(),
        drop: true,
    };
    let ev = event(&mut game, 1, 100, Player::Red, mv);
    send(&mut ws, ev).await;
    drop(ws);
    // Second connection: the token, the game, exactly what was missed.
    let (tcp, _) = listener.accept().await.unwrap();
    let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
    let hello_again = receive(&mut ws).await;
    send(&mut ws, welcome(vec![gid(7)])).await;
    let join = receive(&mut ws).await;
    send(
        &mut ws,
        ServerMessage::Resumed {
            game: gid(7),
            after_seq: 1,
            seat: Some(Player::Black),
        },
    )
    .await;
    let ev = event(&mut game, 2, 2_000, Player::Red, Action::Resign);
    send(&mut ws, ev).await;
    while let Some(Ok(_)) = ws.next().await {}
    vec![hello, hello_again, join]
}

#[tokio::test]
async fn a_dropped_connection_is_resumed_after_the_last_event_seen() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    let server = tokio::spawn(server(listener));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("reconnect");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config.json");
    let _ = std::fs::remove_file(&cfg);
    let child = Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(["--server", &url, "--name", "Bea", "--json", "play"])
        .env("TAMSK_CONFIG", &cfg)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("tamsk ends")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|v| v["type"].as_str().unwrap()).collect();
    let at = |k: &str| {
        kinds
            .iter()
            .position(|x| *x == k)
            .unwrap_or_else(|| panic!("{k}: {kinds:?}"))
    };
    assert!(at("start") < at("connection"), "{kinds:?}");
    assert!(at("connection") < at("resumed"), "{kinds:?}");
    assert!(at("resumed") < at("result"), "{kinds:?}");
    let result = &lines[at("result")];
    assert_eq!(result["winner"], "black");
    let moves = lines
        .iter()
        .filter(|v| v["type"] == "event" && v["event"]["type"] == "move_released")
        .count();
    assert_eq!(moves, 1, "nothing missed, nothing twice");

    let [hello, hello_again, join] = <[ClientMessage; 3]>::try_from(server.await.unwrap()).unwrap();
    assert!(matches!(hello, ClientMessage::Hello { name: Some(n), token: None, .. } if n == "Bea"));
    assert!(
        matches!(hello_again, ClientMessage::Hello { token: Some(t), name: None, .. } if t == "tok")
    );
    assert_eq!(
        join,
        ClientMessage::Join {
            game: gid(7),
            after_seq: Some(1)
        }
    );
}
