//! The `tamsk-server` binary's threads as a process shows them: real-time priority for
//! the threads that announce deadlines, the nice value of the runtime's workers.

mod common;

use common::*;
use protocol::game::{Action, Event};

/// (name, scheduling policy, real-time priority, nice value) of each thread of process
/// `pid`.
fn threads_of(pid: u32) -> Vec<(String, u32, u32, i32)> {
    let mut threads = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc") {
        let dir = entry.expect("a thread").path();
        let name = std::fs::read_to_string(dir.join("comm")).expect("comm");
        let stat = std::fs::read_to_string(dir.join("stat")).expect("stat");
        // After the name's closing parenthesis: field 3 (state) on; nice is field 19,
        // rt_priority field 40 and policy field 41 (proc(5)).
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        let (rt_priority, policy) = (fields[37].parse().unwrap(), fields[38].parse().unwrap());
        let nice = fields[16].parse().unwrap();
        threads.push((name.trim().to_string(), policy, rt_priority, nice));
    }
    threads
}

/// `--realtime-priority` runs the threads that announce deadlines (the alarm thread and,
/// with `--game-threads 1`, the games' thread) under SCHED_FIFO at that priority when the
/// system allows it (else at normal priority), and no other thread; games are played on
/// them as usual.
#[tokio::test]
async fn the_deadline_threads_run_real_time_when_asked() {
    let allowed = std::thread::spawn(|| server::priority::realtime(1).is_ok())
        .join()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        &dir.path().join("t.db"),
        0,
        &["--game-threads", "1", "--realtime-priority", "7"],
        &[],
    );
    let threads = threads_of(server.child.id());
    let (fifo, normal) = (libc::SCHED_FIFO as u32, libc::SCHED_OTHER as u32);
    for name in ["tamsk-alarms", "tamsk-games"] {
        let found: Vec<_> = threads.iter().filter(|t| t.0 == name).collect();
        assert_eq!(found.len(), 1, "{name} in {threads:?}");
        let expected = if allowed { (fifo, 7) } else { (normal, 0) };
        assert_eq!((found[0].1, found[0].2), expected, "{name}");
    }
    let others: Vec<_> = threads
        .iter()
        .filter(|t| t.0 != "tamsk-alarms" && t.0 != "tamsk-games")
        .collect();
    assert!(others.len() >= 2, "{threads:?}");
    assert!(others.iter().all(|t| t.1 == normal), "{threads:?}");
    if !allowed {
        eprintln!("real-time priority is not allowed here: only the fallback was checked");
    }

    let (mut red, mut black, game) = game(&server.addr).await;
    act(&mut red, game, Action::Resign).await;
    until_event(&mut black, |e| matches!(e, Event::GameEnded { .. })).await;
}

/// `--worker-nice` gives the runtime's threads that nice value when the system allows it
/// (else they keep theirs), and the store's writer still yields to them (nice 10).
#[tokio::test]
async fn the_workers_take_the_nice_value_asked() {
    let allowed = std::thread::spawn(|| server::priority::nice(-5).is_ok())
        .join()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (asked, expected) in [("-5", if allowed { -5 } else { 0 }), ("0", 0)] {
        let server = Server::start_with(
            &dir.path().join(format!("n{asked}.db")),
            0,
            &["--worker-nice", asked],
            &[],
        );
        let threads = threads_of(server.child.id());
        let workers: Vec<_> = threads
            .iter()
            .filter(|t| t.0 == "tokio-rt-worker")
            .collect();
        assert!(!workers.is_empty(), "{threads:?}");
        assert!(
            workers.iter().all(|t| t.3 == expected),
            "--worker-nice {asked}: {threads:?}"
        );
        let store: Vec<_> = threads.iter().filter(|t| t.0 == "tamsk-store").collect();
        assert_eq!(store.len(), 1, "{threads:?}");
        assert_eq!(store[0].3, 10, "the store's writer yields: {threads:?}");
    }
    if !allowed {
        eprintln!("a negative nice value is not allowed here: only the fallback was checked");
    }
}
