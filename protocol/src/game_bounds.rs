//! Bounds on waiting that are not one rule's own timer (`docs/RULES.md`, decision 8):
//! the late-release bound, whatever happens to the turn.

use super::*;

impl Game {
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
        // Not on turn: the turn it was late on passed at the expiry, which earned the
        // other player its penalty (penalties do not stack). On turn: the turn had come
        // back to him, and this turn is forfeited like any other, with its penalty.
        if !not_on_turn {
            self.penalty_owed[other.index()] = true;
            events.push(Event::PenaltyEarned {
                at: now,
                player: other,
            });
            self.begin_turn(other, events);
        }
    }
}
