//! Game settings (rules page, section 2), fixed when a game is created.

use serde::{Deserialize, Serialize};

/// Rules level: 1 no time rules, 2 hourglasses run, 3 hourglasses and the 15-second timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub enum Level {
    One = 1,
    Two = 2,
    Three = 3,
}

impl Level {
    pub fn number(self) -> u8 {
        self as u8
    }
    /// Whether hourglasses are flipped and can die (Levels 2-3).
    pub fn timed(self) -> bool {
        self != Level::One
    }
}

impl TryFrom<u8> for Level {
    type Error = String;
    fn try_from(n: u8) -> Result<Level, String> {
        match n {
            1 => Ok(Level::One),
            2 => Ok(Level::Two),
            3 => Ok(Level::Three),
            _ => Err(format!("level must be 1, 2 or 3, not {n}")),
        }
    }
}

impl From<Level> for u8 {
    fn from(level: Level) -> u8 {
        level as u8
    }
}

impl schemars::JsonSchema for Level {
    fn schema_name() -> String {
        "Level".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        let mut schema = <u8 as schemars::JsonSchema>::json_schema(gen).into_object();
        schema.enum_values = Some(vec![1.into(), 2.into(), 3.into()]);
        schema.into()
    }
}

/// How the hourglasses start.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Setup {
    /// On the six corners, alternating (rulebook set-up).
    #[default]
    Standard,
    /// Beside the board: each player's first three moves place them (rulebook "Option").
    Placement,
}

/// What a release onto a full socket does.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FullSocket {
    /// The mover loses at once (rulebook).
    #[default]
    Lose,
    /// The release is refused (casual games).
    Reject,
}

/// A per-player game clock: main time plus an increment after each of his moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GameClock {
    pub main_ms: u64,
    #[serde(default)]
    pub increment_ms: u64,
}

/// Everything fixed when a game is created. Build with [`Settings::level`] or deserialize
/// from JSON, where every field but `level` may be left out and takes the level's default.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "SettingsSpec")]
pub struct Settings {
    pub level: Level,
    pub setup: Setup,
    /// Sand in one hourglass.
    pub hourglass_ms: u64,
    /// Sand in the 15-second timer (Level 3).
    pub neutral_ms: u64,
    /// Levels 2-3: how long after a release the mover may still drop.
    pub drop_grace_ms: u64,
    pub full_socket: FullSocket,
    pub game_clock: Option<GameClock>,
    /// A turn whose move is not released within this (time in hand counts) is forfeited
    /// without penalty. Without one, the idle bound of 10 × `abort_ms` applies
    /// (`docs/RULES.md`, decision 15).
    pub turn_limit_ms: Option<u64>,
    /// A player whose first move is not made within this of his first turn aborts the game.
    pub abort_ms: u64,
    /// Level 3: after the 15-second timer expires on a started move, how long the mover may
    /// still release it.
    pub late_release_ms: u64,
}

impl Settings {
    /// The defaults of the rules page for a level.
    pub fn level(level: Level) -> Settings {
        Settings {
            level,
            setup: Setup::Standard,
            hourglass_ms: 180_000,
            neutral_ms: 15_000,
            drop_grace_ms: 2_000,
            full_socket: FullSocket::Lose,
            game_clock: (level == Level::One).then_some(GameClock {
                main_ms: 600_000,
                increment_ms: 0,
            }),
            turn_limit_ms: (level == Level::Two).then_some(30_000),
            abort_ms: 30_000,
            late_release_ms: 5_000,
        }
    }

    /// Short timers for blitz games and tests: 3 s hourglasses, 300 ms neutral timer,
    /// 200 ms drop grace.
    pub fn blitz(level: Level) -> Settings {
        Settings {
            hourglass_ms: 3_000,
            neutral_ms: 300,
            drop_grace_ms: 200,
            late_release_ms: 500,
            abort_ms: 3_000,
            turn_limit_ms: (level == Level::Two).then_some(1_000),
            game_clock: None,
            ..Settings::level(level)
        }
    }

