//! Typed commands and keys: moves and drops, the command line, the cursor, placement, and
//! refusals and server errors shown in place.

use super::*;

/// What the app sends, its `act`s without their `seq` (the game's last event, checked in
/// `an_act_carries_the_last_event_seen`).
fn strip(sent: Vec<ClientMessage>) -> Vec<ClientMessage> {
    sent.into_iter()
        .map(|m| match m {
            ClientMessage::Act { game, action, .. } => ClientMessage::Act {
                game,
                action,
                seq: None,
            },
            m => m,
        })
        .collect()
}

/// Every action carries the last event of the game the client had (`seq`), so that the
/// server refuses it if the turn changed meanwhile (`stale_action`) rather than play it
/// in a position its player has not seen.
#[test]
fn an_act_carries_the_last_event_seen() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    let seq = app.game.as_ref().unwrap().seq;
    assert_eq!(
        app.on_line("d1-d2", t0),
        [ClientMessage::Act {
            game: gid(1),
            action: mv("d1", "d2", true),
            seq: Some(seq),
        }]
    );
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 10);
    app.on_message(ev, t0);
    let later = app.game.as_ref().unwrap().seq;
    assert!(later > seq);
    assert_eq!(
        app.on_line("resign", t0),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Resign,
            seq: Some(later),
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
            seq: None,
        }]
    };
    assert_eq!(strip(app.on_line("d1-d2", t0)), act(mv("d1", "d2", true)));
    assert_eq!(
        strip(app.on_line("  D1-D2.  ", t0)),
        act(mv("d1", "d2", false))
    );
    assert_eq!(strip(app.on_line("claim", t0)), act(Action::Claim));
    assert_eq!(strip(app.on_line("flip", t0)), act(Action::Flip));
    assert_eq!(strip(app.on_line("resign", t0)), act(Action::Resign));
    assert_eq!(
        strip(app.on_line("drop e4", t0)),
        act(Action::PenaltyDrop { at: sq("e4") }),
        "not our destination: the penalty ring"
    );
    assert_eq!(
        strip(app.on_line("start d1", t0)),
        act(Action::Start { from: sq("d1") })
    );
    assert_eq!(
        strip(app.on_line("win", t0)),
        [ClientMessage::ClaimAbandonment { game: gid(1) }]
    );
    app.take_output();
    assert!(strip(app.on_line("d1-z9", t0)).is_empty());
    let (kind, text) = app.status.clone().unwrap();
    assert_eq!(kind, LogKind::Error);
    assert!(text.contains("z9") && text.contains("column 4"), "{text}");
    assert_eq!(kinds(&app.take_output()), ["error"]);
    assert!(strip(app.on_line("quit", t0)).is_empty());
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
        strip(app.on_line("drop d2", t0)),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Drop,
            seq: None,
        }]
    );
}

#[test]
fn keys_pick_up_an_hourglass_then_put_it_down_with_or_without_a_drop() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::blitz(Level::Three));
    let mut app = seated(&fake, Player::Red, t0);
    // 2: Red's second hourglass, Y on g4: the move starts on the server.
    let sent = strip(app.on_key(ch('2'), t0));
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Start { from: sq("g4") },
            seq: None,
        }]
    );
    // The cursor jumped to the first place Y may go.
    assert!(sq("g4").touches(app.cursor), "{}", app.cursor);
    let ev = fake.act(Player::Red, Action::Start { from: sq("g4") }, 50);
    app.on_message(ev, t0);
    assert!(app.log.iter().any(|l| l.text == "Red picks up Y on g4"));
    // Down moves the cursor within the column: g3.
    app.cursor = sq("g4");
    strip(app.on_key(key(KeyCode::Down), t0));
    assert_eq!(app.cursor, sq("g3"));
    // Enter: put down on g3 and drop there.
    let sent = strip(app.on_key(key(KeyCode::Enter), t0));
    assert_eq!(
        sent,
        [
            ClientMessage::Act {
                game: gid(1),
                action: Action::Release { to: sq("g3") },
                seq: None,
            },
            ClientMessage::Act {
                game: gid(1),
                action: Action::Drop,
                seq: None,
            }
        ]
    );
    // '.': put down without dropping.
    let sent = strip(app.on_key(ch('.'), t0));
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Release { to: sq("g3") },
            seq: None,
        }]
    );
    // Putting it down where it cannot go is refused here, in words, without a message.
    app.cursor = sq("d4");
    assert!(strip(app.on_key(key(KeyCode::Enter), t0)).is_empty());
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
            seq: None,
        }]
    };
    assert_eq!(strip(app.on_key(ch('f'), t0)), act(Action::Flip));
    assert_eq!(strip(app.on_key(ch('c'), t0)), act(Action::Claim));
    assert_eq!(strip(app.on_key(ch('d'), t0)), act(Action::Drop));
    assert!(strip(app.on_key(ch('R'), t0)).is_empty(), "asks first");
    assert_eq!(app.confirm, Some(Confirm::Resign));
    assert!(strip(app.on_key(ch('n'), t0)).is_empty(), "cancelled");
    assert!(strip(app.on_key(ch('R'), t0)).is_empty());
    assert_eq!(strip(app.on_key(ch('y'), t0)), act(Action::Resign));
}

#[test]
fn picking_up_what_cannot_move_says_why() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    assert!(
        strip(app.on_key(ch('1'), t0)).is_empty(),
        "not Black's turn"
    );
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
    strip(app.on_key(ch(':'), t0));
    for c in "d1-e1".chars() {
        assert!(strip(app.on_key(ch(c), t0)).is_empty());
    }
    assert_eq!(app.input.as_deref(), Some("d1-e1"));
    strip(app.on_key(key(KeyCode::Backspace), t0));
    strip(app.on_key(ch('2'), t0));
    let sent = strip(app.on_key(key(KeyCode::Enter), t0));
    assert_eq!(
        sent,
        [ClientMessage::Act {
            game: gid(1),
            action: mv("d1", "e2", true),
            seq: None,
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
    strip(app.on_key(key(KeyCode::Left), t0));
    assert_eq!(
        app.cursor,
        sq("c4"),
        "half a hex up or down: the same row number"
    );
    strip(app.on_key(key(KeyCode::Right), t0));
    strip(app.on_key(key(KeyCode::Right), t0));
    assert_eq!(app.cursor, sq("e4"));
    app.cursor = sq("d7");
    strip(app.on_key(key(KeyCode::Up), t0));
    assert_eq!(app.cursor, sq("d7"), "stays at the edge");
    app.cursor = sq("g1");
    strip(app.on_key(key(KeyCode::Right), t0));
    assert_eq!(app.cursor, sq("g1"));
    strip(app.on_key(key(KeyCode::Down), t0));
    assert_eq!(app.cursor, sq("g1"));
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
        strip(app.on_key(key(KeyCode::Enter), t0)),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Place {
                glass: Glass::from_label('X').unwrap(),
                to: sq("d4"),
                drop: true
            },
            seq: None,
        }]
    );
    assert_eq!(
        strip(app.on_line("Y@e4.", t0)),
        [ClientMessage::Act {
            game: gid(1),
            action: Action::Place {
                glass: Glass::from_label('Y').unwrap(),
                to: sq("e4"),
                drop: false
            },
            seq: None,
        }]
    );
    assert!(strip(app.on_key(ch('1'), t0)).is_empty());
    assert!(app.status.clone().unwrap().1.contains("beside the board"));
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
