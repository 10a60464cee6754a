//! One websocket connection, one task: reads and checks client messages, routes them,
//! and writes out what waits on the connection's wire (`socket`; frames are written by
//! whoever sends them, see `wire`).

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use protocol::wire::{ClientMessage, GameId, ServerMessage};
use tokio::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

use crate::clock::unix_ms;
use crate::codec::{encode, encode_reply, Reply};
use crate::hub::Hub;
use crate::limits::{IpGuard, Limiter, Verdict};
use crate::peer::{Kill, Peer, PlayerRec};
use crate::ping::{LagEstimate, Pinger};
use crate::room::lag_moved;
use crate::rooms::GameCmd;

mod handle;
mod hello;
mod socket;
pub mod upgrade;

use socket::{Event, Socket};
mod remote_lobby;
mod violation;

use violation::*;
pub use violation::{Violation, CLOSE_ECHO};

/// How soon a seat whose lag estimate just moved is pinged again (see `Socket::ping_soon`).
const PING_AGAIN: Duration = Duration::from_secs(1);

/// Refuses a connection over the per-address limit with a clear error, then closes it.
pub async fn refuse(socket: upgrade::Socket, code: &'static str, message: &'static str) {
    let wire = socket.wire;
    let _ = wire.send(encode(&ServerMessage::error(code, message)));
    if wire.close_frame(Some((CLOSE_POLICY, message))).is_ok() {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            std::future::poll_fn(|cx| wire.poll_write_out(cx)),
        )
        .await;
    }
    wire.shut();
}

struct Conn {
    hub: Arc<Hub>,
    /// The client's address: its budgets are shared by all its connections.
    ip: IpAddr,
    /// Came in the reserve: only a returning player with a live game is served.
    reserve: bool,
    /// When the connection opened: it must say hello within the idle timeout.
    opened: Instant,
    peer: Peer,
    me: Option<Arc<PlayerRec>>,
    /// Said hello as a guest: no player; may list and watch only.
    guest: bool,
    games: HashSet<GameId>,
    limiter: Limiter,
    /// The websocket ping in flight (the writer sends it).
    pinger: Arc<Pinger>,
    lag: LagEstimate,
    /// The estimate last reported to the client, and the one every local game it sits in
    /// last got (`None`: one of them was busy and skipped it): an unchanged estimate is
    /// news to nobody, and a steady connection's pings then cost no frame and no wake-up
    /// of its games. The client hears of a change of `LAG_STEP_MS` or more only.
    reported_lag: Option<u64>,
    told_lag: Option<u64>,
    /// While a client message is handled: what its answers echo.
    reply: Option<Arc<Reply>>,
}

