//! One test per rule of the rules page, each asserting the exact events and state.

use super::*;
use crate::settings::GameClock;

fn s(name: &str) -> Square {
    name.parse().unwrap()
}

fn mv(from: &str, to: &str) -> Action {
    Action::Move {
        from: s(from),
        to: s(to),
        drop: true,
    }
}

fn mv_nodrop(from: &str, to: &str) -> Action {
    Action::Move {
        from: s(from),
        to: s(to),
        drop: false,
    }
}

fn blitz(level: Level) -> Game {
    Game::new(Settings::blitz(level))
}

fn ok(g: &mut Game, p: Player, a: Action, t: u64) -> Vec<Event> {
    g.apply(p, a, t)
        .unwrap_or_else(|e| panic!("{p} {a:?} at {t}: {e}"))
}

/// Applies an action that must be refused, and checks that nothing changed: not even the
/// game's instant.
fn refused(g: &mut Game, p: Player, a: Action, t: u64) -> ActionError {
    let expected = g.clone();
    let err = g.apply(p, a, t).expect_err("action should be refused");
    assert_eq!(*g, expected, "a refused action changed the game");
    err
}

fn has(events: &[Event], pred: impl Fn(&Event) -> bool) -> bool {
    events.iter().any(pred)
}

use Player::{Black, Red};

/// Fills a socket with rings taken from the players' holders (test set-up only).
fn fill(g: &mut Game, sq: &str) {
    let sq = s(sq);
    while !g.is_full(sq) {
        g.rings[sq.index()] += 1;
        let i = if g.holders[0] >= g.holders[1] { 0 } else { 1 };
        g.holders[i] -= 1;
    }
    g.positions.clear();
}

/// Moves a glass to a square directly (test set-up only).
fn put(g: &mut Game, glass: char, sq: &str) {
    let glass = Glass::from_label(glass).unwrap();
    if let Some(old) = g.glasses[glass.index()].square {
        g.occupant[old.index()] = None;
    }
    g.occupant[s(sq).index()] = Some(glass);
    g.glasses[glass.index()].square = Some(s(sq));
    g.positions.clear();
}

/// Fills every socket except `open` (test set-up only).
fn fill_all_but(g: &mut Game, open: &[&str]) {
    for sq in Square::ALL {
        let name = sq.to_string();
        if !open.contains(&name.as_str()) {
            fill(g, &name);
        }
    }
}

fn ring_total(g: &Game) -> u32 {
    g.rings.iter().map(|&r| r as u32).sum::<u32>() + g.holders[0] as u32 + g.holders[1] as u32
}

// ----- section 1 and 10: board and worked checks -----

#[test]
fn start_position() {
    let g = blitz(Level::One);
    for (label, sq) in [
        ('X', "d1"),
        ('Y', "g4"),
        ('Z', "a4"),
        ('A', "a1"),
        ('B', "g1"),
        ('C', "d7"),
    ] {
        let glass = Glass::from_label(label).unwrap();
        assert_eq!(g.occupant(s(sq)), Some(glass));
        assert_eq!(
            glass.owner(),
            if "XYZ".contains(label) { Red } else { Black }
        );
    }
    assert_eq!(g.turn(), Red);
    assert_eq!(g.rings(), Rings { red: 32, black: 32 });
    assert_eq!(ring_total(&g), 64);
}

