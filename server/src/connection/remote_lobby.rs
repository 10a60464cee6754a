//! Several nodes: the lobby messages of a connection whose node does not lead the lobby
//! go to the leader ([`crate::cluster::lobby`]); the live games listed to it are every
//! node's.

use std::sync::Arc;

use protocol::wire::ClientMessage;

use crate::cluster::lobby::LobbyOp;
use crate::hub::tournament::TournamentOp;
use crate::peer::PlayerRec;

use super::*;

impl Conn {
    /// Handles `msg` through the other nodes when it is theirs too; false when it is this
    /// node's alone (handled as on a single node).
    pub(super) async fn across_nodes(
        &mut self,
        msg: &ClientMessage,
        me: &Option<Arc<PlayerRec>>,
    ) -> bool {
        let Some(lobby) = self.hub.cluster_lobby.get().cloned() else {
            return false;
        };
        if let ClientMessage::ListGames = msg {
            // Gathered from every node (at most `GATHER_WAIT`), in the lobby's queue.
            lobby.submit(self.reply_peer(), me.clone(), LobbyOp::ListGames);
            return true;
        }
        if !lobby.remote() {
            return false;
        }
        // Messages that may start a game are checked here as on one node.
        let (op, starts) = match msg.clone() {
            ClientMessage::Seek { settings, rated } => (LobbyOp::Seek { settings, rated }, true),
            ClientMessage::CancelSeek => (LobbyOp::CancelSeek { quiet: false }, false),
            ClientMessage::ListSeeks => (LobbyOp::ListSeeks, false),
            ClientMessage::ListPlayers => (LobbyOp::ListPlayers, false),
            ClientMessage::AcceptSeek { seek } => (LobbyOp::AcceptSeek { seek }, true),
            ClientMessage::Host { settings } => (LobbyOp::Host { settings }, true),
            ClientMessage::JoinCode { code } => (LobbyOp::JoinCode { code }, true),
            ClientMessage::Challenge {
                to,
                settings,
                rated,
            } => (
                LobbyOp::Challenge {
                    to,
                    settings,
                    rated,
                },
                true,
            ),
            ClientMessage::AcceptChallenge { challenge } => {
                (LobbyOp::AcceptChallenge { challenge }, true)
            }
            ClientMessage::DeclineChallenge { challenge } => {
                (LobbyOp::DeclineChallenge { challenge }, false)
            }
            ClientMessage::CancelChallenge { challenge } => {
                (LobbyOp::CancelChallenge { challenge }, false)
            }
            msg @ (ClientMessage::TournamentCreate { .. }
            | ClientMessage::TournamentJoin { .. }
            | ClientMessage::TournamentWithdraw { .. }
            | ClientMessage::TournamentCancel { .. }) => {
                let op = TournamentOp::of(&msg).expect("a tournament message");
                let creates = matches!(op, TournamentOp::Create(_));
                (LobbyOp::Tournament(op), creates)
            }
            ClientMessage::PlayBot { .. } => {
                // The game with the computer is this node's; a seek waiting at the
                // leader goes, as on one node (after the lobby messages before it).
                lobby.submit(
                    self.peer.clone(),
                    me.clone(),
                    LobbyOp::CancelSeek { quiet: true },
                );
                return false;
            }
            _ => return false,
        };
        if starts && self.new_game_seeker(me.clone(), false).is_none() {
            return true;
        }
        // Queued, in order with the connection's other lobby messages: one that waits
        // for an election (up to two leases) does not hold up the connection's moves.
        lobby.submit(self.reply_peer(), me.clone(), op);
        true
    }
}
