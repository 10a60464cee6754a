//! Rules page, section 8, and the settings: the first-move abort, the turn limit, the
//! game clock, resignation, abandonment and shutdown, the placement set-up.

use super::*;

#[test]
fn no_first_move_aborts() {
    let mut g = blitz(Level::One); // abort 3000
    let e = g.advance(3000);
    assert_eq!(
        e,
        vec![Event::GameAborted {
            at: 3000,
            reason: AbortReason::NoFirstMove { player: Red }
        }]
    );
    assert_eq!(
        refused(&mut g, Red, mv("d1", "d2"), 3001),
        ActionError::GameOver
    );
    // Black's first turn starts with Red's first move.
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv("d1", "d2"), 2000);
    let e = g.advance(5000);
    assert_eq!(
        e,
        vec![Event::GameAborted {
            at: 5000,
            reason: AbortReason::NoFirstMove { player: Black }
        }]
    );
}

/// Decision 10: a player's 30 s run from the start of his first turn, whatever started it.
#[test]
fn the_abort_counts_from_the_first_turn_whatever_began_it() {
    // Red moves and flips the timer on Black: Black's turn is forfeited at 300 and Red is
    // on turn at 3000, yet Black's 3 s ran from Red's release at 0: Black aborts.
    let mut g = blitz(Level::Three); // abort 3000, neutral 300, late release 500
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Red, Action::Flip, 0);
    let e = g.advance(3_000);
    assert_eq!(g.turn(), Red);
    assert_eq!(
        e.last(),
        Some(&Event::GameAborted {
            at: 3_000,
            reason: AbortReason::NoFirstMove { player: Black }
        })
    );
    // Red's first move runs out on the timer and is released late: Black's first turn
    // began at the expiry (300), not at Red's late release (450).
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    g.advance(300);
    ok(&mut g, Red, Action::Release { to: s("d2") }, 450);
    assert_eq!(g.moves_made(Red), 1);
    assert!(
        g.is_playing()
            && g.advance(3_299)
                .iter()
                .all(|e| !matches!(e, Event::GameAborted { .. }))
    );
    assert_eq!(
        g.advance(3_300),
        vec![Event::GameAborted {
            at: 3_300,
            reason: AbortReason::NoFirstMove { player: Black }
        }]
    );
    // Red's own first turn forfeited (Black flipped at once): Red still aborts at 3000,
    // while Black, on turn since 300, has until 3300.
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    let e = g.advance(3_000);
    assert_eq!(
        e.last(),
        Some(&Event::GameAborted {
            at: 3_000,
            reason: AbortReason::NoFirstMove { player: Red }
        })
    );
}

#[test]
fn level_two_turn_limit_forfeits_without_penalty() {
    let mut g = blitz(Level::Two); // turn limit 1000
    ok(&mut g, Red, mv("d1", "d2"), 0);
    let e = g.advance(1000);
    assert_eq!(
        e,
        vec![
            Event::TurnForfeited {
                at: 1000,
                player: Black,
                reason: ForfeitReason::TurnLimit
            },
            Event::TurnStarted {
                at: 1000,
                player: Red
            },
        ]
    );
    assert!(!g.penalty_owed(Red));
}

#[test]
fn game_clock_runs_only_on_own_turn_and_flags() {
    let mut settings = Settings::blitz(Level::One);
    settings.game_clock = Some(GameClock {
        main_ms: 5000,
        increment_ms: 1000,
    });
    settings.abort_ms = 100_000;
    let mut g = Game::new(settings);
    ok(&mut g, Red, mv("d1", "d2"), 2000);
    assert_eq!(
        g.clock_left(Red, 9000),
        Some(4000),
        "2000 used, 1000 added, stopped"
    );
    assert_eq!(g.clock_left(Black, 3000), Some(4000));
    let e = g.advance(7000);
    let Some(Event::GameEnded { outcome, at: 7000 }) = e.last() else {
        panic!("{e:?}")
    };
    assert_eq!(outcome.reason, EndReason::Clock { player: Black });
    assert_eq!(outcome.winner, Some(Red));
}

#[test]
fn resign_any_time() {
    let mut g = blitz(Level::Three);
    let e = ok(&mut g, Black, Action::Resign, 5);
    let Some(Event::GameEnded { outcome, .. }) = e.last() else {
        panic!()
    };
    assert_eq!(
        (outcome.winner, outcome.reason),
        (Some(Red), EndReason::Resigned { player: Black })
    );
    assert_eq!(
        refused(&mut g, Red, mv("d1", "d2"), 6),
        ActionError::GameOver
    );
}

#[test]
fn abandonment_and_shutdown() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    let e = g.abandon(Black, 100);
    let Some(Event::GameEnded { outcome, .. }) = e.last() else {
        panic!()
    };
    assert_eq!(outcome.winner, Some(Red));
    let mut g = blitz(Level::Three);
    let e = g.abort(AbortReason::Shutdown, 10);
    assert_eq!(
        e,
        vec![Event::GameAborted {
            at: 10,
            reason: AbortReason::Shutdown
        }]
    );
}

#[test]
fn placement_setup() {
    let mut settings = Settings::blitz(Level::Three);
    settings.setup = Setup::Placement;
    let mut g = Game::new(settings);
    assert_eq!(g.occupant(s("d1")), None);
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("d1") }, 0),
        ActionError::MustPlace
    );
    assert_eq!(
        refused(
            &mut g,
            Red,
            Action::Place {
                glass: Glass(3),
                to: s("d4"),
                drop: true
            },
            0
        ),
        ActionError::NotYourGlass {
            glass: Glass(3),
            player: Red
        }
    );
    let e = ok(
        &mut g,
        Red,
        Action::Place {
            glass: Glass(1),
            to: s("d4"),
            drop: true,
        },
        50,
    );
    assert_eq!(
        e[0],
        Event::Placed {
            at: 50,
            player: Red,
            glass: Glass(1),
            to: s("d4"),
            sand: Sand {
                top_ms: 3000,
                since_ms: 50
            }
        }
    );
    assert_eq!(g.rings_on(s("d4")), 1);
    assert_eq!(
        refused(
            &mut g,
            Black,
            Action::Place {
                glass: Glass(3),
                to: s("d4"),
                drop: true
            },
            60
        ),
        ActionError::Occupied { square: s("d4") }
    );
    ok(
        &mut g,
        Black,
        Action::Place {
            glass: Glass(3),
            to: s("d3"),
            drop: true,
        },
        60,
    );
    assert_eq!(
        refused(
            &mut g,
            Red,
            Action::Place {
                glass: Glass(1),
                to: s("a1"),
                drop: true
            },
            70
        ),
        ActionError::AlreadyPlaced { glass: Glass(1) }
    );
}
