//! The app state without a terminal or a socket: messages and keys in, state and
//! messages out.

use super::*;
use crate::testing::sq;
use crate::testing::*;
use crossterm::event::KeyCode;
use protocol::game::Glass;
use protocol::settings::Level;

fn kinds(out: &[Output]) -> Vec<&'static str> {
    out.iter().map(|o| o.kind).collect()
}

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
fn the_snapshot_makes_a_replica_and_says_what_the_player_may_do() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = greeted(&fake, t0);
    app.on_message(fake.snapshot(Some(Player::Red), 0), t0);
    assert_eq!(app.phase, Phase::InGame);
    let g = app.game.as_ref().unwrap();
    assert_eq!(g.seat, Some(Player::Red));
    assert_eq!(g.seats[1].name, "Bert");
    assert!(g.legal.contains(&mv("d1", "d2", true)));
    assert_eq!(app.seat_game(), Some(gid(1)));
    assert_eq!(
        app.cursor,
        sq("d1"),
        "the cursor starts on our first hourglass"
    );
    let out = app.take_output();
    assert_eq!(kinds(&out), ["start", "turn", "may"]);
    assert_eq!(
        out[0].text,
        "Game #00000001: you play Red (Rita) against Black (Bert) (Level 1, clock 600 s)"
    );
    assert!(
        out[2].text.starts_with("You may: move X d1→"),
        "{}",
        out[2].text
    );
    let actions = out[2].data["actions"].as_array().unwrap();
    assert!(actions.contains(&"d1-d2".into()) && actions.contains(&"d1-d2.".into()));
    assert!(
        !actions.contains(&"resign".into()),
        "always possible, not listed"
    );
}

#[test]
fn events_are_applied_to_the_replica_and_logged_in_words() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::blitz(Level::Two));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 100);
    let sent = app.on_message(ev, t0 + Duration::from_millis(100));
    assert!(sent.is_empty());
    let g = app.game.as_ref().unwrap();
    assert_eq!(g.seq, 1);
    assert_eq!(g.replica, fake.game, "an exact replica");
    assert_eq!(g.replica.turn(), Player::Black);
    let texts: Vec<&str> = app.log.iter().map(|l| l.text.as_str()).collect();
    assert!(texts.contains(&"Red moves X d1-d2"), "{texts:?}");
    assert!(texts.contains(&"Red drops a ring on d2 (31 rings left)"));
    let out = app.take_output();
    assert_eq!(out.last().unwrap().kind, "may", "Black may move now");
    // X dies 3 s after its flip, announced by an advance.
    let ev = fake.advance(3_100);
    app.on_message(ev, t0 + Duration::from_millis(3_100));
    assert!(app.log.iter().any(|l| l.text == "Red's X died on d2"));
    let g = app.game.as_ref().unwrap();
    assert!(g.replica.glass(Glass::from_label('X').unwrap()).is_dead());
}

#[test]
fn a_gap_in_the_events_asks_for_a_fresh_snapshot() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let _lost = fake.act(Player::Red, mv("d1", "d2", true), 100);
    let ev = fake.act(Player::Black, mv("g1", "f1", true), 200);
    let sent = app.on_message(ev, t0);
    assert_eq!(
        sent,
        [ClientMessage::Join {
            game: gid(1),
            after_seq: None
        }]
    );
    assert_eq!(app.game.as_ref().unwrap().seq, 0, "nothing applied");
    // The snapshot brings it up to date without a second "start" line.
    app.take_output();
    app.on_message(fake.snapshot(Some(Player::Black), 200), t0);
    assert_eq!(app.game.as_ref().unwrap().replica, fake.game);
    assert_eq!(kinds(&app.take_output())[0], "resynced");
}

#[test]
fn a_replica_that_differs_from_the_server_is_reloaded() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let ServerMessage::Event(mut ev) = fake.act(Player::Red, mv("d1", "d2", true), 100) else {
        panic!()
    };
    if let Change::Play { complete, .. } = &mut ev.change {
        *complete = true;
    }
    let sent = app.on_message(ServerMessage::Event(ev), t0);
    assert_eq!(
        sent,
        [ClientMessage::Join {
            game: gid(1),
            after_seq: None
        }]
    );
}

