//! Lag-fair clocks over real sockets: a player 150 ms away (each way, through a delaying
//! proxy) who answers every flip of the 15-second timer just before it runs out as he sees
//! it loses no turn; a client that merely claims a large lag gains nothing.

use std::time::Duration;

use protocol::game::{Action, Event};
use protocol::record::EntryKind;
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, ServerMessage};
use tamsk_tests::*;
use tokio::time::{sleep_until, Instant};

const NEUTRAL_MS: u64 = 3_000;

fn settings() -> Settings {
    Settings {
        hourglass_ms: 60_000,
        neutral_ms: NEUTRAL_MS,
        drop_grace_ms: 500,
        turn_limit_ms: None,
        game_clock: None,
        ..Settings::level(Level::Three)
    }
}

/// One lag measurement, right after connecting: a test client reads its socket (and so
/// answers pings) only while it waits for something, unlike a real client.
fn config() -> server::Config {
    server::Config {
        ping_interval: Duration::from_secs(3_600),
        first_ping: Some(Duration::from_millis(20)),
        abort_ms: 30_000,
        late_release_ms: 5_000,
        ..test_config()
    }
}

/// A move that neither loses on a full socket nor breaks a rule, from `f`'s replica.
fn a_move(f: &Follower) -> Action {
    let me = f.seat();
    f.replica
        .legal_actions(me)
        .into_iter()
        .find(|a| matches!(a, Action::Move { to, drop: true, .. } if !f.replica.is_full(*to)))
        .expect("a move")
}

/// Waits until the server has measured `c`'s round trip at `at_least` ms or more (the
/// measurement may have come already, while the client awaited its welcome or a pong).
async fn measured(c: &mut Client, at_least: u64) -> u64 {
    loop {
        if let Some(rtt_ms) = c.rtt_ms.filter(|&r| r >= at_least) {
            return rtt_ms;
        }
        c.recv_frame().await;
    }
}

/// Two players seek the test settings; returns (far, near) as followers.
async fn pair(far: Client, near: Client) -> (Follower, Follower) {
    let mut far = far;
    let mut near = near;
    for c in [&mut far, &mut near] {
        c.send(&ClientMessage::Seek {
            settings: settings(),
            rated: None,
        })
        .await;
    }
    let far = Follower::await_snapshot(far).await;
    let near = Follower::await_snapshot(near).await;
    assert_eq!(far.game, near.game);
    (far, near)
}

/// `mover` moves at once; both followers see the release.
async fn move_now(mover: &mut Follower, other: &mut Follower) {
    let me = mover.seat();
    let mv = a_move(mover);
    mover.act(mv).await;
    let released = |e: &Event| matches!(e, Event::MoveReleased { player, .. } if *player == me);
    mover.until("the release", released).await;
    other.until("the release", released).await;
}

#[tokio::test]
async fn a_player_150_ms_away_answering_at_the_last_moment_loses_no_turn() {
    let server = TestServer::start_with(config()).await;
    let proxy = proxy::delaying(server.addr, Duration::from_millis(150)).await;
    let mut far = Client::new_player_at(proxy, "Far").await;
    let near = Client::new_player(&server, "Near").await;
    let rtt = measured(&mut far, 250).await;
    assert!(rtt < 1_000, "a 300 ms round trip measured as {rtt}");
    let (mut far, mut near) = pair(far, near).await;
    let far_seat = far.seat();
    let mut late_turns = 0;
    while late_turns < 4 {
        assert!(near.replica.is_playing(), "{:?}", near.replica.status());
        if near.replica.turn() == near.seat() {
            move_now(&mut near, &mut far).await;
            continue;
        }
        if near.replica.moves_made(far_seat) == 0 {
            move_now(&mut far, &mut near).await;
            continue;
        }
        // The near player flips the timer on the far player's turn...
        near.act(Action::Flip).await;
        let flipped = |e: &Event| matches!(e, Event::NeutralFlipped { .. });
        near.until("the flip", flipped).await;
        far.until("the flip", flipped).await;
        // ...who sees it 150 ms late and answers 100 ms before it runs out as he sees it:
        // his move reaches the server 200 ms after the timer's nominal end.
        let seen = Instant::now();
        sleep_until(seen + Duration::from_millis(NEUTRAL_MS - 100)).await;
        let mv = a_move(&far);
        far.act(mv).await;
        let (ev, e) = far
            .until("the far player's move or its forfeit", |e| {
                matches!(e, Event::MoveReleased { player, .. } | Event::TurnForfeited { player, .. } if *player == far_seat)
            })
            .await;
        assert!(
            matches!(e, Event::MoveReleased { .. }),
            "turn {late_turns}: {e:?} after {:?}",
            far.log
                .iter()
                .map(|ev| (ev.now_ms, &ev.change))
                .collect::<Vec<_>>()
        );
        let Change::Play { entry, events, .. } = &ev.change else {
            unreachable!()
        };
        let EntryKind::Act {
            lag_ms, comp_ms, ..
        } = entry.kind
        else {
            panic!("{entry:?}")
        };
        let comp = comp_ms.expect("the compensation is recorded");
        assert!(lag_ms.expect("the lag is recorded") >= 250, "{entry:?}");
        assert!(
            (150..=400).contains(&comp),
            "compensated {comp} ms for a move 200 ms late: {events:?}"
        );
        near.catch_up_to(far.seq).await;
        late_turns += 1;
    }
    let forfeits = near
        .log
        .iter()
        .flat_map(engine_events)
        .filter(|e| matches!(e, Event::TurnForfeited { .. }))
        .count();
    assert_eq!(forfeits, 0, "no turn was lost");
}

