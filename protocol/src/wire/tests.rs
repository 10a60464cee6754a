use super::*;

#[test]
fn messages_are_tagged_json() {
    let m: ClientMessage = serde_json::from_str(
        r#"{"type":"act","game":"0193a3f0-7c1e-7000-8000-000000000003","action":{"type":"start","from":"d1"}}"#,
    )
    .unwrap();
    assert_eq!(
        m,
        ClientMessage::Act {
            game: "0193a3f0-7c1e-7000-8000-000000000003".parse().unwrap(),
            action: Action::Start {
                from: "d1".parse().unwrap()
            },
            seq: None,
        }
    );
    let m: ClientMessage =
        serde_json::from_str(r#"{"type":"seek","settings":{"level":2}}"#).unwrap();
    assert!(
        matches!(m, ClientMessage::Seek { settings, rated: None } if settings.level == Level::Two)
    );
    let e = serde_json::to_value(ServerMessage::error("bad_json", "oops")).unwrap();
    assert_eq!(
        e,
        serde_json::json!({"type":"error","code":"bad_json","message":"oops"})
    );
}

#[test]
fn any_server_frame_reads_as_what_it_is() {
    let lobby = LobbyMessage::RematchOffered {
        game: "0193a3f0-7c1e-7000-8000-000000000004".parse().unwrap(),
        by: Player::Black,
    };
    let text = serde_json::to_string(&lobby).unwrap();
    assert_eq!(
        text,
        r#"{"type":"rematch_offered","game":"0193a3f0-7c1e-7000-8000-000000000004","by":"black"}"#
    );
    assert_eq!(
        serde_json::from_str::<ServerFrame>(&text).unwrap(),
        ServerFrame::Lobby(lobby)
    );
    let text = serde_json::to_string(&ServerMessage::SeekCancelled).unwrap();
    assert_eq!(
        serde_json::from_str::<ServerFrame>(&text).unwrap(),
        ServerFrame::Message(ServerMessage::SeekCancelled)
    );
    assert!(serde_json::from_str::<ServerFrame>(r#"{"type":"nonsense"}"#).is_err());
    let m: ClientMessage =
        serde_json::from_str(r#"{"type":"challenge","to":"Bob","settings":{"level":1}}"#).unwrap();
    assert!(matches!(m, ClientMessage::Challenge { to, .. } if to == "Bob"));
}

#[test]
fn events_and_snapshots_round_trip() {
    let game = Game::new(Settings::blitz(Level::Three));
    let snap = ServerMessage::Snapshot(Box::new(Snapshot {
        game: GameId::nil(),
        seq: 0,
        now_ms: 0,
        seat: Some(Player::Red),
        red: SeatInfo {
            player_id: "r".into(),
            name: "R".into(),
            connected: true,
            grace_until_ms: None,
            lag_ms: Some(12),
            rating: None,
        },
        black: SeatInfo {
            player_id: "b".into(),
            name: "B".into(),
            connected: false,
            grace_until_ms: Some(60_000),
            lag_ms: None,
            rating: None,
        },
        watchers: 0,
        sand: SandTable::of(&game),
        view: GameView::of(&game, &[]),
        rated: false,
        tc: None,
    }));
    let text = serde_json::to_string(&snap).unwrap();
    assert!(text.starts_with(r#"{"type":"snapshot""#), "{text}");
    assert_eq!(serde_json::from_str::<ServerMessage>(&text).unwrap(), snap);
    let ev = ServerMessage::Event(Box::new(GameEvent {
        game: GameId::nil(),
        seq: 7,
        now_ms: 10,
        change: Change::Presence {
            player: Player::Black,
            connected: false,
            grace_until_ms: Some(70),
        },
    }));
    let v = serde_json::to_value(&ev).unwrap();
    assert_eq!(v["type"], "event");
    assert_eq!(v["gone"], serde_json::json!(["black", 70]));
    assert_eq!(v["seq"], 7);
    assert_eq!(serde_json::from_value::<ServerMessage>(v).unwrap(), ev);
}
