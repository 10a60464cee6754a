//! The TAMSK terminal client (`tamsk`): play and watch live games on a server, in a
//! full-screen terminal UI or in plain line mode for scripts, and replay game records.

pub mod app;
pub mod clock;
pub mod compact;
pub mod config;
pub mod countdown;
pub mod gameref;
pub mod games;
pub mod http;
pub mod net;
pub mod plain;
pub mod replay;
pub mod sanitize;
pub mod session;
pub mod standings;
pub mod tc;
pub mod tournament_cli;
pub mod tui;
pub mod ui;
pub mod viewer;
pub mod words;

#[cfg(test)]
pub(crate) mod testing;

/// Exit code when the file cannot be read (or the server cannot be reached).
pub const EXIT_IO: u8 = 1;
/// Exit code when the input is not a valid game (bad token, illegal move, garbage).
pub const EXIT_BAD_INPUT: u8 = 2;
