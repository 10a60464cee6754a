//! The computer as a seat of a live game. Its driver is a task that receives the game's
//! frames like any connection (through a bounded queue), keeps a replica of the game, asks
//! [`protocol::bot::plan`] what to do and when, and sends its actions to the game task
//! exactly as a connection does ([`GameCmd::Act`], stamped with the instant it is sent):
//! same validation, same timing as a person's.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use axum::extract::ws::Utf8Bytes;
use protocol::bot::{plan, BotConfig, Plan};
use protocol::game::{Action, Game, Player};
use protocol::record::EntryKind;
use protocol::wire::{Change, GameId, ServerFrame, ServerMessage};
use tokio::time::{sleep_until, Duration, Instant};

use crate::peer::{Kill, Peer, PlayerRec};
use crate::rooms::GameCmd;
use crate::rooms::Rooms;

/// The computer's player id.
pub const BOT_ID: &str = "bot";
/// Its display name.
pub const BOT_NAME: &str = "TAMSK bot";

/// How long the driver waits for the answer to an action before planning again.
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the driver holds its actions after `game_moving` when the game says nothing
/// more (it acts again at the game's next frame, which normally comes first).
const MOVING_HOLD: Duration = Duration::from_secs(3);

/// A fresh bot seat: the connection-like peer a game subscribes; its driver task plays
/// the first game that sends it a snapshot, then ends.
pub fn seat_peer(hub: &Arc<Rooms>, player: &Arc<PlayerRec>) -> Peer {
    let (tx, rx) = crate::outbox::channel(hub.config.outbound_queue.max(64));
    let peer = Peer {
        conn: hub.next_conn_id(),
        tx: tx.into(),
        kill: Arc::new(Kill::default()),
        seated: Default::default(),
        reply: None,
    };
    // On the server's runtime even when a game task seats it (a rematch): planning is
    // not game work and must not delay other games' deadlines.
    hub.spawn_io(drive(Arc::downgrade(hub), player.clone(), peer.clone(), rx));
    peer
}

struct Seat {
    game: GameId,
    me: Player,
    replica: Game,
    /// The last event applied (the `seq` its actions carry).
    seq: protocol::wire::Seq,
    /// The instant of game time 0 on this clock.
    start: Instant,
}

/// The bot's side of one game, whatever carries its frames: it follows the game from
/// the server's messages and says when to act and what ([`Driver::step`]).
pub struct Driver {
    config: BotConfig,
    seat: Option<Seat>,
    wake: Option<Instant>,
    /// An action is on its way: wait for its event (or error) before planning again.
    awaiting: Option<Instant>,
    /// The opponent's reconnection grace ran out: claim the win.
    claim: bool,
    /// The game's node is gone and another takes it over (`game_moving`): no action
    /// until the game's next frame (`awaiting` bounds the wait).
    moving: bool,
}

/// What the bot sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Send {
    Act(GameId, Action),
    /// The opponent left and his grace ran out.
    ClaimAbandonment(GameId),
}

/// What a message meant for the driver.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    Nothing,
    /// The server refused the bot's action.
    Refused(String),
    /// The replica could not follow the game (it should not happen).
    Lost(String),
}

impl Driver {
    pub fn new(config: BotConfig) -> Driver {
        Driver {
            config,
            seat: None,
            wake: None,
            awaiting: None,
            claim: false,
            moving: false,
        }
    }

    /// The game being played, once a snapshot came.
    pub fn game(&self) -> Option<GameId> {
        self.seat.as_ref().map(|s| s.game)
    }

    /// The last event of the game the bot has applied: what its actions are decided on.
    pub fn seq(&self) -> Option<protocol::wire::Seq> {
        self.seat.as_ref().map(|s| s.seq)
    }

    /// The replica of the game being played.
    pub fn replica(&self) -> Option<&Game> {
        self.seat.as_ref().map(|s| &s.replica)
    }

    /// The game is over (or never started).
    pub fn over(&self) -> bool {
        self.seat.as_ref().is_some_and(|s| !s.replica.is_playing())
    }

    /// When [`Driver::step`] should run again at the latest.
    pub fn timer(&self) -> Option<Instant> {
        self.awaiting.or(self.wake)
    }

