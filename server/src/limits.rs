//! What a client may send: display names, message rate, strikes, connections per address.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use protocol::text::{is_mark, printable};
use unicode_normalization::UnicodeNormalization;

/// Longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 24;

/// Why a display name is refused (the message goes to the client with `bad_name`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error("the name has {0} characters; at most {MAX_NAME_CHARS} are allowed")]
    TooLong(usize),
    #[error("the name contains an unprintable character U+{:04X}", *.0 as u32)]
    Unprintable(char),
    #[error("the name starts with a combining mark")]
    StartsWithMark,
    #[error("the name starts or ends with whitespace")]
    Whitespace,
}

/// The message, for the client's error frame.
impl From<NameError> for String {
    fn from(e: NameError) -> String {
        e.to_string()
    }
}

/// Checks a display name and gives it in NFC (so that one name has one spelling): 1 to
/// 24 characters, printable ([`printable`]: no control, format, private-use or unassigned
/// character, no invisible blank), not starting with a combining mark (nor made of marks
/// only), no leading or trailing whitespace.
pub fn validate_name(name: &str) -> Result<String, NameError> {
    let name: String = name.nfc().collect();
    let count = name.chars().count();
    if count == 0 {
        return Err(NameError::Empty);
    }
    if count > MAX_NAME_CHARS {
        return Err(NameError::TooLong(count));
    }
    if let Some(c) = name.chars().find(|&c| !printable(c)) {
        return Err(NameError::Unprintable(c));
    }
    if name.chars().next().is_some_and(is_mark) {
        return Err(NameError::StartsWithMark);
    }
    if name.trim() != name {
        return Err(NameError::Whitespace);
    }
    Ok(name)
}

/// What makes two names the same: the name in NFC, lower-cased (names are unique
/// without regard to case).
pub fn name_key(name: &str) -> String {
    name.nfc()
        .collect::<String>()
        .to_lowercase()
        .nfc()
        .collect()
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

/// A budget of one thing (the challenges a player cancels, say): a token bucket that is
/// looked at and spent apart, since what spends it (a cancel) comes after what it allows
/// (a challenge).
#[derive(Debug)]
pub struct Budget {
    tokens: f64,
    burst: f64,
    per_ms: f64,
    at: Instant,
}

impl Budget {
    /// `per_min` on average, in bursts of `burst`.
    pub fn per_minute(per_min: u32, burst: u32) -> Budget {
        Budget {
            tokens: f64::from(burst.max(1)),
            burst: f64::from(burst.max(1)),
            per_ms: f64::from(per_min.max(1)) / 60_000.0,
            at: Instant::now(),
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let ms = now.duration_since(self.at).as_secs_f64() * 1_000.0;
        self.tokens = (self.tokens + ms * self.per_ms).min(self.burst);
        self.at = now;
    }

    /// Whether a unit is left.
    pub fn left(&mut self) -> bool {
        self.refill();
        self.tokens >= 1.0
    }

    /// Spends one unit, into debt down to a burst's worth: what was allowed before the
    /// spending came (challenges sent at once, cancelled after) is paid back.
    pub fn spend(&mut self) {
        self.refill();
        self.tokens = (self.tokens - 1.0).max(-self.burst);
    }
}

/// Open connections per client address, and in all.
#[derive(Default)]
pub struct ConnCounter {
    counts: DashMap<IpAddr, usize>,
    total: AtomicUsize,
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
        self.total.fetch_add(1, Ordering::Relaxed);
        Some(IpGuard {
            counter: self.clone(),
            ip,
        })
    }

    pub fn count(&self, ip: IpAddr) -> usize {
        self.counts.get(&ip).map_or(0, |c| *c)
    }

    /// Connections counted, from every address.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::Relaxed)
    }
}

impl Drop for IpGuard {
    fn drop(&mut self) {
        self.counter.total.fetch_sub(1, Ordering::Relaxed);
        self.counter.counts.remove_if_mut(&self.ip, |_, n| {
            *n -= 1;
            *n == 0
        });
    }
}

