//! The panel beside the board: each seat with its hourglasses and their sand (and the
//! flip preview), the 15-second timer, every deadline as a countdown, what the player may
//! do now. Part of [`super`].

use super::*;

/// A bar of `width` cells for `left` of `total`, with eighths for smooth motion.
pub fn sand_bar(left: u64, total: u64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let total = total.max(1);
    let eighths = ((left.min(total) as u128 * width as u128 * 8) / total as u128) as usize;
    let mut s = "█".repeat(eighths / 8);
    if eighths / 8 < width {
        s.push(PARTS[eighths % 8]);
    }
    while s.chars().count() < width {
        s.push(' ');
    }
    s
}

/// One hourglass: where it is and its sand, with a bar for the layout `size`.
pub fn glass_line(game: &Game, glass: Glass, now: u64, size: Size) -> Line<'static> {
    glass_line_sized(game, glass, now, size.bar(), false)
}

/// The sand `glass` would have on top if it were picked up (flipped) at `now`.
pub fn after_flip(game: &Game, glass: Glass, now: u64) -> u64 {
    let state = game.glass(glass);
    let total = game.settings().hourglass_ms;
    if state.started {
        total - state.remaining(now).min(total)
    } else {
        // A glass that never ran has all its sand below: the flip puts it on top.
        total
    }
}

