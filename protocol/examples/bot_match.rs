//! The bot levels against each other: `cargo run --release -p tamsk-protocol --example
//! bot_match [GAMES]` plays GAMES (default 100) Level 3 games at the rules' own speeds
//! (3-minute hourglasses, 15-second timer) of hard against normal, then easy against
//! normal, colours alternating, and prints the scores (a win 1, a draw ½).
//!
//! Deterministic bots would play the same two games a hundred times: each game opens with
//! two random moves per side (seeded by the game's number), then the bots take over.

use protocol::bot::{step, BotConfig, BotLevel};
use protocol::game::{Action, Game, Player, Status};
use protocol::settings::{Level, Settings};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Plays one game; returns the winner (None: a draw or an abort).
fn play(red: &BotConfig, black: &BotConfig, seed: u64) -> Option<Player> {
    let mut g = Game::new(Settings::level(Level::Three));
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut now = 0;
    for _ in 0..4 {
        let p = g.turn();
        let moves: Vec<Action> = g
            .legal_actions(p)
            .into_iter()
            .filter(|a| matches!(a, Action::Move { drop: true, .. }))
            .collect();
        now += 1_000;
        let a = *moves.choose(&mut rng).expect("a move in the opening");
        g.apply(p, a, now).expect("legal");
    }
    let mut steps = 0;
    while g.is_playing() {
        steps += 1;
        assert!(steps < 200_000, "the game should end");
        now = step(&mut g, now, [red, black]).expect("the bot's action is legal");
    }
    match g.status() {
        Status::Finished { outcome } => outcome.winner,
        _ => None,
    }
}

/// `a`'s score against `b` over `games` games, colours alternating: (points, wins, draws).
fn score(a: BotLevel, b: BotLevel, games: u64) -> (f64, u64, u64) {
    let (ca, cb) = (a.config(), b.config());
    let (mut wins, mut draws) = (0, 0);
    for i in 0..games {
        let a_is_red = i % 2 == 0;
        let winner = if a_is_red {
            play(&ca, &cb, i)
        } else {
            play(&cb, &ca, i)
        };
        let a_seat = if a_is_red { Player::Red } else { Player::Black };
        match winner {
            Some(w) if w == a_seat => wins += 1,
            Some(_) => {}
            None => draws += 1,
        }
    }
    (wins as f64 + draws as f64 / 2.0, wins, draws)
}

fn main() {
    let games: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    for (a, b) in [
        (BotLevel::Hard, BotLevel::Normal),
        (BotLevel::Easy, BotLevel::Normal),
    ] {
        let started = std::time::Instant::now();
        let (points, wins, draws) = score(a, b, games);
        println!(
            "{a:?} against {b:?}: {points} of {games} ({wins} wins, {draws} draws, {} losses) in {:.1} s",
            games - wins - draws,
            started.elapsed().as_secs_f64()
        );
    }
}
