//! Finding a game over real sockets: the quick-match queue, open seeks, private codes,
//! challenges, rematches, and the clean-up when a player leaves.

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerFrame, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::*;
use tokio::time::Duration;

async fn seeks(c: &mut Client) -> Vec<protocol::wire::SeekInfo> {
    c.send(&ClientMessage::ListSeeks).await;
    match c.recv_lobby().await {
        LobbyMessage::Seeks { seeks } => seeks,
        other => panic!("expected seeks, got {other:?}"),
    }
}

async fn expect_seeking(c: &mut Client) {
    match c.recv().await {
        ServerMessage::Seeking { .. } => {}
        other => panic!("expected seeking, got {other:?}"),
    }
}

/// Two clients seeking the same settings are matched at once; different settings are
/// not; seats are drawn at random.
#[tokio::test]
async fn the_queue_matches_equal_settings_with_seats_drawn_at_random() {
    let server = TestServer::start().await;
    let l1 = Settings::blitz(Level::One);
    let l2 = Settings::blitz(Level::Two);
    let mut a = Client::new_player(&server, "Ann").await;
    let mut b = Client::new_player(&server, "Ben").await;
    a.send(&ClientMessage::Seek {
        settings: l1.clone(),
        rated: None,
    })
    .await;
    expect_seeking(&mut a).await;
    b.send(&ClientMessage::Seek {
        settings: l2.clone(),
        rated: None,
    })
    .await;
    expect_seeking(&mut b).await;
    // A third player with Level 2 settings meets Ben, not Ann.
    let mut c = Client::new_player(&server, "Cid").await;
    c.send(&ClientMessage::Seek {
        settings: l2.clone(),
        rated: None,
    })
    .await;
    let fc = Follower::await_snapshot(c).await;
    let fb = Follower::await_snapshot(b).await;
    assert_eq!(fc.game, fb.game);
    assert_eq!(fc.snapshot.view.settings, l2);
    let list = seeks(&mut a).await;
    assert_eq!(list.len(), 1, "only Ann still waits");
    assert_eq!(list[0].player.name, "Ann");
    a.send(&ClientMessage::CancelSeek).await;
    assert!(matches!(a.recv().await, ServerMessage::SeekCancelled));
    // Draw lots: over 20 pairings the first seeker gets both colours.
    let mut first_seeker_seats = Vec::new();
    for _ in 0..20 {
        let (red, black) = start_game(&server, &l1).await;
        // start_game's first seeker is "Alice".
        first_seeker_seats.push(if red.client.name.starts_with("Alice") {
            Player::Red
        } else {
            Player::Black
        });
        drop((red, black));
    }
    assert!(
        first_seeker_seats.contains(&Player::Red),
        "{first_seeker_seats:?}"
    );
    assert!(
        first_seeker_seats.contains(&Player::Black),
        "{first_seeker_seats:?}"
    );
}

/// Waiting seeks are listed (oldest first) and anyone may take one, whatever its
/// settings.
#[tokio::test]
async fn open_seeks_are_listed_and_accepted() {
    let server = TestServer::start().await;
    let mut a = Client::new_player(&server, "Ann").await;
    let mut b = Client::new_player(&server, "Ben").await;
    let mut c = Client::new_player(&server, "Cid").await;
    let l2 = Settings::blitz(Level::Two);
    a.send(&ClientMessage::Seek {
        settings: l2.clone(),
        rated: None,
    })
    .await;
    expect_seeking(&mut a).await;
    b.send(&ClientMessage::Seek {
        settings: Settings::blitz(Level::One),
        rated: None,
    })
    .await;
    expect_seeking(&mut b).await;
    let list = seeks(&mut c).await;
    let names: Vec<&str> = list.iter().map(|s| s.player.name.as_str()).collect();
    assert_eq!(names, ["Ann", "Ben"]);
    assert_eq!(list[0].settings, l2);
    assert_eq!(list[0].player.player_id, a.player_id);
    // Nobody can take his own seek, nor one that does not exist.
    b.send(&ClientMessage::AcceptSeek { seek: list[1].seek })
        .await;
    b.expect_error("own_seek").await;
    c.send(&ClientMessage::AcceptSeek { seek: 999 }).await;
    c.expect_error("unknown_seek").await;
    // Cid takes Ann's.
    c.send(&ClientMessage::AcceptSeek { seek: list[0].seek })
        .await;
    let fc = Follower::await_snapshot(c).await;
    let fa = Follower::await_snapshot(a).await;
    assert_eq!(fa.game, fc.game);
    assert_ne!(fa.seat, fc.seat);
    assert_eq!(fa.snapshot.view.settings, l2);
    let list = seeks(&mut b).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].player.name, "Ben");
    // A seek taken is gone.
    let mut d = Client::new_player(&server, "Dee").await;
    d.send(&ClientMessage::AcceptSeek { seek: 1 }).await;
    d.expect_error("unknown_seek").await;
}

