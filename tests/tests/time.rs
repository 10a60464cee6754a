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
    within("hello_timeout", async {
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
    })
    .await;
    assert!(opened.elapsed() >= Duration::from_millis(300));
    assert_eq!(c.closed().await, Some(1008));
}

/// The idle cut-off holds when the client's first frame is already there at the
/// connection's first turn (sent in the same packet as the upgrade request), so that turn
/// ends with the frame before the idle timer was ever looked at.
#[tokio::test]
async fn a_client_silent_after_a_pipelined_hello_is_closed() {
    let server = idle_server().await;
    let hello = br#"{"type":"hello","version":1,"name":"Pipelined"}"#;
    let mut s =
        tamsk_tests::raw::connect_with(server.addr, &tamsk_tests::raw::text_frame(hello)).await;
    // Everything the server sends, until its close frame.
    let (_, close_code) = within(
        "the idle close",
        tamsk_tests::raw::read_until_close(&mut s, false),
    )
    .await;
    assert_eq!(close_code, 1008);
}
