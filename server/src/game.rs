//! One task per live game: it owns the engine, the seats, the subscribers and the event
//! history. It sleeps until the engine's next instant (or a command), so deaths, expiries
//! and graces are announced at their instant. It never waits on a socket: every frame is
//! serialised once and handed to each subscriber's bounded queue with `try_send`.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use protocol::game::{AbortReason, Action, Game, Player, Status};
use protocol::record::Entry;
use protocol::settings::Settings;
use protocol::wire::{
    GameEvent, GameId, GameSummary, LobbyMessage, PlayerRef, SeatInfo, Seq, ServerMessage, Snapshot,
};
use tokio::time::{sleep_until, Duration, Instant};

use crate::alarm::Alarm;
use crate::clock::unix_ms;
use crate::codec::{encode, game_error as error};
use crate::peer::{Delivery, Peer, PlayerRec, Seeker, CLOSE_FELL_BEHIND, CLOSE_SLOW};
use crate::room::{Graces, Out, Room};
use crate::rooms::{GameCmd, GameHandle, Rooms};
use crate::store::{GameEnd, GameStart, LiveGame, Write};

/// Queue slots left free after the missed events of a resumption, for what follows them:
/// with less room the client gets a snapshot instead (one frame).
const RESUME_ROOM: usize = 16;

struct Sub {
    peer: Peer,
    seat: Option<Player>,
    /// The proxy of a client of another node that follows the game's stream: what is for
    /// everyone reaches it through the game's one publication to the other nodes
    /// ([`crate::rooms::Relay`]), never through its peer.
    remote: bool,
}

struct GameTask {
    id: GameId,
    rooms: Arc<Rooms>,
    /// The game itself, without I/O: this task feeds it commands and time and carries
    /// out what comes out.
    room: Room,
    /// What the room did, being carried out (kept to reuse its buffer).
    outs: Vec<Out>,
    start: Instant,
    seats: [Arc<PlayerRec>; 2],
    subs: Vec<Sub>,
    summary: Arc<Mutex<GameSummary>>,
    /// Once the game is over: when it stops being listed.
    linger_until: Option<Instant>,
    /// Who played what, for the store.
    start_info: GameStart,
    /// Until the store says the ended game is on disk: nothing goes out (frames wait in
    /// `held`) and commands wait in `deferred`, so that no one learns of the end of a game
    /// that a crash could still lose.
    /// Its output: the database refused the end as a stale owner's.
    durable: Option<Pin<Box<dyn Future<Output = bool> + Send>>>,
    held: Vec<(Utf8Bytes, Option<Seq>)>,
    deferred: VecDeque<GameCmd>,
    /// Shutting down: stop once the end is stored and announced.
    stopping: bool,
    /// Held while the game is being played (shutdown drains these).
    playing: Option<crate::rooms::PlayingGuard>,
    /// Rematch offers by seat, with the connection that made each.
    rematch: [Option<Peer>; 2],
    /// The rematch started.
    rematched: Option<GameId>,
    /// Wakes the task at its next deadline.
    alarm: Option<Alarm>,
    /// Watcher counts: the last one sent, when, and when the next is due (changes within
    /// `watchers_interval` of the last are coalesced).
    watchers_told: u32,
    watchers_sent: Option<Instant>,
    watchers_due: Option<Instant>,
    /// Rated: its end changes both players' ratings in `control`.
    rated: bool,
    control: Option<protocol::rating::TimeControl>,
    tournament: Option<crate::events::TournamentGame>,
    /// The game-over event, published once the end is stored and announced.
    over: Option<crate::events::GameOver>,
    /// While this node may run the game (see `tenure`).
    tenure: Arc<crate::tenure::Tenure>,
    /// Taken up from its journal (a restart, or with several nodes a takeover): its frames
    /// go out to the other nodes whether or not one of them follows it yet. Clients of
    /// other nodes followed it at its former owner and are not known here: the stream is
    /// how their nodes learn that it goes on (they see its numbers jump and join them to it
    /// again, see `cluster::fanout`).
    publish_all: bool,
}

