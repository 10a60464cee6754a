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
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Duration, Instant};

use crate::alarm::Alarm;
use crate::clock::unix_ms;
use crate::codec::encode;
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
    durable: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    held: Vec<Utf8Bytes>,
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
    rooms: Arc<Rooms>,
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
    rooms.store.submit(Write::GameStarted(start_info.clone()));
    rooms
        .metrics
        .games_started
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let room = new_room(&rooms, id, Game::new(settings), Vec::new(), 0);
    let (mut task, rx) = GameTask::open(
        &rooms,
        start_info,
        room,
        seats,
        Instant::now(),
        options.tournament,
    );
    let seekers = [(Player::Red, red), (Player::Black, black)];
    // Both seats' lags, when already measured, go into both snapshots and into the engine
    // from the first instant (recorded entries, as every later change is).
    for (seat, seeker) in &seekers {
        if let Some(lag_ms) = seeker.peer.seated.lag() {
            let now = task.now_ms();
            task.room.set_initial_lag(*seat, lag_ms, now);
            task.flush();
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
    rooms: &Arc<Rooms>,
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
    // Sequence numbers of this run start above any the last run gave (at most 1,000 a
    // millisecond of its life): a client that comes back with an `after_seq` of the last
    // run gets a snapshot, never events numbered for another run.
    let seq = unix_ms().saturating_mul(1_000);
    let room = new_room(rooms, id, game, entries, seq);
    let (mut task, rx) = GameTask::open(rooms, start_info, room, seats, start, tournament);
    let now = task.now_ms();
    task.room.catch_up(now, now);
    task.flush();
    for p in Player::BOTH {
        let player = task.seats[p.index()].clone();
        if player.bot {
            let peer = crate::bot::seat_peer(rooms, &player);
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

/// The room of a game, with the server's history bound and graces.
fn new_room(rooms: &Rooms, id: GameId, game: Game, entries: Vec<Entry>, seq: Seq) -> Room {
    let graces = Graces {
        reconnect_ms: rooms.config.reconnect_grace.as_millis() as u64,
        claim_window_ms: rooms.config.claim_window.as_millis() as u64,
    };
    Room::new(id, game, entries, seq, rooms.config.history, graces)
}

impl GameTask {
    /// The task of a game and its listing in the hub; nobody is subscribed yet.
    fn open(
        rooms: &Arc<Rooms>,
        start_info: GameStart,
        room: Room,
        seats: [Arc<PlayerRec>; 2],
        start: Instant,
        tournament: Option<crate::events::TournamentGame>,
    ) -> (GameTask, mpsc::Receiver<GameCmd>) {
        let id = start_info.id;
        let game = room.game();
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
        let (tx, rx) = mpsc::channel(rooms.config.game_queue);
        rooms.games.insert(
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
            rooms: rooms.clone(),
            room,
            outs: Vec::new(),
            start,
            seats,
            subs: Vec::new(),
            summary,
            linger_until: None,
            start_info,
            durable: None,
            held: Vec::new(),
            deferred: VecDeque::new(),
            stopping: false,
            rematch: [None, None],
            rematched: None,
            playing: Some(rooms.playing_guard()),
            alarm: rooms.alarms.as_ref().map(|a| a.alarm()),
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
        let alive = self.rooms.game_alive_token();
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
        let mut shutdown = self.rooms.stop_games.clone();
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
            }
        }
        self.rooms.games.remove(&self.id);
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

    /// The end is on disk (or the store did not answer in time): announce it.
    fn release(&mut self) {
        self.durable = None;
        self.playing = None;
        for text in std::mem::take(&mut self.held) {
            self.fan_out(&text);
        }
        self.refresh_summary();
        self.room.forget_absences();
        self.linger_until = Some(Instant::now() + self.rooms.config.linger);
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
        self.rooms
            .store
            .submit(Write::GameEnded(Box::new(end), Some(ack)));
        let timeout = self.rooms.config.store_ack_timeout;
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
        if self.room.game().is_playing() {
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
                self.rematch[other.index()] = Some(crate::bot::seat_peer(
                    &self.rooms,
                    &self.seats[other.index()],
                ));
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
                let settings = self.room.game().settings().clone();
                // A private game's rematch is private too, under the same code.
                let code = self.rooms.game(self.id).and_then(|h| h.code.clone());
                let next = GameId::now_v7();
                let options = Options {
                    rated: Some(self.rated),
                    code,
                    ..Default::default()
                };
                spawn(self.rooms.clone(), next, settings, players, options);
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
        let text = crate::codec::encode_lobby(&notice);
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
        let now = self.now_ms();
        let m = &self.rooms.metrics;
        match self.room.act(seat, action, at, now) {
            Ok(()) => {
                m.actions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if matches!(
                    action,
                    Action::Move { .. } | Action::Release { .. } | Action::Place { .. }
                ) {
                    m.moves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            Err(e) => {
                m.actions_refused
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                peer.send_msg(&error(e.code(), e.to_string(), self.id));
            }
        }
        // What fell due before the action goes out either way.
        self.flush();
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
        let now = self.now_ms();
        match self.room.claim_abandonment(seat, now) {
            Ok(()) => self.flush(),
            Err((code, message)) => {
                peer.send_msg(&error(code, message, self.id));
            }
        }
    }

    fn subscribe(&mut self, peer: Peer, player: Option<Arc<PlayerRec>>, after_seq: Option<Seq>) {
        let seat = player.as_deref().and_then(|p| self.seat_of(p));
        // Whatever is due now goes out first, so the snapshot is current.
        let now = self.now_ms();
        if self.room.game().is_playing() {
            self.room.catch_up(now, now);
            self.flush();
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
                self.room.arrive(p, now);
                self.flush();
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
        let history = self.room.history();
        if !history.has_after(after, self.room.seq()) {
            return None;
        }
        let backlog = seat.is_none().then_some(self.rooms.config.watch_backlog);
        let missed = (self.room.seq() - after) as usize;
        if missed + 1 + RESUME_ROOM > peer.room(backlog) {
            return None;
        }
        history.frames_after(
            self.id,
            after,
            self.room.game().settings(),
            self.room.entries(),
        )
    }

    /// After a subscriber went: the seat may now be empty, the watcher count smaller.
    fn after_detach(&mut self, seat: Option<Player>) {
        match seat {
            Some(p) => {
                let present = self.subs.iter().any(|s| s.seat == Some(p));
                if !present && self.room.away(p).is_none() && self.room.game().is_playing() {
                    tracing::info!(game = %self.id, player = %p, "seat disconnected");
                    let now = self.now_ms();
                    self.room.leave(p, now);
                    self.flush();
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
            Some(sent) if sent + self.rooms.config.watchers_interval > now => {
                self.watchers_due = Some(sent + self.rooms.config.watchers_interval);
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

    /// A connection measured its round trip: the room publishes it for its seat, if it
    /// has one, when it moved enough to matter.
    fn lag(&mut self, conn: u64, rtt_ms: u64, received: Instant) {
        let seat = self
            .subs
            .iter()
            .find(|s| s.peer.conn == conn)
            .and_then(|s| s.seat);
        let Some(player) = seat else { return };
        let at = self.received_ms(received);
        let now = self.now_ms();
        self.room.lag_measured(player, rtt_ms, at, now);
        self.flush();
    }

    fn seat_info(&self, p: Player) -> SeatInfo {
        let rec = &self.seats[p.index()];
        let away = self.room.away(p);
        SeatInfo {
            player_id: rec.id.clone(),
            name: rec.name.clone(),
            connected: away.is_none(),
            grace_until_ms: away.map(|a| a.until_ms),
            lag_ms: self.room.lag(p),
            rating: crate::ratings::shown(rec, self.control),
        }
    }

    /// `seat` `None`: a watcher, counted in the snapshot's watchers whether or not he is
    /// subscribed yet.
    fn send_snapshot(&self, peer: &Peer, seat: Option<Player>) -> bool {
        let joining = seat.is_none() && !self.subs.iter().any(|s| s.peer.conn == peer.conn);
        let (view, sand) = self.room.view();
        let snapshot = Snapshot {
            game: self.id,
            seq: self.room.seq(),
            now_ms: self.now_ms(),
            seat,
            red: self.seat_info(Player::Red),
            black: self.seat_info(Player::Black),
            watchers: self.watcher_count() + joining as u32,
            view,
            sand,
            rated: self.rated,
            tc: self.control,
        };
        peer.send_msg(&ServerMessage::Snapshot(Box::new(snapshot)))
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
                        idx,
                        entry,
                    });
                }
                Out::Ended => {
                    tracing::info!(game = %self.id, "game over: storing it");
                    self.store_end();
                }
                Out::Event(event) => self.send_event(event),
            }
        }
        self.outs = outs;
        if played && self.durable.is_none() {
            self.refresh_summary();
        }
    }

    fn refresh_summary(&mut self) {
        let state = match self.room.game().status() {
            Status::Playing => "playing",
            Status::Finished { .. } => "finished",
            Status::Aborted { .. } => "aborted",
        };
        let mut summary = self.summary.lock().expect("summary lock");
        summary.move_count = self.room.game().move_count();
        summary.state = state.into();
    }

    /// Sends a numbered change to everyone (held back while the end is being stored).
    fn send_event(&mut self, event: GameEvent) {
        let began = Instant::now();
        let text = encode(&ServerMessage::Event(Box::new(event)));
        if self.durable.is_some() {
            self.held.push(text);
        } else {
            self.fan_out(&text);
        }
        let m = &self.rooms.metrics;
        m.events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        m.fanout.observe(began.elapsed());
    }

    /// Hands a frame to every subscriber, the seats first; those who are gone or too slow
    /// are dropped. A seat's frame may use its whole queue; a watcher's only the watch
    /// backlog, so that watching never crowds out a connection's own games.
    fn fan_out(&mut self, text: &Utf8Bytes) {
        let backlog = self.rooms.config.watch_backlog;
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
        let backlog = self.rooms.config.watch_backlog;
        tracing::info!(
            game = %self.id,
            conn = peer.conn,
            "watcher fell behind: dropped"
        );
        self.rooms
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
mod tests;
