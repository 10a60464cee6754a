//! The wire protocol between the live server and its clients: JSON text frames, one enum
//! of messages in ([`ClientMessage`]) and one out ([`ServerMessage`]), tagged by `"type"`.
//!
//! Documented in `docs/PROTOCOL.md`; `docs/protocol.schema.json` is generated from these
//! types by [`json_schema`] and kept in sync by a test.
//!
//! Every change to a game goes out as a numbered [`ServerMessage::Event`]: per game, `seq`
//! counts up from 1 without gaps, and `now_ms` is the server's game time when it was sent.
//! A client that joins or watches gets one [`ServerMessage::Snapshot`] (carrying the seq of
//! the last event it includes), then the events after it.

use serde::{Deserialize, Serialize};

use crate::game::{Action, Game, GlassState, Neutral, Player};
use crate::settings::{Level, Settings};
use crate::view::GameView;

mod event;
mod request_id;
pub use event::{Change, GameEvent, ReplicaError};
pub use request_id::{RequestId, MAX_ID_INT, MAX_ID_LEN};

/// The version a client states in its `hello`. The server refuses other versions.
pub const PROTOCOL_VERSION: u32 = 1;

/// Most games in one `games` answer (the lowest ids first).
pub const LIST_LIMIT: usize = 200;

/// A game's id: a UUID v7 (time-ordered, so ids sort by creation), written in JSON as
/// the usual hyphenated string. Given by the server; the protocol never makes one.
pub type GameId = uuid::Uuid;

/// A per-game event sequence number; the first event of a game is 1, a snapshot of a new
/// game has seq 0.
pub type Seq = u64;

