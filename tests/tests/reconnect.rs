//! Disconnection, reconnection with the events missed, grace and abandonment.

use protocol::game::{EndReason, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, ServerMessage};
use tamsk_tests::*;

/// Closes a follower's connection and returns it without its client.
async fn disconnect(f: &mut Follower) {
    within("close", f.client.ws.close(None))
        .await
        .expect("close");
    f.client.closed().await;
}

/// Waits for the presence change telling that `player` left; returns its grace deadline.
async fn wait_gone(f: &mut Follower, player: Player) -> u64 {
    let ev = f
        .until_change(
            "presence",
            |c| matches!(c, Change::Presence { player: p, connected: false, .. } if *p == player),
        )
        .await;
    match ev.change {
        Change::Presence {
            grace_until_ms: Some(until),
            ..
        } => {
            // The instant it left (the event's): the grace runs from it.
            assert_eq!(until - ev.now_ms, 600, "the grace runs from `now_ms`");
            until
        }
        other => panic!("expected a grace deadline, got {other:?}"),
    }
}

/// A player who reconnects with his token and the last seq he saw gets exactly the events
/// he missed: no gap, no duplicate; then he plays on.
#[tokio::test]
async fn reconnect_resumes_with_no_gap_and_no_duplicate() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    play_random(&mut red, &mut black, 3, 4).await;
    assert_eq!(red.replica.turn(), Player::Red);
    let seen = black.seq;
    disconnect(&mut black).await;
    wait_gone(&mut red, Player::Black).await;
    // Red plays while Black is away.
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    assert_eq!(red.seq, seen + 2);

    let (mut client, games) = Client::returning(&server, &black.client.token).await;
    assert_eq!(client.player_id, black.client.player_id);
    assert_eq!(games, vec![black.game]);
    client
        .send(&ClientMessage::Join {
            game: black.game,
            after_seq: Some(seen),
        })
        .await;
    match client.recv().await {
        ServerMessage::Resumed {
            game,
            after_seq,
            seat,
        } => {
            assert_eq!(
                (game, after_seq, seat),
                (black.game, seen, Some(Player::Black))
            );
        }
        other => panic!("expected resumed, got {other:?}"),
    }
    black.client = client;
    // The two missed events, then his return: `next_event` checks seq has no gap or
    // repeat and that the replica agrees.
    black.next_event().await;
    black.next_event().await;
    let back = black.next_event().await;
    assert!(matches!(
        back.change,
        Change::Presence {
            player: Player::Black,
            connected: true,
            grace_until_ms: None,
        }
    ));
    red.catch_up_to(black.seq).await;
    assert_eq!(black.log, red.log);
    assert_eq!(black.replica, red.replica);
    // He plays on.
    play_random(&mut red, &mut black, 4, 3).await;
    assert_eq!(black.log, red.log);
}

/// When the missed events are no longer in the history, a reconnect gets a fresh snapshot.
#[tokio::test]
async fn reconnect_after_history_gets_a_snapshot() {
    let server = TestServer::start_with(server::Config {
        history: 1,
        ..test_config()
    })
    .await;
    let black = rejoin_with_two_events_missed(&server).await;
    // Someone without a seat cannot take it.
    let mut other = Client::new_player(&server, "Mallory").await;
    other
        .send(&ClientMessage::Join {
            game: black.game,
            after_seq: None,
        })
        .await;
    other.expect_error("not_a_player").await;
}

