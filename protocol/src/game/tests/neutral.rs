//! Rules page, section 7: the 15-second timer (flips, expiries, late releases).

use super::*;

#[test]
fn only_the_player_not_on_turn_flips_and_only_when_empty() {
    let mut g = blitz(Level::Three); // neutral 300
    assert_eq!(
        refused(&mut g, Red, Action::Flip, 0),
        ActionError::FlipOnOwnTurn
    );
    let e = ok(&mut g, Black, Action::Flip, 10);
    assert_eq!(
        e,
        vec![Event::NeutralFlipped {
            at: 10,
            by: Black,
            target: Red,
            sand: Sand {
                top_ms: 300,
                since_ms: 10
            }
        }]
    );
    ok(&mut g, Red, mv("d1", "d2"), 100);
    assert_eq!(
        refused(&mut g, Red, Action::Flip, 150),
        ActionError::NeutralRunning {
            until_ms: 310,
            left_ms: 160
        }
    );
    assert_eq!(
        refused(&mut g, Red, Action::Flip, 150).to_string(),
        "the 15-second timer is still running: 0.2 s left (it empties at 310 ms of game time)"
    );
    // Empty at 310: Red may flip against Black, who gets only 300 from then.
    ok(&mut g, Red, Action::Flip, 310);
}

#[test]
fn expiry_before_the_start_forfeits_the_turn_with_the_penalty() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    let e = g.advance(300);
    assert_eq!(
        e,
        vec![
            Event::NeutralExpired {
                at: 300,
                target: Red,
                started: false
            },
            Event::PenaltyEarned {
                at: 300,
                player: Black
            },
            Event::TurnForfeited {
                at: 300,
                player: Red,
                reason: ForfeitReason::NeutralTimer
            },
            Event::TurnStarted {
                at: 300,
                player: Black
            },
        ]
    );
    // Black moves and drops two rings: the regular one and one anywhere not full,
    // even under an hourglass.
    ok(&mut g, Black, mv("a1", "b1"), 400);
    assert!(g
        .legal_actions(Black)
        .contains(&Action::PenaltyDrop { at: s("d1") }));
    let e = ok(&mut g, Black, Action::PenaltyDrop { at: s("d1") }, 450);
    assert_eq!(
        e,
        vec![Event::RingDropped {
            at: 450,
            player: Black,
            square: s("d1"),
            kind: DropKind::Penalty,
            left: 30
        }]
    );
    assert_eq!(
        refused(&mut g, Black, Action::PenaltyDrop { at: s("d4") }, 460),
        ActionError::NoPenalty,
        "only one"
    );
    assert_eq!(g.rings(), Rings { red: 32, black: 30 });
}

#[test]
fn the_penalty_ring_closes_with_the_drop_grace() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    g.advance(300);
    ok(&mut g, Black, mv("a1", "b1"), 400);
    g.advance(600);
    assert_eq!(
        refused(&mut g, Black, Action::PenaltyDrop { at: s("d4") }, 600),
        ActionError::NoPenalty
    );
    assert!(!g.penalty_owed(Black), "used up by that move");
}

#[test]
fn penalties_do_not_stack() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    g.advance(300); // Red forfeits, Black on turn
    ok(&mut g, Red, Action::Flip, 300);
    g.advance(600); // Black forfeits, Red earns one
    ok(&mut g, Black, Action::Flip, 600);
    g.advance(900); // Red forfeits again: Black had one already
    assert!(g.penalty_owed(Black));
    ok(&mut g, Black, mv("a1", "b1"), 950);
    ok(&mut g, Black, Action::PenaltyDrop { at: s("d4") }, 960);
    assert_eq!(
        refused(&mut g, Black, Action::PenaltyDrop { at: s("d5") }, 970),
        ActionError::NoPenalty
    );
}

