//! `GET /api/tournaments` and `GET /api/tournaments/{id}` (`docs/API.md`), from the
//! database: what a restart would find.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use protocol::api::TournamentList;

use super::{problem, unavailable, unknown_parameter};
use crate::hub::Hub;

/// Upcoming and running tournaments, then the last finished ones. No parameters.
pub async fn list(
    State(hub): State<Arc<Hub>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = unknown_parameter(&params, &[]) {
        return r;
    }
    match hub.store.tournament_summaries().await {
        Ok(tournaments) => Json(TournamentList { tournaments }).into_response(),
        Err(e) => unavailable(e),
    }
}

/// One tournament: standings with tiebreaks, pairings and results by round. No
/// parameters.
pub async fn show(
    State(hub): State<Arc<Hub>>,
    super::Segment(id): super::Segment,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if let Some(r) = unknown_parameter(&params, &[]) {
        return r;
    }
    match hub.store.load_tournament(&id).await {
        Ok(Some(t)) => Json(t.detail()).into_response(),
        Ok(None) => problem(
            StatusCode::NOT_FOUND,
            "unknown_tournament",
            format!("there is no tournament {id:?}"),
        ),
        Err(e) => unavailable(e),
    }
}
