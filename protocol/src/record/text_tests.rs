//! Tests of the text format: the documented layout, reading back exactly, lenient reading,
//! errors located by line, column and token, network move lists, steps, and random legal
//! games that round-trip.

use super::header::reserved;
use super::*;
use crate::board::Square;
use crate::game::Glass;
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn sq(s: &str) -> Square {
    s.parse().unwrap()
}

fn act(at_ms: u64, player: Player, action: &str) -> Entry {
    Entry {
        at_ms,
        kind: EntryKind::act(player, parse_action(action).unwrap()),
    }
}

/// A short Level 3 blitz game using every kind of entry.
fn sample() -> RecordFile {
    let entries = vec![
        act(0, Player::Red, "d1-d2"),
        act(100, Player::Red, "flip"),
        act(150, Player::Black, "start g1"),
        act(250, Player::Black, "release f1"),
        act(300, Player::Black, "drop"),
        act(1_000, Player::Red, "g4-f4."),
        Entry {
            at_ms: 1_500,
            kind: EntryKind::Advance,
        },
        act(2_000, Player::Black, "a1-b1"),
        Entry {
            at_ms: 9_000,
            kind: EntryKind::Abandon {
                player: Player::Red,
            },
        },
    ];
    RecordFile {
        record: Record {
            settings: Settings::blitz(Level::Three),
            red: Some("Alice".into()),
            black: Some("Bob the Builder".into()),
            entries,
            end_ms: Some(9_500),
        },
        tags: vec![
            ("game".into(), "42".into()),
            ("date".into(), "2026-11-21".into()),
            ("event".into(), "Friday blitz #3".into()),
        ],
    }
}

const SAMPLE_TEXT: &str = "\
TAMSK record 1
level: 3
setup: standard
hourglass_ms: 3000
neutral_ms: 300
drop_grace_ms: 200
full_socket: lose
game_clock: none
turn_limit_ms: none
abort_ms: 3000
late_release_ms: 500
red: Alice
black: Bob the Builder
game: 42
date: 2026-11-21
event: Friday blitz #3
result: Black wins: Red abandoned the game; rings 31 red, 30 black

#  move      time  who      action
     1.     0.000  red      d1-d2
            0.100  red      flip
     2.     0.150  black    start g1
            0.250  black    release f1
            0.300  black    drop
     3.     1.000  red      g4-f4.
            1.500  advance
     4.     2.000  black    a1-b1
            9.000  abandon  red
            9.500  end
";

#[test]
fn writes_the_documented_layout() {
    assert_eq!(sample().to_text(), SAMPLE_TEXT);
}

#[test]
fn reads_back_exactly() {
    let file = sample();
    let back = RecordFile::parse(&file.to_text()).unwrap();
    assert_eq!(back, file);
    assert_eq!(back.to_text(), SAMPLE_TEXT);
    let loaded = load(SAMPLE_TEXT).unwrap();
    assert_eq!(loaded.format, Format::Record);
    assert_eq!(loaded.game, file.record.replay().unwrap());
    let outcome = loaded.game.outcome().unwrap();
    assert_eq!(outcome.winner, Some(Player::Black));
    assert_eq!(loaded.game.rings_on(sq("d2")), 1);
    assert_eq!(loaded.game.rings_on(sq("f4")), 0, "g4-f4. did not drop");
}

#[test]
fn server_entries_round_trip() {
    let mut file = sample();
    file.record.entries.truncate(2);
    file.record.entries.push(Entry {
        at_ms: 700,
        kind: EntryKind::Abort {
            reason: AbortReason::NoFirstMove {
                player: Player::Black,
            },
        },
    });
    file.record.end_ms = None;
    file.record.red = Some(String::new());
    file.record.black = None;
    let text = file.to_text();
    assert!(
        text.contains("\n            0.700  abort    no-first-move black\n"),
        "{text}"
    );
    assert!(text.contains("\nred:\n"), "{text}");
    assert!(!text.contains("black:"), "{text}");
    assert_eq!(RecordFile::parse(&text).unwrap(), file);
    file.record.entries[2].kind = EntryKind::Abort {
        reason: AbortReason::Shutdown,
    };
    let text = file.to_text();
    assert!(text.contains("abort    shutdown\n"), "{text}");
    assert!(
        text.contains("result: aborted at 0.700: the server shut down\n"),
        "{text}"
    );
    assert_eq!(RecordFile::parse(&text).unwrap(), file);
}

