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

pub(super) fn help_box(frame: &mut Frame, area: Rect) {
    let lines: Vec<Line<'static>> = [
        "Keys",
        "  1 2 3        pick up your first, second, third hourglass (the move starts)",
        "  arrows hjkl  move the cursor",
        "  Enter Space  put the hourglass down on the cursor and drop a ring there;",
        "               or pick up the hourglass under the cursor; or drop the penalty ring",
        "  .            put it down without dropping",
        "  d            drop a ring on your destination",
        "  c            claim: drop your ring where your opponent did not",
        "  p            drop the penalty ring on the cursor",
        "  f            flip the 15-second timer (Level 3, not on your turn)",
        "  R            resign (asks first)        W  claim the win after his grace ran out",
        "  :            type a command              q  leave (your seat is kept a while)",
        "",
        "Typed commands",
        "  d1-d2  move and drop · d1-d2.  move without dropping · start d1 · release d2",
        "  drop · drop e4 (penalty ring) · penalty e4 · claim · flip · resign · win · quit",
        "  after a game: n or 'new' another game · r or 'rematch' · challenges: y/n, 'accept', 'decline'",
        "",
        "Any key closes this help.",
    ]
    .into_iter()
    .map(Line::raw)
    .collect();
    let r = centered(area, 90, lines.len() as u16 + 2);
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Help ")),
        r,
    );
}
