//! Finding a game: watching and listing live games, each way of finding one, hosting and
//! challenges, a watcher following a rematch, a private game watched by its code.

use super::*;

#[test]
fn watching_without_a_game_lists_the_live_ones_to_pick_from() {
    let t0 = Instant::now();
    let mut app = App::new(Mode::Watch { game: None }, "w".into(), None, t0);
    app.on_connected(t0);
    let sent = app.on_message(welcome(vec![]), t0);
    assert!(sent.contains(&ClientMessage::ListGames));
    let summary = |id, state: &str| GameSummary {
        game: id,
        level: Level::Three,
        settings: Settings::level(Level::Three),
        red: protocol::wire::PlayerRef {
            player_id: "a".into(),
            name: "Ann\u{7}".into(),
            rating: None,
        },
        black: protocol::wire::PlayerRef {
            player_id: "b".into(),
            name: "Bo".into(),
            rating: None,
        },
        move_count: 12,
        watchers: 2,
        state: state.into(),
        rated: false,
        tc: None,
    };
    app.take_output();
    app.on_message(
        ServerMessage::Games {
            games: vec![
                summary(gid(3), "playing"),
                summary(gid(4), "finished"),
                summary(gid(5), "playing"),
            ],
        },
        t0,
    );
    assert_eq!(app.phase, Phase::Picking);
    assert_eq!(app.games.len(), 2, "finished games are not offered");
    let out = app.take_output();
    assert_eq!(
        out[0].text,
        "#00000003  Ann? (Red) vs Bo (Black)  Level 3, hourglasses 180 s, 15-second timer 15 s  12 moves  2 watching"
    );
    // Down, Enter: game 5.
    app.on_key(key(KeyCode::Down), t0);
    let sent = app.on_key(key(KeyCode::Enter), t0);
    assert_eq!(
        sent,
        [ClientMessage::Watch {
            game: gid(5),
            after_seq: None
        }]
    );
    // Or typed.
    app.phase = Phase::Picking;
    assert_eq!(
        app.on_line("#0003", t0),
        [ClientMessage::Watch {
            game: gid(3),
            after_seq: None
        }]
    );
    // A watcher cannot act.
    let fake = Fake::new(Settings::level(Level::Three));
    app.on_message(fake.snapshot(None, 0), t0);
    assert!(app.on_line("d1-d2", t0).is_empty());
    assert_eq!(
        app.status.clone().unwrap().1,
        "You are watching: only the players act"
    );
    assert!(app.may_lines().is_empty());
}

#[test]
fn listing_games_of_a_player_filters_by_name_and_stops() {
    let t0 = Instant::now();
    let mut app = App::new(
        Mode::Games {
            player: Some("bo".into()),
        },
        "w".into(),
        None,
        t0,
    );
    app.on_connected(t0);
    app.on_message(welcome(vec![]), t0);
    app.take_output();
    app.on_message(ServerMessage::Games { games: vec![] }, t0);
    assert!(app.quit);
    assert_eq!(app.take_output()[0].text, "No live games of bo");
}

#[test]
fn each_way_of_finding_a_game_sends_its_message() {
    let t0 = Instant::now();
    let settings = Settings::level(Level::Two);
    let cases = [
        (
            Find::Seek,
            ClientMessage::Seek {
                settings: settings.clone(),
                rated: None,
            },
        ),
        (
            Find::Bot(None),
            ClientMessage::PlayBot {
                settings: settings.clone(),
                level: None,
                rated: None,
            },
        ),
        (
            Find::Bot(Some(BotLevel::Easy)),
            ClientMessage::PlayBot {
                settings: settings.clone(),
                level: Some(BotLevel::Easy),
                rated: None,
            },
        ),
        (
            Find::Challenge("Bert".into()),
            ClientMessage::Challenge {
                to: "Bert".into(),
                settings: settings.clone(),
                rated: None,
            },
        ),
        (
            Find::Host,
            ClientMessage::Host {
                settings: settings.clone(),
            },
        ),
        (
            Find::Code("ab12cd".into()),
            ClientMessage::JoinCode {
                code: "ab12cd".into(),
            },
        ),
    ];
    for (find, expected) in cases {
        let (app, sent) = finder(find, t0);
        assert!(sent.contains(&expected), "{sent:?}");
        assert_eq!(app.phase, Phase::Seeking);
    }
}

