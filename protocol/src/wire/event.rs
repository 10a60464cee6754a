//! A game's numbered change ([`GameEvent`]) and its JSON form, the event frame: one key
//! for the change beside `game`, `seq` and `now_ms` (docs/PROTOCOL.md).

use serde::{Deserialize, Serialize};

use super::{GameId, Seq};
use crate::game::{Event, Game, Player};
use crate::record::{entry_ms, Entry, EntryKind};

/// One numbered change of a game. On the wire (see [`EventFrame`]) the change is one key
/// beside `game`, `seq` and `now_ms`: `"play":{...}`, `"gone":[player, grace_until_ms]`,
/// `"back":player`, `"grace_expired":player` or `"lag":[player, rtt_ms]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameEvent {
    pub game: GameId,
    pub seq: Seq,
    /// The server's game time when the change was made: the instant of a presence, grace
    /// or lag change, and of a `play` entry unless its `at_ms` is given.
    pub now_ms: u64,
    pub change: Change,
}

/// What changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The engine moved on: `entry` is what caused it (apply it to a replica to stay
    /// exact), `events` what happened, less the events the entry implies
    /// ([`crate::delta`]) unless `complete`.
    Play {
        entry: Entry,
        events: Vec<Event>,
        complete: bool,
    },
    /// A player's connection came or went (at `now_ms`). While he is away,
    /// `grace_until_ms` is the game time at which his opponent may claim the win.
    Presence {
        player: Player,
        connected: bool,
        /// `None` when he is back.
        grace_until_ms: Option<u64>,
    },
    /// `player`'s grace ran out (at his `grace_until_ms`): his opponent may now send
    /// `claim_abandonment`.
    GraceExpired { player: Player },
    /// `player`'s round trip to the server (ms), measured by the server's own pings: the
    /// recorded `lag` entry at `now_ms` (it moves the deadlines that judge him; a
    /// replica applies it as that entry). Sent when first measured and when it moves by
    /// 10 ms or more.
    Lag { player: Player, rtt_ms: u64 },
}

impl Change {
    /// The `play` change of `entry`, which caused `events` (all of them, as the engine
    /// gave them): the implied ones are left out ([`crate::delta::compact`]).
    pub fn play(entry: Entry, events: Vec<Event>) -> Change {
        let (events, complete) = crate::delta::compact(&entry, events);
        Change::Play {
            entry,
            events,
            complete,
        }
    }

    /// The change that publishes `entry` at `now_ms`: a `lag` entry that caused nothing
    /// else is a [`Change::Lag`], any other a [`Change::play`].
    pub fn of_entry(entry: Entry, events: Vec<Event>, now_ms: u64) -> Change {
        match entry.kind {
            EntryKind::Lag { player, lag_ms } if events.is_empty() && entry.at_ms == now_ms => {
                Change::Lag {
                    player,
                    rtt_ms: lag_ms.into(),
                }
            }
            _ => Change::play(entry, events),
        }
    }
}

impl GameEvent {
    /// The entry this event publishes (a `play`'s, or a `lag` change's), to apply to a
    /// replica.
    pub fn entry(&self) -> Option<Entry> {
        match &self.change {
            Change::Play { entry, .. } => Some(entry.clone()),
            Change::Lag { player, rtt_ms } => Some(Entry {
                at_ms: self.now_ms,
                kind: EntryKind::Lag {
                    player: *player,
                    lag_ms: entry_ms(*rtt_ms),
                },
            }),
            _ => None,
        }
    }

    /// Applies this event's entry (if any) to `replica` and returns every engine event it
    /// caused, the implied ones included; an error if the replica refuses the entry or
    /// its events are not those the event carries (the replica differs from the
    /// server's game).
    pub fn apply_to(&self, replica: &mut Game) -> Result<Vec<Event>, ReplicaError> {
        let Some(entry) = self.entry() else {
            return Ok(Vec::new());
        };
        let all = entry.apply_to(replica).map_err(ReplicaError::Refused)?;
        let carried = match &self.change {
            Change::Play {
                events, complete, ..
            } => (events.as_slice(), *complete),
            _ => (&[][..], false),
        };
        let (kept, complete) = crate::delta::compact(&entry, all.clone());
        if (kept.as_slice(), complete) != carried {
            return Err(ReplicaError::Differs);
        }
        Ok(all)
    }
}

/// Why [`GameEvent::apply_to`] failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    #[error("the replica refuses the entry: {0}")]
    Refused(crate::game::ActionError),
    #[error("the replica's events differ from the server's")]
    Differs,
}

