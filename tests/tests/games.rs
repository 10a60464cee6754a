//! Whole games over real websockets against the real server, with blitz timers.

use protocol::game::{Action, Decision, DropKind, EndReason, Event, ForfeitReason, Player, Status};
use protocol::settings::{Level, Settings};
use protocol::wire::Change;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tamsk_tests::*;
use tokio::time::{Duration, Instant};

/// Level 1, played to its natural end by two seeded random players that always drop,
/// then shuffle back and forth once out of rings. Both players' replicas agree with the
/// server at every event.
#[tokio::test]
async fn whole_level_one_game() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::One);
    let (mut red, mut black) = start_game(&server, &settings).await;
    assert_eq!(red.snapshot.seq, 0);
    assert_eq!(red.snapshot.red.name, red.client.name);
    let mut rng = SmallRng::seed_from_u64(7);
    let mut last_from: [Option<(protocol::Square, protocol::Square)>; 2] = [None, None];
    let mut moves = 0;
    while red.replica.is_playing() {
        assert!(moves < 600, "the game should have ended");
        let turn = red.replica.turn();
        let (mover, other) = if turn == Player::Red {
            (&mut red, &mut black)
        } else {
            (&mut black, &mut red)
        };
        let legal: Vec<Action> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(|a| match a {
                Action::Move { to, drop, .. } => *drop && !mover.replica.is_full(*to),
                _ => false,
            })
            .collect();
        let back = last_from[turn.index()].and_then(|(from, to)| {
            legal.iter().copied().find(
                |a| matches!(a, Action::Move { from: f, to: t, .. } if *f == to && *t == from),
            )
        });
        let action = match back {
            Some(back) if mover.replica.rings_left(turn) == 0 => back,
            _ => *legal.choose(&mut rng).expect("a player on turn can move"),
        };
        if let Action::Move { from, to, .. } = action {
            last_from[turn.index()] = Some((from, to));
        }
        mover.act(action).await;
        let ev = mover.next_event().await;
        assert!(matches!(&ev.change, Change::Play { entry, .. }
            if matches!(entry.kind, protocol::record::EntryKind::Act { player, .. } if player == turn)));
        other.next_event().await;
        assert_eq!(mover.replica, other.replica);
        moves += 1;
    }
    let Status::Finished { outcome } = red.replica.status().clone() else {
        panic!("finished, not {:?}", red.replica.status());
    };
    assert!(matches!(
        outcome.reason,
        EndReason::NoMoves | EndReason::Repetition
    ));
    eprintln!(
        "{} after {} moves",
        outcome.describe(),
        red.replica.move_count()
    );
    assert!(red.replica.move_count() > 20);
    let last = red.log.last().unwrap();
    assert!(engine_events(last)
        .iter()
        .any(|e| matches!(e, Event::GameEnded { outcome: o, .. } if *o == outcome)));
    // The game is over: an action gets a specific error and changes nothing.
    red.act(Action::Resign).await;
    red.expect_error("game_over").await;
    black.client.sync().await;
    assert_eq!(black.log.len(), red.log.len());
}

/// Blitz Level 2 without the turn limit, so nothing but the hourglasses runs.
fn level_two() -> Settings {
    Settings {
        turn_limit_ms: None,
        ..Settings::blitz(Level::Two)
    }
}

/// A Level 2 hourglass dies at the instant its sand runs out, announced by the server
/// on its own: nobody sends anything after the flips.
#[tokio::test]
async fn level_two_death_is_announced_at_its_instant() {
    death_at_its_instant(TestServer::start().await).await;
}

/// The same with the games on their own thread (`--game-threads 1`).
#[tokio::test]
async fn level_two_death_is_announced_at_its_instant_from_the_games_thread() {
    let server = TestServer::start_with(server::Config {
        game_threads: 1,
        ..test_config()
    })
    .await;
    death_at_its_instant(server).await;
}