/// How a game is played beyond its settings.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// What the players asked for (`None`: the default, see `ratings::is_rated`).
    pub rated: Option<bool>,
    /// The code a private game was joined by: not listed; its players follow it, and a
    /// watcher only with the code.
    pub code: Option<String>,
    /// A tournament game: no rematch.
    pub tournament: Option<crate::events::TournamentGame>,
}

/// Waits for a deadline: on the alarm thread if the server has one, else on tokio's timer.
async fn wait_until(alarm: &mut Option<Alarm>, at: Instant) {
    match alarm {
        Some(alarm) => alarm.until(at.into_std()).await,
        None => sleep_until(at).await,
    }
}

fn player_ref(p: &PlayerRec) -> PlayerRef {
    PlayerRef {
        player_id: p.id.clone(),
        name: p.name.clone(),
        rating: None,
    }
}

/// A player with his rating in `control` (for the lists).
fn rated_ref(p: &PlayerRec, control: Option<protocol::rating::TimeControl>) -> PlayerRef {
    PlayerRef {
        rating: crate::ratings::shown(p, control),
        ..player_ref(p)
    }
}

impl GameTask {
    /// The game's task. Not an `async fn`: the future holds the task's state once, where an
    /// `async fn` keeps room for its `self` argument besides (a game's state is ~2 KB).
    #[allow(clippy::manual_async_fn)]
    fn run(mut self, mut rx: crate::outbox::Receiver<GameCmd>) -> impl Future<Output = ()> + Send {
        async move {
            // Made once: a new `cancelled()` at every turn of the loop registers with the
            // token's `Notify` again each time, shared by every game (and `waiter` looks
            // at a flag instead of the token's lock when nothing changed).
            let shutdown = self.rooms.stop_games.waiter();
            tokio::pin!(shutdown);
            // Set when an overdue deadline changed nothing (it should not happen): then wait
            // a little instead of spinning.
            let mut stalled = false;
            let mut commands_open = true;
            let tenure = self.tenure.clone();
            loop {
                // Nothing is done, nothing announced, unless this node can prove it still
                // holds the game (a cluster's lease: see `tenure`).
                if self.room.game().is_playing() && !tenure.holds() {
                    self.suspend_lost();
                    break;
                }
                // The end is being stored: hold everything back until it is on disk.
                if let Some(durable) = self.durable.as_mut() {
                    tokio::select! {
                        biased;
                        refused = durable => {
                            if refused {
                                // Refused as a stale owner's: another node runs the game.
                                self.durable = None;
                                self.suspend_lost();
                                break;
                            }
                            self.release();
                            // The one place a game's end is published (ratings, tournaments):
                            // once it is stored and its players were told.
                            if let Some(over) = self.over.take() {
                                self.rooms.events.publish(over).await;
                            }
                        }
                        cmd = rx.recv(), if commands_open => match cmd {
                            Some(cmd) => self.deferred.push_back(cmd),
                            None => commands_open = false,
                        },
                    }
                    continue;
                }
                if self.stopping || !commands_open {
                    break;
                }
                let wake = self.next_wake();
                // An overdue deadline goes before the commands queued behind it, so a busy game
                // still announces everything at (or right after) its instant; but an action read
                // before that instant is judged first, at the instant it was read.
                if let Some(w) = wake.filter(|&w| !stalled && w <= Instant::now()) {
                    if let Some(cmd) = self.read_before(&mut rx, w) {
                        self.handle(cmd);
                        continue;
                    }
                    if self.linger_until.is_some_and(|t| t <= w) {
                        // Nothing to announce: the game closes on a worker.
                        if crate::alarm::direct::on_alarm_thread() {
                            crate::alarm::direct::yield_to_workers().await;
                            continue;
                        }
                        break;
                    }
                    self.rooms
                        .metrics
                        .timer_lateness
                        .observe(Instant::now() - w);
                    self.on_time();
                    stalled = self.next_wake() == wake;
                    if stalled {
                        tracing::warn!(game = %self.id, "a deadline passed without effect");
                    }
                    continue;
                }
                // The alarm thread ran this task for its deadline, which is done: the rest
                // is the workers' (it would hold up other games' deadlines).
                if !self.deferred.is_empty() && crate::alarm::direct::on_alarm_thread() {
                    crate::alarm::direct::yield_to_workers().await;
                    continue;
                }
                if let Some(cmd) = self.deferred.pop_front() {
                    self.handle(cmd);
                    continue;
                }
                let wake = if stalled {
                    wake.map(|_| Instant::now() + Duration::from_millis(5))
                } else {
                    wake
                };
                stalled = false;
                // Only while playing: a game over (lingering) has nothing left to fence, and a
                // deadline already past would wake the loop again at once.
                let tenure_due = tenure.deadline().filter(|_| self.room.game().is_playing());
                let tenure_ends = tenure_due.is_some();
                tokio::select! {
                    biased;
                    _ = &mut shutdown, if !self.stopping => {
                        let now = self.now_ms();
                        if self.room.game().is_playing() && self.rooms.config.resume_games {
                            // Suspended, not ended: its journal is in the database, and the
                            // next start takes it up again (`restore`).
                            tracing::info!(game = %self.id, at_ms = now, "game suspended for a restart");
                        } else {
                            self.room.abort_for_shutdown(now);
                            self.flush();
                        }
                        self.stopping = true;
                    }
                    cmd = rx.recv() => match cmd {
                        // Through the loop's top: a deadline that came meanwhile is weighed
                        // against the instant the command was read.
                        Some(cmd) => self.deferred.push_back(cmd),
                        None => break,
                    },
                    _ = wait_until(&mut self.alarm, wake.unwrap_or_else(Instant::now)), if wake.is_some() => {}
                    _ = sleep_until(self.watchers_due.unwrap_or_else(Instant::now)), if self.watchers_due.is_some() => {
                        self.send_watchers();
                    }
                    // In a cluster: wake when the proven hold runs out or is lost, to tell the
                    // clients at once (the loop's top checks it).
                    _ = tenure.lost(), if tenure_ends => {}
                    _ = sleep_until(tenure_due.unwrap_or_else(Instant::now)), if tenure_due.is_some() => {}
                }
            }
            self.rooms.remove_game(self.id);
            for sub in &self.subs {
                sub.peer.seated.remove(self.id);
            }
            tracing::info!(game = %self.id, "game closed");
        }
    }

