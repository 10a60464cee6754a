//! Challenges by name over real sockets: declined, accepted, expired, withdrawn, and the
//! budgets that keep strangers' challenges from flooding a playing player.

use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerFrame, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::*;
use tokio::time::Duration;

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