/// A watcher away for 100 events comes back with the seq he saw: he gets `resumed` and
/// exactly those 100 events (rebuilt from the game's entries), equal to what a watcher
/// who never left got; his replica is then the server's game.
#[tokio::test]
async fn a_client_that_missed_100_events_gets_exactly_them() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    // Each player sends about 50 moves as fast as the events come back.
    let server = TestServer::start_with(server::Config {
        rate_per_sec: 10_000,
        rate_burst: 10_000,
        ..test_config()
    })
    .await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let watch = |name: &'static str| {
        let server = &server;
        let game = red.game;
        async move {
            let mut c = Client::new_player(server, name).await;
            c.send(&ClientMessage::Watch {
                game,
                after_seq: None,
            })
            .await;
            Follower::await_snapshot(c).await
        }
    };
    let mut stayed = watch("Stayed").await;
    let mut away = watch("Away").await;
    play_random(&mut red, &mut black, 5, 4).await;
    away.catch_up_to(red.seq).await;
    let seen = away.seq;
    let token = away.client.token.clone();
    away.client.close().await;

    // Level 1 without a clock: a move without a drop (never onto a full socket, which
    // would end the game) is one event: no window, no timer.
    let mut rng = rand::rngs::SmallRng::seed_from_u64(14);
    while red.seq < seen + 100 {
        let turn = red.replica.turn();
        let (mover, other) = if turn == Player::Red {
            (&mut red, &mut black)
        } else {
            (&mut black, &mut red)
        };
        let moves: Vec<_> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(|a| {
                matches!(a, protocol::game::Action::Move { to, drop: false, .. }
                    if !mover.replica.is_full(*to))
            })
            .collect();
        let action = *moves.choose(&mut rng).expect("a move without a drop");
        mover.act(action).await;
        mover.next_event().await;
        other.catch_up_to(mover.seq).await;
        stayed.catch_up_to(mover.seq).await;
    }
    assert_eq!(red.seq, seen + 100, "one event per move");

    let (mut client, _) = Client::returning(&server, &token).await;
    client
        .send(&ClientMessage::Watch {
            game: red.game,
            after_seq: Some(seen),
        })
        .await;
    match client.recv().await {
        ServerMessage::Resumed {
            game,
            after_seq,
            seat,
        } => assert_eq!((game, after_seq, seat), (red.game, seen, None)),
        other => panic!("expected resumed, got {other:?}"),
    }
    away.client = client;
    let before = away.log.len();
    // Each is checked: seq without gap, and the entry gives the server's events.
    away.catch_up_to(seen + 100).await;
    assert_eq!(away.log.len() - before, 100);
    let start = stayed.log.iter().position(|e| e.seq == seen + 1).unwrap();
    assert_eq!(away.log[before..], stayed.log[start..]);
    assert_eq!(away.replica, stayed.replica);
    away.check_against_snapshot().await;
}

/// A client whose seq is ahead of the game's (from another game, or made up) gets a
/// snapshot, not events.
#[tokio::test]
async fn a_seq_ahead_of_the_game_gets_a_snapshot() {
    let server = TestServer::start().await;
    let (red, _black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut c = Client::new_player(&server, "Ahead").await;
    c.send(&ClientMessage::Watch {
        game: red.game,
        after_seq: Some(red.seq + 5),
    })
    .await;
    let watcher = Follower::await_snapshot(c).await;
    assert_eq!(watcher.seq, red.seq);
}

/// Black leaves, misses Red's move and his own departure's event, and rejoins: he must get
/// a snapshot (not `resumed`) that matches Red's replica. Returns Black.
async fn rejoin_with_two_events_missed(server: &TestServer) -> Follower {
    let (mut red, mut black) = start_game(server, &Settings::blitz(Level::One)).await;
    let seen = black.seq;
    disconnect(&mut black).await;
    wait_gone(&mut red, Player::Black).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    let (mut client, _) = Client::returning(server, &black.client.token).await;
    client
        .send(&ClientMessage::Join {
            game: black.game,
            after_seq: Some(seen),
        })
        .await;
    let mut black = Follower::await_snapshot(client).await;
    assert_eq!(black.seat, Some(Player::Black));
    assert_eq!(black.seq, red.seq);
    assert_eq!(black.snapshot.view.move_count(), 1);
    black.next_event().await; // his return
    red.catch_up_to(black.seq).await;
    let mut replica = red.replica.clone();
    replica.advance(black.replica.now());
    assert_eq!(black.replica, replica);
    black
}

/// The opponent is told of the disconnection with its deadline, cannot claim before it,
/// is told when it runs out, and may then claim the win.
#[tokio::test]
async fn abandonment_after_the_grace() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    disconnect(&mut black).await;
    let until = wait_gone(&mut red, Player::Black).await;
    let game = red.game;
    red.client
        .send(&ClientMessage::ClaimAbandonment { game })
        .await;
    let msg = red.expect_error("grace_running").await;
    assert!(msg.contains(&until.to_string()), "{msg}");
    let expired = red
        .until_change("grace expiry", |c| matches!(c, Change::GraceExpired { .. }))
        .await;
    assert_eq!(
        expired.change,
        Change::GraceExpired {
            player: Player::Black,
        },
    );
    assert!(expired.now_ms >= until && expired.now_ms < until + 100);
    red.client
        .send(&ClientMessage::ClaimAbandonment { game })
        .await;
    let (_, ended) = red
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let Event::GameEnded { outcome, .. } = ended else {
        unreachable!()
    };
    assert_eq!(outcome.winner, Some(Player::Red));
    assert_eq!(
        outcome.reason,
        EndReason::Abandoned {
            player: Player::Black
        }
    );
}