#[test]
fn typed_moves_become_actions_and_bad_ones_are_explained_in_place() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    let act = |action| {
        vec![ClientMessage::Act {
            game: gid(1),
            action,
        }]
    };
    assert_eq!(app.on_line("d1-d2", t0), act(mv("d1", "d2", true)));
    assert_eq!(app.on_line("  D1-D2.  ", t0), act(mv("d1", "d2", false)));
    assert_eq!(app.on_line("claim", t0), act(Action::Claim));
    assert_eq!(app.on_line("flip", t0), act(Action::Flip));
    assert_eq!(app.on_line("resign", t0), act(Action::Resign));
    assert_eq!(
        app.on_line("drop e4", t0),
        act(Action::PenaltyDrop { at: sq("e4") }),
        "not our destination: the penalty ring"
    );
    assert_eq!(
        app.on_line("start d1", t0),
        act(Action::Start { from: sq("d1") })
    );
    assert_eq!(
        app.on_line("win", t0),
        [ClientMessage::ClaimAbandonment { game: gid(1) }]
    );
    app.take_output();
    assert!(app.on_line("d1-z9", t0).is_empty());
    let (kind, text) = app.status.clone().unwrap();
    assert_eq!(kind, LogKind::Error);
    assert!(text.contains("z9") && text.contains("column 4"), "{text}");
    assert_eq!(kinds(&app.take_output()), ["error"]);
    assert!(app.on_line("quit", t0).is_empty());
    assert!(app.quit);
}

#[test]
fn drop_on_our_own_destination_is_the_regular_drop() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", false), 10);
    app.on_message(ev, t0);
    assert!(app.game.as_ref().unwrap().legal.contains(&Action::Drop));
    assert!(app.may_lines().contains(&"drop on d2".to_string()));
    assert_eq!(
        app.on_line("drop d2", t0),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Drop
        }]
    );
}

#[test]
fn keys_pick_up_an_hourglass_then_put_it_down_with_or_without_a_drop() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::blitz(Level::Three));
    let mut app = seated(&fake, Player::Red, t0);
    // 2: Red's second hourglass, Y on g4: the move starts on the server.
    let sent = app.on_key(ch('2'), t0);
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Start { from: sq("g4") }
        }]
    );
    // The cursor jumped to the first place Y may go.
    assert!(sq("g4").touches(app.cursor), "{}", app.cursor);
    let ev = fake.act(Player::Red, Action::Start { from: sq("g4") }, 50);
    app.on_message(ev, t0);
    assert!(app.log.iter().any(|l| l.text == "Red picks up Y on g4"));
    // Down moves the cursor within the column: g3.
    app.cursor = sq("g4");
    app.on_key(key(KeyCode::Down), t0);
    assert_eq!(app.cursor, sq("g3"));
    // Enter: put down on g3 and drop there.
    let sent = app.on_key(key(KeyCode::Enter), t0);
    assert_eq!(
        sent,
        [
            ClientMessage::Act {
                game: gid(1),
                action: Action::Release { to: sq("g3") }
            },
            ClientMessage::Act {
                game: gid(1),
                action: Action::Drop
            }
        ]
    );
    // '.': put down without dropping.
    let sent = app.on_key(ch('.'), t0);
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Release { to: sq("g3") }
        }]
    );
    // Putting it down where it cannot go is refused here, in words, without a message.
    app.cursor = sq("d4");
    assert!(app.on_key(key(KeyCode::Enter), t0).is_empty());
    let (kind, text) = app.status.clone().unwrap();
    assert_eq!(kind, LogKind::Error);
    assert!(
        text.contains("Cannot put Y down on d4") && text.contains("not adjacent"),
        "{text}"
    );
}

