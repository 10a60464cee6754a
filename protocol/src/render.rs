//! The board drawn as text, the way the network TAMSK server drew it (`seeds/002_…`):
//! flat-topped hexes, column letters with row numbers around the rim, each hex showing
//! its spare capacity (capacity minus rings) and, when occupied, the hourglass label with
//! its sand, and a legend to the right with each player's hourglasses and rings.
//!
//! ```text
//!                      D7                       Black (ABC)
//!                     ____                      32 rings remaining
//!                C6  /    \  E6
//!               ____/   1  \____
//!          B5  /    \ C--- /    \  F5
//! ```
//!
//! Pure: a function of a [`Game`] and an instant. Everything drawn is ASCII, so a
//! character column is a byte column. A full-screen client can reuse the layout: [`cell`]
//! says where each square's hex, spare digit and label are, so it can colour them, and
//! [`board_lines`] and [`legend`] give the two parts separately.
//!
//! The label of an hourglass is four characters: the letter, then `---` when its sand
//! does not run (Level 1, or not started yet), the whole seconds left (rounded up, `12m`
//! from 1000 s on) while it runs, or `dead` (five characters) once it has run out.

use crate::board::Square;
use crate::game::{Game, Glass, Player, Status};

/// Text lines of the board, rim labels included.
pub const BOARD_LINES: usize = 32;
/// Width of the board part; the legend starts at this column.
pub const LEGEND_COLUMN: usize = 46;

const COLUMN_LEN: [usize; 7] = [4, 5, 6, 7, 6, 5, 4];

/// Where a square's hex is drawn. Lines and columns are 0-based in [`board_lines`] (and
/// in [`render`]'s output, which starts with the board).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub square: Square,
    /// The line of the hex's top edge `____`.
    pub top: usize,
    /// The column of the first `_` of the top edge.
    pub left: usize,
}

impl Cell {
    /// Line and column of the spare-capacity digit.
    pub fn spare(&self) -> (usize, usize) {
        (self.top + 2, self.left + 2)
    }
    /// Line and column of the hourglass label (4 characters, 5 for `Xdead`).
    pub fn label(&self) -> (usize, usize) {
        (self.top + 3, self.left)
    }
    /// The inside of the hex as (line, first column, width) runs, top to bottom, for a
    /// client that paints the hex (the bottom edge `____` excluded).
    pub fn interior(&self) -> [(usize, usize, usize); 3] {
        [
            (self.top + 1, self.left, 4),
            (self.top + 2, self.left - 1, 6),
            (self.top + 3, self.left - 1, 6),
        ]
    }
    /// Line and column of the rim label (`D7`, `A1`, ...) when this square is at the top
    /// or the bottom of its column.
    pub fn rim_label(&self) -> Option<(usize, usize)> {
        let len = COLUMN_LEN[self.square.col() as usize];
        let row = self.square.row() as usize;
        if row == len {
            Some((self.top - 1, self.left + 1))
        } else if row == 1 {
            Some((self.top + 6, self.left + 1))
        } else {
            None
        }
    }
}

/// Where `square` is drawn.
pub fn cell(square: Square) -> Cell {
    let col = square.col() as usize;
    let row = square.row() as usize;
    Cell {
        square,
        top: 1 + 2 * col.abs_diff(3) + 4 * (COLUMN_LEN[col] - row),
        left: 2 + 6 * col,
    }
}

/// The label of an hourglass on its hex at `now`: `X---`, `X 42`, `X12m` or `Xdead`.
pub fn glass_label(game: &Game, glass: Glass, now: u64) -> String {
    let state = game.glass(glass);
    let letter = glass.label();
    if state.is_dead() {
        return format!("{letter}dead");
    }
    if !game.settings().level.timed() || !state.started {
        return format!("{letter}---");
    }
    format!("{letter}{}", seconds(state.remaining(now)))
}

/// Sand as three characters: whole seconds rounded up, or minutes from 1000 s on.
fn seconds(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    if s < 1000 {
        format!("{s:>3}")
    } else {
        format!("{:>2}m", (s / 60).min(99))
    }
}

