//! The session with the server: the connection coming and going, hello and welcome, the
//! server's frames dispatched ([`App::on_frame`], [`App::on_message`]), the games list
//! and the periodic tick (pings, rematch polls).

use super::*;

impl App {
    /// A connection is open: say hello.
    pub fn on_connected(&mut self, at: Instant) -> Vec<ClientMessage> {
        let again = self.connected || self.me.is_some() || self.guest;
        self.connected = true;
        self.phase = match self.phase {
            Phase::Connecting | Phase::Hello => Phase::Hello,
            ref p => p.clone(),
        };
        if again {
            self.info("connection", "Connected again".into(), json!({}));
        }
        // "Connection lost: reconnecting…" is no longer true.
        if self
            .status
            .as_ref()
            .is_some_and(|(_, s)| s.starts_with("Connection lost"))
        {
            self.status = None;
        }
        self.last_ping = Some(at);
        vec![self.hello()]
    }

    /// The `hello` to send: with our token if we have one; else, only to watch or list
    /// games, as a guest (no player is registered for that); else with our name.
    pub(super) fn hello(&self) -> ClientMessage {
        let token = self
            .me
            .as_ref()
            .map(|m| m.token.clone())
            .or(self.token.clone());
        let guest = token.is_none() && matches!(self.mode, Mode::Watch { .. } | Mode::Games { .. });
        ClientMessage::Hello {
            version: PROTOCOL_VERSION,
            name: (token.is_none() && !guest).then(|| self.name.clone()),
            token,
            guest,
        }
    }

    /// The connection cannot be made (again): the session ends.
    pub fn on_gave_up(&mut self, why: &str) {
        self.fatal(clean(why));
    }

    /// A frame that is not a server message.
    pub fn on_unreadable(&mut self, why: &str) {
        self.log(LogKind::Error, None, clean(why));
    }

    /// The connection was lost; the runtime reconnects.
    pub fn on_disconnected(&mut self, why: &str) {
        if !self.connected {
            return;
        }
        self.connected = false;
        let text = format!("Connection lost ({}): reconnecting…", clean(why));
        self.status = Some((LogKind::Error, text.clone()));
        self.info("connection", text, json!({ "connected": false }));
    }

    /// Periodic work: measure the round trip.
    pub fn on_tick(&mut self, at: Instant) -> Vec<ClientMessage> {
        if !self.connected || (self.me.is_none() && !self.guest) {
            return Vec::new();
        }
        if self.phase == Phase::Lobby {
            return self.lobby_tick(at);
        }
        if let Some((due, _)) = &self.rejoin {
            if at >= *due {
                let (_, again) = self.rejoin.take().expect("a rejoin");
                if matches!(self.phase, Phase::Joining(_)) {
                    return vec![again];
                }
            }
        }
        // A watcher follows the players into their rematch: the server tells only the
        // players, so the live games are looked at now and then for theirs.
        let watching_over = matches!(self.mode, Mode::Watch { .. })
            && self.phase == Phase::InGame
            && self.game.as_ref().is_some_and(|g| g.is_over());
        if watching_over
            && self
                .rematch_poll
                .is_none_or(|t| at.saturating_duration_since(t) >= REMATCH_POLL)
        {
            self.rematch_poll = Some(at);
            return vec![ClientMessage::ListGames];
        }
        if self
            .last_ping
            .is_some_and(|t| at.saturating_duration_since(t) < PING_EVERY)
        {
            return Vec::new();
        }
        self.last_ping = Some(at);
        vec![ClientMessage::Ping {
            client_ms: Some(self.local_ms(at)),
            lag_ms: None,
        }]
    }

    // ----- server messages -----

    /// Any frame from the server.
    pub fn on_frame(&mut self, frame: ServerFrame, at: Instant) -> Vec<ClientMessage> {
        match frame {
            ServerFrame::Message(m) => self.on_message(m, at),
            ServerFrame::Lobby(m) => {
                self.on_lobby(m, at);
                Vec::new()
            }
        }
    }

    /// The server's wall clock at `at`, from the welcome.
    pub(super) fn server_wall_ms(&self, at: Instant) -> Option<u64> {
        let (server_ms, when) = self.welcomed?;
        Some(server_ms + at.saturating_duration_since(when).as_millis() as u64)
    }