#[test]
fn single_keys_for_claim_flip_drop_and_a_confirmed_resign() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::blitz(Level::Three));
    let mut app = seated(&fake, Player::Black, t0);
    let act = |action| {
        vec![ClientMessage::Act {
            game: gid(1),
            action,
        }]
    };
    assert_eq!(app.on_key(ch('f'), t0), act(Action::Flip));
    assert_eq!(app.on_key(ch('c'), t0), act(Action::Claim));
    assert_eq!(app.on_key(ch('d'), t0), act(Action::Drop));
    assert!(app.on_key(ch('R'), t0).is_empty(), "asks first");
    assert_eq!(app.confirm, Some(Confirm::Resign));
    assert!(app.on_key(ch('n'), t0).is_empty(), "cancelled");
    assert!(app.on_key(ch('R'), t0).is_empty());
    assert_eq!(app.on_key(ch('y'), t0), act(Action::Resign));
}

#[test]
fn picking_up_what_cannot_move_says_why() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    assert!(app.on_key(ch('1'), t0).is_empty(), "not Black's turn");
    let (_, text) = app.status.clone().unwrap();
    assert_eq!(
        text,
        "Cannot pick up the hourglass on a1: it is not Black's turn"
    );
}

#[test]
fn the_colon_opens_a_command_line() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    app.on_key(ch(':'), t0);
    for c in "d1-e1".chars() {
        assert!(app.on_key(ch(c), t0).is_empty());
    }
    assert_eq!(app.input.as_deref(), Some("d1-e1"));
    app.on_key(key(KeyCode::Backspace), t0);
    app.on_key(ch('2'), t0);
    let sent = app.on_key(key(KeyCode::Enter), t0);
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: mv("d1", "e2", true)
        }]
    );
    assert_eq!(app.input, None);
}

#[test]
fn arrows_move_the_cursor_across_the_hex_grid() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    app.cursor = sq("d4");
    app.on_key(key(KeyCode::Left), t0);
    assert_eq!(
        app.cursor,
        sq("c4"),
        "half a hex up or down: the same row number"
    );
    app.on_key(key(KeyCode::Right), t0);
    app.on_key(key(KeyCode::Right), t0);
    assert_eq!(app.cursor, sq("e4"));
    app.cursor = sq("d7");
    app.on_key(key(KeyCode::Up), t0);
    assert_eq!(app.cursor, sq("d7"), "stays at the edge");
    app.cursor = sq("g1");
    app.on_key(key(KeyCode::Right), t0);
    assert_eq!(app.cursor, sq("g1"));
    app.on_key(key(KeyCode::Down), t0);
    assert_eq!(app.cursor, sq("g1"));
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

#[test]
fn server_errors_appear_in_place_in_words_and_sanitised() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    app.on_message(
        ServerMessage::Error {
            code: "not_your_turn".into(),
            message: "it is not Black's turn\u{1b}[2J".into(),
            game: Some(gid(1)),
            id: None,
            server_ms: None,
            at_ms: None,
        },
        t0,
    );
    let (kind, text) = app.status.clone().unwrap();
    assert_eq!(kind, LogKind::Error);
    assert_eq!(text, "it is not Black's turn?[2J", "no code for people");
    // The JSON line keeps the stable code.
    let out = app.take_output();
    let err = out
        .iter()
        .find(|o| o.kind == "error")
        .expect("an error line");
    assert_eq!(err.json()["code"], "not_your_turn");
    assert!(!err.text.contains("not_your_turn"), "{}", err.text);
}