/// The board without the legend: [`BOARD_LINES`] lines, trailing spaces removed.
pub fn board_lines(game: &Game, now: u64) -> Vec<String> {
    let mut grid = vec![vec![b' '; LEGEND_COLUMN]; BOARD_LINES];
    let mut put = |line: usize, col: usize, text: &str| {
        for (i, b) in text.bytes().enumerate() {
            grid[line][col + i] = b;
        }
    };
    for square in Square::ALL {
        let c = cell(square);
        let (t, x) = (c.top, c.left);
        put(t, x, "____");
        put(t + 1, x - 1, "/    \\");
        put(t + 2, x - 2, "/      \\");
        put(t + 3, x - 2, "\\      /");
        put(t + 4, x - 1, "\\____/");
        let spare = square.capacity() - game.rings_on(square);
        put(t + 2, x + 2, &spare.to_string());
        if let Some(glass) = game.occupant(square) {
            put(t + 3, x, &glass_label(game, glass, now));
        }
        if let Some((line, col)) = c.rim_label() {
            put(line, col, &square.to_string().to_ascii_uppercase());
        }
    }
    grid.into_iter()
        .map(|l| String::from_utf8(l).expect("ASCII").trim_end().to_string())
        .collect()
}

fn rings_line(n: u8) -> String {
    match n {
        1 => "1 ring remaining".to_string(),
        n => format!("{n} rings remaining"),
    }
}

/// One player's hourglasses: `X d2 42s  Y g4 ---  Z a4 dead`.
fn glasses_line(game: &Game, player: Player, now: u64) -> String {
    player
        .glasses()
        .iter()
        .map(|&g| {
            let state = game.glass(g);
            let place = state.square.map_or("off".to_string(), |s| s.to_string());
            let sand = glass_label(game, g, now)[1..].trim_start().to_string();
            let sand = if sand.ends_with(|c: char| c.is_ascii_digit()) {
                format!("{sand}s")
            } else {
                sand
            };
            format!("{g} {place} {sand}")
        })
        .collect::<Vec<_>>()
        .join("  ")
}

/// The legend as (line, text) pairs, to be drawn from [`LEGEND_COLUMN`] on: Black's
/// hourglasses and rings at the top (his corner d7 is there), Red's at the bottom, the
/// turn marker, and in the middle what is in progress (an hourglass in hand, the
/// 15-second timer, a penalty owed, the end).
pub fn legend(game: &Game, now: u64) -> Vec<(usize, String)> {
    let playing = game.is_playing();
    let head = |p: Player| {
        let letters: String = p.glasses().iter().map(|g| g.label()).collect();
        let turn = if playing && game.turn() == p && !game.is_ending() {
            "  <- to move"
        } else {
            ""
        };
        format!("{p} ({letters}){turn}")
    };
    let mut out = vec![
        (0, head(Player::Black)),
        (1, rings_line(game.rings_left(Player::Black))),
        (2, glasses_line(game, Player::Black, now)),
        (29, glasses_line(game, Player::Red, now)),
        (30, head(Player::Red)),
        (31, rings_line(game.rings_left(Player::Red))),
    ];
    let mut middle = Vec::new();
    match game.status() {
        Status::Finished { .. } => middle.push("Game over".to_string()),
        Status::Aborted { .. } => middle.push("Game aborted".to_string()),
        Status::Playing => {
            if game.is_ending() {
                middle.push("Neither player can move".to_string());
            }
            for held in game.held().into_iter().chain(game.late()) {
                middle.push(format!(
                    "{} holds {} from {}",
                    held.player, held.glass, held.from
                ));
            }
            let neutral = game.neutral();
            if let Some(target) = game.neutral_judges() {
                let left = neutral.sand.remaining(now);
                if left > 0 {
                    middle.push(format!(
                        "15-second timer on {target}: {}s",
                        seconds(left).trim()
                    ));
                }
            }
            for p in Player::BOTH {
                if game.penalty_owed(p) {
                    middle.push(format!("{p} may drop a penalty ring"));
                }
            }
        }
    }
    out.extend(middle.into_iter().enumerate().map(|(i, t)| (15 + i, t)));
    out
}