/// What a client sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// The first message on every connection. A new player gives a display name (1 to 24
    /// printable characters, no control characters, no leading or trailing spaces) and gets
    /// a player id and a secret token; a returning player gives only his token. A guest
    /// (`guest: true`, neither name nor token) becomes no player: he may list games and
    /// seeks and watch, nothing that needs a seat; answer `guest_welcome`.
    Hello {
        version: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        guest: bool,
    },
    /// Asks for a game with exactly these settings (partial JSON takes the level's
    /// defaults). Two players asking for the same settings are paired at once; both get a
    /// snapshot of the new game.
    Seek {
        #[serde(serialize_with = "crate::settings::player_form")]
        #[schemars(with = "crate::settings::PlayerSettings")]
        settings: Settings,
        /// `true` rated, `false` casual; absent: rated when the settings are a named
        /// time control (`docs/PROTOCOL.md`, Ratings).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rated: Option<bool>,
    },
    /// Withdraws one's seek.
    CancelSeek,
    /// Lists live games (at most [`LIST_LIMIT`], by id).
    ListGames,
    /// Watches a game as a spectator. With `after_seq`, resumes after that event.
    Watch {
        game: GameId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_seq: Option<Seq>,
    },
    /// Watches the private game started from this code (its latest rematch, if any): the
    /// code is what lets a spectator in. Always answered with a snapshot.
    WatchCode { code: String },
    /// Takes one's own seat in a game again (after a reconnect). With `after_seq`, the
    /// server sends exactly the events after it, or a snapshot when they are gone.
    Join {
        game: GameId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_seq: Option<Seq>,
    },
    /// Stops receiving a game's events. A player who leaves is disconnected from his seat
    /// (his grace starts) but keeps it.
    Leave { game: GameId },
    /// An action in a game, for one's own seat. The server stamps it with the instant it
    /// received the frame. `seq`: the last event of the game the client had when it
    /// decided; a move, start, placement, flip or claim sent before the current turn began
    /// (a later `seq` started it) is refused `stale_action` and nothing is played.
    Act {
        game: GameId,
        action: Action,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<Seq>,
    },
    /// Claims the win after the opponent's reconnection grace ran out (abandonment).
    ClaimAbandonment { game: GameId },
    /// Asks for the server's time; `client_ms` is echoed back. `lag_ms` is the client's
    /// own estimate of its round trip: it can lower the server's estimate, never raise it.
    Ping {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lag_ms: Option<u64>,
    },
    /// Answered a JSON ping of the first protocol. The server measures lag with websocket
    /// pings now and sends no JSON ping, so this is refused with `unknown_nonce`.
    Pong { nonce: u64 },
    /// Lists the open seeks (waiting `seek`s of other players, oldest first): answer
    /// [`LobbyMessage::Seeks`].
    ListSeeks,
    /// Lists who is online (players with a connection that said hello): answer
    /// [`LobbyMessage::Players`].
    ListPlayers,
    /// Takes an open seek from the list: the game starts at once with its settings.
    AcceptSeek { seek: SeekId },
    /// Challenges an online player (by player id, or by name when only one online player
    /// has it) to a game with these settings. He may accept or decline.
    Challenge {
        to: String,
        #[serde(serialize_with = "crate::settings::player_form")]
        #[schemars(with = "crate::settings::PlayerSettings")]
        settings: Settings,
        /// `true` rated, `false` casual; absent: rated when the settings are a named
        /// time control (`docs/PROTOCOL.md`, Ratings).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rated: Option<bool>,
    },
    /// Accepts a challenge one received: the game starts at once.
    AcceptChallenge { challenge: ChallengeId },
    /// Declines a challenge one received.
    DeclineChallenge { challenge: ChallengeId },
    /// Withdraws a challenge one sent.
    CancelChallenge { challenge: ChallengeId },
    /// Opens a private game with these settings: the answer [`LobbyMessage::Hosting`]
    /// carries a short code to pass on; whoever sends `join_code` with it plays.
    /// Withdrawn like a seek (`cancel_seek`, or by leaving).
    Host {
        #[serde(serialize_with = "crate::settings::player_form")]
        #[schemars(with = "crate::settings::PlayerSettings")]
        settings: Settings,
    },
    /// Joins the private game hosted under this code (case does not matter).
    JoinCode { code: String },
    /// After a game is over, offers (or accepts) a rematch with the same settings and the
    /// colours swapped. The game starts when both players sent it.
    Rematch { game: GameId },
    /// Declines (or withdraws) a rematch offer.
    DeclineRematch { game: GameId },
    /// Plays the computer at once with these settings (seats drawn at random).
    PlayBot {
        #[serde(serialize_with = "crate::settings::player_form")]
        #[schemars(with = "crate::settings::PlayerSettings")]
        settings: Settings,
        /// How strong the bot plays: `"easy"`, `"normal"` or `"hard"`; absent: the
        /// server's default (its `--bot-level`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        level: Option<crate::bot::BotLevel>,
        /// `true` rated, `false` casual; absent: rated when the settings are a named
        /// time control.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rated: Option<bool>,
    },
    /// Creates a Swiss tournament of `rounds` rounds at the named time control `tc`
    /// (Level 3, with a 20-minute game clock each unless `settings` are given). It starts
    /// `starts_in_ms` from now (default 60 s). Answer
    /// [`LobbyMessage::TournamentCreated`]. A player has at most 3 upcoming or running
    /// tournaments of his own.
    TournamentCreate {
        rounds: u32,
        tc: crate::rating::TimeControl,
        /// Rated games (only when the settings are the named control).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rated: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        starts_in_ms: Option<u64>,
        /// The games' settings: the fields given change the control's (at the level
        /// given, Level 3 by default, with the 20-minute game clock).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<crate::settings::PlayerSettings>")]
        settings: Option<crate::settings::PartialSettings>,
    },
    /// Joins a tournament (before it starts, or while it runs: from its next round).
    /// Answer [`LobbyMessage::TournamentJoined`]; each round then brings a snapshot of
    /// one's game (or a bye) and [`LobbyMessage::TournamentRound`]. A withdrawal is
    /// final: no joining again.
    TournamentJoin { tournament: String },
    /// Withdraws from a tournament: paired no more (a game in progress goes on).
    TournamentWithdraw { tournament: String },
    /// Cancels a tournament one created, before it starts. The answer, and the message to
    /// each of its players, is [`LobbyMessage::TournamentFinished`] with `cancelled`.
    TournamentCancel { tournament: String },
}

