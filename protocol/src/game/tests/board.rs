//! Rules page, sections 1 and 10: the board, the start position and the worked checks.

use super::*;

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
