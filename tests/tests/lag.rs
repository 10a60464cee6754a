//! Each seat's round trip, measured by the server's own pings, reaches the opponent and
//! the watchers: in snapshots, and as a numbered event when it is new or moves.

use std::time::Duration;

use futures::StreamExt;
use protocol::game::Player;
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage};
use protocol::wire::{ServerFrame, ServerMessage};
use tamsk_tests::*;
use tokio_tungstenite::tungstenite::Message;

/// A new player whose round trip the server has measured once already.
async fn measured_player(server: &TestServer, name: &str) -> Client {
    let mut client = Client::new_player(server, name).await;
    // The measurement may have come with the welcome already.
    while client.rtt_ms.is_none() {
        client.recv_frame().await;
    }
    client
}

/// The opponent's lag as this follower learns it: from its snapshot, or from the event
/// that comes when the opponent joins after it.
async fn opponent_lag(f: &mut Follower) -> u64 {
    let opponent = f.seat().other();
    let info = match opponent {
        Player::Red => &f.snapshot.red,
        Player::Black => &f.snapshot.black,
    };
    if let Some(lag) = info.lag_ms {
        return lag;
    }
    let ev = f
        .until_change(
            "the opponent's lag",
            |c| matches!(c, Change::Lag { player, .. } if *player == opponent),
        )
        .await;
    match ev.change {
        Change::Lag { rtt_ms, .. } => {
            // Published once: the recorded entry is this change.
            let entry = ev.entry().expect("a lag entry");
            assert_eq!(entry.at_ms, ev.now_ms);
            assert!(f.entries.contains(&entry), "{entry:?} is in the record");
            rtt_ms
        }
        other => unreachable!("matched a lag change, got {other:?}"),
    }
}

#[tokio::test]
async fn each_seats_lag_reaches_the_opponent_and_the_watchers() {
    let server = server_pinging_every(100).await;
    let settings = Settings::blitz(Level::One);
    let mut a = measured_player(&server, "Alice").await;
    let mut b = measured_player(&server, "Bob").await;
    for c in [&mut a, &mut b] {
        c.send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    }
    let mut a = Follower::await_snapshot(a).await;
    let mut b = Follower::await_snapshot(b).await;
    assert_eq!(a.game, b.game);
    for lag in [opponent_lag(&mut a).await, opponent_lag(&mut b).await] {
        assert!(lag < 1_000, "a loopback round trip of {lag} ms");
    }
    // Each lag is published once: as the `lag` change that is its recorded entry, never
    // again as a `play` beside it.
    for f in [&a, &b] {
        let lags = f
            .log
            .iter()
            .filter(|ev| matches!(ev.change, Change::Lag { .. }))
            .count();
        // (Those before the snapshot are in it.)
        let entries = f.entries[f.snapshot.view.entries.len()..]
            .iter()
            .filter(|e| matches!(e.kind, protocol::record::EntryKind::Lag { .. }))
            .count();
        assert!(lags == entries, "{lags} lag changes, {entries} lag entries");
        assert!(
            !f.log
                .iter()
                .any(|ev| matches!(&ev.change, Change::Play { entry, .. }
                if matches!(entry.kind, protocol::record::EntryKind::Lag { .. }))),
            "no lag entry in a play: {:?}",
            f.log
        );
    }
    // A watcher joining now sees both seats' lag in its snapshot.
    let mut watcher = Client::new_player(&server, "Walter").await;
    watcher
        .send(&ClientMessage::Watch {
            game: a.game,
            after_seq: None,
        })
        .await;
    let w = Follower::await_snapshot(watcher).await;
    assert!(w.snapshot.red.lag_ms.is_some(), "{:?}", w.snapshot.red);
    assert!(w.snapshot.black.lag_ms.is_some(), "{:?}", w.snapshot.black);
}

