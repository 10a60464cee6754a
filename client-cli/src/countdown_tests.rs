//! Each deadline as the player sees it: the words beside the board at 80×24 (snapshots),
//! and the low-time warnings.

use std::time::{Duration, Instant};

use protocol::game::{Action, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, GameEvent, ServerMessage};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::*;
use crate::app::App;
use crate::testing::*;

fn screen(app: &App, at: Instant) -> String {
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| crate::ui::ui(f, app, at)).unwrap();
    format!("{}", t.backend())
}

fn after(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

fn level(level: Level) -> Settings {
    Settings::level(level)
}

#[test]
fn time_left_reads_as_seconds_then_minutes() {
    assert_eq!(left(4_250), "4.2s");
    assert_eq!(left(59_999), "59.9s");
    assert_eq!(left(60_000), "1:00");
    assert_eq!(left(299_001), "5:00");
}

/// A deadline the player must act before is counted down to the server's instant less
/// the one-way delay (half his round trip) and a margin for jitter: a key pressed at 0.0
/// arrives in time. Who only watches it (the opponent) is shown the server's instant.
#[test]
fn the_players_own_deadlines_allow_for_the_delay_to_the_server() {
    let t0 = Instant::now();
    let fake = Fake::new(level(Level::Two));
    let abort_ms = fake.game.settings().abort_ms;
    let mut app = seated(&fake, Player::Red, t0);
    app.game
        .as_mut()
        .unwrap()
        .clock
        .round_trip(Duration::from_millis(300));
    let c = countdowns(app.game.as_ref().unwrap(), 12_000);
    assert!(c[0].mine);
    assert_eq!(c[0].left_ms, abort_ms - 12_000 - 150 - 150 / 4);
    let mut black = seated(&fake, Player::Black, t0);
    black
        .game
        .as_mut()
        .unwrap()
        .clock
        .round_trip(Duration::from_millis(300));
    let c = countdowns(black.game.as_ref().unwrap(), 12_000);
    assert!(!c[0].mine);
    assert_eq!(
        c[0].left_ms,
        abort_ms - 12_000,
        "the opponent's: the server's instant"
    );
}

/// A deadline half a second past is no longer listed (a window that closed unused has no
/// event: its line stayed at 0.0s until the next one).
#[test]
fn a_deadline_long_past_is_not_listed() {
    let t0 = Instant::now();
    let fake = Fake::new(level(Level::Two));
    let app = seated(&fake, Player::Red, t0);
    let abort_ms = fake.game.settings().abort_ms;
    let view = app.game.as_ref().unwrap();
    let at = |now| {
        countdowns(view, now)
            .iter()
            .any(|c| c.text.starts_with("First move in"))
    };
    assert!(at(abort_ms - 100));
    assert!(at(abort_ms + 400), "just past: 0.0s");
    assert!(!at(abort_ms + 600), "long past: gone");
}

/// While the connection is lost the player's own seat says so (the server's last word
/// was "connected", and stays on screen otherwise).
#[test]
fn a_lost_connection_shows_on_the_players_own_seat() {
    let t0 = Instant::now();
    let fake = Fake::new(level(Level::Two));
    let mut app = seated(&fake, Player::Red, t0);
    assert!(!screen(&app, after(t0, 1_000)).contains("connection lost"));
    app.connected = false;
    let text = screen(&app, after(t0, 1_000));
    assert!(text.contains("connection lost: reconnecting"), "{text}");
}

#[test]
fn the_first_move_abort_and_the_idle_bound() {
    let t0 = Instant::now();
    let fake = Fake::new(level(Level::Two));
    let app = seated(&fake, Player::Red, t0);
    let text = screen(&app, after(t0, 12_000));
    insta::assert_snapshot!("first_move_abort", text);
    let abort_ms = fake.game.settings().abort_ms;
    let c = countdowns(app.game.as_ref().unwrap(), 12_000);
    assert_eq!(c[0].left_ms, abort_ms - 12_000);
    assert!(c[0].mine);
    assert!(text.contains("First move in 18.0s or no game"), "{text}");
    assert!(text.contains("Your turn: limit 18.0s"), "{text}");
    // Black, watching the same instant, is told about Red.
    let black = seated(&fake, Player::Black, t0);
    let text = screen(&black, after(t0, 12_000));
    assert!(text.contains("Rita: first move in 18.0s"), "{text}");
    // Without a turn limit, the idle bound.
    let fake = Fake::new(Settings {
        turn_limit_ms: None,
        ..level(Level::Two)
    });
    let app = seated(&fake, Player::Red, t0);
    let text = screen(&app, after(t0, 12_000));
    assert!(text.contains("Your turn: idle bound 4:48"), "{text}");
}

#[test]
fn the_turn_limit() {
    let t0 = Instant::now();
    let settings = Settings {
        turn_limit_ms: Some(20_000),
        ..level(Level::One)
    };
    let mut fake = Fake::new(settings);
    let mut app = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 1_000);
    app.on_message(ev, after(t0, 1_000));
    let text = screen(&app, after(t0, 6_000));
    insta::assert_snapshot!("turn_limit", text);
    assert!(text.contains("Your turn: limit 15.0s"), "{text}");
}

#[test]
fn the_drop_grace_and_when_the_opponent_may_claim() {
    let t0 = Instant::now();
    let mut fake = Fake::new(level(Level::Two));
    let mut red = seated(&fake, Player::Red, t0);
    let mut black = seated(&fake, Player::Black, t0);
    let ev = fake.act(Player::Red, mv("d1", "d2", false), 1_000);
    red.on_message(ev.clone(), after(t0, 1_000));
    black.on_message(ev, after(t0, 1_000));
    let grace = fake.game.settings().drop_grace_ms;
    let at = 1_000 + grace / 2;
    let text = screen(&red, after(t0, at));
    insta::assert_snapshot!("drop_grace", text);
    let half = crate::countdown::left(grace - grace / 2);
    assert!(text.contains(&format!("Drop within {half}")), "{text}");
    let text = screen(&black, after(t0, at));
    assert!(text.contains(&format!("You may claim in {half}")), "{text}");
}

