//! The full-screen interface, drawn from the [`App`] state at an instant: a pure
//! function, tested on ratatui's test backend.
//!
//! ```text
//!  TAMSK  game 3 · Level 3, hourglasses 180 s, 15-second timer 15 s · lag 23 ms
//!  <board, 46×32, as the network server drew it>   Black (Bert)  ◀ to move
//!                                                   ● connected · 30 rings left
//!                                                   A a1 ██████████▌    41.2s
//!                                                   ...
//!                                                   15-second timer ...
//!                                                   Red (Rita) you ...
//!                                                   You may: ...
//!                                                   ┌Log───────────────┐
//!  <status: errors in place, typed command>
//!  <keys>
//! ```

use std::time::Instant;

use protocol::game::{Action, Game, Glass, Player, Status};
use protocol::render::{self, BOARD_LINES, LEGEND_COLUMN};
use protocol::Square;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::app::{describe_settings, game_line, App, Confirm, Find, GameView, LogKind, Phase};
use crate::words;

/// The smallest terminal the compact board fits in.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;
/// From this size on, the large board.
pub const LARGE_WIDTH: u16 = 100;
pub const LARGE_HEIGHT: u16 = 36;

/// Which layout a game is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// The compact board (80×24 and up): short bars, no blank lines.
    Compact,
    /// The network server's board (100×36 and up).
    Large,
}

impl Size {
    /// The layout for a terminal of `width`×`height`; `None` when it is too small.
    pub fn of(width: u16, height: u16) -> Option<Size> {
        if width >= LARGE_WIDTH && height >= LARGE_HEIGHT {
            Some(Size::Large)
        } else if width >= MIN_WIDTH && height >= MIN_HEIGHT {
            Some(Size::Compact)
        } else {
            None
        }
    }
    fn bar(self) -> usize {
        match self {
            Size::Compact => 8,
            Size::Large => 16,
        }
    }
}

const PANEL_COLUMN: u16 = LEGEND_COLUMN as u16 + 2;

/// A player's colours: Red's labels white on red, Black's black on light grey.
pub fn player_style(p: Player) -> Style {
    match p {
        Player::Red => Style::new()
            .fg(Color::White)
            .bg(Color::Red)
            .add_modifier(Modifier::BOLD),
        Player::Black => Style::new()
            .fg(Color::Black)
            .bg(Color::Gray)
            .add_modifier(Modifier::BOLD),
    }
}

/// A player's name in text: red, or bright white for Black on a dark terminal.
pub fn player_text(p: Player) -> Style {
    match p {
        Player::Red => Style::new()
            .fg(Color::LightRed)
            .add_modifier(Modifier::BOLD),
        Player::Black => Style::new().fg(Color::White).add_modifier(Modifier::BOLD),
    }
}

fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// How a socket is highlighted on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The board cursor.
    Cursor,
    /// Where the hourglass in hand (or under the cursor) may go.
    Destination,
    /// A destination that is full: moving there loses.
    Losing,
}

fn mark_bg(m: Mark) -> Color {
    match m {
        Mark::Cursor => Color::Blue,
        Mark::Destination => Color::Indexed(22),
        Mark::Losing => Color::Indexed(52),
    }
}

/// Each socket's highlight colour. The cursor wins over a destination (so that it stays
/// visible on the lit sockets), a losing destination over a plain one.
pub fn board_styles(marks: &[(Square, Mark)]) -> impl Fn(Square) -> Option<Color> + '_ {
    let rank = |m: Mark| match m {
        Mark::Cursor => 2,
        Mark::Losing => 1,
        Mark::Destination => 0,
    };
    move |s| {
        marks
            .iter()
            .filter(|(at, _)| *at == s)
            .map(|&(_, m)| m)
            .max_by_key(|&m| rank(m))
            .map(mark_bg)
    }
}

