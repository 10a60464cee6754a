//! `tamsk replay FILE` on a terminal: step through a record with the keys, the board and
//! the sand shown as they were at each instant.
//!
//! The state at instant `t` between entry `i` and entry `i + 1` is the game after entry
//! `i`, advanced to `t` (so hourglasses die and timers run out on screen as they did).

use std::time::{Duration, Instant};

use crossterm::event::{self, Event as TermEvent, KeyCode, KeyEvent, KeyEventKind};
use protocol::game::{Event, Game, Player};
use protocol::notation::Notation;
use protocol::record::{EntryKind, Loaded};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use crate::app::describe_settings;
use crate::sanitize::clean;
use crate::ui::{self, Size};
use crate::words;

/// One entry of the record and the game after it.
#[derive(Clone, Debug)]
pub struct Step {
    pub at_ms: u64,
    /// The entry in words: "1.442  black  d7-e6".
    pub text: String,
    pub events: Vec<Event>,
    pub game: Game,
}

/// The viewer's state.
pub struct Viewer {
    pub title: String,
    /// Red's and Black's names, sanitised.
    pub names: [String; 2],
    /// `steps[0]` is the start (no entry).
    pub steps: Vec<Step>,
    /// The step shown.
    pub pos: usize,
    /// The instant shown: from the step's instant up to the next one's.
    pub t_ms: u64,
    /// Playing: (local instant, game instant at it, speed).
    pub playing: Option<(Instant, u64, u32)>,
    pub speed: u32,
    pub quit: bool,
}

fn entry_text(kind: &EntryKind, events: &[Event]) -> String {
    match kind {
        EntryKind::Act { player, action, .. } => {
            format!("{:<5}  {}", player.name(), Notation(*action))
        }
        EntryKind::Lag { player, lag_ms } => format!("{player}'s lag: {lag_ms} ms"),
        EntryKind::Advance => {
            let what: Vec<String> = events
                .iter()
                .filter(|e| !matches!(e, Event::TurnStarted { .. }))
                .map(words::event)
                .collect();
            if what.is_empty() {
                "time passes".into()
            } else {
                what.join("; ")
            }
        }
        EntryKind::Abandon { player } => format!("{player} abandons"),
        EntryKind::BothAbsent => "both players left".into(),
        EntryKind::Abort { reason } => format!("aborted: {}", words::abort(reason)),
    }
}

impl Viewer {
    pub fn new(title: &str, loaded: &Loaded) -> Viewer {
        let record = &loaded.file.record;
        let mut steps = vec![Step {
            at_ms: 0,
            text: "start".into(),
            events: Vec::new(),
            game: Game::new(record.settings.clone()),
        }];
        for step in record.steps() {
            // The record was checked when it was loaded.
            let Ok(step) = step else { break };
            steps.push(Step {
                at_ms: step.entry.at_ms,
                text: entry_text(&step.entry.kind, &step.events),
                events: step.events,
                game: step.game,
            });
        }
        let names = [
            clean(record.red.as_deref().unwrap_or("?")),
            clean(record.black.as_deref().unwrap_or("?")),
        ];
        Viewer {
            title: clean(title),
            names,
            steps,
            pos: 0,
            t_ms: 0,
            playing: None,
            speed: 1,
            quit: false,
        }
    }

    /// The last instant of the current step: the next entry's, or the end.
    fn step_end(&self) -> u64 {
        self.steps
            .get(self.pos + 1)
            .map_or(self.steps[self.pos].at_ms, |s| s.at_ms)
    }

    fn go(&mut self, pos: usize) {
        self.pos = pos.min(self.steps.len() - 1);
        self.t_ms = self.steps[self.pos].at_ms;
    }

    /// The game as it was at the instant shown.
    pub fn game(&self) -> Game {
        let mut g = self.steps[self.pos].game.clone();
        if g.is_playing() {
            g.advance(self.t_ms);
        }
        g
    }

    /// Moves the instant shown, rolling on to the next entries it reaches.
    fn set_time(&mut self, t: u64) {
        let last = self.steps.len() - 1;
        while self.pos < last && t >= self.steps[self.pos + 1].at_ms {
            self.pos += 1;
        }
        while self.pos > 0 && t < self.steps[self.pos].at_ms {
            self.pos -= 1;
        }
        let end = if self.pos == last {
            self.steps[last].at_ms
        } else {
            self.step_end()
        };
        self.t_ms = t.clamp(self.steps[self.pos].at_ms, end);
    }

