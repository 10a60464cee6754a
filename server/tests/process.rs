//! The `tamsk-server` binary as a process: a crash (SIGKILL) right after a game's end is
//! announced still finds the game stored at the next start on the same database file; a
//! game cut off by a crash is resumed at the next start (or, with `--resume-games false`,
//! stored as aborted); SIGTERM drains, stores and exits 0.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, GameId, ServerFrame, ServerMessage};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

const WAIT: Duration = Duration::from_secs(10);

struct Server {
    child: Child,
    addr: String,
}

impl Server {
    /// Starts the binary on an ephemeral port; waits for its "listening" log line.
    fn start(db: &Path, drain_ms: u64) -> Server {
        Server::start_with(db, drain_ms, &[], &[])
    }

    /// [`Server::start`] with more flags and environment variables.
    fn start_with(db: &Path, drain_ms: u64, args: &[&str], env: &[(&str, &str)]) -> Server {
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

    fn kill_hard(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reaped");
    }

    fn terminate(mut self) -> std::process::ExitStatus {
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

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn send(ws: &mut Ws, msg: &ClientMessage) {
    let text = serde_json::to_string(msg).unwrap();
    ws.send(Message::text(text)).await.expect("send");
}

async fn recv(ws: &mut Ws) -> ServerMessage {
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

async fn player(addr: &str, name: &str) -> Ws {
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
async fn game(addr: &str) -> (Ws, Ws, GameId) {
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
async fn until_event(ws: &mut Ws, pred: impl Fn(&Event) -> bool) {
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
    send(
        &mut red,
        &ClientMessage::Act {
            game: finished,
            action: Action::Resign,
            seq: None,
        },
    )
    .await;
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
    send(
        &mut red,
        &ClientMessage::Act {
            game: cut,
            action,
            seq: None,
        },
    )
    .await;
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
            send(
                &mut ws,
                &ClientMessage::Act {
                    game: id,
                    action,
                    seq: None,
                },
            )
            .await;
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
            send(
                &mut ws,
                &ClientMessage::Act {
                    game: id,
                    action,
                    seq: None,
                },
            )
            .await;
        }
        let entry = next_entry(&mut ws).await;
        entry.apply_to(&mut resumed).expect("replays");
    }
    assert!(resumed.move_count() >= moves + 2 || !resumed.is_playing());
    assert!(server.terminate().success());
}

/// (name, scheduling policy, real-time priority, nice value) of each thread of process
/// `pid`.
fn threads_of(pid: u32) -> Vec<(String, u32, u32, i32)> {
    let mut threads = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc") {
        let dir = entry.expect("a thread").path();
        let name = std::fs::read_to_string(dir.join("comm")).expect("comm");
        let stat = std::fs::read_to_string(dir.join("stat")).expect("stat");
        // After the name's closing parenthesis: field 3 (state) on; nice is field 19,
        // rt_priority field 40 and policy field 41 (proc(5)).
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        let (rt_priority, policy) = (fields[37].parse().unwrap(), fields[38].parse().unwrap());
        let nice = fields[16].parse().unwrap();
        threads.push((name.trim().to_string(), policy, rt_priority, nice));
    }
    threads
}

/// `--realtime-priority` runs the threads that announce deadlines (the alarm thread and,
/// with `--game-threads 1`, the games' thread) under SCHED_FIFO at that priority when the
/// system allows it (else at normal priority), and no other thread; games are played on
/// them as usual.
#[tokio::test]
async fn the_deadline_threads_run_real_time_when_asked() {
    let allowed = std::thread::spawn(|| server::priority::realtime(1).is_ok())
        .join()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        &dir.path().join("t.db"),
        0,
        &["--game-threads", "1", "--realtime-priority", "7"],
        &[],
    );
    let threads = threads_of(server.child.id());
    let (fifo, normal) = (libc::SCHED_FIFO as u32, libc::SCHED_OTHER as u32);
    for name in ["tamsk-alarms", "tamsk-games"] {
        let found: Vec<_> = threads.iter().filter(|t| t.0 == name).collect();
        assert_eq!(found.len(), 1, "{name} in {threads:?}");
        let expected = if allowed { (fifo, 7) } else { (normal, 0) };
        assert_eq!((found[0].1, found[0].2), expected, "{name}");
    }
    let others: Vec<_> = threads
        .iter()
        .filter(|t| t.0 != "tamsk-alarms" && t.0 != "tamsk-games")
        .collect();
    assert!(others.len() >= 2, "{threads:?}");
    assert!(others.iter().all(|t| t.1 == normal), "{threads:?}");
    if !allowed {
        eprintln!("real-time priority is not allowed here: only the fallback was checked");
    }

    let (mut red, mut black, game) = game(&server.addr).await;
    send(
        &mut red,
        &ClientMessage::Act {
            game,
            action: Action::Resign,
            seq: None,
        },
    )
    .await;
    until_event(&mut black, |e| matches!(e, Event::GameEnded { .. })).await;
}

/// `--worker-nice` gives the runtime's threads that nice value when the system allows it
/// (else they keep theirs), and the store's writer still yields to them (nice 10).
#[tokio::test]
async fn the_workers_take_the_nice_value_asked() {
    let allowed = std::thread::spawn(|| server::priority::nice(-5).is_ok())
        .join()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (asked, expected) in [("-5", if allowed { -5 } else { 0 }), ("0", 0)] {
        let server = Server::start_with(
            &dir.path().join(format!("n{asked}.db")),
            0,
            &["--worker-nice", asked],
            &[],
        );
        let threads = threads_of(server.child.id());
        let workers: Vec<_> = threads
            .iter()
            .filter(|t| t.0 == "tokio-rt-worker")
            .collect();
        assert!(!workers.is_empty(), "{threads:?}");
        assert!(
            workers.iter().all(|t| t.3 == expected),
            "--worker-nice {asked}: {threads:?}"
        );
        let store: Vec<_> = threads.iter().filter(|t| t.0 == "tamsk-store").collect();
        assert_eq!(store.len(), 1, "{threads:?}");
        assert_eq!(store[0].3, 10, "the store's writer yields: {threads:?}");
    }
    if !allowed {
        eprintln!("a negative nice value is not allowed here: only the fallback was checked");
    }
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