/// The board as the network server drew it, coloured: spare capacity, hourglass labels
/// in their player's colours, dead ones struck out, highlighted sockets.
pub fn board(game: &Game, now: u64, marks: &[(Square, Mark)]) -> Vec<Line<'static>> {
    let text = render::board_lines(game, now);
    let mut chars: Vec<Vec<char>> = text
        .iter()
        .map(|l| {
            let mut v: Vec<char> = l.chars().collect();
            v.resize(LEGEND_COLUMN, ' ');
            v
        })
        .collect();
    chars.resize(BOARD_LINES, vec![' '; LEGEND_COLUMN]);
    let mut styles = vec![vec![dim(); LEGEND_COLUMN]; BOARD_LINES];
    let held = game.held().into_iter().chain(game.late()).map(|h| h.from);
    let held: Vec<Square> = held.collect();
    for s in Square::ALL {
        let c = render::cell(s);
        let spare = s.capacity() - game.rings_on(s);
        let (l, x) = c.spare();
        styles[l][x] = if spare == 0 {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().fg(Color::Yellow)
        };
        if let Some((l, x)) = c.rim_label() {
            for st in &mut styles[l][x..x + 2] {
                *st = Style::new().fg(Color::Gray);
            }
        }
        if let Some(glass) = game.occupant(s) {
            let (l, x) = c.label();
            let dead = game.glass(glass).is_dead();
            let width = if dead { 5 } else { 4 };
            let mut st = if dead {
                Style::new()
                    .fg(Color::DarkGray)
                    .add_modifier(Modifier::CROSSED_OUT)
            } else {
                player_style(glass.owner())
            };
            if held.contains(&s) {
                st = st.add_modifier(Modifier::REVERSED | Modifier::UNDERLINED);
            }
            for cell in &mut styles[l][x..x + width] {
                *cell = st;
            }
        }
    }
    let marked = board_styles(marks);
    for s in Square::ALL {
        let Some(bg) = marked(s) else { continue };
        for (l, x, w) in render::cell(s).interior() {
            // Labels keep their player's colours.
            for st in styles[l][x..x + w].iter_mut().filter(|st| st.bg.is_none()) {
                *st = st.bg(bg);
            }
        }
    }
    chars
        .into_iter()
        .zip(styles)
        .map(|(cs, ss)| styled_line(cs.into_iter().zip(ss)))
        .collect()
}

/// A line of characters each with its style, as spans of equal style.
pub(crate) fn styled_line(cells: impl IntoIterator<Item = (char, Style)>) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut style = Style::default();
    for (c, s) in cells {
        if s != style && !run.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        style = s;
        run.push(c);
    }
    spans.push(Span::styled(run, style));
    Line::from(spans)
}

// The boxes drawn over the screen: the game's end, the help.
#[path = "ui_boxes.rs"]
mod boxes;
use boxes::{game_over_box, help_box};

// The status and keys lines, the wait in words.
#[path = "ui_footer.rs"]
mod footer;
use footer::{keys_line, rows, status_line, waiting_text};

// The panel beside the board: seats, hourglasses, the 15-second timer, countdowns.
#[path = "ui_panel.rs"]
mod panel;
use panel::panel;
pub use panel::{after_flip, glass_line, neutral_line, sand_bar};

/// Settings in a few characters for the compact header: "L3 60s/15s".
pub(crate) fn short_settings(s: &protocol::Settings) -> String {
    let secs = |ms: u64| crate::countdown::left(ms).replace(".0s", "s");
    let mut out = format!("L{}", s.level.number());
    if s.level.timed() {
        out.push_str(&format!(" {}", secs(s.hourglass_ms)));
    }
    if s.level == protocol::Level::Three {
        out.push_str(&format!("/{}", secs(s.neutral_ms)));
    }
    out
}

fn header(app: &App, at: Instant, width: u16) -> Line<'static> {
    // The low-time flash: the title turns red for a moment.
    let title_bg = if app.alerts.flashing(at) {
        Color::LightRed
    } else {
        Color::Yellow
    };
    let mut spans = vec![Span::styled(
        " TAMSK ",
        Style::new()
            .fg(Color::Black)
            .bg(title_bg)
            .add_modifier(Modifier::BOLD),
    )];
    let mut parts = Vec::new();
    let compact = Size::of(width, u16::MAX) != Some(Size::Large);
    if let Some(g) = &app.game {
        parts.push(format!("game {}", crate::gameref::short_id(g.id)));
        parts.push(if compact {
            short_settings(g.replica.settings())
        } else {
            describe_settings(g.replica.settings())
        });
        if g.watchers > 0 {
            parts.push(format!("{} watching", g.watchers));
        }
    }
    if let Some(me) = &app.me.as_ref().filter(|_| !compact) {
        parts.push(format!("you: {}", me.name));
    }
    if let Some(lag) = app.lag_ms {
        parts.push(format!("lag {lag}ms"));
    }
    spans.push(Span::raw(format!(" {}", parts.join(" · "))));
    spans.push(if app.connected {
        Span::styled("  ● online", Style::new().fg(Color::Green))
    } else {
        Span::styled("  ○ offline", Style::new().fg(Color::LightRed))
    });
    Line::from(spans)
}

