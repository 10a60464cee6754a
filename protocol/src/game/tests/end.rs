//! Rules page, sections 5 and 6: passes, the end of the game, and the tiebreak.

use super::*;

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
