//! Presence through the sans-IO room, in memory: graces, claims of abandonment, both
//! players gone, what a restart keeps, lag reports, and presence told at most once a
//! second.

mod table;

use protocol::game::{Player, Status};
use protocol::record::EntryKind;
use protocol::wire::Change;
use table::*;

#[test]
fn a_player_away_past_his_grace_loses_to_a_claim() {
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.take();
    t.room.leave(Player::Black, 1_000);
    t.take();
    let last = t.events.last().unwrap();
    let Change::Presence {
        player,
        connected,
        grace_until_ms,
    } = last.change.clone()
    else {
        panic!("a presence event: {:?}", t.events.last());
    };
    assert_eq!(
        (player, connected, last.now_ms),
        (Player::Black, false, 1_000)
    );
    assert_eq!(grace_until_ms, Some(1_000 + GRACES.reconnect_ms));

    let (code, message) = t.room.claim_abandonment(Player::Red, 5_000).unwrap_err();
    assert_eq!(code, "grace_running");
    assert_eq!(
        message,
        "Black may still come back: 6.0 s left (his grace ends at 11000 ms of game time)"
    );
    let (code, _) = t.room.claim_abandonment(Player::Black, 5_000).unwrap_err();
    assert_eq!(code, "opponent_connected");

    t.run_until(11_000);
    assert!(
        t.events.iter().any(|e| e.now_ms == 11_000
            && matches!(
                e.change,
                Change::GraceExpired {
                    player: Player::Black
                }
            )),
        "the grace runs out at its instant: {:?}",
        t.events
    );
    t.room.claim_abandonment(Player::Red, 12_000).unwrap();
    t.take();
    assert!(!t.room.game().is_playing());
    assert!(matches!(
        t.room.entries().last().unwrap().kind,
        EntryKind::Abandon {
            player: Player::Black
        }
    ));
    assert!(
        matches!(t.room.game().status(), Status::Finished { outcome } if outcome.winner == Some(Player::Red))
    );
    assert_eq!(t.ended, 1);
    assert_eq!(&t.replica, t.room.game());
}

/// What a restart or a takeover keeps of presence: a seat's grace as told (its end, or
/// `None` when he is back); a room rebuilt with it goes on from it, not from a fresh grace:
/// a grace still running ends at its own instant, one that ran out can be claimed at once,
/// and a claim window that closed meanwhile ends the game at once.
#[test]
fn a_grace_is_kept_and_a_rebuilt_room_goes_on_from_it() {
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.room.leave(Player::Black, 1_000);
    t.room.arrive(Player::Black, 2_000);
    t.take();
    assert_eq!(
        t.absences,
        [(Player::Black, Some(11_000)), (Player::Black, None)]
    );
    t.room.leave(Player::Black, 3_000);
    t.take();
    t.run_until(13_000);
    assert_eq!(t.absences[2..], [(Player::Black, Some(13_000))]);

    // Rebuilt (the same entry) with Black away until 13,000, at `now`.
    let rebuilt = |now: u64| {
        let mut r = Table::new(unhurried());
        r.room.act(Player::Red, first, 100, 100, None).unwrap();
        r.room.catch_up(now, now);
        r.room.restore_away(Player::Black, 13_000, now);
        r.take();
        r
    };
    // Within his grace: it ends at its own instant, not 10 s after the restart.
    let mut r = rebuilt(5_000);
    assert_eq!(r.room.next_deadline(), Some(13_000));
    let (code, _) = r.room.claim_abandonment(Player::Red, 5_000).unwrap_err();
    assert_eq!(code, "grace_running");
    // After it: Red may claim at once.
    let mut r = rebuilt(15_000);
    r.room.on_time(15_000);
    r.take();
    assert_eq!(
        r.room.next_deadline(),
        Some(13_000 + GRACES.claim_window_ms),
        "the window counts from the grace's end"
    );
    r.room.claim_abandonment(Player::Red, 15_000).unwrap();
    r.take();
    assert!(matches!(
        r.room.entries().last().unwrap().kind,
        EntryKind::Abandon {
            player: Player::Black
        }
    ));
    // After the window closed too: the game is ended for Red at once.
    let mut r = rebuilt(20_000);
    r.room.on_time(20_000);
    r.take();
    let last = r.room.entries().last().unwrap();
    assert_eq!(
        (last.at_ms, &last.kind),
        (
            20_000,
            &EntryKind::Abandon {
                player: Player::Black
            }
        )
    );
    assert_eq!(&r.replica, r.room.game());
}

