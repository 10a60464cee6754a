//! Game settings (rules page, section 2), fixed when a game is created.

use serde::{Deserialize, Serialize};

mod partial;
use partial::SettingsSpec;
pub use partial::{PartialSettings, DEFAULT_LEVEL};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameClock {
    pub main_ms: u64,
    #[serde(default)]
    pub increment_ms: u64,
}

/// Everything fixed when a game is created. Build with [`Settings::level`] or deserialize
/// from JSON, where every field but `level` may be left out and takes the level's default.
/// The ranges are in [`RANGES`] (and the JSON Schema is built from it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// 200 ms drop grace. Its `abort_ms` and `late_release_ms` (3 s, 500 ms) are for the
    /// engine's own tests: on the wire they are not a player's choice (the server's operator
    /// sets them, see `player_form`).
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

    /// Checks that every value is in its range ([`RANGES`]).
    pub fn validate(&self) -> Result<(), SettingsError> {
        range("hourglass_ms").check(self.hourglass_ms)?;
        range("neutral_ms").check(self.neutral_ms)?;
        range("drop_grace_ms").check(self.drop_grace_ms)?;
        range("abort_ms").check(self.abort_ms)?;
        range("late_release_ms").check(self.late_release_ms)?;
        if let Some(limit) = self.turn_limit_ms {
            range("turn_limit_ms").check(limit)?;
        }
        if let Some(clock) = self.game_clock {
            range("game_clock.main_ms").check(clock.main_ms)?;
            range("game_clock.increment_ms").check(clock.increment_ms)?;
        }
        Ok(())
    }
}

const HOUR: u64 = 3_600_000;

/// A numeric setting: its name in the settings JSON, its range (inclusive) in ms, its
/// default, and whether players choose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The field of the settings JSON (`game_clock.main_ms` for a field of `game_clock`).
    pub name: &'static str,
    pub min: u64,
    pub max: u64,
    /// The default, in words (it may depend on the level).
    pub default: &'static str,
    /// Players may choose it in `seek`, `challenge`, `host` and `play_bot`; otherwise it is
    /// fixed by the rules page (an operator may change it for a test server).
    pub player: bool,
    /// What it means.
    pub doc: &'static str,
}

/// The unit of every numeric setting.
pub const UNIT: &str = "ms";

/// Every numeric setting's range: the one source of truth for validation, the JSON Schema
/// and the table in `docs/PROTOCOL.md` (a test checks that they agree).
pub const RANGES: [Range; 8] = [
    Range {
        name: "hourglass_ms",
        min: 100,
        max: HOUR,
        default: "180000",
        player: true,
        doc: "Sand in one hourglass.",
    },
    Range {
        name: "neutral_ms",
        min: 50,
        max: HOUR,
        default: "15000",
        player: true,
        doc: "Sand in the 15-second timer (Level 3).",
    },
    Range {
        name: "drop_grace_ms",
        min: 10,
        max: 60_000,
        default: "2000",
        player: true,
        doc: "Levels 2-3: how long after a release the mover may still drop.",
    },
    Range {
        name: "turn_limit_ms",
        min: 100,
        max: HOUR,
        default: "30000 at Level 2, null (no limit) at Levels 1 and 3",
        player: true,
        doc: "A turn not started within this is forfeited without penalty; null: no limit.",
    },
    Range {
        name: "game_clock.main_ms",
        min: 1_000,
        max: 24 * HOUR,
        default: "600000 at Level 1 (game_clock null, no clock, at Levels 2 and 3)",
        player: true,
        doc: "Main time of each player's game clock; game_clock null: no clock.",
    },
    Range {
        name: "game_clock.increment_ms",
        min: 0,
        max: HOUR,
        default: "0",
        player: true,
        doc: "Added to a player's game clock after each of his moves.",
    },
    Range {
        name: "abort_ms",
        min: 100,
        max: HOUR,
        default: "30000",
        player: false,
        doc: "A player whose first move is not made within this of his first turn aborts the game (rules page: 30 s).",
    },
    Range {
        name: "late_release_ms",
        min: 10,
        max: 60_000,
        default: "5000",
        player: false,
        doc: "Level 3: after the 15-second timer expires on a started move, how long the mover may still release it (rules page: 5 s).",
    },
];

/// The range of the numeric setting `name`.
///
/// # Panics
/// If `name` is not in [`RANGES`].
pub fn range(name: &str) -> &'static Range {
    RANGES
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no setting {name}"))
}

impl Range {
    /// `value`, or the error naming the setting and its range.
    pub fn check(&self, value: u64) -> Result<u64, SettingsError> {
        if value < self.min || value > self.max {
            Err(SettingsError {
                name: self.name,
                value,
                min: self.min,
                max: self.max,
            })
        } else {
            Ok(value)
        }
    }

