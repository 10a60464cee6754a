//! The frames a game sends many times a second (`act`, `ping`), read straight into their
//! types in one pass over the text, with no `Value` in between.
//!
//! Stricter than the general path ([`super::parse_request`]), never looser: a field these
//! types do not know, a repeated or `null` field, an id out of range, an escaped `type`,
//! a field of another action: any of it fails here, and the frame then takes the general
//! path, which names the error exactly. So a frame this accepts is one the general path
//! accepts too, as the same message and id (`tests` check it on every action and on the
//! frames that must fall through).

use protocol::board::Square;
use protocol::game::{Action, Glass};
use protocol::wire::{ClientMessage, GameId, RequestId, MAX_ID_INT, MAX_ID_LEN};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// One frame of either hot type, every field optional; which ones it has decides.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Frame<'a> {
    #[serde(rename = "type", borrow)]
    ty: &'a str,
    #[serde(default, deserialize_with = "present")]
    id: Option<Id>,
    #[serde(default, deserialize_with = "present")]
    game: Option<GameId>,
    #[serde(default, deserialize_with = "present", borrow)]
    action: Option<FlatAction<'a>>,
    #[serde(default, deserialize_with = "present")]
    client_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    lag_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    seq: Option<u64>,
}

/// An action with the fields of all of them; [`FlatAction::action`] keeps only the exact
/// field sets of one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlatAction<'a> {
    #[serde(rename = "type", borrow)]
    ty: &'a str,
    #[serde(default, deserialize_with = "present")]
    from: Option<Square>,
    #[serde(default, deserialize_with = "present")]
    to: Option<Square>,
    #[serde(default, deserialize_with = "present")]
    drop: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    glass: Option<Glass>,
    #[serde(default, deserialize_with = "present")]
    at: Option<Square>,
}

impl FlatAction<'_> {
    fn action(&self) -> Option<Action> {
        let f = self;
        // Exactly `n` of the optional fields are there.
        let fields = |n: usize| {
            [
                f.from.is_some(),
                f.to.is_some(),
                f.drop.is_some(),
                f.glass.is_some(),
                f.at.is_some(),
            ]
            .iter()
            .filter(|x| **x)
            .count()
                == n
        };
        Some(match self.ty {
            "start" if fields(1) => Action::Start { from: f.from? },
            "release" if fields(1) => Action::Release { to: f.to? },
            "move" if f.glass.is_none() && f.at.is_none() => Action::Move {
                from: f.from?,
                to: f.to?,
                drop: f.drop.unwrap_or(false),
            },
            "place" if f.from.is_none() && f.at.is_none() => Action::Place {
                glass: f.glass?,
                to: f.to?,
                drop: f.drop.unwrap_or(false),
            },
            "penalty_drop" if fields(1) => Action::PenaltyDrop { at: f.at? },
            "drop" if fields(0) => Action::Drop,
            "claim" if fields(0) => Action::Claim,
            "flip" if fields(0) => Action::Flip,
            "resign" if fields(0) => Action::Resign,
            _ => return None,
        })
    }
}

