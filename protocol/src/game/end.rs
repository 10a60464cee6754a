//! How a game ends: the outcome and why, the last-living-hourglass tiebreak, and the
//! engine's endings (outright or on rings, the server's abandonment and abort).

use super::*;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EndReason {
    /// Neither player can move any more.
    NoMoves,
    /// The same position occurred for the third time.
    Repetition,
    /// `player` released an hourglass onto a full socket.
    FullSocket {
        player: Player,
    },
    Resigned {
        player: Player,
    },
    /// `player`'s game clock ran out.
    Clock {
        player: Player,
    },
    /// `player` left and did not come back within the grace.
    Abandoned {
        player: Player,
    },
    /// `player` let his turns lapse [`IDLE_TURNS`] times in a row while the other played.
    Idle {
        player: Player,
    },
    /// Both players let their turns lapse: decided as at the end, on rings.
    BothIdle,
    /// Both players were absent past their reconnection graces: decided as at the end,
    /// on rings.
    BothAbsent,
}

impl EndReason {
    pub fn describe(&self) -> String {
        match self {
            EndReason::NoMoves => "neither player can move".into(),
            EndReason::Repetition => "the same position occurred three times".into(),
            EndReason::FullSocket { player } => format!("{player} moved onto a full socket"),
            EndReason::Resigned { player } => format!("{player} resigned"),
            EndReason::Clock { player } => format!("{player}'s game clock ran out"),
            EndReason::Abandoned { player } => format!("{player} abandoned the game"),
            EndReason::Idle { player } => {
                format!("{player} let {IDLE_TURNS} turns in a row lapse")
            }
            EndReason::BothIdle => "both players let their turns lapse".into(),
            EndReason::BothAbsent => "both players left the game".into(),
        }
    }
}

/// How the winner was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Fewer rings left.
    Rings,
    /// Equal rings, decided by the last living hourglass.
    Tiebreak,
    /// Equal rings (Level 1), or a tiebreak in which every group was mixed.
    Draw,
    /// The game was lost outright (full socket, resignation, clock, abandonment).
    Forfeit,
}

/// One hourglass in the tiebreak line-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineupEntry {
    pub glass: Glass,
    pub player: Player,
    /// Projected death instant for a running hourglass, actual for a dead one.
    pub dies_at_ms: u64,
    pub running: bool,
}

/// The last-living-hourglass tiebreak (rules page, section 6).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tiebreak {
    /// Latest death first.
    pub lineup: Vec<LineupEntry>,
    /// Index in `lineup` of the first entry of the group that decided, if any did.
    pub deciding_index: Option<usize>,
}

/// Rings left in each holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rings {
    pub red: u8,
    pub black: u8,
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Player>,
    pub reason: EndReason,
    pub decision: Decision,
    pub rings: Rings,
    pub tiebreak: Option<Tiebreak>,
    pub ended_at_ms: u64,
}

impl Outcome {
    /// One line in words: "Red wins: neither player can move; 20 rings left to 22".
    pub fn describe(&self) -> String {
        let head = match self.winner {
            Some(p) => format!("{p} wins"),
            None => "Draw".to_string(),
        };
        let how = match self.decision {
            Decision::Rings => format!(
                "fewer rings left ({} to {})",
                self.rings.red.min(self.rings.black),
                self.rings.red.max(self.rings.black)
            ),
            Decision::Tiebreak => {
                format!("equal rings ({}), last living hourglass", self.rings.red)
            }
            Decision::Draw => format!("equal rings ({})", self.rings.red),
            Decision::Forfeit => {
                format!("rings {} red, {} black", self.rings.red, self.rings.black)
            }
        };
        format!("{head}: {}; {how}", self.reason.describe())
    }
}

/// Why a game was called off without a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AbortReason {
    /// `player` did not make his first move in time.
    NoFirstMove { player: Player },
    /// The server shut down before the game ended.
    Shutdown,
    /// Both players were absent past their graces before both had made a first move.
    BothAbsent,
}

impl AbortReason {
    /// Why, in words (records, the replay page and the terminal say it alike).
    pub fn describe(&self) -> String {
        match self {
            AbortReason::NoFirstMove { player } => {
                format!("{player} did not make his first move in time")
            }
            AbortReason::Shutdown => "the server shut down".into(),
            AbortReason::BothAbsent => "both players left before both had made a first move".into(),
        }
    }
}

/// Where a game stands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    Playing,
    Finished { outcome: Outcome },
    Aborted { reason: AbortReason, at_ms: u64 },
}

impl Game {
    /// Charges the player on turn for the time since his turn (or the last charge) began.
    pub(super) fn charge_clock(&mut self) {
        if self.settings.game_clock.is_some() && !self.ending {
            let i = self.turn.index();
            self.clock_ms[i] = self.clock_ms[i].saturating_sub(self.now_ms - self.turn_started_ms);
            self.turn_started_ms = self.now_ms;
        }
    }

