//! Bad input gets a specific error, changes nothing, and leaves the connection usable.

use futures::SinkExt;
use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::*;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn bad_messages_before_and_at_hello() {
    let server = TestServer::start().await;
    let mut c = Client::connect(&server).await;
    c.send(&ClientMessage::ListGames).await;
    c.expect_error("hello_first").await;
    c.send_raw("[1, 2, 3]").await;
    c.expect_error("bad_message").await;
    c.send_raw(r#"{"type":"teleport","to":"d4"}"#).await;
    assert!(c.expect_error("unknown_message").await.contains("teleport"));
    c.send_raw(r#"{"type":"hello","version":"one"}"#).await;
    c.expect_error("bad_message").await;
    let hello = |name: &str| ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: Some(name.into()),
        token: None,
        guest: false,
    };
    c.send(&ClientMessage::Hello {
        version: 99,
        name: Some("Ann".into()),
        token: None,
        guest: false,
    })
    .await;
    assert!(c.expect_error("unsupported_version").await.contains("99"));
    for bad in [
        "",
        "a name that is much too long for us",
        "bell\u{7}",
        "new\nline",
        "evil\u{202E}txt",
        " padded",
        "\u{2800}",
        "braille\u{2800}blank",
        "mongol\u{180b}",
        "\u{301}\u{302}",
    ] {
        c.send(&hello(bad)).await;
        c.expect_error("bad_name").await;
    }
    c.send(&ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: None,
        token: Some("not-a-token".into()),
        guest: false,
    })
    .await;
    c.expect_error("unknown_token").await;
    c.send(&ClientMessage::Pong { nonce: 77 }).await;
    c.expect_error("unknown_nonce").await;
    // Still usable.
    c.send(&hello("Ann")).await;
    let ServerMessage::Welcome { name, games, .. } = c.recv().await else {
        panic!("expected welcome")
    };
    assert_eq!((name.as_str(), games.len()), ("Ann", 0));
    c.send(&hello("Ann")).await;
    c.expect_error("already_hello").await;
    c.send_raw(r#"{"type":"seek","settings":{"level":7}}"#)
        .await;
    assert!(c
        .expect_error("bad_message")
        .await
        .contains("level must be 1, 2 or 3"));
    c.send_raw(r#"{"type":"seek","settings":{"hourglass_ms":1}}"#)
        .await;
    c.expect_error("bad_message").await;
    c.send(&ClientMessage::CancelSeek).await;
    c.expect_error("not_seeking").await;
    c.send(&ClientMessage::Watch {
        game: protocol::wire::GameId::now_v7(),
        after_seq: None,
    })
    .await;
    c.expect_error("unknown_game").await;
    c.sync().await;
}

#[tokio::test]
async fn bad_actions_change_nothing() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let game = red.game;
    // Out of turn.
    black.act(mv("a1", "b1", true)).await;
    assert!(black.expect_error("not_your_turn").await.contains("Black"));
    // Another seat's hourglass.
    red.act(mv("a1", "b1", true)).await;
    red.expect_error("not_your_hourglass").await;
    // Not a neighbour, occupied, no hourglass, nothing held.
    red.act(mv("d1", "d3", true)).await;
    red.expect_error("not_adjacent").await;
    red.act(Action::Start { from: sq("d4") }).await;
    red.expect_error("no_hourglass").await;
    red.act(Action::Release { to: sq("d2") }).await;
    red.expect_error("not_holding").await;
    red.act(Action::Drop).await;
    red.expect_error("no_drop").await;
    red.act(Action::Flip).await;
    red.expect_error("no_neutral_timer").await;
    // A square that does not exist is a bad message.
    red.client
        .send_raw(&format!(
            r#"{{"type":"act","game":"{game}","action":{{"type":"start","from":"h9"}}}}"#
        ))
        .await;
    red.expect_error("bad_message").await;
    // Another game.
    red.client
        .send(&ClientMessage::Act {
            game: protocol::wire::GameId::now_v7(),
            action: Action::Resign,
            seq: None,
        })
        .await;
    red.expect_error("unknown_game").await;
    // Nothing changed: no event went out, and a fresh snapshot equals the replicas.
    assert_eq!((red.seq, black.seq), (0, 0));
    let mut viewer = Client::new_player(&server, "Viewer").await;
    viewer
        .send(&ClientMessage::Watch {
            game,
            after_seq: None,
        })
        .await;
    let watcher = Follower::await_snapshot(viewer).await;
    assert_eq!(watcher.seq, 0);
    let mut replica = red.replica.clone();
    replica.advance(watcher.replica.now());
    assert_eq!(watcher.replica, replica);
    // The connections are still usable: a legal move goes through.
    red.act(mv("d1", "d2", true)).await;
    let ev = red
        .until("the move", |e| matches!(e, Event::MoveReleased { .. }))
        .await
        .0;
    assert_eq!(ev.seq, 1);
    black.catch_up_to(1).await;
    // The finished game refuses actions with its own code.
    black.act(Action::Resign).await;
    black
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    assert_eq!(
        black.replica.outcome().and_then(|o| o.winner),
        Some(Player::Red)
    );
    red.catch_up_to(black.seq).await;
    red.act(mv("d2", "d3", true)).await;
    red.expect_error("game_over").await;
    black.act(Action::Resign).await;
    black.expect_error("game_over").await;
}

/// Sends `frame` on a fresh connection (after a hello); expects the error `code`, then
/// the close frame `close`.
async fn closes_with(server: &TestServer, frame: Message, code: &str, close: (u16, &str)) {
    let mut c = Client::new_player(server, &format!("Rude {code}")).await;
    within("send", c.ws.send(frame)).await.unwrap();
    let message = c.expect_error(code).await;
    // Said once ("malformed JSON: malformed JSON: ..." before).
    let words: Vec<&str> = message.split(": ").collect();
    assert!(words.windows(2).all(|w| w[0] != w[1]), "{message}");
    assert!(message.ends_with(": closing"), "{message}");
    assert_eq!(
        c.closed_with().await,
        Some((close.0, close.1.to_string())),
        "after {code}"
    );
}

/// Protocol violations close the connection with the code RFC 6455 gives them and a
/// reason, after an error telling why (before: no close, or 1000 "bye").
#[tokio::test]
async fn protocol_violations_close_with_rfc6455_codes() {
    let server = TestServer::start().await;
    closes_with(
        &server,
        Message::text("{\"type\": \"hello\", "),
        "bad_json",
        (1007, "invalid payload: not JSON"),
    )
    .await;
    closes_with(
        &server,
        Message::binary(vec![1u8, 2, 3]),
        "binary_frame",
        (1003, "binary frames are not accepted"),
    )
    .await;
    let not_utf8 = Frame::message(vec![b'"', 0xff, 0xfe, b'"'], OpCode::Data(Data::Text), true);
    closes_with(
        &server,
        Message::Frame(not_utf8),
        "bad_utf8",
        (1007, "invalid payload: text is not UTF-8"),
    )
    .await;
    let reserved = Frame::message(vec![1u8], OpCode::Data(Data::Reserved(3)), true);
    closes_with(
        &server,
        Message::Frame(reserved),
        "protocol_error",
        (1002, "websocket protocol error"),
    )
    .await;
    closes_with(
        &server,
        Message::text(format!(
            r#"{{"type":"ping","pad":"{}"}}"#,
            "x".repeat(70_000)
        )),
        "frame_too_large",
        (1009, "message too big"),
    )
    .await;
}

/// A client's close frame is echoed (before: the client saw 1006, no close frame).
#[tokio::test]
async fn a_clients_close_is_echoed() {
    let server = TestServer::start().await;
    let mut c = Client::new_player(&server, "Polite").await;
    let frame = CloseFrame {
        code: 1000.into(),
        reason: "done for today".into(),
    };
    within("close", c.ws.close(Some(frame))).await.unwrap();
    assert_eq!(
        c.closed_with().await,
        Some((1000, "done for today".to_string()))
    );
}

/// An action whose `seq` is older than the event that began the current turn is refused
/// `stale_action` and nothing is played (a move meant for a turn forfeited on its way is
/// not made in the next one, in a position its player has not seen); with the event seen,
/// the same move is played.
#[tokio::test]
async fn an_action_sent_before_the_turn_began_is_stale() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Two)).await;
    let game = red.game;
    let before = black.seq;
    red.act(mv("d1", "d2", true)).await;
    red.next_event().await;
    black.catch_up_to(red.seq).await;
    assert!(black.seq > before);
    let send = |seq| ClientMessage::Act {
        game,
        action: mv("a1", "b1", true),
        seq: Some(seq),
    };
    black.client.send(&send(before)).await;
    let message = black.expect_error("stale_action").await;
    assert!(message.contains("turn"), "{message}");
    // Nothing was played: the same move, decided on the last event, is.
    black.client.send(&send(black.seq)).await;
    let (_, e) = black
        .until("the move", |e| {
            matches!(
                e,
                Event::MoveReleased {
                    player: Player::Black,
                    ..
                }
            )
        })
        .await;
    assert!(matches!(e, Event::MoveReleased { .. }));
}
