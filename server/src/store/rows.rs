//! What the store keeps: players, a game's start and end (with its record), stored games
//! as the API shows them, and the writes the writer task takes.

use protocol::game::{Game, Player, Status};
use protocol::record::{Entry, Record, RecordFile};
use protocol::settings::Settings;
use protocol::wire::{GameId, PlayerRef};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

/// A game id as the newer tables keep it (TEXT): the one conversion, both ways.
pub fn game_id_text(id: &GameId) -> String {
    id.to_string()
}

/// The game id a [`game_id_text`] holds.
pub fn game_id_of_text(text: &str) -> Option<GameId> {
    text.parse().ok()
}

/// The SHA-256 of a secret token, hex: what the players table keeps.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A player as stored.
#[derive(Clone, Debug)]
pub struct PlayerRow {
    pub id: String,
    pub name: String,
    pub token_hash: String,
    pub created_ms: u64,
    pub is_bot: bool,
}

/// A game that has just started.
#[derive(Clone, Debug)]
pub struct GameStart {
    pub id: GameId,
    pub red: PlayerRef,
    pub black: PlayerRef,
    pub settings: Settings,
    pub started_ms: u64,
    /// The code of a private game (kept so that a game resumed after a restart stays
    /// private).
    pub code: Option<String>,
    /// Rated (its result moves the players' ratings): kept for a game resumed after a
    /// restart.
    pub rated: bool,
    /// The fencing token of the node running the game: the game row's `owner_epoch` when
    /// this run took it up (0 for a new game; each takeover in a cluster adds one, see
    /// [`Store::fence_game`]). Every journal write and the end carry it, and the database
    /// refuses them once the row's epoch is another (a newer owner's).
    pub owner_epoch: u64,
}

impl GameStart {
    /// A new public, unrated game between two players each named by their id, started at
    /// `started_ms`: what the store's tests write.
    pub fn between(
        id: GameId,
        red: &str,
        black: &str,
        settings: Settings,
        started_ms: u64,
    ) -> Self {
        let player = |id: &str| PlayerRef {
            player_id: id.into(),
            name: id.into(),
            rating: None,
        };
        GameStart {
            id,
            red: player(red),
            black: player(black),
            settings,
            started_ms,
            code: None,
            rated: false,
            owner_epoch: 0,
        }
    }
}

/// A game that is over (finished or aborted), with its whole record.
#[derive(Clone, Debug)]
pub struct GameEnd {
    pub start: GameStart,
    /// `finished` or `aborted`.
    pub state: &'static str,
    pub winner: Option<Player>,
    pub reason: String,
    pub result: String,
    pub move_count: u32,
    pub ended_ms: u64,
    pub record: RecordFile,
}

impl GameEnd {
    /// What a game that is over comes to. `reason_override` replaces the engine's reason
    /// (a crash is stored as the abort of the record, reason `crash`).
    pub fn of(
        start: GameStart,
        game: &Game,
        entries: Vec<Entry>,
        ended_ms: u64,
        reason_override: Option<&str>,
    ) -> GameEnd {
        let (state, winner, reason) = match game.status() {
            Status::Finished { outcome } => (
                "finished",
                outcome.winner,
                tag_of(&outcome.reason).unwrap_or_else(|| "unknown".into()),
            ),
            Status::Aborted { reason, .. } => (
                "aborted",
                None,
                tag_of(reason).unwrap_or_else(|| "unknown".into()),
            ),
            Status::Playing => ("aborted", None, "unknown".into()),
        };
        let reason = reason_override.map_or(reason, str::to_string);
        let mut result = protocol::record::describe_state(game);
        if reason_override == Some("crash") {
            result = "aborted: the server stopped before the game ended".into();
        }
        let record = Record {
            settings: start.settings.clone(),
            red: Some(start.red.name.clone()),
            black: Some(start.black.name.clone()),
            entries,
            end_ms: None,
        };
        let tags = vec![
            ("game".to_string(), start.id.to_string()),
            ("red_id".to_string(), start.red.player_id.clone()),
            ("black_id".to_string(), start.black.player_id.clone()),
            ("started_ms".to_string(), start.started_ms.to_string()),
            ("ended_ms".to_string(), ended_ms.to_string()),
            ("reason".to_string(), reason.clone()),
        ];
        GameEnd {
            state,
            winner,
            reason,
            result,
            move_count: game.move_count(),
            ended_ms,
            record: RecordFile { record, tags },
            start,
        }
    }
}

/// The `type` tag of a serde-tagged enum value (`no_moves`, `shutdown`, ...).
fn tag_of(value: &impl Serialize) -> Option<String> {
    serde_json::to_value(value)
        .ok()?
        .get("type")?
        .as_str()
        .map(str::to_string)
}

/// A stored game as `GET /games` shows it.
#[derive(Clone, Debug, Serialize)]
pub struct StoredGame {
    pub id: GameId,
    pub red: PlayerRef,
    pub black: PlayerRef,
    pub level: u8,
    pub settings: serde_json::Value,
    pub state: String,
    pub winner: Option<String>,
    pub reason: Option<String>,
    pub result: Option<String>,
    pub move_count: u64,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
}

/// A stored game with its record.
#[derive(Clone, Debug, Serialize)]
pub struct StoredRecord {
    #[serde(flatten)]
    pub game: StoredGame,
    /// The record as JSON (`protocol::record::Record`).
    pub record: serde_json::Value,
    /// The record in the text format of docs/RECORDS.md.
    #[serde(skip)]
    pub text: String,
}

/// One write for the writer task.
pub enum Write {
    /// A new player; `ack` answers whether it is on disk.
    Player(PlayerRow, Option<oneshot::Sender<bool>>),
    GameStarted(GameStart),
    /// Entry number `idx` (0-based) of a live game.
    Entry {
        game: GameId,
        /// The writer's fencing token ([`GameStart::owner_epoch`]).
        epoch: u64,
        idx: u64,
        entry: Entry,
    },
    /// Seat `player` of a live game is away with his grace until `grace_until_ms` (game
    /// time), or (`None`) is here: kept with the game, so that a restart or a takeover goes
    /// on from it (the grace to its own end, the opponent's claim window from it) rather
    /// than giving a fresh grace.
    Absence {
        game: GameId,
        /// The writer's fencing token ([`GameStart::owner_epoch`]).
        epoch: u64,
        player: protocol::game::Player,
        grace_until_ms: Option<u64>,
    },
    /// A game is over; `ack` answers once it is on disk (true) or could not be written.
    GameEnded(Box<GameEnd>, Option<oneshot::Sender<bool>>),
    /// Answers once everything queued before it was written.
    Flush(oneshot::Sender<()>),
}

impl Write {
    /// Someone waits for this write to be on disk.
    pub(super) fn awaited(&self) -> bool {
        matches!(
            self,
            Write::Player(_, Some(_)) | Write::GameEnded(_, Some(_)) | Write::Flush(_)
        )
    }
}