/// The lines RECORDS.md section 4 lists that a live game's record has beside actions: lag
/// figures after an action, `lag` changes, and `both-absent`; read as written, and written
/// back the same.
#[test]
fn lag_lines_and_both_absent_read_as_documented() {
    let text = "TAMSK record 1\nlevel: 3\n\
        0.000  lag red 40\n\
        1.   0.500  red d1-d2  lag=40 comp=0\n\
        0.900  lag black 120\n\
        2.   1.200  black a1-a2  lag=120 comp=35\n\
        3.   2.000  red g4-f4. comp=7\n\
        90.000  both-absent\n";
    let file = RecordFile::parse(text).unwrap();
    let kinds: Vec<&EntryKind> = file.record.entries.iter().map(|e| &e.kind).collect();
    assert_eq!(
        kinds[0],
        &EntryKind::Lag {
            player: Player::Red,
            lag_ms: 40
        }
    );
    let EntryKind::Act {
        lag_ms, comp_ms, ..
    } = kinds[3]
    else {
        panic!("an action: {kinds:?}")
    };
    assert_eq!((*lag_ms, *comp_ms), (Some(120), Some(35)));
    let EntryKind::Act {
        lag_ms, comp_ms, ..
    } = kinds[4]
    else {
        panic!("an action: {kinds:?}")
    };
    assert_eq!((*lag_ms, *comp_ms), (None, Some(7)));
    assert_eq!(kinds[5], &EntryKind::BothAbsent);
    let written = file.to_text();
    assert!(written.contains("lag      black 120\n"), "{written}");
    assert!(written.contains("a1-a2  lag=120 comp=35\n"), "{written}");
    assert!(written.contains("both-absent"), "{written}");
    assert_eq!(RecordFile::parse(&written).unwrap(), file);
}

#[test]
fn hand_written_records_are_read_leniently() {
    // Settings left out take the level's defaults; no move numbers; comments.
    let text = "# my game\ntamsk record 1\nlevel: 1\nblack: Bob\n\n0 RED d1-d2  # opening\n2.5 black g1-f1\n";
    let file = RecordFile::parse(text).unwrap();
    assert_eq!(file.record.settings, Settings::level(Level::One));
    assert_eq!(file.record.entries.len(), 2);
    assert_eq!(file.record.entries[1].at_ms, 2_500);
    assert_eq!(file.record.black.as_deref(), Some("Bob"));
    let game = load(text).unwrap().game;
    assert!(game.is_full(sq("f1")));
    // Free fields may repeat and come back in order; the magic line's case is free.
    let text = "Tamsk Record 1\nlevel: 2\nnote: one\nround: 3\nnote: two\n";
    let file = RecordFile::parse(text).unwrap();
    let tags: Vec<(&str, &str)> = file
        .tags
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(tags, [("note", "one"), ("round", "3"), ("note", "two")]);
    assert_eq!(RecordFile::parse(&file.to_text()).unwrap(), file);
}

fn error(text: &str) -> RecordError {
    match load(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e,
    }
}

fn at(e: &RecordError) -> (usize, usize, &str) {
    (e.position.line, e.position.column, e.token.as_str())
}