async fn death_at_its_instant(server: TestServer) {
    let (mut red, mut black) = start_game(&server, &level_two()).await;
    red.act(mv("d1", "d2", true)).await;
    let (started_msg, started) = red
        .until("X started", |e| matches!(e, Event::MoveStarted { .. }))
        .await;
    let seen_start = Instant::now();
    let Event::MoveStarted {
        at: flip_at,
        sand,
        glass,
        ..
    } = started
    else {
        unreachable!()
    };
    assert_eq!(glass.label(), 'X');
    assert_eq!(
        sand.top_ms, 3000,
        "an unstarted hourglass flips to a full top"
    );
    assert_eq!(sand.since_ms, flip_at);
    assert!(started_msg.now_ms >= flip_at);
    black
        .until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    black.act(mv("a1", "b1", true)).await;
    black
        .until("Black's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    // From here on no client sends anything.
    let (died_msg, died) = red
        .until(
            "X's death",
            |e| matches!(e, Event::HourglassDied { glass, .. } if glass.label() == 'X'),
        )
        .await;
    let arrived = seen_start.elapsed();
    let Event::HourglassDied {
        at,
        square,
        in_hand,
        ..
    } = died
    else {
        unreachable!()
    };
    assert_eq!(
        at,
        flip_at + 3000,
        "death at the exact instant the sand runs out"
    );
    assert_eq!(square, sq("d2"));
    assert!(!in_hand);
    assert!(
        died_msg.now_ms >= at && died_msg.now_ms < at + 100,
        "sent at the instant: now_ms {} for a death at {at}",
        died_msg.now_ms
    );
    assert!(
        arrived >= Duration::from_millis(2950) && arrived < Duration::from_millis(3500),
        "arrived {arrived:?} after the flip was seen"
    );
    assert_eq!(red.replica.glasses()[0].dead_at_ms, Some(flip_at + 3000));
    // The sand Red draws from his replica is the server's, death included.
    let snapshot = red.check_against_snapshot().await;
    assert_eq!(snapshot.sand.glasses[0].dead_at_ms, Some(flip_at + 3000));
    let (_, b_died) = black
        .until("X's death, for Black", |e| {
            matches!(e, Event::HourglassDied { .. })
        })
        .await;
    assert_eq!(b_died, died);
    // A dead hourglass can never move.
    red.act(mv("d2", "d3", false)).await;
    let msg = red.expect_error("hourglass_dead").await;
    assert!(msg.contains("d2"), "{msg}");
}

/// Level 3: the 15-second timer (300 ms here) runs out before Black starts: his turn is
/// forfeited and Red earns the penalty, which he uses on his next move: two rings.
#[tokio::test]
async fn level_three_forfeit_with_two_ring_penalty() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| {
        matches!(
            e,
            Event::TurnStarted {
                player: Player::Black,
                ..
            }
        )
    })
    .await;
    // Only the player not on turn may flip.
    black.act(Action::Flip).await;
    black.expect_error("flip_on_own_turn").await;
    black.catch_up_to(red.seq).await;
    red.act(Action::Flip).await;
    let (_, flipped) = red
        .until("flip", |e| matches!(e, Event::NeutralFlipped { .. }))
        .await;
    let Event::NeutralFlipped {
        at: flip_at,
        by,
        target,
        sand,
    } = flipped
    else {
        unreachable!()
    };
    assert_eq!((by, target), (Player::Red, Player::Black));
    assert_eq!(sand.top_ms, 300);
    // Black does nothing; the server forfeits his turn at the expiry instant.
    let (expiry, _) = black
        .until("expiry", |e| matches!(e, Event::NeutralExpired { .. }))
        .await;
    let events = engine_events(&expiry).to_vec();
    assert_eq!(
        events,
        vec![
            Event::NeutralExpired {
                at: flip_at + 300,
                target: Player::Black,
                started: false
            },
            Event::PenaltyEarned {
                at: flip_at + 300,
                player: Player::Red
            },
            Event::TurnForfeited {
                at: flip_at + 300,
                player: Player::Black,
                reason: ForfeitReason::NeutralTimer
            },
            Event::TurnStarted {
                at: flip_at + 300,
                player: Player::Red
            },
        ]
    );
    red.catch_up_to(black.seq).await;
    assert!(red.replica.penalty_owed(Player::Red));
    // Red's next move: his own ring and the penalty ring, anywhere not full.
    red.act(mv("g4", "g3", true)).await;
    red.act(Action::PenaltyDrop { at: sq("d4") }).await;
    let (_, regular) = red
        .until("regular drop", |e| {
            matches!(
                e,
                Event::RingDropped {
                    kind: DropKind::Regular,
                    ..
                }
            )
        })
        .await;
    assert!(
        matches!(regular, Event::RingDropped { player: Player::Red, square, left: 30, .. } if square == sq("g3"))
    );
    let (_, penalty) = red
        .until("penalty drop", |e| {
            matches!(
                e,
                Event::RingDropped {
                    kind: DropKind::Penalty,
                    ..
                }
            )
        })
        .await;
    assert!(
        matches!(penalty, Event::RingDropped { player: Player::Red, square, left: 29, .. } if square == sq("d4"))
    );
    assert_eq!(red.replica.rings_left(Player::Red), 29);
    assert!(!red.replica.penalty_owed(Player::Red));
    // It does not stack: a second penalty ring is refused.
    red.act(Action::PenaltyDrop { at: sq("d3") }).await;
    red.expect_error("no_penalty").await;
    black.catch_up_to(red.seq).await;
    assert_eq!(black.replica, red.replica);
}