/// An open seek's id.
pub type SeekId = u64;
/// A challenge's id.
pub type ChallengeId = u64;

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The answer to `hello`.
    Welcome {
        version: u32,
        player_id: String,
        name: String,
        /// Keep it secret: presenting it in a later `hello` makes you the same player.
        token: String,
        /// Server wall-clock time, ms since the Unix epoch.
        server_ms: u64,
        /// Live games in which this player has a seat (to `join` after a reconnect).
        games: Vec<GameId>,
    },
    /// The answer to a guest's `hello`: no player, no token; the connection may list
    /// games and seeks and watch.
    GuestWelcome {
        version: u32,
        /// Server wall-clock time, ms since the Unix epoch.
        server_ms: u64,
    },
    /// The seek is registered; a snapshot follows when an opponent asks for the same
    /// settings.
    Seeking {
        settings: Settings,
    },
    SeekCancelled,
    /// The answer to `list_games`.
    Games {
        games: Vec<GameSummary>,
    },
    /// The whole state of a game at `seq` (the last event it includes). Events with higher
    /// seq follow.
    Snapshot(Box<Snapshot>),
    /// The answer to a `join`/`watch` with `after_seq` whose events are still in the
    /// history: exactly the events after `after_seq` follow, in order.
    Resumed {
        game: GameId,
        after_seq: Seq,
        /// Your seat; `None` for a watcher.
        seat: Option<Player>,
    },
    /// A numbered change of a game.
    Event(Box<GameEvent>),
    /// The number of watchers of a game changed (not numbered).
    Watchers {
        game: GameId,
        count: u32,
    },
    /// You no longer receive this game's events.
    Left {
        game: GameId,
    },
    /// The answer to `ping`.
    Pong {
        client_ms: Option<u64>,
        /// Server wall-clock time, ms since the Unix epoch.
        server_ms: u64,
        /// The last round trip the server measured on this connection.
        lag_ms: Option<u64>,
    },
    /// The server measures lag: answer with `pong` and the same nonce at once.
    Ping {
        nonce: u64,
        server_ms: u64,
    },
    /// The round trip the server measured on this connection.
    Lag {
        rtt_ms: u64,
    },
    /// A refused message: nothing changed. `code` is stable, `message` is for people.
    Error {
        code: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game: Option<GameId>,
        /// The `id` of the refused message, if it had a valid one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<RequestId>,
        /// When the server received the refused message: its wall clock, ms since the Unix
        /// epoch (on every error that answers a message).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_ms: Option<u64>,
        /// When the message concerns a live game: the game time at which it was received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
    },
}

