use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;

use super::*;

/// A socket that takes `budget` bytes and then nothing until given more.
#[derive(Clone, Default)]
struct Fake(Arc<Mutex<FakeState>>);

#[derive(Default)]
struct FakeState {
    bytes: Vec<u8>,
    budget: usize,
    fail: bool,
    writes: usize,
    waker: Option<Waker>,
}

impl Fake {
    fn taking(budget: usize) -> Fake {
        let fake = Fake::default();
        fake.0.lock().unwrap().budget = budget;
        fake
    }

    fn give(&self, more: usize) {
        let mut s = self.0.lock().unwrap();
        s.budget += more;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    fn write(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut s = self.0.lock().unwrap();
        if s.fail {
            return Err(io::ErrorKind::ConnectionReset.into());
        }
        if s.budget == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        s.writes += 1;
        let mut n = 0;
        for buf in bufs {
            let take = buf.len().min(s.budget);
            s.bytes.extend_from_slice(&buf[..take]);
            s.budget -= take;
            n += take;
        }
        Ok(n)
    }

    /// The frames written, as (opcode, payload).
    fn frames(&self) -> Vec<(u8, Vec<u8>)> {
        let s = self.0.lock().unwrap();
        let mut out = Vec::new();
        let mut b = &s.bytes[..];
        while !b.is_empty() {
            assert_eq!(b[0] & 0xf0, 0x80, "FIN set, no extension bits");
            assert_eq!(b[1] & 0x80, 0, "a server's frames are not masked");
            let (len, at) = match b[1] & 0x7f {
                126 => (u16::from_be_bytes([b[2], b[3]]) as usize, 4),
                127 => (
                    u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                    10,
                ),
                n => (n as usize, 2),
            };
            out.push((b[0] & 0x0f, b[at..at + len].to_vec()));
            b = &b[at + len..];
        }
        out
    }
}

impl Sink for Fake {
    fn try_write(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.write(bufs)
    }

    fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.write(bufs) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.0.lock().unwrap().waker = Some(cx.waker().clone());
                Poll::Pending
            }
            other => Poll::Ready(other),
        }
    }
}

fn text(s: &str) -> Utf8Bytes {
    Utf8Bytes::from(s.to_string())
}

/// A waker that counts its wakes.
fn counting_waker() -> (Arc<AtomicUsize>, Waker) {
    struct Count(Arc<AtomicUsize>);
    impl std::task::Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let count = Arc::new(AtomicUsize::new(0));
    (count.clone(), Waker::from(Arc::new(Count(count))))
}

