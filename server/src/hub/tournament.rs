//! Swiss tournaments: created, joined, withdrawn from and cancelled over the websocket
//! ([`commands`]), run by the server. The runner task starts a tournament at its time,
//! pairs each round ([`crate::swiss`]), seats both players of every pairing and starts
//! the game itself, counts a no-show (no first move within the abort bound) as a loss,
//! and pairs the next round when the last game of a round is over (it hears of games
//! through the game-over events). Every change is written to the database before it goes
//! on: after a restart, the tournaments in progress go on ([`Tournaments::resume`]); a
//! game the restart cut off goes on where it was (the server resumes its live games), or
//! with `--resume-games false`, aborted, is played again.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use protocol::game::Player;
use protocol::rating::TimeControl;
use protocol::settings::{GameClock, Settings};
use protocol::wire::{GameId, LobbyMessage};
use tokio::sync::{mpsc, Mutex, Notify};

use crate::clock::unix_ms;
use crate::events::{Ending, GameOver, TournamentGame};
use crate::hub::Hub;
use crate::lobby::Refusal;
use crate::peer::{PlayerRec, Seeker};
use crate::swiss::{self, Entrant, GameResult};

mod commands;
mod runner;
pub use commands::{default_settings, tournament_settings};
pub use runner::spawn_runner;

pub use crate::tournament_model::{
    result_text, CreateRequest, TPlayer, TState, Tournament, TournamentOp, TournamentResult,
};

/// Tournaments not over at once.
pub const MAX_LIVE: usize = 64;
/// Tournaments not over that one player created.
pub const MAX_OWN: usize = 3;
/// Players in one tournament.
pub const MAX_PLAYERS: usize = 256;
/// Rounds of one tournament.
pub const MAX_ROUNDS: u32 = 20;
/// Latest start, from its creation.
pub const MAX_STARTS_IN_MS: u64 = 7 * 24 * 3_600_000;
/// When a tournament starts if its creator does not say.
pub const DEFAULT_STARTS_IN_MS: u64 = 60_000;
/// Each player's game clock in tournament play (the 1998 championship's).
pub const GAME_CLOCK_MS: u64 = 20 * 60_000;

/// The tournaments not over, held by the runner (and the connections that create and
/// join them).
#[derive(Default)]
pub struct Tournaments {
    live: Mutex<HashMap<String, Tournament>>,
    changed: Arc<Notify>,
}

impl Tournaments {
    /// This node no longer runs the tournaments (it stopped leading the lobby of several
    /// nodes): they are forgotten here, and the next leader takes them up from the
    /// database.
    pub async fn forget(&self) {
        self.live.lock().await.clear();
        self.changed.notify_one();
    }

    /// The tournaments not over, from the database (at the server's start); a running
    /// one starts again each game of its round that is not live (one the restart aborted,
    /// `--resume-games false`) and has no result.
    pub async fn resume(&self, hub: &Arc<Hub>) -> anyhow::Result<()> {
        let mut live = self.live.lock().await;
        for id in hub.store.live_tournament_ids().await? {
            if let Some(t) = hub.store.load_tournament(&id).await? {
                live.insert(id, t);
            }
        }
        let ids: Vec<String> = live.keys().cloned().collect();
        for id in ids {
            let t = live.get_mut(&id).expect("listed");
            if t.state == TState::Running {
                tracing::info!(tournament = %id, round = t.played.len(), "tournament goes on");
                start_missing_games(hub, t).await;
                advance(hub, t).await;
            }
        }
        live.retain(|_, t| matches!(t.state, TState::Upcoming | TState::Running));
        drop(live);
        self.changed.notify_one();
        Ok(())
    }

    /// Several nodes: the leader looks again at the running rounds of its tournaments. A
    /// game of theirs that ended while no node led (or before this node took the
    /// tournaments up) told its result to nobody who recorded it; its stored row has it.
    pub async fn sweep(&self, hub: &Arc<Hub>) {
        if hub.closed_for_new_games() || !hub.lobby_is_here() {
            return;
        }
        let mut live = self.live.lock().await;
        for t in live.values_mut() {
            if t.state == TState::Running {
                start_missing_games(hub, t).await;
                advance(hub, t).await;
            }
        }
    }

    async fn next_start(&self) -> Option<u64> {
        let live = self.live.lock().await;
        live.values()
            .filter(|t| t.state == TState::Upcoming)
            .map(|t| t.starts_ms)
            .min()
    }