/// Serves one upgraded websocket until it closes.
/// `reserve`: the connection came in the server's reserve (at its connection limit): it
/// may only come back as a player with a live game.
///
/// Not an `async fn`: the connection is set up before the future is made, so the future
/// holds the connection and its socket once, not also the arguments they were made from
/// (an `async fn` keeps room for its arguments for its whole life).
pub fn serve(
    socket: upgrade::Socket,
    hub: Arc<Hub>,
    guard: IpGuard,
    addr: SocketAddr,
    reserve: bool,
) -> impl std::future::Future<Output = ()> + Send {
    let config = &hub.config;
    let kill = Arc::new(Kill::default());
    let peer = Peer {
        conn: hub.next_conn_id(),
        tx: crate::peer::Outlet::Wire(socket.wire.clone()),
        kill: kill.clone(),
        seated: Default::default(),
        reply: None,
    };
    let pinger = Arc::new(Pinger::default());
    let mut socket = Socket::new(
        socket,
        pinger.clone(),
        kill.clone(),
        hub.stop_conns.clone(),
        peer.seated.clone(),
        socket::Settings {
            ping_every: config.ping_interval,
            first_ping: config.first_ping,
            idle_timeout: config.idle_timeout,
        },
    );
    let mut conn = Conn {
        hub: hub.clone(),
        ip: addr.ip(),
        reserve,
        opened: Instant::now(),
        peer,
        me: None,
        guest: false,
        games: HashSet::new(),
        limiter: Limiter::new(
            config.rate_per_sec,
            config.rate_burst,
            config.max_strikes,
            config.strike_window,
        ),
        pinger,
        lag: LagEstimate::default(),
        reported_lag: None,
        told_lag: None,
        reply: None,
    };
    tracing::debug!(conn = conn.peer.conn, "connected");
    let metrics = &hub.metrics;
    metrics.connections_open.fetch_add(1, Ordering::Relaxed);
    metrics.connections_total.fetch_add(1, Ordering::Relaxed);
    async move {
        let _guard = guard;
        conn.run(&mut socket).await;
        Box::pin(conn.cleanup()).await;
        kill.kill(CLOSE_NORMAL, "bye");
        drop(conn);
        let reason = kill.reason().expect("killed just above");
        // Boxed: this future takes the socket by value and would otherwise be a second
        // socket's room in every connection's task for its whole life.
        Box::pin(socket.close(reason)).await;
        // Counted open until its socket is (a closing one may linger: `Socket::linger`).
        hub.metrics.connections_open.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Conn {
    /// Sends an answer to the message being handled (it echoes its id).
    fn send(&self, msg: &ServerMessage) {
        match &self.reply {
            Some(reply) => self.peer.send(encode_reply(msg, reply)),
            None => self.peer.send_msg(msg),
        };
    }

    /// This connection's peer for the answers to the message being handled.
    fn reply_peer(&self) -> Peer {
        self.peer.replying(self.reply.clone())
    }

    fn error(&self, code: &str, message: impl Into<String>, game: Option<GameId>) {
        self.send(&ServerMessage::Error {
            code: code.into(),
            message: message.into(),
            game,
            id: None,
            server_ms: Some(self.reply.as_ref().map_or_else(unix_ms, |r| r.server_ms)),
            at_ms: None,
        });
    }

    /// Handles one text frame: its answers echo its id and receipt instants.
    async fn request(&mut self, text: &str, received: Instant) {
        self.reply = Some(Arc::new(Reply {
            id: None,
            server_ms: unix_ms(),
            at_ms: None,
        }));
        self.text(text, received).await;
        self.reply = None;
    }

    /// Handles what the socket brings until the connection is to close (the reason is
    /// then set on its [`Kill`]).
    async fn run(&mut self, socket: &mut Socket) {
        let kill = self.peer.kill.clone();
        loop {
            match socket.next().await {
                Event::Killed => return,
                Event::Shutdown => {
                    kill.kill(CLOSE_GOING_AWAY, "server shutting down");
                    return;
                }
                Event::Idle => {
                    kill.kill(CLOSE_POLICY, "idle: nothing received for too long");
                    return;
                }
                Event::Gone => return,
                Event::WriteFailed => {
                    kill.kill(CLOSE_NORMAL, "write failed");
                    return;
                }
                Event::Broke(violation) => {
                    self.violation(violation);
                    return;
                }
                Event::Frame(_, received) if self.hello_overdue(received) => {
                    self.error(
                        "hello_timeout",
                        format!(
                            "no hello within {} s of connecting: closing",
                            self.hub.config.idle_timeout.as_secs()
                        ),
                        None,
                    );
                    kill.kill(CLOSE_POLICY, "no hello in time");
                    return;
                }
                Event::Frame(msg, received) => match msg {
                    // Boxed: handling a message can wait on the store, and that state
                    // would otherwise sit in every idle connection's task.
                    Message::Text(text) => Box::pin(self.request(text.as_str(), received)).await,
                    Message::Binary(_) => {
                        self.violation(Violation::Binary);
                        return;
                    }
                    Message::Close(_) => {
                        // Closing the socket echoes the client's close frame.
                        kill.kill(CLOSE_ECHO, "");
                        return;
                    }
                    // The answer to the server's own ping measures lag and is not the
                    // client's traffic (one per ping at most).
                    Message::Pong(payload) => match self.pinger.answer(&payload, received) {
                        Some(rtt) => {
                            if self.measured(rtt, received) && self.peer.seated.any() {
                                socket.ping_soon(PING_AGAIN);
                            }
                        }
                        None => {
                            let verdict = self.count_message();
                            self.rate_verdict(verdict);
                        }
                    },
                    // Answered by the websocket layer, but still traffic.
                    Message::Ping(_) => {
                        let verdict = self.count_message();
                        self.rate_verdict(verdict);
                    }
                    // Only ever made for writing, never read.
                    Message::Frame(_) => {}
                },
            }
        }
    }

    /// A connection that has not said hello within the idle timeout is closed at its next
    /// frame (one that sends nothing at all is closed as idle): pings before hello (and
    /// the Pongs answering the server's) kept such a connection, and its slot, forever.
    fn hello_overdue(&self, received: Instant) -> bool {
        self.me.is_none()
            && !self.guest
            && received.saturating_duration_since(self.opened) > self.hub.config.idle_timeout
    }

    /// A round trip came back: tell the client, and every game it sits in, what changed.
    /// True when the games are told a new lag (it moved by a step or more).
    fn measured(&mut self, rtt_ms: u64, received: Instant) -> bool {
        self.lag.observe(rtt_ms);
        self.lag_changed(received)
    }

    /// The lag estimate may have changed (a measurement, or the client's own lower figure):
    /// the client and the games it sits in are told as [`Conn::measured`] says.
    fn lag_changed(&mut self, received: Instant) -> bool {
        let Some(lag) = self.lag.ms() else {
            return false;
        };
        // Reported as the games publish a seat's lag: when it moved by `LAG_STEP_MS` or
        // more. At every millisecond of change four pings in five brought a frame.
        if lag_moved(self.reported_lag, lag) {
            self.reported_lag = Some(lag);
            self.send(&ServerMessage::Lag { rtt_ms: lag });
        }
        // The games are told by the same rule, so that a game is woken only for a change
        // it will publish: each game's last recorded lag is the value last told (a game
        // the player sits down in later takes it from `seated`), unless a busy game
        // missed one (then the next measurement goes to all, and a game that did not miss
        // may keep a value within a step of it).
        let moved = lag_moved(self.told_lag, lag);
        if moved {
            self.peer.seated.set_lag(lag);
            // Best effort: a busy game skips one measurement rather than wait, and is
            // told again at the next.
            let mut told = true;
            for game in self.peer.seated.list() {
                if let Some(handle) = self.hub.games.get(&game) {
                    told &= handle
                        .tx
                        .try_send(GameCmd::Lag {
                            conn: self.peer.conn,
                            rtt_ms: lag,
                            received,
                        })
                        .is_ok();
                } else {
                    // Not launched yet (or just ended): told again at the next.
                    told = false;
                }
            }
            self.told_lag = told.then_some(lag);
        }
        // And the games owned by other nodes (which keep their own account of what each
        // owner was told).
        if let Some(cluster) = self.hub.cluster.get() {
            cluster.lag(self.peer.conn, lag, received);
        }
        moved
    }

    async fn text(&mut self, text: &str, received: Instant) {
        let max = self.hub.config.max_frame_bytes;
        let verdict = if text.len() > max {
            match self.limiter.strike() {
                Verdict::Close => Verdict::Close,
                _ => {
                    self.error(
                        "frame_too_large",
                        format!(
                            "a message may have at most {max} bytes; this one has {}",
                            text.len()
                        ),
                        None,
                    );
                    return;
                }
            }
        } else {
            self.count_message()
        };
        if !self.rate_verdict(verdict) {
            return;
        }
        let server_ms = self.reply.as_ref().map_or_else(unix_ms, |r| r.server_ms);
        match crate::request::parse_request(text) {
            Ok((msg, id)) => {
                // The game time of the receipt, when the message concerns a live game.
                let at_ms = crate::request::game_of(&msg).and_then(|g| {
                    let h = self.hub.games.get(&g)?;
                    Some(received.saturating_duration_since(h.start).as_millis() as u64)
                });
                self.reply = Some(Arc::new(Reply {
                    id,
                    server_ms,
                    at_ms,
                }));
                self.handle(msg, received).await
            }
            Err(((code, message), id)) => {
                self.reply = Some(Arc::new(Reply {
                    id,
                    server_ms,
                    at_ms: None,
                }));
                if code == "bad_json" {
                    self.violation(Violation::NotJson(message));
                } else {
                    self.error(code, message, None)
                }
            }
        }
    }

    /// Counts a message against the connection's rate and its address's budget.
    fn count_message(&mut self) -> Verdict {
        match self.limiter.message() {
            Verdict::Allow if !self.hub.budgets.messages.take(self.ip) => self.limiter.strike(),
            verdict => verdict,
        }
    }

    /// Acts on the rate limiter's verdict on a message; true if it may be handled.
    fn rate_verdict(&self, verdict: Verdict) -> bool {
        match verdict {
            Verdict::Allow => true,
            Verdict::Refuse => {
                self.error(
                    "rate_limited",
                    format!(
                        "too many messages: at most {} per second per connection (bursts of {}) and {} per address (bursts of {}); this one was dropped",
                        self.hub.config.rate_per_sec, self.hub.config.rate_burst,
                        self.hub.config.ip_rate_per_sec, self.hub.config.ip_rate_burst
                    ),
                    None,
                );
                false
            }
            Verdict::Close => {
                self.error(
                    "abuse",
                    "too many refused messages: closing the connection",
                    None,
                );
                self.peer
                    .kill
                    .kill(CLOSE_POLICY, "too many refused messages");
                false
            }
        }
    }

    /// The connection is gone: leave every game and withdraw the seek.
    async fn cleanup(&mut self) {
        self.hub.connection_gone(self.me.as_deref(), self.peer.conn);
        let mut games: HashSet<GameId> = self.games.drain().collect();
        if let Some(me) = &self.me {
            // Games this connection was seated in by pairing, without asking.
            games.extend(self.hub.games_of(&me.id));
        }
        for game in games {
            if let Some(handle) = self.hub.game(game) {
                let cmd = GameCmd::Unsubscribe {
                    conn: self.peer.conn,
                    reply: None,
                };
                let _ = tokio::time::timeout(Duration::from_secs(5), handle.tx.send(cmd)).await;
            }
        }
        // The owners of games on other nodes drop this connection's proxies.
        if let Some(cluster) = self.hub.cluster.get() {
            cluster.closed(self.peer.conn);
        }
        if let Some(lobby) = self.hub.cluster_lobby.get() {
            lobby.closed(self.peer.conn);
        }
        tracing::debug!(conn = self.peer.conn, "disconnected");
    }
}

/// Parses a frame, telling malformed JSON, unknown messages, unknown fields and bad fields
/// apart (the id, if any, is dropped: see [`crate::request::parse_request`]).
pub fn parse(text: &str) -> Result<ClientMessage, (&'static str, String)> {
    crate::request::parse_request(text)
        .map(|(msg, _)| msg)
        .map_err(|(refused, _)| refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_tells_errors_apart() {
        assert_eq!(parse("{not json").unwrap_err().0, "bad_json");
        assert_eq!(parse("[1,2]").unwrap_err().0, "bad_message");
        assert_eq!(
            parse(r#"{"type":"dance"}"#).unwrap_err().0,
            "unknown_message"
        );
        let (code, msg) =
            parse(r#"{"type":"act","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"start","from":"z9"}}"#).unwrap_err();
        assert_eq!(code, "bad_message");
        assert!(msg.contains("z9"), "{msg}");
        let (code, msg) =
            parse(r#"{"type":"play_bot","settings":{},"level":"expert"}"#).unwrap_err();
        assert_eq!(code, "bad_bot_level");
        assert!(
            msg.contains("\"expert\"") && msg.contains("\"easy\""),
            "{msg}"
        );
        assert_eq!(
            parse(r#"{"type":"play_bot","settings":{},"level":3}"#)
                .unwrap_err()
                .0,
            "bad_bot_level"
        );
        assert!(matches!(
            parse(r#"{"type":"play_bot","settings":{},"level":"hard"}"#),
            Ok(ClientMessage::PlayBot {
                level: Some(protocol::bot::BotLevel::Hard),
                ..
            })
        ));
        assert!(matches!(
            parse(r#"{"type":"list_games"}"#),
            Ok(ClientMessage::ListGames)
        ));
    }

    #[test]
    fn every_client_type_is_known() {
        // Each tag in the list parses as its message (given its fields).
        for (tag, extra) in [
            ("hello", r#","version":1"#),
            ("hello", r#","version":1,"guest":true"#),
            ("seek", r#","settings":{}"#),
            ("cancel_seek", ""),
            ("list_games", ""),
            ("watch", r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#),
            ("join", r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#),
            ("leave", r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#),
            (
                "act",
                r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f","action":{"type":"resign"}"#,
            ),
            (
                "claim_abandonment",
                r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#,
            ),
            ("ping", ""),
            ("pong", r#","nonce":1"#),
            ("list_seeks", ""),
            ("list_players", ""),
            ("accept_seek", r#","seek":1"#),
            ("challenge", r#","to":"x","settings":{}"#),
            ("accept_challenge", r#","challenge":1"#),
            ("decline_challenge", r#","challenge":1"#),
            ("cancel_challenge", r#","challenge":1"#),
            ("host", r#","settings":{}"#),
            ("join_code", r#","code":"ABC""#),
            ("watch_code", r#","code":"ABC""#),
            (
                "rematch",
                r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#,
            ),
            (
                "decline_rematch",
                r#","game":"0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f""#,
            ),
            ("play_bot", r#","settings":{}"#),
            ("play_bot", r#","settings":{},"level":"easy""#),
            ("tournament_create", r#","rounds":3,"tc":"blitz""#),
            ("tournament_join", r#","tournament":"abc""#),
            ("tournament_withdraw", r#","tournament":"abc""#),
        ] {
            assert!(crate::request::CLIENT_TYPES.contains(&tag));
            parse(&format!(r#"{{"type":"{tag}"{extra}}}"#)).unwrap();
        }
    }
}
