//! Every deadline of the game as a countdown in words, and the alerts (bell and flash)
//! when time runs low for the player at the keyboard.
//!
//! The deadlines come from the engine ([`Game::deadlines`]), so the client shows exactly
//! what the server will enforce: drop grace, late-release bound, first-move abort, turn
//! limit (or idle bound). The sand of each hourglass and the 15-second timer have their
//! own bars; the opponent's reconnection grace comes from the seat.

use std::time::{Duration, Instant};

use protocol::game::{Due, Game, Player};

use crate::app::GameView;

/// A running deadline as shown: words, time left, whether it judges the viewer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Countdown {
    pub text: String,
    pub left_ms: u64,
    /// It judges (or threatens) the player at the keyboard.
    pub mine: bool,
}

/// How long a deadline stays listed at 0.0s once its instant is past.
const PAST_MS: u64 = 500;

/// Time left as a person reads it: `41.2s` under a minute, else `4:59`.
pub fn left(ms: u64) -> String {
    if ms < 60_000 {
        format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
    } else {
        let s = ms.div_ceil(1000);
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// The deadlines running at game time `now`, soonest first, from `me`'s point of view
/// (`None`: a watcher). The hourglasses' own sand and the 15-second timer are not listed:
/// they have their bars.
///
/// A deadline is the instant by which the server must *receive* an action (the engine's,
/// with the lag compensation of the player it judges). One that `me` must act before is
/// counted down to that instant less the way there, so that a key pressed at 0.0 still
/// arrives in time (counted to the server's instant, it arrived one delay late: a drop at
/// the screen's last tenth was refused, a late release missed): half the round trip the
/// server compensates him for (his seat's `lag`, or the clock's own estimate, whichever is
/// more), and a quarter of that again for its jitter (with half the smallest round trip
/// alone, one drop in three still came late through a link of 400 +/- 40 ms).
pub fn countdowns(view: &GameView, now: u64) -> Vec<Countdown> {
    let game = &view.replica;
    let me = view.seat;
    let mut out = Vec::new();
    if !game.is_playing() {
        return out;
    }
    let name = |p: Player| view.seat_view(p).name.clone();
    let seat_lag = me.and_then(|p| view.seat_view(p).lag_ms).unwrap_or(0);
    let way = view.clock.one_way_ms().max(seat_lag / 2);
    let one_way = way + way / 4;
    for (at, due, judged) in game.deadlines() {
        let acts_by = judged.is_some_and(|p| me == Some(p))
            || matches!(due, Due::DropGrace(mover) if me == Some(mover));
        let at = if acts_by {
            at.saturating_sub(one_way)
        } else {
            at
        };
        // Half a second past, a deadline is over for whoever reads the screen (the server
        // tells what it did, or, for a window that closed unused, nothing: a line stuck
        // at 0.0s stayed until the next event).
        if at + PAST_MS < now {
            continue;
        }
        let ms = at.saturating_sub(now);
        let text = match due {
            Due::Death(_) | Due::NeutralExpiry | Due::Clock => continue,
            Due::LateRelease => {
                let Some(p) = judged else { continue };
                if me == Some(p) {
                    format!("Put it down within {}", left(ms))
                } else {
                    format!("{} must put it down: {}", name(p), left(ms))
                }
            }
            Due::DropGrace(mover) => {
                let claim = game.window(mover).is_some_and(|w| w.claim_allowed);
                if me == Some(mover) {
                    format!("Drop within {}", left(ms))
                } else if me == Some(mover.other()) && claim {
                    format!("You may claim in {}", left(ms))
                } else {
                    format!("{} may drop: {}", name(mover), left(ms))
                }
            }
            Due::WindowClose(mover) => {
                format!("{}'s window closes: {}", name(mover), left(ms))
            }
            Due::Abort(p) => {
                if me == Some(p) {
                    format!("First move in {} or no game", left(ms))
                } else {
                    format!("{}: first move in {} or no game", name(p), left(ms))
                }
            }
            Due::TurnLimit => {
                let limit = if game.settings().turn_limit_ms.is_some() {
                    "limit"
                } else {
                    "idle bound"
                };
                match judged {
                    Some(p) if me == Some(p) => format!("Your turn: {limit} {}", left(ms)),
                    Some(p) => format!("{}'s turn: {limit} {}", name(p), left(ms)),
                    None => continue,
                }
            }
        };
        out.push(Countdown {
            text,
            left_ms: ms,
            mine: acts_by,
        });
    }
    // The opponent's reconnection grace, and the win one may claim after it.
    for p in Player::BOTH {
        let seat = view.seat_view(p);
        let Some(until) = seat.grace_until_ms.filter(|_| !seat.connected) else {
            continue;
        };
        if seat.grace_expired {
            continue;
        }
        let ms = until.saturating_sub(now);
        let text = if me == Some(p.other()) {
            format!("{} away: claim the win in {}", seat.name, left(ms))
        } else {
            format!("{} away: seat kept {}", seat.name, left(ms))
        };
        out.push(Countdown {
            text,
            left_ms: ms,
            mine: false,
        });
    }
    out.sort_by_key(|c| c.left_ms);
    out
}

/// The low-time warnings: the 15-second timer on the player's turn at 5 s, one of his
/// glasses at 10 s.
pub const TIMER_WARNING_MS: u64 = 5_000;
pub const GLASS_WARNING_MS: u64 = 10_000;
/// How long the screen flashes.
pub const FLASH: Duration = Duration::from_millis(400);

/// The warnings already given (each keyed by the deadline's instant, so that a new
/// flip gives a new warning) and the flash in progress.
#[derive(Clone, Debug, Default)]
pub struct Alerts {
    given: Vec<(u8, u64)>,
    pub flash_until: Option<Instant>,
}

impl Alerts {
    /// Checks the warnings at local instant `at` (game time `now`); true when a new one
    /// is due (the caller rings the bell) and the flash starts.
    pub fn check(&mut self, game: &Game, me: Option<Player>, now: u64, at: Instant) -> bool {
        let Some(me) = me.filter(|_| game.is_playing()) else {
            return false;
        };
        let mut due = Vec::new();
        let n = game.neutral();
        if game.neutral_judges() == Some(me) {
            let left = n.sand.remaining(now);
            if left > 0 && left <= TIMER_WARNING_MS {
                due.push((0, n.sand.empties_at()));
            }
        }
        if game.settings().level.timed() {
            for g in me.glasses() {
                let state = game.glass(g);
                let left = state.remaining(now);
                if let (true, Some(t)) = (state.started && !state.is_dead(), state.death_at()) {
                    if left > 0 && left <= GLASS_WARNING_MS {
                        due.push((1 + g.index() as u8, t));
                    }
                }
            }
        }
        let mut new = false;
        for key in due {
            if !self.given.contains(&key) {
                self.given.push(key);
                new = true;
            }
        }
        if new {
            self.flash_until = Some(at + FLASH);
        }
        new
    }

    /// Whether the screen flashes at `at`.
    pub fn flashing(&self, at: Instant) -> bool {
        self.flash_until.is_some_and(|t| at < t)
    }
}

impl crate::app::App {
    /// Checks the low-time warnings at `at`: true when the bell should ring now (a new
    /// warning, and the bell is on). The flash starts either way.
    pub fn check_alerts(&mut self, at: Instant) -> bool {
        let Some(g) = &self.game else { return false };
        let now = g.now_ms(at);
        let new = self.alerts.check(&g.replica, g.seat, now, at);
        new && self.bell
    }
}

#[cfg(test)]
#[path = "countdown_tests.rs"]
mod tests;
