//! The full-screen interface's loop: keys, the socket and a redraw tick in one
//! `tokio::select!`, drawing [`crate::ui::ui`] after each.

use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyEventKind};
use futures::StreamExt;
use tokio::time::{interval, MissedTickBehavior};

use crate::sanitize::strip;
use crate::session::Session;
use crate::{ui, words};

/// Redraws per second while nothing else happens: enough for smooth sand.
const FPS: u64 = 20;

/// Runs the session full-screen until the player quits; returns the exit status.
pub async fn run(mut s: Session) -> u8 {
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tamsk: cannot use the terminal ({e}): try --plain");
            return crate::EXIT_IO;
        }
    };
    // The screen may hold what a killed client (kill -9) or the shell left there: ratatui
    // only writes cells that differ from what it believes is on screen, so start blank.
    if let Err(e) = terminal.clear() {
        ratatui::restore();
        eprintln!("tamsk: cannot clear the terminal ({e}): try --plain");
        return crate::EXIT_IO;
    }
    let mut keys = EventStream::new();
    let mut tick = interval(Duration::from_millis(1000 / FPS));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut failed = None;
    loop {
        if let Err(e) = terminal.draw(|f| ui::ui(f, &s.app, Instant::now())) {
            failed = Some(format!("cannot draw: {e}"));
            break;
        }
        tokio::select! {
            ev = s.net.next() => s.on_net(ev).await,
            key = keys.next() => match key {
                Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => {
                    let msgs = s.app.on_key(k, Instant::now());
                    s.send_all(msgs).await;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    failed = Some(format!("cannot read the keyboard: {e}"));
                    break;
                }
                None => break,
            },
            _ = tick.tick() => s.tick().await,
        }
        // Plain-mode lines are not printed here: the log shows them.
        s.app.take_output();
        if s.app.check_alerts(Instant::now()) {
            // The terminal bell; the flash is drawn from the app state.
            use std::io::Write;
            let mut out = std::io::stdout();
            let _ = out.write_all(b"\x07").and_then(|_| out.flush());
        }
        s.save_config();
        if s.app.quit {
            break;
        }
    }
    s.net.close().await;
    ratatui::restore();
    // What the player should still see once the screen is gone.
    if let Some(e) = failed {
        eprintln!("tamsk: {e}");
        return crate::EXIT_IO;
    }
    if let Some(g) = &s.app.game {
        if let Some(result) = words::result(&g.replica) {
            println!(
                "Game {}: {}",
                crate::gameref::short_id(g.id),
                strip(&result)
            );
        } else if g.seat.is_some() && s.app.exit_code == 0 {
            // (Not when the session failed: the game may be gone, as the error says.)
            println!(
                "You left game {} while it goes on: your seat is kept for a while, and `tamsk play` (or challenge, host, join) takes it again.",
                crate::gameref::short_id(g.id)
            );
        }
    }
    if s.app.exit_code != 0 {
        if let Some((_, text)) = &s.app.status {
            eprintln!("tamsk: {}", strip(text));
        }
    }
    s.app.exit_code
}