/// The newest log entries that fit in `height` lines of `width` cells, wrapped.
fn log_lines(app: &App, height: usize, width: usize) -> Vec<Line<'static>> {
    let width = width.max(10);
    let mut out = Vec::new();
    let mut used = 0;
    for l in app.log.iter().rev() {
        let at = l.at_ms.map_or("       ".to_string(), |t| {
            format!("{:>6} ", words::seconds(t))
        });
        let style = match l.kind {
            LogKind::Error => Style::new().fg(Color::LightRed),
            LogKind::Info => Style::new().fg(Color::Cyan),
            LogKind::Event => Style::new(),
        };
        let line = Line::from(vec![
            Span::styled(at, dim()),
            Span::styled(l.text.clone(), style),
        ]);
        let rows = line.width().div_ceil(width).max(1);
        if used + rows > height {
            break;
        }
        used += rows;
        out.push(line);
    }
    out.reverse();
    out
}

/// Board highlights: the cursor, and where the hourglass in hand (or ours under the
/// cursor) may go, full sockets marked as losing.
fn marks(app: &App, view: &GameView) -> Vec<(Square, Mark)> {
    let game = &view.replica;
    let mut out = Vec::new();
    if view.seat.is_some() && game.is_playing() {
        let release: Vec<Square> = view
            .legal
            .iter()
            .filter_map(|a| match a {
                Action::Release { to } => Some(*to),
                _ => None,
            })
            .collect();
        let dests: Vec<Square> = if release.is_empty() {
            view.legal
                .iter()
                .filter_map(|a| match a {
                    Action::Move {
                        from,
                        to,
                        drop: true,
                    } if *from == app.cursor => Some(*to),
                    _ => None,
                })
                .collect()
        } else {
            release
        };
        for s in dests {
            let m = if game.is_full(s) {
                Mark::Losing
            } else {
                Mark::Destination
            };
            out.push((s, m));
        }
    }
    out.push((app.cursor, Mark::Cursor));
    out
}

/// Draws the whole screen at local instant `at`.
pub fn ui(frame: &mut Frame, app: &App, at: Instant) {
    let area = frame.area();
    if Size::of(area.width, area.height).is_none() {
        too_small(frame, area, ": the game goes on meanwhile");
        return;
    }
    // The status (an error, a question, the typed command) and the keys wrap rather
    // than run off the screen.
    let (status_text, keys_text) = (status_line(app), keys_line(app, area.width));
    let [head, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(rows(&status_text, area.width).min(3)),
        Constraint::Length(rows(&keys_text, area.width).min(2)),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(header(app, at, area.width)), head);
    let wrap = Wrap { trim: true };
    frame.render_widget(Paragraph::new(status_text).wrap(wrap), status);
    frame.render_widget(Paragraph::new(keys_text).wrap(wrap), keys);
    match (&app.phase, &app.game) {
        (Phase::Picking, _) => {
            let mut lines = vec![
                Line::styled(
                    "Live games: choose one to watch (or type its short id)",
                    Style::new().bold(),
                ),
                Line::raw(""),
            ];
            let room = body.width.saturating_sub(2) as usize;
            for (i, g) in app.games.iter().enumerate() {
                let mut line = game_line(g);
                if line.chars().count() > room {
                    // As the lobby lists it: the settings' short form.
                    let entry = crate::app::lobby::Entry::Game(g.clone());
                    line = crate::app::lobby::entry_line(&entry, room);
                }
                lines.push(if i == app.pick {
                    Line::styled(
                        format!("▶ {line}"),
                        Style::new().fg(Color::Black).bg(Color::Yellow),
                    )
                } else {
                    Line::raw(format!("  {line}"))
                });
            }
            frame.render_widget(Paragraph::new(lines), body);
        }
        (Phase::Lobby, _) => crate::app::lobby::draw_lobby(frame, body, app),
        (Phase::InGame, Some(view)) => draw_game(frame, body, app, view, at),
        _ => {
            let waiting = Line::styled(waiting_text(app), Style::new().fg(Color::Yellow));
            let height = rows(&waiting, body.width) + 2;
            let [top, rest] =
                Layout::vertical([Constraint::Length(height), Constraint::Min(1)]).areas(body);
            frame.render_widget(
                Paragraph::new(vec![Line::raw(""), waiting])
                    .centered()
                    .wrap(Wrap { trim: true }),
                top,
            );
            let h = rest.height.saturating_sub(1) as usize;
            frame.render_widget(
                Paragraph::new(log_lines(app, h, rest.width as usize))
                    .wrap(Wrap { trim: false })
                    .block(Block::default().borders(Borders::TOP).title(" Log ")),
                rest,
            );
        }
    }
    if app.help {
        help_box(frame, body, app);
    }
}

