//! The server's game time as seen from here.
//!
//! Every snapshot and event carries `now_ms`, the server's game time when it was sent. It
//! arrives a one-way delay later, so `arrival - now_ms` is the local instant at which the
//! game started, plus that delay. The smallest such value over all messages is the best
//! estimate (delays only ever make it later); half the measured round trip is added back
//! as the one-way delay. Between messages the sand is projected from that estimate, so it
//! runs down smoothly and is corrected whenever a faster message arrives.

use std::time::{Duration, Instant};

/// Game time estimate for one game.
#[derive(Clone, Debug)]
pub struct GameClock {
    /// Local reference instant: all local times are ms since it.
    base: Instant,
    /// min over messages of (local arrival ms - server now_ms): the game's start in local
    /// ms, plus the smallest one-way delay seen.
    origin_ms: Option<i64>,
    /// The latest server time seen: the estimate never goes below it.
    last_server_ms: u64,
    /// Estimated one-way delay (half the smallest measured round trip).
    one_way_ms: u64,
}

impl GameClock {
    pub fn new(base: Instant) -> GameClock {
        GameClock {
            base,
            origin_ms: None,
            last_server_ms: 0,
            one_way_ms: 0,
        }
    }

    fn local_ms(&self, at: Instant) -> i64 {
        if at >= self.base {
            at.duration_since(self.base).as_millis() as i64
        } else {
            -(self.base.duration_since(at).as_millis() as i64)
        }
    }

    /// A message stamped `server_ms` (game time) arrived at `arrival`.
    pub fn observe(&mut self, server_ms: u64, arrival: Instant) {
        let origin = self.local_ms(arrival) - server_ms as i64;
        self.origin_ms = Some(self.origin_ms.map_or(origin, |o| o.min(origin)));
        self.last_server_ms = self.last_server_ms.max(server_ms);
    }

    /// A measured round trip (the smallest one is the best estimate of the delay).
    pub fn round_trip(&mut self, rtt: Duration) {
        let half = rtt.as_millis() as u64 / 2;
        self.one_way_ms = if self.one_way_ms == 0 {
            half
        } else {
            self.one_way_ms.min(half)
        };
    }

    /// Estimated game time at `at`.
    pub fn game_ms(&self, at: Instant) -> u64 {
        let Some(origin) = self.origin_ms else {
            return self.last_server_ms;
        };
        let est = self.local_ms(at) - origin + self.one_way_ms as i64;
        (est.max(0) as u64).max(self.last_server_ms)
    }

    /// The estimated one-way delay from the server.
    pub fn one_way_ms(&self) -> u64 {
        self.one_way_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projects_from_the_first_message() {
        let t0 = Instant::now();
        let mut c = GameClock::new(t0);
        c.observe(1_000, t0 + Duration::from_millis(50));
        assert_eq!(c.game_ms(t0 + Duration::from_millis(50)), 1_000);
        assert_eq!(c.game_ms(t0 + Duration::from_millis(550)), 1_500);
    }

    #[test]
    fn a_late_message_does_not_slow_the_clock_and_a_fast_one_corrects_it() {
        let t0 = Instant::now();
        let mut c = GameClock::new(t0);
        // Sent at game time 1000, arrived 80 ms late.
        c.observe(1_000, t0 + Duration::from_millis(80));
        // Sent at 2000, arrived after only 10 ms: the estimate moves 70 ms forward.
        c.observe(2_000, t0 + Duration::from_millis(1_010));
        assert_eq!(c.game_ms(t0 + Duration::from_millis(1_010)), 2_000);
        // Another late one changes nothing.
        c.observe(3_000, t0 + Duration::from_millis(2_200));
        assert_eq!(c.game_ms(t0 + Duration::from_millis(2_210)), 3_200);
    }

    #[test]
    fn half_the_round_trip_is_added_and_the_server_time_is_a_floor() {
        let t0 = Instant::now();
        let mut c = GameClock::new(t0);
        c.observe(500, t0);
        c.round_trip(Duration::from_millis(40));
        assert_eq!(c.game_ms(t0 + Duration::from_millis(100)), 620);
        c.round_trip(Duration::from_millis(100));
        assert_eq!(c.one_way_ms(), 20, "the smallest round trip counts");
        assert_eq!(GameClock::new(t0).game_ms(t0), 0);
    }

    #[test]
    fn before_the_base_instant_is_fine() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let mut c = GameClock::new(t0);
        c.observe(100, t0 - Duration::from_secs(1));
        assert_eq!(c.game_ms(t0), 1_100);
    }
}
