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
use protocol::record::{Entry, EntryKind};
use protocol::settings::Settings;
use protocol::view::GameView;
use protocol::wire::{
    Change, GameEvent, GameId, GameSummary, LobbyMessage, PlayerRef, SandTable, SeatInfo, Seq,
    ServerMessage, Snapshot,
};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Duration, Instant};

use crate::alarm::Alarm;
use crate::connection::unix_ms;
use crate::history::History;
use crate::hub::{
    encode, Delivery, GameHandle, Hub, Peer, PlayerRec, Seeker, CLOSE_FELL_BEHIND, CLOSE_SLOW,
};
use crate::store::{GameEnd, GameStart, LiveGame, Write};

/// Queue slots left free after the missed events of a resumption, for what follows them:
/// with less room the client gets a snapshot instead (one frame).
const RESUME_ROOM: usize = 16;

/// What a connection asks of a game.
pub enum GameCmd {
    /// Receive the game's events: as a player if `player` has a seat, else as a watcher.
    Subscribe {
        peer: Peer,
        player: Option<Arc<PlayerRec>>,
        after_seq: Option<Seq>,
    },
    Unsubscribe {
        conn: u64,
        /// Answer `left` (or `not_subscribed`) to this peer.
        reply: Option<Peer>,
    },
    Act {
        peer: Peer,
        player: Arc<PlayerRec>,
        action: Action,
        /// When the server read the frame: the action happens at this instant.
        received: Instant,
    },
    ClaimAbandonment {
        peer: Peer,
        player: Arc<PlayerRec>,
    },
    /// A connection measured its round trip: published for its seat, if it has one.
    Lag {
        conn: u64,
        rtt_ms: u64,
        /// When it was measured.
        received: Instant,
    },
    /// Offers or accepts (`accept`), or declines, a rematch once the game is over.
    Rematch {
        peer: Peer,
        player: Arc<PlayerRec>,
        accept: bool,
    },
}

struct Sub {
    peer: Peer,
    seat: Option<Player>,
}

#[derive(Clone, Copy)]
struct Away {
    /// The seq of the presence event that told of it: orders departures in the same ms.
    left_seq: Seq,
    until_ms: u64,
    expired: bool,
}

