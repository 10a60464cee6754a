//! Rating-range quick match. A rated seek pairs only with a seeker whose rating (in the
//! seek's time control, when the seeks were posted) is within its range; the range
//! starts at [`RANGE_START`] points either way and widens by [`RANGE_GROWTH`] points a
//! second while the older seek waits, up to [`RANGE_MAX`]. A task sweeps the waiting
//! seeks every [`SWEEP_EVERY`] so that two seeks pair as soon as their range allows.
//! The figures are the defaults of the server's `Config::match_range`.
//! Casual seeks pair with anyone asking for the same settings, as before.

use std::time::Duration;

use protocol::rating::TimeControl;
use protocol::settings::Settings;

use crate::peer::PlayerRec;

/// Rating points either way a new rated seek accepts.
pub const RANGE_START: f64 = 150.0;
/// Points the range widens by each second of waiting.
pub const RANGE_GROWTH: f64 = 10.0;
/// The widest range.
pub const RANGE_MAX: f64 = 700.0;
/// How often waiting seeks are looked at again.
pub const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A rating range: points either way at first, their growth a second, the widest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub start: f64,
    pub growth_per_sec: f64,
    pub max: f64,
}

impl Default for Range {
    fn default() -> Range {
        Range {
            start: RANGE_START,
            growth_per_sec: RANGE_GROWTH,
            max: RANGE_MAX,
        }
    }
}

impl Range {
    /// The range of a seek that has waited `waited`.
    pub fn width(&self, waited: Duration) -> f64 {
        (self.start + self.growth_per_sec * waited.as_secs_f64()).min(self.max)
    }

    /// Two ratings pair after the older seek waited `waited` (unknown ratings always
    /// pair).
    pub fn within(&self, a: Option<f64>, b: Option<f64>, waited: Duration) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= self.width(waited),
            _ => true,
        }
    }
}

/// What a seek for `settings` that asked `asked` is: rated only for a named control.
pub fn wants_rated(asked: Option<bool>, settings: &Settings) -> bool {
    asked.unwrap_or(true) && TimeControl::of(settings).is_some()
}

/// `player`'s rating in the control of `settings`.
pub fn rating_of(player: &PlayerRec, settings: &Settings) -> Option<f64> {
    let tc = TimeControl::of(settings)?;
    Some(
        player
            .ratings
            .lock()
            .expect("ratings lock")
            .get(tc)
            .glicko
            .rating,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::settings::Level;

    #[test]
    fn the_range_widens_while_waiting_up_to_its_maximum() {
        let r = Range::default();
        assert_eq!(r.width(Duration::ZERO), 150.0);
        assert_eq!(r.width(Duration::from_secs(10)), 250.0);
        assert_eq!(r.width(Duration::from_secs(3600)), RANGE_MAX);
        assert!(r.within(Some(1500.0), Some(1650.0), Duration::ZERO));
        assert!(!r.within(Some(1500.0), Some(1700.0), Duration::ZERO));
        assert!(r.within(Some(1500.0), Some(1700.0), Duration::from_secs(5)));
        assert!(!r.within(Some(1000.0), Some(1800.0), Duration::from_secs(3600)));
        assert!(r.within(None, Some(2500.0), Duration::ZERO));
    }

    #[test]
    fn only_named_controls_are_rated() {
        let named = TimeControl::Blitz.settings(Level::Three);
        assert!(wants_rated(None, &named));
        assert!(!wants_rated(Some(false), &named));
        assert!(!wants_rated(Some(true), &Settings::blitz(Level::Three)));
    }
}
