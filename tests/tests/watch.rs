//! Watching: the list of live games, a watcher's stream, watcher counts.

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerMessage};
use tamsk_tests::*;

/// A watcher lists the live games, watches one, and receives exactly the event stream the
/// players receive; it cannot act.
#[tokio::test]
async fn watcher_receives_exactly_the_players_stream() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::One);
    let (mut red, mut black) = start_game(&server, &settings).await;
    play_random(&mut red, &mut black, 1, 3).await;

    let mut viewer = Client::new_player(&server, "Viewer").await;
    viewer.send(&ClientMessage::ListGames).await;
    let ServerMessage::Games { games } = viewer.recv().await else {
        panic!("expected the list of games")
    };
    assert_eq!(games.len(), 1);
    let summary = &games[0];
    assert_eq!(summary.game, red.game);
    assert_eq!(summary.level, Level::One);
    assert_eq!(summary.move_count, 3);
    assert_eq!(summary.watchers, 0);
    assert_eq!(summary.state, "playing");
    assert_eq!(summary.red.player_id, red.client.player_id);
    assert_eq!(summary.black.name, black.client.name);

    viewer
        .send(&ClientMessage::Watch {
            game: red.game,
            after_seq: None,
        })
        .await;
    let mut watcher = Follower::await_snapshot(viewer).await;
    assert_eq!(watcher.seat, None);
    assert_eq!(watcher.seq, red.seq);
    assert_eq!(watcher.snapshot.watchers, 1);
    assert_eq!(watcher.snapshot.view.move_count(), 3);
    // The replica rebuilt from the snapshot's entries is the players' (brought up to the
    // snapshot's instant).
    let mut players = red.replica.clone();
    players.advance(watcher.replica.now());
    assert_eq!(watcher.replica, players);
    // The players are told of the watcher.
    for p in [&mut red, &mut black] {
        match p.client.recv().await {
            ServerMessage::Watchers { game, count: 1 } => assert_eq!(game, p.game),
            other => panic!("expected a watcher count, got {other:?}"),
        }
    }
    let from = red.log.len();
    play_random(&mut red, &mut black, 2, 6).await;
    red.act(Action::Resign).await;
    red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    black.catch_up_to(red.seq).await;
    watcher.catch_up_to(red.seq).await;
    assert_eq!(watcher.log, red.log[from..].to_vec());
    assert_eq!(black.log, red.log);
    assert_eq!(watcher.replica, red.replica);
    assert_eq!(
        red.replica.outcome().map(|o| o.winner),
        Some(Some(Player::Black))
    );
    // A watcher cannot act.
    watcher.act(Action::Resign).await;
    watcher.expect_error("not_a_player").await;
    // The list shows the watcher and the finished game.
    watcher.client.send(&ClientMessage::ListGames).await;
    let ServerMessage::Games { games } = watcher.client.recv().await else {
        panic!("expected the list of games")
    };
    assert_eq!(games[0].watchers, 1);
    assert_eq!(games[0].state, "finished");
    // Leaving: the watcher gets `left`, the players a new count.
    watcher
        .client
        .send(&ClientMessage::Leave { game: red.game })
        .await;
    assert!(matches!(
        watcher.client.recv().await,
        ServerMessage::Left { .. }
    ));
    assert!(matches!(
        red.client.recv().await,
        ServerMessage::Watchers { count: 0, .. }
    ));
}

/// A private game (joined by its code) is not in the live list, and nobody but its players
/// can follow it by id (before: listed and watchable by anyone).
#[tokio::test]
async fn private_games_are_not_listed_nor_watchable() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::One);
    let mut host = Client::new_player(&server, "Host").await;
    host.send(&ClientMessage::Host {
        settings: settings.clone(),
    })
    .await;
    let protocol::wire::LobbyMessage::Hosting { code, .. } = host.recv_lobby().await else {
        panic!("expected hosting")
    };
    let mut guest = Client::new_player(&server, "Guest").await;
    guest.send(&ClientMessage::JoinCode { code }).await;
    let host = Follower::await_snapshot(host).await;
    let guest = Follower::await_snapshot(guest).await;
    assert_eq!(host.game, guest.game);
    let mut nosy = Client::new_player(&server, "Nosy").await;
    nosy.send(&ClientMessage::ListGames).await;
    let ServerMessage::Games { games } = nosy.recv().await else {
        panic!("expected the list of games")
    };
    assert!(games.is_empty(), "{games:?}");
    // Whatever a stranger asks of it by id, it is answered as a game that does not exist
    // is (before: a watch's answer carried the game time, `at_ms`, which only a live game
    // has; a join, an act, a claim and a rematch were told `not_a_player`, a leave
    // `not_subscribed`).
    let none = protocol::wire::GameId::now_v7();
    for game in [host.game, none] {
        for msg in messages_about(game) {
            nosy.send(&msg).await;
            match nosy.recv().await {
                ServerMessage::Error {
                    code,
                    game: g,
                    at_ms,
                    ..
                } => assert_eq!(
                    (code.as_str(), g, at_ms),
                    ("unknown_game", Some(game), None)
                ),
                other => panic!("expected unknown_game, got {other:?}"),
            }
        }
    }
    // Over HTTP too.
    for game in [host.game, none] {
        let stored = http_get(server.addr, &format!("/games/{game}"), None).await;
        assert!(stored.body.starts_with("unknown_game"), "{}", stored.body);
        let replay = http_get(server.addr, &format!("/api/games/{game}/replay"), None).await;
        assert_eq!(replay.json()["error"], "unknown_game", "{}", replay.body);
    }
    // Its players may still come back to it.
    let mut again = Client::returning(&server, &host.client.token).await.0;
    again
        .send(&ClientMessage::Join {
            game: host.game,
            after_seq: None,
        })
        .await;
    let back = Follower::await_snapshot(again).await;
    assert_eq!(back.game, host.game);
}
