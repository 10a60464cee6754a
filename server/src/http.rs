//! The HTTP side of the one port: `/ws` (websocket) and `/healthz`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, State, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::connection;
use crate::hub::Hub;

pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/ws", get(ws))
        .route("/healthz", get(healthz))
        .with_state(hub)
}

async fn healthz(State(hub): State<Arc<Hub>>) -> Response {
    if hub.is_shutting_down() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    } else {
        (StatusCode::OK, "ok\n").into_response()
    }
}

async fn ws(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let config = &hub.config;
    let upgrade = upgrade
        .max_message_size(config.hard_max_message_bytes)
        .max_frame_size(config.hard_max_message_bytes)
        .read_buffer_size(4 * 1024)
        .write_buffer_size(config.ws_write_buffer)
        .max_write_buffer_size(
            config.ws_write_buffer.max(1) * 4 + config.hard_max_message_bytes * 4,
        );
    let guard = hub.conns.acquire(addr.ip(), config.max_conns_per_ip);
    upgrade.on_upgrade(move |socket| async move {
        match guard {
            Some(guard) => connection::serve(socket, hub, guard).await,
            None => {
                tracing::warn!(%addr, "too many connections from one address");
                connection::refuse(
                    socket,
                    "too_many_connections",
                    "too many connections from your address",
                )
                .await
            }
        }
    })
}
