//! The hard bot's search: alpha-beta over the engine's own moves ([`Game::legal_actions`]
//! and [`Game::apply`] on clones), five plies deep (its move, the reply, and so on),
//! each ply `ply_ms` after the previous one so that the sand runs as it will. Leaves are
//! scored with [`crate::bot::evaluate`].

use crate::bot::evaluate;
use crate::game::{Action, Game, Player};

/// Plies searched. At 5, hard beats normal in 85 of 100 games (3 in 77, 4 in 76:
/// `cargo run --release -p tamsk-protocol --example bot_match`), at a few milliseconds a
/// move in a release build.
pub const DEPTH: u32 = 5;

/// The move among `moves` (the bot's, on turn at `now`) that the search rates best.
pub fn best_move(g: &Game, me: Player, now: u64, moves: &[&Action], ply_ms: u64) -> Option<Action> {
    let ply_ms = ply_ms.max(100);
    let mut best: Option<(i64, Action)> = None;
    let mut alpha = i64::MIN + 1;
    for &&action in moves {
        let mut after = g.clone();
        if after.apply(me, action, now).is_err() {
            continue;
        }
        let score = value(&after, me, now + ply_ms, ply_ms, DEPTH - 1, alpha, i64::MAX);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, action));
            alpha = alpha.max(score);
        }
    }
    best.map(|(_, a)| a)
}

/// The moves that make a turn: a whole move that drops (or a placement that drops).
fn turn_moves(g: &Game, p: Player) -> Vec<Action> {
    g.legal_actions(p)
        .into_iter()
        .filter(|a| {
            matches!(
                a,
                Action::Move { drop: true, .. } | Action::Place { drop: true, .. }
            )
        })
        .collect()
}

/// The position's value for `me` with `depth` plies left, whoever is on turn at `now`.
fn value(
    g: &Game,
    me: Player,
    now: u64,
    ply_ms: u64,
    depth: u32,
    mut alpha: i64,
    mut beta: i64,
) -> i64 {
    let mut g = g.clone();
    g.advance(now.max(g.now()));
    let now = g.now();
    if depth == 0 || !g.is_playing() {
        return evaluate(&g, me, now);
    }
    let mover = g.turn();
    // A claim or a drop the mover is owed comes first; the search only looks at moves.
    let moves = turn_moves(&g, mover);
    if moves.is_empty() {
        return evaluate(&g, me, now);
    }
    let maximise = mover == me;
    let mut best = if maximise { i64::MIN + 1 } else { i64::MAX };
    for action in moves {
        let mut after = g.clone();
        if after.apply(mover, action, now).is_err() {
            continue;
        }
        let v = value(&after, me, now + ply_ms, ply_ms, depth - 1, alpha, beta);
        if maximise {
            best = best.max(v);
            alpha = alpha.max(v);
        } else {
            best = best.min(v);
            beta = beta.min(v);
        }
        if alpha >= beta {
            break;
        }
    }
    best
}
