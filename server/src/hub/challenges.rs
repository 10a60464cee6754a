//! Challenges by name: sent to a player online anywhere, answered, withdrawn, expired,
//! and the budgets that keep strangers' challenges from flooding a playing player.

use std::sync::{Arc, Weak};

use protocol::settings::Settings;
use protocol::wire::{ChallengeId, GameId, LobbyMessage};
use tokio::time::Instant;

use crate::clock::unix_ms;
use crate::codec::encode_lobby;
use crate::lobby::*;
use crate::peer::{PlayerRec, Seeker};

use super::Hub;

impl Hub {
    /// Challenges the online player `to` (an id, or a name only one online player has).
    pub fn challenge(
        self: &Arc<Self>,
        from: Seeker,
        to: &str,
        settings: Settings,
        rated: Option<bool>,
    ) -> Result<(), Refusal> {
        let rated = crate::matching::wants_rated(rated, &settings);
        let mut lobby = self.lobby();
        let target = match lobby.online.get(to) {
            Some(o) => o.player.clone(),
            None => {
                let named: Vec<&Online> = lobby
                    .online
                    .values()
                    .filter(|o| o.player.name == to)
                    .collect();
                match named[..] {
                    [one] => one.player.clone(),
                    [] => {
                        return Err((
                            "unknown_player",
                            format!("no online player has the id or name {to:?}"),
                        ))
                    }
                    _ => {
                        return Err((
                            "ambiguous_player",
                            format!("several online players are named {to:?}: use a player id"),
                        ))
                    }
                }
            }
        };
        if target.id == from.player.id {
            return Err(("own_challenge", "you cannot challenge yourself".into()));
        }
        if target.bot {
            return Err((
                "unknown_player",
                "the computer does not take challenges: use play_bot".into(),
            ));
        }
        let mine = lobby
            .challenges
            .values()
            .filter(|c| c.from.player.id == from.player.id)
            .count();
        if mine >= MAX_CHALLENGES {
            return Err((
                "too_many_challenges",
                format!("at most {MAX_CHALLENGES} challenges may wait at once"),
            ));
        }
        if let Some(o) = lobby.online.get_mut(&from.player.id) {
            if !o.challenges_sent.left() {
                let (per_min, _) = CHALLENGES_SENT;
                return Err((
                    "too_many_challenges",
                    format!(
                        "you cancelled too many challenges: at most {per_min} a minute; try again in a moment"
                    ),
                ));
            }
        }
        let waiting_for_target = lobby
            .challenges
            .values()
            .filter(|c| c.to.id == target.id)
            .count();
        if waiting_for_target >= CHALLENGES_RECEIVED.1 as usize
            || lobby
                .online
                .get_mut(&target.id)
                .is_some_and(|o| !o.challenges_received.left())
        {
            return Err((
                "challenged_too_often",
                format!(
                    "{} has been challenged too often in the last minute: try again later",
                    target.name
                ),
            ));
        }
        lobby.next_challenge += 1;
        let id = lobby.next_challenge;
        let timeout = self.config.challenge_timeout;
        let expires_ms = unix_ms() + timeout.as_millis() as u64;
        from.peer.send_lobby(&LobbyMessage::ChallengeSent {
            challenge: id,
            to: player_ref(&target, &settings),
            settings: settings.clone(),
            expires_ms,
            rated,
        });
        // Only `challenge_sent` answers the challenge message: what comes later does not.
        let from = Seeker {
            peer: from.peer.replying(None),
            ..from
        };
        let offer = encode_lobby(&LobbyMessage::Challenged {
            challenge: id,
            from: player_ref(&from.player, &settings),
            settings: settings.clone(),
            expires_ms,
            rated,
        });
        if let Some(o) = lobby.online.get(&target.id) {
            for p in &o.peers {
                p.send(offer.clone());
            }
        }
        lobby.challenges.insert(
            id,
            Challenge {
                id,
                from,
                to: target,
                settings,
                rated,
                expires_ms,
            },
        );
        drop(lobby);
        // No challenge waits forever.
        let hub: Weak<Hub> = Arc::downgrade(self);
        let deadline = Instant::now() + timeout;
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            if let Some(hub) = hub.upgrade() {
                let mut lobby = hub.lobby();
                if let Some(c) = lobby.challenges.remove(&id) {
                    close_challenge(&lobby, &c, "expired");
                }
            }
        });
        Ok(())
    }

    fn take_challenge(
        &self,
        id: ChallengeId,
        player: &PlayerRec,
        as_target: bool,
    ) -> Result<(std::sync::MutexGuard<'_, Lobby>, Challenge), Refusal> {
        let mut lobby = self.lobby();
        let mine = lobby.challenges.get(&id).is_some_and(|c| {
            if as_target {
                c.to.id == player.id
            } else {
                c.from.player.id == player.id
            }
        });
        if !mine {
            return Err((
                "unknown_challenge",
                format!(
                    "there is no challenge {id} {} you",
                    if as_target { "to" } else { "from" }
                ),
            ));
        }
        let c = lobby.challenges.remove(&id).expect("checked");
        Ok((lobby, c))
    }

    /// Accepts challenge `id`: the game starts (seats drawn at random).
    pub fn accept_challenge(
        self: &Arc<Self>,
        id: ChallengeId,
        seeker: Seeker,
    ) -> Result<GameId, Refusal> {
        let (lobby, c) = self.take_challenge(id, &seeker.player, true)?;
        if c.from.peer.is_gone() {
            close_challenge(&lobby, &c, "gone");
            return Err(("unknown_challenge", "the challenger has left".into()));
        }
        drop(lobby);
        Ok(self.start_game(c.settings, Some(c.rated), [c.from, seeker], Seats::Random))
    }

    pub fn decline_challenge(&self, id: ChallengeId, player: &PlayerRec) -> Result<(), Refusal> {
        let (lobby, c) = self.take_challenge(id, player, true)?;
        close_challenge(&lobby, &c, "declined");
        Ok(())
    }

    pub fn cancel_challenge(&self, id: ChallengeId, player: &PlayerRec) -> Result<(), Refusal> {
        let (mut lobby, c) = self.take_challenge(id, player, false)?;
        close_challenge(&lobby, &c, "cancelled");
        // Cancels spend the budgets (see `Online::challenges_sent`).
        for (who, received) in [(&c.from.player.id, false), (&c.to.id, true)] {
            if let Some(o) = lobby.online.get_mut(who) {
                match received {
                    false => o.challenges_sent.spend(),
                    true => o.challenges_received.spend(),
                }
            }
        }
        Ok(())
    }

    /// Every challenge closed (shutdown).
    pub fn close_all_challenges(&self) {
        self.close_all_challenges_because("shutting_down");
    }

    /// Every challenge closed, for this `reason`.
    pub fn close_all_challenges_because(&self, reason: &str) {
        let mut lobby = self.lobby();
        let all: Vec<Challenge> = lobby.challenges.drain().map(|(_, c)| c).collect();
        for c in all {
            close_challenge(&lobby, &c, reason);
        }
    }
}

/// Tells both sides of a challenge that it is over.
pub(super) fn close_challenge(lobby: &Lobby, c: &Challenge, reason: &str) {
    let text = encode_lobby(&LobbyMessage::ChallengeClosed {
        challenge: c.id,
        reason: reason.into(),
    });
    c.from.peer.send(text.clone());
    if let Some(o) = lobby.online.get(&c.to.id) {
        for p in &o.peers {
            p.send(text.clone());
        }
    }
}
