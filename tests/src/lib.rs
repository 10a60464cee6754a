//! Helpers for the integration tests: a real server on port 0 and a websocket test client
//! that keeps an exact replica of each game it plays or watches.

use std::net::SocketAddr;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use protocol::delta;
use protocol::game::{Action, Event, Game, Player};
use protocol::record::Entry;
use protocol::settings::Settings;
use protocol::view::GameView;
use protocol::wire::{
    Change, ClientMessage, GameEvent, GameId, LobbyMessage, SandTable, Seq, ServerFrame,
    ServerMessage, Snapshot, PROTOCOL_VERSION,
};
use server::Config;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub mod browser;
pub mod cluster;
pub mod pages;
pub mod proxy;
pub mod raw;
pub mod services;

// A client following one game with an exact replica.
mod follower;
pub use follower::*;
// Plain HTTP/1.1 requests, as a browser or a scraper makes them.
mod http;
pub use http::*;
mod games;
pub use games::*;

/// How long any single await may take before the test fails instead of hanging.
pub const WAIT: Duration = Duration::from_secs(10);

/// A server started on an ephemeral port, stopped when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Short timings for tests.
pub fn test_config() -> Config {
    Config {
        reconnect_grace: Duration::from_millis(600),
        drain: Duration::ZERO,
        ping_interval: Duration::from_secs(3600),
        first_ping: None,
        idle_timeout: Duration::from_secs(3600),
        // The bounds the rules page fixes, as short as `Settings::blitz` has them.
        abort_ms: Settings::blitz(protocol::settings::Level::One).abort_ms,
        late_release_ms: Settings::blitz(protocol::settings::Level::One).late_release_ms,
        // Every test client comes from 127.0.0.1: the per-address budgets are tested on
        // their own (tests/limits.rs).
        ip_conn_per_min: 1_000_000,
        ip_conn_burst: 100_000,
        ip_rate_per_sec: 1_000_000,
        ip_rate_burst: 100_000,
        ip_register_per_min: 1_000_000,
        ip_register_burst: 100_000,
        http_rate_per_sec: 1_000_000,
        http_rate_burst: 100_000,
        // The tests' clients connect from loopback: budgeted as remote clients are.
        budget_loopback: true,
        ..Config::default()
    }
}

/// A server that pings every connection every `ms` milliseconds (a seat's lag measured
/// that often).
pub async fn server_pinging_every(ms: u64) -> TestServer {
    TestServer::start_with(Config {
        ping_interval: Duration::from_millis(ms),
        ..test_config()
    })
    .await
}

