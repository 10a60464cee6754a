//! A random player for property tests and benchmarks: shared by `tests/properties.rs`
//! and `benches/engine.rs`.
#![allow(dead_code)]

pub mod lagsim;

use protocol::game::{Action, Event, Game};
use rand::rngs::SmallRng;
use rand::Rng;

/// Whether an action moves an hourglass onto a full socket (a loss under `full_socket =
/// lose`): a random player avoids it nearly always, so games run to their natural end.
pub fn suicidal(game: &Game, action: &Action) -> bool {
    match action {
        Action::Move { to, .. } | Action::Release { to } => game.is_full(*to),
        // Picking up an hourglass whose only free neighbours are full forces a losing release.
        Action::Start { from } => !from
            .neighbours()
            .iter()
            .any(|&n| game.occupant(n).is_none() && !game.is_full(n)),
        Action::Resign => true,
        _ => false,
    }
}

/// Picks one of `player`'s legal actions at random, preferring sensible ones.
pub fn pick(game: &Game, legal: &[Action], rng: &mut SmallRng) -> Option<Action> {
    let sensible: Vec<Action> = legal
        .iter()
        .copied()
        .filter(|a| !suicidal(game, a))
        .collect();
    if !sensible.is_empty() && rng.gen_bool(0.995) {
        return Some(sensible[rng.gen_range(0..sensible.len())]);
    }
    let any: Vec<Action> = legal
        .iter()
        .copied()
        .filter(|a| *a != Action::Resign)
        .collect();
    (!any.is_empty()).then(|| any[rng.gen_range(0..any.len())])
}

/// One random step: a little time passes, then usually a legal action of a random player
/// (the one on turn more often), sometimes only time passing. Never resigns.
pub fn random_step(game: &mut Game, rng: &mut SmallRng) -> Vec<Event> {
    let at = game.now() + rng.gen_range(0..60);
    let mut events = game.advance(at);
    let now = game.now();
    let player = if rng.gen_bool(0.8) {
        game.turn()
    } else {
        game.turn().other()
    };
    let legal = game.legal_actions(player);
    if rng.gen_bool(0.85) {
        if let Some(action) = pick(game, &legal, rng) {
            let more = game
                .apply(player, action, now)
                .unwrap_or_else(|e| panic!("legal {action:?} refused: {e}"));
            events.extend(more);
            return events;
        }
    }
    let target = match game.next_deadline() {
        Some(t) if rng.gen_bool(0.2) => t,
        _ => now + rng.gen_range(1..400),
    };
    events.extend(game.advance(target));
    events
}