    /// The next queued command if it must be handled before a deadline at `due`: an
    /// action read before `due`, or anything queued ahead of one. Commands looked at are
    /// kept in `deferred`, in order; at most the queue's capacity is ever held there.
    fn read_before(
        &mut self,
        rx: &mut crate::outbox::Receiver<GameCmd>,
        due: Instant,
    ) -> Option<GameCmd> {
        let read_before = |c: &GameCmd| match c {
            GameCmd::Act { received, .. } | GameCmd::Lag { received, .. } => *received < due,
            _ => false,
        };
        if !self.room.game().is_playing() {
            return self.deferred.pop_front();
        }
        // Taken out of turn: what is queued ahead of it was read later (one connection's
        // frames are read in order, so its own order is kept).
        if let Some(i) = self.deferred.iter().position(read_before) {
            return self.deferred.remove(i);
        }
        // Bounded: at most a queue's worth of commands wait here.
        while self.deferred.len() < self.rooms.config.game_queue {
            let Ok(cmd) = rx.try_recv() else { break };
            if read_before(&cmd) {
                return Some(cmd);
            }
            self.deferred.push_back(cmd);
        }
        None
    }

    /// This node no longer holds the game (another node took it over): it stops here
    /// without storing or announcing anything more, and its clients are told to join it
    /// again, which reaches the new owner.
    fn suspend_lost(&mut self) {
        tracing::warn!(game = %self.id, "no longer held here (another node runs it): suspended");
        self.held.clear();
        for sub in self.subs.drain(..) {
            sub.peer.seated.remove(self.id);
            sub.peer.send_msg(&error(
                "game_moved",
                "another server now runs this game: join (or watch) it again",
                self.id,
            ));
        }
    }