struct GameTask {
    id: GameId,
    hub: Arc<Hub>,
    game: Game,
    start: Instant,
    seats: [Arc<PlayerRec>; 2],
    subs: Vec<Sub>,
    seq: Seq,
    /// Every event so far (bounded by `Config::history`), for clients that come back.
    history: History,
    away: [Option<Away>; 2],
    /// Each seat's last published round trip.
    lag_ms: [Option<u64>; 2],
    summary: Arc<Mutex<GameSummary>>,
    /// Once the game is over: when it stops being listed.
    linger_until: Option<Instant>,
    /// Who played what, for the store.
    start_info: GameStart,
    /// Every entry so far: the record.
    entries: Vec<Entry>,
    /// The end was handed to the store.
    stored: bool,
    /// Until the store says the ended game is on disk: nothing goes out (frames wait in
    /// `held`) and commands wait in `deferred`, so that no one learns of the end of a game
    /// that a crash could still lose.
    durable: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    held: Vec<Utf8Bytes>,
    deferred: VecDeque<GameCmd>,
    /// Shutting down: stop once the end is stored and announced.
    stopping: bool,
    /// Held while the game is being played (shutdown drains these).
    playing: Option<crate::hub::PlayingGuard>,
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

/// Creates a game for two seekers (`[red, black]`), registers it and starts its task.
/// Both seekers are subscribed as players and get a snapshot.
pub fn spawn(
    hub: Arc<Hub>,
    id: GameId,
    settings: Settings,
    seekers: [Seeker; 2],
    options: Options,
) {
    let [red, black] = seekers;
    let seats = [red.player.clone(), black.player.clone()];
    let control = protocol::rating::TimeControl::of(&settings);
    let rated = crate::ratings::is_rated(
        options.rated,
        control,
        [seats[0].as_ref(), seats[1].as_ref()],
    );
    let start_info = GameStart {
        id,
        red: player_ref(&seats[0]),
        black: player_ref(&seats[1]),
        settings: settings.clone(),
        started_ms: unix_ms(),
        code: options.code.clone(),
        rated,
    };
    hub.store.submit(Write::GameStarted(start_info.clone()));
    hub.metrics
        .games_started
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let game = Game::new(settings);
    let (mut task, rx) = GameTask::open(
        &hub,
        start_info,
        game,
        Vec::new(),
        seats,
        Instant::now(),
        options.tournament,
    );
    let seekers = [(Player::Red, red), (Player::Black, black)];
    // Both seats' lags, when already measured, go into both snapshots and into the engine
    // from the first instant (recorded entries, as every later change is).
    for (seat, seeker) in &seekers {
        if let Some(lag_ms) = seeker.peer.seated.lag() {
            task.lag_ms[seat.index()] = Some(lag_ms);
            task.game.set_lag(*seat, lag_ms);
            let player = *seat;
            task.publish_play(0, EntryKind::Lag { player, lag_ms }, Vec::new());
        }
        seeker.peer.seated.add(id);
    }
    for (seat, seeker) in seekers {
        task.subs.push(Sub {
            peer: seeker.peer.clone(),
            seat: Some(seat),
        });
        task.send_snapshot(&seeker.peer, Some(seat));
    }
    tracing::info!(game = %id, red = %task.seats[0].id, black = %task.seats[1].id, "game started");
    task.launch(rx);
}

/// Takes up a game the server was playing when it stopped, from its journal: the game
/// time went on while the server was down (its clocks are wall-clock instants from the
/// game's start), so what fell due meanwhile happens at once, at its own instant. Both
/// players are away from now, each with a fresh reconnection grace; the computer's seat
/// is taken again by its in-process driver. The game is handed back if it cannot be
/// resumed (already over, or its start cannot be placed on this machine's clock).
/// `seats` are the players the game's row names (`[red, black]`).
pub fn restore(
    hub: &Arc<Hub>,
    live: LiveGame,
    seats: [Arc<PlayerRec>; 2],
) -> Result<GameId, Box<LiveGame>> {
    let elapsed = Duration::from_millis(unix_ms().saturating_sub(live.start.started_ms));
    let start = match Instant::now().checked_sub(elapsed) {
        Some(start) if live.game.is_playing() => start,
        _ => return Err(Box::new(live)),
    };
    let LiveGame {
        start: start_info,
        game,
        entries,
        tournament,
    } = live;
    let id = start_info.id;
    let (mut task, rx) = GameTask::open(hub, start_info, game, entries, seats, start, tournament);
    // Sequence numbers of this run start above any the last run gave (at most 1,000 a
    // millisecond of its life): a client that comes back with an `after_seq` of the last
    // run gets a snapshot, never events numbered for another run.
    task.seq = unix_ms().saturating_mul(1_000);
    task.history = History::after(task.seq, hub.config.history);
    let now = task.now_ms();
    task.catch_up(now);
    for p in Player::BOTH {
        let player = task.seats[p.index()].clone();
        if player.bot {
            let peer = crate::bot::seat_peer(hub, &player);
            peer.seated.add(id);
            task.subs.push(Sub {
                peer: peer.clone(),
                seat: Some(p),
            });
            task.send_snapshot(&peer, Some(p));
        } else {
            task.after_detach(Some(p));
        }
    }
    tracing::info!(game = %id, at_ms = now, "game resumed after a restart");
    task.launch(rx);
    Ok(id)
}

impl GameTask {
    /// The task of a game and its listing in the hub; nobody is subscribed yet.
    fn open(
        hub: &Arc<Hub>,
        start_info: GameStart,
        game: Game,
        entries: Vec<Entry>,
        seats: [Arc<PlayerRec>; 2],
        start: Instant,
        tournament: Option<crate::events::TournamentGame>,
    ) -> (GameTask, mpsc::Receiver<GameCmd>) {
        let id = start_info.id;
        let settings = game.settings().clone();
        let control = protocol::rating::TimeControl::of(&settings);
        let rated = start_info.rated;
        let summary = Arc::new(Mutex::new(GameSummary {
            game: id,
            level: settings.level,
            settings,
            red: rated_ref(&seats[0], control),
            black: rated_ref(&seats[1], control),
            move_count: game.move_count(),
            watchers: 0,
            state: "playing".into(),
            rated,
            tc: control,
        }));
        let (tx, rx) = mpsc::channel(hub.config.game_queue);
        hub.games.insert(
            id,
            GameHandle {
                tx,
                summary: summary.clone(),
                seats: seats.clone(),
                start,
                code: start_info.code.clone(),
            },
        );
        let task = GameTask {
            id,
            hub: hub.clone(),
            game,
            start,
            seats,
            subs: Vec::new(),
            seq: 0,
            history: History::new(hub.config.history),
            away: [None; 2],
            lag_ms: [None; 2],
            summary,
            linger_until: None,
            start_info,
            entries,
            stored: false,
            durable: None,
            held: Vec::new(),
            deferred: VecDeque::new(),
            stopping: false,
            rematch: [None, None],
            rematched: None,
            playing: Some(hub.playing_guard()),
            alarm: hub.alarms.as_ref().map(|a| a.alarm()),
            watchers_told: 0,
            watchers_sent: None,
            watchers_due: None,
            rated,
            control,
            tournament,
            over: None,
        };
        (task, rx)
    }

