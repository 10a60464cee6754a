//! The live games of every node: each node answers for its own on `tamsk.lobby.games`.

use super::*;

impl ClusterLobby {
    /// Answers the other nodes' questions about this node's live games.
    pub(super) async fn answer_games(self: Arc<Self>, mut sub: async_nats::Subscriber) {
        while let Some(msg) = sub.next().await {
            let Some(reply) = msg.reply else { continue };
            let rooms = &self.cluster.rooms;
            let node = self.cluster.node.clone();
            let answer = match std::str::from_utf8(&msg.payload) {
                // Empty: the listed games; else the games of this player id.
                Ok("") => GamesAnswer::Listed(node, rooms.summaries(None, LIST_LIMIT).0),
                Ok(player) => GamesAnswer::Of(node, rooms.games_of(player)),
                Err(_) => continue,
            };
            let body = serde_json::to_vec(&answer).expect("answers serialise");
            let _ = self.cluster.client.publish(reply, body.into()).await;
        }
    }

    /// Counts `node` alive until the next heartbeats read, which did not show it yet (it
    /// just started): lists gathered from every node wait for its answer.
    pub(super) fn saw_node(&self, node: &str) {
        let mut nodes = self.nodes.lock().expect("nodes lock");
        if !nodes.contains(node) {
            nodes.insert(node.to_string());
        }
    }

    /// Asks every live node (this one included) and gathers the answers, until each
    /// node answered or [`GATHER_WAIT`] passed.
    async fn gather(&self, question: String) -> Vec<GamesAnswer> {
        let client = &self.cluster.client;
        let inbox = client.new_inbox();
        let Ok(mut sub) = client.subscribe(inbox.clone()).await else {
            return Vec::new();
        };
        if client
            .publish_with_reply(GAMES_SUBJECT, inbox, question.into())
            .await
            .is_err()
        {
            return Vec::new();
        }
        // Each node known alive answers once; one that joined since the last heartbeat
        // read is missed (it has hardly any game yet).
        let mut waiting = self.nodes.lock().expect("nodes lock").clone();
        waiting.insert(self.cluster.node.clone());
        let mut answers = Vec::new();
        let deadline = Instant::now() + GATHER_WAIT;
        while !waiting.is_empty() {
            match tokio::time::timeout_at(deadline, sub.next()).await {
                Ok(Some(msg)) => {
                    if let Ok(a) = serde_json::from_slice::<GamesAnswer>(&msg.payload) {
                        let (GamesAnswer::Listed(node, _) | GamesAnswer::Of(node, _)) = &a;
                        waiting.remove(node);
                        // A node that answered is alive: the next list waits for it.
                        self.saw_node(node);
                        answers.push(a);
                    }
                }
                _ => break,
            }
        }
        answers
    }

    /// The live games listed to clients, on every node: by id, at most [`LIST_LIMIT`].
    pub async fn summaries(&self) -> Vec<GameSummary> {
        let mut all: Vec<GameSummary> = Vec::new();
        for a in self.gather(String::new()).await {
            if let GamesAnswer::Listed(_, list) = a {
                all.extend(list);
            }
        }
        if all.is_empty() {
            return self.cluster.rooms.summaries(None, LIST_LIMIT).0;
        }
        all.sort_by_key(|g| g.game);
        all.dedup_by_key(|g| g.game);
        all.truncate(LIST_LIMIT);
        all
    }

    /// The live games of a player, on every node, by id.
    pub async fn games_of(&self, player_id: &str) -> Vec<GameId> {
        let mut all = self.cluster.rooms.games_of(player_id);
        for a in self.gather(player_id.to_string()).await {
            if let GamesAnswer::Of(_, ids) = a {
                all.extend(ids);
            }
        }
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// A node's answer (its id first).
#[derive(Serialize, Deserialize)]
enum GamesAnswer {
    Listed(String, Vec<GameSummary>),
    Of(String, Vec<GameId>),
}
