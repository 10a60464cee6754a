//! Finding a game: the quick-match queue (open seeks, listed and acceptable), private
//! games joined by a code, and challenges to a named online player.
//!
//! Everything here is held under one short lock and never waits; messages go out through
//! the connections' bounded queues. A seek or a challenge belongs to the connection that
//! made it and goes with it.

use std::collections::HashMap;
use std::sync::Arc;

use protocol::settings::Settings;
use protocol::wire::{ChallengeId, GameId, PlayerRef, SeekId};
use rand::Rng;
use tokio::time::Instant;

use crate::clock::unix_ms;
use crate::peer::{Peer, PlayerRec, Seeker};

/// Letters of a private game's code: no 0/O, 1/I/L.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
pub const CODE_LEN: usize = 6;
/// Challenges one player may have waiting at once.
pub const MAX_CHALLENGES: usize = 8;
/// Open seeks one player may have at once, over all his connections (on one node as on
/// several: a player with 200 connections filled `list_seeks`' 200 and hid everyone
/// else's).
pub const MAX_SEEKS_PER_PLAYER: usize = 4;

/// A private game's code as typed (any case, spaces around), upper-cased; `bad_code` if
/// it cannot be one.
pub(crate) fn game_code(code: &str) -> Result<String, Refusal> {
    let code = code.trim().to_ascii_uppercase();
    if code.len() != CODE_LEN || !code.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
        return Err((
            "bad_code",
            format!(
                "a game code is {CODE_LEN} of the letters A to Z but I, L and O and the digits \
                 2 to 9, like K7QX3M"
            ),
        ));
    }
    Ok(code)
}

/// A waiting seek: public (listed, matched on equal settings) or private (a code).
pub struct Seek {
    pub id: SeekId,
    pub settings: Settings,
    pub seeker: Seeker,
    pub code: Option<String>,
    pub since_ms: u64,
    /// Asked for a rated game (resolved: only a named control can be rated).
    pub rated: bool,
    /// When it was posted: a rated seek's rating range widens from then on.
    pub since: Instant,
    /// The seeker's rating in the seek's control when he posted it.
    pub rating: Option<f64>,
}

pub struct Challenge {
    pub id: ChallengeId,
    pub from: Seeker,
    pub to: Arc<PlayerRec>,
    pub settings: Settings,
    pub rated: bool,
    pub expires_ms: u64,
}

/// An online player and his connections.
pub struct Online {
    pub player: Arc<PlayerRec>,
    pub peers: Vec<Peer>,
    /// The challenges he may still cancel ([`CHALLENGES_SENT`]) and see cancelled
    /// ([`CHALLENGES_RECEIVED`]): each challenge is a frame on every connection of the
    /// challenged player and its cancel one more, so a few challengers sending and
    /// cancelling could fill a playing player's outbound queue until he was cut off. Only
    /// cancels spend them: a challenge accepted or declined is a player's own business,
    /// and one left to expire keeps a challenger's place among his 8 waiting for a minute.
    /// While either is spent, the challenger's new challenges are refused.
    pub challenges_sent: crate::limits::Budget,
    pub challenges_received: crate::limits::Budget,
}

/// Challenges a player may cancel: a minute's worth, and a burst.
pub const CHALLENGES_SENT: (u32, u32) = (20, 10);
/// Challenges to a player that their challengers may cancel, all together: a minute's
/// worth, and a burst.
pub const CHALLENGES_RECEIVED: (u32, u32) = (12, 6);

impl Online {
    pub fn new(player: Arc<PlayerRec>) -> Online {
        let budget = |(per_min, burst)| crate::limits::Budget::per_minute(per_min, burst);
        Online {
            player,
            peers: Vec::new(),
            challenges_sent: budget(CHALLENGES_SENT),
            challenges_received: budget(CHALLENGES_RECEIVED),
        }
    }
}

#[derive(Default)]
pub struct Lobby {
    /// Oldest first.
    pub(crate) seeks: Vec<Seek>,
    pub(crate) next_seek: SeekId,
    pub(crate) challenges: HashMap<ChallengeId, Challenge>,
    pub(crate) next_challenge: ChallengeId,
    /// By player id.
    pub(crate) online: HashMap<String, Online>,
    /// The guests' connections (they are nobody online), for what every connection is
    /// told (`shutting_down`). Bounded by the connections.
    pub(crate) guests: HashMap<u64, crate::peer::Peer>,
    /// When the drain of a shutdown ends (Unix ms), once it began: whoever says hello
    /// after is told `shutting_down` too.
    pub(crate) drain_end_ms: Option<u64>,
}

/// How seats are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seats {
    /// Drawn at random ("draw lots").
    Random,
    /// The first is Red.
    AsGiven,
}

/// A refusal: error code and message.
pub type Refusal = (&'static str, String);

/// What a seek led to.
pub enum SeekResult {
    Waiting(SeekId),
    Paired(GameId),
}

/// Sizes of the lobby, for `/metrics`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LobbySizes {
    pub open_seeks: usize,
    pub private_seeks: usize,
    pub challenges: usize,
    pub online_players: usize,
}

impl Lobby {
    /// Drops the seeks of connections that are gone, and `conn`'s own (a connection has
    /// at most one seek).
    pub(crate) fn prune(&mut self, conn: Option<u64>) {
        self.seeks
            .retain(|s| Some(s.seeker.peer.conn) != conn && !s.seeker.peer.is_gone());
    }

    pub(crate) fn add_seek(
        &mut self,
        settings: Settings,
        rated: bool,
        seeker: Seeker,
        code: Option<String>,
    ) -> SeekId {
        self.next_seek += 1;
        let id = self.next_seek;
        let rating = crate::matching::rating_of(&seeker.player, &settings);
        self.seeks.push(Seek {
            id,
            settings,
            seeker,
            code,
            since_ms: unix_ms(),
            rated,
            since: Instant::now(),
            rating,
        });
        id
    }

    pub(crate) fn new_code(&self) -> String {
        let mut rng = rand::thread_rng();
        loop {
            let code: String = (0..CODE_LEN)
                .map(|_| CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())] as char)
                .collect();
            if !self.seeks.iter().any(|s| s.code.as_deref() == Some(&code)) {
                return code;
            }
        }
    }
}

/// Who is online, without a rating (one per time control: none is the one to show).
pub(crate) fn online_ref(p: &PlayerRec) -> PlayerRef {
    PlayerRef {
        player_id: p.id.clone(),
        name: p.name.clone(),
        rating: None,
    }
}

pub(crate) fn player_ref(p: &PlayerRec, settings: &Settings) -> PlayerRef {
    PlayerRef {
        player_id: p.id.clone(),
        name: p.name.clone(),
        rating: crate::ratings::shown(p, protocol::rating::TimeControl::of(settings)),
    }
}