    /// Starts the tournaments whose time has come (or cancels them: fewer than two
    /// players).
    async fn start_due(&self, hub: &Arc<Hub>) {
        // Several nodes: only while this node's term as the lobby's leader lasts (one
        // that lost it forgets its tournaments at its next turn).
        if hub.closed_for_new_games() || !hub.lobby_is_here() {
            return;
        }
        let now = unix_ms();
        let mut live = self.live.lock().await;
        for t in live.values_mut() {
            if t.state != TState::Upcoming || t.starts_ms > now {
                continue;
            }
            let players = t.players.iter().filter(|p| !p.entrant.withdrawn).count();
            if players < 2 {
                t.state = TState::Cancelled;
                tracing::info!(tournament = %t.id, players, "tournament cancelled");
                if let Err(e) = hub
                    .store
                    .set_tournament_state(&t.id, t.state, 0, Some(now))
                    .await
                {
                    tracing::error!(error = %e, "storing a tournament failed");
                }
                tell_all(hub, t, &finished_notice(t));
                continue;
            }
            t.state = TState::Running;
            tracing::info!(tournament = %t.id, players, "tournament starts");
            advance(hub, t).await;
        }
        live.retain(|_, t| matches!(t.state, TState::Upcoming | TState::Running));
    }

    /// A tournament game's result: its pairing gets it (unless it has one already); the
    /// round's last one brings the next round (or the end).
    async fn record(&self, hub: &Arc<Hub>, done: &TournamentResult) {
        let mut live = self.live.lock().await;
        let Some(t) = live.get_mut(&done.tournament) else {
            return;
        };
        let r = done.round as usize;
        let Some(board) = t
            .games
            .get(r.wrapping_sub(1))
            .and_then(|g| g.iter().position(|&id| id == Some(done.game)))
        else {
            return;
        };
        if t.played[r - 1].pairings[board].result.is_some() {
            return;
        }
        set_result(hub, t, done.round, board, done.result).await;
        advance(hub, t).await;
        live.retain(|_, t| matches!(t.state, TState::Upcoming | TState::Running));
    }
}

/// The tournament result of a game-over event; `None` for a game of no tournament, or one
/// to play again (the server stopped).
fn finished(ev: &GameOver) -> Option<TournamentResult> {
    let TournamentGame { tournament, round } = ev.tournament.clone()?;
    Some(TournamentResult {
        tournament,
        round,
        game: ev.game,
        result: result_of(ev)?,
    })
}

/// A tournament game's result; `None` when it must be played again (the server stopped).
fn result_of(ev: &GameOver) -> Option<GameResult> {
    match &ev.ending {
        Ending::Finished { winner: None } => Some(GameResult::DRAW),
        Ending::Finished {
            winner: Some(Player::Red),
        } => Some(GameResult::RED_WINS),
        Ending::Finished {
            winner: Some(Player::Black),
        } => Some(GameResult::BLACK_WINS),
        Ending::Aborted { no_show } if no_show.is_empty() => None,
        Ending::Aborted { no_show } => Some(GameResult {
            red: if no_show.contains(&Player::Red) {
                0.0
            } else {
                1.0
            },
            black: if no_show.contains(&Player::Black) {
                0.0
            } else {
                1.0
            },
            forfeit: true,
        }),
    }
}

fn finished_notice(t: &Tournament) -> LobbyMessage {
    LobbyMessage::TournamentFinished {
        tournament: t.id.clone(),
        cancelled: t.state == TState::Cancelled,
    }
}

/// Tells every player of `t` who is online.
fn tell_all(hub: &Hub, t: &Tournament, msg: &LobbyMessage) {
    for p in &t.players {
        hub.tell_player(&p.entrant.id, msg);
    }
}

/// While the current round is complete: pairs and starts the next one, or ends the
/// tournament after its last round.
async fn advance(hub: &Arc<Hub>, t: &mut Tournament) {
    loop {
        let complete = t
            .played
            .last()
            .is_none_or(|r| r.pairings.iter().all(|p| p.result.is_some()));
        if !complete || t.state != TState::Running {
            return;
        }
        let number = t.played.len() as u32 + 1;
        if number > t.rounds {
            t.state = TState::Finished;
            tracing::info!(tournament = %t.id, "tournament finished");
            if let Err(e) = hub
                .store
                .set_tournament_state(&t.id, t.state, t.rounds, Some(unix_ms()))
                .await
            {
                tracing::error!(error = %e, "storing a tournament failed");
            }
            tell_all(hub, t, &finished_notice(t));
            return;
        }
        if hub.closed_for_new_games() {
            return;
        }
        let round = swiss::pair(&t.entrants(), &t.played, number);
        let stored = async {
            hub.store
                .insert_tournament_round(&t.id, number, &round)
                .await?;
            hub.store
                .set_tournament_state(&t.id, t.state, number, None)
                .await
        };
        if let Err(e) = stored.await {
            tracing::error!(error = %e, "storing a tournament round failed");
            return;
        }
        tracing::info!(tournament = %t.id, round = number, games = round.pairings.len(), "round paired");
        t.games.push(vec![None; round.pairings.len()]);
        if let Some(bye) = &round.bye {
            hub.tell_player(
                bye,
                &LobbyMessage::TournamentRound {
                    tournament: t.id.clone(),
                    round: number,
                    game: None,
                },
            );
        }
        t.played.push(round);
        start_missing_games(hub, t).await;
    }
}

