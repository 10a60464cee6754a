//! The compact board, for terminals from 80×24 up to the large layout: the 37 sockets as
//! two-line blocks in a staggered grid (each column half a block below or above its
//! neighbours, as on the hexagonal board), every socket showing its name, the rings it
//! still takes and, when occupied, the hourglass label with its sand.
//!
//! ```text
//!                    d
//!              c    d7 1
//!        b    c6 1  C 15    e
//!  a    b5 1       d6 2  e6 1    f
//! ```
//!
//! Pure: a function of a [`Game`], an instant and the highlighted sockets.

use protocol::game::Game;
use protocol::render;
use protocol::Square;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use crate::ui::{board_styles, styled_line, Mark};

/// Text lines of the compact board, column letters included.
pub const LINES: usize = 16;
/// Columns of the compact board.
pub const WIDTH: usize = 43;
/// Characters of one socket block.
const CELL: usize = 5;

/// Sockets per column, a to g.
const COLUMN_LEN: [usize; 7] = [4, 5, 6, 7, 6, 5, 4];

/// The first line and column of `square`'s block (two lines of [`CELL`] characters).
pub fn origin(square: Square) -> (usize, usize) {
    let col = square.col() as usize;
    let row = square.row() as usize;
    (
        1 + col.abs_diff(3) + 2 * (COLUMN_LEN[col] - row),
        1 + 6 * col,
    )
}

/// The board in [`LINES`] lines of [`WIDTH`] cells.
pub fn board(game: &Game, now: u64, marks: &[(Square, Mark)]) -> Vec<Line<'static>> {
    let blank = (' ', Style::new());
    let mut grid = vec![vec![blank; WIDTH]; LINES];
    let mut put = |line: usize, col: usize, text: &str, style: Style| {
        for (i, c) in text.chars().enumerate() {
            grid[line][col + i] = (c, style);
        }
    };
    let marked = board_styles(marks);
    for (c, len) in COLUMN_LEN.iter().enumerate() {
        // The column letter above its top socket and below its bottom one.
        let top = Square::new(c as u8, *len as u8).expect("on the board");
        let (l, x) = origin(top);
        let letter = ((b'a' + c as u8) as char).to_string();
        let rim = Style::new().fg(Color::Gray);
        put(l - 1, x + 2, &letter, rim);
        put(l + 2 * len, x + 2, &letter, rim);
    }
    for s in Square::ALL {
        let (l, x) = origin(s);
        let bg = marked(s).unwrap_or(Color::Indexed(236));
        let base = Style::new().bg(bg);
        let spare = s.capacity() - game.rings_on(s);
        let name = format!("{s}");
        put(l, x, &format!("{name:<3}"), base.fg(Color::Gray));
        let digit = if spare == 0 {
            base.fg(Color::DarkGray)
        } else {
            base.fg(Color::Yellow).add_modifier(Modifier::BOLD)
        };
        put(l, x + 3, &format!("{spare} "), digit);
        put(l + 1, x, &" ".repeat(CELL), base);
        if let Some(glass) = game.occupant(s) {
            let label = render::glass_label(game, glass, now);
            let dead = game.glass(glass).is_dead();
            let style = if dead {
                base.fg(Color::DarkGray).add_modifier(Modifier::CROSSED_OUT)
            } else {
                let mut st = crate::ui::player_style(glass.owner());
                let held = game.held().into_iter().chain(game.late());
                if held.map(|h| h.from).any(|f| f == s) {
                    st = st.add_modifier(Modifier::REVERSED | Modifier::UNDERLINED);
                }
                st
            };
            put(l + 1, x, &label, style);
        }
    }
    grid.into_iter().map(styled_line).collect()
}
