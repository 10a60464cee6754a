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
    led_nodes, node_config, owner, paired, services, unserved_subject, Node, LEASE,
};
use tamsk_tests::services::{Nats, TestDb};
use tamsk_tests::*;

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
async fn a_dead_nodes_seeks_leave_the_lobby() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, mut b, c] = three_nodes(&db, &nats).await;
    let mut x = Client::new_player_at(b.addr, "Xiomara").await;
    seek(&mut x, &blitz()).await;
    let mut y = Client::new_player_at(c.addr, "Yusuf").await;
    assert_eq!(list_seeks(&mut y).await.len(), 1);

    // kill -9 of node b: its client cannot say goodbye; its heartbeat expires.
    b.kill();
    let killed = Instant::now();
    // Nothing tells a client that another's seek went: it asks again.
    within("the dead node's seek to go", async {
        while !list_seeks(&mut y).await.is_empty() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let took = killed.elapsed();
    eprintln!("a dead node's seek left the lobby after {took:?} (lease {LEASE:?})");
    assert!(took < LEASE * 3, "{took:?}");
    // A seek of the same settings waits: nothing pairs with the dead one.
    seek(&mut y, &blitz()).await;
    y.sync().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_lobbys_leader_dies_another_node_leads_and_the_seeks_move_there() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [mut a, b, c] = three_nodes(&db, &nats).await;
    let mut x = Client::new_player_at(b.addr, "Ximena").await;
    let mut y = Client::new_player_at(c.addr, "Yorick").await;
    let mut h = Client::new_player_at(c.addr, "Hostess").await;
    seek(&mut x, &blitz()).await;
    seek(&mut y, &Settings::blitz(Level::Two)).await;
    h.send(&ClientMessage::Host { settings: blitz() }).await;
    assert!(matches!(h.recv_lobby().await, LobbyMessage::Hosting { .. }));
    // A challenge waits too, from b to c.
    let mut w = Client::new_player_at(b.addr, "Wanda").await;
    let mut v = Client::new_player_at(c.addr, "Viktor").await;
    w.send(&ClientMessage::Challenge {
        to: "Viktor".into(),
        settings: blitz(),
        rated: None,
    })
    .await;
    let LobbyMessage::ChallengeSent { challenge, .. } = w.recv_lobby().await else {
        panic!("expected challenge_sent")
    };
    assert!(matches!(
        v.recv_lobby().await,
        LobbyMessage::Challenged { .. }
    ));

    // kill -9 of the leader: the seeks were in its memory only; each node makes its own
    // clients' seeks again at the new leader, and tells them so.
    a.kill();
    let killed = Instant::now();
    seeking_again(&mut x, blitz()).await;
    seeking_again(&mut y, Settings::blitz(Level::Two)).await;
    let took = killed.elapsed();
    eprintln!("the seeks moved {took:?} after their leader's death (lease {LEASE:?})");
    assert!(took < LEASE * 3, "{took:?}");
    // A hosted game's code was the old leader's: it goes.
    seek_cancelled(&mut h).await;
    // So does the challenge: its challenger is told.
    match within("challenge_closed", w.recv_lobby()).await {
        LobbyMessage::ChallengeClosed {
            challenge: closed,
            reason,
        } => assert_eq!((closed, reason.as_str()), (challenge, "lobby_moved")),
        other => panic!("expected challenge_closed, got {other:?}"),
    }

    // Both seeks wait at the new leader, which knows every player of the live nodes.
    let open = seekers(&mut h).await;
    assert_eq!(open, ["Ximena", "Yorick"]);
    h.send(&ClientMessage::ListPlayers).await;
    match h.recv_lobby().await {
        LobbyMessage::Players { players, .. } => {
            let names: Vec<&str> = players.iter().map(|p| p.name.as_str()).collect();
            assert!(
                names.contains(&"Ximena") && names.contains(&"Yorick"),
                "{names:?}"
            );
        }
        other => panic!("expected players, got {other:?}"),
    }
    // A new seek with Ximena's settings is paired with her moved seek.
    let mut z = Client::new_player_at(c.addr, "Zoltan").await;
    z.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    let (mut red, mut black) = paired(x, z).await;
    let runs = owner(&nats, red.game).await;
    assert!(
        runs == "b" || runs == "c",
        "run by the new leader, not {runs}"
    );
    assert_eq!(play_random(&mut red, &mut black, 11, 2).await, 2);
}

/// A leader that loses its lease but lives on (here: its key purged under it) treats its
/// own clients' seeks as every other node treats its clients': they are made again at the
/// next leader (whichever node, itself included), and the seekers are told `seeking`
/// again, not `seek_cancelled`; only a hosted game's code goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_loses_its_lease_alive_moves_its_own_clients_seeks() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [a, b, _c] = three_nodes(&db, &nats).await;
    let mut x = Client::new_player_at(a.addr, "Xanthe").await;
    let mut y = Client::new_player_at(b.addr, "Yusuf").await;
    let mut h = Client::new_player_at(a.addr, "Hilde").await;
    seek(&mut x, &blitz()).await;
    seek(&mut y, &Settings::blitz(Level::Two)).await;
    h.send(&ClientMessage::Host { settings: blitz() }).await;
    assert!(matches!(h.recv_lobby().await, LobbyMessage::Hosting { .. }));

    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let kv = async_nats::jetstream::new(client)
        .get_key_value(server::cluster::lobby::LOBBY_BUCKET)
        .await
        .expect("the lobby's bucket");
    kv.purge("leader").await.expect("purge the leader's key");

    seeking_again(&mut x, blitz()).await;
    seeking_again(&mut y, Settings::blitz(Level::Two)).await;
    seek_cancelled(&mut h).await;
    let open = seekers(&mut h).await;
    assert_eq!(open, ["Xanthe", "Yusuf"]);
    // The moved seek is paired like any other.
    let mut z = Client::new_player_at(b.addr, "Zelda").await;
    z.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    let (mut red, mut black) = paired(x, z).await;
    assert_eq!(play_random(&mut red, &mut black, 5, 2).await, 2);
}