#[test]
fn an_unclaimed_win_is_given_when_the_claim_window_closes() {
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.room.leave(Player::Black, 1_000);
    t.take();
    t.run_until(1_000 + GRACES.reconnect_ms + GRACES.claim_window_ms);
    assert!(!t.room.game().is_playing());
    let last = t.room.entries().last().unwrap();
    assert_eq!(
        last.at_ms,
        1_000 + GRACES.reconnect_ms + GRACES.claim_window_ms
    );
    assert!(matches!(
        last.kind,
        EntryKind::Abandon {
            player: Player::Black
        }
    ));
}

#[test]
fn a_game_both_players_left_is_decided_when_both_graces_ran_out() {
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.room.leave(Player::Red, 500);
    t.room.leave(Player::Black, 700);
    t.take();
    t.run_until(700 + GRACES.reconnect_ms);
    assert!(!t.room.game().is_playing());
    assert!(matches!(
        t.room.entries().last().unwrap().kind,
        EntryKind::BothAbsent
    ));
    // Red's grace ran out first, and is told first.
    let expiries: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e.change {
            Change::GraceExpired { player } => Some((player, e.now_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        expiries,
        [
            (Player::Red, 500 + GRACES.reconnect_ms),
            (Player::Black, 700 + GRACES.reconnect_ms)
        ]
    );
}

#[test]
fn a_player_back_in_time_is_told_and_cannot_be_claimed_against() {
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.room.leave(Player::Black, 1_000);
    t.room.arrive(Player::Black, 3_000);
    t.take();
    let last = t.events.last().unwrap();
    assert!(matches!(
        last.change,
        Change::Presence {
            player: Player::Black,
            connected: true,
            ..
        }
    ));
    assert_eq!(last.now_ms, 3_000);
    assert_eq!(t.room.next_deadline(), t.room.game().next_deadline());
    let (code, _) = t.room.claim_abandonment(Player::Red, 20_000).unwrap_err();
    assert_eq!(code, "opponent_connected");
}

#[test]
fn a_lag_is_published_once_it_moves_by_ten_ms() {
    let mut t = Table::new(unhurried());
    t.room.lag_measured(Player::Red, 80, 50, 50);
    t.room.lag_measured(Player::Red, 85, 60, 60);
    t.room.lag_measured(Player::Red, 95, 70, 70);
    t.take();
    let lags: Vec<u32> = t
        .room
        .entries()
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::Lag { lag_ms, .. } => Some(lag_ms),
            _ => None,
        })
        .collect();
    assert_eq!(lags, [80, 95]);
    // Each is published once, as a `lag` change at its instant, never inside a `play`.
    let published: Vec<(u64, u64)> = t
        .events
        .iter()
        .filter_map(|e| match e.change {
            Change::Lag { rtt_ms, .. } => Some((rtt_ms, e.now_ms)),
            Change::Play { ref entry, .. } => {
                assert!(!matches!(entry.kind, EntryKind::Lag { .. }), "{e:?}");
                None
            }
            _ => None,
        })
        .collect();
    assert_eq!(published, [(80, 50), (95, 70)]);
    assert_eq!(t.room.lag(Player::Red), Some(95));
    assert_eq!(&t.replica, t.room.game());
}

