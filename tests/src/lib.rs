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
pub mod nodes;
pub mod pages;
pub mod proxy;
pub mod services;

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
        ..Config::default()
    }
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(test_config()).await
    }

    pub async fn start_with(config: Config) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
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
        let url = format!("ws://{addr}/ws");
        let (ws, _) = within("connect", tokio_tungstenite::connect_async(url))
            .await
            .expect("websocket connect");
        Client {
            ws,
            player_id: String::new(),
            token: String::new(),
            name: String::new(),
            lobby: Default::default(),
        }
    }

    /// Connects and says hello as a new player.
    pub async fn new_player(server: &TestServer, name: &str) -> Client {
        Client::new_player_at(server.addr, name).await
    }

    /// Connects to `addr` and says hello as a new player.
    pub async fn new_player_at(addr: SocketAddr, name: &str) -> Client {
        let mut c = Client::connect_to(addr).await;
        c.send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some(name.into()),
            token: None,
            guest: false,
        })
        .await;
        c.expect_welcome().await;
        c
    }

    /// Connects and says hello with a token; returns the games listed in the welcome.
    pub async fn returning(server: &TestServer, token: &str) -> (Client, Vec<GameId>) {
        Client::returning_at(server.addr, token).await
    }

    /// [`Client::returning`] to the server at `addr`.
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
                ServerFrame::Message(m) => return Some(m),
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
                Some(Ok(_)) => continue,
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

/// A client following one game (as a player or a watcher), with an exact replica built
/// from the snapshot and the entries of the events.
pub struct Follower {
    pub client: Client,
    pub game: GameId,
    pub seat: Option<Player>,
    pub replica: Game,
    pub seq: Seq,
    /// Every numbered event received, in order, as the client understands it: a `play`
    /// with every engine event its entry caused (the implied ones, which the frame leaves
    /// out, given again by the replica; `complete`).
    pub log: Vec<GameEvent>,
    /// The game's entries so far: the snapshot's, then those of the `play` events.
    pub entries: Vec<Entry>,
    pub snapshot: Snapshot,
}

impl Follower {
    pub fn from_snapshot(client: Client, snapshot: Snapshot) -> Follower {
        Follower {
            client,
            game: snapshot.game,
            seat: snapshot.seat,
            replica: snapshot
                .view
                .replica()
                .expect("the snapshot's entries replay"),
            seq: snapshot.seq,
            log: Vec::new(),
            entries: snapshot.view.entries.clone(),
            snapshot,
        }
    }

    /// Waits for a snapshot (skipping other messages) and follows its game.
    pub async fn await_snapshot(mut client: Client) -> Follower {
        loop {
            match client.recv().await {
                ServerMessage::Snapshot(s) => return Follower::from_snapshot(client, *s),
                ServerMessage::Seeking { .. } | ServerMessage::Watchers { .. } => continue,
                other => panic!("expected a snapshot, got {other:?}"),
            }
        }
    }

    pub fn seat(&self) -> Player {
        self.seat.expect("a player")
    }

    pub async fn act(&mut self, action: Action) {
        let game = self.game;
        self.client.send(&ClientMessage::Act { game, action }).await;
    }

