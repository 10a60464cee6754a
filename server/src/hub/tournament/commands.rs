//! The players' tournament commands (`tournament_create`, `tournament_join`,
//! `tournament_withdraw`, `tournament_cancel`), served by the node that runs the
//! tournaments (with several nodes, the lobby's leader): each answer, or a refusal that
//! changes nothing.

use protocol::settings::{PartialSettings, DEFAULT_LEVEL};

use super::*;

fn refusal(code: &'static str, message: impl Into<String>) -> Refusal {
    (code, message.into())
}

fn storage_failed(e: anyhow::Error) -> Refusal {
    tracing::error!(error = %e, "storing a tournament failed");
    refusal(
        "server_busy",
        "the tournament cannot be stored now: try again",
    )
}

fn unknown(id: &str) -> Refusal {
    refusal(
        "unknown_tournament",
        format!(
            "there is no upcoming or running tournament {id:?}: `tamsk tournaments` lists them"
        ),
    )
}

/// The settings of a tournament at `tc` without settings of its creator's: Level 3 with
/// the game clock of tournament play.
pub fn default_settings(tc: TimeControl) -> Settings {
    tournament_settings(tc, None)
}

/// The settings of a tournament at `tc`: the control's at the level `given` names (Level
/// 3 unless it names one) with the game clock of tournament play, then each field
/// `given` instead of the control's. (The rules page's bounds are then the operator's:
/// [`crate::request::fixed`].)
pub fn tournament_settings(tc: TimeControl, given: Option<&PartialSettings>) -> Settings {
    let level = given.map_or(DEFAULT_LEVEL, PartialSettings::level_or_default);
    let control = Settings {
        game_clock: Some(GameClock {
            main_ms: GAME_CLOCK_MS,
            increment_ms: 0,
        }),
        ..tc.settings(level)
    };
    match given {
        Some(given) => given.over(control),
        None => control,
    }
}

impl Tournaments {
    /// Serves `op` for `player`: the answer to send him, or the refusal.
    pub async fn serve(
        &self,
        hub: &Arc<Hub>,
        player: &PlayerRec,
        op: TournamentOp,
    ) -> Result<LobbyMessage, Refusal> {
        Ok(match op {
            TournamentOp::Create(request) => {
                let (tournament, starts_ms) = self.create(hub, player, request).await?;
                LobbyMessage::TournamentCreated {
                    tournament,
                    starts_ms,
                }
            }
            TournamentOp::Join(tournament) => {
                self.join(hub, player, &tournament).await?;
                LobbyMessage::TournamentJoined { tournament }
            }
            TournamentOp::Withdraw(tournament) => {
                self.withdraw(hub, player, &tournament).await?;
                LobbyMessage::TournamentWithdrawn { tournament }
            }
            TournamentOp::Cancel(tournament) => self.cancel(hub, player, &tournament).await?,
        })
    }

    /// Creates a tournament: its id and start time.
    pub async fn create(
        &self,
        hub: &Arc<Hub>,
        by: &PlayerRec,
        req: CreateRequest,
    ) -> Result<(String, u64), Refusal> {
        if !(1..=MAX_ROUNDS).contains(&req.rounds) {
            return Err(refusal(
                "bad_tournament",
                format!("rounds must be 1 to {MAX_ROUNDS}, not {}", req.rounds),
            ));
        }
        let starts_in = req.starts_in_ms.unwrap_or(DEFAULT_STARTS_IN_MS);
        if starts_in > MAX_STARTS_IN_MS {
            return Err(refusal(
                "bad_tournament",
                "a tournament starts within 7 days of its creation",
            ));
        }
        // Every value given was checked against its range when the message was read (a
        // bad one is `bad_message`), and the control's and the operator's are in range.
        let settings = crate::request::fixed(
            tournament_settings(req.tc, req.settings.as_ref()),
            &hub.config,
        );
        if req.rated && TimeControl::of(&settings) != Some(req.tc) {
            return Err(refusal(
                "bad_tournament",
                format!(
                    "a rated tournament plays the {} control: these settings are not it (leave --settings out, or make it casual)",
                    req.tc
                ),
            ));
        }
        let mut live = self.live.lock().await;
        let own = live
            .values()
            .filter(|t| t.created_by == by.id)
            .filter(|t| matches!(t.state, TState::Upcoming | TState::Running))
            .count();
        if own >= MAX_OWN {
            return Err(refusal(
                "too_many_tournaments",
                format!(
                    "you have {own} upcoming or running tournaments of your own, the most one player may have: \
                     cancel one (tournament_cancel) or wait until one is over"
                ),
            ));
        }
        if live.len() >= MAX_LIVE {
            return Err(refusal(
                "too_many_tournaments",
                format!("at most {MAX_LIVE} tournaments may wait or run at once"),
            ));
        }
        let now = unix_ms();
        let t = Tournament {
            id: uuid::Uuid::now_v7().simple().to_string()[20..].to_string(),
            created_by: by.id.clone(),
            rounds: req.rounds,
            tc: req.tc,
            settings,
            rated: req.rated,
            starts_ms: now + starts_in,
            state: TState::Upcoming,
            players: Vec::new(),
            played: Vec::new(),
            games: Vec::new(),
            created_ms: now,
        };
        hub.store
            .insert_tournament(&t)
            .await
            .map_err(storage_failed)?;
        let answer = (t.id.clone(), t.starts_ms);
        tracing::info!(tournament = %t.id, rounds = t.rounds, tc = %t.tc, "tournament created");
        live.insert(t.id.clone(), t);
        drop(live);
        self.changed.notify_one();
        Ok(answer)
    }

