//! The client's state, without a terminal or a socket: server messages, keys and typed
//! lines go in (each with the local instant it happened at), messages to send come out,
//! and the state says what to draw. Plain mode prints [`App::take_output`]; the
//! full-screen UI draws the state with [`crate::ui::ui`].
//!
//! A game is followed as an exact replica: the snapshot's entries replayed, then each event's entry
//! applied on top. The replica gives what the player may do now (the engine's legal
//! actions) and the sand, projected to "now" with the measured [`GameClock`].

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use protocol::bot::BotLevel;
use protocol::game::{Action, Game, Player, Status};
use protocol::notation::{parse_action, to_notation};
use protocol::settings::{Settings, Setup};
use protocol::wire::{
    ChallengeId, ClientMessage, GameId, GameSummary, SeatInfo, Seq, ServerFrame, ServerMessage,
    PROTOCOL_VERSION,
};
use protocol::Square;
use serde_json::{json, Value};

use crate::clock::GameClock;
use crate::gameref::{short_id, GameRef};
use crate::sanitize::clean;

/// How often the client measures the round trip with a `ping`.
pub const PING_EVERY: Duration = Duration::from_secs(5);
/// Log lines kept.
const LOG_KEEP: usize = 500;
/// How often a watcher of a finished game looks for the players' rematch.
pub const REMATCH_POLL: Duration = Duration::from_secs(2);
/// How long after `game_moving`, `game_busy` or `game_unreachable` a join or watch is
/// asked again.
pub const REJOIN_AFTER: Duration = protocol::wire::TRY_AGAIN_AFTER;

/// How a player finds a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Find {
    /// Quick match: the first player who seeks the same settings.
    Seek,
    /// The computer, at once, at this level (`None`: the server's default).
    Bot(Option<BotLevel>),
    /// Challenge this player (by name or player id).
    Challenge(String),
    /// A private game: the server gives a code to pass on.
    Host,
    /// Join the private game with this code.
    Code(String),
}

/// What the client was started to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Find a game with these settings as `find` says (or take one's seat again).
    Play { settings: Settings, find: Find },
    /// Follow a game; without one, list the live games to pick from. A short id is
    /// looked up in the list first.
    Watch { game: Option<GameRef> },
    /// List live games (optionally of one player) and stop.
    Games { player: Option<String> },
    /// The lobby: open seeks and live games, to take a seek or watch a game.
    Lobby,
}

/// Where the session stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Connecting,
    /// `hello` sent, waiting for `welcome`.
    Hello,
    /// Waiting for a game: a seek, a private game, a challenge.
    Seeking,
    /// `join`/`watch` sent for this game.
    Joining(GameId),
    /// `list_games` sent.
    Listing,
    /// Picking a game to watch from the list.
    Picking,
    /// In the lobby: choosing a seek to take or a game to watch.
    Lobby,
    /// Following a game (which may be over: see [`App::game`]).
    InGame,
    /// Nothing more to do.
    Done,
}

/// Who we are on the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Me {
    pub player_id: String,
    pub name: String,
    pub token: String,
}

/// What kind of line a log entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// A numbered game event.
    Event,
    /// Something about the connection or the session.
    Info,
    /// A refused message or a failure.
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// Game time of the event, if it is one.
    pub at_ms: Option<u64>,
    pub kind: LogKind,
    /// Already sanitised.
    pub text: String,
}

/// One line for plain mode: `text` for people, or `{"type": kind, "text": ..., ...data}`
/// with `--json`.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub kind: &'static str,
    pub text: String,
    pub data: Value,
}

impl Output {
    pub fn json(&self) -> Value {
        let mut v = json!({ "type": self.kind, "text": self.text });
        if let (Value::Object(map), Value::Object(extra)) = (&mut v, &self.data) {
            for (k, x) in extra {
                map.insert(k.clone(), x.clone());
            }
        }
        v
    }
}

/// A seat as shown: name sanitised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatView {
    pub player_id: String,
    pub name: String,
    pub connected: bool,
    pub grace_until_ms: Option<u64>,
    /// His grace ran out: his opponent may claim the win.
    pub grace_expired: bool,
    /// His round trip to the server, as the server measured it.
    pub lag_ms: Option<u64>,
}

impl SeatView {
    fn of(info: &SeatInfo) -> SeatView {
        SeatView {
            player_id: clean(&info.player_id),
            name: with_rating(&info.name, info.rating),
            connected: info.connected,
            grace_until_ms: info.grace_until_ms,
            grace_expired: false,
            lag_ms: info.lag_ms,
        }
    }
}

/// The game being played or watched.
#[derive(Clone, Debug)]
pub struct GameView {
    pub id: GameId,
    /// Our seat; `None` when watching.
    pub seat: Option<Player>,
    /// Red, Black.
    pub seats: [SeatView; 2],
    pub watchers: u32,
    /// The exact replica.
    pub replica: Game,
    /// The last event applied.
    pub seq: Seq,
    pub clock: GameClock,
    /// What our seat may do now (empty when watching or over).
    pub legal: Vec<Action>,
}

