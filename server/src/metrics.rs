//! Counters, gauges and histograms of the server, served as Prometheus text at
//! `/metrics`. Everything is an atomic: recording never waits.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::hub::Hub;

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

    fn render(&self, out: &mut String, name: &str, help: &str) {
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

fn scalar(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {value}");
}

/// The Prometheus text exposition of everything.
pub fn render(hub: &Hub) -> String {
    let m = &hub.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let mut out = String::new();
    scalar(
        &mut out,
        "tamsk_connections",
        "gauge",
        "Open websocket connections.",
        m.connections_open.load(Ordering::Relaxed).max(0),
    );
    scalar(
        &mut out,
        "tamsk_connections_total",
        "counter",
        "Websocket connections accepted.",
        load(&m.connections_total),
    );
    scalar(
        &mut out,
        "tamsk_players_cached",
        "gauge",
        "Players kept in memory (the idle ones are forgotten over --max-players-cached).",
        hub.players_cached(),
    );
    scalar(
        &mut out,
        "tamsk_games_live",
        "gauge",
        "Live games (being played, or over and still listed).",
        hub.games.len(),
    );
    scalar(
        &mut out,
        "tamsk_games_playing",
        "gauge",
        "Games being played.",
        hub.playing_count(),
    );
    scalar(
        &mut out,
        "tamsk_watchers_dropped_total",
        "counter",
        "Watchers dropped from a game for falling behind it.",
        load(&m.watchers_dropped),
    );
    scalar(
        &mut out,
        "tamsk_games_started_total",
        "counter",
        "Games started.",
        load(&m.games_started),
    );
    let sizes = hub.lobby_sizes();
    let _ = writeln!(
        out,
        "# HELP tamsk_queue_size Waiting seeks: open (quick match) and private (a code)."
    );
    let _ = writeln!(out, "# TYPE tamsk_queue_size gauge");
    let _ = writeln!(
        out,
        "tamsk_queue_size{{kind=\"open\"}} {}",
        sizes.open_seeks
    );
    let _ = writeln!(
        out,
        "tamsk_queue_size{{kind=\"private\"}} {}",
        sizes.private_seeks
    );
    scalar(
        &mut out,
        "tamsk_challenges_waiting",
        "gauge",
        "Challenges waiting for an answer.",
        sizes.challenges,
    );
    scalar(
        &mut out,
        "tamsk_players_online",
        "gauge",
        "Players with at least one connection.",
        sizes.online_players,
    );
    scalar(
        &mut out,
        "tamsk_actions_total",
        "counter",
        "Actions accepted by games.",
        load(&m.actions),
    );
    scalar(
        &mut out,
        "tamsk_moves_total",
        "counter",
        "Moves made (move, release, place).",
        load(&m.moves),
    );
    scalar(
        &mut out,
        "tamsk_actions_refused_total",
        "counter",
        "Actions refused by the rules.",
        load(&m.actions_refused),
    );
    scalar(
        &mut out,
        "tamsk_events_total",
        "counter",
        "Numbered game events sent out.",
        load(&m.events),
    );
    m.fanout.render(
        &mut out,
        "tamsk_event_fanout_seconds",
        "Time to serialise a game event and queue it for every subscriber.",
    );
    m.timer_lateness.render(
        &mut out,
        "tamsk_timer_lateness_seconds",
        "How late a game task woke for a deadline (death, expiry, grace).",
    );
    let store = &hub.store.stats;
    scalar(
        &mut out,
        "tamsk_store_queue",
        "gauge",
        "Writes waiting for the database writer.",
        hub.store.queued(),
    );
    scalar(
        &mut out,
        "tamsk_store_writes_total",
        "counter",
        "Writes done by the database writer.",
        load(&store.writes),
    );
    scalar(
        &mut out,
        "tamsk_store_write_errors_total",
        "counter",
        "Writes that failed.",
        load(&store.write_errors),
    );
    scalar(
        &mut out,
        "tamsk_store_queue_full_total",
        "counter",
        "Times the writer's queue was full (a task waited for room instead).",
        load(&store.queue_full),
    );
    scalar(
        &mut out,
        "tamsk_games_stored_total",
        "counter",
        "Finished and aborted games stored.",
        load(&store.games_stored),
    );
    scalar(
        &mut out,
        "tamsk_bot_actions_total",
        "counter",
        "Actions sent by in-process bot seats.",
        load(&hub.bot_stats.actions),
    );
    scalar(
        &mut out,
        "tamsk_bot_refused_total",
        "counter",
        "Actions of in-process bot seats that were refused.",
        load(&hub.bot_stats.refused),
    );
    out
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
