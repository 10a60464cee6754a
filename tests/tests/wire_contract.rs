//! The protocol says what the server does (issue 12, section 4): each documented promise
//! of `docs/PROTOCOL.md` checked over real sockets.

use futures::StreamExt;
use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, SandTable, ServerMessage};
use tamsk_tests::*;
use tokio_tungstenite::tungstenite::Message;

/// `sand.neutral.target` (of a snapshot, and of a replica kept from the events) names the
/// player the 15-second timer judges, and becomes `null` once it judges nobody (his turn
/// ended), even while its sand still runs.
#[tokio::test]
async fn the_neutral_target_is_null_once_it_judges_nobody() {
    let server = TestServer::start().await;
    let settings = Settings {
        neutral_ms: 5_000,
        ..Settings::blitz(Level::Three)
    };
    let (mut red, mut black) = start_game(&server, &settings).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| {
        matches!(
            e,
            Event::TurnStarted {
                player: Player::Black,
                ..
            }
        )
    })
    .await;
    red.act(Action::Flip).await;
    let (flip, _) = red
        .until("flip", |e| matches!(e, Event::NeutralFlipped { .. }))
        .await;
    assert!(
        !serde_json::to_string(&flip).unwrap().contains("glasses"),
        "no sand table"
    );
    let judged = SandTable::of(&red.replica)
        .neutral
        .target
        .expect("the timer judges Black");
    assert_eq!(judged.0, Player::Black);
    black.catch_up_to(red.seq).await;
    // Black moves at once: his turn is over, the sand runs on, and judges nobody.
    black.act(mv("a1", "b1", true)).await;
    let (moved, _) = black
        .until("Black's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    let sand = SandTable::of(&black.replica);
    assert_eq!(sand.neutral.target, None, "{:?}", sand.neutral);
    assert!(
        sand.neutral.sand.remaining(moved.now_ms) > 0,
        "the sand still runs"
    );
    // The server's snapshot says the same.
    let snapshot = black.check_against_snapshot().await;
    let v = serde_json::to_value(&snapshot.sand).unwrap();
    assert!(v["neutral"]["target"].is_null(), "{v}");
}

