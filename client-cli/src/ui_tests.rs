//! Snapshot tests of whole screens on ratatui's test backend.

use std::time::{Duration, Instant};

use protocol::game::{Action, Player};
use protocol::record;
use protocol::settings::{Level, Settings};
use ratatui::backend::TestBackend;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;

use super::*;
use crate::app::App;
use crate::testing::*;

const W: u16 = 100;
const H: u16 = 36;

fn draw(app: &App, at: Instant) -> Terminal<TestBackend> {
    draw_in(W, H, app, at)
}

fn draw_in(w: u16, h: u16, app: &App, at: Instant) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| ui(f, app, at)).unwrap();
    terminal
}

fn text_of(t: &Terminal<TestBackend>) -> String {
    format!("{}", t.backend())
}

/// Screen position of a board text position (the board starts on line 1, column 0).
fn at_board(line: usize, col: usize) -> (u16, u16) {
    (col as u16, line as u16 + 1)
}

#[test]
fn the_start_of_a_level_3_game() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::Three));
    let app = seated(&fake, Player::Red, t0);
    let terminal = draw(&app, t0);
    insta::assert_snapshot!("start", terminal.backend());
    let buf = terminal.backend().buffer();
    // X on d1 in Red's colours, C on d7 in Black's.
    let (l, c) = render::cell(sq("d1")).label();
    let cell = &buf[at_board(l, c)];
    assert_eq!(cell.symbol(), "X");
    assert_eq!(cell.bg, Color::Red);
    let (l, c) = render::cell(sq("d7")).label();
    assert_eq!(buf[at_board(l, c)].bg, Color::Gray);
    // The cursor is on our first hourglass; the sockets X may go to are highlighted.
    let (l, c, _) = render::cell(sq("d1")).interior()[0];
    assert_eq!(buf[at_board(l, c)].bg, Color::Blue);
    let (l, c, _) = render::cell(sq("d2")).interior()[0];
    assert_eq!(buf[at_board(l, c)].bg, Color::Indexed(22));
}

/// Level 3 with 60 s hourglasses: X has died on d2, B is about to, and Red's flip of the
/// 15-second timer runs on Black.
fn mid_game(t0: Instant) -> App {
    let settings = Settings {
        hourglass_ms: 60_000,
        ..Settings::level(Level::Three)
    };
    let mut fake = Fake::new(settings);
    let mut app = seated(&fake, Player::Black, t0);
    let at = |ms| t0 + Duration::from_millis(ms);
    let moves = [
        (Player::Red, "d1", "d2", 0),
        (Player::Black, "g1", "f1", 1_000),
        (Player::Red, "g4", "g3", 2_000),
        (Player::Black, "d7", "d6", 3_000),
        (Player::Red, "a4", "a3", 4_000),
        (Player::Black, "a1", "b1", 5_000),
        (Player::Red, "a3", "a2", 50_000),
    ];
    for (p, from, to, ms) in moves {
        let ev = fake.act(p, mv(from, to, true), ms);
        app.on_message(ev, at(ms));
    }
    let ev = fake.act(Player::Red, Action::Flip, 55_000);
    app.on_message(ev, at(55_000));
    let ev = fake.advance(60_000);
    app.on_message(ev, at(60_000));
    app.take_output();
    app
}

#[test]
fn mid_game_with_a_dead_hourglass_and_the_15_second_timer_running() {
    let t0 = Instant::now();
    let app = mid_game(t0);
    let g = app.game.as_ref().unwrap();
    assert!(g
        .replica
        .glass(protocol::Glass::from_label('X').unwrap())
        .is_dead());
    let terminal = draw(&app, t0 + Duration::from_millis(60_500));
    insta::assert_snapshot!("mid_game", terminal.backend());
    let buf = terminal.backend().buffer();
    let (l, c) = render::cell(sq("d2")).label();
    let dead = &buf[at_board(l, c)];
    assert!(dead.modifier.contains(Modifier::CROSSED_OUT), "{dead:?}");
    // The sand runs on between messages: 2.5 s later B has died in our projection's
    // eyes (0 left) and the timer shows 7.0 s.
    let later = draw(&app, t0 + Duration::from_millis(63_000));
    let text = format!("{}", later.backend());
    assert!(text.contains("Timer on YOU"), "{text}");
    assert!(text.contains("  7.0s"), "{text}");
}

