//! The events of one game, kept so that a client that was away resumes with exactly the
//! events it missed, for the whole game, instead of a snapshot.
//!
//! Frames are not kept: a `play` event is its entry (which the game keeps anyway, for the
//! record) and the engine's events, which the entries give again when replayed from the
//! settings (that is what every client's replica does). So the log keeps one small record
//! per event: its game time and either the index of its entry (a `play`, or a `lag`
//! change, which is its entry) or the few numbers of a presence or grace change. The
//! frames are built again by the same function as when sent (`Change::of_entry`, which
//! leaves out the implied events), so they are byte for byte the same. A resumption replays the game's entries on a fresh
//! engine up to the last missed one and serialises the missed events again; they are
//! equal to what was sent, because the engine is deterministic (the tests check it
//! against a client that never left).
//!
//! Memory: [`Logged`] is at most 16 bytes, one per event (about one per move, plus the
//! timed, presence and lag events), next to the entries the game keeps anyway. However
//! long a game goes on, `Config::history` bounds the log (4096 events, 64 KiB, by
//! default): beyond it the oldest are forgotten, and a client that missed those gets a
//! snapshot.

use std::collections::VecDeque;

use axum::extract::ws::Utf8Bytes;
use protocol::game::{Game, Player};
use protocol::record::Entry;
use protocol::settings::Settings;
use protocol::wire::{Change, GameEvent, GameId, Seq, ServerMessage};

use crate::codec::encode;

/// One published event, as the log keeps it: 16 bytes. Instants are kept as
/// milliseconds from the log's `base` (the first logged event's `now_ms`), either side of
/// it (a `lag` event carries the instant its measurement was read, which may be before an
/// event published ahead of it): a game lasts minutes, and a `u64` instant per event was
/// half of what a game kept for resumption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Logged {
    /// The event's `now_ms`, from `base`.
    now: i32,
    what: What,
}

/// A [`Change`] without the parts the game keeps elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    /// A `play` event: the game's entry at this index.
    Play(u32),
    Presence {
        player: Player,
        connected: bool,
        /// From `base`.
        grace_until: Option<i32>,
    },
    GraceExpired {
        player: Player,
    },
}

/// The log of one game's events, by seq.
pub struct History {
    /// The seq of `items[0]`.
    first: Seq,
    /// The instant the logged instants count from (`None` until the first event).
    base: Option<u64>,
    items: VecDeque<Logged>,
    /// Most events kept.
    cap: usize,
}

impl History {
    pub fn new(cap: usize) -> History {
        History::after(0, cap)
    }