/// Both players gone past their graces: nobody is left to claim, so the server decides
/// the game as at the end, on rings. A watcher sees it all.
#[tokio::test]
async fn both_gone_ends_the_game() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    // Black moves without dropping a ring: Red has one ring fewer.
    black.act(mv("a1", "b1", false)).await;
    black
        .until("Black's move", |e| {
            matches!(
                e,
                Event::MoveReleased {
                    player: Player::Black,
                    ..
                }
            )
        })
        .await;
    let mut viewer = Client::new_player(&server, "Viewer").await;
    viewer
        .send(&ClientMessage::Watch {
            game: red.game,
            after_seq: None,
        })
        .await;
    let mut watcher = Follower::await_snapshot(viewer).await;
    disconnect(&mut black).await;
    wait_gone(&mut watcher, Player::Black).await;
    disconnect(&mut red).await;
    wait_gone(&mut watcher, Player::Red).await;
    let (ev, ended) = watcher
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let expired: Vec<Player> = watcher
        .log
        .iter()
        .filter_map(|e| match e.change {
            Change::GraceExpired { player, .. } => Some(player),
            _ => None,
        })
        .collect();
    assert_eq!(expired, vec![Player::Black, Player::Red]);
    assert!(matches!(
        &ev.change,
        Change::Play { entry, .. } if entry.kind == protocol::record::EntryKind::BothAbsent
    ));
    let Event::GameEnded { outcome, .. } = ended else {
        unreachable!()
    };
    assert_eq!(outcome.winner, Some(Player::Red), "{outcome:?}");
    assert_eq!(outcome.reason, protocol::game::EndReason::BothAbsent);
    assert_eq!((outcome.rings.red, outcome.rings.black), (31, 32));
}

/// A player who left his game (`leave`) does not act in it from that connection: his
/// action is refused `not_subscribed` and changes nothing (before: it was played while he
/// was counted away, he never saw its event, and his grace ran on to an abandonment).
/// Once he joins again he plays on.
#[tokio::test]
async fn a_player_who_left_acts_only_after_joining_again() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    assert_eq!(red.replica.turn(), Player::Red);
    let game = red.game;
    red.client.send(&ClientMessage::Leave { game }).await;
    match red.client.recv().await {
        ServerMessage::Left { game: g } => assert_eq!(g, game),
        other => panic!("expected left, got {other:?}"),
    }
    black.until_presence("red away", Player::Red, false).await;

    red.act(mv("d1", "d2", true)).await;
    red.expect_error("not_subscribed").await;

    red.client
        .send(&ClientMessage::Join {
            game,
            after_seq: Some(red.seq),
        })
        .await;
    match red.client.recv().await {
        ServerMessage::Resumed { seat, .. } => assert_eq!(seat, Some(Player::Red)),
        other => panic!("expected resumed, got {other:?}"),
    }
    red.until_presence("his own return", Player::Red, true)
        .await;
    // Nothing happened between his leaving and his return: the refused move was not played.
    let back = black.next_event().await;
    assert!(
        matches!(
            back.change,
            Change::Presence {
                player: Player::Red,
                connected: true,
                ..
            }
        ),
        "{back:?}"
    );
    red.act(mv("d1", "d2", true)).await;
    black
        .until("red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    red.catch_up_to(black.seq).await;
    assert_eq!(red.replica, black.replica);
}
