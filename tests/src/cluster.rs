//! Helpers of the tests of several nodes (issue 18): real NATS and PostgreSQL, nodes
//! in-process, the owners' bucket as an operator's tool reads it, and a node on a runtime
//! of its own that can be killed like kill -9 or frozen like SIGSTOP.

use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use protocol::game::{Action, Player};
use protocol::settings::Settings;
use protocol::wire::{ClientMessage, GameEvent, GameId, ServerMessage};
use server::Config;

use crate::services::{Nats, TestDb};
use crate::{within, Client, Follower};

/// Lease of the test nodes: a dead node's games are taken within about this.
pub const LEASE: Duration = Duration::from_millis(1500);

/// NATS and PostgreSQL, or `None` when their binaries are missing (skipped loudly).
pub async fn services() -> Option<(Nats, TestDb)> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let nats = Nats::start()?;
    let db = TestDb::postgres().await?;
    Some((nats, db))
}

/// The config of node `node` of a test cluster.
pub fn node_config(db: &TestDb, nats: &Nats, node: &str) -> Config {
    Config {
        nats_url: Some(nats.url()),
        node_id: Some(node.into()),
        lease: LEASE,
        ..db.config()
    }
}

/// The owners' bucket, as an operator's tool would read it.
pub async fn owners(nats: &Nats) -> async_nats::jetstream::kv::Store {
    let client = async_nats::connect(nats.url())
        .await
        .expect("connect to NATS");
    let js = async_nats::jetstream::new(client);
    within("the owners' bucket", async {
        loop {
            if let Ok(kv) = js.get_key_value(server::cluster::BUCKET).await {
                return kv;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
}

/// The node that owns `game`, by the owners' bucket.
pub async fn owner(nats: &Nats, game: GameId) -> String {
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let js = async_nats::jetstream::new(client);
    let kv = js
        .get_key_value(server::cluster::BUCKET)
        .await
        .expect("the owners' bucket");
    let entry = within("the game's owner", async {
        loop {
            if let Ok(Some(e)) = kv.entry(game.to_string()).await {
                return e;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    String::from_utf8_lossy(&entry.value).into_owned()
}

/// Waits (through a watch of its key) until `node` owns `game`.
pub async fn owned_by(kv: &async_nats::jetstream::kv::Store, game: GameId, node: &str) {
    let mut watch = kv
        .watch_with_history(game.to_string())
        .await
        .expect("watch");
    within(&format!("{node} owning the game"), async {
        while let Some(entry) = watch.next().await {
            let entry = entry.expect("watch entry");
            if entry.operation == async_nats::jetstream::kv::Operation::Put
                && entry.value.as_ref() == node.as_bytes()
            {
                return;
            }
        }
        panic!("the watch ended");
    })
    .await
}

/// Waits until NATS knows nobody serves `game` (a killed node's connection is closed:
/// with kill -9 the kernel closes it at once; an in-process node's sockets close as its
/// runtime's tasks are dropped, a moment after [`Node::kill`] returns).
pub async fn unserved(nats: &Nats, game: GameId) {
    unserved_subject(nats, format!("tamsk.game.{game}.cmd")).await
}

/// Waits until NATS knows nobody serves `subject` (see [`unserved`]).
pub async fn unserved_subject(nats: &Nats, subject: String) {
    let client = async_nats::connect(nats.url())
        .await
        .expect("connect to NATS");
    within("nobody serving the subject", async {
        loop {
            let asked = client.request(subject.clone(), "".into());
            // A request to a dead connection's subscription is answered by nobody.
            match tokio::time::timeout(Duration::from_millis(100), asked).await {
                Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => return,
                _ => tokio::task::yield_now().await,
            }
        }
    })
    .await
}

/// A player comes back on another node and resumes from the seq he had.
pub async fn resume_on(f: &mut Follower, addr: SocketAddr, token: &str) {
    let (c, _) = Client::returning_at(addr, token).await;
    resume_with(f, c).await;
}

/// A player resumes with connection `c` from the seq he had.
pub async fn resume_with(f: &mut Follower, mut c: Client) {
    c.send(&ClientMessage::Join {
        game: f.game,
        after_seq: Some(f.seq),
    })
    .await;
    match within("resumed", c.recv()).await {
        ServerMessage::Resumed {
            game, after_seq, ..
        } => {
            assert_eq!((game, after_seq), (f.game, f.seq));
        }
        other => panic!("expected resumed, got {other:?}"),
    }
    f.client = c;
}

/// A node on its own runtime (one worker thread, on a thread of its own): it can be
/// killed like kill -9 (the runtime dropped without any shutdown) or frozen like SIGSTOP
/// (its one worker blocked: no task of the node runs until it thaws).
pub struct Node {
    pub addr: SocketAddr,
    handle: tokio::runtime::Handle,
    kill: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Node {
    pub fn start(config: Config) -> Node {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (kill, killed) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("a runtime");
            let listener = rt
                .block_on(server::bind(
                    ([127, 0, 0, 1], 0).into(),
                    server::LISTEN_BACKLOG,
                ))
                .expect("bind");
            addr_tx
                .send((listener.local_addr().unwrap(), rt.handle().clone()))
                .unwrap();
            rt.spawn(server::run_with(listener, config, std::future::pending()));
            let _ = killed.recv();
            // Every task stops where it is: no drain, no suspension, no goodbye.
            rt.shutdown_background();
        });
        let (addr, handle) = addr_rx.recv().expect("the node's address");
        Node {
            addr,
            handle,
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// Freezes the node until the answer is dropped or sent to: its one worker thread is
    /// blocked, so none of its tasks runs (its store's writer thread, which has nothing
    /// to write while the games are frozen, and its sockets' kernel buffers go on).
    pub async fn freeze(&self) -> std::sync::mpsc::Sender<()> {
        let (thaw, thawed) = std::sync::mpsc::channel::<()>();
        let (frozen_tx, frozen) = tokio::sync::oneshot::channel();
        self.handle.spawn(async move {
            let _ = frozen_tx.send(());
            let _ = thawed.recv();
        });
        within("the node frozen", frozen)
            .await
            .expect("the freeze ran");
        thaw
    }

    pub fn kill(&mut self) {
        drop(self.kill.take());
        if let Some(t) = self.thread.take() {
            t.join().expect("the node's thread");
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until a stored game's row is there (the game is over and stored).
pub async fn stored_row(db: &TestDb, game: GameId) -> (String, Option<String>, String) {
    within("the stored game", async {
        loop {
            if let Some(row) = db.stored_game_row(game).await {
                return row;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// A player joins `game` again on the connection he has (its node forwards to the game's
/// owner) and follows it from the snapshot he gets (the run that answers numbers its
/// events above the old one's). Until the new owner runs the game a join is told
/// `game_moving` or another try-again code (or `unknown_game`, from a node that took the
/// game over while the join was on its way), and he tries again, as a real client does.
/// An action he sent before he knew the game moved is refused by the new owner with
/// `not_subscribed` (his connection does not follow the game there yet): skipped, as a
/// real client would send it again once it follows the game.
pub async fn join_again(c: Client, game: GameId, after_seq: u64) -> Follower {
    let mut c = c;
    let snapshot = within("the game running on its new owner", async {
        loop {
            c.send(&ClientMessage::Join {
                game,
                after_seq: Some(after_seq),
            })
            .await;
            let answer = loop {
                match c.recv().await {
                    ServerMessage::Error { code, game: g, .. }
                        if code == "not_subscribed" && g == Some(game) => {}
                    answer => break answer,
                }
            };
            match answer {
                ServerMessage::Snapshot(s) => return s,
                ServerMessage::Error { code, .. }
                    if protocol::wire::is_try_again(&code) || code == "unknown_game" =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                other => panic!("expected a snapshot, got {other:?}"),
            }
        }
    })
    .await;
    let at = snapshot.view.at_ms;
    let mut f = Follower::from_snapshot(c, *snapshot);
    f.replica.advance(at);
    f
}

/// Test server `name` of a test cluster (on this runtime), serving before this returns (a
/// welcome proves it): started before the others, it leads the lobby, so the games its
/// lobby pairs between its own players run on it.
pub async fn leading_server(db: &TestDb, nats: &Nats, name: &str) -> crate::TestServer {
    let server = crate::TestServer::start_with(node_config(db, nats, name)).await;
    Client::new_player(&server, "First").await;
    server
}

/// Nodes started in turn, the first (named first) serving before the others start, so
/// that it leads the lobby (a welcome proves it serves: it took the lead before serving).
pub async fn led_nodes<const N: usize>(db: &TestDb, nats: &Nats, names: [&str; N]) -> [Node; N] {
    let mut nodes = Vec::with_capacity(N);
    for (i, name) in names.into_iter().enumerate() {
        let node = Node::start(node_config(db, nats, name));
        if i == 0 {
            Client::new_player_at(node.addr, "Anchor").await;
        }
        nodes.push(node);
    }
    match nodes.try_into() {
        Ok(nodes) => nodes,
        Err(_) => unreachable!("N nodes"),
    }
}

/// The players paired together, from their snapshots of the new game, as `(red, black)`.
pub async fn paired(x: Client, y: Client) -> (Follower, Follower) {
    let x = Follower::await_snapshot(x).await;
    let y = Follower::await_snapshot(y).await;
    assert_eq!(x.game, y.game);
    assert_ne!(x.seat, y.seat);
    if x.seat() == protocol::game::Player::Red {
        (x, y)
    } else {
        (y, x)
    }
}

/// `x` and `y` seek `settings` (on whichever nodes they are connected to): the game they
/// are paired in, as `(red, black)`.
pub async fn seek_pair(
    mut x: Client,
    mut y: Client,
    settings: &protocol::settings::Settings,
) -> (Follower, Follower) {
    for c in [&mut x, &mut y] {
        c.send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    }
    paired(x, y).await
}

/// Waits until the database has `game` as live (its start written, a few milliseconds
/// after it began): only then is it taken over when its node dies.
pub async fn stored_live(db: &TestDb, game: GameId) {
    within("the game stored as live", async {
        while !db.is_live(game).await {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// Two new players on the node at `addr` seek `settings`: `(red, black)`.
pub async fn seated_at(addr: SocketAddr, names: [&str; 2], settings: &Settings) -> [Follower; 2] {
    let mut red = Client::new_player_at(addr, names[0]).await;
    let mut black = Client::new_player_at(addr, names[1]).await;
    for c in [&mut red, &mut black] {
        c.send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    }
    let mut red = Follower::await_snapshot(red).await;
    let mut black = Follower::await_snapshot(black).await;
    if red.seat() != Player::Red {
        std::mem::swap(&mut red, &mut black);
    }
    [red, black]
}

/// The next legal move (a drop, never onto a full socket) of the player to move.
pub fn a_move(f: &Follower) -> Action {
    let turn = f.replica.turn();
    f.replica
        .legal_actions(turn)
        .into_iter()
        .find(|a| matches!(a, Action::Move { to, drop: true, .. } if !f.replica.is_full(*to)))
        .expect("a legal move")
}

/// Reads `f`'s messages until he is told `game_moved` for his game (its node lost it):
/// the events that came before, each taken in.
pub async fn until_moved(f: &mut Follower) -> Vec<GameEvent> {
    let mut events = Vec::new();
    loop {
        match within("told that the game moved", f.client.recv()).await {
            ServerMessage::Error { code, game, .. } if code == "game_moved" => {
                assert_eq!(game, Some(f.game));
                return events;
            }
            ServerMessage::Event(ev) => {
                f.check(&ev);
                events.push(*ev);
            }
            _ => {}
        }
    }
}

/// The nodes' bucket, as an operator's tool reads it.
pub async fn nodes_bucket(nats: &Nats) -> async_nats::jetstream::kv::Store {
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    async_nats::jetstream::new(client)
        .get_key_value(server::cluster::NODES_BUCKET)
        .await
        .expect("the nodes' bucket")
}
