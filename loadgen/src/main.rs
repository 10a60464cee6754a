//! `tamsk-load`: drives a running TAMSK server with G concurrent games of chosen settings,
//! W watchers per game, at a target aggregate move rate, for a bounded time; then prints
//! sockets, games, achieved moves/s, move-to-opponent and move-to-watcher latency
//! (HDR histogram percentiles), errors, and the server's RSS and CPU when given its pid.
//!
//! Loopback only: it refuses a server address that is not on this machine.
//!
//! Players are scripted: each keeps a replica of its game (the protocol's engine, fed with
//! each event's entry) and plays the first sensible legal move when its slot comes. When a
//! game ends the two players seek again and their watchers follow them to the new game,
//! so the load stays steady for the whole run.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use futures::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use protocol::game::{Action, Game, Player};
use protocol::record::{Entry, EntryKind};
use protocol::settings::Settings;
use protocol::wire::{ClientMessage, GameId, ServerMessage, PROTOCOL_VERSION};
use tokio::sync::{watch, Semaphore};
use tokio_tungstenite::tungstenite::Message;

mod nodes;
mod report;
mod script;

use report::{lateness_buckets, print_histogram, print_lateness, process_usage};
use script::{player, watcher};

#[derive(Parser, Debug, Clone)]
#[command(
    name = "tamsk-load",
    about = "Load generator for a running TAMSK server (loopback only)"
)]
struct Args {
    /// The server's websocket URL. Given twice or more (or comma-separated): the nodes of
    /// one cluster; the two players of each game seek on different nodes (the cluster's
    /// lobby pairs them and runs each game on one of its players' nodes), watchers alternate between
    /// the nodes.
    #[arg(long, default_value = "ws://127.0.0.1:7878/ws", value_delimiter = ',')]
    server: Vec<String>,
    /// Concurrent games.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Watchers per game.
    #[arg(long, default_value_t = 2)]
    watchers: usize,
    /// Target aggregate moves per second over all games.
    #[arg(long, default_value_t = 2000.0)]
    rate: f64,
    /// How long to drive the load once all games have started, in seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Game settings as JSON (partial: the level's defaults fill the rest).
    #[arg(long, default_value = r#"{"level":1,"game_clock":null}"#)]
    settings: String,
    /// The server's pid, to report its RSS and CPU; repeat (or comma-separate) for every
    /// node and the nats-server: their CPU is summed per move.
    #[arg(long, value_delimiter = ',')]
    server_pid: Vec<u32>,
    /// Connections opened at once while setting up.
    #[arg(long, default_value_t = 200)]
    connect_parallel: usize,
}

/// Latencies in microseconds, merged from every task at the end.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds")
}

/// What one game slot shares between its players and watchers: the current game id and
/// the instant (µs since the run's epoch) the latest move was sent.
struct Slot {
    game: watch::Sender<Option<GameId>>,
    sent_us: AtomicU64,
    /// Moves and latencies count from this instant (µs since the epoch): after set-up.
    measure_from_us: u64,
    measure_until_us: u64,
}

impl Slot {
    fn measuring(&self, now_us: u64) -> bool {
        now_us >= self.measure_from_us && now_us < self.measure_until_us
    }
}

#[derive(Default)]
struct Tally {
    moves: u64,
    errors: u64,
    /// Errors by their code.
    error_codes: BTreeMap<String, u64>,
    games: u64,
    opponent: Option<Histogram<u64>>,
    watcher: Option<Histogram<u64>>,
}

impl Tally {
    fn error(&mut self, code: String) {
        self.errors += 1;
        *self.error_codes.entry(code).or_default() += 1;
    }
}