#[test]
fn encyclopedia_opening() {
    let mut g = Game::new(Settings::level(Level::One));
    let e = ok(&mut g, Red, mv("d1", "d2"), 1000);
    assert_eq!(
        e,
        vec![
            Event::MoveStarted {
                at: 1000,
                player: Red,
                glass: Glass(0),
                from: s("d1"),
                sand: Sand::default()
            },
            Event::MoveReleased {
                at: 1000,
                player: Red,
                glass: Glass(0),
                from: s("d1"),
                to: s("d2"),
                late: false
            },
            Event::TurnStarted {
                at: 1000,
                player: Black
            },
            Event::RingDropped {
                at: 1000,
                player: Red,
                square: s("d2"),
                kind: DropKind::Regular,
                left: 31
            },
        ]
    );
    ok(&mut g, Black, mv("g1", "f1"), 2000);
    assert!(g.is_full(s("f1")), "one ring fills an edge socket");
    ok(&mut g, Red, mv("d2", "e2"), 3000);
    // From f1 Black could reach f2, g1, e1 but not e2 (Red stands there).
    let mut targets: Vec<String> = g
        .legal_actions(Black)
        .iter()
        .filter_map(|a| match a {
            Action::Move {
                from,
                to,
                drop: true,
            } if *from == s("f1") => Some(to.to_string()),
            _ => None,
        })
        .collect();
    targets.sort();
    assert_eq!(targets, ["e1", "f2", "g1"]);
    assert_eq!(
        refused(&mut g, Black, mv("f1", "e2"), 4000),
        ActionError::Occupied { square: s("e2") }
    );
    ok(&mut g, Black, mv("f1", "e1"), 4000);
    assert!(g.is_full(s("e1")));
    assert_eq!(g.rings(), Rings { red: 30, black: 30 });
    // A second ring on d2 fills it.
    assert_eq!(g.rings_on(s("d2")), 1);
    ok(&mut g, Red, mv("e2", "d2"), 5000);
    assert!(g.is_full(s("d2")));
}

// ----- section 3: hourglasses as clocks -----

#[test]
fn level_one_never_flips() {
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    assert!(!g.glass(Glass(0)).started);
    // No clock: the only deadline is the idle bound on Red's turn (decision 15).
    assert_eq!(g.next_deadline(), Some(10 + 10 * 3_000));
    let e = g.advance(10 + 10 * 3_000 - 1);
    assert!(e.is_empty(), "{e:?}");
    assert!(!g.glass(Glass(0)).started && !g.glass(Glass(3)).started);
}

#[test]
fn flip_turns_the_sand_over() {
    let mut g = blitz(Level::Two); // 3000 ms hourglasses
    let e = ok(&mut g, Red, mv("d1", "d2"), 0);
    assert_eq!(
        e[0],
        Event::MoveStarted {
            at: 0,
            player: Red,
            glass: Glass(0),
            from: s("d1"),
            sand: Sand {
                top_ms: 3000,
                since_ms: 0
            }
        }
    );
    ok(&mut g, Black, mv("g1", "f1"), 400);
    ok(&mut g, Red, mv("g4", "g3"), 500);
    ok(&mut g, Black, mv("a1", "b1"), 600);
    ok(&mut g, Red, mv("a4", "a3"), 700);
    ok(&mut g, Black, mv("d7", "d6"), 800);
    // X has 1800 left at 1200; flipping puts the 1200 that ran down on top.
    let e = ok(&mut g, Red, mv("d2", "d3"), 1200);
    assert_eq!(
        e[0],
        Event::MoveStarted {
            at: 1200,
            player: Red,
            glass: Glass(0),
            from: s("d2"),
            sand: Sand {
                top_ms: 1200,
                since_ms: 1200
            }
        }
    );
    assert_eq!(g.glass(Glass(0)).remaining(2000), 400);
}

#[test]
fn death_is_due_at_its_instant_and_blocks_for_good() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    // X dies at 3000 unless flipped; Black's turn limit (1000) comes first.
    let e = g.advance(1000);
    assert_eq!(
        e[0],
        Event::TurnForfeited {
            at: 1000,
            player: Black,
            reason: ForfeitReason::TurnLimit
        }
    );
    ok(&mut g, Red, mv("g4", "g3"), 1100);
    ok(&mut g, Black, mv("g1", "f1"), 1200);
    ok(&mut g, Red, mv("a4", "a3"), 1300);
    ok(&mut g, Black, mv("a1", "b1"), 1400);
    assert_eq!(g.next_deadline(), Some(2400), "Red's turn limit");
    ok(&mut g, Red, mv("g3", "f4"), 1500);
    ok(&mut g, Black, mv("d7", "d6"), 1600);
    // Red lets the turn limit pass; X's death at 3000 is next after the forfeits.
    // Y was flipped again 400 ms after its first flip: only 400 ms went on top.
    let e = g.advance(2999);
    assert!(
        e.contains(&Event::HourglassDied {
            at: 1900,
            glass: Glass(1),
            square: s("f4"),
            in_hand: false
        }),
        "{e:?}"
    );
    assert!(!has(&e, |e| matches!(
        e,
        Event::HourglassDied {
            glass: Glass(0),
            ..
        }
    )));
    let e = g.advance(3000);
    assert!(
        e.contains(&Event::HourglassDied {
            at: 3000,
            glass: Glass(0),
            square: s("d2"),
            in_hand: false
        }),
        "{e:?}"
    );
    assert!(g.glass(Glass(0)).is_dead());
    assert_eq!(
        g.occupant(s("d2")),
        Some(Glass(0)),
        "a dead hourglass stays"
    );
    if g.turn() == Red {
        assert_eq!(
            refused(&mut g, Red, mv("d2", "d3"), 3001),
            ActionError::HourglassDead { square: s("d2") }
        );
    }
}

