//! Who follows a game: players and watchers subscribing, resuming, leaving and falling
//! behind; snapshots; the fan-out of every frame to their bounded queues.

use super::*;

impl GameTask {
    pub(super) fn subscribe(
        &mut self,
        peer: Peer,
        player: Option<Arc<PlayerRec>>,
        after_seq: Option<Seq>,
        remote: bool,
    ) {
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
        // Seated first, then the lag read (see `start`).
        if seat.is_some() {
            peer.seated.add(self.id);
        }
        let known_lag = seat.and(peer.seated.lag());
        let conn = peer.conn;
        self.subs.push(Sub { peer, seat, remote });
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
    pub(super) fn missed_frames(
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
    pub(super) fn after_detach(&mut self, seat: Option<Player>) {
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

    pub(super) fn watcher_count(&self) -> u32 {
        self.subs.iter().filter(|s| s.seat.is_none()).count() as u32
    }

    /// The watcher count changed: listed at once; told to the subscribers at once, or, if
    /// a count went out less than `watchers_interval` ago, once that interval is over (so
    /// a crowd joining costs one frame per subscriber, not one per watcher).
    pub(super) fn watchers_changed(&mut self) {
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
    pub(super) fn send_watchers(&mut self) {
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
        self.fan_out(&text, None);
    }

    /// A connection measured its round trip: the room publishes it for its seat, if it
    /// has one, when it moved enough to matter.
    pub(super) fn lag(&mut self, conn: u64, rtt_ms: u64, received: Instant) {
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

    pub(super) fn seat_info(&self, p: Player) -> SeatInfo {
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
    pub(super) fn send_snapshot(&self, peer: &Peer, seat: Option<Player>) -> bool {
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

    /// Hands a frame to every subscriber; those who are gone or too slow are dropped. A
    /// seat's frame may use its whole queue; a watcher's only the watch backlog, so that
    /// watching never crowds out a connection's own games. The clients of other nodes get
    /// it from one publication for them all (`seq`: a numbered event's, by which their
    /// nodes keep each client's order exact).
    ///
    /// The player to move gets it first: this task writes it on his socket itself (see
    /// `wire`), so the order here is the order of the writes. After a move that is the
    /// opponent, whose turn (and the neutral timer) started at the move's instant; then
    /// the mover's own echo, then the watchers (a crowd of them through their connections'
    /// tasks: see [`crate::peer::DIRECT_WATCHERS`]).
    pub(super) fn fan_out(&mut self, text: &Utf8Bytes, seq: Option<Seq>) {
        if let Some(relay) = self.rooms.relay.get() {
            if self.publish_all || self.subs.iter().any(|s| s.remote) {
                relay.publish(self.id, seq, text);
            }
        }
        let backlog = self.rooms.config.watch_backlog;
        let mut gone = Vec::new();
        let mut behind = Vec::new();
        let to_move = self.room.game().turn();
        let crowd = self.watcher_count() as usize > crate::peer::DIRECT_WATCHERS;
        for pass in [Pass::ToMove, Pass::Waiting, Pass::Watchers] {
            self.subs.retain(|s| {
                let of = match s.seat {
                    None => Pass::Watchers,
                    Some(p) if p == to_move => Pass::ToMove,
                    Some(_) => Pass::Waiting,
                };
                if of != pass || s.remote {
                    return true;
                }
                let delivery = match s.seat {
                    Some(_) if s.peer.send(text.clone()) => Delivery::Sent,
                    Some(_) => Delivery::Gone,
                    None => s.peer.send_watched(text.clone(), backlog, crowd),
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
    pub(super) fn watcher_fell_behind(&mut self, peer: &Peer) {
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

/// The order in which [`GameTask::fan_out`] hands a frame on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    ToMove,
    /// The seat not to move.
    Waiting,
    Watchers,
}
