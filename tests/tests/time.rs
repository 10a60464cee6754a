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
    let server = TestServer::start_with(server::Config {
        ping_interval: Duration::from_millis(100),
        ..test_config()
    })
    .await;
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

#[tokio::test]
async fn a_silent_connection_is_closed() {
    let server = TestServer::start_with(server::Config {
        idle_timeout: Duration::from_millis(300),
        ..test_config()
    })
    .await;
    let mut c = Client::new_player(&server, "Silent").await;
    assert_eq!(c.closed().await, Some(1008));
}
