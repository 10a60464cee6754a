//! Connecting: saying hello, a token or a guest, a refused name, pings, a lost connection
//! and the game resumed after it, the server shutting down.

use super::*;

#[test]
fn a_new_player_says_hello_with_his_name_then_seeks() {
    let t0 = Instant::now();
    let settings = Settings::blitz(Level::Three);
    let mut app = seeking(settings.clone(), None, t0);
    let hello = app.on_connected(t0);
    assert_eq!(
        hello,
        [ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some("Rita".into()),
            token: None,
            guest: false,
        }]
    );
    assert_eq!(app.phase, Phase::Hello);
    let sent = app.on_message(welcome(vec![]), t0);
    assert!(
        sent.contains(&ClientMessage::Seek {
            settings,
            rated: None
        }),
        "{sent:?}"
    );
    assert!(sent.iter().any(|m| matches!(m, ClientMessage::Ping { .. })));
    assert_eq!(app.phase, Phase::Seeking);
    assert!(app.config_dirty, "the token is to be saved");
    assert_eq!(app.me.as_ref().unwrap().token, "secret");
    assert_eq!(kinds(&app.take_output()), ["welcome"]);
}

#[test]
fn a_returning_player_presents_his_token_and_takes_his_seat_again() {
    let t0 = Instant::now();
    let mut app = seeking(Settings::level(Level::One), Some("secret"), t0);
    app.resume = Some(gid(4));
    let hello = app.on_connected(t0);
    assert!(
        matches!(&hello[0], ClientMessage::Hello { token: Some(t), name: None, .. } if t == "secret")
    );
    let sent = app.on_message(welcome(vec![gid(2), gid(4)]), t0);
    assert!(sent.contains(&ClientMessage::Join {
        game: gid(4),
        after_seq: None
    }));
    assert_eq!(app.phase, Phase::Joining(gid(4)));
}

#[test]
fn an_unknown_token_registers_again_by_name_to_play_and_as_a_guest_to_watch() {
    let t0 = Instant::now();
    let mut app = seeking(Settings::level(Level::One), Some("old"), t0);
    app.on_connected(t0);
    let sent = app.on_message(ServerMessage::error("unknown_token", "who?"), t0);
    assert_eq!(
        sent,
        [ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some("Rita".into()),
            token: None,
            guest: false,
        }]
    );
    assert!(!app.quit);

    let mut app = App::new(
        Mode::Watch { game: None },
        "Rita".into(),
        Some("old".into()),
        t0,
    );
    app.on_connected(t0);
    let sent = app.on_message(ServerMessage::error("unknown_token", "who?"), t0);
    assert_eq!(
        sent,
        [ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: None,
            token: None,
            guest: true,
        }]
    );
    assert!(!app.quit);
}

/// `tamsk games` and `tamsk watch` without a saved token register nobody: they say
/// hello as a guest, and a guest's welcome leads on to the list or the game, with no
/// account to save.
#[test]
fn games_and_watch_without_a_token_come_as_guests() {
    let t0 = Instant::now();
    for (mode, next) in [
        (Mode::Games { player: None }, ClientMessage::ListGames),
        (
            Mode::Watch {
                game: Some(GameRef::Full(gid(7))),
            },
            ClientMessage::Watch {
                game: gid(7),
                after_seq: None,
            },
        ),
    ] {
        let mut app = App::new(mode.clone(), "Rita".into(), None, t0);
        let hello = app.on_connected(t0);
        assert_eq!(
            hello,
            [ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name: None,
                token: None,
                guest: true,
            }],
            "{mode:?}"
        );
        let sent = app.on_message(
            ServerMessage::GuestWelcome {
                version: PROTOCOL_VERSION,
                server_ms: 1,
            },
            t0,
        );
        assert!(sent.contains(&next), "{mode:?}: {sent:?}");
        assert!(app.guest && app.me.is_none());
        assert!(!app.config_dirty, "no account to save");
        // Pings go on for a guest, as for a player.
        assert!(app
            .on_tick(t0 + Duration::from_secs(60))
            .iter()
            .any(|m| matches!(m, ClientMessage::Ping { .. })));

        // With a saved token, the player is himself again.
        let mut app = App::new(mode, "Rita".into(), Some("secret".into()), t0);
        assert!(matches!(
            &app.on_connected(t0)[0],
            ClientMessage::Hello { token: Some(t), guest: false, name: None, .. } if t == "secret"
        ));
    }
}

#[test]
fn a_refused_name_ends_the_session_with_the_reason() {
    let t0 = Instant::now();
    let mut app = App::new(Mode::Watch { game: None }, "\u{1b}x".into(), None, t0);
    app.on_connected(t0);
    app.on_message(
        ServerMessage::error(
            "bad_name",
            "the name contains an unprintable character U+001B",
        ),
        t0,
    );
    assert!(app.quit);
    assert_eq!(app.exit_code, 1);
    let out = app.take_output();
    assert!(out[0].text.contains("U+001B"), "{}", out[0].text);
    assert!(!out[0].text.contains("bad_name"), "words for people");
    assert_eq!(out[0].json()["code"], "bad_name", "the code for programs");
}

