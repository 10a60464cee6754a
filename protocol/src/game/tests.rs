//! One test per rule of the rules page, each asserting the exact events and state.
//!
//! Here: the helpers the tests share; the tests, by section of the rules page, are in
//! submodules.

use super::*;
use crate::settings::GameClock;

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

fn mv_nodrop(from: &str, to: &str) -> Action {
    Action::Move {
        from: s(from),
        to: s(to),
        drop: false,
    }
}

fn blitz(level: Level) -> Game {
    Game::new(Settings::blitz(level))
}

fn ok(g: &mut Game, p: Player, a: Action, t: u64) -> Vec<Event> {
    g.apply(p, a, t)
        .unwrap_or_else(|e| panic!("{p} {a:?} at {t}: {e}"))
}

/// Applies an action that must be refused, and checks that nothing changed: not even the
/// game's instant.
fn refused(g: &mut Game, p: Player, a: Action, t: u64) -> ActionError {
    let expected = g.clone();
    let err = g.apply(p, a, t).expect_err("action should be refused");
    assert_eq!(*g, expected, "a refused action changed the game");
    err
}

fn has(events: &[Event], pred: impl Fn(&Event) -> bool) -> bool {
    events.iter().any(pred)
}

use Player::{Black, Red};

/// Fills a socket with rings taken from the players' holders (test set-up only).
fn fill(g: &mut Game, sq: &str) {
    let sq = s(sq);
    while !g.is_full(sq) {
        g.rings[sq.index()] += 1;
        let i = if g.holders[0] >= g.holders[1] { 0 } else { 1 };
        g.holders[i] -= 1;
    }
    g.positions.clear();
}

/// Moves a glass to a square directly (test set-up only).
fn put(g: &mut Game, glass: char, sq: &str) {
    let glass = Glass::from_label(glass).unwrap();
    if let Some(old) = g.glasses[glass.index()].square {
        g.occupant[old.index()] = None;
    }
    g.occupant[s(sq).index()] = Some(glass);
    g.glasses[glass.index()].square = Some(s(sq));
    g.positions.clear();
}

/// Fills every socket except `open` (test set-up only).
fn fill_all_but(g: &mut Game, open: &[&str]) {
    for sq in Square::ALL {
        let name = sq.to_string();
        if !open.contains(&name.as_str()) {
            fill(g, &name);
        }
    }
}

fn ring_total(g: &Game) -> u32 {
    g.rings.iter().map(|&r| r as u32).sum::<u32>() + g.holders[0] as u32 + g.holders[1] as u32
}

mod board;
mod end;
mod hourglasses;
mod limits;
mod moves;
mod neutral;
mod whole_games;
