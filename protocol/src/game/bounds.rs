//! Bounds on waiting that are not one rule's own timer (`docs/RULES.md`, decisions 8 and
//! 15): the late-release bound whatever happens to the turn, the idle bound on a turn,
//! turns that lapse in a row, and the server's ending for two absent players. With these,
//! no game waits forever.

use super::*;

impl Game {
    /// The turn limit in force: `turn_limit_ms`, or without one the idle bound,
    /// [`IDLE_BOUND_ABORTS`] × `abort_ms`. Time with a glass in hand counts.
    pub fn turn_limit(&self) -> u64 {
        self.settings
            .turn_limit_ms
            .unwrap_or(IDLE_BOUND_ABORTS * self.settings.abort_ms)
    }

    /// How many of `player`'s turns lapsed in a row (forfeited), since his last move.
    pub fn lapsed(&self, player: Player) -> u8 {
        self.lapsed[player.index()]
    }

    /// The earliest late-release bound running, and whether it is on the glass of the
    /// player not on turn (`late`) rather than on the one in hand of the player on turn,
    /// whose turn came back to him (`held`).
    pub(super) fn late_bound(&self) -> Option<(u64, bool)> {
        let late = self.late.and_then(|h| h.late_until_ms).map(|t| (t, true));
        let held = self.held.and_then(|h| h.late_until_ms).map(|t| (t, false));
        match (late, held) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The late-release bound ran out: the glass stays where it was (it never left its
    /// origin), its flip stands, and the turn counts as forfeited.
    pub(super) fn late_release_missed(&mut self, events: &mut Vec<Event>) {
        let now = self.now_ms;
        let (_, not_on_turn) = self.late_bound().expect("a late-release bound is due");
        let hold = if not_on_turn {
            self.late.take()
        } else {
            self.held.take()
        }
        .expect("the bound is on a glass in hand");
        let player = hold.player;
        let other = player.other();
        events.push(Event::LateReleaseMissed {
            at: now,
            player,
            glass: hold.glass,
            square: hold.from,
        });
        events.push(Event::TurnForfeited {
            at: now,
            player,
            reason: ForfeitReason::LateRelease,
        });
        if not_on_turn {
            // The turn it was late on passed at the expiry, which earned the other player
            // its penalty: penalties do not stack, only the lapse is new.
            self.lapse(player, events);
        } else {
            // The turn had come back to him: this turn is forfeited like any other, with
            // its penalty.
            self.penalty_owed[other.index()] = true;
            events.push(Event::PenaltyEarned {
                at: now,
                player: other,
            });
            self.lapse(player, events);
            if self.is_playing() {
                self.begin_turn(other, events);
            }
        }
    }

    /// `player`'s turn lapsed (was forfeited). The [`IDLE_TURNS`]th lapse in a row ends the
    /// game: lost by `player` if the other player's last turn did not lapse (he is
    /// playing), else, both being idle, decided as at the end on rings. A game in which
    /// an idle player has not made his first move yet is aborted instead, as section 8
    /// would have it: no result.
    pub(super) fn lapse(&mut self, player: Player, events: &mut Vec<Event>) {
        let i = player.index();
        self.lapsed[i] = self.lapsed[i].saturating_add(1);
        if self.lapsed[i] < IDLE_TURNS {
            return;
        }
        let other = player.other();
        let both_idle = self.lapsed[other.index()] > 0;
        let unmoved = [player, other]
            .into_iter()
            .find(|&p| self.moves_made[p.index()] == 0 && (p == player || both_idle));
        if let Some(p) = unmoved {
            self.stop(Status::Aborted {
                reason: AbortReason::NoFirstMove { player: p },
                at_ms: self.now_ms,
            });
            self.announce_end(events);
        } else if both_idle {
            self.finish_on_rings(EndReason::BothIdle);
            self.announce_end(events);
        } else {
            self.finish_outright(other, EndReason::Idle { player }, events);
        }
    }

    /// The server's ending when both players are absent past their reconnection graces:
    /// decided as at the end (fewer rings; equal rings: Level 1 a draw, Levels 2-3 the
    /// tiebreak), or aborted if a player has not made his first move yet (the game has
    /// not really begun, as with the abort of section 8).
    pub fn end_both_absent(&mut self, now: u64) -> Vec<Event> {
        let mut events = self.advance(now);
        if self.is_playing() {
            if self.moves_made.contains(&0) {
                self.stop(Status::Aborted {
                    reason: AbortReason::BothAbsent,
                    at_ms: self.now_ms,
                });
            } else {
                self.finish_on_rings(EndReason::BothAbsent);
            }
            self.announce_end(&mut events);
        }
        events
    }
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;
