//! Engine speed: applied moves per second (replaying pre-recorded games, so only the
//! engine is timed) and random playouts per second (legal-action generation included), on
//! one core, for Level 1 and Level 3. Prints figures; asserts nothing.
//!
//! Run: `cargo bench -p tamsk-protocol --bench engine`

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use protocol::game::{Action, Event, Game, Player};
use protocol::settings::{Level, Settings};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

type Script = Vec<(Player, Action, u64)>;

/// Plays random games that act promptly (mostly whole moves with a drop), recording
/// every accepted action with its instant.
fn record_games(settings: &Settings, count: usize, seed: u64) -> Vec<Script> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut scripts = Vec::with_capacity(count);
    while scripts.len() < count {
        let mut game = Game::new(settings.clone());
        let mut script = Script::new();
        while game.is_playing() && script.len() < 2_000 {
            let now = game.now() + rng.gen_range(1..20);
            game.advance(now);
            let player = game.turn();
            let legal: Vec<Action> = game
                .legal_actions(player)
                .into_iter()
                .filter(|a| {
                    matches!(
                        a,
                        Action::Move { drop: true, .. } | Action::Place { drop: true, .. }
                    )
                })
                .filter(|a| !common::suicidal(&game, a))
                .collect();
            let Some(&action) = legal.get(rng.gen_range(0..legal.len().max(1))) else {
                match game.next_deadline() {
                    Some(t) => game.advance(t),
                    None => break,
                };
                continue;
            };
            game.apply(player, action, now).expect("legal");
            script.push((player, action, now));
        }
        if game.move_count() > 0 {
            scripts.push(script);
        }
    }
    scripts
}

fn bench_apply(name: &str, settings: &Settings) {
    let scripts = record_games(settings, 2_000, 7);
    let moves: usize = scripts.iter().map(Vec::len).sum();
    let mut events: Vec<Event> = Vec::with_capacity(64);
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        for script in &scripts {
            let mut game = Game::new(settings.clone());
            for &(player, action, at) in script {
                events.clear();
                game.apply_into(player, action, at, &mut events)
                    .expect("replay");
                black_box(&events);
            }
            black_box(&game);
        }
        best = best.min(start.elapsed());
    }
    let per_sec = moves as f64 / best.as_secs_f64();
    println!(
        "{name:8} apply: {moves} moves in {} games, {:.1} ms -> {:.2} M moves/s ({:.0} ns/move)",
        scripts.len(),
        best.as_secs_f64() * 1e3,
        per_sec / 1e6,
        1e9 / per_sec
    );
}

fn bench_playouts(name: &str, settings: &Settings) {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut legal = Vec::with_capacity(256);
    let mut events = Vec::with_capacity(64);
    let budget = Duration::from_secs(2);
    let start = Instant::now();
    let (mut games, mut moves) = (0u64, 0u64);
    while start.elapsed() < budget {
        let mut game = Game::new(settings.clone());
        while game.is_playing() {
            let now = game.now() + rng.gen_range(1..20);
            game.advance_into(now, &mut events);
            let player = game.turn();
            game.legal_actions_into(player, &mut legal);
            legal.retain(|a| {
                matches!(
                    a,
                    Action::Move { drop: true, .. } | Action::Place { drop: true, .. }
                ) && !common::suicidal(&game, a)
            });
            if legal.is_empty() {
                match game.next_deadline() {
                    Some(t) => game.advance_into(t, &mut events),
                    None => break,
                }
                continue;
            }
            let action = legal[rng.gen_range(0..legal.len())];
            events.clear();
            game.apply_into(player, action, now, &mut events)
                .expect("legal");
        }
        games += 1;
        moves += game.move_count() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name:8} playouts: {games} games ({:.0} moves each) in {secs:.2} s -> {:.0} playouts/s, {:.2} M moves/s",
        moves as f64 / games as f64,
        games as f64 / secs,
        moves as f64 / secs / 1e6
    );
}

fn main() {
    // Level 1 as played online (no clock needed for the engine figure), and Level 3 with
    // the real 3-minute hourglasses and 15-second timer.
    let level1 = Settings {
        game_clock: None,
        ..Settings::level(Level::One)
    };
    let level3 = Settings::level(Level::Three);
    println!("TAMSK engine benchmark (one core)");
    bench_apply("level 1", &level1);
    bench_apply("level 3", &level3);
    bench_playouts("level 1", &level1);
    bench_playouts("level 3", &level3);
}
