//! `/metrics`: the Prometheus text of the server's counters and of the hub's sizes.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics::scalar;

use super::Hub;

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
