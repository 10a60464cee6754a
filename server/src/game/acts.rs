//! A seat's actions and claims, from the connections that follow the game.

use super::*;

impl GameTask {
    pub(super) fn act(
        &mut self,
        peer: Peer,
        player: &PlayerRec,
        action: Action,
        received: Instant,
        seen: Option<protocol::wire::Seq>,
    ) {
        let Some(seat) = self.acting_seat(&peer, player) else {
            return;
        };
        let at = self.received_ms(received);
        let now = self.now_ms();
        let m = &self.rooms.metrics;
        match self.room.act(seat, action, at, now, seen) {
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

    /// The seat `player` acts for from `peer`, or `None` after telling why not: he has
    /// none (a watcher), or this connection does not follow the game in it (it left the
    /// game, or never joined it): it would not see what it did, and his opponent would
    /// see him play while counted gone.
    fn acting_seat(&self, peer: &Peer, player: &PlayerRec) -> Option<Player> {
        let Some(seat) = self.seat_of(player) else {
            peer.send_msg(&error(
                "not_a_player",
                "you have no seat in this game: watchers cannot act",
                self.id,
            ));
            return None;
        };
        let follows = self
            .subs
            .iter()
            .any(|s| s.seat == Some(seat) && s.peer.conn == peer.conn);
        if !follows {
            peer.send_msg(&not_following(self.id));
            return None;
        }
        Some(seat)
    }

    pub(super) fn claim_abandonment(&mut self, peer: Peer, player: &PlayerRec) {
        let Some(seat) = self.acting_seat(&peer, player) else {
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
}

/// The answer to a connection that does not follow the game.
pub(super) fn not_following(game: GameId) -> ServerMessage {
    error(
        "not_subscribed",
        "you are not following this game: join it first",
        game,
    )
}
