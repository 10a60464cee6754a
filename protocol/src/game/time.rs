//! Time in the engine: what is due next (deaths, expiries, graces, limits), the lag
//! compensation that moves the deadlines judging a player (`docs/RULES.md` decision 16),
//! and bringing the game up to an instant.

use super::*;

/// A timed thing that is due, in the order they are handled at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Due {
    /// This hourglass runs out.
    Death(Glass),
    /// The 15-second timer runs out on the player on turn.
    NeutralExpiry,
    /// A glass taken up when the 15-second timer ran out must be put down by then.
    LateRelease,
    /// This mover's drop grace ends (and his opponent's claim opens).
    DropGrace(Player),
    /// While neither player can move: this mover's window closes.
    WindowClose(Player),
    /// This player has not made his first move: the game is aborted.
    Abort(Player),
    /// The turn limit (or the idle bound) of the player on turn.
    TurnLimit,
    /// The game clock of the player on turn.
    Clock,
}

impl Game {
    /// The next instant at which something will happen on its own (a death, an expiry,
    /// the end of a grace, ...), if any. A server sleeps until then and calls
    /// [`Game::advance`].
    pub fn next_deadline(&self) -> Option<u64> {
        self.next_due().map(|(t, _)| t)
    }

    /// Everything pending that will happen by itself, for a client to show as countdowns:
    /// the instant it happens (a deadline judging a player waits out his lag
    /// compensation, as [`Game::next_deadline`] does), what it is, and the player it
    /// judges.
    pub fn deadlines(&self) -> Vec<(u64, Due, Option<Player>)> {
        let mut out = Vec::new();
        self.each_due(|nominal, due, judged| out.push((self.due_at(nominal, judged), due, judged)));
        out
    }

    /// On every call into the engine: no allocation.
    pub(super) fn next_due(&self) -> Option<(u64, Due)> {
        let mut best: Option<(u64, Due)> = None;
        self.each_due(|nominal, due, judged| {
            let next = (self.due_at(nominal, judged), due);
            if best.is_none_or(|b| next < b) {
                best = Some(next);
            }
        });
        best
    }

    /// When a deadline happens: one that judges a player waits out his compensation.
    pub(super) fn due_at(&self, nominal: u64, judged: Option<Player>) -> u64 {
        let t = judged.map_or(nominal, |p| nominal + self.credit[p.index()].available());
        t.max(self.now_ms)
    }

    /// Everything pending that will happen by itself: its nominal instant, what it is, and
    /// the player it judges (whose compensation delays it), if any.
    pub(super) fn each_due(&self, mut due: impl FnMut(u64, Due, Option<Player>)) {
        if !self.is_playing() {
            return;
        }
        let s = &self.settings;
        for g in &self.glasses {
            if let Some(t) = g.death_at() {
                due(t, Due::Death(g.glass), None);
            }
        }
        if let Some((player, turn_no)) = self.neutral.target {
            if player == self.turn && turn_no == self.turn_no && !self.ending {
                due(
                    self.neutral.sand.empties_at(),
                    Due::NeutralExpiry,
                    Some(player),
                );
            }
        }
        if let Some((until, not_on_turn)) = self.late_bound() {
            let hold = if not_on_turn { self.late } else { self.held };
            due(until, Due::LateRelease, hold.map(|h| h.player));
        }
        for w in self.windows.iter().flatten() {
            if s.level.timed() && (w.drop_open || w.penalty_open) {
                // The compensation is the one fixed when the window opened.
                due(
                    w.opened_ms + s.drop_grace_ms + w.comp_ms,
                    Due::DropGrace(w.mover),
                    None,
                );
            }
            if self.ending {
                due(
                    self.claim_opens_at(w) + s.drop_grace_ms,
                    Due::WindowClose(w.mover),
                    None,
                );
            }
        }
        if !self.ending {
            for p in Player::BOTH {
                if let (0, Some(t0)) = (self.moves_made[p.index()], self.first_turn_ms[p.index()]) {
                    due(t0 + s.abort_ms, Due::Abort(p), Some(p));
                }
            }
            // Time with a glass in hand counts: holding one cannot stop the limit.
            due(
                self.turn_started_ms + self.turn_limit(),
                Due::TurnLimit,
                Some(self.turn),
            );
            if s.game_clock.is_some() {
                due(
                    self.turn_started_ms + self.clock_ms[self.turn.index()],
                    Due::Clock,
                    Some(self.turn),
                );
            }
        }
    }

