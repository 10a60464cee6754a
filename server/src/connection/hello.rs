//! The first message: who the client is (a returning player by token, a new player by
//! name, or a guest), and the connection limit's reserve for players coming back.

use protocol::wire::{ServerMessage, PROTOCOL_VERSION};

use crate::hub::Unregistered;
use crate::limits::validate_name;

use super::*;

impl Conn {
    /// Refuses a second hello or another protocol version (`false`: refused).
    pub(super) fn hello_allowed(&self, version: u32) -> bool {
        if version != PROTOCOL_VERSION {
            self.error(
                "unsupported_version",
                format!("this server speaks protocol version {PROTOCOL_VERSION}, not {version}"),
                None,
            );
            return false;
        }
        if self.me.is_some() || self.guest {
            self.error("already_hello", "this connection already said hello", None);
            return false;
        }
        true
    }

    /// A guest: no player record, no stored row, not online; lists and watches only.
    pub(super) fn hello_guest(&mut self, version: u32, identified: bool) {
        if !self.hello_allowed(version) {
            return;
        }
        if identified {
            self.error(
                "bad_guest",
                "a guest gives neither a name nor a token: say hello with \"guest\":true alone, or with a name (or token) to play",
                None,
            );
            return;
        }
        // The reserve is kept for players coming back to a live game.
        if self.reserve {
            self.refuse_full();
            return;
        }
        tracing::info!(conn = self.peer.conn, "hello (guest)");
        self.guest = true;
        self.hub.guest_arrived(&self.peer);
        self.send(&ServerMessage::GuestWelcome {
            version: PROTOCOL_VERSION,
            server_ms: unix_ms(),
        });
    }

    pub(super) async fn hello(
        &mut self,
        version: u32,
        name: Option<String>,
        token: Option<String>,
    ) {
        if !self.hello_allowed(version) {
            return;
        }
        let (token, player) = match (token, name) {
            (Some(token), _) => match self.hub.player_by_token(&token).await {
                Ok(Some(p)) => (token, p),
                Err(e) => {
                    tracing::error!(error = %e, "player lookup failed");
                    self.error(
                        "storage_unavailable",
                        "players cannot be looked up right now: try again",
                        None,
                    );
                    return;
                }
                Ok(None) => {
                    self.error(
                        "unknown_token",
                        "no player has this token: say hello with a name to get a new one",
                        None,
                    );
                    return;
                }
            },
            (None, Some(name)) => {
                let name = match validate_name(&name) {
                    Ok(name) => name,
                    Err(why) => {
                        self.error("bad_name", why, None);
                        return;
                    }
                };
                if self.store_busy() {
                    return;
                }
                if self.reserve {
                    self.error(
                        "server_full",
                        "the server is at its connection limit: no new players now; try again later",
                        None,
                    );
                    self.peer
                        .kill
                        .kill(CLOSE_TRY_LATER, "server full: try again later");
                    return;
                }
                if !self.hub.budgets.registrations.take(self.ip) {
                    self.error(
                        "registering_too_fast",
                        format!(
                            "too many new players from your address: at most {} a minute (bursts of {}); come back with your token, or try again later",
                            self.hub.config.ip_register_per_min, self.hub.config.ip_register_burst
                        ),
                        None,
                    );
                    return;
                }
                match self.hub.register(name).await {
                    Ok(registered) => registered,
                    Err(Unregistered::NameTaken) => {
                        self.error(
                            "name_taken",
                            "another player has this name (names are the same whatever their case): choose another, or come back with your token",
                            None,
                        );
                        return;
                    }
                    Err(Unregistered::StorageUnavailable) => {
                        self.error(
                            "storage_unavailable",
                            "new players cannot be stored right now: try again",
                            None,
                        );
                        return;
                    }
                }
            }
            (None, None) => {
                self.error(
                    "bad_name",
                    "a new player must give a name (or a token to come back)",
                    None,
                );
                return;
            }
        };
        if self.reserve && self.hub.games_of(&player.id).is_empty() {
            self.refuse_full();
            return;
        }
        tracing::info!(conn = self.peer.conn, player = %player.id, "hello");
        // Several nodes: his live games anywhere; and he is online at the lobby's leader
        // before he can act on his welcome (a challenge to him must find him).
        let games = match self.hub.cluster_lobby.get() {
            Some(lobby) => {
                lobby.said_hello(&player, &self.peer).await;
                lobby.games_of(&player.id).await
            }
            None => self.hub.games_of(&player.id),
        };
        self.send(&ServerMessage::Welcome {
            version: PROTOCOL_VERSION,
            player_id: player.id.clone(),
            name: player.name.clone(),
            token,
            server_ms: unix_ms(),
            games,
        });
        self.hub.online_add(&player, self.peer.clone());
        self.me = Some(player);
    }

    /// At the connection limit the reserve is for players coming back to a live game.
    pub(super) fn refuse_full(&self) {
        self.error(
            "server_full",
            "the server is at its connection limit: only players coming back to a live game are let in; try again later",
            None,
        );
        self.peer
            .kill
            .kill(CLOSE_TRY_LATER, "server full: try again later");
    }
}
