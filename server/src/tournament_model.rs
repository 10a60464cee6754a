//! A tournament's state, as the runner keeps it, the database stores it and the API shows
//! it (standings computed by [`crate::swiss`]).

use protocol::api::{PairingView, RoundView, StandingRow, TournamentDetail, TournamentSummary};
use protocol::rating::TimeControl;
use protocol::settings::{PartialSettings, Settings};
use protocol::wire::GameId;

use crate::swiss::{self, Entrant, GameResult, Round};

/// What `tournament_create` asks for.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CreateRequest {
    pub rounds: u32,
    pub tc: TimeControl,
    pub rated: bool,
    pub starts_in_ms: Option<u64>,
    /// The fields the creator gave, over the control's settings.
    pub settings: Option<PartialSettings>,
}

/// The result of a tournament's game, as its runner records it (and as a node tells the
/// lobby's leader, which runs the tournaments, when the game ran elsewhere).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TournamentResult {
    pub tournament: String,
    pub round: u32,
    pub game: GameId,
    pub result: GameResult,
}

/// A player's tournament message (served by the lobby's leader, with several nodes).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum TournamentOp {
    Create(CreateRequest),
    Join(String),
    Withdraw(String),
    /// Its creator cancels it before it starts.
    Cancel(String),
}

impl TournamentOp {
    /// The tournament message `msg` is, if it is one.
    pub fn of(msg: &protocol::wire::ClientMessage) -> Option<TournamentOp> {
        use protocol::wire::ClientMessage as M;
        Some(match msg.clone() {
            M::TournamentCreate {
                rounds,
                tc,
                rated,
                starts_in_ms,
                settings,
            } => TournamentOp::Create(CreateRequest {
                rounds,
                tc,
                rated,
                starts_in_ms,
                settings,
            }),
            M::TournamentJoin { tournament } => TournamentOp::Join(tournament),
            M::TournamentWithdraw { tournament } => TournamentOp::Withdraw(tournament),
            M::TournamentCancel { tournament } => TournamentOp::Cancel(tournament),
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TState {
    Upcoming,
    Running,
    Finished,
    Cancelled,
}

/// A tournament state the database holds and this server does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown tournament state {0:?}")]
pub struct UnknownState(pub String);

impl TState {
    pub fn as_str(self) -> &'static str {
        match self {
            TState::Upcoming => "upcoming",
            TState::Running => "running",
            TState::Finished => "finished",
            TState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Result<TState, UnknownState> {
        Ok(match s {
            "upcoming" => TState::Upcoming,
            "running" => TState::Running,
            "finished" => TState::Finished,
            "cancelled" => TState::Cancelled,
            other => return Err(UnknownState(other.to_string())),
        })
    }
}

/// A player of a tournament.
#[derive(Clone, Debug, PartialEq)]
pub struct TPlayer {
    pub entrant: Entrant,
    pub name: String,
}

/// A tournament as the runner and the API see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tournament {
    pub id: String,
    pub created_by: String,
    pub rounds: u32,
    pub tc: TimeControl,
    pub settings: Settings,
    pub rated: bool,
    pub starts_ms: u64,
    pub state: TState,
    pub players: Vec<TPlayer>,
    /// The rounds started so far, with their results.
    pub played: Vec<Round>,
    /// The game of each pairing, by round and board, once started.
    pub games: Vec<Vec<Option<GameId>>>,
    pub created_ms: u64,
}

impl Tournament {
    pub fn entrants(&self) -> Vec<Entrant> {
        self.players.iter().map(|p| p.entrant.clone()).collect()
    }

    fn name_of(&self, id: &str) -> String {
        self.players
            .iter()
            .find(|p| p.entrant.id == id)
            .map_or_else(|| id.to_string(), |p| p.name.clone())
    }

    pub fn summary(&self) -> TournamentSummary {
        TournamentSummary {
            id: self.id.clone(),
            state: self.state.as_str().into(),
            tc: self.tc,
            rated: self.rated,
            rounds: self.rounds,
            round: self.played.len() as u32,
            players: self.players.iter().filter(|p| !p.entrant.withdrawn).count() as u32,
            starts_ms: self.starts_ms,
        }
    }

    /// Standings (with tiebreaks), and every round's pairings and results.
    pub fn detail(&self) -> TournamentDetail {
        let standings = swiss::standings(&self.entrants(), &self.played)
            .into_iter()
            .map(|s| StandingRow {
                rank: s.rank,
                name: self.name_of(&s.id),
                player_id: s.id,
                score: s.score,
                buchholz: s.buchholz,
                sonneborn_berger: s.sonneborn_berger,
                seed: s.rating.round() as i32,
                withdrawn: s.withdrawn,
            })
            .collect();
        let pairings = self
            .played
            .iter()
            .enumerate()
            .map(|(i, round)| RoundView {
                round: i as u32 + 1,
                games: round
                    .pairings
                    .iter()
                    .enumerate()
                    .map(|(b, p)| PairingView {
                        board: b as u32 + 1,
                        red: self.name_of(&p.red),
                        black: self.name_of(&p.black),
                        game: self
                            .games
                            .get(i)
                            .and_then(|g| g.get(b).copied().flatten())
                            .map(|g| g.to_string()),
                        result: p.result.map(result_text),
                    })
                    .collect(),
                bye: round.bye.as_deref().map(|b| self.name_of(b)),
            })
            .collect();
        TournamentDetail {
            summary: self.summary(),
            settings: self.settings.clone(),
            standings,
            pairings,
        }
    }
}

/// `1-0`, `½-½`, `0-1 forfeit`, ...
pub fn result_text(r: GameResult) -> String {
    let side = |v: f64| {
        if v > 0.75 {
            "1"
        } else if v > 0.25 {
            "½"
        } else {
            "0"
        }
    };
    let mut out = format!("{}-{}", side(r.red), side(r.black));
    if r.forfeit {
        out.push_str(" forfeit");
    }
    out
}
