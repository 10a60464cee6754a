//! [`Follower`]: a client following one game (as a player or a watcher) with an exact
//! replica built from the snapshot and the entries of the events, checked at every event.

use super::*;

/// A client following one game (as a player or a watcher), with an exact replica built
/// from the snapshot and the entries of the events.
pub struct Follower {
    pub client: Client,
    pub game: GameId,
    pub seat: Option<Player>,
    pub replica: Game,
    pub seq: Seq,
    /// Every numbered event received, in order, as the client understands it: a `play`
    /// with every engine event its entry caused (the implied ones, which the frame leaves
    /// out, given again by the replica; `complete`).
    pub log: Vec<GameEvent>,
    /// The game's entries so far: the snapshot's, then those of the `play` events.
    pub entries: Vec<Entry>,
    pub snapshot: Snapshot,
}

impl Follower {
    pub fn from_snapshot(client: Client, snapshot: Snapshot) -> Follower {
        Follower {
            client,
            game: snapshot.game,
            seat: snapshot.seat,
            replica: snapshot
                .view
                .replica()
                .expect("the snapshot's entries replay"),
            seq: snapshot.seq,
            log: Vec::new(),
            entries: snapshot.view.entries.clone(),
            snapshot,
        }
    }

    /// Watches `game` and follows it from its snapshot.
    pub async fn watch(mut client: Client, game: GameId) -> Follower {
        client
            .send(&ClientMessage::Watch {
                game,
                after_seq: None,
            })
            .await;
        Follower::await_snapshot(client).await
    }

    /// Waits for a snapshot (skipping other messages) and follows its game.
    pub async fn await_snapshot(mut client: Client) -> Follower {
        loop {
            match client.recv().await {
                ServerMessage::Snapshot(s) => return Follower::from_snapshot(client, *s),
                ServerMessage::Seeking { .. } | ServerMessage::Watchers { .. } => continue,
                other => panic!("expected a snapshot, got {other:?}"),
            }
        }
    }

    pub fn seat(&self) -> Player {
        self.seat.expect("a player")
    }

    pub async fn act(&mut self, action: Action) {
        let game = self.game;
        self.client
            .send(&ClientMessage::Act {
                game,
                action,
                seq: None,
            })
            .await;
    }