/// A private game runs on one node (the leader paired it); a watcher with its code on any
/// other node follows it, while its id alone does not let anyone watch it there either.
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

/// A lobby message that waits for an election (its leader just died) does not hold up
/// its connection's game messages: a player's action goes through at once, and the list
/// he asked for comes once a new leader serves it (or is refused, if none is elected
/// within the wait).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_message_waiting_for_an_election_does_not_hold_up_a_move() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [mut a, b, _c] = three_nodes(&db, &nats).await;
    let mut me = Client::new_player_at(b.addr, "Patience").await;
    // A game with the computer runs on the player's own node, b.
    me.send(&ClientMessage::PlayBot {
        settings: blitz(),
        level: None,
        rated: None,
    })
    .await;
    let me = Follower::await_snapshot(me).await;
    let (game, mut c) = (me.game, me.client);

    a.kill();
    let killed = Instant::now();
    // Its lobby subject is gone (as at once with kill -9): asked there, NATS says nobody
    // serves it, and the message waits for the next leader.
    unserved_subject(&nats, "tamsk.lobby.at.a".into()).await;
    c.send(&ClientMessage::ListSeeks).await;
    let answer = resign_before_answer(&mut c, game, |f| {
        matches!(
            f,
            ServerFrame::Lobby(LobbyMessage::Seeks { .. })
                | ServerFrame::Message(ServerMessage::Error { .. })
        )
    })
    .await;
    match answer {
        ServerFrame::Lobby(LobbyMessage::Seeks { seeks }) => assert!(seeks.is_empty()),
        // Refused when no leader was elected within the wait (two leases; a loaded
        // machine can take that long): an answer all the same, after the end.
        ServerFrame::Message(ServerMessage::Error { code, message, .. }) => {
            assert_eq!(code, "lobby_unavailable", "{message}");
            eprintln!("the list refused {:?} after the kill", killed.elapsed());
        }
        other => panic!("{other:?}"),
    }
}

