//! The computer as a seat of a live game. Its driver is a task that receives the game's
//! frames like any connection (through a bounded queue), keeps a replica of the game, asks
//! [`protocol::bot::plan`] what to do and when, and sends its actions to the game task
//! exactly as a connection does ([`GameCmd::Act`], stamped with the instant it is sent):
//! same validation, same timing as a person's.

use std::sync::{Arc, Weak};

use axum::extract::ws::Utf8Bytes;
use protocol::bot::{plan, Plan};
use protocol::game::{Game, Player};
use protocol::wire::{Change, GameId, ServerFrame, ServerMessage};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Duration, Instant};

use crate::game::GameCmd;
use crate::hub::{Hub, Kill, Peer, PlayerRec};

/// The computer's player id.
pub const BOT_ID: &str = "bot";
/// Its display name.
pub const BOT_NAME: &str = "TAMSK bot";

/// How long the driver waits for the answer to an action before planning again.
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// A fresh bot seat: the connection-like peer a game subscribes; its driver task plays
/// the first game that sends it a snapshot, then ends.
pub fn seat_peer(hub: &Arc<Hub>, player: &Arc<PlayerRec>) -> Peer {
    let (tx, rx) = mpsc::channel(hub.config.outbound_queue.max(64));
    let peer = Peer {
        conn: hub.next_conn_id(),
        tx,
        kill: Arc::new(Kill::default()),
    };
    tokio::spawn(drive(Arc::downgrade(hub), player.clone(), peer.clone(), rx));
    peer
}

struct Seat {
    game: GameId,
    me: Player,
    replica: Game,
    /// The instant of game time 0 on this clock.
    start: Instant,
}

/// Counters of the bot seats, for `/metrics` and tests.
#[derive(Default)]
pub struct BotStats {
    pub actions: std::sync::atomic::AtomicU64,
    pub refused: std::sync::atomic::AtomicU64,
}

async fn drive(
    hub: Weak<Hub>,
    player: Arc<PlayerRec>,
    peer: Peer,
    mut rx: mpsc::Receiver<Utf8Bytes>,
) {
    let config = match hub.upgrade() {
        Some(h) => h.config.bot.clone(),
        None => return,
    };
    let mut seat: Option<Seat> = None;
    let mut wake: Option<Instant> = None;
    // An action is on its way: wait for its event (or error) before planning again.
    let mut awaiting: Option<Instant> = None;
    loop {
        let timer = awaiting.or(wake);
        tokio::select! {
            frame = rx.recv() => {
                let Some(text) = frame else { break };
                match serde_json::from_str::<ServerFrame>(text.as_str()) {
                    Ok(ServerFrame::Message(ServerMessage::Snapshot(s))) => {
                        let Some(me) = s.seat else { continue };
                        seat = Some(Seat {
                            game: s.game,
                            me,
                            start: Instant::now() - Duration::from_millis(s.now_ms),
                            replica: s.state,
                        });
                        awaiting = None;
                    }
                    Ok(ServerFrame::Message(ServerMessage::Event(ev))) => {
                        let Some(s) = seat.as_mut().filter(|s| s.game == ev.game) else {
                            continue;
                        };
                        if let Change::Play { entry, .. } = &ev.change {
                            if let Err(e) = entry.apply_to(&mut s.replica) {
                                tracing::error!(game = s.game, error = %e, "bot replica out of step");
                                break;
                            }
                            if matches!(&entry.kind, protocol::record::EntryKind::Act { player, .. } if *player == s.me) {
                                awaiting = None;
                            }
                        }
                    }
                    Ok(ServerFrame::Message(ServerMessage::Error { code, message, .. })) => {
                        tracing::warn!(player = %player.id, %code, %message, "bot action refused");
                        if let Some(h) = hub.upgrade() {
                            h.bot_stats.refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        awaiting = None;
                    }
                    _ => continue,
                }
            }
            _ = sleep_until(timer.unwrap_or_else(Instant::now)), if timer.is_some() => {
                awaiting = None;
            }
        }
        let Some(s) = seat.as_ref() else { continue };
        if !s.replica.is_playing() {
            break;
        }
        if awaiting.is_some() {
            continue;
        }
        let now_ms = s.start.elapsed().as_millis() as u64;
        wake = match plan(&s.replica, s.me, now_ms, &config) {
            Plan::Act(action) => {
                let Some(h) = hub.upgrade() else { break };
                let Some(handle) = h.game(s.game) else { break };
                let cmd = GameCmd::Act {
                    peer: peer.clone(),
                    player: player.clone(),
                    action,
                    received: Instant::now(),
                };
                if handle.tx.try_send(cmd).is_ok() {
                    h.bot_stats
                        .actions
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    awaiting = Some(Instant::now() + REPLY_TIMEOUT);
                    None
                } else {
                    // The game is busy: try again shortly.
                    Some(Instant::now() + Duration::from_millis(20))
                }
            }
            Plan::Wait(at) => Some(s.start + Duration::from_millis(at)),
            Plan::Idle => None,
        };
    }
    tracing::debug!(player = %player.id, "bot seat done");
}
