//! The socket side of a connection, driven by the connection's own task: one task per
//! connection reads the client's frames, writes out what waits on its wire, pings, and
//! watches for the kill signal, shutdown and idleness, all in one poll.
//!
//! Why not a reader task and a writer task: two tasks per socket cost two futures and a
//! lock (`split`'s `BiLock`) on every frame, and each turn of a `select!` made its timers
//! and `Notify` registrations anew. Here every waiter is made once, per connection, and a
//! frame costs one poll of the socket. The timers (ping, idleness) are polled only when
//! they are due or the task's waker changed: a timer keeps the waker it was last polled
//! with until it fires, so polling it again before its instant only registers the same
//! waker again (that was about 2% of the server's CPU under load, `perf`).
//!
//! Frames to the client do not pass through this task: whoever sends one writes it on the
//! wire (`wire`); the task only writes out what the socket did not take at once, when the
//! socket becomes writable.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::time::{Duration, Instant, Sleep};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::peer::{CloseReason, Kill, Seated};
use crate::ping::Pinger;
use crate::wire::{Duplex, Wire};

use super::{Violation, CLOSE_ECHO};

/// What woke the connection.
pub enum Event {
    /// A frame from the client, and when it was read.
    Frame(Message, Instant),
    /// The client's stream ended, or a read failed without the client's doing (a reset).
    Gone,
    /// The client broke the websocket protocol.
    Broke(Violation),
    /// The connection is told to close (by itself or by a game: see [`Kill`]).
    Killed,
    /// The server is shutting down.
    Shutdown,
    /// Nothing was received for the idle timeout.
    Idle,
    /// A write failed: the client is gone.
    WriteFailed,
}

type Waiting<T> = Pin<Box<dyn Future<Output = T> + Send>>;

pub struct Socket {
    ws: WebSocketStream<Duplex>,
    wire: Arc<Wire>,
    /// The client's close frame (code and reason), echoed when the connection closes.
    echo: Option<(u16, String)>,
    /// The next ping's instant; after a late one, a whole interval from then.
    ping: Pin<Box<Sleep>>,
    /// `ping`'s deadline, kept here: a poll reads it without touching the timer's own
    /// allocation (a cache line of its own, cold at most polls).
    ping_at: Instant,
    ping_every: Duration,
    /// Ticks of `ping` since the last ping went.
    ticks: u32,
    /// The next tick's ping goes at once, not held for the next frame (the first one, and
    /// one asked for by [`Socket::ping_soon`]): a seat with a new or a moving lag is not
    /// left to wait for a frame in a quiet game.
    urgent: bool,
    /// Every how many ticks a connection with no seat is pinged (see [`unseated_ticks`]).
    unseated_every: u32,
    seated: Arc<Seated>,
    pinger: Arc<Pinger>,
    /// Made once and polled once, to register this task's waker (see the module's
    /// doc); afterwards its flag is read instead, which costs no lock.
    killed: Waiting<CloseReason>,
    /// The server's stop: a flag read at each poll, registered again only when the
    /// task's waker changed (see `Stop::waiter`).
    shutdown: crate::stop::Waiter,
    /// The waker `killed` was last polled with.
    armed: Option<std::task::Waker>,
    kill: Arc<Kill>,
    idle: Pin<Box<Sleep>>,
    /// `idle`'s deadline (as `ping_at`).
    idle_at: Instant,
    /// `idle` was polled with the waker in `armed` (a frame returned early may have left
    /// it unpolled after the waker changed).
    idle_armed: bool,
    idle_timeout: Duration,
    last_heard: Instant,
}

/// Every how many pings of a seated connection one with no seat (a watcher, the lobby) is
/// pinged: three, so every 15 s by default, but always more than twice within the idle
/// timeout (the pongs keep it open). Only a seat needs a fresh lag (it judges the
/// player's deadlines); for the others a ping only keeps the connection alive, and each
/// ping is three frames (the ping, its pong, the `lag` it brings). With thousands of
/// watchers those were a quarter of the frames beside the moves' at compare.sh's load.
fn unseated_ticks(ping_every: Duration, idle_timeout: Duration) -> u32 {
    let fit = (idle_timeout / 2).as_millis() / ping_every.as_millis().max(1);
    fit.clamp(1, 3) as u32
}