#[tokio::test]
async fn a_client_claiming_two_seconds_of_lag_gains_nothing_beyond_the_measured_lag() {
    let server = TestServer::start_with(config()).await;
    let mut liar = Client::new_player(&server, "Liar").await;
    liar.send(&ClientMessage::Ping {
        client_ms: None,
        lag_ms: Some(2_000),
    })
    .await;
    assert!(matches!(liar.recv().await, ServerMessage::Pong { .. }));
    let near = Client::new_player(&server, "Near").await;
    let rtt = measured(&mut liar, 0).await;
    assert!(rtt < 200, "the liar's estimate is the server's: {rtt}");
    let (mut liar, mut near) = pair(liar, near).await;
    let liar_seat = liar.seat();
    loop {
        if near.replica.turn() == near.seat() {
            move_now(&mut near, &mut liar).await;
        } else if near.replica.moves_made(liar_seat) == 0 {
            move_now(&mut liar, &mut near).await;
        } else {
            break;
        }
    }
    near.act(Action::Flip).await;
    let flipped = |e: &Event| matches!(e, Event::NeutralFlipped { .. });
    near.until("the flip", flipped).await;
    liar.until("the flip", flipped).await;
    // 300 ms after the timer ran out: two claimed seconds would cover it, the real lag not.
    sleep_until(Instant::now() + Duration::from_millis(NEUTRAL_MS + 300)).await;
    let (_, e) = near
        .until(
            "the liar's forfeit",
            |e| matches!(e, Event::TurnForfeited { player, .. } if *player == liar_seat),
        )
        .await;
    assert!(matches!(e, Event::TurnForfeited { .. }));
    let mv = a_move(&liar);
    liar.act(mv).await;
    liar.expect_error("not_your_turn").await;
    // Every lag the engine was given for the liar is the server's measurement.
    let lags: Vec<u32> = near
        .log
        .iter()
        .filter_map(|ev| match ev.entry()?.kind {
            EntryKind::Lag { player, lag_ms } if player == liar_seat => Some(lag_ms),
            _ => None,
        })
        .collect();
    assert!(lags.iter().all(|&l| l < 200), "{lags:?}");
}

/// A client's own lower figure (`ping {lag_ms}`) judges at once: its game records it as a
/// `lag` entry (before, the estimate was lowered but the games were told only at the next
/// measurement, so the figure judged nothing).
#[tokio::test]
async fn a_lower_lag_the_client_reports_is_recorded_by_its_game() {
    let server = TestServer::start_with(config()).await;
    let proxy = proxy::delaying(server.addr, Duration::from_millis(100)).await;
    let mut far = Client::new_player_at(proxy, "Far").await;
    let rtt = measured(&mut far, 150).await;
    let near = Client::new_player(&server, "Near").await;
    let (mut far, mut near) = pair(far, near).await;
    let seat = far.seat();
    let recorded = |f: &Follower| -> Vec<u32> {
        f.log
            .iter()
            .filter_map(|ev| match ev.entry()?.kind {
                EntryKind::Lag { player, lag_ms } if player == seat => Some(lag_ms),
                _ => None,
            })
            .collect()
    };
    assert!(
        recorded(&far).is_empty() || recorded(&far).iter().all(|&l| u64::from(l) >= 150),
        "{rtt}: {:?}",
        recorded(&far)
    );
    far.client
        .send(&ClientMessage::Ping {
            client_ms: None,
            lag_ms: Some(20),
        })
        .await;
    within("the lag entry of 20", async {
        while !recorded(&near).contains(&20) {
            near.next_event().await;
        }
    })
    .await;
}
