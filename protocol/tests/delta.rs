//! Deltas on the wire (issue 14): over many random games at every level, a `play` event
//! that leaves out the implied events loses nothing. For every entry, the events the
//! engine gave are exactly what a client gets back from the frame (after a JSON round
//! trip) and the implied events it derives from the documented view alone
//! (`delta::implied`, which the page's `state.js` mirrors), put where `delta::expand`
//! puts them.

use protocol::delta;
use protocol::game::{Action, Event, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::{FullSocket, Level, Settings, Setup};
use protocol::view::GameView;
use protocol::wire::{Change, GameEvent, GameId, ServerMessage};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// What a client rebuilds from the frame of `entry` (published at `now_ms`), with the
/// view of `before` (the game just before the entry) to derive the implied events.
fn rebuilt(before: &Game, entry: &Entry, events: Vec<Event>, now_ms: u64) -> Vec<Event> {
    let text = serde_json::to_string(&ServerMessage::Event(Box::new(GameEvent {
        game: GameId::nil(),
        seq: 1,
        now_ms,
        change: Change::of_entry(entry.clone(), events, now_ms),
    })))
    .unwrap();
    let ServerMessage::Event(ev) = serde_json::from_str(&text).unwrap() else {
        panic!("an event: {text}")
    };
    let got = ev.entry().expect("an entry");
    assert_eq!(&got, entry, "{text}");
    let (kept, complete) = match ev.change {
        Change::Play {
            events, complete, ..
        } => (events, complete),
        Change::Lag { .. } => (Vec::new(), false),
        other => panic!("{other:?}"),
    };
    // The documented state after the kept events that come first (those earlier than the
    // entry): the view of the game brought up to just before the entry's instant.
    let mut ahead = before.clone();
    if entry.at_ms > 0 {
        ahead.advance(entry.at_ms - 1);
    }
    let view = GameView::of(&ahead, &[]);
    delta::expand(entry, &kept, complete, delta::implied(&view, entry))
}

fn random_game(rng: &mut SmallRng, settings: Settings, stats: &mut [usize; 3]) {
    let mut game = Game::new(settings);
    let mut t = 0u64;
    for _ in 0..400 {
        if !game.is_playing() {
            break;
        }
        t += match rng.gen_range(0..10) {
            0 => rng.gen_range(0..4_000),
            1 => 0,
            _ => rng.gen_range(1..400),
        };
        let before = game.clone();
        let entry = match rng.gen_range(0..20) {
            0 => Entry {
                at_ms: t,
                kind: EntryKind::Lag {
                    player: if rng.gen() {
                        Player::Red
                    } else {
                        Player::Black
                    },
                    lag_ms: rng.gen_range(0..300),
                },
            },
            1 => Entry {
                at_ms: t,
                kind: EntryKind::Advance,
            },
            _ => {
                // What the game would allow at `t`.
                let mut ahead = game.clone();
                ahead.advance(t);
                if !ahead.is_playing() {
                    Entry {
                        at_ms: t,
                        kind: EntryKind::Advance,
                    }
                } else {
                    let mut actions: Vec<(Player, Action)> = Vec::new();
                    for p in Player::BOTH {
                        for a in ahead.legal_actions(p) {
                            if a != Action::Resign || rng.gen_range(0..50) == 0 {
                                actions.push((p, a));
                            }
                        }
                    }
                    if actions.is_empty() {
                        continue;
                    }
                    let (player, action) = actions[rng.gen_range(0..actions.len())];
                    Entry {
                        at_ms: t,
                        kind: EntryKind::Act {
                            player,
                            action,
                            lag_ms: Some(48),
                            comp_ms: None,
                        },
                    }
                }
            }
        };
        let Ok(events) = entry.apply_to(&mut game) else {
            // The game would refuse it (rare: legal at `t` but a deadline came first).
            game = before;
            continue;
        };
        let (kept, complete) = delta::compact(&entry, events.clone());
        stats[0] += 1;
        stats[1] += events.len() - kept.len();
        stats[2] += complete as usize;
        // Published at its own instant, and a little later.
        for now_ms in [t, t + 3] {
            assert_eq!(
                rebuilt(&before, &entry, events.clone(), now_ms),
                events,
                "entry {entry:?}"
            );
        }
    }
}

#[test]
fn a_client_rebuilds_every_engine_event_from_the_frame_and_the_view() {
    let mut rng = SmallRng::seed_from_u64(14);
    let mut stats = [0; 3];
    for level in [Level::One, Level::Two, Level::Three] {
        for setup in [Setup::Standard, Setup::Placement] {
            for full in [FullSocket::Reject, FullSocket::Lose] {
                for _ in 0..6 {
                    let mut s = Settings::blitz(level);
                    s.setup = setup;
                    s.full_socket = full;
                    random_game(&mut rng, s, &mut stats);
                }
            }
        }
    }
    println!(
        "{} entries: {} implied events left out; {} complete frames",
        stats[0], stats[1], stats[2]
    );
    assert!(stats[0] > 2_000, "{stats:?}");
    // Most events are implied; few frames need every event.
    assert!(stats[1] > stats[0], "{stats:?}");
    assert!(stats[2] * 10 < stats[0], "{stats:?}");
}
