//! The lines under the board and what stands in for it while waiting: the status line
//! (an error, a question, the typed command), the keys that do something now, the wait in
//! words. Each fits 80 columns or wraps. Part of [`super`].

use super::*;

pub(super) fn status_line(app: &App) -> Line<'static> {
    if let Some(text) = &app.input {
        return Line::from(vec![
            Span::styled("> ", Style::new().fg(Color::Yellow)),
            Span::raw(text.clone()),
            Span::styled("▏", Style::new().fg(Color::Yellow)),
            Span::styled(
                if app.phase == Phase::Picking {
                    "   Enter watch that game · Esc cancel"
                } else {
                    "   Enter send · Esc cancel · 'help' lists commands"
                },
                dim(),
            ),
        ]);
    }
    if let Some(c) = app.confirm {
        let q = match c {
            Confirm::Resign => "Resign this game? y/n".to_string(),
            Confirm::Quit => "Leave? Your seat is kept for the reconnection grace. y/n".to_string(),
            Confirm::Challenge(_) => app
                .status
                .as_ref()
                .map_or("Accept the challenge? y/n".to_string(), |(_, t)| t.clone()),
        };
        return Line::styled(
            q,
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        );
    }
    match &app.status {
        Some((LogKind::Error, t)) => Line::styled(t.clone(), Style::new().fg(Color::LightRed)),
        Some((_, t)) => Line::styled(t.clone(), Style::new().fg(Color::Cyan)),
        None => Line::raw(""),
    }
}

/// The keys that do something now, in `width` columns: the keys the help lists too
/// (`:` and `R`) are left out when the line would not fit.
pub(super) fn keys_line(app: &App, width: u16) -> Line<'static> {
    let mut keys: Vec<&str> = Vec::new();
    match (&app.phase, &app.game) {
        (Phase::Picking, _) => keys.extend([
            "↑↓ choose, Enter watch",
            "or type its short id and Enter",
            "q quit",
        ]),
        (Phase::Lobby, _) => keys.push(
            "↑↓ choose · Enter take the seek / watch the game / challenge the player · q quit",
        ),
        (Phase::InGame, Some(g)) if g.is_over() => keys.push(match app.mode {
            crate::app::Mode::Play { .. } => "n new game · r rematch · q quit",
            _ => "q quit",
        }),
        (Phase::InGame, Some(g)) if g.seat.is_none() => {
            keys.extend(["arrows move the cursor", "? help", "q quit"])
        }
        (Phase::InGame, Some(g)) => {
            let legal = &g.legal;
            let has = |f: &dyn Fn(&Action) -> bool| legal.iter().any(f);
            if has(&|a| matches!(a, Action::Release { .. })) {
                keys.push("arrows, Enter put down and drop · . no drop");
            } else if has(&|a| matches!(a, Action::Start { .. })) {
                keys.push("1 2 3 pick up · arrows move");
            } else if has(&|a| matches!(a, Action::Place { .. })) {
                keys.push("cursor + Enter place an hourglass");
            }
            if has(&|a| *a == Action::Drop) {
                keys.push("d drop");
            }
            if has(&|a| matches!(a, Action::PenaltyDrop { .. })) {
                keys.push("p penalty ring");
            }
            if has(&|a| *a == Action::Claim) {
                keys.push("c claim");
            }
            if has(&|a| *a == Action::Flip) {
                keys.push("f flip the timer");
            }
            keys.extend([": type", "R resign", "? help", "q quit"]);
        }
        _ => keys.push("q quit"),
    }
    let fits = |keys: &[&str]| keys.join(" · ").chars().count() <= width as usize;
    for spare in [": type", "R resign"] {
        if !fits(&keys) {
            keys.retain(|k| *k != spare);
        }
    }
    Line::styled(keys.join(" · "), dim())
}

/// Rows `line` takes word-wrapped at `width` columns (at least one).
pub(super) fn rows(line: &Line, width: u16) -> u16 {
    let width = width.max(1) as usize;
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let (mut rows, mut col) = (1, 0);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let w = Line::raw(word).width();
        if col > 0 && col + 1 + w <= width {
            col += 1 + w;
        } else {
            if col > 0 {
                rows += 1;
            }
            col = w;
            while col > width {
                rows += 1;
                col -= width;
            }
        }
    }
    rows
}

pub(super) fn waiting_text(app: &App) -> String {
    match (&app.phase, &app.mode) {
        (Phase::Connecting, _) => "Connecting…".into(),
        (Phase::Hello, _) => "Saying hello…".into(),
        (Phase::Seeking, crate::app::Mode::Play { settings, find }) => {
            let settings = describe_settings(settings);
            match find {
                Find::Seek => {
                    format!("Waiting for an opponent who asks for the same game ({settings})…")
                }
                Find::Bot(level) => format!(
                    "Starting a game against the {}computer ({settings})…",
                    level.map(|l| format!("{} ", l.name())).unwrap_or_default()
                ),
                Find::Challenge(name) => match &app.challenge_sent {
                    Some((_, to)) => {
                        format!("Waiting for {to} to accept your challenge ({settings})…")
                    }
                    None => format!("Challenging {}…", crate::sanitize::clean(name)),
                },
                Find::Host => match &app.hosting {
                    Some(code) => format!(
                        "Private game ({settings}). Your code: {code}   Your opponent runs: tamsk join {code}"
                    ),
                    None => "Opening a private game…".to_string(),
                },
                Find::Code(code) => {
                    format!("Joining private game {}…", crate::sanitize::clean(code))
                }
            }
        }
        (Phase::Joining(id), _) => format!("Opening game {}…", crate::gameref::short_id(*id)),
        (Phase::Listing, _) => "Listing live games…".into(),
        _ => String::new(),
    }
}
