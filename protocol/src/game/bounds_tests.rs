//! Tests of the bounds on waiting (`docs/RULES.md`, decision 15 and the table of waiting
//! states): every bound at its instant (half-open), and two silent players from any
//! point see their game end within the documented bound.

use super::*;
use rand::{Rng, SeedableRng};
use Player::{Black, Red};

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

fn ok(g: &mut Game, p: Player, a: Action, t: u64) -> Vec<Event> {
    g.apply(p, a, t)
        .unwrap_or_else(|e| panic!("{p} {a:?} at {t}: {e}"))
}

fn ended(events: &[Event]) -> Option<&Outcome> {
    events.iter().find_map(|e| match e {
        Event::GameEnded { outcome, .. } => Some(outcome),
        _ => None,
    })
}

/// The documented bound for two silent players (decision 15): from the last action, the
/// game ends within this.
fn silent_bound(g: &Game) -> u64 {
    let s = g.settings();
    let turns = (2 * IDLE_TURNS as u64 - 1) * g.turn_limit();
    s.abort_ms.max(turns) + s.late_release_ms + 2 * s.drop_grace_ms
}

#[test]
fn time_with_a_glass_in_hand_counts_toward_the_turn_limit() {
    let mut g = Game::new(Settings::blitz(Level::Two)); // turn limit 1000
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, Action::Start { from: s("a1") }, 900);
    assert_eq!(
        g.next_deadline(),
        Some(1000),
        "holding does not stop the limit"
    );
    let mut in_time = g.clone();
    ok(&mut in_time, Black, Action::Release { to: s("b1") }, 999);
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
    // A stays on a1 with its flip; the hand is empty.
    assert_eq!(g.occupant(s("a1")), Some(Glass(3)));
    assert_eq!(
        g.glass(Glass(3)).sand,
        Sand {
            top_ms: 3000,
            since_ms: 900
        }
    );
    assert_eq!(g.held(), None);
    assert!(!g.penalty_owed(Red), "no penalty for the turn limit");
    assert_eq!(g.lapsed(Black), 1);
}

#[test]
fn without_a_turn_limit_the_idle_bound_applies_at_every_level() {
    for level in [Level::One, Level::Three] {
        let settings = Settings {
            game_clock: None,
            turn_limit_ms: None,
            abort_ms: 200,
            ..Settings::blitz(level)
        };
        let mut g = Game::new(settings);
        assert_eq!(g.turn_limit(), 2_000);
        ok(&mut g, Red, mv("d1", "d2"), 0);
        ok(&mut g, Black, mv("a1", "b1"), 100);
        assert!(g.advance(2_099).is_empty());
        assert_eq!(
            g.advance(2_100),
            vec![
                Event::TurnForfeited {
                    at: 2_100,
                    player: Red,
                    reason: ForfeitReason::TurnLimit
                },
                Event::TurnStarted {
                    at: 2_100,
                    player: Black
                },
            ]
        );
    }
}

/// A Level 1 game without clock or turn limit where Red holds a glass and never releases:
/// the idle bound ends his turn, then the game.
#[test]
fn a_glass_held_forever_at_level_one_is_bounded() {
    let mut g = Game::new(Settings {
        game_clock: None,
        turn_limit_ms: None,
        abort_ms: 100,
        ..Settings::blitz(Level::One)
    });
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    ok(&mut g, Red, Action::Start { from: s("d2") }, 20);
    let e = g.advance(1_010);
    assert!(
        e.contains(&Event::TurnForfeited {
            at: 1_010,
            player: Red,
            reason: ForfeitReason::TurnLimit
        }),
        "{e:?}"
    );
    assert_eq!(g.occupant(s("d2")), Some(Glass(0)));
}

#[test]
fn a_player_who_lets_three_turns_lapse_while_the_other_plays_loses() {
    let mut g = Game::new(Settings::blitz(Level::Two)); // turn limit 1000
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    // Red lapses at 1010; Black plays; Red lapses at 2020; Black plays; Red lapses at 3030.
    assert_eq!(g.advance(1_010).len(), 2);
    assert_eq!(g.lapsed(Red), 1);
    ok(&mut g, Black, mv("g1", "f1"), 1_020);
    g.advance(2_020);
    assert_eq!(g.lapsed(Red), 2);
    ok(&mut g, Black, mv("d7", "d6"), 2_030);
    assert!(ended(&g.advance(3_029)).is_none());
    let e = g.advance(3_030);
    let outcome = ended(&e).expect("ended");
    assert_eq!(outcome.reason, EndReason::Idle { player: Red });
    assert_eq!(outcome.winner, Some(Black));
    assert_eq!(outcome.decision, Decision::Forfeit);
    assert_eq!(
        e[e.len() - 2..],
        [
            Event::TurnForfeited {
                at: 3_030,
                player: Red,
                reason: ForfeitReason::TurnLimit
            },
            Event::GameEnded {
                at: 3_030,
                outcome: outcome.clone()
            },
        ]
    );
}

#[test]
fn a_move_resets_the_count_of_lapsed_turns() {
    let mut g = Game::new(Settings::blitz(Level::Two));
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    g.advance(1_010); // Red lapses
    ok(&mut g, Black, mv("g1", "f1"), 1_020);
    g.advance(2_020); // Red lapses again
    ok(&mut g, Black, mv("d7", "d6"), 2_030);
    ok(&mut g, Red, mv("g4", "g3"), 2_040);
    assert_eq!(g.lapsed(Red), 0);
    ok(&mut g, Black, mv("b1", "b2"), 2_050);
    g.advance(3_050);
    assert!(g.is_playing());
}