#[test]
fn game_over_with_the_tiebreak_line_up() {
    let t0 = Instant::now();
    let loaded = record::load(include_str!(
        "../../docs/examples/level3-blitz-tiebreak.tamsk"
    ))
    .unwrap();
    let outcome = loaded.game.outcome().cloned().expect("finished");
    assert!(outcome.tiebreak.is_some());
    let fake = Fake {
        game: loaded.game,
        seq: 40,
        entries: loaded.file.record.entries,
    };
    let app = seated(&fake, Player::Red, t0);
    assert!(app.game.as_ref().unwrap().is_over());
    let terminal = draw(&app, t0 + Duration::from_secs(100));
    insta::assert_snapshot!("game_over", terminal.backend());
    let text = format!("{}", terminal.backend());
    assert!(text.contains("You win!"), "{text}");
    assert!(text.contains("<- decides"), "{text}");
}

#[test]
fn below_80_by_24_a_clear_message() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::One));
    let app = seated(&fake, Player::Red, t0);
    for (w, h) in [(79, 24), (80, 23), (40, 10)] {
        let text = text_of(&draw_in(w, h, &app, t0));
        assert!(text.contains("at least 80×24"), "{w}×{h}: {text}");
        assert!(text.contains(&format!("{w}×{h}")), "{text}");
    }
    let text = text_of(&draw_in(80, 24, &app, t0));
    assert!(!text.contains("at least 80×24"), "{text}");
}

#[test]
fn the_layout_follows_the_terminal_size() {
    assert_eq!(Size::of(80, 24), Some(Size::Compact));
    assert_eq!(Size::of(99, 40), Some(Size::Compact));
    assert_eq!(Size::of(100, 35), Some(Size::Compact));
    assert_eq!(Size::of(100, 36), Some(Size::Large));
    assert_eq!(Size::of(120, 40), Some(Size::Large));
    assert_eq!(Size::of(79, 50), None);
}

/// Screen position of a compact-board socket's first cell (the board starts on line 1).
fn at_compact(s: &str, line: usize) -> (u16, u16) {
    let (l, c) = crate::compact::origin(sq(s));
    (c as u16, (l + line) as u16 + 1)
}

#[test]
fn the_compact_board_fits_80_by_24_with_every_socket() {
    let t0 = Instant::now();
    let app = mid_game(t0);
    let terminal = draw_in(80, 24, &app, t0 + Duration::from_millis(60_500));
    insta::assert_snapshot!("compact_mid_game", terminal.backend());
    let buf = terminal.backend().buffer();
    // Every socket's name and spare capacity are on the board.
    let g = &app.game.as_ref().unwrap().replica;
    for s in protocol::Square::ALL {
        let (x, y) = at_compact(&s.to_string(), 0);
        let name: String = (0..2)
            .map(|i| buf[(x + i, y)].symbol().to_string())
            .collect();
        assert_eq!(name, s.to_string());
        let spare = s.capacity() - g.rings_on(s);
        assert_eq!(buf[(x + 3, y)].symbol(), spare.to_string(), "{s}");
    }
    // Glass labels with their sand, dead ones struck out.
    let (x, y) = at_compact("d2", 1);
    assert_eq!(buf[(x, y)].symbol(), "X");
    assert!(buf[(x, y)].modifier.contains(Modifier::CROSSED_OUT));
    let (x, y) = at_compact("d6", 1);
    assert_eq!(buf[(x, y)].symbol(), "C");
    assert_eq!(buf[(x, y)].bg, Color::Gray);
    let text = text_of(&terminal);
    assert!(text.contains("Timer on YOU"), "{text}");
}

#[test]
fn the_cursor_stays_visible_on_a_lit_socket() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::Three));
    let mut app = seated(&fake, Player::Red, t0);
    // X is in hand: d2 is lit as a place to put it down, and the cursor is there.
    let ev = fake.act(Player::Red, Action::Start { from: sq("d1") }, 100);
    app.on_message(ev, t0 + Duration::from_millis(100));
    app.cursor = sq("d2");
    let (x, y) = at_compact("c1", 0);
    assert_eq!(
        draw_in(80, 24, &app, t0).backend().buffer()[(x, y)].bg,
        Color::Indexed(22),
        "c1 is lit"
    );
    let terminal = draw_in(80, 24, &app, t0);
    let buf = terminal.backend().buffer();
    let (x, y) = at_compact("d2", 0);
    assert_eq!(buf[(x, y)].bg, Color::Blue, "cursor on a destination");
    let terminal = draw(&app, t0);
    let buf = terminal.backend().buffer();
    let (l, c, _) = render::cell(sq("d2")).interior()[0];
    assert_eq!(buf[at_board(l, c)].bg, Color::Blue);
}

