//! The shared language of TAMSK online: the board, the rules engine, game records and the
//! wire messages. Pure: no I/O, no clock reads. Time is always a value passed in.

pub mod api;
pub mod board;
pub mod bot;
pub mod bot_search;
pub mod delta;
pub mod game;
pub mod lag;
pub mod notation;
pub mod rating;
pub mod record;
pub mod render;
pub mod settings;
pub mod text;
pub mod view;
pub mod wire;

pub use board::Square;
pub use game::{Action, ActionError, Event, Game, Glass, Outcome, Player};
pub use settings::{Level, Settings, Setup};
