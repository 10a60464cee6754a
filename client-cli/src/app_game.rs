//! Following a game as an exact replica: the snapshot, each event applied on top, the
//! end, and the errors the server answers with.

use std::time::Instant;

use protocol::game::{Action, Event, Game, Player, Status};
use protocol::wire::{Change, ClientMessage, GameEvent, GameId, Snapshot};
use serde_json::json;

use crate::clock::GameClock;
use crate::gameref::short_id;
use crate::words;

use super::*;

impl App {
    pub(super) fn on_snapshot(
        &mut self,
        snap: Snapshot,
        at: Instant,
        send: &mut Vec<ClientMessage>,
    ) {
        let resumed_play = matches!(self.mode, Mode::Play { .. })
            && self.phase == Phase::Joining(snap.game)
            && self.game.is_none();
        // The snapshot's view carries the entries so far: replayed, they give the exact
        // replica to apply later entries on.
        let replica = match replay(&snap.view) {
            Ok((game, history)) => {
                // The move list is the whole game so far, whatever this client saw of it
                // before (a watcher arriving late, a reconnect, a restarted client).
                self.log.retain(|l| l.kind != LogKind::Event);
                for e in &history {
                    self.log(LogKind::Event, Some(e.at()), words::event(e));
                }
                game
            }
            Err(e) => {
                self.log(
                    LogKind::Error,
                    None,
                    format!(
                        "The server's snapshot of game {} does not replay: {e}",
                        short_id(snap.game)
                    ),
                );
                return;
            }
        };
        let mut clock = GameClock::new(self.base);
        clock.observe(snap.now_ms, at);
        if let Some(rtt) = self.lag_ms {
            clock.round_trip(Duration::from_millis(rtt));
        }
        let view = GameView {
            id: snap.game,
            seat: snap.seat,
            seats: [SeatView::of(&snap.red), SeatView::of(&snap.black)],
            watchers: snap.watchers,
            replica,
            seq: snap.seq,
            clock,
            legal: Vec::new(),
        };
        if resumed_play && view.is_over() {
            let result = words::result(&view.replica).unwrap_or_default();
            self.info(
                "previous",
                format!(
                    "Your game {} is over ({result}): looking for a new one",
                    short_id(view.id)
                ),
                json!({ "game": view.id }),
            );
            send.push(ClientMessage::Leave { game: view.id });
            send.extend(self.find_game());
            return;
        }
        let again = self.game.as_ref().is_some_and(|g| g.id == view.id);
        if !again
            && self
                .status
                .as_ref()
                .is_some_and(|(k, _)| *k == LogKind::Info)
        {
            // "Challenging Bob…", "Taking Ann's seek…": done once the game is here.
            self.status = None;
        }
        self.hosting = None;
        self.challenge_sent = None;
        self.game = Some(view);
        self.phase = Phase::InGame;
        self.last_may = None;
        let g = self.game.as_ref().expect("just set");
        let (id, seat) = (g.id, g.seat);
        let text = match seat {
            Some(p) => format!(
                "Game {}: you play {} against {} ({})",
                short_id(id),
                g.who(p),
                g.who(p.other()),
                describe_settings(g.replica.settings())
            ),
            None => format!(
                "Watching game {}: {} against {} ({})",
                short_id(id),
                g.who(Player::Red),
                g.who(Player::Black),
                describe_settings(g.replica.settings())
            ),
        };
        let data = json!({
            "game": id,
            "seat": seat,
            "red": g.seats[0].name,
            "black": g.seats[1].name,
            "settings": g.replica.settings(),
            "seq": g.seq,
        });
        if again {
            self.info("resynced", format!("Game {} reloaded", short_id(id)), data);
        } else {
            self.info("start", text, data);
        }
        if seat.is_some() {
            self.config_dirty = true;
        }
        if !again {
            self.cursor = self.home_square();
        }
        if self.game.as_ref().is_some_and(|g| g.is_over()) {
            self.game_over();
        } else {
            let turn = self.game.as_ref().map(|g| g.replica.turn());
            if let Some(turn) = turn {
                let who = self.game.as_ref().expect("game").who(turn);
                self.emit("turn", format!("{who} to move"), json!({ "turn": turn }));
            }
            self.refresh_may();
        }
    }