#[test]
fn expiry_after_the_start_allows_a_late_release_with_the_penalty() {
    let mut g = blitz(Level::Three); // late release 500
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    let e = g.advance(300);
    assert_eq!(
        e,
        vec![
            Event::NeutralExpired {
                at: 300,
                target: Red,
                started: true
            },
            Event::PenaltyEarned {
                at: 300,
                player: Black
            },
            Event::TurnStarted {
                at: 300,
                player: Black
            },
        ]
    );
    assert_eq!(g.late().map(|h| h.late_until_ms), Some(Some(800)));
    // Black may start his own move from the expiry; X still stands on d1.
    ok(&mut g, Black, Action::Start { from: s("a1") }, 350);
    assert_eq!(g.occupant(s("d1")), Some(Glass(0)));
    let e = ok(&mut g, Red, Action::Release { to: s("d2") }, 700);
    assert_eq!(
        e[0],
        Event::MoveReleased {
            at: 700,
            player: Red,
            glass: Glass(0),
            from: s("d1"),
            to: s("d2"),
            late: true
        }
    );
    ok(&mut g, Red, Action::Drop, 750);
    assert_eq!(g.rings_on(s("d2")), 1);
    assert_eq!(
        g.turn(),
        Black,
        "the late release does not end Black's turn"
    );
    ok(&mut g, Black, Action::Release { to: s("b1") }, 800);
    assert_eq!(g.turn(), Red);
    // Black's penalty ring came with that release.
    assert!(g.window(Black).is_some_and(|w| w.penalty_open));
}

#[test]
fn a_late_hold_not_released_in_time_stays_with_its_flip() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    g.advance(300);
    let mut in_time = g.clone();
    ok(&mut in_time, Red, Action::Release { to: s("d2") }, 799);
    // The bound is half-open: 799 is in time, 800 is not.
    let e = g.advance(800);
    assert_eq!(
        e,
        vec![
            Event::LateReleaseMissed {
                at: 800,
                player: Red,
                glass: Glass(0),
                square: s("d1")
            },
            // The turn it was late on counts as forfeited; its penalty was earned at the
            // expiry and does not stack.
            Event::TurnForfeited {
                at: 800,
                player: Red,
                reason: ForfeitReason::LateRelease
            },
        ]
    );
    assert_eq!(g.turn(), Black);
    assert!(g.penalty_owed(Black));
    assert_eq!(g.lapsed(Red), 1);
    assert_eq!(g.occupant(s("d1")), Some(Glass(0)));
    assert_eq!(
        g.glass(Glass(0)).sand,
        Sand {
            top_ms: 3000,
            since_ms: 100
        },
        "the flip stands"
    );
    assert_eq!(
        refused(&mut g, Red, Action::Release { to: s("d2") }, 801),
        ActionError::NotHolding
    );
}

#[test]
fn timer_example_of_the_network_server() {
    // Scaled from seconds to ms / 50: 15 s -> 300, 10 s -> 200, 5 s -> 100.
    let mut g = blitz(Level::Three);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Red, Action::Flip, 0); // against Black
    ok(&mut g, Black, mv("a1", "b1"), 200); // moved after 200 of 300
    assert_eq!(
        refused(&mut g, Black, Action::Flip, 200),
        ActionError::NeutralRunning {
            until_ms: 300,
            left_ms: 100
        }
    );
    ok(&mut g, Black, Action::Flip, 300); // as soon as it empties: Red had 100 + 300
    let e = g.advance(600);
    assert!(e.contains(&Event::NeutralExpired {
        at: 600,
        target: Red,
        started: false
    }));
}

#[test]
fn an_expiry_after_the_turn_ended_judges_nobody() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    assert_eq!(g.neutral_judges(), Some(Red));
    let mut moved = g.clone();
    ok(&mut moved, Red, mv("d1", "d2"), 100);
    assert_eq!(moved.neutral_judges(), None, "Red's turn is over");
    ok(&mut g, Red, mv("d1", "d2"), 100);
    let e = g.advance(1000);
    assert!(
        !has(&e, |e| matches!(e, Event::NeutralExpired { .. })),
        "{e:?}"
    );
}