/// What the server sends about finding games (and its own shutdown), beside
/// [`ServerMessage`]: the same kind of frame, tagged by `"type"`, with tags of their own. A
/// client reads any frame as a [`ServerFrame`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LobbyMessage {
    /// The answer to `list_seeks`: open seeks of other players, oldest first (at most
    /// [`LIST_LIMIT`]); one's own seek is listed too.
    Seeks { seeks: Vec<SeekInfo> },
    /// The answer to `list_players`: players online, by name (at most [`LIST_LIMIT`]), and
    /// how many are online in all.
    Players {
        players: Vec<PlayerRef>,
        online: u32,
    },
    /// The answer to `host`: pass the code on; a snapshot follows when someone joins.
    Hosting { code: String, settings: Settings },
    /// The answer to `challenge`: it waits for the other player until `expires_ms`
    /// (server wall clock).
    ChallengeSent {
        challenge: ChallengeId,
        to: PlayerRef,
        settings: Settings,
        expires_ms: u64,
        /// Rated if accepted.
        #[serde(default)]
        rated: bool,
    },
    /// Somebody challenges you: answer `accept_challenge` or `decline_challenge` before
    /// `expires_ms` (server wall clock).
    Challenged {
        challenge: ChallengeId,
        from: PlayerRef,
        settings: Settings,
        expires_ms: u64,
        /// Rated if accepted.
        #[serde(default)]
        rated: bool,
    },
    /// A challenge ended without a game, to both sides: `reason` is `declined`,
    /// `cancelled`, `expired`, `gone` (a side left) or `shutting_down`.
    ChallengeClosed {
        challenge: ChallengeId,
        reason: String,
    },
    /// To both players of a game that is over: `by` offers a rematch. When the other
    /// sends `rematch` too, the new game's snapshot follows.
    RematchOffered { game: GameId, by: Player },
    /// To both players: `by` declined (or withdrew) the rematch.
    RematchDeclined { game: GameId, by: Player },
    /// The server is shutting down: no new games; live games may go on for `drain_ms`,
    /// then the rest are suspended, to be resumed when the server (or, on several nodes,
    /// another node) runs them again; a server set not to resume them aborts them.
    ShuttingDown { drain_ms: u64, server_ms: u64 },
    /// To every connection of a player whose rating a rated game just changed (once it
    /// is stored).
    RatingChanged {
        game: GameId,
        tc: crate::rating::TimeControl,
        before: crate::rating::ShownRating,
        after: crate::rating::ShownRating,
    },
    /// The answer to `tournament_create`: its id, and when it starts (server wall clock).
    TournamentCreated { tournament: String, starts_ms: u64 },
    /// The answer to `tournament_join`.
    TournamentJoined { tournament: String },
    /// The answer to `tournament_withdraw`.
    TournamentWithdrawn { tournament: String },
    /// To each player of a tournament when a round starts: his game (its snapshot
    /// comes too), or `game` absent: a bye (a point).
    TournamentRound {
        tournament: String,
        round: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game: Option<GameId>,
    },
    /// To each player of a tournament: it is over (`GET /api/tournaments/{id}` has the
    /// standings), or `cancelled` (too few players when it was to start, or cancelled
    /// by its creator: the answer to his `tournament_cancel`).
    TournamentFinished {
        tournament: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        cancelled: bool,
    },
}

/// An open seek in the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeekInfo {
    pub seek: SeekId,
    pub player: PlayerRef,
    pub settings: Settings,
    /// When it was posted (server wall clock, ms since the Unix epoch).
    pub since_ms: u64,
    /// A rated seek (see `seek`).
    #[serde(default)]
    pub rated: bool,
}

/// Any frame the server sends: a [`ServerMessage`] or a [`LobbyMessage`] (their `type`
/// tags differ).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerFrame {
    Message(ServerMessage),
    Lobby(LobbyMessage),
}

/// The whole state of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    pub game: GameId,
    /// The seq of the last event this snapshot includes.
    pub seq: Seq,
    /// The server's game time when it was taken (ms since the game started).
    pub now_ms: u64,
    /// Your seat; `None` for a watcher.
    pub seat: Option<Player>,
    pub red: SeatInfo,
    pub black: SeatInfo,
    pub watchers: u32,
    /// The game: board, hourglasses, holders, turn, windows, timer, clocks and the
    /// entries so far (a documented view, not the engine's insides;
    /// [`GameView::replica`] rebuilds the engine's state to apply later entries on).
    pub view: GameView,
    pub sand: SandTable,
    /// Rated: the result changes both players' ratings in `tc`.
    #[serde(default)]
    pub rated: bool,
    /// The named time control of its settings, if any (absent: casual only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<crate::rating::TimeControl>,
}

/// A seat of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeatInfo {
    pub player_id: String,
    pub name: String,
    pub connected: bool,
    /// While disconnected: the game time at which the grace runs out and the opponent may
    /// claim the win.
    pub grace_until_ms: Option<u64>,
    /// The seat's last round trip to the server, measured by the server's own pings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ms: Option<u64>,
    /// His rating in the game's time control (absent when its settings are no named
    /// control).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<crate::rating::ShownRating>,
}

/// Everything needed to draw the sand of every hourglass and of the 15-second timer:
/// remaining at `t` is `max(0, top_ms - (t - since_ms))` for a started, live hourglass.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SandTable {
    pub glasses: Vec<GlassState>,
    pub neutral: Neutral,
}

