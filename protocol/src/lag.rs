//! Lag compensation: bounded credit for a player's network delay, after lichess's
//! `LagTracker` (scalachess).
//!
//! A player far from the server sees each event late and his answer arrives late: on a
//! 15-second timer, a drop grace or a late-release bound he would pay his network's delay
//! and a player next to the server would not. So every deadline that *judges* a player
//! (the timer targeting his turn, his late-release bound, his drop grace, his turn limit,
//! his game clock, his first-move abort) fires only after his available compensation
//! `min(lag, quota)` has passed, and an action of his that beat a deadline only thanks to
//! that extension is charged what it used against his quota. Hourglass sand is physics
//! and is never compensated: a glass dies at the same instant for everyone.
//!
//! The quota bounds what a player who fakes lag can gain: it starts at [`QUOTA_START_MS`],
//! grows by [`QUOTA_GAIN_MS`] with each completed move and is capped at [`QUOTA_CAP_MS`]
//! (lichess: starts at 3 gains, capped at 7). The lag is the server's own estimate of
//! the player's round trip (both legs: he sees the event one way late and his answer
//! comes back the other), given to the engine as a recorded entry, so a replay judges
//! exactly as the server did.

use serde::{Deserialize, Serialize};

/// Quota gained with each completed move (a release or a placement).
pub const QUOTA_GAIN_MS: u64 = 300;
/// Quota at the start of a game: three gains.
pub const QUOTA_START_MS: u64 = 3 * QUOTA_GAIN_MS;
/// The most quota a player can hold: seven gains.
pub const QUOTA_CAP_MS: u64 = 7 * QUOTA_GAIN_MS;
/// The largest lag estimate the engine takes; more is cut to this.
pub const LAG_MAX_MS: u64 = 5_000;

/// One player's compensation state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Credit {
    /// The latest lag estimate (round trip, ms).
    pub lag_ms: u64,
    /// What is left to compensate with.
    pub quota_ms: u64,
    /// Compensation used so far in this game.
    pub used_ms: u64,
}

impl Default for Credit {
    fn default() -> Credit {
        Credit {
            lag_ms: 0,
            quota_ms: QUOTA_START_MS,
            used_ms: 0,
        }
    }
}

impl Credit {
    /// How far a deadline judging this player is pushed back now.
    pub fn available(self) -> u64 {
        self.lag_ms.min(self.quota_ms)
    }

    /// Charges what an action used (at most what was available).
    pub fn charge(&mut self, used_ms: u64) -> u64 {
        let used = used_ms.min(self.available());
        self.quota_ms -= used;
        self.used_ms += used;
        used
    }

    /// A completed move earns a gain, up to the cap.
    pub fn gain(&mut self) {
        self.quota_ms = (self.quota_ms + QUOTA_GAIN_MS).min(QUOTA_CAP_MS);
    }

    pub fn set_lag(&mut self, lag_ms: u64) {
        self.lag_ms = lag_ms.min(LAG_MAX_MS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_bounds_what_a_large_lag_gets() {
        let mut c = Credit::default();
        c.set_lag(2_000);
        assert_eq!(c.available(), QUOTA_START_MS);
        assert_eq!(c.charge(2_000), QUOTA_START_MS);
        assert_eq!(c.available(), 0);
        c.gain();
        assert_eq!(c.available(), QUOTA_GAIN_MS);
        for _ in 0..20 {
            c.gain();
        }
        assert_eq!(c.quota_ms, QUOTA_CAP_MS);
        assert_eq!(c.available(), 2_000, "the lag, now under the cap");
    }

    #[test]
    fn an_honest_lag_is_covered_move_after_move() {
        let mut c = Credit::default();
        c.set_lag(300);
        for _ in 0..100 {
            assert_eq!(c.charge(300), 300);
            c.gain();
        }
        assert_eq!(c.used_ms, 30_000);
    }
}
