//! The server as a whole: health endpoint, shutdown.

use protocol::game::{AbortReason, Event};
use protocol::settings::{Level, Settings};
use tamsk_tests::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn http_get(server: &TestServer, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    within("http response", s.read_to_string(&mut out))
        .await
        .unwrap();
    out
}

#[tokio::test]
async fn healthz_answers_beside_the_websocket() {
    let server = TestServer::start().await;
    let resp = http_get(&server, "/healthz").await;
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.ends_with("ok\n"), "{resp}");
    let resp = http_get(&server, "/nothing").await;
    assert!(resp.starts_with("HTTP/1.1 404"), "{resp}");
    // A plain GET on /ws is not an upgrade.
    let resp = http_get(&server, "/ws").await;
    assert!(!resp.starts_with("HTTP/1.1 2"), "{resp}");
}

/// On shutdown without resumption, live games are aborted (announced to the players),
/// connections closed with "going away", and `run` returns. (With resumption, the
/// default, they are taken up at the next start: tests/restart.rs.)
#[tokio::test]
async fn shutdown_aborts_live_games_and_returns() {
    let server = TestServer::start_with(server::Config {
        resume_games: false,
        ..test_config()
    })
    .await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Two)).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    server.stop().await;
    for p in [&mut red, &mut black] {
        let (_, e) = p
            .until("abort", |e| matches!(e, Event::GameAborted { .. }))
            .await;
        assert!(matches!(
            e,
            Event::GameAborted {
                reason: AbortReason::Shutdown,
                ..
            }
        ));
        assert_eq!(p.client.closed().await, Some(1001));
    }
}