#[test]
fn hosting_shows_the_code_to_pass_on() {
    let t0 = Instant::now();
    let (mut app, _) = finder(Find::Host, t0);
    app.on_frame(
        ServerFrame::Lobby(LobbyMessage::Hosting {
            code: "K3X9\u{1b}QZ".into(),
            settings: Settings::level(Level::Two),
        }),
        t0,
    );
    assert_eq!(app.hosting.as_deref(), Some("K3X9?QZ"));
    let out = app.take_output();
    assert_eq!(out[0].kind, "hosting");
    assert!(
        out[0]
            .text
            .ends_with("Your opponent runs: tamsk join K3X9?QZ"),
        "{}",
        out[0].text
    );
    assert_eq!(out[0].data["code"], "K3X9?QZ");
}

#[test]
fn a_declined_challenge_ends_the_session_without_a_game() {
    let t0 = Instant::now();
    let (mut app, _) = finder(Find::Challenge("Bert".into()), t0);
    app.on_lobby(
        LobbyMessage::ChallengeSent {
            challenge: 4,
            to: player("Bert"),
            settings: Settings::level(Level::Two),
            expires_ms: 60_000,
            rated: false,
        },
        t0 + Duration::from_secs(10),
    );
    let out = app.take_output();
    assert!(
        out[0].text.starts_with("Challenge sent to Bert"),
        "{}",
        out[0].text
    );
    assert!(out[0].text.contains("waiting for 50 s"), "{}", out[0].text);
    app.on_lobby(
        LobbyMessage::ChallengeClosed {
            challenge: 4,
            reason: "declined".into(),
        },
        t0,
    );
    assert!(app.quit);
    assert_eq!(app.exit_code, 1);
    let out = app.take_output();
    assert!(out
        .iter()
        .any(|o| o.text == "No game: the challenge to Bert was declined"));
}

#[test]
fn a_challenge_received_is_answered_with_y_or_by_typing() {
    let t0 = Instant::now();
    let (mut app, _) = finder(Find::Seek, t0);
    let challenged = |id| LobbyMessage::Challenged {
        challenge: id,
        from: player("Carl"),
        settings: Settings::level(Level::One),
        expires_ms: 60_000,
        rated: false,
    };
    app.on_lobby(challenged(7), t0);
    assert_eq!(app.confirm, Some(Confirm::Challenge(7)));
    assert!(app
        .status
        .clone()
        .unwrap()
        .1
        .starts_with("Carl challenges you"));
    assert_eq!(
        app.on_key(ch('y'), t0),
        [ClientMessage::AcceptChallenge { challenge: 7 }]
    );
    app.on_lobby(challenged(8), t0);
    assert_eq!(
        app.on_key(ch('n'), t0),
        [ClientMessage::DeclineChallenge { challenge: 8 }]
    );
    app.on_lobby(challenged(9), t0);
    app.on_lobby(challenged(10), t0);
    assert_eq!(
        app.on_line("accept 9", t0),
        [ClientMessage::AcceptChallenge { challenge: 9 }]
    );
    assert_eq!(
        app.on_line("decline", t0),
        [ClientMessage::DeclineChallenge { challenge: 10 }]
    );
    assert!(app.on_line("accept", t0).is_empty(), "none left");
    assert_eq!(app.status.clone().unwrap().1, "No challenge to answer");
}

