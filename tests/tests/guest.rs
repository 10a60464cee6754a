//! A guest (`hello` with `"guest":true`) becomes no player: he lists games and seeks and
//! watches, is refused everything that needs a seat, and the server keeps no record of him.

use protocol::game::Action;
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::*;

async fn guest(server: &TestServer) -> Client {
    let mut c = Client::connect(server).await;
    c.send_raw(r#"{"type":"hello","version":1,"guest":true}"#)
        .await;
    match c.recv().await {
        ServerMessage::GuestWelcome { version, .. } => assert_eq!(version, PROTOCOL_VERSION),
        other => panic!("expected guest_welcome, got {other:?}"),
    }
    c
}

#[tokio::test]
async fn a_guest_watches_and_lists_but_takes_no_seat_and_is_not_registered() {
    let server = TestServer::start().await;
    // The level's own timings, with the bounds the test server fixes.
    let settings = Settings {
        abort_ms: test_config().abort_ms,
        late_release_ms: test_config().late_release_ms,
        ..Settings::level(Level::One)
    };
    let (mut red, mut black) = start_game(&server, &settings).await;
    let players = metric(server.addr, "tamsk_players_cached").await;
    let online = metric(server.addr, "tamsk_players_online").await;

    let mut g = guest(&server).await;
    g.send(&ClientMessage::ListGames).await;
    match g.recv().await {
        ServerMessage::Games { games } => {
            assert_eq!(games.iter().map(|s| s.game).collect::<Vec<_>>(), [red.game])
        }
        other => panic!("expected the games, got {other:?}"),
    }
    g.send(&ClientMessage::ListSeeks).await;
    assert!(matches!(g.recv_lobby().await, LobbyMessage::Seeks { .. }));
    g.send(&ClientMessage::Watch {
        game: red.game,
        after_seq: None,
    })
    .await;
    let mut g = Follower::await_snapshot(g).await;
    assert_eq!((g.game, g.seat), (red.game, None));

    // Everything that needs a seat: `guest`, and nothing happens.
    for msg in [
        ClientMessage::Act {
            game: red.game,
            action: Action::Resign,
            seq: None,
        },
        ClientMessage::Seek {
            settings: Settings::level(Level::One),
            rated: None,
        },
        ClientMessage::PlayBot {
            settings: Settings::level(Level::One),
            level: None,
            rated: None,
        },
        ClientMessage::Challenge {
            to: black.snapshot.black.name.clone(),
            settings: Settings::level(Level::One),
            rated: None,
        },
        ClientMessage::Host {
            settings: Settings::level(Level::One),
        },
        ClientMessage::Join {
            game: red.game,
            after_seq: None,
        },
        ClientMessage::Rematch { game: red.game },
    ] {
        g.client.send(&msg).await;
        let why = g.expect_error("guest").await;
        assert!(why.contains("name"), "{msg:?}: {why}");
    }
    g.client
        .send_raw(r#"{"type":"hello","version":1,"name":"Late"}"#)
        .await;
    g.expect_error("already_hello").await;
    g.client.sync().await;
    assert!(red.replica.is_playing());

    // The guest follows the game like any watcher.
    red.act(mv("d1", "d2", true)).await;
    let ev = red.next_event().await;
    black.catch_up_to(ev.seq).await;
    g.catch_up_to(ev.seq).await;
    assert_eq!(g.replica.move_count(), 1);

    // No player was made, nobody new is online, and no seek was opened.
    assert_eq!(metric(server.addr, "tamsk_players_cached").await, players);
    assert_eq!(metric(server.addr, "tamsk_players_online").await, online);
    g.client.send(&ClientMessage::ListSeeks).await;
    match g.client.recv_lobby().await {
        LobbyMessage::Seeks { seeks } => assert!(seeks.is_empty(), "{seeks:?}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_guest_with_a_name_or_a_token_is_refused() {
    let server = TestServer::start().await;
    let mut c = Client::connect(&server).await;
    c.send_raw(r#"{"type":"hello","version":1,"guest":true,"name":"Gus"}"#)
        .await;
    let why = c.expect_error("bad_guest").await;
    assert!(why.contains("neither"), "{why}");
    c.send_raw(r#"{"type":"hello","version":1,"guest":true,"token":"abc"}"#)
        .await;
    c.expect_error("bad_guest").await;
    // Nothing was made: the connection may still say hello, and Gus is still free.
    c.send_raw(r#"{"type":"hello","version":1,"name":"Gus"}"#)
        .await;
    assert!(matches!(c.recv().await, ServerMessage::Welcome { name, .. } if name == "Gus"));

    // Before any hello, a guest's messages are hello_first as ever.
    let mut d = Client::connect(&server).await;
    d.send(&ClientMessage::ListGames).await;
    d.expect_error("hello_first").await;
}

/// A guest is told `shutting_down` as every connection that said hello is (before: only
/// players were, so a guest watching a game heard nothing until the close).
#[tokio::test]
async fn a_guest_is_told_the_server_is_shutting_down() {
    let mut server = TestServer::start_with(server::Config {
        drain: std::time::Duration::from_millis(300),
        ..test_config()
    })
    .await;
    let mut g = guest(&server).await;
    server.begin_stop();
    match g.recv_lobby().await {
        LobbyMessage::ShuttingDown { drain_ms, .. } => assert_eq!(drain_ms, 300),
        other => panic!("expected shutting_down, got {other:?}"),
    }
    server.stop().await;
}