#[test]
fn a_lag_too_large_for_an_entry_is_judged_as_recorded() {
    let mut t = Table::new(unhurried());
    t.room.lag_measured(Player::Red, u64::MAX, 50, 50);
    t.take();
    let recorded = t.room.entries().iter().find_map(|e| match e.kind {
        EntryKind::Lag { lag_ms, .. } => Some(lag_ms),
        _ => None,
    });
    assert_eq!(recorded, Some(u32::MAX));
    assert_eq!(t.room.lag(Player::Red), Some(u64::from(u32::MAX)));
    // The live engine and a replica fed the published entry judge with the same lag.
    assert_eq!(&t.replica, t.room.game());
}

/// A player cycling `leave` and `join` made a presence event each time, and the flood
/// cut his opponent off. Now a seat's presence is told at most once a second: the state
/// it is in when the second is over (or before any other event), and the grace still
/// counts from the real departure.
#[test]
fn a_flapping_seat_makes_at_most_one_presence_event_a_second() {
    use server::room::PRESENCE_INTERVAL_MS;
    let mut t = Table::new(unhurried());
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.take();
    let presence = |t: &Table| {
        t.events
            .iter()
            .filter_map(|e| match e.change {
                Change::Presence {
                    connected,
                    grace_until_ms,
                    ..
                } => Some((e.now_ms, connected, grace_until_ms)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // 200 changes in 2 s: told at 1,000 (the first), then once a second.
    let mut now = 1_000;
    for i in 0..200 {
        t.run_until(now);
        if i % 2 == 0 {
            t.room.leave(Player::Black, now);
        } else {
            t.room.arrive(Player::Black, now);
        }
        t.take();
        now += 10;
    }
    t.run_until(now + PRESENCE_INTERVAL_MS);
    let told = presence(&t);
    assert_eq!(
        told,
        [
            (1_000, false, Some(1_000 + GRACES.reconnect_ms)),
            (2_000, true, None)
        ],
        "the first change at once, then the state a second later"
    );
    // He leaves for good: told at once (a second passed), and his grace counts from then.
    let gone = now + PRESENCE_INTERVAL_MS;
    t.room.leave(Player::Black, gone);
    t.take();
    assert_eq!(
        presence(&t).last(),
        Some(&(gone, false, Some(gone + GRACES.reconnect_ms)))
    );
    // Back and gone again at once: told when the second since the last is over.
    t.room.arrive(Player::Black, gone + 10);
    t.room.leave(Player::Black, gone + 20);
    t.take();
    assert_eq!(presence(&t).len(), 3, "nothing new told yet");
    t.run_until(gone + 20 + GRACES.reconnect_ms);
    let told = presence(&t);
    assert_eq!(
        told[3],
        (
            gone + PRESENCE_INTERVAL_MS,
            false,
            Some(gone + 20 + GRACES.reconnect_ms)
        ),
        "{told:?}"
    );
    // The grace runs out at the real departure's end, after the departure was told.
    let expired = t
        .events
        .iter()
        .position(|e| matches!(e.change, Change::GraceExpired { .. }))
        .expect("the grace ran out");
    assert_eq!(t.events[expired].now_ms, gone + 20 + GRACES.reconnect_ms);
    assert!(matches!(
        t.events[expired - 1].change,
        Change::Presence {
            connected: false,
            ..
        }
    ));
}

/// A presence change still waiting is told before the next event of the room, so that
/// every event follows the presence it happened in.
#[test]
fn a_waiting_presence_change_is_told_before_the_next_event() {
    let mut t = Table::new(unhurried());
    t.room.leave(Player::Black, 50);
    t.room.arrive(Player::Black, 60);
    t.take();
    assert_eq!(
        t.events.len(),
        1,
        "the departure, told at once: {:?}",
        t.events
    );
    let first = opening(t.room.game());
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.take();
    assert!(
        matches!(
            t.events[1].change,
            Change::Presence {
                player: Player::Black,
                connected: true,
                ..
            }
        ),
        "{:?}",
        t.events
    );
    assert!(t.events[2].entry().is_some(), "then the move");
    assert_eq!(t.room.next_deadline(), t.room.game().next_deadline());
}
