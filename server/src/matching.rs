//! Rating-range quick match. A rated seek pairs only with a seeker whose rating (in the
//! seek's time control, when the seeks were posted) is within its range; the range
//! starts at [`RANGE_START`] points either way and widens by [`RANGE_GROWTH`] points a
//! second while the older seek waits, up to [`RANGE_MAX`]. A task sweeps the waiting
//! seeks every [`SWEEP_EVERY`] so that two seeks pair as soon as their range allows.
//! The figures are the defaults of the server's `Config::match_range`.
//! Casual seeks pair with anyone asking for the same settings, as before.

use std::sync::{Arc, Weak};
use std::time::Duration;

use protocol::rating::TimeControl;
use protocol::settings::Settings;

use crate::hub::{Hub, PlayerRec, Seeker};
use crate::lobby::{Seats, SeekResult};
use tokio::time::Instant;

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

impl Hub {
    /// Quick match: pairs at once with the oldest open seek of exactly these settings,
    /// asking for a rated game alike and, when rated, within the rating range
    /// (`matching`); seats drawn at random. Else waits as an open seek.
    pub fn seek(
        self: &Arc<Self>,
        settings: Settings,
        rated: Option<bool>,
        seeker: Seeker,
    ) -> SeekResult {
        let rated = wants_rated(rated, &settings);
        let rating = rating_of(&seeker.player, &settings);
        let range = self.config.match_range;
        let mut lobby = self.lobby();
        lobby.prune(Some(seeker.peer.conn));
        // The same player from another connection with the same settings: this one
        // takes over.
        lobby.seeks.retain(|s| {
            !(s.code.is_none() && s.settings == settings && s.seeker.player.id == seeker.player.id)
        });
        let now = Instant::now();
        let other = lobby.seeks.iter().position(|s| {
            s.code.is_none()
                && s.settings == settings
                && s.rated == rated
                && s.seeker.player.id != seeker.player.id
                && (!rated || range.within(s.rating, rating, now - s.since))
        });
        match other {
            Some(i) => {
                let other = lobby.seeks.remove(i);
                drop(lobby);
                SeekResult::Paired(self.start_game(
                    settings,
                    Some(rated),
                    [other.seeker, seeker],
                    Seats::Random,
                ))
            }
            None => SeekResult::Waiting(lobby.add_seek(settings, rated, seeker, None)),
        }
    }

    /// Pairs the waiting rated seeks whose ranges have widened enough (the matching
    /// task calls it every second): the oldest pair first.
    pub fn sweep_seeks(self: &Arc<Self>) {
        let range = self.config.match_range;
        loop {
            let mut lobby = self.lobby();
            lobby.prune(None);
            let now = Instant::now();
            let seeks = &lobby.seeks;
            let pair = (0..seeks.len()).find_map(|i| {
                let a = &seeks[i];
                if a.code.is_some() || !a.rated {
                    return None;
                }
                (i + 1..seeks.len())
                    .find(|&j| {
                        let b = &seeks[j];
                        b.code.is_none()
                            && b.rated
                            && b.settings == a.settings
                            && b.seeker.player.id != a.seeker.player.id
                            && range.within(a.rating, b.rating, now - a.since)
                    })
                    .map(|j| (i, j))
            });
            let Some((i, j)) = pair else { return };
            let b = lobby.seeks.remove(j);
            let a = lobby.seeks.remove(i);
            drop(lobby);
            self.start_game(a.settings, Some(true), [a.seeker, b.seeker], Seats::Random);
        }
    }
}

/// Sweeps the seeks every [`SWEEP_EVERY`] until the hub is gone.
pub fn spawn_sweeper(hub: &Arc<Hub>) {
    let hub: Weak<Hub> = Arc::downgrade(hub);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(hub) = hub.upgrade() else { return };
            if hub.closed_for_new_games() {
                return;
            }
            hub.sweep_seeks();
        }
    });
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