#[test]
fn sand_bars_fill_in_eighths() {
    assert_eq!(sand_bar(0, 100, 4), "    ");
    assert_eq!(sand_bar(100, 100, 4), "████");
    assert_eq!(sand_bar(50, 100, 4), "██  ");
    assert_eq!(sand_bar(1, 32, 4), "▏   ");
    assert_eq!(sand_bar(500, 100, 2), "██", "never more than full");
}

#[test]
fn the_15_second_timer_judges_nobody_once_its_turn_is_over() {
    let t0 = Instant::now();
    let mut app = mid_game(t0);
    let mut fake = Fake {
        game: app.game.as_ref().unwrap().replica.clone(),
        seq: app.game.as_ref().unwrap().seq,
        entries: Vec::new(),
    };
    let ev = fake.act(Player::Black, mv("b1", "b2", true), 60_600);
    app.on_message(ev, t0 + Duration::from_millis(60_600));
    let text = format!(
        "{}",
        draw(&app, t0 + Duration::from_millis(61_000)).backend()
    );
    assert!(text.contains("Timer, on nobody"), "{text}");
    assert!(text.contains("  9.0s"), "the sand still runs: {text}");
    assert!(!text.contains("15-second timer on Black █"), "{text}");
}

#[test]
fn the_opponents_lag_is_shown_beside_his_seat() {
    use protocol::wire::{Change, GameEvent, ServerMessage};
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::One));
    let mut app = seated(&fake, Player::Black, t0);
    fake.seq += 1;
    let ev = ServerMessage::Event(Box::new(GameEvent {
        game: gid(1),
        seq: fake.seq,
        now_ms: 1_000,
        change: Change::Lag {
            player: Player::Red,
            rtt_ms: 42,
        },
    }));
    app.on_message(ev, t0);
    assert_eq!(app.game.as_ref().unwrap().seats[0].lag_ms, Some(42));
    let terminal = draw(&app, t0);
    let screen: String = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(screen.contains("lag 42ms"), "{screen}");
}

#[test]
fn the_game_over_box_fits_80_columns() {
    let t0 = Instant::now();
    let loaded = record::load(include_str!(
        "../../docs/examples/level3-blitz-tiebreak.tamsk"
    ))
    .unwrap();
    let fake = Fake {
        game: loaded.game,
        seq: 40,
        entries: loaded.file.record.entries,
    };
    let app = seated(&fake, Player::Red, t0);
    let terminal = draw_in(80, 24, &app, t0 + Duration::from_secs(100));
    insta::assert_snapshot!("compact_game_over", terminal.backend());
    let text = text_of(&terminal);
    // Every word of the outcome is on the screen, none cut at the edge.
    let outcome = app
        .game
        .as_ref()
        .unwrap()
        .replica
        .outcome()
        .unwrap()
        .describe();
    let screen: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for word in outcome.split_whitespace() {
        assert!(screen.contains(word), "{word}: {text}");
    }
    assert!(text.contains("n new game"), "{text}");
}

/// Every row of the screen, without the snapshot's quotes.
fn rows_of(t: &Terminal<TestBackend>) -> Vec<String> {
    text_of(t)
        .lines()
        .map(|l| l.trim_matches('"').to_string())
        .collect()
}

/// Whether `line` is on the screen whole, on one row.
fn shown_whole(t: &Terminal<TestBackend>, line: &str) -> bool {
    rows_of(t).iter().any(|r| r.contains(line))
}

#[test]
fn the_players_help_fits_80_by_24_and_100_by_36() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::Three));
    let mut app = seated(&fake, Player::Red, t0);
    app.on_key(ch('?'), t0);
    assert!(app.help);
    let terminal = draw_in(80, 24, &app, t0);
    insta::assert_snapshot!("help_80x24", terminal.backend());
    let lines = boxes::help_lines(&app);
    assert!(lines.iter().any(|l| l.contains("resign")));
    for (w, h) in [(80, 24), (100, 36)] {
        let terminal = draw_in(w, h, &app, t0);
        for line in &lines {
            assert!(shown_whole(&terminal, line), "{w}×{h}: {line:?} cut");
        }
    }
    // Typed 'help' shows it too (the commands do not fit the status line).
    app.on_key(ch('x'), t0);
    assert!(!app.help, "any key closes it");
    app.on_line("help", t0);
    assert!(app.help);
    assert_eq!(app.status, None);
}

