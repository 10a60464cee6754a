//! Frames out: every server message is serialised once, into a shareable text frame.

use std::cell::RefCell;

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
    // Written into this thread's buffer, then copied once at its size: frames are kept
    // (game history, queues), so they keep only their own bytes, and a `String` of its
    // own grew by doubling and was shrunk again, two or three reallocations a move event.
    BUF.with_borrow_mut(|buf| {
        buf.clear();
        serde_json::to_writer(&mut *buf, msg).expect("server messages always serialise");
        let text = String::from_utf8(buf.to_vec()).expect("JSON is UTF-8");
        // A big snapshot's room is not kept by every thread that wrote one.
        if buf.capacity() > 16 * BUF_KEPT {
            *buf = Vec::with_capacity(BUF_KEPT);
        }
        text.into()
    })
}

/// The room [`encode`]'s buffer keeps: a move event is about 300 bytes.
const BUF_KEPT: usize = 4096;

thread_local! {
    /// [`encode`]'s buffer.
    static BUF: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(BUF_KEPT));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each frame is the message's JSON and nothing else, whatever this thread wrote
    /// before (a long frame, then a short one); a long frame's room is not kept.
    #[test]
    fn a_frame_is_its_message_alone() {
        let long = error("x", "y".repeat(200_000), None);
        let short = error("bad_request", "no", None);
        for msg in [&short, &long, &short] {
            let frame = encode(msg);
            assert_eq!(frame.as_str(), serde_json::to_string(msg).unwrap());
        }
        let kept = BUF.with_borrow(|buf| buf.capacity());
        assert!(
            kept <= 16 * BUF_KEPT,
            "the long frame's room was let go: {kept}"
        );
    }
}
