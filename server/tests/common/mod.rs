//! The `tamsk-server` binary started as a process on an ephemeral port, and the few
//! client steps the process tests share (their own small client: these tests see the
//! server only from outside).
#![allow(dead_code)] // each test crate uses its own part

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::game::{Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, GameId, ServerFrame, ServerMessage};
use tokio_tungstenite::tungstenite::Message;

pub const WAIT: Duration = Duration::from_secs(10);

pub struct Server {
    pub child: Child,
    pub addr: String,
}

impl Server {
    /// Starts the binary on an ephemeral port; waits for its "listening" log line.
    pub fn start(db: &Path, drain_ms: u64) -> Server {
        Server::start_with(db, drain_ms, &[], &[])
    }

    /// [`Server::start`] with more flags and environment variables.
    pub fn start_with(db: &Path, drain_ms: u64, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tamsk-server"))
            .args(["--listen", "127.0.0.1:0", "--log-json", "--drain-ms"])
            .arg(drain_ms.to_string())
            .arg("--db")
            .arg(db)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tamsk-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server logs that it listens")
                .expect("a log line");
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON logs");
            if v["fields"]["message"] == "listening" {
                break v["fields"]["addr"].as_str().expect("addr").to_string();
            }
        };
        // Keep reading the logs so that the pipe never fills.
        std::thread::spawn(move || for _ in lines {});
        Server { child, addr }
    }

    pub fn kill_hard(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }

    pub fn terminate(mut self) -> std::process::ExitStatus {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(ok.success());
        self.child.wait().expect("exit status")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn send(ws: &mut Ws, msg: &ClientMessage) {
    let text = serde_json::to_string(msg).unwrap();
    ws.send(Message::text(text)).await.expect("send");
}

/// Acts for the connection's seat in `game` (no `seq`).
pub async fn act(ws: &mut Ws, game: GameId, action: protocol::game::Action) {
    send(
        ws,
        &ClientMessage::Act {
            game,
            action,
            seq: None,
        },
    )
    .await;
}

pub async fn recv(ws: &mut Ws) -> ServerMessage {
    // One deadline for the message, whatever pings come meanwhile.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let frame = tokio::time::timeout_at(deadline, ws.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("a frame");
        if let Message::Text(text) = frame {
            if let ServerFrame::Message(m) = serde_json::from_str(text.as_str()).unwrap() {
                return m;
            }
        }
    }
}

pub async fn player(addr: &str, name: &str) -> Ws {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("connect");
    send(
        &mut ws,
        &ClientMessage::Hello {
            version: 1,
            name: Some(name.into()),
            token: None,
            guest: false,
        },
    )
    .await;
    assert!(matches!(recv(&mut ws).await, ServerMessage::Welcome { .. }));
    ws
}

/// Two players in a Level 1 game: (red, black, game id).
pub async fn game(addr: &str) -> (Ws, Ws, GameId) {
    let settings = Settings::blitz(Level::One);
    // Names are unique, also across restarts on one database: new players each game.
    static GAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = GAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut a = player(addr, &format!("Ann{n}")).await;
    let mut b = player(addr, &format!("Ben{n}")).await;
    send(
        &mut a,
        &ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        },
    )
    .await;
    assert!(matches!(recv(&mut a).await, ServerMessage::Seeking { .. }));
    send(
        &mut b,
        &ClientMessage::Seek {
            settings,
            rated: None,
        },
    )
    .await;
    let ServerMessage::Snapshot(sa) = recv(&mut a).await else {
        panic!("a snapshot")
    };
    let ServerMessage::Snapshot(_) = recv(&mut b).await else {
        panic!("a snapshot")
    };
    if sa.seat == Some(Player::Red) {
        (a, b, sa.game)
    } else {
        (b, a, sa.game)
    }
}

/// Reads events until one of the engine events they carry satisfies `pred` (not the
/// implied ones: see `until_act`).
pub async fn until_event(ws: &mut Ws, pred: impl Fn(&Event) -> bool) {
    loop {
        if let ServerMessage::Event(ev) = recv(ws).await {
            if let Change::Play { events, .. } = &ev.change {
                if events.iter().any(&pred) {
                    return;
                }
            }
        }
    }
}