/// A timer with this deadline may have fired: it is polled. A timer never fires before its instant; the
/// millisecond of margin covers the timer wheel's rounding (it rounds up, never down).
fn due(deadline: Instant, now: Instant) -> bool {
    deadline <= now + Duration::from_millis(1)
}

pub struct Settings {
    pub ping_every: Duration,
    pub first_ping: Option<Duration>,
    pub idle_timeout: Duration,
}

impl Socket {
    pub fn new(
        socket: super::upgrade::Socket,
        pinger: Arc<Pinger>,
        kill: Arc<Kill>,
        shutdown: crate::stop::Stop,
        seated: Arc<Seated>,
        settings: Settings,
    ) -> Socket {
        let now = Instant::now();
        let first = now + settings.first_ping.unwrap_or(settings.ping_every);
        let unseated_every = unseated_ticks(settings.ping_every, settings.idle_timeout);
        Socket {
            ws: socket.ws,
            wire: socket.wire,
            echo: None,
            ping: Box::pin(tokio::time::sleep_until(first)),
            ping_at: first,
            // Zero would ping in a loop.
            ping_every: settings.ping_every.max(Duration::from_millis(1)),
            // The first tick pings whatever the connection is (its first lag).
            ticks: unseated_every - 1,
            urgent: settings.first_ping.is_some(),
            unseated_every,
            seated,
            pinger,
            killed: Box::pin({
                let kill = kill.clone();
                async move { kill.killed().await }
            }),
            shutdown: shutdown.waiter(),
            armed: None,
            kill,
            idle: Box::pin(tokio::time::sleep_until(now + settings.idle_timeout)),
            idle_at: now + settings.idle_timeout,
            idle_armed: false,
            idle_timeout: settings.idle_timeout,
            last_heard: now,
        }
    }

