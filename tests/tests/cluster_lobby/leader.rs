//! The lobby's leader across nodes: a dead node's seeks go; a dead or deposed leader's
//! seeks move to the next one; lobby messages waiting for an election hold up no move.

use super::*;

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
        seq: None,
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