    /// Checks that every value is in a sensible range.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let range = |name: &'static str, value: u64, min: u64, max: u64| {
            if value < min || value > max {
                Err(SettingsError {
                    name,
                    value,
                    min,
                    max,
                })
            } else {
                Ok(())
            }
        };
        const HOUR: u64 = 3_600_000;
        range("hourglass_ms", self.hourglass_ms, 100, HOUR)?;
        range("neutral_ms", self.neutral_ms, 50, HOUR)?;
        range("drop_grace_ms", self.drop_grace_ms, 10, 60_000)?;
        range("abort_ms", self.abort_ms, 100, HOUR)?;
        range("late_release_ms", self.late_release_ms, 10, 60_000)?;
        if let Some(limit) = self.turn_limit_ms {
            range("turn_limit_ms", limit, 100, HOUR)?;
        }
        if let Some(clock) = self.game_clock {
            range("game_clock.main_ms", clock.main_ms, 1_000, 24 * HOUR)?;
            range("game_clock.increment_ms", clock.increment_ms, 0, HOUR)?;
        }
        Ok(())
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings::level(Level::Three)
    }
}

/// A setting out of its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("setting {name} = {value} is out of range {min}..={max}")]
pub struct SettingsError {
    pub name: &'static str,
    pub value: u64,
    pub min: u64,
    pub max: u64,
}

/// The JSON form of [`Settings`]: everything but the level may be left out. `game_clock`
/// and `turn_limit_ms` may be `null` to switch them off.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsSpec {
    #[serde(default = "default_level")]
    level: Level,
    setup: Option<Setup>,
    hourglass_ms: Option<u64>,
    neutral_ms: Option<u64>,
    drop_grace_ms: Option<u64>,
    full_socket: Option<FullSocket>,
    #[serde(default, deserialize_with = "explicit")]
    game_clock: Option<Option<GameClock>>,
    #[serde(default, deserialize_with = "explicit")]
    turn_limit_ms: Option<Option<u64>>,
    abort_ms: Option<u64>,
    late_release_ms: Option<u64>,
}

fn default_level() -> Level {
    Level::Three
}

/// Tells a missing field (outer `None`) from an explicit `null` (`Some(None)`).
fn explicit<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl TryFrom<SettingsSpec> for Settings {
    type Error = SettingsError;
    fn try_from(spec: SettingsSpec) -> Result<Settings, SettingsError> {
        let base = Settings::level(spec.level);
        let settings = Settings {
            level: spec.level,
            setup: spec.setup.unwrap_or(base.setup),
            hourglass_ms: spec.hourglass_ms.unwrap_or(base.hourglass_ms),
            neutral_ms: spec.neutral_ms.unwrap_or(base.neutral_ms),
            drop_grace_ms: spec.drop_grace_ms.unwrap_or(base.drop_grace_ms),
            full_socket: spec.full_socket.unwrap_or(base.full_socket),
            game_clock: spec.game_clock.unwrap_or(base.game_clock),
            turn_limit_ms: spec.turn_limit_ms.unwrap_or(base.turn_limit_ms),
            abort_ms: spec.abort_ms.unwrap_or(base.abort_ms),
            late_release_ms: spec.late_release_ms.unwrap_or(base.late_release_ms),
        };
        settings.validate()?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_defaults_follow_the_rules_page() {
        let one = Settings::level(Level::One);
        assert_eq!(one.game_clock.map(|c| c.main_ms), Some(600_000));
        assert_eq!(one.turn_limit_ms, None);
        let two = Settings::level(Level::Two);
        assert_eq!(two.turn_limit_ms, Some(30_000));
        assert_eq!(two.game_clock, None);
        let three = Settings::default();
        assert_eq!(three.level, Level::Three);
        assert_eq!(
            (three.hourglass_ms, three.neutral_ms, three.drop_grace_ms),
            (180_000, 15_000, 2_000)
        );
    }

    #[test]
    fn json_fills_in_level_defaults_and_accepts_null() {
        let s: Settings = serde_json::from_str(r#"{"level":2,"hourglass_ms":3000}"#).unwrap();
        assert_eq!(s.hourglass_ms, 3000);
        assert_eq!(s.turn_limit_ms, Some(30_000));
        let s: Settings = serde_json::from_str(r#"{"level":1,"game_clock":null}"#).unwrap();
        assert_eq!(s.game_clock, None);
        let round: Settings = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(round, s);
    }

    #[test]
    fn json_rejects_bad_values() {
        let err = serde_json::from_str::<Settings>(r#"{"level":4}"#).unwrap_err();
        assert!(err.to_string().contains("level must be 1, 2 or 3"), "{err}");
        let err = serde_json::from_str::<Settings>(r#"{"hourglass_ms":5}"#).unwrap_err();
        assert!(err.to_string().contains("hourglass_ms = 5"), "{err}");
        let err = serde_json::from_str::<Settings>(r#"{"speed":1}"#).unwrap_err();
        assert!(err.to_string().contains("speed"), "{err}");
    }
}
