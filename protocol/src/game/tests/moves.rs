//! Rules page, section 4: start, release, drop and claim.

use super::*;

#[test]
fn touch_move_and_release_rules() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 0);
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("g4") }, 10),
        ActionError::AlreadyHolding { glass: Glass(0) }
    );
    assert_eq!(
        refused(&mut g, Red, Action::Release { to: s("d3") }, 10),
        ActionError::NotAdjacent {
            from: s("d1"),
            to: s("d3")
        }
    );
    assert_eq!(
        refused(&mut g, Red, Action::Release { to: s("d1") }, 10),
        ActionError::NotAdjacent {
            from: s("d1"),
            to: s("d1")
        }
    );
    assert_eq!(
        refused(&mut g, Black, Action::Start { from: s("a1") }, 10),
        ActionError::NotYourTurn { player: Black }
    );
    // Still on d1 for everyone else until released.
    assert_eq!(g.occupant(s("d1")), Some(Glass(0)));
    let e = ok(&mut g, Red, Action::Release { to: s("c1") }, 500);
    assert_eq!(
        e[0],
        Event::MoveReleased {
            at: 500,
            player: Red,
            glass: Glass(0),
            from: s("d1"),
            to: s("c1"),
            late: false
        }
    );
    assert_eq!(g.turn(), Black);
    assert_eq!(g.turn_started_ms(), 500);
}

#[test]
fn wrong_hourglass_errors_are_specific() {
    let mut g = blitz(Level::One);
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("d4") }, 0),
        ActionError::NoHourglass { square: s("d4") }
    );
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("a1") }, 0),
        ActionError::NotYourHourglass { square: s("a1") }
    );
    assert_eq!(
        refused(&mut g, Red, Action::Release { to: s("d2") }, 0),
        ActionError::NotHolding
    );
    assert_eq!(refused(&mut g, Red, Action::Drop, 0), ActionError::NoDrop);
    assert_eq!(refused(&mut g, Red, Action::Claim, 0), ActionError::NoClaim);
    assert_eq!(
        refused(&mut g, Red, Action::PenaltyDrop { at: s("d4") }, 0),
        ActionError::NoPenalty
    );
    assert_eq!(
        refused(&mut g, Black, Action::Flip, 0),
        ActionError::NoNeutralTimer
    );
    assert_eq!(
        refused(
            &mut g,
            Red,
            Action::Place {
                glass: Glass(0),
                to: s("d4"),
                drop: true
            },
            0
        ),
        ActionError::NothingToPlace
    );
}

#[test]
fn drop_grace_in_timed_levels() {
    let mut g = blitz(Level::Two); // grace 200 ms
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 100);
    let mut early = g.clone();
    ok(&mut early, Red, Action::Drop, 299);
    assert_eq!(early.rings_on(s("d2")), 1);
    // At 300 the grace is over.
    let e = g.advance(300);
    assert_eq!(
        e,
        vec![Event::DropGraceEnded {
            at: 300,
            mover: Red,
            square: s("d2")
        }]
    );
    assert_eq!(refused(&mut g, Red, Action::Drop, 300), ActionError::NoDrop);
}

#[test]
fn opponent_start_closes_the_drop_window() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 100);
    ok(&mut g, Black, Action::Start { from: s("a1") }, 150);
    assert_eq!(refused(&mut g, Red, Action::Drop, 200), ActionError::NoDrop);
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 400),
        ActionError::NoClaim
    );
}

#[test]
fn claim_in_timed_levels_only_after_the_grace() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 100);
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 200),
        ActionError::NoClaim,
        "no sniping a drop on its way"
    );
    let e = ok(&mut g, Black, Action::Claim, 300);
    assert!(e.contains(&Event::RingDropped {
        at: 300,
        player: Black,
        square: s("d2"),
        kind: DropKind::Claim,
        left: 31
    }));
    assert_eq!(g.rings(), Rings { red: 32, black: 31 });
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 310),
        ActionError::NoClaim,
        "once"
    );
    // Black still makes his regular move.
    ok(&mut g, Black, mv("a1", "b1"), 400);
}

