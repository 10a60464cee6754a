//! A node's side: its clients' lobby messages sent to the leader, and the frames the
//! leader sends back handed to their sockets.

use super::*;

impl ClusterLobby {
    /// Node side: hands frames the leader sent to this node's connections.
    pub(super) async fn deliver(self: Arc<Self>, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            let p = &msg.payload;
            if p.len() < 9 {
                continue;
            }
            let conn = u64::from_be_bytes(p[..8].try_into().expect("8 bytes"));
            let peer = {
                let Some(mut local) = self.local.get_mut(&conn) else {
                    let game = std::str::from_utf8(&p[9..])
                        .ok()
                        .and_then(|g| g.parse().ok());
                    if let (FRAME_PAIRED, Some(game)) = (p[8], game) {
                        self.cluster.closed_before_seated(game, conn);
                    }
                    continue;
                };
                if p[8] == FRAME_PAIRED {
                    local.seeking = None;
                    local.challenges.clear();
                    continue;
                }
                let local = &mut *local;
                if !track_challenge(&mut local.challenges, &mut local.told_closed, &p[9..]) {
                    continue;
                }
                local.peer.clone()
            };
            // The relay is also the connection's proxy in the leader's games: their
            // frames are ordered with the games' streams like those of any owner.
            if let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(msg.payload.slice(9..)) {
                self.cluster.direct(conn, &peer, text).await;
            }
        }
    }

    /// Node side: the leader, unless it is this node (then the hub serves locally).
    pub fn remote(&self) -> bool {
        !self.leading()
    }

    /// Node side: a local connection said hello.
    pub async fn said_hello(&self, player: &Arc<PlayerRec>, peer: &Peer) {
        self.local
            .insert(peer.conn, Local::new(peer, Some(player.clone())));
        if self.remote() {
            self.ask(peer, Some(player), LobbyOp::Online).await;
        }
    }

    /// Node side: a local connection closed. The leader is told after the connection's
    /// lobby messages still queued (a seek among them would otherwise outlive it there).
    pub fn closed(self: &Arc<Self>, conn: u64) {
        let Some((_, local)) = self.local.remove(&conn) else {
            return;
        };
        if let Some(asks) = &local.asks {
            let gone = queue::Asked {
                op: LobbyOp::Gone,
                peer: local.peer.clone(),
                player: local.player.clone(),
                moved: false,
            };
            if asks.try_send(gone).is_ok() {
                return;
            }
        }
        if let Some(leader) = self.leader_node().filter(|_| self.remote()) {
            let lobby = self.clone();
            tokio::spawn(async move {
                let req = LobbyReq {
                    node: lobby.cluster.node.clone(),
                    conn,
                    player: local.player.map(|p| p.id.clone()),
                    reply: None,
                    op: LobbyOp::Gone,
                };
                let body = serde_json::to_vec(&req).expect("requests serialise");
                let asked = lobby
                    .cluster
                    .client
                    .request(at_subject(&leader), body.into());
                let _ = tokio::time::timeout(ASK_WAIT, asked).await;
            });
        }
    }

    /// Node side: one request to `leader`, and whether its failure is the lobby's lack of
    /// a leader (nobody serves the leader's subject, or it no longer leads).
    async fn request(&self, leader: &str, body: Bytes) -> (Outcome, bool) {
        let asked = self.cluster.client.request(at_subject(leader), body);
        match tokio::time::timeout(ASK_WAIT, asked).await {
            Ok(Ok(msg)) => match serde_json::from_slice(&msg.payload) {
                Ok(Outcome::Unavailable(why)) if why == NOT_LEADING => {
                    (Outcome::Unavailable(why), true)
                }
                Ok(outcome) => (outcome, false),
                Err(e) => (
                    Outcome::Unavailable(format!("bad lobby answer: {e}")),
                    false,
                ),
            },
            Ok(Err(e)) => {
                let election = e.kind() == async_nats::RequestErrorKind::NoResponders;
                (Outcome::Unavailable(e.to_string()), election)
            }
            Err(_) => (
                Outcome::Unavailable("the lobby's node did not answer".into()),
                false,
            ),
        }
    }

    /// Node side: sends a client's lobby message to the leader and waits for what it did
    /// (`Here`: this node leads now, its hub serves the message).
    pub async fn ask(&self, peer: &Peer, player: Option<&Arc<PlayerRec>>, op: LobbyOp) -> Outcome {
        let waiting = match &op {
            LobbyOp::Seek { settings, rated } => Some(Waiting::Seek {
                settings: settings.clone(),
                rated: *rated,
            }),
            LobbyOp::Host { .. } => Some(Waiting::Host),
            _ => None,
        };
        let seeks = waiting.is_some();
        let ends_seek = matches!(
            op,
            LobbyOp::CancelSeek { .. }
                | LobbyOp::AcceptSeek { .. }
                | LobbyOp::JoinCode { .. }
                | LobbyOp::AcceptChallenge { .. }
        );
        // What a client waits for waits for an election too, at most two leases (below):
        // no leader yet, or one that nobody serves any more
        // (its node died) or whose term ended, is looked at again at each turn of the
        // loop. Online and quiet cancels do not wait: a new leader is told who is online
        // anyway, and had no seek of theirs.
        let waits = !matches!(
            op,
            LobbyOp::Online | LobbyOp::Gone | LobbyOp::CancelSeek { quiet: true }
        );
        // Two leases: a dead leader's key outlives its last refresh by a lease, and the
        // next turn of a node's loop elects the next one; the connection's game messages
        // do not wait meanwhile (its lobby messages have a queue of their own, `queue`).
        let until = Instant::now() + 2 * self.cluster.lease;
        let mut turns = self.turns.subscribe();
        let req = LobbyReq {
            node: self.cluster.node.clone(),
            conn: peer.conn,
            player: player.map(|p| p.id.clone()),
            reply: peer.reply.as_deref().cloned(),
            op,
        };
        let body = Bytes::from(serde_json::to_vec(&req).expect("requests serialise"));
        let outcome = loop {
            if waits && self.leading() {
                break Outcome::Here;
            }
            let (outcome, election) = match self.leader_node() {
                None => (
                    Outcome::Unavailable("no node leads the lobby yet".into()),
                    true,
                ),
                Some(leader) => self.request(&leader, body.clone()).await,
            };
            if !(waits && election) {
                break outcome;
            }
            // The next turn (at once if one ended during the request), unless the wait
            // is over.
            if tokio::time::timeout_at(until, turns.changed())
                .await
                .is_err()
            {
                break outcome;
            }
        };
        if let Some(mut l) = self.local.get_mut(&peer.conn) {
            match outcome {
                Outcome::Waiting if seeks => l.seeking = waiting,
                Outcome::Game(_) if ends_seek || seeks => l.seeking = None,
                Outcome::Done if ends_seek => l.seeking = None,
                _ => {}
            }
        }
        outcome
    }
}

