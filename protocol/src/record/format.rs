//! The text format's vocabulary (docs/RECORDS.md): its constants, a record with its free
//! header fields, the forms a text may be in, and the errors that locate a problem in it.

use super::*;

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

impl RecordFile {
    /// A record without free fields.
    pub fn new(record: Record) -> RecordFile {
        RecordFile {
            record,
            tags: Vec::new(),
        }
    }
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
