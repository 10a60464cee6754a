//! Game records: what happened in a game, entry by entry with its instant, so that the
//! engine can replay it exactly.
//!
//! The same [`Entry`] serves three places: the server's game task applies entries as they
//! come, clients apply them to their own replica of the game, and a [`Record`] is the
//! list of them.

use serde::{Deserialize, Serialize};

use crate::game::{AbortReason, Action, ActionError, Event, Game, Player};
use crate::settings::Settings;

/// Something that happened to a game at an instant (ms of game time).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: EntryKind,
}

/// What an [`Entry`] does to the game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum EntryKind {
    /// A player's accepted action, at the instant the server read it. `lag_ms` is the
    /// server's lag estimate for him then and `comp_ms` the compensation the action used
    /// (see `docs/RULES.md`, lag compensation): both for the record only; the engine
    /// derives them again from the `lag` entries.
    Act {
        player: Player,
        action: Action,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lag_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comp_ms: Option<u64>,
    },
    /// The server's lag estimate for `player` changed (round trip, ms): it moves the
    /// deadlines that judge him.
    Lag { player: Player, lag_ms: u64 },
    /// Time passed: the events due up to this instant (deaths, expiries, passes, ...).
    Advance,
    /// The server ended the game for a player who left and did not come back.
    Abandon { player: Player },
    /// Both players left and neither came back within his grace: decided as at the end
    /// (or aborted if a player had not moved yet).
    BothAbsent,
    /// The server called the game off (shutdown).
    Abort { reason: AbortReason },
}

impl EntryKind {
    /// An action with no lag figures.
    pub fn act(player: Player, action: Action) -> EntryKind {
        EntryKind::Act {
            player,
            action,
            lag_ms: None,
            comp_ms: None,
        }
    }
}

impl Entry {
    /// Applies this entry to `game`, returning the events it caused.
    pub fn apply_to(&self, game: &mut Game) -> Result<Vec<Event>, ActionError> {
        match &self.kind {
            EntryKind::Act { player, action, .. } => game.apply(*player, *action, self.at_ms),
            EntryKind::Lag { player, lag_ms } => {
                let events = game.advance(self.at_ms);
                game.set_lag(*player, *lag_ms);
                Ok(events)
            }
            EntryKind::Advance => Ok(game.advance(self.at_ms)),
            EntryKind::Abandon { player } => Ok(game.abandon(*player, self.at_ms)),
            EntryKind::BothAbsent => Ok(game.end_both_absent(self.at_ms)),
            EntryKind::Abort { reason } => Ok(game.abort(*reason, self.at_ms)),
        }
    }
}

/// A whole game: its settings, players and entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Record {
    pub settings: Settings,
    /// Display names, when known.
    pub red: Option<String>,
    pub black: Option<String>,
    pub entries: Vec<Entry>,
    /// The instant the record was closed; the game is advanced to it after the last entry.
    pub end_ms: Option<u64>,
}

impl Record {
    /// Replays the record from the start. Fails at the first entry the engine refuses,
    /// naming its index.
    pub fn replay(&self) -> Result<Game, (usize, ActionError)> {
        let mut game = Game::new(self.settings.clone());
        for (i, entry) in self.entries.iter().enumerate() {
            entry.apply_to(&mut game).map_err(|e| (i, e))?;
        }
        if let Some(end) = self.end_ms {
            game.advance(end);
        }
        Ok(game)
    }
}

// ---------------------------------------------------------------------------------------
// The text format (docs/RECORDS.md)
// ---------------------------------------------------------------------------------------

use std::fmt::Write as _;

use crate::game::Status;
use crate::notation::{self, parse_action, Notation, NotationError};
use crate::settings::{FullSocket, GameClock, Level, Setup};

/// The first line of a record in the text format, followed by a space and the version.
pub const RECORD_MAGIC: &str = "TAMSK record";
/// The version of the text format this code writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// Instants between moves of an imported move list that give no `/seconds`.
pub const MOVE_LIST_STEP_MS: u64 = 1_000;

/// A record with the free header fields of its text form (game id, date, event, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordFile {
    pub record: Record,
    /// Free header fields in file order: lower-case key (`[a-z][a-z0-9_-]*`, not a setting
    /// name, `red`, `black` or `result`) and a one-line value. A key may repeat.
    pub tags: Vec<(String, String)>,
}

/// Which form a text was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The record format (`TAMSK record 1`).
    Record,
    /// A plain network-server move list (`d1-d2/13 g1-f1 ...`), imported as Level 1.
    MoveList,
}

