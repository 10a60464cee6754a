//! Helpers for the process tests: a real server on port 0, `tamsk` processes driven
//! through stdin and read line by line (JSON mode).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// Nothing in these tests may take longer than this.
pub const WAIT: Duration = Duration::from_secs(60);

pub struct Server {
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

pub async fn start_server() -> Server {
    start_server_with(server::Config::default()).await
}

pub async fn start_server_with(config: server::Config) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server::run_with(listener, config, async {
        let _ = stopped.await;
    }));
    Server {
        url: format!("ws://{addr}/ws"),
        stop: Some(stop),
        task,
    }
}

impl Server {
    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(WAIT, self.task)
            .await
            .expect("server stops")
            .unwrap();
    }
}

pub fn config_path(test: &str, who: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("play-configs")
        .join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{who}.json"));
    let _ = std::fs::remove_file(&path);
    path
}

pub fn tamsk(config: &PathBuf, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tamsk"))
        .args(args)
        .env("TAMSK_CONFIG", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run tamsk")
}

/// Runs `tamsk` to its end with no input.
pub async fn output(config: &PathBuf, args: &[&str]) -> std::process::Output {
    let child = tamsk(config, args);
    tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .expect("tamsk ends")
        .unwrap()
}

/// Plays as the simple bot: on every `may` line, a move with its drop that does not
/// land on a full socket (the `n`-th of them, so the two players do not mirror each
/// other), else a claim; after a refusal, the next candidate. Never flips, never resigns.
/// Returns every line printed and the exit status.
pub async fn bot(mut child: Child, name: &'static str) -> (Vec<Value>, std::process::ExitStatus) {
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    let mut n = 0usize;
    while let Some(line) = lines.next_line().await.unwrap() {
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{name}: not JSON: {line:?}: {e}"));
        let kind = v["type"].as_str().unwrap_or_default().to_string();
        match kind.as_str() {
            "may" => {
                let losing: Vec<&str> = v["losing"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|a| a.as_str())
                    .collect();
                let actions: Vec<String> = v["actions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|a| a.as_str())
                    .map(str::to_string)
                    .collect();
                let mut moves: Vec<String> = actions
                    .iter()
                    .filter(|a| a.contains('-') && !a.ends_with('.'))
                    .filter(|a| !losing.contains(&a.as_str()))
                    .cloned()
                    .collect();
                if !moves.is_empty() {
                    n += 1;
                    let k = n % moves.len();
                    moves.rotate_left(k);
                }
                candidates = moves;
                for other in ["claim", "drop"] {
                    if actions.iter().any(|a| a == other) {
                        candidates.insert(0, other.to_string());
                    }
                }
                if !candidates.is_empty() {
                    let pick = candidates.remove(0);
                    stdin
                        .write_all(format!("{pick}\n").as_bytes())
                        .await
                        .unwrap();
                }
            }
            "error" if !candidates.is_empty() => {
                let pick = candidates.remove(0);
                stdin
                    .write_all(format!("{pick}\n").as_bytes())
                    .await
                    .unwrap();
            }
            _ => {}
        }
        seen.push(v);
    }
    let status = child.wait().await.unwrap();
    (seen, status)
}

pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|v| v["type"] == kind).collect()
}

/// A `tamsk` process read line by line.
pub struct Proc {
    child: Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    pub seen: Vec<Value>,
}

impl Proc {
    pub fn new(mut child: Child) -> Proc {
        Proc {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            child,
            seen: Vec::new(),
        }
    }

    /// Reads lines until one of type `kind`, and returns it.
    pub async fn until(&mut self, kind: &str) -> Value {
        let fut = async {
            loop {
                let line = self.lines.next_line().await.unwrap().unwrap_or_else(|| {
                    panic!("output ended before a {kind} line: {:?}", self.seen)
                });
                let v: Value = serde_json::from_str(&line).unwrap();
                self.seen.push(v.clone());
                if v["type"] == kind {
                    return v;
                }
            }
        };
        tokio::time::timeout(WAIT, fut)
            .await
            .unwrap_or_else(|_| panic!("no {kind} line"))
    }

    pub async fn say(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    pub async fn exit(mut self) -> std::process::ExitStatus {
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("tamsk exits")
            .unwrap()
    }
}
