//! The text notation of one action, shared by game records and typed input.
//!
//! | notation | action |
//! | --- | --- |
//! | `d1-d2` | move the hourglass on d1 to d2 and drop a ring there |
//! | `d1-d2.` | the same move without dropping (trailing full stop) |
//! | `start d1` | pick up the hourglass on d1 (a move in two steps) |
//! | `release d2` | put the hourglass in hand down on d2 |
//! | `drop` | the regular drop on one's own destination |
//! | `claim` | drop one's ring on the opponent's destination where he did not |
//! | `penalty e4` | the penalty ring, on e4 |
//! | `flip` | flip the 15-second timer (Level 3) |
//! | `resign` | resign |
//! | `X@d4` / `X@d4.` | placement set-up: put hourglass X on d4 and drop / don't drop |
//!
//! Words and squares are read case-insensitively and written in lower case; hourglass
//! labels are written in upper case. Tokens are separated by whitespace. Printing then
//! parsing gives the same action back.

use std::fmt;

use crate::board::{ParseSquareError, Square};
use crate::game::{Action, Glass};

/// An action in notation: `format!("{}", Notation(action))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notation(pub Action);

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stop = |drop: bool| if drop { "" } else { "." };
        match self.0 {
            Action::Move { from, to, drop } => write!(f, "{from}-{to}{}", stop(drop)),
            Action::Place { glass, to, drop } => write!(f, "{glass}@{to}{}", stop(drop)),
            Action::Start { from } => write!(f, "start {from}"),
            Action::Release { to } => write!(f, "release {to}"),
            Action::Drop => f.write_str("drop"),
            Action::Claim => f.write_str("claim"),
            Action::PenaltyDrop { at } => write!(f, "penalty {at}"),
            Action::Flip => f.write_str("flip"),
            Action::Resign => f.write_str("resign"),
        }
    }
}

/// The notation of `action`, e.g. `d1-d2` or `start d1`.
pub fn to_notation(action: &Action) -> String {
    Notation(*action).to_string()
}

/// Why a text is not an action. `offset` is the byte offset of `token` in the text that
/// was parsed (0-based), so a caller can turn it into a column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct NotationError {
    /// The offending piece of text (a whole word, or the square inside a move).
    pub token: String,
    /// Byte offset of `token` in the parsed text.
    pub offset: usize,
    pub kind: NotationErrorKind,
}

/// What is wrong with a token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationErrorKind {
    #[error("no action given: expected a move like d1-d2, or start, release, drop, claim, penalty, flip, resign")]
    Empty,
    #[error("{0}")]
    Square(ParseSquareError),
    #[error("'{0}' is not an action: expected a move like d1-d2 (d1-d2. without drop), X@d4, or one of start, release, drop, claim, penalty, flip, resign")]
    Unknown(String),
    #[error("'{0}' needs a square, like '{0} d4'")]
    MissingSquare(String),
    #[error("'{token}' is unexpected after '{after}': '{after}' takes {takes}")]
    Extra {
        token: String,
        after: String,
        takes: &'static str,
    },
    #[error("'{0}' is not an hourglass: expected X, Y, Z (Red) or A, B, C (Black)")]
    Glass(String),
}