    /// The game to remember in the config file: ours while we hold a live seat in it.
    pub fn seat_game(&self) -> Option<GameId> {
        self.game
            .as_ref()
            .filter(|g| g.seat.is_some() && !g.is_over())
            .map(|g| g.id)
    }

    pub(super) fn resync(&mut self, send: &mut Vec<ClientMessage>) {
        let Some(g) = &self.game else { return };
        let id = g.id;
        send.push(if g.seat.is_some() {
            ClientMessage::Join {
                game: id,
                after_seq: None,
            }
        } else {
            ClientMessage::Watch {
                game: id,
                after_seq: None,
            }
        });
    }

    pub(super) fn on_event(&mut self, ev: GameEvent, at: Instant, send: &mut Vec<ClientMessage>) {
        let Some(g) = self.game.as_mut().filter(|g| g.id == ev.game) else {
            return;
        };
        if ev.seq <= g.seq {
            return; // already applied (a duplicate after a resync)
        }
        if ev.seq != g.seq + 1 {
            let text = format!(
                "Missed events {}..{}: reloading the game",
                g.seq + 1,
                ev.seq - 1
            );
            self.log(LogKind::Error, None, text);
            self.resync(send);
            return;
        }
        g.seq = ev.seq;
        g.clock.observe(ev.now_ms, at);
        // Every engine event, the implied ones too: the replica gives them again.
        let Ok(events) = ev.apply_to(&mut g.replica) else {
            let text =
                "This client's copy of the game differs from the server's: reloading".to_string();
            self.log(LogKind::Error, None, text);
            self.resync(send);
            return;
        };
        let now_ms = ev.now_ms;
        match ev.change {
            Change::Play { .. } => {
                for e in &events {
                    self.on_engine_event(e);
                }
                if self.game.as_ref().is_some_and(|g| g.is_over()) {
                    self.game_over();
                    return;
                }
            }
            Change::Presence {
                player,
                connected,
                grace_until_ms,
            } => {
                let seat = &mut g.seats[player.index()];
                seat.connected = connected;
                seat.grace_until_ms = grace_until_ms;
                seat.grace_expired = false;
                let who = g.who(player);
                let text = match (connected, grace_until_ms) {
                    (true, _) => format!("{who} is back"),
                    (false, Some(t)) => format!(
                        "{who} lost the connection: the seat is kept until {}",
                        words::seconds(t)
                    ),
                    (false, None) => format!("{who} lost the connection"),
                };
                self.log(LogKind::Event, Some(now_ms), text.clone());
                self.emit(
                    "presence",
                    text,
                    json!({ "player": player, "connected": connected, "grace_until_ms": grace_until_ms }),
                );
            }
            Change::Lag { player, rtt_ms, .. } => {
                // Shown beside the seat; not worth a log line every few seconds.
                g.seats[player.index()].lag_ms = Some(rtt_ms);
            }
            Change::GraceExpired { player } => {
                let seat = &mut g.seats[player.index()];
                seat.grace_expired = true;
                let at = seat.grace_until_ms.unwrap_or(now_ms);
                let mut text = format!("{} did not come back in time", g.who(player));
                if g.seat == Some(player.other()) {
                    text.push_str(": you may claim the win (W, or type 'win')");
                }
                self.log(LogKind::Event, Some(at), text.clone());
                self.emit("grace_expired", text, json!({ "player": player }));
            }
        }
        self.refresh_may();
    }

    pub(super) fn on_engine_event(&mut self, e: &Event) {
        if matches!(e, Event::TurnStarted { .. })
            && self
                .status
                .as_ref()
                .is_some_and(|(k, _)| *k == LogKind::Error)
        {
            // A refusal is about the turn it happened in: a new turn makes it stale.
            self.status = None;
        }
        let text = words::event(e);
        self.log(LogKind::Event, Some(e.at()), text.clone());
        let data = json!({ "at_ms": e.at(), "event": e });
        let kind = match e {
            Event::TurnStarted { .. } => "turn",
            _ => "event",
        };
        self.emit(kind, text, data);
    }