/// The whole drawing: the board with the legend to its right, one string with a line
/// break after each line and no trailing spaces.
pub fn render(game: &Game, now: u64) -> String {
    let mut lines = board_lines(game, now);
    for (line, text) in legend(game, now) {
        let l = &mut lines[line];
        let pad = LEGEND_COLUMN - l.len();
        l.push_str(&" ".repeat(pad));
        l.push_str(&text);
    }
    let mut out = String::new();
    for l in lines {
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Action;
    use crate::settings::{Level, Settings, Setup};

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    /// The board of the network server's diagram (`seeds/002_…`), legend cut off:
    /// its starting position is ours (X d1, Y g4, Z a4, A a1, B g1, C d7).
    const SEED_BOARD: &str = r"                     D7
                    ____
               C6  /    \  E6
              ____/   1  \____
         B5  /    \ C--- /    \  F5
        ____/   1  \____/   1  \____
   A4  /    \      /    \      /    \  G4
  ____/   1  \____/   2  \____/   1  \____
 /    \      /    \      /    \      /    \
/   1  \____/   2  \____/   2  \____/   1  \
\ Z--- /    \      /    \      /    \ Y--- /
 \____/   2  \____/   3  \____/   2  \____/
 /    \      /    \      /    \      /    \
/   1  \____/   3  \____/   3  \____/   1  \
\      /    \      /    \      /    \      /
 \____/   2  \____/   4  \____/   2  \____/
 /    \      /    \      /    \      /    \
/   1  \____/   3  \____/   3  \____/   1  \
\      /    \      /    \      /    \      /
 \____/   2  \____/   3  \____/   2  \____/
 /    \      /    \      /    \      /    \
/   1  \____/   2  \____/   2  \____/   1  \
\ A--- /    \      /    \      /    \ B--- /
 \____/   1  \____/   2  \____/   1  \____/
      \      /    \      /    \      /
   A1  \____/   1  \____/   1  \____/  G1
            \      /    \      /
         B1  \____/   1  \____/  F1
                  \ X--- /
               C1  \____/  E1

                     D1";

    #[test]
    fn the_start_is_the_network_servers_diagram() {
        let game = Game::new(Settings::level(Level::One));
        let lines = board_lines(&game, 0);
        assert_eq!(lines.len(), BOARD_LINES);
        assert_eq!(lines.join("\n"), SEED_BOARD);
    }

    #[test]
    fn the_start_counted_by_hand() {
        let game = Game::new(Settings::level(Level::One));
        let text = board_lines(&game, 0).join("\n");
        // 37 hexes: one top edge each, plus the 7 bottom edges of the columns.
        assert_eq!(text.matches("____").count(), 37 + 7);
        // Spare capacities at the start: 18 ones, 12 twos, 6 threes, one 4.
        let digits: Vec<char> = text.chars().filter(|c| c.is_ascii_digit()).collect();
        let rim_digits = 14; // D7, C6, ..., D1
        let count = |d| digits.iter().filter(|&&c| c == d).count();
        assert_eq!(digits.len(), 37 + rim_digits);
        assert_eq!(count('4'), 1 + 2, "d4, plus the rim labels A4 and G4");
        for s in Square::ALL {
            let (line, col) = cell(s).spare();
            let lines = board_lines(&game, 0);
            let got = lines[line].as_bytes()[col] as char;
            assert_eq!(got, char::from(b'0' + s.capacity()), "{s}");
        }
        let lines = board_lines(&game, 0);
        for (label, at) in [
            ("X---", "d1"),
            ("Y---", "g4"),
            ("Z---", "a4"),
            ("A---", "a1"),
            ("B---", "g1"),
            ("C---", "d7"),
        ] {
            let (line, col) = cell(sq(at)).label();
            assert_eq!(&lines[line][col..col + 4], label, "{at}");
        }
        assert_eq!(text.matches("---").count(), 6);
    }

    #[test]
    fn spare_capacity_and_sand_follow_the_game() {
        let mut game = Game::new(Settings::blitz(Level::Two));
        let mv = |from: &str, to: &str| Action::Move {
            from: sq(from),
            to: sq(to),
            drop: true,
        };
        game.apply(Player::Red, mv("d1", "d2"), 0).unwrap();
        game.apply(Player::Black, mv("g1", "f1"), 400).unwrap();
        let lines = board_lines(&game, 1_000);
        let at = |s: &str| {
            let (line, col) = cell(sq(s)).spare();
            lines[line].as_bytes()[col] as char
        };
        assert_eq!(at("d2"), '1', "d2 holds 2, one ring in it");
        assert_eq!(at("f1"), '0', "f1 is full");
        assert_eq!(at("d1"), '1');
        let label = |s: &str| {
            let (line, col) = cell(sq(s)).label();
            lines[line][col..col + 4].to_string()
        };
        // X flipped at 0 with 3 s of sand: 2 s left at 1.0 s; B flipped at 0.4 s.
        assert_eq!(label("d2"), "X  2");
        assert_eq!(label("f1"), "B  3");
        assert_eq!(label("g4"), "Y---");
        // X dies at 3 s.
        game.advance(3_000);
        let lines = board_lines(&game, 3_000);
        let (line, col) = cell(sq("d2")).label();
        assert_eq!(&lines[line][col..col + 5], "Xdead");
        let legend = legend(&game, 3_000);
        assert!(
            legend.contains(&(29, "X d2 dead  Y g4 ---  Z a4 ---".to_string())),
            "{legend:?}"
        );
        assert!(legend.contains(&(1, "31 rings remaining".to_string())));
        assert!(
            legend.contains(&(30, "Red (XYZ)  <- to move".to_string())),
            "{legend:?}"
        );
    }

    #[test]
    fn render_puts_the_legend_beside_the_board() {
        let game = Game::new(Settings::level(Level::One));
        let text = render(&game, 0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), BOARD_LINES);
        assert_eq!(
            lines[0],
            format!("{:<46}Black (ABC)", "                     D7")
        );
        assert_eq!(&lines[1][LEGEND_COLUMN..], "32 rings remaining");
        assert_eq!(&lines[30][LEGEND_COLUMN..], "Red (XYZ)  <- to move");
        assert_eq!(&lines[2][LEGEND_COLUMN..], "A a1 ---  B g1 ---  C d7 ---");
        assert!(text.lines().all(|l| l == l.trim_end()));
    }

    #[test]
    fn the_legend_shows_what_is_in_progress() {
        let mut game = Game::new(Settings::blitz(Level::Three));
        let d1 = sq("d1");
        let d2 = sq("d2");
        game.apply(
            Player::Red,
            Action::Move {
                from: d1,
                to: d2,
                drop: true,
            },
            0,
        )
        .unwrap();
        game.apply(Player::Red, Action::Flip, 100).unwrap();
        game.apply(Player::Black, Action::Start { from: sq("g1") }, 200)
            .unwrap();
        let middle: Vec<String> = legend(&game, 250)
            .into_iter()
            .filter(|(line, _)| (3..29).contains(line))
            .map(|(_, text)| text)
            .collect();
        assert_eq!(
            middle,
            ["Black holds B from g1", "15-second timer on Black: 1s"]
        );
        // The timer runs out at 0.4 s with B in hand: Red earns the penalty ring.
        game.advance(400);
        let middle: Vec<(usize, String)> = legend(&game, 400)
            .into_iter()
            .filter(|(line, _)| (3..29).contains(line))
            .collect();
        assert_eq!(
            middle,
            [
                (15, "Black holds B from g1".to_string()),
                (16, "Red may drop a penalty ring".to_string())
            ]
        );
        game.apply(Player::Red, Action::Resign, 500).unwrap();
        assert!(legend(&game, 500).contains(&(15, "Game over".to_string())));
        assert!(!render(&game, 500).contains("<- to move"));
    }

    #[test]
    fn placement_glasses_off_the_board_are_in_the_legend() {
        let mut s = Settings::blitz(Level::Three);
        s.setup = Setup::Placement;
        let game = Game::new(s);
        let text = board_lines(&game, 0).join("\n");
        assert!(!text.contains("---"), "no hourglass on the board");
        let legend = legend(&game, 0);
        assert!(
            legend.contains(&(29, "X off ---  Y off ---  Z off ---".to_string())),
            "{legend:?}"
        );
    }

    #[test]
    fn layout_cells_do_not_overlap() {
        let mut seen = std::collections::HashSet::new();
        for s in Square::ALL {
            let c = cell(s);
            for (line, col, width) in c.interior() {
                assert!(line < BOARD_LINES && col + width <= LEGEND_COLUMN, "{s}");
                for x in col..col + width {
                    assert!(seen.insert((line, x)), "{s} overlaps at {line},{x}");
                }
            }
        }
        assert_eq!(cell(sq("d7")).top, 1);
        assert_eq!(cell(sq("d1")).rim_label(), Some((31, 21)));
        assert_eq!(cell(sq("d4")).rim_label(), None);
    }
}
