//! Applying an action: bringing the game up to its instant, judging it, carrying it out
//! (start, release, placement, drops, claims, flips), and the book-keeping of a completed
//! move (its drop window, the turn, repetitions).

use super::*;

impl Game {
    /// Brings the game up to `now`, then applies `player`'s action. Returns everything that
    /// happened, in order (what was due by `now` first), or why the action was refused. A
    /// refused action changes nothing, not even the game's instant: what was due by `now`
    /// is still reported by the next call.
    pub fn apply(
        &mut self,
        player: Player,
        action: Action,
        now: u64,
    ) -> Result<Vec<Event>, ActionError> {
        let mut events = Vec::new();
        self.apply_into(player, action, now, &mut events)?;
        Ok(events)
    }

    /// [`Game::apply`] into a caller's buffer. On an error, nothing is added to `events`.
    pub fn apply_into(
        &mut self,
        player: Player,
        action: Action,
        now: u64,
        events: &mut Vec<Event>,
    ) -> Result<(), ActionError> {
        if now < self.now_ms {
            return Err(ActionError::TimeWentBackwards {
                now,
                last: self.now_ms,
            });
        }
        // Judge the action as the game will be at `now`, without changing anything yet.
        if self.next_deadline().is_some_and(|t| t <= now) {
            // Something is due first: judge on a copy brought up to `now` (rare on a
            // server, which advances at every deadline).
            let mut ahead = self.clone();
            ahead.advance_into(now, &mut Vec::new());
            ahead.check(player, action)?;
        } else {
            let last = self.now_ms;
            self.now_ms = now;
            if let Err(error) = self.check(player, action) {
                self.now_ms = last;
                return Err(error);
            }
        }
        self.advance_into(now, events);
        let compensating = self.compensating(player, now);
        self.perform(player, action, events);
        // Anything the action made due at this very instant (an hourglass flipped with a
        // full top dies at once), then passes.
        self.settle(events);
        self.credit_action(player, action, &compensating, events);
        self.advance_into(now, events);
        Ok(())
    }

    /// Charges `player` the compensation his action used: the deadlines judging him that
    /// had nominally passed and that the action did away with. A completed move earns a
    /// gain.
    fn credit_action(
        &mut self,
        player: Player,
        action: Action,
        compensating: &[(u64, Due)],
        events: &mut Vec<Event>,
    ) {
        let now = self.now_ms;
        let pending = if compensating.is_empty() {
            Vec::new()
        } else {
            self.compensating(player, now)
        };
        let needed = compensating
            .iter()
            .filter(|d| !pending.contains(d))
            .map(|&(t, _)| now + 1 - t)
            .max();
        let credit = &mut self.credit[player.index()];
        if let Some(needed) = needed {
            let comp_ms = credit.charge(needed);
            if let Some(&(ran_out, _)) = compensating.iter().find(|d| d.1 == Due::Clock) {
                // The clock was charged the whole turn (down to zero): what is left is what
                // the compensation bought beyond its nominal end.
                self.clock_ms[player.index()] += (ran_out + comp_ms).saturating_sub(now);
            }
            events.push(Event::LagCompensated {
                at: now,
                player,
                comp_ms,
            });
        }
        if matches!(
            action,
            Action::Move { .. } | Action::Release { .. } | Action::Place { .. }
        ) {
            self.credit[player.index()].gain();
        }
    }

    /// Carries out a checked action.
    fn perform(&mut self, player: Player, action: Action, events: &mut Vec<Event>) {
        let now = self.now_ms;
        match action {
            Action::Start { from } => self.start(player, from, events),
            Action::Release { to } => self.release(player, to, events),
            Action::Move { from, to, drop } => {
                self.start(player, from, events);
                // A flip that leaves an empty top kills the hourglass in hand at once.
                self.advance_into(now, events);
                if self.held.is_some_and(|h| h.player == player) {
                    self.release(player, to, events);
                    if drop && self.check(player, Action::Drop).is_ok() {
                        self.drop_ring(player, to, DropKind::Regular, events);
                    }
                }
            }
            Action::Place { glass, to, drop } => {
                self.close_windows_for_start();
                if !self.is_playing() {
                    return;
                }
                let state = &mut self.glasses[glass.index()];
                state.square = Some(to);
                if self.settings.level.timed() {
                    state.started = true;
                    state.sand = Sand {
                        top_ms: self.settings.hourglass_ms,
                        since_ms: now,
                    };
                }
                let sand = state.sand;
                self.occupant[to.index()] = Some(glass);
                events.push(Event::Placed {
                    at: now,
                    player,
                    glass,
                    to,
                    sand,
                });
                self.complete_move(player, glass, to, false, events);
                if drop && self.check(player, Action::Drop).is_ok() {
                    self.drop_ring(player, to, DropKind::Regular, events);
                }
            }
            Action::Drop => {
                let square = self.windows[player.index()].expect("checked").square;
                self.drop_ring(player, square, DropKind::Regular, events);
            }
            Action::Claim => {
                let mover = player.other();
                let square = self.windows[mover.index()].expect("checked").square;
                self.drop_ring(player, square, DropKind::Claim, events);
                self.close_window(mover);
            }
            Action::PenaltyDrop { at } => self.drop_ring(player, at, DropKind::Penalty, events),
            Action::Flip => {
                let sand = Sand {
                    top_ms: self.settings.neutral_ms,
                    since_ms: now,
                };
                self.neutral = Neutral {
                    sand,
                    target: Some((self.turn, self.turn_no)),
                };
                events.push(Event::NeutralFlipped {
                    at: now,
                    by: player,
                    target: self.turn,
                    sand,
                });
            }
            Action::Resign => {
                self.finish_outright(player.other(), EndReason::Resigned { player }, events);
            }
        }
    }