    pub(super) fn game_over(&mut self) {
        let Some(g) = &self.game else { return };
        let text = words::result(&g.replica).unwrap_or_default();
        let outcome = g.replica.outcome().cloned();
        let mut data = json!({
            "game": g.id,
            "status": match g.replica.status() {
                Status::Playing => "playing",
                Status::Finished { .. } => "finished",
                Status::Aborted { .. } => "aborted",
            },
            "winner": outcome.as_ref().and_then(|o| o.winner),
            "rings": g.replica.rings(),
            "outcome": outcome,
            "seat": g.seat,
        });
        let lineup = outcome.as_ref().map(words::lineup).unwrap_or_default();
        data["lineup"] = json!(lineup);
        let mut full = format!("Result: {text}");
        if !lineup.is_empty() {
            full.push_str(&format!(
                "; tiebreak, last living hourglass first: {}",
                lineup.join(", ")
            ));
        }
        self.emit("result", full, data);
        self.config_dirty = true;
        self.confirm = None;
        self.input = None;
        if self.quit_when_over {
            self.quit = true;
            self.phase = Phase::Done;
        }
    }

    /// Recomputes what our seat may do; prints it when it changed.
    pub(super) fn refresh_may(&mut self) {
        let Some(g) = self.game.as_mut() else { return };
        let Some(seat) = g.seat else { return };
        g.legal = g.replica.legal_actions(seat);
        if g.is_over() {
            return;
        }
        let may = words::may(&g.replica, seat, &g.legal);
        if self.last_may.as_ref() == Some(&may) {
            return;
        }
        self.last_may = Some(may.clone());
        let actions: Vec<String> = g
            .legal
            .iter()
            .filter(|a| !matches!(a, Action::Resign))
            .map(to_notation)
            .collect();
        let losing: Vec<String> = g
            .legal
            .iter()
            .filter(|a| matches!(a, Action::Move { to, .. } if g.replica.is_full(*to)))
            .map(to_notation)
            .collect();
        let turn = g.replica.turn();
        let text = if may.is_empty() {
            "You may: nothing now (wait)".to_string()
        } else {
            format!("You may: {}", may.join("; "))
        };
        self.emit(
            "may",
            text,
            json!({ "seat": seat, "turn": turn, "actions": actions, "losing": losing }),
        );
    }

