//! The journal's cost alone: CPU per journal entry of the SQLite store, as a server at
//! `--rate` moves a second over `--games` live games submits them (one entry per move,
//! each game's entries in order, a game ending and a new one starting as they finish).
//!
//!     cargo run --release -p tamsk-server --example store_bench -- [--games 1000]
//!         [--rate 3000] [--secs 8] [--moves 60]
//!
//! Prints the process's CPU per entry (the writer's thread and SQLite's together) over
//! the window, and how far behind the writer was at the end.

use std::time::{Duration, Instant};

use protocol::game::{Action, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::Settings;
use protocol::wire::PlayerRef;
use server::store::{GameStart, PlayerRow, Store, Write};

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("a number"))
        .unwrap_or(default)
}

/// CPU time of this process so far (user + system).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after = &stat[stat.rfind(')').expect("stat") + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

fn start(id: uuid::Uuid, red: &PlayerRow, black: &PlayerRow) -> GameStart {
    let r = |p: &PlayerRow| PlayerRef {
        player_id: p.id.clone(),
        name: p.name.clone(),
        rating: None,
    };
    GameStart {
        id,
        red: r(red),
        black: r(black),
        settings: Settings::default(),
        started_ms: 1,
        code: None,
        rated: false,
        owner_epoch: 0,
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (games, rate, secs, moves) = (
        arg("--games", 1000) as usize,
        arg("--rate", 3000),
        arg("--secs", 8),
        arg("--moves", 60),
    );
    let dir = tempfile::tempdir()?;
    let store = Store::open(Some(&dir.path().join("bench.db"))).await?;
    let player = |i: usize| PlayerRow {
        id: format!("p{i}"),
        name: format!("player {i}"),
        token_hash: server::store::token_hash(&format!("t{i}")),
        created_ms: 1,
        is_bot: false,
    };
    let (red, black) = (player(0), player(1));
    store.add_player(red.clone()).await;
    store.add_player(black.clone()).await;
    // Each slot's game and how many entries it has.
    let mut slots: Vec<(uuid::Uuid, u64)> = (0..games).map(|_| (uuid::Uuid::now_v7(), 0)).collect();
    for (id, _) in &slots {
        store.submit(Write::GameStarted(start(*id, &red, &black)));
    }
    store.flush().await;
    let entry = |n: u64| Entry {
        at_ms: 1000 + n * 700,
        kind: EntryKind::Act {
            player: if n.is_multiple_of(2) {
                Player::Red
            } else {
                Player::Black
            },
            action: Action::Move {
                from: "d1".parse().unwrap(),
                to: "d2".parse().unwrap(),
                drop: n.is_multiple_of(3),
            },
            lag_ms: Some(40),
            comp_ms: Some(20),
        },
    };
    let tick = Duration::from_millis(1);
    let per_tick = rate as f64 / 1000.0;
    let mut owed = 0.0;
    let mut next = 0usize;
    let (t0, c0) = (Instant::now(), cpu());
    let mut interval = tokio::time::interval(tick);
    let mut written = 0u64;
    while t0.elapsed() < Duration::from_secs(secs) {
        interval.tick().await;
        owed += per_tick;
        while owed >= 1.0 {
            owed -= 1.0;
            let (id, n) = &mut slots[next];
            store.submit(Write::Entry {
                game: *id,
                epoch: 0,
                idx: *n,
                entry: entry(*n),
            });
            *n += 1;
            written += 1;
            if *n == moves {
                // The game ends (its row stored, its journal cleared); another starts.
                let s = start(*id, &red, &black);
                let game = protocol::game::Game::new(s.settings.clone());
                let end = server::store::GameEnd::of(s, &game, Vec::new(), 2, Some("bench"));
                store.submit(Write::GameEnded(Box::new(end), None));
                *id = uuid::Uuid::now_v7();
                *n = 0;
                store.submit(Write::GameStarted(start(*id, &red, &black)));
            }
            next = (next + 1) % games;
        }
    }
    let backlog = store.backlog();
    store.flush().await;
    let (wall, used) = (t0.elapsed(), cpu() - c0);
    println!(
        "store_bench: {written} entries over {games} games in {:.1} s ({:.0}/s), backlog at the end {backlog}; \
         CPU {:.2} s = {:.1} us per entry ({:.0}% of one core)",
        wall.as_secs_f64(),
        written as f64 / wall.as_secs_f64(),
        used.as_secs_f64(),
        used.as_secs_f64() * 1e6 / written as f64,
        used.as_secs_f64() * 100.0 / wall.as_secs_f64(),
    );
    Ok(())
}
