//! What the server makes of a client's message before handling it: its `id`, strict
//! fields (a field the message does not have is refused, `unknown_field`), and the
//! settings fixed by the rules page.

use std::collections::HashMap;
use std::sync::OnceLock;

use protocol::settings::{Settings, FIXED};
use protocol::wire::{ClientMessage, RequestId};
use serde_json::{Map, Value};

use crate::Config;

mod hot;

/// The `type` tags a client may send; anything else is `unknown_message`.
pub const CLIENT_TYPES: [&str; 28] = [
    "hello",
    "seek",
    "cancel_seek",
    "list_games",
    "watch",
    "watch_code",
    "join",
    "leave",
    "act",
    "claim_abandonment",
    "ping",
    "pong",
    "list_seeks",
    "list_players",
    "accept_seek",
    "challenge",
    "accept_challenge",
    "decline_challenge",
    "cancel_challenge",
    "host",
    "join_code",
    "rematch",
    "decline_rematch",
    "play_bot",
    "tournament_create",
    "tournament_join",
    "tournament_withdraw",
    "tournament_cancel",
];

/// A refused message: its error code and the message for people.
pub type Refused = (&'static str, String);

/// Parses a frame into a message and its `id`, telling malformed JSON, unknown messages,
/// unknown fields, fixed settings and bad fields apart. A refusal carries the message's id
/// when it had a valid one.
///
/// The frames of play (`act`, `ping`) are read in one pass when they are plainly well
/// formed ([`hot`]); everything else goes through a `Value` first, to name its errors.
pub fn parse_request(
    text: &str,
) -> Result<(ClientMessage, Option<RequestId>), (Refused, Option<RequestId>)> {
    if let Some(hit) = hot::parse(text) {
        return Ok(hit);
    }
    general(text)
}

/// Every message, read through a `Value` so that each error is told apart.
fn general(text: &str) -> Result<(ClientMessage, Option<RequestId>), (Refused, Option<RequestId>)> {
    let mut value: Value = serde_json::from_str(text)
        .map_err(|e| (("bad_json", format!("malformed JSON: {e}")), None))?;
    let id = match value.as_object_mut().and_then(|o| o.remove("id")) {
        None => None,
        Some(raw) => Some(RequestId::from_json(&raw).map_err(|why| (("bad_id", why), None))?),
    };
    let fail = |refused: Refused| (refused, id.clone());
    let Some(tag) = value
        .get("type")
        .and_then(|t| t.as_str())
        .map(str::to_owned)
    else {
        return Err(fail((
            "bad_message",
            "a message is a JSON object with a string field \"type\"".into(),
        )));
    };
    if !CLIENT_TYPES.contains(&tag.as_str()) {
        return Err(fail((
            "unknown_message",
            format!(
                "unknown message type {:?}; known: {}",
                tag.chars().take(40).collect::<String>(),
                CLIENT_TYPES.join(", ")
            ),
        )));
    }
    refuse_fixed_settings(&tag, &value).map_err(fail)?;
    refuse_unknown_fields(&tag, &value).map_err(fail)?;
    refuse_bad_bot_level(&tag, &value).map_err(fail)?;
    let msg = serde_json::from_value(value)
        .map_err(|e| fail(("bad_message", format!("bad {tag} message: {e}"))))?;
    Ok((msg, id))
}

/// The fields of each message, action and settings object, read from the JSON Schema
/// (which is generated from the types): `client.<type>`, `action.<type>`, `settings`,
/// `game_clock`.
fn fields() -> &'static HashMap<String, Vec<String>> {
    static FIELDS: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let schema = protocol::wire::json_schema();
        let defs = &schema["definitions"];
        let keys = |props: &Value| -> Vec<String> {
            props
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        let mut out = HashMap::new();
        for (def, prefix) in [("ClientMessage", "client"), ("Action", "action")] {
            for v in defs[def]["oneOf"].as_array().into_iter().flatten() {
                let ty = &v["properties"]["type"];
                let Some(tag) = ty["enum"][0].as_str().or_else(|| ty["const"].as_str()) else {
                    continue;
                };
                out.insert(format!("{prefix}.{tag}"), keys(&v["properties"]));
            }
        }
        out.insert(
            "settings".into(),
            keys(&defs["PlayerSettings"]["properties"]),
        );
        out.insert("game_clock".into(), keys(&defs["GameClock"]["properties"]));
        out
    })
}

