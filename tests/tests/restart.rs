//! A server that stops with games live (SIGTERM past the drain) takes them up again at
//! its next start, from the journal in its database: the players come back with their
//! tokens, get a snapshot with every move, and play on. (A crash, kill -9, takes the
//! same path: server/tests/process.rs.) Each test runs on an SQLite file and on a
//! throwaway PostgreSQL (`..._on_postgres`).

use protocol::game::{Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::services::TestDb;
use tamsk_tests::*;

/// Red moves then Black, each waiting for the release; both followers caught up.
async fn two_moves(red: &mut Follower, black: &mut Follower) {
    for (mover, from, to) in [(Player::Red, "d1", "d2"), (Player::Black, "a1", "b1")] {
        let (m, o) = match mover {
            Player::Red => (&mut *red, &mut *black),
            Player::Black => (&mut *black, &mut *red),
        };
        m.act(mv(from, to, true)).await;
        m.until("the release", |e| matches!(e, Event::MoveReleased { .. }))
            .await;
        o.catch_up_to(m.seq).await;
    }
}

/// Level 2 with 3-minute glasses (nothing runs out while the server restarts), and the
/// bounds the test server fixes.
fn settings() -> Settings {
    let fixed = Settings::blitz(Level::One);
    Settings {
        abort_ms: fixed.abort_ms,
        late_release_ms: fixed.late_release_ms,
        ..Settings::level(Level::Two)
    }
}

backend_tests!(
    #[tokio::test]
    a_game_live_at_a_stop_resumes_at_the_next_start,
    a_game_live_at_a_stop_resumes_at_the_next_start_on_postgres => resumes_at_the_next_start
);

async fn resumes_at_the_next_start(db: TestDb) {
    let config = db.config();
    assert!(config.resume_games, "resuming is the default");
    let server = TestServer::start_with(config.clone()).await;
    let (mut red, mut black) = start_game(&server, &settings()).await;
    two_moves(&mut red, &mut black).await;
    let id = red.game;
    let before = red.entries.clone();
    let game_ms = red.replica.now();
    let last_seq = red.seq;
    server.stop().await;

    let server = TestServer::start_with(config).await;
    // Still being played: not among the stored games.
    let stored = http_get(server.addr, &format!("/games/{id}"), None).await;
    assert_eq!(stored.status, 404, "{}", stored.body);
    assert!(stored.body.starts_with("game_live"), "{}", stored.body);
    // Red comes back: his game is in the welcome; the numbering of the last run is gone,
    // so he gets the whole game, with both moves.
    let (mut client, games) = Client::returning(&server, &red.client.token).await;
    assert_eq!(games, [id]);
    client
        .send(&ClientMessage::Join {
            game: id,
            after_seq: Some(last_seq),
        })
        .await;
    let mut red = Follower::await_snapshot(client).await;
    assert_eq!(red.seat, Some(Player::Red));
    // (A `resumed` instead of the snapshot would have failed `await_snapshot`.)
    assert!(red.seq > last_seq, "numbered above the last run");
    assert_eq!(red.snapshot.view.entries[..before.len()], before[..]);
    assert_eq!(red.replica.move_count(), 2);
    // The game time went on while the server was down.
    assert!(red.snapshot.view.at_ms >= game_ms);
    // Black is away, with a fresh grace to come back.
    assert!(!red.snapshot.black.connected);
    assert!(red.snapshot.black.grace_until_ms.is_some());
    let (mut client, games) = Client::returning(&server, &black.client.token).await;
    assert_eq!(games, [id]);
    client
        .send(&ClientMessage::Join {
            game: id,
            after_seq: None,
        })
        .await;
    let mut black = Follower::await_snapshot(client).await;
    red.until_change("black is back", |c| {
        matches!(
            c,
            protocol::wire::Change::Presence {
                player: Player::Black,
                connected: true,
                ..
            }
        )
    })
    .await;
    black.catch_up_to(red.seq).await;
    // And they play on, every event checked against the replicas.
    let moves = play_random(&mut red, &mut black, 11, 4).await;
    assert!(moves > 0);
    assert_eq!(
        red.check_against_snapshot().await.view.entries.len(),
        red.entries.len()
    );
    server.stop().await;
}

backend_tests!(
    #[tokio::test]
    without_resumption_a_stop_aborts_the_live_games,
    without_resumption_a_stop_aborts_the_live_games_on_postgres => stop_aborts_without_resumption
);

/// Without resumption the old behaviour stays: the game is stored as aborted.
async fn stop_aborts_without_resumption(db: TestDb) {
    let config = server::Config {
        resume_games: false,
        ..db.config()
    };
    let server = TestServer::start_with(config.clone()).await;
    let (mut red, mut black) = start_game(&server, &settings()).await;
    two_moves(&mut red, &mut black).await;
    let id = red.game;
    server.stop().await;
    let server = TestServer::start_with(config).await;
    let v = get_json(server.addr, &format!("/games/{id}")).await;
    assert_eq!(
        (v["state"].as_str(), v["reason"].as_str()),
        (Some("aborted"), Some("shutdown")),
        "{v}"
    );
    let mut c = Client::connect(&server).await;
    c.send(&ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: None,
        token: Some(red.client.token.clone()),
        guest: false,
    })
    .await;
    assert!(matches!(
        c.recv().await,
        ServerMessage::Welcome { games, .. } if games.is_empty()
    ));
    server.stop().await;
}

