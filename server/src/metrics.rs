//! Counters, gauges and histograms of the server, served at `/metrics` by
//! [`crate::hub::metrics`] through `prometheus-client`. Everything here is an atomic:
//! recording never waits.
//!
//! The counters are plain atomics rather than `prometheus_client` counters because the
//! game and connection code bumps them with `fetch_add`; a scrape reads them into
//! `prometheus_client` const metrics. The histograms are ours for the same reason:
//! `prometheus_client`'s histogram takes a mutex on every observation, and
//! [`Metrics::fanout`] is observed on every game event.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

/// A histogram with fixed bucket bounds (seconds), one atomic per bucket.
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

    /// The histogram as it is now, for a scrape. The buckets are read one by one while
    /// observations go on, so the count is the sum of the buckets read (never less than a
    /// bucket, as Prometheus requires), and the sum may be a few observations ahead.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let buckets: Vec<(f64, u64)> = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let bound = self.bounds.get(i).copied().unwrap_or(f64::INFINITY);
                (bound, c.load(Ordering::Relaxed))
            })
            .collect();
        HistogramSnapshot {
            count: buckets.iter().map(|&(_, n)| n).sum(),
            sum: self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9,
            buckets,
        }
    }
}

/// A histogram read at one scrape, encoded by `prometheus_client`.
#[derive(Debug)]
pub struct HistogramSnapshot {
    /// (upper bound in seconds, observations in this bucket alone); the last is +Inf.
    pub buckets: Vec<(f64, u64)>,
    pub sum: f64,
    pub count: u64,
}

impl prometheus_client::metrics::TypedMetric for HistogramSnapshot {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for HistogramSnapshot {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<NoLabelSet>(self.sum, self.count, &self.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

const FANOUT_BOUNDS: &[f64] = &[
    0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
    0.05, 0.1,
];
/// Fine below a few milliseconds: the target is a p99.9 under 2 ms, so the bounds around
/// it (1, 1.5, 2, 3 ms) tell on which side of it a run falls.
pub(crate) const LATENESS_BOUNDS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_2, 0.000_25, 0.000_3, 0.000_5, 0.000_75, 0.001, 0.001_5, 0.002, 0.003,
    0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::registry::Registry;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = Histogram::new(&[0.001, 0.01]);
        h.observe(Duration::from_micros(500));
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_millis(5));
        h.observe(Duration::from_secs(1));
        let mut registry = Registry::default();
        registry.register("x", "help", h.snapshot());
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &registry).unwrap();
        assert!(out.contains("# TYPE x histogram\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.001\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.01\"} 3\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 4\n"), "{out}");
        assert_eq!(out.matches("le=\"+Inf\"").count(), 1, "{out}");
        assert!(out.contains("x_count 4\n"), "{out}");
        assert!(out.contains("x_sum 1.0105\n"), "{out}");
    }
}
