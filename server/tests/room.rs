//! Whole games through the sans-IO room, in memory: no socket, no task, no clock. The
//! test is the clock (game milliseconds) and the players; what comes out is checked
//! against a replica that only sees the published events, as every client does.

mod table;

use protocol::game::{Action, Player};
use protocol::record::EntryKind;
use protocol::settings::{Level, Settings};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use table::*;

#[test]
fn a_whole_level_3_game_is_played_through_the_room() {
    let mut total = 0;
    for seed in 0..8u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut t = Table::new(Settings::blitz(Level::Three));
        let mut now = 0;
        let mut acts = 0;
        while t.room.game().is_playing() && acts < 2_000 {
            now += rng.gen_range(20..250);
            t.run_until(now);
            if !t.room.game().is_playing() {
                break;
            }
            let player = if rng.gen_bool(0.5) {
                Player::Red
            } else {
                Player::Black
            };
            // Anything but resigning, which would end the game at once.
            let mut legal = t.room.game().legal_actions(player);
            legal.retain(|a| !matches!(a, Action::Resign));
            if legal.is_empty() {
                continue;
            }
            let action = legal[rng.gen_range(0..legal.len())];
            // A legal action at the engine's state may be too late once time advanced to
            // `now`: then it is refused and nothing but what fell due changes.
            let before = t.room.entries().len();
            match t.room.act(player, action, now, now, Some(t.room.seq())) {
                Ok(()) => acts += 1,
                Err(_) => {
                    let after = t.room.entries().len();
                    assert!(
                        t.room.entries()[before..after]
                            .iter()
                            .all(|e| matches!(e.kind, EntryKind::Advance)),
                        "a refused action leaves no entry of its own"
                    );
                }
            }
            t.take();
        }
        // Nobody moves any more: the clocks end it.
        for _ in 0..10_000 {
            let Some(d) = t.room.next_deadline() else {
                break;
            };
            t.run_until(d);
        }
        assert!(!t.room.game().is_playing(), "seed {seed}: the game ended");
        assert_eq!(t.ended, 1, "seed {seed}: the end is reported once");
        assert_eq!(
            &t.replica,
            t.room.game(),
            "seed {seed}: the replica is the game"
        );
        assert_eq!(t.entries_out as usize, t.room.entries().len());
        assert!(acts >= 10, "seed {seed}: only {acts} actions were accepted");
        total += acts;
    }
    eprintln!("{total} actions in 8 games");
}

#[test]
fn an_illegal_action_changes_nothing_and_says_why() {
    let mut t = Table::new(Settings::blitz(Level::Three));
    let err = t
        .room
        .act(Player::Black, Action::Claim, 10, 10, None)
        .expect_err("nothing to claim at the start");
    assert!(!err.code().is_empty());
    t.take();
    assert!(t.events.is_empty(), "no event: {:?}", t.events);
    assert!(t.room.entries().is_empty());
}

/// An action sent before the turn it would act in began (its `seq` is older than the event
/// that began the turn) is refused `stale_action` and changes nothing: a move meant for a
/// turn that was forfeited on the way is not played in a position its player has not seen.
/// A drop or a resignation is never stale, and an action with no `seq` is not judged so.
#[test]
fn an_action_sent_before_its_turn_began_is_stale() {
    let mut t = Table::new(Settings::level(Level::Three));
    let first = a_move(&t, Player::Red);
    t.room.act(Player::Red, first, 100, 100, None).unwrap();
    t.take();
    let turn_began = t.room.seq();
    let black = a_move(&t, Player::Black);
    let before = (t.room.seq(), t.room.entries().len());
    let err = t
        .room
        .act(Player::Black, black, 200, 200, Some(turn_began - 1))
        .unwrap_err();
    assert_eq!(err.code(), "stale_action");
    t.take();
    assert_eq!(
        (t.room.seq(), t.room.entries().len()),
        before,
        "nothing changed"
    );
    // Sent having seen the move, or without a `seq`: played.
    t.room
        .act(Player::Black, black, 250, 250, Some(turn_began))
        .unwrap();
    t.take();
    let red = a_move(&t, Player::Red);
    t.room.act(Player::Red, red, 300, 300, None).unwrap();
    t.take();
    // A resignation is never stale.
    t.room
        .act(Player::Black, Action::Resign, 400, 400, Some(0))
        .unwrap();
    t.take();
    assert!(!t.room.game().is_playing());
}
