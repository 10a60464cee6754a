//! A node's lease on its games (issue 18), with real nats-server and PostgreSQL: one key
//! per node holds all its games (no write per game while they run), a node whose lease
//! lapsed stops its games and takes them back from their journals when nobody else did,
//! and buckets made with another `max_age` are given the nodes' own.

use std::time::Duration;

use async_nats::jetstream::kv;
use futures::StreamExt;
use protocol::game::{Action, Event};
use protocol::rating::TimeControl;
use protocol::settings::{Level, Settings};
use protocol::wire::ClientMessage;
use tamsk_tests::cluster::*;
use tamsk_tests::services::{Nats, TestDb};
use tamsk_tests::*;

/// A plain NATS connection, as an operator's tool would use.
async fn connect(nats: &Nats) -> async_nats::Client {
    async_nats::connect(nats.url())
        .await
        .expect("connect to NATS")
}

/// Node `name` stalls (every task of it frozen) until its key in the nodes' bucket is gone
/// (its lease lapsed), then wakes up.
async fn lapse(node: &Node, nats: &Nats, name: &str) {
    let thaw = node.freeze().await;
    let nodes = nodes_bucket(nats).await;
    within("the node's key gone", async {
        while matches!(nodes.entry(name).await, Ok(Some(e)) if e.operation == kv::Operation::Put) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    drop(thaw);
}

/// A test node whose games outlast a change of hands: game time runs on meanwhile, so a
/// grace and a first-move bound longer than the tests' (and than a second join after
/// `game_moving`).
fn patient(db: &TestDb, nats: &Nats, name: &str) -> server::Config {
    server::Config {
        reconnect_grace: Duration::from_secs(30),
        abort_ms: 30_000,
        ..node_config(db, nats, name)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_holds_all_its_games_with_its_one_key_and_writes_no_game_key_while_they_run() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let server = leading_server(&db, &nats, "a").await;
    let kv = owners(&nats).await;
    // Five games against the computer, each with a long clock.
    let mut players = Vec::new();
    for i in 0..5 {
        let mut c = Client::new_player(&server, &format!("Lease{i}")).await;
        c.send(&ClientMessage::PlayBot {
            settings: TimeControl::Rapid.settings(Level::One),
            level: None,
            rated: None,
        })
        .await;
        let f = Follower::await_snapshot(c).await;
        owned_by(&kv, f.game, "a").await;
        players.push(f);
    }

    // Every write of a key in either bucket, as NATS sees it, over six writes of the
    // node's key (two leases).
    let client = connect(&nats).await;
    let mut writes = client.subscribe("$KV.>").await.expect("subscribe");
    client.flush().await.expect("flush");
    let (mut node_writes, mut game_writes) = (0, 0);
    within("six writes of the node's key", async {
        while node_writes < 6 {
            let msg = writes.next().await.expect("the subscription");
            let subject = msg.subject.as_str();
            if subject == format!("$KV.{}.a", server::cluster::NODES_BUCKET) {
                node_writes += 1;
            } else if subject.starts_with(&format!("$KV.{}.", server::cluster::BUCKET)) {
                game_writes += 1;
            }
        }
    })
    .await;
    assert_eq!(
        game_writes, 0,
        "no owner key written while the games run (the node's key holds them)"
    );

    // Two leases on, every game is still played there: the node's key held them.
    assert_eq!(metric(server.addr, "tamsk_games_live").await, 5.0);
    for f in &mut players {
        my_move(f).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_lease_lapsed_stops_its_game_and_takes_it_back_from_the_journal() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = Node::start(node_config(&db, &nats, "a"));
    let settings = Settings {
        hourglass_ms: 60_000,
        ..Settings::blitz(Level::One)
    };
    let [mut red, mut black] = seated_at(a.addr, ["RedL", "BlackL"], &settings).await;
    let game = red.game;
    owned_by(&owners(&nats).await, game, "a").await;
    stored_live(&db, game).await;
    play_random(&mut red, &mut black, 3, 6).await;
    let before = red.entries.clone();

    // The node stalls until its key is gone (its lease lapsed), then wakes up.
    lapse(&a, &nats, "a").await;

    // Nothing more of the game is played by the run that lost it: its players are told
    // to join again.
    for f in [&mut red, &mut black] {
        until_moved(f).await;
    }
    // The node takes its key again, and the game back from its journal: the players
    // join again on the same node and play on from every entry they had.
    let mut red2 = join_again(red.client, game, red.seq).await;
    let mut black2 = join_again(black.client, game, black.seq).await;
    assert_eq!(&red2.entries[..before.len()], &before[..]);
    assert_eq!(metric(a.addr, "tamsk_cluster_takeovers_total").await, 1.0);
    let made = play_random(&mut red2, &mut black2, 4, 4).await;
    assert_eq!(made, 4, "moves after the node took its game back");
    red2.act(Action::Resign).await;
    red2.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    assert_eq!(stored_row(&db, game).await.0, "finished");
    let live = nodes_bucket(&nats)
        .await
        .entry("a")
        .await
        .expect("read the node's key");
    assert!(
        live.is_some_and(|e| e.operation == kv::Operation::Put),
        "the node holds a key again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buckets_made_with_another_max_age_are_given_the_nodes_own() {
    let Some((nats, db)) = services().await else {
        return;
    };
    // As a cluster of another `--lease-ms`, or of a version whose owner keys lived a
    // lease, would have left them.
    let js = async_nats::jetstream::new(connect(&nats).await);
    for bucket in [server::cluster::NODES_BUCKET, server::cluster::BUCKET] {
        js.create_key_value(kv::Config {
            bucket: bucket.into(),
            history: 1,
            max_age: Duration::from_secs(60),
            ..Default::default()
        })
        .await
        .expect("a bucket");
    }
    let _server = leading_server(&db, &nats, "a").await;
    let max_age = |bucket: &'static str| {
        let js = js.clone();
        async move {
            let kv = js.get_key_value(bucket).await.expect("the bucket");
            kv.status().await.expect("its status").max_age()
        }
    };
    assert_eq!(max_age(server::cluster::NODES_BUCKET).await, LEASE);
    assert_eq!(
        max_age(server::cluster::BUCKET).await,
        server::cluster::OWNER_KEY_AGE
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_shuts_down_leaves_and_another_takes_its_games_without_waiting_for_its_lease() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    // A game against the computer on node b runs there.
    let mut c = Client::new_player(&b, "Tess").await;
    c.send(&ClientMessage::PlayBot {
        settings: TimeControl::Rapid.settings(Level::One),
        level: None,
        rated: None,
    })
    .await;
    let mut f = Follower::await_snapshot(c).await;
    let game = f.game;
    let kv = owners(&nats).await;
    owned_by(&kv, game, "b").await;
    stored_live(&db, game).await;
    // Two moves of the player, so that the computer moved too (the first-move bound runs
    // on while the game changes nodes).
    my_move(&mut f).await;
    my_move(&mut f).await;
    let before = f.entries.clone();

    // Node b shuts down (as on SIGTERM, no drain): its game is suspended, live in the
    // database, and its key is gone as it stops.
    b.stop().await;
    let entry = nodes_bucket(&nats)
        .await
        .entry("b")
        .await
        .expect("read node b's key");
    assert!(
        entry.is_none_or(|e| e.operation != kv::Operation::Put),
        "node b's key is gone when it stopped"
    );
    // Node a takes the game over; the player comes back there and plays on.
    owned_by(&kv, game, "a").await;
    let (c, _) = Client::returning_at(a.addr, &f.client.token).await;
    let mut f = join_again(c, game, f.seq).await;
    assert_eq!(&f.entries[..before.len()], &before[..]);
    my_move(&mut f).await;
}

/// The player plays a move when his turn comes (after the computer's, if it is to move).
async fn my_move(f: &mut Follower) {
    while f.replica.is_playing() && f.replica.turn() != f.seat() {
        within("the computer's move", f.next_event()).await;
    }
    assert!(
        f.replica.is_playing(),
        "the game ended: {:?}",
        f.replica.status()
    );
    let action = a_move(f);
    f.act(action).await;
    f.until_own(f.seat(), action).await;
}

/// The bundled bot's node loses its lease (a stall): the bot is told its game moved, joins
/// it again on the same connection, wherever it runs now, and plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_joins_its_game_again_when_the_game_moves_off_its_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = Node::start(patient(&db, &nats, "a"));
    let settings = Settings {
        hourglass_ms: 60_000,
        ..Settings::blitz(Level::One)
    };
    let url = format!("ws://{}/ws", a.addr);
    let (bot, mut me) = hosting_bot(a.addr, url, &settings, "Mo").await;
    let game = me.game;
    stored_live(&db, game).await;
    my_move(&mut me).await;

    // Node a stalls until its key is gone, then wakes up: the game leaves it.
    lapse(&a, &nats, "a").await;
    until_moved(&mut me).await;
    let mut me = join_again(me.client, game, me.seq).await;
    // The bot plays on: two moves of mine, each after one of its.
    my_move(&mut me).await;
    my_move(&mut me).await;
    me.act(Action::Resign).await;
    let report = within("the bot's report", bot)
        .await
        .expect("the bot's task")
        .expect("the bot ran");
    assert_eq!(report.games.len(), 1);
    assert_eq!(report.games[0].0, game);
    assert!(
        matches!(report.games[0].1, protocol::game::Status::Finished { .. }),
        "{:?}",
        report.games[0].1
    );
    assert_eq!(report.reconnects, 0, "on the same connection");
}

/// A game's page (a real headless Chromium) watching a game whose node loses its lease: told
/// `game_moved`, it follows the game again and shows it live, and the moves after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_follows_its_game_again_when_the_game_moves_off_its_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let _one = tamsk_tests::pages::ONE_BROWSER.lock().await;
    let a = Node::start(patient(&db, &nats, "a"));
    let settings = Settings {
        hourglass_ms: 60_000,
        ..Settings::blitz(Level::One)
    };
    let [mut red, mut black] = seated_at(a.addr, ["RedW", "BlackW"], &settings).await;
    let game = red.game;
    stored_live(&db, game).await;
    play_random(&mut red, &mut black, 8, 2).await;
    let page = tamsk_tests::browser::Browser::launch().await;
    page.goto(&format!("http://{}/game/{game}", a.addr)).await;
    page.wait_for(
        &format!("document.body.dataset.mode === 'live' && window.__tamsk.applied !== undefined && document.body.dataset.seq === '{}'", red.seq),
        "the page following the game",
    )
    .await;

    // Node a stalls until its key is gone, then wakes up: the game leaves it, and comes
    // back to it from the journal (the only node).
    lapse(&a, &nats, "a").await;
    page.wait_for("window.__tamsk.moved >= 1", "the page told the game moved")
        .await;
    let before_seq = red.seq;
    for f in [&mut red, &mut black] {
        until_moved(f).await;
    }
    let mut red = join_again(red.client, game, red.seq).await;
    let mut black = join_again(black.client, game, black.seq).await;
    // Live again, from a snapshot of the run that took the game back (numbered above
    // the old one), with the notice gone.
    page.wait_for(
        &format!(
            "document.body.dataset.mode === 'live' && Number(document.body.dataset.seq) > {}",
            before_seq
        ),
        "the game live on the page again",
    )
    .await;
    let notice = page
        .eval("document.querySelector('#error').textContent")
        .await;
    assert_eq!(notice.as_str(), Some(""), "the notice cleared");
    // A move after it reaches the page.
    play_random(&mut red, &mut black, 9, 1).await;
    page.wait_for(
        &format!("window.__tamsk.applied[{}] !== undefined", red.seq),
        "the page showing the move after the game moved",
    )
    .await;
    page.assert_no_errors();
    page.close().await;
}