#[test]
fn claim_in_level_one_any_time_before_own_move() {
    let mut g = Game::new(Settings {
        abort_ms: 3_600_000,
        ..Settings::blitz(Level::One)
    });
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 1000);
    let mut claimed = g.clone();
    ok(&mut claimed, Black, Action::Claim, 1001);
    assert_eq!(
        refused(&mut claimed, Red, Action::Drop, 1002),
        ActionError::NoDrop,
        "a claim closes the mover's window"
    );
    // Without a claim Red may still drop much later, until Black moves.
    ok(&mut g, Red, Action::Drop, 500_000);
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 500_001),
        ActionError::NoClaim,
        "the mover dropped"
    );
}

#[test]
fn no_claim_once_ones_turn_was_forfeited_by_the_timer() {
    let mut g = blitz(Level::Three); // grace 200, neutral 300
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 0);
    ok(&mut g, Red, Action::Flip, 0); // against Black
                                      // Black, on turn, may claim from the end of Red's grace...
    let mut claimed = g.clone();
    ok(&mut claimed, Black, Action::Claim, 299);
    // ...until the timer forfeits his turn at 300: then he is not on turn any more.
    let e = g.advance(300);
    assert!(
        e.contains(&Event::TurnForfeited {
            at: 300,
            player: Black,
            reason: ForfeitReason::NeutralTimer
        }),
        "{e:?}"
    );
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 300),
        ActionError::NoClaim
    );
    assert_eq!(g.window(Red), None, "Red's move is complete");
    assert!(!g.legal_actions(Black).contains(&Action::Claim));
}

#[test]
fn a_player_who_must_pass_has_no_claim() {
    let mut g = Game::new(Settings {
        abort_ms: 3_600_000,
        ..Settings::blitz(Level::One)
    });
    // Black's A (a1), B (g1), C (d7) boxed in; Red's X free on c3.
    for sq in ["a2", "b1", "b2", "f1", "f2", "g2", "c6", "d6", "e6"] {
        fill(&mut g, sq);
    }
    put(&mut g, 'X', "c3");
    let e = ok(&mut g, Red, mv_nodrop("c3", "c4"), 100);
    assert!(
        e.contains(&Event::Passed {
            at: 100,
            player: Black,
            reason: PassReason::Blocked
        }),
        "{e:?}"
    );
    // The turn passed Black by: no claim, however early.
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 100),
        ActionError::NotYourTurn { player: Black }
    );
    // Red's own drop is still open until his next start (Level 1).
    let w = g.window(Red).expect("Red may still drop");
    assert!(w.drop_open && !w.claim_allowed);
    ok(&mut g, Red, Action::Drop, 5_000);
}

#[test]
fn no_claim_on_a_full_socket_or_without_rings() {
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv_nodrop("d1", "c1"), 0);
    fill(&mut g, "c1");
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 10),
        ActionError::SocketFull { square: s("c1") }
    );
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv_nodrop("d1", "c1"), 0);
    g.holders[1] = 0;
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 10),
        ActionError::NoRings
    );
}

#[test]
fn full_socket_loses_or_is_refused() {
    let mut g = blitz(Level::One);
    fill(&mut g, "d2");
    let e = ok(&mut g, Red, mv("d1", "d2"), 100);
    let outcome = g.outcome().expect("over").clone();
    assert_eq!(outcome.winner, Some(Black));
    assert_eq!(outcome.reason, EndReason::FullSocket { player: Red });
    assert_eq!(e.last(), Some(&Event::GameEnded { at: 100, outcome }));

    let mut settings = Settings::blitz(Level::One);
    settings.full_socket = FullSocket::Reject;
    let mut g = Game::new(settings);
    fill(&mut g, "d2");
    assert_eq!(
        refused(&mut g, Red, mv("d1", "d2"), 100),
        ActionError::SocketFull { square: s("d2") }
    );
    ok(&mut g, Red, mv("d1", "c1"), 100);
}

#[test]
fn drop_on_a_full_socket_is_refused() {
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv("d1", "c1"), 0);
    assert!(g.is_full(s("c1")));
    // The window closed by itself: nothing more fits.
    assert_eq!(g.window(Red), None);
    assert_eq!(refused(&mut g, Red, Action::Drop, 10), ActionError::NoDrop);
}