    pub fn on_key(&mut self, key: KeyEvent, now: Instant) {
        let last = self.steps.len() - 1;
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Char('n') => self.go(self.pos + 1),
            KeyCode::Left | KeyCode::Char('h') | KeyCode::Char('p') => {
                self.go(self.pos.saturating_sub(1))
            }
            KeyCode::Home | KeyCode::Char('g') => self.go(0),
            KeyCode::End | KeyCode::Char('G') => self.go(last),
            KeyCode::Up | KeyCode::Char('k') | KeyCode::Char('+') => {
                self.set_time(self.t_ms + 1_000)
            }
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Char('-') => {
                self.set_time(self.t_ms.saturating_sub(1_000))
            }
            KeyCode::Char(' ') | KeyCode::Char('a') => {
                self.playing = match self.playing {
                    Some(_) => None,
                    None => Some((now, self.t_ms, self.speed)),
                };
            }
            KeyCode::Char('>') | KeyCode::Char('.') => {
                self.set_speed((self.speed * 2).min(64), now)
            }
            KeyCode::Char('<') | KeyCode::Char(',') => self.set_speed((self.speed / 2).max(1), now),
            _ => {}
        }
        if !matches!(key.code, KeyCode::Char(' ' | 'a' | '>' | '<' | '.' | ','))
            && self.playing.is_some()
        {
            // Any other move pauses.
            self.playing = None;
        }
    }

    fn set_speed(&mut self, speed: u32, now: Instant) {
        self.speed = speed;
        if self.playing.is_some() {
            self.playing = Some((now, self.t_ms, speed));
        }
    }

    /// Plays on in real time (times the speed).
    pub fn tick(&mut self, now: Instant) {
        let Some((since, t0, speed)) = self.playing else {
            return;
        };
        let t = t0 + now.saturating_duration_since(since).as_millis() as u64 * speed as u64;
        self.set_time(t);
        let last = self.steps.len() - 1;
        if self.pos == last && self.t_ms >= self.steps[last].at_ms {
            self.playing = None;
        }
    }
}

/// The header: the file, the players and the settings, as much as fits in `width`
/// (the names are in the panel too, the settings' short form at the compact size).
fn header(v: &Viewer, game: &Game, size: Size, width: u16) -> Line<'static> {
    const TITLE: &str = " TAMSK replay ";
    let settings = match size {
        Size::Large => describe_settings(game.settings()),
        Size::Compact => ui::short_settings(game.settings()),
    };
    let file = std::path::Path::new(&v.title)
        .file_name()
        .map_or(v.title.clone(), |f| f.to_string_lossy().into_owned());
    let players = format!("Red {} vs Black {}", v.names[0], v.names[1]);
    let room = (width as usize).saturating_sub(TITLE.chars().count());
    let candidates = [
        format!(" {} · {players} · {settings}", v.title),
        format!(" {file} · {players} · {settings}"),
        format!(" {file} · {settings}"),
    ];
    let text = candidates
        .iter()
        .find(|c| c.chars().count() <= room)
        .unwrap_or(&candidates[2])
        .clone();
    Line::from(vec![
        Span::styled(TITLE, Style::new().fg(Color::Black).bg(Color::Yellow)),
        Span::raw(text),
    ])
}

/// The panel beside the board: each seat with its rings and hourglasses, the 15-second
/// timer, the result.
fn panel(v: &Viewer, game: &Game, now: u64, size: Size) -> Vec<Line<'static>> {
    let mut panel: Vec<Line<'static>> = Vec::new();
    for p in [Player::Black, Player::Red] {
        let mut head = vec![
            Span::styled(format!("{p}"), ui::player_style(p)),
            Span::raw(" "),
            Span::styled(v.names[p.index()].clone(), ui::player_text(p)),
        ];
        if game.is_playing() && game.turn() == p && !game.is_ending() {
            head.push(Span::styled("  ◀ to move", Style::new().fg(Color::Yellow)));
        }
        panel.push(Line::from(head));
        panel.push(Line::raw(format!("  {} rings left", game.rings_left(p))));
        for g in p.glasses() {
            panel.push(ui::glass_line(game, g, now, size));
        }
        if p == Player::Black {
            if let Some(l) = ui::neutral_line(game, now, size) {
                panel.push(l);
            }
        }
    }
    if let Some(result) = words::result(game) {
        panel.push(Line::styled(
            result,
            Style::new().add_modifier(Modifier::BOLD),
        ));
        if let Some(o) = game.outcome() {
            for l in words::lineup(o) {
                panel.push(Line::raw(format!("  {l}")));
            }
        }
    }
    // The large layout has the room to say what the board's digits are (the compact one
    // says it in the help of a game played or watched).
    if size == Size::Large {
        panel.push(Line::styled(
            "A socket's digit: the rings it can still take.",
            Style::new().fg(Color::DarkGray),
        ));
    }
    panel
}

