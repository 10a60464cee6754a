//! Reading a text: telling its form, parsing the record format line by line with every
//! problem located by line, column and token, and replaying it with refusals located too.

use super::header::{finish_header, reserved, valid_key, Field};
use super::move_list::import_move_list;
use super::*;

impl RecordFile {
    /// Reads a record in the text format, or imports a plain network move list (which is
    /// replayed to know who made each move). Use [`load`] to also replay a record with
    /// every refusal located.
    pub fn parse(text: &str) -> Result<RecordFile, RecordError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        match detect(text) {
            None => Err(empty_error()),
            Some(Format::Record) => parse_record(text).map(|(file, _)| file),
            Some(Format::MoveList) => import_move_list(text).map(|(file, _)| file),
        }
    }
}

impl Record {
    /// Reads the text form or a plain network move list; free header fields are dropped
    /// (see [`RecordFile::parse`]).
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        RecordFile::parse(text).map(|f| f.record)
    }
}

impl std::str::FromStr for Record {
    type Err = RecordError;
    fn from_str(text: &str) -> Result<Record, RecordError> {
        Record::parse(text)
    }
}

impl std::str::FromStr for RecordFile {
    type Err = RecordError;
    fn from_str(text: &str) -> Result<RecordFile, RecordError> {
        RecordFile::parse(text)
    }
}

pub(super) fn empty_error() -> RecordError {
    RecordError {
        position: Position {
            line: 1,
            column: 1,
            move_number: None,
        },
        token: String::new(),
        kind: Box::new(RecordErrorKind::Empty),
    }
}

/// The content of a line without a `#` comment.
pub(super) fn strip_comment(line: &str) -> &str {
    line.find('#').map_or(line, |i| &line[..i])
}

/// Which form `text` is in: a record if its first line that is not blank or a comment
/// starts with "TAMSK", a move list otherwise; `None` when there is nothing.
pub fn detect(text: &str) -> Option<Format> {
    let first = text
        .lines()
        .map(|l| strip_comment(l).trim())
        .find(|l| !l.is_empty())?;
    let word = first.split_whitespace().next().unwrap_or_default();
    Some(if word.eq_ignore_ascii_case("tamsk") {
        Format::Record
    } else {
        Format::MoveList
    })
}

/// Reads `text` (either form) and replays it. Every problem, syntax or rules, comes back
/// with its line, column and token.
pub fn load(text: &str) -> Result<Loaded, RecordError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match detect(text) {
        None => Err(empty_error()),
        Some(Format::MoveList) => {
            let (file, game) = import_move_list(text)?;
            Ok(Loaded {
                file,
                game,
                format: Format::MoveList,
            })
        }
        Some(Format::Record) => {
            let (file, places) = parse_record(text)?;
            let mut game = Game::new(file.record.settings.clone());
            for (entry, place) in file.record.entries.iter().zip(&places) {
                if let Err(error) = entry.apply_to(&mut game) {
                    let EntryKind::Act { player, action, .. } = entry.kind else {
                        unreachable!("only actions are refused")
                    };
                    return Err(refusal(
                        &game,
                        entry.at_ms,
                        player,
                        &action,
                        error,
                        place.clone(),
                    ));
                }
            }
            if let Some(end) = file.record.end_ms {
                game.advance(end);
            }
            Ok(Loaded {
                file,
                game,
                format: Format::Record,
            })
        }
    }
}

/// The error for an action refused by `game` (as the refusal left it: brought up to the
/// action's instant).
pub(super) fn refusal(
    game: &Game,
    at_ms: u64,
    player: Player,
    action: &Action,
    error: ActionError,
    (position, token): (Position, String),
) -> RecordError {
    let text = Notation(*action).to_string();
    let kind = match &error {
        ActionError::GameOver => {
            // A refused action changes nothing, not even the instant: describe the game
            // as it stood when the action came.
            let mut then = game.clone();
            then.advance(at_ms);
            RecordErrorKind::AfterGameOver {
                action: text,
                outcome: describe_state(&then),
            }
        }
        _ => RecordErrorKind::Refused {
            action: text,
            player,
            error,
        },
    };
    RecordError {
        position,
        token,
        kind: Box::new(kind),
    }
}

/// A line being read: its number and text, to locate tokens.
pub(super) struct Line<'a> {
    pub(super) number: usize,
    pub(super) text: &'a str,
}

impl Line<'_> {
    pub(super) fn column(&self, offset: usize) -> usize {
        self.text[..offset].chars().count() + 1
    }
    pub(super) fn error(&self, offset: usize, token: &str, kind: RecordErrorKind) -> RecordError {
        RecordError {
            position: Position {
                line: self.number,
                column: self.column(offset),
                move_number: None,
            },
            token: token.to_string(),
            kind: Box::new(kind),
        }
    }
}

