//! What a connection does with each client message: the dispatch, and the ways it
//! starts, joins and tells games.

use std::sync::Arc;

use protocol::wire::{ClientMessage, GameId, LobbyMessage, ServerMessage, LIST_LIMIT};
use tokio::time::Instant;

use crate::hub::tournament::TournamentOp;
use crate::lobby::{game_code, Refusal, SeekResult};
use crate::peer::{PlayerRec, Seeker};
use crate::rooms::GameCmd;

use super::*;

impl Conn {
    pub(super) async fn handle(&mut self, msg: ClientMessage, received: Instant) {
        let msg = crate::request::with_fixed_rules(msg, &self.hub.config);
        // The reserve is for players coming back to a live game: their hello, nothing else
        // (a `ping` before hello held a reserved slot as long as it went on).
        if self.reserve && self.me.is_none() && !matches!(msg, ClientMessage::Hello { .. }) {
            self.refuse_full();
            return;
        }
        let me = match (&msg, &self.me) {
            (ClientMessage::Hello { .. }, _) => None,
            (ClientMessage::Ping { .. } | ClientMessage::Pong { .. }, _) => None,
            (_, Some(me)) => Some(me.clone()),
            // A guest follows games and the lobby; nothing that needs a seat.
            (
                ClientMessage::ListGames
                | ClientMessage::ListSeeks
                | ClientMessage::ListPlayers
                | ClientMessage::Watch { .. }
                | ClientMessage::WatchCode { .. }
                | ClientMessage::Leave { .. },
                None,
            ) if self.guest => None,
            (_, None) if self.guest => {
                self.error(
                    "guest",
                    "a guest may only list games and seeks and watch: to play, connect again and say hello with a name (or your token)",
                    crate::request::game_of(&msg),
                );
                return;
            }
            (_, None) => {
                self.error(
                    "hello_first",
                    "say hello first: {\"type\":\"hello\",\"version\":1,\"name\":\"...\"}",
                    None,
                );
                return;
            }
        };
        // Several nodes: the lobby and the list of games are every node's.
        if self.across_nodes(&msg, &me).await {
            return;
        }
        match msg {
            ClientMessage::Hello {
                version,
                name,
                token,
                guest: true,
            } => self.hello_guest(version, name.is_some() || token.is_some()),
            ClientMessage::Hello {
                version,
                name,
                token,
                guest: false,
            } => self.hello(version, name, token).await,
            ClientMessage::Ping { client_ms, lag_ms } => {
                if let Some(lag) = lag_ms {
                    // Lower, it judges at once: the games are told as of a measurement.
                    self.lag.client_says(lag);
                    self.lag_changed(received);
                }
                self.send(&ServerMessage::Pong {
                    client_ms,
                    server_ms: unix_ms(),
                    lag_ms: self.lag.ms(),
                })
            }
            // The server measures lag with websocket pings: no JSON ping awaits an answer.
            ClientMessage::Pong { nonce } => self.error(
                "unknown_nonce",
                format!(
                    "no ping with nonce {nonce} is waiting for an answer: the server measures \
                     lag with websocket pings"
                ),
                None,
            ),
            ClientMessage::Seek { settings, rated } => {
                let Some(seeker) = self.new_game_seeker(me, false) else {
                    return;
                };
                if let Err(refusal) = self.hub.may_seek(&seeker.player.id, self.peer.conn) {
                    self.refuse(refusal);
                    return;
                }
                match self.hub.seek(settings.clone(), rated, seeker) {
                    SeekResult::Waiting(_) => self.send(&ServerMessage::Seeking { settings }),
                    SeekResult::Paired(id) => {
                        self.games.insert(id);
                    }
                }
            }
            ClientMessage::CancelSeek => {
                if self.hub.cancel_seek(self.peer.conn) {
                    self.send(&ServerMessage::SeekCancelled);
                } else {
                    self.error("not_seeking", "you have no seek to cancel", None);
                }
            }
            ClientMessage::ListSeeks => {
                let seeks = self.hub.list_seeks();
                self.reply_peer().send_lobby(&LobbyMessage::Seeks { seeks });
            }
            ClientMessage::ListPlayers => {
                let (players, online) = self.hub.list_players();
                let online = online as u32;
                self.reply_peer()
                    .send_lobby(&LobbyMessage::Players { players, online });
            }
            ClientMessage::AcceptSeek { seek } => {
                let Some(seeker) = self.new_game_seeker(me, true) else {
                    return;
                };
                let started = self.hub.accept_seek(seek, seeker);
                self.started(started);
            }
            ClientMessage::Host { settings } => {
                let Some(seeker) = self.new_game_seeker(me, false) else {
                    return;
                };
                let code = self.hub.host(settings.clone(), seeker);
                self.reply_peer()
                    .send_lobby(&LobbyMessage::Hosting { code, settings });
            }
            ClientMessage::JoinCode { code } => {
                let Some(seeker) = self.new_game_seeker(me, true) else {
                    return;
                };
                let started = self.hub.join_code(&code, seeker);
                self.started(started);
            }
            ClientMessage::Challenge {
                to,
                settings,
                rated,
            } => {
                let Some(seeker) = self.new_game_seeker(me, true) else {
                    return;
                };
                if let Err(refusal) = self.hub.challenge(seeker, &to, settings, rated) {
                    self.refuse(refusal);
                }
            }
            ClientMessage::AcceptChallenge { challenge } => {
                let Some(seeker) = self.new_game_seeker(me, true) else {
                    return;
                };
                let started = self.hub.accept_challenge(challenge, seeker);
                self.started(started);
            }
            ClientMessage::PlayBot {
                settings,
                level,
                rated,
            } => {
                let Some(seeker) = self.new_game_seeker(me, true) else {
                    return;
                };
                let id = self.hub.play_bot(settings, level, rated, seeker);
                self.games.insert(id);
            }
            msg @ (ClientMessage::TournamentCreate { .. }
            | ClientMessage::TournamentJoin { .. }
            | ClientMessage::TournamentWithdraw { .. }
            | ClientMessage::TournamentCancel { .. }) => {
                let op = TournamentOp::of(&msg).expect("a tournament message");
                let creates = matches!(op, TournamentOp::Create(_));
                if creates && self.new_game_seeker(me.clone(), false).is_none() {
                    return;
                }
                self.tournament(me, op).await;
            }
            ClientMessage::DeclineChallenge { challenge } => {
                let me = me.expect("checked");
                if let Err(refusal) = self.hub.decline_challenge(challenge, &me) {
                    self.refuse(refusal);
                }
            }
            ClientMessage::CancelChallenge { challenge } => {
                let me = me.expect("checked");
                if let Err(refusal) = self.hub.cancel_challenge(challenge, &me) {
                    self.refuse(refusal);
                }
            }
            ClientMessage::Rematch { game } => {
                // Before the shutdown answer, which would name the game (`to_game` checks
                // the others).
                if self
                    .hub
                    .games
                    .get(&game)
                    .is_some_and(|h| self.hidden(&h, game))
                {
                    return self.unknown_game(game);
                }
                if self.hub.closed_for_new_games() {
                    self.error("shutting_down", "the server is shutting down", Some(game));
                    return;
                }
                let player = me.expect("checked");
                self.to_game(
                    game,
                    GameCmd::Rematch {
                        peer: self.reply_peer(),
                        player,
                        accept: true,
                    },
                );
            }
            ClientMessage::DeclineRematch { game } => {
                let player = me.expect("checked");
                self.to_game(
                    game,
                    GameCmd::Rematch {
                        peer: self.reply_peer(),
                        player,
                        accept: false,
                    },
                );
            }
            ClientMessage::ListGames => {
                let (games, _more) = self.hub.summaries(None, LIST_LIMIT);
                self.send(&ServerMessage::Games { games });
            }
            ClientMessage::Watch { game, after_seq } => match self.hub.game(game) {
                // A private game is there only for its players (who `join`) and for
                // watchers who have its code (`watch_code`).
                Some(h)
                    if h.code.is_some()
                        && !h
                            .seats
                            .iter()
                            .any(|s| Some(&s.id) == me.as_ref().map(|m| &m.id)) =>
                {
                    self.unknown_game(game)
                }
                _ => self.subscribe(game, None, after_seq),
            },
            ClientMessage::WatchCode { code } => match self.hub.game_of_code(&code) {
                Ok(game) => self.subscribe(game, None, None),
                Err(refused) => self.watch_code_elsewhere(&code, refused),
            },
            ClientMessage::Join { game, after_seq } => {
                let me = me.expect("checked");
                match self.hub.game(game) {
                    Some(h) if h.seats.iter().any(|s| s.id == me.id) => {
                        self.subscribe(game, Some(me), after_seq)
                    }
                    // A private game is not there for others (see `Watch`).
                    Some(h) if h.code.is_some() => self.unknown_game(game),
                    Some(_) => self.error(
                        "not_a_player",
                        "you have no seat in this game: use watch to follow it",
                        Some(game),
                    ),
                    // Maybe on another node: its owner checks the seat.
                    None if self.hub.cluster.get().is_some() => {
                        self.subscribe(game, Some(me), after_seq)
                    }
                    None => self.unknown_game(game),
                }
            }
            ClientMessage::Leave { game } => {
                // Handed while still counted as followed (a stranger's leave is refused).
                self.to_game(
                    game,
                    GameCmd::Unsubscribe {
                        conn: self.peer.conn,
                        reply: Some(self.reply_peer()),
                    },
                );
                self.games.remove(&game);
            }
            ClientMessage::Act { game, action, seq } => {
                let player = me.expect("checked");
                self.to_game(
                    game,
                    GameCmd::Act {
                        peer: self.reply_peer(),
                        player,
                        action,
                        received,
                        seen: seq,
                    },
                );
            }
            ClientMessage::ClaimAbandonment { game } => {
                let player = me.expect("checked");
                self.to_game(
                    game,
                    GameCmd::ClaimAbandonment {
                        peer: self.reply_peer(),
                        player,
                    },
                );
            }
        }
    }

