//! Plain mode: one line per event on stdout (JSON objects with `--json`), commands read
//! line by line from stdin, so that scripts and bots can play.

use std::io::Write;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::{interval, MissedTickBehavior};

use crate::app::{Output, Phase};
use crate::sanitize::strip;
use crate::session::Session;
use crate::words;

/// One output line as printed.
pub fn format_line(out: &Output, json: bool) -> String {
    if json {
        return out.json().to_string();
    }
    match out.data.get("at_ms").and_then(|v| v.as_u64()) {
        Some(at) => format!("[{:>7}] {}", words::seconds(at), strip(&out.text)),
        None => strip(&out.text),
    }
}

pub fn print(lines: Vec<Output>, json: bool) {
    let mut stdout = std::io::stdout().lock();
    for out in lines {
        // A closed pipe is the reader's choice, not an error worth a panic.
        let _ = writeln!(stdout, "{}", format_line(&out, json));
    }
    let _ = stdout.flush();
}

/// Runs the session in plain mode until it ends; returns the exit status.
pub async fn run(mut s: Session, json: bool) -> u8 {
    s.app.quit_when_over = true;
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    let mut tick = interval(Duration::from_millis(250));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            ev = s.net.next() => s.on_net(ev).await,
            line = stdin.next_line(), if stdin_open => match line {
                Ok(Some(line)) => {
                    let msgs = s.app.on_line(&line, Instant::now());
                    s.send_all(msgs).await;
                }
                _ => {
                    stdin_open = false;
                    // Nobody can pick a game any more.
                    if s.app.phase == Phase::Picking {
                        s.app.quit = true;
                    }
                }
            },
            _ = tick.tick() => s.tick().await,
        }
        print(s.app.take_output(), json);
        s.save_config();
        if s.app.quit {
            break;
        }
    }
    s.net.close().await;
    s.app.exit_code
}