impl SandTable {
    /// The sand of `game`. The 15-second timer's `target` is `None` once it judges nobody
    /// ([`Game::neutral_judges`]): its turn is over (or the game is ending or over), even
    /// while its sand still runs.
    pub fn of(game: &Game) -> SandTable {
        let mut neutral = *game.neutral();
        if game.neutral_judges().is_none() {
            neutral.target = None;
        }
        SandTable {
            glasses: game.glasses().to_vec(),
            neutral,
        }
    }
}

/// A live game in the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GameSummary {
    pub game: GameId,
    pub level: Level,
    pub settings: Settings,
    pub red: PlayerRef,
    pub black: PlayerRef,
    pub move_count: u32,
    pub watchers: u32,
    /// `playing`, `finished` or `aborted`.
    pub state: String,
    /// Rated: the result changes both players' ratings in `tc`.
    #[serde(default)]
    pub rated: bool,
    /// The named time control of its settings, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<crate::rating::TimeControl>,
}

/// A player as others see him.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlayerRef {
    pub player_id: String,
    pub name: String,
    /// His rating in the time control at hand (in lists and offers; absent when it has
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<crate::rating::ShownRating>,
}

impl From<ServerMessage> for ServerFrame {
    fn from(m: ServerMessage) -> ServerFrame {
        ServerFrame::Message(m)
    }
}

impl From<LobbyMessage> for ServerFrame {
    fn from(m: LobbyMessage) -> ServerFrame {
        ServerFrame::Lobby(m)
    }
}

impl ServerMessage {
    pub fn error(code: impl Into<String>, message: impl Into<String>) -> ServerMessage {
        ServerMessage::Error {
            code: code.into(),
            message: message.into(),
            game: None,
            id: None,
            server_ms: None,
            at_ms: None,
        }
    }
}

/// Whether an error `code` says the game is there but cannot take a join or watch this
/// instant (its node is gone and another takes it over, its queue is full, its node cannot
/// be reached): the same message succeeds if sent again a moment later, [`TRY_AGAIN_AFTER`]
/// (PROTOCOL.md, "Errors").
pub fn is_try_again(code: &str) -> bool {
    matches!(code, "game_moving" | "game_busy" | "game_unreachable")
}

/// How long the bundled clients wait before sending again a join or watch answered with a
/// [`is_try_again`] code.
pub const TRY_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// The JSON Schema of both message enums (draft-07), as committed in
/// `docs/protocol.schema.json`.
pub fn json_schema() -> serde_json::Value {
    use schemars::gen::SchemaSettings;
    let mut gen = SchemaSettings::draft07().into_generator();
    let client = gen.subschema_for::<ClientMessage>();
    let server = gen.subschema_for::<ServerMessage>();
    let lobby = gen.subschema_for::<LobbyMessage>();
    gen.subschema_for::<RequestId>();
    let definitions = gen.take_definitions();
    let mut definitions = serde_json::to_value(definitions).expect("a schema");
    // Any message may carry an `id`, echoed on its answer; a command with a field it does
    // not have is refused (`unknown_field`): strict.
    let id = serde_json::json!({ "$ref": "#/definitions/RequestId" });
    for (def, strict) in [
        ("ClientMessage", true),
        ("Action", true),
        ("ServerMessage", false),
        ("LobbyMessage", false),
    ] {
        let Some(variants) = definitions[def]["oneOf"].as_array_mut() else {
            continue;
        };
        for v in variants {
            if def != "Action" {
                v["properties"]["id"] = id.clone();
            }
            if strict {
                v["additionalProperties"] = false.into();
            }
        }
    }
    serde_json::json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "TAMSK online wire protocol",
        "description": format!(
            "Protocol version {PROTOCOL_VERSION}. Every frame is one JSON object: a client sends a ClientMessage, the server sends a ServerMessage or a LobbyMessage."
        ),
        "properties": { "client": client, "server": server, "lobby": lobby },
        "definitions": definitions,
    })
}

#[cfg(test)]
mod tests;
