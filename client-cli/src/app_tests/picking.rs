//! The game picker of `tamsk watch`: the arrows and Enter, or a short id typed as listed.

use super::*;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn summary(id: GameId) -> GameSummary {
    GameSummary {
        game: id,
        level: Level::Three,
        settings: Settings::level(Level::Three),
        red: player("Ann"),
        black: player("Bo"),
        move_count: 12,
        watchers: 2,
        state: "playing".into(),
        rated: false,
        tc: None,
    }
}

/// A watcher picking among the games #b2455027 and #0c1d2e3f (the first highlighted).
fn picking(t0: Instant) -> App {
    let mut app = App::new(Mode::Watch { game: None }, "w".into(), None, t0);
    app.on_connected(t0);
    app.on_message(welcome(vec![]), t0);
    let games = vec![
        summary(GameId::from_u64_pair(1, 0xb245_5027)),
        summary(GameId::from_u64_pair(2, 0x0c1d_2e3f)),
    ];
    app.on_message(ServerMessage::Games { games }, t0);
    assert_eq!(app.phase, Phase::Picking);
    assert_eq!(app.pick, 0);
    app
}

fn typed(app: &mut App, text: &str, t0: Instant) -> Vec<ClientMessage> {
    let mut sent = Vec::new();
    for c in text.chars() {
        sent.extend(app.on_key(ch(c), t0));
    }
    sent
}

fn screen(app: &App, t0: Instant) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| crate::ui::ui(f, app, t0)).unwrap();
    format!("{}", terminal.backend())
}

#[test]
fn a_short_id_typed_as_listed_is_echoed_and_enter_watches_that_game() {
    let t0 = Instant::now();
    let mut app = picking(t0);
    assert!(typed(&mut app, "#0c1d2e3f", t0).is_empty());
    assert_eq!(app.input.as_deref(), Some("#0c1d2e3f"));
    let text = screen(&app, t0);
    assert!(text.contains("> #0c1d2e3f"), "echoed: {text}");
    assert!(
        text.contains("Enter watch that game · Esc cancel"),
        "{text}"
    );
    // Enter opens the game typed, not the highlighted one.
    let sent = app.on_key(key(KeyCode::Enter), t0);
    let second = GameId::from_u64_pair(2, 0x0c1d_2e3f);
    assert_eq!(
        sent,
        [ClientMessage::Watch {
            game: second,
            after_seq: None
        }]
    );
    assert_eq!(app.phase, Phase::Joining(second));

    // Without the '#', from its first digit on, as `tamsk watch` takes it.
    let mut app = picking(t0);
    typed(&mut app, "b2455027", t0);
    let first = GameId::from_u64_pair(1, 0xb245_5027);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), t0),
        [ClientMessage::Watch {
            game: first,
            after_seq: None
        }]
    );
}

#[test]
fn a_short_id_that_names_no_game_says_so_and_backspace_and_esc_edit() {
    let t0 = Instant::now();
    let mut app = picking(t0);
    typed(&mut app, "#0c1d2e3x", t0);
    assert_eq!(app.input.as_deref(), Some("#0c1d2e3x"));
    app.on_key(key(KeyCode::Backspace), t0);
    app.on_key(key(KeyCode::Backspace), t0);
    typed(&mut app, "ff", t0);
    assert_eq!(app.input.as_deref(), Some("#0c1d2eff"));
    assert!(app.on_key(key(KeyCode::Enter), t0).is_empty());
    assert_eq!(app.phase, Phase::Picking, "still picking");
    assert!(!app.quit);
    let (kind, text) = app.status.clone().unwrap();
    assert_eq!(kind, LogKind::Error);
    assert_eq!(text, "No game #0c1d2eff among the live games");
    assert!(screen(&app, t0).contains("No game #0c1d2eff among the live games"));
    // Esc drops what was typed; the arrows and Enter work again.
    typed(&mut app, "#b2", t0);
    app.on_key(key(KeyCode::Esc), t0);
    assert_eq!(app.input, None);
    assert!(!app.quit, "Esc cancels the typing, not the picker");
    app.on_key(key(KeyCode::Down), t0);
    assert_eq!(
        app.on_key(key(KeyCode::Enter), t0),
        [ClientMessage::Watch {
            game: GameId::from_u64_pair(2, 0x0c1d_2e3f),
            after_seq: None
        }]
    );
}
