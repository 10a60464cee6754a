//! JSON for the pages (documented in docs/API.md): `GET /api/lobby` (live games, open
//! seeks, recent stored games) and `GET /api/games/{id}/replay` (a stored game with its
//! replay frames, [`super::replay`]). Live play and watching go over `/ws`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use protocol::record::Record;
use protocol::wire::{GameId, LIST_LIMIT};
use serde_json::json;

use crate::hub::Hub;

/// Recent stored games listed by `/api/lobby`.
pub const RECENT: usize = 20;

pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/lobby", get(lobby))
        .route("/api/games/{id}/replay", get(replay))
}

fn problem(status: StatusCode, code: &str, message: String) -> Response {
    (status, Json(json!({ "error": code, "message": message }))).into_response()
}

fn storage_unavailable(e: anyhow::Error) -> Response {
    tracing::error!(error = %e, "reading stored games failed");
    problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "storage_unavailable",
        "stored games cannot be read right now".into(),
    )
}

async fn lobby(State(hub): State<Arc<Hub>>) -> Response {
    let (games, _more) = hub.summaries(None, LIST_LIMIT);
    let seeks = hub.list_seeks();
    let recent = match hub.store.recent_games(None, None, RECENT).await {
        Ok(recent) => recent,
        Err(e) => return storage_unavailable(e),
    };
    Json(json!({ "games": games, "seeks": seeks, "recent": recent })).into_response()
}

async fn replay(
    State(hub): State<Arc<Hub>>,
    crate::api::Segment(id): crate::api::Segment,
) -> Response {
    let Ok(id) = id.parse::<GameId>() else {
        return problem(
            StatusCode::BAD_REQUEST,
            "bad_game_id",
            format!("{id:?} is not a game id"),
        );
    };
    let stored = match hub.store.game(id).await {
        Ok(Some(stored)) => stored,
        Ok(None) if hub.live_on(id).await.is_some() => {
            return problem(
                StatusCode::NOT_FOUND,
                "game_live",
                format!("game {id} is still being played: watch it live"),
            )
        }
        Ok(None) => {
            return problem(
                StatusCode::NOT_FOUND,
                "unknown_game",
                format!("no stored game {id}"),
            )
        }
        Err(e) => return storage_unavailable(e),
    };
    let record: Record = match serde_json::from_value(stored.record.clone()) {
        Ok(record) => record,
        Err(e) => {
            tracing::error!(game = %id, error = %e, "a stored record does not read");
            return problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "bad_record",
                format!("the record of game {id} cannot be read: {e}"),
            );
        }
    };
    match super::replay::frames(&record) {
        Ok(replay) => Json(json!({ "game": stored.game, "replay": replay })).into_response(),
        Err(e) => {
            tracing::error!(game = %id, error = %e, "a stored record does not replay");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "bad_record",
                format!("the record of game {id} does not replay: {e}"),
            )
        }
    }
}