/// The keys, in one line of at most 80 columns.
pub const KEYS: &str = "←→ entries · ↑↓ ±1 s · space play · < > speed · g/G first/last · q quit";

/// Draws the viewer: the layout of a game played or watched (the compact board below
/// 100×36), the entries under the board or the panel.
pub fn draw(frame: &mut Frame, v: &Viewer) {
    let area = frame.area();
    let Some(size) = Size::of(area.width, area.height) else {
        ui::too_small(frame, area, "");
        return;
    };
    let [head, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let game = v.game();
    let now = v.t_ms;
    frame.render_widget(Paragraph::new(header(v, &game, size, area.width)), head);
    let playing = match v.playing {
        Some(_) => format!("playing ×{}", v.speed),
        None => format!("paused · speed ×{}", v.speed),
    };
    let dim = Style::new().fg(Color::DarkGray);
    frame.render_widget(
        Paragraph::new(Line::raw(format!(
            "t = {} · entry {}/{} · {playing}",
            words::seconds(now),
            v.pos,
            v.steps.len() - 1
        ))),
        status,
    );
    frame.render_widget(Paragraph::new(Line::styled(KEYS, dim)), keys);
    let panel = panel(v, &game, now, size);
    let areas = ui::game_areas(body, size, panel.len() + 1);
    frame.render_widget(
        Paragraph::new(ui::board_in(size, &game, now, &[])),
        areas.board,
    );
    frame.render_widget(
        Paragraph::new(panel).wrap(Wrap { trim: false }),
        areas.panel,
    );
    // The entries around the current one, and what the current one did.
    let list = areas.log;
    let lines = entry_lines(
        v,
        list.height.saturating_sub(1) as usize,
        list.width as usize,
    );
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::TOP).title(" Entries ")),
        list,
    );
}

/// The entry list in `h` lines of `width` columns around the current entry: that one in
/// full, wrapped under its time, the others cut to a line each with an ellipsis (a long
/// entry, a drop with its penalty and a death say, would run past the board otherwise).
fn entry_lines(v: &Viewer, h: usize, width: usize) -> Vec<Line<'static>> {
    const INDENT: usize = 15; // "nnnn  tttt.ts  "
    let line = |i: usize| {
        let s = &v.steps[i];
        format!("{:>4} {:>8}  {}", i, words::seconds(s.at_ms), s.text)
    };
    let current = wrap(&line(v.pos), width, INDENT);
    let before = (h + 1).saturating_sub(current.len()) / 2;
    let first = v.pos.saturating_sub(before);
    let mut lines = Vec::with_capacity(h);
    for i in first..v.steps.len() {
        if i == v.pos {
            let on = Style::new().fg(Color::Black).bg(Color::Yellow);
            lines.extend(current.iter().map(|l| Line::styled(l.clone(), on)));
        } else {
            lines.push(Line::raw(cut(&line(i), width)));
        }
        if lines.len() >= h {
            break;
        }
    }
    lines.truncate(h);
    lines
}

/// `text` in one line of `width` columns, an ellipsis where it is cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width || width == 0 {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// `text` in lines of `width` columns, the continuations indented by `indent`, broken at
/// spaces where it can.
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    if width <= indent + 8 {
        return vec![cut(text, width)];
    }
    let mut lines = Vec::new();
    let mut rest: Vec<char> = text.chars().collect();
    let mut room = width;
    while rest.len() > room {
        let at = rest[..=room]
            .iter()
            .rposition(|&c| c == ' ')
            .filter(|&at| at > room / 2)
            .unwrap_or(room);
        let head: String = rest[..at].iter().collect();
        lines.push(format!("{:w$}{}", "", head.trim_end(), w = width - room));
        rest = rest[at..]
            .iter()
            .copied()
            .skip_while(|&c| c == ' ')
            .collect();
        room = width - indent;
    }
    let tail: String = rest.into_iter().collect();
    lines.push(format!("{:w$}{tail}", "", w = width - room));
    lines
}

/// Runs the viewer on the terminal until `q`.
pub fn run(title: &str, loaded: &Loaded) -> std::io::Result<()> {
    let mut viewer = Viewer::new(title, loaded);
    let mut terminal = ratatui::try_init()?;
    let result = (|| -> std::io::Result<()> {
        while !viewer.quit {
            let now = Instant::now();
            viewer.tick(now);
            terminal.draw(|f| draw(f, &viewer))?;
            if event::poll(Duration::from_millis(50))? {
                if let TermEvent::Key(k) = event::read()? {
                    if k.kind != KeyEventKind::Release {
                        viewer.on_key(k, Instant::now());
                    }
                }
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result
}

#[cfg(test)]
#[path = "viewer_tests.rs"]
mod tests;