/// Starts the game of every pairing of the current round that has no result and no live
/// game, seating both players (online or not).
async fn start_missing_games(hub: &Arc<Hub>, t: &mut Tournament) {
    let Some(round) = t.played.last() else { return };
    let number = t.played.len() as u32;
    let todo: Vec<(usize, String, String)> = round
        .pairings
        .iter()
        .enumerate()
        .filter(|(b, p)| {
            p.result.is_none()
                && t.games[number as usize - 1][*b].is_none_or(|g| hub.game(g).is_none())
        })
        .map(|(b, p)| (b, p.red.clone(), p.black.clone()))
        .collect();
    for (board, red, black) in todo {
        if hub.closed_for_new_games() {
            return;
        }
        // Several nodes: a game another node runs (the leader changed during the round)
        // goes on there; its result comes from that node. So does one still live in the
        // database that no node runs this moment: its node died, and another takes it
        // over from its journal (starting the pairing again would play it twice).
        let game = t.games[number as usize - 1][board];
        if let (Some(cluster), Some(game)) = (hub.cluster.get(), game) {
            if cluster.owner(game).await.is_some() {
                continue;
            }
        }
        if let (Some(_), Some(game)) = (hub.cluster.get(), game) {
            match hub.store.is_live(game).await {
                Ok(false) => {}
                Ok(true) => continue,
                Err(e) => {
                    // Looked at again at the next sweep.
                    tracing::error!(error = %e, "reading a tournament game failed");
                    continue;
                }
            }
        }
        // A game that finished while nobody recorded its result (the server stopped
        // right after it, or with several nodes it ended between two leaders' terms)
        // counts as played, from the stored game.
        if let Some(result) = stored_result(hub, game).await {
            set_result(hub, t, number, board, result).await;
            continue;
        }
        let (Some(red), Some(black)) = (seat(hub, &red).await, seat(hub, &black).await) else {
            tracing::error!(tournament = %t.id, board, "a tournament player is unknown");
            continue;
        };
        let options = crate::game::Options {
            rated: Some(t.rated),
            code: None,
            tournament: Some(TournamentGame {
                tournament: t.id.clone(),
                round: number,
            }),
        };
        let ids = [red.player.id.clone(), black.player.id.clone()];
        let game = hub.start_game_opts(t.settings.clone(), [red, black], options);
        t.games[number as usize - 1][board] = Some(game);
        if let Err(e) = hub
            .store
            .set_tournament_game(&t.id, number, board, &game)
            .await
        {
            tracing::error!(error = %e, "storing a tournament game failed");
        }
        for id in ids {
            hub.tell_player(
                &id,
                &LobbyMessage::TournamentRound {
                    tournament: t.id.clone(),
                    round: number,
                    game: Some(game),
                },
            );
        }
    }
}

/// Gives the pairing on `board` of round `round` its result, in memory and stored.
async fn set_result(hub: &Hub, t: &mut Tournament, round: u32, board: usize, result: GameResult) {
    t.played[round as usize - 1].pairings[board].result = Some(result);
    if let Err(e) = hub
        .store
        .set_tournament_result(&t.id, round, board, result)
        .await
    {
        tracing::error!(error = %e, "storing a tournament result failed");
    }
}

/// The result of a tournament game stored as finished (not of an aborted one: who did not
/// show up is not kept).
async fn stored_result(hub: &Hub, game: Option<GameId>) -> Option<GameResult> {
    let stored = hub.store.game(game?).await.ok()??.game;
    if stored.state != "finished" {
        return None;
    }
    Some(match stored.winner.as_deref() {
        Some("red") => GameResult::RED_WINS,
        Some("black") => GameResult::BLACK_WINS,
        _ => GameResult::DRAW,
    })
}

/// A seat for player `id`: his newest connection if he is online, else a seat nobody
/// holds yet (he takes it with `join` when he comes; if he does not come, he is a
/// no-show).
async fn seat(hub: &Arc<Hub>, id: &str) -> Option<Seeker> {
    let player = match hub.player_by_id(id).await {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(e) => {
            tracing::error!(error = %e, "reading a tournament player failed");
            return None;
        }
    };
    let peer = hub
        .online_peer(&player.id)
        .unwrap_or_else(|| hub.rooms.empty_seat_peer());
    Some(Seeker { player, peer })
}