#[test]
fn pings_are_answered_and_the_round_trip_is_measured() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    let sent = app.on_message(
        ServerMessage::Ping {
            nonce: 9,
            server_ms: 0,
        },
        t0,
    );
    assert_eq!(sent, [ClientMessage::Pong { nonce: 9 }]);
    // Our own ping every few seconds, stamped with local time; the pong gives the lag.
    assert!(app.on_tick(t0 + Duration::from_secs(1)).is_empty());
    let t = t0 + PING_EVERY + Duration::from_millis(1);
    let sent = app.on_tick(t);
    let [ClientMessage::Ping {
        client_ms: Some(sent_ms),
        ..
    }] = sent[..]
    else {
        panic!("{sent:?}")
    };
    app.on_message(
        ServerMessage::Pong {
            client_ms: Some(sent_ms),
            server_ms: 0,
            lag_ms: None,
        },
        t + Duration::from_millis(42),
    );
    assert_eq!(app.lag_ms, Some(42));
    assert_eq!(app.game.as_ref().unwrap().clock.one_way_ms(), 21);
}

/// Black, seated in game 1 after Red's first move, loses his connection and is welcomed
/// back: the app (joining again) and the join it sent.
fn reconnected(t0: Instant) -> (App, ClientMessage) {
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 100);
    app.on_message(ev, t0);
    app.on_disconnected("connection reset");
    assert!(!app.connected);
    let hello = app.on_connected(t0);
    assert!(matches!(&hello[0], ClientMessage::Hello { token: Some(t), .. } if t == "secret"));
    let sent = app.on_message(welcome(vec![gid(1)]), t0);
    let join = ClientMessage::Join {
        game: gid(1),
        after_seq: Some(1),
    };
    assert!(sent.contains(&join), "{sent:?}");
    (app, join)
}

#[test]
fn after_a_lost_connection_the_game_is_resumed_after_the_last_event() {
    let t0 = Instant::now();
    let (mut app, _) = reconnected(t0);
    let sent = app.on_message(
        ServerMessage::Resumed {
            game: gid(1),
            after_seq: 1,
            seat: Some(Player::Black),
        },
        t0,
    );
    assert!(sent.is_empty());
    assert_eq!(app.phase, Phase::InGame);
}

#[test]
fn a_game_moving_to_another_node_is_joined_again_a_second_later() {
    let t0 = Instant::now();
    let (mut app, join) = reconnected(t0);
    // The node we reach does not serve the game yet: another node is taking it over.
    let mut moving = ServerMessage::error("game_moving", "another node takes it over");
    if let ServerMessage::Error { game, .. } = &mut moving {
        *game = Some(gid(1));
    }
    assert!(app.on_message(moving, t0).is_empty());
    assert_eq!(
        app.phase,
        Phase::Joining(gid(1)),
        "still joining, not given up"
    );
    assert!(kinds(&app.take_output()).contains(&"rejoining"));
    let joins = |sent: &[ClientMessage]| sent.iter().filter(|m| **m == join).count();
    assert_eq!(joins(&app.on_tick(t0 + REJOIN_AFTER / 2)), 0);
    assert_eq!(joins(&app.on_tick(t0 + REJOIN_AFTER)), 1, "asked again");
    assert_eq!(joins(&app.on_tick(t0 + REJOIN_AFTER * 3)), 0, "once");
}

#[test]
fn a_game_that_moved_off_our_node_is_joined_again_after_the_last_event() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 100);
    app.on_message(ev, t0);
    app.take_output();
    // Our node lost the game (a stall, a NATS outage), the connection stays open.
    let mut moved = ServerMessage::error("game_moved", "another node runs this game now");
    if let ServerMessage::Error { game, .. } = &mut moved {
        *game = Some(gid(1));
    }
    let sent = app.on_message(moved, t0);
    assert_eq!(
        sent,
        [ClientMessage::Join {
            game: gid(1),
            after_seq: Some(1)
        }]
    );
    assert_eq!(app.phase, Phase::Joining(gid(1)));
    assert!(kinds(&app.take_output()).contains(&"rejoining"));
    // The node that runs it now sends a snapshot: the game goes on.
    fake.act(Player::Black, mv("a1", "b1", true), 200);
    app.on_message(fake.snapshot(Some(Player::Black), 300), t0);
    assert_eq!(app.phase, Phase::InGame);
    assert_eq!(app.game.as_ref().map(|g| g.seq), Some(2));
}

#[test]
fn the_server_shutting_down_is_said() {
    let t0 = Instant::now();
    let (mut app, _) = finder(Find::Seek, t0);
    app.on_frame(
        ServerFrame::Lobby(LobbyMessage::ShuttingDown {
            drain_ms: 30_000,
            server_ms: 0,
        }),
        t0,
    );
    assert_eq!(
        app.take_output()[0].text,
        "The server is shutting down: no new games; live games may go on for 30 s"
    );
}

#[test]
fn the_connection_lost_line_goes_once_connected_again() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::Three));
    let mut app = greeted(&fake, t0);
    app.on_disconnected("reset");
    assert!(app
        .status
        .as_ref()
        .is_some_and(|(_, s)| s.starts_with("Connection lost")));
    app.on_connected(t0);
    assert_eq!(app.status, None);
}
