//! The example games in `docs/examples/`: played by the engine with a simple seeded
//! policy, checked to be exactly what this generator produces, and replayed by the
//! binary. `TAMSK_UPDATE_EXAMPLES=1 cargo test -p tamsk-client-cli --test examples`
//! rewrites them.

use std::path::PathBuf;
use std::process::Command;

use protocol::game::{Action, Game, Player};
use protocol::record::{self, Entry, EntryKind, Record, RecordFile};
use protocol::settings::{Level, Settings, Setup};
use serde_json::Value;

/// xorshift64*: a tiny deterministic generator, the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// How much the policy likes an action (0: never).
fn weight(game: &Game, action: &Action) -> u64 {
    match *action {
        Action::Move { to, drop, .. } if !game.is_full(to) => {
            if drop {
                10
            } else {
                1
            }
        }
        Action::Place { drop, .. } => {
            if drop {
                10
            } else {
                2
            }
        }
        Action::Drop => 40,
        Action::Claim => 20,
        Action::PenaltyDrop { .. } => 1,
        Action::Flip => 8,
        _ => 0,
    }
}

/// A whole game: at each step some time passes (`think` ms, at random), then a random
/// action of either player, weighted by [`weight`]: mostly moves that drop, never onto a
/// full socket, drops and claims when open, the 15-second timer now and then.
fn play(settings: Settings, seed: u64, think: (u64, u64)) -> Record {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut game = Game::new(settings.clone());
    let mut entries = Vec::new();
    for _ in 0..20_000 {
        if !game.is_playing() {
            break;
        }
        let at = game.now() + rng.range(think.0, think.1);
        let mut probe = game.clone();
        probe.advance(at);
        if !probe.is_playing() {
            game = probe;
            break;
        }
        let mut choices = Vec::new();
        for player in Player::BOTH {
            for action in probe.legal_actions(player) {
                let w = weight(&probe, &action);
                if w > 0 {
                    choices.push((w, player, action));
                }
            }
        }
        let total: u64 = choices.iter().map(|c| c.0).sum();
        if total == 0 {
            match probe.next_deadline() {
                Some(t) => {
                    game.advance(t);
                }
                None => break,
            }
            continue;
        }
        let mut pick = rng.range(1, total);
        let &(_, player, action) = choices
            .iter()
            .find(|c| {
                if pick <= c.0 {
                    true
                } else {
                    pick -= c.0;
                    false
                }
            })
            .unwrap();
        game.apply(player, action, at).unwrap();
        entries.push(Entry {
            at_ms: at,
            kind: EntryKind::act(player, action),
        });
    }
    assert!(!game.is_playing(), "seed {seed}: the game did not end");
    Record {
        settings,
        red: Some(format!("random bot {seed}a")),
        black: Some(format!("random bot {seed}b")),
        entries,
        end_ms: game.outcome().map(|o| o.ended_at_ms),
    }
}

fn file(record: Record, about: &str, seed: u64) -> String {
    RecordFile {
        record,
        tags: vec![
            ("event".into(), about.into()),
            (
                "generator".into(),
                format!("client-cli/tests/examples.rs, seed {seed}"),
            ),
        ],
    }
    .to_text()
}

/// A network-server move list: Level 1, every move by the player on turn dropping when
/// it can, with the seconds each move took.
fn network_list(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut game = Game::new(record::move_list_settings());
    let mut tokens = Vec::new();
    let mut now = 0;
    while game.is_playing() && !game.is_ending() && tokens.len() < 2_000 {
        let player = game.turn();
        let moves: Vec<Action> = game
            .legal_actions(player)
            .into_iter()
            .filter(|a| matches!(a, Action::Move { to, drop: true, .. } if !game.is_full(*to)))
            .collect();
        let action = moves[rng.range(0, moves.len() as u64 - 1) as usize];
        let seconds = rng.range(3, 29);
        now += seconds * 1000;
        game.apply(player, action, now).unwrap();
        let Action::Move { from, to, .. } = action else {
            unreachable!()
        };
        tokens.push(format!("{from}-{to}/{seconds}"));
    }
    let mut text = String::new();
    for line in tokens.chunks(8) {
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    text
}

struct Example {
    name: &'static str,
    text: String,
}

fn examples() -> Vec<Example> {
    let mut level1 = Settings::level(Level::One);
    level1.game_clock = None;
    let mut placement = Settings::blitz(Level::Two);
    placement.setup = Setup::Placement;
    vec![
        Example {
            name: "level1-full-game.tamsk",
            text: file(
                play(level1, 3, (1_000, 6_000)),
                "Level 1 game played to the end",
                3,
            ),
        },
        Example {
            name: "level3-blitz-deaths.tamsk",
            text: file(
                play(Settings::blitz(Level::Three), 22, (50, 700)),
                "Level 3 blitz (3 s hourglasses, 0.3 s neutral timer) with deaths",
                22,
            ),
        },
        Example {
            name: "level3-blitz-tiebreak.tamsk",
            text: file(
                play(Settings::blitz(Level::Three), 20, (50, 900)),
                "Level 3 blitz decided by the last living hourglass",
                20,
            ),
        },
        Example {
            name: "level2-placement-blitz.tamsk",
            text: file(
                play(placement, 11, (50, 900)),
                "Level 2 blitz, hourglasses start off the board",
                11,
            ),
        },
        Example {
            name: "network-move-list.txt",
            text: network_list(7),
        },
    ]
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/examples")
}

#[test]
fn examples_are_what_the_engine_plays() {
    let update = std::env::var_os("TAMSK_UPDATE_EXAMPLES").is_some();
    for ex in examples() {
        let path = dir().join(ex.name);
        if update {
            std::fs::create_dir_all(dir()).unwrap();
            std::fs::write(&path, &ex.text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (TAMSK_UPDATE_EXAMPLES=1 writes it)",
                path.display()
            )
        });
        assert_eq!(on_disk, ex.text, "{} is stale", ex.name);
    }
}

