//! Follower side of the fan-out, its I/O: a client starts or stops following a game here,
//! the task that reads a game's stream and hands its frames to the fan, and what the fan
//! asks done once its lock is released (see the parent module).

use super::*;
use crate::room::lag_moved;

impl Cluster {
    /// Client side: `conn` follows `game` (a join or watch is about to go to its owner):
    /// the game's stream is subscribed first; the client gets nothing from it until its
    /// snapshot or resumption comes.
    pub(in crate::cluster) async fn fan_add(
        self: &Arc<Self>,
        game: GameId,
        peer: &Peer,
        player: Option<String>,
    ) {
        let seat = player.is_some();
        let _one = self.fans.changing.lock().await;
        let fan = match self.fans.games.get(&game).map(|f| f.clone()) {
            Some(fan) => fan,
            None => {
                let sub = match self.client.subscribe(ev_subject(game)).await {
                    Ok(sub) => sub,
                    Err(e) => {
                        tracing::error!(game = %game, error = %e, "cannot follow a game's stream");
                        return;
                    }
                };
                let fan = Arc::new(GameFan {
                    game,
                    state: Mutex::new(FanState::default()),
                    task: OnceLock::new(),
                    wake: Default::default(),
                });
                let task = tokio::spawn(self.clone().stream(fan.clone(), sub));
                let _ = fan.task.set(task.abort_handle());
                self.fans.games.insert(game, fan.clone());
                fan
            }
        };
        {
            let mut st = fan.state.lock().expect("fan lock");
            let before = st.clients.get(&peer.conn).and_then(|c| c.at.or(c.before));
            st.clients.insert(
                peer.conn,
                FanClient {
                    peer: peer.clone(),
                    player,
                    seat,
                    at: None,
                    before,
                    held: None,
                    repairing: 0,
                    quiet_until: None,
                },
            );
        }
        if seat {
            peer.seated.add_remote(game);
            let mut games = self.fans.seats.entry(peer.conn).or_default();
            if !games.iter().any(|s| s.game == game) {
                games.push(RemoteSeat {
                    game,
                    lag_sent: None,
                    seated: peer.seated.clone(),
                });
            }
        }
    }

    /// Client side: `conn` no longer follows `game` here; the stream is let go when
    /// nobody here follows it.
    pub(in crate::cluster) async fn fan_remove(&self, game: GameId, conn: u64) {
        let _one = self.fans.changing.lock().await;
        if let Some(mut games) = self.fans.seats.get_mut(&conn) {
            games.retain(|s| {
                let other = s.game != game;
                if !other {
                    s.seated.remove_remote(game);
                }
                other
            });
        }
        self.fans
            .seats
            .remove_if(&conn, |_, games| games.is_empty());
        let Some(fan) = self.fans.games.get(&game).map(|f| f.clone()) else {
            return;
        };
        let empty = {
            let mut st = fan.state.lock().expect("fan lock");
            st.clients.remove(&conn);
            st.clients.is_empty()
        };
        if empty {
            self.fans.games.remove(&game);
            if let Some(task) = fan.task.get() {
                task.abort();
            }
        }
    }

    /// Client side: the remote games `conn` is seated in.
    pub(in crate::cluster) fn remote_seats(&self, conn: u64) -> Vec<GameId> {
        self.fans
            .seats
            .get(&conn)
            .map(|g| g.iter().map(|s| s.game).collect())
            .unwrap_or_default()
    }

    /// Client side: `conn` measured a round trip of `rtt_ms`: the remote games it is
    /// seated in whose owner should be told by [`lag_moved`]: the first time, or when it
    /// moved by 10 ms or more since the last told (the owner's game would not publish a
    /// smaller change: a NATS message saved per seat and ping on a steady connection).
    pub(in crate::cluster) fn lag_due(&self, conn: u64, rtt_ms: u64) -> Vec<GameId> {
        let Some(mut seats) = self.fans.seats.get_mut(&conn) else {
            return Vec::new();
        };
        let mut due = Vec::new();
        for seat in seats.iter_mut() {
            if lag_moved(seat.lag_sent, rtt_ms) {
                seat.lag_sent = Some(rtt_ms);
                due.push(seat.game);
            }
        }
        due
    }