    pub fn on_message(&mut self, msg: ServerMessage, at: Instant) -> Vec<ClientMessage> {
        let mut send = Vec::new();
        match msg {
            ServerMessage::Welcome {
                player_id,
                name,
                token,
                games,
                server_ms,
                ..
            } => {
                self.welcomed = Some((server_ms, at));
                self.on_welcome(player_id, name, token, games, at, &mut send)
            }
            ServerMessage::GuestWelcome { server_ms, .. } => {
                self.welcomed = Some((server_ms, at));
                if !self.guest {
                    self.guest = true;
                    self.info(
                        "welcome",
                        "Connected as a guest (no player registered)".into(),
                        json!({ "guest": true }),
                    );
                }
                self.after_hello(Vec::new(), at, &mut send);
            }
            // On a server of several nodes the lobby's answer to a seek can come after the
            // snapshot of the game it was paired into (docs/PROTOCOL.md): the game wins.
            ServerMessage::Seeking { .. }
                if self.phase == Phase::InGame
                    && self
                        .game
                        .as_ref()
                        .is_some_and(|g| g.seat.is_some() && !g.is_over()) => {}
            ServerMessage::Seeking { settings } => {
                self.phase = Phase::Seeking;
                self.info(
                    "seeking",
                    format!(
                        "Waiting for an opponent ({})…",
                        describe_settings(&settings)
                    ),
                    json!({ "settings": settings }),
                );
            }
            ServerMessage::SeekCancelled => {
                self.info("seek_cancelled", "Seek withdrawn".into(), json!({}))
            }
            ServerMessage::Games { games } if self.phase == Phase::Lobby => self.lobby_games(games),
            ServerMessage::Games { games } if self.rematch_poll.is_some() => {
                send.extend(self.follow_rematch(&games))
            }
            ServerMessage::Games { games } => send.extend(self.on_games(games)),
            ServerMessage::Snapshot(snap) => self.on_snapshot(*snap, at, &mut send),
            ServerMessage::Resumed {
                game, after_seq, ..
            } => {
                if self.game.as_ref().is_some_and(|g| g.id == game) {
                    self.phase = Phase::InGame;
                    self.info(
                        "resumed",
                        format!("Back in game {game}: nothing missed (after event {after_seq})"),
                        json!({ "game": game, "after_seq": after_seq }),
                    );
                }
            }
            ServerMessage::Event(ev) => self.on_event(*ev, at, &mut send),
            ServerMessage::Watchers { game, count } => {
                if let Some(g) = self.game.as_mut().filter(|g| g.id == game) {
                    g.watchers = count;
                }
            }
            ServerMessage::Left { .. } => {}
            ServerMessage::Pong { client_ms, .. } => {
                if let Some(sent) = client_ms {
                    let rtt = self.local_ms(at).saturating_sub(sent);
                    self.round_trip(rtt);
                }
            }
            ServerMessage::Ping { nonce, .. } => send.push(ClientMessage::Pong { nonce }),
            ServerMessage::Lag { rtt_ms } => self.round_trip(rtt_ms),
            ServerMessage::Error {
                code,
                message,
                game,
                ..
            } => self.on_error(&clean(&code), &clean(&message), game, at, &mut send),
        }
        send
    }

    fn round_trip(&mut self, rtt_ms: u64) {
        self.lag_ms = Some(rtt_ms);
        if let Some(g) = self.game.as_mut() {
            g.clock.round_trip(Duration::from_millis(rtt_ms));
        }
    }

    fn on_welcome(
        &mut self,
        player_id: String,
        name: String,
        token: String,
        games: Vec<GameId>,
        at: Instant,
        send: &mut Vec<ClientMessage>,
    ) {
        let first = self.me.is_none();
        let me = Me {
            player_id: clean(&player_id),
            name: clean(&name),
            token,
        };
        if first {
            self.info(
                "welcome",
                format!("Hello {} (player {})", me.name, me.player_id),
                json!({ "player_id": me.player_id, "name": me.name }),
            );
        }
        self.me = Some(me);
        self.config_dirty = true;
        self.after_hello(games, at, send);
    }