    /// The next numbered event. Checks that seq has no gap and that the entry replayed on
    /// the replica gives exactly the events the server sent (events carry no sand table:
    /// [`Follower::check_against_snapshot`] compares the whole replica with the server's).
    pub async fn next_event(&mut self) -> GameEvent {
        loop {
            match self.client.recv().await {
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                    return self.log.last().expect("logged").clone();
                }
                ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => continue,
                other => panic!("expected an event, got {other:?}"),
            }
        }
    }

    /// Applies a received event to the replica, with the checks of [`Follower::next_event`];
    /// logs it (a `play` with all its engine events).
    pub fn check(&mut self, ev: &GameEvent) {
        assert_eq!(ev.game, self.game);
        assert_eq!(ev.seq, self.seq + 1, "events are numbered without gaps");
        self.seq = ev.seq;
        let mut ev = ev.clone();
        if let Some(entry) = ev.entry() {
            // What a client without an engine has: the documented view just before the
            // entry (after what time brought first).
            let mut ahead = self.replica.clone();
            ahead.advance(entry.at_ms.saturating_sub(1));
            let view = GameView::of(&ahead, &[]);
            let all = ev.apply_to(&mut self.replica).unwrap_or_else(|e| {
                panic!("replica and server agree on the entry and its events: {e}: {ev:?}")
            });
            // An engine-less client derives the implied events from that view and puts
            // them where they go: it gets every event the engine gave.
            let (kept, complete) = match &ev.change {
                Change::Play {
                    events, complete, ..
                } => (events.as_slice(), *complete),
                _ => (&[][..], false),
            };
            assert_eq!(
                delta::expand(&entry, kept, complete, delta::implied(&view, &entry)),
                all,
                "the events derived from the frame and the view are the engine's: {ev:?}"
            );
            self.entries.push(entry);
            if let Change::Play {
                events, complete, ..
            } = &mut ev.change
            {
                *events = all;
                *complete = true;
            }
        }
        self.log.push(ev);
    }

    /// Asks the server for a fresh snapshot of the game (`join` for a player, `watch` for
    /// a watcher, with no seq) and checks that the replica built from the events alone is
    /// exact: at the snapshot's seq and instant, its view (board, sand of every hourglass
    /// and of the timer, clocks, windows, entries) and its sand table are the server's.
    /// The events on the way are taken in as usual; the follower goes on from there.
    /// Returns the snapshot.
    pub async fn check_against_snapshot(&mut self) -> Snapshot {
        let (game, after_seq) = (self.game, None);
        self.client
            .send(&match self.seat {
                Some(_) => ClientMessage::Join { game, after_seq },
                None => ClientMessage::Watch { game, after_seq },
            })
            .await;
        let snapshot = loop {
            match within("snapshot", self.client.recv()).await {
                ServerMessage::Snapshot(s) => break *s,
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                }
                ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => continue,
                other => panic!("expected a snapshot, got {other:?}"),
            }
        };
        assert_eq!(
            snapshot.seq, self.seq,
            "the snapshot follows the events received"
        );
        let mut at_snapshot = self.replica.clone();
        if at_snapshot.now() < snapshot.view.at_ms {
            let events = at_snapshot.advance(snapshot.view.at_ms);
            assert!(
                events.is_empty(),
                "the server announced all that was due: {events:?}"
            );
        }
        assert_eq!(
            GameView::of(&at_snapshot, &self.entries),
            snapshot.view,
            "the replica is the server's game"
        );
        assert_eq!(SandTable::of(&at_snapshot), snapshot.sand, "sand table");
        snapshot
    }

    /// The next error message; events on the way are taken in (and checked) as usual.
    pub async fn expect_error(&mut self, code: &str) -> String {
        loop {
            match self.client.recv().await {
                ServerMessage::Error {
                    code: c, message, ..
                } if c == code => return message,
                ServerMessage::Watchers { .. } => continue,
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                }
                other => panic!("expected error {code}, got {other:?}"),
            }
        }
    }

    /// Reads events until an engine event matches; returns it with its message.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Event) -> bool) -> (GameEvent, Event) {
        loop {
            let ev = within(what, self.next_event()).await;
            if let Change::Play { events, .. } = &ev.change {
                if let Some(e) = events.iter().find(|e| pred(e)) {
                    let e = e.clone();
                    return (ev, e);
                }
            }
        }
    }

    /// Reads events until a change matches.
    pub async fn until_change(&mut self, what: &str, pred: impl Fn(&Change) -> bool) -> GameEvent {
        loop {
            let ev = within(what, self.next_event()).await;
            if pred(&ev.change) {
                return ev;
            }
        }
    }

    /// Reads events until the replica has caught up with `other`'s seq.
    pub async fn catch_up_to(&mut self, seq: Seq) {
        while self.seq < seq {
            self.next_event().await;
        }
    }
}

/// Engine events of a numbered event as a [`Follower`] logs it (every one, the implied
/// ones too); empty for presence, grace and lag changes.
pub fn engine_events(ev: &GameEvent) -> &[Event] {
    match &ev.change {
        Change::Play { events, .. } => events,
        _ => &[],
    }
}