    fn launch(self, rx: mpsc::Receiver<GameCmd>) {
        let alive = self.hub.game_alive_token();
        tokio::spawn(async move {
            self.run(rx).await;
            drop(alive);
        });
    }
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

fn error(code: &str, message: impl Into<String>, game: GameId) -> ServerMessage {
    ServerMessage::Error {
        code: code.into(),
        message: message.into(),
        game: Some(game),
        id: None,
        server_ms: None,
        at_ms: None,
    }
}

impl GameTask {
    async fn run(mut self, mut rx: mpsc::Receiver<GameCmd>) {
        let mut shutdown = self.hub.stop_games.clone();
        // Set when an overdue deadline changed nothing (it should not happen): then wait
        // a little instead of spinning.
        let mut stalled = false;
        let mut commands_open = true;
        loop {
            // The end is being stored: hold everything back until it is on disk.
            if let Some(durable) = self.durable.as_mut() {
                tokio::select! {
                    biased;
                    _ = durable => {
                        self.release();
                        // The one place a game's end is published (ratings, tournaments):
                        // once it is stored and its players were told.
                        if let Some(over) = self.over.take() {
                            self.hub.events.publish(over).await;
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
                    break;
                }
                self.hub.metrics.timer_lateness.observe(Instant::now() - w);
                self.on_time();
                stalled = self.next_wake() == wake;
                if stalled {
                    tracing::warn!(game = %self.id, "a deadline passed without effect");
                }
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
            tokio::select! {
                biased;
                _ = shutdown.changed() => {
                    let now = self.now_ms();
                    if self.game.is_playing() && self.hub.config.resume_games {
                        // Suspended, not ended: its journal is in the database, and the
                        // next start takes it up again (`restore`).
                        tracing::info!(game = %self.id, at_ms = now, "game suspended for a restart");
                    } else if self.game.is_playing() {
                        let events = self.game.abort(AbortReason::Shutdown, now);
                        self.publish_play(now, EntryKind::Abort { reason: AbortReason::Shutdown }, events);
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
            }
        }
        self.hub.games.remove(&self.id);
        for sub in &self.subs {
            sub.peer.seated.remove(self.id);
        }
        tracing::info!(game = %self.id, "game closed");
    }

    /// The next queued command if it must be handled before a deadline at `due`: an
    /// action read before `due`, or anything queued ahead of one. Commands looked at are
    /// kept in `deferred`, in order; at most the queue's capacity is ever held there.
    fn read_before(&mut self, rx: &mut mpsc::Receiver<GameCmd>, due: Instant) -> Option<GameCmd> {
        let read_before = |c: &GameCmd| match c {
            GameCmd::Act { received, .. } | GameCmd::Lag { received, .. } => *received < due,
            _ => false,
        };
        if !self.game.is_playing() {
            return self.deferred.pop_front();
        }
        // Taken out of turn: what is queued ahead of it was read later (one connection's
        // frames are read in order, so its own order is kept).
        if let Some(i) = self.deferred.iter().position(read_before) {
            return self.deferred.remove(i);
        }
        // Bounded: at most a queue's worth of commands wait here.
        while self.deferred.len() < self.hub.config.game_queue {
            let Ok(cmd) = rx.try_recv() else { break };
            if read_before(&cmd) {
                return Some(cmd);
            }
            self.deferred.push_back(cmd);
        }
        None
    }

    /// The end is on disk (or the store did not answer in time): announce it.
    fn release(&mut self) {
        self.durable = None;
        self.playing = None;
        for text in std::mem::take(&mut self.held) {
            self.fan_out(&text);
        }
        self.refresh_summary();
        self.away = [None; 2];
        self.linger_until = Some(Instant::now() + self.hub.config.linger);
    }

    /// Hands the ended game to the store; its announcement waits for the answer.
    fn store_end(&mut self) {
        self.stored = true;
        let ended_ms = self.start_info.started_ms + self.game.now();
        let end = GameEnd::of(
            self.start_info.clone(),
            &self.game,
            self.entries.clone(),
            ended_ms,
            None,
        );
        let over = crate::events::GameOver {
            game: self.id,
            players: self.seats.clone(),
            settings: self.game.settings().clone(),
            control: self.control,
            rated: self.rated,
            ending: match self.game.status() {
                Status::Finished { outcome } => crate::events::Ending::Finished {
                    winner: outcome.winner,
                },
                Status::Aborted { reason, .. } => crate::events::Ending::Aborted {
                    no_show: match reason {
                        AbortReason::NoFirstMove { player } => vec![*player],
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
        self.hub
            .store
            .submit(Write::GameEnded(Box::new(end), Some(ack)));
        let timeout = self.hub.config.store_ack_timeout;
        let id = self.id;
        self.durable = Some(Box::pin(async move {
            match tokio::time::timeout(timeout, stored).await {
                Ok(Ok(true)) => tracing::debug!(game = %id, "game stored"),
                Ok(_) => tracing::error!(game = %id, "the store failed to keep a game"),
                Err(_) => {
                    tracing::error!(game = %id, "the store is late: announcing the end anyway")
                }
            }
        }));
        self.over = Some(over);
    }

    /// Game time now, never before the engine's own instant.
    fn now_ms(&self) -> u64 {
        (self.start.elapsed().as_millis() as u64).max(self.game.now())
    }

    /// The game instant a frame was read, unless the game has already moved past it.
    fn received_ms(&self, received: Instant) -> u64 {
        (received.saturating_duration_since(self.start).as_millis() as u64).max(self.game.now())
    }

    fn instant_of(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    fn next_wake(&self) -> Option<Instant> {
        if let Some(t) = self.linger_until {
            return Some(t);
        }
        let engine = self.game.next_deadline();
        let grace = Player::BOTH
            .into_iter()
            .filter_map(|p| self.away_deadline(p))
            .min();
        [engine, grace]
            .into_iter()
            .flatten()
            .min()
            .map(|ms| self.instant_of(ms))
    }

    /// When `p`'s absence next matters: his grace running out, then (if his opponent is
    /// here) the end of the opponent's window to claim the win.
    fn away_deadline(&self, p: Player) -> Option<u64> {
        let a = self.away[p.index()]?;
        if !a.expired {
            return Some(a.until_ms);
        }
        let opponent_here = self.away[p.other().index()].is_none();
        (opponent_here && self.game.is_playing())
            .then(|| a.until_ms + self.hub.config.claim_window.as_millis() as u64)
    }

    /// A deadline came: advance the engine to it exactly and run out graces.
    fn on_time(&mut self) {
        let now = self.now_ms();
        if let Some(t) = self.game.next_deadline().filter(|&t| t <= now) {
            // Exactly to the deadline: an action read just after it is not pushed later.
            self.catch_up(t);
        }
        // In the order the graces run out.
        let mut order = Player::BOTH;
        order.sort_by_key(|p| {
            self.away[p.index()].map_or((u64::MAX, 0), |a| (a.until_ms, a.left_seq))
        });
        for p in order {
            if let Some(a) = self.away[p.index()].as_mut() {
                if !a.expired && a.until_ms <= now && self.game.is_playing() {
                    a.expired = true;
                    self.publish(Change::GraceExpired { player: p });
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
                self.publish_play(now, EntryKind::Abandon { player: p }, events);
            }
        }
        // Both players gone past their graces: nobody is left to claim, so the game is
        // decided as at the end (or aborted if it had not begun): no game waits forever.
        if let [Some(r), Some(b)] = self.away {
            if r.expired && b.expired && self.game.is_playing() {
                let events = self.game.end_both_absent(now);
                self.publish_play(now, EntryKind::BothAbsent, events);
            }
        }
    }

    /// Brings the engine up to `now`, publishing what happened on its own.
    fn catch_up(&mut self, now: u64) {
        let events = self.game.advance(now);
        if !events.is_empty() {
            self.publish_play(now, EntryKind::Advance, events);
        }
    }

    fn handle(&mut self, cmd: GameCmd) {
        match cmd {
            GameCmd::Subscribe {
                peer,
                player,
                after_seq,
            } => self.subscribe(peer, player, after_seq),
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
                            peer.send_msg(&error(
                                "not_subscribed",
                                "you are not following this game",
                                self.id,
                            ));
                        }
                    }
                }
            }
            GameCmd::Act {
                peer,
                player,
                action,
                received,
            } => self.act(peer, &player, action, received),
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

    fn rematch(&mut self, peer: Peer, player: &PlayerRec, accept: bool) {
        let Some(seat) = self.seat_of(player) else {
            peer.send_msg(&error(
                "not_a_player",
                "only the players of a game may ask for a rematch",
                self.id,
            ));
            return;
        };
        if self.game.is_playing() {
            peer.send_msg(&error(
                "game_not_over",
                "a rematch is offered once the game is over",
                self.id,
            ));
            return;
        }
        if self.tournament.is_some() {
            peer.send_msg(&error(
                "tournament_game",
                "a tournament game has no rematch: the next round is paired by the tournament",
                self.id,
            ));
            return;
        }
        if let Some(next) = self.rematched {
            peer.send_msg(&error(
                "rematch_started",
                format!("the rematch has started: game {next}"),
                self.id,
            ));
            return;
        }
        let notice = if accept {
            self.rematch[seat.index()] = Some(peer.clone());
            let other = seat.other();
            if self.seats[other.index()].bot && self.rematch[other.index()].is_none() {
                // The computer always takes a rematch.
                self.rematch[other.index()] =
                    Some(crate::bot::seat_peer(&self.hub, &self.seats[other.index()]));
            }
            if let [Some(red), Some(black)] = self.rematch.clone() {
                // Colours swapped: last game's Black is Red.
                let players = [
                    Seeker {
                        player: self.seats[Player::Black.index()].clone(),
                        peer: black,
                    },
                    Seeker {
                        player: self.seats[Player::Red.index()].clone(),
                        peer: red,
                    },
                ];
                let settings = self.game.settings().clone();
                // A private game's rematch is private too, under the same code.
                let code = self.hub.game(self.id).and_then(|h| h.code.clone());
                let next = self.hub.start_game_with(
                    settings,
                    Some(self.rated),
                    players,
                    crate::lobby::Seats::AsGiven,
                    code,
                );
                tracing::info!(game = %self.id, next = %next, "rematch");
                self.rematched = Some(next);
                self.rematch = [None, None];
                return;
            }
            LobbyMessage::RematchOffered {
                game: self.id,
                by: seat,
            }
        } else {
            self.rematch = [None, None];
            LobbyMessage::RematchDeclined {
                game: self.id,
                by: seat,
            }
        };
        let text = crate::lobby::encode_lobby(&notice);
        let mut told_peer = false;
        for s in self.subs.iter().filter(|s| s.seat.is_some()) {
            told_peer |= s.peer.conn == peer.conn;
            s.peer.send(text.clone());
        }
        if !told_peer {
            peer.send(text);
        }
    }

    fn seat_of(&self, player: &PlayerRec) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|p| self.seats[p.index()].id == player.id)
    }

    fn act(&mut self, peer: Peer, player: &PlayerRec, action: Action, received: Instant) {
        let Some(seat) = self.seat_of(player) else {
            peer.send_msg(&error(
                "not_a_player",
                "you have no seat in this game: watchers cannot act",
                self.id,
            ));
            return;
        };
        let at = self.received_ms(received);
        self.catch_up(at);
        match self.game.apply(seat, action, at) {
            Ok(events) => {
                let m = &self.hub.metrics;
                m.actions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if matches!(
                    action,
                    Action::Move { .. } | Action::Release { .. } | Action::Place { .. }
                ) {
                    m.moves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                let comp_ms = events
                    .iter()
                    .filter_map(|e| match e {
                        protocol::Event::LagCompensated { comp_ms, .. } => Some(*comp_ms),
                        _ => None,
                    })
                    .sum();
                let kind = EntryKind::Act {
                    player: seat,
                    action,
                    lag_ms: Some(self.game.credit(seat).lag_ms),
                    comp_ms: Some(comp_ms),
                };
                self.publish_play(at, kind, events);
            }
            Err(e) => {
                self.hub
                    .metrics
                    .actions_refused
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                peer.send_msg(&error(e.code(), e.to_string(), self.id));
            }
        }
    }

    fn claim_abandonment(&mut self, peer: Peer, player: &PlayerRec) {
        let Some(seat) = self.seat_of(player) else {
            peer.send_msg(&error(
                "not_a_player",
                "you have no seat in this game",
                self.id,
            ));
            return;
        };
        if !self.game.is_playing() {
            peer.send_msg(&error("game_over", "the game is over", self.id));
            return;
        }
        let other = seat.other();
        match self.away[other.index()] {
            Some(a) if a.expired => {
                let now = self.now_ms();
                let events = self.game.abandon(other, now);
                self.publish_play(now, EntryKind::Abandon { player: other }, events);
            }
            Some(a) => {
                peer.send_msg(&error(
                    "grace_running",
                    format!(
                        "{other} may still come back until {} ms of game time",
                        a.until_ms
                    ),
                    self.id,
                ));
            }
            None => {
                peer.send_msg(&error(
                    "opponent_connected",
                    format!("{other} is connected: nothing to claim"),
                    self.id,
                ));
            }
        }
    }

    fn subscribe(&mut self, peer: Peer, player: Option<Arc<PlayerRec>>, after_seq: Option<Seq>) {
        let seat = player.as_deref().and_then(|p| self.seat_of(p));
        // Whatever is due now goes out first, so the snapshot is current.
        let now = self.now_ms();
        if self.game.is_playing() {
            self.catch_up(now);
        }
        self.subs.retain(|s| s.peer.conn != peer.conn);
        let missed = after_seq.and_then(|s| self.missed_frames(&peer, seat, s).map(|f| (s, f)));
        match missed {
            Some((s, frames)) => {
                peer.send_msg(&ServerMessage::Resumed {
                    game: self.id,
                    after_seq: s,
                    seat,
                });
                for text in frames {
                    if !peer.send(text) {
                        return;
                    }
                }
            }
            None => {
                if !self.send_snapshot(&peer, seat) {
                    return;
                }
            }
        }
        let known_lag = seat.and(peer.seated.lag());
        if seat.is_some() {
            peer.seated.add(self.id);
        }
        let conn = peer.conn;
        self.subs.push(Sub { peer, seat });
        if let Some(rtt_ms) = known_lag {
            self.lag(conn, rtt_ms, Instant::now());
        }
        match seat {
            Some(p) => {
                if self.away[p.index()].take().is_some() && self.game.is_playing() {
                    self.publish(Change::Presence {
                        player: p,
                        connected: true,
                        grace_until_ms: None,
                    });
                }
            }
            None => self.watchers_changed(),
        }
    }

    /// The frames of the events after `after` for a client that comes back, if they are
    /// all logged and fit in its queue beside some room for what follows; `None`: it gets
    /// a snapshot (so does a client whose seq is ahead of the game's).
    fn missed_frames(
        &self,
        peer: &Peer,
        seat: Option<Player>,
        after: Seq,
    ) -> Option<Vec<Utf8Bytes>> {
        if !self.history.has_after(after, self.seq) {
            return None;
        }
        let backlog = seat.is_none().then_some(self.hub.config.watch_backlog);
        let missed = (self.seq - after) as usize;
        if missed + 1 + RESUME_ROOM > peer.room(backlog) {
            return None;
        }
        self.history
            .frames_after(self.id, after, self.game.settings(), &self.entries)
    }

    /// After a subscriber went: the seat may now be empty, the watcher count smaller.
    fn after_detach(&mut self, seat: Option<Player>) {
        match seat {
            Some(p) => {
                let present = self.subs.iter().any(|s| s.seat == Some(p));
                if !present && self.away[p.index()].is_none() && self.game.is_playing() {
                    let now = self.now_ms();
                    let until = now + self.hub.config.reconnect_grace.as_millis() as u64;
                    self.away[p.index()] = Some(Away {
                        left_seq: self.seq + 1,
                        until_ms: until,
                        expired: false,
                    });
                    tracing::info!(game = %self.id, player = %p, "seat disconnected");
                    // At the instant the grace runs from.
                    let gone = Change::Presence {
                        player: p,
                        connected: false,
                        grace_until_ms: Some(until),
                    };
                    self.publish_at(gone, now);
                }
            }
            None => self.watchers_changed(),
        }
    }

    fn watcher_count(&self) -> u32 {
        self.subs.iter().filter(|s| s.seat.is_none()).count() as u32
    }

    /// The watcher count changed: listed at once; told to the subscribers at once, or, if
    /// a count went out less than `watchers_interval` ago, once that interval is over (so
    /// a crowd joining costs one frame per subscriber, not one per watcher).
    fn watchers_changed(&mut self) {
        self.summary.lock().expect("summary lock").watchers = self.watcher_count();
        if self.watchers_due.is_some() {
            return;
        }
        let now = Instant::now();
        match self.watchers_sent {
            Some(sent) if sent + self.hub.config.watchers_interval > now => {
                self.watchers_due = Some(sent + self.hub.config.watchers_interval);
            }
            _ => self.send_watchers(),
        }
    }

    /// Tells every subscriber the watcher count, if it is not the one they know.
    fn send_watchers(&mut self) {
        self.watchers_due = None;
        let count = self.watcher_count();
        if count == self.watchers_told {
            return;
        }
        self.watchers_told = count;
        self.watchers_sent = Some(Instant::now());
        let text = encode(&ServerMessage::Watchers {
            game: self.id,
            count,
        });
        self.fan_out(&text);
    }

    /// Publishes a seat's round trip when it is new or moved by 10 ms or more, so that
    /// the opponent and the watchers can show it without an event at every ping.
    fn lag(&mut self, conn: u64, rtt_ms: u64, received: Instant) {
        let seat = self
            .subs
            .iter()
            .find(|s| s.peer.conn == conn)
            .and_then(|s| s.seat);
        let Some(player) = seat else { return };
        let last = &mut self.lag_ms[player.index()];
        if last.is_some_and(|l| l.abs_diff(rtt_ms) < 10) || !self.game.is_playing() {
            return;
        }
        *last = Some(rtt_ms);
        // The engine judges with it from now on: a recorded entry, so that replicas and
        // replays move the same deadlines. Published once, as a `lag` change at its own
        // instant (what time brought before it goes out first, as an `advance`).
        let now = self.received_ms(received);
        let events = self.game.advance(now);
        if !events.is_empty() {
            self.publish_play(now, EntryKind::Advance, events);
        }
        if self.game.is_playing() {
            self.game.set_lag(player, rtt_ms);
            let entry = Entry {
                at_ms: now,
                kind: EntryKind::Lag {
                    player,
                    lag_ms: rtt_ms,
                },
            };
            self.publish_entry(entry, Vec::new(), now);
        }
    }

    fn seat_info(&self, p: Player) -> SeatInfo {
        let rec = &self.seats[p.index()];
        let away = self.away[p.index()];
        SeatInfo {
            player_id: rec.id.clone(),
            name: rec.name.clone(),
            connected: away.is_none(),
            grace_until_ms: away.map(|a| a.until_ms),
            lag_ms: self.lag_ms[p.index()],
            rating: crate::ratings::shown(rec, self.control),
        }
    }

    /// `seat` `None`: a watcher, counted in the snapshot's watchers whether or not he is
    /// subscribed yet.
    fn send_snapshot(&self, peer: &Peer, seat: Option<Player>) -> bool {
        let joining = seat.is_none() && !self.subs.iter().any(|s| s.peer.conn == peer.conn);
        let snapshot = Snapshot {
            game: self.id,
            seq: self.seq,
            now_ms: self.now_ms(),
            seat,
            red: self.seat_info(Player::Red),
            black: self.seat_info(Player::Black),
            watchers: self.watcher_count() + joining as u32,
            view: GameView::of(&self.game, &self.entries),
            sand: SandTable::of(&self.game),
            rated: self.rated,
            tc: self.control,
        };
        peer.send_msg(&ServerMessage::Snapshot(Box::new(snapshot)))
    }

    fn publish_play(&mut self, at_ms: u64, kind: EntryKind, events: Vec<protocol::Event>) {
        let now_ms = self.now_ms();
        self.publish_entry(Entry { at_ms, kind }, events, now_ms);
    }

    /// Records `entry` (which caused `events`) and publishes it at `now_ms`.
    fn publish_entry(&mut self, entry: Entry, events: Vec<protocol::Event>, now_ms: u64) {
        self.hub.store.submit(Write::Entry {
            game: self.id,
            idx: self.entries.len() as u64,
            entry: entry.clone(),
        });
        self.entries.push(entry.clone());
        if !self.game.is_playing() && !self.stored {
            tracing::info!(game = %self.id, "game over: storing it");
            self.store_end();
        }
        self.publish_at(Change::of_entry(entry, events, now_ms), now_ms);
        if self.durable.is_none() {
            self.refresh_summary();
        }
    }

    fn refresh_summary(&mut self) {
        let state = match self.game.status() {
            Status::Playing => "playing",
            Status::Finished { .. } => "finished",
            Status::Aborted { .. } => "aborted",
        };
        let mut summary = self.summary.lock().expect("summary lock");
        summary.move_count = self.game.move_count();
        summary.state = state.into();
    }

    /// Numbers a change, keeps it for reconnects and sends it to everyone.
    fn publish(&mut self, change: Change) {
        let now_ms = self.now_ms();
        self.publish_at(change, now_ms);
    }

    /// [`Self::publish`] with the event's `now_ms`.
    fn publish_at(&mut self, change: Change, now_ms: u64) {
        let began = Instant::now();
        self.seq += 1;
        // A `play` or `lag` change is always the latest entry (see `publish_entry`).
        let entry = self.entries.len().saturating_sub(1);
        self.history.push(self.seq, now_ms, &change, entry);
        let text = encode(&ServerMessage::Event(Box::new(GameEvent {
            game: self.id,
            seq: self.seq,
            now_ms,
            change,
        })));
        if self.durable.is_some() {
            self.held.push(text);
        } else {
            self.fan_out(&text);
        }
        let m = &self.hub.metrics;
        m.events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        m.fanout.observe(began.elapsed());
    }

    /// Hands a frame to every subscriber, the seats first; those who are gone or too slow
    /// are dropped. A seat's frame may use its whole queue; a watcher's only the watch
    /// backlog, so that watching never crowds out a connection's own games.
    fn fan_out(&mut self, text: &Utf8Bytes) {
        let backlog = self.hub.config.watch_backlog;
        let mut gone = Vec::new();
        let mut behind = Vec::new();
        for seats in [true, false] {
            self.subs.retain(|s| {
                if s.seat.is_some() != seats {
                    return true;
                }
                let delivery = match s.seat {
                    Some(_) if s.peer.send(text.clone()) => Delivery::Sent,
                    Some(_) => Delivery::Gone,
                    None => s.peer.send_watched(text.clone(), backlog),
                };
                match delivery {
                    Delivery::Sent => return true,
                    Delivery::Gone => gone.push(s.seat),
                    Delivery::Behind => behind.push(s.peer.clone()),
                }
                false
            });
        }
        for peer in &behind {
            self.watcher_fell_behind(peer);
        }
        for seat in gone {
            self.after_detach(seat);
        }
    }

    /// A watcher that does not keep up was dropped from the game: it is told why (in the
    /// part of its queue kept for its own traffic) and, unless it has a seat in some game,
    /// closed.
    fn watcher_fell_behind(&mut self, peer: &Peer) {
        let backlog = self.hub.config.watch_backlog;
        tracing::info!(
            game = %self.id,
            conn = peer.conn,
            "watcher fell behind: dropped"
        );
        self.hub
            .metrics
            .watchers_dropped
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        peer.send_msg(&error(
            "fell_behind",
            format!(
                "{backlog} messages of game {} were waiting for you: you are no longer watching it (watch again for a fresh snapshot)",
                self.id
            ),
            self.id,
        ));
        if peer.seated.list().is_empty() {
            peer.kill.kill(CLOSE_SLOW, CLOSE_FELL_BEHIND);
        }
        self.after_detach(None);
    }
}

#[cfg(test)]
mod tests {
    //! The game task alone, on a paused clock: instants are exact.

    use super::*;
    use crate::config::Config;
    use crate::hub::Kill;
    use crate::lobby::SeekResult;
    use protocol::game::Event;
    use protocol::settings::Level;
    use protocol::wire::Change;
    use tokio::sync::watch;

    struct Seat {
        peer: Peer,
        rx: mpsc::Receiver<Utf8Bytes>,
        player: Arc<PlayerRec>,
        seat: Player,
    }

    async fn recv(rx: &mut mpsc::Receiver<Utf8Bytes>) -> ServerMessage {
        let text = rx.recv().await.expect("a message");
        serde_json::from_str(text.as_str()).expect("valid message")
    }

    async fn next_event(rx: &mut mpsc::Receiver<Utf8Bytes>) -> GameEvent {
        loop {
            if let ServerMessage::Event(ev) = recv(rx).await {
                return *ev;
            }
        }
    }

    /// A hub without a network, and two players paired on `settings`: (hub, red, black).
    /// On tokio's paused clock, so deadlines wake from tokio's timer.
    async fn pair(settings: Settings, config: Config) -> (Arc<Hub>, GameId, Seat, Seat) {
        let config = Config {
            precise_timer: false,
            ..config
        };
        let (_stop_tx, stop) = watch::channel(false);
        let (_stop_games_tx, stop_games) = watch::channel(false);
        let (games_alive, _) = mpsc::channel(1);
        let (alive, _) = mpsc::channel(1);
        let store = crate::store::Store::detached();
        let hub = Arc::new(Hub::new(
            config,
            store,
            stop,
            stop_games,
            games_alive,
            alive,
        ));
        std::mem::forget((_stop_tx, _stop_games_tx));
        let mut seats = Vec::new();
        let mut game = None;
        for (i, name) in ["Ann", "Ben"].into_iter().enumerate() {
            let (tx, rx) = mpsc::channel(64);
            let peer = Peer {
                conn: i as u64,
                tx,
                kill: Arc::new(Kill::default()),
                seated: Default::default(),
                reply: None,
            };
            let (_, player) = hub.register(name.into()).await.expect("registered");
            let seeker = Seeker {
                player: player.clone(),
                peer: peer.clone(),
            };
            if let SeekResult::Paired(id) = hub.seek(settings.clone(), None, seeker) {
                game = Some(id);
            }
            seats.push((peer, rx, player));
        }
        let mut out = Vec::new();
        for (peer, mut rx, player) in seats {
            let ServerMessage::Snapshot(s) = recv(&mut rx).await else {
                panic!("a snapshot")
            };
            out.push(Seat {
                peer,
                rx,
                player,
                seat: s.seat.expect("seated"),
            });
        }
        out.sort_by_key(|s| s.seat);
        let black = out.pop().unwrap();
        let red = out.pop().unwrap();
        (hub, game.expect("paired"), red, black)
    }

    async fn act(hub: &Hub, game: GameId, seat: &Seat, action: Action) {
        let cmd = GameCmd::Act {
            peer: seat.peer.clone(),
            player: seat.player.clone(),
            action,
            received: Instant::now(),
        };
        hub.game(game).unwrap().tx.send(cmd).await.unwrap();
    }

    fn mv(from: &str, to: &str) -> Action {
        Action::Move {
            from: from.parse().unwrap(),
            to: to.parse().unwrap(),
            drop: true,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn death_goes_out_at_its_exact_instant() {
        let settings = Settings {
            turn_limit_ms: None,
            ..Settings::blitz(Level::Two)
        };
        let (hub, game, mut red, mut black) = pair(settings, Config::default()).await;
        let t0 = Instant::now();
        tokio::time::advance(Duration::from_millis(250)).await;
        act(&hub, game, &red, mv("d1", "d2")).await;
        let ev = next_event(&mut red.rx).await;
        assert_eq!((ev.seq, ev.now_ms), (1, 250));
        tokio::time::advance(Duration::from_millis(100)).await;
        act(&hub, game, &black, mv("a1", "b1")).await;
        next_event(&mut red.rx).await;
        // Nothing is sent; the paused clock jumps to the task's next deadline.
        let ev = next_event(&mut red.rx).await;
        let Change::Play { events, .. } = &ev.change else {
            panic!("a play")
        };
        assert!(matches!(
            events[..],
            [Event::HourglassDied {
                at: 3250,
                in_hand: false,
                ..
            }]
        ));
        assert_eq!(ev.now_ms, 3250);
        assert_eq!(t0.elapsed(), Duration::from_millis(3250));
        let ev = next_event(&mut red.rx).await;
        assert_eq!(ev.now_ms, 3350, "Black's A dies 3 s after its flip");
        assert_eq!(next_event(&mut black.rx).await.seq, 1);
    }

    /// A game task held up past a deadline still judges an action read before that
    /// deadline at the instant it was read, and only then fires the deadline.
    #[tokio::test(start_paused = true)]
    async fn an_action_read_before_a_deadline_is_judged_before_it() {
        let (hub, game, mut red, black) =
            pair(Settings::blitz(Level::Three), Config::default()).await;
        tokio::time::advance(Duration::from_millis(100)).await;
        act(&hub, game, &black, Action::Flip).await;
        let ev = next_event(&mut red.rx).await;
        assert_eq!(ev.now_ms, 100, "the 15-second timer runs out at 400");
        tokio::time::advance(Duration::from_millis(299)).await;
        // Read at 399, but queued behind another command while the task was stalled
        // until 450: the expiry at 400 is overdue when the task gets to it.
        let tx = &hub.game(game).unwrap().tx;
        tx.try_send(GameCmd::Lag {
            conn: red.peer.conn,
            rtt_ms: 1,
            received: Instant::now() + Duration::from_millis(50),
        })
        .unwrap();
        tx.try_send(GameCmd::Act {
            peer: red.peer.clone(),
            player: red.player.clone(),
            action: mv("d1", "d2"),
            received: Instant::now(),
        })
        .unwrap();
        tokio::time::advance(Duration::from_millis(51)).await;
        let ev = loop {
            let ev = next_event(&mut red.rx).await;
            if matches!(ev.change, Change::Play { .. }) {
                break ev;
            }
        };
        let Change::Play { entry, events, .. } = &ev.change else {
            unreachable!()
        };
        assert_eq!(entry.at_ms, 399, "judged at the instant it was read");
        assert!(matches!(
            entry.kind,
            EntryKind::Act {
                player: Player::Red,
                ..
            }
        ));
        assert!(
            !events.iter().any(|e| matches!(
                e,
                Event::TurnForfeited { .. } | Event::NeutralExpired { .. }
            )),
            "Red's move beat the timer: {events:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn grace_runs_out_at_its_exact_instant() {
        let settings = Settings {
            abort_ms: 3_600_000,
            ..Settings::blitz(Level::One)
        };
        let (hub, game, mut red, black) = pair(settings, Config::default()).await;
        act(&hub, game, &red, mv("d1", "d2")).await;
        next_event(&mut red.rx).await;
        tokio::time::advance(Duration::from_millis(40)).await;
        let cmd = GameCmd::Unsubscribe {
            conn: black.peer.conn,
            reply: None,
        };
        hub.game(game).unwrap().tx.send(cmd).await.unwrap();
        let ev = next_event(&mut red.rx).await;
        assert_eq!(
            ev.change,
            Change::Presence {
                player: Player::Black,
                connected: false,
                grace_until_ms: Some(60_040),
            }
        );
        let ev = next_event(&mut red.rx).await;
        assert_eq!(
            ev.change,
            Change::GraceExpired {
                player: Player::Black,
            }
        );
        assert_eq!(ev.now_ms, 60_040);
        // Red does not claim: the server ends the game for him when his window closes.
        let ev = next_event(&mut red.rx).await;
        assert_eq!(ev.now_ms, 120_040);
        let Change::Play { entry, events, .. } = &ev.change else {
            panic!("the end, not {:?}", ev.change)
        };
        assert_eq!(
            entry.kind,
            EntryKind::Abandon {
                player: Player::Black
            }
        );
        assert!(
            matches!(events.last(), Some(Event::GameEnded { outcome, .. }) if outcome.winner == Some(Player::Red)),
            "{events:?}"
        );
    }
}