#[test]
fn record_errors_carry_line_column_and_token() {
    let head = "TAMSK record 1\nlevel: 1\n\n";
    let e = error(&format!("{head}  1.  0.000  red  d1-x9\n"));
    assert_eq!(at(&e), (4, 22, "x9"));
    assert_eq!(
        e.to_string(),
        "line 4, column 22: 'x9' is not a square: expected a column a-g and a row, like d4"
    );

    let e = error(&format!(
        "{head}0.000 red d1-d2\n1.000 black g1-f1\n2 red d2-d4\n"
    ));
    assert_eq!(at(&e), (6, 7, "d2-d4"));
    assert_eq!(
        e.to_string(),
        "line 6, column 7: 'd2-d4' is refused for Red: d4 is not adjacent to d2"
    );

    let e = error(&format!("{head}0.000 black d1-d2\n"));
    assert!(e.to_string().contains("it is not Black's turn"), "{e}");

    let e = error(&format!("{head}1.2345 red d1-d2\n"));
    assert_eq!(at(&e), (4, 1, "1.2345"));
    assert!(e.to_string().contains("'1.2345' is not an instant"), "{e}");

    let e = error(&format!("{head}1 blue d1-d2\n"));
    assert_eq!(at(&e), (4, 3, "blue"));

    let e = error(&format!("{head}1 red\n"));
    assert!(e.to_string().contains("'red' needs an action"), "{e}");

    let e = error(&format!("{head}1 red drop drop\n"));
    assert_eq!(at(&e), (4, 12, "drop"));

    let e = error(&format!("{head}1 end\n2 red d1-d2\n"));
    assert_eq!(at(&e), (5, 1, "2"));
    assert_eq!(*e.kind, RecordErrorKind::AfterEnd);

    let e = error(&format!("{head}1 red d1-d2\nblack: Bob\n"));
    assert_eq!(*e.kind, RecordErrorKind::LateHeader("black".into()));

    let e = error("TAMSK record 2\nlevel: 1\n");
    assert_eq!(at(&e), (1, 14, "2"));

    let e = error("TAMSK record 1\nlevel: 4\n");
    assert_eq!(at(&e), (2, 8, "4"));
    assert!(e.to_string().contains("level must be 1, 2 or 3"), "{e}");

    let e = error("TAMSK record 1\nlevel: 2\nhourglass_ms: 5\n");
    assert_eq!(at(&e), (3, 15, "5"));
    assert!(
        e.to_string().contains("hourglass_ms = 5 is out of range"),
        "{e}"
    );

    // Errors come in the order of the text: a bad header before a bad entry.
    let e = error("TAMSK record 1\nlevel: 2\nhourglass_ms: lots\n\n0 red d1-x9\n");
    assert_eq!(at(&e), (3, 15, "lots"));

    let e = error("TAMSK record 1\nlevel: 2\nlevel: 3\n");
    assert_eq!(*e.kind, RecordErrorKind::Duplicate("level".into()));

    let e = error("TAMSK record 1\nsetup: standard\n");
    assert_eq!(*e.kind, RecordErrorKind::NoLevel);

    let e = error("TAMSK record 1\nlevel 1\n");
    assert_eq!(at(&e), (2, 1, "level"));

    let e = error("TAMSK record 1\nlevel: 1\ngame_clock: soon\n");
    assert!(e.to_string().contains("'soon' is not a game clock"), "{e}");

    let e = error(&format!("{head}1 abort later\n"));
    assert_eq!(at(&e), (4, 9, "later"));

    let e = error(&format!("{head}0 red resign\n1 black g1-f1\n"));
    assert_eq!(
        e.to_string(),
        "line 5, column 9: 'g1-f1' comes after the end of the game (Black wins: Red resigned; rings 32 red, 32 black)"
    );
}

#[test]
fn empty_input_is_an_error() {
    for text in ["", "  \n\n", "# only a comment\n"] {
        assert_eq!(*error(text).kind, RecordErrorKind::Empty, "{text:?}");
    }
}

// ----- network move lists -----

#[test]
fn imports_the_encyclopedia_opening() {
    let loaded = load("d1-d2 g1-f1 d2-e2 f1-e1\n").unwrap();
    assert_eq!(loaded.format, Format::MoveList);
    let game = &loaded.game;
    assert_eq!((game.rings().red, game.rings().black), (30, 30));
    assert!(game.is_full(sq("f1")) && game.is_full(sq("e1")));
    assert_eq!(game.rings_on(sq("d2")), 1);
    assert_eq!(game.rings_on(sq("e2")), 1);
    assert_eq!(game.turn(), Player::Red);
    assert!(game.is_playing());
    let record = &loaded.file.record;
    assert_eq!(record.settings.level, Level::One);
    assert_eq!(record.settings.game_clock, None);
    let who: Vec<Player> = record
        .entries
        .iter()
        .map(|e| match e.kind {
            EntryKind::Act { player, .. } => player,
            _ => panic!("only moves"),
        })
        .collect();
    assert_eq!(
        who,
        [Player::Red, Player::Black, Player::Red, Player::Black]
    );
    let times: Vec<u64> = record.entries.iter().map(|e| e.at_ms).collect();
    assert_eq!(times, [1_000, 2_000, 3_000, 4_000]);
    // The imported record written and read back replays to the same state.
    let again = load(&loaded.file.to_text()).unwrap();
    assert_eq!(again.format, Format::Record);
    assert_eq!(&again.game, game);
}

