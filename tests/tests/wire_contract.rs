//! The protocol says what the server does (issue 12, section 4): each documented promise
//! of `docs/PROTOCOL.md` checked over real sockets.

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use futures::StreamExt;
use protocol::wire::{ClientMessage, ServerMessage};
use tamsk_tests::*;
use tokio_tungstenite::tungstenite::Message;

/// `sand.neutral.target` names the player the 15-second timer judges, and becomes `null`
/// once it judges nobody (his turn ended), even while its sand still runs.
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
    let judged = flip.sand.neutral.target.expect("the timer judges Black");
    assert_eq!(judged.0, Player::Black);
    black.catch_up_to(red.seq).await;
    // Black moves at once: his turn is over, the sand runs on, and judges nobody.
    black.act(mv("a1", "b1", true)).await;
    let (moved, _) = black
        .until("Black's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    assert_eq!(moved.sand.neutral.target, None, "{:?}", moved.sand.neutral);
    assert!(
        moved.sand.neutral.sand.remaining(moved.now_ms) > 0,
        "the sand still runs"
    );
    let v = serde_json::to_value(&moved.sand).unwrap();
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
        .send_raw(&format!(r#"{{"type":"watch","game":{}}}"#, red.game))
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
    assert_eq!(view["moves_made"]["red"].as_u64().unwrap() + view["moves_made"]["black"].as_u64().unwrap(), 4);
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