fn check_loopback(url: &str) -> Result<()> {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    let loopback =
        host == "localhost" || host.starts_with("127.") || host == "[" || url.contains("[::1]");
    if !loopback {
        bail!("refusing {url}: the load generator only targets this machine (127.0.0.0/8, localhost, [::1])");
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Arc::new(Args::parse());
    for server in &args.server {
        check_loopback(server)?;
    }
    let nodes = args.server.len();
    let settings: Settings = serde_json::from_str(&args.settings).context("--settings")?;
    if args.games == 0 || args.rate <= 0.0 || args.duration <= 0.0 || args.duration > 3600.0 {
        bail!("--games must be positive, --rate positive, --duration in (0, 3600] seconds");
    }
    let sockets = args.games * (2 + args.watchers);
    // Each socket is a file; raise the soft limit as far as the hard one allows.
    let (_, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    rlimit::setrlimit(rlimit::Resource::NOFILE, hard, hard)?;
    if sockets as u64 + 64 > hard {
        bail!("{sockets} sockets need more open files than this process may have ({hard}): run several generators");
    }

    let epoch = Instant::now();
    let setup_budget = Duration::from_secs(5 + sockets as u64 / 200);
    let stop = epoch + setup_budget + Duration::from_secs_f64(args.duration);
    let measure_from_us = setup_budget.as_micros() as u64;
    let measure_until_us = (stop - epoch).as_micros() as u64;
    // Server CPU (and memory) is read at both ends of the window the moves are counted in:
    // not after the run, when every socket closes and the server's clean-up would count as
    // the moves' cost.
    let usage_at = |at: Instant| {
        let pids = args.server_pid.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            (
                pids.iter()
                    .map(|&pid| process_usage(pid))
                    .collect::<Vec<_>>(),
                process_usage(std::process::id()),
            )
        })
    };
    let usage_at_start = usage_at(epoch + setup_budget);
    let usage_at_stop = usage_at(stop);
    let lateness_at_start = {
        let server = args.server[0].clone();
        tokio::spawn(async move {
            tokio::time::sleep_until((epoch + setup_budget).into()).await;
            lateness_buckets(&server).await
        })
    };
    let lateness_at_stop = {
        let server = args.server[0].clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(stop.into()).await;
            lateness_buckets(&server).await
        })
    };
    let slots: Vec<Arc<Slot>> = (0..args.games)
        .map(|_| {
            Arc::new(Slot {
                game: watch::channel(None).0,
                sent_us: AtomicU64::new(0),
                measure_from_us,
                measure_until_us,
            })
        })
        .collect();

    // Connections open a batch at a time so the server's accept queue is not flooded.
    let gate = Arc::new(Semaphore::new(args.connect_parallel));
    let mut tasks = tokio::task::JoinSet::new();
    for (g, slot) in slots.iter().enumerate() {
        // The server pairs two seekers of equal settings: a slot's own turn limit (an hour
        // less a few ms: never reached in a load run) makes its two players meet each other.
        let settings = Settings {
            turn_limit_ms: Some(3_600_000 - g as u64),
            ..settings.clone()
        };
        // The slot's first player on node g % n, the second on the next node.
        let first = g % nodes;
        for seat in 0..2 {
            let (args, settings, slot, gate) =
                (args.clone(), settings.clone(), slot.clone(), gate.clone());
            let index = g * 2 + seat;
            let at = (index, (first + seat) % nodes);
            tasks.spawn(player(args, settings, slot, at, (epoch, stop), gate));
        }
        for w in 0..args.watchers {
            let (args, slot, gate) = (args.clone(), slot.clone(), gate.clone());
            let index = g * args.watchers + w;
            // Spread over the nodes.
            let node = (first + g / nodes + w) % nodes;
            tasks.spawn(watcher(args, slot, (index, node), (epoch, stop), gate));
        }
    }
    let mut total = Tally {
        opponent: Some(histogram()),
        watcher: Some(histogram()),
        ..Tally::default()
    };
    let mut failures = 0;
    while let Some(result) = tasks.join_next().await {
        match result? {
            Ok(t) => {
                total.moves += t.moves;
                total.errors += t.errors;
                for (code, n) in t.error_codes {
                    *total.error_codes.entry(code).or_default() += n;
                }
                total.games += t.games;
                if let Some(h) = t.opponent {
                    total.opponent.as_mut().expect("set").add(h)?;
                }
                if let Some(h) = t.watcher {
                    total.watcher.as_mut().expect("set").add(h)?;
                }
            }
            Err(e) => {
                failures += 1;
                if failures <= 3 {
                    eprintln!("task failed: {e:#}");
                }
            }
        }
    }
    let window = args.duration;
    let (before, own_before) = usage_at_start.await?;
    let (after, own_after) = usage_at_stop.await?;
    println!(
        "tamsk-load: {} games x (2 players + {} watchers) = {sockets} sockets, settings {}",
        args.games, args.watchers, args.settings
    );
    println!(
        "games started: {} (seats taken {}), failed tasks: {failures}, errors from server: {}",
        total.games / 2,
        total.games,
        total.errors
    );
    if !total.error_codes.is_empty() {
        println!("errors by code: {:?}", total.error_codes);
    }
    println!(
        "moves: {} in the {window:.1} s measured after {:.0} s of set-up -> {:.0} moves/s (target {:.0})",
        total.moves,
        setup_budget.as_secs_f64(),
        total.moves as f64 / window,
        args.rate
    );
    print_histogram("move-to-opponent", total.opponent.as_ref().expect("set"));
    print_histogram("move-to-watcher ", total.watcher.as_ref().expect("set"));
    match (lateness_at_start.await?, lateness_at_stop.await?) {
        (Some(before), Some(after)) => print_lateness(&before, &after),
        _ => println!("server timer lateness: not available (no /metrics histogram)"),
    }
    if let (Some((_, cpu0)), Some((_, cpu1))) = (own_before, own_after) {
        println!(
            "generator: CPU {:.1} s ({:.0}% of one core) over the window",
            (cpu1 - cpu0) as f64 / 100.0,
            (cpu1 - cpu0) as f64 / window
        );
    }
    // CPU of every process given (nodes and nats-server), summed per move.
    let ticks = 100.0; // USER_HZ on Linux
    let mut cpu_total = 0u64;
    for ((&pid, before), after) in args.server_pid.iter().zip(&before).zip(&after) {
        let (Some((_, cpu0)), &Some((rss, cpu1))) = (before, after) else {
            println!("server pid {pid}: not readable");
            continue;
        };
        cpu_total += cpu1 - cpu0;
        println!(
            "server pid {pid}: RSS {:.1} MiB ({:.1} KB per socket), CPU {:.1} s ({:.0}% of one core)",
            rss as f64 / 1024.0,
            rss as f64 * 1.024 / sockets as f64,
            (cpu1 - cpu0) as f64 / ticks,
            (cpu1 - cpu0) as f64 / ticks / window * 100.0
        );
    }
    if !args.server_pid.is_empty() && total.moves > 0 {
        println!(
            "server CPU per move over {} process(es) and {nodes} node(s): {:.0} us (CPU {:.1} s, {} moves)",
            args.server_pid.len(),
            cpu_total as f64 / ticks * 1e6 / total.moves as f64,
            cpu_total as f64 / ticks,
            total.moves
        );
    }
    Ok(())
}