/// Cancelling a seek and closing the connection both take it out of the queue.
#[tokio::test]
async fn leaving_the_queue_or_disconnecting_cleans_up() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::One);
    let mut a = Client::new_player(&server, "Ann").await;
    let mut watcher = Client::new_player(&server, "Wes").await;
    a.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    expect_seeking(&mut a).await;
    assert_eq!(seeks(&mut watcher).await.len(), 1);
    a.send(&ClientMessage::CancelSeek).await;
    assert!(matches!(a.recv().await, ServerMessage::SeekCancelled));
    a.send(&ClientMessage::CancelSeek).await;
    a.expect_error("not_seeking").await;
    assert!(seeks(&mut watcher).await.is_empty());
    // Seek again, then go away: nobody is matched with a player who left.
    a.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    expect_seeking(&mut a).await;
    a.close().await;
    assert!(seeks(&mut watcher).await.is_empty());
    let mut b = Client::new_player(&server, "Ben").await;
    b.send(&ClientMessage::Seek {
        settings,
        rated: None,
    })
    .await;
    expect_seeking(&mut b).await;
    // A private game goes the same way.
    b.send(&ClientMessage::Host {
        settings: Settings::blitz(Level::Two),
    })
    .await;
    let LobbyMessage::Hosting { code, .. } = b.recv_lobby().await else {
        panic!("hosting")
    };
    b.close().await;
    watcher.send(&ClientMessage::JoinCode { code }).await;
    watcher.expect_error("unknown_code").await;
}

/// A private game: the host gets a short code, the game is not listed, and whoever
/// gives the code (in any case) plays.
#[tokio::test]
async fn a_private_game_is_joined_by_its_code() {
    let server = TestServer::start().await;
    let mut host = Client::new_player(&server, "Hal").await;
    let mut guest = Client::new_player(&server, "Gus").await;
    let settings = Settings::blitz(Level::Three);
    host.send(&ClientMessage::Host {
        settings: settings.clone(),
    })
    .await;
    let LobbyMessage::Hosting { code, settings: s } = host.recv_lobby().await else {
        panic!("hosting")
    };
    assert_eq!(s, settings);
    assert_eq!(code.len(), 6);
    assert!(code
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()));
    assert!(
        seeks(&mut guest).await.is_empty(),
        "a private game is not listed"
    );
    // Quick match with the same settings does not take it either.
    let mut other = Client::new_player(&server, "Oli").await;
    other
        .send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    expect_seeking(&mut other).await;
    for (bad, code_err) in [("K7", "bad_code"), ("ZZZZZZ", "unknown_code")] {
        guest
            .send(&ClientMessage::JoinCode { code: bad.into() })
            .await;
        guest.expect_error(code_err).await;
    }
    host.send(&ClientMessage::JoinCode { code: code.clone() })
        .await;
    host.expect_error("own_seek").await;
    guest
        .send(&ClientMessage::JoinCode {
            code: code.to_lowercase(),
        })
        .await;
    let g = Follower::await_snapshot(guest).await;
    let h = Follower::await_snapshot(host).await;
    assert_eq!(g.game, h.game);
    assert_eq!(h.snapshot.view.settings, settings);
    // The code is used up.
    other
        .send(&ClientMessage::JoinCode { code: code.clone() })
        .await;
    other.expect_error("unknown_code").await;
    // A spectator needs the code: by id alone the game is unknown to him.
    let mut spectator = Client::new_player(&server, "Vic").await;
    spectator
        .send(&ClientMessage::Watch {
            game: g.game,
            after_seq: None,
        })
        .await;
    spectator.expect_error("unknown_game").await;
    for (bad, code_err) in [("K7", "bad_code"), ("ZZZZZZ", "unknown_code")] {
        spectator
            .send(&ClientMessage::WatchCode { code: bad.into() })
            .await;
        spectator.expect_error(code_err).await;
    }
    spectator
        .send(&ClientMessage::WatchCode {
            code: format!(" {} ", code.to_lowercase()),
        })
        .await;
    let v = Follower::await_snapshot(spectator).await;
    assert_eq!((v.game, v.seat), (g.game, None));
}