/// One hourglass with a bar of `bar` cells; `preview`: it is the one under the cursor,
/// about to be picked up, so the sand it will have after the flip is shown.
fn glass_line_sized(
    game: &Game,
    glass: Glass,
    now: u64,
    bar: usize,
    preview: bool,
) -> Line<'static> {
    let state = game.glass(glass);
    let place = state.square.map_or("off".to_string(), |s| s.to_string());
    let mut spans = vec![
        Span::raw("  "),
        Span::styled(format!("{glass}"), player_style(glass.owner())),
        Span::raw(format!(" {place:<3} ")),
    ];
    let held = game
        .held()
        .into_iter()
        .chain(game.late())
        .any(|h| h.glass == glass);
    let total = game.settings().hourglass_ms;
    if let Some(t) = state.dead_at_ms {
        spans.push(Span::styled(
            format!("✝ dead since {}", words::seconds(t)),
            Style::new().fg(Color::DarkGray),
        ));
    } else if !game.settings().level.timed() {
        // Level 1: sand does not count.
    } else if !state.started {
        // Previewed, the flip below says more than "not started".
        let what = if preview { "" } else { " not started" };
        spans.push(Span::styled(
            format!("{}{what}", sand_bar(0, total, bar)),
            dim(),
        ));
    } else {
        let left = state.remaining(now);
        let colour = if left * 5 < total {
            Color::LightRed
        } else {
            match glass.owner() {
                Player::Red => Color::Red,
                Player::Black => Color::Gray,
            }
        };
        spans.push(Span::styled(
            sand_bar(left, total, bar),
            Style::new().fg(colour).bg(Color::Indexed(236)),
        ));
        spans.push(Span::raw(format!(" {:>6}", words::seconds(left))));
    }
    if preview && game.settings().level.timed() && !state.is_dead() {
        spans.push(Span::styled(
            format!(" flip→{}", words::seconds(after_flip(game, glass, now))),
            Style::new().fg(Color::Cyan),
        ));
    }
    if held {
        spans.push(Span::styled(
            "  in hand",
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    Line::from(spans)
}

/// A seat's heading: name, turn marker, connection, rings.
fn seat_lines(view: &GameView, p: Player, app: &App, now: u64, size: Size) -> Vec<Line<'static>> {
    let game = &view.replica;
    let seat = view.seat_view(p);
    let mut head = vec![
        Span::styled(format!("{p}"), player_style(p)),
        Span::raw(" "),
        Span::styled(seat.name.clone(), player_text(p)),
    ];
    if view.seat == Some(p) {
        head.push(Span::styled(" (you)", dim()));
    }
    if game.is_playing() && !game.is_ending() && game.turn() == p {
        head.push(Span::styled(
            "  ◀ to move",
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    let conn = if view.seat == Some(p) && !app.connected {
        // The server's view of us is out of date: say what we know.
        Span::styled(
            "○ connection lost: reconnecting",
            Style::new().fg(Color::LightRed),
        )
    } else if seat.grace_expired {
        Span::styled(
            "○ gone: the win may be claimed",
            Style::new().fg(Color::LightRed),
        )
    } else if seat.connected {
        let text = match size {
            Size::Large => "● connected",
            Size::Compact => "● online",
        };
        Span::styled(text, Style::new().fg(Color::Green))
    } else {
        let left = seat
            .grace_until_ms
            .map(|t| format!(", seat kept {} more", words::seconds(t.saturating_sub(now))))
            .unwrap_or_default();
        Span::styled(format!("○ away{left}"), Style::new().fg(Color::Yellow))
    };
    let rings = match size {
        Size::Large => format!(" · {} rings left", game.rings_left(p)),
        Size::Compact => format!(" · {} rings", game.rings_left(p)),
    };
    let mut second = vec![Span::raw("  "), conn, Span::raw(rings)];
    // Our own lag as we measure it; another seat's as the server measured it.
    let lag = if view.seat == Some(p) {
        app.lag_ms
    } else {
        seat.lag_ms
    };
    if let Some(lag) = lag {
        second.push(Span::raw(format!(" · lag {lag}ms")));
    }
    if let Some(c) = game.clock_left(p, now) {
        second.push(Span::raw(format!(" · clock {}", words::seconds(c))));
    }
    if game.is_playing() && game.penalty_owed(p) {
        second.push(Span::styled(
            " · penalty ring owed",
            Style::new().fg(Color::Magenta),
        ));
    }
    vec![Line::from(head), Line::from(second)]
}

/// The 15-second timer (Level 3), for the layout `size`.
pub fn neutral_line(game: &Game, now: u64, size: Size) -> Option<Line<'static>> {
    neutral_line_sized(game, now, size, None)
}

/// The 15-second timer for the layout `size`, from `me`'s point of view (on him, it
/// says so in red).
fn neutral_line_sized(
    game: &Game,
    now: u64,
    size: Size,
    me: Option<Player>,
) -> Option<Line<'static>> {
    let bar = size.bar();
    // The compact panel is 36 columns wide: "Timer on Black ████████  12.3s".
    let on = match size {
        Size::Large => "15-second timer on ",
        Size::Compact => "Timer on ",
    };
    if game.settings().level != protocol::Level::Three {
        return None;
    }
    let n = game.neutral();
    let total = game.settings().neutral_ms;
    let left = n.sand.remaining(now);
    Some(match game.neutral_judges() {
        Some(target) if left > 0 && me == Some(target) => Line::from(vec![
            Span::styled(
                "Timer on YOU ",
                Style::new()
                    .fg(Color::LightRed)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                sand_bar(left, total, bar),
                Style::new().fg(Color::LightRed).bg(Color::Indexed(236)),
            ),
            Span::styled(
                format!(" {:>6}", words::seconds(left)),
                Style::new().add_modifier(Modifier::BOLD),
            ),
        ]),
        Some(target) if left > 0 => Line::from(vec![
            Span::styled(on, Style::new().fg(Color::Yellow)),
            Span::styled(format!("{target}"), player_text(target)),
            Span::raw(" "),
            Span::styled(
                sand_bar(left, total, bar),
                Style::new().fg(Color::Yellow).bg(Color::Indexed(236)),
            ),
            Span::raw(format!(" {:>6}", words::seconds(left))),
        ]),
        _ if left > 0 && game.is_playing() => Line::from(vec![
            Span::styled("Timer, on nobody ", dim()),
            Span::styled(
                sand_bar(left, total, bar.min(10)),
                dim().bg(Color::Indexed(236)),
            ),
            Span::styled(format!(" {:>6}", words::seconds(left)), dim()),
        ]),
        _ if game.is_playing() => Line::from(Span::styled(
            format!("Timer idle: {} may flip it", game.turn().other()),
            dim(),
        )),
        _ => Line::from(Span::styled("Timer idle", dim())),
    })
}

/// The panel beside the board: both seats with their hourglasses, the 15-second timer,
/// what we may do now.
pub(super) fn panel(view: &GameView, app: &App, now: u64, size: Size) -> Vec<Line<'static>> {
    let game = &view.replica;
    let mut out = Vec::new();
    // The glass under the cursor that our seat may pick up now: its flip is previewed.
    let preview = (game.is_playing() && view.legal.contains(&Action::Start { from: app.cursor }))
        .then(|| game.occupant(app.cursor))
        .flatten();
    let gap = |out: &mut Vec<Line<'static>>| {
        if size == Size::Large {
            out.push(Line::raw(""));
        }
    };
    for p in [Player::Black, Player::Red] {
        out.extend(seat_lines(view, p, app, now, size));
        for g in p.glasses() {
            out.push(glass_line_sized(
                game,
                g,
                now,
                size.bar(),
                preview == Some(g),
            ));
        }
        if p == Player::Black {
            gap(&mut out);
            if let Some(l) = neutral_line_sized(game, now, size, view.seat) {
                out.push(l);
                gap(&mut out);
            }
        }
    }
    gap(&mut out);
    for c in crate::countdown::countdowns(view, now) {
        let style = if c.mine && c.left_ms <= 5_000 {
            Style::new()
                .fg(Color::LightRed)
                .add_modifier(Modifier::BOLD)
        } else if c.mine {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new().fg(Color::Gray)
        };
        out.push(Line::styled(format!("⏱ {}", c.text), style));
    }
    match (view.seat, game.status()) {
        (_, Status::Finished { outcome }) => out.push(Line::styled(
            format!("Game over: {}", outcome.describe()),
            Style::new().add_modifier(Modifier::BOLD),
        )),
        (_, Status::Aborted { reason, .. }) => out.push(Line::styled(
            format!("Game aborted: {}", words::abort(reason)),
            Style::new().add_modifier(Modifier::BOLD),
        )),
        (Some(_), Status::Playing) => {
            let may = app.may_lines();
            if may.is_empty() {
                out.push(Line::styled("You may: wait", dim()));
            } else {
                out.push(Line::styled(
                    "You may:",
                    Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
                ));
                for m in may {
                    out.push(Line::raw(format!("  {m}")));
                }
            }
        }
        (None, Status::Playing) => out.push(Line::styled(
            format!("Watching game {}", crate::gameref::short_id(view.id)),
            dim(),
        )),
    }
    out
}
