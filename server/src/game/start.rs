//! A game begins: a new one for two seekers, or one taken up again from its journal
//! after a restart.

use super::*;

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
        owner_epoch: 0,
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
    // Seated first, then the lag read: a measurement that misses the seat (its
    // connection does not tell this game) was stored before the read.
    for (seat, seeker) in &seekers {
        seeker.peer.seated.add(id);
        if let Some(lag_ms) = seeker.peer.seated.lag() {
            let now = task.now_ms();
            task.room.set_initial_lag(*seat, lag_ms, now);
            task.flush();
        }
    }
    for (seat, seeker) in seekers {
        task.subs.push(Sub {
            peer: seeker.peer.clone(),
            seat: Some(seat),
            remote: false,
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
        away_until,
    } = live;
    let id = start_info.id;
    // Sequence numbers of this run start above any the last run gave (at most 1,000 a
    // millisecond of its life): a client that comes back with an `after_seq` of the last
    // run gets a snapshot, never events numbered for another run.
    let seq = unix_ms().saturating_mul(1_000);
    let room = new_room(rooms, id, game, entries, seq);
    let (mut task, rx) = GameTask::open(rooms, start_info, room, seats, start, tournament);
    task.publish_all = true;
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
                remote: false,
            });
            task.send_snapshot(&peer, Some(p));
        } else if let Some(until_ms) = away_until[p.index()] {
            // Away before: his grace goes on to its own end (past, if it ran out).
            task.room.restore_away(p, until_ms, now);
            task.flush();
        } else {
            task.after_detach(Some(p));
        }
    }
    tracing::info!(game = %id, at_ms = now, "game resumed after a restart");
    task.launch(rx);
    Ok(id)
}

/// The room of a game, with the server's history bound and graces.
pub(super) fn new_room(
    rooms: &Rooms,
    id: GameId,
    game: Game,
    entries: Vec<Entry>,
    seq: Seq,
) -> Room {
    let graces = Graces {
        reconnect_ms: rooms.config.reconnect_grace.as_millis() as u64,
        claim_window_ms: rooms.config.claim_window.as_millis() as u64,
    };
    Room::new(id, game, entries, seq, rooms.config.history, graces)
}

impl GameTask {
    /// The task of a game and its listing in the hub; nobody is subscribed yet.
    pub(super) fn open(
        rooms: &Arc<Rooms>,
        start_info: GameStart,
        room: Room,
        seats: [Arc<PlayerRec>; 2],
        start: Instant,
        tournament: Option<crate::events::TournamentGame>,
    ) -> (GameTask, crate::outbox::Receiver<GameCmd>) {
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
        let (tx, rx) = crate::outbox::channel(rooms.config.game_queue);
        let tenure = Arc::new(crate::tenure::Tenure::of_game(&rooms.config));
        rooms.insert_game(
            id,
            GameHandle {
                tx,
                summary: summary.clone(),
                seats: seats.clone(),
                start,
                code: start_info.code.clone(),
                tenure: tenure.clone(),
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
            tenure,
            publish_all: false,
        };
        (task, rx)
    }

    /// Starts the task. With an alarm thread, that thread runs the task itself at its
    /// deadlines when it can (`alarm::direct`): a death is announced on time even while
    /// the runtime's workers are busy.
    pub(super) fn launch(mut self, rx: crate::outbox::Receiver<GameCmd>) {
        let rooms = self.rooms.clone();
        match self.alarm.as_mut() {
            Some(alarm) => {
                let direct = crate::alarm::direct::Direct::default();
                alarm.run_by_alarm_thread(direct.slot());
                rooms.spawn_game(direct.run(self.run(rx)));
            }
            None => rooms.spawn_game(self.run(rx)),
        }
    }
}