    /// A log whose first event will be `last + 1` (a game taken up after a restart numbers
    /// on from there).
    pub fn after(last: Seq, cap: usize) -> History {
        History {
            first: last + 1,
            base: None,
            items: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Logs event `seq` (the next one). A `play` change is the entry at `entry` in the
    /// game's entries.
    pub fn push(&mut self, seq: Seq, now_ms: u64, change: &Change, entry: usize) {
        debug_assert_eq!(seq, self.first + self.items.len() as u64, "seq in order");
        let base = *self.base.get_or_insert(now_ms);
        let from_base = |ms: u64| i32::try_from(i128::from(ms) - i128::from(base)).ok();
        let what = match *change {
            // A `lag` change is its entry too.
            Change::Play { .. } | Change::Lag { .. } => Some(What::Play(entry as u32)),
            Change::Presence {
                player,
                connected,
                grace_until_ms,
            } => match grace_until_ms.map(from_base) {
                Some(None) => None,
                grace_until => Some(What::Presence {
                    player,
                    connected,
                    grace_until: grace_until.flatten(),
                }),
            },
            Change::GraceExpired { player } => Some(What::GraceExpired { player }),
        };
        let (Some(now), Some(what)) = (from_base(now_ms), what) else {
            // An instant out of the log's range (24 days from its first event): the log
            // starts again from the next event, and a client that missed this one gets a
            // snapshot.
            self.items.clear();
            self.first = seq + 1;
            self.base = None;
            return;
        };
        self.items.push_back(Logged { now, what });
        if self.items.len() > self.cap {
            self.items.pop_front();
            self.first += 1;
        }
    }

    /// Whether every event after `after` is still logged (`last` is the latest seq).
    pub fn has_after(&self, after: Seq, last: Seq) -> bool {
        after <= last && (after == last || self.first <= after + 1)
    }

    /// The frames of the events after `after`, exactly as they were sent, rebuilt from the
    /// log and the game's `entries`; `None` if they are not all logged or the entries do
    /// not replay (which would be a bug: the caller sends a snapshot instead).
    pub fn frames_after(
        &self,
        game: GameId,
        after: Seq,
        settings: &Settings,
        entries: &[Entry],
    ) -> Option<Vec<Utf8Bytes>> {
        let last = self.first + self.items.len() as u64 - 1;
        if !self.has_after(after, last) {
            return None;
        }
        let base = self.base.unwrap_or(0);
        let missed = self.items.range((after + 1 - self.first) as usize..);
        let mut replica = Game::new(settings.clone());
        // Entries before `applied` are on the replica.
        let mut applied = 0;
        let mut frames = Vec::with_capacity(missed.len());
        for (seq, logged) in (after + 1..).zip(missed) {
            let now_ms = base.saturating_add_signed(i64::from(logged.now));
            let change = match logged.what {
                What::Play(i) => {
                    let i = i as usize;
                    let entry = entries.get(i)?;
                    for earlier in entries.get(applied..i)? {
                        earlier.apply_to(&mut replica).ok()?;
                    }
                    let events = entry.apply_to(&mut replica).ok()?;
                    applied = i + 1;
                    Change::of_entry(entry.clone(), events, now_ms)
                }
                What::Presence {
                    player,
                    connected,
                    grace_until,
                } => Change::Presence {
                    player,
                    connected,
                    grace_until_ms: grace_until.map(|g| base.saturating_add_signed(i64::from(g))),
                },
                What::GraceExpired { player } => Change::GraceExpired { player },
            };
            frames.push(encode(&ServerMessage::Event(Box::new(GameEvent {
                game,
                seq,
                now_ms,
                change,
            }))));
        }
        Some(frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::game::Action;
    use protocol::record::EntryKind;
    use protocol::settings::Level;

    #[test]
    fn a_logged_event_is_small() {
        assert!(std::mem::size_of::<Logged>() <= 16);
    }

    /// A game of moves and lag entries with presence changes between them, to its end:
    /// the frames rebuilt after any seq are exactly the frames published.
    #[test]
    fn rebuilt_frames_are_the_published_ones() {
        let settings = Settings::blitz(Level::Three);
        let mut game = Game::new(settings.clone());
        let mut entries = Vec::new();
        let mut history = History::new(1000);
        let mut sent = Vec::new();
        let mut publish = |history: &mut History, now_ms, change: Change, entry| {
            let seq = sent.len() as u64 + 1;
            history.push(seq, now_ms, &change, entry);
            sent.push(encode(&ServerMessage::Event(Box::new(GameEvent {
                game: GameId::from_u64_pair(0, 7),
                seq,
                now_ms,
                change,
            }))));
        };
        let mut t = 0;
        for i in 0..20u64 {
            t += 300;
            if i % 5 == 0 {
                let kind = EntryKind::Lag {
                    player: Player::Red,
                    lag_ms: 20 + i as u32,
                };
                let entry = Entry { at_ms: t, kind };
                let events = entry.apply_to(&mut game).unwrap();
                entries.push(entry.clone());
                // Published at its instant (a `lag` change) or later (a `play`).
                let now = t + i % 2;
                publish(
                    &mut history,
                    now,
                    Change::of_entry(entry, events, now),
                    entries.len() - 1,
                );
                let player = Player::Black;
                let change = Change::Presence {
                    player,
                    connected: i % 2 == 0,
                    grace_until_ms: (i % 2 == 1).then_some(t + 600),
                };
                publish(&mut history, t + 1, change, 0);
            }
            let player = game.turn();
            let Some(action) = game
                .legal_actions(player)
                .into_iter()
                .find(|a| matches!(a, Action::Move { drop: true, .. }))
            else {
                break;
            };
            let events = game.apply(player, action, t).unwrap();
            let entry = Entry {
                at_ms: t,
                kind: EntryKind::act(player, action),
            };
            entries.push(entry.clone());
            publish(
                &mut history,
                t + 2 * (i % 2),
                Change::play(entry, events),
                entries.len() - 1,
            );
        }
        let last = sent.len() as u64;
        // The first legal moves end it by a full socket: it is over.
        assert!(!game.is_playing() && last > 12, "{last} events");
        for after in 0..=last {
            let frames = history
                .frames_after(GameId::from_u64_pair(0, 7), after, &settings, &entries)
                .unwrap();
            assert_eq!(frames, sent[after as usize..], "after {after}");
        }
        assert!(history
            .frames_after(GameId::from_u64_pair(0, 7), last + 1, &settings, &entries)
            .is_none());
    }

    #[test]
    fn beyond_its_cap_the_oldest_are_forgotten() {
        let mut history = History::new(3);
        for seq in 1..=5 {
            let change = Change::GraceExpired {
                player: Player::Red,
            };
            history.push(seq, seq, &change, 0);
        }
        let settings = Settings::blitz(Level::One);
        assert!(
            history
                .frames_after(GameId::from_u64_pair(0, 1), 1, &settings, &[])
                .is_none(),
            "2 is gone"
        );
        let frames = history
            .frames_after(GameId::from_u64_pair(0, 1), 2, &settings, &[])
            .unwrap();
        assert_eq!(frames.len(), 3);
        assert!(frames[0].as_str().contains(r#""seq":3"#));
        assert!(history
            .frames_after(GameId::from_u64_pair(0, 1), 5, &settings, &[])
            .unwrap()
            .is_empty());
    }

    /// Instants are kept from the first event's, either side of it; one the log cannot
    /// hold (24 days away) starts it again, so a client that missed it gets a snapshot, and
    /// the events after it are rebuilt with their own instants.
    #[test]
    fn an_instant_the_log_cannot_hold_starts_it_again() {
        let settings = Settings::blitz(Level::One);
        let id = GameId::from_u64_pair(0, 1);
        let grace = |grace_until_ms| Change::Presence {
            player: Player::Black,
            connected: false,
            grace_until_ms,
        };
        let frame = |seq, now_ms, change| {
            encode(&ServerMessage::Event(Box::new(GameEvent {
                game: id,
                seq,
                now_ms,
                change,
            })))
        };
        let day = 86_400_000;
        let start = 1_800_000_000_000;
        let mut history = History::new(10);
        history.push(1, start, &grace(Some(start + 60_000)), 0);
        // Before the first event's instant: still held.
        history.push(2, start - 500, &grace(None), 0);
        let frames = history.frames_after(id, 0, &settings, &[]).unwrap();
        assert_eq!(
            frames,
            [
                frame(1, start, grace(Some(start + 60_000))),
                frame(2, start - 500, grace(None))
            ]
        );
        history.push(3, start + 30 * day, &grace(None), 0);
        assert!(history.frames_after(id, 2, &settings, &[]).is_none());
        history.push(4, start + 31 * day, &grace(Some(start - day)), 0);
        assert!(history.frames_after(id, 3, &settings, &[]).is_none());
        history.push(5, start + 32 * day, &grace(Some(start + 33 * day)), 0);
        let frames = history.frames_after(id, 4, &settings, &[]).unwrap();
        assert_eq!(
            frames,
            [frame(5, start + 32 * day, grace(Some(start + 33 * day)))]
        );
    }
}