/// Below 80×24: what to do, in words (`meanwhile`: what goes on while it is too small).
pub(crate) fn too_small(frame: &mut Frame, area: Rect, meanwhile: &str) {
    let lines = vec![
        Line::styled(
            format!("TAMSK needs a terminal of at least {MIN_WIDTH}×{MIN_HEIGHT}"),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Line::raw(format!("(this one is {}×{}).", area.width, area.height)),
        Line::raw(format!("Enlarge the window{meanwhile}.")),
        Line::raw("q leaves."),
    ];
    let h = (lines.len() as u16).min(area.height);
    let r = Rect {
        y: area.y + (area.height - h) / 2,
        height: h,
        ..area
    };
    frame.render_widget(
        Paragraph::new(lines).centered().wrap(Wrap { trim: true }),
        r,
    );
}

/// Where a game's parts go in `body`: the board, the panel beside it, and the log (or
/// a replay's entries) under one of them. The same for a game played, watched or
/// replayed, so that all three fit 80×24 with the compact board.
pub(crate) struct GameAreas {
    pub board: Rect,
    pub panel: Rect,
    pub log: Rect,
}

/// The areas of a game drawn in layout `size` in `body`, with a panel of `panel_lines`.
pub(crate) fn game_areas(body: Rect, size: Size, panel_lines: usize) -> GameAreas {
    let board_width = match size {
        Size::Large => PANEL_COLUMN,
        Size::Compact => crate::compact::WIDTH as u16 + 1,
    };
    let [left, right] =
        Layout::horizontal([Constraint::Length(board_width), Constraint::Min(20)]).areas(body);
    match size {
        Size::Large => {
            // The log goes under the panel, beside the board.
            let panel_height = (panel_lines as u16).min(right.height);
            let [panel, log] =
                Layout::vertical([Constraint::Length(panel_height), Constraint::Min(0)])
                    .areas(right);
            GameAreas {
                board: left,
                panel,
                log,
            }
        }
        Size::Compact => {
            // The log goes under the board, the panel takes the whole right side.
            let [board, log] = Layout::vertical([
                Constraint::Length(crate::compact::LINES as u16),
                Constraint::Min(0),
            ])
            .areas(left);
            GameAreas {
                board,
                panel: right,
                log,
            }
        }
    }
}

/// The board in layout `size`: the network server's drawing, or the compact one.
pub(crate) fn board_in(
    size: Size,
    game: &Game,
    now: u64,
    marks: &[(Square, Mark)],
) -> Vec<Line<'static>> {
    match size {
        Size::Large => board(game, now, marks),
        Size::Compact => crate::compact::board(game, now, marks),
    }
}

fn draw_game(frame: &mut Frame, body: Rect, app: &App, view: &GameView, at: Instant) {
    let now = view.now_ms(at);
    let area = frame.area();
    let size = Size::of(area.width, area.height).unwrap_or(Size::Compact);
    let marks = marks(app, view);
    let panel = panel(view, app, now, size);
    let areas = game_areas(body, size, panel.len());
    frame.render_widget(
        Paragraph::new(board_in(size, &view.replica, now, &marks)),
        areas.board,
    );
    frame.render_widget(
        Paragraph::new(panel).wrap(Wrap { trim: false }),
        areas.panel,
    );
    let log_area = areas.log;
    if log_area.height > 2 {
        let h = log_area.height as usize - 1;
        frame.render_widget(
            Paragraph::new(log_lines(app, h, log_area.width as usize))
                .wrap(Wrap { trim: false })
                .block(Block::default().borders(Borders::TOP).title(" Log ")),
            log_area,
        );
    }
    if view.is_over() && !app.help {
        game_over_box(frame, body, app, view);
    }
}

#[cfg(test)]
#[path = "ui_tests.rs"]
mod tests;