    /// `player` joins tournament `id`: from round 1 before it starts, else from the next.
    /// A player who withdrew does not come back.
    pub async fn join(&self, hub: &Arc<Hub>, player: &PlayerRec, id: &str) -> Result<(), Refusal> {
        let mut live = self.live.lock().await;
        let Some(t) = live.get_mut(id) else {
            return Err(unknown(id));
        };
        if let Some(p) = t.players.iter().find(|p| p.entrant.id == player.id) {
            return Err(match p.entrant.withdrawn {
                true => refusal(
                    "withdrawn",
                    format!("you withdrew from tournament {id}; a withdrawal is final"),
                ),
                false => refusal(
                    "already_joined",
                    format!("you have already joined tournament {id}"),
                ),
            });
        }
        if t.players.len() >= MAX_PLAYERS {
            return Err(refusal(
                "tournament_full",
                format!("tournament {id} has its {MAX_PLAYERS} players"),
            ));
        }
        if t.played.len() as u32 >= t.rounds {
            return Err(refusal(
                "tournament_over",
                format!("tournament {id} plays its last round"),
            ));
        }
        let rating = player
            .ratings
            .lock()
            .expect("ratings lock")
            .get(t.tc)
            .glicko
            .rating;
        let p = TPlayer {
            entrant: Entrant {
                id: player.id.clone(),
                rating,
                joined: t.played.len() as u32 + 1,
                withdrawn: false,
            },
            name: player.name.clone(),
        };
        hub.store
            .insert_tournament_player(id, &p, unix_ms())
            .await
            .map_err(storage_failed)?;
        t.players.push(p);
        Ok(())
    }

    /// `player` withdraws from tournament `id`: he is paired no more (for good).
    pub async fn withdraw(
        &self,
        hub: &Arc<Hub>,
        player: &PlayerRec,
        id: &str,
    ) -> Result<(), Refusal> {
        let mut live = self.live.lock().await;
        let Some(t) = live.get_mut(id) else {
            return Err(unknown(id));
        };
        let Some(p) = t
            .players
            .iter_mut()
            .find(|p| p.entrant.id == player.id && !p.entrant.withdrawn)
        else {
            return Err(refusal(
                "not_joined",
                format!("you are not playing in tournament {id}"),
            ));
        };
        let mut gone = p.clone();
        gone.entrant.withdrawn = true;
        hub.store
            .insert_tournament_player(id, &gone, unix_ms())
            .await
            .map_err(storage_failed)?;
        *p = gone;
        Ok(())
    }

    /// `by` cancels tournament `id`, which he created and which has not started: stored
    /// as cancelled, and over. Its players are told (`tournament_finished`, cancelled),
    /// and so is he: the answer.
    pub async fn cancel(
        &self,
        hub: &Arc<Hub>,
        by: &PlayerRec,
        id: &str,
    ) -> Result<LobbyMessage, Refusal> {
        let mut live = self.live.lock().await;
        let Some(t) = live.get_mut(id) else {
            return Err(unknown(id));
        };
        if t.created_by != by.id {
            return Err(refusal(
                "not_creator",
                format!("only the player who created tournament {id} may cancel it"),
            ));
        }
        if t.state != TState::Upcoming {
            return Err(refusal(
                "tournament_started",
                format!(
                    "tournament {id} has started (round {} of {}): it can no longer be cancelled",
                    t.played.len(),
                    t.rounds
                ),
            ));
        }
        hub.store
            .set_tournament_state(id, TState::Cancelled, 0, Some(unix_ms()))
            .await
            .map_err(storage_failed)?;
        t.state = TState::Cancelled;
        tracing::info!(tournament = %id, players = t.players.len(), "tournament cancelled by its creator");
        let notice = finished_notice(t);
        for p in t.players.iter().filter(|p| p.entrant.id != by.id) {
            hub.tell_player(&p.entrant.id, &notice);
        }
        live.remove(id);
        drop(live);
        self.changed.notify_one();
        Ok(notice)
    }
}