    pub(super) fn stop(&mut self, status: Status) {
        self.charge_clock();
        self.status = status;
        self.windows = [None; 2];
        self.held = None;
        self.late = None;
        self.neutral.target = None;
    }

    /// Reports the end of the game, once.
    pub(super) fn announce_end(&mut self, events: &mut Vec<Event>) {
        if self.end_announced {
            return;
        }
        match &self.status {
            Status::Playing => return,
            Status::Finished { outcome } => events.push(Event::GameEnded {
                at: self.now_ms,
                outcome: outcome.clone(),
            }),
            Status::Aborted { reason, .. } => events.push(Event::GameAborted {
                at: self.now_ms,
                reason: *reason,
            }),
        }
        self.end_announced = true;
    }

    pub(super) fn finish_outright(
        &mut self,
        winner: Player,
        reason: EndReason,
        events: &mut Vec<Event>,
    ) {
        let outcome = Outcome {
            winner: Some(winner),
            reason,
            decision: Decision::Forfeit,
            rings: self.rings(),
            tiebreak: None,
            ended_at_ms: self.now_ms,
        };
        self.stop(Status::Finished { outcome });
        self.announce_end(events);
    }

    pub(super) fn finish_on_rings(&mut self, reason: EndReason) {
        let outcome = self.outcome_on_rings(reason);
        self.stop(Status::Finished { outcome });
    }

    fn outcome_on_rings(&self, reason: EndReason) -> Outcome {
        let rings = self.rings();
        let (winner, decision, tiebreak) = match rings.red.cmp(&rings.black) {
            std::cmp::Ordering::Less => (Some(Player::Red), Decision::Rings, None),
            std::cmp::Ordering::Greater => (Some(Player::Black), Decision::Rings, None),
            std::cmp::Ordering::Equal if !self.settings.level.timed() => {
                (None, Decision::Draw, None)
            }
            std::cmp::Ordering::Equal => {
                let tiebreak = self.tiebreak();
                let winner = tiebreak.deciding_index.map(|i| tiebreak.lineup[i].player);
                let decision = if winner.is_some() {
                    Decision::Tiebreak
                } else {
                    Decision::Draw
                };
                (winner, decision, Some(tiebreak))
            }
        };
        Outcome {
            winner,
            reason,
            decision,
            rings,
            tiebreak,
            ended_at_ms: self.now_ms,
        }
    }

    /// The last-living-hourglass line-up at the current instant (rules page, section 6).
    pub fn tiebreak(&self) -> Tiebreak {
        let now = self.now_ms;
        let running: Vec<LineupEntry> = self
            .glasses
            .iter()
            .filter(|g| g.remaining(now) > 0)
            .map(|g| LineupEntry {
                glass: g.glass,
                player: g.glass.owner(),
                dies_at_ms: g.sand.empties_at(),
                running: true,
            })
            .collect();
        let mut lineup = if running.is_empty() {
            self.glasses
                .iter()
                .filter_map(|g| {
                    g.dead_at_ms.map(|t| LineupEntry {
                        glass: g.glass,
                        player: g.glass.owner(),
                        dies_at_ms: t,
                        running: false,
                    })
                })
                .collect()
        } else {
            running
        };
        lineup.sort_by(|a, b| b.dies_at_ms.cmp(&a.dies_at_ms).then(a.glass.cmp(&b.glass)));
        let mut deciding_index = None;
        let mut start = 0;
        while start < lineup.len() {
            let t = lineup[start].dies_at_ms;
            let end = lineup[start..]
                .iter()
                .position(|e| e.dies_at_ms != t)
                .map_or(lineup.len(), |n| start + n);
            let first = lineup[start].player;
            if lineup[start..end].iter().all(|e| e.player == first) {
                deciding_index = Some(start);
                break;
            }
            start = end;
        }
        Tiebreak {
            lineup,
            deciding_index,
        }
    }

    /// The server's ending for a player who left and did not come back within the grace.
    pub fn abandon(&mut self, player: Player, now: u64) -> Vec<Event> {
        let mut events = self.advance(now);
        if self.is_playing() {
            self.finish_outright(player.other(), EndReason::Abandoned { player }, &mut events);
        }
        events
    }

    /// Calls the game off without a result (server shutdown).
    pub fn abort(&mut self, reason: AbortReason, now: u64) -> Vec<Event> {
        let mut events = self.advance(now);
        if self.is_playing() {
            self.stop(Status::Aborted {
                reason,
                at_ms: self.now_ms,
            });
            self.announce_end(&mut events);
        }
        events
    }
}
