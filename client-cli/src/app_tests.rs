//! The app state without a terminal or a socket: messages and keys in, state and
//! messages out.
//!
//! Here: the helpers the tests share; the tests, by topic, are in `app_tests/`.

use super::*;
use crate::testing::sq;
use crate::testing::*;
use crossterm::event::KeyCode;
use protocol::game::Glass;
use protocol::settings::Level;
use protocol::wire::{Change, GameEvent, LobbyMessage};

fn kinds(out: &[Output]) -> Vec<&'static str> {
    out.iter().map(|o| o.kind).collect()
}

fn finder(find: Find, t0: Instant) -> (App, Vec<ClientMessage>) {
    let settings = Settings::level(Level::Two);
    let mut app = App::new(Mode::Play { settings, find }, "Rita".into(), None, t0);
    app.on_connected(t0);
    let sent = app.on_message(welcome(vec![]), t0);
    app.take_output();
    (app, sent)
}

fn player(name: &str) -> protocol::wire::PlayerRef {
    protocol::wire::PlayerRef {
        player_id: format!("id-{name}"),
        name: name.into(),
        rating: None,
    }
}

#[path = "app_tests/commands.rs"]
mod commands;
#[path = "app_tests/connection.rs"]
mod connection;
#[path = "app_tests/finding.rs"]
mod finding;
#[path = "app_tests/game_end.rs"]
mod game_end;
#[path = "app_tests/picking.rs"]
mod picking;
#[path = "app_tests/replica.rs"]
mod replica;