fn write_out(wire: &Wire) -> Poll<Result<(), ()>> {
    wire.poll_write_out(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_frame_the_socket_takes_is_written_at_once_in_one_write() {
    let fake = Fake::taking(1 << 20);
    let wire = Wire::new(fake.clone(), 4);
    wire.send(text("{\"t\":\"event\"}")).unwrap();
    assert_eq!(wire.waiting(), 0);
    assert_eq!(fake.0.lock().unwrap().writes, 1);
    assert_eq!(fake.frames(), vec![(0x1, b"{\"t\":\"event\"}".to_vec())]);
}

#[test]
fn every_payload_length_gets_the_header_of_its_size() {
    let fake = Fake::taking(1 << 20);
    let wire = Wire::new(fake.clone(), 4);
    let lens = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000];
    for len in lens {
        wire.send(text(&"x".repeat(len))).unwrap();
    }
    let frames = fake.frames();
    let got: Vec<usize> = frames.iter().map(|(_, p)| p.len()).collect();
    assert_eq!(got, lens);
    // The shortest header that holds the length (RFC 6455, 5.2).
    let bytes = fake.0.lock().unwrap().bytes.clone();
    assert_eq!(bytes[1], 0);
    assert_eq!(&bytes[2..4], &[0x81, 1]);
}

#[test]
fn what_the_socket_does_not_take_waits_and_later_frames_wait_behind_it() {
    let fake = Fake::taking(5);
    let wire = Wire::new(fake.clone(), 8);
    wire.send(text("first frame")).unwrap();
    assert_eq!(wire.waiting(), 1, "the first frame's rest waits");
    wire.send(text("second")).unwrap();
    wire.ping(Bytes::from_static(b"p1")).unwrap();
    assert_eq!(wire.waiting(), 3, "nothing jumps the queue");
    assert_eq!(
        fake.0.lock().unwrap().writes,
        1,
        "no write while frames wait"
    );
    assert!(write_out(&wire).is_pending());
    fake.give(7);
    assert!(write_out(&wire).is_pending());
    fake.give(1 << 10);
    assert_eq!(write_out(&wire), Poll::Ready(Ok(())));
    assert_eq!(wire.waiting(), 0);
    assert_eq!(
        fake.frames(),
        vec![
            (0x1, b"first frame".to_vec()),
            (0x1, b"second".to_vec()),
            (0x9, b"p1".to_vec()),
        ]
    );
    // Nothing waits: the next frame goes straight out again.
    wire.send(text("third")).unwrap();
    assert_eq!(wire.waiting(), 0);
    assert_eq!(fake.frames().last().unwrap().1, b"third");
}

#[test]
fn a_full_queue_refuses_every_frame_but_the_close() {
    let fake = Fake::taking(0);
    let wire = Wire::new(fake.clone(), 2);
    wire.send(text("a")).unwrap();
    wire.ping(Bytes::from_static(b"p")).unwrap();
    assert_eq!(wire.send(text("c")), Err(Refused::Full));
    assert_eq!(wire.ping(Bytes::from_static(b"q")), Err(Refused::Full));
    // A pong of the websocket layer's, for a client that pings and does not read.
    assert_eq!(wire.raw(Bytes::from_static(&[0x8a, 0])), Err(Refused::Full));
    assert_eq!(wire.waiting(), 2, "a refused frame changes nothing");
    wire.close_frame(Some((1008, "slow"))).unwrap();
    assert_eq!(wire.waiting(), 3);
    fake.give(1 << 10);
    assert_eq!(write_out(&wire), Poll::Ready(Ok(())));
    let ops: Vec<u8> = fake.frames().iter().map(|f| f.0).collect();
    assert_eq!(ops, [0x1, 0x9, 0x8]);
}

#[test]
fn nothing_is_sent_after_the_close_frame() {
    let fake = Fake::taking(1 << 10);
    let wire = Wire::new(fake.clone(), 4);
    wire.send(text("bye soon")).unwrap();
    wire.close_frame(Some((1008, "too slow"))).unwrap();
    assert!(wire.is_closed());
    assert_eq!(wire.send(text("late")), Err(Refused::Closed));
    assert_eq!(wire.ping(Bytes::new()), Err(Refused::Closed));
    let frames = fake.frames();
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1].0, 0x8);
    assert_eq!(&frames[1].1[..2], &1008u16.to_be_bytes());
    assert_eq!(&frames[1].1[2..], b"too slow");
}

#[test]
fn a_close_reason_is_cut_to_what_a_control_frame_holds() {
    let fake = Fake::taking(1 << 10);
    let wire = Wire::new(fake.clone(), 4);
    let long = "é".repeat(100);
    wire.close_frame(Some((1000, &long))).unwrap();
    let payload = &fake.frames()[0].1;
    assert!(payload.len() <= 125);
    assert!(
        std::str::from_utf8(&payload[2..]).is_ok(),
        "cut on a character"
    );
}

#[test]
fn a_failed_write_closes_the_wire_and_tells_the_connection() {
    let fake = Fake::taking(1 << 10);
    fake.0.lock().unwrap().fail = true;
    let wire = Wire::new(fake.clone(), 4);
    assert_eq!(wire.send(text("x")), Err(Refused::Closed));
    assert!(wire.is_closed());
    assert_eq!(write_out(&wire), Poll::Ready(Err(())));
}

#[test]
fn a_shut_wire_drops_its_socket_and_takes_nothing() {
    let fake = Fake::taking(0);
    let wire = Wire::new(fake.clone(), 4);
    wire.send(text("x")).unwrap();
    wire.shut();
    assert!(wire.is_closed());
    assert_eq!(wire.waiting(), 0);
    assert_eq!(wire.send(text("y")), Err(Refused::Closed));
    assert_eq!(Arc::strong_count(&fake.0), 1, "the sink was dropped");
}

#[test]
fn the_connection_is_woken_when_a_frame_starts_waiting() {
    let (count, waker) = counting_waker();
    let fake = Fake::taking(0);
    let wire = Wire::new(fake.clone(), 4);
    assert_eq!(
        wire.poll_write_out(&mut Context::from_waker(&waker)),
        Poll::Ready(Ok(()))
    );
    wire.send(text("x")).unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 1, "woken: a frame waits");
    assert!(wire
        .poll_write_out(&mut Context::from_waker(&waker))
        .is_pending());
    wire.send(text("y")).unwrap();
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "already waiting for the socket"
    );
    fake.give(1 << 10);
    assert_eq!(count.load(Ordering::SeqCst), 2, "the socket woke it");
    assert_eq!(
        wire.poll_write_out(&mut Context::from_waker(&waker)),
        Poll::Ready(Ok(()))
    );
}

