//! The room as a client sees it, for the sans-IO room tests: a room, the replica a client
//! following it from the start builds from its events, and the checks of what comes out.
#![allow(dead_code)] // each test crate uses its own part

use protocol::game::{Action, Game, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{GameEvent, GameId};
use server::room::{Graces, Out, Room};

pub const GRACES: Graces = Graces {
    reconnect_ms: 10_000,
    claim_window_ms: 5_000,
};

/// A room and what a client following it from the start knows.
pub struct Table {
    pub room: Room,
    /// Built from the settings and the `play` entries of the events only.
    pub replica: Game,
    pub events: Vec<GameEvent>,
    pub entries_out: u64,
    pub ended: usize,
    /// The absences to keep with the game (`Out::Absence`), in order.
    pub absences: Vec<(Player, Option<u64>)>,
}

impl Table {
    pub fn new(settings: Settings) -> Table {
        let game = Game::new(settings.clone());
        Table {
            room: Room::new(GameId::now_v7(), game, Vec::new(), 0, 4096, GRACES),
            replica: Game::new(settings),
            events: Vec::new(),
            entries_out: 0,
            ended: 0,
            absences: Vec::new(),
        }
    }

    /// Takes what the room did and checks its order: each entry is journalled before its
    /// event, with the next index; events are numbered one after another.
    pub fn take(&mut self) {
        let mut outs = Vec::new();
        self.room.take_outs(&mut outs);
        let mut pending_entry = None;
        for out in outs {
            match out {
                Out::Entry { idx, entry } => {
                    assert_eq!(idx, self.entries_out, "entries are journalled in order");
                    self.entries_out += 1;
                    pending_entry = Some(entry);
                }
                Out::Ended => {
                    assert!(
                        pending_entry.is_some(),
                        "the end follows the entry that ended it"
                    );
                    assert!(!self.room.game().is_playing() || self.ended > 0);
                    self.ended += 1;
                }
                Out::Absence {
                    player,
                    grace_until_ms,
                } => self.absences.push((player, grace_until_ms)),
                Out::Event(ev) => {
                    assert_eq!(ev.seq, self.events.len() as u64 + 1, "numbered in order");
                    if let Some(entry) = ev.entry() {
                        assert_eq!(pending_entry.take(), Some(entry), "the event's entry");
                        // As a client does: the carried events and the implied ones are
                        // what the replica's engine gives.
                        ev.apply_to(&mut self.replica).expect("the replica follows");
                    }
                    self.events.push(ev);
                }
            }
        }
        assert!(pending_entry.is_none(), "every entry is published");
    }

    /// Runs the room's deadlines up to `t`, each at its instant.
    pub fn run_until(&mut self, t: u64) {
        while let Some(d) = self.room.next_deadline().filter(|&d| d <= t) {
            self.room.on_time(d);
            self.take();
            assert_ne!(
                self.room.next_deadline(),
                Some(d),
                "a deadline passed without effect: {:?}",
                self.room.game()
            );
        }
    }
}

/// Level 3 with the rules page's timers (3-minute hourglasses): nothing ends the game
/// by itself within the graces these tests run through.
pub fn unhurried() -> Settings {
    Settings::level(Level::Three)
}

/// A whole move of `player`'s (from the room's game).
pub fn a_move(t: &Table, player: Player) -> Action {
    t.room
        .game()
        .legal_actions(player)
        .into_iter()
        .find(|a| matches!(a, Action::Move { .. }))
        .expect("a move")
}

/// Red's first move: a placement or a move, not a resignation.
pub fn opening(game: &Game) -> Action {
    game.legal_actions(Player::Red)
        .into_iter()
        .find(|a| {
            matches!(
                a,
                Action::Place { .. } | Action::Move { .. } | Action::Start { .. }
            )
        })
        .expect("Red can open")
}
