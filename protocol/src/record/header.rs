//! The header of a record in the text format: which keys are settings or reserved, each
//! setting's value, and the settings, names and free fields a complete header makes.

use super::read::Line;
use super::*;

const SETTING_KEYS: [&str; 10] = [
    "level",
    "setup",
    "hourglass_ms",
    "neutral_ms",
    "drop_grace_ms",
    "full_socket",
    "game_clock",
    "turn_limit_ms",
    "abort_ms",
    "late_release_ms",
];

pub(super) fn reserved(key: &str) -> bool {
    SETTING_KEYS.contains(&key) || matches!(key, "red" | "black" | "result")
}

pub(super) fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn parse_u64(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("'{value}' is not a whole number of milliseconds"))
}

fn parse_optional_ms(value: &str) -> Result<Option<u64>, String> {
    if value.eq_ignore_ascii_case("none") {
        Ok(None)
    } else {
        parse_u64(value)
            .map(Some)
            .map_err(|e| format!("{e} (or none)"))
    }
}

fn parse_clock(value: &str) -> Result<Option<GameClock>, String> {
    if value.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let (main, inc) = value.split_once('+').unwrap_or((value, "0"));
    match (main.trim().parse(), inc.trim().parse()) {
        (Ok(main_ms), Ok(increment_ms)) => Ok(Some(GameClock {
            main_ms,
            increment_ms,
        })),
        _ => Err(format!(
            "'{value}' is not a game clock: expected none or main+increment in ms, like 600000+0"
        )),
    }
}

/// Applies one setting from the header.
fn set(settings: &mut Settings, key: &str, value: &str) -> Result<(), String> {
    match key {
        "setup" => {
            settings.setup = match value.to_ascii_lowercase().as_str() {
                "standard" => Setup::Standard,
                "placement" => Setup::Placement,
                _ => {
                    return Err(format!(
                        "'{value}' is not a set-up: expected standard or placement"
                    ))
                }
            }
        }
        "full_socket" => {
            settings.full_socket = match value.to_ascii_lowercase().as_str() {
                "lose" => FullSocket::Lose,
                "reject" => FullSocket::Reject,
                _ => {
                    return Err(format!(
                        "'{value}' is not a full-socket rule: expected lose or reject"
                    ))
                }
            }
        }
        "hourglass_ms" => settings.hourglass_ms = parse_u64(value)?,
        "neutral_ms" => settings.neutral_ms = parse_u64(value)?,
        "drop_grace_ms" => settings.drop_grace_ms = parse_u64(value)?,
        "abort_ms" => settings.abort_ms = parse_u64(value)?,
        "late_release_ms" => settings.late_release_ms = parse_u64(value)?,
        "turn_limit_ms" => settings.turn_limit_ms = parse_optional_ms(value)?,
        "game_clock" => settings.game_clock = parse_clock(value)?,
        _ => unreachable!("not a setting: {key}"),
    }
    Ok(())
}

/// A header field: key, value, line number, byte offset of the value in its line.
pub(super) type Field = (String, String, usize, usize);

/// Turns the header fields into settings, names and free fields, once the header is
/// complete: the level first, then every other field over its defaults.
pub(super) fn finish_header(
    text: &str,
    first: &Line,
    header: &[Field],
) -> Result<(Settings, RecordFile), RecordError> {
    let field_error = |h: &Field, message: String| RecordError {
        position: Position {
            line: h.2,
            column: text
                .lines()
                .nth(h.2 - 1)
                .map_or(1, |l| l[..h.3].chars().count() + 1),
            move_number: None,
        },
        token: h.1.clone(),
        kind: Box::new(RecordErrorKind::Setting {
            key: h.0.clone(),
            message,
        }),
    };
    let level_field = header.iter().find(|h| h.0 == "level").ok_or(RecordError {
        position: Position {
            line: first.number,
            column: 1,
            move_number: None,
        },
        token: String::new(),
        kind: Box::new(RecordErrorKind::NoLevel),
    })?;
    let level = level_field
        .1
        .parse::<u8>()
        .map_err(|_| format!("'{}' is not a level: expected 1, 2 or 3", level_field.1))
        .and_then(Level::try_from)
        .map_err(|m| field_error(level_field, m))?;
    let mut settings = Settings::level(level);
    let mut file = RecordFile::default();
    for h in header {
        match h.0.as_str() {
            "level" | "result" => {}
            "red" => file.record.red = Some(h.1.clone()),
            "black" => file.record.black = Some(h.1.clone()),
            key if SETTING_KEYS.contains(&key) => {
                set(&mut settings, key, &h.1).map_err(|m| field_error(h, m))?
            }
            _ => file.tags.push((h.0.clone(), h.1.clone())),
        }
    }
    if let Err(e) = settings.validate() {
        let key = e.name.split('.').next().unwrap_or(e.name);
        let h = header.iter().find(|h| h.0 == key).unwrap_or(level_field);
        return Err(field_error(h, e.to_string()));
    }
    Ok((settings, file))
}
