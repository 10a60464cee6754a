//! The hub's side of finding a game: the quick-match queue, private games joined by a
//! code, challenges, and who is online (the lobby's state is [`crate::lobby::Lobby`]).

use std::sync::Arc;

use protocol::settings::Settings;
use protocol::wire::{ChallengeId, GameId, LobbyMessage, PlayerRef, SeekId, SeekInfo, LIST_LIMIT};

use crate::clock::unix_ms;
use crate::cluster::lobby::StartReq;
use crate::codec::encode_lobby;
use crate::game;
use crate::lobby::*;

pub(super) use super::challenges::close_challenge;
use crate::peer::{Peer, PlayerRec, Seeker};

use super::Hub;

impl Hub {
    pub(crate) fn lobby(&self) -> std::sync::MutexGuard<'_, Lobby> {
        self.lobby.lock().expect("lobby lock")
    }

    /// Starts a game between two players; both get its snapshot. `rated`: what they
    /// asked for (`None`: the default, see `ratings::is_rated`).
    pub fn start_game(
        self: &Arc<Self>,
        settings: Settings,
        rated: Option<bool>,
        players: [Seeker; 2],
        seats: Seats,
    ) -> GameId {
        self.start_game_with(settings, rated, players, seats, None)
    }

    /// [`Hub::start_game`]; a private game (joined by its `code`) is not listed, and only
    /// its players, or a watcher who has the code, may follow it.
    pub fn start_game_with(
        self: &Arc<Self>,
        settings: Settings,
        rated: Option<bool>,
        players: [Seeker; 2],
        seats: Seats,
        code: Option<String>,
    ) -> GameId {
        let [a, b] = players;
        let (red, black) = if seats == Seats::Random && rand::random::<bool>() {
            (b, a)
        } else {
            (a, b)
        };
        // v7: ids are unique across restarts and nodes, and sort by creation.
        let id = GameId::now_v7();
        let seekers = [red, black];
        let options = game::Options {
            rated,
            code,
            ..Default::default()
        };
        // Several nodes: a game the leader pairs runs on a player's node (see
        // `cluster::lobby::place`).
        let placed = self.cluster_lobby.get().filter(|l| l.leading());
        if let Some((lobby, (node, seats))) = placed.and_then(|l| Some((l, l.placement(&seekers)?)))
        {
            let req = StartReq {
                game: id,
                settings: settings.clone(),
                rated,
                code: options.code.clone(),
                seats,
            };
            let rooms = self.rooms.clone();
            let here = move || game::spawn(rooms, id, settings, seekers, options);
            lobby.start_at(node, req, Box::new(here));
            return id;
        }
        if let Some(lobby) = placed {
            lobby.tell_paired(&seekers, id);
        }
        game::spawn(self.rooms.clone(), id, settings, seekers, options);
        id
    }

    /// Starts a game with these seats as given (`[red, black]`) and these options.
    pub fn start_game_opts(
        self: &Arc<Self>,
        settings: Settings,
        players: [Seeker; 2],
        options: game::Options,
    ) -> GameId {
        let id = GameId::now_v7();
        game::spawn(self.rooms.clone(), id, settings, players, options);
        id
    }

    /// The newest connection of an online player.
    pub fn online_peer(&self, player_id: &str) -> Option<Peer> {
        let lobby = self.lobby();
        let online = lobby.online.get(player_id)?;
        online.peers.iter().rev().find(|p| !p.is_gone()).cloned()
    }

    /// Tells every connection of a player (if online).
    pub fn tell_player(&self, player_id: &str, msg: &LobbyMessage) {
        let text = encode_lobby(msg);
        let lobby = self.lobby();
        if let Some(o) = lobby.online.get(player_id) {
            for p in &o.peers {
                p.send(text.clone());
            }
        }
    }

    pub fn lobby_sizes(&self) -> LobbySizes {
        let lobby = self.lobby();
        let private = lobby.seeks.iter().filter(|s| s.code.is_some()).count();
        LobbySizes {
            open_seeks: lobby.seeks.len() - private,
            private_seeks: private,
            challenges: lobby.challenges.len(),
            online_players: lobby.online.len(),
        }
    }

    // ----- quick match and open seeks -----

    /// Open seeks, oldest first.
    /// Who is online, by name (case-insensitive; at most [`LIST_LIMIT`]), and how many.
    pub fn list_players(&self) -> (Vec<PlayerRef>, usize) {
        let lobby = self.lobby();
        let online = lobby.online.len();
        let mut players: Vec<PlayerRef> = lobby
            .online
            .values()
            .map(|o| online_ref(&o.player))
            .collect();
        drop(lobby);
        let key = |p: &PlayerRef| (p.name.to_lowercase(), p.player_id.clone());
        // The first LIST_LIMIT by name without sorting them all.
        if players.len() > LIST_LIMIT {
            players.select_nth_unstable_by_key(LIST_LIMIT, key);
            players.truncate(LIST_LIMIT);
        }
        players.sort_by_key(key);
        (players, online)
    }

    pub fn list_seeks(&self) -> Vec<SeekInfo> {
        let mut lobby = self.lobby();
        lobby.prune(None);
        lobby
            .seeks
            .iter()
            .filter(|s| s.code.is_none())
            .take(LIST_LIMIT)
            .map(|s| SeekInfo {
                seek: s.id,
                player: player_ref(&s.seeker.player, &s.settings),
                settings: s.settings.clone(),
                since_ms: s.since_ms,
                rated: s.rated,
            })
            .collect()
    }

    /// Takes open seek `id`: the game starts with its settings.
    pub fn accept_seek(self: &Arc<Self>, id: SeekId, seeker: Seeker) -> Result<GameId, Refusal> {
        let mut lobby = self.lobby();
        lobby.prune(None);
        let Some(i) = lobby
            .seeks
            .iter()
            .position(|s| s.id == id && s.code.is_none())
        else {
            return Err((
                "unknown_seek",
                format!("there is no open seek {id}: list_seeks shows those waiting"),
            ));
        };
        if lobby.seeks[i].seeker.player.id == seeker.player.id {
            return Err(("own_seek", "this is your own seek".into()));
        }
        let other = lobby.seeks.remove(i);
        lobby.prune(Some(seeker.peer.conn));
        drop(lobby);
        Ok(self.start_game(
            other.settings,
            Some(other.rated),
            [other.seeker, seeker],
            Seats::Random,
        ))
    }

    /// Withdraws a connection's seek (open or private); true if it had one.
    pub fn cancel_seek(&self, conn: u64) -> bool {
        let mut lobby = self.lobby();
        let before = lobby.seeks.len();
        lobby.seeks.retain(|s| s.seeker.peer.conn != conn);
        lobby.seeks.len() != before
    }

    /// Every seek withdrawn (shutdown): their connections get `seek_cancelled`.
    /// Takes the open seeks (not a hosted game's code) out of the lobby without telling
    /// their seekers: (connection, settings, rated).
    pub fn take_open_seeks(&self) -> Vec<(u64, Settings, bool)> {
        let mut lobby = self.lobby();
        let (open, hosted) = std::mem::take(&mut lobby.seeks)
            .into_iter()
            .partition(|s| s.code.is_none());
        lobby.seeks = hosted;
        open.into_iter()
            .map(|s: crate::lobby::Seek| (s.seeker.peer.conn, s.settings, s.rated))
            .collect()
    }

    pub fn cancel_all_seeks(&self) {
        let seeks = std::mem::take(&mut self.lobby().seeks);
        for s in seeks {
            s.seeker
                .peer
                .send_msg(&protocol::wire::ServerMessage::SeekCancelled);
        }
    }

    // ----- private games -----

    /// Hosts a private game: returns its code.
    pub fn host(&self, settings: Settings, seeker: Seeker) -> String {
        let mut lobby = self.lobby();
        lobby.prune(Some(seeker.peer.conn));
        let code = lobby.new_code();
        let rated = crate::matching::wants_rated(None, &settings);
        lobby.add_seek(settings, rated, seeker, Some(code.clone()));
        code
    }

    /// Joins the private game hosted under `code`.
    pub fn join_code(self: &Arc<Self>, code: &str, seeker: Seeker) -> Result<GameId, Refusal> {
        let code = game_code(code)?;
        let mut lobby = self.lobby();
        lobby.prune(None);
        let Some(i) = lobby
            .seeks
            .iter()
            .position(|s| s.code.as_deref() == Some(&code))
        else {
            return Err((
                "unknown_code",
                format!("no game is waiting under the code {code}"),
            ));
        };
        if lobby.seeks[i].seeker.player.id == seeker.player.id {
            return Err(("own_seek", "this is your own private game".into()));
        }
        let host = lobby.seeks.remove(i);
        lobby.prune(Some(seeker.peer.conn));
        drop(lobby);
        Ok(self.start_game_with(
            host.settings,
            Some(host.rated),
            [host.seeker, seeker],
            Seats::Random,
            Some(code),
        ))
    }

    /// The newest live game started from this private code (a rematch keeps the code).
    pub fn game_of_code(&self, code: &str) -> Result<GameId, Refusal> {
        let code = game_code(code)?;
        self.games
            .iter()
            .filter(|g| g.code.as_deref() == Some(code.as_str()))
            .map(|g| *g.key())
            .max()
            .ok_or_else(|| {
                (
                    "unknown_code",
                    format!("no live game was started from the code {code}"),
                )
            })
    }

    // ----- who is online -----

    /// A connection of `player` said hello.
    pub fn online_add(&self, player: &Arc<PlayerRec>, peer: Peer) {
        let mut lobby = self.lobby();
        told_of_shutdown(&lobby, &peer);
        lobby
            .online
            .entry(player.id.clone())
            .or_insert_with(|| Online::new(player.clone()))
            .peers
            .push(peer);
    }

    /// A connection went: its seek, its challenges, and (if it was the player's last)
    /// the challenges waiting for him go too; the other sides are told.
    pub fn connection_gone(&self, player: Option<&PlayerRec>, conn: u64) {
        let mut lobby = self.lobby();
        lobby.guests.remove(&conn);
        lobby.seeks.retain(|s| s.seeker.peer.conn != conn);
        let mut last = false;
        if let Some(p) = player {
            if let Some(o) = lobby.online.get_mut(&p.id) {
                o.peers.retain(|peer| peer.conn != conn);
                if o.peers.is_empty() {
                    lobby.online.remove(&p.id);
                    last = true;
                }
            }
        }
        let gone: Vec<ChallengeId> = lobby
            .challenges
            .values()
            .filter(|c| {
                c.from.peer.conn == conn || (last && player.is_some_and(|p| c.to.id == p.id))
            })
            .map(|c| c.id)
            .collect();
        for id in gone {
            if let Some(c) = lobby.challenges.remove(&id) {
                close_challenge(&lobby, &c, "gone");
            }
        }
    }

    /// Whether a player may open one more seek from connection `conn` (whose own seek, if
    /// any, a new one replaces): at most [`MAX_SEEKS_PER_PLAYER`] at once.
    pub fn may_seek(&self, player_id: &str, conn: u64) -> Result<(), Refusal> {
        let others = self
            .lobby()
            .seeks
            .iter()
            .filter(|s| s.seeker.player.id == player_id && s.seeker.peer.conn != conn)
            .count();
        if others >= MAX_SEEKS_PER_PLAYER {
            return Err((
                "too_many_seeks",
                format!("at most {MAX_SEEKS_PER_PLAYER} seeks of one player may wait at once"),
            ));
        }
        Ok(())
    }

    /// Tells every connection that said hello, the players' and the guests', that the
    /// server is shutting down and its drain lasts `drain_ms`; and, from now on, each
    /// that says hello after (one silent since before the drain began: new connections
    /// are not accepted any more) with the time left, under the same lock, so that each is
    /// told once.
    pub fn announce_shutdown(&self, drain_ms: u64) {
        let mut lobby = self.lobby();
        let now = unix_ms();
        lobby.drain_end_ms = Some(now + drain_ms);
        let text = encode_lobby(&LobbyMessage::ShuttingDown {
            drain_ms,
            server_ms: now,
        });
        let guests = lobby.guests.values();
        for p in lobby.online.values().flat_map(|o| &o.peers).chain(guests) {
            p.send(text.clone());
        }
    }

    /// A guest's connection said hello: it hears what every connection is told.
    pub fn guest_arrived(&self, peer: &crate::peer::Peer) {
        let mut lobby = self.lobby();
        told_of_shutdown(&lobby, peer);
        lobby.guests.insert(peer.conn, peer.clone());
    }
}

/// A connection that says hello during the drain is told at once, with the time left.
fn told_of_shutdown(lobby: &Lobby, peer: &Peer) {
    if let Some(end) = lobby.drain_end_ms {
        let now = unix_ms();
        peer.send(encode_lobby(&LobbyMessage::ShuttingDown {
            drain_ms: end.saturating_sub(now),
            server_ms: now,
        }));
    }
}