    /// This connection as a seeker for a new game, unless the server takes no new games.
    /// `answers`: the new game's snapshot (or `challenge_sent`) answers the message being
    /// handled (and echoes its id); a waiting seek's later snapshot does not.
    pub(super) fn new_game_seeker(
        &self,
        me: Option<Arc<PlayerRec>>,
        answers: bool,
    ) -> Option<Seeker> {
        if self.hub.closed_for_new_games() {
            self.error("shutting_down", "the server is shutting down", None);
            return None;
        }
        if self.store_busy() {
            return None;
        }
        Some(Seeker {
            player: me.expect("checked"),
            peer: if answers {
                self.reply_peer()
            } else {
                self.peer.clone()
            },
        })
    }

    /// Whether the database is too far behind to take a new game or player (told so).
    pub(super) fn store_busy(&self) -> bool {
        let busy = self
            .hub
            .store
            .backlogged(self.hub.config.store_backlog_limit);
        if busy {
            self.error(
                "server_busy",
                "the server is catching up with its storage: try again in a moment",
                None,
            );
        }
        busy
    }

    /// A tournament message, served by this node's hub.
    async fn tournament(&self, me: Option<Arc<PlayerRec>>, op: TournamentOp) {
        let me = me.expect("checked");
        match self.hub.tournaments.serve(&self.hub, &me, op).await {
            Ok(answer) => {
                self.reply_peer().send_lobby(&answer);
            }
            Err(refusal) => self.refuse(refusal),
        }
    }