/// A field that is there: `null` is not taken for absent (the general path refuses a
/// `null` id, and a `null` field a message does not have).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A request id within the limits [`RequestId::from_json`] checks.
struct Id(RequestId);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                match v.checked_abs() {
                    Some(a) if a <= MAX_ID_INT => Ok(Id(RequestId::Int(v))),
                    _ => Err(E::custom("id out of range")),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                match i64::try_from(v) {
                    Ok(v) => self.visit_i64(v),
                    Err(_) => Err(E::custom("id out of range")),
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                if v.len() <= MAX_ID_LEN {
                    Ok(Id(RequestId::Str(v.to_owned())))
                } else {
                    Err(E::custom("id too long"))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The message and id of a hot frame; `None`: not one, or not plainly one (the general
/// path decides).
pub(super) fn parse(text: &str) -> Option<(ClientMessage, Option<RequestId>)> {
    let f: Frame = serde_json::from_str(text).ok()?;
    let msg = match (f.ty, f.game, &f.action, f.client_ms, f.lag_ms) {
        ("act", Some(game), Some(action), None, None) => ClientMessage::Act {
            game,
            action: action.action()?,
            seq: f.seq,
        },
        ("ping", None, None, client_ms, lag_ms) if f.seq.is_none() => {
            ClientMessage::Ping { client_ms, lag_ms }
        }
        _ => return None,
    };
    Some((msg, f.id.map(|i| i.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = "0190b8c4-1d2e-7000-8000-000000000001";

    /// Every hot frame this takes, the general path takes as the same message and id.
    fn same_as_general(text: &str) {
        let fast = parse(text).unwrap_or_else(|| panic!("not taken in one pass: {text}"));
        let general = super::super::general(text).expect("the general path accepts it");
        assert_eq!(fast, general, "{text}");
    }

    #[test]
    fn every_action_and_ping_is_read_in_one_pass_as_the_general_path_reads_it() {
        for action in [
            r#"{"type":"start","from":"d1"}"#,
            r#"{"type":"release","to":"d2"}"#,
            r#"{"type":"move","from":"d1","to":"d2"}"#,
            r#"{"type":"move","from":"d1","to":"d2","drop":true}"#,
            r#"{"to":"d2","drop":false,"type":"move","from":"d1"}"#,
            r#"{"type":"place","glass":"X","to":"d1"}"#,
            r#"{"type":"place","glass":"A","to":"a1","drop":true}"#,
            r#"{"type":"drop"}"#,
            r#"{"type":"claim"}"#,
            r#"{"type":"penalty_drop","at":"c3"}"#,
            r#"{"type":"flip"}"#,
            r#"{"type":"resign"}"#,
        ] {
            for id in [
                "",
                r#","id":7"#,
                r#","id":"m-1""#,
                r#","id":-9007199254740991"#,
                r#","seq":41"#,
                r#","id":3,"seq":0"#,
            ] {
                same_as_general(&format!(
                    r#"{{"type":"act","game":"{G}","action":{action}{id}}}"#
                ));
                same_as_general(&format!(
                    r#"{{"action":{action}{id},"game":"{G}","type":"act"}}"#
                ));
            }
        }
        for ping in [
            r#"{"type":"ping"}"#,
            r#"{"type":"ping","client_ms":12}"#,
            r#"{"type":"ping","client_ms":12,"lag_ms":40,"id":1}"#,
        ] {
            same_as_general(ping);
        }
        // A ping has no `seq`: the general path refuses it, and so this one leaves it.
        assert!(parse(r#"{"type":"ping","seq":3}"#).is_none());
    }

    #[test]
    fn anything_not_plainly_hot_falls_through_to_the_general_path() {
        let act = |action: &str| format!(r#"{{"type":"act","game":"{G}","action":{action}}}"#);
        for text in [
            // Other messages, and broken ones.
            r#"{"type":"hello","version":2,"name":"ann"}"#.to_string(),
            r#"{"type":"list_games"}"#.into(),
            "not json".into(),
            r#"{"type":"act"}"#.into(),
            // Extra, repeated, null and misplaced fields.
            format!(r#"{{"type":"act","game":"{G}","action":{{"type":"flip"}},"x":1}}"#),
            format!(r#"{{"type":"act","type":"act","game":"{G}","action":{{"type":"flip"}}}}"#),
            format!(r#"{{"type":"act","game":"{G}","action":{{"type":"flip"}},"id":null}}"#),
            format!(r#"{{"type":"act","game":"{G}","action":{{"type":"flip"}},"lag_ms":1}}"#),
            r#"{"type":"ping","game":null}"#.into(),
            r#"{"type":"ping","client_ms":null}"#.into(),
            // Ids out of range.
            r#"{"type":"ping","id":9007199254740992}"#.into(),
            r#"{"type":"ping","id":1.5}"#.into(),
            format!(r#"{{"type":"ping","id":"{}"}}"#, "x".repeat(MAX_ID_LEN + 1)),
            // An escaped tag: the general path decides.
            r#"{"type":"p\u0069ng"}"#.into(),
            // Fields of another action, or missing ones.
            act(r#"{"type":"start","to":"d1"}"#),
            act(r#"{"type":"start","from":"d1","drop":true}"#),
            act(r#"{"type":"move","from":"d1"}"#),
            act(r#"{"type":"move","from":"d1","to":"d2","at":"d3"}"#),
            act(r#"{"type":"place","from":"d1","to":"d2","glass":"X"}"#),
            act(r#"{"type":"flip","drop":false}"#),
            act(r#"{"type":"resign","from":"d1"}"#),
            act(r#"{"type":"teleport"}"#),
            act(r#"{"type":"start","from":"z9"}"#),
        ] {
            assert!(parse(&text).is_none(), "taken in one pass: {text}");
        }
    }
}
