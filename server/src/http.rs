//! The HTTP side of the one port: `/ws` (websocket), `/healthz`, and the stored games:
//! `GET /games?player=NAME` (recent games) and `GET /games/{id}` (the record as text, or
//! JSON with `Accept: application/json`). The browser pages and their `/api` are merged in
//! from [`crate::web`].

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Extension;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use protocol::wire::GameId;
use tokio::net::{TcpListener, TcpStream};

use crate::connection;
use crate::hub::Hub;
use crate::limits::{Admission, ConnSlot};

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
        // The pages for browsers and their JSON (`/`, `/tv`, `/game/{id}`, `/api/...`).
        .merge(crate::web::routes())
        .merge(crate::api::routes())
        .fallback(crate::web::unknown_path)
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
        [(header::CONTENT_TYPE, crate::hub::metrics::CONTENT_TYPE)],
        crate::hub::metrics::render(&hub),
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
            format!("a game id is a UUID (like 0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f), not {id:?}"),
            json,
        );
    };
    match hub.store.game(id).await {
        Ok(Some(stored)) if json => axum::Json(stored).into_response(),
        Ok(Some(stored)) => text(stored.text),
        Ok(None) => match hub.live_on(id).await {
            Some(node) => game_live(id, node, json),
            None => problem(
                StatusCode::NOT_FOUND,
                "unknown_game",
                format!("no stored game {id}"),
                json,
            ),
        },
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

/// 404 `game_live`: the game is stored when it ends; on several nodes, which node runs it
/// (for an operator following a game, docs/OPERATIONS.md).
fn game_live(id: GameId, node: Option<String>, json: bool) -> Response {
    let on = node
        .as_ref()
        .map_or(String::new(), |n| format!(" on node {n}"));
    let message = format!("game {id} is still being played{on}: it is stored when it ends");
    match node {
        Some(node) if json => (
            StatusCode::NOT_FOUND,
            axum::Json(
                serde_json::json!({ "error": "game_live", "message": message, "node": node }),
            ),
        )
            .into_response(),
        _ => problem(StatusCode::NOT_FOUND, "game_live", message, json),
    }
}

async fn ws(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    slot: Option<Extension<Arc<ConnSlot>>>,
    upgrade: connection::upgrade::Upgrade,
) -> Response {
    let config = &hub.config;
    // The websocket layer only reads (and writes its few control frames through the wire,
    // see `wire`): its write buffer is for those.
    let limits = connection::upgrade::Limits {
        config: tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(config.hard_max_message_bytes))
            .max_frame_size(Some(config.hard_max_message_bytes))
            .read_buffer_size(config.ws_read_buffer)
            .write_buffer_size(config.ws_write_buffer)
            .max_write_buffer_size(
                config.ws_write_buffer.max(1) * 4 + config.hard_max_message_bytes * 4,
            ),
        waiting: config.outbound_queue.max(1),
    };
    // The TCP connection's slot (counted since it was accepted) goes with the websocket.
    let (admission, guard) = match &slot {
        Some(Extension(slot)) => (slot.admission, slot.guard.lock().expect("slot lock").take()),
        // Served without `serve` (a router alone, in a test): counted here.
        None => {
            let guard = hub
                .conns
                .admitted
                .acquire(addr.ip(), config.max_conns_per_ip);
            let admission = if guard.is_some() {
                Admission::Normal
            } else {
                Admission::OverAddress
            };
            (admission, guard)
        }
    };
    upgrade.on_upgrade(limits, move |socket| async move {
        let refusal = match (admission, guard) {
            (Admission::Normal | Admission::Reserve, Some(guard)) => {
                let reserve = admission == Admission::Reserve;
                return connection::serve(socket, hub, guard, addr, reserve).await;
            }
            (Admission::Normal | Admission::Reserve, None) => None,
            (admission, _) => Some(admission),
        };
        let (code, message) = refusal_of(refusal);
        tracing::warn!(%addr, code, "websocket refused");
        // Boxed: rare, and its socket would otherwise take room in every connection's task.
        Box::pin(connection::refuse(socket, code, message)).await
    })
}

/// The error code and message of a refused connection (`None`: a second websocket on one
/// kept-alive connection, which holds one slot).
fn refusal_of(admission: Option<Admission>) -> (&'static str, &'static str) {
    match admission {
        Some(Admission::Reserve) => (
            "server_full",
            "the server is at its connection limit: try again later",
        ),
        Some(Admission::TooFast) => (
            "connecting_too_fast",
            "too many new connections from your address: try again in a minute",
        ),
        _ => (
            "too_many_connections",
            "too many connections from your address",
        ),
    }
}

