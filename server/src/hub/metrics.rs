//! `/metrics`: the server's counters and the hub's sizes in the Prometheus text format
//! (version 0.0.4), encoded by `prometheus-client`.
//!
//! A scrape builds a registry of const metrics read from the atomics (see
//! [`crate::metrics`] for why they are atomics and not `prometheus_client` counters) and
//! from the hub's sizes, which are only known by asking the hub.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::encoding::{prometheus_text, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::Hub;

/// The `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// A gauge with one sample per value of one label (`name{key="value"} n`).
#[derive(Debug)]
struct LabelledGauge {
    key: &'static str,
    samples: Vec<(Cow<'static, str>, i64)>,
}

impl EncodeMetric for LabelledGauge {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (value, n) in &self.samples {
            encoder
                .encode_family(&[(self.key, value.as_ref())])?
                .encode_gauge(n)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
}

/// The names and help texts, one place. `prometheus_client` adds `_total` to a counter's
/// name and a full stop to every help text, so neither is written here.
fn registry(hub: &Hub) -> Registry {
    let m = &hub.metrics;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let mut r = Registry::default();
    let counter = |r: &mut Registry, name: &str, help: &str, n: u64| {
        r.register(name, help, ConstCounter::new(n));
    };
    let gauge = |r: &mut Registry, name: &str, help: &str, n: i64| {
        r.register(name, help, ConstGauge::new(n));
    };
    let size = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    gauge(
        &mut r,
        "tamsk_connections",
        "Open websocket connections",
        m.connections_open.load(Ordering::Relaxed).max(0),
    );
    counter(
        &mut r,
        "tamsk_connections",
        "Websocket connections accepted",
        load(&m.connections_total),
    );
    gauge(
        &mut r,
        "tamsk_players_cached",
        "Players kept in memory (the idle ones are forgotten over --max-players-cached)",
        size(hub.players_cached()),
    );
    gauge(
        &mut r,
        "tamsk_games_live",
        "Live games (being played, or over and still listed)",
        size(hub.games.len()),
    );
    gauge(
        &mut r,
        "tamsk_games_playing",
        "Games being played",
        size(hub.playing_count()),
    );
    counter(
        &mut r,
        "tamsk_watchers_dropped",
        "Watchers dropped from a game for falling behind it",
        load(&m.watchers_dropped),
    );
    counter(
        &mut r,
        "tamsk_games_started",
        "Games started",
        load(&m.games_started),
    );
    let sizes = hub.lobby_sizes();
    r.register(
        "tamsk_queue_size",
        "Waiting seeks: open (quick match) and private (a code)",
        LabelledGauge {
            key: "kind",
            samples: vec![
                ("open".into(), size(sizes.open_seeks)),
                ("private".into(), size(sizes.private_seeks)),
            ],
        },
    );
    gauge(
        &mut r,
        "tamsk_challenges_waiting",
        "Challenges waiting for an answer",
        size(sizes.challenges),
    );
    gauge(
        &mut r,
        "tamsk_players_online",
        "Players with at least one connection",
        size(sizes.online_players),
    );
    counter(
        &mut r,
        "tamsk_actions",
        "Actions accepted by games",
        load(&m.actions),
    );
    counter(
        &mut r,
        "tamsk_moves",
        "Moves made (move, release, place)",
        load(&m.moves),
    );
    counter(
        &mut r,
        "tamsk_actions_refused",
        "Actions refused by the rules",
        load(&m.actions_refused),
    );
    counter(
        &mut r,
        "tamsk_events",
        "Numbered game events sent out",
        load(&m.events),
    );
    r.register(
        "tamsk_event_fanout_seconds",
        "Time to serialise a game event and queue it for every subscriber",
        m.fanout.snapshot(),
    );
    r.register(
        "tamsk_timer_lateness_seconds",
        "How late a game task woke for a deadline (death, expiry, grace)",
        m.timer_lateness.snapshot(),
    );
    if let Some(alarms) = &hub.alarms {
        r.register(
            "tamsk_alarm_lateness_seconds",
            "How late the alarm thread woke a game for a deadline (part of the timer lateness)",
            alarms.lateness(),
        );
        let (ran, woken) = alarms.ran_and_woken();
        counter(
            &mut r,
            "tamsk_alarm_ran",
            "Deadlines at which the alarm thread announced what was due itself",
            ran,
        );
        counter(
            &mut r,
            "tamsk_alarm_woken",
            "Deadlines at which the alarm thread woke the game for a worker instead (a worker was polling it, or the thread had spent its 2 ms in 10)",
            woken,
        );
    }
    let store = &hub.store.stats;
    gauge(
        &mut r,
        "tamsk_store_queue",
        "Writes waiting for the database writer",
        size(hub.store.queued()),
    );
    counter(
        &mut r,
        "tamsk_store_writes",
        "Writes done by the database writer",
        load(&store.writes),
    );
    counter(
        &mut r,
        "tamsk_store_write_errors",
        "Writes that failed",
        load(&store.write_errors),
    );
    counter(
        &mut r,
        "tamsk_store_queue_full",
        "Times the writer's queue was full (a task waited for room instead)",
        load(&store.queue_full),
    );
    counter(
        &mut r,
        "tamsk_games_stored",
        "Finished and aborted games stored",
        load(&store.games_stored),
    );
    counter(
        &mut r,
        "tamsk_bot_actions",
        "Actions sent by in-process bot seats",
        load(&hub.bot_stats.actions),
    );
    counter(
        &mut r,
        "tamsk_bot_refused",
        "Actions of in-process bot seats that were refused",
        load(&hub.bot_stats.refused),
    );
    // Several nodes (`--nats`) only.
    if let Some(cluster) = hub.cluster.get() {
        let stats = &cluster.stats;
        counter(
            &mut r,
            "tamsk_cluster_takeovers",
            "Games this node took over from their journal when their node's lease ran out",
            load(&stats.takeovers),
        );
        counter(
            &mut r,
            "tamsk_cluster_gap_repairs",
            "Resumptions asked at a game's owner for clients of this node that missed frames of its stream",
            load(&stats.repairs),
        );
        counter(
            &mut r,
            "tamsk_cluster_game_moving",
            "Commands of this node's clients answered game_moving (the game's node was gone)",
            load(&stats.moving),
        );
        counter(
            &mut r,
            "tamsk_cluster_ratings_received",
            "Players' ratings moved by other nodes' games, received (set on the players this node holds)",
            load(&stats.ratings_received),
        );
        counter(
            &mut r,
            "tamsk_cluster_frames_dropped",
            "Frames of this node's games not published for the other nodes (publication queue full)",
            cluster.frames_dropped(),
        );
    }
    if let Some(lobby) = hub.cluster_lobby.get().filter(|l| l.leading()) {
        let samples = lobby
            .node_loads()
            .into_iter()
            .map(|(node, games)| (node.into(), size(games)))
            .collect();
        r.register(
            "tamsk_cluster_node_games",
            "On the lobby's leader: each other node's live games as the leader places games by them (its last heartbeat, plus the games placed there since)",
            LabelledGauge {
                key: "node",
                samples,
            },
        );
    }
    r
}

/// The Prometheus text exposition of everything.
pub fn render(hub: &Hub) -> String {
    let mut out = String::new();
    prometheus_text::encode(&mut out, &registry(hub)).expect("writing to a String cannot fail");
    out
}