    fn schema(&self, nullable: bool) -> schemars::schema::Schema {
        use schemars::schema::{InstanceType, Metadata, NumberValidation, SchemaObject};
        let types: schemars::schema::SingleOrVec<InstanceType> = if nullable {
            vec![InstanceType::Integer, InstanceType::Null].into()
        } else {
            InstanceType::Integer.into()
        };
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(format!(
                    "{} In {UNIT}, {}..={}; default {}.{}",
                    self.doc,
                    self.min,
                    self.max,
                    self.default,
                    if self.player {
                        ""
                    } else {
                        " Fixed by the rules page: not a player's choice (an operator may change it on a test server)."
                    }
                )),
                ..Default::default()
            })),
            instance_type: Some(types),
            format: Some("uint64".into()),
            number: Some(Box::new(NumberValidation {
                minimum: Some(self.min as f64),
                maximum: Some(self.max as f64),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into()
    }
}

/// The JSON form of the settings a player may choose (`seek`, `challenge`, `host`,
/// `play_bot`): [`Settings`] without the fields fixed by the rules page. Only its schema is
/// used; in Rust, such messages carry a [`Settings`] serialised by [`player_form`].
pub struct PlayerSettings;

impl schemars::JsonSchema for PlayerSettings {
    fn schema_name() -> String {
        "PlayerSettings".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        settings_schema(gen, true)
    }
}

impl schemars::JsonSchema for Settings {
    fn schema_name() -> String {
        "Settings".into()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        settings_schema(gen, false)
    }
}

impl schemars::JsonSchema for GameClock {
    fn schema_name() -> String {
        "GameClock".into()
    }
    fn json_schema(_gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        use schemars::schema::{InstanceType, Metadata, ObjectValidation, SchemaObject};
        let mut object = ObjectValidation::default();
        object
            .properties
            .insert("main_ms".into(), range("game_clock.main_ms").schema(false));
        object.properties.insert(
            "increment_ms".into(),
            range("game_clock.increment_ms").schema(false),
        );
        object.required.insert("main_ms".into());
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(
                    "A per-player game clock: main time plus an increment after each of his moves."
                        .into(),
                ),
                ..Default::default()
            })),
            instance_type: Some(InstanceType::Object.into()),
            object: Some(Box::new(object)),
            ..Default::default()
        }
        .into()
    }
}

/// The schema of the settings JSON, from [`RANGES`]: as players send it (`player`: every
/// field optional, only theirs) or as the server sends it (every field).
fn settings_schema(
    gen: &mut schemars::gen::SchemaGenerator,
    player: bool,
) -> schemars::schema::Schema {
    use schemars::schema::{
        InstanceType, Metadata, ObjectValidation, Schema, SchemaObject, SubschemaValidation,
    };
    let described = |schema: Schema, text: &str| -> Schema {
        let mut o = schema.into_object();
        o.metadata().description = Some(text.into());
        o.into()
    };
    let mut object = ObjectValidation::default();
    let p = &mut object.properties;
    p.insert(
        "level".into(),
        described(
            gen.subschema_for::<Level>(),
            "Rules level: 1 no time rules, 2 hourglasses run, 3 hourglasses and the 15-second timer. Default 3.",
        ),
    );
    p.insert(
        "setup".into(),
        described(
            gen.subschema_for::<Setup>(),
            "How the hourglasses start: standard (on the corners) or placement. Default standard.",
        ),
    );
    p.insert(
        "full_socket".into(),
        described(
            gen.subschema_for::<FullSocket>(),
            "A release onto a full socket: lose (rulebook) or reject. Default lose.",
        ),
    );
    let clock = gen.subschema_for::<GameClock>();
    p.insert(
        "game_clock".into(),
        SchemaObject {
            metadata: Some(Box::new(Metadata {
                description: Some(format!(
                    "{} Default: {}.",
                    range("game_clock.main_ms").doc,
                    range("game_clock.main_ms").default
                )),
                ..Default::default()
            })),
            subschemas: Some(Box::new(SubschemaValidation {
                any_of: Some(vec![
                    clock,
                    SchemaObject {
                        instance_type: Some(InstanceType::Null.into()),
                        ..Default::default()
                    }
                    .into(),
                ]),
                ..Default::default()
            })),
            ..Default::default()
        }
        .into(),
    );
    for r in RANGES.iter().filter(|r| !r.name.contains('.')) {
        if player && !r.player {
            continue;
        }
        p.insert(r.name.into(), r.schema(r.name == "turn_limit_ms"));
    }
    if player {
        object.additional_properties = Some(Box::new(Schema::Bool(false)));
    } else {
        object.required = object.properties.keys().cloned().collect();
    }
    SchemaObject {
        metadata: Some(Box::new(Metadata {
            description: Some(if player {
                "The settings a player chooses: any subset; what is left out takes the level's default (in tournament_create, the named control's). abort_ms and late_release_ms are fixed by the rules page and refused here (fixed_setting).".into()
            } else {
                "Everything fixed when a game is created, as the server states it (every field).".into()
            }),
            ..Default::default()
        })),
        instance_type: Some(InstanceType::Object.into()),
        object: Some(Box::new(object)),
        ..Default::default()
    }
    .into()
}

/// Serialises [`Settings`] as a player sends them: without the fields fixed by the rules
/// [`player_form`] of optional settings.
pub fn player_form_opt<S: serde::Serializer>(
    settings: &Option<Settings>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match settings {
        Some(settings) => player_form(settings, s),
        None => s.serialize_none(),
    }
}

/// page (`abort_ms`, `late_release_ms`), which the server sets.
pub fn player_form<S: serde::Serializer>(settings: &Settings, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct PlayerForm<'a> {
        level: Level,
        setup: Setup,
        hourglass_ms: u64,
        neutral_ms: u64,
        drop_grace_ms: u64,
        full_socket: FullSocket,
        game_clock: &'a Option<GameClock>,
        turn_limit_ms: Option<u64>,
    }
    PlayerForm {
        level: settings.level,
        setup: settings.setup,
        hourglass_ms: settings.hourglass_ms,
        neutral_ms: settings.neutral_ms,
        drop_grace_ms: settings.drop_grace_ms,
        full_socket: settings.full_socket,
        game_clock: &settings.game_clock,
        turn_limit_ms: settings.turn_limit_ms,
    }
    .serialize(s)
}

/// The settings fields that players may not choose (fixed by the rules page).
pub const FIXED: [&str; 2] = ["abort_ms", "late_release_ms"];

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