/// How an accepted TCP connection (plain HTTP or a websocket to be) is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Within its address's cap and the server's.
    Normal,
    /// Its address has `max_conns_per_ip` open already: HTTP requests are answered 429
    /// and a websocket is refused with `too_many_connections`.
    OverAddress,
    /// The server is within `connection_reserve` of `max_connections`: only `/healthz` is
    /// answered (the connections already open go on as before).
    Reserve,
    /// Its address opened more than `ip_conn_per_min` lately: refused like `OverAddress`
    /// (with `connecting_too_fast`).
    TooFast,
}

/// What the HTTP layer tells the websocket handler about one TCP connection.
pub struct ConnSlot {
    pub admission: Admission,
    /// Counts the connection until it closes; a websocket takes it over on upgrade.
    pub guard: std::sync::Mutex<Option<IpGuard>>,
    /// From a trusted proxy (`--trusted-proxies`): each request is admitted under its
    /// client's address ([`Connections::admit_forwarded`]).
    pub proxied: bool,
}

/// The open connections: those admitted, and those only answered with a refusal (over
/// their address's cap, or in the reserve). Each kind is capped per address, so one
/// address holds at most twice `max_conns_per_ip` sockets.
#[derive(Default)]
pub struct Connections {
    pub admitted: Arc<ConnCounter>,
    pub refusing: Arc<ConnCounter>,
}

impl Connections {
    /// Admits a new connection from `ip`, or `None`: close it at once.
    pub fn admit(&self, ip: IpAddr, config: &crate::config::Config) -> Option<ConnSlot> {
        self.admit_capped(ip, address_cap(ip, config), config)
    }

    /// Admits a new connection from a trusted proxy: counted in all, not capped for its
    /// address (it carries many clients); its requests are admitted one by one under their
    /// clients' addresses ([`Connections::admit_forwarded`]).
    pub fn admit_proxy(&self, ip: IpAddr, config: &crate::config::Config) -> Option<ConnSlot> {
        let mut slot = self.admit_capped(ip, usize::MAX, config)?;
        slot.proxied = true;
        Some(slot)
    }

    /// A websocket asked through a trusted proxy's connection `slot` for `client`: its
    /// admission, and the guard that counts it under the client's address from now on
    /// (the proxy's count of the connection is let go: one socket, counted once).
    pub fn admit_forwarded(
        &self,
        client: IpAddr,
        slot: &ConnSlot,
        config: &crate::config::Config,
    ) -> (Admission, Option<IpGuard>) {
        if slot.admission != Admission::Normal {
            return (slot.admission, slot.guard.lock().expect("slot lock").take());
        }
        match self.admitted.acquire(client, address_cap(client, config)) {
            Some(guard) => {
                slot.guard.lock().expect("slot lock").take();
                (Admission::Normal, Some(guard))
            }
            None => (Admission::OverAddress, None),
        }
    }

    fn admit_capped(
        &self,
        ip: IpAddr,
        per_ip: usize,
        config: &crate::config::Config,
    ) -> Option<ConnSlot> {
        let total = self.admitted.total() + self.refusing.total();
        let (admission, guard) = if total >= config.max_connections {
            return None;
        } else if total
            >= config
                .max_connections
                .saturating_sub(config.connection_reserve)
        {
            (Admission::Reserve, self.refusing.acquire(ip, per_ip)?)
        } else if let Some(guard) = self.admitted.acquire(ip, per_ip) {
            (Admission::Normal, guard)
        } else {
            (Admission::OverAddress, self.refusing.acquire(ip, per_ip)?)
        };
        Some(ConnSlot {
            admission,
            guard: std::sync::Mutex::new(Some(guard)),
            proxied: false,
        })
    }
}

/// A budget per client address (a keyed token bucket): what all its connections together
/// may do, so that reconnecting gives no fresh burst.
pub struct AddressBudget {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    /// Loopback addresses spend nothing (see [`exempt`]).
    spare_loopback: bool,
}

/// Whether `ip` is outside the per-address budgets and cap: this machine's own addresses
/// are, unless `--budget-loopback` (local tools, health checks and load tests open many
/// connections from one address; a local proxy's clients are budgeted one by one when it
/// is in `--trusted-proxies`, and are then not seen under the proxy's address).
pub fn exempt(ip: IpAddr, config: &crate::config::Config) -> bool {
    !config.budget_loopback && local(ip)
}

