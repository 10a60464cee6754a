//! The replay viewer: keys, the sand at each instant, the screen at each size.

use super::*;
use crate::testing::{ch, key};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn tiebreak() -> Viewer {
    let loaded = protocol::record::load(include_str!(
        "../../docs/examples/level3-blitz-tiebreak.tamsk"
    ))
    .unwrap();
    Viewer::new("tiebreak.tamsk", &loaded)
}

fn screen(v: &Viewer) -> String {
    screen_in(v, 110, 36)
}

fn screen_in(v: &Viewer, w: u16, h: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| draw(f, v)).unwrap();
    format!("{}", terminal.backend())
}

fn deaths() -> Viewer {
    let loaded = protocol::record::load(include_str!(
        "../../docs/examples/level3-blitz-deaths.tamsk"
    ))
    .unwrap();
    Viewer::new("docs/examples/level3-blitz-deaths.tamsk", &loaded)
}

#[test]
fn at_80x24_the_replay_draws_the_compact_board_and_everything_fits() {
    let mut v = deaths();
    v.go(6);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| draw(f, &v)).unwrap();
    insta::assert_snapshot!("replay_80x24", terminal.backend());
    let text = format!("{}", terminal.backend());
    let rows: Vec<&str> = text.lines().collect();
    // The compact board, as `play` and `watch` draw it at this size: every socket,
    // a1 to g1 included.
    for s in protocol::Square::ALL {
        let (l, x) = crate::compact::origin(s);
        let row: Vec<char> = rows[l + 1].chars().collect();
        let name: String = row[x + 1..x + 3].iter().collect();
        assert_eq!(name, s.to_string(), "{s}: {text}");
    }
    // Both seats with all their hourglasses, the 15-second timer, the keys.
    for label in ["A ", "B ", "C ", "X ", "Y ", "Z "] {
        assert!(text.contains(&format!("  {label}")), "{label}: {text}");
    }
    assert!(text.contains("Red random bot"), "{text}");
    assert!(text.contains("Timer"), "{text}");
    assert!(
        text.contains(&format!("entry 6/{}", v.steps.len() - 1)),
        "{text}"
    );
    assert!(text.contains(KEYS), "{text}");
    // Nothing runs off the right edge.
    for row in &rows {
        let row = row.trim_matches('"');
        assert!(row.ends_with(' '), "cut at 80 columns: {row}");
    }
    // At 100×36: the large board, as for a game.
    let large = screen_in(&v, 100, 36);
    assert!(large.contains("Level 3, hourglasses"), "{large}");
    assert!(!large.contains("L3 "), "{large}");
    // Below 80×24: how large it must be.
    assert!(screen_in(&v, 79, 24).contains("at least 80×24"));
}

#[test]
fn keys_step_through_the_entries() {
    let t0 = Instant::now();
    let mut v = tiebreak();
    assert_eq!(v.pos, 0);
    assert_eq!(v.game(), Game::new(v.steps[0].game.settings().clone()));
    // Entry 1: Black flips at 0.795.
    v.on_key(key(KeyCode::Right), t0);
    assert_eq!((v.pos, v.t_ms), (1, 795));
    assert!(v.steps[1].text.contains("flip"), "{}", v.steps[1].text);
    v.on_key(key(KeyCode::Right), t0);
    assert_eq!(v.steps[2].text, "black  d7-e6");
    assert_eq!(
        v.game().occupant("e6".parse().unwrap()).unwrap().label(),
        'C'
    );
    v.on_key(key(KeyCode::Left), t0);
    assert_eq!(v.pos, 1);
    v.on_key(key(KeyCode::End), t0);
    assert_eq!(v.pos, v.steps.len() - 1);
    assert!(v.game().outcome().is_some(), "the end is the result");
    v.on_key(key(KeyCode::Home), t0);
    assert_eq!((v.pos, v.t_ms), (0, 0));
    v.on_key(ch('q'), t0);
    assert!(v.quit);
}