pub(super) fn parse_instant(token: &str) -> Option<u64> {
    let (whole, frac) = match token.split_once('.') {
        Some((w, f)) => (w, f),
        None => (token, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !digits(whole)
        || !digits(frac)
        || frac.len() > 3
        || (token.contains('.') && frac.is_empty())
    {
        return None;
    }
    let ms: u64 = format!("{frac:0<3}").parse().ok()?;
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(ms)
}

/// Splits an action's text from the `lag=N comp=N` figures that may follow it.
fn split_lag(text: &str) -> (&str, Option<u32>, Option<u32>) {
    let mut rest = text.trim_end();
    let (mut lag, mut comp) = (None, None);
    while let Some((head, last)) = rest.rsplit_once(char::is_whitespace) {
        let figure = |key: &str| last.strip_prefix(key).and_then(|v| v.parse::<u32>().ok());
        if let Some(v) = figure("lag=") {
            lag = Some(v);
        } else if let Some(v) = figure("comp=") {
            comp = Some(v);
        } else {
            break;
        }
        rest = head.trim_end();
    }
    (rest, lag, comp)
}

fn parse_player(
    line: &Line,
    tok: Option<&(usize, &str)>,
    after: &str,
) -> Result<Player, RecordError> {
    let Some(&(off, text)) = tok else {
        return Err(line.error(
            line.text.len(),
            after,
            RecordErrorKind::Missing(after.to_string(), "a player: red or black"),
        ));
    };
    text.parse()
        .map_err(|_| line.error(off, text, RecordErrorKind::Player(text.to_string())))
}

fn no_more(line: &Line, tok: Option<&(usize, &str)>, why: &'static str) -> Result<(), RecordError> {
    match tok {
        Some(&(off, text)) => Err(line.error(
            off,
            text,
            RecordErrorKind::Unexpected(text.to_string(), why),
        )),
        None => Ok(()),
    }
}

/// Reads the record form, returning each entry's position and action token.
fn parse_record(text: &str) -> Result<(RecordFile, Vec<(Position, String)>), RecordError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, text)| Line {
            number: i + 1,
            text,
        })
        .filter(|l| !strip_comment(l.text).trim().is_empty());
    // The magic line.
    let first = lines.next().ok_or_else(empty_error)?;
    let toks = notation::tokens(strip_comment(first.text));
    let magic: Vec<&str> = RECORD_MAGIC.split(' ').collect();
    let words: Vec<&str> = toks.iter().map(|t| t.1).collect();
    if words.len() < 3
        || !words[0].eq_ignore_ascii_case(magic[0])
        || !words[1].eq_ignore_ascii_case(magic[1])
    {
        let t = toks.first().map_or("", |t| t.1);
        return Err(first.error(
            toks[0].0,
            t,
            RecordErrorKind::BadMagic(first.text.trim().to_string()),
        ));
    }
    if words[2] != RECORD_VERSION.to_string() || words.len() > 3 {
        let (off, t) = toks[2];
        return Err(first.error(off, t, RecordErrorKind::Version(words[2..].join(" "))));
    }

    // Header fields in order.
    let mut header: Vec<Field> = Vec::new();
    // Settings, names and free fields, made when the header ends so that errors come in
    // the order of the text.
    let mut header_done: Option<(Settings, RecordFile)> = None;
    let mut entries = Vec::new();
    let mut places = Vec::new();
    let mut end_ms = None;
    let mut in_body = false;
    for line in lines {
        let content = strip_comment(line.text);
        let toks = notation::tokens(content);
        let (off0, tok0) = toks[0];
        let starts_entry = tok0.starts_with(|c: char| c.is_ascii_digit());
        if !starts_entry && !in_body {
            // "key: value", the value being the rest of the line as written (a value may
            // contain '#').
            let trimmed = line.text.trim_start();
            let key_off = line.text.len() - trimmed.len();
            let Some((key, value)) = trimmed.split_once(':') else {
                return Err(line.error(
                    key_off,
                    tok0,
                    RecordErrorKind::HeaderSyntax(tok0.to_string()),
                ));
            };
            let key = key.trim_end();
            if !valid_key(key) {
                return Err(line.error(
                    key_off,
                    key,
                    RecordErrorKind::HeaderSyntax(key.to_string()),
                ));
            }
            if reserved(key) && header.iter().any(|h| h.0 == key) {
                return Err(line.error(key_off, key, RecordErrorKind::Duplicate(key.to_string())));
            }
            let value_off = key_off + trimmed.find(':').unwrap_or(0) + 1;
            let value_off = value_off
                + (line.text[value_off..].len() - line.text[value_off..].trim_start().len());
            header.push((
                key.to_string(),
                value.trim().to_string(),
                line.number,
                value_off,
            ));
            continue;
        }
        if end_ms.is_some() {
            return Err(line.error(off0, tok0, RecordErrorKind::AfterEnd));
        }
        if !starts_entry {
            let key = tok0.trim_end_matches(':');
            let kind = if tok0.ends_with(':') || toks.get(1).is_some_and(|t| t.1 == ":") {
                RecordErrorKind::LateHeader(key.to_string())
            } else {
                RecordErrorKind::Instant(tok0.to_string())
            };
            return Err(line.error(off0, tok0, kind));
        }
        if !in_body {
            header_done = Some(finish_header(text, &first, &header)?);
        }
        in_body = true;
        let mut it = toks.iter().peekable();
        // An optional move number "12.".
        if let Some(&&(_, t)) = it.peek() {
            if let Some(n) = t.strip_suffix('.') {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    it.next();
                }
            }
        }
        let Some(&(t_off, t_text)) = it.next() else {
            return Err(line.error(
                content.trim_end().len(),
                tok0,
                RecordErrorKind::Missing(tok0.to_string(), "an instant, like 12.345"),
            ));
        };
        let at_ms = parse_instant(t_text).ok_or_else(|| {
            line.error(t_off, t_text, RecordErrorKind::Instant(t_text.to_string()))
        })?;
        let Some(&(w_off, who)) = it.next() else {
            return Err(line.error(
                content.trim_end().len(),
                t_text,
                RecordErrorKind::Missing(
                    t_text.to_string(),
                    "a player and an action, like 'red d1-d2'",
                ),
            ));
        };
        let kind = match who.to_ascii_lowercase().as_str() {
            "red" | "black" => {
                let player: Player = who.parse().expect("checked");
                let Some(&(a_off, _)) = it.next() else {
                    return Err(line.error(
                        content.trim_end().len(),
                        who,
                        RecordErrorKind::Missing(who.to_string(), "an action, like d1-d2"),
                    ));
                };
                let (rest, lag_ms, comp_ms) = split_lag(&content[a_off..]);
                let action = parse_action(rest).map_err(|e| {
                    let off = a_off + e.offset;
                    line.error(off, &e.token.clone(), RecordErrorKind::Notation(e))
                })?;
                places.push((
                    Position {
                        line: line.number,
                        column: line.column(a_off),
                        move_number: None,
                    },
                    rest.trim_end().to_string(),
                ));
                EntryKind::Act {
                    player,
                    action,
                    lag_ms,
                    comp_ms,
                }
            }
            "lag" => {
                let player = parse_player(&line, it.next(), who)?;
                let tok = it.next();
                let lag_ms = tok
                    .and_then(|&(_, t)| t.parse::<u32>().ok())
                    .ok_or_else(|| {
                        line.error(
                            tok.map_or(content.trim_end().len(), |&(off, _)| off),
                            tok.map_or(who, |&(_, t)| t),
                            RecordErrorKind::Missing(
                                who.to_string(),
                                "a player and a round trip in ms, like 'lag red 150'",
                            ),
                        )
                    })?;
                no_more(&line, it.next(), "'lag' takes a player and milliseconds")?;
                EntryKind::Lag { player, lag_ms }
            }
            "advance" => {
                no_more(&line, it.next(), "'advance' takes nothing more")?;
                EntryKind::Advance
            }
            "both-absent" => {
                no_more(&line, it.next(), "'both-absent' takes nothing more")?;
                EntryKind::BothAbsent
            }
            "abandon" => {
                let player = parse_player(&line, it.next(), who)?;
                no_more(&line, it.next(), "'abandon' takes one player")?;
                EntryKind::Abandon { player }
            }
            "abort" => {
                let Some(&(r_off, r_text)) = it.next() else {
                    return Err(line.error(
                        content.trim_end().len(),
                        who,
                        RecordErrorKind::Missing(
                            who.to_string(),
                            "a reason: shutdown, both-absent or no-first-move PLAYER",
                        ),
                    ));
                };
                let reason = match r_text.to_ascii_lowercase().as_str() {
                    "shutdown" => AbortReason::Shutdown,
                    "both-absent" => AbortReason::BothAbsent,
                    "no-first-move" => AbortReason::NoFirstMove {
                        player: parse_player(&line, it.next(), r_text)?,
                    },
                    _ => {
                        return Err(line.error(
                            r_off,
                            r_text,
                            RecordErrorKind::AbortReason(r_text.to_string()),
                        ))
                    }
                };
                no_more(&line, it.next(), "the abort reason is complete")?;
                EntryKind::Abort { reason }
            }
            "end" => {
                no_more(&line, it.next(), "'end' takes nothing more")?;
                end_ms = Some(at_ms);
                continue;
            }
            _ => return Err(line.error(w_off, who, RecordErrorKind::Who(who.to_string()))),
        };
        if !matches!(kind, EntryKind::Act { .. }) {
            places.push((
                Position {
                    line: line.number,
                    column: line.column(w_off),
                    move_number: None,
                },
                content[w_off..].trim_end().to_string(),
            ));
        }
        entries.push(Entry { at_ms, kind });
    }

    let (settings, mut file) = match header_done {
        Some(done) => done,
        None => finish_header(text, &first, &header)?,
    };
    file.record.settings = settings;
    file.record.entries = entries;
    file.record.end_ms = end_ms;
    Ok((file, places))
}