#[test]
fn a_watcher_follows_the_players_into_their_rematch() {
    use protocol::wire::{GameSummary, PlayerRef};
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = App::new(
        Mode::Watch {
            game: Some(GameRef::Full(gid(1))),
        },
        "Wes".into(),
        None,
        t0,
    );
    app.on_connected(t0);
    app.on_message(welcome(vec![]), t0);
    app.on_message(fake.snapshot(None, 0), t0);
    assert!(
        app.on_tick(t0 + Duration::from_secs(3))
            .iter()
            .all(|m| !matches!(m, ClientMessage::ListGames)),
        "not while the game goes on"
    );
    let ev = fake.act(Player::Red, Action::Resign, 1_000);
    app.on_message(ev, t0 + Duration::from_secs(1));
    assert!(app.game.as_ref().unwrap().is_over());
    let at = t0 + Duration::from_secs(10);
    let sent = app.on_tick(at);
    assert_eq!(sent, vec![ClientMessage::ListGames]);
    assert!(
        !app.on_tick(at + Duration::from_millis(500))
            .contains(&ClientMessage::ListGames),
        "not at every tick"
    );
    let summary = |game, red: &str, black: &str| GameSummary {
        game,
        level: Level::One,
        settings: Settings::level(Level::One),
        red: PlayerRef {
            player_id: format!("id-{red}"),
            name: red.into(),
            rating: None,
        },
        black: PlayerRef {
            player_id: format!("id-{black}"),
            name: black.into(),
            rating: None,
        },
        move_count: 0,
        watchers: 0,
        state: "playing".into(),
        rated: false,
        tc: None,
    };
    // Another pair's game is not theirs; then the rematch, colours swapped.
    let other = ServerMessage::Games {
        games: vec![summary(gid(2), "Ann", "Bob")],
    };
    assert!(app.on_message(other, at).is_empty());
    let games = ServerMessage::Games {
        games: vec![
            summary(gid(2), "Ann", "Bob"),
            summary(gid(3), "Bert", "Rita"),
        ],
    };
    let sent = app.on_message(games, at);
    assert_eq!(
        sent,
        vec![ClientMessage::Watch {
            game: gid(3),
            after_seq: None
        }]
    );
    assert_eq!(app.phase, Phase::Joining(gid(3)));
    assert!(!app.quit);
}

#[test]
fn a_private_game_is_watched_by_its_code_again_after_a_reconnect() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let code = GameRef::Code("K7QX3M".into());
    let mut app = App::new(Mode::Watch { game: Some(code) }, "Wes".into(), None, t0);
    app.on_connected(t0);
    let sent = app.on_message(welcome(vec![]), t0);
    let code = ClientMessage::WatchCode {
        code: "K7QX3M".into(),
    };
    assert!(sent.contains(&code), "{sent:?}");
    app.on_message(fake.snapshot(None, 0), t0);
    assert_eq!(app.phase, Phase::InGame);
    app.on_disconnected("reset");
    app.on_connected(t0);
    let sent = app.on_message(welcome(vec![]), t0);
    assert!(sent.contains(&code), "{sent:?}");
    assert!(
        !sent
            .iter()
            .any(|m| matches!(m, ClientMessage::Watch { .. })),
        "{sent:?}"
    );
    // The game's node is gone (another takes it over): asked again a second later, by
    // its code too.
    let moving = ServerMessage::error("game_moving", "another node takes it over");
    assert!(app.on_message(moving, t0).is_empty());
    assert_eq!(app.on_tick(t0 + crate::app::REJOIN_AFTER), vec![code]);
    // A code that names no game ends the session with the server's words.
    let mut app = App::new(
        Mode::Watch {
            game: Some(GameRef::Code("ZZZZZZ".into())),
        },
        "Wes".into(),
        None,
        t0,
    );
    app.on_connected(t0);
    app.on_message(welcome(vec![]), t0);
    app.on_message(
        ServerMessage::error(
            "unknown_code",
            "no live game was started from the code ZZZZZZ",
        ),
        t0,
    );
    assert!(app.quit);
}

#[test]
fn a_seeking_answer_after_the_snapshot_of_its_game_leaves_the_player_in_the_game() {
    // On several nodes the lobby's `seeking` can come after the game's first frame.
    let t0 = Instant::now();
    let (mut app, _) = finder(Find::Seek, t0);
    let fake = Fake::new(Settings::level(Level::Two));
    app.on_message(fake.snapshot(Some(Player::Red), 0), t0);
    assert_eq!(app.phase, Phase::InGame);
    app.take_output();
    app.on_message(
        ServerMessage::Seeking {
            settings: Settings::level(Level::Two),
        },
        t0,
    );
    assert_eq!(app.phase, Phase::InGame);
    assert!(app.take_output().is_empty(), "nothing said of a seek");
}