#[test]
fn presence_and_grace_are_shown_and_the_win_can_be_claimed() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let presence = |fake: &mut Fake, change| {
        fake.seq += 1;
        ServerMessage::Event(Box::new(GameEvent {
            game: gid(1),
            seq: fake.seq,
            now_ms: 1_000,
            change,
        }))
    };
    let ev = presence(
        &mut fake,
        Change::Presence {
            player: Player::Red,
            connected: false,
            grace_until_ms: Some(61_000),
        },
    );
    app.on_message(ev, t0);
    let red = &app.game.as_ref().unwrap().seats[0];
    assert!(!red.connected);
    assert_eq!(red.grace_until_ms, Some(61_000));
    let ev = presence(
        &mut fake,
        Change::GraceExpired {
            player: Player::Red,
        },
    );
    app.on_message(ev, t0);
    assert!(app.game.as_ref().unwrap().seats[0].grace_expired);
    assert!(app
        .log
        .last()
        .unwrap()
        .text
        .ends_with("you may claim the win (W, or type 'win')"));
    assert_eq!(
        app.on_key(ch('W'), t0),
        [ClientMessage::ClaimAbandonment { game: gid(1) }]
    );
}

#[test]
fn the_end_of_the_game_prints_the_result_and_plain_mode_stops() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    app.quit_when_over = true;
    let ev = fake.act(Player::Red, Action::Resign, 500);
    app.on_message(ev, t0);
    let out = app.take_output();
    let result = out.iter().find(|o| o.kind == "result").unwrap();
    assert_eq!(
        result.text,
        "Result: Black wins: Red resigned; rings 32 red, 32 black"
    );
    assert_eq!(result.data["winner"], "black");
    assert_eq!(result.data["status"], "finished");
    assert!(app.quit);
    assert_eq!(app.seat_game(), None, "the config forgets the game");
}

#[test]
fn after_a_game_n_seeks_another() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, Action::Resign, 500);
    app.on_message(ev, t0);
    assert!(!app.quit, "the full-screen UI stays on the result");
    let sent = app.on_key(ch('n'), t0);
    assert!(matches!(sent[..], [ClientMessage::Seek { .. }]));
    assert_eq!(app.phase, Phase::Seeking);
    assert!(app.game.is_none());
}

#[test]
fn a_resumed_game_that_ended_meanwhile_leads_to_a_new_seek() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    fake.act(Player::Red, Action::Resign, 500);
    let mut app = seeking(fake.game.settings().clone(), Some("secret"), t0);
    app.resume = Some(gid(1));
    app.on_connected(t0);
    app.on_message(welcome(vec![gid(1)]), t0);
    let sent = app.on_message(fake.snapshot(Some(Player::Black), 600), t0);
    assert!(matches!(
        sent[..],
        [ClientMessage::Leave { game }, ClientMessage::Seek { .. }] if game == gid(1)
    ));
    assert_eq!(app.phase, Phase::Seeking);
}

#[test]
fn after_a_lost_connection_the_game_is_resumed_after_the_last_event() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 100);
    app.on_message(ev, t0);
    app.on_disconnected("connection reset");
    assert!(!app.connected);
    let hello = app.on_connected(t0);
    assert!(matches!(&hello[0], ClientMessage::Hello { token: Some(t), .. } if t == "secret"));
    let sent = app.on_message(welcome(vec![gid(1)]), t0);
    assert!(sent.contains(&ClientMessage::Join {
        game: gid(1),
        after_seq: Some(1)
    }));
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
fn sand_is_projected_from_the_server_time() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::blitz(Level::Two));
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 900);
    // Arrives at local t0 + 0.9 s: game time 900 then.
    app.on_message(ev, t0 + Duration::from_millis(900));
    let g = app.game.as_ref().unwrap();
    let x = g.replica.glass(Glass::from_label('X').unwrap());
    let now = g.now_ms(t0 + Duration::from_millis(2_400));
    assert_eq!(now, 2_400);
    assert_eq!(x.remaining(now), 1_500);
}

