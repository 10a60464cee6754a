//! Lag compensation in the engine: deadlines that judge a player wait out his
//! compensation, sand does not, and the quota bounds what lag can buy.

mod common;

use common::lagsim::simulate;
use protocol::game::{Action, Event, Game, Player};
use protocol::lag::{QUOTA_CAP_MS, QUOTA_GAIN_MS, QUOTA_START_MS};
use protocol::record::{Entry, EntryKind, Record};
use protocol::settings::{Level, Settings};
use protocol::Square;

fn mv(from: &str, to: &str) -> Action {
    Action::Move {
        from: from.parse::<Square>().unwrap(),
        to: to.parse::<Square>().unwrap(),
        drop: true,
    }
}

#[test]
fn the_timer_judging_a_lagged_player_waits_out_his_compensation() {
    let mut game = Game::new(Settings::level(Level::Three));
    game.set_lag(Player::Red, 300);
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    // Nominally the timer runs out at 15,100; Red's 300 ms push it to 15,400.
    assert_eq!(game.next_deadline(), Some(15_400));
    let events = game.apply(Player::Red, mv("d1", "d2"), 15_350).unwrap();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::LagCompensated {
                player: Player::Red,
                comp_ms: 251,
                at: 15_350
            }
        )),
        "{events:?}"
    );
    let credit = game.credit(Player::Red);
    assert_eq!(credit.quota_ms, QUOTA_START_MS - 251 + QUOTA_GAIN_MS);
    assert_eq!(credit.used_ms, 251);
    // Only what was needed is charged: a move in time costs nothing.
    game.apply(Player::Black, mv("a1", "b1"), 15_400).unwrap();
    let events = game.apply(Player::Red, mv("g4", "g3"), 16_000).unwrap();
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::LagCompensated { .. })));
}

#[test]
fn without_lag_the_same_answer_is_too_late() {
    let mut game = Game::new(Settings::level(Level::Three));
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    assert_eq!(game.next_deadline(), Some(15_100));
    let err = game.apply(Player::Red, mv("d1", "d2"), 15_350).unwrap_err();
    assert_eq!(err.code(), "not_your_turn");
}

#[test]
fn sand_is_never_compensated() {
    let settings = Settings::blitz(Level::Two);
    let mut lagged = Game::new(settings.clone());
    lagged.set_lag(Player::Red, 2_000);
    let mut plain = Game::new(settings);
    for g in [&mut lagged, &mut plain] {
        g.apply(Player::Red, mv("d1", "d2"), 10).unwrap();
    }
    // Red's glass dies 3 s after its flip for everyone, lag or not.
    let death = |g: &mut Game| {
        g.advance(10_000)
            .into_iter()
            .find_map(|e| match e {
                Event::HourglassDied { at, .. } => Some(at),
                _ => None,
            })
            .expect("a death")
    };
    assert_eq!(death(&mut lagged), 3_010);
    assert_eq!(death(&mut plain), 3_010);
}

#[test]
fn an_honest_round_trip_of_300_ms_loses_no_turn() {
    for turn in simulate(300, 100, 30) {
        assert!(!turn.forfeited, "{turn:?}");
        assert!(turn.comp_ms > 0 && turn.comp_ms <= 300, "{turn:?}");
    }
}

#[test]
fn a_faked_lag_buys_at_most_the_quota() {
    // Two seconds of (faked) round trip, answering a second after the timer ran out: the
    // quota covers that once, then the turns lapse (and three in a row lose the game).
    let turns = simulate(2_000, 1_000, 20);
    assert!(turns.len() >= 2, "{turns:?}");
    assert!(turns[0].comp_ms > 1_000 && !turns[0].forfeited, "{turns:?}");
    for (i, t) in turns.iter().enumerate() {
        assert!(t.comp_ms <= QUOTA_CAP_MS, "turn {i}: {t:?}");
        assert!(t.quota_after_ms <= QUOTA_CAP_MS);
    }
    let used: u64 = turns.iter().map(|t| t.comp_ms).sum();
    let moves = turns.iter().filter(|t| !t.forfeited).count() as u64;
    assert!(
        used <= QUOTA_START_MS + QUOTA_GAIN_MS * moves,
        "used {used}"
    );
    assert!(
        turns.iter().any(|t| t.forfeited),
        "a second late cannot be covered turn after turn"
    );
}

#[test]
fn a_record_with_lag_entries_replays_to_the_same_judgement() {
    let settings = Settings::level(Level::Three);
    let entries = vec![
        Entry {
            at_ms: 50,
            kind: EntryKind::Lag {
                player: Player::Red,
                lag_ms: 300,
            },
        },
        Entry {
            at_ms: 100,
            kind: EntryKind::act(Player::Black, Action::Flip),
        },
        Entry {
            at_ms: 15_350,
            kind: EntryKind::act(Player::Red, mv("d1", "d2")),
        },
    ];
    let record = Record {
        settings,
        entries,
        ..Record::default()
    };
    let game = record.replay().expect("replays");
    assert_eq!(game.moves_made(Player::Red), 1);
    assert_eq!(game.credit(Player::Red).used_ms, 251);
    // Its text form keeps the lag entry, so it replays the same.
    let text = record.to_text();
    assert!(text.contains("lag"), "{text}");
    let back = Record::parse(&text).expect("parses");
    assert_eq!(back.replay().expect("replays"), game);
}

