//! The size of the frames that make most of the traffic (issue 14, "deltas on the wire"):
//! an event carries what changed and its instant, never the sand table, and a `play`
//! leaves out the events its entry implies (`protocol::delta`). Each figure is printed
//! (`cargo test -p tamsk-protocol --test frame_sizes -- --nocapture`) next to what the
//! same change weighed in the previous format (`"kind":...`, every engine event, `at`
//! repeated; BENCHMARKS.md has both).
//!
//! The figures are for a busy server: the real UUID v7 game id (36 characters), a
//! three-digit seq, game times in minutes.

use protocol::game::{Action, Event, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, GameEvent, GameId, ServerMessage};
use serde_json::json;

const SEQ: u64 = 123;

fn id() -> GameId {
    GameId::from_u64_pair(0x0193_a3f0_7c1e_7000, 0x8000_3f9a_0c1d_2e3f)
}

/// The frame of `change` published at `now_ms`.
fn frame(now_ms: u64, change: Change) -> String {
    let text = serde_json::to_string(&ServerMessage::Event(Box::new(GameEvent {
        game: id(),
        seq: SEQ,
        now_ms,
        change,
    })))
    .unwrap();
    assert!(!text.contains(r#""glasses""#), "no sand table: {text}");
    assert!(text.contains(&id().to_string()), "the real game id: {text}");
    text
}

/// The previous format's frame: `kind` and the change's fields beside the header.
fn old_frame(now_ms: u64, kind: &str, fields: serde_json::Value) -> usize {
    let mut v = json!({"type": "event", "game": id(), "seq": SEQ, "now_ms": now_ms, "kind": kind});
    for (k, x) in fields.as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::to_string(&v).unwrap().len()
}

/// A Level 3 game after `n` moves (each dropping its ring), then one more move by the
/// player on turn: that move's entry (with the lag figures of the record) and every
/// engine event it caused.
fn a_move(n: usize) -> (Entry, Vec<Event>) {
    let mut game = Game::new(Settings::blitz(Level::Three));
    let mut t = 0;
    for i in 0..=n {
        t += 1_234;
        let player = game.turn();
        let action = game
            .legal_actions(player)
            .into_iter()
            .find(|a| matches!(a, Action::Move { drop: true, .. }))
            .expect("a legal move");
        let events = game.apply(player, action, t).expect("legal");
        if i == n {
            let entry = Entry {
                at_ms: t,
                kind: EntryKind::Act {
                    player,
                    action,
                    lag_ms: Some(48),
                    comp_ms: Some(0),
                },
            };
            return (entry, events);
        }
    }
    unreachable!()
}

/// Game times in minutes: the same move, as if the game had run for two minutes more.
fn later(entry: &Entry, events: &[Event]) -> (Entry, Vec<Event>) {
    const SHIFT: u64 = 120_000;
    let mut entry = entry.clone();
    entry.at_ms += SHIFT;
    let events = events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            for k in ["at", "since_ms"] {
                if let Some(x) = v.get_mut(k) {
                    *x = json!(x.as_u64().unwrap() + SHIFT);
                }
                if let Some(x) = v.get_mut("sand").and_then(|s| s.get_mut(k)) {
                    *x = json!(x.as_u64().unwrap() + SHIFT);
                }
            }
            serde_json::from_value(v).unwrap()
        })
        .collect();
    (entry, events)
}

#[test]
fn a_move_event_is_at_most_300_bytes() {
    for n in [0, 5] {
        let (entry, events) = a_move(n);
        let (entry, events) = later(&entry, &events);
        let at = entry.at_ms;
        let before = old_frame(at, "play", json!({"entry": entry, "events": events}));
        // Published at the entry's instant (as the server does), and 2 ms later (`at_ms`
        // given).
        for now in [at, at + 2] {
            let text = frame(now, Change::play(entry.clone(), events.clone()));
            let len = text.len();
            println!(
                "move event (after {n} moves, now_ms = at + {}): {len} bytes, was {before}\n  {text}",
                now - at
            );
            // The server publishes a move at its instant (`at_ms` omitted); one published
            // later carries `at_ms` (15 bytes more): over the bound only with a death.
            if now == at || n == 0 {
                assert!(len <= 300, "a move event is {len} bytes: {text}");
            }
            assert!(len <= 320, "a move event is {len} bytes: {text}");
            assert!(!text.contains("move_started"), "implied: {text}");
        }
    }
}

#[test]
fn presence_grace_and_lag_events_are_at_most_120_bytes() {
    let now = 123_456;
    let until = 183_456;
    for (what, change, before) in [
        (
            "presence (gone)",
            Change::Presence {
                player: Player::Black,
                connected: false,
                grace_until_ms: Some(until),
            },
            old_frame(
                now,
                "presence",
                json!({"player": "black", "connected": false, "grace_until_ms": until, "at": now}),
            ),
        ),
        (
            "presence (back)",
            Change::Presence {
                player: Player::Black,
                connected: true,
                grace_until_ms: None,
            },
            old_frame(
                now,
                "presence",
                json!({"player": "black", "connected": true, "at": now}),
            ),
        ),
        (
            "grace expired",
            Change::GraceExpired {
                player: Player::Black,
            },
            old_frame(
                until,
                "grace_expired",
                json!({"player": "black", "at": until}),
            ),
        ),
        (
            "lag",
            Change::of_entry(
                Entry {
                    at_ms: now,
                    kind: EntryKind::Lag {
                        player: Player::Red,
                        lag_ms: 148,
                    },
                },
                Vec::new(),
                now,
            ),
            // It was published twice: a `play` of the lag entry and a `lag` change.
            old_frame(
                now,
                "play",
                json!({"entry": {"at_ms": now, "entry": "lag", "player": "red", "lag_ms": 148}, "events": []}),
            ) + old_frame(
                now,
                "lag",
                json!({"player": "red", "rtt_ms": 148, "at": now}),
            ),
        ),
    ] {
        let text = frame(if what == "grace expired" { until } else { now }, change);
        let len = text.len();
        println!("{what} event: {len} bytes, was {before}\n  {text}");
        assert!(len <= 120, "a {what} event is {len} bytes: {text}");
    }
}