#[test]
fn a_crowds_frame_is_left_to_the_connection_and_keeps_its_place() {
    let (count, waker) = counting_waker();
    let fake = Fake::taking(1 << 20);
    let wire = Wire::new(fake.clone(), 4);
    assert!(wire
        .poll_write_out(&mut Context::from_waker(&waker))
        .is_ready());
    wire.send_watched(text("for a crowd"), 4, false).unwrap();
    assert_eq!(
        fake.0.lock().unwrap().writes,
        0,
        "not written by the sender"
    );
    assert_eq!(wire.waiting(), 1);
    assert_eq!(count.load(Ordering::SeqCst), 1, "the connection is woken");
    // A frame sent at once meanwhile waits behind it.
    wire.send(text("a seat's")).unwrap();
    assert_eq!(wire.waiting(), 2);
    assert_eq!(
        wire.poll_write_out(&mut Context::from_waker(&waker)),
        Poll::Ready(Ok(()))
    );
    assert_eq!(fake.0.lock().unwrap().writes, 1, "both in one writev");
    let payloads: Vec<Vec<u8>> = fake.frames().into_iter().map(|f| f.1).collect();
    assert_eq!(payloads, [b"for a crowd".to_vec(), b"a seat's".to_vec()]);
}

#[test]
fn a_watched_frame_is_refused_past_its_backlog_and_a_seats_is_not() {
    let fake = Fake::taking(0);
    let wire = Wire::new(fake.clone(), 4);
    wire.send(text("a")).unwrap();
    wire.send_watched(text("b"), 2, true).unwrap();
    assert_eq!(wire.send_watched(text("c"), 2, true), Err(Refused::Full));
    assert_eq!(wire.waiting(), 2, "a refused frame changes nothing");
    // The rest of the queue is the connection's own.
    wire.send(text("d")).unwrap();
    wire.send(text("e")).unwrap();
    assert_eq!(wire.send(text("f")), Err(Refused::Full));
    // No backlog at all: refused even when nothing waits.
    let empty = Wire::new(Fake::taking(1 << 10), 4);
    assert_eq!(empty.send_watched(text("g"), 0, true), Err(Refused::Full));
}

/// A held ping is answerable once it is written, and timed from then.
fn held(wire: &Wire, pinger: &Arc<Pinger>) -> [u8; 8] {
    let payload = pinger.next_held();
    wire.ping_with_next(payload, pinger.clone()).unwrap();
    payload
}

#[tokio::test(start_paused = true)]
async fn a_held_ping_goes_out_with_the_next_frame_in_one_write_and_first() {
    let fake = Fake::taking(1 << 20);
    let wire = Wire::new(fake.clone(), 4);
    let pinger = Arc::new(Pinger::default());
    let payload = held(&wire, &pinger);
    assert_eq!(fake.0.lock().unwrap().writes, 0, "held, not written");
    assert_eq!(wire.waiting(), 0);
    let later = tokio::time::Instant::now() + std::time::Duration::from_millis(30);
    assert_eq!(pinger.answer(&payload, later), None, "not on the wire yet");
    tokio::time::advance(std::time::Duration::from_millis(500)).await;
    wire.send(text("{\"t\":\"event\"}")).unwrap();
    assert_eq!(fake.0.lock().unwrap().writes, 1, "one write for both");
    assert_eq!(
        fake.frames(),
        vec![
            (0x9, payload.to_vec()),
            (0x1, b"{\"t\":\"event\"}".to_vec())
        ]
    );
    let later = tokio::time::Instant::now() + std::time::Duration::from_millis(30);
    assert_eq!(
        pinger.answer(&payload, later),
        Some(30),
        "timed from the write, not from the hold"
    );
    // Taken: the next frame goes alone.
    wire.send(text("next")).unwrap();
    assert_eq!(fake.frames().len(), 3);
    assert_eq!(wire.release_ping(), Ok(false), "nothing held any more");
}

