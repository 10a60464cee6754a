//! The replica of the game: made from a snapshot, kept by the events, reloaded after a gap
//! or a difference; sand projected from the server's time; the move list after a restart.

use super::*;

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
