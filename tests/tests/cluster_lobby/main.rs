//! One lobby across nodes (issue 18): seeks, quick match, challenges, who is online and
//! the list of games cross nodes; the same player seeking on two nodes is paired once; a
//! dead node's seeks go. All real: a nats-server with JetStream, a throwaway PostgreSQL,
//! nodes started in-process, each on its own runtime so that one can be killed like
//! `kill -9`. Node `a` is started first and leads the lobby; `b` and `c` send their
//! clients' lobby messages to it.

use std::time::{Duration, Instant};

use futures::StreamExt;

use protocol::game::Action;
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, GameId, LobbyMessage, SeekInfo, ServerFrame, ServerMessage};
use tamsk_tests::cluster::{
    led_nodes, node_config, owner, paired, seek_pair, services, unserved_subject, Node, LEASE,
};
use tamsk_tests::services::{Nats, TestDb};
use tamsk_tests::*;

mod leader;

/// Nodes `a` (the lobby's leader: started and serving first), `b` and `c`.
async fn three_nodes(db: &TestDb, nats: &Nats) -> [Node; 3] {
    led_nodes(db, nats, ["a", "b", "c"]).await
}

fn blitz() -> Settings {
    Settings::blitz(Level::One)
}

async fn seek(c: &mut Client, settings: &Settings) {
    c.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    match c.recv().await {
        ServerMessage::Seeking { settings: s } => assert_eq!(&s, settings),
        other => panic!("expected seeking, got {other:?}"),
    }
}

async fn list_seeks(c: &mut Client) -> Vec<SeekInfo> {
    c.send(&ClientMessage::ListSeeks).await;
    match c.recv_lobby().await {
        LobbyMessage::Seeks { seeks } => seeks,
        other => panic!("expected seeks, got {other:?}"),
    }
}

/// The seek `c` had at the old leader was made again at the new one.
async fn seeking_again(c: &mut Client, settings: Settings) {
    match within("seeking again", c.recv()).await {
        ServerMessage::Seeking { settings: s } => assert_eq!(s, settings),
        other => panic!("expected seeking, got {other:?}"),
    }
}

async fn seek_cancelled(c: &mut Client) {
    match within("seek_cancelled", c.recv()).await {
        ServerMessage::SeekCancelled => {}
        other => panic!("expected seek_cancelled, got {other:?}"),
    }
}

/// The names of the players with an open seek, sorted.
async fn seekers(c: &mut Client) -> Vec<String> {
    let mut names: Vec<String> = list_seeks(c)
        .await
        .into_iter()
        .map(|s| s.player.name)
        .collect();
    names.sort();
    names
}

/// `x` seeks (and waits), then `y` seeks the same: the game they are paired in, as
/// `(red, black)`.
async fn quick_match(mut x: Client, mut y: Client) -> (Follower, Follower) {
    seek(&mut x, &blitz()).await;
    y.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    paired(x, y).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_match_pairs_players_on_two_other_nodes_and_they_play() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, c] = three_nodes(&db, &nats).await;
    let x = Client::new_player_at(b.addr, "Xena").await;
    let y = Client::new_player_at(c.addr, "Yuri").await;
    let (mut red, mut black) = quick_match(x, y).await;
    // Run by exactly one node, through the ownership lease: not the lobby's leader, but
    // the red player's own node.
    let reds = if red.client.name == "Xena" { "b" } else { "c" };
    assert_eq!(owner(&nats, red.game).await, reds);
    let made = play_random(&mut red, &mut black, 7, 8).await;
    assert_eq!(made, 8, "eight moves across three nodes");
    assert_eq!(red.seq, black.seq);
    red.check_against_snapshot().await;
}