/// A game read from text and replayed: its record, the final state and the source form.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub file: RecordFile,
    pub game: Game,
    pub format: Format,
}

/// Where an entry (or a problem) is in a text: 1-based line and column (in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    /// The number of the move in a plain move list (1-based).
    pub move_number: Option<usize>,
}

/// Why a text is not a valid game: the position, the offending token and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub position: Position,
    /// The offending text (empty for an empty file).
    pub token: String,
    /// Boxed to keep `Result`s small.
    pub kind: Box<RecordErrorKind>,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Position {
            line,
            column,
            move_number,
        } = &self.position;
        match move_number {
            Some(n) => write!(
                f,
                "move {n} '{}' (line {line}, column {column}): ",
                self.token
            )?,
            None => write!(f, "line {line}, column {column}: ")?,
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for RecordError {}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordErrorKind {
    #[error("empty input: expected a game record (first line '{RECORD_MAGIC} {RECORD_VERSION}') or a list of moves like d1-d2 g1-f1")]
    Empty,
    #[error(
        "'{0}' is not a record header: the first line must be '{RECORD_MAGIC} {RECORD_VERSION}'"
    )]
    BadMagic(String),
    #[error("record version '{0}' is not supported: this reader knows version {RECORD_VERSION}")]
    Version(String),
    #[error("{0}")]
    Notation(NotationError),
    #[error("'{0}' is not an instant: expected seconds with at most three decimals, like 12.345")]
    Instant(String),
    #[error("'{0}' is not an entry: expected red or black (then an action), advance, lag, abandon, both-absent, abort or end")]
    Who(String),
    #[error("'{0}' needs {1}")]
    Missing(String, &'static str),
    #[error("'{0}' is unexpected here: {1}")]
    Unexpected(String, &'static str),
    #[error("'{0}' is not a player: expected red or black")]
    Player(String),
    #[error(
        "'{0}' is not an abort reason: expected shutdown, both-absent, or no-first-move followed by a player"
    )]
    AbortReason(String),
    #[error("header field '{0}' is malformed: expected 'key: value' with a key of lower-case letters, digits, _ or -")]
    HeaderSyntax(String),
    #[error("header field '{0}' appears twice")]
    Duplicate(String),
    #[error(
        "header field '{0}' comes after the first entry: the header ends where the entries begin"
    )]
    LateHeader(String),
    #[error("header field '{key}': {message}")]
    Setting { key: String, message: String },
    #[error("the header has no 'level' field")]
    NoLevel,
    #[error("nothing may follow the 'end' line")]
    AfterEnd,
    #[error("'{0}' is not a move: a move list holds only moves like d1-d2, each optionally followed by /seconds as in d1-d2/13")]
    NotAMove(String),
    #[error("'{action}' is refused for {player}: {error}")]
    Refused {
        action: String,
        player: Player,
        error: ActionError,
    },
    #[error("'{action}' comes after the end of the game ({outcome})")]
    AfterGameOver { action: String, outcome: String },
}

// ----- writing -----