/// A challenge to a named online player: declined, then accepted; errors for the rest.
#[tokio::test]
async fn a_challenge_is_declined_or_accepted() {
    let server = TestServer::start().await;
    let mut a = Client::new_player(&server, "Ann").await;
    let mut b = Client::new_player(&server, "Ben").await;
    let settings = Settings::blitz(Level::Two);
    a.send(&ClientMessage::Challenge {
        to: "Ben".into(),
        settings: settings.clone(),
        rated: None,
    })
    .await;
    let LobbyMessage::ChallengeSent { challenge, to, .. } = a.recv_lobby().await else {
        panic!("challenge_sent")
    };
    assert_eq!(to.player_id, b.player_id);
    let LobbyMessage::Challenged {
        challenge: got,
        from,
        settings: s,
        ..
    } = b.recv_lobby().await
    else {
        panic!("challenged")
    };
    assert_eq!((got, from.name.as_str(), &s), (challenge, "Ann", &settings));
    // Ann cannot answer her own challenge.
    a.send(&ClientMessage::AcceptChallenge { challenge }).await;
    a.expect_error("unknown_challenge").await;
    b.send(&ClientMessage::DeclineChallenge { challenge }).await;
    for c in [&mut a, &mut b] {
        assert_eq!(
            c.recv_lobby().await,
            LobbyMessage::ChallengeClosed {
                challenge,
                reason: "declined".into()
            }
        );
    }
    b.send(&ClientMessage::AcceptChallenge { challenge }).await;
    b.expect_error("unknown_challenge").await;

    // By player id this time; accepted.
    let id = b.player_id.clone();
    a.send(&ClientMessage::Challenge {
        to: id,
        settings: settings.clone(),
        rated: None,
    })
    .await;
    let LobbyMessage::ChallengeSent { challenge, .. } = a.recv_lobby().await else {
        panic!("challenge_sent")
    };
    let LobbyMessage::Challenged { .. } = b.recv_lobby().await else {
        panic!("challenged")
    };
    b.send(&ClientMessage::AcceptChallenge { challenge }).await;
    let fb = Follower::await_snapshot(b).await;
    let fa = Follower::await_snapshot(a).await;
    assert_eq!(fa.game, fb.game);
    assert_eq!(fa.snapshot.view.settings, settings);
    let mut a = fa.client;

    for (to, code) in [
        ("Nobody", "unknown_player"),
        ("Ann", "own_challenge"),
        ("TAMSK bot", "unknown_player"),
    ] {
        a.send(&ClientMessage::Challenge {
            to: to.into(),
            settings: settings.clone(),
            rated: None,
        })
        .await;
        a.expect_error(code).await;
    }
    // Names are unique whatever their case, so a name names one player.
    let twin = Client::new_player(&server, "Twin").await;
    for same in ["Twin", "TWIN", "twin"] {
        let mut c = Client::connect(&server).await;
        c.send(&ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: Some(same.into()),
            token: None,
            guest: false,
        })
        .await;
        assert!(c.expect_error("name_taken").await.contains("token"));
    }
    a.send(&ClientMessage::Challenge {
        to: "Twin".into(),
        settings,
        rated: None,
    })
    .await;
    match a.recv_lobby().await {
        LobbyMessage::ChallengeSent { to, .. } => assert_eq!(to.player_id, twin.player_id),
        other => panic!("expected challenge_sent, got {other:?}"),
    }
}