    /// The deadlines judging `player` that have nominally passed by `now`: pending only
    /// thanks to his compensation.
    pub(super) fn compensating(&self, player: Player, now: u64) -> Vec<(u64, Due)> {
        let mut out = Vec::new();
        // Without compensation nothing can be pending past its nominal instant.
        if self.credit[player.index()].available() > 0 {
            self.each_due(|t, due, judged| {
                if judged == Some(player) && t <= now {
                    out.push((t, due));
                }
            });
        }
        // His drop grace waits out the compensation fixed when his window opened (so
        // `each_due` judges nobody with it: a lag measured later does not move it); a
        // drop after its nominal end got in only thanks to that compensation.
        if self.is_playing() && self.settings.level.timed() {
            for w in self.windows.iter().flatten() {
                let nominal = w.opened_ms + self.settings.drop_grace_ms;
                if w.mover == player
                    && w.comp_ms > 0
                    && (w.drop_open || w.penalty_open)
                    && nominal <= now
                {
                    out.push((nominal, Due::DropGrace(player)));
                }
            }
        }
        out
    }

    /// `player`'s lag compensation.
    pub fn credit(&self, player: Player) -> Credit {
        self.credit[player.index()]
    }

    /// The server's new lag estimate for `player` (round trip, ms). It moves the deadlines
    /// that judge him: bring the game up to the instant first.
    pub fn set_lag(&mut self, player: Player, lag_ms: u64) {
        self.credit[player.index()].set_lag(lag_ms);
    }

    /// Brings the game up to `now`, returning what happened on its own meanwhile. An
    /// instant before the game's current one changes nothing.
    pub fn advance(&mut self, now: u64) -> Vec<Event> {
        let mut events = Vec::new();
        self.advance_into(now, &mut events);
        events
    }

    /// [`Game::advance`] into a caller's buffer.
    pub fn advance_into(&mut self, now: u64, events: &mut Vec<Event>) {
        while let Some((t, due)) = self.next_due() {
            if t > now {
                break;
            }
            self.now_ms = t;
            self.handle_due(due, events);
            self.settle(events);
        }
        self.now_ms = self.now_ms.max(now);
    }

