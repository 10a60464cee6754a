//! Games the lobby's leader starts for players of other nodes: their events reach them
//! through the stream from the first frame on; a remote seat that leaves is away; a new
//! leader keeps a remote watcher's peer.

use super::*;

/// Every game event the nodes send each other: on the games' streams, and to single
/// connections (on their own subjects or through the lobby leader's relays).
struct Wiretap {
    streams: async_nats::Subscriber,
    conns: async_nats::Subscriber,
    relays: async_nats::Subscriber,
    /// (game, seq) of each event seen on a stream, and sent to a single connection.
    streamed: Vec<(GameId, Seq)>,
    single: Vec<(GameId, Seq)>,
}

impl Wiretap {
    async fn start(nats: &Nats) -> (Wiretap, async_nats::Client) {
        let client = async_nats::connect(nats.url()).await.expect("NATS");
        let sub = |s: &'static str| client.subscribe(s);
        let (streams, conns, relays) = (
            sub("tamsk.game.*.ev").await.expect("subscribe"),
            sub("tamsk.conn.>").await.expect("subscribe"),
            sub("tamsk.lobby.to.>").await.expect("subscribe"),
        );
        client.flush().await.expect("flush");
        let tap = Wiretap {
            streams,
            conns,
            relays,
            streamed: Vec::new(),
            single: Vec::new(),
        };
        (tap, client)
    }

    fn event(frame: &[u8]) -> Option<(GameId, Seq)> {
        match serde_json::from_slice(frame) {
            Ok(ServerMessage::Event(ev)) => Some((ev.game, ev.seq)),
            _ => None,
        }
    }

    /// Takes in everything received so far (within a short quiet time).
    async fn drain(&mut self) {
        loop {
            tokio::select! {
                Some(m) = self.streams.next() => {
                    let nl = m.payload.iter().position(|&b| b == b'\n').expect("seq line");
                    self.streamed.extend(Self::event(&m.payload[nl + 1..]));
                }
                Some(m) = self.conns.next() => self.single.extend(Self::event(&m.payload)),
                // A relay's frame: the connection's id (8 bytes), its kind, the frame.
                Some(m) = self.relays.next() => self.single.extend(Self::event(&m.payload[9..])),
                _ = tokio::time::sleep(Duration::from_millis(300)) => return,
            }
        }
    }

    /// Every event of `game` after `after` up to `to` went once on its stream, in order,
    /// and none to a single connection.
    fn only_streamed(&self, game: GameId, after: Seq, to: Seq) {
        let of = |v: &[(GameId, Seq)]| -> Vec<Seq> {
            v.iter()
                .filter(|(g, s)| *g == game && *s > after && *s <= to)
                .map(|(_, s)| *s)
                .collect()
        };
        let expected: Vec<Seq> = (after + 1..=to).collect();
        assert_eq!(
            of(&self.streamed),
            expected,
            "one message per event, in order"
        );
        assert_eq!(
            of(&self.single),
            Vec::<Seq>::new(),
            "events sent to single connections"
        );
    }
}

/// The players of a game paired by the lobby's leader are on two other nodes: their
/// nodes follow the game's stream from its first frame on (before either player does
/// anything), and the same for its rematch, which the owner starts by itself too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_the_leader_starts_for_remote_players_reach_them_through_the_stream() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let _a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    let c = TestServer::start_with(node_config(&db, &nats, "c")).await;
    let (mut tap, _nats_client) = Wiretap::start(&nats).await;
    let x = Client::new_player(&b, "Xena").await;
    let y = Client::new_player(&c, "Yuri").await;
    let (mut red, mut black) = seek_pair(x, y, &Settings::blitz(Level::One)).await;
    let first = red.game;
    // Each player's node asked the owner to serve it by the stream before it let the
    // player act: after one move each, every event goes on the stream alone.
    assert_eq!(play_random(&mut red, &mut black, 8, 2).await, 2);
    let after = red.seq;
    assert!(play_random(&mut red, &mut black, 9, 12).await >= 8);
    red.act(Action::Resign).await;
    for p in [&mut red, &mut black] {
        p.until("the end", |e| {
            matches!(e, protocol::game::Event::GameEnded { .. })
        })
        .await;
    }
    assert_eq!(red.log, black.log);
    tap.drain().await;
    tap.only_streamed(first, after, red.seq);

    // The rematch: started by the game on node a, for the same two remote players.
    black
        .client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    for p in [&mut red, &mut black] {
        assert!(matches!(
            p.lobby().await,
            LobbyMessage::RematchOffered { .. }
        ));
    }
    red.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    let (x, y) = (
        Follower::await_snapshot(red.client).await,
        Follower::await_snapshot(black.client).await,
    );
    let (mut red, mut black) = if x.seat() == Player::Red {
        (x, y)
    } else {
        (y, x)
    };
    let second = red.game;
    assert_ne!(second, first);
    assert_eq!(play_random(&mut red, &mut black, 10, 2).await, 2);
    let after = red.seq;
    assert!(play_random(&mut red, &mut black, 11, 12).await >= 8);
    let top = red.seq.max(black.seq);
    red.catch_up_to(top).await;
    black.catch_up_to(top).await;
    assert_eq!(red.log, black.log);
    tap.drain().await;
    tap.only_streamed(second, after, top);
}

