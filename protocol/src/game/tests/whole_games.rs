//! The engine as a whole: its state round-trips, a refused action loses nothing that was
//! due, passes say why, and a real game ends on repetition with rings conserved.

use super::*;

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
