//! Limits of a public server: frame size, message rate, connections per address, and a
//! client that stops reading. None disturbs the games of others.

use std::time::Duration;

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerFrame, ServerMessage, PROTOCOL_VERSION};
use tamsk_tests::*;
use tokio::time::Instant;

// A crowd of watchers joining one game: the players are never knocked off.
#[path = "limits/crowd.rs"]
mod crowd;
// Slow, idle and too many HTTP clients, and the connections kept for /healthz.
#[path = "limits/http.rs"]
mod http;
// Behind a trusted reverse proxy: per-address limits per client.
#[path = "limits/proxy.rs"]
mod proxy;

fn limited() -> server::Config {
    server::Config {
        max_frame_bytes: 1024,
        hard_max_message_bytes: 8 * 1024,
        rate_per_sec: 5,
        rate_burst: 5,
        max_strikes: 3,
        max_conns_per_ip: 6,
        ..test_config()
    }
}

/// Checks that a game between two others still runs: a move goes through at once.
async fn game_unharmed(red: &mut Follower, black: &mut Follower) {
    let (mover, other) = if red.replica.turn() == Player::Red {
        (red, black)
    } else {
        (black, red)
    };
    let t = Instant::now();
    play_random(mover, other, 9, 1).await;
    assert!(t.elapsed() < Duration::from_millis(500));
}

#[tokio::test]
async fn oversized_frames() {
    let server = TestServer::start_with(limited()).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut c = Client::new_player(&server, "Big").await;
    let big = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(2000));
    c.send_raw(&big).await;
    let msg = c.expect_error("frame_too_large").await;
    assert!(msg.contains("1024"), "{msg}");
    c.sync().await; // still usable
                    // Over the hard limit: an error if it can be sent, and the connection is closed.
    let huge = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(20_000));
    c.send_raw(&huge).await;
    c.expect_error("frame_too_large").await;
    assert_eq!(
        c.closed_with().await,
        Some((1009, "message too big".into()))
    );
    game_unharmed(&mut red, &mut black).await;
}