/// Two players of one node who are paired by the leader of another play on their own
/// node: the game runs there, and not one of their moves crosses NATS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_between_two_players_of_one_node_runs_on_that_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, _c] = three_nodes(&db, &nats).await;
    let tap = async_nats::connect(nats.url()).await.expect("NATS");
    let mut commands = tap.subscribe("tamsk.game.*.cmd").await.expect("subscribe");
    tap.flush().await.expect("flush");
    let x = Client::new_player_at(b.addr, "Xanthe").await;
    let y = Client::new_player_at(b.addr, "Yasmin").await;
    let (mut red, mut black) = quick_match(x, y).await;
    assert_eq!(
        owner(&nats, red.game).await,
        "b",
        "run by the players' node"
    );
    assert_eq!(play_random(&mut red, &mut black, 21, 6).await, 6);
    red.check_against_snapshot().await;
    // A command sent to a game's owner over NATS would have reached NATS before the
    // move's event came back; so before a marker the tap publishes now. The first
    // command subject the tap sees is its own marker.
    let marker = "tamsk.game.marker.cmd";
    tap.publish(marker, "".into()).await.expect("publish");
    let first = within("the marker", commands.next())
        .await
        .expect("a message");
    assert_eq!(first.subject.as_str(), marker, "a command went over NATS");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_seek_made_on_one_node_is_listed_and_taken_on_another() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, c] = three_nodes(&db, &nats).await;
    // Made on b, taken on c.
    let mut x = Client::new_player_at(b.addr, "Xavier").await;
    let mut y = Client::new_player_at(c.addr, "Yolanda").await;
    // Withdrawn on b: gone from c's list too.
    seek(&mut x, &blitz()).await;
    x.send(&ClientMessage::CancelSeek).await;
    match x.recv().await {
        ServerMessage::SeekCancelled => {}
        other => panic!("expected seek_cancelled, got {other:?}"),
    }
    assert!(list_seeks(&mut y).await.is_empty());
    x.send(&ClientMessage::CancelSeek).await;
    x.expect_error("not_seeking").await;
    seek(&mut x, &blitz()).await;
    let seeks = list_seeks(&mut y).await;
    assert_eq!(seeks.len(), 1, "{seeks:?}");
    assert_eq!(seeks[0].player.name, "Xavier");
    y.send(&ClientMessage::AcceptSeek {
        seek: seeks[0].seek,
    })
    .await;
    let (mut red, mut black) = paired(x, y).await;
    assert_eq!(play_random(&mut red, &mut black, 3, 2).await, 2);
    assert!(list_seeks(&mut red.client).await.is_empty(), "taken once");

    // Made on a (the leader's own client), taken on b.
    let mut z = Client::new_player_at(a.addr, "Zelda").await;
    let mut w = Client::new_player_at(b.addr, "Walter").await;
    seek(&mut z, &blitz()).await;
    let seeks = list_seeks(&mut w).await;
    assert_eq!(seeks.len(), 1, "{seeks:?}");
    assert_eq!(seeks[0].player.name, "Zelda");
    // Its own seek cannot be taken by its maker, from any node.
    let mut z2 = Client::returning_at(b.addr, &z.token).await.0;
    z2.send(&ClientMessage::AcceptSeek {
        seek: seeks[0].seek,
    })
    .await;
    z2.expect_error("own_seek").await;
    w.send(&ClientMessage::AcceptSeek {
        seek: seeks[0].seek,
    })
    .await;
    let z = Follower::await_snapshot(z).await;
    let w = Follower::await_snapshot(w).await;
    assert_eq!(z.game, w.game);
    // Taken once: a second taker is told it is gone.
    let mut v = Client::new_player_at(c.addr, "Victor").await;
    v.send(&ClientMessage::AcceptSeek {
        seek: seeks[0].seek,
    })
    .await;
    v.expect_error("unknown_seek").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_by_name_reaches_another_node_and_is_accepted_or_declined() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, _c] = three_nodes(&db, &nats).await;
    let mut x = Client::new_player_at(a.addr, "Xander").await;
    let mut y = Client::new_player_at(b.addr, "Yvette").await;
    let challenge = |to: &str| ClientMessage::Challenge {
        to: to.into(),
        settings: blitz(),
        rated: None,
    };

    // Declined on b: a's challenger is told.
    x.send(&challenge("Yvette")).await;
    let first = match x.recv_lobby().await {
        LobbyMessage::ChallengeSent { challenge, to, .. } => {
            assert_eq!(to.name, "Yvette");
            challenge
        }
        other => panic!("expected challenge_sent, got {other:?}"),
    };
    match y.recv_lobby().await {
        LobbyMessage::Challenged {
            challenge, from, ..
        } => assert_eq!((challenge, from.name.as_str()), (first, "Xander")),
        other => panic!("expected challenged, got {other:?}"),
    }
    y.send(&ClientMessage::DeclineChallenge { challenge: first })
        .await;
    for c in [&mut x, &mut y] {
        match c.recv_lobby().await {
            LobbyMessage::ChallengeClosed { challenge, reason } => {
                assert_eq!((challenge, reason.as_str()), (first, "declined"))
            }
            other => panic!("expected challenge_closed, got {other:?}"),
        }
    }

    // From b to a this time, accepted on a: the game starts for both.
    y.send(&challenge("Xander")).await;
    let second = match y.recv_lobby().await {
        LobbyMessage::ChallengeSent { challenge, .. } => challenge,
        other => panic!("expected challenge_sent, got {other:?}"),
    };
    match x.recv_lobby().await {
        LobbyMessage::Challenged { challenge, .. } => assert_eq!(challenge, second),
        other => panic!("expected challenged, got {other:?}"),
    }
    x.send(&ClientMessage::AcceptChallenge { challenge: second })
        .await;
    let (mut red, mut black) = paired(x, y).await;
    assert_eq!(play_random(&mut red, &mut black, 5, 2).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_live_games_are_listed_from_every_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, c] = three_nodes(&db, &nats).await;
    let mut x = Client::new_player_at(a.addr, "Xerxes").await;
    let mut y = Client::new_player_at(a.addr, "Yasmin").await;
    let mut z = Client::new_player_at(b.addr, "Zoltan").await;

    z.send(&ClientMessage::ListPlayers).await;
    match z.recv_lobby().await {
        LobbyMessage::Players { players, online } => {
            // The first client of `a` (its connection closed) may still be listed.
            let anchor = players.iter().any(|p| p.name == "Anchor") as u32;
            let names: Vec<&str> = players.iter().map(|p| p.name.as_str()).collect();
            let others: Vec<&str> = names.into_iter().filter(|n| *n != "Anchor").collect();
            assert_eq!(others, ["Xerxes", "Yasmin", "Zoltan"]);
            assert_eq!(online, 3 + anchor);
        }
        other => panic!("expected players, got {other:?}"),
    }

    // A game run by a is listed on c, and in the welcome of its player on c.
    seek(&mut x, &blitz()).await;
    y.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    let x = Follower::await_snapshot(x).await;
    let game = x.game;
    let mut w = Client::connect_to(c.addr).await;
    w.send(&ClientMessage::Hello {
        version: protocol::wire::PROTOCOL_VERSION,
        name: None,
        token: None,
        guest: true,
    })
    .await;
    w.recv().await;
    w.send(&ClientMessage::ListGames).await;
    match w.recv().await {
        ServerMessage::Games { games } => {
            let ids: Vec<GameId> = games.iter().map(|g| g.game).collect();
            assert_eq!(ids, [game]);
        }
        other => panic!("expected games, got {other:?}"),
    }
    let (_back, games) = Client::returning_at(c.addr, &x.client.token).await;
    assert_eq!(games, [game]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_player_seeking_on_two_nodes_is_paired_once() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, c] = three_nodes(&db, &nats).await;
    let mut p_b = Client::new_player_at(b.addr, "Pat").await;
    let (mut p_c, _) = Client::returning_at(c.addr, &p_b.token).await;
    seek(&mut p_b, &blitz()).await;
    seek(&mut p_c, &blitz()).await;
    // As on one node: his newer seek took over his older one.
    let mut o = Client::new_player_at(a.addr, "Oscar").await;
    let seeks = list_seeks(&mut o).await;
    assert_eq!(seeks.len(), 1, "one seek of Pat's: {seeks:?}");

    // An opponent arrives: one game, on the connection whose seek waited.
    o.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    let o = Follower::await_snapshot(o).await;
    let p = Follower::await_snapshot(p_c).await;
    assert_eq!(o.game, p.game);
    // The older connection was given nothing (as on one node, a replaced seek goes
    // silently): the next thing it gets is the answer to its ping.
    p_b.sync().await;
    // No seek of his is left anywhere: a second opponent waits instead of pairing.
    let mut q = Client::new_player_at(b.addr, "Quinn").await;
    seek(&mut q, &blitz()).await;
    let seeks = list_seeks(&mut q).await;
    let names: Vec<&str> = seeks.iter().map(|s| s.player.name.as_str()).collect();
    assert_eq!(names, ["Quinn"]);
    // Exactly one game for him, whichever node he asks.
    let (_again, games) = Client::returning_at(a.addr, &p_b.token).await;
    assert_eq!(games, [o.game]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_game_is_watched_with_its_code_from_another_node() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, c] = three_nodes(&db, &nats).await;
    let mut host = Client::new_player_at(b.addr, "Hosta").await;
    let mut guest = Client::new_player_at(c.addr, "Guesto").await;
    host.send(&ClientMessage::Host { settings: blitz() }).await;
    let code = match host.recv_lobby().await {
        LobbyMessage::Hosting { code, .. } => code,
        other => panic!("expected hosting, got {other:?}"),
    };
    guest
        .send(&ClientMessage::JoinCode { code: code.clone() })
        .await;
    let (mut red, mut black) = paired(host, guest).await;
    let game = red.game;
    let reds = if red.client.name == "Hosta" { "b" } else { "c" };
    assert_eq!(
        owner(&nats, game).await,
        reds,
        "run by the red player's node"
    );

    let mut spectator = Client::new_player_at(c.addr, "Specto").await;
    // Not by its id, and not with a code no game has.
    spectator
        .send(&ClientMessage::Watch {
            game,
            after_seq: None,
        })
        .await;
    spectator.expect_error("unknown_game").await;
    // Nor joined by anyone but its players: answered as a game that does not exist.
    spectator
        .send(&ClientMessage::Join {
            game,
            after_seq: None,
        })
        .await;
    spectator.expect_error("unknown_game").await;
    // Nor acted in, claimed, asked for a rematch or left (by its owner, node b or c).
    for msg in messages_about(game) {
        spectator.send(&msg).await;
        spectator.expect_error("unknown_game").await;
    }
    spectator
        .send(&ClientMessage::WatchCode {
            code: "ZZZZZZ".into(),
        })
        .await;
    spectator.expect_error("unknown_code").await;
    // With its code (as typed by a person), from node c.
    spectator
        .send(&ClientMessage::WatchCode {
            code: format!(" {} ", code.to_lowercase()),
        })
        .await;
    let mut watcher = Follower::await_snapshot(spectator).await;
    assert_eq!((watcher.game, watcher.seat), (game, None));
    assert_eq!(play_random(&mut red, &mut black, 5, 4).await, 4);
    watcher.catch_up_to(red.seq).await;
    assert_eq!(watcher.replica, red.replica, "the moves reach the watcher");
}