    fn refuse(&self, (code, message): Refusal) {
        self.error(code, message, None);
    }

    /// A game started by this connection's message (its snapshot is on its way).
    fn started(&mut self, started: Result<GameId, Refusal>) {
        match started {
            Ok(id) => {
                self.games.insert(id);
            }
            Err(refusal) => self.refuse(refusal),
        }
    }

    /// Whether `game` is a private game of this node that this connection may not know of:
    /// it has no seat in it and does not follow it (a watcher with the code does). Every
    /// message about it is then answered as for a game that does not exist, not only
    /// `watch` and `join`: `act`, `claim_abandonment` and `rematch` said `not_a_player`
    /// and `leave` `not_subscribed`, with the game's time. (On several nodes its owner
    /// answers the same: `cluster::owner`.)
    fn hidden(&self, h: &crate::rooms::GameHandle, game: GameId) -> bool {
        let me = self.me.as_ref().map(|m| &m.id);
        h.code.is_some()
            && !self.games.contains(&game)
            && !h.seats.iter().any(|s| Some(&s.id) == me)
    }

    fn unknown_game(&self, game: GameId) {
        // Said the same way of a private game as of none: without the game time of the
        // receipt (`at_ms`), which only a live game has.
        let reply = self.reply.as_deref();
        self.peer.send_msg(&ServerMessage::Error {
            code: "unknown_game".into(),
            message: format!("there is no live game {game}"),
            game: Some(game),
            id: reply.and_then(|r| r.id.clone()),
            server_ms: Some(reply.map_or_else(crate::clock::unix_ms, |r| r.server_ms)),
            at_ms: None,
        });
    }

