//! The game task over real queues and a paused clock: deadlines at their instant,
//! actions judged at the instant they were read, graces.

//! The game task alone, on a paused clock: instants are exact.

use super::*;
use crate::config::Config;
use crate::hub::Hub;
use crate::lobby::SeekResult;
use protocol::game::Event;
use protocol::record::EntryKind;
use protocol::settings::Level;
use protocol::wire::Change;

struct Seat {
    peer: Peer,
    rx: crate::outbox::Receiver<Utf8Bytes>,
    player: Arc<PlayerRec>,
    seat: Player,
}

async fn recv(rx: &mut crate::outbox::Receiver<Utf8Bytes>) -> ServerMessage {
    let text = rx.recv().await.expect("a message");
    serde_json::from_str(text.as_str()).expect("valid message")
}

async fn next_event(rx: &mut crate::outbox::Receiver<Utf8Bytes>) -> GameEvent {
    loop {
        if let ServerMessage::Event(ev) = recv(rx).await {
            return *ev;
        }
    }
}

/// A hub without a network, and two players paired on `settings`: (hub, red, black).
/// On tokio's paused clock, so deadlines wake from tokio's timer.
async fn pair(settings: Settings, config: Config) -> (Arc<Hub>, GameId, Seat, Seat) {
    let config = Config {
        precise_timer: false,
        ..config
    };
    pair_on(settings, config).await
}

/// [`pair`] with `config` as it is (the alarm thread if it says so).
async fn pair_on(settings: Settings, config: Config) -> (Arc<Hub>, GameId, Seat, Seat) {
    let config = Config {
        game_threads: 0,
        ..config
    };
    let store = crate::store::Store::detached();
    let hub = Arc::new(Hub::new(config, store));
    let mut seats = Vec::new();
    let mut game = None;
    for (i, name) in ["Ann", "Ben"].into_iter().enumerate() {
        let (peer, rx) = Peer::detached(i as u64, 64);
        let (_, player) = hub.register(name.into()).await.expect("registered");
        let seeker = Seeker {
            player: player.clone(),
            peer: peer.clone(),
        };
        if let SeekResult::Paired(id) = hub.seek(settings.clone(), None, seeker) {
            game = Some(id);
        }
        seats.push((peer, rx, player));
    }
    let mut out = Vec::new();
    for (peer, mut rx, player) in seats {
        let ServerMessage::Snapshot(s) = recv(&mut rx).await else {
            panic!("a snapshot")
        };
        out.push(Seat {
            peer,
            rx,
            player,
            seat: s.seat.expect("seated"),
        });
    }
    out.sort_by_key(|s| s.seat);
    let black = out.pop().unwrap();
    let red = out.pop().unwrap();
    (hub, game.expect("paired"), red, black)
}

async fn act(hub: &Hub, game: GameId, seat: &Seat, action: Action) {
    let cmd = GameCmd::Act {
        peer: seat.peer.clone(),
        player: seat.player.clone(),
        action,
        received: Instant::now(),
        seen: None,
    };
    hub.game(game).unwrap().tx.send(cmd).await.unwrap();
}

fn mv(from: &str, to: &str) -> Action {
    Action::Move {
        from: from.parse().unwrap(),
        to: to.parse().unwrap(),
        drop: true,
    }
}

#[tokio::test(start_paused = true)]
async fn death_goes_out_at_its_exact_instant() {
    let settings = Settings {
        turn_limit_ms: None,
        ..Settings::blitz(Level::Two)
    };
    let (hub, game, mut red, mut black) = pair(settings, Config::default()).await;
    let t0 = Instant::now();
    tokio::time::advance(Duration::from_millis(250)).await;
    act(&hub, game, &red, mv("d1", "d2")).await;
    let ev = next_event(&mut red.rx).await;
    assert_eq!((ev.seq, ev.now_ms), (1, 250));
    tokio::time::advance(Duration::from_millis(100)).await;
    act(&hub, game, &black, mv("a1", "b1")).await;
    next_event(&mut red.rx).await;
    // Nothing is sent; the paused clock jumps to the task's next deadline.
    let ev = next_event(&mut red.rx).await;
    let Change::Play { events, .. } = &ev.change else {
        panic!("a play")
    };
    assert!(matches!(
        events[..],
        [Event::HourglassDied {
            at: 3250,
            in_hand: false,
            ..
        }]
    ));
    assert_eq!(ev.now_ms, 3250);
    assert_eq!(t0.elapsed(), Duration::from_millis(3250));
    let ev = next_event(&mut red.rx).await;
    assert_eq!(ev.now_ms, 3350, "Black's A dies 3 s after its flip");
    assert_eq!(next_event(&mut black.rx).await.seq, 1);
}