impl GameView {
    pub fn seat_view(&self, p: Player) -> &SeatView {
        &self.seats[p.index()]
    }
    pub fn is_over(&self) -> bool {
        !self.replica.is_playing()
    }
    /// Estimated game time at `at`, never past the end of the game.
    pub fn now_ms(&self, at: Instant) -> u64 {
        let now = self.clock.game_ms(at);
        match self.replica.status() {
            Status::Playing => now,
            Status::Finished { outcome } => outcome.ended_at_ms,
            Status::Aborted { at_ms, .. } => *at_ms,
        }
    }
    /// A player's name with his colour: "Red (Alice)".
    pub fn who(&self, p: Player) -> String {
        format!("{p} ({})", self.seats[p.index()].name)
    }
}

/// An answer the UI waits for before acting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirm {
    Resign,
    Quit,
    /// Accept this challenge?
    Challenge(ChallengeId),
}

/// The whole client state.
pub struct App {
    pub mode: Mode,
    /// The name to register with when we have no token.
    pub name: String,
    /// A token from the config file, presented in `hello`.
    pub token: Option<String>,
    /// A game from the config file to take our seat in again.
    pub resume: Option<GameId>,
    pub me: Option<Me>,
    /// Welcomed as a guest (watching or listing without a token): no player exists.
    pub guest: bool,
    pub phase: Phase,
    pub game: Option<GameView>,
    /// Live games, when listing or picking.
    pub games: Vec<GameSummary>,
    /// The highlighted row while picking a game.
    pub pick: usize,
    /// The open seeks, in the lobby.
    pub seeks: Vec<protocol::wire::SeekInfo>,
    /// Who is online (by name), in the lobby, and how many in all.
    pub online: Vec<protocol::wire::PlayerRef>,
    pub online_count: u32,
    /// When the lobby last asked for its lists.
    lobby_poll: Option<Instant>,
    pub log: Vec<LogLine>,
    /// The last error or hint, shown in place until the next action.
    pub status: Option<(LogKind, String)>,
    /// Our measured round trip.
    pub lag_ms: Option<u64>,
    /// The board cursor (full-screen UI).
    pub cursor: Square,
    /// Typed command being edited (after `:`).
    pub input: Option<String>,
    pub confirm: Option<Confirm>,
    /// Challenges we received and have not answered: id, from whom (sanitised), settings.
    pub challenges: Vec<(ChallengeId, String, Settings)>,
    /// Who sent each challenge we received, until the server closes it (answered ones
    /// too): its closing names him.
    pub challengers: Vec<(ChallengeId, String)>,
    /// We left the lobby to take a seek or challenge a player: if that comes to nothing,
    /// back to the lobby rather than out.
    pub from_lobby: bool,
    /// The challenge we sent and its opponent, while it waits.
    pub challenge_sent: Option<(ChallengeId, String)>,
    /// The code of our private game, while it waits.
    pub hosting: Option<String>,
    /// Whether the help overlay is shown.
    pub help: bool,
    pub connected: bool,
    /// Set when the account or the current game changed: the config file is saved.
    pub config_dirty: bool,
    pub quit: bool,
    /// Exit status when quitting.
    pub exit_code: u8,
    /// Quit as soon as the game is over (plain mode).
    pub quit_when_over: bool,
    /// Ring the terminal bell on low-time warnings (`--no-bell` turns it off).
    pub bell: bool,
    /// Ask for a rated (`Some(true)`) or casual game; `None`: the server's default
    /// (rated for a named time control).
    pub rated: Option<bool>,
    /// Low-time warnings given, and the flash in progress.
    pub alerts: crate::countdown::Alerts,
    /// A watcher of a finished game asked for the live games (at this instant) to find
    /// the players' rematch.
    rematch_poll: Option<Instant>,
    /// A join or watch the server could not serve yet (the game moving to another node,
    /// or busy), asked again at this instant.
    rejoin: Option<(Instant, ClientMessage)>,
    base: Instant,
    /// The server's wall clock in the welcome, and when it arrived.
    welcomed: Option<(u64, Instant)>,
    last_ping: Option<Instant>,
    out: Vec<Output>,
    last_may: Option<Vec<String>>,
}

fn sq(s: &str) -> Square {
    s.parse().expect("valid square")
}

/// Settings in words: "Level 3, hourglasses 180 s, 15-second timer 15 s".
pub fn describe_settings(s: &Settings) -> String {
    let mut parts = vec![format!("Level {}", s.level.number())];
    if s.setup == Setup::Placement {
        parts.push("placement set-up".into());
    }
    if s.level.timed() {
        parts.push(format!("hourglasses {}", secs(s.hourglass_ms)));
    }
    if s.level == protocol::Level::Three {
        parts.push(format!("15-second timer {}", secs(s.neutral_ms)));
    }
    if let Some(c) = s.game_clock {
        parts.push(format!("clock {}", secs(c.main_ms)));
    }
    if let Some(t) = s.turn_limit_ms {
        parts.push(format!("turn limit {}", secs(t)));
    }
    parts.join(", ")
}