/// A connection with no seat (a watcher, the lobby) is pinged every third tick only: its
/// lag judges nobody, and each ping is a ping and a pong (and a `lag` report when the
/// estimate moved). A player's ping waits for the next frame of his game to go out with
/// it, and goes alone at the next tick when none came: in a game where nobody moves, every
/// other tick.
#[tokio::test]
async fn a_watcher_is_pinged_every_third_tick_and_an_idle_player_every_other() {
    let server = server_pinging_every(40).await;
    let (red, _black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut watcher = Client::new_player(&server, "Wanda").await;
    watcher
        .send(&ClientMessage::Watch {
            game: red.game,
            after_seq: None,
        })
        .await;
    // The watcher's first ping comes at once; then the player's pings are counted until
    // the watcher has six more (18 ticks): nine of the player's.
    watcher.recv_ping().await;
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let mut player = red.client;
    let counting = tokio::spawn(async move {
        let mut pings = 0;
        loop {
            tokio::select! {
                _ = &mut stopped => return pings,
                _ = player.recv_ping() => pings += 1,
            }
        }
    });
    for _ in 0..6 {
        watcher.recv_ping().await;
    }
    stop.send(()).unwrap();
    let pings = counting.await.unwrap();
    // Nine expected; a tick may fall either side of the window's ends. (Every tick would
    // be 18, every third 6.)
    assert!(
        (7..=11).contains(&pings),
        "the player was pinged {pings} times while the watcher was 6 times"
    );
}

/// Reads frames until `pings` more websocket pings came, holding each pong back by
/// `hold` (the library sends it at the next read); returns the `lag` reports on the way.
async fn answer_pings(client: &mut Client, pings: u64, hold: Duration) -> Vec<u64> {
    let mut reports = Vec::new();
    let until = client.pings + pings;
    while client.pings < until {
        match within("a frame", client.ws.next()).await {
            Some(Ok(Message::Ping(_))) => {
                client.pings += 1;
                // A far client: its pong leaves `hold` later.
                tokio::time::sleep(hold).await;
            }
            Some(Ok(Message::Text(text))) => {
                if let Ok(ServerFrame::Message(ServerMessage::Lag { rtt_ms })) =
                    serde_json::from_str(text.as_str())
                {
                    reports.push(rtt_ms);
                }
            }
            Some(Ok(_)) => {}
            other => panic!("the connection ended: {other:?}"),
        }
    }
    reports
}

/// The server's lag estimate of `client` now, from the `pong` of a JSON `ping`, and the
/// `lag` reports read on the way (one the estimate brought comes before the `pong`).
async fn estimate(client: &mut Client) -> (u64, Vec<u64>) {
    client
        .send(&ClientMessage::Ping {
            client_ms: Some(1),
            lag_ms: None,
        })
        .await;
    let mut reports = Vec::new();
    loop {
        match within("a pong", client.ws.next()).await {
            Some(Ok(Message::Text(text))) => match serde_json::from_str(text.as_str()) {
                Ok(ServerFrame::Message(ServerMessage::Lag { rtt_ms })) => reports.push(rtt_ms),
                Ok(ServerFrame::Message(ServerMessage::Pong { lag_ms, .. })) => {
                    return (lag_ms.expect("measured"), reports)
                }
                _ => {}
            },
            Some(Ok(_)) => {}
            other => panic!("the connection ended: {other:?}"),
        }
    }
}

/// The `lag` report comes after the first measurement and then only when the estimate
/// moved by 10 ms or more from the last one reported (as a seat's `lag` change in its
/// games): an unchanged one is news to nobody, and a jitter of a few milliseconds cost a
/// frame at most pings. The `pong` of a JSON `ping` carries the estimate itself.
#[tokio::test]
async fn a_lag_report_comes_only_when_the_estimate_moved_by_10_ms() {
    let config = server::Config {
        // A connection with no seat is pinged at every third interval: every 120 ms.
        ping_interval: Duration::from_millis(40),
        first_ping: Some(Duration::from_millis(10)),
        ..test_config()
    };
    let server = TestServer::start_with(config).await;
    let mut client = Client::new_player(&server, "Steady").await;
    // Answered at once: the first measurement is reported.
    let mut reports = answer_pings(&mut client, 5, Duration::ZERO).await;
    assert!(!reports.is_empty(), "the first measurement is reported");
    let quick = reports.len();
    // Then 50 ms away: the estimate climbs by quarters towards 50, reported in steps.
    reports.extend(answer_pings(&mut client, 12, Duration::from_millis(50)).await);
    assert!(
        reports.len() >= quick + 2,
        "the climb towards 50 ms is reported: {reports:?}"
    );
    for pair in reports.windows(2) {
        assert!(
            pair[0].abs_diff(pair[1]) >= 10,
            "a change under 10 ms reported: {reports:?}"
        );
    }
    // The estimate now, from a `pong` (a report it brought comes before it): within a
    // step of the last report.
    let (estimate, on_the_way) = estimate(&mut client).await;
    reports.extend(on_the_way);
    let last = *reports.last().expect("reports");
    assert!(
        last.abs_diff(estimate) < 10,
        "estimate {estimate} ms, last reported {last} ms: {reports:?}"
    );
    assert!(estimate >= 30, "the estimate climbed: {estimate} ms");
}

/// A seat's game hears of its lag by the same rule as the client: when the estimate moved
/// by 10 ms or more. A player whose pongs come 50 ms late is seen by his opponent to climb
/// in steps of 10 ms or more, up to within a step of the estimate itself.
#[tokio::test]
async fn the_opponent_sees_a_seats_lag_climb_in_steps_up_to_the_estimate() {
    let server = server_pinging_every(40).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let me = red.seat();
    // Near first (measured at a millisecond or two), then 50 ms away.
    answer_pings(&mut red.client, 4, Duration::ZERO).await;
    answer_pings(&mut red.client, 12, Duration::from_millis(50)).await;
    let (estimate, _) = estimate(&mut red.client).await;
    assert!(estimate >= 30, "the estimate climbed: {estimate} ms");
    let mut seen: Vec<u64> = Vec::new();
    while seen.last().is_none_or(|l| l.abs_diff(estimate) >= 10) {
        let ev = black
            .until_change(
                "the opponent's lag reaching the estimate",
                |c| matches!(c, Change::Lag { player, .. } if *player == me),
            )
            .await;
        if let Change::Lag { rtt_ms, .. } = ev.change {
            seen.push(rtt_ms);
        }
    }
    assert!(seen.len() >= 2, "the climb is published in steps: {seen:?}");
    for pair in seen.windows(2) {
        assert!(
            pair[0].abs_diff(pair[1]) >= 10,
            "a change under 10 ms published: {seen:?}"
        );
    }
}