    fn subscribe(&mut self, game: GameId, player: Option<Arc<PlayerRec>>, after_seq: Option<u64>) {
        let cmd = GameCmd::Subscribe {
            peer: self.reply_peer(),
            player,
            after_seq,
            remote: false,
        };
        if self.to_game(game, cmd) {
            self.games.insert(game);
        }
    }

    /// `watch_code` for a code no live game of this node has: on several nodes, the
    /// game may run on another one (its owner checks the code). Asked in a task of its
    /// own: an unknown code costs the wait for every node's silence (300 ms), which the
    /// connection's other messages, its moves among them, do not wait for.
    fn watch_code_elsewhere(&mut self, code: &str, refused: Refusal) {
        let (Some(cluster), Ok(code)) = (self.hub.cluster.get().cloned(), game_code(code)) else {
            return self.refuse(refused);
        };
        let peer = self.reply_peer();
        tokio::spawn(async move {
            match cluster.find_code(&code).await {
                Some(game) => {
                    cluster.watch_code(game, code, peer);
                }
                None => {
                    peer.send_msg(&crate::codec::error(refused.0, refused.1, None));
                }
            }
        });
    }

    /// Hands a command to a game's task without waiting.
    fn to_game(&self, game: GameId, cmd: GameCmd) -> bool {
        // The handle is used where it lies in the map, not cloned: a clone is six
        // reference counts shared with the game's task, and this is every action's path.
        let handed = match self.hub.games.get(&game) {
            // What a player asks of his seat, by a stranger to a private game: as for none
            // (checked here, on the handle every action looks up anyway).
            Some(handle) if cmd.asks_a_seat() && self.hidden(&handle, game) => {
                drop(handle);
                self.unknown_game(game);
                return false;
            }
            Some(handle) => {
                // A quarter of the game's queue is kept for its players: a crowd of
                // watchers joining at once is told to try again, and a move never finds
                // the queue full because of them.
                let watcher_joining = matches!(cmd, GameCmd::Subscribe { player: None, .. });
                if watcher_joining && handle.tx.capacity() <= self.hub.config.game_queue / 4 {
                    Handed::Crowded
                } else {
                    match handle.tx.try_send(cmd) {
                        Ok(()) => Handed::Queued,
                        Err(crate::outbox::TrySendError::Full(_)) => Handed::Full,
                        Err(crate::outbox::TrySendError::Closed(_)) => Handed::Gone,
                    }
                }
            }
            // A game owned by another node: its owner answers.
            None => match self.hub.cluster.get() {
                Some(cluster) => return cluster.forward(game, cmd),
                None => Handed::Gone,
            },
        };
        match handed {
            Handed::Queued => return true,
            Handed::Crowded => self.error(
                "game_busy",
                "many are joining this game: try again in a moment",
                Some(game),
            ),
            Handed::Full => self.error(
                "game_busy",
                "the game is busy: try again in a moment",
                Some(game),
            ),
            Handed::Gone => self.unknown_game(game),
        }
        false
    }
}

/// What became of a command handed to a game.
enum Handed {
    Queued,
    /// Watchers may not take the last quarter of the game's queue.
    Crowded,
    Full,
    /// No such game here, or its task has ended.
    Gone,
}