/// Splits `text` into whitespace-separated tokens with their byte offsets.
pub(crate) fn tokens(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &text[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

fn square_at(token: &str, offset: usize) -> Result<Square, NotationError> {
    token.parse().map_err(|e| NotationError {
        token: token.to_string(),
        offset,
        kind: NotationErrorKind::Square(e),
    })
}

/// Whether a token has the shape of a move or placement (`d1-d2`, `X@d4`), so that a bad
/// one is reported by its squares rather than as an unknown word.
fn split_move(token: &str) -> Option<(&str, &str, bool, usize)> {
    let (body, drop) = match token.strip_suffix('.') {
        Some(body) => (body, false),
        None => (token, true),
    };
    let sep = body.find(['-', '@'])?;
    Some((&body[..sep], &body[sep + 1..], drop, sep))
}

/// Parses one action in notation. Surrounding whitespace is ignored.
pub fn parse_action(text: &str) -> Result<Action, NotationError> {
    let toks = tokens(text);
    let Some(&(offset, word)) = toks.first() else {
        return Err(NotationError {
            token: String::new(),
            offset: 0,
            kind: NotationErrorKind::Empty,
        });
    };
    let lower = word.to_ascii_lowercase();
    // How many tokens the action takes, and the action.
    let (takes, action) = match lower.as_str() {
        "drop" => ("nothing more", Action::Drop),
        "claim" => ("nothing more", Action::Claim),
        "flip" => ("nothing more", Action::Flip),
        "resign" => ("nothing more", Action::Resign),
        "start" | "release" | "penalty" => {
            let Some(&(sq_off, sq_text)) = toks.get(1) else {
                return Err(NotationError {
                    token: word.to_string(),
                    offset,
                    kind: NotationErrorKind::MissingSquare(lower),
                });
            };
            let square = square_at(sq_text, sq_off)?;
            let action = match lower.as_str() {
                "start" => Action::Start { from: square },
                "release" => Action::Release { to: square },
                _ => Action::PenaltyDrop { at: square },
            };
            if let Some(&(extra_off, extra)) = toks.get(2) {
                return Err(NotationError {
                    token: extra.to_string(),
                    offset: extra_off,
                    kind: NotationErrorKind::Extra {
                        token: extra.to_string(),
                        after: format!("{lower} {square}"),
                        takes: "one square",
                    },
                });
            }
            return Ok(action);
        }
        _ => {
            let Some((left, right, drop, sep)) = split_move(word) else {
                return Err(NotationError {
                    token: word.to_string(),
                    offset,
                    kind: NotationErrorKind::Unknown(word.to_string()),
                });
            };
            let right_off = offset + sep + 1;
            let action = if word.as_bytes()[sep] == b'@' {
                let mut chars = left.chars();
                let glass = match (chars.next(), chars.next()) {
                    (Some(c), None) => Glass::from_label(c),
                    _ => None,
                };
                let Some(glass) = glass else {
                    return Err(NotationError {
                        token: left.to_string(),
                        offset,
                        kind: NotationErrorKind::Glass(left.to_string()),
                    });
                };
                Action::Place {
                    glass,
                    to: square_at(right, right_off)?,
                    drop,
                }
            } else {
                Action::Move {
                    from: square_at(left, offset)?,
                    to: square_at(right, right_off)?,
                    drop,
                }
            };
            ("nothing more", action)
        }
    };
    if let Some(&(extra_off, extra)) = toks.get(1) {
        return Err(NotationError {
            token: extra.to_string(),
            offset: extra_off,
            kind: NotationErrorKind::Extra {
                token: extra.to_string(),
                after: word.to_string(),
                takes,
            },
        });
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    fn every_action() -> Vec<Action> {
        let mut all = vec![Action::Drop, Action::Claim, Action::Flip, Action::Resign];
        for s in Square::ALL {
            all.push(Action::Start { from: s });
            all.push(Action::Release { to: s });
            all.push(Action::PenaltyDrop { at: s });
            for glass in Glass::ALL {
                for drop in [true, false] {
                    all.push(Action::Place { glass, to: s, drop });
                }
            }
            for &n in s.neighbours() {
                for drop in [true, false] {
                    all.push(Action::Move {
                        from: s,
                        to: n,
                        drop,
                    });
                }
            }
        }
        all
    }

    #[test]
    fn every_action_round_trips() {
        let all = every_action();
        assert!(all.len() > 37 * 12);
        for action in all {
            let text = to_notation(&action);
            assert_eq!(parse_action(&text), Ok(action), "{text}");
        }
    }

    #[test]
    fn the_decided_forms() {
        let cases = [
            (
                "d1-d2",
                Action::Move {
                    from: sq("d1"),
                    to: sq("d2"),
                    drop: true,
                },
            ),
            (
                "d1-d2.",
                Action::Move {
                    from: sq("d1"),
                    to: sq("d2"),
                    drop: false,
                },
            ),
            ("start d1", Action::Start { from: sq("d1") }),
            ("release d2", Action::Release { to: sq("d2") }),
            ("drop", Action::Drop),
            ("claim", Action::Claim),
            ("penalty e4", Action::PenaltyDrop { at: sq("e4") }),
            ("flip", Action::Flip),
            ("resign", Action::Resign),
            (
                "X@d4",
                Action::Place {
                    glass: Glass::from_label('X').unwrap(),
                    to: sq("d4"),
                    drop: true,
                },
            ),
            (
                "C@d4.",
                Action::Place {
                    glass: Glass::from_label('C').unwrap(),
                    to: sq("d4"),
                    drop: false,
                },
            ),
        ];
        for (text, action) in cases {
            assert_eq!(to_notation(&action), text);
            assert_eq!(parse_action(text), Ok(action), "{text}");
        }
        // Case and spacing are forgiven on input.
        assert_eq!(
            parse_action("  START   D1 "),
            Ok(Action::Start { from: sq("d1") })
        );
        assert_eq!(
            parse_action("x@D4."),
            Ok(Action::Place {
                glass: Glass::from_label('X').unwrap(),
                to: sq("d4"),
                drop: false
            })
        );
    }

    fn err(text: &str) -> NotationError {
        parse_action(text).expect_err(text)
    }

    #[test]
    fn errors_name_the_token_and_where_it_is() {
        let e = err("d1-x9");
        assert_eq!((e.token.as_str(), e.offset), ("x9", 3));
        assert_eq!(
            e.to_string(),
            "'x9' is not a square: expected a column a-g and a row, like d4"
        );

        let e = err("a5-a4");
        assert_eq!((e.token.as_str(), e.offset), ("a5", 0));
        assert!(e.to_string().contains("column a has rows 1 to 4"), "{e}");

        let e = err("start");
        assert_eq!(e.to_string(), "'start' needs a square, like 'start d4'");

        let e = err("penalty  q1");
        assert_eq!((e.token.as_str(), e.offset), ("q1", 9));

        let e = err("drop e4");
        assert_eq!((e.token.as_str(), e.offset), ("e4", 5));
        assert_eq!(
            e.to_string(),
            "'e4' is unexpected after 'drop': 'drop' takes nothing more"
        );

        let e = err("start d1 d2");
        assert_eq!(e.token, "d2");
        assert!(e.to_string().contains("takes one square"), "{e}");

        let e = err("hello");
        assert_eq!((e.token.as_str(), e.offset), ("hello", 0));
        assert!(e.to_string().starts_with("'hello' is not an action"), "{e}");

        let e = err("Q@d4");
        assert_eq!(e.token, "Q");
        assert!(e.to_string().contains("not an hourglass"), "{e}");

        assert_eq!(err("   ").kind, NotationErrorKind::Empty);
        // A move with an empty half names the empty square text.
        let e = err("d1-");
        assert!(matches!(e.kind, NotationErrorKind::Square(_)), "{e:?}");
        assert_eq!(e.offset, 3);
    }
}