    /// Takes in a message of the server, received at `at`.
    pub fn hear(&mut self, msg: &ServerMessage, at: Instant) -> Heard {
        match msg {
            ServerMessage::Snapshot(s) => {
                if let Some(me) = s.seat {
                    self.seat = Some(Seat {
                        game: s.game,
                        me,
                        seq: s.seq,
                        start: at - Duration::from_millis(s.now_ms),
                        replica: match s.view.replica() {
                            Ok(game) => game,
                            Err(e) => {
                                tracing::error!(game = %s.game, error = %e, "a snapshot that does not replay");
                                return Heard::Nothing;
                            }
                        },
                    });
                    self.awaiting = None;
                    self.moving = false;
                }
            }
            ServerMessage::Event(ev) => {
                let Some(s) = self.seat.as_mut().filter(|s| s.game == ev.game) else {
                    return Heard::Nothing;
                };
                if std::mem::take(&mut self.moving) {
                    self.awaiting = None;
                }
                s.seq = s.seq.max(ev.seq);
                if let Some(entry) = ev.entry() {
                    if let Err(e) = entry.apply_to(&mut s.replica) {
                        return Heard::Lost(e.to_string());
                    }
                    if matches!(&entry.kind, EntryKind::Act { player, .. } if *player == s.me) {
                        self.awaiting = None;
                    }
                }
                if let Change::GraceExpired { player, .. } = ev.change {
                    self.claim = player != s.me;
                }
                if let Change::Presence {
                    player,
                    connected: true,
                    ..
                } = ev.change
                {
                    if player != s.me {
                        self.claim = false;
                    }
                }
            }
            // Acting again at once would only be refused again until the game runs on
            // its new node (bots sent thousands of actions a second there).
            ServerMessage::Error { code, .. } if code == "game_moving" => {
                self.moving = true;
                self.awaiting = Some(at + MOVING_HOLD);
                return Heard::Refused(code.clone());
            }
            ServerMessage::Error { code, .. } if self.awaiting.is_some() => {
                self.awaiting = None;
                return Heard::Refused(code.clone());
            }
            _ => {}
        }
        Heard::Nothing
    }

    /// Plans at `now`: the action to send now, if any (then it waits for its answer).
    pub fn step(&mut self, now: Instant) -> Option<Send> {
        if self.awaiting.is_some_and(|t| t <= now) {
            self.awaiting = None;
        }
        let s = self.seat.as_ref()?;
        if !s.replica.is_playing() || self.awaiting.is_some() {
            return None;
        }
        if self.claim {
            self.claim = false;
            self.awaiting = Some(now + REPLY_TIMEOUT);
            return Some(Send::ClaimAbandonment(s.game));
        }
        let now_ms = now.saturating_duration_since(s.start).as_millis() as u64;
        match plan(&s.replica, s.me, now_ms, &self.config) {
            Plan::Act(action) => {
                self.wake = None;
                self.awaiting = Some(now + REPLY_TIMEOUT);
                Some(Send::Act(s.game, action))
            }
            Plan::Wait(at) => {
                self.wake = Some(s.start + Duration::from_millis(at));
                None
            }
            Plan::Idle => {
                self.wake = None;
                None
            }
        }
    }

    /// The action could not be sent (a busy game): plan again shortly.
    pub fn retry_soon(&mut self, now: Instant) {
        self.awaiting = None;
        self.wake = Some(now + Duration::from_millis(20));
    }
}