    pub(super) fn handle_due(&mut self, due: Due, events: &mut Vec<Event>) {
        let now = self.now_ms;
        match due {
            Due::Death(glass) => {
                let state = &mut self.glasses[glass.index()];
                state.dead_at_ms = Some(now);
                let square = state.square.expect("a started hourglass is on the board");
                let in_hand = self.held.is_some_and(|h| h.glass == glass)
                    || self.late.is_some_and(|h| h.glass == glass);
                if self.held.is_some_and(|h| h.glass == glass) {
                    self.held = None;
                }
                if self.late.is_some_and(|h| h.glass == glass) {
                    self.late = None;
                }
                events.push(Event::HourglassDied {
                    at: now,
                    glass,
                    square,
                    in_hand,
                });
            }
            Due::NeutralExpiry => {
                let target = self.turn;
                // The bound runs from the expiry itself, not from when it fired after the
                // target's compensation: he is not compensated twice.
                let expired_at = self.neutral.sand.empties_at().min(now);
                self.neutral.target = None;
                let started = self.held.is_some();
                events.push(Event::NeutralExpired {
                    at: now,
                    target,
                    started,
                });
                let other = target.other();
                self.penalty_owed[other.index()] = true;
                events.push(Event::PenaltyEarned {
                    at: now,
                    player: other,
                });
                if let Some(mut held) = self.held.take() {
                    // A bound already running (an earlier expiry on this same hold) stays:
                    // it holds whatever happens to the turn.
                    let until = expired_at + self.settings.late_release_ms;
                    held.late_until_ms = Some(held.late_until_ms.map_or(until, |t| t.min(until)));
                    // The other player may hold a late glass of his own (short timers): the
                    // new turn makes it his move first, so that one does not overwrite it.
                    self.begin_turn(other, events);
                    self.late = Some(held);
                } else {
                    events.push(Event::TurnForfeited {
                        at: now,
                        player: target,
                        reason: ForfeitReason::NeutralTimer,
                    });
                    self.lapse(target, events);
                    if self.is_playing() {
                        self.begin_turn(other, events);
                    }
                }
            }
            Due::LateRelease => self.late_release_missed(events),
            Due::DropGrace(mover) => {
                let w = self.windows[mover.index()]
                    .as_mut()
                    .expect("grace of an open window");
                let unused = w.drop_open && !w.dropped;
                w.drop_open = false;
                w.penalty_open = false;
                let square = w.square;
                if unused {
                    events.push(Event::DropGraceEnded {
                        at: now,
                        mover,
                        square,
                    });
                }
                self.tidy_window(mover);
            }
            Due::WindowClose(mover) => {
                self.close_window(mover);
            }
            Due::Abort(player) => {
                self.stop(Status::Aborted {
                    reason: AbortReason::NoFirstMove { player },
                    at_ms: now,
                });
            }
            Due::TurnLimit => {
                let player = self.turn;
                // A glass in hand stays where it was (it never left its origin); its flip
                // stands.
                self.held = None;
                events.push(Event::TurnForfeited {
                    at: now,
                    player,
                    reason: ForfeitReason::TurnLimit,
                });
                self.lapse(player, events);
                if self.is_playing() {
                    self.begin_turn(player.other(), events);
                }
            }
            Due::Clock => {
                let player = self.turn;
                self.clock_ms[player.index()] = 0;
                self.finish_outright(player.other(), EndReason::Clock { player }, events);
            }
        }
    }

    /// Hands the turn to `player` at the current instant.
    pub(super) fn begin_turn(&mut self, player: Player, events: &mut Vec<Event>) {
        let now = self.now_ms;
        self.charge_clock();
        self.turn = player;
        self.turn_no += 1;
        self.turn_started_ms = now;
        self.first_turn_ms[player.index()].get_or_insert(now);
        // The turn passes the other player by: his claim on `player`'s last move is gone
        // (rules page, section 4), and that move may be complete now.
        if let Some(w) = self.windows[player.index()].as_mut() {
            w.claim_allowed = false;
            self.tidy_window(player);
        }
        // The move still in hand after the 15-second timer goes on as this turn's move
        // (touch-move), still within its late-release bound (decision 8).
        if self.late.is_some_and(|h| h.player == player) {
            self.held = self.late.take();
        }
        if self.is_playing() {
            events.push(Event::TurnStarted { at: now, player });
        }
    }

    /// Passes players who cannot move and notices the end of the game.
    pub(super) fn settle(&mut self, events: &mut Vec<Event>) {
        loop {
            if !self.is_playing() {
                self.announce_end(events);
                return;
            }
            if self.ending {
                if self.windows.iter().all(Option::is_none) {
                    self.finish_on_rings(EndReason::NoMoves);
                    continue;
                }
                return;
            }
            let p = self.turn;
            if self.held.is_some() || self.can_move(p) {
                return;
            }
            let other = p.other();
            if self.can_move(other) || self.late.is_some_and(|h| h.player == other) {
                let reason = self.pass_reason(p);
                events.push(Event::Passed {
                    at: self.now_ms,
                    player: p,
                    reason,
                });
                self.begin_turn(other, events);
            } else {
                // No more turns: stop the clock of the player on turn. Nobody is on turn
                // any more, so nobody may claim (rules page, section 4).
                self.charge_clock();
                self.ending = true;
                for p in Player::BOTH {
                    if let Some(w) = self.windows[p.index()].as_mut() {
                        w.claim_allowed = false;
                        self.tidy_window(p);
                    }
                }
            }
        }
    }
}