/// Level 3: Black started his move before the timer ran out; he may still release it
/// (late) within the allowance, and drop; Red earns the penalty and is on turn.
#[tokio::test]
async fn level_three_late_release() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| {
        matches!(
            e,
            Event::TurnStarted {
                player: Player::Black,
                ..
            }
        )
    })
    .await;
    red.act(Action::Flip).await;
    let (_, flipped) = black
        .until("flip", |e| matches!(e, Event::NeutralFlipped { .. }))
        .await;
    let flip_at = flipped.at();
    black.act(Action::Start { from: sq("a1") }).await;
    black
        .until("start", |e| matches!(e, Event::MoveStarted { .. }))
        .await;
    let (expiry, _) = black
        .until("expiry", |e| matches!(e, Event::NeutralExpired { .. }))
        .await;
    assert_eq!(
        engine_events(&expiry).to_vec(),
        vec![
            Event::NeutralExpired {
                at: flip_at + 300,
                target: Player::Black,
                started: true
            },
            Event::PenaltyEarned {
                at: flip_at + 300,
                player: Player::Red
            },
            Event::TurnStarted {
                at: flip_at + 300,
                player: Player::Red
            },
        ]
    );
    assert_eq!(
        black.replica.late().map(|h| h.late_until_ms),
        Some(Some(flip_at + 300 + 500))
    );
    black.act(Action::Release { to: sq("b1") }).await;
    black.act(Action::Drop).await;
    let (_, released) = black
        .until("late release", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    assert!(
        matches!(released, Event::MoveReleased { late: true, player: Player::Black, to, .. } if to == sq("b1"))
    );
    let (_, dropped) = black
        .until("drop", |e| matches!(e, Event::RingDropped { .. }))
        .await;
    assert!(matches!(
        dropped,
        Event::RingDropped {
            player: Player::Black,
            kind: DropKind::Regular,
            ..
        }
    ));
    assert_eq!(
        black.replica.turn(),
        Player::Red,
        "a late release does not hand over the turn"
    );
    red.catch_up_to(black.seq).await;
    assert!(red.replica.penalty_owed(Player::Red));
}

/// Level 2: the mover does not drop; the opponent may not snipe during the drop grace,
/// the server announces the grace's end at its instant, then the claim succeeds.
#[tokio::test]
async fn claim_after_drop_grace() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &level_two()).await;
    red.act(mv("d1", "d2", false)).await;
    let (_, released) = black
        .until("release", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    let release_at = released.at();
    black.act(Action::Claim).await;
    black.expect_error("no_claim").await;
    let (_, grace) = black
        .until("grace end", |e| matches!(e, Event::DropGraceEnded { .. }))
        .await;
    assert_eq!(
        grace,
        Event::DropGraceEnded {
            at: release_at + 200,
            mover: Player::Red,
            square: sq("d2")
        }
    );
    black.act(Action::Claim).await;
    let (_, claim) = black
        .until("claim", |e| matches!(e, Event::RingDropped { .. }))
        .await;
    assert!(
        matches!(claim, Event::RingDropped { player: Player::Black, kind: DropKind::Claim, left: 31, square, .. } if square == sq("d2"))
    );
    red.catch_up_to(black.seq).await;
    red.act(Action::Drop).await;
    red.expect_error("no_drop").await;
    assert_eq!(red.replica.rings_on(sq("d2")), 1);
}

