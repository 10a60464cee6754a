//! One game, without I/O: the engine, the journal of entries, the numbered events, the
//! players' presence and graces, their lags. Commands and the time come in as calls;
//! what happened comes out as [`Out`]s, drained by whoever runs the room (the game task
//! in [`crate::game`], or a test in memory). It never reads a clock, sleeps, sends or
//! stores: the task does that with what comes out, in order.

use protocol::game::{AbortReason, Action, Game, Player};
use protocol::record::{entry_ms, Entry, EntryKind};
use protocol::view::GameView;
use protocol::wire::{Change, GameEvent, GameId, SandTable, Seq};
use protocol::Event;

use crate::history::History;

/// The least change of a seat's round trip that is published (see [`Room::lag_measured`]);
/// a node sends a remote seat's lag to its game's owner by the same rule.
pub const LAG_STEP_MS: u64 = 10;

/// A round trip worth telling after `last` (the value last told, if any): the first, or
/// one that moved by [`LAG_STEP_MS`] or more. The one rule of the room's `lag` entries, a
/// connection's own `lag` report, and what a node tells its games, here or elsewhere.
pub fn lag_moved(last: Option<u64>, rtt_ms: u64) -> bool {
    last.is_none_or(|l| l.abs_diff(rtt_ms) >= LAG_STEP_MS)
}

/// What a room did, in the order it did it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// A new entry of the game, at this index of its record: to journal.
    Entry { idx: u64, entry: Entry },
    /// The game is over (the entry that ended it came just before): to store, before the
    /// events that follow are announced.
    Ended,
    /// A numbered change: to everyone following the game (already in the history).
    Event(GameEvent),
    /// Seat `player` is away with his grace until `grace_until_ms`, or (`None`) here, as
    /// told (at most once a second): to keep with the game, so that a restart or a
    /// takeover goes on from it ([`Room::restore_away`]).
    Absence {
        player: Player,
        grace_until_ms: Option<u64>,
    },
}

/// At most one presence event per seat in this much game time: a change within it is
/// told when it ends (the seat's state then), or before any other event of the room. A
/// player cycling `leave` and `join` over his connections made an event each time, a
/// hundred and fifty a second, and the flood filled his opponent's outbound queue until
/// the opponent was cut off and lost (the grace itself counts from the real departure).
pub const PRESENCE_INTERVAL_MS: u64 = 1_000;

/// How long a player may be away, and how long his opponent then has to claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Graces {
    pub reconnect_ms: u64,
    pub claim_window_ms: u64,
}

/// A seat whose player is away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Away {
    /// The seq of the presence event that told of it: orders departures in the same ms.
    pub left_seq: Seq,
    pub until_ms: u64,
    pub expired: bool,
}

/// Why a claim of abandonment was refused: error code and message.
pub type Refused = (&'static str, String);

pub struct Room {
    pub id: GameId,
    game: Game,
    seq: Seq,
    /// Every event so far (bounded by `Config::history`), for clients that come back.
    history: History,
    /// Every entry so far: the record.
    entries: Vec<Entry>,
    away: [Option<Away>; 2],
    /// Each seat's last published round trip.
    lag_ms: [Option<u64>; 2],
    graces: Graces,
    /// Each seat's presence as last told: connected, the grace's end if away, and when
    /// (`None`: never told; a seat starts connected).
    told: [Told; 2],
    /// A seat's presence changed within [`PRESENCE_INTERVAL_MS`] of the last told: when
    /// it is told.
    presence_due: [Option<u64>; 2],
    /// The current turn (its player and start) and the event that began it: an action
    /// sent before it is stale ([`Room::act`]).
    turn: (Player, u64),
    turn_seq: Seq,
    /// The end was reported ([`Out::Ended`]).
    ended: bool,
    out: Vec<Out>,
}

/// A seat's presence as its last presence event told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Told {
    grace_until_ms: Option<u64>,
    at: Option<u64>,
}

