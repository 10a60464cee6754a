//! What the lobby tells the client: seeks and pairings, challenges, rematches,
//! tournaments, rating changes, the server shutting down.

use std::time::Instant;

use protocol::wire::LobbyMessage;
use serde_json::json;

use crate::sanitize::clean;

use super::*;

impl App {
    /// Messages about finding a game, and the server's shutdown.
    pub fn on_lobby(&mut self, msg: LobbyMessage, at: Instant) {
        match msg {
            LobbyMessage::Seeks { seeks } => {
                if self.phase == Phase::Lobby {
                    self.lobby_seeks(seeks)
                }
            }
            LobbyMessage::Players { players, online } => {
                if self.phase == Phase::Lobby {
                    self.lobby_players(players, online)
                }
            }
            LobbyMessage::Hosting { code, settings } => {
                let code = clean(&code);
                self.hosting = Some(code.clone());
                self.info(
                    "hosting",
                    format!(
                        "Private game ({}): your code is {code}. Your opponent runs: tamsk join {code}",
                        describe_settings(&settings)
                    ),
                    json!({ "code": code, "settings": settings }),
                );
            }
            LobbyMessage::ChallengeSent {
                challenge,
                to,
                settings,
                expires_ms,
                ..
            } => {
                let name = clean(&to.name);
                self.challenge_sent = Some((challenge, name.clone()));
                let wait = self
                    .server_wall_ms(at)
                    .map(|now| format!(" for {} s", expires_ms.saturating_sub(now).div_ceil(1000)))
                    .unwrap_or_default();
                self.info(
                    "challenge_sent",
                    format!(
                        "Challenge sent to {name} ({}): waiting{wait} for an answer",
                        describe_settings(&settings)
                    ),
                    json!({ "challenge": challenge, "to": name, "settings": settings, "expires_ms": expires_ms }),
                );
            }
            LobbyMessage::Challenged {
                challenge,
                from,
                settings,
                expires_ms,
                ..
            } => {
                let name = clean(&from.name);
                self.challenges.retain(|c| c.0 != challenge);
                self.challengers.retain(|c| c.0 != challenge);
                self.challengers.push((challenge, name.clone()));
                self.challenges
                    .push((challenge, name.clone(), settings.clone()));
                let text = format!(
                    "{name} challenges you to a game ({}): type 'accept' or 'decline'",
                    describe_settings(&settings)
                );
                let idle = self
                    .game
                    .as_ref()
                    .is_none_or(|g| g.is_over() || g.seat.is_none());
                if idle && self.confirm.is_none() && self.input.is_none() {
                    self.confirm = Some(Confirm::Challenge(challenge));
                    self.hint(format!(
                        "{name} challenges you ({}): accept? y/n",
                        describe_settings(&settings)
                    ));
                }
                self.info(
                    "challenged",
                    text,
                    json!({ "challenge": challenge, "from": name, "settings": settings, "expires_ms": expires_ms }),
                );
            }
            LobbyMessage::ChallengeClosed { challenge, reason } => {
                let reason = clean(&reason);
                self.challenges.retain(|c| c.0 != challenge);
                if self.confirm == Some(Confirm::Challenge(challenge)) {
                    self.confirm = None;
                    self.status = None;
                }
                let ours = self
                    .challenge_sent
                    .as_ref()
                    .filter(|c| c.0 == challenge)
                    .cloned();
                match ours {
                    Some((_, name)) => {
                        self.challenge_sent = None;
                        let text = format!("No game: the challenge to {name} was {reason}");
                        self.emit(
                            "challenge_closed",
                            text.clone(),
                            json!({ "challenge": challenge, "reason": reason }),
                        );
                        if self.from_lobby && self.game.is_none() {
                            // Challenged from the lobby: back there, told why.
                            self.log(LogKind::Info, None, text.clone());
                            self.return_to_lobby(LogKind::Info, text);
                        } else if self.game.as_ref().is_none_or(|g| g.is_over()) {
                            self.fatal(text);
                        }
                    }
                    None => {
                        // A challenge we received: named by who sent it.
                        let from = self
                            .challengers
                            .iter()
                            .find(|c| c.0 == challenge)
                            .map_or("a player".to_string(), |c| c.1.clone());
                        self.challengers.retain(|c| c.0 != challenge);
                        self.info(
                            "challenge_closed",
                            format!("The challenge from {from} is closed: {reason}"),
                            json!({ "challenge": challenge, "from": from, "reason": reason }),
                        )
                    }
                }
            }
            LobbyMessage::RematchOffered { game, by } => {
                let Some(g) = self.game.as_ref().filter(|g| g.id == game) else {
                    return;
                };
                let text = if g.seat == Some(by) {
                    format!("Rematch offered: waiting for {}", g.who(by.other()))
                } else {
                    format!(
                        "{} offers a rematch, colours swapped: r (or type 'rematch') accepts",
                        g.who(by)
                    )
                };
                self.hint(text.clone());
                self.info("rematch_offered", text, json!({ "game": game, "by": by }));
            }
            LobbyMessage::RematchDeclined { game, by } => {
                let Some(g) = self.game.as_ref().filter(|g| g.id == game) else {
                    return;
                };
                let text = format!("{} declined the rematch", g.who(by));
                self.hint(text.clone());
                self.info("rematch_declined", text, json!({ "game": game, "by": by }));
            }
            LobbyMessage::RatingChanged {
                game,
                tc,
                before,
                after,
            } => self.info(
                "rating_changed",
                format!(
                    "Your {tc} rating: {before} -> {after} ({:+})",
                    after.rating - before.rating
                ),
                json!({ "game": game, "tc": tc, "before": before, "after": after }),
            ),
            LobbyMessage::TournamentCreated {
                tournament,
                starts_ms,
            } => self.info(
                "tournament_created",
                format!("Tournament {} created", clean(&tournament)),
                json!({ "tournament": tournament, "starts_ms": starts_ms }),
            ),
            LobbyMessage::TournamentJoined { tournament } => self.info(
                "tournament_joined",
                format!("You joined tournament {}", clean(&tournament)),
                json!({ "tournament": tournament }),
            ),
            LobbyMessage::TournamentWithdrawn { tournament } => self.info(
                "tournament_withdrawn",
                format!("You withdrew from tournament {}", clean(&tournament)),
                json!({ "tournament": tournament }),
            ),
            LobbyMessage::TournamentRound {
                tournament,
                round,
                game,
            } => {
                let what = match game {
                    Some(g) => format!("your game is {g}"),
                    None => "you have a bye (a point)".into(),
                };
                self.info(
                    "tournament_round",
                    format!("Tournament {}, round {round}: {what}", clean(&tournament)),
                    json!({ "tournament": tournament, "round": round, "game": game }),
                );
            }
            LobbyMessage::TournamentFinished {
                tournament,
                cancelled,
            } => self.info(
                "tournament_finished",
                format!(
                    "Tournament {} {}",
                    clean(&tournament),
                    if cancelled {
                        "was cancelled (by its creator, or too few players at its start)"
                    } else {
                        "is over: `tamsk tournament show ID` has the standings"
                    }
                ),
                json!({ "tournament": tournament, "cancelled": cancelled }),
            ),
            LobbyMessage::ShuttingDown { drain_ms, .. } => {
                let text = format!(
                    "The server is shutting down: no new games; live games may go on for {} s",
                    drain_ms / 1000
                );
                self.status = Some((LogKind::Error, text.clone()));
                self.info("shutting_down", text, json!({ "drain_ms": drain_ms }));
            }
        }
    }
}