/// A challenge that is not answered expires; one whose challenger leaves is closed;
/// the challenger may withdraw it.
#[tokio::test]
async fn challenges_expire_or_go_with_their_player() {
    let server = TestServer::start_with(server::Config {
        challenge_timeout: Duration::from_millis(150),
        ..test_config()
    })
    .await;
    let mut a = Client::new_player(&server, "Ann").await;
    let mut b = Client::new_player(&server, "Ben").await;
    let challenge = |to: &str| ClientMessage::Challenge {
        to: to.into(),
        settings: Settings::blitz(Level::One),
        rated: None,
    };
    a.send(&challenge("Ben")).await;
    let LobbyMessage::ChallengeSent { challenge: id, .. } = a.recv_lobby().await else {
        panic!()
    };
    b.recv_lobby().await;
    let expired = LobbyMessage::ChallengeClosed {
        challenge: id,
        reason: "expired".into(),
    };
    assert_eq!(a.recv_lobby().await, expired);
    assert_eq!(b.recv_lobby().await, expired);
    // Withdrawn.
    a.send(&challenge("Ben")).await;
    let LobbyMessage::ChallengeSent { challenge: id, .. } = a.recv_lobby().await else {
        panic!()
    };
    b.recv_lobby().await;
    b.send(&ClientMessage::CancelChallenge { challenge: id })
        .await;
    b.expect_error("unknown_challenge").await;
    a.send(&ClientMessage::CancelChallenge { challenge: id })
        .await;
    let cancelled = LobbyMessage::ChallengeClosed {
        challenge: id,
        reason: "cancelled".into(),
    };
    assert_eq!(a.recv_lobby().await, cancelled);
    assert_eq!(b.recv_lobby().await, cancelled);
    // The challenger leaves.
    a.send(&challenge("Ben")).await;
    let LobbyMessage::ChallengeSent { challenge: id, .. } = a.recv_lobby().await else {
        panic!()
    };
    b.recv_lobby().await;
    a.close().await;
    assert_eq!(
        b.recv_lobby().await,
        LobbyMessage::ChallengeClosed {
            challenge: id,
            reason: "gone".into()
        }
    );
    b.send(&ClientMessage::AcceptChallenge { challenge: id })
        .await;
    b.expect_error("unknown_challenge").await;
}

