//! The end of a game and after: presence and grace with the win claimed, the result, seeking
//! another game, a resumed game that ended meanwhile, rematches.

use super::*;

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
