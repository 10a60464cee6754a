//! Time controls chosen by name (`--tc`), and durations as people write them (`90s`,
//! `5m`, `500ms`).
//!
//! | name        | hourglasses | 15-second timer | drop grace | turn limit (Level 2) |
//! |-------------|-------------|-----------------|------------|----------------------|
//! | `classical` | 5 min       | 20 s            | 3 s        | 60 s                 |
//! | `standard`  | 3 min       | 15 s            | 2 s        | 30 s                 |
//! | `rapid`     | 90 s        | 10 s            | 2 s        | 20 s                 |
//! | `blitz`     | 45 s        | 5 s             | 2 s        | 10 s                 |
//!
//! Every deadline a person must meet is at least [`HUMAN_MIN_MS`]. The engine's test
//! speeds (3-s hourglasses, a 0.3-s timer) are only reached with the explicit
//! `--test-speeds`, which also allows shorter durations on the other flags.

use protocol::settings::{Level, Settings};

/// The shortest deadline offered to a person without `--test-speeds`.
pub const HUMAN_MIN_MS: u64 = 2_000;

/// A named time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
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

impl TimeControl {
    /// The settings of this time control at `level` (the table lives in
    /// `protocol::rating`, which the server also classifies games by).
    pub fn settings(self, level: Level) -> Settings {
        protocol::rating::TimeControl::from(self).settings(level)
    }
}

impl From<TimeControl> for protocol::rating::TimeControl {
    fn from(tc: TimeControl) -> protocol::rating::TimeControl {
        match tc {
            TimeControl::Classical => protocol::rating::TimeControl::Classical,
            TimeControl::Standard => protocol::rating::TimeControl::Standard,
            TimeControl::Rapid => protocol::rating::TimeControl::Rapid,
            TimeControl::Blitz => protocol::rating::TimeControl::Blitz,
        }
    }
}

/// `90s`, `5m`, `1.5s`, `500ms`, `1h`. A bare number is refused: is `5` seconds or minutes?
pub fn duration_ms(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("min") {
        (n, 60_000.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000.0)
    } else {
        return Err(format!("'{text}' needs a unit: 90s, 5m, 500ms or 1h"));
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a duration: try 90s, 5m or 500ms"))?;
    if !(value.is_finite() && value >= 0.0) {
        return Err(format!("'{text}' is not a duration"));
    }
    Ok((value * unit).round() as u64)
}

/// The deadlines of `s` a person must meet that are shorter than [`HUMAN_MIN_MS`], by
/// flag name.
pub fn too_short_for_people(s: &Settings) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut check = |name, ms: u64| {
        if ms < HUMAN_MIN_MS {
            out.push(name);
        }
    };
    if s.level.timed() {
        check("--hourglass", s.hourglass_ms);
        check("--drop-grace", s.drop_grace_ms);
    }
    if s.level == Level::Three {
        check("--neutral", s.neutral_ms);
    }
    if let Some(t) = s.turn_limit_ms {
        check("--turn-limit", t);
    }
    if let Some(c) = s.game_clock {
        check("--clock", c.main_ms);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(duration_ms("90s"), Ok(90_000));
        assert_eq!(duration_ms("5m"), Ok(300_000));
        assert_eq!(duration_ms("5min"), Ok(300_000));
        assert_eq!(duration_ms("1.5s"), Ok(1_500));
        assert_eq!(duration_ms("300ms"), Ok(300));
        assert_eq!(duration_ms("1h"), Ok(3_600_000));
        let e = duration_ms("5").unwrap_err();
        assert!(e.contains("needs a unit"), "{e}");
        assert!(duration_ms("soons").is_err());
        assert!(duration_ms("-1s").is_err());
    }

    #[test]
    fn every_named_time_control_is_playable_by_people_and_valid() {
        for tc in TimeControl::value_variants() {
            for level in [Level::One, Level::Two, Level::Three] {
                let s = tc.settings(level);
                assert!(s.validate().is_ok(), "{tc:?} {level:?}");
                assert!(too_short_for_people(&s).is_empty(), "{tc:?} {level:?}");
                assert!(s.abort_ms >= HUMAN_MIN_MS);
                assert!(s.late_release_ms >= HUMAN_MIN_MS);
            }
        }
        assert_eq!(
            TimeControl::Standard.settings(Level::Three),
            Settings::level(Level::Three),
            "standard is the rules' own values"
        );
        assert_eq!(
            TimeControl::Blitz.settings(Level::Three).hourglass_ms,
            45_000
        );
    }

    #[test]
    fn the_test_speeds_are_not_for_people() {
        let s = Settings::blitz(Level::Three);
        assert_eq!(too_short_for_people(&s), ["--drop-grace", "--neutral"]);
    }
}
