//! The boxes drawn over the screen: the game's end (result, ratings, what next) and the
//! keys' help.

use super::*;

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub(super) fn game_over_box(frame: &mut Frame, area: Rect, app: &App, view: &GameView) {
    let game = &view.replica;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let title;
    match game.status() {
        Status::Finished { outcome } => {
            title = match (outcome.winner, view.seat) {
                (None, _) => " Draw ".to_string(),
                (Some(w), Some(me)) if w == me => " You win! ".to_string(),
                (Some(_), Some(_)) => " You lose ".to_string(),
                (Some(w), None) => format!(" {w} wins "),
            };
            lines.push(Line::styled(
                outcome.describe(),
                Style::new().add_modifier(Modifier::BOLD),
            ));
            lines.push(Line::raw(format!(
                "Rings left: Red {}, Black {} · ended at {}",
                outcome.rings.red,
                outcome.rings.black,
                words::seconds(outcome.ended_at_ms)
            )));
            let lineup = words::lineup(outcome);
            if !lineup.is_empty() {
                lines.push(Line::raw(""));
                lines.push(Line::raw("Tiebreak, last living hourglass first:"));
                for (l, e) in lineup
                    .into_iter()
                    .zip(&outcome.tiebreak.as_ref().expect("lineup").lineup)
                {
                    lines.push(Line::styled(format!("  {l}"), player_text(e.player)));
                }
            }
        }
        Status::Aborted { reason, .. } => {
            title = " Game aborted ".to_string();
            lines.push(Line::raw(words::abort(reason)));
        }
        Status::Playing => return,
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        match app.mode {
            crate::app::Mode::Play { .. } if view.seat.is_some() => {
                "n new game · r rematch · q quit"
            }
            _ => "q quit",
        },
        dim(),
    ));
    let width = (lines
        .iter()
        .map(|l| l.width() as u16)
        .max()
        .unwrap_or(20)
        .max(title.len() as u16)
        + 4)
    .min(area.width);
    // Long lines wrap (at 80 columns an outcome can be wider than the screen).
    let inner = width.saturating_sub(3).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let height = rows as u16 + 2;
    let r = centered(area, width, height);
    let lines: Vec<Line<'static>> = lines
        .into_iter()
        .map(|mut l| {
            l.spans.insert(0, Span::raw(" "));
            l
        })
        .collect();
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(title)
                .border_style(Style::new().fg(Color::Yellow)),
        ),
        r,
    );
}

/// The player's keys and commands, each line at most 76 columns (the box fits 80).
const PLAYER_HELP: &[&str] = &[
    "Keys",
    "  1 2 3   pick up your first, second, third hourglass (the move starts)",
    "  arrows  move the cursor (or h j k l)",
    "  Enter   put the hourglass down on the cursor and drop a ring there; or",
    "          pick up the one under the cursor; or drop the penalty ring there",
    "  .       put it down without dropping   d  drop a ring on your destination",
    "  c       claim: drop where your opponent did not  p  penalty ring on cursor",
    "  f       flip the 15-second timer (Level 3, not on your turn)",
    "  R       resign (asks first)    W  claim the win once his grace ran out",
    "  :       type a command         q  leave (your seat is kept a while)",
    "  y n     accept or decline a challenge; after a game: n new game, r rematch",
    "",
    "Typed commands (after :)",
    "  d1-d2 move and drop · d1-d2. without dropping · start d1 · release d2",
    "  drop · drop e4 (penalty ring) · claim · flip · resign · win · quit",
    "  after a game: new · rematch · decline rematch; accept · decline",
    "Board: a socket's digit is how many rings it can still take (0: full).",
    "Any key closes this help.",
];

/// A watcher's keys: only what applies to watching.
const WATCHER_HELP: &[&str] = &[
    "Keys (watching: only the players act)",
    "  arrows  move the cursor over the board (or h j k l)",
    "  :       type a command: help, quit",
    "  y n     accept or decline a challenge you receive",
    "  q Esc   stop watching",
    "",
    "The sand, the 15-second timer and every deadline run on the screen;",
    "the log tells each move in words. A socket's digit on the board is how",
    "many rings it can still take (0: full).",
    "",
    "Any key closes this help.",
];

/// The game picker's keys.
const PICKER_HELP: &[&str] = &[
    "Keys (choosing a game to watch)",
    "  ↑ ↓       choose a game       Enter  watch it",
    "  #0c1d…    type a short id as listed, then Enter (Backspace, Esc)",
    "  q         quit",
    "",
    "Any key closes this help.",
];

/// The lobby's keys.
const LOBBY_HELP: &[&str] = &[
    "Keys (lobby)",
    "  ↑ ↓    choose a seek, a live game or a player online",
    "  Enter  take the seek (the game starts at once), watch the game, or",
    "         challenge the player (Level 3, standard time control)",
    "  y n    accept or decline a challenge you receive",
    "  q      quit",
    "",
    "Any key closes this help.",
];

/// The help that applies now: the player's, a watcher's, the picker's, the lobby's (a
/// guest is never challenged: no y/n for him).
pub(crate) fn help_lines(app: &App) -> Vec<&'static str> {
    let watching = matches!(app.mode, crate::app::Mode::Watch { .. })
        || app.game.as_ref().is_some_and(|g| g.seat.is_none());
    let lines = match app.phase {
        Phase::Picking => PICKER_HELP,
        Phase::Lobby => LOBBY_HELP,
        _ if watching => WATCHER_HELP,
        _ => PLAYER_HELP,
    };
    lines
        .iter()
        .copied()
        .filter(|l| !(app.guest && l.starts_with("  y n")))
        .collect()
}

pub(super) fn help_box(frame: &mut Frame, area: Rect, app: &App) {
    let lines: Vec<Line<'static>> = help_lines(app).into_iter().map(Line::raw).collect();
    // The borders and a space each side: 80 columns for the widest (76).
    let width = lines.iter().map(|l| l.width() as u16).max().unwrap_or(20) + 4;
    // Lines wrap should a terminal be narrower than the help (it never is from 80×24).
    let r = centered(area, width, lines.len() as u16 + 2);
    // Over the whole body: no board or log peeking out around the box.
    frame.render_widget(Clear, area);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Help ")
                .padding(ratatui::widgets::Padding::horizontal(1)),
        ),
        r,
    );
}
