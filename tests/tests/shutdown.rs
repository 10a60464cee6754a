//! Graceful shutdown: no new games, every client told, live games may finish during the
//! drain period, the rest are aborted and stored, and the server returns.

use protocol::game::{AbortReason, Action, Event};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerMessage};
use tamsk_tests::*;
use tokio::time::Duration;

#[tokio::test]
async fn shutdown_drains_live_games_then_stores_the_rest_as_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tamsk.db");
    let config = server::Config {
        drain: Duration::from_millis(500),
        // What is left after the drain is aborted (not suspended for the next start).
        resume_games: false,
        ..config_with_db(&db)
    };
    let mut server = TestServer::start_with(config.clone()).await;
    let settings = Settings::blitz(Level::One);
    let (mut red1, mut black1) = start_game(&server, &settings).await;
    let (mut red2, mut black2) = start_game(&server, &settings).await;
    red2.act(mv("d1", "d2", true)).await;
    red2.next_event().await;
    black2.catch_up_to(red2.seq).await;
    let mut sam = Client::new_player(&server, "Sam").await;
    sam.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    assert!(matches!(sam.recv().await, ServerMessage::Seeking { .. }));
    let addr = server.addr;

    server.begin_stop();
    // The seek is withdrawn and everyone is told.
    assert!(matches!(sam.recv().await, ServerMessage::SeekCancelled));
    let notice = sam.recv_lobby().await;
    assert!(
        matches!(notice, LobbyMessage::ShuttingDown { drain_ms: 500, .. }),
        "{notice:?}"
    );
    for p in [&mut red1, &mut black1, &mut red2, &mut black2] {
        assert!(matches!(p.lobby().await, LobbyMessage::ShuttingDown { .. }));
    }
    // No new games.
    sam.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    sam.expect_error("shutting_down").await;
    sam.send(&ClientMessage::PlayBot {
        settings,
        level: None,
        rated: None,
    })
    .await;
    sam.expect_error("shutting_down").await;
    let health = http_get(addr, "/healthz", None).await;
    assert_eq!(health.status, 503);
    // A live game may still finish...
    red1.act(Action::Resign).await;
    red1.until("end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    // ...the other one is aborted once the drain period is over.
    for p in [&mut red2, &mut black2] {
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
    let (finished, aborted) = (red1.game, red2.game);
    server.stop().await;

    // Both are stored.
    let server = TestServer::start_with(config).await;
    let v = get_json(server.addr, &format!("/games/{finished}")).await;
    assert_eq!(
        (v["state"].as_str(), v["reason"].as_str()),
        (Some("finished"), Some("resigned"))
    );
    let v = get_json(server.addr, &format!("/games/{aborted}")).await;
    assert_eq!(
        (v["state"].as_str(), v["reason"].as_str()),
        (Some("aborted"), Some("shutdown"))
    );
    assert_eq!(v["move_count"], 1);
    assert_eq!(v["winner"], serde_json::Value::Null);
}

/// A connection opened before the drain but silent until it began (new connections are
/// not accepted during it) is told `shutting_down` when it says hello, with the time left,
/// as a player or as a guest; before, it was only refused new games with it.
#[tokio::test]
async fn a_connection_that_says_hello_during_the_drain_is_told_at_once() {
    let mut server = TestServer::start_with(server::Config {
        drain: Duration::from_millis(5_000),
        ..test_config()
    })
    .await;
    // A game being played keeps the server draining.
    let (mut red, _black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut early = Client::new_player(&server, "Early").await;
    let mut late = Client::connect(&server).await;
    let mut guest = Client::connect(&server).await;
    server.begin_stop();
    // The drain has begun once those who said hello are told.
    assert!(matches!(
        early.recv_lobby().await,
        LobbyMessage::ShuttingDown {
            drain_ms: 5_000,
            ..
        }
    ));
    late.hello_new("Late").await;
    assert!(matches!(late.recv().await, ServerMessage::Welcome { .. }));
    guest
        .send_raw(r#"{"type":"hello","version":1,"guest":true}"#)
        .await;
    assert!(matches!(
        guest.recv().await,
        ServerMessage::GuestWelcome { .. }
    ));
    for c in [&mut late, &mut guest] {
        match c.recv_lobby().await {
            LobbyMessage::ShuttingDown { drain_ms, .. } => {
                assert!(drain_ms > 0 && drain_ms <= 5_000, "{drain_ms}")
            }
            other => panic!("expected shutting_down, got {other:?}"),
        }
    }
    red.act(Action::Resign).await;
    server.stop().await;
}
