//! A websocket's write side, shared by everyone who sends to that connection: its games,
//! the lobby, the connection's own answers and pings, and the websocket layer's replies
//! (pongs, the close echo).
//!
//! Why not a queue that the connection's task empties: then every frame woke that task,
//! which took its turn on the runtime (and often woke the other worker thread) to make one
//! `write`. At compare.sh's load that was four task wake-ups a move beside the game's.
//! Here a sender writes the frame itself, at once, with one non-blocking `sendmsg` (the
//! websocket header and the text, which is never copied), when nothing waits before it.
//! Only what the kernel does not take whole (a client that does not read; a full socket
//! buffer) waits in a bounded queue, which the connection's task writes out as the socket
//! becomes writable; everything sent after it waits behind it, so frames keep their order.
//!
//! The lock is held for the write (a few microseconds): the order of frames on the
//! socket is the order in which senders took it.
//!
//! A seated connection's ping waits for the next frame sent to it and goes out in the same
//! write ([`Wire::ping_with_next`]): a player gets a frame every few seconds, and a ping
//! of its own was a write and a TCP segment more (at 18,000 sockets, a third of all writes).

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use axum::extract::ws::Utf8Bytes;
use bytes::Bytes;
use futures::task::AtomicWaker;
use tokio::io::AsyncWrite;
use tokio::net::tcp::OwnedWriteHalf;

use crate::ping::Pinger;

/// Opcodes of the frames a server sends (RFC 6455, 5.2).
const TEXT: u8 = 0x1;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
/// Frames written by one `writev` when several wait.
const GATHER: usize = 16;

/// Why a frame was not sent.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// `cap` frames already wait: the client does not read.
    Full,
    /// The connection is closing or closed.
    Closed,
}

/// How a frame is queued.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Refused when `cap` frames wait: the client does not read (whatever the frame: a
    /// client that sends pings and reads nothing must not fill the server with pongs).
    Counted,
    /// The close frame: never refused for room; nothing is taken after it.
    Close,
}

/// One frame: its header and its payload, of which `written` bytes (header first) are
/// on the socket.
struct Frame {
    header: [u8; 10],
    header_len: u8,
    payload: Payload,
}

enum Payload {
    Text(Utf8Bytes),
    Bytes(Bytes),
}

impl Frame {
    fn new(opcode: u8, payload: Payload) -> Frame {
        let len = match &payload {
            Payload::Text(t) => t.len(),
            Payload::Bytes(b) => b.len(),
        };
        let mut header = [0u8; 10];
        // FIN, no extension bits; a server's frames are not masked.
        header[0] = 0x80 | opcode;
        let header_len = if len < 126 {
            header[1] = len as u8;
            2
        } else if len <= u16::MAX as usize {
            header[1] = 126;
            header[2..4].copy_from_slice(&(len as u16).to_be_bytes());
            4
        } else {
            header[1] = 127;
            header[2..10].copy_from_slice(&(len as u64).to_be_bytes());
            10
        };
        Frame {
            header,
            header_len,
            payload,
        }
    }

    fn payload(&self) -> &[u8] {
        match &self.payload {
            Payload::Text(t) => t.as_str().as_bytes(),
            Payload::Bytes(b) => b,
        }
    }

    fn len(&self) -> usize {
        self.header_len as usize + self.payload().len()
    }

    /// The frame's bytes from `from` on: what is left of the header (maybe nothing),
    /// then what is left of the payload.
    fn slices(&self, from: usize) -> [IoSlice<'_>; 2] {
        let header = &self.header[..self.header_len as usize];
        let payload = self.payload();
        match from.checked_sub(header.len()) {
            None => [IoSlice::new(&header[from..]), IoSlice::new(payload)],
            Some(into) => [IoSlice::new(&[]), IoSlice::new(&payload[into..])],
        }
    }
}