impl Room {
    /// A room for `game`, whose record so far is `entries` (empty for a new game); its
    /// events are numbered after `seq`, and `history_cap` of them are kept.
    pub fn new(
        id: GameId,
        game: Game,
        entries: Vec<Entry>,
        seq: Seq,
        history_cap: usize,
        graces: Graces,
    ) -> Room {
        let turn = (game.turn(), game.turn_started_ms());
        Room {
            id,
            game,
            seq,
            history: History::after(seq, history_cap),
            entries,
            away: [None; 2],
            lag_ms: [None; 2],
            graces,
            told: [Told {
                grace_until_ms: None,
                at: None,
            }; 2],
            presence_due: [None; 2],
            turn,
            // A game taken up again: its turn began no later than its last event.
            turn_seq: seq,
            ended: false,
            out: Vec::new(),
        }
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn seq(&self) -> Seq {
        self.seq
    }

    pub fn history(&self) -> &History {
        &self.history
    }

    pub fn away(&self, p: Player) -> Option<Away> {
        self.away[p.index()]
    }

    pub fn lag(&self, p: Player) -> Option<u64> {
        self.lag_ms[p.index()]
    }

    /// What the room did since the last call, appended to `outs` (an empty buffer is
    /// swapped in, so a caller that hands the same buffer back allocates nothing).
    pub fn take_outs(&mut self, outs: &mut Vec<Out>) {
        if outs.is_empty() {
            std::mem::swap(outs, &mut self.out);
        } else {
            outs.append(&mut self.out);
        }
    }

    /// The view and the sand a snapshot shows.
    pub fn view(&self) -> (GameView, SandTable) {
        (
            GameView::of(&self.game, &self.entries),
            SandTable::of(&self.game),
        )
    }

    /// The next game instant at which something happens by itself: the engine's next
    /// deadline, a grace running out, or a claim window closing.
    pub fn next_deadline(&self) -> Option<u64> {
        let engine = self.game.next_deadline();
        let grace = Player::BOTH
            .into_iter()
            .filter_map(|p| self.away_deadline(p))
            .min();
        let told = self.presence_due.iter().flatten().min().copied();
        let told = told.filter(|_| self.game.is_playing());
        [engine, grace, told].into_iter().flatten().min()
    }

    /// When `p`'s absence next matters: his grace running out, then (if his opponent is
    /// here) the end of the opponent's window to claim the win.
    fn away_deadline(&self, p: Player) -> Option<u64> {
        // Once the game is over, absences no longer matter.
        if !self.game.is_playing() {
            return None;
        }
        let a = self.away[p.index()]?;
        if !a.expired {
            return Some(a.until_ms);
        }
        let opponent_here = self.away[p.other().index()].is_none();
        opponent_here.then(|| a.until_ms + self.graces.claim_window_ms)
    }

    /// A seat's measured lag when it first sits down, before any event: recorded as an
    /// entry so that replicas judge with it too.
    pub fn set_initial_lag(&mut self, player: Player, lag_ms: u64, now: u64) {
        // The engine judges with what the entry keeps, as a replica will.
        let lag_ms = entry_ms(lag_ms);
        self.lag_ms[player.index()] = Some(lag_ms.into());
        self.game.set_lag(player, lag_ms.into());
        self.publish_play(0, EntryKind::Lag { player, lag_ms }, Vec::new(), now);
    }

    /// Brings the engine up to `at`, publishing what happened on its own.
    pub fn catch_up(&mut self, at: u64, now: u64) {
        let events = self.game.advance(at);
        if !events.is_empty() {
            self.publish_play(at, EntryKind::Advance, events, now);
        }
    }

    /// The deadlines due at `now`: the engine advanced exactly to its deadline, graces
    /// run out in the order they run, unclaimed wins given, a game both players left
    /// decided.
    pub fn on_time(&mut self, now: u64) {
        for p in Player::BOTH {
            if self.presence_due[p.index()].is_some_and(|t| t <= now) {
                self.tell_presence(p, now);
            }
        }
        if let Some(t) = self.game.next_deadline().filter(|&t| t <= now) {
            // Exactly to the deadline: an action read just after it is not pushed later.
            self.catch_up(t, now);
        }
        let mut order = Player::BOTH;
        order.sort_by_key(|p| {
            self.away[p.index()].map_or((u64::MAX, 0), |a| (a.until_ms, a.left_seq))
        });
        for p in order {
            if let Some(a) = self.away[p.index()].as_mut() {
                if !a.expired && a.until_ms <= now && self.game.is_playing() {
                    a.expired = true;
                    // Its instant is the player's `grace_until_ms`, which every client
                    // knows from his departure.
                    self.publish(Change::GraceExpired { player: p }, now);
                }
            }
        }
        // The player who stayed did not claim in time: the server ends the game for him,
        // as the claim would have.
        for p in order {
            let unclaimed = self.away[p.index()].is_some_and(|a| a.expired)
                && self.away_deadline(p).is_some_and(|t| t <= now);
            if unclaimed && self.game.is_playing() {
                let events = self.game.abandon(p, now);
                self.publish_play(now, EntryKind::Abandon { player: p }, events, now);
            }
        }
        // Both players gone past their graces: nobody is left to claim, so the game is
        // decided as at the end (or aborted if it had not begun): no game waits forever.
        if let [Some(r), Some(b)] = self.away {
            if r.expired && b.expired && self.game.is_playing() {
                let events = self.game.end_both_absent(now);
                self.publish_play(now, EntryKind::BothAbsent, events, now);
            }
        }
    }

    /// `seat` acts at game time `at` (when its frame was read; `now` is later or equal).
    /// `seen`: the last event the client had when it sent it (its `seq`, if it gave one):
    /// an action that begins something in a turn (a move, a start, a placement, a flip, a
    /// claim) sent before the current turn began is stale and not played.
    pub fn act(
        &mut self,
        seat: Player,
        action: Action,
        at: u64,
        now: u64,
        seen: Option<Seq>,
    ) -> Result<(), protocol::game::ActionError> {
        self.catch_up(at, now);
        let begins = matches!(
            action,
            Action::Move { .. }
                | Action::Start { .. }
                | Action::Place { .. }
                | Action::Flip
                | Action::Claim
        );
        if let Some(seen) = seen.filter(|&seen| begins && seen < self.turn_seq) {
            return Err(protocol::game::ActionError::Stale {
                seen,
                turn_seq: self.turn_seq,
            });
        }
        let events = self.game.apply(seat, action, at)?;
        let comp_ms = events
            .iter()
            .filter_map(|e| match e {
                Event::LagCompensated { comp_ms, .. } => Some(*comp_ms),
                _ => None,
            })
            .sum::<u64>();
        let kind = EntryKind::Act {
            player: seat,
            action,
            lag_ms: Some(entry_ms(self.game.credit(seat).lag_ms)),
            comp_ms: Some(entry_ms(comp_ms)),
        };
        self.publish_play(at, kind, events, now);
        Ok(())
    }

    /// `seat` claims the win from his opponent, who has been away past his grace.
    pub fn claim_abandonment(&mut self, seat: Player, now: u64) -> Result<(), Refused> {
        if !self.game.is_playing() {
            return Err(("game_over", "the game is over".into()));
        }
        let other = seat.other();
        match self.away[other.index()] {
            Some(a) if a.expired => {
                let events = self.game.abandon(other, now);
                self.publish_play(now, EntryKind::Abandon { player: other }, events, now);
                Ok(())
            }
            Some(a) => Err((
                "grace_running",
                format!(
                    "{other} may still come back: {:.1} s left (his grace ends at {} ms of game time)",
                    a.until_ms.saturating_sub(now) as f64 / 1000.0,
                    a.until_ms
                ),
            )),
            None => Err((
                "opponent_connected",
                format!("{other} is connected: nothing to claim"),
            )),
        }
    }

    /// `p`'s seat has a connection again.
    pub fn arrive(&mut self, p: Player, now: u64) {
        if self.away[p.index()].take().is_some() && self.game.is_playing() {
            self.presence_changed(p, now);
        }
    }

    /// A game rebuilt after a restart or a takeover whose seat `p` was away with his grace
    /// until `until_ms` (past if it ran out): he stays away with that grace, not a fresh
    /// one. Its end, the opponent's claim and claim window go on from it: what fell due
    /// meanwhile happens at the next [`Room::on_time`] (an abandonment once the opponent
    /// is here).
    pub fn restore_away(&mut self, p: Player, until_ms: u64, now: u64) {
        if self.game.is_playing() {
            self.away[p.index()] = Some(Away {
                left_seq: self.seq + 1,
                until_ms,
                expired: false,
            });
            self.presence_changed(p, now);
        }
    }

    /// `p`'s seat has no connection left: his grace starts.
    pub fn leave(&mut self, p: Player, now: u64) {
        if self.away[p.index()].is_none() && self.game.is_playing() {
            self.away[p.index()] = Some(Away {
                left_seq: self.seq + 1,
                until_ms: now + self.graces.reconnect_ms,
                expired: false,
            });
            self.presence_changed(p, now);
        }
    }

    /// Tells `p`'s new presence now, or when [`PRESENCE_INTERVAL_MS`] after the last
    /// told has passed.
    fn presence_changed(&mut self, p: Player, now: u64) {
        match self.told[p.index()].at {
            Some(at) if now < at + PRESENCE_INTERVAL_MS => {
                self.presence_due[p.index()] = Some(at + PRESENCE_INTERVAL_MS);
            }
            _ => self.tell_presence(p, now),
        }
    }

    /// Publishes `p`'s presence as it is, unless that is what was told last.
    fn tell_presence(&mut self, p: Player, now: u64) {
        self.presence_due[p.index()] = None;
        let grace_until_ms = self.away[p.index()].map(|a| a.until_ms);
        if self.told[p.index()].grace_until_ms == grace_until_ms {
            return;
        }
        self.told[p.index()] = Told {
            grace_until_ms,
            at: Some(now),
        };
        // Kept with the game as told (so at most once a second, like the event).
        self.out.push(Out::Absence {
            player: p,
            grace_until_ms,
        });
        self.publish(
            Change::Presence {
                player: p,
                connected: grace_until_ms.is_none(),
                grace_until_ms,
            },
            now,
        );
        if let Some(a) = self.away[p.index()].as_mut() {
            a.left_seq = self.seq;
        }
    }

    /// Presence changes still waiting are told before any other event, so that every
    /// event follows the presence it happened in.
    fn tell_waiting_presence(&mut self, now: u64) {
        for p in Player::BOTH {
            if self.presence_due[p.index()].is_some() {
                self.tell_presence(p, now);
            }
        }
    }

    /// Nobody is away any more (the game is over: absences no longer matter).
    pub fn forget_absences(&mut self) {
        self.away = [None; 2];
        self.presence_due = [None; 2];
    }

    /// A seat's round trip, published when it is new or moved by [`LAG_STEP_MS`] or more, so that
    /// the opponent and the watchers can show it without an event at every ping; the
    /// engine judges with it from `at` on (a recorded entry, so that replicas and
    /// replays move the same deadlines). Published once, as a `lag` change at its own
    /// instant; what time brought before it goes out first, as an `advance`.
    pub fn lag_measured(&mut self, player: Player, rtt_ms: u64, at: u64, now: u64) {
        // The engine judges with what the entry keeps, as a replica will.
        let rtt_ms = entry_ms(rtt_ms);
        let last = &mut self.lag_ms[player.index()];
        if !lag_moved(*last, rtt_ms.into()) || !self.game.is_playing() {
            return;
        }
        *last = Some(rtt_ms.into());
        let events = self.game.advance(at);
        if !events.is_empty() {
            self.publish_play(at, EntryKind::Advance, events, now);
        }
        if self.game.is_playing() {
            self.game.set_lag(player, rtt_ms.into());
            let kind = EntryKind::Lag {
                player,
                lag_ms: rtt_ms,
            };
            self.publish_play(at, kind, Vec::new(), at);
        }
    }

    /// Ends a game that is still being played because the server stops for good.
    pub fn abort_for_shutdown(&mut self, now: u64) {
        if self.game.is_playing() {
            let events = self.game.abort(AbortReason::Shutdown, now);
            let kind = EntryKind::Abort {
                reason: AbortReason::Shutdown,
            };
            self.publish_play(now, kind, events, now);
        }
    }

    fn publish_play(&mut self, at_ms: u64, kind: EntryKind, events: Vec<Event>, now: u64) {
        self.tell_waiting_presence(now);
        let entry = Entry { at_ms, kind };
        self.out.push(Out::Entry {
            idx: self.entries.len() as u64,
            entry: entry.clone(),
        });
        self.entries.push(entry.clone());
        if !self.game.is_playing() && !self.ended {
            self.ended = true;
            self.out.push(Out::Ended);
        }
        let now_ms = now.max(self.game.now());
        self.publish(Change::of_entry(entry, events, now_ms), now_ms);
    }

    /// Numbers a change and keeps it for reconnects.
    fn publish(&mut self, change: Change, now: u64) {
        if !matches!(change, Change::Presence { .. }) {
            self.tell_waiting_presence(now);
        }
        self.seq += 1;
        let turn = (self.game.turn(), self.game.turn_started_ms());
        if turn != self.turn {
            self.turn = turn;
            self.turn_seq = self.seq;
        }
        let now_ms = now.max(self.game.now());
        // A `play` or `lag` change is always the latest entry (see `publish_play`).
        let entry = self.entries.len().saturating_sub(1);
        self.history.push(self.seq, now_ms, &change, entry);
        self.out.push(Out::Event(GameEvent {
            game: self.id,
            seq: self.seq,
            now_ms,
            change,
        }));
    }
}

#[cfg(test)]
mod lag_tests {
    use super::lag_moved;

    #[test]
    fn a_lag_is_told_the_first_time_and_after_a_step_of_10_ms_either_way() {
        assert!(lag_moved(None, 0));
        assert!(!lag_moved(Some(50), 50));
        assert!(!lag_moved(Some(50), 59));
        assert!(!lag_moved(Some(50), 41));
        assert!(lag_moved(Some(50), 60));
        assert!(lag_moved(Some(50), 40));
    }
}