#[test]
fn a_watcher_is_shown_only_the_keys_of_watching() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::Three));
    // A guest, as `tamsk watch` without a token comes.
    let mut app = App::new(crate::app::Mode::Watch { game: None }, "w".into(), None, t0);
    app.on_connected(t0);
    app.on_message(
        protocol::wire::ServerMessage::GuestWelcome {
            version: 1,
            server_ms: 0,
        },
        t0,
    );
    app.on_message(fake.snapshot(None, 0), t0);
    app.on_key(ch('?'), t0);
    let terminal = draw_in(80, 24, &app, t0);
    let text = text_of(&terminal);
    assert!(text.contains("stop watching"), "{text}");
    for players_only in ["pick up", "resign", "drop", "claim", "flip", "rematch"] {
        assert!(!text.contains(players_only), "{players_only}: {text}");
    }
    for line in boxes::help_lines(&app) {
        assert!(shown_whole(&terminal, line), "{line:?} cut");
    }
    // A guest (no token) is never challenged; a watcher with a player may be.
    assert!(app.guest);
    assert!(!text.contains("challenge"), "{text}");
    app.guest = false;
    assert!(boxes::help_lines(&app)
        .iter()
        .any(|l| l.contains("accept or decline a challenge")));
    app.guest = true;
    // The keys line too.
    app.help = false;
    let keys = rows_of(&draw_in(80, 24, &app, t0)).pop().unwrap();
    assert_eq!(keys.trim_end(), "arrows move the cursor · ? help · q quit");
}

#[test]
fn the_keys_line_fits_80_columns_in_every_state() {
    let t0 = Instant::now();
    let mut fake = Fake::new(Settings::level(Level::Three));
    let mut app = seated(&fake, Player::Red, t0);
    let keys = |app: &App| keys_line(app, 80).to_string();
    assert_eq!(
        keys(&app),
        "1 2 3 pick up · arrows move · : type · R resign · ? help · q quit"
    );
    // X in hand: the keys the help lists as well are left out first.
    let ev = fake.act(Player::Red, Action::Start { from: sq("d1") }, 100);
    app.on_message(ev, t0 + Duration::from_millis(100));
    let holding = keys(&app);
    assert!(holding.chars().count() <= 80, "{holding}");
    assert!(holding.starts_with("arrows, Enter put down and drop · . no drop"));
    assert!(holding.ends_with("? help · q quit"), "{holding}");
    // Wider, everything.
    assert!(keys_line(&app, 100).to_string().contains(": type"));
    app.phase = Phase::Picking;
    assert_eq!(
        keys(&app),
        "↑↓ choose, Enter watch · or type its short id and Enter · q quit"
    );
    app.phase = Phase::Lobby;
    assert!(keys(&app).chars().count() <= 80);
}

#[test]
fn long_status_and_waiting_lines_wrap_at_80_columns() {
    let t0 = Instant::now();
    let fake = Fake::new(Settings::level(Level::Three));
    let mut app = greeted(&fake, t0);
    // Seeking: the whole sentence, settings included, on the screen.
    let terminal = draw_in(80, 24, &app, t0);
    let waiting = waiting_text(&app);
    assert!(waiting.chars().count() > 80, "a long one: {waiting}");
    let screen = rows_of(&terminal).join(" ");
    let screen: Vec<&str> = screen.split_whitespace().collect();
    let words: Vec<&str> = waiting.split_whitespace().collect();
    assert!(
        screen.windows(words.len()).any(|w| w == words.as_slice()),
        "{waiting} cut: {}",
        text_of(&terminal)
    );
    // A long status (a challenge: the settings in words) wraps over the keys line.
    let status = "Carol (1500?) challenges you (Level 3, hourglasses 180 s, 15-second timer 15 s, clock 600 s): accept? y/n";
    app.status = Some((LogKind::Info, status.into()));
    let terminal = draw_in(80, 24, &app, t0);
    let rows = rows_of(&terminal);
    let joined = rows[rows.len() - 3..rows.len() - 1].join(" ");
    let joined: Vec<&str> = joined.split_whitespace().collect();
    assert_eq!(joined, status.split_whitespace().collect::<Vec<_>>());
    assert_eq!(rows.last().unwrap().trim_end(), "q quit");
}
