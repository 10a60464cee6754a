//! The lobby's loop: the live nodes (their keys in `tamsk_nodes`), the leader's lease
//! (taken, refreshed, lost, given up), and what a change of leader moves (announced
//! players, seeks made again, challenges closed); the leader drops the connections of dead
//! nodes.

use super::*;

impl ClusterLobby {
    pub(super) async fn run(self: Arc<Self>) {
        let stop = self.cluster.rooms.stop_games.clone();
        let mut tick = tokio::time::interval(self.cluster.lease / 4);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tick.tick() => {}
            }
            self.turn().await;
        }
        self.resign().await;
    }

    /// One turn of the loop: the live nodes, leadership, dead nodes, the leader as seen.
    pub(super) async fn turn(self: &Arc<Self>) {
        // The live nodes: their keys in `tamsk_nodes` (each node writes its own every
        // third of a lease, this one's included; see `nodes`).
        // Bounded: listing the keys is an ordered consumer that ends when nats-server
        // says nothing is pending, and that answer was seen to take seconds (a turn
        // after a node's key expired); the rest of the turn (the leader's lease, the new
        // leader seen, seeks made again there) must not wait for it. The last list is
        // kept meanwhile.
        let listed = tokio::time::timeout(self.cluster.lease / 4, async {
            let keys = self.cluster.nodes.keys().await.ok()?;
            Some(
                keys.filter_map(|k| async move { k.ok() })
                    .collect::<HashSet<String>>()
                    .await,
            )
        })
        .await;
        match listed {
            Ok(Some(live)) => *self.nodes.lock().expect("nodes lock") = live,
            Ok(None) => {}
            Err(_) => tracing::debug!(
                "listing the live nodes took over a quarter lease: the last list is kept"
            ),
        }
        let draining = self.cluster.rooms.closed_for_new_games();
        let term = *self.term.lock().expect("term lock");
        match term {
            Some(_) if draining => self.resign().await,
            Some((revision, _)) => {
                let sent = Instant::now();
                let value = self.leader.lock().expect("leader lock").clone();
                let value = value.unwrap_or_default();
                match self.kv.update(LEADER_KEY, value.into(), revision).await {
                    Ok(r) => self.extend(r, sent),
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the lobby's lease");
                        self.step_down(true);
                    }
                }
            }
            None if !draining => self.try_lead().await,
            None => {}
        }
        self.read_leader().await;
        if self.leading() {
            self.drop_dead_nodes().await;
            self.read_loads().await;
        } else {
            self.forget_relays();
        }
        self.forget_placed();
        self.turns.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Not leading: the relays of a past term are kept only while they sit in a game this
    /// node runs (their connections' nodes now tell another leader when they close).
    fn forget_relays(&self) {
        let idle: Vec<(String, u64)> = self
            .relays
            .iter()
            .filter(|r| r.peer.is_gone() || r.peer.seated.list().is_empty())
            .map(|r| r.key().clone())
            .collect();
        for key in idle {
            if let Some((_, relay)) = self.relays.remove(&key) {
                self.relay_keys.remove(&relay.peer.conn);
                // A relay that still follows a game here stays its proxy (see `gone`).
                let conn = relay.peer.conn;
                if !self.cluster.follows_any(&key) {
                    self.cluster.proxies.remove_if(&key, |_, p| p.conn == conn);
                }
            }
        }
    }

    fn extend(&self, revision: u64, sent: Instant) {
        *self.term.lock().expect("term lock") = Some((revision, sent + self.cluster.lease / 2));
    }

    async fn try_lead(self: &Arc<Self>) {
        let value = format!("{} {}", self.cluster.node, uuid::Uuid::now_v7().simple());
        let sent = Instant::now();
        let created = match self.kv.update(LEADER_KEY, value.clone().into(), 0).await {
            Ok(r) => Some(r),
            Err(_) => match self.kv.entry(LEADER_KEY).await {
                Ok(Some(e)) if e.operation != kv::Operation::Put => self
                    .kv
                    .update(LEADER_KEY, value.clone().into(), e.revision)
                    .await
                    .ok(),
                _ => None,
            },
        };
        if let Some(revision) = created {
            tracing::info!(node = %self.cluster.node, "leads the lobby");
            self.extend(revision, sent);
            self.host.lobby_led();
            self.changed_leader(Some(value));
        }
    }

    /// Reads who leads; reacts when it changed.
    async fn read_leader(self: &Arc<Self>) {
        let value = match self.kv.entry(LEADER_KEY).await {
            Ok(Some(e)) if e.operation == kv::Operation::Put => {
                Some(String::from_utf8_lossy(&e.value).into_owned())
            }
            Ok(_) => None,
            Err(_) => return,
        };
        if value.is_some() {
            self.changed_leader(value);
        }
    }

    /// Records the leader; when it is a new one, this node's seekers are told their seeks
    /// went (they were in the old leader's memory) and its online players are announced
    /// to the new one.
    fn changed_leader(self: &Arc<Self>, value: Option<String>) {
        {
            let mut leader = self.leader.lock().expect("leader lock");
            if *leader == value {
                return;
            }
            *leader = value.clone();
        }
        let led = self.term.lock().expect("term lock").is_some();
        if led && !value_is_mine(&value, &self.cluster.node) {
            self.step_down(true);
        }
        // Also for the first leader this node sees: its clients had no seek anywhere then,
        // but those that said hello before it was elected are announced to it.
        let seekers: Vec<(Peer, Option<Arc<PlayerRec>>, Waiting)> = self
            .local
            .iter_mut()
            .filter_map(|mut l| {
                let waiting = l.seeking.take()?;
                Some((l.peer.clone(), l.player.clone(), waiting))
            })
            .collect();
        // Challenges were in the old leader's memory too: their challengers are told
        // (a challenge names its challenged player, who may have left meanwhile, so it
        // is not made again).
        for mut l in self.local.iter_mut() {
            l.told_closed = std::mem::take(&mut l.challenges);
            for &challenge in &l.told_closed {
                l.peer.send(crate::codec::encode_lobby(
                    &protocol::wire::LobbyMessage::ChallengeClosed {
                        challenge,
                        reason: "lobby_moved".into(),
                    },
                ));
            }
        }
        let announce: Vec<(Peer, Arc<PlayerRec>)> = if self.leading() {
            Vec::new()
        } else {
            self.local
                .iter()
                .filter_map(|l| Some((l.peer.clone(), l.player.clone()?)))
                .collect()
        };
        let lobby = self.clone();
        // Announced before the seeks move, so that whatever their seekers do next finds
        // every player of this node online at the new leader.
        tokio::spawn(async move {
            for (peer, player) in announce {
                lobby.announce(&peer, &player).await;
            }
            tracing::debug!(
                moved = seekers.len(),
                "online players announced to the new leader: their seeks move"
            );
            for (peer, player, waiting) in seekers {
                lobby.move_seek(peer, player, waiting);
            }
        });
    }

    /// Tells the new leader a client of this node is online. The key that named it may
    /// have been read a moment before its term began (it refuses then): asked again at
    /// each turn of the loop, for at most two leases.
    ///
    /// Not sent for a connection closed since (the clients are announced one after the
    /// other, each waiting for the leader's answer). One that closes while its
    /// announcement is on its way had its `Gone` sent by `closed` outside this task, which
    /// may have reached the leader first: the leader would then keep a relay (and an
    /// online player) for a closed connection, so it is told `Gone` again, after the
    /// answer (a second `Gone` finds nothing and does nothing).
    async fn announce(&self, peer: &Peer, player: &Arc<PlayerRec>) {
        let until = Instant::now() + 2 * self.cluster.lease;
        let mut turns = self.turns.subscribe();
        while self.local.contains_key(&peer.conn) {
            let outcome = self.ask(peer, Some(player), LobbyOp::Online).await;
            if !self.local.contains_key(&peer.conn) {
                self.ask(peer, Some(player), LobbyOp::Gone).await;
                return;
            }
            let Outcome::Unavailable(why) = outcome else {
                return;
            };
            // Every seek of this node waits for its announcements (see `changed_leader`):
            // why one is refused is worth knowing.
            tracing::debug!(conn = peer.conn, %why, "the lobby's leader refused an online announcement");
            if self.leading()
                || tokio::time::timeout_at(until, turns.changed())
                    .await
                    .is_err()
            {
                return;
            }
        }
    }

    /// A seek this node's client had at the old leader, made again at the new one: the
    /// client is told `seeking` again, or gets its game. A hosted game's code, or a seek
    /// the new leader refuses (or cannot be reached for), is cancelled. Queued with the
    /// connection's own lobby messages (see `queue`), so a cancel it sent, or its closing,
    /// comes after, in order; nothing is made for a connection already closed.
    fn move_seek(self: &Arc<Self>, peer: Peer, player: Option<Arc<PlayerRec>>, waiting: Waiting) {
        let (Waiting::Seek { settings, rated }, Some(player)) = (waiting, player) else {
            peer.send_msg(&ServerMessage::SeekCancelled);
            return;
        };
        self.enqueue(queue::Asked {
            op: LobbyOp::Seek { settings, rated },
            peer,
            player: Some(player),
            moved: true,
        });
    }

    /// Stops leading: the lobby's state goes (see [`LobbyHost::lobby_reset`]). With
    /// `keep_seeks` (the lease was lost, the node lives on), its own clients' open seeks
    /// are marked to be made again at the next leader, as every other node's are.
    fn step_down(&self, keep_seeks: bool) {
        *self.term.lock().expect("term lock") = None;
        let relays: Vec<(Arc<PlayerRec>, u64)> = self
            .relays
            .iter_mut()
            .map(|mut r| {
                r.online = false;
                (r.player.clone(), r.peer.conn)
            })
            .collect();
        for (conn, settings, rated) in self.host.lobby_reset(relays, keep_seeks) {
            // A connection closed meanwhile has nothing to make again.
            if let Some(mut local) = self.local.get_mut(&conn) {
                local.seeking = Some(Waiting::Seek {
                    settings,
                    rated: Some(rated),
                });
            }
        }
    }

    /// Shutdown: leaves the lead at once, so that another node takes it.
    pub async fn resign(&self) {
        if self.term.lock().expect("term lock").is_none() {
            return;
        }
        self.step_down(false);
        let _ = self.kv.purge(LEADER_KEY).await;
        tracing::info!(node = %self.cluster.node, "left the lobby's lead");
    }

    /// Leader side: the live games of every other live node, from their heartbeats (for
    /// `place`). A node whose heartbeat says nothing readable is left out: unknown.
    async fn read_loads(&self) {
        let nodes: Vec<String> = {
            let nodes = self.nodes.lock().expect("nodes lock");
            nodes
                .iter()
                .filter(|n| **n != self.cluster.node)
                .cloned()
                .collect()
        };
        let mut loads = HashMap::new();
        for node in nodes {
            if let Ok(Some(value)) = self.cluster.nodes.get(&node).await {
                if let Ok(beat) = serde_json::from_slice::<crate::cluster::nodes::Heartbeat>(&value)
                {
                    loads.insert(node, beat.games);
                }
            }
        }
        *self.loads.lock().expect("loads lock") = loads;
    }

    /// Leader side: the connections of nodes whose heartbeat expired leave the lobby.
    async fn drop_dead_nodes(&self) {
        let nodes: HashSet<String> = self.relays.iter().map(|r| r.key().0.clone()).collect();
        for node in nodes {
            let alive = matches!(
                self.cluster.nodes.entry(&node).await,
                Ok(Some(e)) if e.operation == kv::Operation::Put
            );
            if alive {
                continue;
            }
            tracing::warn!(node = %node, "a node's heartbeat expired: its lobby entries go");
            let conns: Vec<u64> = self
                .relays
                .iter()
                .filter(|r| r.key().0 == node)
                .map(|r| r.key().1)
                .collect();
            for conn in conns {
                self.gone(&node, conn);
            }
        }
    }
}

fn value_is_mine(value: &Option<String>, node: &str) -> bool {
    value
        .as_deref()
        .and_then(|v| v.split(' ').next())
        .is_some_and(|n| n == node)
}