#[test]
fn the_timer_on_you_and_the_late_release_bound() {
    let t0 = Instant::now();
    let mut fake = Fake::new(level(Level::Three));
    let mut red = seated(&fake, Player::Red, t0);
    let neutral = fake.game.settings().neutral_ms;
    // Black flips the 15-second timer on Red's first turn; Red picks X up and holds it.
    for (p, a, ms) in [
        (Player::Black, Action::Flip, 500),
        (Player::Red, Action::Start { from: sq("d1") }, 1_000),
    ] {
        let ev = fake.act(p, a, ms);
        red.on_message(ev, after(t0, ms));
    }
    let text = screen(&red, after(t0, 500 + neutral - 3_000));
    insta::assert_snapshot!("timer_on_you", text);
    assert!(text.contains("Timer on YOU"), "{text}");
    assert!(text.contains("3.0s"), "{text}");
    // The timer runs out with X in hand: it must be put down within the bound.
    let ev = fake.advance(500 + neutral);
    red.on_message(ev, after(t0, 500 + neutral));
    let held = fake
        .game
        .held()
        .or(fake.game.late())
        .copied()
        .expect("in hand");
    let until = held.late_until_ms.expect("a late-release bound");
    let text = screen(&red, after(t0, 500 + neutral + 1_000));
    insta::assert_snapshot!("late_release", text);
    let left = crate::countdown::left(until - (500 + neutral + 1_000));
    assert!(
        text.contains(&format!("Put it down within {left}")),
        "{text}"
    );
}

#[test]
fn the_opponent_away_and_when_the_win_may_be_claimed() {
    let t0 = Instant::now();
    let mut fake = Fake::new(level(Level::One));
    let mut app = seated(&fake, Player::Red, t0);
    fake.seq += 1;
    let ev = ServerMessage::Event(Box::new(GameEvent {
        game: gid(1),
        seq: fake.seq,
        now_ms: 2_000,
        change: Change::Presence {
            player: Player::Black,
            connected: false,
            grace_until_ms: Some(62_000),
        },
    }));
    app.on_message(ev, after(t0, 2_000));
    let text = screen(&app, after(t0, 12_000));
    insta::assert_snapshot!("opponent_away", text);
    assert!(text.contains("Bert away: claim the win in 50.0s"), "{text}");
}

#[test]
fn the_flip_preview_shows_the_sand_after_the_flip() {
    let t0 = Instant::now();
    let settings = Settings {
        hourglass_ms: 60_000,
        ..level(Level::Two)
    };
    let mut fake = Fake::new(settings);
    let mut app = seated(&fake, Player::Red, t0);
    for (p, from, to, ms) in [
        (Player::Red, "d1", "d2", 1_000),
        (Player::Black, "a1", "b1", 2_000),
        (Player::Red, "g4", "g3", 3_000),
        (Player::Black, "g1", "f1", 4_000),
        (Player::Red, "a4", "a3", 5_000),
        (Player::Black, "d7", "d6", 6_000),
    ] {
        let ev = fake.act(p, mv(from, to, true), ms);
        app.on_message(ev, after(t0, ms));
    }
    // X ran from 1 s: at 21 s it has 40 s on top, 20 s below; flipped, 20 s.
    app.cursor = sq("d2");
    let text = screen(&app, after(t0, 21_000));
    insta::assert_snapshot!("flip_preview", text);
    assert!(text.contains("flip→20.0s"), "{text}");
    // A glass that never ran: all its sand comes on top.
    let fresh = seated(&Fake::new(fake.game.settings().clone()), Player::Red, t0);
    assert_eq!(fresh.cursor, sq("d1"));
    assert!(screen(&fresh, t0).contains("flip→60.0s"));
    // Not on a glass we may pick up: no preview.
    app.cursor = sq("b1");
    assert!(!screen(&app, after(t0, 21_000)).contains("flip→"));
}

#[test]
fn a_warning_at_5_s_on_the_timer_and_10_s_in_a_glass_once_each() {
    let t0 = Instant::now();
    let settings = Settings {
        hourglass_ms: 30_000,
        ..level(Level::Three)
    };
    let mut fake = Fake::new(settings);
    let mut red = seated(&fake, Player::Red, t0);
    let ev = fake.act(Player::Black, Action::Flip, 0);
    red.on_message(ev, t0);
    assert!(
        !red.check_alerts(after(t0, 9_000)),
        "10 s on the timer: nothing"
    );
    assert!(
        red.check_alerts(after(t0, 10_100)),
        "5 s left on the timer: the bell"
    );
    assert!(red.alerts.flashing(after(t0, 10_200)));
    assert!(
        !red.alerts.flashing(after(t0, 10_600)),
        "the flash is short"
    );
    assert!(!red.check_alerts(after(t0, 10_500)), "once");
    // Red moves at 11 s; X runs out at 41 s: the warning at 31 s.
    let ev = fake.act(Player::Red, mv("d1", "d2", true), 11_000);
    red.on_message(ev, after(t0, 11_000));
    assert!(!red.check_alerts(after(t0, 30_000)));
    red.bell = false;
    assert!(!red.check_alerts(after(t0, 31_500)), "--no-bell: no bell");
    assert!(red.alerts.flashing(after(t0, 31_600)), "but the flash");
}