#[test]
fn the_late_release_bound_holds_when_the_turn_comes_back() {
    let mut g = blitz(Level::Three); // late release 500
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    g.advance(300); // expiry: Red may release until 800
                    // Black moves quickly (with the penalty ring of the expiry); Red's hand still holds X:
                    // it is his move of the new turn (touch-move), and the bound still runs.
    ok(&mut g, Black, mv("a1", "b1"), 350);
    ok(&mut g, Black, Action::PenaltyDrop { at: s("d4") }, 360);
    assert_eq!(g.turn(), Red);
    assert_eq!(
        g.held().map(|h| (h.glass, h.late_until_ms)),
        Some((Glass(0), Some(800)))
    );
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("g4") }, 400),
        ActionError::AlreadyHolding { glass: Glass(0) }
    );
    // Within the bound (799): an ordinary release that ends this turn.
    let mut in_time = g.clone();
    let e = ok(&mut in_time, Red, Action::Release { to: s("d2") }, 799);
    assert_eq!(
        e[..2],
        [
            Event::MoveReleased {
                at: 799,
                player: Red,
                glass: Glass(0),
                from: s("d1"),
                to: s("d2"),
                late: false
            },
            Event::TurnStarted {
                at: 799,
                player: Black
            }
        ]
    );
    assert_eq!(in_time.lapsed(Red), 0);
    // At 800 it stays on d1 with its flip, and this turn is forfeited with its penalty.
    assert_eq!(g.next_deadline(), Some(800));
    let e = g.advance(800);
    assert_eq!(
        e,
        vec![
            Event::LateReleaseMissed {
                at: 800,
                player: Red,
                glass: Glass(0),
                square: s("d1")
            },
            Event::TurnForfeited {
                at: 800,
                player: Red,
                reason: ForfeitReason::LateRelease
            },
            Event::PenaltyEarned {
                at: 800,
                player: Black
            },
            Event::TurnStarted {
                at: 800,
                player: Black
            },
        ]
    );
    assert_eq!(g.occupant(s("d1")), Some(Glass(0)));
    assert_eq!(
        g.glass(Glass(0)).sand,
        Sand {
            top_ms: 3000,
            since_ms: 100
        }
    );
    assert_eq!(g.held(), None);
    assert_eq!(
        refused(&mut g, Red, Action::Release { to: s("d2") }, 801),
        ActionError::NotHolding
    );
}

#[test]
fn a_second_expiry_on_the_same_hold_keeps_the_first_bound() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    g.advance(300); // bound 800
    ok(&mut g, Black, mv("a1", "b1"), 310); // the turn comes back to Red, holding X
                                            // Black flips again on Red's new turn: it runs out at 610 on the same hold.
    ok(&mut g, Black, Action::Flip, 310);
    let e = g.advance(610);
    assert!(
        e.contains(&Event::NeutralExpired {
            at: 610,
            target: Red,
            started: true
        }),
        "{e:?}"
    );
    assert_eq!(g.late().map(|h| h.late_until_ms), Some(Some(800)));
    let e = g.advance(800);
    assert!(
        e.contains(&Event::TurnForfeited {
            at: 800,
            player: Red,
            reason: ForfeitReason::LateRelease
        }),
        "{e:?}"
    );
}

#[test]
fn two_late_glasses_at_once_are_both_kept() {
    // Short timers: the 15-second timer (300) runs out on Black's hold while Red's late
    // release (500) still runs.
    let mut g = blitz(Level::Three);
    ok(&mut g, Black, Action::Flip, 0);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 100);
    g.advance(300); // Red late until 800, Black on turn
    ok(&mut g, Black, Action::Start { from: s("a1") }, 350);
    ok(&mut g, Red, Action::Flip, 350);
    g.advance(650); // Black late until 1150; Red on turn, X in hand until 800
    assert_eq!(
        g.held().map(|h| (h.glass, h.late_until_ms)),
        Some((Glass(0), Some(800)))
    );
    assert_eq!(
        g.late().map(|h| (h.glass, h.late_until_ms)),
        Some((Glass(3), Some(1150)))
    );
    ok(&mut g, Red, Action::Release { to: s("d2") }, 700);
    assert_eq!(g.turn(), Black);
    ok(&mut g, Black, Action::Release { to: s("b1") }, 1_100);
    assert_eq!(g.turn(), Red);
    assert_eq!(g.moves_made(Red) + g.moves_made(Black), 2);
}