#[test]
fn move_list_seconds_are_cumulative_instants() {
    let loaded = load("d1-d2/13\ng1-f1/45   d2-e2/7 f1-e1\n").unwrap();
    let times: Vec<u64> = loaded.file.record.entries.iter().map(|e| e.at_ms).collect();
    assert_eq!(times, [13_000, 58_000, 65_000, 66_000]);
    assert_eq!(loaded.game.rings().red, 30);
    // A first move slower than the default abort time does not abort an import.
    let slow = load("d1-d2/95 g1-f1/300").unwrap();
    assert!(slow.game.is_playing());
    assert_eq!(slow.game.rings().black, 31);
}

#[test]
fn move_list_errors_name_the_move_and_where_it_is() {
    let e = error("d1-d2 g1-f1\nd2-e2 f1-x9");
    assert_eq!(e.position.move_number, Some(4));
    assert_eq!(at(&e), (2, 10, "f1-x9"));
    assert_eq!(
        e.to_string(),
        "move 4 'f1-x9' (line 2, column 10): 'x9' is not a square: expected a column a-g and a row, like d4"
    );

    let e = error("d1-d3");
    assert_eq!(
        e.to_string(),
        "move 1 'd1-d3' (line 1, column 1): 'd1-d3' is refused for Red: d3 is not adjacent to d1"
    );

    let e = error("d1-d2 a1-a2 hello");
    assert_eq!(at(&e), (1, 13, "hello"));
    assert!(
        e.to_string()
            .starts_with("move 3 'hello' (line 1, column 13): 'hello' is not a move"),
        "{e}"
    );

    let e = error("d1-d2/");
    assert_eq!(
        e.to_string(),
        "move 1 'd1-d2/' (line 1, column 7): 'd1-d2/' needs the seconds after '/', like d1-d2/13"
    );

    let e = error("d1-d2/abc");
    assert_eq!(at(&e), (1, 7, "d1-d2/abc"));
    assert!(e.to_string().contains("'abc' is not an instant"), "{e}");

    let commas = load("d1-d2/13, g1-f1/2;d2-e2 ,f1-e1").unwrap();
    assert_eq!(
        commas.game.rings(),
        load("d1-d2 g1-f1 d2-e2 f1-e1").unwrap().game.rings()
    );
    let e = error("d1-d2, g1-f1,x");
    assert_eq!(at(&e), (1, 14, "x"));

    let e = error("d1-d2 drop");
    assert_eq!(e.position.move_number, Some(2));
    assert!(e.to_string().contains("'drop' is not a move"), "{e}");

    // Moving Black's hourglass on Red's turn.
    let e = error("a1-a2");
    assert!(e.to_string().contains("belongs to the other player"), "{e}");
}

#[test]
fn a_move_list_without_drops_left_passes_and_ends() {
    // Move numbers are tolerated; a pass is implied by the engine.
    let loaded = load("1. d1-d2 2. g1-f1").unwrap();
    assert_eq!(loaded.file.record.entries.len(), 2);
}

// ----- steps -----

#[test]
fn steps_walk_to_the_replayed_state() {
    let record = sample().record;
    let steps: Vec<Step> = record.steps().map(|s| s.unwrap()).collect();
    assert_eq!(steps.len(), record.entries.len() + 1);
    assert_eq!(steps[0].game.rings_on(sq("d2")), 1);
    assert!(steps[0]
        .events
        .iter()
        .any(|e| matches!(e, Event::RingDropped { square, .. } if *square == sq("d2"))));
    let last = steps.last().unwrap();
    assert_eq!(last.index, record.entries.len());
    assert_eq!(last.entry.at_ms, 9_500);
    assert_eq!(last.game, record.replay().unwrap());

    let mut bad = record.clone();
    bad.entries[1] = act(100, Player::Red, "d2-d3");
    let results: Vec<_> = bad.steps().collect();
    assert_eq!(results.len(), 2);
    assert!(matches!(
        results[1],
        Err((1, ActionError::NotYourTurn { .. }))
    ));
}