/// The JSON form of a [`GameEvent`]: `{"type":"event","game":...,"seq":...,"now_ms":...}`
/// and one key for the change.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "GameEvent")]
struct EventFrame {
    game: GameId,
    seq: Seq,
    /// The server's game time when the change was made (the instant of the change, and
    /// of a `play` entry without `at_ms`).
    now_ms: u64,
    #[serde(flatten)]
    change: WireChange,
}

/// The change of an event frame: exactly one of these keys.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "Change")]
enum WireChange {
    /// The engine moved on: an entry, and the engine events it caused that it does not
    /// imply (docs/PROTOCOL.md, "Implied events").
    Play(WirePlay),
    /// `[player, grace_until_ms]`: his connection went at `now_ms`; his opponent may claim
    /// the win from `grace_until_ms` on.
    Gone(Player, u64),
    /// `player`'s connection came back at `now_ms`.
    Back(Player),
    /// `player`'s grace ran out (at his `grace_until_ms`): his opponent may now send
    /// `claim_abandonment`.
    GraceExpired(Player),
    /// `[player, rtt_ms]`: the entry `{"entry":"lag","player":...,"lag_ms":rtt_ms}` at
    /// `now_ms`, the player's round trip measured by the server's pings.
    Lag(Player, u64),
}

/// A `play` change: the entry's fields, its instant (`at_ms`, omitted when it is the
/// event's `now_ms`), and the engine events it caused beyond those it implies.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Play")]
struct WirePlay {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at_ms: Option<u64>,
    #[serde(flatten)]
    kind: EntryKind,
    /// The engine events the entry caused, less the implied ones (omitted when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    events: Vec<Event>,
    /// `true`: `events` is every engine event, the implied ones included (they did not
    /// occur as usual). Omitted when `false`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    complete: bool,
}

/// [`EventFrame`] by reference, to serialise without copying.
#[derive(Serialize)]
struct EventFrameRef<'a> {
    game: GameId,
    seq: Seq,
    now_ms: u64,
    #[serde(flatten)]
    change: WireChangeRef<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum WireChangeRef<'a> {
    Play(WirePlayRef<'a>),
    Gone(Player, u64),
    Back(Player),
    GraceExpired(Player),
    Lag(Player, u64),
}

#[derive(Serialize)]
struct WirePlayRef<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    at_ms: Option<u64>,
    #[serde(flatten)]
    kind: &'a EntryKind,
    #[serde(skip_serializing_if = "<[Event]>::is_empty")]
    events: &'a [Event],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    complete: bool,
}

impl Serialize for GameEvent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let change = match &self.change {
            Change::Play {
                entry,
                events,
                complete,
            } => WireChangeRef::Play(WirePlayRef {
                at_ms: (entry.at_ms != self.now_ms).then_some(entry.at_ms),
                kind: &entry.kind,
                events,
                complete: *complete,
            }),
            Change::Presence {
                player,
                connected: false,
                grace_until_ms,
            } => WireChangeRef::Gone(*player, grace_until_ms.unwrap_or(self.now_ms)),
            Change::Presence { player, .. } => WireChangeRef::Back(*player),
            Change::GraceExpired { player } => WireChangeRef::GraceExpired(*player),
            Change::Lag { player, rtt_ms } => WireChangeRef::Lag(*player, *rtt_ms),
        };
        EventFrameRef {
            game: self.game,
            seq: self.seq,
            now_ms: self.now_ms,
            change,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for GameEvent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<GameEvent, D::Error> {
        let f = EventFrame::deserialize(d)?;
        let change = match f.change {
            WireChange::Play(p) => Change::Play {
                entry: Entry {
                    at_ms: p.at_ms.unwrap_or(f.now_ms),
                    kind: p.kind,
                },
                events: p.events,
                complete: p.complete,
            },
            WireChange::Gone(player, until) => Change::Presence {
                player,
                connected: false,
                grace_until_ms: Some(until),
            },
            WireChange::Back(player) => Change::Presence {
                player,
                connected: true,
                grace_until_ms: None,
            },
            WireChange::GraceExpired(player) => Change::GraceExpired { player },
            WireChange::Lag(player, rtt_ms) => Change::Lag { player, rtt_ms },
        };
        Ok(GameEvent {
            game: f.game,
            seq: f.seq,
            now_ms: f.now_ms,
            change,
        })
    }
}

impl schemars::JsonSchema for GameEvent {
    fn schema_name() -> String {
        "GameEvent".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        EventFrame::json_schema(gen)
    }
}
