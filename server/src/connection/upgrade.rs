//! The websocket handshake (RFC 6455, 4.2.2), done here rather than by axum's
//! `WebSocketUpgrade` so that the connection holds its TCP stream itself: its write side
//! goes into a [`Wire`] that games write to directly (see `wire`), its read side to the
//! websocket layer. The checks and answers are axum's, with the server's error style.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

use crate::wire::{Duplex, Wire};

/// A websocket request, checked, not yet answered.
pub struct Upgrade {
    key: HeaderValue,
    on_upgrade: hyper::upgrade::OnUpgrade,
}

/// An upgraded websocket: the websocket layer reads, the wire writes.
pub struct Socket {
    pub ws: WebSocketStream<Duplex>,
    pub wire: Arc<Wire>,
}

/// What the websocket layer and the wire are given.
pub struct Limits {
    pub config: WebSocketConfig,
    /// Frames that may wait for a socket that does not take them (`--outbound-queue`).
    pub waiting: usize,
}

/// A request that is not a websocket handshake: `(status, code, message)`.
pub struct NotWebsocket(StatusCode, &'static str, &'static str);

impl IntoResponse for NotWebsocket {
    fn into_response(self) -> Response {
        let NotWebsocket(status, code, message) = self;
        (status, format!("{code}: {message}\n")).into_response()
    }
}

fn header_eq(headers: &HeaderMap, key: header::HeaderName, value: &str) -> bool {
    headers
        .get(&key)
        .is_some_and(|h| h.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
}

fn header_contains(headers: &HeaderMap, key: header::HeaderName, value: &str) -> bool {
    headers
        .get(&key)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h.to_ascii_lowercase().contains(value))
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = NotWebsocket;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let bad = |code, message| NotWebsocket(StatusCode::BAD_REQUEST, code, message);
        if parts.version > Version::HTTP_11 {
            return Err(bad("not_websocket", "a websocket needs HTTP/1.1"));
        }
        if parts.method != Method::GET {
            return Err(NotWebsocket(
                StatusCode::METHOD_NOT_ALLOWED,
                "not_websocket",
                "a websocket handshake is a GET",
            ));
        }
        if !header_contains(&parts.headers, header::CONNECTION, "upgrade") {
            return Err(bad(
                "not_websocket",
                "the Connection header does not include 'upgrade'",
            ));
        }
        if !header_eq(&parts.headers, header::UPGRADE, "websocket") {
            return Err(bad(
                "not_websocket",
                "the Upgrade header is not 'websocket'",
            ));
        }
        let Some(key) = parts.headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return Err(bad(
                "not_websocket",
                "the Sec-WebSocket-Key header is missing",
            ));
        };
        if !header_eq(&parts.headers, header::SEC_WEBSOCKET_VERSION, "13") {
            return Err(bad(
                "not_websocket",
                "the Sec-WebSocket-Version header is not 13",
            ));
        }
        let Some(on_upgrade) = parts.extensions.remove::<hyper::upgrade::OnUpgrade>() else {
            return Err(NotWebsocket(
                StatusCode::UPGRADE_REQUIRED,
                "not_websocket",
                "this connection cannot be upgraded",
            ));
        };
        Ok(Upgrade { key, on_upgrade })
    }
}

