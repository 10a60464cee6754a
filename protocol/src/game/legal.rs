//! What may be done: judging an action against the rules, refusing it with the exact
//! reason, and listing every legal action.

use super::*;

impl Game {
    /// Refuses `action` with the precise reason, or accepts it. Reads only.
    pub fn check(&self, player: Player, action: Action) -> Result<(), ActionError> {
        if !self.is_playing() {
            return Err(ActionError::GameOver);
        }
        match action {
            Action::Start { from } => self.check_start(player, from).map(|_| ()),
            Action::Release { to } => {
                let held = self.holds(player).ok_or(ActionError::NotHolding)?;
                self.check_release(held.from, to)
            }
            Action::Move { from, to, .. } => {
                self.check_start(player, from)?;
                self.check_release(from, to)
            }
            Action::Place { glass, to, .. } => self.check_place(player, glass, to),
            Action::Drop => {
                let w = self.windows[player.index()]
                    .filter(|w| w.drop_open)
                    .ok_or(ActionError::NoDrop)?;
                self.check_ring(player, w.square)
            }
            Action::Claim => {
                let w = self.windows[player.other().index()].ok_or(ActionError::NoClaim)?;
                // Only the player now on turn claims (rules page, section 4).
                if self.ending {
                    return Err(ActionError::Ending);
                }
                if self.turn != player {
                    return Err(ActionError::NotYourTurn { player });
                }
                if w.dropped
                    || !w.claim_allowed
                    || self.now_ms < self.claim_opens_at(&w)
                    || self.holds(player).is_some()
                {
                    return Err(ActionError::NoClaim);
                }
                self.check_ring(player, w.square)
            }
            Action::PenaltyDrop { at } => {
                self.windows[player.index()]
                    .filter(|w| w.penalty_open)
                    .ok_or(ActionError::NoPenalty)?;
                self.check_ring(player, at)
            }
            Action::Flip => {
                if self.settings.level != Level::Three {
                    return Err(ActionError::NoNeutralTimer);
                }
                if self.ending {
                    return Err(ActionError::Ending);
                }
                if self.turn == player {
                    return Err(ActionError::FlipOnOwnTurn);
                }
                let left_ms = self.neutral.sand.remaining(self.now_ms);
                if left_ms > 0 {
                    return Err(ActionError::NeutralRunning {
                        until_ms: self.neutral.sand.empties_at(),
                        left_ms,
                    });
                }
                // Empty, but its expiry on the player on turn still waits out his lag
                // compensation: the turn is his only until it says whether his answer came
                // in time. A flip now would cancel an expiry that has happened (it did).
                if let Some((target, turn_no)) = self.neutral.target {
                    if target == self.turn && turn_no == self.turn_no {
                        let judged_at = self.due_at(self.neutral.sand.empties_at(), Some(target));
                        if judged_at > self.now_ms {
                            return Err(ActionError::NeutralJudging {
                                player: target,
                                until_ms: judged_at,
                                left_ms: judged_at - self.now_ms,
                            });
                        }
                    }
                }
                Ok(())
            }
            Action::Resign => Ok(()),
        }
    }

    fn check_turn(&self, player: Player) -> Result<(), ActionError> {
        if self.ending {
            return Err(ActionError::Ending);
        }
        if self.turn != player {
            return Err(ActionError::NotYourTurn { player });
        }
        if let Some(held) = self.holds(player) {
            return Err(ActionError::AlreadyHolding { glass: held.glass });
        }
        Ok(())
    }

    fn check_start(&self, player: Player, from: Square) -> Result<Glass, ActionError> {
        self.check_turn(player)?;
        if self.has_unplaced(player) {
            return Err(ActionError::MustPlace);
        }
        let glass = self
            .occupant(from)
            .ok_or(ActionError::NoHourglass { square: from })?;
        if glass.owner() != player {
            return Err(ActionError::NotYourHourglass { square: from });
        }
        if self.glasses[glass.index()].is_dead() {
            return Err(ActionError::HourglassDead { square: from });
        }
        let reject = self.settings.full_socket == FullSocket::Reject;
        let open = |n: &Square| self.occupant(*n).is_none() && !(reject && self.is_full(*n));
        if !from.neighbours().iter().any(open) {
            return Err(ActionError::Blocked { square: from });
        }
        if self.opening_applies(player) {
            let used = self.opening_used[player.index()];
            if used & glass.bit() != 0
                && player
                    .glasses()
                    .iter()
                    .any(|&g| used & g.bit() == 0 && self.glass_can_move(g))
            {
                return Err(ActionError::OpeningRule { glass });
            }
        }
        Ok(glass)
    }