fn replay(name: &str) -> Value {
    let path = dir().join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(["replay", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What the engine itself says about an example.
fn engine(name: &str) -> Game {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    record::load(&text).unwrap().game
}

fn check_finished(name: &str) -> Value {
    let v = replay(name);
    let game = engine(name);
    let outcome = game.outcome().expect("finished");
    assert_eq!(v["finished"], true, "{name}");
    assert_eq!(
        v["winner"],
        serde_json::to_value(outcome.winner).unwrap(),
        "{name}"
    );
    assert_eq!(v["reason"], outcome.reason.describe(), "{name}");
    assert_eq!(v["rings"]["red"], game.rings().red, "{name}");
    assert_eq!(v["rings"]["black"], game.rings().black, "{name}");
    let on_board: u64 = v["board"]
        .as_object()
        .unwrap()
        .values()
        .map(|s| s["rings"].as_u64().unwrap())
        .sum();
    let held = v["rings"]["red"].as_u64().unwrap() + v["rings"]["black"].as_u64().unwrap();
    assert_eq!(on_board + held, 64, "{name}: rings are conserved");
    v
}

#[test]
fn the_level1_example_ends_with_a_winner() {
    let v = check_finished("level1-full-game.tamsk");
    assert_eq!(v["level"], 1);
    assert_ne!(v["winner"], Value::Null);
    assert_eq!(v["decision"], "rings");
    let (red, black) = (
        v["rings"]["red"].as_u64().unwrap(),
        v["rings"]["black"].as_u64().unwrap(),
    );
    let winner = if red < black { "red" } else { "black" };
    assert_eq!(v["winner"], winner, "fewer rings left wins");
}

#[test]
fn the_blitz_example_has_deaths() {
    let v = check_finished("level3-blitz-deaths.tamsk");
    assert_eq!(v["level"], 3);
    let dead = v["glasses"]
        .as_object()
        .unwrap()
        .values()
        .filter(|g| !g["dead_at_ms"].is_null())
        .count();
    assert!(dead >= 2, "{dead} hourglasses died");
    let text = std::fs::read_to_string(dir().join("level3-blitz-deaths.tamsk")).unwrap();
    assert!(text.contains(" flip\n"), "the 15-second timer is used");
}

#[test]
fn the_tiebreak_example_is_decided_by_the_last_living_hourglass() {
    let v = check_finished("level3-blitz-tiebreak.tamsk");
    assert_eq!(v["decision"], "tiebreak");
    assert_eq!(v["rings"]["red"], v["rings"]["black"]);
    let lineup = v["tiebreak"]["lineup"].as_array().unwrap();
    let deciding = v["tiebreak"]["deciding_index"].as_u64().unwrap() as usize;
    assert_eq!(lineup[deciding]["player"], v["winner"]);
    // Latest death first.
    let times: Vec<u64> = lineup
        .iter()
        .map(|e| e["dies_at_ms"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
}

#[test]
fn the_placement_example_starts_off_the_board() {
    let v = check_finished("level2-placement-blitz.tamsk");
    assert_eq!(v["settings"]["setup"], "placement");
    let text = std::fs::read_to_string(dir().join("level2-placement-blitz.tamsk")).unwrap();
    assert!(text.contains("@"), "placements");
}

#[test]
fn the_network_move_list_example_is_a_finished_level1_game() {
    let v = check_finished("network-move-list.txt");
    assert_eq!(v["format"], "move_list");
    assert_eq!(v["level"], 1);
    // Every move dropped while it could: the rings left are what the moves did not drop.
    let text = std::fs::read_to_string(dir().join("network-move-list.txt")).unwrap();
    assert!(text.split_whitespace().all(|t| t.contains('/')));
}

#[test]
fn the_documented_example_is_the_example_file() {
    let doc = std::fs::read_to_string(dir().join("../RECORDS.md")).unwrap();
    let example = std::fs::read_to_string(dir().join("level3-blitz-tiebreak.tamsk")).unwrap();
    assert!(
        doc.contains(&format!("```text\n{example}```")),
        "docs/RECORDS.md section 1 is stale"
    );
    let v = replay("level3-blitz-tiebreak.tamsk");
    let result = format!("`Result: {}`", v["result"].as_str().unwrap());
    assert!(doc.contains(&result), "docs/RECORDS.md quotes {result}");
}