// ----- random legal games -----

/// A random legal game, entry by entry, as a server would record it.
fn random_record(seed: u64, settings: Settings, max_steps: usize) -> Record {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut game = Game::new(settings.clone());
    let mut entries = Vec::new();
    for _ in 0..max_steps {
        if !game.is_playing() {
            break;
        }
        let at = game.now() + rng.gen_range(0..80);
        let mut probe = game.clone();
        probe.advance(at);
        let player = if rng.gen_bool(0.8) {
            probe.turn()
        } else {
            probe.turn().other()
        };
        let legal: Vec<Action> = probe
            .legal_actions(player)
            .into_iter()
            .filter(|a| match a {
                Action::Resign => rng.gen_bool(0.002),
                // Mostly avoid losing at once, so that games run long.
                Action::Move { to, .. } | Action::Release { to } if probe.is_full(*to) => {
                    rng.gen_bool(0.03)
                }
                _ => true,
            })
            .collect();
        let kind = if !legal.is_empty() && rng.gen_bool(0.85) {
            EntryKind::act(player, legal[rng.gen_range(0..legal.len())])
        } else if rng.gen_bool(0.01) {
            EntryKind::Abandon { player }
        } else {
            EntryKind::Advance
        };
        let entry = Entry { at_ms: at, kind };
        entry
            .apply_to(&mut game)
            .unwrap_or_else(|e| panic!("legal {entry:?} refused: {e}"));
        entries.push(entry);
    }
    let end_ms = rng
        .gen_bool(0.5)
        .then(|| game.now() + rng.gen_range(0..5_000));
    Record {
        settings,
        red: rng
            .gen_bool(0.5)
            .then(|| format!("Red {}", rng.gen_range(0..100))),
        black: rng.gen_bool(0.5).then(|| "Black player".to_string()),
        entries,
        end_ms,
    }
}

fn any_settings() -> impl Strategy<Value = Settings> {
    (1u8..=3, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(level, placement, reject, slow)| {
            let level = Level::try_from(level).unwrap();
            let mut s = if slow {
                Settings::level(level)
            } else {
                Settings::blitz(level)
            };
            if placement {
                s.setup = Setup::Placement;
            }
            if reject {
                s.full_socket = FullSocket::Reject;
            }
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_games_round_trip(seed in any::<u64>(), settings in any_settings(),
                               tags in proptest::collection::vec(("[a-z][a-z0-9_-]{0,8}", "[ -~]{0,20}"), 0..3)) {
        let record = random_record(seed, settings, 400);
        let tags: Vec<(String, String)> = tags
            .into_iter()
            .filter(|(k, _)| !reserved(k))
            .map(|(k, v)| (k, v.trim().to_string()))
            .collect();
        let file = RecordFile { record: record.clone(), tags };
        let text = file.to_text();
        let back = RecordFile::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &file);
        prop_assert_eq!(back.to_text(), text.clone());
        let loaded = load(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&loaded.game, &record.replay().unwrap());
        let result_line = format!("result: {}\n", describe_state(&loaded.game));
        prop_assert!(text.contains(&result_line));
    }
}

#[test]
fn placement_glasses_appear_in_records() {
    let mut s = Settings::blitz(Level::Two);
    s.setup = Setup::Placement;
    let record = Record {
        settings: s,
        red: None,
        black: None,
        entries: vec![act(0, Player::Red, "X@d4"), act(10, Player::Black, "C@e4.")],
        end_ms: None,
    };
    let text = record.to_text();
    assert!(text.contains("1.     0.000  red      X@d4\n"), "{text}");
    assert!(text.contains("2.     0.010  black    C@e4.\n"), "{text}");
    let game = load(&text).unwrap().game;
    assert_eq!(game.occupant(sq("e4")), Glass::from_label('C'));
    assert_eq!(game.rings_on(sq("d4")), 1);
    assert_eq!(game.rings_on(sq("e4")), 0);
}