#[test]
fn the_sand_is_shown_as_it_was_at_each_instant() {
    let t0 = Instant::now();
    let mut v = tiebreak();
    // d7-e6 at 1.442: C flipped with 3 s of sand.
    v.go(2);
    let c = protocol::Glass::from_label('C').unwrap();
    assert_eq!(v.game().glass(c).remaining(v.t_ms), 3_000);
    // Up: one second later, still before the next entry (1.508)? No: the next entry
    // comes first, so time rolls on into it.
    v.on_key(key(KeyCode::Up), t0);
    assert!(v.pos > 2, "rolled on past d1-e1 at 1.508");
    assert_eq!(v.t_ms, v.steps[v.pos].at_ms.max(v.t_ms));
    let left = v.game().glass(c).remaining(v.t_ms);
    assert_eq!(left, 3_000 - (v.t_ms - 1_442));
    // Playing at ×4 from here: 250 ms of real time is one second of the game.
    let (pos, t) = (v.pos, v.t_ms);
    v.on_key(ch('>'), t0);
    v.on_key(ch('>'), t0);
    v.on_key(ch(' '), t0);
    v.tick(t0 + Duration::from_millis(250));
    assert_eq!(v.t_ms, t + 1_000);
    assert!(v.pos >= pos);
    v.on_key(ch(' '), t0);
    assert!(v.playing.is_none());
}

#[test]
fn the_screen_shows_the_board_the_sand_and_the_entries() {
    let mut v = tiebreak();
    v.go(5);
    let text = screen(&v);
    assert!(text.contains("TAMSK replay"), "{text}");
    assert!(text.contains("Red random bot 20a"), "{text}");
    assert!(text.contains("Black random bot 20b"), "{text}");
    assert!(text.contains("black  g1-f2"), "{text}");
    assert!(text.contains("entry 5/"), "{text}");
    v.on_key(key(KeyCode::End), Instant::now());
    let text = screen(&v);
    assert!(text.contains("Red wins: neither player can move"), "{text}");
    assert!(text.contains("<- decides"), "{text}");
    // The board's digits are said (the large layout has the room).
    assert!(
        text.contains("A socket's digit: the rings it can still take."),
        "{text}"
    );
}

#[test]
fn the_current_entry_is_shown_whole_and_the_others_cut_visibly() {
    let mut v = deaths();
    let last = v.steps.len() - 1;
    let long = v.steps[last].text.clone();
    assert!(long.chars().count() > 80, "{long}");
    v.go(last);
    let text = screen_in(&v, 80, 24);
    // Every word of it is on the screen, in order, after its time.
    let rows: Vec<&str> = text.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains(&format!("{last:>4} ")))
        .unwrap();
    let shown: Vec<&str> = rows[at..]
        .iter()
        .flat_map(|r| r.trim_matches('"').split_whitespace())
        .collect();
    let words: Vec<&str> = long.split_whitespace().collect();
    assert!(
        shown.windows(words.len()).any(|w| w == words.as_slice()),
        "{text}"
    );
    // One entry later, it is one line, cut with an ellipsis.
    v.go(last - 1);
    let text = screen_in(&v, 80, 24);
    let row = text
        .lines()
        .find(|r| r.contains(&format!("{last:>4} ")))
        .unwrap();
    assert!(
        row.contains("Black's A died on d6") && row.contains('…'),
        "{text}"
    );
}

#[test]
fn wrapping_breaks_at_spaces_and_indents_the_continuations() {
    assert_eq!(
        wrap("  12     3.4s  black  a1-b1; Red's Z died on d5", 30, 15),
        [
            "  12     3.4s  black  a1-b1;",
            "               Red's Z died on",
            "               d5"
        ]
    );
    assert_eq!(cut("abcdef", 4), "abc…");
    assert_eq!(cut("abc", 4), "abc");
}