impl Upgrade {
    /// Answers the handshake (101) and, once the connection is switched, runs `serve` with
    /// its websocket (on a task of its own). A connection that is not a plain TCP stream
    /// (never, behind `http::serve`) is closed.
    pub fn on_upgrade<F, Fut>(self, limits: Limits, serve: F) -> Response
    where
        F: FnOnce(Socket) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            let upgraded = match on_upgrade.await {
                Ok(upgraded) => upgraded,
                Err(e) => {
                    tracing::debug!(error = %e, "websocket upgrade failed");
                    return;
                }
            };
            let parts = match upgraded.downcast::<TokioIo<TcpStream>>() {
                Ok(parts) => parts,
                Err(_) => {
                    tracing::error!("a websocket over something other than TCP: closed");
                    return;
                }
            };
            // What the client sent after its request, in the same packets (its hello).
            // Copied out, and `parts` dropped here: its `read_buf` is a view of the HTTP
            // connection's whole read buffer, which would otherwise live as long as this
            // task (about 4 KB of RSS per socket at 18,000 sockets).
            let (tcp, early) = {
                let parts = parts;
                (parts.io.into_inner(), parts.read_buf.to_vec())
            };
            let (read, write) = tcp.into_split();
            let wire = Arc::new(Wire::new(write, limits.waiting));
            let duplex = Duplex::new(read, wire.clone());
            let ws = WebSocketStream::from_partially_read(
                duplex,
                early,
                Role::Server,
                Some(limits.config),
            )
            .await;
            serve(Socket { ws, wire }).await;
        });
        let accept = derive_accept_key(self.key.as_bytes());
        Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::CONNECTION, HeaderValue::from_static("upgrade"))
            .header(header::UPGRADE, HeaderValue::from_static("websocket"))
            .header(header::SEC_WEBSOCKET_ACCEPT, accept)
            .body(axum::body::Body::empty())
            .expect("a valid response")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    /// A good handshake, with `header` changed to `value` (`None`: left out).
    fn handshake_with(
        header: Option<(header::HeaderName, Option<&str>)>,
    ) -> axum::http::request::Builder {
        let mut req = Request::builder().uri("/ws");
        for (name, value) in [
            (header::CONNECTION, "keep-alive, Upgrade"),
            (header::UPGRADE, "websocket"),
            (header::SEC_WEBSOCKET_KEY, "dGhlIHNhbXBsZSBub25jZQ=="),
            (header::SEC_WEBSOCKET_VERSION, "13"),
        ] {
            match &header {
                Some((changed, Some(v))) if *changed == name => req = req.header(name, *v),
                Some((changed, None)) if *changed == name => {}
                _ => req = req.header(name, value),
            }
        }
        req
    }

    fn handshake() -> axum::http::request::Builder {
        handshake_with(None)
    }

    async fn check(req: axum::http::request::Builder) -> Result<Upgrade, (StatusCode, String)> {
        let (mut parts, ()) = req.body(()).unwrap().into_parts();
        Upgrade::from_request_parts(&mut parts, &())
            .await
            .map_err(|e| {
                let NotWebsocket(status, code, message) = e;
                (status, format!("{code}: {message}"))
            })
    }

    #[tokio::test]
    async fn each_broken_handshake_is_refused_with_its_own_reason() {
        let changed = |name, value| handshake_with(Some((name, value)));
        let cases = [
            (
                handshake().method(Method::POST),
                StatusCode::METHOD_NOT_ALLOWED,
                "a GET",
            ),
            (
                changed(header::CONNECTION, Some("close")),
                StatusCode::BAD_REQUEST,
                "Connection",
            ),
            (
                changed(header::UPGRADE, Some("h2c")),
                StatusCode::BAD_REQUEST,
                "Upgrade",
            ),
            (
                changed(header::SEC_WEBSOCKET_KEY, None),
                StatusCode::BAD_REQUEST,
                "Sec-WebSocket-Key",
            ),
            (
                changed(header::SEC_WEBSOCKET_VERSION, Some("8")),
                StatusCode::BAD_REQUEST,
                "Sec-WebSocket-Version",
            ),
        ];
        for (req, status, says) in cases {
            let (got, message) = check(req).await.err().expect("refused");
            assert_eq!(got, status, "{message}");
            assert!(message.starts_with("not_websocket: "), "{message}");
            assert!(message.contains(says), "{message}");
        }
    }

    #[tokio::test]
    async fn a_good_handshake_on_a_connection_that_cannot_switch_is_426() {
        // A request built here has no HTTP connection behind it to upgrade.
        let (got, message) = check(handshake()).await.err().expect("refused");
        assert_eq!(got, StatusCode::UPGRADE_REQUIRED, "{message}");
    }

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // The example of RFC 6455, 1.3.
        assert_eq!(
            derive_accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
