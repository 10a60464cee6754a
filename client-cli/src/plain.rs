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
    for line in printed(&lines, json) {
        // A closed pipe is the reader's choice, not an error worth a panic.
        let _ = writeln!(stdout, "{line}");
    }
    let _ = stdout.flush();
}

/// The lines `print` writes. Text mode says a thing once: an event that also ends the
/// session (a declined challenge, say) comes as the event and as `fatal` with the same
/// words, which a JSON reader tells apart by kind and a person would read twice.
fn printed(lines: &[Output], json: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for line in lines {
        let text = format_line(line, json);
        if json || out.last() != Some(&text) {
            out.push(text);
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn out(kind: &'static str, text: &str) -> Output {
        Output {
            kind,
            text: text.into(),
            data: json!({}),
        }
    }

    #[test]
    fn text_mode_says_a_closing_event_once_and_json_keeps_both_kinds() {
        let words = "No game: the challenge to Bert was declined";
        let lines = [
            out("challenge_closed", words),
            out("fatal", words),
            out("info", "Bye"),
        ];
        assert_eq!(printed(&lines, false), [words, "Bye"]);
        let kinds: Vec<String> = printed(&lines, true)
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].to_string())
            .collect();
        assert_eq!(kinds, ["\"challenge_closed\"", "\"fatal\"", "\"info\""]);
    }
}