async fn drive(
    hub: Weak<Rooms>,
    player: Arc<PlayerRec>,
    peer: Peer,
    mut rx: crate::outbox::Receiver<Utf8Bytes>,
) {
    let mut driver = match hub.upgrade() {
        Some(h) => Driver::new(match player.bot_level {
            Some(level) => level.config(),
            None => h.config.bot.clone(),
        }),
        None => return,
    };
    loop {
        let timer = driver.timer();
        tokio::select! {
            frame = rx.recv() => {
                let Some(text) = frame else { break };
                if let Ok(ServerFrame::Message(msg)) = serde_json::from_str::<ServerFrame>(text.as_str()) {
                    match driver.hear(&msg, Instant::now()) {
                        Heard::Nothing => {}
                        Heard::Refused(code) => {
                            tracing::warn!(player = %player.id, %code, "bot action refused");
                            if let Some(h) = hub.upgrade() {
                                h.bot_stats.refused.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Heard::Lost(why) => {
                            tracing::error!(player = %player.id, %why, "bot replica out of step");
                            break;
                        }
                    }
                }
            }
            _ = sleep_until(timer.unwrap_or_else(Instant::now)), if timer.is_some() => {}
        }
        if driver.over() {
            break;
        }
        let now = Instant::now();
        let Some(send) = driver.step(now) else {
            continue;
        };
        let Some(h) = hub.upgrade() else { break };
        let (game, cmd) = match send {
            Send::Act(game, action) => (
                game,
                GameCmd::Act {
                    peer: peer.clone(),
                    player: player.clone(),
                    action,
                    received: now,
                    // In the server, it decides on the game as it is.
                    seen: None,
                },
            ),
            Send::ClaimAbandonment(game) => (
                game,
                GameCmd::ClaimAbandonment {
                    peer: peer.clone(),
                    player: player.clone(),
                },
            ),
        };
        let Some(handle) = h.game(game) else { break };
        if handle.tx.try_send(cmd).is_ok() {
            h.bot_stats.actions.fetch_add(1, Ordering::Relaxed);
        } else {
            driver.retry_soon(now);
        }
    }
    tracing::debug!(player = %player.id, "bot seat done");
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::Entry;
    use protocol::settings::{Level, Settings};
    use protocol::view::GameView;
    use protocol::wire::{SandTable, SeatInfo, Snapshot};

    fn snapshot(id: GameId, game: &Game, seat: Player) -> ServerMessage {
        let info = |name: &str| SeatInfo {
            player_id: name.into(),
            name: name.into(),
            connected: true,
            grace_until_ms: None,
            lag_ms: None,
            rating: None,
        };
        ServerMessage::Snapshot(Box::new(Snapshot {
            game: id,
            seq: 0,
            now_ms: 0,
            seat: Some(seat),
            red: info("Rita"),
            black: info("Bert"),
            watchers: 0,
            view: GameView::of(game, &[]),
            sand: SandTable::of(game),
            rated: false,
            tc: None,
        }))
    }

    /// Hourglasses and a first-move bound that outlast the tests' instants.
    fn settings() -> Settings {
        Settings {
            hourglass_ms: 60_000,
            abort_ms: 30_000,
            ..Settings::blitz(Level::One)
        }
    }

    #[test]
    fn after_game_moving_the_bot_acts_again_only_at_the_games_next_frame() {
        let id = GameId::from_u64_pair(0, 1);
        let mut game = Game::new(settings());
        let config = BotConfig {
            think_ms: 0,
            ..BotConfig::default()
        };
        let mut driver = Driver::new(config);
        let t0 = Instant::now();
        driver.hear(&snapshot(id, &game, Player::Red), t0);
        assert!(matches!(driver.step(t0), Some(Send::Act(..))));

        // Another refusal: the bot plans again at once.
        let busy = crate::codec::game_error("game_busy", "busy", id);
        assert_eq!(driver.hear(&busy, t0), Heard::Refused("game_busy".into()));
        assert!(matches!(driver.step(t0), Some(Send::Act(..))));

        // The game is moving to another node: nothing until the game's next frame...
        let moving = crate::codec::game_error("game_moving", "moving", id);
        assert_eq!(
            driver.hear(&moving, t0),
            Heard::Refused("game_moving".into())
        );
        let later = t0 + Duration::from_millis(1_500);
        assert_eq!(driver.step(later), None);
        assert_eq!(driver.timer(), Some(t0 + MOVING_HOLD));
        // ...which comes (here, a lag measurement of the opponent's).
        let entry = Entry {
            at_ms: 1_500,
            kind: EntryKind::Lag {
                player: Player::Black,
                lag_ms: 40,
            },
        };
        let events = entry.apply_to(&mut game).expect("a lag entry applies");
        let frame = ServerMessage::Event(Box::new(protocol::wire::GameEvent {
            game: id,
            seq: 1,
            now_ms: 1_500,
            change: Change::play(entry, events),
        }));
        assert_eq!(driver.hear(&frame, later), Heard::Nothing);
        assert!(matches!(driver.step(later), Some(Send::Act(..))));
    }

    #[test]
    fn a_game_that_says_nothing_more_holds_the_bot_only_so_long() {
        let id = GameId::from_u64_pair(0, 2);
        let game = Game::new(settings());
        let mut driver = Driver::new(BotConfig {
            think_ms: 0,
            ..BotConfig::default()
        });
        let t0 = Instant::now();
        driver.hear(&snapshot(id, &game, Player::Red), t0);
        assert!(driver.step(t0).is_some());
        driver.hear(&crate::codec::game_error("game_moving", "moving", id), t0);
        assert_eq!(
            driver.step(t0 + MOVING_HOLD - Duration::from_millis(1)),
            None
        );
        assert!(driver.step(t0 + MOVING_HOLD).is_some());
    }
}
