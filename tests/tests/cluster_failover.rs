//! Failures of nodes in a cluster (issue 18), all real (nats-server with JetStream and a
//! throwaway PostgreSQL): a node that stalls past its lease while another takes its game
//! (fencing: never two games), a node of clients that dies (their seats go away), the
//! database refusing a stale owner's writes, and a game's page (a real headless Chromium)
//! opened while its game changes nodes.

use std::time::{Duration, Instant};

use protocol::game::{Action, Event, Player};
use protocol::record::{Entry, Record};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, GameId};
use server::Config;
use tamsk_tests::cluster::*;
use tamsk_tests::services::TestDb;
use tamsk_tests::*;

/// The entries of a stored game's record, read from the database.
async fn stored_entries(db: &TestDb, game: GameId) -> Vec<Entry> {
    use sqlx::{Connection, Row};
    let TestDb::Postgres { url, .. } = db else {
        panic!("a PostgreSQL test database")
    };
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .expect("connect to the test database");
    let row = sqlx::query("SELECT record_json FROM games WHERE id = $1")
        .bind(game.to_string())
        .fetch_one(&mut conn)
        .await
        .expect("the game's row");
    let record: sqlx::types::Json<Record> = row.get("record_json");
    record.0.entries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_stalls_past_its_lease_stops_its_game_and_the_new_owner_alone_plays_it() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let config = |node| Config {
        reconnect_grace: Duration::from_secs(10),
        ..node_config(&db, &nats, node)
    };
    let a = Node::start(config("a"));
    // Node a leads the lobby (it serves before b starts), so the games it pairs run on a.
    Client::new_player_at(a.addr, "FirstS").await;
    let b = TestServer::start_with(config("b")).await;
    let kv = owners(&nats).await;
    let settings = Settings {
        hourglass_ms: 30_000,
        ..Settings::blitz(Level::One)
    };
    let [mut red, mut black] = seated_at(a.addr, ["RedS", "BlackS"], &settings).await;
    let game = red.game;
    owned_by(&kv, game, "a").await;
    play_random(&mut red, &mut black, 7, 8).await;
    assert!(red.replica.is_playing());
    let before = red.entries.clone();
    assert_eq!(metric(a.addr, "tamsk_games_live").await, 1.0);

    // Node a stalls (every task of it frozen) past its lease; node b takes the game.
    let stalled = Instant::now();
    let thaw = a.freeze().await;
    // Meanwhile the player to move sends a move to node a: it waits in a's socket.
    let mover = if red.replica.turn() == Player::Red {
        &mut red
    } else {
        &mut black
    };
    let action = a_move(mover);
    mover.act(action).await;
    owned_by(&kv, game, "b").await;
    within("node b running the game", async {
        while metric(b.addr, "tamsk_games_live").await != 1.0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    eprintln!(
        "node a frozen; node b runs its game {} ms later (lease {} ms)",
        stalled.elapsed().as_millis(),
        LEASE.as_millis()
    );
    // Node a wakes up.
    drop(thaw);

    // Its game is not played there any more: each player on it is told to join again,
    // and gets no change of the game from node a (the move sent meanwhile was played
    // nowhere: node a had lost the game, and node b refuses an action from a connection
    // that does not follow the game there, `not_subscribed`, which `join_again` skips).
    for f in [&mut red, &mut black] {
        for ev in until_moved(f).await {
            assert!(
                !matches!(ev.change, Change::Play { .. }),
                "node a played on after it lost the game: {ev:?}"
            );
        }
    }
    // Node a's game task stopped (not listed, nothing stored by it: b stores the end).
    within("the game gone from node a", async {
        while metric(a.addr, "tamsk_games_live").await != 0.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(db.stored_game_row(game).await, None, "nothing stored yet");

    // Both players, still on node a, join the game again: it reaches node b's.
    let mut red2 = join_again(red.client, game, red.seq).await;
    let mut black2 = join_again(black.client, game, black.seq).await;
    assert_eq!(red2.seat, Some(Player::Red));
    assert!(red2.seq > red.seq, "node b numbers its events above a's");
    assert_eq!(
        &red2.entries[..before.len()],
        &before[..],
        "every entry of node a's before the stall"
    );
    red2.check_against_snapshot().await;
    black2.check_against_snapshot().await;
    let made = play_random(&mut red2, &mut black2, 8, 4).await;
    assert_eq!(made, 4, "moves after the takeover");
    red2.act(Action::Resign).await;
    red2.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    black2.catch_up_to(red2.seq).await;
    assert_eq!(red2.replica, black2.replica);
    let row = stored_row(&db, game).await;
    assert_eq!(row.0, "finished");
    // The record is the game node b played: a's entries up to the stall, then b's only.
    assert_eq!(stored_entries(&db, game).await, red2.entries);
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_a_node_of_players_dies_the_owner_marks_them_away_and_they_resume_elsewhere() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let config = |node| Config {
        reconnect_grace: Duration::from_secs(10),
        ..node_config(&db, &nats, node)
    };
    let a = TestServer::start_with(config("a")).await;
    // Node a leads the lobby (it serves before b starts), so the games it pairs run on a.
    Client::new_player(&a, "FirstD").await;
    let mut b = Node::start(config("b"));
    let c = TestServer::start_with(config("c")).await;
    let kv = owners(&nats).await;
    let settings = Settings {
        hourglass_ms: 30_000,
        ..Settings::blitz(Level::One)
    };
    let [mut red, mut black] = seated_at(a.addr, ["RedD", "BlackD"], &settings).await;
    let game = red.game;
    owned_by(&kv, game, "a").await;
    play_random(&mut red, &mut black, 3, 4).await;

    // Black goes to node b; his seat there is a proxy in node a's game.
    let token = black.client.token.clone();
    let old = std::mem::replace(&mut black.client, Client::connect(&a).await);
    old.close().await;
    red.until_presence("black away", Player::Black, false).await;
    resume_on(&mut black, b.addr, &token).await;
    red.until_presence("black back", Player::Black, true).await;
    black.catch_up_to(red.seq).await;

    // Node b dies (kill -9): its key in the nodes' bucket runs out, and node a treats
    // black's proxy as a closed connection.
    let killed = Instant::now();
    b.kill();
    red.until_presence("black away with node b", Player::Black, false)
        .await;
    let noticed = killed.elapsed();
    eprintln!(
        "node b killed; its player away in node a's game {} ms later (lease {} ms)",
        noticed.as_millis(),
        LEASE.as_millis()
    );
    assert!(
        noticed < LEASE * 2,
        "noticed within about a lease: {noticed:?}"
    );

    // Black comes back on node c and resumes exactly; the game goes on to its end.
    resume_on(&mut black, c.addr, &token).await;
    black.catch_up_to(red.seq).await;
    red.until_presence("black back on node c", Player::Black, true)
        .await;
    black.catch_up_to(red.seq).await;
    let made = play_random(&mut red, &mut black, 4, 4).await;
    assert_eq!(made, 4);
    black.act(Action::Resign).await;
    black
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    red.catch_up_to(black.seq).await;
    assert_eq!(red.replica, black.replica);
    assert_eq!(stored_row(&db, game).await.0, "finished");
    drop((a, c));
}

/// The `not_your_turn` once seen right after a takeover (docs/OPERATIONS.md) was the
/// test client's: after both players rejoined, the first to rejoin still had his
/// opponent's return (a presence event) unread; the move helper took the next event for
/// his move's, saw his replica still on his turn, and moved again, which the server
/// rightly refused. The same, on one node: the player to move has unread events (his
/// opponent left and came back) and plays exactly one move a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_with_unread_events_plays_one_move_a_turn() {
    let server = TestServer::start().await;
    let settings = Settings {
        hourglass_ms: 30_000,
        ..Settings::blitz(Level::One)
    };
    let (mut red, mut black) = start_game(&server, &settings).await;
    play_random(&mut red, &mut black, 5, 2).await;
    let red_moves = red.replica.turn() == Player::Red;
    let other = if red_moves { &mut black } else { &mut red };
    let token = other.client.token.clone();
    let old = std::mem::replace(&mut other.client, Client::connect(&server).await);
    old.close().await;
    resume_on(other, server.addr, &token).await;
    let mover = if red_moves { &red } else { &black };
    let unread = mover.seq;
    let made = play_random(&mut red, &mut black, 6, 4).await;
    assert_eq!(made, 4);
    let mover = if red_moves { &red } else { &black };
    let presence = mover
        .log
        .iter()
        .filter(|e| e.seq > unread && matches!(e.change, Change::Presence { .. }))
        .count();
    assert_eq!(
        presence, 2,
        "the mover had his opponent's leaving and return unread"
    );
}

/// A game's page opened on another node while the game's node is gone (its watch is
/// answered `game_moving`) asks again each second, and shows the game live once that
/// node took it over, instead of taking it for a finished game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_opened_while_its_game_changes_nodes_shows_it_once_taken_over() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let _one = tamsk_tests::pages::ONE_BROWSER.lock().await;
    // A longer lease than the other tests': the page loads inside the takeover's gap. The
    // game's time runs on meanwhile: a first move may take longer than the tests' 3 s.
    let config = |node| Config {
        lease: Duration::from_secs(6),
        reconnect_grace: Duration::from_secs(30),
        abort_ms: 30_000,
        ..node_config(&db, &nats, node)
    };
    let mut a = Node::start(config("a"));
    // Node a leads the lobby (it serves before b starts), so the game runs on a.
    Client::new_player_at(a.addr, "FirstP").await;
    let b = TestServer::start_with(config("b")).await;
    let red = Client::new_player_at(a.addr, "RedP").await;
    let black = Client::new_player_at(a.addr, "BlackP").await;
    let (red, _black) = seek_pair(red, black, &Settings::level(Level::One)).await;
    let game = red.game;
    owned_by(&owners(&nats).await, game, "a").await;
    stored_live(&db, game).await;
    let page = tamsk_tests::browser::Browser::launch().await;

    a.kill();
    unserved(&nats, game).await;
    page.goto(&format!("http://{}/game/{game}", b.addr)).await;
    page.wait_for(
        "window.__tamsk.notYet >= 1",
        "the page told the game is moving",
    )
    .await;
    page.wait_for(
        &format!(
            "document.body.dataset.mode === 'live' && document.body.dataset.game === '{game}'"
        ),
        "the game live on the page once taken over",
    )
    .await;
    assert!(page.eval("window.__tamsk.notYet").await.as_u64() >= Some(1));
    page.assert_no_errors();
    page.close().await;
    drop(b);
}