fn instant(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// One-line text: line breaks and tabs become spaces, surrounding spaces go.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// What a replay of `record` comes to, in words, for the informative `result:` line.
pub fn result_line(record: &Record) -> String {
    match record.replay() {
        Ok(game) => describe_state(&game),
        Err((i, e)) => format!("does not replay: entry {} is refused: {e}", i + 1),
    }
}

/// "Red wins: ...", "Draw: ...", "aborted: ...", or "unfinished: Red to move".
pub fn describe_state(game: &Game) -> String {
    match game.status() {
        Status::Finished { outcome } => outcome.describe(),
        Status::Aborted { reason, at_ms } => {
            format!("aborted at {}: {}", instant(*at_ms), abort_words(reason))
        }
        Status::Playing if game.is_ending() => {
            "unfinished: neither player can move, the last drop windows are open".to_string()
        }
        Status::Playing => format!("unfinished: {} to move", game.turn()),
    }
}

fn abort_words(reason: &AbortReason) -> String {
    match reason {
        AbortReason::NoFirstMove { player } => {
            format!("{player} did not make his first move in time")
        }
        AbortReason::Shutdown => "the server shut down".to_string(),
        AbortReason::BothAbsent => {
            "both players left before both had made a first move".to_string()
        }
    }
}

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

fn reserved(key: &str) -> bool {
    SETTING_KEYS.contains(&key) || matches!(key, "red" | "black" | "result")
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.starts_with(|c: char| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

impl RecordFile {
    /// A record without free fields.
    pub fn new(record: Record) -> RecordFile {
        RecordFile {
            record,
            tags: Vec::new(),
        }
    }

    /// The text form (docs/RECORDS.md). Reading it back gives this record again; tags
    /// with an invalid or reserved key are left out, and line breaks in names and values
    /// become spaces.
    pub fn to_text(&self) -> String {
        let r = &self.record;
        let s = &r.settings;
        let mut out = String::new();
        let mut field = |key: &str, value: &str| {
            let _ = writeln!(out, "{key}: {value}").map(|_| ());
            if value.is_empty() {
                // "key: " would end in a space; keep lines clean.
                out.truncate(out.len() - 2);
                out.push('\n');
            }
        };
        field("level", &s.level.number().to_string());
        field(
            "setup",
            match s.setup {
                Setup::Standard => "standard",
                Setup::Placement => "placement",
            },
        );
        field("hourglass_ms", &s.hourglass_ms.to_string());
        field("neutral_ms", &s.neutral_ms.to_string());
        field("drop_grace_ms", &s.drop_grace_ms.to_string());
        field(
            "full_socket",
            match s.full_socket {
                FullSocket::Lose => "lose",
                FullSocket::Reject => "reject",
            },
        );
        field(
            "game_clock",
            &s.game_clock.map_or("none".to_string(), |c| {
                format!("{}+{}", c.main_ms, c.increment_ms)
            }),
        );
        field(
            "turn_limit_ms",
            &s.turn_limit_ms
                .map_or("none".to_string(), |t| t.to_string()),
        );
        field("abort_ms", &s.abort_ms.to_string());
        field("late_release_ms", &s.late_release_ms.to_string());
        if let Some(name) = &r.red {
            field("red", &one_line(name));
        }
        if let Some(name) = &r.black {
            field("black", &one_line(name));
        }
        for (key, value) in &self.tags {
            if valid_key(key) && !reserved(key) {
                field(key, &one_line(value));
            }
        }
        field("result", &result_line(r));
        let mut text = format!("{RECORD_MAGIC} {RECORD_VERSION}\n{out}\n");
        text.push_str("#  move      time  who      action\n");
        let mut moves = 0;
        let mut line = |number: Option<usize>, at: u64, who: &str, rest: &str| {
            let number = number.map_or(String::new(), |n| format!("{n}."));
            let l = format!("{number:>7} {:>9}  {who:<7}  {rest}", instant(at));
            text.push_str(l.trim_end());
            text.push('\n');
        };
        for entry in &r.entries {
            match &entry.kind {
                EntryKind::Act {
                    player,
                    action,
                    lag_ms,
                    comp_ms,
                } => {
                    let number = matches!(
                        action,
                        Action::Move { .. } | Action::Place { .. } | Action::Start { .. }
                    )
                    .then(|| {
                        moves += 1;
                        moves
                    });
                    let mut what = Notation(*action).to_string();
                    if let Some(lag) = lag_ms {
                        what.push_str(&format!("  lag={lag}"));
                    }
                    if let Some(comp) = comp_ms {
                        what.push_str(&format!(" comp={comp}"));
                    }
                    line(number, entry.at_ms, player.name(), &what);
                }
                EntryKind::Advance => line(None, entry.at_ms, "advance", ""),
                EntryKind::Lag { player, lag_ms } => line(
                    None,
                    entry.at_ms,
                    "lag",
                    &format!("{} {lag_ms}", player.name()),
                ),
                EntryKind::Abandon { player } => line(None, entry.at_ms, "abandon", player.name()),
                EntryKind::BothAbsent => line(None, entry.at_ms, "both-absent", ""),
                EntryKind::Abort { reason } => {
                    let words = match reason {
                        AbortReason::Shutdown => "shutdown".to_string(),
                        AbortReason::BothAbsent => "both-absent".to_string(),
                        AbortReason::NoFirstMove { player } => {
                            format!("no-first-move {}", player.name())
                        }
                    };
                    line(None, entry.at_ms, "abort", &words)
                }
            }
        }
        if let Some(end) = r.end_ms {
            line(None, end, "end", "");
        }
        text
    }

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
    /// The text form (docs/RECORDS.md), without free header fields.
    pub fn to_text(&self) -> String {
        RecordFile::new(self.clone()).to_text()
    }

    /// Reads the text form or a plain network move list; free header fields are dropped
    /// (see [`RecordFile::parse`]).
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        RecordFile::parse(text).map(|f| f.record)
    }

    /// The game entry by entry, for a replay viewer: one [`Step`] per entry with the
    /// state after it, then, if the record has an `end_ms`, a last step for the advance
    /// to it (`entry` is an `Advance` at `end_ms`, `index == entries.len()`). Stops after
    /// the first refused entry, which it yields as an error with its index.
    pub fn steps(&self) -> Steps<'_> {
        Steps {
            record: self,
            game: Some(Game::new(self.settings.clone())),
            index: 0,
        }
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

/// One step of [`Record::steps`].
#[derive(Clone, Debug)]
pub struct Step {
    /// Index of the entry in `Record::entries` (`entries.len()` for the closing advance).
    pub index: usize,
    pub entry: Entry,
    /// What the entry caused.
    pub events: Vec<Event>,
    /// The game after the entry.
    pub game: Game,
}

/// Iterator of [`Record::steps`].
#[derive(Clone, Debug)]
pub struct Steps<'a> {
    record: &'a Record,
    game: Option<Game>,
    index: usize,
}

impl Iterator for Steps<'_> {
    type Item = Result<Step, (usize, ActionError)>;

    fn next(&mut self) -> Option<Self::Item> {
        let game = self.game.as_mut()?;
        let index = self.index;
        let entry = match self.record.entries.get(index) {
            Some(e) => e.clone(),
            None => match self.record.end_ms {
                Some(end) if index == self.record.entries.len() => Entry {
                    at_ms: end,
                    kind: EntryKind::Advance,
                },
                _ => {
                    self.game = None;
                    return None;
                }
            },
        };
        self.index += 1;
        match entry.apply_to(game) {
            Ok(events) => Some(Ok(Step {
                index,
                entry,
                events,
                game: game.clone(),
            })),
            Err(e) => {
                self.game = None;
                Some(Err((index, e)))
            }
        }
    }
}

// ----- reading -----

fn empty_error() -> RecordError {
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
fn strip_comment(line: &str) -> &str {
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
fn refusal(
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
struct Line<'a> {
    number: usize,
    text: &'a str,
}

impl Line<'_> {
    fn column(&self, offset: usize) -> usize {
        self.text[..offset].chars().count() + 1
    }
    fn error(&self, offset: usize, token: &str, kind: RecordErrorKind) -> RecordError {
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

fn parse_instant(token: &str) -> Option<u64> {
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
fn split_lag(text: &str) -> (&str, Option<u64>, Option<u64>) {
    let mut rest = text.trim_end();
    let (mut lag, mut comp) = (None, None);
    while let Some((head, last)) = rest.rsplit_once(char::is_whitespace) {
        let figure = |key: &str| last.strip_prefix(key).and_then(|v| v.parse::<u64>().ok());
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
                    .and_then(|&(_, t)| t.parse::<u64>().ok())
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

/// A header field: key, value, line number, byte offset of the value in its line.
type Field = (String, String, usize, usize);

/// Turns the header fields into settings, names and free fields, once the header is
/// complete: the level first, then every other field over its defaults.
fn finish_header(
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
fn import_move_list(text: &str) -> Result<(RecordFile, Game), RecordError> {
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

#[cfg(test)]
mod text_tests {
    use super::*;
    use crate::board::Square;
    use crate::game::Glass;
    use proptest::prelude::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    fn act(at_ms: u64, player: Player, action: &str) -> Entry {
        Entry {
            at_ms,
            kind: EntryKind::act(player, parse_action(action).unwrap()),
        }
    }

    /// A short Level 3 blitz game using every kind of entry.
    fn sample() -> RecordFile {
        let entries = vec![
            act(0, Player::Red, "d1-d2"),
            act(100, Player::Red, "flip"),
            act(150, Player::Black, "start g1"),
            act(250, Player::Black, "release f1"),
            act(300, Player::Black, "drop"),
            act(1_000, Player::Red, "g4-f4."),
            Entry {
                at_ms: 1_500,
                kind: EntryKind::Advance,
            },
            act(2_000, Player::Black, "a1-b1"),
            Entry {
                at_ms: 9_000,
                kind: EntryKind::Abandon {
                    player: Player::Red,
                },
            },
        ];
        RecordFile {
            record: Record {
                settings: Settings::blitz(Level::Three),
                red: Some("Alice".into()),
                black: Some("Bob the Builder".into()),
                entries,
                end_ms: Some(9_500),
            },
            tags: vec![
                ("game".into(), "42".into()),
                ("date".into(), "2026-11-21".into()),
                ("event".into(), "Friday blitz #3".into()),
            ],
        }
    }

    const SAMPLE_TEXT: &str = "\
TAMSK record 1
level: 3
setup: standard
hourglass_ms: 3000
neutral_ms: 300
drop_grace_ms: 200
full_socket: lose
game_clock: none
turn_limit_ms: none
abort_ms: 3000
late_release_ms: 500
red: Alice
black: Bob the Builder
game: 42
date: 2026-11-21
event: Friday blitz #3
result: Black wins: Red abandoned the game; rings 31 red, 30 black

#  move      time  who      action
     1.     0.000  red      d1-d2
            0.100  red      flip
     2.     0.150  black    start g1
            0.250  black    release f1
            0.300  black    drop
     3.     1.000  red      g4-f4.
            1.500  advance
     4.     2.000  black    a1-b1
            9.000  abandon  red
            9.500  end
";

    #[test]
    fn writes_the_documented_layout() {
        assert_eq!(sample().to_text(), SAMPLE_TEXT);
    }

    #[test]
    fn reads_back_exactly() {
        let file = sample();
        let back = RecordFile::parse(&file.to_text()).unwrap();
        assert_eq!(back, file);
        assert_eq!(back.to_text(), SAMPLE_TEXT);
        let loaded = load(SAMPLE_TEXT).unwrap();
        assert_eq!(loaded.format, Format::Record);
        assert_eq!(loaded.game, file.record.replay().unwrap());
        let outcome = loaded.game.outcome().unwrap();
        assert_eq!(outcome.winner, Some(Player::Black));
        assert_eq!(loaded.game.rings_on(sq("d2")), 1);
        assert_eq!(loaded.game.rings_on(sq("f4")), 0, "g4-f4. did not drop");
    }

    #[test]
    fn server_entries_round_trip() {
        let mut file = sample();
        file.record.entries.truncate(2);
        file.record.entries.push(Entry {
            at_ms: 700,
            kind: EntryKind::Abort {
                reason: AbortReason::NoFirstMove {
                    player: Player::Black,
                },
            },
        });
        file.record.end_ms = None;
        file.record.red = Some(String::new());
        file.record.black = None;
        let text = file.to_text();
        assert!(
            text.contains("\n            0.700  abort    no-first-move black\n"),
            "{text}"
        );
        assert!(text.contains("\nred:\n"), "{text}");
        assert!(!text.contains("black:"), "{text}");
        assert_eq!(RecordFile::parse(&text).unwrap(), file);
        file.record.entries[2].kind = EntryKind::Abort {
            reason: AbortReason::Shutdown,
        };
        let text = file.to_text();
        assert!(text.contains("abort    shutdown\n"), "{text}");
        assert!(
            text.contains("result: aborted at 0.700: the server shut down\n"),
            "{text}"
        );
        assert_eq!(RecordFile::parse(&text).unwrap(), file);
    }

    #[test]
    fn hand_written_records_are_read_leniently() {
        // Settings left out take the level's defaults; no move numbers; comments.
        let text = "# my game\ntamsk record 1\nlevel: 1\nblack: Bob\n\n0 RED d1-d2  # opening\n2.5 black g1-f1\n";
        let file = RecordFile::parse(text).unwrap();
        assert_eq!(file.record.settings, Settings::level(Level::One));
        assert_eq!(file.record.entries.len(), 2);
        assert_eq!(file.record.entries[1].at_ms, 2_500);
        assert_eq!(file.record.black.as_deref(), Some("Bob"));
        let game = load(text).unwrap().game;
        assert!(game.is_full(sq("f1")));
        // Free fields may repeat and come back in order; the magic line's case is free.
        let text = "Tamsk Record 1\nlevel: 2\nnote: one\nround: 3\nnote: two\n";
        let file = RecordFile::parse(text).unwrap();
        let tags: Vec<(&str, &str)> = file
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(tags, [("note", "one"), ("round", "3"), ("note", "two")]);
        assert_eq!(RecordFile::parse(&file.to_text()).unwrap(), file);
    }

    fn error(text: &str) -> RecordError {
        match load(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e,
        }
    }

    fn at(e: &RecordError) -> (usize, usize, &str) {
        (e.position.line, e.position.column, e.token.as_str())
    }

    #[test]
    fn record_errors_carry_line_column_and_token() {
        let head = "TAMSK record 1\nlevel: 1\n\n";
        let e = error(&format!("{head}  1.  0.000  red  d1-x9\n"));
        assert_eq!(at(&e), (4, 22, "x9"));
        assert_eq!(
            e.to_string(),
            "line 4, column 22: 'x9' is not a square: expected a column a-g and a row, like d4"
        );

        let e = error(&format!(
            "{head}0.000 red d1-d2\n1.000 black g1-f1\n2 red d2-d4\n"
        ));
        assert_eq!(at(&e), (6, 7, "d2-d4"));
        assert_eq!(
            e.to_string(),
            "line 6, column 7: 'd2-d4' is refused for Red: d4 is not adjacent to d2"
        );

        let e = error(&format!("{head}0.000 black d1-d2\n"));
        assert!(e.to_string().contains("it is not Black's turn"), "{e}");

        let e = error(&format!("{head}1.2345 red d1-d2\n"));
        assert_eq!(at(&e), (4, 1, "1.2345"));
        assert!(e.to_string().contains("'1.2345' is not an instant"), "{e}");

        let e = error(&format!("{head}1 blue d1-d2\n"));
        assert_eq!(at(&e), (4, 3, "blue"));

        let e = error(&format!("{head}1 red\n"));
        assert!(e.to_string().contains("'red' needs an action"), "{e}");

        let e = error(&format!("{head}1 red drop drop\n"));
        assert_eq!(at(&e), (4, 12, "drop"));

        let e = error(&format!("{head}1 end\n2 red d1-d2\n"));
        assert_eq!(at(&e), (5, 1, "2"));
        assert_eq!(*e.kind, RecordErrorKind::AfterEnd);

        let e = error(&format!("{head}1 red d1-d2\nblack: Bob\n"));
        assert_eq!(*e.kind, RecordErrorKind::LateHeader("black".into()));

        let e = error("TAMSK record 2\nlevel: 1\n");
        assert_eq!(at(&e), (1, 14, "2"));

        let e = error("TAMSK record 1\nlevel: 4\n");
        assert_eq!(at(&e), (2, 8, "4"));
        assert!(e.to_string().contains("level must be 1, 2 or 3"), "{e}");

        let e = error("TAMSK record 1\nlevel: 2\nhourglass_ms: 5\n");
        assert_eq!(at(&e), (3, 15, "5"));
        assert!(
            e.to_string().contains("hourglass_ms = 5 is out of range"),
            "{e}"
        );

        // Errors come in the order of the text: a bad header before a bad entry.
        let e = error("TAMSK record 1\nlevel: 2\nhourglass_ms: lots\n\n0 red d1-x9\n");
        assert_eq!(at(&e), (3, 15, "lots"));

        let e = error("TAMSK record 1\nlevel: 2\nlevel: 3\n");
        assert_eq!(*e.kind, RecordErrorKind::Duplicate("level".into()));

        let e = error("TAMSK record 1\nsetup: standard\n");
        assert_eq!(*e.kind, RecordErrorKind::NoLevel);

        let e = error("TAMSK record 1\nlevel 1\n");
        assert_eq!(at(&e), (2, 1, "level"));

        let e = error("TAMSK record 1\nlevel: 1\ngame_clock: soon\n");
        assert!(e.to_string().contains("'soon' is not a game clock"), "{e}");

        let e = error(&format!("{head}1 abort later\n"));
        assert_eq!(at(&e), (4, 9, "later"));

        let e = error(&format!("{head}0 red resign\n1 black g1-f1\n"));
        assert_eq!(
            e.to_string(),
            "line 5, column 9: 'g1-f1' comes after the end of the game (Black wins: Red resigned; rings 32 red, 32 black)"
        );
    }

    #[test]
    fn empty_input_is_an_error() {
        for text in ["", "  \n\n", "# only a comment\n"] {
            assert_eq!(*error(text).kind, RecordErrorKind::Empty, "{text:?}");
        }
    }

    // ----- network move lists -----

    #[test]
    fn imports_the_encyclopedia_opening() {
        let loaded = load("d1-d2 g1-f1 d2-e2 f1-e1\n").unwrap();
        assert_eq!(loaded.format, Format::MoveList);
        let game = &loaded.game;
        assert_eq!((game.rings().red, game.rings().black), (30, 30));
        assert!(game.is_full(sq("f1")) && game.is_full(sq("e1")));
        assert_eq!(game.rings_on(sq("d2")), 1);
        assert_eq!(game.rings_on(sq("e2")), 1);
        assert_eq!(game.turn(), Player::Red);
        assert!(game.is_playing());
        let record = &loaded.file.record;
        assert_eq!(record.settings.level, Level::One);
        assert_eq!(record.settings.game_clock, None);
        let who: Vec<Player> = record
            .entries
            .iter()
            .map(|e| match e.kind {
                EntryKind::Act { player, .. } => player,
                _ => panic!("only moves"),
            })
            .collect();
        assert_eq!(
            who,
            [Player::Red, Player::Black, Player::Red, Player::Black]
        );
        let times: Vec<u64> = record.entries.iter().map(|e| e.at_ms).collect();
        assert_eq!(times, [1_000, 2_000, 3_000, 4_000]);
        // The imported record written and read back replays to the same state.
        let again = load(&loaded.file.to_text()).unwrap();
        assert_eq!(again.format, Format::Record);
        assert_eq!(&again.game, game);
    }

    #[test]
    fn move_list_seconds_are_cumulative_instants() {
        let loaded = load("d1-d2/13\ng1-f1/45   d2-e2/7 f1-e1\n").unwrap();
        let times: Vec<u64> = loaded.file.record.entries.iter().map(|e| e.at_ms).collect();
        assert_eq!(times, [13_000, 58_000, 65_000, 66_000]);
        assert_eq!(loaded.game.rings().red, 30);
        // A first move slower than the default abort time does not abort an import.
        let slow = load("d1-d2/95 g1-f1/300").unwrap();
        assert!(slow.game.is_playing());
        assert_eq!(slow.game.rings().black, 31);
    }

    #[test]
    fn move_list_errors_name_the_move_and_where_it_is() {
        let e = error("d1-d2 g1-f1\nd2-e2 f1-x9");
        assert_eq!(e.position.move_number, Some(4));
        assert_eq!(at(&e), (2, 10, "f1-x9"));
        assert_eq!(
            e.to_string(),
            "move 4 'f1-x9' (line 2, column 10): 'x9' is not a square: expected a column a-g and a row, like d4"
        );

        let e = error("d1-d3");
        assert_eq!(
            e.to_string(),
            "move 1 'd1-d3' (line 1, column 1): 'd1-d3' is refused for Red: d3 is not adjacent to d1"
        );

        let e = error("d1-d2 a1-a2 hello");
        assert_eq!(at(&e), (1, 13, "hello"));
        assert!(
            e.to_string()
                .starts_with("move 3 'hello' (line 1, column 13): 'hello' is not a move"),
            "{e}"
        );

        let e = error("d1-d2/");
        assert_eq!(
            e.to_string(),
            "move 1 'd1-d2/' (line 1, column 7): 'd1-d2/' needs the seconds after '/', like d1-d2/13"
        );

        let e = error("d1-d2/abc");
        assert_eq!(at(&e), (1, 7, "d1-d2/abc"));
        assert!(e.to_string().contains("'abc' is not an instant"), "{e}");

        let commas = load("d1-d2/13, g1-f1/2;d2-e2 ,f1-e1").unwrap();
        assert_eq!(
            commas.game.rings(),
            load("d1-d2 g1-f1 d2-e2 f1-e1").unwrap().game.rings()
        );
        let e = error("d1-d2, g1-f1,x");
        assert_eq!(at(&e), (1, 14, "x"));

        let e = error("d1-d2 drop");
        assert_eq!(e.position.move_number, Some(2));
        assert!(e.to_string().contains("'drop' is not a move"), "{e}");

        // Moving Black's hourglass on Red's turn.
        let e = error("a1-a2");
        assert!(e.to_string().contains("belongs to the other player"), "{e}");
    }

    #[test]
    fn a_move_list_without_drops_left_passes_and_ends() {
        // Move numbers are tolerated; a pass is implied by the engine.
        let loaded = load("1. d1-d2 2. g1-f1").unwrap();
        assert_eq!(loaded.file.record.entries.len(), 2);
    }

    // ----- steps -----

    #[test]
    fn steps_walk_to_the_replayed_state() {
        let record = sample().record;
        let steps: Vec<Step> = record.steps().map(|s| s.unwrap()).collect();
        assert_eq!(steps.len(), record.entries.len() + 1);
        assert_eq!(steps[0].game.rings_on(sq("d2")), 1);
        assert!(steps[0]
            .events
            .iter()
            .any(|e| matches!(e, Event::RingDropped { square, .. } if *square == sq("d2"))));
        let last = steps.last().unwrap();
        assert_eq!(last.index, record.entries.len());
        assert_eq!(last.entry.at_ms, 9_500);
        assert_eq!(last.game, record.replay().unwrap());

        let mut bad = record.clone();
        bad.entries[1] = act(100, Player::Red, "d2-d3");
        let results: Vec<_> = bad.steps().collect();
        assert_eq!(results.len(), 2);
        assert!(matches!(
            results[1],
            Err((1, ActionError::NotYourTurn { .. }))
        ));
    }

    // ----- random legal games -----

    /// A random legal game, entry by entry, as a server would record it.
    fn random_record(seed: u64, settings: Settings, max_steps: usize) -> Record {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut game = Game::new(settings.clone());
        let mut entries = Vec::new();
        for _ in 0..max_steps {
            if !game.is_playing() {
                break;
            }
            let at = game.now() + rng.gen_range(0..80);
            let mut probe = game.clone();
            probe.advance(at);
            let player = if rng.gen_bool(0.8) {
                probe.turn()
            } else {
                probe.turn().other()
            };
            let legal: Vec<Action> = probe
                .legal_actions(player)
                .into_iter()
                .filter(|a| match a {
                    Action::Resign => rng.gen_bool(0.002),
                    // Mostly avoid losing at once, so that games run long.
                    Action::Move { to, .. } | Action::Release { to } if probe.is_full(*to) => {
                        rng.gen_bool(0.03)
                    }
                    _ => true,
                })
                .collect();
            let kind = if !legal.is_empty() && rng.gen_bool(0.85) {
                EntryKind::act(player, legal[rng.gen_range(0..legal.len())])
            } else if rng.gen_bool(0.01) {
                EntryKind::Abandon { player }
            } else {
                EntryKind::Advance
            };
            let entry = Entry { at_ms: at, kind };
            entry
                .apply_to(&mut game)
                .unwrap_or_else(|e| panic!("legal {entry:?} refused: {e}"));
            entries.push(entry);
        }
        let end_ms = rng
            .gen_bool(0.5)
            .then(|| game.now() + rng.gen_range(0..5_000));
        Record {
            settings,
            red: rng
                .gen_bool(0.5)
                .then(|| format!("Red {}", rng.gen_range(0..100))),
            black: rng.gen_bool(0.5).then(|| "Black player".to_string()),
            entries,
            end_ms,
        }
    }

    fn any_settings() -> impl Strategy<Value = Settings> {
        (1u8..=3, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(level, placement, reject, slow)| {
                let level = Level::try_from(level).unwrap();
                let mut s = if slow {
                    Settings::level(level)
                } else {
                    Settings::blitz(level)
                };
                if placement {
                    s.setup = Setup::Placement;
                }
                if reject {
                    s.full_socket = FullSocket::Reject;
                }
                s
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_games_round_trip(seed in any::<u64>(), settings in any_settings(),
                                   tags in proptest::collection::vec(("[a-z][a-z0-9_-]{0,8}", "[ -~]{0,20}"), 0..3)) {
            let record = random_record(seed, settings, 400);
            let tags: Vec<(String, String)> = tags
                .into_iter()
                .filter(|(k, _)| !reserved(k))
                .map(|(k, v)| (k, v.trim().to_string()))
                .collect();
            let file = RecordFile { record: record.clone(), tags };
            let text = file.to_text();
            let back = RecordFile::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&back, &file);
            prop_assert_eq!(back.to_text(), text.clone());
            let loaded = load(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&loaded.game, &record.replay().unwrap());
            let result_line = format!("result: {}\n", describe_state(&loaded.game));
            prop_assert!(text.contains(&result_line));
        }
    }

    #[test]
    fn placement_glasses_appear_in_records() {
        let mut s = Settings::blitz(Level::Two);
        s.setup = Setup::Placement;
        let record = Record {
            settings: s,
            red: None,
            black: None,
            entries: vec![act(0, Player::Red, "X@d4"), act(10, Player::Black, "C@e4.")],
            end_ms: None,
        };
        let text = record.to_text();
        assert!(text.contains("1.     0.000  red      X@d4\n"), "{text}");
        assert!(text.contains("2.     0.010  black    C@e4.\n"), "{text}");
        let game = load(&text).unwrap().game;
        assert_eq!(game.occupant(sq("e4")), Glass::from_label('C'));
        assert_eq!(game.rings_on(sq("d4")), 1);
        assert_eq!(game.rings_on(sq("e4")), 0);
    }
}