/// Answers a request that is refused before the router: the connection's admission, the
/// address's request budget. In JSON under `/api/` (every answer there is) and for a
/// client that accepts it; else a line of text.
fn gate(
    hub: &Hub,
    slot: &ConnSlot,
    ip: std::net::IpAddr,
    req: &Request<Incoming>,
) -> Option<Response> {
    let path = req.uri().path();
    let json = path.starts_with("/api/") || wants_json(req.headers());
    let refuse = |status, (code, message): (&str, &str)| {
        let mut r = problem(status, code, message.into(), json);
        r.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        Some(r)
    };
    match (slot.admission, path) {
        // The websocket handler refuses with a websocket close of its own.
        (_, "/ws") => None,
        (Admission::Reserve, "/healthz") | (Admission::Normal, "/healthz") => None,
        (Admission::Reserve, _) => refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            refusal_of(Some(Admission::Reserve)),
        ),
        (Admission::Normal, _) if hub.budgets.http.take(ip) => None,
        (Admission::Normal, _) => refuse(
            StatusCode::TOO_MANY_REQUESTS,
            (
                "rate_limited",
                "too many requests from your address: slow down",
            ),
        ),
        (admission, _) => refuse(StatusCode::TOO_MANY_REQUESTS, refusal_of(Some(admission))),
    }
}

/// Serves HTTP (and websockets) on `listener` until `signal` completes; then stops
/// accepting, lets the connections finish their requests, and returns once they are
/// closed. Every connection is admitted per address and in all ([`Connections`]), and
/// its request heads are bounded in time ([`Config::http_header_timeout`]).
///
/// [`Config::http_header_timeout`]: crate::config::Config::http_header_timeout
pub async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let app = router(hub.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut signal = std::pin::pin!(signal);
    let mut forget = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        let (tcp, addr) = tokio::select! {
            _ = &mut signal => break,
            _ = forget.tick() => {
                hub.budgets.forget_idle();
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let proxied = crate::forwarded::trusted(addr.ip(), &hub.config.trusted_proxies);
        let admitted = match proxied {
            true => hub.conns.admit_proxy(addr.ip(), &hub.config),
            false => hub.conns.admit(addr.ip(), &hub.config),
        };
        let Some(mut slot) = admitted else {
            tracing::warn!(%addr, "connection limit reached: closed at once");
            continue;
        };
        // A proxy's new connections are its clients': counted under theirs, per request.
        if !proxied
            && slot.admission == Admission::Normal
            && !hub.budgets.connections.take(addr.ip())
        {
            slot.admission = Admission::TooFast;
        }
        let _ = tcp.set_nodelay(true);
        if let Some(size) = hub.config.socket_send_buffer {
            let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(size);
        }
        hub.conn_tasks.spawn(serve_connection(
            tcp,
            addr,
            Arc::new(slot),
            hub.clone(),
            app.clone(),
            stop_rx.clone(),
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every connection task holds a receiver.
    drop(stop_rx);
    stop_tx.closed().await;
}

/// A request with `X-Forwarded-For` from an address that is not a trusted proxy: a proxy
/// on this machine left out of `--trusted-proxies` would have all its clients pass as
/// this machine, outside every per-address budget (see `limits::exempt`). Said once.
fn untrusted_proxy(ip: std::net::IpAddr, config: &crate::config::Config) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if crate::limits::exempt(ip, config) && !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(
            %ip,
            "a request from this machine carries X-Forwarded-For, but its address is not in \
             --trusted-proxies: the proxy's clients are not budgeted per address (add it to \
             --trusted-proxies, or set --budget-loopback true)"
        );
    }
}

/// A request through a trusted proxy's connection: the client's address (the proxy's own
/// when `X-Forwarded-For` names none), and for a websocket, its admission under that
/// address as a new connection of the client's (count and rate).
fn forwarded(
    hub: &Hub,
    slot: &Arc<ConnSlot>,
    proxy: SocketAddr,
    req: &Request<Incoming>,
) -> (SocketAddr, Arc<ConnSlot>) {
    let proxies = &hub.config.trusted_proxies;
    let client = crate::forwarded::client_ip(req.headers(), proxies).unwrap_or(proxy.ip());
    let addr = SocketAddr::new(client, proxy.port());
    if req.uri().path() != "/ws" {
        return (addr, slot.clone());
    }
    // Refused for its rate, it stays counted under the proxy until its connection closes.
    let (admission, guard) =
        if slot.admission == Admission::Normal && !hub.budgets.connections.take(client) {
            (Admission::TooFast, None)
        } else {
            hub.conns.admit_forwarded(client, slot, &hub.config)
        };
    let slot = ConnSlot {
        admission,
        guard: std::sync::Mutex::new(guard),
        proxied: true,
    };
    (addr, Arc::new(slot))
}

async fn serve_connection(
    tcp: TcpStream,
    addr: SocketAddr,
    slot: Arc<ConnSlot>,
    hub: Arc<Hub>,
    app: Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let header_timeout = hub.config.http_header_timeout;
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        let (addr, slot) = match slot.proxied {
            true => forwarded(&hub, &slot, addr, &req),
            false => (addr, slot.clone()),
        };
        if !slot.proxied && req.headers().contains_key("x-forwarded-for") {
            untrusted_proxy(addr.ip(), &hub.config);
        }
        let refused = gate(&hub, &slot, addr.ip(), &req);
        req.extensions_mut().insert(ConnectInfo(addr));
        req.extensions_mut().insert(slot);
        let mut app = app.clone();
        async move {
            match refused {
                Some(response) => Ok::<_, std::convert::Infallible>(response),
                None => tower_service::Service::call(&mut app, req).await,
            }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    let conn = builder
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = async { let _ = stop.wait_for(|s| *s).await; } => {
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    if let Err(e) = result {
        tracing::debug!(%addr, error = %e, "http connection ended");
    }
}