#[test]
fn sand_running_out_in_hand_voids_the_move() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Red, Action::Start { from: s("d1") }, 0);
    // Red holds X for its whole 3 s: it dies on d1 and the turn goes on.
    let e = g.advance(3000);
    assert!(
        e.contains(&Event::HourglassDied {
            at: 3000,
            glass: Glass(0),
            square: s("d1"),
            in_hand: true
        }),
        "{e:?}"
    );
    assert_eq!(g.held(), None);
    assert_eq!(g.occupant(s("d1")), Some(Glass(0)));
    assert_eq!(g.turn(), Red, "a void move does not end the turn");
}

#[test]
fn flipping_a_full_top_kills_at_once() {
    let mut settings = Settings::blitz(Level::Two);
    settings.setup = Setup::Placement;
    let mut g = Game::new(settings);
    let place = |g: &mut Game, p, label, sq: &str, t| {
        ok(
            g,
            p,
            Action::Place {
                glass: Glass::from_label(label).unwrap(),
                to: s(sq),
                drop: false,
            },
            t,
        )
    };
    place(&mut g, Red, 'X', "d4", 0);
    place(&mut g, Black, 'A', "a1", 0);
    place(&mut g, Red, 'Y', "b2", 0);
    place(&mut g, Black, 'B', "g1", 0);
    place(&mut g, Red, 'Z', "f2", 0);
    place(&mut g, Black, 'C', "d7", 0);
    // X's top is still full at 0: flipping it empties the top, it dies, the move is void.
    let e = ok(&mut g, Red, mv("d4", "d5"), 0);
    assert_eq!(
        e[0],
        Event::MoveStarted {
            at: 0,
            player: Red,
            glass: Glass(0),
            from: s("d4"),
            sand: Sand {
                top_ms: 0,
                since_ms: 0
            }
        }
    );
    assert!(e.contains(&Event::HourglassDied {
        at: 0,
        glass: Glass(0),
        square: s("d4"),
        in_hand: true
    }));
    assert!(!has(&e, |e| matches!(e, Event::MoveReleased { .. })));
    assert_eq!(g.occupant(s("d4")), Some(Glass(0)));
    assert_eq!(g.turn(), Red);
}

#[test]
fn opening_moves_use_three_different_hourglasses() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    assert_eq!(
        refused(&mut g, Red, mv("d2", "d3"), 20),
        ActionError::OpeningRule { glass: Glass(0) }
    );
    assert!(!g
        .legal_actions(Red)
        .contains(&Action::Start { from: s("d2") }));
    ok(&mut g, Red, mv("g4", "g3"), 20);
    ok(&mut g, Black, mv("g1", "f1"), 30);
    ok(&mut g, Red, mv("a4", "a3"), 40);
    ok(&mut g, Black, mv("d7", "d6"), 50);
    // Three moves made: any hourglass again.
    ok(&mut g, Red, mv("d2", "d3"), 60);
    // Level 1 has no such rule.
    let mut g = blitz(Level::One);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    ok(&mut g, Red, mv("d2", "d3"), 20);
}