    /// The next thing the connection must act on; meanwhile, queued frames and pings are
    /// written.
    pub async fn next(&mut self) -> Event {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Event> {
        // The flags first: a waiter is complete only once its flag is set, so it is never
        // polled after completing.
        if self.kill.reason().is_some() {
            return Poll::Ready(Event::Killed);
        }
        if Pin::new(&mut self.shutdown).poll(cx).is_ready() {
            return Poll::Ready(Event::Shutdown);
        }
        let same_task = self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker()));
        if !same_task {
            // Registers this waker with the kill's waiter; it stays registered while it
            // lives, so later polls only read the flag.
            self.armed = Some(cx.waker().clone());
            self.idle_armed = false;
            let _ = self.killed.as_mut().poll(cx);
            if self.kill.reason().is_some() {
                return Poll::Ready(Event::Killed);
            }
        }
        let now = Instant::now();
        // A fired timer is reset and polled again, so it is always registered with this
        // task's waker once this is done. (Nothing returns between the waker's change
        // above and this poll but the connection's end.)
        if !same_task || due(self.ping_at, now) {
            while self.ping.as_mut().poll(cx).is_ready() {
                match self.tick() {
                    Ok(()) => {}
                    // As any sender that finds the queue full (`Peer::send`).
                    Err(crate::wire::Refused::Full) => {
                        self.kill
                            .kill(crate::peer::CLOSE_SLOW, crate::peer::QUEUE_FULL);
                        return Poll::Ready(Event::Killed);
                    }
                    Err(crate::wire::Refused::Closed) => return Poll::Ready(Event::WriteFailed),
                }
                let next = Instant::now() + self.ping_every;
                self.ping.as_mut().reset(next);
                self.ping_at = next;
            }
        }
        if let Poll::Ready(Err(())) = self.wire.poll_write_out(cx) {
            return Poll::Ready(Event::WriteFailed);
        }
        match Pin::new(&mut self.ws).poll_next(cx) {
            Poll::Ready(None) => return Poll::Ready(Event::Gone),
            Poll::Ready(Some(Err(e))) => {
                tracing::debug!(error = %e, "read error");
                return Poll::Ready(match Violation::of_read_error(&e.to_string()) {
                    Some(violation) => Event::Broke(violation),
                    None => Event::Gone,
                });
            }
            Poll::Ready(Some(Ok(msg))) => {
                let now = Instant::now();
                self.last_heard = now;
                if let Message::Close(frame) = &msg {
                    self.echo = frame
                        .as_ref()
                        .map(|f| (f.code.into(), f.reason.to_string()));
                }
                return Poll::Ready(Event::Frame(msg, now));
            }
            Poll::Pending => {}
        }
        // The idle timer is set once and moved only when it fires: a frame costs no timer
        // update.
        if !self.idle_armed || due(self.idle_at, now) {
            while self.idle.as_mut().poll(cx).is_ready() {
                let deadline = self.last_heard + self.idle_timeout;
                if deadline <= Instant::now() {
                    return Poll::Ready(Event::Idle);
                }
                self.idle.as_mut().reset(deadline);
                self.idle_at = deadline;
            }
            self.idle_armed = true;
        }
        Poll::Pending
    }

    /// The next ping goes within `after` unless it is due sooner anyway (the lag estimate
    /// of a seat just moved: measured again soon, it catches up with a connection that
    /// changed in seconds, not in a minute of 5-s pings).
    pub fn ping_soon(&mut self, after: Duration) {
        let at = Instant::now() + after;
        if at < self.ping_at {
            self.ping.as_mut().reset(at);
            self.ping_at = at;
            self.urgent = true;
        }
    }

    /// The ping timer fired: a ping held at the last tick that no frame took out goes
    /// now (it is this tick's); else a seat's ping is held for the next frame sent to the
    /// connection (a player gets one every few seconds: `Wire::ping_with_next`), unless it
    /// is urgent (the first, or one asked for soon), and any other connection's is written
    /// at every `unseated_every`-th tick.
    fn tick(&mut self) -> Result<(), crate::wire::Refused> {
        self.ticks += 1;
        if self.wire.release_ping()? {
            self.ticks = 0;
            return Ok(());
        }
        let seated = self.seated.any();
        let urgent = std::mem::take(&mut self.urgent);
        if self.ticks < self.unseated_every && !seated && !urgent {
            return Ok(());
        }
        self.ticks = 0;
        if seated && !urgent {
            let payload = self.pinger.next_held();
            self.wire.ping_with_next(payload, self.pinger.clone())
        } else {
            self.wire.ping(self.pinger.next().to_vec().into())
        }
    }

    /// Closes the socket for `reason`: what waits on the wire (say, the error telling why)
    /// goes first if the client reads at all, then the close frame; a second at most. Then
    /// the socket's write side is shut, whoever still holds the wire.
    pub async fn close(self, reason: CloseReason) {
        let queued = if reason.code == CLOSE_ECHO {
            // The client closed: its close frame is echoed (RFC 6455, 5.5.1).
            match &self.echo {
                Some((code, text)) => self.wire.close_frame(Some((*code, text))),
                None => self.wire.close_frame(None),
            }
        } else {
            self.wire.close_frame(Some((reason.code, reason.reason)))
        };
        if queued.is_ok() {
            let wire = &self.wire;
            let _ = tokio::time::timeout(
                Duration::from_secs(1),
                std::future::poll_fn(|cx| wire.poll_write_out(cx)),
            )
            .await;
        }
        self.wire.shut();
        if reason.code >= super::CLOSE_PROTOCOL {
            self.linger().await;
        }
    }

    /// After closing a client that still sends (a flood, a breach), reads and drops what
    /// it sends until it closes its side, [`LINGER`] or [`LINGER_BYTES`] at most. A socket
    /// closed with unread input resets the connection, and the reset throws away, at the
    /// client, the error and the close frame telling it why (a client flooding the server
    /// got a bare `Connection reset by peer`).
    async fn linger(mut self) {
        use tokio::io::AsyncReadExt;
        let deadline = Instant::now() + LINGER;
        let mut buf = vec![0u8; 16 * 1024];
        let mut drained = 0;
        while drained < LINGER_BYTES {
            match tokio::time::timeout_at(deadline, self.ws.get_mut().read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => drained += n,
                _ => return,
            }
        }
    }
}

