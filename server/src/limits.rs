//! What a client may send: display names, message rate, strikes, connections per address.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use protocol::text::printable;

/// Longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 24;

/// Checks a display name: 1 to 24 characters, printable, no control or invisible
/// formatting characters, no leading or trailing whitespace.
pub fn validate_name(name: &str) -> Result<(), String> {
    let count = name.chars().count();
    if count == 0 {
        return Err("the name is empty".into());
    }
    if count > MAX_NAME_CHARS {
        return Err(format!(
            "the name has {count} characters; at most {MAX_NAME_CHARS} are allowed"
        ));
    }
    if let Some(c) = name.chars().find(|&c| !printable(c)) {
        return Err(format!(
            "the name contains an unprintable character U+{:04X}",
            c as u32
        ));
    }
    if name.trim() != name {
        return Err("the name starts or ends with whitespace".into());
    }
    Ok(())
}

/// Per-connection message rate limit plus a count of breaches.
pub struct Limiter {
    rate: DefaultDirectRateLimiter,
    strikes: u32,
    window_start: Instant,
    max_strikes: u32,
    window: Duration,
}

/// What to do with an incoming message.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refuse it with an error.
    Refuse,
    /// Too many breaches: close the connection.
    Close,
}

impl Limiter {
    pub fn new(per_sec: u32, burst: u32, max_strikes: u32, window: Duration) -> Limiter {
        let per_sec = NonZeroU32::new(per_sec.max(1)).expect("positive");
        let burst = NonZeroU32::new(burst.max(1)).expect("positive");
        Limiter {
            rate: RateLimiter::direct(Quota::per_second(per_sec).allow_burst(burst)),
            strikes: 0,
            window_start: Instant::now(),
            max_strikes,
            window,
        }
    }

    /// Counts one incoming message against the rate.
    pub fn message(&mut self) -> Verdict {
        if self.rate.check().is_ok() {
            Verdict::Allow
        } else {
            self.strike()
        }
    }

    /// Counts a breach (rate, size).
    pub fn strike(&mut self) -> Verdict {
        let now = Instant::now();
        if now.duration_since(self.window_start) > self.window {
            self.window_start = now;
            self.strikes = 0;
        }
        self.strikes += 1;
        if self.strikes > self.max_strikes {
            Verdict::Close
        } else {
            Verdict::Refuse
        }
    }
}

/// Open connections per client address.
#[derive(Default)]
pub struct ConnCounter {
    counts: DashMap<IpAddr, usize>,
}

/// One open connection of an address; counted until dropped.
pub struct IpGuard {
    counter: Arc<ConnCounter>,
    ip: IpAddr,
}

impl ConnCounter {
    /// Counts a new connection from `ip`, unless it already has `max`.
    pub fn acquire(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<IpGuard> {
        let mut entry = self.counts.entry(ip).or_insert(0);
        if *entry >= max {
            return None;
        }
        *entry += 1;
        Some(IpGuard {
            counter: self.clone(),
            ip,
        })
    }

    pub fn count(&self, ip: IpAddr) -> usize {
        self.counts.get(&ip).map_or(0, |c| *c)
    }
}

impl Drop for IpGuard {
    fn drop(&mut self) {
        self.counter.counts.remove_if_mut(&self.ip, |_, n| {
            *n -= 1;
            *n == 0
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(validate_name("Kris Burm").is_ok());
        assert!(validate_name("Éloïse-42").is_ok());
        assert!(validate_name("").unwrap_err().contains("empty"));
        assert!(validate_name(&"x".repeat(25)).unwrap_err().contains("25"));
        assert!(validate_name("a\u{7}b").unwrap_err().contains("U+0007"));
        assert!(validate_name("a\nb").unwrap_err().contains("U+000A"));
        assert!(validate_name("ev\u{202E}il")
            .unwrap_err()
            .contains("U+202E"));
        assert!(validate_name("zero\u{200B}width").is_err());
        assert!(validate_name(" padded").unwrap_err().contains("whitespace"));
        assert!(validate_name("tab\there").is_err());
    }

    #[test]
    fn rate_and_strikes() {
        let mut l = Limiter::new(1, 3, 2, Duration::from_secs(60));
        assert_eq!(l.message(), Verdict::Allow);
        assert_eq!(l.message(), Verdict::Allow);
        assert_eq!(l.message(), Verdict::Allow);
        assert_eq!(l.message(), Verdict::Refuse);
        assert_eq!(l.message(), Verdict::Refuse);
        assert_eq!(l.message(), Verdict::Close);
    }

    #[test]
    fn connections_per_address() {
        let c = Arc::new(ConnCounter::default());
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let a = c.acquire(ip, 2).unwrap();
        let _b = c.acquire(ip, 2).unwrap();
        assert!(c.acquire(ip, 2).is_none());
        drop(a);
        assert_eq!(c.count(ip), 1);
        assert!(c.acquire(ip, 2).is_some());
    }
}
