//! The TAMSK board: 37 sockets in columns `a`..`g`, their neighbours and capacities.
//!
//! Everything here is a compile-time table: a [`Square`] is a one-byte index, and
//! neighbour and capacity look-ups are array reads, so the rules engine never allocates
//! to ask "where can this hourglass go?".

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Number of sockets on the board.
pub const SQUARES: usize = 37;

/// Length of each column `a`..`g`.
const COLUMN_LEN: [u8; 7] = [4, 5, 6, 7, 6, 5, 4];
/// Index of the first socket (row 1) of each column.
const COLUMN_START: [u8; 7] = [0, 4, 9, 15, 22, 28, 33];

/// One of the 37 sockets, `a1`..`g4`. Ordered column by column, bottom to top.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// All squares in index order (`a1, a2, .., g4`).
    pub const ALL: [Square; SQUARES] = {
        let mut all = [Square(0); SQUARES];
        let mut i = 0;
        while i < SQUARES {
            all[i] = Square(i as u8);
            i += 1;
        }
        all
    };

    /// The square with this index (0..37), if any.
    pub const fn from_index(index: usize) -> Option<Square> {
        if index < SQUARES {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// The square in column `col` (0 = `a`) and row `row` (1 = bottom), if it exists.
    pub const fn new(col: u8, row: u8) -> Option<Square> {
        if col >= 7 || row == 0 || row > COLUMN_LEN[col as usize] {
            return None;
        }
        Some(Square(COLUMN_START[col as usize] + row - 1))
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Column, 0 (`a`) to 6 (`g`).
    pub const fn col(self) -> u8 {
        let mut col = 6;
        while COLUMN_START[col] > self.0 {
            col -= 1;
        }
        col as u8
    }

    /// Row, from 1 at the bottom of the column.
    pub const fn row(self) -> u8 {
        self.0 - COLUMN_START[self.col() as usize] + 1
    }

    /// How many rings this socket holds when full: 4 at `d4`, then 3, 2, 1 toward the edge.
    pub const fn capacity(self) -> u8 {
        GEOMETRY.capacity[self.0 as usize]
    }

    /// The adjacent sockets (3 at a corner, 6 inside).
    pub fn neighbours(self) -> &'static [Square] {
        let i = self.0 as usize;
        &GEOMETRY.neighbours[i][..GEOMETRY.degree[i] as usize]
    }

    /// Whether `other` is adjacent to this square.
    pub fn touches(self, other: Square) -> bool {
        GEOMETRY.adjacent[self.0 as usize] & (1u64 << other.0) != 0
    }

    /// Axial coordinates `(q, s)` with the centre `d4` at `(0, 3)`.
    pub const fn axial(self) -> (i8, i8) {
        let q = self.col() as i8 - 3;
        let s = self.row() as i8 - 1 + if q < 0 { -q } else { 0 };
        (q, s)
    }

    /// Hex distance to the centre `d4`.
    pub const fn distance_to_centre(self) -> u8 {
        let (q, s) = self.axial();
        let ds = s - 3;
        let a = q.unsigned_abs();
        let b = ds.unsigned_abs();
        let c = (q + ds).unsigned_abs();
        let m = if a > b { a } else { b };
        if m > c {
            m
        } else {
            c
        }
    }
}

impl Square {
    /// The name's two ASCII bytes: the column's letter, the row's digit (rows are 1 to 7).
    const fn name(self) -> [u8; 2] {
        [b'a' + self.col(), b'0' + self.row()]
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        f.write_str(std::str::from_utf8(&name).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a text is not a square.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseSquareError {
    #[error("'{0}' is not a square: expected a column a-g and a row, like d4")]
    Malformed(String),
    #[error("'{0}' is off the board: column {1} has rows 1 to {2}")]
    OffBoard(String, char, u8),
}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(text: &str) -> Result<Square, ParseSquareError> {
        let bytes = text.as_bytes();
        let malformed = || ParseSquareError::Malformed(text.to_string());
        if bytes.len() != 2 {
            return Err(malformed());
        }
        let col = bytes[0].to_ascii_lowercase();
        if !(b'a'..=b'g').contains(&col) || !bytes[1].is_ascii_digit() {
            return Err(malformed());
        }
        let col = col - b'a';
        let row = bytes[1] - b'0';
        Square::new(col, row).ok_or(ParseSquareError::OffBoard(
            text.to_string(),
            (b'a' + col) as char,
            COLUMN_LEN[col as usize],
        ))
    }
}

impl Serialize for Square {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Not `collect_str`: every move's event names two or three squares, and the
        // formatting machinery was most of their cost.
        let name = self.name();
        let text = std::str::from_utf8(&name).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(text)
    }
}

impl<'de> Deserialize<'de> for Square {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Square, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Square {
    fn schema_name() -> String {
        "Square".to_string()
    }

    fn json_schema(_gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        schemars::schema::SchemaObject {
            instance_type: Some(schemars::schema::InstanceType::String.into()),
            string: Some(Box::new(schemars::schema::StringValidation {
                pattern: Some("^[a-g][1-7]$".to_string()),
                ..Default::default()
            })),
            metadata: Some(Box::new(schemars::schema::Metadata {
                description: Some("A socket, column a-g and row from 1 at the bottom (a1..a4, b1..b5, c1..c6, d1..d7, e1..e6, f1..f5, g1..g4).".to_string()),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

/// Precomputed board geometry.
struct Geometry {
    capacity: [u8; SQUARES],
    neighbours: [[Square; 6]; SQUARES],
    degree: [u8; SQUARES],
    adjacent: [u64; SQUARES],
}

const GEOMETRY: Geometry = build_geometry();

const fn build_geometry() -> Geometry {
    let mut g = Geometry {
        capacity: [0; SQUARES],
        neighbours: [[Square(0); 6]; SQUARES],
        degree: [0; SQUARES],
        adjacent: [0; SQUARES],
    };
    // Axial neighbour directions (dq, ds).
    const DIRS: [(i8, i8); 6] = [(0, -1), (0, 1), (-1, 0), (1, 0), (1, -1), (-1, 1)];
    let mut i = 0;
    while i < SQUARES {
        let sq = Square(i as u8);
        g.capacity[i] = 4 - sq.distance_to_centre();
        let (q, s) = sq.axial();
        let mut d = 0;
        while d < 6 {
            let nq = q + DIRS[d].0;
            let ns = s + DIRS[d].1;
            if nq >= -3 && nq <= 3 {
                let col = (nq + 3) as u8;
                let row = ns + 1 - if nq < 0 { -nq } else { 0 };
                if row >= 1 && row <= COLUMN_LEN[col as usize] as i8 {
                    let n = COLUMN_START[col as usize] + row as u8 - 1;
                    g.neighbours[i][g.degree[i] as usize] = Square(n);
                    g.degree[i] += 1;
                    g.adjacent[i] |= 1u64 << n;
                }
            }
            d += 1;
        }
        i += 1;
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    fn names(list: &[Square]) -> Vec<String> {
        let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn every_square_round_trips_through_text() {
        for s in Square::ALL {
            assert_eq!(sq(&s.to_string()), s);
        }
        assert_eq!(Square::ALL.len(), 37);
        assert_eq!(Square::ALL[36].to_string(), "g4");
    }

    #[test]
    fn every_square_round_trips_through_json_as_its_name() {
        for s in Square::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Square>(&json).unwrap(), s);
        }
    }

    #[test]
    fn parse_errors_name_the_problem() {
        assert_eq!(
            "a5".parse::<Square>(),
            Err(ParseSquareError::OffBoard("a5".into(), 'a', 4))
        );
        assert!(matches!(
            "h1".parse::<Square>(),
            Err(ParseSquareError::Malformed(_))
        ));
        assert!(matches!(
            "d".parse::<Square>(),
            Err(ParseSquareError::Malformed(_))
        ));
        assert!(matches!(
            "d0".parse::<Square>(),
            Err(ParseSquareError::OffBoard(..))
        ));
        assert_eq!(sq("D4"), sq("d4"));
    }

    #[test]
    fn neighbours_match_the_rules_page_examples() {
        assert_eq!(names(sq("d1").neighbours()), ["c1", "d2", "e1"]);
        assert_eq!(names(sq("f1").neighbours()), ["e1", "e2", "f2", "g1"]);
        assert_eq!(
            names(sq("d4").neighbours()),
            ["c3", "c4", "d3", "d5", "e3", "e4"]
        );
        // Corners have three neighbours.
        for corner in ["a1", "a4", "d1", "d7", "g1", "g4"] {
            assert_eq!(sq(corner).neighbours().len(), 3, "{corner}");
        }
    }

    #[test]
    fn adjacency_is_symmetric_and_irreflexive() {
        for a in Square::ALL {
            assert!(!a.touches(a));
            for &b in a.neighbours() {
                assert!(b.touches(a), "{a} {b}");
                assert!(a.touches(b));
            }
            assert_eq!(
                Square::ALL.iter().filter(|&&b| a.touches(b)).count(),
                a.neighbours().len()
            );
        }
    }

    #[test]
    fn capacities_are_18_12_6_1() {
        let count = |c| Square::ALL.iter().filter(|s| s.capacity() == c).count();
        assert_eq!((count(1), count(2), count(3), count(4)), (18, 12, 6, 1));
        assert_eq!(sq("d4").capacity(), 4);
        assert_eq!(sq("d2").capacity(), 2);
        assert_eq!(sq("f1").capacity(), 1);
        assert_eq!(sq("e2").capacity(), 2);
        let total: u32 = Square::ALL.iter().map(|s| s.capacity() as u32).sum();
        assert_eq!(total, 18 + 24 + 18 + 4);
    }
}