    pub(super) fn opening_applies(&self, player: Player) -> bool {
        self.settings.level.timed()
            && self.settings.setup == Setup::Standard
            && self.moves_made[player.index()] < 3
    }

    fn check_release(&self, from: Square, to: Square) -> Result<(), ActionError> {
        if !from.touches(to) {
            return Err(ActionError::NotAdjacent { from, to });
        }
        if self.occupant(to).is_some() {
            return Err(ActionError::Occupied { square: to });
        }
        if self.settings.full_socket == FullSocket::Reject && self.is_full(to) {
            return Err(ActionError::SocketFull { square: to });
        }
        Ok(())
    }

    fn check_place(&self, player: Player, glass: Glass, to: Square) -> Result<(), ActionError> {
        if self.settings.setup != Setup::Placement {
            return Err(ActionError::NothingToPlace);
        }
        self.check_turn(player)?;
        if glass.owner() != player {
            return Err(ActionError::NotYourGlass { glass, player });
        }
        if self.glasses[glass.index()].square.is_some() {
            return Err(ActionError::AlreadyPlaced { glass });
        }
        if self.occupant(to).is_some() {
            return Err(ActionError::Occupied { square: to });
        }
        if self.is_full(to) {
            return Err(ActionError::SocketFull { square: to });
        }
        Ok(())
    }

    fn check_ring(&self, player: Player, square: Square) -> Result<(), ActionError> {
        if self.is_full(square) {
            return Err(ActionError::SocketFull { square });
        }
        if self.holders[player.index()] == 0 {
            return Err(ActionError::NoRings);
        }
        Ok(())
    }

    /// Every action `player` may take at the game's current instant. [`Game::apply`] at
    /// this instant accepts exactly these (for `Move` and `Place`, with and without drop).
    pub fn legal_actions(&self, player: Player) -> Vec<Action> {
        let mut out = Vec::new();
        self.legal_actions_into(player, &mut out);
        out
    }

    /// [`Game::legal_actions`] into a caller's buffer (cleared first).
    pub fn legal_actions_into(&self, player: Player, out: &mut Vec<Action>) {
        out.clear();
        if !self.is_playing() {
            return;
        }
        out.push(Action::Resign);
        if self.check(player, Action::Flip).is_ok() {
            out.push(Action::Flip);
        }
        if self.check_turn(player).is_ok() {
            if self.has_unplaced(player) {
                for glass in player.glasses() {
                    if self.glasses[glass.index()].square.is_some() {
                        continue;
                    }
                    for to in Square::ALL {
                        if self.free(to) {
                            out.push(Action::Place {
                                glass,
                                to,
                                drop: true,
                            });
                            out.push(Action::Place {
                                glass,
                                to,
                                drop: false,
                            });
                        }
                    }
                }
            } else {
                for glass in player.glasses() {
                    let Some(from) = self.glasses[glass.index()].square else {
                        continue;
                    };
                    if self.check_start(player, from).is_err() {
                        continue;
                    }
                    out.push(Action::Start { from });
                    for &to in from.neighbours() {
                        if self.check_release(from, to).is_ok() {
                            out.push(Action::Move {
                                from,
                                to,
                                drop: true,
                            });
                            out.push(Action::Move {
                                from,
                                to,
                                drop: false,
                            });
                        }
                    }
                }
            }
        }
        if let Some(held) = self.holds(player) {
            for &to in held.from.neighbours() {
                if self.check_release(held.from, to).is_ok() {
                    out.push(Action::Release { to });
                }
            }
        }
        if self.check(player, Action::Drop).is_ok() {
            out.push(Action::Drop);
        }
        if self.check(player, Action::Claim).is_ok() {
            out.push(Action::Claim);
        }
        if self.windows[player.index()].is_some_and(|w| w.penalty_open) {
            for at in Square::ALL {
                if self.check_ring(player, at).is_ok() {
                    out.push(Action::PenaltyDrop { at });
                }
            }
        }
    }
}
