//! The pages' HTTP side without a browser: the pages and their files are served from the
//! binary, `/api/lobby` lists live games, seeks and stored games, `/api/games/{id}/replay`
//! replays a stored record with the engine, and bad requests get clear errors.

use protocol::game::{Action, Event};
use protocol::record::Record;
use protocol::settings::{Level, Settings};
use protocol::view::GameView;
use protocol::wire::{ClientMessage, GameId};
use tamsk_tests::{get_json, http_get, play_random, start_game, Client, TestServer};

#[tokio::test]
async fn pages_and_their_files_are_served_from_the_binary() {
    let server = TestServer::start().await;
    for path in ["/", "/tv", "/game/1", "/game/anything-opaque"] {
        let r = http_get(server.addr, path, None).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert!(
            r.body.contains("<script src=\"/static/common.js\">"),
            "{path}"
        );
    }
    let lobby = http_get(server.addr, "/", None).await;
    assert!(lobby.body.contains("id=\"play-form\""));
    let game = http_get(server.addr, "/game/1", None).await;
    assert!(game.body.contains("id=\"board\""));
    for (file, kind) in [
        ("style.css", "text/css"),
        ("game.js", "text/javascript"),
        ("board.js", "text/javascript"),
    ] {
        let r = http_get(server.addr, &format!("/static/{file}"), None).await;
        assert_eq!(r.status, 200, "{file}");
        assert!(r.header("content-type").unwrap().starts_with(kind));
        assert!(r.body.len() > 500, "{file} has its content");
    }
    let missing = http_get(server.addr, "/static/nope.js", None).await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.starts_with("unknown_asset"),
        "{}",
        missing.body
    );
    // A path with nothing at it: a page for a browser (linking to the lobby), JSON for
    // a client that asks for it, a line of text else; 404 each time.
    for path in ["/nonexistent", "/game/", "/games/x/y"] {
        let page = http_get(server.addr, path, Some("text/html,*/*;q=0.8")).await;
        assert_eq!(page.status, 404, "{path}");
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(
            page.body.contains("No such page") && page.body.contains("href=\"/\""),
            "{}",
            page.body
        );
        assert!(page.body.contains(&format!("<code>{path}</code>")));
        let json = http_get(server.addr, path, Some("application/json")).await;
        assert_eq!(json.status, 404, "{path}");
        let v: serde_json::Value = serde_json::from_str(&json.body).expect("JSON");
        assert_eq!(v["error"], "not_found", "{v}");
        let text = http_get(server.addr, path, None).await;
        assert_eq!(text.status, 404, "{path}");
        assert!(text.body.starts_with("not_found: "), "{}", text.body);
    }
    // The routes other clients rely on are still there, as before.
    let games = http_get(server.addr, "/games", None).await;
    assert_eq!(games.status, 200);
    assert!(games.body.starts_with("id\tred\tblack"));
}

#[tokio::test]
async fn the_lobby_api_lists_live_games_seeks_and_recent_games() {
    let server = TestServer::start().await;
    let empty = get_json(server.addr, "/api/lobby").await;
    assert_eq!(empty["games"], serde_json::json!([]));
    assert_eq!(empty["seeks"], serde_json::json!([]));
    assert_eq!(empty["recent"], serde_json::json!([]));

    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let mut seeker = Client::new_player(&server, "Waiting").await;
    seeker
        .send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::Two),
            rated: None,
        })
        .await;
    seeker.recv().await;
    let lobby = get_json(server.addr, "/api/lobby").await;
    let games = lobby["games"].as_array().unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["red"]["name"], red.client.name.as_str());
    assert_eq!(games[0]["black"]["name"], black.client.name.as_str());
    assert_eq!(lobby["seeks"][0]["player"]["name"], "Waiting");
    assert_eq!(lobby["seeks"][0]["settings"]["level"], 2);

    play_random(&mut red, &mut black, 3, 2).await;
    black.act(Action::Resign).await;
    red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let lobby = get_json(server.addr, "/api/lobby").await;
    let recent = lobby["recent"].as_array().unwrap();
    assert_eq!(recent.len(), 1, "{lobby}");
    assert_eq!(recent[0]["winner"], "red");
    assert_eq!(recent[0]["reason"], "resigned");
}

#[tokio::test]
async fn a_replay_is_the_engine_replaying_the_stored_record() {
    let server = TestServer::start().await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    let game = red.game;

    let live = http_get(server.addr, &format!("/api/games/{game}/replay"), None).await;
    assert_eq!(live.status, 404);
    assert_eq!(live.json()["error"], "game_live");

    assert_eq!(
        tamsk_tests::pages::play_fast(&mut red, &mut black, 11, 8).await,
        8
    );
    red.act(Action::Resign).await;
    red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let body = get_json(server.addr, &format!("/api/games/{game}/replay")).await;
    let replay = &body["replay"];
    let frames = replay["frames"].as_array().unwrap();
    // The start, then one frame per entry of the record (and perhaps the close).
    let stored = get_json(server.addr, &format!("/games/{game}")).await;
    let record: Record = serde_json::from_value(stored["record"].clone()).unwrap();
    assert!(frames.len() > record.entries.len(), "{}", frames.len());
    assert!(frames[0]["entry"].is_null());
    assert_eq!(frames[0]["at_ms"], 0);
    for (frame, entry) in frames[1..].iter().zip(&record.entries) {
        assert_eq!(frame["at_ms"], entry.at_ms);
        assert_eq!(frame["entry"], serde_json::to_value(entry).unwrap());
    }
    let mut instants = frames.iter().map(|f| f["at_ms"].as_u64().unwrap());
    let mut prev = instants.next().unwrap();
    for t in instants {
        assert!(t >= prev, "frames in time order");
        prev = t;
    }
    // The last frame is the game `tamsk replay` gives.
    let replayed = GameView::of(&record.replay().unwrap(), &[]);
    let last = &frames.last().unwrap()["view"];
    assert_eq!(
        last["board"],
        serde_json::to_value(&replayed.board).unwrap()
    );
    assert_eq!(
        last["holders"],
        serde_json::to_value(replayed.holders).unwrap()
    );
    assert_eq!(
        last["glasses"],
        serde_json::to_value(&replayed.glasses).unwrap()
    );
    assert_eq!(last["status"]["state"], "finished");
    assert_eq!(replay["end_ms"], frames.last().unwrap()["at_ms"]);
    assert!(
        replay["result"].as_str().unwrap().starts_with("Black wins"),
        "{}",
        replay["result"]
    );
    assert_eq!(body["game"]["red"]["name"], red.client.name.as_str());
}

#[tokio::test]
async fn bad_replay_requests_get_clear_errors() {
    let server = TestServer::start().await;
    let bad = http_get(server.addr, "/api/games/not%20an%20id/replay", None).await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"], "bad_game_id");
    assert!(bad.json()["message"]
        .as_str()
        .unwrap()
        .contains("not a game id"));
    // A well-formed id of no game, whatever the form of game ids.
    let unknown_id = ["987654", "01938a6e-0000-7000-8000-000000000000"]
        .into_iter()
        .find(|s| s.parse::<GameId>().is_ok())
        .expect("one of them is a game id");
    let unknown = http_get(
        server.addr,
        &format!("/api/games/{unknown_id}/replay"),
        None,
    )
    .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"], "unknown_game");
}
