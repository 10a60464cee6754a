//! Several nodes over NATS and one PostgreSQL (issue 18), all real: a nats-server with
//! JetStream and a throwaway PostgreSQL started by the test, nodes started in-process
//! with `server::run_with`, each with its own `--nats`, node id and the same database.

use std::time::{Duration, Instant};

use protocol::game::{Action, Event};
use protocol::rating::{ShownRating, TimeControl};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, RequestId, ServerFrame, ServerMessage};
use server::Config;
use tamsk_tests::cluster::*;
use tamsk_tests::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_players_on_two_nodes_play_a_whole_game_watched_from_a_third() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    let c = TestServer::start_with(node_config(&db, &nats, "c")).await;
    let kv = owners(&nats).await;

    let settings = Settings::blitz(Level::One);
    let (mut red, mut black) = start_game(&a, &settings).await;
    let game = red.game;
    // Node a owns the game, and no other node can create its key.
    owned_by(&kv, game, "a").await;
    assert!(
        kv.update(game.to_string(), "b".into(), 0).await.is_err(),
        "ownership is a compare-and-set"
    );
    // Any node says it is live, and where (what an operator following it looks up).
    for node in [&a, &c] {
        let live = http_get(
            node.addr,
            &format!("/games/{game}"),
            Some("application/json"),
        )
        .await;
        assert_eq!(live.status, 404);
        assert_eq!(live.json()["error"], "game_live", "{}", live.body);
        assert_eq!(live.json()["node"], "a", "{}", live.body);
        let replay = http_get(node.addr, &format!("/api/games/{game}/replay"), None).await;
        assert_eq!(replay.json()["error"], "game_live", "{}", replay.body);
    }

    // A few moves with both players on node a, for comparison.
    let mut rng0 = rand::SeedableRng::seed_from_u64(17);
    let mut local = play_timed(&mut red, &mut black, &mut rng0, 10).await;
    local.sort();

    // Black goes to node b and resumes exactly where he was.
    let token = black.client.token.clone();
    let old = std::mem::replace(&mut black.client, Client::connect(&a).await);
    old.close().await;
    resume_on(&mut black, b.addr, &token).await;
    // A watcher on node c.
    let watcher = Client::new_player(&c, "Watcher").await;
    let mut watcher = Follower::watch(watcher, game).await;
    assert_eq!(watcher.snapshot.game, game);
    assert_eq!(watcher.seat, None);
    red.catch_up_to(watcher.seq).await;
    black.catch_up_to(watcher.seq).await;
    let from = watcher.seq;

    // Black's moves go b -> a over NATS, and the events a -> b and a -> c.
    let mut rng = rand::SeedableRng::seed_from_u64(18);
    let mut cross = play_timed(&mut red, &mut black, &mut rng, 60).await;
    let moves = cross.len();
    if red.replica.is_playing() {
        black.act(Action::Resign).await;
        red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
    assert!(!red.replica.is_playing(), "the game is over");
    black.catch_up_to(red.seq).await;
    watcher.catch_up_to(red.seq).await;
    // Every client saw the same numbered events, in order, and the same game.
    let tail =
        |f: &Follower| -> Vec<_> { f.log.iter().filter(|e| e.seq > from).cloned().collect() };
    assert_eq!(tail(&red), tail(&black));
    assert_eq!(tail(&red), tail(&watcher));
    assert_eq!(red.replica, black.replica);
    assert_eq!(red.replica, watcher.replica);
    assert!(moves > 5, "{moves} moves");
    cross.sort();
    eprintln!(
        "move -> both players: both on one node ({} moves): median {:?}, max {:?}; \
         one on another node ({moves} moves): median {:?}, max {:?}",
        local.len(),
        local[local.len() / 2],
        local[local.len() - 1],
        cross[cross.len() / 2],
        cross[cross.len() - 1]
    );
    // The game is stored once over, by its owner.
    let row = within("the stored game", async {
        loop {
            if let Some(row) = db.stored_game_row(game).await {
                return row;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(row.0, "finished");
    drop((a, b, c));
}

/// Plays up to `n` random moves (with drops), each until both players have its event;
/// returns how long each took from sending to the second player having it.
async fn play_timed(
    red: &mut Follower,
    black: &mut Follower,
    rng: &mut rand::rngs::SmallRng,
    n: usize,
) -> Vec<Duration> {
    use rand::seq::SliceRandom;
    let mut took = Vec::new();
    while red.replica.is_playing() && took.len() < n {
        let turn = red.replica.turn();
        let (mover, other) = if turn == protocol::game::Player::Red {
            (&mut *red, &mut *black)
        } else {
            (&mut *black, &mut *red)
        };
        let legal: Vec<Action> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(
                |a| matches!(a, Action::Move { to, drop: true, .. } if !mover.replica.is_full(*to)),
            )
            .collect();
        let Some(action) = legal.choose(rng).copied() else {
            break;
        };
        let sent = Instant::now();
        mover.act(action).await;
        within("the move", mover.until_own(turn, action)).await;
        within("the move, opposite", other.catch_up_to(mover.seq)).await;
        took.push(sent.elapsed());
    }
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_owner_dies_another_node_takes_the_game_and_players_resume_there() {
    let Some((nats, db)) = services().await else {
        return;
    };
    // Players away longer than a takeover keep their seats (the default grace is a
    // minute; the tests' is short).
    let config = |node| Config {
        reconnect_grace: Duration::from_secs(10),
        ..node_config(&db, &nats, node)
    };
    let mut a = Node::start(config("a"));
    // Node a leads the lobby (it serves before b starts), so the game runs on a.
    Client::new_player_at(a.addr, "FirstF").await;
    let b = TestServer::start_with(config("b")).await;
    let kv = owners(&nats).await;

    let settings = Settings {
        hourglass_ms: 30_000,
        ..Settings::blitz(Level::One)
    };
    let red = Client::new_player_at(a.addr, "RedF").await;
    let black = Client::new_player_at(a.addr, "BlackF").await;
    let (mut red, mut black) = seek_pair(red, black, &settings).await;
    let game = red.game;
    owned_by(&kv, game, "a").await;
    play_random(&mut red, &mut black, 7, 8).await;
    assert!(red.replica.is_playing());
    let before = red.entries.clone();
    assert!(before.len() >= 8);

    // kill -9 of node a.
    let killed = Instant::now();
    a.kill();
    owned_by(&kv, game, "b").await;
    let taken = killed.elapsed();
    eprintln!(
        "node a killed; node b owns its game {} ms later (lease {} ms)",
        taken.as_millis(),
        LEASE.as_millis()
    );
    assert!(
        taken < LEASE * 4,
        "taken over within a few leases: {taken:?}"
    );

    // Both players come back, to node b: the events of the new run are numbered above
    // the old ones, so they get a snapshot, with every entry of the game kept.
    let mut back = Vec::new();
    for f in [&red, &black] {
        let (c, _) = Client::returning(&b, &f.client.token).await;
        back.push(join_again(c, game, f.seq).await);
    }
    let mut black2 = back.pop().unwrap();
    let mut red2 = back.pop().unwrap();
    assert_eq!(red2.seat, Some(protocol::game::Player::Red));
    assert!(
        red2.seq > red.seq,
        "the new run numbers its events above the old"
    );
    assert_eq!(
        &red2.entries[..before.len()],
        &before[..],
        "nothing lost: every entry with its instant"
    );
    assert!(red2.replica.is_playing(), "{:?}", red2.replica.status());
    // Game time ran on while nobody owned it.
    assert!(red2.snapshot.now_ms >= red.replica.now() + taken.as_millis() as u64 / 2);
    // The game goes on at node b, to its end, told to both and stored.
    red2.catch_up_to(black2.seq).await;
    black2.catch_up_to(red2.seq).await;
    // The replica built from the snapshot and events is exactly node b's game...
    red2.check_against_snapshot().await;
    // ...and they play on there.
    let made = play_random(&mut red2, &mut black2, 8, 4).await;
    assert_eq!(made, 4, "moves after the takeover");
    red2.act(Action::Resign).await;
    red2.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    black2.catch_up_to(red2.seq).await;
    assert_eq!(red2.replica, black2.replica);
    assert!(!red2.replica.is_playing());
    let row = within("the stored game", async {
        loop {
            if let Some(row) = db.stored_game_row(game).await {
                return row;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(row.0, "finished");
    drop(b);
}

/// Sends an action with request id `id` as raw JSON and returns the first error that
/// follows (events of the game may come first): its code, game and request id.
async fn refused(
    c: &mut Client,
    game: protocol::wire::GameId,
    action: Action,
    id: i64,
) -> (String, Option<protocol::wire::GameId>, Option<RequestId>) {
    let (code, game, id, _) = refused_at(c, game, action, id).await;
    (code, game, id)
}

/// [`refused`], with the error's game time (`at_ms`).
async fn refused_at(
    c: &mut Client,
    game: protocol::wire::GameId,
    action: Action,
    id: i64,
) -> (
    String,
    Option<protocol::wire::GameId>,
    Option<RequestId>,
    Option<u64>,
) {
    let mut frame = serde_json::to_value(ClientMessage::Act {
        game,
        action,
        seq: None,
    })
    .expect("json");
    frame["id"] = id.into();
    c.send_raw(&frame.to_string()).await;
    loop {
        if let ServerMessage::Error {
            code,
            game,
            id,
            at_ms,
            ..
        } = within("an error", c.recv()).await
        {
            return (code, game, id, at_ms);
        }
    }
}

/// Actions travel to a game's owner one way (no answer for each): a refusal still comes
/// back, as an error naming the game with the action's request id, whether the game
/// refused it or nobody serves the game any more (its node was killed: NATS itself says
/// so at once, long before another node takes the game over).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_action_is_answered_only_when_refused() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b] = led_nodes(&db, &nats, ["a", "b"]).await;
    let mut on_b = Client::new_player_at(b.addr, "OnB").await;
    let mut on_a = Client::new_player_at(a.addr, "OnA").await;
    for c in [&mut on_b, &mut on_a] {
        c.send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::One),
            rated: None,
        })
        .await;
    }
    let on_b = Follower::await_snapshot(on_b).await;
    let on_a = Follower::await_snapshot(on_a).await;
    let game = on_b.game;
    assert_eq!(on_a.game, game);
    // The game runs on one of the two nodes (the red player's); the other's player is
    // the remote one.
    let (mut owner_node, mut remote, (survivor, survivor_addr)) =
        match owner(&nats, game).await.as_str() {
            "a" => (a, on_b, ("b", b.addr)),
            "b" => (b, on_a, ("a", a.addr)),
            other => panic!("run by {other}"),
        };

    // Level 1 has no 15-second timer: the game refuses a flip, whoever is on turn.
    // Dated in game time as on one node, though the client's own node does not run the
    // game (it said nothing of the time before): by the owner.
    let (code, about, id, at_ms) = refused_at(&mut remote.client, game, Action::Flip, 7).await;
    assert_ne!(code, "unknown_game");
    assert_eq!((about, id), (Some(game), Some(RequestId::Int(7))));
    assert!(
        at_ms.is_some(),
        "a refusal about a live game has its game time"
    );
    // So is a refused claim (answered by the game itself, not by the owner's checks).
    remote
        .client
        .send(&ClientMessage::ClaimAbandonment { game })
        .await;
    let (code, at_ms) = within("the claim's refusal", async {
        loop {
            if let ServerMessage::Error { code, at_ms, .. } = remote.client.recv().await {
                return (code, at_ms);
            }
        }
    })
    .await;
    assert_eq!(code, "opponent_connected");
    assert!(at_ms.is_some(), "a refused claim has its game time");

    // The game's start is in the database: so it is taken over once its owner is gone.
    stored_live(&db, game).await;
    // kill -9 of the owner: an action finds nobody serving the game. (One sent before
    // NATS saw the owner's connection close would be lost unanswered, as one sent to a
    // stalled owner: docs/OPERATIONS.md.)
    owner_node.kill();
    unserved(&nats, game).await;
    // The database still has the game live: it is moving to another node, not gone.
    let (code, about, id) = refused(&mut remote.client, game, Action::Flip, 8).await;
    assert_eq!(code, "game_moving");
    assert_eq!((about, id), (Some(game), Some(RequestId::Int(8))));

    // The surviving node takes the game over; after the game's next frame the player's
    // action reaches it again (and is judged by its rules).
    owned_by(&owners(&nats).await, game, survivor).await;
    within("the game's next frame", async {
        loop {
            match remote.client.recv().await {
                ServerMessage::Snapshot(s) if s.game == game => return,
                ServerMessage::Event(e) if e.game == game => return,
                _ => {}
            }
        }
    })
    .await;
    let (code, about, _) = refused(&mut remote.client, game, Action::Flip, 9).await;
    assert_eq!((code.as_str(), about), ("no_neutral_timer", Some(game)));
    // The survivor's metrics say so.
    assert_eq!(
        metric(survivor_addr, "tamsk_cluster_takeovers_total").await,
        1.0
    );
    assert_eq!(
        metric(survivor_addr, "tamsk_cluster_game_moving_total").await,
        1.0
    );
    assert_eq!(
        metric(survivor_addr, "tamsk_cluster_frames_dropped_total").await,
        0.0
    );
}

/// A player's rated games on two nodes: each node keeps his ratings in memory from when he
/// first came, but the second game's change starts from the rating the first one left in
/// the database, not from what its node remembered (which would undo the first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rated_game_starts_from_the_stored_rating_whichever_node_runs_it() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b] = led_nodes(&db, &nats, ["a", "b"]).await;
    let on_a = Client::new_player_at(a.addr, "Rated").await;
    // The same player on b, which reads his ratings now, before either game.
    let (on_b, _) = Client::returning_at(b.addr, &on_a.token).await;
    let (first_shown, (first_before, first_after)) = resigned_rated_bot_game(on_a).await;
    assert_eq!(first_shown, first_before);
    // Node a told node b the ratings its game moved (the player's and the bot's).
    within("node b told of the new ratings", async {
        while metric(b.addr, "tamsk_cluster_ratings_received_total").await < 2.0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let (second_shown, (second_before, second_after)) = resigned_rated_bot_game(on_b).await;
    assert_ne!(first_before, first_after, "the first game moved his rating");
    assert_eq!(
        second_before, first_after,
        "the second starts where the first ended"
    );
    assert_eq!(
        second_shown, first_after,
        "node b shows the rating node a's game left, not the one it read before"
    );
    assert!(second_after.rating < second_before.rating, "a loss");
}

/// Plays a rated game against the computer on the client's node and resigns it: the
/// player's rating its snapshot showed, and the rating change he is told,
/// `(before, after)`.
async fn resigned_rated_bot_game(mut c: Client) -> (ShownRating, (ShownRating, ShownRating)) {
    c.send(&ClientMessage::PlayBot {
        settings: TimeControl::Rapid.settings(Level::Three),
        level: None,
        rated: Some(true),
    })
    .await;
    let mut f = Follower::await_snapshot(c).await;
    assert!(f.snapshot.rated);
    let seat = match f.seat() {
        protocol::game::Player::Red => &f.snapshot.red,
        protocol::game::Player::Black => &f.snapshot.black,
    };
    let shown = seat.rating.expect("a rated game shows the ratings");
    let game = f.game;
    f.act(Action::Resign).await;
    let change = within("the rating change", async {
        loop {
            match f.client.recv_any().await {
                Some(ServerFrame::Lobby(LobbyMessage::RatingChanged {
                    game: changed,
                    before,
                    after,
                    ..
                })) if changed == game => return (before, after),
                Some(_) => continue,
                None => panic!("closed before the rating change"),
            }
        }
    })
    .await;
    (shown, change)
}
