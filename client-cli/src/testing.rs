//! Helpers for the unit tests: the server's side of a game, and apps in given states.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use protocol::game::{Action, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::Settings;
use protocol::view::GameView;
use protocol::wire::{
    Change, GameEvent, GameId, SandTable, SeatInfo, Seq, ServerMessage, Snapshot,
};
use protocol::Square;

use crate::app::{App, Mode};

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

pub fn sq(s: &str) -> Square {
    s.parse().unwrap()
}

/// The server's side of one game: applies actions and hands out the numbered events.
pub struct Fake {
    pub game: Game,
    pub seq: Seq,
    /// The entries that made `game` (a snapshot carries them).
    pub entries: Vec<Entry>,
}

impl Fake {
    pub fn new(settings: Settings) -> Fake {
        Fake {
            game: Game::new(settings),
            seq: 0,
            entries: Vec::new(),
        }
    }

    pub fn snapshot(&self, seat: Option<Player>, now_ms: u64) -> ServerMessage {
        let info = |name: &str| SeatInfo {
            player_id: format!("id-{name}"),
            name: name.into(),
            connected: true,
            grace_until_ms: None,
            lag_ms: None,
            rating: None,
        };
        ServerMessage::Snapshot(Box::new(Snapshot {
            game: gid(1),
            seq: self.seq,
            now_ms,
            seat,
            red: info("Rita"),
            black: info("Bert"),
            watchers: 0,
            view: GameView::of(&self.game, &self.entries),
            sand: SandTable::of(&self.game),
            rated: false,
            tc: None,
        }))
    }

    pub fn entry(&mut self, entry: Entry) -> ServerMessage {
        let events = entry.apply_to(&mut self.game).expect("legal");
        self.entries.push(entry.clone());
        self.seq += 1;
        ServerMessage::Event(Box::new(GameEvent {
            game: gid(1),
            seq: self.seq,
            now_ms: entry.at_ms,
            change: Change::play(entry, events),
        }))
    }

    pub fn act(&mut self, player: Player, action: Action, at_ms: u64) -> ServerMessage {
        self.entry(Entry {
            at_ms,
            kind: EntryKind::act(player, action),
        })
    }

    pub fn advance(&mut self, at_ms: u64) -> ServerMessage {
        self.entry(Entry {
            at_ms,
            kind: EntryKind::Advance,
        })
    }
}

/// The game id `n` in tests: a UUID whose last digits are `n` (short id `#0000000n`).
pub fn gid(n: u64) -> GameId {
    GameId::from_u64_pair(0, n)
}

pub fn welcome(games: Vec<GameId>) -> ServerMessage {
    ServerMessage::Welcome {
        version: 1,
        player_id: "p1".into(),
        name: "Rita".into(),
        token: "secret".into(),
        server_ms: 0,
        games,
    }
}

pub fn mv(from: &str, to: &str, drop: bool) -> Action {
    Action::Move {
        from: sq(from),
        to: sq(to),
        drop,
    }
}

/// Rita's app, about to seek a game of `settings`, with her `token` if she has one.
pub fn seeking(settings: Settings, token: Option<&str>, t0: Instant) -> App {
    let find = crate::app::Find::Seek;
    App::new(
        Mode::Play { settings, find },
        "Rita".into(),
        token.map(Into::into),
        t0,
    )
}

/// Rita's app, connected and welcomed (what it printed so far is taken), seeking a game
/// of the fake's settings.
pub fn greeted(fake: &Fake, t0: Instant) -> App {
    let mut app = seeking(fake.game.settings().clone(), None, t0);
    app.on_connected(t0);
    app.on_message(welcome(vec![]), t0);
    app.take_output();
    app
}

/// An app that has said hello and is seated as `seat` in the fake's game.
pub fn seated(fake: &Fake, seat: Player, t0: Instant) -> App {
    let mut app = greeted(fake, t0);
    app.on_message(fake.snapshot(Some(seat), 0), t0);
    app.take_output();
    app
}