#[test]
fn a_held_ping_no_frame_took_is_written_alone_when_released() {
    let fake = Fake::taking(1 << 20);
    let wire = Wire::new(fake.clone(), 4);
    let pinger = Arc::new(Pinger::default());
    assert_eq!(wire.release_ping(), Ok(false));
    let payload = held(&wire, &pinger);
    assert_eq!(wire.release_ping(), Ok(true));
    assert_eq!(fake.frames(), vec![(0x9, payload.to_vec())]);
    assert!(pinger
        .answer(&payload, tokio::time::Instant::now())
        .is_some());
    assert_eq!(wire.release_ping(), Ok(false), "written once");
}

#[test]
fn a_ping_and_a_frame_the_socket_takes_in_part_keep_their_order() {
    // Less than the ping (10 bytes) and the frame together.
    let fake = Fake::taking(13);
    let wire = Wire::new(fake.clone(), 4);
    let pinger = Arc::new(Pinger::default());
    let payload = held(&wire, &pinger);
    wire.send(text("a frame of some length")).unwrap();
    assert_eq!(
        wire.waiting(),
        1,
        "the frame's rest waits; the ping went whole"
    );
    wire.send(text("after")).unwrap();
    fake.give(1 << 10);
    assert_eq!(write_out(&wire), Poll::Ready(Ok(())));
    assert_eq!(
        fake.frames(),
        vec![
            (0x9, payload.to_vec()),
            (0x1, b"a frame of some length".to_vec()),
            (0x1, b"after".to_vec()),
        ]
    );
    // Cut inside the ping itself.
    let fake = Fake::taking(4);
    let wire = Wire::new(fake.clone(), 4);
    let payload = held(&wire, &pinger);
    wire.send(text("x")).unwrap();
    assert_eq!(wire.waiting(), 2, "the ping's rest and the frame wait");
    fake.give(1 << 10);
    assert_eq!(write_out(&wire), Poll::Ready(Ok(())));
    assert_eq!(
        fake.frames(),
        vec![(0x9, payload.to_vec()), (0x1, b"x".to_vec())]
    );
}

#[test]
fn a_held_ping_waits_behind_frames_already_waiting_and_never_follows_a_close() {
    let fake = Fake::taking(0);
    let wire = Wire::new(fake.clone(), 4);
    let pinger = Arc::new(Pinger::default());
    wire.send(text("stuck")).unwrap();
    let payload = held(&wire, &pinger);
    assert_eq!(wire.waiting(), 2, "queued at once behind what waits");
    fake.give(1 << 10);
    assert_eq!(write_out(&wire), Poll::Ready(Ok(())));
    assert_eq!(
        fake.frames(),
        vec![(0x1, b"stuck".to_vec()), (0x9, payload.to_vec())]
    );
    // Held, then the connection closes: the close frame goes alone.
    let fake = Fake::taking(1 << 10);
    let wire = Wire::new(fake.clone(), 4);
    let payload = held(&wire, &pinger);
    wire.close_frame(None).unwrap();
    assert_eq!(fake.frames(), vec![(0x8, Vec::new())]);
    assert_eq!(wire.release_ping(), Ok(false));
    assert_eq!(pinger.answer(&payload, tokio::time::Instant::now()), None);
}

/// On a real socket whose client does not read: frames are written straight until the
/// socket is full, the rest wait, and once the client reads, the connection's task writes
/// them out (woken by the socket: the full socket was reported to tokio), all in order.
#[tokio::test]
async fn frames_a_full_socket_did_not_take_go_out_in_order_once_the_client_reads() {
    use tokio::io::AsyncReadExt;
    let (mut client, _read, wire) = socket_pair(100_000).await;
    let (frames, body) = (4_000, "x".repeat(1_000));
    for i in 0..frames {
        wire.send(format!("{i:05}{body}").into()).unwrap();
    }
    assert!(
        wire.waiting() > 0,
        "4 MB: more than the socket takes at once"
    );
    let writer = {
        let wire = wire.clone();
        tokio::spawn(async move { std::future::poll_fn(|cx| wire.poll_write_out(cx)).await })
    };
    let mut got = vec![0u8; frames * (4 + 5 + body.len())];
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        client.read_exact(&mut got),
    )
    .await
    .expect("every frame arrives")
    .unwrap();
    for (i, frame) in got.chunks(4 + 5 + body.len()).enumerate() {
        assert_eq!(
            frame[..2],
            [0x81, 126],
            "frame {i}: a text frame, 16-bit length"
        );
        assert_eq!(
            &frame[4..9],
            format!("{i:05}").as_bytes(),
            "frame {i} in its place"
        );
    }
    assert_eq!(writer.await.unwrap(), Ok(()));
    assert_eq!(wire.waiting(), 0);
}