    pub(super) fn on_error(
        &mut self,
        code: &str,
        message: &str,
        game: Option<GameId>,
        at: Instant,
        send: &mut Vec<ClientMessage>,
    ) {
        match (&self.phase, code) {
            // On several nodes: the game left this connection's node (it lost its lease:
            // a stall, a NATS outage). Joined again, which reaches the node running it now.
            (Phase::InGame, "game_moved")
                if game.is_some() && self.game.as_ref().map(|g| g.id) == game =>
            {
                let id = game.expect("checked");
                self.phase = Phase::Joining(id);
                send.push(self.join_again(id));
                self.info(
                    "rejoining",
                    format!(
                        "Game {} moved to another server: joining it again",
                        short_id(id)
                    ),
                    json!({ "game": id, "code": code }),
                );
                return;
            }
            // Not served yet: the game's node is gone and another takes it over, or it
            // is busy. Asked again in a moment.
            (Phase::Joining(id), code) if protocol::wire::is_try_again(code) => {
                let id = *id;
                self.rejoin = Some((at + super::REJOIN_AFTER, self.join_again(id)));
                self.info(
                    "rejoining",
                    format!(
                        "Game {} cannot be joined this instant ({message}): trying again in a second",
                        short_id(id)
                    ),
                    json!({ "game": id, "code": code }),
                );
                return;
            }
            (Phase::Hello, "unknown_token") => {
                self.token = None;
                let hello = self.hello();
                let again = if matches!(hello, ClientMessage::Hello { guest: true, .. }) {
                    "going on as a guest"
                } else {
                    "registering again"
                };
                self.info(
                    "token",
                    format!("The server does not know our token (restarted?): {again}"),
                    json!({}),
                );
                send.push(hello);
                return;
            }
            (Phase::Hello, _) => {
                self.fatal_code(format!("The server refused us: {message}"), Some(code));
                return;
            }
            (Phase::Joining(id), "unknown_game" | "not_a_player")
                if matches!(self.mode, Mode::Play { .. }) && self.game.is_none() =>
            {
                let id = *id;
                self.info(
                    "previous",
                    format!("Game {} is no longer on the server (it ended, or the server restarted without it): looking for a new one", short_id(id)),
                    json!({ "game": id }),
                );
                send.extend(self.find_game());
                self.config_dirty = true;
                return;
            }
            (Phase::Joining(_), "unknown_game" | "not_a_player") if self.game.is_none() => {
                self.fatal(format!("Cannot follow that game: {message}"));
                return;
            }
            (Phase::Joining(_), "unknown_game") => {
                // The game we were following is gone: it ended and was cleared while we
                // were away, or the server restarted without it.
                let id = self
                    .game
                    .as_ref()
                    .map(|g| short_id(g.id))
                    .unwrap_or_default();
                self.fatal(format!(
                    "Game {id} is no longer on the server: it ended and was cleared while we were away, or the server restarted without keeping it ({message})"
                ));
                return;
            }
            // A challenge from the lobby refused: back to the lobby, told why.
            (
                Phase::Seeking,
                "unknown_player" | "ambiguous_player" | "own_challenge" | "too_many_challenges",
            ) if self.from_lobby && self.game.is_none() => {
                self.return_to_lobby(LogKind::Error, format!("No game: {message}"));
                send.extend(self.back_to_lobby());
                return;
            }
            (
                Phase::Seeking,
                "unknown_player"
                | "ambiguous_player"
                | "own_challenge"
                | "too_many_challenges"
                | "unknown_code"
                | "bad_code"
                | "bad_message",
            ) if self.game.is_none() => {
                self.fatal_code(format!("No game: {message}"), Some(code));
                return;
            }
            (_, "shutting_down") => {
                self.fatal(format!("The server is shutting down: {message}"));
                return;
            }
            // The seek taken in the lobby was gone (taken or withdrawn): back to the lobby.
            (Phase::Seeking, "unknown_seek" | "own_seek") if self.game.is_none() => {
                self.mode = Mode::Lobby;
                self.from_lobby = false;
                send.extend(self.back_to_lobby());
            }
            _ => {}
        }
        let text = match game {
            Some(id) => format!("Refused in game {}: {message}", short_id(id)),
            None => format!("Refused: {message}"),
        };
        // People read the message; the code is for programs (it is in the JSON line).
        self.log(LogKind::Error, None, text.clone());
        self.status = Some((LogKind::Error, message.to_string()));
        self.emit(
            "error",
            text,
            json!({ "code": code, "message": message, "game": game }),
        );
    }

    /// The join (a seat of ours) or watch of game `id` to send again (after a lost
    /// connection, or when it could not be served yet): from where we are in it, if we
    /// follow it.
    pub(super) fn join_again(&self, id: GameId) -> ClientMessage {
        let here = self.game.as_ref().filter(|g| g.id == id);
        let seated = match here {
            Some(g) => g.seat.is_some(),
            None => matches!(self.mode, Mode::Play { .. }),
        };
        if seated {
            return ClientMessage::Join {
                game: id,
                after_seq: here.map(|g| g.seq),
            };
        }
        if let Mode::Watch {
            game: Some(crate::gameref::GameRef::Code(code)),
        } = &self.mode
        {
            // A private game lets a watcher in by its code only (a fresh snapshot).
            return ClientMessage::WatchCode { code: code.clone() };
        }
        ClientMessage::Watch {
            game: id,
            after_seq: here.map(|g| g.seq),
        }
    }

    /// What the player may do now, in words (for the UI).
    pub fn may_lines(&self) -> Vec<String> {
        let Some(g) = &self.game else {
            return Vec::new();
        };
        match g.seat {
            Some(seat) if !g.is_over() => words::may(&g.replica, seat, &g.legal),
            _ => Vec::new(),
        }
    }
}

/// The snapshot's entries replayed on a new game: the exact replica, and every event of
/// the game so far (for the move list).
pub(super) fn replay(
    view: &protocol::view::GameView,
) -> Result<(Game, Vec<Event>), protocol::view::ReplayError> {
    let mut game = Game::new(view.settings.clone());
    let mut events = Vec::new();
    for (index, entry) in view.entries.iter().enumerate() {
        let evs = entry
            .apply_to(&mut game)
            .map_err(|error| protocol::view::ReplayError { index, error })?;
        events.extend(evs);
    }
    if game.now() < view.at_ms {
        // As GameView::replica: time passed without an event, in which nothing happens.
        game.advance(view.at_ms);
    }
    Ok((game, events))
}