    /// Welcomed (as a player with a seat in `games`, or as a guest): carry on.
    fn after_hello(&mut self, games: Vec<GameId>, at: Instant, send: &mut Vec<ClientMessage>) {
        self.last_ping = Some(at);
        send.push(ClientMessage::Ping {
            client_ms: Some(self.local_ms(at)),
            lag_ms: None,
        });
        // Back after a lost connection: pick up where we were.
        if let Some(id) = self.game.as_ref().map(|g| g.id) {
            send.push(self.join_again(id));
            self.phase = Phase::Joining(id);
            return;
        }
        match self.mode.clone() {
            Mode::Play { .. } => {
                let resume = self
                    .resume
                    .filter(|r| games.contains(r))
                    .or(games.last().copied());
                match resume {
                    Some(id) => {
                        self.info(
                            "resuming",
                            format!("Taking your seat in game {} again", short_id(id)),
                            json!({ "game": id }),
                        );
                        send.push(ClientMessage::Join {
                            game: id,
                            after_seq: None,
                        });
                        self.phase = Phase::Joining(id);
                    }
                    None => send.extend(self.find_game()),
                }
            }
            Mode::Watch {
                game: Some(GameRef::Full(id)),
            } => {
                send.push(ClientMessage::Watch {
                    game: id,
                    after_seq: None,
                });
                self.phase = Phase::Joining(id);
            }
            Mode::Watch {
                game: Some(GameRef::Code(code)),
            } => {
                send.push(ClientMessage::WatchCode { code });
                // Errors (`bad_code`, `unknown_code`) end the session as for `join`.
                self.phase = Phase::Seeking;
            }
            Mode::Lobby => send.extend(self.enter_lobby(at)),
            Mode::Watch {
                game: None | Some(GameRef::Short(_)),
            }
            | Mode::Games { .. } => {
                send.push(ClientMessage::ListGames);
                self.phase = Phase::Listing;
            }
        }
    }

    /// A watcher's look at the live games after the game ended: the same two players in
    /// a newer game is their rematch, watched at once.
    fn follow_rematch(&mut self, games: &[GameSummary]) -> Vec<ClientMessage> {
        let Some(g) = self.game.as_ref().filter(|g| g.is_over()) else {
            return Vec::new();
        };
        let mut players = [g.seats[0].player_id.clone(), g.seats[1].player_id.clone()];
        players.sort();
        let next = games.iter().find(|n| {
            let mut pair = [clean(&n.red.player_id), clean(&n.black.player_id)];
            pair.sort();
            n.game > g.id && n.state == "playing" && pair == players
        });
        let Some(next) = next else { return Vec::new() };
        let (old, id) = (g.id, next.game);
        self.rematch_poll = None;
        self.phase = Phase::Joining(id);
        self.info(
            "rematch",
            format!(
                "The players of game {} play again: watching game {}",
                short_id(old),
                short_id(id)
            ),
            json!({ "game": id, "after": old }),
        );
        vec![ClientMessage::Watch {
            game: id,
            after_seq: None,
        }]
    }

    fn on_games(&mut self, mut games: Vec<GameSummary>) -> Vec<ClientMessage> {
        if let Mode::Games {
            player: Some(name), ..
        } = &self.mode
        {
            let name = name.to_lowercase();
            games.retain(|g| {
                g.red.name.to_lowercase() == name || g.black.name.to_lowercase() == name
            });
        }
        let watching = matches!(self.mode, Mode::Watch { .. });
        // Only games still being played: finished ones linger a minute, and `tamsk games`
        // lists them with the stored ones.
        games.retain(|g| g.state == "playing");
        self.games = games;
        self.pick = 0;
        if self.games.is_empty() {
            let text = match &self.mode {
                Mode::Games { player: Some(p) } => {
                    format!("No live games of {}", clean(p))
                }
                _ => "No live games".to_string(),
            };
            self.info("games", text, json!({ "games": [] }));
            self.quit = true;
            self.phase = Phase::Done;
            return Vec::new();
        }
        if let Mode::Watch {
            game: Some(short @ GameRef::Short(_)),
        } = &self.mode
        {
            return match short.resolve(&self.games) {
                Ok(id) => self.watch(id),
                Err(text) => {
                    self.fatal(text);
                    Vec::new()
                }
            };
        }
        for g in self.games.clone() {
            let line = game_line(&g);
            self.emit("game", line, json!({ "summary": g }));
        }
        if watching {
            self.phase = Phase::Picking;
            self.info(
                "pick",
                "Which game? Type its short id (or pick it with the arrow keys and Enter)".into(),
                json!({}),
            );
        } else {
            self.quit = true;
            self.phase = Phase::Done;
        }
        Vec::new()
    }
}