#[test]
fn two_idle_players_end_the_game_on_rings() {
    let mut g = Game::new(Settings::blitz(Level::Two));
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    ok(&mut g, Red, mv("g4", "g3"), 20); // Red has dropped two rings, Black one
                                         // Black 1020, Red 2020, Black 3020, Red 4020, Black 5020: his third lapse.
    let e = g.advance(5_019);
    assert!(ended(&e).is_none());
    let e = g.advance(5_020);
    let outcome = ended(&e).expect("ended");
    assert_eq!(outcome.reason, EndReason::BothIdle);
    assert_eq!(outcome.decision, Decision::Rings);
    assert_eq!(outcome.winner, Some(Red));
    assert_eq!(outcome.rings, Rings { red: 30, black: 31 });
}

#[test]
fn an_idle_player_without_a_first_move_aborts() {
    // Turn limit shorter than the abort: Red never moves, Black does.
    let mut g = Game::new(Settings {
        turn_limit_ms: Some(100),
        abort_ms: 3_600_000,
        ..Settings::blitz(Level::Two)
    });
    g.advance(100); // Red lapses, Black on turn
    ok(&mut g, Black, mv("a1", "b1"), 150);
    g.advance(250);
    ok(&mut g, Black, mv("g1", "f1"), 260);
    let e = g.advance(360);
    assert_eq!(
        e.last(),
        Some(&Event::GameAborted {
            at: 360,
            reason: AbortReason::NoFirstMove { player: Red }
        })
    );
}

#[test]
fn both_absent_ends_as_at_the_end_or_aborts() {
    // Nobody has moved: aborted.
    let mut g = Game::new(Settings::blitz(Level::Three));
    assert_eq!(
        g.end_both_absent(50),
        vec![Event::GameAborted {
            at: 50,
            reason: AbortReason::BothAbsent
        }]
    );
    // Only Red has moved: still aborted, Black's game had not begun.
    let mut g = Game::new(Settings::blitz(Level::Three));
    ok(&mut g, Red, mv("d1", "d2"), 0);
    assert!(matches!(g.status(), Status::Playing));
    assert!(matches!(
        g.end_both_absent(50).as_slice(),
        [Event::GameAborted {
            at: 50,
            reason: AbortReason::BothAbsent
        }]
    ));
    // Both moved: fewer rings wins.
    let mut g = Game::new(Settings::blitz(Level::Two));
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv_nodrop("a1", "b1"), 10);
    let e = g.end_both_absent(100);
    let outcome = ended(&e).expect("ended").clone();
    assert_eq!(outcome.reason, EndReason::BothAbsent);
    assert_eq!(
        (outcome.winner, outcome.decision),
        (Some(Red), Decision::Rings)
    );
    assert_eq!(outcome.ended_at_ms, 100);
    // Equal rings at Level 2: the tiebreak (X, flipped at 0, dies first; A at 10 lasts).
    let mut g = Game::new(Settings::blitz(Level::Two));
    ok(&mut g, Red, mv("d1", "d2"), 0);
    ok(&mut g, Black, mv("a1", "b1"), 10);
    let e = g.end_both_absent(100);
    let outcome = ended(&e).expect("ended");
    assert_eq!(outcome.decision, Decision::Tiebreak);
    assert_eq!(outcome.winner, Some(Black));
    // Over already: nothing more.
    assert!(g.end_both_absent(200).is_empty());
}

fn mv_nodrop(from: &str, to: &str) -> Action {
    Action::Move {
        from: s(from),
        to: s(to),
        drop: false,
    }
}

/// Settings to play random games with: short timers, every level and set-up, with and
/// without a turn limit.
fn random_settings(rng: &mut impl Rng) -> Settings {
    let level = [Level::One, Level::Two, Level::Three][rng.gen_range(0..3)];
    let mut settings = Settings::blitz(level);
    settings.abort_ms = [300, 3_000][rng.gen_range(0..2)];
    settings.turn_limit_ms = [None, Some(400), Some(1_000)][rng.gen_range(0..3)];
    if rng.gen_bool(0.2) {
        settings.setup = Setup::Placement;
    }
    settings
}

/// From any point of a random game (moves, drops, claims, flips, holds), two players who
/// say nothing more see the game end within [`silent_bound`], by a bound of the rules.
#[test]
fn two_silent_players_see_their_game_end_within_the_bound() {
    let mut silent = 0;
    for seed in 0..400u64 {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut g = Game::new(random_settings(&mut rng));
        let steps = rng.gen_range(0..80);
        let mut t = 0;
        let mut last = 0;
        for _ in 0..steps {
            t += rng.gen_range(0..150);
            g.advance(t);
            if !g.is_playing() {
                break;
            }
            let p = if rng.gen_bool(0.5) { Red } else { Black };
            let acts: Vec<Action> = g
                .legal_actions(p)
                .into_iter()
                .filter(|a| match a {
                    Action::Resign => false,
                    // Onto a full socket loses at once: not the silence we test.
                    Action::Move { to, .. } | Action::Release { to } => !g.is_full(*to),
                    _ => true,
                })
                .collect();
            if acts.is_empty() {
                continue;
            }
            let a = acts[rng.gen_range(0..acts.len())];
            ok(&mut g, p, a, t);
            last = t;
        }
        if !g.is_playing() {
            continue;
        }
        let bound = silent_bound(&g);
        // From the last action (the loop may have advanced a little past it).
        let from = last;
        assert!(from + bound >= g.now());
        g.advance(from + bound);
        assert!(
            !g.is_playing(),
            "seed {seed}: still playing {bound} ms after {from}: {:?}",
            g.settings()
        );
        if let Some(o) = g.outcome() {
            assert!(o.ended_at_ms <= from + bound);
        }
        silent += 1;
    }
    // Most random points are still playing when the players fall silent.
    assert!(silent > 200, "only {silent} games tested");
}
