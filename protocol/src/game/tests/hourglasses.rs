//! Rules page, section 3: hourglasses as clocks (flips, deaths, the opening rule).

use super::*;

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
