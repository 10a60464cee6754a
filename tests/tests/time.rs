//! Server time and lag: pings both ways, and the idle cut-off.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use protocol::wire::{ClientMessage, ServerMessage};
use tamsk_tests::*;

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test]
async fn server_pings_measure_lag_and_pongs_give_server_time() {
    let server = server_pinging_every(100).await;
    let mut c = Client::new_player(&server, "Clocky").await;
    // The server's websocket pings are answered by the websocket library itself.
    let rtt = match c.recv_frame().await {
        Some(ServerMessage::Lag { rtt_ms }) => rtt_ms,
        other => panic!("expected lag, got {other:?}"),
    };
    assert!(rtt < 1_000, "rtt {rtt}");
    // A client's ping gets the server's time and the lag measured on this connection.
    c.send(&ClientMessage::Ping {
        client_ms: Some(5),
        lag_ms: None,
    })
    .await;
    loop {
        match c.recv_frame().await {
            Some(ServerMessage::Pong {
                client_ms,
                server_ms,
                lag_ms,
            }) => {
                assert_eq!(client_ms, Some(5));
                assert!(server_ms.abs_diff(unix_ms()) < 5_000);
                assert!(lag_ms.is_some());
                break;
            }
            Some(ServerMessage::Ping { nonce, .. }) => c.send(&ClientMessage::Pong { nonce }).await,
            Some(ServerMessage::Lag { .. }) => continue,
            other => panic!("expected pong, got {other:?}"),
        }
    }
}

/// A server that closes a connection silent for 300 ms.
async fn idle_server() -> TestServer {
    TestServer::start_with(server::Config {
        idle_timeout: Duration::from_millis(300),
        ..test_config()
    })
    .await
}

#[tokio::test]
async fn a_silent_connection_is_closed() {
    let server = idle_server().await;
    let mut c = Client::new_player(&server, "Silent").await;
    assert_eq!(c.closed().await, Some(1008));
}

/// A connection that keeps pinging but never says hello is closed once the idle timeout
/// since it opened has passed (before, its pings kept it, and its slot, for good).
#[tokio::test]
async fn a_connection_that_never_says_hello_is_closed() {
    let server = idle_server().await;
    let mut c = Client::connect(&server).await;
    let opened = std::time::Instant::now();
    // A ping every 100 ms: never idle.
    let mut every = tokio::time::interval(Duration::from_millis(100));
    loop {
        every.tick().await;
        c.send(&ClientMessage::Ping {
            client_ms: None,
            lag_ms: None,
        })
        .await;
        match c.recv_frame().await {
            Some(ServerMessage::Pong { .. }) => continue,
            Some(ServerMessage::Error { code, .. }) => {
                assert_eq!(code, "hello_timeout");
                break;
            }
            other => panic!("expected pong or hello_timeout, got {other:?}"),
        }
    }
    assert!(opened.elapsed() >= Duration::from_millis(300));
    assert_eq!(c.closed().await, Some(1008));
}

/// The idle cut-off holds when the client's first frame is already there at the
/// connection's first turn (sent in the same packet as the upgrade request), so that turn
/// ends with the frame before the idle timer was ever looked at.
#[tokio::test]
async fn a_client_silent_after_a_pipelined_hello_is_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = idle_server().await;
    let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let mut out =
        b"GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            .to_vec();
    let hello = br#"{"type":"hello","version":1,"name":"Pipelined"}"#;
    let mask = [7u8, 1, 9, 3];
    // A final, masked text frame (a client's frames are masked).
    out.extend([0x81, 0x80 | hello.len() as u8]);
    out.extend(mask);
    out.extend(hello.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&out).await.unwrap();

    // Everything the server sends, until its close frame.
    let close_code = within("the idle close", async {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed without a close frame: {got:?}");
            got.extend(&buf[..n]);
            let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            assert!(got.starts_with(b"HTTP/1.1 101"), "{got:?}");
            let mut at = end + 4;
            // The server's frames are unmasked: opcode, length (7, 16 or 64 bits), payload.
            while at + 2 <= got.len() {
                let (opcode, len7) = (got[at] & 0x0f, (got[at + 1] & 0x7f) as usize);
                let (len, head) = match len7 {
                    126 if at + 4 <= got.len() => {
                        (u16::from_be_bytes([got[at + 2], got[at + 3]]) as usize, 4)
                    }
                    126 | 127 => break,
                    n => (n, 2),
                };
                if at + head + len > got.len() {
                    break;
                }
                if opcode == 8 {
                    let p = &got[at + head..];
                    return u16::from_be_bytes([p[0], p[1]]);
                }
                at += head + len;
            }
        }
    })
    .await;
    assert_eq!(close_code, 1008);
}