fn secs(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

impl App {
    pub fn new(mode: Mode, name: String, token: Option<String>, base: Instant) -> App {
        App {
            mode,
            name,
            token,
            resume: None,
            me: None,
            guest: false,
            phase: Phase::Connecting,
            game: None,
            games: Vec::new(),
            pick: 0,
            seeks: Vec::new(),
            online: Vec::new(),
            online_count: 0,
            lobby_poll: None,
            log: Vec::new(),
            status: None,
            lag_ms: None,
            cursor: sq("d4"),
            input: None,
            confirm: None,
            challenges: Vec::new(),
            challengers: Vec::new(),
            from_lobby: false,
            challenge_sent: None,
            hosting: None,
            help: false,
            connected: false,
            config_dirty: false,
            quit: false,
            exit_code: 0,
            quit_when_over: false,
            bell: true,
            rated: None,
            alerts: Default::default(),
            rematch_poll: None,
            rejoin: None,
            base,
            welcomed: None,
            last_ping: None,
            out: Vec::new(),
            last_may: None,
        }
    }

    /// Lines for plain mode since the last call.
    pub fn take_output(&mut self) -> Vec<Output> {
        std::mem::take(&mut self.out)
    }

    fn local_ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.base).as_millis() as u64
    }

    fn emit(&mut self, kind: &'static str, text: String, data: Value) {
        self.out.push(Output { kind, text, data });
    }

    fn log(&mut self, kind: LogKind, at_ms: Option<u64>, text: String) {
        self.log.push(LogLine { at_ms, kind, text });
        if self.log.len() > LOG_KEEP {
            let extra = self.log.len() - LOG_KEEP;
            self.log.drain(..extra);
        }
    }

    /// Logs and prints a line about the session.
    fn info(&mut self, kind: &'static str, text: String, data: Value) {
        self.log(LogKind::Info, None, text.clone());
        self.emit(kind, text, data);
    }

    /// A failure that ends the session.
    fn fatal(&mut self, text: String) {
        self.fatal_code(text, None);
    }

    /// A failure that ends the session, with the server's error code for JSON readers.
    fn fatal_code(&mut self, text: String, code: Option<&str>) {
        self.log(LogKind::Error, None, text.clone());
        self.status = Some((LogKind::Error, text.clone()));
        let data = code.map_or(json!({}), |c| json!({ "code": c }));
        self.emit("fatal", text, data);
        self.quit = true;
        self.exit_code = 1;
        self.phase = Phase::Done;
    }

    /// An error of the client itself (not the server's), shown and logged.
    pub fn note_error(&mut self, text: String) {
        self.log(LogKind::Error, None, text.clone());
        self.refuse(text);
    }

    fn hint(&mut self, text: impl Into<String>) {
        self.status = Some((LogKind::Info, text.into()));
    }

    fn refuse(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.status = Some((LogKind::Error, text.clone()));
        self.emit("error", text, json!({ "code": "client" }));
    }
}

/// A name with the rating beside it, when there is one: `Rita (1662?)`.
pub fn with_rating(name: &str, rating: Option<protocol::rating::ShownRating>) -> String {
    match rating {
        Some(r) => format!("{} ({r})", clean(name)),
        None => clean(name),
    }
}

/// A live game in one line: "#3f9a0c1d  Alice (Red) vs Bob (Black)  Level 3  12 moves  2 watching".
pub fn game_line(g: &GameSummary) -> String {
    let state = if g.state == "playing" {
        String::new()
    } else {
        format!("  [{}]", clean(&g.state))
    };
    format!(
        "{}  {} (Red) vs {} (Black)  {}  {} moves  {} watching{state}",
        short_id(g.game),
        with_rating(&g.red.name, g.red.rating),
        with_rating(&g.black.name, g.black.rating),
        describe_settings(&g.settings),
        g.move_count,
        g.watchers,
    )
}

/// The commands, in one line.
pub const HELP_LINE: &str = "Commands: d1-d2 (move and drop), d1-d2. (move without dropping), start d1, release d2, drop, drop e4 (penalty ring), penalty e4, claim, flip, resign, win (after the opponent's grace ran out), new, rematch, decline rematch (after a game), accept, decline (a challenge), quit";

// Typed commands and keys: what the player asks for, turned into messages.
#[path = "app_input.rs"]
mod input;
#[path = "app_lobby.rs"]
pub mod lobby;
// The connection and the server's messages: hello and welcome, the games list, ticks.
#[path = "app_session.rs"]
mod session;
// Following a game: snapshots, events, the end, errors.
#[path = "app_game.rs"]
mod game;
// What the lobby tells: seeks, challenges, tournaments, ratings.
#[path = "app_notices.rs"]
mod notices;

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