/// A remote player paired by the leader closes his connection: the owner's game lets go
/// of his relay and marks his seat away, whether his node's word to the lobby or to the
/// game arrives first (the lobby kept the relay only while it sat in no game).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_player_who_leaves_is_away_in_the_game_the_leader_paired() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = leading_server(&db, &nats, "a").await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    let x = Client::new_player(&b, "Xavi").await;
    let x_id = x.player_id.clone();
    let y = Client::new_player(&a, "Yann").await;
    // Once x moved (or saw y's move), its node follows the game by the stream.
    let (mut red, mut black) = seek_pair(x, y, &Settings::blitz(Level::One)).await;
    let away = if red.client.player_id == x_id {
        Player::Red
    } else {
        Player::Black
    };
    assert_eq!(play_random(&mut red, &mut black, 12, 2).await, 2);
    let (x, mut y) = if away == Player::Red {
        (red, black)
    } else {
        (black, red)
    };
    x.client.close().await;
    y.until_change(
        "the leaver away",
        |c| matches!(c, Change::Presence { player, connected: false, .. } if *player == away),
    )
    .await;
}

/// A game started for a connection that closed before the game's first frame reached its
/// node (a pairing that crossed the close): that node tells the game's owner, so the seat
/// is away, instead of present for ever through a relay nobody reads. The start is sent
/// by hand, as the lobby's leader sends it, with a connection node b does not have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_whose_connection_closed_before_its_game_started_is_away() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let a = TestServer::start_with(node_config(&db, &nats, "a")).await;
    let b = TestServer::start_with(node_config(&db, &nats, "b")).await;
    let red = Client::new_player(&a, "Stays").await;
    let black = Client::new_player(&b, "Leaves").await;
    let black_id = black.player_id.clone();
    black.close().await;
    let game = GameId::now_v7();
    let seat = |node: &str, conn: u64, player: &str| server::cluster::lobby::SeatAt {
        node: node.into(),
        conn,
        player: player.into(),
        reply: None,
        lag_ms: None,
    };
    let start = server::cluster::lobby::StartReq {
        game,
        settings: Settings::blitz(Level::One),
        rated: None,
        code: None,
        // Red's connection is not a's either: a's game seats him away from the start.
        seats: [
            seat("a", u64::MAX, &red.player_id),
            seat("b", u64::MAX, &black_id),
        ],
    };
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let answer = client
        .request(
            "tamsk.lobby.start.a",
            serde_json::to_vec(&start).expect("json").into(),
        )
        .await
        .expect("node a answers");
    let answer: Result<(), String> = serde_json::from_slice(&answer.payload).expect("json");
    assert_eq!(answer, Ok(()));
    let mut watcher = watch(&a, game, "Sees").await;
    if watcher.snapshot.black.connected {
        watcher
            .until_change("black away", |c| {
                matches!(
                    c,
                    Change::Presence {
                        player: Player::Black,
                        connected: false,
                        ..
                    }
                )
            })
            .await;
    }
}

