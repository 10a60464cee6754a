//! The HTTP side of the one port: `/ws` (websocket), `/healthz`, and the stored games:
//! `GET /games?player=NAME` (recent games) and `GET /games/{id}` (the record as text, or
//! JSON with `Accept: application/json`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Query, State, WebSocketUpgrade};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use protocol::wire::GameId;

use crate::connection;
use crate::hub::Hub;

/// Most games in one `GET /games` answer, and the default.
pub const GAMES_LIMIT: usize = 200;
pub const GAMES_DEFAULT: usize = 50;

pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route("/ws", get(ws))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/games", get(games))
        .route("/games/{id}", get(game))
        .with_state(hub)
}

async fn healthz(State(hub): State<Arc<Hub>>) -> Response {
    if hub.is_shutting_down() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    } else {
        (StatusCode::OK, "ok\n").into_response()
    }
}

async fn metrics(State(hub): State<Arc<Hub>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::metrics::render(&hub),
    )
        .into_response()
}

fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("application/json"))
}

/// An error answer: JSON `{"error": code, "message": ...}` or a line of text.
fn problem(status: StatusCode, code: &str, message: String, json: bool) -> Response {
    if json {
        (
            status,
            axum::Json(serde_json::json!({ "error": code, "message": message })),
        )
            .into_response()
    } else {
        (status, format!("{code}: {message}\n")).into_response()
    }
}

fn text(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

/// `GET /games?player=NAME&limit=N&before=ID`: stored games, newest first.
async fn games(
    State(hub): State<Arc<Hub>>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let json = wants_json(&headers);
    let mut player = None;
    let mut limit = GAMES_DEFAULT;
    let mut before = None;
    for (key, value) in &params {
        match key.as_str() {
            "player" => player = Some(value.as_str()),
            "limit" => match value.parse::<usize>() {
                Ok(n) if (1..=GAMES_LIMIT).contains(&n) => limit = n,
                _ => {
                    return problem(
                        StatusCode::BAD_REQUEST,
                        "bad_limit",
                        format!("limit must be a number from 1 to {GAMES_LIMIT}, not {value:?}"),
                        json,
                    )
                }
            },
            "before" => match value.parse::<GameId>() {
                Ok(id) => before = Some(id),
                Err(_) => {
                    return problem(
                        StatusCode::BAD_REQUEST,
                        "bad_before",
                        format!("before must be a game id, not {value:?}"),
                        json,
                    )
                }
            },
            other => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    "unknown_parameter",
                    format!("unknown parameter {other:?}: use player, limit, before"),
                    json,
                )
            }
        }
    }
    if player.is_some_and(|p| p.is_empty()) {
        return problem(
            StatusCode::BAD_REQUEST,
            "bad_player",
            "player must be a name".into(),
            json,
        );
    }
    let list = match hub.store.recent_games(player, before, limit).await {
        Ok(list) => list,
        Err(e) => {
            tracing::error!(error = %e, "reading games failed");
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "storage_unavailable",
                "stored games cannot be read right now".into(),
                json,
            );
        }
    };
    if json {
        return axum::Json(serde_json::json!({ "games": list })).into_response();
    }
    let mut out = String::from("id\tred\tblack\tlevel\tstate\treason\tmoves\tended_ms\tresult\n");
    for g in &list {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            g.id,
            g.red.name,
            g.black.name,
            g.level,
            g.state,
            g.reason.as_deref().unwrap_or(""),
            g.move_count,
            g.ended_ms.map_or(String::new(), |t| t.to_string()),
            g.result.as_deref().unwrap_or(""),
        );
    }
    text(out)
}

/// `GET /games/{id}`: the record in the text format, or everything as JSON.
async fn game(State(hub): State<Arc<Hub>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let json = wants_json(&headers);
    let Ok(id) = id.parse::<GameId>() else {
        return problem(
            StatusCode::BAD_REQUEST,
            "bad_game_id",
            format!("a game id is a number, not {id:?}"),
            json,
        );
    };
    match hub.store.game(id).await {
        Ok(Some(stored)) if json => axum::Json(stored).into_response(),
        Ok(Some(stored)) => text(stored.text),
        Ok(None) if hub.game(id).is_some() => problem(
            StatusCode::NOT_FOUND,
            "game_live",
            format!("game {id} is still being played: it is stored when it ends"),
            json,
        ),
        Ok(None) => problem(
            StatusCode::NOT_FOUND,
            "unknown_game",
            format!("no stored game {id}"),
            json,
        ),
        Err(e) => {
            tracing::error!(error = %e, "reading a game failed");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "storage_unavailable",
                "stored games cannot be read right now".into(),
                json,
            )
        }
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
        .read_buffer_size(config.ws_read_buffer)
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
