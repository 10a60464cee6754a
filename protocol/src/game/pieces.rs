//! The pieces of a game: the two players, their six hourglasses, and the sand that runs
//! in an hourglass (and in the 15-second timer).

use super::*;

/// One of the two players.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    Red,
    Black,
}

impl Player {
    pub const BOTH: [Player; 2] = [Player::Red, Player::Black];

    pub fn other(self) -> Player {
        match self {
            Player::Red => Player::Black,
            Player::Black => Player::Red,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Player::Red => "red",
            Player::Black => "black",
        }
    }
    /// The three hourglasses of this player.
    pub fn glasses(self) -> [Glass; 3] {
        let base = self.index() as u8 * 3;
        [Glass(base), Glass(base + 1), Glass(base + 2)]
    }
}

impl std::fmt::Display for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Player::Red => "Red",
            Player::Black => "Black",
        })
    }
}

impl std::str::FromStr for Player {
    type Err = String;
    fn from_str(s: &str) -> Result<Player, String> {
        match s.to_ascii_lowercase().as_str() {
            "red" => Ok(Player::Red),
            "black" => Ok(Player::Black),
            _ => Err(format!("'{s}' is not a player: expected red or black")),
        }
    }
}

/// One of the six hourglasses. Red's are labelled X, Y, Z (starting on d1, g4, a4) and
/// Black's A, B, C (starting on a1, g1, d7), as on the network server's diagram.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Glass(pub(super) u8);

const LABELS: [char; 6] = ['X', 'Y', 'Z', 'A', 'B', 'C'];
const START_SQUARES: [&str; 6] = ["d1", "g4", "a4", "a1", "g1", "d7"];

impl Glass {
    pub const ALL: [Glass; 6] = [Glass(0), Glass(1), Glass(2), Glass(3), Glass(4), Glass(5)];

    pub fn owner(self) -> Player {
        if self.0 < 3 {
            Player::Red
        } else {
            Player::Black
        }
    }
    pub fn index(self) -> usize {
        self.0 as usize
    }
    pub fn label(self) -> char {
        LABELS[self.0 as usize]
    }
    pub fn from_label(label: char) -> Option<Glass> {
        let upper = label.to_ascii_uppercase();
        LABELS
            .iter()
            .position(|&l| l == upper)
            .map(|i| Glass(i as u8))
    }
    /// Where this hourglass stands in the standard set-up.
    pub fn start_square(self) -> Square {
        START_SQUARES[self.0 as usize]
            .parse()
            .expect("valid start square")
    }
    pub(super) fn bit(self) -> u8 {
        1 << self.0
    }
}

impl std::fmt::Display for Glass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.label())
    }
}

impl std::fmt::Debug for Glass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.label())
    }
}

impl Serialize for Glass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_char(self.label())
    }
}

impl<'de> Deserialize<'de> for Glass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Glass, D::Error> {
        let c = char::deserialize(d)?;
        Glass::from_label(c).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "'{c}' is not an hourglass: expected X, Y, Z, A, B or C"
            ))
        })
    }
}

impl schemars::JsonSchema for Glass {
    fn schema_name() -> String {
        "Glass".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut schema = <String as schemars::JsonSchema>::json_schema(gen).into_object();
        schema.enum_values = Some(LABELS.iter().map(|c| c.to_string().into()).collect());
        schema.metadata().description =
            Some("An hourglass: Red's X, Y, Z or Black's A, B, C.".into());
        schema.into()
    }
}

/// Sand of an hourglass: `top_ms` in the upper chamber at instant `since_ms`, flowing while
/// positive. Remaining at `t` is `max(0, top_ms - (t - since_ms))`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Sand {
    pub top_ms: u64,
    pub since_ms: u64,
}

impl Sand {
    pub fn remaining(self, now: u64) -> u64 {
        self.top_ms
            .saturating_sub(now.saturating_sub(self.since_ms))
    }
    /// The instant the top empties.
    pub fn empties_at(self) -> u64 {
        self.since_ms + self.top_ms
    }
}