    /// The end is on disk (or the store did not answer in time): announce it.
    fn release(&mut self) {
        self.durable = None;
        self.playing = None;
        for (text, seq) in std::mem::take(&mut self.held) {
            self.fan_out(&text, seq);
        }
        self.refresh_summary();
        self.room.forget_absences();
        self.linger_until = Some(Instant::now() + self.rooms.config.linger);
    }

    /// Who did not show up when `player` let his first move's bound run out: he, and his
    /// opponent too when that one made no move either (Black, while Red had not moved:
    /// he could not move before Red) and is not at the game either, never having come or
    /// gone since. A tournament scores both as losing (`0-0 forfeit`, docs/TOURNAMENTS.md).
    fn no_shows(&self, player: Player) -> Vec<Player> {
        let other = player.other();
        let moved = self.room.game().moves_made(other) > 0;
        // A seat given to a player offline at the start has a peer with no connection
        // behind it (`Rooms::empty_seat_peer`), dropped only at the first frame sent to it.
        let here = self
            .subs
            .iter()
            .any(|s| s.seat == Some(other) && !s.peer.is_gone());
        if moved || here {
            vec![player]
        } else {
            vec![player, other]
        }
    }

    /// Hands the ended game to the store; its announcement waits for the answer.
    fn store_end(&mut self) {
        let game = self.room.game();
        let ended_ms = self.start_info.started_ms + game.now();
        let end = GameEnd::of(
            self.start_info.clone(),
            game,
            self.room.entries().to_vec(),
            ended_ms,
            None,
        );
        let over = crate::events::GameOver {
            game: self.id,
            players: self.seats.clone(),
            settings: game.settings().clone(),
            control: self.control,
            rated: self.rated,
            ending: match game.status() {
                Status::Finished { outcome } => crate::events::Ending::Finished {
                    winner: outcome.winner,
                },
                Status::Aborted { reason, .. } => crate::events::Ending::Aborted {
                    no_show: match reason {
                        AbortReason::NoFirstMove { player } => self.no_shows(*player),
                        AbortReason::BothAbsent => Player::BOTH.to_vec(),
                        AbortReason::Shutdown => Vec::new(),
                    },
                },
                Status::Playing => crate::events::Ending::Aborted {
                    no_show: Vec::new(),
                },
            },
            reason: end.reason.clone(),
            move_count: end.move_count,
            ended_ms,
            tournament: self.tournament.clone(),
        };
        let (ack, stored) = tokio::sync::oneshot::channel();
        self.rooms
            .store
            .submit(Write::GameEnded(Box::new(end), Some(ack)));
        let timeout = self.rooms.config.store_ack_timeout;
        let id = self.id;
        let (store, tenure) = (self.rooms.store.clone(), self.tenure.clone());
        self.durable = Some(Box::pin(async move {
            match tokio::time::timeout(timeout, stored).await {
                Ok(Ok(true)) => tracing::debug!(game = %id, "game stored"),
                Ok(Ok(false)) if store.was_fenced(id) => {
                    tracing::warn!(game = %id, "the end was refused: another node owns the game");
                    tenure.lose();
                    return true;
                }
                Ok(_) => tracing::error!(game = %id, "the store failed to keep a game"),
                Err(_) => {
                    tracing::error!(game = %id, "the store is late: announcing the end anyway")
                }
            }
            false
        }));
        self.over = Some(over);
    }

    /// Game time now, never before the engine's own instant.
    fn now_ms(&self) -> u64 {
        (self.start.elapsed().as_millis() as u64).max(self.room.game().now())
    }

    /// The game instant a frame was read, unless the game has already moved past it.
    fn received_ms(&self, received: Instant) -> u64 {
        (received.saturating_duration_since(self.start).as_millis() as u64)
            .max(self.room.game().now())
    }

