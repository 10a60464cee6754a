//! The JSON API beside the websocket (`docs/API.md`): leaderboards, players and
//! tournaments. Every answer is JSON; an error is `{"error": code, "message": ...}` with
//! a 4xx or 5xx status.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use protocol::rating::TimeControl;

use crate::hub::Hub;

mod tournaments;

/// The API's routes, merged into the server's router. A path under `/api/` that is none
/// of them (nor one of the pages' JSON, [`crate::web`]) is [`not_found`].
pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/leaderboard", get(leaderboard))
        .route("/api/players/{name}", get(player))
        .route("/api/tournaments", get(tournaments::list))
        .route("/api/tournaments/{id}", get(tournaments::show))
        .route("/api", any(not_found))
        .route("/api/", any(not_found))
        .route("/api/{*rest}", any(not_found))
}

/// The paths of the API, as a refusal lists them.
const PATHS: &str = "/api/leaderboard, /api/players/{name}, /api/tournaments, \
                     /api/tournaments/{id}, /api/lobby, /api/games/{id}/replay";

/// Any path under `/api/` that the API does not have: 404 `not_found`, in JSON as every
/// other answer of the API.
async fn not_found(uri: Uri) -> Response {
    problem(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "there is no {:?} in the API; its paths: {PATHS}",
            uri.path().chars().take(100).collect::<String>()
        ),
    )
}

/// A time control by its name as documented (`classical`, `standard`, `rapid`, `blitz`:
/// lower case, as the websocket takes it); else the message of `bad_tc`.
fn time_control(name: &str) -> Result<TimeControl, String> {
    TimeControl::ALL
        .into_iter()
        .find(|tc| tc.name() == name)
        .ok_or_else(|| {
            format!(
                "unknown time control {:?}: classical, standard, rapid or blitz (in lower case)",
                name.chars().take(40).collect::<String>()
            )
        })
}

/// An error answer.
pub fn problem(status: StatusCode, code: &str, message: String) -> Response {
    (
        status,
        Json(serde_json::json!({ "error": code, "message": message })),
    )
        .into_response()
}

/// A path's `{segment}` for a JSON route: one that does not decode (not UTF-8, say
/// `%ff`) is refused as JSON (`bad_path`), as every answer under `/api/` is, not with the
/// router's plain text.
pub struct Segment(pub String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Segment {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(segment)) => Ok(Segment(segment)),
            Err(e) => Err(problem(StatusCode::BAD_REQUEST, "bad_path", e.body_text())),
        }
    }
}

/// The answer to a storage failure.
pub fn unavailable(e: anyhow::Error) -> Response {
    tracing::error!(error = %e, "reading the database failed");
    problem(
        StatusCode::SERVICE_UNAVAILABLE,
        "storage_unavailable",
        "the database cannot be read now".into(),
    )
}

/// The refusal of any parameter not in `known`.
pub fn unknown_parameter(params: &HashMap<String, String>, known: &[&str]) -> Option<Response> {
    let k = params.keys().find(|k| !known.contains(&k.as_str()))?;
    let k: String = k.chars().take(40).collect();
    Some(problem(
        StatusCode::BAD_REQUEST,
        "unknown_parameter",
        match known {
            [] => format!("unknown parameter {k:?}: this path takes none"),
            _ => format!("unknown parameter {k:?}: use {}", known.join(", ")),
        },
    ))
}

/// `GET /api/leaderboard?tc=NAME` (default `standard`).
async fn leaderboard(
    State(hub): State<Arc<Hub>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = unknown_parameter(&params, &["tc"]) {
        return r;
    }
    let tc = match params.get("tc").map(|t| time_control(t)) {
        None => TimeControl::Standard,
        Some(Ok(tc)) => tc,
        Some(Err(message)) => return problem(StatusCode::BAD_REQUEST, "bad_tc", message),
    };
    match hub.store.leaderboard(tc).await {
        Ok(board) => Json(board).into_response(),
        Err(e) => unavailable(e),
    }
}

/// `GET /api/players/{name}`.
async fn player(State(hub): State<Arc<Hub>>, Segment(name): Segment) -> Response {
    match hub.store.player_profile(&name).await {
        Ok(Some(profile)) => Json(profile).into_response(),
        Ok(None) => problem(
            StatusCode::NOT_FOUND,
            "unknown_player",
            format!("no player is named {name:?}"),
        ),
        Err(e) => unavailable(e),
    }
}