/// Level 2 with equal rings at the end: the last living hourglass decides, and the whole
/// line-up goes out with the result. Every hourglass is moved twice in quick succession,
/// so each dies soon after its second flip (a flip of a nearly full top leaves little).
#[tokio::test]
async fn tiebreak_with_lineup() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &level_two()).await;
    let script = [
        ("d1", "d2"),
        ("a1", "b1"),
        ("g4", "g3"),
        ("g1", "g2"),
        ("a4", "a3"),
        ("d7", "d6"),
        ("d2", "d1"),
        ("b1", "a1"),
        ("g3", "g4"),
        ("g2", "g1"),
        ("a3", "a4"),
        ("d6", "d7"),
    ];
    for (i, (from, to)) in script.into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 {
            (&mut red, &mut black)
        } else {
            (&mut black, &mut red)
        };
        mover.act(mv(from, to, false)).await;
        mover
            .until(
                "the move",
                |e| matches!(e, Event::MoveReleased { from: f, .. } if *f == sq(from)),
            )
            .await;
        other.catch_up_to(mover.seq).await;
    }
    let (_, ended) = red
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let Event::GameEnded { outcome, .. } = ended else {
        unreachable!()
    };
    assert_eq!(outcome.reason, EndReason::NoMoves);
    assert_eq!((outcome.rings.red, outcome.rings.black), (32, 32));
    let tiebreak = outcome
        .tiebreak
        .clone()
        .expect("equal rings at Level 2: a tiebreak");
    // The line-up is every hourglass with its actual death, latest first.
    let mut deaths: Vec<(u64, usize)> = red
        .log
        .iter()
        .flat_map(|ev| engine_events(ev).iter())
        .filter_map(|e| match e {
            Event::HourglassDied { at, glass, .. } => Some((*at, glass.index())),
            _ => None,
        })
        .collect();
    assert_eq!(deaths.len(), 6);
    deaths.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let lineup: Vec<(u64, usize)> = tiebreak
        .lineup
        .iter()
        .map(|l| (l.dies_at_ms, l.glass.index()))
        .collect();
    assert_eq!(lineup, deaths);
    assert!(tiebreak.lineup.iter().all(|l| !l.running));
    // The first group of equal times that holds only one player's hourglasses decides.
    let mut expected = None;
    let mut i = 0;
    while i < lineup.len() {
        let group: Vec<_> = tiebreak
            .lineup
            .iter()
            .filter(|l| l.dies_at_ms == lineup[i].0)
            .collect();
        if group.iter().all(|l| l.player == group[0].player) {
            expected = Some((i, group[0].player));
            break;
        }
        i += group.len();
    }
    assert_eq!(tiebreak.deciding_index, expected.map(|e| e.0));
    assert_eq!(outcome.winner, expected.map(|e| e.1));
    assert_eq!(
        outcome.decision,
        if expected.is_some() {
            Decision::Tiebreak
        } else {
            Decision::Draw
        }
    );
    black
        .until("the end, for Black", |e| {
            matches!(e, Event::GameEnded { .. })
        })
        .await;
    assert_eq!(black.replica, red.replica);
}

/// Section 8: a player who does not make his first move in time aborts the game, announced
/// at that instant; the game is then over for both.
#[tokio::test]
async fn no_first_move_aborts_the_game() {
    // The abort bound is the operator's (players cannot choose it).
    let (server, settings) = server_with_abort(400).await;
    let (mut red, mut black) = start_game(&server, &settings).await;
    let (ev, aborted) = black
        .until("the abort", |e| matches!(e, Event::GameAborted { .. }))
        .await;
    assert_eq!(
        aborted,
        Event::GameAborted {
            at: 400,
            reason: protocol::game::AbortReason::NoFirstMove {
                player: Player::Red
            }
        }
    );
    assert!(ev.now_ms >= 400 && ev.now_ms < 500, "sent at {}", ev.now_ms);
    red.catch_up_to(black.seq).await;
    assert!(matches!(red.replica.status(), Status::Aborted { .. }));
    red.act(mv("d1", "d2", true)).await;
    red.expect_error("game_over").await;
}
