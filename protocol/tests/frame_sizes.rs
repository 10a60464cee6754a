//! The size of the frames that make most of the traffic (issue 14, "deltas on the wire"):
//! an event carries what changed and its instant, never the sand table. Each figure is
//! printed (`cargo test -p tamsk-protocol --test frame_sizes -- --nocapture`) next to what
//! the same frame weighed when every event carried the whole sand table.
//!
//! The figures are for a busy server (five-digit game id, three-digit seq, game times in
//! minutes). A move event is still above the issue's 300-byte target: what remains is
//! the entry and the engine's events (see BENCHMARKS.md).

use protocol::game::{Action, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, GameEvent, SandTable, ServerMessage};

/// The frame of `change`, its bytes, and what it weighed with the sand table of `game`.
fn sizes(game: &Game, change: Change) -> (String, usize, usize) {
    let frame = serde_json::to_string(&ServerMessage::Event(Box::new(GameEvent {
        game: protocol::wire::GameId::from_u64_pair(0x0193_a3f0_7c1e_7000, 0x8000_3f9a_0c1d_2e3f),
        seq: 123,
        now_ms: game.now().max(123_456),
        change,
    })))
    .unwrap();
    assert!(!frame.contains(r#""glasses""#), "no sand table: {frame}");
    // The table went between `now_ms` and the change, as `"sand":{...},`.
    let table = serde_json::to_string(&SandTable::of(game)).unwrap();
    let before = frame.len() + r#""sand":,"#.len() + table.len();
    let len = frame.len();
    (frame, len, before)
}

/// A Level 3 game after `n` moves (each dropping its ring), then one more move by the
/// player on turn: the game and that move's `play` change, as the server publishes it
/// (with the lag figures of the record).
fn a_move_in_play(n: usize) -> (Game, Change) {
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
            return (game, Change::Play { entry, events });
        }
    }
    unreachable!()
}

#[test]
fn a_move_event_carries_no_sand_table() {
    for n in [0, 5] {
        let (game, change) = a_move_in_play(n);
        let (frame, now, before) = sizes(&game, change);
        println!("move event (after {n} moves): {now} bytes, was {before}\n  {frame}");
        // (With a 36-character UUID game id: 33 bytes over the first bound.)
        assert!(now <= 733, "a move event is {now} bytes");
        assert!(
            before > 2 * now - 100,
            "the table was about half: {before} vs {now}"
        );
    }
}

#[test]
fn presence_grace_and_lag_events_are_small() {
    // The bounds include the game id, a 36-character UUID v7 since ids became global
    // (issue 13): 33 bytes more than the short integer ids they were first set with.
    let (game, _) = a_move_in_play(5);
    for (what, change, bound) in [
        (
            "presence (gone)",
            Change::Presence {
                player: Player::Black,
                connected: false,
                grace_until_ms: Some(183_456),
                at: 123_456,
            },
            183,
        ),
        (
            "presence (back)",
            Change::Presence {
                player: Player::Black,
                connected: true,
                grace_until_ms: None,
                at: 123_456,
            },
            153,
        ),
        (
            "grace expired",
            Change::GraceExpired {
                player: Player::Black,
                at: 183_456,
            },
            153,
        ),
        (
            "lag",
            Change::Lag {
                player: Player::Red,
                rtt_ms: 148,
                at: 123_456,
            },
            153,
        ),
    ] {
        let (frame, now, before) = sizes(&game, change);
        println!("{what} event: {now} bytes, was {before}\n  {frame}");
        assert!(now <= bound, "a {what} event is {now} bytes");
    }
}
