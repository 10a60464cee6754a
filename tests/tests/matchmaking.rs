//! Finding a game over real sockets: the quick-match queue, open seeks, and private codes;
//! rematches, who is online, and the clean-up when a player leaves.

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerMessage};
use tamsk_tests::*;

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