#[tokio::test]
async fn message_rate_limit() {
    let server = TestServer::start_with(limited()).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut c = Client::new_player(&server, "Flood").await;
    // The hello used one message of the burst of 5: four more pass, the fifth is refused.
    for _ in 0..5 {
        c.send(&ClientMessage::Ping {
            client_ms: None,
            lag_ms: None,
        })
        .await;
    }
    let mut pongs = 0;
    let mut limited = 0;
    for _ in 0..5 {
        match c.recv().await {
            ServerMessage::Pong { .. } => pongs += 1,
            ServerMessage::Error { code, message, .. } if code == "rate_limited" => {
                assert!(message.contains("5 per second"), "{message}");
                limited += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        pongs >= 4 && limited >= 1,
        "{pongs} pongs, {limited} refused"
    );
    // After a pause the connection is usable again.
    tokio::time::sleep(Duration::from_millis(400)).await;
    c.sync().await;
    // Repeated abuse closes the connection with a reason.
    for _ in 0..20 {
        c.send(&ClientMessage::Ping {
            client_ms: None,
            lag_ms: None,
        })
        .await;
    }
    expect_abuse_close(&mut c).await;
    game_unharmed(&mut red, &mut black).await;
}

/// A client that sends a burst far over the limit before it reads anything still learns
/// why it is closed: the server reads and drops its input for a moment after the close
/// frame (before, the socket closed with that input unread, the kernel reset the
/// connection, and the reset threw away the error and the close frame at the client).
#[tokio::test]
async fn a_flood_is_told_abuse_and_closed_not_reset() {
    use tamsk_tests::raw;
    // The rules page's limits: 20 a second, bursts of 40, 10 strikes.
    let server = TestServer::start_with(server::Config {
        rate_per_sec: 20,
        rate_burst: 40,
        max_strikes: 10,
        ..test_config()
    })
    .await;
    // A guest says hello, then sends 300 pings in one write and reads nothing meanwhile.
    let hello = raw::text_frame(br#"{"type":"hello","version":1,"guest":true}"#);
    let mut s = raw::connect_with(server.addr, &hello).await;
    let (_, welcome) = raw::read_first_frame(&mut s).await;
    assert!(String::from_utf8_lossy(&welcome).contains("guest_welcome"));
    let burst: Vec<u8> = (0..300)
        .flat_map(|_| raw::text_frame(br#"{"type":"ping"}"#))
        .collect();
    tokio::io::AsyncWriteExt::write_all(&mut s, &burst)
        .await
        .unwrap();
    // It reads only once the server is done with the connection (the reset, before,
    // came then and took what it had not read yet).
    within("the connection's end", async {
        while metric(server.addr, "tamsk_connections").await > 0.0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    let (frames, code) = within("the close", raw::read_until_close(&mut s, true)).await;
    let errors: Vec<String> = frames
        .iter()
        .filter_map(|(_, p)| serde_json::from_slice::<serde_json::Value>(p).ok())
        .filter(|m| m["type"] == "error")
        .map(|m| m["code"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        errors.last().map(String::as_str),
        Some("abuse"),
        "{errors:?}"
    );
    assert_eq!(code, 1008);
}

/// Reads rate-limit errors and pongs until the `abuse` error, then expects the close.
async fn expect_abuse_close(c: &mut Client) {
    loop {
        match c.recv_or_close().await {
            Ok(ServerFrame::Message(ServerMessage::Error { code, .. })) if code == "abuse" => break,
            Ok(ServerFrame::Message(ServerMessage::Error { code, .. }))
                if code == "rate_limited" => {}
            Ok(ServerFrame::Message(ServerMessage::Pong { .. })) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        c.closed_with().await,
        Some((1008, "too many refused messages".into()))
    );
}

/// Websocket pings and pongs are traffic like any message: a flood of them is refused and
/// closed (before: 30,000 a second were answered).
#[tokio::test]
async fn websocket_pings_count_against_the_rate() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let server = TestServer::start_with(limited()).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut c = Client::new_player(&server, "Pinger").await;
    for _ in 0..20 {
        within("ping", c.ws.feed(Message::Ping(vec![7u8].into())))
            .await
            .unwrap();
    }
    within("flush", c.ws.flush()).await.unwrap();
    expect_abuse_close(&mut c).await;
    game_unharmed(&mut red, &mut black).await;
}

#[tokio::test]
async fn connections_per_address() {
    let server = TestServer::start_with(server::Config {
        max_conns_per_ip: 3,
        ..test_config()
    })
    .await;
    let mut open = Vec::new();
    for i in 0..3 {
        open.push(Client::new_player(&server, &format!("P{i}")).await);
    }
    let mut fourth = Client::connect(&server).await;
    let msg = fourth.expect_error("too_many_connections").await;
    assert!(msg.contains("address"), "{msg}");
    assert_eq!(fourth.closed().await, Some(1008));
    // The others are unaffected.
    for c in &mut open {
        c.sync().await;
    }
    // Once one goes, a new connection is accepted.
    let mut gone = open.pop().unwrap();
    within("close", futures::SinkExt::close(&mut gone.ws))
        .await
        .unwrap();
    gone.closed().await;
    let mut fifth = within("a free slot", async {
        loop {
            let mut c = Client::connect(&server).await;
            c.send(&ClientMessage::Hello {
                version: PROTOCOL_VERSION,
                name: Some("Late".into()),
                token: None,
                guest: false,
            })
            .await;
            match c.recv().await {
                ServerMessage::Welcome { .. } => return c,
                // The server may not have noticed the close yet.
                ServerMessage::Error { code, .. } if code == "too_many_connections" => {
                    tokio::task::yield_now().await
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    })
    .await;
    fifth.sync().await;
}

/// A watcher that never reads is cut off once its queue is full; the game and its
/// players never wait for it.
#[tokio::test]
async fn watcher_that_never_reads_is_cut_off() {
    let server = TestServer::start_with(server::Config {
        outbound_queue: 4,
        watch_backlog: 2,
        socket_send_buffer: Some(4096),
        ws_write_buffer: 1024,
        ..test_config()
    })
    .await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    // A watcher with a small receive buffer, so that the kernel does not soak up much.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = within("tcp", socket.connect(server.addr)).await.unwrap();
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
    let (ws, _) = within(
        "ws",
        tokio_tungstenite::client_async(server.ws_url(), stream),
    )
    .await
    .unwrap();
    let mut sleeper = Client::from_ws(ws);
    sleeper.hello_new("Sleepy").await;
    assert!(matches!(
        sleeper.recv().await,
        ServerMessage::Welcome { .. }
    ));
    sleeper
        .send(&ClientMessage::Watch {
            game: red.game,
            after_seq: None,
        })
        .await;
    // From now on it reads nothing. The players play a whole game, every move answered
    // at once.
    let mut slowest = Duration::ZERO;
    let mut moves = 0;
    while red.replica.is_playing() && moves < 300 {
        let t = Instant::now();
        if play_random(&mut red, &mut black, 100 + moves, 1).await == 0 {
            break;
        }
        slowest = slowest.max(t.elapsed());
        moves += 1;
    }
    if red.replica.is_playing() {
        red.act(Action::Resign).await;
        red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
    assert!(moves > 20);
    assert!(
        slowest < Duration::from_millis(500),
        "slowest move {slowest:?}"
    );
    // The server cut the watcher off: the list shows no watcher.
    red.client.send(&ClientMessage::ListGames).await;
    let games = loop {
        match red.client.recv().await {
            ServerMessage::Games { games } => break games,
            ServerMessage::Watchers { .. } => continue,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(games[0].watchers, 0);
    // What the watcher finds when it reads at last: a part of the stream, why it was
    // dropped, then the close with its reason.
    let mut last_seq = 0;
    let mut told = None;
    let close = loop {
        match sleeper.recv_or_close().await {
            Ok(ServerFrame::Message(ServerMessage::Snapshot(s))) => last_seq = s.seq,
            Ok(ServerFrame::Message(ServerMessage::Event(ev))) => {
                assert!(told.is_none(), "nothing of the game after the drop");
                assert_eq!(ev.seq, last_seq + 1);
                last_seq = ev.seq;
            }
            Ok(ServerFrame::Message(ServerMessage::Error { code, message, .. })) => {
                assert_eq!(code, "fell_behind");
                told = Some(message);
            }
            Ok(_) => {}
            Err(close) => break close,
        }
    };
    assert!(last_seq < red.seq, "cut off at {last_seq} of {}", red.seq);
    let told = told.expect("told why");
    assert!(told.contains("watch again"), "{told}");
    assert_eq!(
        close,
        Some((1008, "too slow: fell behind a watched game".into()))
    );
}

/// Answers to the server's own websocket pings are not the client's traffic: a client
/// that only answers pings, faster than its message rate allows, is never rate-limited.
#[tokio::test]
async fn pongs_to_the_servers_pings_are_not_rate_limited() {
    let config = server::Config {
        ping_interval: Duration::from_millis(20),
        ..limited()
    };
    let server = TestServer::start_with(config).await;
    let mut client = Client::new_player(&server, "Pia").await;
    // 30 round trips take about 0.6 s: six times the 5 messages a second allowed.
    // (An error or a close on the way fails the test.)
    while client.recv_ping().await < 30 {}
}

/// An address's messages are counted over all its connections: a new connection gets no
/// fresh burst (before: each connection had its own).
#[tokio::test]
async fn messages_per_address() {
    let server = TestServer::start_with(server::Config {
        ip_rate_per_sec: 1,
        ip_rate_burst: 6,
        ..test_config()
    })
    .await;
    // The hello takes one, the second connection's hello another.
    let mut first = Client::new_player(&server, "One").await;
    for _ in 0..4 {
        first.sync().await;
    }
    let (mut second, _) = Client::returning(&server, &first.token.clone()).await;
    second
        .send(&ClientMessage::Ping {
            client_ms: None,
            lag_ms: None,
        })
        .await;
    let msg = second.expect_error("rate_limited").await;
    assert!(msg.contains("per address"), "{msg}");
}

/// New connections per address per minute: over the burst, refused with a reason.
#[tokio::test]
async fn connections_per_address_per_minute() {
    let server = TestServer::start_with(server::Config {
        ip_conn_per_min: 1,
        ip_conn_burst: 3,
        ..test_config()
    })
    .await;
    for _ in 0..3 {
        let mut c = Client::connect(&server).await;
        c.sync().await;
    }
    let mut c = Client::connect(&server).await;
    let msg = c.expect_error("connecting_too_fast").await;
    assert_eq!(
        c.closed_with().await,
        Some((1008, msg)),
        "the close gives the reason"
    );
}

/// New players per address per minute; a returning player is not counted.
#[tokio::test]
async fn registrations_per_address() {
    let server = TestServer::start_with(server::Config {
        ip_register_per_min: 1,
        ip_register_burst: 2,
        ..test_config()
    })
    .await;
    let first = Client::new_player(&server, "R1").await;
    Client::new_player(&server, "R2").await;
    let mut c = Client::connect(&server).await;
    c.send(&ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: Some("R3".into()),
        token: None,
        guest: false,
    })
    .await;
    let msg = c.expect_error("registering_too_fast").await;
    assert!(msg.contains("token"), "{msg}");
    Client::returning(&server, &first.token).await;
}

/// This machine's own connections (loopback) are outside every per-address cap and
/// budget unless `--budget-loopback`: the same tight limits as the tests above refuse
/// nothing to a local client (a load test, a health check, a tool).
#[tokio::test]
async fn loopback_is_spared_the_per_address_limits_by_default() {
    let server = TestServer::start_with(server::Config {
        max_conns_per_ip: 3,
        ip_conn_per_min: 1,
        ip_conn_burst: 3,
        ip_register_per_min: 1,
        ip_register_burst: 2,
        ip_rate_per_sec: 1,
        ip_rate_burst: 6,
        budget_loopback: false,
        ..test_config()
    })
    .await;
    // Eight connections at once (over the cap of 3 and the burst of 3), each a new
    // player (over the burst of 2), each asking five times (over 6 for the address).
    let mut open = Vec::new();
    for i in 0..8 {
        let mut c = Client::new_player(&server, &format!("Local{i}")).await;
        for _ in 0..5 {
            c.sync().await;
        }
        open.push(c);
    }
    for c in &mut open {
        c.sync().await;
    }
}

/// Players registered and gone are not kept in memory for ever (before: every hello with
/// a new name stayed); a forgotten player comes back from the database.
#[tokio::test]
async fn the_player_registry_is_bounded() {
    let server = TestServer::start_with(server::Config {
        max_players_cached: 4,
        ..test_config()
    })
    .await;
    let mut first_token = String::new();
    for i in 0..40 {
        let c = Client::new_player(&server, &format!("Passer{i}")).await;
        if i == 0 {
            first_token = c.token.clone();
        }
        c.close().await;
    }
    let cached = metric(server.addr, "tamsk_players_cached").await;
    // The computer and the last few whose connections are still being cleaned up.
    assert!(cached <= 12.0, "{cached} players cached");
    let (mut back, _) = Client::returning(&server, &first_token).await;
    assert_eq!(back.name, "Passer0");
    back.sync().await;
}

/// Player ids are 128-bit UUID v7 (32 hex digits, version 7), not 48 random bits that could
/// collide silently.
#[tokio::test]
async fn player_ids_are_uuid_v7() {
    let server = TestServer::start().await;
    let a = Client::new_player(&server, "Ida").await;
    let b = Client::new_player(&server, "Ida2").await;
    for id in [&a.player_id, &b.player_id] {
        assert_eq!(id.len(), 32, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        assert_eq!(&id[12..13], "7", "version 7: {id}");
    }
    assert_ne!(a.player_id, b.player_id);
}
