//! Counters, gauges and histograms of the server, served as Prometheus text at
//! `/metrics`. Everything is an atomic: recording never waits.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// A histogram with fixed bucket bounds (seconds).
pub struct Histogram {
    bounds: &'static [f64],
    /// Per bucket (not cumulative); the last is +Inf.
    counts: Vec<AtomicU64>,
    sum_ns: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_ns: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = self
            .bounds
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(self.bounds.len());
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns
            .fetch_add(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    pub(crate) fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = self
                .bounds
                .get(i)
                .map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
        }
        let sum = self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_sum {sum}");
        let _ = writeln!(out, "{name}_count {cumulative}");
    }
}

const FANOUT_BOUNDS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1,
];
/// Fine below a millisecond: the target is a p99 under 1 ms.
const LATENESS_BOUNDS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_2, 0.000_3, 0.000_5, 0.000_75, 0.001, 0.001_5, 0.002, 0.003, 0.005,
    0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// What the server counts.
pub struct Metrics {
    pub connections_open: AtomicI64,
    pub connections_total: AtomicU64,
    pub games_started: AtomicU64,
    pub actions: AtomicU64,
    pub moves: AtomicU64,
    pub actions_refused: AtomicU64,
    pub events: AtomicU64,
    /// Watchers dropped from a game for not keeping up.
    pub watchers_dropped: AtomicU64,
    /// Serialising a game's event and handing it to every subscriber's queue.
    pub fanout: Histogram,
    /// How late a game task woke for a deadline.
    pub timer_lateness: Histogram,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            connections_open: AtomicI64::new(0),
            connections_total: AtomicU64::new(0),
            games_started: AtomicU64::new(0),
            watchers_dropped: AtomicU64::new(0),
            actions: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            actions_refused: AtomicU64::new(0),
            events: AtomicU64::new(0),
            fanout: Histogram::new(FANOUT_BOUNDS),
            timer_lateness: Histogram::new(LATENESS_BOUNDS),
        }
    }
}

pub(crate) fn scalar(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    value: impl std::fmt::Display,
) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = Histogram::new(&[0.001, 0.01]);
        h.observe(Duration::from_micros(500));
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_secs(1));
        let mut out = String::new();
        h.render(&mut out, "x", "help");
        assert!(out.contains("x_bucket{le=\"0.001\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.01\"} 3\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 4\n"), "{out}");
        assert!(out.contains("x_count 4\n"), "{out}");
        assert!(out.contains("x_sum 1.0105\n"), "{out}");
    }
}