/// A game of two moves that Black leaves: the server, Red's follower once he saw Black
/// go, and the end of Black's grace.
async fn black_left(config: &server::Config) -> (TestServer, Follower, u64) {
    let server = TestServer::start_with(config.clone()).await;
    let (mut red, mut black) = start_game(&server, &settings()).await;
    two_moves(&mut red, &mut black).await;
    black
        .client
        .send(&ClientMessage::Leave { game: red.game })
        .await;
    let gone = red
        .until_change("Black gone", |c| {
            matches!(
                c,
                protocol::wire::Change::Presence {
                    player: Player::Black,
                    connected: false,
                    ..
                }
            )
        })
        .await;
    let protocol::wire::Change::Presence {
        grace_until_ms: Some(until),
        ..
    } = gone.change
    else {
        panic!("a grace: {gone:?}")
    };
    (server, red, until)
}

/// Red back at `server` with his token, joined to his game: his follower (a snapshot).
async fn red_back(server: &TestServer, red: &Follower) -> Follower {
    let (mut client, games) = Client::returning(server, &red.client.token).await;
    assert_eq!(games, [red.game]);
    client
        .send(&ClientMessage::Join {
            game: red.game,
            after_seq: None,
        })
        .await;
    Follower::await_snapshot(client).await
}

backend_tests!(
    #[tokio::test]
    an_absence_past_its_grace_outlives_a_restart,
    an_absence_past_its_grace_outlives_a_restart_on_postgres => absence_outlives_a_restart
);

/// A seat away past his grace before a restart stays so, and the opponent's claim window
/// counts from the grace's end (it was a fresh grace for him, and an abandonment that fell
/// due meanwhile was never carried out). Black leaves, his grace runs out, the server is
/// down for longer than the claim window: when Red comes back, the game is ended for him
/// at once (Black abandoned), not a grace and a window later.
async fn absence_outlives_a_restart(db: TestDb) {
    let config = server::Config {
        reconnect_grace: std::time::Duration::from_millis(1_000),
        claim_window: std::time::Duration::from_millis(1_500),
        ..db.config()
    };
    let (server, mut red, _) = black_left(&config).await;
    red.until_change("Black's grace to run out", |c| {
        matches!(
            c,
            protocol::wire::Change::GraceExpired {
                player: Player::Black
            }
        )
    })
    .await;
    server.stop().await;
    // Down for longer than what was left of the claim window (an outage's length: there
    // is nothing to wait for).
    tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;

    let server = TestServer::start_with(config).await;
    let mut red = red_back(&server, &red).await;
    let back_at = red.snapshot.now_ms;
    assert!(!red.snapshot.black.connected, "Black is still away");
    if red.replica.is_playing() {
        red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
    let end = red.entries.last().expect("entries").clone();
    assert_eq!(
        end.kind,
        protocol::record::EntryKind::Abandon {
            player: Player::Black
        }
    );
    assert!(
        end.at_ms < back_at + 1_000,
        "at once (at {}), not after a fresh grace from {back_at}",
        end.at_ms
    );
    server.stop().await;
}

backend_tests!(
    #[tokio::test]
    a_grace_running_at_a_stop_ends_at_its_own_instant,
    a_grace_running_at_a_stop_ends_at_its_own_instant_on_postgres => grace_goes_on_after_a_restart
);

/// A grace running when the server stops goes on to its own end after the restart (as the
/// sand does), not a fresh grace from the restart.
async fn grace_goes_on_after_a_restart(db: TestDb) {
    let config = server::Config {
        reconnect_grace: std::time::Duration::from_secs(60),
        ..db.config()
    };
    let (server, red, until) = black_left(&config).await;
    server.stop().await;

    let server = TestServer::start_with(config).await;
    let red = red_back(&server, &red).await;
    assert!(!red.snapshot.black.connected);
    assert_eq!(
        red.snapshot.black.grace_until_ms,
        Some(until),
        "the grace he had, not a fresh one from {}",
        red.snapshot.now_ms
    );
    server.stop().await;
}