/// A server whose games abort when a first move is not made within `abort_ms` (the
/// operator's bound, shortened), and Level 1 blitz settings as its answers state them.
pub async fn server_with_abort(abort_ms: u64) -> (TestServer, Settings) {
    let server = TestServer::start_with(Config {
        abort_ms,
        ..test_config()
    })
    .await;
    let settings = Settings {
        abort_ms,
        ..Settings::blitz(protocol::settings::Level::One)
    };
    (server, settings)
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(test_config()).await
    }

    pub async fn start_with(config: Config) -> TestServer {
        // The server's own listen queue (a crowd of test clients connects at once).
        let listener = server::bind(([127, 0, 0, 1], 0).into(), server::LISTEN_BACKLOG)
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server::run_with(listener, config, async {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Tells the server to shut down (as a SIGTERM would), without waiting.
    pub fn begin_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops the server and waits for it to finish.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(WAIT, task)
                .await
                .expect("server stops")
                .expect("server task");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A websocket client speaking the wire protocol.
pub struct Client {
    pub ws: Ws,
    pub player_id: String,
    pub token: String,
    pub name: String,
    /// Lobby messages received while waiting for something else, oldest first.
    pub lobby: std::collections::VecDeque<LobbyMessage>,
    /// The last round trip the server measured and told (its `lag` messages), whichever
    /// read passed it: the first can come while a test awaits something else.
    pub rtt_ms: Option<u64>,
    /// The server's websocket pings read so far (the library answers each).
    pub pings: u64,
}

/// Awaits `fut` or fails the test after [`WAIT`].
pub async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(WAIT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

impl Client {
    /// Connects without saying hello.
    pub async fn connect(server: &TestServer) -> Client {
        Client::connect_to(server.addr).await
    }

    /// Connects to a server (or a proxy in front of one) at `addr`, without saying hello.
    pub async fn connect_to(addr: SocketAddr) -> Client {
        Client::connect_with_headers(addr, &[]).await
    }

    /// A client on an open websocket, that has not said hello.
    pub fn from_ws(ws: Ws) -> Client {
        Client {
            ws,
            player_id: String::new(),
            token: String::new(),
            name: String::new(),
            lobby: Default::default(),
            rtt_ms: None,
            pings: 0,
        }
    }

    /// Says hello as a new player named `name` (the answer is left to read).
    pub async fn hello_new(&mut self, name: &str) {
        self.send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some(name.into()),
            token: None,
            guest: false,
        })
        .await;
    }

    /// Connects to `addr` with these request headers (`X-Forwarded-For`, say), without
    /// saying hello.
    pub async fn connect_with_headers(addr: SocketAddr, headers: &[(&str, &str)]) -> Client {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{addr}/ws")
            .into_client_request()
            .expect("a request");
        for (name, value) in headers {
            let name: tokio_tungstenite::tungstenite::http::HeaderName =
                name.parse().expect("a header name");
            req.headers_mut()
                .append(name, value.parse().expect("a header value"));
        }
        // Nagle off, as the bundled clients: a frame sent right after another must not
        // wait for its acknowledgement (the tests time what the server reads).
        let (ws, _) = within(
            "connect",
            tokio_tungstenite::connect_async_with_config(req, None, true),
        )
        .await
        .expect("websocket connect");
        Client::from_ws(ws)
    }

    /// Connects and says hello as a new player.
    pub async fn new_player(server: &TestServer, name: &str) -> Client {
        Client::new_player_at(server.addr, name).await
    }

    /// Connects to `addr` and says hello as a new player.
    pub async fn new_player_at(addr: SocketAddr, name: &str) -> Client {
        let mut c = Client::connect_to(addr).await;
        c.hello_new(name).await;
        c.expect_welcome().await;
        c
    }

    /// Connects and says hello with a token; returns the games listed in the welcome.
    pub async fn returning(server: &TestServer, token: &str) -> (Client, Vec<GameId>) {
        Client::returning_at(server.addr, token).await
    }

    /// Connects to `addr` and says hello with a token; returns the games listed.
    pub async fn returning_at(addr: SocketAddr, token: &str) -> (Client, Vec<GameId>) {
        let mut c = Client::connect_to(addr).await;
        c.send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: None,
            token: Some(token.into()),
            guest: false,
        })
        .await;
        let games = c.expect_welcome().await;
        (c, games)
    }

    async fn expect_welcome(&mut self) -> Vec<GameId> {
        match self.recv().await {
            ServerMessage::Welcome {
                player_id,
                token,
                name,
                games,
                ..
            } => {
                self.player_id = player_id;
                self.token = token;
                self.name = name;
                games
            }
            other => panic!("expected welcome, got {other:?}"),
        }
    }

    pub async fn send(&mut self, msg: &ClientMessage) {
        let text = serde_json::to_string(msg).expect("encode");
        self.send_raw(&text).await;
    }

    pub async fn send_raw(&mut self, text: &str) {
        within("send", self.ws.send(Message::text(text)))
            .await
            .expect("send");
    }

    /// The next server message (answering server pings on the way).
    pub async fn recv(&mut self) -> ServerMessage {
        loop {
            match self.recv_frame().await {
                Some(ServerMessage::Ping { nonce, .. }) => {
                    self.send(&ClientMessage::Pong { nonce }).await;
                }
                // The server's lag measurements come whenever its websocket pings are
                // answered; a test that wants them reads frames.
                Some(ServerMessage::Lag { .. }) => {}
                Some(m) => return m,
                None => panic!("connection closed while waiting for a message"),
            }
        }
    }

    /// The next message as is, or `None` when the connection closed. Lobby messages
    /// on the way are kept in [`Client::lobby`].
    pub async fn recv_frame(&mut self) -> Option<ServerMessage> {
        loop {
            match self.recv_any().await? {
                ServerFrame::Message(m) => {
                    if let ServerMessage::Lag { rtt_ms } = m {
                        self.rtt_ms = Some(rtt_ms);
                    }
                    return Some(m);
                }
                ServerFrame::Lobby(m) => self.lobby.push_back(m),
            }
        }
    }

    /// The next frame of either kind, or `None` when the connection closed.
    pub async fn recv_any(&mut self) -> Option<ServerFrame> {
        loop {
            let frame = within("a server message", self.ws.next()).await;
            match frame {
                None | Some(Err(_)) => return None,
                Some(Ok(Message::Text(text))) => {
                    return Some(
                        serde_json::from_str(text.as_str())
                            .unwrap_or_else(|e| panic!("bad server message {text}: {e}")),
                    )
                }
                Some(Ok(Message::Close(_))) => return None,
                Some(Ok(Message::Ping(_))) => self.pings += 1,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// Reads until the server's next websocket ping (the library answers it) and returns
    /// how many came so far. Frames on the way: a `lag` report is noted in `rtt_ms`,
    /// lobby messages are kept, an error fails the test, anything else is dropped.
    /// Fails the test if the connection closes.
    pub async fn recv_ping(&mut self) -> u64 {
        loop {
            match within("a ping", self.ws.next()).await {
                Some(Ok(Message::Ping(_))) => {
                    self.pings += 1;
                    return self.pings;
                }
                Some(Ok(Message::Text(text))) => match serde_json::from_str(text.as_str()) {
                    Ok(ServerFrame::Message(ServerMessage::Lag { rtt_ms })) => {
                        self.rtt_ms = Some(rtt_ms)
                    }
                    Ok(ServerFrame::Message(ServerMessage::Error { code, message, .. })) => {
                        panic!("an error while waiting for a ping: {code}: {message}")
                    }
                    Ok(ServerFrame::Lobby(m)) => self.lobby.push_back(m),
                    Ok(_) => {}
                    Err(e) => panic!("bad server message {text}: {e}"),
                },
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                    panic!("the connection closed while waiting for a ping")
                }
                Some(Ok(_)) => {}
            }
        }
    }

    /// The next lobby message (kept ones first). Any other message but a ping on the way
    /// fails the test.
    pub async fn recv_lobby(&mut self) -> LobbyMessage {
        if let Some(m) = self.lobby.pop_front() {
            return m;
        }
        loop {
            match self.recv_any().await {
                Some(ServerFrame::Lobby(m)) => return m,
                Some(ServerFrame::Message(ServerMessage::Ping { nonce, .. })) => {
                    self.send(&ClientMessage::Pong { nonce }).await;
                }
                Some(ServerFrame::Message(other)) => {
                    panic!("expected a lobby message, got {other:?}")
                }
                None => panic!("connection closed while waiting for a lobby message"),
            }
        }
    }

    /// Reads until the connection closes; returns the close frame's code if any.
    pub async fn closed(&mut self) -> Option<u16> {
        self.closed_with().await.map(|(code, _)| code)
    }

    /// Reads until the connection closes; returns the close frame's code and reason.
    pub async fn closed_with(&mut self) -> Option<(u16, String)> {
        loop {
            if let Err(close) = self.recv_or_close().await {
                return close;
            }
        }
    }

    /// The next message (lobby ones included, as they come), or how the connection
    /// ended: the close frame's code and reason, `None` if it ended without one.
    pub async fn recv_or_close(&mut self) -> Result<ServerFrame, Option<(u16, String)>> {
        loop {
            match within("a message or the close", self.ws.next()).await {
                None | Some(Err(_)) => return Err(None),
                Some(Ok(Message::Close(frame))) => {
                    return Err(frame.map(|f| (u16::from(f.code), f.reason.to_string())))
                }
                Some(Ok(Message::Text(text))) => {
                    return Ok(serde_json::from_str(text.as_str())
                        .unwrap_or_else(|e| panic!("bad server message {text}: {e}")))
                }
                Some(Ok(_)) => continue,
            }
        }
    }

    /// Expects an error with `code` as the next message; returns its human message.
    pub async fn expect_error(&mut self, code: &str) -> String {
        match self.recv().await {
            ServerMessage::Error {
                code: c, message, ..
            } if c == code => message,
            other => panic!("expected error {code}, got {other:?}"),
        }
    }

    /// A ping round trip: proves everything sent before was handled.
    pub async fn sync(&mut self) {
        self.send(&ClientMessage::Ping {
            client_ms: Some(4242),
            lag_ms: None,
        })
        .await;
        match self.recv().await {
            ServerMessage::Pong {
                client_ms: Some(4242),
                ..
            } => {}
            other => panic!("expected pong, got {other:?}"),
        }
    }
}
