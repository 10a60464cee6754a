//! Named time controls and ratings as clients see them.
//!
//! A game's settings fall into at most one named time control ([`TimeControl::of`]); a
//! player has one rating per control. Settings that match no control are casual only.
//!
//! | name        | hourglasses | 15-second timer | drop grace | turn limit (Level 2) |
//! |-------------|-------------|-----------------|------------|----------------------|
//! | `classical` | 5 min       | 20 s            | 3 s        | 60 s                 |
//! | `standard`  | 3 min       | 15 s            | 2 s        | 30 s                 |
//! | `rapid`     | 90 s        | 10 s            | 2 s        | 20 s                 |
//! | `blitz`     | 45 s        | 5 s             | 2 s        | 10 s                 |

use serde::{Deserialize, Serialize};

use crate::settings::{Level, Settings};

/// A named time control.
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
#[serde(rename_all = "snake_case")]
pub enum TimeControl {
    /// 5-minute hourglasses, 20-s timer, 3-s drop grace.
    Classical,
    /// 3-minute hourglasses, 15-s timer, 2-s drop grace (the rules' own values).
    Standard,
    /// 90-s hourglasses, 10-s timer, 2-s drop grace.
    Rapid,
    /// 45-s hourglasses, 5-s timer, 2-s drop grace.
    Blitz,
}

/// The deviation from which a rating is provisional (shown with a `?`), as on lichess.
pub const PROVISIONAL_RD: f64 = 110.0;

impl TimeControl {
    pub const ALL: [TimeControl; 4] = [
        TimeControl::Classical,
        TimeControl::Standard,
        TimeControl::Rapid,
        TimeControl::Blitz,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TimeControl::Classical => "classical",
            TimeControl::Standard => "standard",
            TimeControl::Rapid => "rapid",
            TimeControl::Blitz => "blitz",
        }
    }

    /// The control named `name` (as [`TimeControl::name`] spells it, any case).
    pub fn parse(name: &str) -> Result<TimeControl, String> {
        TimeControl::ALL
            .into_iter()
            .find(|tc| tc.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                format!("unknown time control '{name}': classical, standard, rapid or blitz")
            })
    }

    /// The settings of this time control at `level`.
    pub fn settings(self, level: Level) -> Settings {
        let (hourglass, neutral, grace, turn) = match self {
            TimeControl::Classical => (300_000, 20_000, 3_000, 60_000),
            TimeControl::Standard => (180_000, 15_000, 2_000, 30_000),
            TimeControl::Rapid => (90_000, 10_000, 2_000, 20_000),
            TimeControl::Blitz => (45_000, 5_000, 2_000, 10_000),
        };
        let base = Settings::level(level);
        Settings {
            hourglass_ms: hourglass,
            neutral_ms: neutral,
            drop_grace_ms: grace,
            turn_limit_ms: base.turn_limit_ms.map(|_| turn),
            ..base
        }
    }

    /// The named control `settings` are played at, if any: its hourglasses, timer, drop
    /// grace, turn limit, setup and full-socket rule are exactly the control's at that
    /// level. The game clock, the abort bound and the late-release bound (the server's)
    /// do not count, except that a Level 1 game (no sand deadlines) needs a game clock to
    /// be timed at all.
    pub fn of(settings: &Settings) -> Option<TimeControl> {
        if !settings.level.timed() && settings.game_clock.is_none() {
            return None;
        }
        TimeControl::ALL.into_iter().find(|tc| {
            let named = tc.settings(settings.level);
            named.hourglass_ms == settings.hourglass_ms
                && named.neutral_ms == settings.neutral_ms
                && named.drop_grace_ms == settings.drop_grace_ms
                && named.turn_limit_ms == settings.turn_limit_ms
                && named.setup == settings.setup
                && named.full_socket == settings.full_socket
        })
    }
}

impl std::fmt::Display for TimeControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TimeControl {
    type Err = String;
    fn from_str(s: &str) -> Result<TimeControl, String> {
        TimeControl::parse(s)
    }
}

/// A player's rating in one control, as shown beside his name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShownRating {
    /// The Glicko-2 rating, rounded.
    pub rating: i32,
    /// The rating deviation, rounded.
    pub deviation: u32,
    /// Deviation of [`PROVISIONAL_RD`] or more: shown with a `?`.
    pub provisional: bool,
}

impl ShownRating {
    pub fn new(rating: f64, deviation: f64) -> ShownRating {
        ShownRating {
            rating: rating.round() as i32,
            deviation: deviation.round().max(0.0) as u32,
            provisional: deviation >= PROVISIONAL_RD,
        }
    }
}

impl std::fmt::Display for ShownRating {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.rating)?;
        if self.provisional {
            f.write_str("?")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::GameClock;

    #[test]
    fn named_settings_classify_as_their_control() {
        for tc in TimeControl::ALL {
            for level in [Level::One, Level::Two, Level::Three] {
                assert_eq!(
                    TimeControl::of(&tc.settings(level)),
                    Some(tc),
                    "{tc} {level:?}"
                );
            }
            assert_eq!(TimeControl::parse(&tc.name().to_uppercase()), Ok(tc));
        }
        // The rules' defaults are standard.
        assert_eq!(
            TimeControl::of(&Settings::level(Level::Three)),
            Some(TimeControl::Standard)
        );
        // A game clock on top (tournament play) keeps the control.
        let clocked = Settings {
            game_clock: Some(GameClock {
                main_ms: 1_200_000,
                increment_ms: 0,
            }),
            ..TimeControl::Blitz.settings(Level::Three)
        };
        assert_eq!(TimeControl::of(&clocked), Some(TimeControl::Blitz));
    }

    #[test]
    fn other_settings_are_casual_only() {
        assert_eq!(TimeControl::of(&Settings::blitz(Level::Three)), None);
        let odd = Settings {
            hourglass_ms: 170_000,
            ..Settings::level(Level::Three)
        };
        assert_eq!(TimeControl::of(&odd), None);
        // Level 1 without a game clock is untimed: casual only.
        let untimed = Settings {
            game_clock: None,
            ..Settings::level(Level::One)
        };
        assert_eq!(TimeControl::of(&untimed), None);
        assert!(TimeControl::parse("bullet")
            .unwrap_err()
            .contains("unknown"));
    }

    #[test]
    fn provisional_ratings_show_a_question_mark() {
        assert_eq!(ShownRating::new(1500.0, 500.0).to_string(), "1500?");
        assert_eq!(ShownRating::new(1623.6, 109.9).to_string(), "1624");
        assert!(ShownRating::new(1500.0, 110.0).provisional);
    }
}