#[test]
fn placement_set_up_places_on_the_cursor() {
    let t0 = Instant::now();
    let mut settings = Settings::level(Level::Three);
    settings.setup = protocol::Setup::Placement;
    let fake = Fake::new(settings);
    let mut app = seated(&fake, Player::Red, t0);
    assert!(app
        .may_lines()
        .contains(&"place X/Y/Z on a free socket".to_string()));
    app.cursor = sq("d4");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), t0),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Place {
                glass: Glass::from_label('X').unwrap(),
                to: sq("d4"),
                drop: true
            }
        }]
    );
    assert_eq!(
        app.on_line("Y@e4.", t0),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Place {
                glass: Glass::from_label('Y').unwrap(),
                to: sq("e4"),
                drop: false
            }
        }]
    );
    assert!(app.on_key(ch('1'), t0).is_empty());
    assert!(app.status.clone().unwrap().1.contains("beside the board"));
}

fn finder(find: Find, t0: Instant) -> (App, Vec<ClientMessage>) {
    let settings = Settings::level(Level::Two);
    let mut app = App::new(Mode::Play { settings, find }, "Rita".into(), None, t0);
    app.on_connected(t0);
    let sent = app.on_message(welcome(vec![]), t0);
    app.take_output();
    (app, sent)
}

fn player(name: &str) -> protocol::wire::PlayerRef {
    protocol::wire::PlayerRef {
        player_id: format!("id-{name}"),
        name: name.into(),
        rating: None,
    }
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
fn after_a_game_r_offers_a_rematch_and_an_offer_is_shown() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    assert!(app.on_line("rematch", t0).is_empty(), "not before the end");
    let ev = fake.act(Player::Red, Action::Resign, 500);
    app.on_message(ev, t0);
    app.on_lobby(
        LobbyMessage::RematchOffered {
            game: gid(1),
            by: Player::Red,
        },
        t0,
    );
    assert_eq!(
        app.status.clone().unwrap().1,
        "Red (Rita) offers a rematch, colours swapped: r (or type 'rematch') accepts"
    );
    assert_eq!(
        app.on_key(ch('r'), t0),
        [ClientMessage::Rematch { game: gid(1) }]
    );
    assert_eq!(
        app.on_line("decline rematch", t0),
        [ClientMessage::DeclineRematch { game: gid(1) }]
    );
    // The new game's snapshot replaces the old one.
    let fresh = Fake::new(Settings::level(Level::One));
    let ServerMessage::Snapshot(mut snap) = fresh.snapshot(Some(Player::Red), 0) else {
        panic!()
    };
    snap.game = gid(2);
    app.on_message(ServerMessage::Snapshot(snap), t0);
    let g = app.game.as_ref().unwrap();
    assert_eq!((g.id, g.seat), (gid(2), Some(Player::Red)));
    assert!(!g.is_over());
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
fn the_move_list_is_complete_for_a_late_watcher_and_after_a_restart() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::Two));
    for (p, from, to, ms) in [
        (Player::Red, "d1", "d2", 1_000),
        (Player::Black, "a1", "b1", 2_000),
        (Player::Red, "g4", "g3", 3_000),
    ] {
        fake.act(p, mv(from, to, true), ms);
    }
    let events = |app: &App| -> Vec<String> {
        app.log
            .iter()
            .filter(|l| l.kind == LogKind::Event)
            .map(|l| l.text.clone())
            .collect()
    };
    // A watcher arriving now, and Red's client restarted: both see the three moves.
    for seat in [None, Some(Player::Red)] {
        let mut app = greeted(&fake, t0);
        app.on_message(fake.snapshot(seat, 4_000), t0);
        let log = events(&app);
        for m in ["X d1-d2", "A a1-b1", "Y g4-g3"] {
            assert!(log.iter().any(|l| l.contains(m)), "{seat:?} {m}: {log:?}");
        }
        // A second snapshot (a resync) does not repeat them.
        let before = log.len();
        app.on_message(fake.snapshot(seat, 4_000), t0);
        assert_eq!(events(&app).len(), before);
    }
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
fn a_refusal_goes_away_when_the_turn_changes() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    app.on_message(
        ServerMessage::error("not_your_turn", "it is not Black's turn"),
        t0,
    );
    assert!(app.status.is_some());
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 1_000);
    app.on_message(ev, t0 + Duration::from_secs(1));
    assert_eq!(app.status, None, "stale once Black's turn began");
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