/// A snapshot shows a documented view of the game, not the engine's insides; its entries
/// rebuild the exact replica, for a watcher mid-game and after the end.
#[tokio::test]
async fn a_snapshot_is_a_documented_view_that_rebuilds_the_replica() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    assert!(red.snapshot.view.entries.is_empty());
    play_random(&mut red, &mut black, 7, 4).await;
    let mut viewer = Client::new_player(&server, "Viv").await;
    viewer
        .send_raw(&format!(r#"{{"type":"watch","game":"{}"}}"#, red.game))
        .await;
    let text = loop {
        match within("snapshot", viewer.ws.next()).await {
            Some(Ok(Message::Text(t))) if t.as_str().contains(r#""type":"snapshot""#) => {
                break t.as_str().to_owned()
            }
            Some(Ok(_)) => continue,
            other => panic!("expected a snapshot, got {other:?}"),
        }
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v.get("state").is_none(), "no engine struct: {v}");
    // Game ids are UUID v7 strings (unique across restarts and nodes, time-ordered).
    let id: protocol::wire::GameId = v["game"].as_str().expect("a string id").parse().unwrap();
    assert_eq!(id.get_version_num(), 7, "{v}");
    let view = &v["view"];
    for field in [
        "settings",
        "at_ms",
        "status",
        "ending",
        "board",
        "holders",
        "glasses",
        "turn",
        "turn_started_ms",
        "held",
        "late",
        "windows",
        "penalty_owed",
        "neutral",
        "clocks",
        "moves_made",
        "entries",
    ] {
        assert!(view.get(field).is_some(), "view.{field} missing: {view}");
    }
    assert_eq!(view["board"].as_array().unwrap().len(), 37);
    assert_eq!(view["board"][0]["square"], "a1");
    assert_eq!(
        view["moves_made"]["red"].as_u64().unwrap() + view["moves_made"]["black"].as_u64().unwrap(),
        4
    );
    let ServerMessage::Snapshot(snap) = serde_json::from_str(&text).unwrap() else {
        unreachable!()
    };
    red.catch_up_to(snap.seq).await;
    let mut players = red.replica.clone();
    players.advance(snap.view.at_ms);
    assert_eq!(snap.view.replica().unwrap(), players);
    // After the end, while the game lingers: the whole record is still there.
    red.act(Action::Resign).await;
    red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let mut late = Client::new_player(&server, "Lou").await;
    late.send(&ClientMessage::Watch {
        game: red.game,
        after_seq: None,
    })
    .await;
    let late = Follower::await_snapshot(late).await;
    assert!(!late.replica.is_playing());
    assert_eq!(late.replica, red.replica);
    let plays = red
        .log
        .iter()
        .filter(|e| matches!(e.change, protocol::wire::Change::Play { .. }))
        .count();
    assert_eq!(late.snapshot.view.entries.len(), plays);
}

/// `abort_ms` and `late_release_ms` are fixed by the rules page: a player naming them is
/// refused (`fixed_setting`); the operator's values (a test server's flag) apply to every
/// game and are stated in the answer.
#[tokio::test]
async fn fixed_settings_are_the_operators_not_the_players() {
    let server = TestServer::start_with(server::Config {
        abort_ms: 1_234,
        late_release_ms: 567,
        ..test_config()
    })
    .await;
    let mut a = Client::new_player(&server, "Ann").await;
    for (tag, extra) in [
        ("seek", ""),
        ("host", ""),
        ("play_bot", ""),
        ("challenge", r#","to":"nobody""#),
    ] {
        for field in ["abort_ms", "late_release_ms"] {
            a.send_raw(&format!(
                r#"{{"type":"{tag}"{extra},"settings":{{"level":3,"{field}":30000}}}}"#
            ))
            .await;
            let msg = a.expect_error("fixed_setting").await;
            assert!(msg.contains(field), "{msg}");
        }
    }
    // A Rust client's settings leave them out, whatever its value says.
    let blitz = Settings::blitz(Level::Three);
    let text = serde_json::to_string(&ClientMessage::Seek {
        settings: blitz.clone(),
        rated: None,
    })
    .unwrap();
    assert!(
        !text.contains("abort_ms") && !text.contains("late_release_ms"),
        "{text}"
    );
    a.send_raw(&text).await;
    match a.recv().await {
        ServerMessage::Seeking { settings } => {
            assert_eq!((settings.abort_ms, settings.late_release_ms), (1_234, 567));
            assert_eq!(settings.hourglass_ms, blitz.hourglass_ms);
        }
        other => panic!("expected seeking, got {other:?}"),
    }
}

/// Out-of-range settings are refused with the range of `protocol::settings::RANGES`.
#[tokio::test]
async fn settings_out_of_range_name_their_range() {
    let server = TestServer::start().await;
    let mut a = Client::new_player(&server, "Ann").await;
    for r in protocol::settings::RANGES.iter().filter(|r| r.player) {
        let json = match r.name.split_once('.') {
            Some((outer, "main_ms")) => {
                format!(r#"{{"{outer}":{{"main_ms":{}}}}}"#, r.max + 1)
            }
            Some((outer, inner)) => format!(
                r#"{{"{outer}":{{"main_ms":60000,"{inner}":{}}}}}"#,
                r.max + 1
            ),
            None => format!(r#"{{"{}":{}}}"#, r.name, r.max + 1),
        };
        a.send_raw(&format!(r#"{{"type":"seek","settings":{json}}}"#))
            .await;
        let msg = a.expect_error("bad_message").await;
        assert!(
            msg.contains(&format!("{}..={}", r.min, r.max)),
            "{}: {msg}",
            r.name
        );
    }
}

/// The next text frame as JSON.
async fn raw(c: &mut Client) -> serde_json::Value {
    loop {
        match within("a frame", c.ws.next()).await {
            Some(Ok(Message::Text(t))) => return serde_json::from_str(t.as_str()).unwrap(),
            Some(Ok(_)) => continue,
            other => panic!("expected a frame, got {other:?}"),
        }
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Any message may carry an `id`: its error echoes it with the receipt instants
/// (`server_ms`, and `at_ms` in game time for a game), and its direct answer echoes it.
#[tokio::test]
async fn answers_echo_the_request_id_and_errors_carry_the_receipt_instant() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    red.act(mv("d1", "d2", true)).await;
    let (ev, _) = red
        .until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    black.catch_up_to(red.seq).await;
    let game = red.game;
    // A refused action in a game: its id, the game, and when it was received.
    let before = unix_ms();
    red.client
        .send_raw(&format!(
            r#"{{"type":"act","id":"mine-1","game":"{game}","action":{{"type":"move","from":"d2","to":"d3","drop":true}}}}"#
        ))
        .await;
    let e = raw(&mut red.client).await;
    let after = unix_ms();
    assert_eq!(e["type"], "error", "{e}");
    assert_eq!(e["code"], "not_your_turn", "{e}");
    assert_eq!(e["id"], "mine-1", "{e}");
    assert_eq!(e["game"], game.to_string(), "{e}");
    let server_ms = e["server_ms"].as_u64().expect("server_ms");
    assert!(before <= server_ms && server_ms <= after, "{e}");
    let at_ms = e["at_ms"].as_u64().expect("at_ms");
    assert!(
        at_ms >= ev.now_ms,
        "received after the move it follows: {e}"
    );
    // Not about a game: the server time only. Integer ids too.
    black.client.send_raw(r#"{"type":"dance","id":42}"#).await;
    let e = raw(&mut black.client).await;
    assert_eq!(
        (e["code"].as_str(), e["id"].as_i64()),
        (Some("unknown_message"), Some(42))
    );
    assert!(e["server_ms"].is_u64() && e.get("at_ms").is_none(), "{e}");
    // A bad id is refused, and not echoed.
    black
        .client
        .send_raw(r#"{"type":"list_games","id":{"a":1}}"#)
        .await;
    let e = raw(&mut black.client).await;
    assert_eq!(e["code"], "bad_id", "{e}");
    assert!(e.get("id").is_none(), "{e}");
    // Direct answers echo it; without an id, nothing is added.
    black
        .client
        .send_raw(r#"{"type":"list_games","id":"g"}"#)
        .await;
    let a = raw(&mut black.client).await;
    assert_eq!(
        (a["type"].as_str(), a["id"].as_str()),
        (Some("games"), Some("g")),
        "{a}"
    );
    black
        .client
        .send_raw(r#"{"id":3,"type":"ping","client_ms":5}"#)
        .await;
    let a = raw(&mut black.client).await;
    assert_eq!(
        (a["type"].as_str(), a["id"].as_i64()),
        (Some("pong"), Some(3)),
        "{a}"
    );
    black
        .client
        .send_raw(r#"{"type":"list_seeks","id":"s"}"#)
        .await;
    let a = raw(&mut black.client).await;
    assert_eq!(
        (a["type"].as_str(), a["id"].as_str()),
        (Some("seeks"), Some("s")),
        "{a}"
    );
    black.client.send_raw(r#"{"type":"list_games"}"#).await;
    let a = raw(&mut black.client).await;
    assert!(a.get("id").is_none(), "{a}");
    // The snapshot answering a watch echoes it; the events after it do not.
    let mut viewer = Client::new_player(&server, "Viv").await;
    viewer
        .send_raw(&format!(r#"{{"type":"watch","game":"{game}","id":"w"}}"#))
        .await;
    let s = raw(&mut viewer).await;
    assert_eq!(
        (s["type"].as_str(), s["id"].as_str()),
        (Some("snapshot"), Some("w"))
    );
    let m = raw(&mut red.client).await;
    assert_eq!(m["type"], "watchers", "{m}");
    assert!(m.get("id").is_none(), "{m}");
    // A refused game command through the game task: claim while the opponent is here.
    red.client
        .send_raw(&format!(
            r#"{{"type":"claim_abandonment","game":"{game}","id":9}}"#
        ))
        .await;
    let e = raw(&mut red.client).await;
    assert_eq!(
        (e["code"].as_str(), e["id"].as_i64()),
        (Some("opponent_connected"), Some(9)),
        "{e}"
    );
    assert!(e["at_ms"].as_u64().unwrap() >= at_ms, "{e}");
}

/// Strict mode: a field that a command does not have is refused with `unknown_field`
/// naming it, and nothing happens.
#[tokio::test]
async fn unknown_fields_are_refused_by_name() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let game = red.game;
    for (text, field) in [
        (
            format!(
                r#"{{"type":"act","game":"{game}","action":{{"type":"move","from":"d1","to":"d2","drop":true,"fast":1}}}}"#
            ),
            "action.fast",
        ),
        (
            format!(
                r#"{{"type":"act","game":"{game}","seat":"black","action":{{"type":"resign"}}}}"#
            ),
            "seat",
        ),
        (
            r#"{"type":"list_games","verbose":true}"#.to_string(),
            "verbose",
        ),
        (
            r#"{"type":"seek","settings":{"level":2,"speed":3}}"#.to_string(),
            "settings.speed",
        ),
    ] {
        red.client.send_raw(&text).await;
        let msg = red.client.expect_error("unknown_field").await;
        assert!(msg.contains(&format!("{field:?}")), "{text}: {msg}");
    }
    // Nothing happened: the same move, without the extra field, is Red's first.
    red.act(mv("d1", "d2", true)).await;
    let (ev, _) = red
        .until("Red's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    assert_eq!(ev.seq, 1);
    black.catch_up_to(red.seq).await;
}
