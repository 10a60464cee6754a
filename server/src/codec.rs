//! Frames out: every server message is serialised once, into a shareable text frame.

use axum::extract::ws::Utf8Bytes;
use protocol::wire::{GameId, LobbyMessage, ServerMessage};

/// Serialises an answer to one client message: an error gets its id and receipt
/// instants, any other message its id.
pub fn encode_reply(msg: &ServerMessage, reply: &Reply) -> Utf8Bytes {
    match msg {
        ServerMessage::Error {
            code,
            message,
            game,
            id,
            server_ms,
            at_ms,
        } => encode(&ServerMessage::Error {
            code: code.clone(),
            message: message.clone(),
            game: *game,
            id: id.clone().or_else(|| reply.id.clone()),
            server_ms: server_ms.or(Some(reply.server_ms)),
            at_ms: at_ms.or(game.and(reply.at_ms)),
        }),
        _ => match &reply.id {
            Some(id) => with_id(msg, id),
            None => encode(msg),
        },
    }
}

/// A frame with `"id"` added beside its `"type"`.
pub fn with_id(msg: &impl serde::Serialize, id: &protocol::wire::RequestId) -> Utf8Bytes {
    let mut value = serde_json::to_value(msg).expect("server messages always serialise");
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "id".into(),
            serde_json::to_value(id).expect("an id serialises"),
        );
    }
    serde_json::to_string(&value)
        .expect("server messages always serialise")
        .into()
}

/// Serialises a message once, for any number of sockets.
pub fn encode(msg: &ServerMessage) -> Utf8Bytes {
    let mut text = serde_json::to_string(msg).expect("server messages always serialise");
    // The buffer grew by doubling; frames are kept (game history, queues), so they keep
    // only their own bytes.
    text.shrink_to_fit();
    text.into()
}

/// The client message that frames sent through a peer answer: an error carries its `id`
/// and its receipt instants; any other answer carries its `id`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reply {
    pub id: Option<protocol::wire::RequestId>,
    /// The server's wall clock when the message was received (ms since the Unix epoch).
    pub server_ms: u64,
    /// The game time at which it was received, when it concerns a live game.
    pub at_ms: Option<u64>,
}

/// An error, about a game or not (its request id and server time are added by
/// [`encode_reply`] when it answers a request).
pub fn error(code: &str, message: impl Into<String>, game: Option<GameId>) -> ServerMessage {
    ServerMessage::Error {
        code: code.into(),
        message: message.into(),
        game,
        id: None,
        server_ms: None,
        at_ms: None,
    }
}

/// An error about game `game` (see [`error`]).
pub fn game_error(code: &str, message: impl Into<String>, game: GameId) -> ServerMessage {
    error(code, message, Some(game))
}

/// Serialises a lobby message once.
pub fn encode_lobby(msg: &LobbyMessage) -> Utf8Bytes {
    serde_json::to_string(msg)
        .expect("lobby messages always serialise")
        .into()
}
