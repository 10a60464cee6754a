//! Writing a record in the text format (docs/RECORDS.md), with its `result:` line in words.

use super::header::{reserved, valid_key};
use super::*;

fn instant(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// One-line text: line breaks and tabs become spaces, surrounding spaces go.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// What a replay of `record` comes to, in words, for the informative `result:` line.
pub fn result_line(record: &Record) -> String {
    match record.replay() {
        Ok(game) => describe_state(&game),
        Err((i, e)) => format!("does not replay: entry {} is refused: {e}", i + 1),
    }
}

/// "Red wins: ...", "Draw: ...", "aborted: ...", or "unfinished: Red to move".
pub fn describe_state(game: &Game) -> String {
    match game.status() {
        Status::Finished { outcome } => outcome.describe(),
        Status::Aborted { reason, at_ms } => {
            format!("aborted at {}: {}", instant(*at_ms), reason.describe())
        }
        Status::Playing if game.is_ending() => {
            "unfinished: neither player can move, the last drop windows are open".to_string()
        }
        Status::Playing => format!("unfinished: {} to move", game.turn()),
    }
}

impl RecordFile {
    /// The text form (docs/RECORDS.md). Reading it back gives this record again; tags
    /// with an invalid or reserved key are left out, and line breaks in names and values
    /// become spaces.
    pub fn to_text(&self) -> String {
        let r = &self.record;
        let s = &r.settings;
        let mut out = String::new();
        let mut field = |key: &str, value: &str| {
            let _ = writeln!(out, "{key}: {value}").map(|_| ());
            if value.is_empty() {
                // "key: " would end in a space; keep lines clean.
                out.truncate(out.len() - 2);
                out.push('\n');
            }
        };
        field("level", &s.level.number().to_string());
        field(
            "setup",
            match s.setup {
                Setup::Standard => "standard",
                Setup::Placement => "placement",
            },
        );
        field("hourglass_ms", &s.hourglass_ms.to_string());
        field("neutral_ms", &s.neutral_ms.to_string());
        field("drop_grace_ms", &s.drop_grace_ms.to_string());
        field(
            "full_socket",
            match s.full_socket {
                FullSocket::Lose => "lose",
                FullSocket::Reject => "reject",
            },
        );
        field(
            "game_clock",
            &s.game_clock.map_or("none".to_string(), |c| {
                format!("{}+{}", c.main_ms, c.increment_ms)
            }),
        );
        field(
            "turn_limit_ms",
            &s.turn_limit_ms
                .map_or("none".to_string(), |t| t.to_string()),
        );
        field("abort_ms", &s.abort_ms.to_string());
        field("late_release_ms", &s.late_release_ms.to_string());
        if let Some(name) = &r.red {
            field("red", &one_line(name));
        }
        if let Some(name) = &r.black {
            field("black", &one_line(name));
        }
        for (key, value) in &self.tags {
            if valid_key(key) && !reserved(key) {
                field(key, &one_line(value));
            }
        }
        field("result", &result_line(r));
        let mut text = format!("{RECORD_MAGIC} {RECORD_VERSION}\n{out}\n");
        text.push_str("#  move      time  who      action\n");
        let mut moves = 0;
        let mut line = |number: Option<usize>, at: u64, who: &str, rest: &str| {
            let number = number.map_or(String::new(), |n| format!("{n}."));
            let l = format!("{number:>7} {:>9}  {who:<7}  {rest}", instant(at));
            text.push_str(l.trim_end());
            text.push('\n');
        };
        for entry in &r.entries {
            match &entry.kind {
                EntryKind::Act {
                    player,
                    action,
                    lag_ms,
                    comp_ms,
                } => {
                    let number = matches!(
                        action,
                        Action::Move { .. } | Action::Place { .. } | Action::Start { .. }
                    )
                    .then(|| {
                        moves += 1;
                        moves
                    });
                    let mut what = Notation(*action).to_string();
                    if let Some(lag) = lag_ms {
                        what.push_str(&format!("  lag={lag}"));
                    }
                    if let Some(comp) = comp_ms {
                        what.push_str(&format!(" comp={comp}"));
                    }
                    line(number, entry.at_ms, player.name(), &what);
                }
                EntryKind::Advance => line(None, entry.at_ms, "advance", ""),
                EntryKind::Lag { player, lag_ms } => line(
                    None,
                    entry.at_ms,
                    "lag",
                    &format!("{} {lag_ms}", player.name()),
                ),
                EntryKind::Abandon { player } => line(None, entry.at_ms, "abandon", player.name()),
                EntryKind::BothAbsent => line(None, entry.at_ms, "both-absent", ""),
                EntryKind::Abort { reason } => {
                    let words = match reason {
                        AbortReason::Shutdown => "shutdown".to_string(),
                        AbortReason::BothAbsent => "both-absent".to_string(),
                        AbortReason::NoFirstMove { player } => {
                            format!("no-first-move {}", player.name())
                        }
                    };
                    line(None, entry.at_ms, "abort", &words)
                }
            }
        }
        if let Some(end) = r.end_ms {
            line(None, end, "end", "");
        }
        text
    }
}

impl Record {
    /// The text form (docs/RECORDS.md), without free header fields.
    pub fn to_text(&self) -> String {
        RecordFile::new(self.clone()).to_text()
    }
}