/// A drop after the nominal end of the mover's drop grace, let in only by the
/// compensation fixed when his window opened, is charged what it needed, as an action
/// past any other deadline judging him is (before: accepted and never charged).
#[test]
fn a_drop_past_the_nominal_grace_is_charged_what_it_needed() {
    let settings = Settings {
        drop_grace_ms: 300,
        ..Settings::level(Level::Three)
    };
    let grace = settings.drop_grace_ms;
    let release = |game: &mut Game, at| {
        let action = Action::Move {
            from: "d1".parse().unwrap(),
            to: "d2".parse().unwrap(),
            drop: false,
        };
        game.apply(Player::Red, action, at).unwrap();
    };
    let mut game = Game::new(settings.clone());
    game.set_lag(Player::Red, 200);
    release(&mut game, 100);
    // Nominally his grace ends at 400; 80 ms later only his 200 ms let the drop in.
    let events = game
        .apply(Player::Red, Action::Drop, 100 + grace + 80)
        .unwrap();
    assert!(
        events.contains(&Event::LagCompensated {
            player: Player::Red,
            comp_ms: 81,
            at: 480
        }),
        "{events:?}"
    );
    assert_eq!(game.credit(Player::Red).used_ms, 81);
    // Within the nominal grace the same drop costs nothing.
    let mut game = Game::new(settings);
    game.set_lag(Player::Red, 200);
    release(&mut game, 100);
    let events = game
        .apply(Player::Red, Action::Drop, 100 + grace - 1)
        .unwrap();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::LagCompensated { .. })),
        "{events:?}"
    );
    assert_eq!(game.credit(Player::Red).used_ms, 0);
}

/// A snapshot says each player's compensation now, so that a client can count down the
/// deadlines that judge him as the server judges them (the late-release bound, say, whose
/// `late_until_ms` is nominal).
#[test]
fn a_snapshot_shows_each_players_compensation() {
    let mut game = Game::new(Settings::level(Level::Three));
    game.set_lag(Player::Red, 300);
    game.set_lag(Player::Black, 5_000);
    let view = protocol::view::GameView::of(&game, &[]);
    assert_eq!(view.compensation_ms.red, 300, "his lag, within the quota");
    assert_eq!(
        view.compensation_ms.black, QUOTA_START_MS,
        "the quota bounds it"
    );
    // Black's flip: Red's timer runs out at 15,100 plus his 300 ms.
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    let view = protocol::view::GameView::of(&game, &[]);
    assert_eq!(
        game.next_deadline(),
        Some(15_100 + view.compensation_ms.red)
    );
}

/// A `lag` entry that lowers a player's compensation past a deadline judging him fires it
/// at the entry's own instant, never earlier (RULES.md decision 16).
#[test]
fn a_lower_lag_past_a_deadline_fires_it_at_the_lag_entrys_instant() {
    let mut game = Game::new(Settings::level(Level::Three));
    game.set_lag(Player::Red, 300);
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    assert_eq!(game.next_deadline(), Some(15_400));
    // At 15,300 his lag falls to nothing: the nominal 15,100 is past.
    let entry = Entry {
        at_ms: 15_300,
        kind: EntryKind::Lag {
            player: Player::Red,
            lag_ms: 0,
        },
    };
    let mut events = entry.apply_to(&mut game).unwrap();
    events.extend(game.advance(15_300));
    let expired = events
        .iter()
        .find_map(|e| match e {
            Event::NeutralExpired { at, .. } => Some(*at),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the timer ran out: {events:?}"));
    assert_eq!(expired, 15_300, "at the lag entry's instant: {events:?}");
}

/// A flip while the timer's expiry on the player on turn waits out his compensation is
/// refused: it would cancel an expiry that happened (a lagged player who never answered
/// got a whole new timer, and the flipper lost the forfeit he was owed). The expiry then
/// fires at its compensated instant.
#[test]
fn a_flip_cannot_cancel_an_expiry_waiting_out_the_compensation() {
    let mut game = Game::new(Settings::level(Level::Three));
    game.set_lag(Player::Red, 300);
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    assert_eq!(game.next_deadline(), Some(15_400));
    let err = game.apply(Player::Black, Action::Flip, 15_200).unwrap_err();
    assert_eq!(err.code(), "neutral_running");
    assert!(err.to_string().contains("0.2 s left"), "{err}");
    let events = game.advance(15_400);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::NeutralExpired { at: 15_400, .. })),
        "{events:?}"
    );
    assert_eq!(game.turn(), Player::Black, "Red's turn was forfeited");
    // Without compensation pending, an empty timer may be flipped as before.
    let mut game = Game::new(Settings::level(Level::Three));
    game.apply(Player::Black, Action::Flip, 100).unwrap();
    game.apply(Player::Red, mv("d1", "d2"), 200).unwrap();
    game.apply(Player::Red, Action::Flip, 15_200).unwrap();
}