/// Where the bytes go. A trait so the queueing can be tested without a socket.
pub trait Sink: Send + 'static {
    /// Writes what the socket takes now, without waiting.
    fn try_write(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Writes what it takes, or registers `cx` to be woken when it can take more.
    fn poll_write(&mut self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>])
        -> Poll<io::Result<usize>>;
}

impl Sink for OwnedWriteHalf {
    /// Straight to the socket (it is non-blocking): tokio's `try_write_vectored` reads the
    /// socket's readiness in the I/O driver first, a cache line of its own that is cold at
    /// most frames (about 1% of the server's CPU at compare.sh's load, `perf`). Only when
    /// the socket takes nothing is tokio asked, through its own write: that clears its
    /// readiness, so the connection's task then waits for the socket to be writable.
    fn try_write(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match socket2::SockRef::from(self.as_ref()).send_vectored(bufs) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.try_write_vectored(bufs),
            sent => sent,
        }
    }

    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(self).poll_write_vectored(cx, bufs)
    }
}

struct State {
    /// `None` once the wire is closed: the socket's write side is shut (dropping an
    /// `OwnedWriteHalf` sends the FIN) even while games still hold the wire.
    sink: Option<Box<dyn Sink>>,
    /// Frames the socket did not take yet, oldest first.
    waiting: VecDeque<Frame>,
    /// Bytes of the first waiting frame already written.
    written: usize,
    /// The close frame is queued: nothing may follow it.
    closing: bool,
    /// A write failed: the client is gone.
    failed: bool,
    /// A ping waiting to go out with the next frame.
    rider: Option<Rider>,
}

/// A held ping, and whom to tell when it is written (it is timed from then).
struct Rider {
    frame: Frame,
    pinger: Arc<Pinger>,
}

pub struct Wire {
    state: Mutex<State>,
    /// The connection's task, woken when a frame starts waiting (it then waits for the
    /// socket to be writable) or a write failed.
    waker: AtomicWaker,
    /// Frames that may wait.
    cap: usize,
}

/// Capacity an emptied queue may keep: past it, the memory of a burst is given back.
const KEPT: usize = 16;