/// A node that becomes the lobby's leader while a client of another node already follows
/// one of its games stands for that client by the same peer in its lobby as in the game:
/// when the client leaves, the game lets go of him (before, the lobby put a peer of its own
/// in the client's place, the game's was never told, and he watched on for ever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_leader_keeps_the_peer_a_remote_watcher_has_in_its_game() {
    let Some((nats, db)) = services().await else {
        return;
    };
    let mut a = tamsk_tests::cluster::Node::start(node_config(&db, &nats, "a"));
    Client::new_player_at(a.addr, "Anchor").await;
    // Games at full length, the rules' 30-s abort included: a blitz game whose player
    // never moves ends 3 s after its start (the tests' abort), which a busy machine's
    // failover below could outlast, and an ended game counts no watchers.
    let full = |node| Config {
        abort_ms: Settings::level(Level::One).abort_ms,
        ..node_config(&db, &nats, node)
    };
    let b = tamsk_tests::cluster::Node::start(full("b"));
    let c = tamsk_tests::cluster::Node::start(full("c"));
    // A game with the computer on each of b and c, each watched from the other node.
    let mut players = Vec::new();
    let mut watchers = Vec::new();
    for (here, there, name) in [(b.addr, c.addr, "B"), (c.addr, b.addr, "C")] {
        let mut p = Client::new_player_at(here, &format!("Plays{name}")).await;
        p.send(&ClientMessage::PlayBot {
            settings: Settings::level(Level::One),
            level: None,
            rated: None,
        })
        .await;
        let p = Follower::await_snapshot(p).await;
        let mut w = Client::new_player_at(there, &format!("Watches{name}")).await;
        w.send(&ClientMessage::Watch {
            game: p.game,
            after_seq: None,
        })
        .await;
        watchers.push(Follower::await_snapshot(w).await);
        players.push(p);
    }
    for p in &mut players {
        watched_by(p, 1).await;
    }
    // The leader dies; b or c leads next, and its game has a watcher of the other node.
    a.kill();
    let kv = async_nats::jetstream::new(async_nats::connect(nats.url()).await.expect("NATS"))
        .get_key_value(server::cluster::lobby::LOBBY_BUCKET)
        .await
        .expect("the lobby's bucket");
    let leader = within("a new leader", async {
        loop {
            if let Ok(Some(e)) = kv.entry("leader").await {
                let v = String::from_utf8_lossy(&e.value).into_owned();
                if !v.is_empty() && !v.starts_with("a ") {
                    return v[..1].to_string();
                }
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    let i = if leader == "b" { 0 } else { 1 };
    // A lobby message of the watcher's now comes from the new leader's peer for him (a
    // list would not: lists are answered without one).
    let mut w = watchers.swap_remove(i).client;
    w.send(&ClientMessage::CancelSeek).await;
    within("the refusal", async {
        loop {
            if let Some(ServerFrame::Message(ServerMessage::Error { code, .. })) =
                w.recv_any().await
            {
                assert_eq!(code, "not_seeking");
                return;
            }
        }
    })
    .await;
    w.close().await;
    watched_by(&mut players[i], 0).await;
}

/// The lobby's leader makes a relay again for a remote connection that already left (an
/// online announcement of the new leader's that came after the connection's `Gone`, which
/// its node sends by another way) while the connection still watches one of its games:
/// the new relay keeps the old one's place in that game, whose watcher goes on the
/// `Closed` his node sends next (before, the `Closed` named the new relay, the game knew
/// only the old one, and counted the watcher for ever). Node x, the watcher's, is played
/// by hand (its heartbeat kept up, so that node a does not take it for dead), so that its
/// messages come in that order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_made_again_after_its_connection_left_keeps_its_place_in_the_game() {
    let Some((nats, db)) = services().await else {
        return;
    };
    // A game with the computer on node a, which leads the lobby.
    let a = TestServer::start_with(Config {
        abort_ms: Settings::level(Level::One).abort_ms,
        ..node_config(&db, &nats, "a")
    })
    .await;
    let mut p = Client::new_player(&a, "Plays").await;
    p.send(&ClientMessage::PlayBot {
        settings: Settings::level(Level::One),
        level: None,
        rated: None,
    })
    .await;
    let mut p = Follower::await_snapshot(p).await;
    owned(&nats, p.game).await;
    let watcher = Client::new_player(&a, "Watches").await;
    let player = watcher.player_id.clone();
    watcher.close().await;
    let client = async_nats::connect(nats.url()).await.expect("NATS");
    let nodes = async_nats::jetstream::new(client.clone())
        .get_key_value(server::cluster::NODES_BUCKET)
        .await
        .expect("the nodes' bucket");
    let heartbeat = tokio::spawn(async move {
        loop {
            let _ = nodes.put("x", r#"{"games":0}"#.into()).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let (conn, id) = (7, p.game);
    let game = |op: server::cluster::Op| {
        let cmd = server::cluster::RemoteCmd {
            node: "x".into(),
            conn,
            player: None,
            reply: None,
            op,
            age_us: 0,
        };
        let (client, subject) = (client.clone(), format!("tamsk.game.{id}.cmd"));
        async move {
            let body = serde_json::to_vec(&cmd).expect("json");
            let answer = client
                .request(subject, body.into())
                .await
                .expect("an answer");
            let answer: server::cluster::Answer =
                serde_json::from_slice(&answer.payload).expect("json");
            assert_eq!(answer.error, None);
        }
    };
    let lobby = |op: &str| {
        let req = serde_json::json!({
            "node": "x", "conn": conn, "player": player, "reply": null, "op": op,
        });
        let client = client.clone();
        async move {
            let body = serde_json::to_vec(&req).expect("json");
            let answer = client
                .request("tamsk.lobby.at.a", body.into())
                .await
                .expect("an answer");
            let outcome: serde_json::Value = serde_json::from_slice(&answer.payload).expect("json");
            assert_eq!(outcome, "Done");
        }
    };
    game(server::cluster::Op::Watch {
        after_seq: None,
        code: None,
    })
    .await;
    watched_by(&mut p, 1).await;
    // Announced: the relay is the game's proxy. Gone: the relay is closed, the proxy
    // stays (it still watches). Announced again, late: a relay is made again.
    lobby("Online").await;
    lobby("Gone").await;
    lobby("Online").await;
    game(server::cluster::Op::Closed).await;
    watched_by(&mut p, 0).await;
    heartbeat.abort();
}

/// Waits until a player is told his game has `n` watchers.
async fn watched_by(p: &mut Follower, n: u32) {
    within("the watchers' count", async {
        loop {
            if let ServerMessage::Watchers { count, .. } = p.client.recv().await {
                if count == n {
                    return;
                }
            }
        }
    })
    .await;
}