/// Keeps `challenges` (a connection's, waiting at the leader) up to date with a frame the
/// leader sent it: `challenge_sent` adds one, `challenge_closed` ends one. Lobby frames
/// are few; the others are told apart without parsing. False: the frame is not to be
/// passed on (a `challenge_closed` of one in `told_closed`: the client knows already).
fn track_challenge(
    challenges: &mut HashSet<ChallengeId>,
    told_closed: &mut HashSet<ChallengeId>,
    frame: &[u8],
) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "type")]
        kind: String,
        challenge: ChallengeId,
    }
    const SENT: &[u8] = b"\"challenge_sent\"";
    const CLOSED: &[u8] = b"\"challenge_closed\"";
    let has = |needle: &[u8]| frame.windows(needle.len()).any(|w| w == needle);
    if frame.len() > 2048 || !(has(SENT) || has(CLOSED)) {
        return true;
    }
    let Ok(head) = serde_json::from_slice::<Head>(frame) else {
        return true;
    };
    match head.kind.as_str() {
        "challenge_sent" if challenges.len() < MAX_TRACKED_CHALLENGES => {
            challenges.insert(head.challenge);
        }
        "challenge_closed" if told_closed.remove(&head.challenge) => return false,
        "challenge_closed" => {
            challenges.remove(&head.challenge);
        }
        _ => {}
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::wire::LobbyMessage;

    #[test]
    fn challenges_are_tracked_from_the_leaders_frames() {
        let id: ChallengeId = 41;
        let sent = serde_json::json!({"type": "challenge_sent", "challenge": id,
            "to": {"player_id": "p", "name": "challenge_sent"}, "settings": {"level": 1},
            "expires_ms": 1});
        let (mut tracked, mut told) = (HashSet::new(), HashSet::new());
        assert!(track_challenge(
            &mut tracked,
            &mut told,
            sent.to_string().as_bytes()
        ));
        assert_eq!(tracked, HashSet::from([id]));
        // Another frame, even one that names a player "challenge_closed", changes nothing.
        let players = serde_json::json!({"type": "players", "players":
            [{"player_id": "q", "name": "challenge_closed"}], "online": 1});
        assert!(track_challenge(
            &mut tracked,
            &mut told,
            players.to_string().as_bytes()
        ));
        assert_eq!(tracked, HashSet::from([id]));
        let closed = crate::codec::encode_lobby(&LobbyMessage::ChallengeClosed {
            challenge: id,
            reason: "declined".into(),
        });
        assert!(track_challenge(&mut tracked, &mut told, closed.as_bytes()));
        assert!(tracked.is_empty());
    }

    /// A challenge the node told its challenger was closed (the leader changed) is not
    /// closed for him a second time by the old leader's own frame; others are passed on.
    #[test]
    fn a_challenge_told_closed_by_the_node_is_not_closed_again_by_the_old_leader() {
        let closed = |challenge: ChallengeId, reason: &str| {
            crate::codec::encode_lobby(&LobbyMessage::ChallengeClosed {
                challenge,
                reason: reason.into(),
            })
        };
        let mut tracked = HashSet::new();
        let mut told = HashSet::from([7, 8]);
        assert!(!track_challenge(
            &mut tracked,
            &mut told,
            closed(7, "gone").as_bytes()
        ));
        assert_eq!(told, HashSet::from([8]));
        // Told once: a second frame for it would be news again (it is not the node's).
        assert!(track_challenge(
            &mut tracked,
            &mut told,
            closed(7, "gone").as_bytes()
        ));
        // One the node did not close (say, a challenge he received) is passed on.
        assert!(track_challenge(
            &mut tracked,
            &mut told,
            closed(9, "declined").as_bytes()
        ));
        assert_eq!(told, HashSet::from([8]));
    }
}
