//! The player's input: typed commands (plain mode, and `:` on the full screen) and keys
//! (full screen), turned into messages for the server. Part of [`super::App`].

use super::*;

impl App {
    // ----- typed commands -----

    /// A typed line (plain mode's stdin, or the full-screen UI's `:` prompt).
    pub fn on_line(&mut self, line: &str, _at: Instant) -> Vec<ClientMessage> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let lower = line.to_ascii_lowercase();
        match lower.as_str() {
            "quit" | "exit" | "q" => {
                self.quit = true;
                return Vec::new();
            }
            "help" | "?" => {
                // Plain mode prints the commands; the full screen shows the help box (the
                // status line is too short for them).
                self.help = true;
                self.status = None;
                self.emit("help", HELP_LINE.to_string(), json!({}));
                return Vec::new();
            }
            _ => {}
        }
        if self.phase == Phase::Picking {
            return match GameRef::parse(line).and_then(|r| r.resolve(&self.games)) {
                Ok(id) => self.watch(id),
                Err(text) => {
                    self.refuse(text);
                    Vec::new()
                }
            };
        }
        if lower == "new" {
            return self.new_game();
        }
        let mut words = lower.split_whitespace();
        let (first, second) = (words.next().unwrap_or_default(), words.next());
        if matches!(first, "accept" | "decline") && words.next().is_none() {
            let id = match second.map(|w| w.trim_start_matches('#').parse::<ChallengeId>()) {
                None => None,
                Some(Ok(id)) => Some(id),
                Some(Err(_)) if first == "decline" && second == Some("rematch") => {
                    return self.rematch(true);
                }
                Some(Err(_)) => {
                    self.refuse(format!(
                        "'{}': accept or decline, then a challenge number",
                        clean(line)
                    ));
                    return Vec::new();
                }
            };
            return self.answer_challenge(id, first == "accept");
        }
        if lower == "rematch" {
            return self.rematch(false);
        }
        let Some(g) = &self.game else {
            self.refuse("No game yet: wait for an opponent");
            return Vec::new();
        };
        let (id, seat) = (g.id, g.seat);
        // The last event seen: an action decided on it is refused if the turn changed
        // since (`stale_action`), rather than played in a position not seen.
        let seq = Some(g.seq);
        let Some(seat) = seat else {
            self.refuse("You are watching: only the players act");
            return Vec::new();
        };
        if lower == "win" || lower == "claim win" {
            return vec![ClientMessage::ClaimAbandonment { game: id }];
        }
        let action = match self.parse_typed(line, seat) {
            Ok(a) => a,
            Err(e) => {
                self.refuse(e);
                return Vec::new();
            }
        };
        self.status = None;
        vec![ClientMessage::Act {
            game: id,
            action,
            seq,
        }]
    }

    /// Notation, plus `drop SQUARE`: the regular drop when SQUARE is our destination, the
    /// penalty ring elsewhere.
    fn parse_typed(&self, line: &str, seat: Player) -> Result<Action, String> {
        let mut words = line.split_whitespace();
        if let (Some(w), Some(at), None) = (words.next(), words.next(), words.next()) {
            if w.eq_ignore_ascii_case("drop") {
                let at: Square = at.parse().map_err(|e| format!("'{}': {e}", clean(at)))?;
                let own = self
                    .game
                    .as_ref()
                    .and_then(|g| g.replica.window(seat))
                    .is_some_and(|w| w.square == at && w.drop_open);
                return Ok(if own {
                    Action::Drop
                } else {
                    Action::PenaltyDrop { at }
                });
            }
        }
        parse_action(line).map_err(|e| {
            format!(
                "{} (at column {}). Type 'help' for the commands",
                clean(&e.to_string()),
                line[..e.offset.min(line.len())].chars().count() + 1
            )
        })
    }

    pub(super) fn watch(&mut self, id: GameId) -> Vec<ClientMessage> {
        self.phase = Phase::Joining(id);
        self.mode = Mode::Watch {
            game: Some(GameRef::Full(id)),
        };
        vec![ClientMessage::Watch {
            game: id,
            after_seq: None,
        }]
    }

    /// The message that finds a game the way we were asked to.
    pub(super) fn find_game(&mut self) -> Vec<ClientMessage> {
        let Mode::Play { settings, find } = self.mode.clone() else {
            return Vec::new();
        };
        self.phase = Phase::Seeking;
        let rated = self.rated;
        vec![match find {
            Find::Seek => ClientMessage::Seek { settings, rated },
            Find::Bot(level) => ClientMessage::PlayBot {
                settings,
                level,
                rated,
            },
            Find::Challenge(to) => ClientMessage::Challenge {
                to,
                settings,
                rated,
            },
            Find::Host => ClientMessage::Host { settings },
            Find::Code(code) => ClientMessage::JoinCode { code },
        }]
    }

    /// After a game: another one, found the same way (a code is used up: then a seek).
    fn new_game(&mut self) -> Vec<ClientMessage> {
        let over = self.game.as_ref().is_none_or(|g| g.is_over());
        match &mut self.mode {
            Mode::Play { find, .. } if over && self.phase == Phase::InGame => {
                if matches!(find, Find::Code(_)) {
                    *find = Find::Seek;
                }
                self.game = None;
                self.last_may = None;
                self.status = None;
                self.find_game()
            }
            _ => {
                self.refuse("'new' starts another game once this one is over");
                Vec::new()
            }
        }
    }

    /// After a game: offer (or accept) a rematch, colours swapped; or decline one.
    fn rematch(&mut self, decline: bool) -> Vec<ClientMessage> {
        match &self.game {
            Some(g) if g.is_over() && g.seat.is_some() => {
                let game = g.id;
                vec![if decline {
                    ClientMessage::DeclineRematch { game }
                } else {
                    ClientMessage::Rematch { game }
                }]
            }
            _ => {
                self.refuse("A rematch is for the players, once the game is over");
                Vec::new()
            }
        }
    }

    /// Answers a challenge we received (the latest, or the one with this id).
    fn answer_challenge(&mut self, id: Option<ChallengeId>, accept: bool) -> Vec<ClientMessage> {
        let found = match id {
            Some(id) => self.challenges.iter().position(|c| c.0 == id),
            None => self.challenges.len().checked_sub(1),
        };
        let Some(i) = found else {
            self.refuse("No challenge to answer");
            return Vec::new();
        };
        let (challenge, _, _) = self.challenges.remove(i);
        if self.confirm == Some(Confirm::Challenge(challenge)) {
            self.confirm = None;
        }
        vec![if accept {
            ClientMessage::AcceptChallenge { challenge }
        } else {
            ClientMessage::DeclineChallenge { challenge }
        }]
    }

    // ----- keys (full-screen UI) -----

    pub fn on_key(&mut self, key: KeyEvent, at: Instant) -> Vec<ClientMessage> {
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('d'))
        {
            self.quit = true;
            return Vec::new();
        }
        if let Some(text) = self.input.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    let line = std::mem::take(text);
                    self.input = None;
                    return self.on_line(&line, at);
                }
                KeyCode::Esc => self.input = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) if text.chars().count() < 40 && crate::sanitize::safe(c) => {
                    text.push(c)
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(confirm) = self.confirm.take() {
            self.status = None;
            if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                match confirm {
                    Confirm::Challenge(id) => return self.answer_challenge(Some(id), true),
                    Confirm::Quit => self.quit = true,
                    Confirm::Resign => {
                        if let Some((id, seq)) = self.game.as_ref().map(|g| (g.id, g.seq)) {
                            return vec![ClientMessage::Act {
                                game: id,
                                action: Action::Resign,
                                seq: Some(seq),
                            }];
                        }
                    }
                }
            } else if let Confirm::Challenge(id) = confirm {
                return self.answer_challenge(Some(id), false);
            } else {
                self.hint("Cancelled");
            }
            return Vec::new();
        }
        if self.help {
            self.help = false;
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('?') => {
                self.help = true;
                return Vec::new();
            }
            KeyCode::Char(':') | KeyCode::Char('/') => {
                self.input = Some(String::new());
                self.status = None;
                return Vec::new();
            }
            _ => {}
        }
        if self.phase == Phase::Picking {
            return self.pick_key(key);
        }
        if self.phase == Phase::Lobby {
            return self.lobby_key(key);
        }
        let over = self.game.as_ref().is_none_or(|g| g.is_over());
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => {
                if over || self.game.as_ref().is_some_and(|g| g.seat.is_none()) {
                    self.quit = true;
                } else {
                    self.confirm = Some(Confirm::Quit);
                    self.hint("Leave? Your seat is kept for the reconnection grace (y/n)");
                }
                return Vec::new();
            }
            KeyCode::Char('n') if over => return self.new_game(),
            KeyCode::Char('r') if over => return self.rematch(false),
            _ => {}
        }
        let Some(g) = &self.game else {
            return Vec::new();
        };
        // Moving the cursor works for watchers too.
        if let Some(to) = self.cursor_key(key.code) {
            self.cursor = to;
            return Vec::new();
        }
        let (id, Some(seat)) = (g.id, g.seat) else {
            return Vec::new();
        };
        let seq = Some(g.seq);
        if over {
            return Vec::new();
        }
        let act = |action| {
            vec![ClientMessage::Act {
                game: id,
                action,
                seq,
            }]
        };
        self.status = None;
        match key.code {
            KeyCode::Char(c @ '1'..='3') => {
                let glass = seat.glasses()[(c as u8 - b'1') as usize];
                let state = *g.replica.glass(glass);
                match state.square {
                    Some(from) => {
                        self.cursor = from;
                        self.start_or_hint(id, seat, from)
                    }
                    None => {
                        self.hint(format!(
                            "{glass} is beside the board: move the cursor to a free socket and press Enter"
                        ));
                        Vec::new()
                    }
                }
            }
            KeyCode::Enter | KeyCode::Char(' ') => self.enter(id, seat, true),
            KeyCode::Char('.') => self.enter(id, seat, false),
            KeyCode::Char('d') => act(Action::Drop),
            KeyCode::Char('c') => act(Action::Claim),
            KeyCode::Char('f') => act(Action::Flip),
            KeyCode::Char('p') => act(Action::PenaltyDrop { at: self.cursor }),
            KeyCode::Char('W') => vec![ClientMessage::ClaimAbandonment { game: id }],
            KeyCode::Char('R') => {
                self.confirm = Some(Confirm::Resign);
                self.hint("Resign this game? (y/n)");
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn pick_key(&mut self, key: KeyEvent) -> Vec<ClientMessage> {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.pick = self.pick.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.pick = (self.pick + 1).min(self.games.len().saturating_sub(1))
            }
            KeyCode::Enter => {
                if let Some(id) = self.games.get(self.pick).map(|g| g.game) {
                    return self.watch(id);
                }
            }
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            // A short id as listed (`#0c1d2e3f`), or a full id: typed on the status line,
            // Enter watches the game it names (Backspace and Esc as at the `:` prompt).
            KeyCode::Char(c) if c == '#' || c.is_ascii_hexdigit() => {
                self.input = Some(c.to_string());
                self.status = None;
            }
            _ => {}
        }
        Vec::new()
    }

    /// Where an arrow (or hjkl) key moves the board cursor.
    fn cursor_key(&self, code: KeyCode) -> Option<Square> {
        let c = self.cursor;
        let (col, row) = (c.col(), c.row());
        match code {
            KeyCode::Up | KeyCode::Char('k') => Square::new(col, row + 1).or(Some(c)),
            KeyCode::Down | KeyCode::Char('j') => Some(
                row.checked_sub(1)
                    .and_then(|r| Square::new(col, r))
                    .unwrap_or(c),
            ),
            KeyCode::Left | KeyCode::Char('h') => Some(nearest_in(col.checked_sub(1), c)),
            KeyCode::Right | KeyCode::Char('l') => Some(nearest_in(Some(col + 1), c)),
            _ => None,
        }
    }

    fn start_or_hint(&mut self, id: GameId, seat: Player, from: Square) -> Vec<ClientMessage> {
        let g = self.game.as_ref().expect("in a game");
        let seq = Some(g.seq);
        let start = Action::Start { from };
        if g.legal.contains(&start) {
            // The cursor goes to the first place it may go.
            if let Some(to) = from
                .neighbours()
                .iter()
                .copied()
                .find(|&to| g.replica.occupant(to).is_none() && !g.replica.is_full(to))
            {
                self.cursor = to;
            }
            self.hint(format!(
                "Picked up from {from}: move the cursor and press Enter to put it down (. without dropping)"
            ));
            return vec![ClientMessage::Act {
                game: id,
                action: start,
                seq,
            }];
        }
        // Say why, in the engine's words.
        let why = g
            .replica
            .check(seat, start)
            .err()
            .map_or("it cannot move now".to_string(), |e| e.to_string());
        self.refuse(format!("Cannot pick up the hourglass on {from}: {why}"));
        Vec::new()
    }

    /// Enter (with drop) or `.` (without) on the cursor: put down what is in hand, pick up
    /// the hourglass under the cursor, place one (placement set-up), drop the penalty ring.
    fn enter(&mut self, id: GameId, seat: Player, drop: bool) -> Vec<ClientMessage> {
        let g = self.game.as_ref().expect("in a game");
        let seq = Some(g.seq);
        let at = self.cursor;
        let replica = &g.replica;
        let holding = replica
            .held()
            .into_iter()
            .chain(replica.late())
            .find(|h| h.player == seat)
            .copied();
        let act = |action| ClientMessage::Act {
            game: id,
            action,
            seq,
        };
        if let Some(h) = holding {
            let release = Action::Release { to: at };
            if let Err(e) = replica.check(seat, release) {
                self.refuse(format!("Cannot put {} down on {at}: {e}", h.glass));
                return Vec::new();
            }
            let mut out = vec![act(release)];
            if drop {
                // Drop at once, if the rules will allow it after this release.
                let mut after = replica.clone();
                if after.apply(seat, release, replica.now()).is_ok()
                    && after.check(seat, Action::Drop).is_ok()
                {
                    out.push(act(Action::Drop));
                }
            }
            return out;
        }
        if let Some(glass) = replica.occupant(at) {
            if glass.owner() == seat {
                return self.start_or_hint(id, seat, at);
            }
        }
        if let Some(glass) = seat
            .glasses()
            .into_iter()
            .find(|g| replica.glass(*g).square.is_none())
        {
            return vec![act(Action::Place {
                glass,
                to: at,
                drop,
            })];
        }
        if g.legal.contains(&Action::PenaltyDrop { at }) {
            return vec![act(Action::PenaltyDrop { at })];
        }
        if replica.window(seat).is_some_and(|w| w.square == at) && g.legal.contains(&Action::Drop) {
            return vec![act(Action::Drop)];
        }
        if replica.window(seat.other()).is_some_and(|w| w.square == at)
            && g.legal.contains(&Action::Claim)
        {
            return vec![act(Action::Claim)];
        }
        self.refuse(format!(
            "Nothing to do on {at}: pick one of your hourglasses (1 2 3, or the cursor and Enter)"
        ));
        Vec::new()
    }

    /// Where the cursor starts: our first hourglass on the board.
    pub(super) fn home_square(&self) -> Square {
        let Some(g) = &self.game else { return sq("d4") };
        g.seat
            .and_then(|p| {
                p.glasses()
                    .into_iter()
                    .find_map(|gl| g.replica.glass(gl).square)
            })
            .unwrap_or(sq("d4"))
    }
}

/// The square of column `col` nearest on screen to `from`.
fn nearest_in(col: Option<u8>, from: Square) -> Square {
    let Some(col) = col.filter(|&c| c < 7) else {
        return from;
    };
    let top = protocol::render::cell(from).top as i64;
    Square::ALL
        .into_iter()
        .filter(|s| s.col() == col)
        .min_by_key(|s| {
            let t = protocol::render::cell(*s).top as i64;
            // Ties (half a hex up or down): the same row number, so that left then
            // right comes back.
            ((t - top).abs(), s.row() != from.row())
        })
        .unwrap_or(from)
}
