//! Follower side: the frames a game's owner sends one connection alone, ordered with the
//! game's stream, and the adoption of games their owners started by themselves for this
//! node's clients (see the parent module).

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use protocol::game::Player;
use protocol::wire::GameId;
use serde::Deserialize;

use super::{Cluster, Head, Op};
use crate::peer::Peer;

/// A snapshot's seat and players: enough to follow, for its connection, a game its owner
/// started for it (see [`Cluster::adopt`]).
#[derive(Deserialize)]
struct SnapshotHead {
    seat: Option<Player>,
    red: SeatHead,
    black: SeatHead,
}

#[derive(Deserialize)]
struct SeatHead {
    player_id: String,
}

impl Cluster {
    /// Client side: a frame the owner of a game sent `conn` alone (on the connection's
    /// subject, or through the lobby leader's relay), handed to the socket in its game's
    /// order. False: the connection is gone.
    pub(in crate::cluster) async fn direct(
        self: &Arc<Self>,
        conn: u64,
        to_socket: &Peer,
        text: Utf8Bytes,
    ) -> bool {
        let head = serde_json::from_str::<Head>(&text)
            .ok()
            .filter(|h| matches!(h.kind, "snapshot" | "resumed" | "event") && h.game.is_some());
        if let Some(head) = head {
            let game = head.game.expect("filtered");
            let followed = self.fans.games.get(&game).is_some_and(|f| f.follows(conn));
            let adopted = !followed
                && head.kind == "snapshot"
                && self.adopt(game, to_socket, &head, &text).await;
            if let Some(fan) = self.fans.games.get(&game).map(|f| f.clone()) {
                let backlog = self.rooms.config.watch_backlog;
                let (handled, effects) = fan.on_direct(conn, &head, text.clone(), backlog);
                if adopted {
                    // After the snapshot, which ends any repair under way.
                    fan.expect_resumed(conn);
                }
                self.apply(game, effects);
                if handled {
                    return !to_socket.is_gone();
                }
            }
        }
        to_socket.send(text)
    }

    /// Client side: the owner of `game` subscribed `conn` itself, as a local peer (a game
    /// the lobby's pairing, a challenge or a rematch started for it), and sent it this
    /// snapshot. From now on this node follows the game's stream for it: the stream is
    /// subscribed, then the owner is asked (as a silent repair, queued before anything
    /// the client does after seeing the snapshot) to resume it after the snapshot's seq
    /// as a follower of the stream. What the owner sent it meanwhile comes on the same
    /// subject, in order, and what it already has is skipped by seq. True: adopted.
    async fn adopt(
        self: &Arc<Self>,
        game: GameId,
        to_socket: &Peer,
        head: &Head<'_>,
        text: &str,
    ) -> bool {
        let Ok(snapshot) = serde_json::from_str::<SnapshotHead>(text) else {
            return false;
        };
        let player = snapshot.seat.map(|seat| match seat {
            Player::Red => snapshot.red.player_id,
            Player::Black => snapshot.black.player_id,
        });
        let op = match player {
            Some(_) => Op::Join {
                after_seq: head.seq,
            },
            None => Op::Watch {
                after_seq: head.seq,
                code: None,
            },
        };
        self.follower(to_socket);
        self.fan_add(game, to_socket, player).await;
        tracing::debug!(game = %game, conn = to_socket.conn, "follows the stream of a game its owner started for a client");
        self.enqueue(to_socket.conn, game, op, true)
    }

    /// Client side: a resumption this node asked for `conn` was refused.
    pub(in crate::cluster) fn repair_failed(&self, game: GameId, conn: u64) {
        if let Some(fan) = self.fans.games.get(&game) {
            fan.repair_failed(conn);
        }
    }
}
