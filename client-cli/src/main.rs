//! `tamsk`: the TAMSK terminal client. For now it replays game records; playing and
//! watching games on a server come later as further subcommands.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod replay;

#[derive(Parser, Debug)]
#[command(
    name = "tamsk",
    version,
    about = "TAMSK online: terminal client",
    after_help = "Exit status: 0 success, 1 a file cannot be read, 2 bad input (usage, or a game file that is not valid)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay a game file (a TAMSK record or a network-server move list such as
    /// `d1-d2/13 g1-f1/20`) and print the final board and the result.
    Replay(replay::Args),
}

/// Exit code when the file cannot be read.
pub const EXIT_IO: u8 = 1;
/// Exit code when the input is not a valid game (bad token, illegal move, garbage).
pub const EXIT_BAD_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => replay::main(&args),
    }
}