/// Two new players seek `settings`; returns them seated as `(red, black)`.
pub async fn start_game(server: &TestServer, settings: &Settings) -> (Follower, Follower) {
    // Names are unique: each game's players are new ones.
    static GAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = GAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut a = Client::new_player(server, &format!("Alice{n}")).await;
    let mut b = Client::new_player(server, &format!("Bob{n}")).await;
    a.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    match a.recv().await {
        ServerMessage::Seeking { settings: s } => assert_eq!(&s, settings),
        other => panic!("expected seeking, got {other:?}"),
    }
    b.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    let a = Follower::await_snapshot(a).await;
    let b = Follower::await_snapshot(b).await;
    assert_eq!(a.game, b.game);
    assert_ne!(a.seat, b.seat);
    if a.seat() == Player::Red {
        (a, b)
    } else {
        (b, a)
    }
}

pub fn sq(s: &str) -> protocol::Square {
    s.parse().expect("square")
}

/// A move with or without the drop.
pub fn mv(from: &str, to: &str, drop: bool) -> Action {
    Action::Move {
        from: sq(from),
        to: sq(to),
        drop,
    }
}

/// Plays up to `n` moves (with drops, never onto a full socket) chosen by a seeded random
/// player, each acknowledged by both players' event streams. Stops early when the game
/// ends. Returns how many moves were made.
pub async fn play_random(red: &mut Follower, black: &mut Follower, seed: u64, n: usize) -> usize {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    for made in 0..n {
        if !red.replica.is_playing() {
            return made;
        }
        let turn = red.replica.turn();
        let (mover, other) = if turn == Player::Red {
            (&mut *red, &mut *black)
        } else {
            (&mut *black, &mut *red)
        };
        let legal: Vec<Action> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(
                |a| matches!(a, Action::Move { to, drop: true, .. } if !mover.replica.is_full(*to)),
            )
            .collect();
        let Some(action) = legal.choose(&mut rng).copied() else {
            return made;
        };
        mover.act(action).await;
        mover.next_event().await;
        other.catch_up_to(mover.seq).await;
    }
    n
}

/// An HTTP answer: status code, headers (lower-case names) and body.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// A GET asking for JSON that must answer 200: the JSON.
pub async fn get_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let resp = http_get(addr, path, Some("application/json")).await;
    assert_eq!(resp.status, 200, "GET {path}: {}", resp.body);
    resp.json()
}

/// A plain HTTP/1.1 GET over a real socket, with an optional `Accept` header.
pub async fn http_get(addr: SocketAddr, path: &str, accept: Option<&str>) -> HttpResponse {
    let s = within("http connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    http_get_on(s, path, accept).await
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.2, say: another
/// client address for the server's per-address limits).
pub async fn tcp_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("address"))
        .expect("bind");
    within("tcp connect", socket.connect(to))
        .await
        .expect("connect")
}

/// A GET on a connected stream, with `Connection: close`.
pub async fn http_get_on(mut s: TcpStream, path: &str, accept: Option<&str>) -> HttpResponse {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\n{accept}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    within("http response", s.read_to_end(&mut raw))
        .await
        .expect("read");
    let raw = String::from_utf8(raw).expect("utf-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

/// A test config whose database is the file `path` (kept across restarts).
pub fn config_with_db(path: &std::path::Path) -> Config {
    Config {
        db_path: Some(path.to_path_buf()),
        ..test_config()
    }
}

impl Follower {
    /// The next lobby message; game events on the way are taken in (and checked).
    pub async fn lobby(&mut self) -> LobbyMessage {
        if let Some(m) = self.client.lobby.pop_front() {
            return m;
        }
        loop {
            match self.client.recv_any().await {
                Some(ServerFrame::Lobby(m)) => return m,
                Some(ServerFrame::Message(ServerMessage::Event(ev))) => {
                    self.check(&ev);
                }
                Some(ServerFrame::Message(
                    ServerMessage::Watchers { .. } | ServerMessage::Lag { .. },
                )) => {}
                Some(ServerFrame::Message(ServerMessage::Ping { nonce, .. })) => {
                    self.client.send(&ClientMessage::Pong { nonce }).await;
                }
                Some(ServerFrame::Message(other)) => {
                    panic!("expected a lobby message, got {other:?}")
                }
                None => panic!("connection closed while waiting for a lobby message"),
            }
        }
    }
}

impl Client {
    /// Closes the connection and waits until the server has let it go (its close
    /// frame comes after the connection's cleanup).
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
        let _ = self.closed().await;
    }
}