/// How long a closed client's input is read and dropped at most (see [`Socket::linger`]).
const LINGER: Duration = Duration::from_secs(2);
/// How much of it at most.
const LINGER_BYTES: usize = 1 << 20;

/// However the connection's task ends (a panic included), the socket's write side is shut
/// and every sender finds the wire closed (games then drop the connection's peer).
impl Drop for Socket {
    fn drop(&mut self) {
        self.wire.shut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However a connection's socket goes (here: dropped, as by a panic), its wire is shut:
    /// senders are refused and the client sees the end of the stream.
    /// A server socket of `settings` over a real TCP pair: the client's end, the socket,
    /// its wire.
    async fn socket(
        settings: Settings,
        seated: Arc<Seated>,
    ) -> (tokio::net::TcpStream, Socket, Arc<Wire>) {
        let (client, read, wire) = crate::wire::socket_pair(8).await;
        let ws = WebSocketStream::from_raw_socket(
            Duplex::new(read, wire.clone()),
            tokio_tungstenite::tungstenite::protocol::Role::Server,
            None,
        )
        .await;
        let socket = Socket::new(
            super::super::upgrade::Socket {
                ws,
                wire: wire.clone(),
            },
            Default::default(),
            Default::default(),
            Default::default(),
            seated,
            settings,
        );
        (client, socket, wire)
    }

    #[tokio::test]
    async fn a_dropped_socket_shuts_its_wire() {
        use tokio::io::AsyncReadExt;
        let (mut client, socket, wire) = socket(
            Settings {
                ping_every: Duration::from_secs(3600),
                first_ping: None,
                idle_timeout: Duration::from_secs(3600),
            },
            Default::default(),
        )
        .await;
        wire.send("{}".into()).unwrap();
        drop(socket);
        assert!(wire.is_closed());
        assert_eq!(wire.send("{}".into()), Err(crate::wire::Refused::Closed));
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert_eq!(
            got,
            [0x81, 2, b'{', b'}'],
            "the frame sent before, then the end"
        );
    }

    /// `ping_soon` brings the next ping forward (a seat whose lag moved is measured again
    /// within a second, not at the next 5-s tick), and it goes then even in a quiet game:
    /// a seat's ping is not held for the next frame (none comes here).
    #[tokio::test(start_paused = true)]
    async fn a_ping_asked_for_soon_goes_then() {
        use tokio::io::AsyncReadExt;
        let seated = Arc::new(Seated::default());
        seated.add(protocol::wire::GameId::now_v7());
        let (mut client, mut socket, _wire) = socket(
            Settings {
                ping_every: Duration::from_secs(5),
                first_ping: None,
                idle_timeout: Duration::from_secs(10),
            },
            seated,
        )
        .await;
        let start = Instant::now();
        socket.ping_soon(Duration::from_secs(1));
        // Later than the tick: changes nothing.
        socket.ping_soon(Duration::from_secs(9));
        let driver = tokio::spawn(async move {
            let _ = socket.next().await;
        });
        let mut first = [0u8; 1];
        client.read_exact(&mut first).await.unwrap();
        assert_eq!(first[0], 0x89, "a ping frame");
        let after = start.elapsed();
        assert!(
            after >= Duration::from_secs(1) && after < Duration::from_secs(2),
            "{after:?}"
        );
        driver.abort();
    }

    #[test]
    fn a_connection_with_no_seat_is_pinged_often_enough_to_stay_open() {
        let s = Duration::from_secs;
        // Defaults: every third ping (15 s), twice within the 30-s idle timeout.
        assert_eq!(unseated_ticks(s(5), s(30)), 3);
        // A longer interval leaves room for fewer skipped pings, then none.
        assert_eq!(unseated_ticks(s(7), s(30)), 2);
        assert_eq!(unseated_ticks(s(15), s(30)), 1);
        assert_eq!(unseated_ticks(s(60), s(30)), 1);
        assert_eq!(unseated_ticks(Duration::ZERO, s(30)), 3);
    }
}