/// The first field of `object` not in `known`, as `path` + field.
fn unknown_in(
    object: &Map<String, Value>,
    known: Option<&Vec<String>>,
    what: &str,
    path: &str,
) -> Result<(), Refused> {
    let Some(known) = known else { return Ok(()) };
    match object.keys().find(|k| !known.contains(k)) {
        None => Ok(()),
        Some(field) => {
            let mut list: Vec<&str> = known
                .iter()
                .map(String::as_str)
                .filter(|k| *k != "type" && *k != "id")
                .collect();
            list.sort_unstable();
            Err((
                "unknown_field",
                format!(
                    "unknown field {:?} in {what}; its fields: {}",
                    format!("{path}{}", field.chars().take(40).collect::<String>()),
                    if list.is_empty() {
                        "none".to_string()
                    } else {
                        list.join(", ")
                    }
                ),
            ))
        }
    }
}

/// Strict mode: a field that the message (or its `action`, `settings` or
/// `settings.game_clock`) does not have is refused with `unknown_field`, naming it.
pub fn refuse_unknown_fields(tag: &str, message: &Value) -> Result<(), Refused> {
    let fields = fields();
    let Some(object) = message.as_object() else {
        return Ok(());
    };
    unknown_in(
        object,
        fields.get(&format!("client.{tag}")),
        &format!("the {tag} message"),
        "",
    )?;
    if let Some(action) = object.get("action").and_then(Value::as_object) {
        if let Some(kind) = action.get("type").and_then(Value::as_str) {
            unknown_in(
                action,
                fields.get(&format!("action.{kind}")),
                &format!("the {kind} action"),
                "action.",
            )?;
        }
    }
    if let Some(settings) = object.get("settings").and_then(Value::as_object) {
        unknown_in(settings, fields.get("settings"), "settings", "settings.")?;
        if let Some(clock) = settings.get("game_clock").and_then(Value::as_object) {
            unknown_in(
                clock,
                fields.get("game_clock"),
                "game_clock",
                "settings.game_clock.",
            )?;
        }
    }
    Ok(())
}

/// The message types that carry settings a player chooses.
const WITH_SETTINGS: [&str; 5] = ["seek", "challenge", "host", "play_bot", "tournament_create"];

/// Refuses a player's settings that name a field fixed by the rules page (`abort_ms`,
/// `late_release_ms`): `fixed_setting`.
pub fn refuse_fixed_settings(tag: &str, message: &Value) -> Result<(), Refused> {
    if !WITH_SETTINGS.contains(&tag) {
        return Ok(());
    }
    let Some(settings) = message.get("settings").and_then(Value::as_object) else {
        return Ok(());
    };
    for name in FIXED {
        if settings.contains_key(name) {
            let rule = Settings::default();
            let value = if name == "abort_ms" {
                rule.abort_ms
            } else {
                rule.late_release_ms
            };
            return Err((
                "fixed_setting",
                format!(
                    "settings.{name} is fixed by the rules page ({value} ms, unless this server's operator set another for tests: the answer's settings say which): players do not choose it; leave it out"
                ),
            ));
        }
    }
    Ok(())
}

/// The settings of a new game as the server plays them: the player's, with the fields
/// fixed by the rules page as this server's operator set them.
pub fn fixed(mut settings: Settings, config: &Config) -> Settings {
    settings.abort_ms = config.abort_ms;
    settings.late_release_ms = config.late_release_ms;
    settings
}

/// A `play_bot` whose `level` is not a level's name gets its own code (serde's message
/// would only say the whole message is bad).
fn refuse_bad_bot_level(tag: &str, message: &Value) -> Result<(), Refused> {
    use protocol::bot::BotLevel;
    let Some(level) = message.get("level").filter(|_| tag == "play_bot") else {
        return Ok(());
    };
    if level.is_null()
        || BotLevel::ALL
            .iter()
            .any(|l| level.as_str() == Some(l.name()))
    {
        return Ok(());
    }
    let names: Vec<_> = BotLevel::ALL
        .iter()
        .map(|l| format!("{:?}", l.name()))
        .collect();
    Err((
        "bad_bot_level",
        format!(
            "no bot level {}: the levels are {}",
            serde_json::to_string(level)
                .unwrap_or_default()
                .chars()
                .take(40)
                .collect::<String>(),
            names.join(", ")
        ),
    ))
}

/// `msg` with its settings (if any) fixed by [`fixed`].
pub fn with_fixed_rules(msg: ClientMessage, config: &Config) -> ClientMessage {
    match msg {
        ClientMessage::Seek { settings, rated } => ClientMessage::Seek {
            settings: fixed(settings, config),
            rated,
        },
        ClientMessage::Challenge {
            to,
            settings,
            rated,
        } => ClientMessage::Challenge {
            to,
            settings: fixed(settings, config),
            rated,
        },
        ClientMessage::Host { settings } => ClientMessage::Host {
            settings: fixed(settings, config),
        },
        ClientMessage::PlayBot {
            settings,
            level,
            rated,
        } => ClientMessage::PlayBot {
            settings: fixed(settings, config),
            level,
            rated,
        },
        other => other,
    }
}