/// Games the leader pairs run on the node of whichever player's node runs fewer games:
/// node b, busy with games against the computer, is spared while c runs fewer. The
/// leader's `/metrics` shows the counts it places by.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_game_runs_on_the_players_node_with_fewer_games() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, c] = three_nodes(&db, &nats).await;
    let mut busy = Vec::new();
    for i in 0..4 {
        let mut p = Client::new_player_at(b.addr, &format!("Busy{i}")).await;
        p.send(&ClientMessage::PlayBot {
            settings: blitz(),
            level: None,
            rated: None,
        })
        .await;
        busy.push(Follower::await_snapshot(p).await);
    }
    let games_of = |node: &'static str| {
        let name = format!("tamsk_cluster_node_games{{node=\"{node}\"}}");
        async move { try_metric(a.addr, &name).await }
    };
    // Until b's heartbeat (read by the leader each quarter lease) says so.
    within("the leader counts b's games", async {
        while games_of("b").await != Some(4.0) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(games_of("c").await, Some(0.0));
    for i in 0..3 {
        let x = Client::new_player_at(b.addr, &format!("Bea{i}")).await;
        let y = Client::new_player_at(c.addr, &format!("Cyd{i}")).await;
        let (red, _black) = seek_pair(x, y, &blitz()).await;
        assert_eq!(owner(&nats, red.game).await, "c", "pairing {i}");
    }
    assert_eq!(games_of("c").await, Some(3.0));
    assert_eq!(games_of("b").await, Some(4.0));
}