/// Resigns `game` right after a lobby message was sent, and returns the first frame that
/// `answer` takes for that message's answer, checking that the game's end came first:
/// the lobby message did not hold up the move.
async fn resign_before_answer(
    c: &mut Client,
    game: GameId,
    answer: impl Fn(&ServerFrame) -> bool,
) -> ServerFrame {
    c.send(&ClientMessage::Act {
        game,
        action: Action::Resign,
    })
    .await;
    let mut ended = false;
    loop {
        match within("the end, then the answer", c.recv_any()).await {
            Some(ServerFrame::Message(ServerMessage::Event(ev)))
                if engine_events(&ev)
                    .iter()
                    .any(|e| matches!(e, protocol::game::Event::GameEnded { .. })) =>
            {
                ended = true
            }
            Some(frame) if answer(&frame) => {
                assert!(ended, "the resignation waited for the lobby: {frame:?}");
                return frame;
            }
            Some(_) => {}
            None => panic!("the connection closed"),
        }
    }
}

/// The list of live games waits for every node's answer (at most half a second for one
/// that just died and whose heartbeat has not run out yet): meanwhile the connection's
/// moves go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_games_waiting_for_a_dead_node_does_not_hold_up_a_move() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let [_a, b, mut c] = three_nodes(&db, &nats).await;
    let mut me = Client::new_player_at(b.addr, "Waits").await;
    let mut seen = Client::new_player_at(c.addr, "Seen").await;
    for p in [&mut me, &mut seen] {
        p.send(&ClientMessage::PlayBot {
            settings: blitz(),
            level: None,
            rated: None,
        })
        .await;
    }
    let me = Follower::await_snapshot(me).await;
    let on_c = Follower::await_snapshot(seen).await.game;
    let (game, mut me) = (me.game, me.client);
    // Until b lists c's game: c answered b, and b waits for it from now on.
    within("c's game listed on b", async {
        loop {
            me.send(&ClientMessage::ListGames).await;
            if let ServerMessage::Games { games } = me.recv().await {
                if games.iter().any(|g| g.game == on_c) {
                    break;
                }
            }
        }
    })
    .await;
    c.kill();
    unserved_subject(&nats, "tamsk.lobby.to.c".into()).await;
    me.send(&ClientMessage::ListGames).await;
    let answer = resign_before_answer(&mut me, game, |f| {
        matches!(f, ServerFrame::Message(ServerMessage::Games { .. }))
    })
    .await;
    if let ServerFrame::Message(ServerMessage::Games { games }) = answer {
        assert!(games.iter().all(|g| g.game != on_c), "c is dead: {games:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seek_made_before_a_leader_is_elected_waits_for_one() {
    let Some((nats, db)) = services().await else {
        return;
    };
    // The leader dies (kill -9): its key names it for up to a lease, and nodes started
    // meanwhile find no leader that answers (as a cluster started anew finds the last
    // run's).
    let mut a = Node::start(node_config(&db, &nats, "a"));
    Client::new_player_at(a.addr, "Gone").await;
    a.kill();
    let b = Node::start(node_config(&db, &nats, "b"));
    let c = Node::start(node_config(&db, &nats, "c"));
    let mut x = Client::new_player_at(b.addr, "Xavier").await;
    let mut y = Client::new_player_at(c.addr, "Yvonne").await;
    // Neither is refused `lobby_unavailable`: each waits until b or c leads.
    let asked = Instant::now();
    seek(&mut x, &blitz()).await;
    eprintln!(
        "a seek waited {:?} for the lobby's election (lease {LEASE:?})",
        asked.elapsed()
    );
    y.send(&ClientMessage::Seek {
        settings: blitz(),
        rated: None,
    })
    .await;
    let (mut red, mut black) = paired(x, y).await;
    let runs = owner(&nats, red.game).await;
    assert!(
        runs == "b" || runs == "c",
        "run by the new leader, not {runs}"
    );
    assert_eq!(play_random(&mut red, &mut black, 12, 2).await, 2);
}
