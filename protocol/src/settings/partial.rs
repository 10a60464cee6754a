//! Settings as a player writes them: each field given or left out. The settings JSON of
//! every message reads through here ([`SettingsSpec`]): [`Settings`] fills what is left
//! out from the level's defaults, [`PartialSettings`] keeps it left out, for a base of
//! the reader's choice (a tournament's: its named time control).

use serde::{Deserialize, Serialize};

use super::{range, FullSocket, GameClock, Level, Settings, SettingsError, Setup};

/// The level of settings that do not name one.
pub const DEFAULT_LEVEL: Level = Level::Three;

/// Settings as a player wrote them: each field given (`Some`) or left out (`None`);
/// `game_clock` and `turn_limit_ms` given as `null` (`Some(None)`) switch them off. Every
/// value given is in its range ([`super::RANGES`]). Its JSON is the settings JSON with
/// only the fields given; [`PartialSettings::over`] fills the others from a base.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "SettingsSpec")]
pub struct PartialSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hourglass_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neutral_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_grace_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_socket: Option<FullSocket>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game_clock: Option<Option<GameClock>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_limit_ms: Option<Option<u64>>,
    /// Not a player's choice on the wire (the server refuses it, `fixed_setting`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_ms: Option<u64>,
    /// Not a player's choice on the wire (the server refuses it, `fixed_setting`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_release_ms: Option<u64>,
}

impl PartialSettings {
    /// The level given, else [`DEFAULT_LEVEL`].
    pub fn level_or_default(&self) -> Level {
        self.level.unwrap_or(DEFAULT_LEVEL)
    }

    /// `base` with the fields given instead of its own.
    pub fn over(&self, base: Settings) -> Settings {
        Settings {
            level: self.level.unwrap_or(base.level),
            setup: self.setup.unwrap_or(base.setup),
            hourglass_ms: self.hourglass_ms.unwrap_or(base.hourglass_ms),
            neutral_ms: self.neutral_ms.unwrap_or(base.neutral_ms),
            drop_grace_ms: self.drop_grace_ms.unwrap_or(base.drop_grace_ms),
            full_socket: self.full_socket.unwrap_or(base.full_socket),
            game_clock: self.game_clock.unwrap_or(base.game_clock),
            turn_limit_ms: self.turn_limit_ms.unwrap_or(base.turn_limit_ms),
            abort_ms: self.abort_ms.unwrap_or(base.abort_ms),
            late_release_ms: self.late_release_ms.unwrap_or(base.late_release_ms),
        }
    }

    /// Checks that every value given is in its range, in the order
    /// [`Settings::validate`] checks them.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let given = [
            ("hourglass_ms", self.hourglass_ms),
            ("neutral_ms", self.neutral_ms),
            ("drop_grace_ms", self.drop_grace_ms),
            ("abort_ms", self.abort_ms),
            ("late_release_ms", self.late_release_ms),
            ("turn_limit_ms", self.turn_limit_ms.flatten()),
            (
                "game_clock.main_ms",
                self.game_clock.flatten().map(|c| c.main_ms),
            ),
            (
                "game_clock.increment_ms",
                self.game_clock.flatten().map(|c| c.increment_ms),
            ),
        ];
        for (name, value) in given {
            if let Some(value) = value {
                range(name).check(value)?;
            }
        }
        Ok(())
    }
}

/// Every field a player chooses given (the fields fixed by the rules page left out, as
/// [`super::player_form`] leaves them out).
impl From<Settings> for PartialSettings {
    fn from(s: Settings) -> PartialSettings {
        PartialSettings {
            level: Some(s.level),
            setup: Some(s.setup),
            hourglass_ms: Some(s.hourglass_ms),
            neutral_ms: Some(s.neutral_ms),
            drop_grace_ms: Some(s.drop_grace_ms),
            full_socket: Some(s.full_socket),
            game_clock: Some(s.game_clock),
            turn_limit_ms: Some(s.turn_limit_ms),
            abort_ms: None,
            late_release_ms: None,
        }
    }
}

/// The JSON form of settings: any field may be left out. `game_clock` and
/// `turn_limit_ms` may be `null` to switch them off.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsSpec {
    level: Option<Level>,
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

/// Tells a missing field (outer `None`) from an explicit `null` (`Some(None)`).
fn explicit<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl TryFrom<SettingsSpec> for PartialSettings {
    type Error = SettingsError;
    fn try_from(spec: SettingsSpec) -> Result<PartialSettings, SettingsError> {
        let given = PartialSettings {
            level: spec.level,
            setup: spec.setup,
            hourglass_ms: spec.hourglass_ms,
            neutral_ms: spec.neutral_ms,
            drop_grace_ms: spec.drop_grace_ms,
            full_socket: spec.full_socket,
            game_clock: spec.game_clock,
            turn_limit_ms: spec.turn_limit_ms,
            abort_ms: spec.abort_ms,
            late_release_ms: spec.late_release_ms,
        };
        given.validate()?;
        Ok(given)
    }
}

/// What is left out takes the level's default.
impl TryFrom<SettingsSpec> for Settings {
    type Error = SettingsError;
    fn try_from(spec: SettingsSpec) -> Result<Settings, SettingsError> {
        let given = PartialSettings::try_from(spec)?;
        let settings = given.over(Settings::level(given.level_or_default()));
        settings.validate()?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_fields_given_are_kept_and_written() {
        let p: PartialSettings =
            serde_json::from_str(r#"{"game_clock":null,"neutral_ms":5000}"#).unwrap();
        assert_eq!(p.game_clock, Some(None));
        assert_eq!(p.neutral_ms, Some(5_000));
        assert_eq!(
            (p.level, p.hourglass_ms, p.turn_limit_ms),
            (None, None, None)
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"neutral_ms": 5000, "game_clock": null})
        );
        let again: PartialSettings = serde_json::from_value(json).unwrap();
        assert_eq!(again, p);
        // Over a base: the base's where nothing was given.
        let base = Settings {
            hourglass_ms: 45_000,
            game_clock: Some(GameClock {
                main_ms: 60_000,
                increment_ms: 0,
            }),
            ..Settings::level(Level::Three)
        };
        let s = p.over(base.clone());
        assert_eq!(
            (s.hourglass_ms, s.neutral_ms, s.game_clock),
            (45_000, 5_000, None)
        );
        assert_eq!(PartialSettings::default().over(base.clone()), base);
    }

    #[test]
    fn values_given_are_checked_as_settings_are() {
        for json in [r#"{"hourglass_ms":5}"#, r#"{"game_clock":{"main_ms":1}}"#] {
            let partial = serde_json::from_str::<PartialSettings>(json).unwrap_err();
            let full = serde_json::from_str::<Settings>(json).unwrap_err();
            assert_eq!(partial.to_string(), full.to_string(), "{json}");
        }
        assert!(serde_json::from_str::<PartialSettings>(r#"{"speed":1}"#).is_err());
        assert!(serde_json::from_str::<PartialSettings>(r#"{"level":4}"#).is_err());
    }

    #[test]
    fn whole_settings_are_every_choice_given() {
        let s = Settings::blitz(Level::Two);
        let p = PartialSettings::from(s.clone());
        assert_eq!((p.abort_ms, p.late_release_ms), (None, None));
        assert_eq!(
            p.over(Settings::level(Level::One)).hourglass_ms,
            s.hourglass_ms
        );
        assert_eq!(
            p.over(Settings::default()),
            Settings {
                abort_ms: Settings::default().abort_ms,
                late_release_ms: Settings::default().late_release_ms,
                ..s
            }
        );
    }
}