#[test]
fn opening_rule_is_lifted_when_no_unused_hourglass_can_move() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    // Block Red's unused Y (g4) and Z (a4).
    for sq in ["g3", "f4", "f5", "a3", "b4", "b5"] {
        fill(&mut g, sq);
    }
    // Y and Z are stuck, so X may move again.
    ok(&mut g, Red, mv("d2", "d3"), 20);
}

// ----- section 4: start, release, drop, claim -----

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

// ----- section 5: passes and the end -----

#[test]
fn a_player_who_cannot_move_is_passed_at_once_without_penalty() {
    let mut g = blitz(Level::Three);
    // Black's A (a1), B (g1), C (d7) boxed in.
    for sq in ["a2", "b1", "b2", "f1", "f2", "g2", "c6", "d6", "e6"] {
        fill(&mut g, sq);
    }
    put(&mut g, 'X', "c3"); // X free elsewhere
    let e = ok(&mut g, Red, mv("c3", "c4"), 100);
    assert!(
        e.contains(&Event::Passed {
            at: 100,
            player: Black,
            reason: PassReason::Blocked
        }),
        "{e:?}"
    );
    assert_eq!(g.turn(), Red);
    assert!(!g.penalty_owed(Red));
}

#[test]
fn game_ends_when_nobody_can_move_after_the_last_drop_window() {
    let mut g = blitz(Level::Two);
    // Leave only one free socket for Red's X: d2; everything else around everyone full.
    fill_all_but(&mut g, &["d2"]);
    let before = g.rings();
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 100);
    // Neither can move now; the game waits for Red's drop grace (200) only: Black, who
    // must pass, has no claim (rules page, section 4).
    assert!(g.is_ending());
    assert_eq!(
        refused(&mut g, Black, Action::Start { from: s("a1") }, 150),
        ActionError::Ending
    );
    assert_eq!(
        refused(&mut g, Black, Action::Claim, 299),
        ActionError::Ending
    );
    let e = g.advance(300);
    assert!(
        matches!(
            e.as_slice(),
            [
                Event::DropGraceEnded {
                    at: 300,
                    mover: Red,
                    ..
                },
                Event::GameEnded { at: 300, .. }
            ]
        ),
        "{e:?}"
    );
    let outcome = g.outcome().expect("ended with the grace").clone();
    assert_eq!(outcome.reason, EndReason::NoMoves);
    assert_eq!(outcome.rings, before);
    assert_eq!(ring_total(&g), 64);
}

#[test]
fn fewer_rings_wins() {
    let mut g = blitz(Level::One);
    fill_all_but(&mut g, &["d2"]);
    let before = g.rings();
    let e = ok(&mut g, Red, mv("d1", "d2"), 100);
    let outcome = g.outcome().expect("over");
    assert_eq!(outcome.rings.red, before.red - 1);
    let expected = match outcome.rings.red.cmp(&outcome.rings.black) {
        std::cmp::Ordering::Less => Some(Red),
        std::cmp::Ordering::Greater => Some(Black),
        std::cmp::Ordering::Equal => None,
    };
    assert_eq!(outcome.winner, expected);
    assert!(matches!(e.last(), Some(Event::GameEnded { at: 100, .. })));
}

#[test]
fn level_one_equal_rings_is_a_draw() {
    let mut g = blitz(Level::One);
    fill_all_but(&mut g, &["d2"]);
    // fill() takes from the fuller holder: make them equal after Red's drop.
    g.holders = [g.holders[0] + 1, g.holders[0]];
    let total_before = ring_total(&g);
    ok(&mut g, Red, mv("d1", "d2"), 100);
    assert_eq!(ring_total(&g), total_before);
    let outcome = g.outcome().unwrap();
    assert_eq!((outcome.winner, outcome.decision), (None, Decision::Draw));
}

