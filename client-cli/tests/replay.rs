//! `tamsk replay` as a user runs it: the built binary on files in a temporary directory.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn write(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("replay-fixtures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn tamsk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(args)
        .output()
        .expect("run tamsk")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// Replays `text` from a file named `name` and returns the JSON summary.
fn replay_json(name: &str, text: &str) -> Value {
    let path = write(name, text);
    let out = tamsk(&["replay", path.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    assert!(stderr(&out).is_empty());
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one JSON object on one line");
    serde_json::from_str(&text).unwrap()
}

/// Replays `text` expecting bad input: exit code 2, nothing on stdout, the message.
fn replay_error(name: &str, text: &str) -> String {
    let path = write(name, text);
    for json in [false, true] {
        let mut args = vec!["replay", path.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let out = tamsk(&args);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{name}: stdout {}", stdout(&out));
    }
    let out = tamsk(&["replay", path.to_str().unwrap()]);
    let message = stderr(&out);
    assert!(
        message.starts_with(&format!("tamsk: {}: ", path.display())),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    message
}

const OPENING: &str = "d1-d2 g1-f1 d2-e2 f1-e1\n";

#[test]
fn the_encyclopedia_opening_as_a_network_move_list() {
    let v = replay_json("opening.txt", OPENING);
    assert_eq!(v["rings"]["red"], 30);
    assert_eq!(v["rings"]["black"], 30);
    assert_eq!(v["finished"], false);
    assert_eq!(v["winner"], Value::Null);
    assert_eq!(v["reason"], Value::Null);
    assert_eq!(v["turn"], "red");
    assert_eq!(v["moves"], 4);
    assert_eq!(v["level"], 1);
    assert_eq!(v["format"], "move_list");
    assert_eq!(v["board"]["f1"]["spare"], 0, "f1 full");
    assert_eq!(v["board"]["e1"]["spare"], 0, "e1 full");
    assert_eq!(v["board"]["d2"]["rings"], 1);
    assert_eq!(v["board"]["d2"]["spare"], 1);
    assert_eq!(v["board"]["e2"]["glass"], "X");
    assert_eq!(v["board"]["e1"]["glass"], "B");
    assert_eq!(v["board"]["d1"]["glass"], Value::Null);
}

#[test]
fn the_opening_drawn_like_the_network_server() {
    let path = write("opening-board.txt", OPENING);
    let out = tamsk(&["replay", path.to_str().unwrap()]);
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    // d2 (spare 1) and e2 with X, e1 full with B, f1 full (lines and columns of the
    // network server's diagram).
    assert_eq!(lines[21], r"/   1  \____/   2  \____/   1  \____/   1  \");
    assert_eq!(lines[22], r"\ A--- /    \      /    \ X--- /    \      /");
    assert_eq!(lines[23], r" \____/   1  \____/   1  \____/   0  \____/");
    assert_eq!(lines[25], r"   A1  \____/   1  \____/   0  \____/  G1");
    assert_eq!(lines[26], r"            \      /    \ B--- /");
    assert!(lines[1].ends_with("30 rings remaining"), "{}", lines[1]);
    assert!(
        lines[30].ends_with("Red (XYZ)  <- to move"),
        "{}",
        lines[30]
    );
    assert!(text.contains("\nRings left: Red 30, Black 30\n"), "{text}");
    assert!(
        text.contains("\nResult: unfinished: Red to move (4 moves played)\n"),
        "{text}"
    );
}

#[test]
fn network_seconds_suffixes_give_the_instants() {
    let v = replay_json("timed.txt", "d1-d2/13 g1-f1/20\nd2-e2/7  f1-e1/45\n");
    assert_eq!(v["rings"]["red"], 30);
    assert_eq!(v["rings"]["black"], 30);
    assert_eq!(v["end_ms"], 85_000);
    assert_eq!(v["finished"], false);
}

#[test]
fn a_move_onto_a_full_socket_loses() {
    // f1 is full and free again after Black's f1-e1: Red's e2-f1 loses at once.
    let v = replay_json("full.txt", "d1-d2 g1-f1 d2-e2 f1-e1 e2-f1");
    assert_eq!(v["finished"], true);
    assert_eq!(v["winner"], "black");
    assert_eq!(v["reason"], "Red moved onto a full socket");
    assert_eq!(v["reason_code"], "full_socket");
    assert_eq!(v["decision"], "forfeit");
}

const RECORD: &str = "\
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
black: Bob
date: 2026-11-21
result: Black wins: Red resigned; rings 30 red, 30 black

#  move      time  who      action
     1.     0.000  red      d1-d2
            0.100  red      flip
     2.     0.150  black    start g1
            0.250  black    release f1
            0.300  black    drop
     3.     1.000  red      g4-f4
     4.     2.000  black    a1-b1.
            2.050  black    drop
            2.900  red      resign
";

#[test]
fn a_full_record_with_a_winner() {
    let v = replay_json("record.tamsk", RECORD);
    assert_eq!(v["format"], "record");
    assert_eq!(v["level"], 3);
    assert_eq!(v["finished"], true);
    assert_eq!(v["winner"], "black");
    assert_eq!(v["reason"], "Red resigned");
    assert_eq!(v["rings"]["red"], 30);
    assert_eq!(v["rings"]["black"], 30);
    assert_eq!(v["players"]["red"], "Alice");
    assert_eq!(v["end_ms"], 2_900);
    assert_eq!(v["board"]["b1"]["rings"], 1);

    let path = write("record-text.tamsk", RECORD);
    let text = stdout(&tamsk(&["replay", path.to_str().unwrap()]));
    assert!(text.starts_with("Red: Alice   Black: Bob\n"), "{text}");
    assert!(
        text.contains("\nResult: Black wins: Red resigned; rings 30 red, 30 black\n"),
        "{text}"
    );
    // X moved at 0 and Y at 1.0 with 3 s of sand: 0.1 s and 1.1 s left at 2.9 s.
    assert!(text.contains("X d2 1s  Y f4 2s  Z a4 ---"), "{text}");
}

#[test]
fn a_drawn_game_by_repetition() {
    let text = "TAMSK record 1\nlevel: 1\ngame_clock: none\n\n\
                1 red d1-d2.\n2 black g1-f1.\n3 red d2-d1.\n4 black f1-g1.\n\
                5 red d1-d2.\n6 black g1-f1.\n7 red d2-d1.\n8 black f1-g1.\n9 red d1-d2.\n";
    let v = replay_json("draw.tamsk", text);
    assert_eq!(v["finished"], true);
    assert_eq!(v["winner"], Value::Null);
    assert_eq!(v["decision"], "draw");
    assert_eq!(v["reason"], "the same position occurred three times");
    assert_eq!(v["rings"]["red"], 32);
}

/// A network move list (every move drops when it may, 1 s apart) whose last move makes the
/// third repetition while the other player has no move: from move 53 Red, boxed in, is
/// passed after every move of Black, who from move 55 has no rings and shuffles B and C.
/// Red has no claim on Black's moves (he is not on turn), so each of them is complete at
/// once and the game ends at the 63rd move, not one move later (rules page, section 4).
const REPETITION_WHILE_PASSED: &str = "a4-a3 a1-a2 g4-g3 g1-f1 a3-b3 d7-d6 g3-f4 d6-e5 f4-g4 \
    f1-e2 b3-b2 e2-e1 b2-c3 e5-e4 g4-f4 e4-f3 c3-b2 a2-b3 b2-a1 f3-e4 d1-d2 e1-e2 a1-b1 b3-b4 \
    b1-c2 b4-c5 c2-d3 c5-d5 f4-e5 e2-e3 e5-f5 d5-d6 d3-c3 d6-e6 c3-d3 e6-d7 d3-c2 e3-d3 c2-c1 \
    d7-c6 d2-d1 e4-d5 d1-d2 d3-d4 d4-e3 c6-c5 c5-b4 e3-d4 d5-c4 b4-b5 c4-d5 b5-a4 d4-e3 e3-f3 \
    d5-e4 f3-g2 g2-g1 g1-g2 g2-f2 f2-g1 g1-f2 e4-d4 d4-e4\n";

#[test]
fn a_repetition_while_the_other_player_is_passed_ends_at_that_move() {
    let v = replay_json("repetition-passed.txt", REPETITION_WHILE_PASSED);
    assert_eq!(v["format"], "move_list");
    assert_eq!(v["finished"], true, "{}", v["result"]);
    assert_eq!(v["reason_code"], "repetition");
    assert_eq!(v["moves"], 63);
    assert_eq!(v["end_ms"], 63_000, "ended at the last move");
    assert_eq!(v["rings"]["black"], 0);
    assert_eq!(v["rings"]["red"], 10);
    assert_eq!(v["winner"], "black");
    // One move more is refused: the game was over.
    let longer = format!("{} f2-g1\n", REPETITION_WHILE_PASSED.trim_end());
    let m = replay_error("repetition-passed-longer.txt", &longer);
    assert!(m.contains("move 64 'f2-g1'"), "{m}");
}

#[test]
fn an_aborted_game_is_over_without_a_result() {
    let v = replay_json("aborted.tamsk", "TAMSK record 1\nlevel: 1\n\n40 end\n");
    assert_eq!(v["finished"], false);
    assert_eq!(v["over"], true);
    assert_eq!(v["status"], "aborted");
    assert_eq!(v["winner"], Value::Null);
    assert_eq!(
        v["reason"],
        "aborted at 30.000: Red did not make his first move in time"
    );
    let m = replay_error("late.tamsk", "TAMSK record 1\nlevel: 1\n\n45 red d1-d2\n");
    assert!(
        m.ends_with(": line 4, column 8: 'd1-d2' comes after the end of the game (aborted at 30.000: Red did not make his first move in time)\n"),
        "{m}"
    );
}

#[test]
fn standard_input_is_read_with_a_dash() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(["replay", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(OPENING.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rings"]["black"], 30);
}

#[test]
fn an_unknown_square_is_named_with_its_position() {
    let m = replay_error("x9.txt", "d1-d2 g1-f1\nd2-e2 d1-x9\n");
    assert!(
        m.ends_with(": move 4 'd1-x9' (line 2, column 10): 'x9' is not a square: expected a column a-g and a row, like d4\n"),
        "{m}"
    );
}

#[test]
fn an_illegal_move_is_named_with_its_position() {
    let m = replay_error("d3.txt", "d1-d3");
    assert!(
        m.ends_with(": move 1 'd1-d3' (line 1, column 1): 'd1-d3' is refused for Red: d3 is not adjacent to d1\n"),
        "{m}"
    );
    let m = replay_error("occupied.txt", "d1-d2 g1-f1 d2-e2 f1-e2");
    assert!(
        m.ends_with(
            ": move 4 'f1-e2' (line 1, column 19): 'f1-e2' is refused for Black: e2 is occupied\n"
        ),
        "{m}"
    );
    let m = replay_error("after-end.txt", "d1-d2 g1-f1 d2-e2 f1-e1 e2-f1 a1-a2");
    assert!(
        m.ends_with(": move 6 'a1-a2' (line 1, column 31): 'a1-a2' comes after the end of the game (Black wins: Red moved onto a full socket; rings 30 red, 30 black)\n"),
        "{m}"
    );
}

#[test]
fn garbage_is_named_with_its_position() {
    let m = replay_error("garbage.txt", "d1-d2\n  g1-f1 banana\n");
    assert!(
        m.contains("move 3 'banana' (line 2, column 9): 'banana' is not a move"),
        "{m}"
    );
    let m = replay_error("binary.txt", "\u{1}\u{2}zz");
    assert!(m.contains("line 1, column 1"), "{m}");
    let path = write("bytes.bin", "");
    std::fs::write(&path, b"d1-d2\ng1-f1 \xff\xfe junk").unwrap();
    let out = tamsk(&["replay", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out)
            .ends_with(": line 2, column 7: byte 0xff is not text: a game file is UTF-8 text\n"),
        "{}",
        stderr(&out)
    );
    let m = replay_error("empty.txt", "\n\n");
    assert!(m.contains("empty input"), "{m}");
}

#[test]
fn a_bad_record_line_is_named_with_its_position() {
    let bad = RECORD.replace(
        "     3.     1.000  red      g4-f4",
        "     3.     1.000  red      g4-g9",
    );
    let m = replay_error("bad-record.tamsk", &bad);
    assert!(
        m.ends_with(": line 23, column 32: 'g9' is off the board: column g has rows 1 to 4\n"),
        "{m}"
    );
    let bad = RECORD.replace("0.300  black    drop", "0.300  black    drip");
    let m = replay_error("bad-word.tamsk", &bad);
    assert!(
        m.contains("line 22, column 29: 'drip' is not an action"),
        "{m}"
    );
    let bad = RECORD.replace(
        "     4.     2.000  black    a1-b1.",
        "     4.     2.000  black    a1-a3",
    );
    let m = replay_error("illegal-record.tamsk", &bad);
    assert!(
        m.contains("line 24, column 29: 'a1-a3' is refused for Black: a3 is not adjacent to a1"),
        "{m}"
    );
}

#[test]
fn a_missing_file_is_an_io_error() {
    let out = tamsk(&["replay", "/nonexistent/game.tamsk"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("cannot read /nonexistent/game.tamsk"));
}