impl Wire {
    pub fn new(sink: impl Sink, cap: usize) -> Wire {
        Wire {
            state: Mutex::new(State {
                sink: Some(Box::new(sink)),
                waiting: VecDeque::new(),
                written: 0,
                closing: false,
                failed: false,
                rider: None,
            }),
            waker: AtomicWaker::new(),
            cap: cap.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state consistent: a frame is pushed,
        // or written and popped.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a text frame: written now if nothing waits and the socket takes it,
    /// otherwise queued behind what waits.
    pub fn send(&self, text: Utf8Bytes) -> Result<(), Refused> {
        self.push(
            Frame::new(TEXT, Payload::Text(text)),
            Kind::Counted,
            true,
            self.cap,
        )
    }

    /// Sends a frame of a game the connection only watches: refused (`Full`) when
    /// `backlog` frames already wait, so that watching never fills the queue kept for the
    /// connection's own games. `now: false` (a game's crowd of watchers): queued for the
    /// connection's task to write (it is woken), not written here, so that the crowd's
    /// writes are spread over the connections' tasks.
    pub fn send_watched(&self, text: Utf8Bytes, backlog: usize, now: bool) -> Result<(), Refused> {
        self.push(
            Frame::new(TEXT, Payload::Text(text)),
            Kind::Counted,
            now,
            backlog,
        )
    }

    /// Sends a ping with `payload`.
    pub fn ping(&self, payload: Bytes) -> Result<(), Refused> {
        self.push(
            Frame::new(PING, Payload::Bytes(payload)),
            Kind::Counted,
            true,
            self.cap,
        )
    }

    /// Holds a ping (`payload`) to go out with the next frame, in the same write;
    /// [`Wire::release_ping`] writes it if none came. `pinger` is told when it is written.
    /// Written at once when frames wait already (the connection's task is writing them).
    pub fn ping_with_next(&self, payload: [u8; 8], pinger: Arc<Pinger>) -> Result<(), Refused> {
        let mut state = self.lock();
        let state = &mut *state;
        if state.closing || state.failed || state.sink.is_none() {
            return Err(Refused::Closed);
        }
        let frame = Frame::new(PING, Payload::Bytes(Bytes::copy_from_slice(&payload)));
        if state.waiting.is_empty() {
            // A ping held before is given up (the pinger waits for the newer one only).
            state.rider = Some(Rider { frame, pinger });
            return Ok(());
        }
        pinger.written(&payload);
        self.push_locked(state, frame, Kind::Counted, true, self.cap)
    }

    /// Writes the held ping now, if one is held: no frame came to take it out.
    /// `Ok(false)`: none was held.
    pub fn release_ping(&self) -> Result<bool, Refused> {
        let mut state = self.lock();
        let state = &mut *state;
        let Some(rider) = state.rider.take() else {
            return Ok(false);
        };
        rider.pinger.written(rider.frame.payload());
        self.push_locked(state, rider.frame, Kind::Counted, true, self.cap)
            .map(|()| true)
    }

    /// Bytes of ready-made frames (the websocket layer's pong or close echo).
    pub fn raw(&self, bytes: Bytes) -> Result<(), Refused> {
        let frame = Frame {
            header: [0; 10],
            header_len: 0,
            payload: Payload::Bytes(bytes),
        };
        self.push(frame, Kind::Counted, true, self.cap)
    }

    /// Sends the close frame (`code` and `reason`; `None`: no status); nothing is sent
    /// after it.
    pub fn close_frame(&self, status: Option<(u16, &str)>) -> Result<(), Refused> {
        let mut payload = Vec::new();
        if let Some((code, reason)) = status {
            payload.extend_from_slice(&code.to_be_bytes());
            // A control frame's payload is at most 125 bytes (RFC 6455, 5.5).
            let mut end = reason.len().min(123);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            payload.extend_from_slice(&reason.as_bytes()[..end]);
        }
        let frame = Frame::new(CLOSE, Payload::Bytes(payload.into()));
        self.push(frame, Kind::Close, true, self.cap)
    }

    /// `now`: the frame is written here if nothing waits before it. `limit`: a counted
    /// frame is refused when that many (or `cap`) frames wait.
    fn push(&self, frame: Frame, kind: Kind, now: bool, limit: usize) -> Result<(), Refused> {
        let mut state = self.lock();
        self.push_locked(&mut state, frame, kind, now, limit)
    }

    fn push_locked(
        &self,
        state: &mut State,
        frame: Frame,
        kind: Kind,
        now: bool,
        limit: usize,
    ) -> Result<(), Refused> {
        if state.closing || state.failed || state.sink.is_none() {
            return Err(Refused::Closed);
        }
        if kind == Kind::Counted && state.waiting.len() >= limit.min(self.cap) {
            return Err(Refused::Full);
        }
        state.closing = kind == Kind::Close;
        // A held ping goes first, in the same write (not before a close: nothing will
        // answer it).
        let rider = state.rider.take().filter(|_| kind != Kind::Close);
        let frames = [
            rider.map(|r| {
                r.pinger.written(r.frame.payload());
                r.frame
            }),
            Some(frame),
        ];
        // Bytes written of the frames, in order.
        let mut done = 0;
        if let (true, true, Some(sink)) = (now, state.waiting.is_empty(), &state.sink) {
            let mut slices = [IoSlice::new(&[]); 4];
            let mut k = 0;
            for slice in frames.iter().flatten().flat_map(|f| f.slices(0)) {
                slices[k] = slice;
                k += 1;
            }
            match sink.try_write(&slices[..k]) {
                Ok(n) => done = n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => {
                    state.failed = true;
                    self.waker.wake();
                    return Err(Refused::Closed);
                }
            }
        }
        let was_empty = state.waiting.is_empty();
        for frame in frames.into_iter().flatten() {
            if done >= frame.len() {
                done -= frame.len();
                continue;
            }
            if state.waiting.is_empty() {
                state.written = done;
            }
            done = 0;
            state.waiting.push_back(frame);
        }
        if was_empty && !state.waiting.is_empty() {
            // The connection's task waits for the socket to take the rest.
            self.waker.wake();
        }
        Ok(())
    }

    /// Frames waiting (not yet taken by the socket, the first maybe in part).
    pub fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    pub fn max_waiting(&self) -> usize {
        self.cap
    }

    /// The wire takes no more frames.
    pub fn is_closed(&self) -> bool {
        let state = self.lock();
        state.closing || state.failed || state.sink.is_none()
    }

    /// The connection's task: writes what waits, as far as the socket takes it; registers
    /// the task to be woken when more can be written or another frame starts waiting.
    /// `Ready(Ok)`: nothing waits. `Err`: a write failed, the client is gone.
    pub fn poll_write_out(&self, cx: &mut Context<'_>) -> Poll<Result<(), ()>> {
        self.waker.register(cx.waker());
        let mut state = self.lock();
        let state = &mut *state;
        loop {
            if state.failed {
                return Poll::Ready(Err(()));
            }
            let Some(sink) = state.sink.as_mut() else {
                return Poll::Ready(Ok(()));
            };
            if state.waiting.is_empty() {
                if state.waiting.capacity() > KEPT {
                    state.waiting = VecDeque::new();
                }
                return Poll::Ready(Ok(()));
            }
            let mut slices = Vec::with_capacity(2 * GATHER);
            let mut from = state.written;
            for frame in state.waiting.iter().take(GATHER) {
                slices.extend(frame.slices(from));
                from = 0;
            }
            let mut n = match sink.poll_write(cx, &slices) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    drop(slices);
                    state.failed = true;
                    return Poll::Ready(Err(()));
                }
                Poll::Ready(Ok(n)) => n,
            };
            drop(slices);
            // Pops what was written whole; the rest of a frame stays first.
            while n > 0 {
                let left = state.waiting[0].len() - state.written;
                if n >= left {
                    n -= left;
                    state.waiting.pop_front();
                    state.written = 0;
                } else {
                    state.written += n;
                    n = 0;
                }
            }
        }
    }

