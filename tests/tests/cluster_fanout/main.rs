//! The per-game event stream between nodes (issue 18): one NATS message per event for all
//! the other nodes, fanned out on each node in each client's exact order; gaps repaired;
//! a remote seat's lag reaches the game's owner. Real nats-server and PostgreSQL, nodes
//! in-process (as in `cluster.rs`).

use std::time::Duration;

use futures::StreamExt;
use protocol::game::{Action, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{
    Change, ClientMessage, GameId, LobbyMessage, Seq, ServerFrame, ServerMessage,
};
use server::Config;
use tamsk_tests::cluster::{leading_server, node_config, seek_pair, services};
use tamsk_tests::services::Nats;
use tamsk_tests::*;

mod leader;

/// Waits (through a watch of its key in the owners' bucket) until `game` has an owner
/// that serves it to other nodes.
async fn owned(nats: &Nats, game: GameId) {
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let js = async_nats::jetstream::new(client);
    within("the game's owner", async {
        let kv = loop {
            if let Ok(kv) = js.get_key_value(server::cluster::BUCKET).await {
                break kv;
            }
            tokio::task::yield_now().await;
        };
        let mut watch = kv
            .watch_with_history(game.to_string())
            .await
            .expect("watch");
        while let Some(entry) = watch.next().await {
            if entry.expect("entry").operation == async_nats::jetstream::kv::Operation::Put {
                return;
            }
        }
        panic!("the watch ended");
    })
    .await
}

/// A player leaves node a for `server` and resumes exactly where he was.
async fn move_to(f: &mut Follower, server: &TestServer) {
    let token = f.client.token.clone();
    let old = std::mem::replace(&mut f.client, Client::returning(server, &token).await.0);
    old.close().await;
    f.client
        .send(&ClientMessage::Join {
            game: f.game,
            after_seq: Some(f.seq),
        })
        .await;
    match within("resumed", f.client.recv()).await {
        ServerMessage::Resumed {
            game, after_seq, ..
        } => assert_eq!((game, after_seq), (f.game, f.seq)),
        other => panic!("expected resumed, got {other:?}"),
    }
}

async fn watch(server: &TestServer, game: GameId, name: &str) -> Follower {
    let mut c = Client::new_player(server, name).await;
    c.send(&ClientMessage::Watch {
        game,
        after_seq: None,
    })
    .await;
    let f = Follower::await_snapshot(c).await;
    assert_eq!((f.game, f.seat), (game, None));
    f
}

/// What the test sees on a game's stream and on every connection subject: the seqs
/// published on the stream, and the numbered events sent to single connections.
struct Spy {
    stream: async_nats::Subscriber,
    conns: async_nats::Subscriber,
}

impl Spy {
    async fn start(nats: &Nats, game: GameId) -> (Spy, async_nats::Client) {
        let client = async_nats::connect(nats.url()).await.expect("NATS");
        let stream = client
            .subscribe(format!("tamsk.game.{game}.ev"))
            .await
            .expect("subscribe");
        let conns = client.subscribe("tamsk.conn.>").await.expect("subscribe");
        client.flush().await.expect("flush");
        (Spy { stream, conns }, client)
    }

    /// Everything received so far (within a short quiet time).
    async fn drain(&mut self) -> (Vec<Option<Seq>>, Vec<Seq>) {
        let mut stream = Vec::new();
        let mut conns = Vec::new();
        loop {
            tokio::select! {
                Some(m) = self.stream.next() => {
                    let text = String::from_utf8(m.payload.to_vec()).expect("utf-8");
                    let (seq, frame) = text.split_once('\n').expect("seq line");
                    let seq = (!seq.is_empty()).then(|| seq.parse().expect("a seq"));
                    let msg: ServerMessage = serde_json::from_str(frame).expect("a frame");
                    if let ServerMessage::Event(ev) = &msg {
                        assert_eq!(Some(ev.seq), seq, "the stream's seq is the event's");
                    }
                    stream.push(seq);
                }
                Some(m) = self.conns.next() => {
                    if let Ok(ServerMessage::Event(ev)) = serde_json::from_slice(&m.payload) {
                        conns.push(ev.seq);
                    }
                }
                _ = tokio::time::sleep(Duration::from_millis(300)) => return (stream, conns),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_publication_per_event_reaches_every_remote_client_in_order() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    let c = TestServer::start_with(node_config(&db, &nats, "c")).await;
    let (mut red, mut black) = start_game(&a, &Settings::blitz(Level::One)).await;
    let game = red.game;
    owned(&nats, game).await;
    // Listening from here on: an event the game sends while its clients are being set up
    // (after the last one the test awaits) is seen as well, and counted if it comes after
    // `from` below.
    let (mut spy, _nats_client) = Spy::start(&nats, game).await;
    play_random(&mut red, &mut black, 3, 2).await;
    // Black plays from node b; two watchers on node c and one on node b.
    move_to(&mut black, &b).await;
    let mut watchers = vec![
        watch(&c, game, "W1").await,
        watch(&c, game, "W2").await,
        watch(&b, game, "W3").await,
    ];
    let joined = watchers.iter().map(|w| w.seq).max().unwrap();
    red.catch_up_to(joined).await;
    black.catch_up_to(joined).await;
    for w in &mut watchers {
        w.catch_up_to(joined).await;
    }
    let from = red.seq;

    let moves = play_random(&mut red, &mut black, 4, 20).await;
    assert!(moves >= 10, "{moves} moves");
    red.act(Action::Resign).await;
    red.until("the end", |e| {
        matches!(e, protocol::game::Event::GameEnded { .. })
    })
    .await;
    black.catch_up_to(red.seq).await;
    for w in &mut watchers {
        w.catch_up_to(red.seq).await;
    }
    // Every remote client saw exactly the events a local one saw, seq by seq.
    let tail =
        |f: &Follower| -> Vec<_> { f.log.iter().filter(|e| e.seq > from).cloned().collect() };
    for f in std::iter::once(&black).chain(&watchers) {
        assert_eq!(tail(&red), tail(f));
        assert_eq!(red.replica, f.replica);
    }
    // The owner published each of them once on the game's subject, for four remote
    // clients on two nodes, and none of them on a connection's subject.
    let (stream, conns) = spy.drain().await;
    let published: Vec<Seq> = stream
        .iter()
        .flatten()
        .copied()
        .filter(|&s| s > from)
        .collect();
    let conns: Vec<Seq> = conns.into_iter().filter(|&s| s > from).collect();
    let expected: Vec<Seq> = (from + 1..=red.seq).collect();
    assert_eq!(published, expected, "one message per event, in order");
    assert!(
        conns.is_empty(),
        "events sent to single connections: {conns:?}"
    );
    eprintln!(
        "{} events published once each for 4 remote clients on 2 nodes ({} frames on the stream in all)",
        published.len(),
        stream.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_loses_stream_messages_repairs_the_gaps() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    // Node c loses every third message of each game stream it follows.
    let c = TestServer::start_with(Config {
        fanout_loss_every: 3,
        ..node_config(&db, &nats, "c")
    })
    .await;
    let (mut red, mut black) = start_game(&a, &Settings::blitz(Level::One)).await;
    let game = red.game;
    owned(&nats, game).await;
    move_to(&mut black, &b).await;
    let mut watcher = watch(&c, game, "Lossy").await;
    let from = watcher.seq;
    red.catch_up_to(from).await;
    black.catch_up_to(from).await;
    let moves = play_random(&mut red, &mut black, 5, 16).await;
    assert!(moves >= 10, "{moves} moves");
    // The last message may be the lost one: one more event makes every gap visible.
    red.act(Action::Resign).await;
    red.until("the end", |e| {
        matches!(e, protocol::game::Event::GameEnded { .. })
    })
    .await;
    // `Follower` checks that seqs come without gap or repeat; no `resumed` reaches the
    // watcher (its node resumed it silently).
    within("the watcher repaired", watcher.catch_up_to(red.seq - 1)).await;
    let tail = |f: &Follower, to: Seq| -> Vec<_> {
        f.log
            .iter()
            .filter(|e| e.seq > from && e.seq <= to)
            .cloned()
            .collect()
    };
    assert_eq!(tail(&watcher, red.seq - 1), tail(&red, red.seq - 1));
    assert!(watcher.seq - from >= 10, "{} events", watcher.seq - from);
    // Node c counted its repairs; node b, which lost nothing, none.
    assert!(metric(c.addr, "tamsk_cluster_gap_repairs_total").await >= 1.0);
    assert_eq!(metric(b.addr, "tamsk_cluster_gap_repairs_total").await, 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_seats_lag_reaches_the_owner() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    // Only node b measures round trips.
    let b = TestServer::start_with(Config {
        ping_interval: Duration::from_millis(100),
        first_ping: Some(Duration::from_millis(50)),
        ..node_config(&db, &nats, "b")
    })
    .await;
    let (mut red, mut black) = start_game(&a, &Settings::blitz(Level::One)).await;
    assert_eq!(red.snapshot.black.lag_ms, None, "node a measures nothing");
    owned(&nats, red.game).await;
    move_to(&mut black, &b).await;
    // Black's round trip, measured on node b, becomes a `lag` change of the game on
    // node a, seen by both players. Black reads meanwhile: his client answers node b's
    // pings only while it reads.
    let ev = black
        .until_change(
            "black's lag",
            |c| matches!(c, Change::Lag { player, .. } if *player == Player::Black),
        )
        .await;
    let Change::Lag { rtt_ms, .. } = ev.change else {
        unreachable!()
    };
    assert!(rtt_ms < 1_000, "a loopback round trip of {rtt_ms} ms");
    red.catch_up_to(black.seq).await;
    assert!(red.log.iter().any(|e| matches!(
        e.change,
        Change::Lag {
            player: Player::Black,
            ..
        }
    )));
    // And it is the game's: a watcher's snapshot has it (measured again since, maybe).
    let w = watch(&a, red.game, "Walt").await;
    assert!(w.snapshot.black.lag_ms.is_some(), "{:?}", w.snapshot.black);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_seats_lag_goes_to_the_owner_only_when_it_moved_by_the_published_step() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(Config {
        ping_interval: Duration::from_millis(50),
        first_ping: Some(Duration::from_millis(50)),
        ..node_config(&db, &nats, "b")
    })
    .await;
    let (_red, mut black) = start_game(&a, &Settings::blitz(Level::One)).await;
    owned(&nats, black.game).await;
    // What node b sends the game's owner, as NATS carries it.
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let mut cmds = client
        .subscribe(format!("tamsk.game.{}.cmd", black.game))
        .await
        .expect("subscribe");
    client.flush().await.expect("flush");
    move_to(&mut black, &b).await;

    // Node b pings black twelve times (his library answers each).
    let start = black.client.pings;
    while black.client.recv_ping().await < start + 12 {}
    let measured = 12;
    // A join, queued behind every lag report of black's, marks the end of them (the
    // first join is his resumption on node b).
    black
        .client
        .send(&ClientMessage::Join {
            game: black.game,
            after_seq: Some(black.seq),
        })
        .await;
    let mut sent = Vec::new();
    within("the second join at the owner", async {
        let mut joins = 0;
        while joins < 2 {
            let msg = cmds.next().await.expect("the subscription");
            let cmd: server::cluster::RemoteCmd =
                serde_json::from_slice(&msg.payload).expect("a command");
            match cmd.op {
                server::cluster::Op::Lag { rtt_ms } => sent.push(rtt_ms),
                server::cluster::Op::Join { .. } => joins += 1,
                _ => {}
            }
        }
    })
    .await;
    eprintln!("{measured} round trips measured, lag sent {sent:?}");
    assert!(!sent.is_empty(), "the first measurement is sent");
    for pair in sent.windows(2) {
        assert!(
            pair[0].abs_diff(pair[1]) >= server::room::LAG_STEP_MS,
            "a lag sent that moved less than the step: {sent:?}"
        );
    }
    assert!(
        sent.len() <= measured / 2,
        "{} of {measured} measurements sent: {sent:?}",
        sent.len()
    );
}