    fn instant_of(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn next_wake(&self) -> Option<Instant> {
        if let Some(t) = self.linger_until {
            return Some(t);
        }
        self.room.next_deadline().map(|ms| self.instant_of(ms))
    }

    /// A deadline came: the room does what fell due.
    fn on_time(&mut self) {
        let now = self.now_ms();
        self.room.on_time(now);
        self.flush();
    }

    fn handle(&mut self, cmd: GameCmd) {
        match cmd {
            GameCmd::Subscribe {
                peer,
                player,
                after_seq,
                remote,
            } => self.subscribe(peer, player, after_seq, remote),
            GameCmd::Unsubscribe { conn, reply } => {
                match self.subs.iter().position(|s| s.peer.conn == conn) {
                    Some(i) => {
                        let sub = self.subs.swap_remove(i);
                        sub.peer.seated.remove(self.id);
                        if let Some(peer) = reply {
                            peer.send_msg(&ServerMessage::Left { game: self.id });
                        }
                        self.after_detach(sub.seat);
                    }
                    None => {
                        if let Some(peer) = reply {
                            peer.send_msg(&acts::not_following(self.id));
                        }
                    }
                }
            }
            GameCmd::Act {
                peer,
                player,
                action,
                received,
                seen,
            } => self.act(peer, &player, action, received, seen),
            GameCmd::ClaimAbandonment { peer, player } => self.claim_abandonment(peer, &player),
            GameCmd::Lag {
                conn,
                rtt_ms,
                received,
            } => self.lag(conn, rtt_ms, received),
            GameCmd::Rematch {
                peer,
                player,
                accept,
            } => self.rematch(peer, &player, accept),
        }
    }

    fn seat_of(&self, player: &PlayerRec) -> Option<Player> {
        // The same record as the seat's, mostly (one per player online): then his id,
        // a cold allocation of its own, is not read at every action.
        Player::BOTH.into_iter().find(|p| {
            let seat = &*self.seats[p.index()];
            std::ptr::eq(seat, player) || seat.id == player.id
        })
    }

    /// Carries out what the room did, in order: entries to the journal, the end to the
    /// store (which holds back what follows until it is on disk), events to everyone.
    fn flush(&mut self) {
        let mut outs = std::mem::take(&mut self.outs);
        self.room.take_outs(&mut outs);
        let mut played = false;
        for out in outs.drain(..) {
            match out {
                Out::Entry { idx, entry } => {
                    played = true;
                    self.rooms.store.submit(Write::Entry {
                        game: self.id,
                        epoch: self.start_info.owner_epoch,
                        idx,
                        entry,
                    });
                }
                Out::Ended => {
                    tracing::info!(game = %self.id, "game over: storing it");
                    self.store_end();
                }
                Out::Event(event) => self.send_event(event),
                Out::Absence {
                    player,
                    grace_until_ms,
                } => {
                    self.rooms.store.submit(Write::Absence {
                        game: self.id,
                        epoch: self.start_info.owner_epoch,
                        player,
                        grace_until_ms,
                    });
                }
            }
        }
        self.outs = outs;
        if played && self.durable.is_none() {
            self.count_moves();
        }
    }

    /// The listed move count, after moves: the listed state stays "playing" until the
    /// end is announced (`release` writes both).
    fn count_moves(&self) {
        self.summary.lock().expect("summary lock").move_count = self.room.game().move_count();
    }

    fn refresh_summary(&mut self) {
        let state = match self.room.game().status() {
            Status::Playing => "playing",
            Status::Finished { .. } => "finished",
            Status::Aborted { .. } => "aborted",
        };
        let mut summary = self.summary.lock().expect("summary lock");
        summary.move_count = self.room.game().move_count();
        if summary.state != state {
            summary.state = state.into();
        }
    }

    /// Sends a numbered change to everyone (held back while the end is being stored).
    fn send_event(&mut self, event: GameEvent) {
        let began = Instant::now();
        let seq = Some(event.seq);
        let text = encode(&ServerMessage::Event(Box::new(event)));
        if self.durable.is_some() {
            self.held.push((text, seq));
        } else {
            self.fan_out(&text, seq);
        }
        let m = &self.rooms.metrics;
        m.events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        m.fanout.observe(began.elapsed());
    }
}

mod acts;
mod rematch;
mod start;
mod subs;
#[cfg(test)]
mod tests;

pub use start::{restore, spawn};