    /// The connection ended: the socket's write side is shut and nothing more is taken.
    pub fn shut(&self) {
        let (sink, waiting) = {
            let mut state = self.lock();
            state.closing = true;
            state.rider = None;
            (state.sink.take(), std::mem::take(&mut state.waiting))
        };
        // Dropped without the lock held.
        drop(waiting);
        drop(sink);
    }
}

/// The websocket layer's stream: reads from the socket, writes through the wire (its
/// pongs and close echo then keep their place among the frames everyone else sends).
pub struct Duplex {
    read: tokio::net::tcp::OwnedReadHalf,
    wire: std::sync::Arc<Wire>,
}

impl Duplex {
    pub fn new(read: tokio::net::tcp::OwnedReadHalf, wire: std::sync::Arc<Wire>) -> Duplex {
        Duplex { read, wire }
    }
}

impl tokio::io::AsyncRead for Duplex {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.read).poll_read(cx, buf)
    }
}

impl AsyncWrite for Duplex {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        // Taken whole or refused whole: a frame of the websocket layer is never split by
        // another sender's.
        match self.wire.raw(Bytes::copy_from_slice(buf)) {
            Ok(()) => Poll::Ready(Ok(buf.len())),
            Err(_) => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
        }
    }

    /// The wire writes what it was given (the connection's task writes out what waits).
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;

/// A connected pair of loopback sockets: the client's end, and the server's end split
/// into its read side and a wire on its write side (`cap` frames may wait).
#[cfg(test)]
pub(crate) async fn socket_pair(
    cap: usize,
) -> (
    tokio::net::TcpStream,
    tokio::net::tcp::OwnedReadHalf,
    Arc<Wire>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (tcp, _) = listener.accept().await.unwrap();
    let (read, write) = tcp.into_split();
    (client, read, Arc::new(Wire::new(write, cap)))
}