/// A game task held up past a deadline still judges an action read before that
/// deadline at the instant it was read, and only then fires the deadline.
#[tokio::test(start_paused = true)]
async fn an_action_read_before_a_deadline_is_judged_before_it() {
    let (hub, game, mut red, black) = pair(Settings::blitz(Level::Three), Config::default()).await;
    tokio::time::advance(Duration::from_millis(100)).await;
    act(&hub, game, &black, Action::Flip).await;
    let ev = next_event(&mut red.rx).await;
    assert_eq!(ev.now_ms, 100, "the 15-second timer runs out at 400");
    tokio::time::advance(Duration::from_millis(299)).await;
    // Read at 399, but queued behind another command while the task was stalled
    // until 450: the expiry at 400 is overdue when the task gets to it.
    let tx = &hub.game(game).unwrap().tx;
    tx.try_send(GameCmd::Lag {
        conn: red.peer.conn,
        rtt_ms: 1,
        received: Instant::now() + Duration::from_millis(50),
    })
    .unwrap();
    tx.try_send(GameCmd::Act {
        peer: red.peer.clone(),
        player: red.player.clone(),
        action: mv("d1", "d2"),
        received: Instant::now(),
        seen: None,
    })
    .unwrap();
    tokio::time::advance(Duration::from_millis(51)).await;
    let ev = loop {
        let ev = next_event(&mut red.rx).await;
        if matches!(ev.change, Change::Play { .. }) {
            break ev;
        }
    };
    let Change::Play { entry, events, .. } = &ev.change else {
        unreachable!()
    };
    assert_eq!(entry.at_ms, 399, "judged at the instant it was read");
    assert!(matches!(
        entry.kind,
        EntryKind::Act {
            player: Player::Red,
            ..
        }
    ));
    assert!(
        !events.iter().any(|e| matches!(
            e,
            Event::TurnForfeited { .. } | Event::NeutralExpired { .. }
        )),
        "Red's move beat the timer: {events:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn grace_runs_out_at_its_exact_instant() {
    let settings = Settings {
        abort_ms: 3_600_000,
        ..Settings::blitz(Level::One)
    };
    let (hub, game, mut red, black) = pair(settings, Config::default()).await;
    act(&hub, game, &red, mv("d1", "d2")).await;
    next_event(&mut red.rx).await;
    tokio::time::advance(Duration::from_millis(40)).await;
    let cmd = GameCmd::Unsubscribe {
        conn: black.peer.conn,
        reply: None,
    };
    hub.game(game).unwrap().tx.send(cmd).await.unwrap();
    let ev = next_event(&mut red.rx).await;
    assert_eq!(
        ev.change,
        Change::Presence {
            player: Player::Black,
            connected: false,
            grace_until_ms: Some(60_040),
        }
    );
    let ev = next_event(&mut red.rx).await;
    assert_eq!(
        ev.change,
        Change::GraceExpired {
            player: Player::Black,
        }
    );
    assert_eq!(ev.now_ms, 60_040);
    // Red does not claim: the server ends the game for him when his window closes.
    let ev = next_event(&mut red.rx).await;
    assert_eq!(ev.now_ms, 120_040);
    let Change::Play { entry, events, .. } = &ev.change else {
        panic!("the end, not {:?}", ev.change)
    };
    assert_eq!(
        entry.kind,
        EntryKind::Abandon {
            player: Player::Black
        }
    );
    assert!(
        matches!(events.last(), Some(Event::GameEnded { outcome, .. }) if outcome.winner == Some(Player::Red)),
        "{events:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_move_goes_to_the_player_to_move_first_and_the_watchers_last() {
    let settings = Settings {
        turn_limit_ms: None,
        ..Settings::blitz(Level::Two)
    };
    let (hub, game, mut red, mut black) = pair(settings, Config::default()).await;
    let (peer, mut watcher) = Peer::detached(9, 64);
    let subscribe = GameCmd::Subscribe {
        peer,
        player: None,
        after_seq: None,
        remote: false,
    };
    hub.game(game).unwrap().tx.send(subscribe).await.unwrap();
    let ServerMessage::Snapshot(_) = recv(&mut watcher).await else {
        panic!("the watcher's snapshot")
    };
    // The watcher's arrival is told at once (the first count): read first, with whatever
    // came before it.
    for rx in [&mut red.rx, &mut black.rx] {
        while !matches!(recv(rx).await, ServerMessage::Watchers { count: 1, .. }) {}
    }
    while watcher.try_recv().is_ok() {}
    let log = crate::outbox::WakeLog::default();
    log.watch(&mut watcher, "watcher");
    log.watch(&mut red.rx, "red");
    log.watch(&mut black.rx, "black");
    act(&hub, game, &red, mv("d1", "d2")).await;
    // The game task runs when this one yields; the queues are not polled meanwhile (a
    // poll would replace the logging waker).
    for _ in 0..100 {
        if log.order().len() == 3 {
            break;
        }
        tokio::task::yield_now().await;
    }
    for rx in [&mut red.rx, &mut black.rx, &mut watcher] {
        let ev = next_event(rx).await;
        assert!(matches!(ev.change, Change::Play { .. }), "the move: {ev:?}");
    }
    // Black first, whose turn it now is (a connection's frames are written by the game
    // task as it hands them on, see `wire`), then the mover's echo, then the watcher.
    assert_eq!(log.order(), ["black", "red", "watcher"]);
}

/// With the alarm thread, a death is announced at its instant even while the runtime's
/// only worker is busy: the alarm thread runs the game task itself (`alarm::direct`).
#[tokio::test]
async fn the_alarm_thread_announces_a_death_while_the_workers_are_busy() {
    let settings = Settings {
        turn_limit_ms: None,
        hourglass_ms: 300,
        ..Settings::blitz(Level::Two)
    };
    let config = Config {
        precise_timer: true,
        realtime_priority: 0,
        ..Config::default()
    };
    let (hub, game, mut red, black) = pair_on(settings, config).await;
    act(&hub, game, &red, mv("d1", "d2")).await;
    let moved = next_event(&mut red.rx).await;
    act(&hub, game, &black, mv("a1", "b1")).await;
    next_event(&mut red.rx).await;
    // Red's D, flipped at his move, dies 300 ms after it. Until then and after, this test
    // holds the runtime's one thread: nothing of the runtime runs until it lets go.
    let flipped = std::time::Instant::now();
    let died = loop {
        assert!(
            flipped.elapsed() < Duration::from_secs(10),
            "no death announced while the worker was busy"
        );
        match red.rx.try_recv() {
            Ok(text) => {
                let ServerMessage::Event(ev) = serde_json::from_str(text.as_str()).unwrap() else {
                    continue;
                };
                if let Change::Play { events, .. } = &ev.change {
                    if let Some(at) = events.iter().find_map(|e| match e {
                        Event::HourglassDied { at, .. } => Some(*at),
                        _ => None,
                    }) {
                        break at;
                    }
                }
            }
            Err(_) => std::hint::spin_loop(),
        }
    };
    // From the move's own instant (the frame's `now_ms` is when it was sent: a
    // millisecond later on a busy machine).
    let Change::Play { entry, .. } = &moved.change else {
        panic!("the move: {moved:?}")
    };
    assert_eq!(died, entry.at_ms + 300, "its exact instant");
    drop(hub);
}

/// With the alarm thread, a finished game still closes when its linger runs out: the
/// alarm thread, which runs it at that deadline, hands its closing to the runtime (a
/// hand-over that never came back would leave it open).
#[tokio::test]
async fn with_the_alarm_thread_an_ended_game_closes_after_its_linger() {
    let config = Config {
        precise_timer: true,
        realtime_priority: 0,
        linger: Duration::from_millis(50),
        ..Config::default()
    };
    let (hub, game, mut red, _black) = pair_on(Settings::blitz(Level::One), config).await;
    act(&hub, game, &red, Action::Resign).await;
    let ended = next_event(&mut red.rx).await;
    let Change::Play { events, .. } = &ended.change else {
        panic!("a play: {ended:?}")
    };
    assert!(
        events.iter().any(|e| matches!(e, Event::GameEnded { .. })),
        "{ended:?}"
    );
    assert!(hub.game(game).is_some(), "listed while it lingers");
    hub.game_tasks.close();
    tokio::time::timeout(Duration::from_secs(10), hub.game_tasks.wait())
        .await
        .expect("the game's task ended after its linger");
    assert!(hub.game(game).is_none());
}
