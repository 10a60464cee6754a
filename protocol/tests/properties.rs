//! Invariants of the rules engine over random games of every level and set-up.

mod common;

use common::random_step;
use proptest::prelude::*;
use protocol::board::Square;
use protocol::game::{Action, Game, Glass, Player, Status};
use protocol::settings::{FullSocket, Level, Settings, Setup};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn settings(level: u8, placement: bool, reject: bool) -> Settings {
    let mut s = Settings::blitz(Level::try_from(level).unwrap());
    if placement {
        s.setup = Setup::Placement;
    }
    if reject {
        s.full_socket = FullSocket::Reject;
    }
    s
}

fn any_settings() -> impl Strategy<Value = Settings> {
    (1u8..=3, any::<bool>(), any::<bool>()).prop_map(|(l, p, r)| settings(l, p, r))
}

/// Every action a client could send, legal or not.
fn universe() -> Vec<Action> {
    let mut all = vec![Action::Drop, Action::Claim, Action::Flip, Action::Resign];
    for a in Square::ALL {
        all.push(Action::Start { from: a });
        all.push(Action::Release { to: a });
        all.push(Action::PenaltyDrop { at: a });
        for b in Square::ALL {
            all.push(Action::Move {
                from: a,
                to: b,
                drop: true,
            });
            all.push(Action::Move {
                from: a,
                to: b,
                drop: false,
            });
        }
        for g in Glass::ALL {
            all.push(Action::Place {
                glass: g,
                to: a,
                drop: true,
            });
            all.push(Action::Place {
                glass: g,
                to: a,
                drop: false,
            });
        }
    }
    all
}

fn check_invariants(game: &Game) {
    let on_board: u32 = Square::ALL.iter().map(|&s| game.rings_on(s) as u32).sum();
    let held = game.rings().red as u32 + game.rings().black as u32;
    assert_eq!(on_board + held, 64, "rings are conserved");
    for s in Square::ALL {
        assert!(game.rings_on(s) <= s.capacity(), "{s} over capacity");
        if let Some(g) = game.occupant(s) {
            assert_eq!(game.glass(g).square, Some(s), "occupant and glass agree");
        }
    }
    let placed = Glass::ALL
        .iter()
        .filter(|g| game.glass(**g).square.is_some())
        .count();
    let occupied = Square::ALL
        .iter()
        .filter(|s| game.occupant(**s).is_some())
        .count();
    assert_eq!(placed, occupied);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn rings_are_conserved_and_no_socket_overflows(settings in any_settings(), seed: u64) {
        let mut game = Game::new(settings);
        let mut rng = SmallRng::seed_from_u64(seed);
        for _ in 0..400 {
            random_step(&mut game, &mut rng);
            check_invariants(&game);
            if !game.is_playing() {
                break;
            }
        }
    }

    #[test]
    fn random_games_always_end_with_a_result(settings in any_settings(), seed: u64) {
        let mut game = Game::new(settings);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut steps = 0;
        while game.is_playing() {
            random_step(&mut game, &mut rng);
            steps += 1;
            prop_assert!(steps < 20_000, "game did not end: {:?}", game.status());
        }
        match game.status() {
            Status::Finished { outcome } => {
                prop_assert_eq!(outcome.rings, game.rings());
                if let Some(w) = outcome.winner {
                    let (mine, theirs) = match w {
                        Player::Red => (outcome.rings.red, outcome.rings.black),
                        Player::Black => (outcome.rings.black, outcome.rings.red),
                    };
                    if outcome.decision == protocol::game::Decision::Rings {
                        prop_assert!(mine < theirs);
                    }
                }
            }
            // A random player can hold his first move past the abort bound.
            Status::Aborted { .. } => {}
            Status::Playing => unreachable!(),
        }
        prop_assert_eq!(game.next_deadline(), None, "a finished game has nothing due");
    }

    #[test]
    fn advancing_in_slices_equals_one_advance(settings in any_settings(), seed: u64, slices in prop::collection::vec(1u64..700, 1..40)) {
        let mut game = Game::new(settings);
        let mut rng = SmallRng::seed_from_u64(seed);
        for _ in 0..rng.gen_range(0..60) {
            random_step(&mut game, &mut rng);
        }
        let start = game.now();
        let end = start + slices.iter().sum::<u64>();
        let mut once = game.clone();
        let events_once = once.advance(end);
        let mut sliced = game.clone();
        let mut events_sliced = Vec::new();
        let mut t = start;
        for d in &slices {
            t += d;
            events_sliced.extend(sliced.advance(t));
        }
        prop_assert_eq!(&events_once, &events_sliced);
        prop_assert_eq!(once, sliced);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every action the engine lists as legal is accepted; every other one is refused
    /// and changes nothing.
    #[test]
    fn legal_actions_are_exactly_the_accepted_ones(settings in any_settings(), seed: u64) {
        let universe = universe();
        let mut game = Game::new(settings);
        let mut rng = SmallRng::seed_from_u64(seed);
        for step in 0..120 {
            if !game.is_playing() {
                break;
            }
            if step % 8 == 0 {
                let now = game.now();
                for player in Player::BOTH {
                    let legal = game.legal_actions(player);
                    for action in &universe {
                        let mut trial = game.clone();
                        let result = trial.apply(player, *action, now);
                        let listed = legal.contains(action);
                        match result {
                            Ok(_) => prop_assert!(listed, "{player} {action:?} accepted but not listed"),
                            Err(e) => {
                                prop_assert!(!listed, "{player} {action:?} listed but refused: {e}");
                                prop_assert_eq!(&trial, &game, "refused {:?} changed the game", action);
                            }
                        }
                    }
                }
            }
            random_step(&mut game, &mut rng);
        }
    }
}