    /// The next numbered event. Checks that seq has no gap and that the entry replayed on
    /// the replica gives exactly the events the server sent (events carry no sand table:
    /// [`Follower::check_against_snapshot`] compares the whole replica with the server's).
    pub async fn next_event(&mut self) -> GameEvent {
        loop {
            match self.client.recv().await {
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                    return self.log.last().expect("logged").clone();
                }
                ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => continue,
                // On several nodes the lobby's answer to the seek that paired this game can
                // come after the game's first frames; a seated client ignores it
                // (docs/PROTOCOL.md, `seeking`).
                ServerMessage::Seeking { .. } => continue,
                other => panic!("expected an event, got {other:?}"),
            }
        }
    }

    /// Applies a received event to the replica, with the checks of [`Follower::next_event`];
    /// logs it (a `play` with all its engine events).
    pub fn check(&mut self, ev: &GameEvent) {
        assert_eq!(ev.game, self.game);
        assert_eq!(ev.seq, self.seq + 1, "events are numbered without gaps");
        self.seq = ev.seq;
        let mut ev = ev.clone();
        if let Some(entry) = ev.entry() {
            // What a client without an engine has: the documented view just before the
            // entry (after what time brought first).
            let mut ahead = self.replica.clone();
            ahead.advance(entry.at_ms.saturating_sub(1));
            let view = GameView::of(&ahead, &[]);
            let all = ev.apply_to(&mut self.replica).unwrap_or_else(|e| {
                panic!("replica and server agree on the entry and its events: {e}: {ev:?}")
            });
            // An engine-less client derives the implied events from that view and puts
            // them where they go: it gets every event the engine gave.
            let (kept, complete) = match &ev.change {
                Change::Play {
                    events, complete, ..
                } => (events.as_slice(), *complete),
                _ => (&[][..], false),
            };
            assert_eq!(
                delta::expand(&entry, kept, complete, delta::implied(&view, &entry)),
                all,
                "the events derived from the frame and the view are the engine's: {ev:?}"
            );
            self.entries.push(entry);
            if let Change::Play {
                events, complete, ..
            } = &mut ev.change
            {
                *events = all;
                *complete = true;
            }
        }
        self.log.push(ev);
    }

    /// Asks the server for a fresh snapshot of the game (`join` for a player, `watch` for
    /// a watcher, with no seq) and checks that the replica built from the events alone is
    /// exact: at the snapshot's seq and instant, its view (board, sand of every hourglass
    /// and of the timer, clocks, windows, entries) and its sand table are the server's.
    /// The events on the way are taken in as usual; the follower goes on from there.
    /// Returns the snapshot.
    pub async fn check_against_snapshot(&mut self) -> Snapshot {
        let (game, after_seq) = (self.game, None);
        self.client
            .send(&match self.seat {
                Some(_) => ClientMessage::Join { game, after_seq },
                None => ClientMessage::Watch { game, after_seq },
            })
            .await;
        let snapshot = loop {
            match within("snapshot", self.client.recv()).await {
                ServerMessage::Snapshot(s) => break *s,
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                }
                ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => continue,
                other => panic!("expected a snapshot, got {other:?}"),
            }
        };
        assert_eq!(
            snapshot.seq, self.seq,
            "the snapshot follows the events received"
        );
        let mut at_snapshot = self.replica.clone();
        if at_snapshot.now() < snapshot.view.at_ms {
            let events = at_snapshot.advance(snapshot.view.at_ms);
            assert!(
                events.is_empty(),
                "the server announced all that was due: {events:?}"
            );
        }
        assert_eq!(
            GameView::of(&at_snapshot, &self.entries),
            snapshot.view,
            "the replica is the server's game"
        );
        assert_eq!(SandTable::of(&at_snapshot), snapshot.sand, "sand table");
        snapshot
    }

    /// The next error message; events on the way are taken in (and checked) as usual.
    pub async fn expect_error(&mut self, code: &str) -> String {
        loop {
            match self.client.recv().await {
                ServerMessage::Error {
                    code: c, message, ..
                } if c == code => return message,
                ServerMessage::Watchers { .. } => continue,
                ServerMessage::Event(ev) => {
                    self.check(&ev);
                }
                other => panic!("expected error {code}, got {other:?}"),
            }
        }
    }

    /// Reads events until an engine event matches; returns it with its message.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Event) -> bool) -> (GameEvent, Event) {
        loop {
            let ev = within(what, self.next_event()).await;
            if let Change::Play { events, .. } = &ev.change {
                if let Some(e) = events.iter().find(|e| pred(e)) {
                    let e = e.clone();
                    return (ev, e);
                }
            }
        }
    }

    /// Reads events until a change matches.
    pub async fn until_change(&mut self, what: &str, pred: impl Fn(&Change) -> bool) -> GameEvent {
        loop {
            let ev = within(what, self.next_event()).await;
            if pred(&ev.change) {
                return ev;
            }
        }
    }

    /// Reads events until `player` is told connected (or away, `connected` false).
    pub async fn until_presence(
        &mut self,
        what: &str,
        player: Player,
        connected: bool,
    ) -> GameEvent {
        self.until_change(what, |c| {
            matches!(c, Change::Presence { player: p, connected: k, .. } if *p == player && *k == connected)
        })
        .await
    }

    /// Reads events until the one of `player`'s `action` (its `play` entry). The next
    /// event after an action need not be its own: another still unread (the opponent's
    /// presence after he rejoined, say) may come first, and a player who took that for
    /// his move and acted again was refused `not_your_turn` (the refusal once seen after
    /// a takeover, docs/OPERATIONS.md).
    pub async fn until_own(&mut self, player: Player, action: Action) -> GameEvent {
        let mine = |c: &Change| {
            matches!(c, Change::Play { entry, .. }
                if matches!(entry.kind, protocol::record::EntryKind::Act { player: p, action: a, .. }
                    if p == player && a == action))
        };
        self.until_change("the event of one's own action", mine)
            .await
    }

    /// Reads events until the replica has caught up with `other`'s seq.
    pub async fn catch_up_to(&mut self, seq: Seq) {
        while self.seq < seq {
            self.next_event().await;
        }
    }
}

impl Follower {
    /// The next lobby message; game events on the way are taken in (and checked).
    pub async fn lobby(&mut self) -> LobbyMessage {
        if let Some(m) = self.client.lobby.pop_front() {
            return m;
        }
        loop {
            match self.client.recv_any().await {
                Some(ServerFrame::Lobby(m)) => return m,
                Some(ServerFrame::Message(ServerMessage::Event(ev))) => {
                    self.check(&ev);
                }
                Some(ServerFrame::Message(
                    ServerMessage::Watchers { .. } | ServerMessage::Lag { .. },
                )) => {}
                Some(ServerFrame::Message(ServerMessage::Ping { nonce, .. })) => {
                    self.client.send(&ClientMessage::Pong { nonce }).await;
                }
                Some(ServerFrame::Message(other)) => {
                    panic!("expected a lobby message, got {other:?}")
                }
                None => panic!("connection closed while waiting for a lobby message"),
            }
        }
    }
}