#[test]
fn third_repetition_ends_the_game() {
    let mut g = blitz(Level::One);
    g.holders = [0, 0];
    g.positions.clear();
    g.count_position(Red);
    // Red and Black shuffle back and forth without rings.
    let plan = [
        (Red, "d1", "d2"),
        (Black, "a1", "b1"),
        (Red, "d2", "d1"),
        (Black, "b1", "a1"),
    ];
    let mut t = 0;
    let mut ended = None;
    'outer: for round in 0..3 {
        for (p, from, to) in plan {
            t += 10;
            let e = ok(&mut g, p, mv_nodrop(from, to), t);
            if let Some(Event::GameEnded { outcome, .. }) = e.last() {
                ended = Some((round, outcome.clone()));
                break 'outer;
            }
        }
    }
    let (round, outcome) = ended.expect("repetition ends the game");
    // The start position occurs again after rounds 1 and 2: the third time ends it.
    assert_eq!(round, 1);
    assert_eq!(outcome.reason, EndReason::Repetition);
    assert_eq!(outcome.winner, None, "Level 1, equal rings");
    assert_eq!(g.move_count(), 8, "every move counts, the last one too");
}

// ----- section 6: tiebreak -----

#[test]
fn tiebreak_latest_death_wins_and_equal_times_defer() {
    let mut g = blitz(Level::Two);
    g.now_ms = 1000;
    let set = |g: &mut Game, label: char, top: u64| {
        let glass = Glass::from_label(label).unwrap();
        g.glasses[glass.index()].started = true;
        g.glasses[glass.index()].sand = Sand {
            top_ms: top,
            since_ms: 1000,
        };
    };
    set(&mut g, 'X', 2000); // dies 3000
    set(&mut g, 'A', 2000); // dies 3000: the latest group is mixed
    set(&mut g, 'B', 1500); // 2500: Black alone
    set(&mut g, 'Y', 500);
    let tb = g.tiebreak();
    let order: Vec<(char, u64)> = tb
        .lineup
        .iter()
        .map(|e| (e.glass.label(), e.dies_at_ms))
        .collect();
    assert_eq!(order, [('X', 3000), ('A', 3000), ('B', 2500), ('Y', 1500)]);
    assert_eq!(tb.deciding_index, Some(2));
    assert_eq!(tb.lineup[2].player, Black);

    // Nothing running: actual death times decide.
    let mut g = blitz(Level::Two);
    g.glasses[2].started = true;
    g.glasses[2].dead_at_ms = Some(900);
    g.glasses[4].started = true;
    g.glasses[4].dead_at_ms = Some(800);
    let tb = g.tiebreak();
    assert_eq!(tb.deciding_index.map(|i| tb.lineup[i].player), Some(Red));
    assert!(tb.lineup.iter().all(|e| !e.running));

    // No hourglass ever ran: a draw.
    assert_eq!(blitz(Level::Two).tiebreak().deciding_index, None);
}

#[test]
fn equal_rings_in_timed_levels_go_to_the_tiebreak() {
    let mut g = blitz(Level::Two);
    fill_all_but(&mut g, &["d2"]);
    g.holders = [g.holders[0] + 1, g.holders[0]];
    // Red drops: no claim possible, nobody can move, the game ends at once.
    let e = ok(&mut g, Red, mv("d1", "d2"), 100);
    // Red's X is the only running hourglass (flipped at 100): it is the last alive.
    let Some(Event::GameEnded { outcome, .. }) = e.last() else {
        panic!("{e:?}")
    };
    assert_eq!(outcome.decision, Decision::Tiebreak);
    assert_eq!(outcome.winner, Some(Red));
    let tb = outcome.tiebreak.as_ref().unwrap();
    assert_eq!(
        tb.lineup,
        vec![LineupEntry {
            glass: Glass(0),
            player: Red,
            dies_at_ms: 3100,
            running: true
        }]
    );
}

// ----- section 7: the 15-second timer -----

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
        ActionError::NeutralRunning { until_ms: 310 }
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
        ActionError::NeutralRunning { until_ms: 300 }
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

// ----- section 8 and settings -----

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

#[test]
fn state_serializes_round_trip() {
    let mut g = blitz(Level::Three);
    ok(&mut g, Red, mv("d1", "d2"), 10);
    ok(&mut g, Red, Action::Flip, 20);
    let json = serde_json::to_string(&g).unwrap();
    let back: Game = serde_json::from_str(&json).unwrap();
    assert_eq!(back, g);
}

