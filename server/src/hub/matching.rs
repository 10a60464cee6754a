//! The hub's side of rating-range quick match (the range itself is [`crate::matching`]).

use std::sync::{Arc, Weak};

use protocol::settings::Settings;

use crate::lobby::{Seats, SeekResult};
use crate::matching::*;
use crate::peer::Seeker;
use tokio::time::Instant;

use super::Hub;

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
            // Several nodes: only the lobby's leader pairs (within its lease).
            if hub.lobby_is_here() {
                hub.sweep_seeks();
            }
        }
    });
}
