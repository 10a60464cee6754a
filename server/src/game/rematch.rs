//! A rematch, offered and accepted once the game is over: colours swapped, same
//! settings, the same code for a private game.

use super::*;

impl GameTask {
    pub(super) fn rematch(&mut self, peer: Peer, player: &PlayerRec, accept: bool) {
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
}