#[test]
fn a_refused_action_loses_nothing_that_was_due() {
    let mut g = Game::new(Settings {
        turn_limit_ms: None,
        ..Settings::blitz(Level::Two)
    });
    ok(&mut g, Red, mv_nodrop("d1", "d2"), 0);
    ok(&mut g, Black, mv_nodrop("a1", "b1"), 1);
    // At 5000 X (died 3000) cannot move: refused, and the deaths are still to be reported.
    assert_eq!(
        refused(&mut g, Red, Action::Start { from: s("d2") }, 5000),
        ActionError::HourglassDead { square: s("d2") }
    );
    let e = g.advance(5000);
    assert!(
        e.contains(&Event::HourglassDied {
            at: 3000,
            glass: Glass(0),
            square: s("d2"),
            in_hand: false
        }),
        "{e:?}"
    );
    assert!(
        e.contains(&Event::HourglassDied {
            at: 3001,
            glass: Glass(3),
            square: s("b1"),
            in_hand: false
        }),
        "{e:?}"
    );
}

#[test]
fn passes_say_why() {
    let mut g = blitz(Level::Two);
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    for label in ['A', 'B', 'C'] {
        let glass = Glass::from_label(label).unwrap();
        g.glasses[glass.index()].started = true;
        g.glasses[glass.index()].dead_at_ms = Some(10);
    }
    let e = ok(&mut g, Red, mv("g4", "g3"), 20);
    assert!(
        e.contains(&Event::Passed {
            at: 20,
            player: Black,
            reason: PassReason::AllDead
        }),
        "{e:?}"
    );
}

/// A seeded game of Level 1 with random moves (with and without drops), drops and claims
/// (taken whenever open), in which from move 30 both players stop dropping and each plays
/// his first legal move: the position repeats and the third occurrence ends the game.
/// Rings are conserved at every step.
#[test]
fn repetition_in_a_real_game_with_drops_and_claims_conserves_rings() {
    for seed in 0..20 {
        let (outcome, claims, drops) = shuffle_into_repetition(seed);
        assert_eq!(
            outcome.reason,
            EndReason::Repetition,
            "seed {seed}: {outcome:?}"
        );
        assert!(
            claims >= 1 && drops >= 1,
            "seed {seed}: claims {claims}, drops {drops}"
        );
    }
}

/// Plays the game of the test above; returns its outcome, claims and other drops.
fn shuffle_into_repetition(seed: u64) -> (Outcome, u32, u32) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut g = Game::new(Settings {
        abort_ms: 3_600_000,
        ..Settings::blitz(Level::One)
    });
    let mut t = 0;
    let (mut claims, mut drops) = (0, 0);
    let mut ended = None;
    for _ in 0..2000 {
        t += 10;
        let p = if rng.gen_bool(0.5) { Red } else { Black };
        let shuffling = g.move_count() >= 30;
        let acts: Vec<Action> = g
            .legal_actions(p)
            .into_iter()
            .filter(|a| match a {
                // Never onto a full socket: that loses at once.
                Action::Move { drop, to, .. } => !g.is_full(*to) && (!shuffling || !drop),
                Action::Drop | Action::Claim | Action::PenaltyDrop { .. } => !shuffling,
                _ => false,
            })
            .collect();
        // A claim, whenever one is open, is taken.
        let claim = acts.iter().find(|a| **a == Action::Claim);
        let Some(&a) = (if shuffling {
            acts.first()
        } else if claim.is_some() {
            claim
        } else {
            acts.get(rng.gen_range(0..acts.len().max(1)))
        }) else {
            continue;
        };
        let e = ok(&mut g, p, a, t);
        for ev in &e {
            if let Event::RingDropped { kind, .. } = ev {
                match kind {
                    DropKind::Claim => claims += 1,
                    _ => drops += 1,
                }
            }
        }
        let board: u32 = Square::ALL.iter().map(|&sq| g.rings_on(sq) as u32).sum();
        assert_eq!(
            board + g.rings().red as u32 + g.rings().black as u32,
            64,
            "rings conserved after {a:?} at {t}"
        );
        if let Some(Event::GameEnded { outcome, .. }) = e.last() {
            ended = Some(outcome.clone());
            break;
        }
    }
    (ended.expect("the game ends"), claims, drops)
}
