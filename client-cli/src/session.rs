//! A session: the [`App`], its connection and the config file, shared by plain mode and
//! the full-screen UI.

use std::path::PathBuf;
use std::time::Instant;

use protocol::wire::ClientMessage;

use crate::app::App;
use crate::config::{Account, Config};
use crate::net::{Net, NetEvent};

pub struct Session {
    pub app: App,
    pub net: Net,
    pub config: Config,
    /// `None`: nothing is remembered.
    pub config_path: Option<PathBuf>,
    /// The server URL, the config's key for the account.
    pub server: String,
}

impl Session {
    pub async fn send_all(&mut self, msgs: Vec<ClientMessage>) {
        for m in msgs {
            self.net.send(&m).await;
        }
    }

    /// Feeds a connection event to the app and sends what it answers.
    pub async fn on_net(&mut self, ev: NetEvent) {
        let now = Instant::now();
        let msgs = match ev {
            NetEvent::Connected => self.app.on_connected(now),
            NetEvent::Message(m) => self.app.on_frame(m, now),
            NetEvent::Unreadable(why) => {
                self.app.on_unreadable(&why);
                Vec::new()
            }
            NetEvent::Lost(why) => {
                self.app.on_disconnected(&why);
                Vec::new()
            }
            NetEvent::GaveUp(why) => {
                self.app.on_gave_up(&why);
                Vec::new()
            }
        };
        self.send_all(msgs).await;
        self.save_config();
    }

    /// Periodic work (pings).
    pub async fn tick(&mut self) {
        let msgs = self.app.on_tick(Instant::now());
        self.send_all(msgs).await;
    }

    /// Writes the config file when the account or the seat changed. A failure is shown,
    /// not fatal.
    pub fn save_config(&mut self) {
        if !self.app.config_dirty {
            return;
        }
        self.app.config_dirty = false;
        let Some(me) = &self.app.me else { return };
        self.config.server = Some(self.server.clone());
        self.config.name = Some(me.name.clone());
        self.config.accounts.insert(
            self.server.clone(),
            Account {
                name: me.name.clone(),
                player_id: me.player_id.clone(),
                token: me.token.clone(),
                game: self.app.seat_game(),
            },
        );
        if let Some(path) = &self.config_path {
            if let Err(e) = self.config.save(path) {
                self.app
                    .note_error(format!("Cannot save the config file: {e}"));
            }
        }
    }
}
