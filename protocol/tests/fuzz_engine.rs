//! A fuzzer of the engine's `apply` and `advance`: random games in which random players
//! send any action at all (legal or not, often out of turn) at random instants (sometimes
//! in the past), with plain time passing in between. The engine must never panic, refuse
//! without changing anything, keep its rings, and never go back in time.
//!
//! In the suite: a few hundred games. As a bench: `scripts/fuzz.sh` (or
//! `TAMSK_FUZZ_EXECS=10000000 cargo test --release -p tamsk-protocol --test fuzz_engine --
//! --nocapture`) runs until that many calls of `apply` and `advance` were made, and
//! prints the figures.

mod common;

use std::time::Instant;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use protocol::board::Square;
use protocol::game::{Action, Game, Glass, Player};
use protocol::settings::{FullSocket, Level, Settings, Setup};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Calls of `apply` or `advance` to make: `TAMSK_FUZZ_EXECS`, or a quick run.
fn target() -> u64 {
    std::env::var("TAMSK_FUZZ_EXECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn any_action(rng: &mut SmallRng) -> Action {
    let sq = |rng: &mut SmallRng| Square::ALL[rng.gen_range(0..Square::ALL.len())];
    match rng.gen_range(0..10) {
        0 => Action::Start { from: sq(rng) },
        1 => Action::Release { to: sq(rng) },
        2 | 3 => Action::Move {
            from: sq(rng),
            to: sq(rng),
            drop: rng.gen(),
        },
        4 => Action::Place {
            glass: Glass::ALL[rng.gen_range(0..Glass::ALL.len())],
            to: sq(rng),
            drop: rng.gen(),
        },
        5 => Action::Drop,
        6 => Action::Claim,
        7 => Action::PenaltyDrop { at: sq(rng) },
        8 => Action::Flip,
        _ if rng.gen_bool(0.1) => Action::Resign,
        _ => Action::Drop,
    }
}

fn rings(game: &Game) -> u32 {
    let on_board: u32 = Square::ALL.iter().map(|&s| game.rings_on(s) as u32).sum();
    on_board + game.rings().red as u32 + game.rings().black as u32
}

/// Plays one fuzzed game; returns the calls made.
fn fuzz_game(settings: Settings, seed: u64) -> u64 {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = Game::new(settings);
    let mut calls = 0;
    for _ in 0..400 {
        let now = game.now();
        // Mostly forward, sometimes a long jump, sometimes the past.
        let at = match rng.gen_range(0..20) {
            0 => now.saturating_sub(rng.gen_range(0..500)),
            1 => now + rng.gen_range(0..20_000),
            _ => now + rng.gen_range(0..80),
        };
        calls += 1;
        if rng.gen_bool(0.2) {
            game.advance(at.max(now));
        } else {
            let player = if rng.gen() {
                Player::Red
            } else {
                Player::Black
            };
            let action = if rng.gen_bool(0.5) {
                let legal = game.legal_actions(player);
                common::pick(&game, &legal, &mut rng).unwrap_or_else(|| any_action(&mut rng))
            } else {
                any_action(&mut rng)
            };
            let before = game.clone();
            if game.apply(player, action, at).is_err() {
                assert_eq!(game, before, "a refused {action:?} changed the game");
            }
        }
        assert!(game.now() >= now, "time went back");
        assert_eq!(rings(&game), 64, "rings are conserved");
        if !game.is_playing() {
            break;
        }
    }
    calls
}

#[test]
fn engine_survives_any_actions_at_any_instants() {
    let target = target();
    let mut runner = TestRunner::new(Config {
        cases: u32::MAX,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (1u8..=3, any::<bool>(), any::<bool>(), any::<u64>());
    let began = Instant::now();
    let (mut calls, mut games) = (0u64, 0u64);
    while calls < target {
        let tree = strategy.new_tree(&mut runner).expect("a case");
        let (level, placement, reject, seed) = tree.current();
        let mut settings = Settings::blitz(Level::try_from(level).unwrap());
        if placement {
            settings.setup = Setup::Placement;
        }
        if reject {
            settings.full_socket = FullSocket::Reject;
        }
        let case = std::panic::catch_unwind(|| fuzz_game(settings.clone(), seed));
        match case {
            Ok(n) => calls += n,
            Err(_) => panic!("engine fuzz failed: settings {settings:?}, seed {seed}"),
        }
        games += 1;
    }
    let secs = began.elapsed().as_secs_f64();
    eprintln!(
        "engine fuzz: {calls} apply/advance calls in {games} games, {secs:.1} s ({:.0} calls/s), no failure",
        calls as f64 / secs
    );
}