    fn start(&mut self, player: Player, from: Square, events: &mut Vec<Event>) {
        let now = self.now_ms;
        self.close_windows_for_start();
        if !self.is_playing() {
            // The move that completed with that window repeated a position a third time.
            return;
        }
        let glass = self.occupant(from).expect("checked");
        let state = &mut self.glasses[glass.index()];
        if self.settings.level.timed() {
            // Flip: the sand that had run down is now on top.
            let top = self.settings.hourglass_ms - state.remaining(now);
            state.sand = Sand {
                top_ms: top,
                since_ms: now,
            };
            state.started = true;
        }
        let sand = state.sand;
        self.held = Some(Held {
            player,
            glass,
            from,
            since_ms: now,
            late_until_ms: None,
        });
        events.push(Event::MoveStarted {
            at: now,
            player,
            glass,
            from,
            sand,
        });
    }

    fn release(&mut self, player: Player, to: Square, events: &mut Vec<Event>) {
        let now = self.now_ms;
        let late = self.late.is_some_and(|h| h.player == player);
        let held = if late {
            self.late.take()
        } else {
            self.held.take()
        }
        .expect("checked");
        let glass = held.glass;
        self.occupant[held.from.index()] = None;
        self.occupant[to.index()] = Some(glass);
        self.glasses[glass.index()].square = Some(to);
        events.push(Event::MoveReleased {
            at: now,
            player,
            glass,
            from: held.from,
            to,
            late,
        });
        if self.is_full(to) {
            // Only reachable with `full_socket = lose`: checked otherwise.
            self.moves_made[player.index()] += 1;
            self.finish_outright(player.other(), EndReason::FullSocket { player }, events);
            return;
        }
        self.complete_move(player, glass, to, late, events);
    }

    /// Book-keeping shared by a release and a placement: counts the move, opens the drop
    /// window and hands over the turn.
    fn complete_move(
        &mut self,
        player: Player,
        glass: Glass,
        to: Square,
        late: bool,
        events: &mut Vec<Event>,
    ) {
        let now = self.now_ms;
        let i = player.index();
        if self.opening_applies(player) {
            self.opening_used[i] |= glass.bit();
        }
        self.moves_made[i] += 1;
        self.lapsed[i] = 0;
        let penalty = std::mem::take(&mut self.penalty_owed[i]) && self.holders[i] > 0;
        if !late {
            if let Some(clock) = self.settings.game_clock {
                self.clock_ms[i] = self.clock_ms[i].saturating_sub(now - self.turn_started_ms)
                    + clock.increment_ms;
                self.turn_started_ms = now;
            }
            self.begin_turn(player.other(), events);
            if !self.is_playing() {
                return;
            }
        }
        let opponent_holding = self.holds(player.other()).is_some();
        self.windows[i] = Some(Window {
            mover: player,
            square: to,
            opened_ms: now,
            drop_open: true,
            penalty_open: penalty,
            dropped: false,
            claim_allowed: !opponent_holding,
            comp_ms: self.credit[i].available(),
        });
        self.tidy_window(player);
    }

    fn drop_ring(
        &mut self,
        player: Player,
        square: Square,
        kind: DropKind,
        events: &mut Vec<Event>,
    ) {
        let i = player.index();
        self.rings[square.index()] += 1;
        self.holders[i] -= 1;
        // Ring counts only fall, so no earlier position can occur again.
        self.positions.clear();
        events.push(Event::RingDropped {
            at: self.now_ms,
            player,
            square,
            kind,
            left: self.holders[i],
        });
        if let Some(w) = self.windows[i].as_mut() {
            match kind {
                DropKind::Regular => {
                    w.drop_open = false;
                    w.dropped = true;
                }
                DropKind::Penalty => w.penalty_open = false,
                DropKind::Claim => {}
            }
        }
        self.tidy_window(Player::Black);
        self.tidy_window(Player::Red);
    }

    /// Closes a window once nothing more can be dropped on it, ever.
    pub(super) fn tidy_window(&mut self, mover: Player) {
        let Some(w) = self.windows[mover.index()] else {
            return;
        };
        let claimant = mover.other();
        let mover_can = (w.drop_open && !self.is_full(w.square) || w.penalty_open)
            && self.holders[mover.index()] > 0;
        let claim_can = !w.dropped
            && w.claim_allowed
            && !self.is_full(w.square)
            && self.holders[claimant.index()] > 0;
        if !mover_can && !claim_can {
            self.close_window(mover);
        }
    }

    /// A move is complete once its window has closed: count its position.
    pub(super) fn close_window(&mut self, mover: Player) {
        if self.windows[mover.index()].take().is_some() {
            self.count_position(mover.other());
        }
    }

    /// A move start closes every window open before it.
    fn close_windows_for_start(&mut self) {
        for p in Player::BOTH {
            self.close_window(p);
            if !self.is_playing() {
                return;
            }
        }
    }

    /// Counts the current position; a third occurrence ends the game.
    pub(super) fn count_position(&mut self, next: Player) {
        let mut key = [0u8; SQUARES + 3];
        for (i, k) in key.iter_mut().take(SQUARES).enumerate() {
            let occ = self.occupant[i].map_or(0, |g| 1 + g.owner().index() as u8);
            *k = occ << 4 | self.rings[i];
        }
        key[SQUARES] = self.holders[0];
        key[SQUARES + 1] = self.holders[1];
        key[SQUARES + 2] = next as u8;
        let count = match self.positions.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.positions.push((key, 1));
                1
            }
        };
        if count >= 3 {
            self.finish_on_rings(EndReason::Repetition);
        }
    }
}