/// This machine's own address (IPv4 loopback also when mapped into IPv6).
fn local(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// The open connections `ip` may have (see [`exempt`]).
fn address_cap(ip: IpAddr, config: &crate::config::Config) -> usize {
    match exempt(ip, config) {
        true => usize::MAX,
        false => config.max_conns_per_ip,
    }
}

impl AddressBudget {
    /// `per_min` on average, in bursts of `burst`.
    pub fn per_minute(per_min: u32, burst: u32) -> AddressBudget {
        let per_min = NonZeroU32::new(per_min.max(1)).expect("positive");
        let burst = NonZeroU32::new(burst.max(1)).expect("positive");
        AddressBudget {
            limiter: RateLimiter::keyed(Quota::per_minute(per_min).allow_burst(burst)),
            spare_loopback: false,
        }
    }

    /// `per_sec` on average, in bursts of `burst`.
    pub fn per_second(per_sec: u32, burst: u32) -> AddressBudget {
        let per_sec = NonZeroU32::new(per_sec.max(1)).expect("positive");
        let burst = NonZeroU32::new(burst.max(1)).expect("positive");
        AddressBudget {
            limiter: RateLimiter::keyed(Quota::per_second(per_sec).allow_burst(burst)),
            spare_loopback: false,
        }
    }

    /// The same budget, with loopback addresses spared as [`exempt`] says for `config`.
    pub fn sparing(mut self, config: &crate::config::Config) -> AddressBudget {
        self.spare_loopback = !config.budget_loopback;
        self
    }

    /// Spends one unit of `ip`'s budget; false if it has none left.
    pub fn take(&self, ip: IpAddr) -> bool {
        (self.spare_loopback && local(ip)) || self.limiter.check_key(&ip).is_ok()
    }

    /// Forgets addresses whose budget is full again (call now and then: memory).
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are the same as PROTOCOL.md says: NFC forms equal after Unicode
    /// lower-casing, character by character (not full case folding).
    #[test]
    fn names_are_the_same_whatever_their_case_as_documented() {
        assert_eq!(name_key("Ann"), name_key("aNN"));
        assert_eq!(name_key("ÉVA"), name_key("éva"));
        assert_eq!(name_key("E\u{301}VA"), name_key("\u{e9}va"));
        assert_ne!(name_key("STRASSE"), name_key("straße"));
        assert_ne!(name_key("Ann"), name_key("Anne"));
    }

    #[test]
    fn names() {
        assert!(validate_name("Kris Burm").is_ok());
        assert_eq!(validate_name("Éloïse-42").unwrap(), "Éloïse-42");
        // Decomposed: stored composed.
        assert_eq!(validate_name("E\u{301}lo").unwrap(), "\u{c9}lo");
        for invisible in [
            "\u{2800}",
            "a\u{180b}",
            "\u{600}x",
            "x\u{70f}",
            "\u{13430}y",
            "y\u{1bca0}",
            "z\u{1d173}",
            "\u{3164}",
            "a\u{e0041}",
        ] {
            assert!(
                matches!(validate_name(invisible), Err(NameError::Unprintable(_))),
                "{invisible:?}"
            );
        }
        assert_eq!(
            validate_name("\u{301}\u{302}\u{303}"),
            Err(NameError::StartsWithMark)
        );
        assert!(validate_name("\u{301}abc").is_err());
        assert_eq!(validate_name(""), Err(NameError::Empty));
        assert_eq!(validate_name(&"x".repeat(25)), Err(NameError::TooLong(25)));
        assert_eq!(
            validate_name("a\u{7}b"),
            Err(NameError::Unprintable('\u{7}'))
        );
        assert!(validate_name("zero\u{200B}width").is_err());
        assert_eq!(validate_name(" padded"), Err(NameError::Whitespace));
        // The messages the client reads, word for word as before the error type.
        let message = |name: &str| String::from(validate_name(name).unwrap_err());
        assert_eq!(message(""), "the name is empty");
        assert_eq!(
            message(&"x".repeat(25)),
            "the name has 25 characters; at most 24 are allowed"
        );
        assert_eq!(
            message("a\nb"),
            "the name contains an unprintable character U+000A"
        );
        assert_eq!(
            message("ev\u{202E}il"),
            "the name contains an unprintable character U+202E"
        );
        assert_eq!(
            message("\u{301}abc"),
            "the name starts with a combining mark"
        );
        assert_eq!(
            message(" padded"),
            "the name starts or ends with whitespace"
        );
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