    /// Client side: the frames of one game's stream, to this node's clients of it.
    async fn stream(self: Arc<Self>, fan: Arc<GameFan>, mut sub: async_nats::Subscriber) {
        let backlog = self.rooms.config.watch_backlog;
        let loss_every = self.rooms.config.fanout_loss_every;
        loop {
            let recheck = fan.state.lock().expect("fan lock").recheck;
            let effects = tokio::select! {
                msg = sub.next() => {
                    let Some(msg) = msg else { break };
                    let Some((seq, text)) = parse_stream(msg.payload) else {
                        tracing::warn!(game = %fan.game, "a malformed frame on a game stream: ignored");
                        continue;
                    };
                    fan.on_stream(seq, text, backlog, loss_every)
                }
                _ = tokio::time::sleep_until(recheck.unwrap_or_else(Instant::now)), if recheck.is_some() => fan.recheck(backlog),
                _ = fan.wake.notified() => continue,
            };
            self.apply(fan.game, effects);
        }
    }

    pub(super) fn apply(self: &Arc<Self>, game: GameId, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Behind { conn, peer } => {
                    // As a game task does (`watcher_fell_behind`): told why, in the part
                    // of its queue kept for its own traffic, and closed unless it is
                    // seated somewhere; its owner forgets it (the watcher count).
                    let backlog = self.rooms.config.watch_backlog;
                    tracing::info!(game = %game, conn, "remote watcher fell behind: dropped");
                    self.rooms
                        .metrics
                        .watchers_dropped
                        .fetch_add(1, Ordering::Relaxed);
                    peer.send_msg(&ServerMessage::Error {
                        code: "fell_behind".into(),
                        message: format!("{backlog} messages of game {game} were waiting for you: you are no longer watching it (watch again for a fresh snapshot)"),
                        game: Some(game),
                        id: None,
                        server_ms: None,
                        at_ms: None,
                    });
                    if peer.seated.list().is_empty() && self.remote_seats(conn).is_empty() {
                        peer.kill.kill(CLOSE_SLOW, CLOSE_FELL_BEHIND);
                    }
                    self.enqueue(conn, game, Op::Leave { answer: false }, false);
                }
                Effect::Repair { conn, at, seat } => {
                    if self.rooms.game(game).is_some() {
                        // This node took the game over (its owner died): its client is
                        // joined to it here, as after a reconnect; its owner would be this
                        // node, which refuses its own clients (see `owner::command`).
                        self.rehome(game, conn, at);
                        continue;
                    }
                    tracing::debug!(game = %game, conn, after_seq = at, "a gap in a game's stream: resuming the client at its owner");
                    self.stats.repairs.fetch_add(1, Ordering::Relaxed);
                    let op = match seat {
                        true => Op::Join {
                            after_seq: Some(at),
                        },
                        false => Op::Watch {
                            after_seq: Some(at),
                            code: None,
                        },
                    };
                    self.enqueue(conn, game, op, true);
                }
            }
        }
    }

    /// A client that followed `game` at another node, which this node now runs: it no
    /// longer follows the stream, and is subscribed to the game here with the last event
    /// it was given (`at`); the game tells it what it missed (a snapshot: the numbers of a
    /// taken-over game's events start above its former owner's).
    pub(in crate::cluster) fn rehome(self: &Arc<Self>, game: GameId, conn: u64, at: Seq) {
        let Some(fan) = self.fans.games.get(&game).map(|f| f.clone()) else {
            return;
        };
        let Some((peer, player)) = fan
            .state
            .lock()
            .expect("fan lock")
            .clients
            .get(&conn)
            .map(|c| (c.peer.clone(), c.player.clone()))
        else {
            return;
        };
        let cluster = self.clone();
        tokio::spawn(async move {
            cluster.fan_remove(game, conn).await;
            let Some(handle) = cluster.rooms.game(game) else {
                return;
            };
            let player = player.and_then(|p| handle.seats.iter().find(|s| s.id == p).cloned());
            tracing::debug!(game = %game, conn, after_seq = at, "a game taken over here: its client of this node joins it here");
            let cmd = crate::rooms::GameCmd::Subscribe {
                peer,
                player,
                after_seq: Some(at),
                remote: false,
            };
            let _ = handle.tx.send(cmd).await;
        });
    }

    /// Queues a command of this node's own for `conn` (best effort: a full queue skips
    /// it; a gap is asked again at the next event).
    pub(in crate::cluster) fn enqueue(
        &self,
        conn: u64,
        game: GameId,
        op: Op,
        repair: bool,
    ) -> bool {
        let Some(tx) = self.followers.get(&conn).map(|t| t.clone()) else {
            return false;
        };
        // A seat's repair must name its player (the owner checks the seat).
        let player = self.fans.games.get(&game).and_then(|f| {
            let st = f.state.lock().expect("fan lock");
            st.clients.get(&conn).and_then(|c| c.player.clone())
        });
        tx.try_send(Queued {
            game,
            cmd: RemoteCmd {
                player,
                ..self.remote_cmd(conn, op)
            },
            read: None,
            repair,
        })
        .is_ok()
    }
}
