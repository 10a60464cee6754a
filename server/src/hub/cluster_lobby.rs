//! The hub as the lobby leader of several nodes ([`crate::cluster::lobby`]): the lobby
//! messages of other nodes' clients are served by the same methods as a local client's,
//! with the client's relay as its peer, so pairing is exactly a single node's.

use std::sync::{Arc, Weak};

use protocol::wire::{LobbyMessage, ServerMessage};

use crate::cluster::lobby::{ClusterLobby, LobbyHost, LobbyOp, Outcome};
use crate::lobby::{Refusal, SeekResult};
use crate::peer::{Peer, PlayerRec, Seeker};

use super::Hub;

/// The hub, held weakly by the cluster's lobby (the hub holds the lobby).
pub struct HubLobby(pub Weak<Hub>);

/// Tells a remote client a refusal through its relay, as its own node would.
fn refuse(peer: &Peer, (code, message): Refusal) -> Outcome {
    peer.send_msg(&ServerMessage::Error {
        code: code.into(),
        message,
        game: None,
        id: None,
        server_ms: Some(
            peer.reply
                .as_ref()
                .map_or_else(crate::clock::unix_ms, |r| r.server_ms),
        ),
        at_ms: None,
    });
    Outcome::Refused
}

fn started(peer: &Peer, started: Result<protocol::wire::GameId, Refusal>) -> Outcome {
    match started {
        Ok(id) => Outcome::Game(id),
        Err(refusal) => refuse(peer, refusal),
    }
}

impl LobbyHost for HubLobby {
    fn lobby_op(&self, op: LobbyOp, seeker: Seeker) -> Outcome {
        let Some(hub) = self.0.upgrade() else {
            return Outcome::Unavailable("shutting down".into());
        };
        let peer = seeker.peer.clone();
        let starts = !matches!(
            op,
            LobbyOp::Online
                | LobbyOp::Gone
                | LobbyOp::ListGames
                | LobbyOp::Tournament(_)
                | LobbyOp::CancelSeek { .. }
                | LobbyOp::DeclineChallenge { .. }
                | LobbyOp::CancelChallenge { .. }
        );
        if starts && hub.closed_for_new_games() {
            return Outcome::Unavailable("the lobby's node is shutting down".into());
        }
        match op {
            LobbyOp::Online => {
                hub.online_add(&seeker.player, peer.replying(None));
                Outcome::Done
            }
            LobbyOp::Gone => {
                hub.connection_gone(Some(&seeker.player), peer.conn);
                Outcome::Done
            }
            LobbyOp::Seek { settings, rated } => {
                if let Err(refusal) = hub.may_seek(&seeker.player.id, peer.conn) {
                    return refuse(&peer, refusal);
                }
                match hub.seek(settings.clone(), rated, seeker) {
                    SeekResult::Waiting(_) => {
                        peer.send_msg(&ServerMessage::Seeking { settings });
                        Outcome::Waiting
                    }
                    SeekResult::Paired(id) => Outcome::Game(id),
                }
            }
            LobbyOp::CancelSeek { quiet } => {
                let had = hub.cancel_seek(peer.conn);
                if quiet {
                    Outcome::Done
                } else if had {
                    peer.send_msg(&ServerMessage::SeekCancelled);
                    Outcome::Done
                } else {
                    refuse(&peer, ("not_seeking", "you have no seek to cancel".into()))
                }
            }
            LobbyOp::ListSeeks => self.lobby_list(false),
            LobbyOp::ListPlayers => self.lobby_list(true),
            LobbyOp::ListGames => Outcome::Unavailable("each node lists the games itself".into()),
            LobbyOp::Tournament(op) => {
                // Answered through the relay once served (the tournaments' lock and the
                // database are waited for in a task of its own, not by the lobby).
                tokio::spawn(async move {
                    match hub.tournaments.serve(&hub, &seeker.player, op).await {
                        Ok(answer) => {
                            peer.send_lobby(&answer);
                        }
                        Err(refusal) => {
                            refuse(&peer, refusal);
                        }
                    }
                });
                Outcome::Done
            }
            LobbyOp::AcceptSeek { seek } => started(&peer, hub.accept_seek(seek, seeker)),
            LobbyOp::Host { settings } => {
                let code = hub.host(settings.clone(), seeker);
                peer.send_lobby(&LobbyMessage::Hosting { code, settings });
                Outcome::Waiting
            }
            LobbyOp::JoinCode { code } => started(&peer, hub.join_code(&code, seeker)),
            LobbyOp::Challenge {
                to,
                settings,
                rated,
            } => match hub.challenge(seeker, &to, settings, rated) {
                Ok(()) => Outcome::Done,
                Err(refusal) => refuse(&peer, refusal),
            },
            LobbyOp::AcceptChallenge { challenge } => {
                started(&peer, hub.accept_challenge(challenge, seeker))
            }
            LobbyOp::DeclineChallenge { challenge } => {
                match hub.decline_challenge(challenge, &seeker.player) {
                    Ok(()) => Outcome::Done,
                    Err(refusal) => refuse(&peer, refusal),
                }
            }
            LobbyOp::CancelChallenge { challenge } => {
                match hub.cancel_challenge(challenge, &seeker.player) {
                    Ok(()) => Outcome::Done,
                    Err(refusal) => refuse(&peer, refusal),
                }
            }
        }
    }

    fn lobby_list(&self, players: bool) -> Outcome {
        let Some(hub) = self.0.upgrade() else {
            return Outcome::Unavailable("shutting down".into());
        };
        if players {
            let (players, online) = hub.list_players();
            Outcome::Players(players, online as u32)
        } else {
            Outcome::Seeks(hub.list_seeks())
        }
    }

    fn lobby_reset(
        &self,
        relays: Vec<(Arc<PlayerRec>, u64)>,
        keep_seeks: bool,
    ) -> Vec<(u64, protocol::settings::Settings, bool)> {
        let Some(hub) = self.0.upgrade() else {
            return Vec::new();
        };
        for (player, conn) in relays {
            hub.connection_gone(Some(&player), conn);
        }
        // What is left are this node's own clients' seeks.
        let kept = if keep_seeks {
            hub.take_open_seeks()
        } else {
            Vec::new()
        };
        hub.cancel_all_seeks();
        hub.close_all_challenges_because("lobby_moved");
        tokio::spawn(async move { hub.tournaments.forget().await });
        kept
    }

    fn lobby_led(&self) {
        let Some(hub) = self.0.upgrade() else { return };
        tokio::spawn(async move {
            if let Err(e) = hub.tournaments.resume(&hub).await {
                tracing::error!(error = %e, "taking up the tournaments failed");
            }
        });
    }
}

impl Hub {
    /// The lobby of several nodes, when this node does not lead it now: lobby messages go
    /// to the leader. `None`: this hub's own lobby serves (a single node, or the leader).
    pub fn remote_lobby(&self) -> Option<&Arc<ClusterLobby>> {
        self.cluster_lobby.get().filter(|l| l.remote())
    }

    /// Whether the lobby in this hub is the one to pair in (not a node's stale copy).
    pub fn lobby_is_here(&self) -> bool {
        self.cluster_lobby.get().is_none_or(|l| l.leading())
    }
}
