//! The browser side of the one port: pages and their assets, compiled into the binary
//! (`include_str!` of the files in `server/web/`: no build step, nothing fetched at run
//! time), and the JSON the pages read under `/api/...` ([`api`]).
//!
//! Pages: `/` (the lobby: live games, open seeks, recent games, a form to play), `/tv`
//! (the most-watched live game) and `/game/{id}` (a game, live or replayed). Playing and
//! watching go over the websocket `/ws` with the documented protocol; only the lobby
//! lists and the replay frames come over plain HTTP.

mod api;
pub mod replay;

use std::sync::Arc;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::hub::Hub;

/// One embedded file: its name under `/static/`, its content type and its text.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

const ASSETS: &[Asset] = &[
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../../web/style.css"),
    },
    Asset {
        name: "common.js",
        content_type: JS,
        body: include_str!("../../web/common.js"),
    },
    Asset {
        name: "board.js",
        content_type: JS,
        body: include_str!("../../web/board.js"),
    },
    Asset {
        name: "state.js",
        content_type: JS,
        body: include_str!("../../web/state.js"),
    },
    Asset {
        name: "deadlines.js",
        content_type: JS,
        body: include_str!("../../web/deadlines.js"),
    },
    Asset {
        name: "panels.js",
        content_type: JS,
        body: include_str!("../../web/panels.js"),
    },
    Asset {
        name: "game.js",
        content_type: JS,
        body: include_str!("../../web/game.js"),
    },
    Asset {
        name: "replay.js",
        content_type: JS,
        body: include_str!("../../web/replay.js"),
    },
    Asset {
        name: "lobby.js",
        content_type: JS,
        body: include_str!("../../web/lobby.js"),
    },
];

const INDEX: &str = include_str!("../../web/index.html");
const GAME: &str = include_str!("../../web/game.html");

/// The pages, the assets and the `/api` routes, to be merged into the server's router.
pub fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/", get(|| async { page(INDEX) }))
        // The TV and a game are one page: the script reads which from the address.
        .route("/tv", get(|| async { page(GAME) }))
        .route("/game/{id}", get(|_: Path<String>| async { page(GAME) }))
        .route("/static/{name}", get(asset))
        .merge(api::routes())
}

/// Any path the server has nothing at (not under `/api/`, which answers JSON `not_found`
/// itself): 404, in the form the client asked for: JSON `not_found` when it accepts
/// JSON; for a browser (it accepts HTML) a page that says so and links to the lobby
/// (an empty answer showed the browser's own error page); else a line of text.
pub async fn unknown_path(uri: axum::http::Uri, headers: axum::http::HeaderMap) -> Response {
    let path = uri.path();
    let accepts = |kind: &str| {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.to_ascii_lowercase().contains(kind))
    };
    let message = format!("there is nothing at {path}: the lobby is /, a game's page /game/ID");
    if accepts("application/json") {
        let body = serde_json::json!({"error": "not_found", "message": message});
        return (StatusCode::NOT_FOUND, axum::Json(body)).into_response();
    }
    if accepts("text/html") {
        let body = MISSING.replace("{path}", &escape_html(path));
        return (
            StatusCode::NOT_FOUND,
            [
                (header::CONTENT_TYPE, HTML),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            body,
        )
            .into_response();
    }
    (StatusCode::NOT_FOUND, format!("not_found: {message}\n")).into_response()
}

/// The page of [`unknown_path`] (`{path}` is replaced by the path asked for).
const MISSING: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>No such page · TAMSK online</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css">
</head>
<body data-mode="missing">
<header class="top">
  <a href="/" class="brand">TAMSK online</a>
  <nav><a href="/">Lobby</a> <a href="/tv">TV</a></nav>
</header>
<main>
  <h1>No such page</h1>
  <p>There is nothing at <code>{path}</code>. The <a href="/">lobby</a> lists the live games,
  the open seeks and the recent games; a game's page is <code>/game/</code> and its id, as
  the lobby links it.</p>
</main>
</body>
</html>
"#;

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HTML),
            // The assets change with the binary: always ask again (a 200 of a few KB).
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            a.body,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            format!("unknown_asset: no file {name:?} under /static/\n"),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_names_only_assets_that_exist() {
        for page in [INDEX, GAME] {
            for part in page.split("/static/").skip(1) {
                let name = part.split('"').next().unwrap();
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "a page asks for /static/{name}, which is not embedded"
                );
            }
        }
    }
}
