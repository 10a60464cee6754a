//! Lag measured from the server's side: websocket Ping frames, which every client answers
//! with a Pong (ours or not, without any code of its own), timed from the write to the
//! answer and smoothed. A client may report its own estimate too; it is never trusted
//! beyond the server's.

use std::sync::Mutex;

use tokio::time::Instant;

/// The ping in flight of one connection, shared by its writer (which sends it) and its
/// reader (which reads the answer).
#[derive(Default)]
pub struct Pinger {
    sent: Mutex<Sent>,
}

#[derive(Default)]
struct Sent {
    /// The newest nonce given out (written or held).
    last: u64,
    /// Nonce and write instant of the ping awaiting its pong.
    flight: Option<(u64, Instant)>,
}

impl Pinger {
    /// The payload of a new ping, written now. An unanswered earlier ping is given up.
    pub fn next(&self) -> [u8; 8] {
        let payload = self.next_held();
        self.written(&payload);
        payload
    }

    /// The payload of a new ping that is not written yet: it is timed from
    /// [`Pinger::written`], and the ping in flight is answerable until then.
    pub fn next_held(&self) -> [u8; 8] {
        let mut sent = self.sent.lock().expect("ping lock");
        sent.last += 1;
        sent.last.to_be_bytes()
    }

    /// The ping of `payload` goes to the socket now (unless a newer one replaced it): an
    /// unanswered earlier ping is given up.
    pub fn written(&self, payload: &[u8]) {
        let mut sent = self.sent.lock().expect("ping lock");
        if sent.last.to_be_bytes() == payload {
            sent.flight = Some((sent.last, Instant::now()));
        }
    }

    /// The round trip of the ping that `payload` answers, if it answers the one in flight.
    pub fn answer(&self, payload: &[u8], at: Instant) -> Option<u64> {
        let mut sent = self.sent.lock().expect("ping lock");
        let nonce = u64::from_be_bytes(payload.try_into().ok()?);
        match sent.flight {
            Some((n, t)) if n == nonce => {
                sent.flight = None;
                Some(at.saturating_duration_since(t).as_millis() as u64)
            }
            _ => None,
        }
    }
}

/// A connection's lag estimate: round trips smoothed, a rise by half of the difference,
/// a fall by a quarter: a connection that got worse is followed within a measurement or
/// two (each one it is behind can cost its player a turn: a round trip gone from 40 to 300
/// ms was estimated 106, 155, 192 with a quarter each way, and he lost four turns), one
/// that got better is let down slowly (too much compensation costs the opponent little
/// and is bounded by the quota). What the client says of itself lowers it at once, once:
/// the measurements after it move it again (it was a cap for good, and a client that said
/// 0 was judged with 0 whatever its connection did).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LagEstimate {
    smoothed_ms: Option<u64>,
}

impl LagEstimate {
    pub fn observe(&mut self, rtt_ms: u64) {
        self.smoothed_ms = Some(match self.smoothed_ms {
            None => rtt_ms,
            Some(s) if rtt_ms > s => (s + rtt_ms).div_ceil(2),
            Some(s) => (3 * s + rtt_ms + 2) / 4,
        });
    }

    /// The client's own figure: it can only lower the estimate (and only one the server
    /// has: nothing measured, nothing claimed counts).
    pub fn client_says(&mut self, lag_ms: u64) {
        if let Some(s) = self.smoothed_ms.as_mut() {
            *s = (*s).min(lag_ms);
        }
    }

    /// What the games judge with: `None` until the server measured once.
    pub fn ms(&self) -> Option<u64> {
        self.smoothed_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pong_answers_only_the_ping_in_flight() {
        let p = Pinger::default();
        let first = p.next();
        let second = p.next();
        let now = Instant::now();
        assert_eq!(p.answer(&first, now), None, "given up for the second");
        assert_eq!(p.answer(b"junk", now), None);
        assert_eq!(p.answer(&second, now), Some(0));
        assert_eq!(p.answer(&second, now), None, "answered once");
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_ping_is_timed_from_its_write_and_unanswerable_before() {
        let p = Pinger::default();
        let held = p.next_held();
        assert_eq!(p.answer(&held, Instant::now()), None, "not written yet");
        tokio::time::advance(std::time::Duration::from_millis(300)).await;
        p.written(&held);
        tokio::time::advance(std::time::Duration::from_millis(40)).await;
        assert_eq!(p.answer(&held, Instant::now()), Some(40), "from the write");
        // The ping in flight is answered while a newer one is held, not once it is written.
        let flying = p.next();
        let newer = p.next_held();
        assert_eq!(
            p.answer(&flying, Instant::now()),
            Some(0),
            "still in flight"
        );
        let flying = p.next();
        let held = p.next_held();
        p.written(&held);
        assert_eq!(p.answer(&flying, Instant::now()), None, "given up");
        assert_eq!(p.answer(&newer, Instant::now()), None, "never written");
        // A write of a ping given up for a newer one times nothing.
        let old = p.next_held();
        let new = p.next_held();
        p.written(&old);
        assert_eq!(p.answer(&new, Instant::now()), None);
        assert_eq!(p.answer(&old, Instant::now()), None);
    }

    #[test]
    fn the_estimate_is_smoothed_and_a_client_can_only_lower_it() {
        let mut e = LagEstimate::default();
        assert_eq!(e.ms(), None);
        e.client_says(2_000);
        assert_eq!(e.ms(), None, "nothing measured: nothing claimed counts");
        e.observe(100);
        assert_eq!(e.ms(), Some(100));
        e.observe(300);
        assert_eq!(e.ms(), Some(200), "a rise counts a half");
        e.observe(100);
        assert_eq!(e.ms(), Some(175), "a fall a quarter");
        e.client_says(40);
        assert_eq!(e.ms(), Some(40));
        e.client_says(5_000);
        assert_eq!(e.ms(), Some(40), "never trusted beyond the server's");
        // The client's figure is not a cap: the measurements after it count.
        e.observe(300);
        assert_eq!(e.ms(), Some(170));
    }

    /// A round trip that goes from 40 to 300 ms is followed within three measurements to
    /// 90% (with a quarter each, seven).
    #[test]
    fn a_worse_connection_is_followed_quickly() {
        let mut e = LagEstimate::default();
        for _ in 0..10 {
            e.observe(40);
        }
        let mut seen = Vec::new();
        for _ in 0..3 {
            e.observe(300);
            seen.push(e.ms().unwrap());
        }
        assert_eq!(seen, [170, 235, 268]);
    }
}