/// After a game, a rematch offered and accepted starts a new game with the same
/// settings and the colours swapped; a declined one does not.
#[tokio::test]
async fn a_rematch_swaps_colours() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::Two);
    let (mut red, mut black) = start_game(&server, &settings).await;
    let first = red.game;
    red.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    red.expect_error("game_not_over").await;
    red.act(Action::Resign).await;
    for p in [&mut red, &mut black] {
        p.until("end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
    black
        .client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    for p in [&mut red, &mut black] {
        assert_eq!(
            p.lobby().await,
            LobbyMessage::RematchOffered {
                game: first,
                by: Player::Black
            }
        );
    }
    red.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    let (red_name, black_name) = (red.client.name.clone(), black.client.name.clone());
    let new_black = Follower::await_snapshot(red.client).await;
    let new_red = Follower::await_snapshot(black.client).await;
    assert_eq!(new_red.game, new_black.game);
    assert!(new_red.game > first);
    assert_eq!(new_red.seat(), Player::Red);
    assert_eq!(new_red.snapshot.red.name, black_name);
    assert_eq!(new_black.snapshot.black.name, red_name);
    assert_eq!(new_red.snapshot.view.settings, settings);
    let (mut red, mut black) = (new_red, new_black);
    let second = red.game;
    // The first game's rematch is used up.
    red.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    red.expect_error("rematch_started").await;
    // The second game ends; the rematch is declined.
    black.act(Action::Resign).await;
    for p in [&mut red, &mut black] {
        p.until("end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
    red.client
        .send(&ClientMessage::Rematch { game: second })
        .await;
    black.lobby().await;
    red.lobby().await;
    black
        .client
        .send(&ClientMessage::DeclineRematch { game: second })
        .await;
    for p in [&mut red, &mut black] {
        assert_eq!(
            p.lobby().await,
            LobbyMessage::RematchDeclined {
                game: second,
                by: Player::Black
            }
        );
    }
    // A watcher cannot ask.
    let mut w = Client::new_player(&server, "Wes").await;
    w.send(&ClientMessage::Rematch { game: second }).await;
    w.expect_error("not_a_player").await;
}

/// Who is online: every player with a connection that said hello, by name, for players
/// and guests alike; a player who leaves is no longer listed.
#[tokio::test]
async fn who_is_online_is_listed_by_name() {
    let server = TestServer::start().await;
    let mut zoe = Client::new_player(&server, "zoe").await;
    let mut ann = Client::new_player(&server, "Ann").await;
    let bob = Client::new_player(&server, "Bob").await;
    let names = |msg: LobbyMessage| match msg {
        LobbyMessage::Players { players, online } => {
            assert_eq!(online as usize, players.len());
            players.into_iter().map(|p| p.name).collect::<Vec<_>>()
        }
        other => panic!("expected players, got {other:?}"),
    };
    zoe.send(&ClientMessage::ListPlayers).await;
    assert_eq!(names(zoe.recv_lobby().await), ["Ann", "Bob", "zoe"]);
    bob.close().await;
    let mut guest = Client::connect(&server).await;
    guest
        .send(&ClientMessage::Hello {
            version: protocol::wire::PROTOCOL_VERSION,
            name: None,
            token: None,
            guest: true,
        })
        .await;
    guest.recv().await;
    // (The server closes Bob's connection only once it has let him go.)
    guest.send(&ClientMessage::ListPlayers).await;
    assert_eq!(names(guest.recv_lobby().await), ["Ann", "zoe"]);
    ann.send(&ClientMessage::ListPlayers).await;
    assert_eq!(names(ann.recv_lobby().await), ["Ann", "zoe"]);
}

/// Sends a challenge to `to` and cancels it at once (what a spammer does); the code of
/// the error if it was refused.
async fn challenge_and_cancel(c: &mut Client, to: &str) -> Option<String> {
    c.send(&ClientMessage::Challenge {
        to: to.into(),
        settings: Settings::blitz(Level::Two),
        rated: None,
    })
    .await;
    match c.recv_any().await.expect("open") {
        ServerFrame::Message(ServerMessage::Error { code, .. }) => Some(code),
        ServerFrame::Lobby(LobbyMessage::ChallengeSent { challenge, .. }) => {
            c.send(&ClientMessage::CancelChallenge { challenge }).await;
            let closed = c.recv_lobby().await;
            assert!(
                matches!(closed, LobbyMessage::ChallengeClosed { .. }),
                "{closed:?}"
            );
            None
        }
        other => panic!("expected challenge_sent or an error, got {other:?}"),
    }
}

/// Challenges cost frames on every connection of the challenged player: a few players
/// sending and cancelling challenges at one who is playing filled his outbound queue
/// until he was cut off and lost by abandonment. The challenges to one player that are
/// cancelled are a burst of 6 at most (12 a minute), and one player's cancels a burst of
/// 10 (20 a minute); beyond, new challenges are refused and the other hears nothing.
/// Answered challenges spend nothing.
#[tokio::test]
async fn challenges_to_one_player_and_from_one_player_are_budgeted() {
    let server = TestServer::start().await;
    let mut vic = Client::new_player(&server, "Vic").await;
    let mut refused = Vec::new();
    for i in 0..8 {
        let mut c = Client::new_player(&server, &format!("Spam{i}")).await;
        refused.push(challenge_and_cancel(&mut c, "Vic").await);
    }
    let mut want = vec![None; 6];
    want.extend([
        Some("challenged_too_often".to_string()),
        Some("challenged_too_often".into()),
    ]);
    assert_eq!(refused, want);
    // Vic heard of the six, each offered and closed, and nothing more.
    let mut heard = 0;
    vic.send(&ClientMessage::ListGames).await;
    loop {
        match vic.recv_any().await.expect("open") {
            ServerFrame::Lobby(LobbyMessage::Challenged { .. }) => heard += 1,
            ServerFrame::Lobby(LobbyMessage::ChallengeClosed { .. }) => {}
            ServerFrame::Message(ServerMessage::Games { .. }) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(heard, 6);

    // One challenger, each time at another player: ten, then too fast.
    let mut ann = Client::new_player(&server, "Ann").await;
    let mut results = Vec::new();
    for i in 0..11 {
        let _target = Client::new_player(&server, &format!("Target{i}")).await;
        results.push(challenge_and_cancel(&mut ann, &format!("Target{i}")).await);
    }
    let mut want = vec![None; 10];
    want.push(Some("too_many_challenges".into()));
    assert_eq!(results, want);

    // At most 6 challenges wait for one player at once (a wave sent together is not
    // cancelled before the budget sees it).
    let _popular = Client::new_player(&server, "Popular").await;
    let mut waves = Vec::new();
    let mut fans = Vec::new();
    for i in 0..7 {
        let mut c = Client::new_player(&server, &format!("Fan{i}")).await;
        c.send(&ClientMessage::Challenge {
            to: "Popular".into(),
            settings: Settings::blitz(Level::Two),
            rated: None,
        })
        .await;
        waves.push(match c.recv_any().await.expect("open") {
            ServerFrame::Message(ServerMessage::Error { code, .. }) => code,
            ServerFrame::Lobby(LobbyMessage::ChallengeSent { .. }) => "sent".into(),
            other => panic!("unexpected {other:?}"),
        });
        // Kept open: a challenger's going withdraws his challenges.
        fans.push(c);
    }
    let mut want = vec!["sent".to_string(); 6];
    want.push("challenged_too_often".into());
    assert_eq!(waves, want);

    // Challenges answered spend nothing: ten in a row between the same two, declined.
    let mut bo = Client::new_player(&server, "Bo").await;
    let mut cy = Client::new_player(&server, "Cy").await;
    for _ in 0..10 {
        bo.send(&ClientMessage::Challenge {
            to: "Cy".into(),
            settings: Settings::blitz(Level::Two),
            rated: None,
        })
        .await;
        let LobbyMessage::ChallengeSent { challenge, .. } = bo.recv_lobby().await else {
            panic!("challenge_sent")
        };
        let LobbyMessage::Challenged { .. } = cy.recv_lobby().await else {
            panic!("challenged")
        };
        cy.send(&ClientMessage::DeclineChallenge { challenge })
            .await;
        for c in [&mut bo, &mut cy] {
            assert!(matches!(
                c.recv_lobby().await,
                LobbyMessage::ChallengeClosed { .. }
            ));
        }
    }
}

/// One player may have 4 seeks waiting at once over all his connections, on one node as
/// on several (before, on one node, a player with 200 connections filled the 200 that
/// `list_seeks` shows and hid everyone else's); a connection's new seek replaces its own.
#[tokio::test]
async fn a_player_has_at_most_four_seeks_waiting() {
    let server = TestServer::start().await;
    let first = Client::new_player(&server, "Many").await;
    let mut conns = vec![first];
    for _ in 0..5 {
        let (c, _) = Client::returning(&server, &conns[0].token).await;
        conns.push(c);
    }
    let mut answers = Vec::new();
    for (i, c) in conns.iter_mut().enumerate() {
        let settings = Settings {
            hourglass_ms: 60_000 + i as u64 * 1_000,
            ..Settings::blitz(Level::Two)
        };
        c.send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
        answers.push(match c.recv().await {
            ServerMessage::Seeking { .. } => "seeking".to_string(),
            ServerMessage::Error { code, .. } => code,
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(
        answers,
        [
            "seeking",
            "seeking",
            "seeking",
            "seeking",
            "too_many_seeks",
            "too_many_seeks"
        ]
    );
    // The first connection seeks again: its seek is replaced, not a fifth.
    conns[0]
        .send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::Three),
            rated: None,
        })
        .await;
    assert!(matches!(
        conns[0].recv().await,
        ServerMessage::Seeking { .. }
    ));
    conns[0].send(&ClientMessage::ListSeeks).await;
    let LobbyMessage::Seeks { seeks } = conns[0].recv_lobby().await else {
        panic!("seeks")
    };
    assert_eq!(seeks.len(), 4);
}
