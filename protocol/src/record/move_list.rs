//! Importing a plain network-server move list (`d1-d2/13 g1-f1 ...`) as a Level 1 record.

use super::read::{empty_error, parse_instant, refusal, strip_comment, Line};
use super::*;

/// The settings of an imported network move list: Level 1 without a game clock, and the
/// longest allowed abort time, since a network move's `/seconds` may exceed 30.
pub fn move_list_settings() -> Settings {
    Settings {
        game_clock: None,
        abort_ms: 3_600_000,
        ..Settings::level(Level::One)
    }
}

/// Imports a plain network move list: every token a move `from-to`, optionally
/// `/seconds` (separated by whitespace, commas or semicolons), applied for the player on turn with a drop whenever the rules allow.
/// Instants: the cumulative `/seconds`, or [`MOVE_LIST_STEP_MS`] for a move without.
pub(super) fn import_move_list(text: &str) -> Result<(RecordFile, Game), RecordError> {
    let settings = move_list_settings();
    let mut game = Game::new(settings.clone());
    let mut entries = Vec::new();
    let mut now = 0u64;
    let mut number = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = Line {
            number: i + 1,
            text: raw,
        };
        // Commas and semicolons separate moves too (same length: offsets stay right).
        let content = strip_comment(raw).replace([',', ';'], " ");
        for (off, token) in notation::tokens(&content) {
            // Tolerate move numbers such as "12." in front of moves.
            if let Some(n) = token.strip_suffix('.') {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
            }
            number += 1;
            let locate = |mut e: RecordError| {
                e.position.move_number = Some(number);
                e
            };
            let (move_text, seconds) = match token.split_once('/') {
                Some((m, s)) => (m, Some((s, off + m.len() + 1))),
                None => (token, None),
            };
            let not_a_move =
                || locate(line.error(off, token, RecordErrorKind::NotAMove(token.to_string())));
            let action = match parse_action(move_text) {
                Ok(a @ Action::Move { .. }) => a,
                Ok(_) => return Err(not_a_move()),
                Err(e)
                    if matches!(e.kind, notation::NotationErrorKind::Square(_))
                        && move_text.contains('-') =>
                {
                    let mut err = locate(line.error(
                        off + e.offset,
                        &e.token.clone(),
                        RecordErrorKind::Notation(e),
                    ));
                    // Name the whole move as the token, the column points at the square.
                    err.token = token.to_string();
                    return Err(err);
                }
                Err(_) => return Err(not_a_move()),
            };
            let step = match seconds {
                None => MOVE_LIST_STEP_MS,
                Some((s, s_off)) => parse_instant(s).ok_or_else(|| {
                    let kind = if s.is_empty() {
                        RecordErrorKind::Missing(
                            token.to_string(),
                            "the seconds after '/', like d1-d2/13",
                        )
                    } else {
                        RecordErrorKind::Instant(s.to_string())
                    };
                    let mut e = locate(line.error(s_off, s, kind));
                    e.token = token.to_string();
                    e
                })?,
            };
            now = now.saturating_add(step);
            // Whatever was due happens first: the move is for the player on turn then.
            game.advance(now);
            let player = game.turn();
            if let Err(error) = game.apply(player, action, now) {
                let mut e = refusal(
                    &game,
                    now,
                    player,
                    &action,
                    error,
                    (
                        line.error(off, token, RecordErrorKind::Empty).position,
                        token.to_string(),
                    ),
                );
                e.position.move_number = Some(number);
                return Err(e);
            }
            entries.push(Entry {
                at_ms: now,
                kind: EntryKind::act(player, action),
            });
        }
    }
    if number == 0 {
        return Err(empty_error());
    }
    // When neither player can move, the game ends once the last windows close (the
    // opponent's claim window after a move without a drop): record that instant.
    let mut end_ms = None;
    if game.is_ending() {
        while game.is_playing() {
            match game.next_deadline() {
                Some(t) => {
                    game.advance(t);
                }
                None => break,
            }
        }
        end_ms = Some(game.now());
    }
    let record = Record {
        settings,
        red: None,
        black: None,
        entries,
        end_ms,
    };
    Ok((RecordFile::new(record), game))
}
