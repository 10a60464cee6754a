//! What breaks the connection's contract (the websocket protocol, or "JSON text only"),
//! and the close codes the connection ends with.

use super::Conn;

/// Close codes (RFC 6455, 7.4.1).
pub(super) const CLOSE_NORMAL: u16 = 1000;
pub(super) const CLOSE_GOING_AWAY: u16 = 1001;
pub(super) const CLOSE_PROTOCOL: u16 = 1002;
pub(super) const CLOSE_UNSUPPORTED: u16 = 1003;
pub(super) const CLOSE_INVALID: u16 = 1007;
pub(super) const CLOSE_POLICY: u16 = 1008;
pub(super) const CLOSE_TOO_BIG: u16 = 1009;
pub(super) const CLOSE_TRY_LATER: u16 = 1013;
/// Not a code on the wire: the client closed, and its close frame is echoed.
pub const CLOSE_ECHO: u16 = 0;

/// A breach of the websocket protocol or of "JSON text only": the connection is closed.
#[derive(Debug, PartialEq, Eq)]
pub enum Violation {
    /// Over the hard message limit: 1009.
    TooBig,
    /// A binary frame: 1003.
    Binary,
    /// A text frame that is not UTF-8: 1007.
    NotUtf8,
    /// Text that is not JSON: 1007.
    NotJson(String),
    /// Anything else the websocket layer refused (bad framing, masking, opcodes): 1002.
    Protocol,
}

impl Violation {
    /// What a read error of the websocket layer means, if it is the client's doing (not a
    /// reset or an end of stream).
    pub fn of_read_error(text: &str) -> Option<Violation> {
        if text.contains("Space limit exceeded") || text.contains("too long") {
            Some(Violation::TooBig)
        } else if text.contains("UTF-8") || text.contains("utf-8") {
            Some(Violation::NotUtf8)
        } else if text.contains("protocol error") {
            Some(Violation::Protocol)
        } else {
            None
        }
    }

    /// The close frame: code and reason.
    pub fn close(&self) -> (u16, &'static str) {
        match self {
            Violation::TooBig => (CLOSE_TOO_BIG, "message too big"),
            Violation::Binary => (CLOSE_UNSUPPORTED, "binary frames are not accepted"),
            Violation::NotUtf8 => (CLOSE_INVALID, "invalid payload: text is not UTF-8"),
            Violation::NotJson(_) => (CLOSE_INVALID, "invalid payload: not JSON"),
            Violation::Protocol => (CLOSE_PROTOCOL, "websocket protocol error"),
        }
    }
}

impl Conn {
    /// Tells the client what it did wrong, then closes with the code RFC 6455 gives it.
    pub(super) fn violation(&self, violation: Violation) {
        let config = &self.hub.config;
        let (code, message) = match &violation {
            Violation::TooBig => (
                "frame_too_large",
                format!(
                    "message over the hard limit of {} bytes: closing",
                    config.hard_max_message_bytes
                ),
            ),
            Violation::Binary => (
                "binary_frame",
                "frames must be JSON text; binary frames are not accepted: closing".into(),
            ),
            Violation::NotUtf8 => ("bad_utf8", "a text frame must be UTF-8: closing".into()),
            // `why` says "malformed JSON: ..." already.
            Violation::NotJson(why) => ("bad_json", format!("{why}: closing")),
            Violation::Protocol => ("protocol_error", "websocket protocol error: closing".into()),
        };
        self.error(code, message, None);
        let (close, reason) = violation.close();
        self.peer.kill.kill(close, reason);
    }
}
