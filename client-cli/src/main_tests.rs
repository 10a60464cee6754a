//! Tests of the command line: settings, durations, server addresses.

use super::*;

#[test]
fn durations() {
    assert_eq!(optional_duration_ms("5m"), Ok(MaybeMs(Some(300_000))));
    assert_eq!(optional_duration_ms("none"), Ok(MaybeMs(None)));
    assert!(optional_duration_ms("5").is_err(), "a unit is needed");
}

fn play(args: &[&str]) -> Result<Settings, String> {
    let cli = Cli::parse_from([&["tamsk", "play"], args].concat());
    let Command::Play { settings, .. } = cli.command else {
        panic!()
    };
    settings.settings()
}

#[test]
fn time_controls_by_name_and_test_speeds_only_on_request() {
    let s = play(&["--tc", "blitz"]).unwrap();
    assert_eq!((s.hourglass_ms, s.neutral_ms), (45_000, 5_000));
    let s = play(&["--tc", "rapid", "--clock", "5m"]).unwrap();
    assert_eq!(s.hourglass_ms, 90_000);
    assert_eq!(s.game_clock.unwrap().main_ms, 300_000);
    assert_eq!(play(&[]).unwrap(), Settings::level(Level::Three));
    let e = play(&["--hourglass", "1s"]).unwrap_err();
    assert!(e.contains("--hourglass under 2 s"), "{e}");
    let e = play(&["--blitz"]).unwrap_err();
    assert!(e.contains("--tc blitz"), "{e}");
    let s = play(&["--test-speeds"]).unwrap();
    assert_eq!(s.hourglass_ms, 3_000);
}

fn bot_of(args: &[&str]) -> Result<Option<Option<BotArg>>, clap::error::ErrorKind> {
    match Cli::try_parse_from([&["tamsk", "play"], args].concat()) {
        Ok(Cli {
            command: Command::Play { bot, .. },
            ..
        }) => Ok(bot),
        Ok(_) => panic!("not play"),
        Err(e) => Err(e.kind()),
    }
}

#[test]
fn bot_levels_by_name() {
    assert_eq!(bot_of(&["--bot", "easy"]), Ok(Some(Some(BotArg::Easy))));
    assert_eq!(
        bot_of(&["--bot", "hard", "--level", "2"]),
        Ok(Some(Some(BotArg::Hard)))
    );
    assert_eq!(bot_of(&["--bot=normal"]), Ok(Some(Some(BotArg::Normal))));
    // Alone, the server chooses; absent, no bot.
    assert_eq!(bot_of(&["--bot"]), Ok(Some(None)));
    assert_eq!(bot_of(&["--bot", "--tc", "blitz"]), Ok(Some(None)));
    assert_eq!(bot_of(&[]), Ok(None));
    assert_eq!(
        bot_of(&["--bot", "expert"]),
        Err(clap::error::ErrorKind::InvalidValue)
    );
    assert_eq!(BotLevel::from(BotArg::Easy), BotLevel::Easy);
}

#[test]
fn server_urls() {
    assert_eq!(normalise_server("localhost:7878"), "ws://localhost:7878/ws");
    assert_eq!(normalise_server("ws://h:1"), "ws://h:1/ws");
    assert_eq!(normalise_server("ws://h:1/"), "ws://h:1/ws");
    assert_eq!(normalise_server("ws://h:1/ws"), "ws://h:1/ws");
    assert_eq!(normalise_server("wss://h/tamsk/ws"), "wss://h/tamsk/ws");
}

#[test]
fn play_settings() {
    let cli = Cli::parse_from([
        "tamsk",
        "play",
        "--level",
        "2",
        "--test-speeds",
        "--turn-limit",
        "none",
    ]);
    let Command::Play { settings, bot } = cli.command else {
        panic!()
    };
    assert_eq!(bot, None);
    let s = settings.settings().unwrap();
    assert_eq!(s.level, Level::Two);
    assert_eq!(s.hourglass_ms, 3_000);
    assert_eq!(s.turn_limit_ms, None);
    let cli = Cli::parse_from(["tamsk", "--server", "x:1", "play", "--hourglass", "0s"]);
    let Command::Play { settings, .. } = cli.command else {
        panic!()
    };
    assert!(settings.settings().is_err(), "out of range");
    assert_eq!(cli.server.as_deref(), Some("x:1"));
    // The challenged player and one's own --name are different things.
    let cli = Cli::parse_from(["tamsk", "challenge", "Ben", "--name", "Cid"]);
    assert_eq!(cli.name.as_deref(), Some("Cid"));
    let Command::Challenge { player, .. } = cli.command else {
        panic!()
    };
    assert_eq!(player, "Ben");
}