/// The game a message concerns, if any.
pub fn game_of(msg: &ClientMessage) -> Option<protocol::wire::GameId> {
    match msg {
        ClientMessage::Watch { game, .. }
        | ClientMessage::Join { game, .. }
        | ClientMessage::Leave { game }
        | ClientMessage::Act { game, .. }
        | ClientMessage::ClaimAbandonment { game }
        | ClientMessage::Rematch { game }
        | ClientMessage::DeclineRematch { game } => Some(*game),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> (&'static str, String, Option<RequestId>) {
        let ((code, msg), id) = parse_request(text).unwrap_err();
        (code, msg, id)
    }

    #[test]
    fn ids_are_taken_off_and_checked() {
        let (msg, id) = parse_request(r#"{"type":"list_games","id":"q1"}"#).unwrap();
        assert_eq!(
            (msg, id),
            (ClientMessage::ListGames, Some(RequestId::Str("q1".into())))
        );
        let (_, id) = parse_request(r#"{"id":-7,"type":"cancel_seek"}"#).unwrap();
        assert_eq!(id, Some(RequestId::Int(-7)));
        for bad in [
            r#"1.5"#,
            "null",
            "true",
            "[1]",
            "9007199254740992",
            &format!("\"{}\"", "x".repeat(65)),
        ] {
            let (code, msg, id) = refused(&format!(r#"{{"type":"list_games","id":{bad}}}"#));
            assert_eq!((code, id), ("bad_id", None), "{bad}: {msg}");
        }
        // A refusal after the id was read echoes it.
        let (code, _, id) = refused(r#"{"type":"dance","id":5}"#);
        assert_eq!((code, id), ("unknown_message", Some(RequestId::Int(5))));
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        for (text, field) in [
            (r#"{"type":"list_games","verbose":true}"#, "\"verbose\""),
            (r#"{"type":"cancel_seek","now":1}"#, "\"now\""),
            (
                r#"{"type":"act","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"start","from":"d1","drop":true}}"#,
                "\"action.drop\"",
            ),
            (
                r#"{"type":"act","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"resign","why":"bored"}}"#,
                "\"action.why\"",
            ),
            (
                r#"{"type":"seek","settings":{"level":2,"speed":9}}"#,
                "\"settings.speed\"",
            ),
            (
                r#"{"type":"seek","settings":{"game_clock":{"main_ms":60000,"byo":1}}}"#,
                "\"settings.game_clock.byo\"",
            ),
            (
                r#"{"type":"hello","version":1,"name":"A","colour":"red"}"#,
                "\"colour\"",
            ),
        ] {
            let (code, msg, _) = refused(text);
            assert_eq!(code, "unknown_field", "{text}: {msg}");
            assert!(msg.contains(field), "{text}: {msg}");
        }
        let (code, msg, _) = refused(
            r#"{"type":"act","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"start","from":"d1","drop":true}}"#,
        );
        assert!(msg.contains("its fields: from"), "{code}: {msg}");
        // Every field a message has is accepted.
        parse_request(r#"{"type":"watch","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","after_seq":3,"id":"w"}"#).unwrap();
        parse_request(
            r#"{"type":"act","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"move","from":"d1","to":"d2","drop":true}}"#,
        )
        .unwrap();
        parse_request(r#"{"type":"seek","settings":{"level":1,"game_clock":{"main_ms":60000,"increment_ms":0},"turn_limit_ms":null}}"#).unwrap();
    }

    #[test]
    fn fixed_fields_are_refused_and_set_by_the_operator() {
        let v: Value =
            serde_json::from_str(r#"{"type":"seek","settings":{"abort_ms":3000}}"#).unwrap();
        let (code, msg) = refuse_fixed_settings("seek", &v).unwrap_err();
        assert_eq!(code, "fixed_setting");
        assert!(msg.contains("abort_ms") && msg.contains("30000"), "{msg}");
        let v: Value =
            serde_json::from_str(r#"{"settings":{"level":3,"late_release_ms":1}}"#).unwrap();
        assert!(refuse_fixed_settings("play_bot", &v).is_err());
        assert!(refuse_fixed_settings("host", &serde_json::json!({"settings":{}})).is_ok());
        let config = Config {
            abort_ms: 400,
            ..Config::default()
        };
        let ClientMessage::Seek { settings, .. } = with_fixed_rules(
            ClientMessage::Seek {
                settings: Settings::default(),
                rated: None,
            },
            &config,
        ) else {
            unreachable!()
        };
        assert_eq!((settings.abort_ms, settings.late_release_ms), (400, 5_000));
    }
}
