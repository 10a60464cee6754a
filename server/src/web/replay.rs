//! Replay frames of a stored game, computed with the rules engine so that the page never
//! re-implements the rules: the game before any entry, then after each entry, as the
//! documented [`GameView`] (without its settings and entries, given once beside them).
//! A page shows the sand at any instant `t` from the last frame at or before `t` (sand
//! runs by the formula of `docs/PROTOCOL.md`, "Drawing the sand").

use protocol::game::{Event, Game};
use protocol::record::{Entry, Record};
use protocol::view::GameView;
use serde::Serialize;

/// The game after one entry (or at the start, without one).
#[derive(Clone, Debug, Serialize)]
pub struct Frame {
    /// When it happened (game time, ms).
    pub at_ms: u64,
    /// What caused it: `null` for the start.
    pub entry: Option<Entry>,
    /// What the engine did (as in a `play` event).
    pub events: Vec<Event>,
    /// The game then, `settings` and `entries` left out.
    pub view: serde_json::Value,
}

/// Everything a page needs to replay a record.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    pub settings: protocol::settings::Settings,
    /// The instant the record was closed (the last frame's otherwise).
    pub end_ms: u64,
    pub frames: Vec<Frame>,
    /// The result in words (`Outcome::describe`), or why it was aborted.
    pub result: Option<String>,
}

/// A record that the engine refuses at entry `index`.
#[derive(Debug, thiserror::Error)]
#[error("entry {index} of the record does not replay: {error}")]
pub struct BadRecord {
    pub index: usize,
    pub error: protocol::game::ActionError,
}

fn view_of(game: &Game) -> serde_json::Value {
    let mut view = serde_json::to_value(GameView::of(game, &[])).expect("a view is JSON");
    if let Some(map) = view.as_object_mut() {
        map.remove("settings");
        map.remove("entries");
    }
    view
}

/// The frames of `record`, replayed from the start.
pub fn frames(record: &Record) -> Result<Replay, BadRecord> {
    let mut game = Game::new(record.settings.clone());
    let mut frames = vec![Frame {
        at_ms: 0,
        entry: None,
        events: Vec::new(),
        view: view_of(&game),
    }];
    for (index, entry) in record.entries.iter().enumerate() {
        let events = entry
            .apply_to(&mut game)
            .map_err(|error| BadRecord { index, error })?;
        frames.push(Frame {
            at_ms: entry.at_ms,
            entry: Some(entry.clone()),
            events,
            view: view_of(&game),
        });
    }
    let last = frames.last().map_or(0, |f| f.at_ms);
    let end_ms = record.end_ms.unwrap_or(last).max(last);
    if end_ms > last {
        // As `Record::replay` does: the game brought up to the instant it was closed.
        let events = game.advance(end_ms);
        frames.push(Frame {
            at_ms: end_ms,
            entry: None,
            events,
            view: view_of(&game),
        });
    }
    let result = match game.status() {
        protocol::game::Status::Playing => None,
        protocol::game::Status::Finished { outcome } => Some(outcome.describe()),
        protocol::game::Status::Aborted { reason, .. } => {
            Some(format!("Aborted: {}", reason.describe()))
        }
    };
    Ok(Replay {
        settings: record.settings.clone(),
        end_ms,
        frames,
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::game::{Action, Player};
    use protocol::record::EntryKind;
    use protocol::settings::{Level, Settings};

    #[test]
    fn the_last_frame_is_the_replayed_game() {
        let settings = Settings::blitz(Level::Two);
        let mut game = Game::new(settings.clone());
        let mut entries = Vec::new();
        for (t, player, from, to) in [
            (100, Player::Red, "d1", "d2"),
            (300, Player::Black, "g1", "f1"),
        ] {
            let action = Action::Move {
                from: from.parse().unwrap(),
                to: to.parse().unwrap(),
                drop: true,
            };
            let entry = Entry {
                at_ms: t,
                kind: EntryKind::act(player, action),
            };
            entry.apply_to(&mut game).unwrap();
            entries.push(entry);
        }
        let record = Record {
            settings,
            red: None,
            black: None,
            entries,
            end_ms: Some(500),
        };
        let replay = frames(&record).unwrap();
        // The start, two moves, and the close at 500 ms.
        assert_eq!(replay.frames.len(), 4);
        assert_eq!(replay.end_ms, 500);
        assert!(replay.frames[0].entry.is_none());
        assert_eq!(replay.frames[1].at_ms, 100);
        let final_game = record.replay().unwrap();
        let expected = view_of(&final_game);
        assert_eq!(replay.frames[3].view, expected);
        assert_eq!(expected["board"].as_array().unwrap().len(), 37);
        assert!(replay.frames[1].view.get("entries").is_none());
        // d2 got Red's ring after the first move.
        let d2 = &replay.frames[1].view["board"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["square"] == "d2")
            .unwrap()
            .clone();
        assert_eq!(d2["rings"], 1);
        assert_eq!(d2["glass"], "X");
    }

    #[test]
    fn a_record_the_engine_refuses_names_its_entry() {
        let record = Record {
            settings: Settings::blitz(Level::Two),
            red: None,
            black: None,
            // Black cannot move first.
            entries: vec![Entry {
                at_ms: 10,
                kind: EntryKind::act(
                    Player::Black,
                    Action::Move {
                        from: "g1".parse().unwrap(),
                        to: "f1".parse().unwrap(),
                        drop: true,
                    },
                ),
            }],
            end_ms: None,
        };
        let err = frames(&record).unwrap_err();
        assert_eq!(err.index, 0);
        assert!(err.to_string().contains("entry 0"), "{err}");
    }
}
