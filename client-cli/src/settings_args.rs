//! The game settings a player gives on the command line (`tamsk play --level 3 --clock
//! 5m ...`) and the bot's level, turned into [`Settings`].

use clap::{Args, ValueEnum};
use protocol::bot::BotLevel;
use protocol::settings::{FullSocket, GameClock, Level, Settings, Setup};
use tamsk_client::tc::{duration_ms, too_short_for_people, TimeControl};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BotArg {
    /// For a beginner: never flips the 15-second timer in the opening, takes its time.
    Easy,
    /// One move ahead.
    Normal,
    /// Searches five moves ahead.
    Hard,
}

impl From<BotArg> for BotLevel {
    fn from(l: BotArg) -> BotLevel {
        match l {
            BotArg::Easy => BotLevel::Easy,
            BotArg::Normal => BotLevel::Normal,
            BotArg::Hard => BotLevel::Hard,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum SetupArg {
    Standard,
    Placement,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum FullSocketArg {
    Lose,
    Reject,
}

#[derive(Args, Debug)]
pub(crate) struct SettingsArgs {
    /// Rules level: 1 no time rules, 2 hourglasses run, 3 hourglasses and the 15-second
    /// timer.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    level: u8,
    /// How the hourglasses start: on the corners, or beside the board.
    #[arg(long, value_enum, default_value = "standard")]
    setup: SetupArg,
    /// The time control: classical (5-min hourglasses, 20-s timer, 3-s drop grace),
    /// standard (3 min, 15 s, 2 s), rapid (90 s, 10 s, 2 s), blitz (45 s, 5 s, 2 s).
    /// The flags below change single values.
    #[arg(long, value_enum, default_value = "standard")]
    tc: TimeControl,
    /// For tests only: the engine's test speeds (3-s hourglasses, 0.3-s timer, 0.2-s drop
    /// grace), too fast for a person; also allows durations under 2 s on the flags below.
    #[arg(long)]
    test_speeds: bool,
    /// Replaced by `--tc blitz` (and `--test-speeds` for the old test speeds).
    #[arg(long, hide = true)]
    blitz: bool,
    /// Sand in one hourglass: 180s, 3m (a unit is needed).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    hourglass: Option<u64>,
    /// Sand in the 15-second timer (Level 3).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    neutral: Option<u64>,
    /// How long after a release the mover may still drop (Levels 2-3).
    #[arg(long, value_name = "DURATION", value_parser = duration_ms)]
    drop_grace: Option<u64>,
    /// A turn whose move is not released within this is forfeited ("none": only the
    /// idle bound, 10 times the abort time).
    #[arg(long, value_name = "DURATION|none", value_parser = optional_duration_ms)]
    turn_limit: Option<MaybeMs>,
    /// A game clock per player ("none" for no clock).
    #[arg(long, value_name = "DURATION|none", value_parser = optional_duration_ms)]
    clock: Option<MaybeMs>,
    /// What moving onto a full socket does.
    #[arg(long, value_enum)]
    full_socket: Option<FullSocketArg>,
    /// A casual game: no rating changes. By default a game at a named time control
    /// (unchanged by the flags above) is rated; other settings are always casual.
    #[arg(long)]
    pub(crate) casual: bool,
}

/// A duration or "none".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MaybeMs(pub(crate) Option<u64>);

pub(crate) fn optional_duration_ms(text: &str) -> Result<MaybeMs, String> {
    if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("off") {
        Ok(MaybeMs(None))
    } else {
        duration_ms(text).map(|ms| MaybeMs(Some(ms)))
    }
}

impl SettingsArgs {
    pub(crate) fn settings(&self) -> Result<Settings, String> {
        let level = Level::try_from(self.level)?;
        if self.blitz {
            return Err("--blitz is now `--tc blitz` (45-s hourglasses, 5-s timer); the old 3-s test speeds are --test-speeds".into());
        }
        let mut s = if self.test_speeds {
            Settings::blitz(level)
        } else {
            self.tc.settings(level)
        };
        s.setup = match self.setup {
            SetupArg::Standard => Setup::Standard,
            SetupArg::Placement => Setup::Placement,
        };
        if let Some(ms) = self.hourglass {
            s.hourglass_ms = ms;
        }
        if let Some(ms) = self.neutral {
            s.neutral_ms = ms;
        }
        if let Some(ms) = self.drop_grace {
            s.drop_grace_ms = ms;
        }
        if let Some(MaybeMs(limit)) = self.turn_limit {
            s.turn_limit_ms = limit;
        }
        if let Some(MaybeMs(clock)) = self.clock {
            s.game_clock = clock.map(|main_ms| GameClock {
                main_ms,
                increment_ms: 0,
            });
        }
        if let Some(f) = self.full_socket {
            s.full_socket = match f {
                FullSocketArg::Lose => FullSocket::Lose,
                FullSocketArg::Reject => FullSocket::Reject,
            };
        }
        s.validate().map_err(|e| e.to_string())?;
        let short = too_short_for_people(&s);
        if !self.test_speeds && !short.is_empty() {
            return Err(format!(
                "{} under 2 s cannot be met by a person (add --test-speeds for tests)",
                short.join(", ")
            ));
        }
        Ok(s)
    }
}
