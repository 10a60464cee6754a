//! Stored games: every finished or aborted game is in the database with its record,
//! served over HTTP, and still there after a restart on the same database. Each test that
//! stores runs on an SQLite file and on a throwaway PostgreSQL (`..._on_postgres`).

use protocol::game::{Action, Event, Player, Status};
use protocol::record::{EntryKind, Record};
use protocol::settings::{Level, Settings};
use protocol::wire::ClientMessage;
use tamsk_tests::services::TestDb;
use tamsk_tests::*;

backend_tests!(
    #[tokio::test]
    a_finished_game_is_stored_before_its_end_is_announced,
    a_finished_game_is_stored_before_its_end_is_announced_on_postgres
        => finished_game_stored_before_announced
);

/// Red moves, Black resigns: the end is on disk by the time anyone hears of it, and both
/// endpoints serve it (text record, JSON) with players, settings, result and reason.
async fn finished_game_stored_before_announced(db: TestDb) {
    let server = TestServer::start_with(db.config()).await;
    let settings = Settings::blitz(Level::Two);
    let (mut red, mut black) = start_game(&server, &settings).await;
    let id = red.game;
    red.act(mv("d1", "d2", true)).await;
    red.next_event().await;
    black.catch_up_to(red.seq).await;
    black.act(Action::Resign).await;
    black
        .until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    // The moment the end is known, the game is in the database.
    assert_eq!(
        db.stored_game_row(id).await,
        Some((
            "finished".to_string(),
            Some("red".to_string()),
            "resigned".to_string()
        ))
    );
    red.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;

    // The text record replays to the same final state as the players' replicas.
    let resp = http_get(server.addr, &format!("/games/{id}"), None).await;
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert!(resp
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let record = Record::parse(&resp.body).expect("a valid record");
    assert_eq!(record.red.as_deref(), Some(red.client.name.as_str()));
    assert_eq!(record.black.as_deref(), Some(black.client.name.as_str()));
    assert_eq!(record.settings, settings);
    let replayed = record.replay().expect("replays");
    assert_eq!(replayed.status(), red.replica.status());
    assert!(
        resp.body.contains(&format!("game: {id}\n")),
        "{}",
        resp.body
    );
    assert!(resp.body.contains("result: Red wins"), "{}", resp.body);

    // JSON: the same, with the record's entries and their instants.
    let resp = http_get(
        server.addr,
        &format!("/games/{id}"),
        Some("application/json"),
    )
    .await;
    assert_eq!(resp.status, 200);
    assert!(resp
        .header("content-type")
        .unwrap()
        .starts_with("application/json"));
    let v = resp.json();
    assert_eq!(v["id"], id.to_string());
    assert_eq!(v["red"]["player_id"], red.client.player_id.as_str());
    assert_eq!(v["black"]["name"], black.client.name.as_str());
    assert_eq!(v["state"], "finished");
    assert_eq!(v["winner"], "red");
    assert_eq!(v["reason"], "resigned");
    assert_eq!(v["level"], 2);
    assert_eq!(v["move_count"], 1);
    let json_record: Record = serde_json::from_value(v["record"].clone()).unwrap();
    assert_eq!(json_record.entries, record.entries);
    let acts: Vec<_> = json_record
        .entries
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::Act { player, action, .. } => Some((player, action, e.at_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(acts.len(), 2);
    assert_eq!(acts[0].0, Player::Red);
    assert_eq!(acts[1].1, Action::Resign);
    assert!(acts[0].2 <= acts[1].2, "instants in order");

    // The list of a player's games, newest first, as text and JSON.
    let name = &red.client.name;
    let resp = http_get(server.addr, &format!("/games?player={name}"), None).await;
    assert_eq!(resp.status, 200);
    let lines: Vec<&str> = resp.body.lines().collect();
    assert_eq!(lines[0].split('\t').next(), Some("id"));
    assert_eq!(lines.len(), 2, "{}", resp.body);
    assert!(lines[1].starts_with(&format!("{id}\t")), "{}", resp.body);
    assert!(lines[1].contains("\tresigned\t"), "{}", resp.body);
    let list = get_json(server.addr, &format!("/games?player={name}")).await;
    assert_eq!(list["games"].as_array().unwrap().len(), 1);
    assert_eq!(list["games"][0]["id"], id.to_string());
    assert!(
        list["games"][0].get("record").is_none(),
        "the list is short"
    );
    // Somebody else has no games.
    let none = get_json(server.addr, "/games?player=Nobody").await;
    assert_eq!(none["games"], serde_json::json!([]));
}

/// Bad requests get a specific answer.
#[tokio::test]
async fn bad_game_requests_are_refused_specifically() {
    let server = TestServer::start().await;
    for (path, status, code) in [
        ("/games/abc", 400, "bad_game_id"),
        ("/games/12345", 400, "bad_game_id"),
        (
            "/games/0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f",
            404,
            "unknown_game",
        ),
        ("/games?limit=0", 400, "bad_limit"),
        ("/games?limit=9999", 400, "bad_limit"),
        ("/games?before=x", 400, "bad_before"),
        ("/games?colour=red", 400, "unknown_parameter"),
        ("/games?player=", 400, "bad_player"),
    ] {
        let resp = http_get(server.addr, path, Some("application/json")).await;
        assert_eq!(resp.status, status, "{path}: {}", resp.body);
        assert_eq!(resp.json()["error"], code, "{path}");
        let resp = http_get(server.addr, path, None).await;
        assert_eq!(resp.status, status, "{path}");
        assert!(resp.body.starts_with(code), "{path}: {}", resp.body);
    }
    // A live game is not stored yet.
    let (red, _black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let resp = http_get(server.addr, &format!("/games/{}", red.game), None).await;
    assert_eq!(resp.status, 404);
    assert!(resp.body.starts_with("game_live"), "{}", resp.body);
}

backend_tests!(
    #[tokio::test]
    games_and_players_survive_a_restart,
    games_and_players_survive_a_restart_on_postgres => survive_a_restart
);

/// After a restart on the same database file: the stored games are served, a game that
/// was live at the stop is stored as aborted (shutdown) with its moves, tokens still
/// work, and new games get new ids.
async fn survive_a_restart(db: TestDb) {
    // Live games are aborted at the stop, not resumed (that is tests/restart.rs).
    let config = server::Config {
        resume_games: false,
        ..db.config()
    };
    let server = TestServer::start_with(config.clone()).await;
    let settings = Settings::blitz(Level::One);
    let (mut red, mut black) = start_game(&server, &settings).await;
    let finished = red.game;
    red.act(Action::Resign).await;
    red.until("end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    black
        .until("end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    let token = red.client.token.clone();
    let player_id = red.client.player_id.clone();
    let name = red.client.name.clone();
    // A second game of the same player, live when the server stops.
    let mut again = red.client;
    again
        .send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    let mut other = Client::new_player(&server, "Dora").await;
    other
        .send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    let again = Follower::await_snapshot(again).await;
    let other = Follower::await_snapshot(other).await;
    let (mut red2, mut black2) = if again.seat() == Player::Red {
        (again, other)
    } else {
        (other, again)
    };
    let live = red2.game;
    assert!(live > finished);
    red2.act(mv("d1", "d2", true)).await;
    red2.next_event().await;
    black2.catch_up_to(red2.seq).await;
    server.stop().await;

    let server = TestServer::start_with(config).await;
    let v = get_json(server.addr, &format!("/games/{finished}")).await;
    assert_eq!(v["state"], "finished");
    assert_eq!(v["reason"], "resigned");
    assert_eq!(v["winner"], "black");
    let v = get_json(server.addr, &format!("/games/{live}")).await;
    assert_eq!(v["state"], "aborted");
    assert_eq!(v["reason"], "shutdown");
    assert_eq!(v["move_count"], 1);
    let record: Record = serde_json::from_value(v["record"].clone()).unwrap();
    let game = record.replay().unwrap();
    assert!(matches!(game.status(), Status::Aborted { .. }));
    assert_eq!(
        game.rings_on(sq("d2")),
        1,
        "the move before the stop is kept"
    );
    // Both of the player's games are listed, newest first.
    let list = get_json(server.addr, &format!("/games?player={name}")).await;
    let ids: Vec<protocol::wire::GameId> = list["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids, [live, finished]);
    // Paging: before the newest.
    let list = get_json(
        server.addr,
        &format!("/games?player={name}&before={live}&limit=5"),
    )
    .await;
    assert_eq!(list["games"].as_array().unwrap().len(), 1);

    // The token still makes the same player.
    let (mut again, games) = Client::returning(&server, &token).await;
    assert_eq!(again.player_id, player_id);
    assert!(games.is_empty());
    // New games continue the numbering.
    again
        .send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated: None,
        })
        .await;
    let _ = again.recv().await;
    let mut other = Client::new_player(&server, "Carol").await;
    other
        .send(&ClientMessage::Seek {
            settings,
            rated: None,
        })
        .await;
    let f = Follower::await_snapshot(other).await;
    assert!(f.game > live, "ids are not reused: {} after {live}", f.game);
    let all = get_json(server.addr, "/games").await;
    assert_eq!(all["games"].as_array().unwrap().len(), 2);
    // Names stay taken across a restart, whatever their case.
    let mut c = Client::connect(&server).await;
    c.send(&ClientMessage::Hello {
        version: protocol::wire::PROTOCOL_VERSION,
        name: Some("DORA".into()),
        token: None,
        guest: false,
    })
    .await;
    c.expect_error("name_taken").await;
}

backend_tests!(
    #[tokio::test]
    a_game_ended_by_repetition_counts_every_move,
    a_game_ended_by_repetition_counts_every_move_on_postgres => repetition_counts_every_move
);

/// A game ended by repetition counts every move, the last one too, in `/games` and
/// `/games/{id}` (reported one short by a referee).
async fn repetition_counts_every_move(db: TestDb) {
    let server = TestServer::start_with(db.config()).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::One)).await;
    let id = red.game;
    let shuffle = [
        (Player::Red, "d1", "d2"),
        (Player::Black, "a1", "b1"),
        (Player::Red, "d2", "d1"),
        (Player::Black, "b1", "a1"),
    ];
    let mut released = 0;
    'game: for round in 0..4 {
        for (p, from, to) in shuffle {
            let (mover, other) = match p {
                Player::Red => (&mut red, &mut black),
                Player::Black => (&mut black, &mut red),
            };
            mover.act(mv(from, to, false)).await;
            // The start that completes the third repetition is not carried out: the game
            // ends just before it (docs/RULES.md decision 11).
            let (ev, e) = mover
                .until("the release or the end", |e| {
                    matches!(e, Event::MoveReleased { .. } | Event::GameEnded { .. })
                })
                .await;
            other.catch_up_to(mover.seq).await;
            if matches!(e, Event::MoveReleased { .. }) {
                released += 1;
            }
            if engine_events(&ev)
                .iter()
                .any(|e| matches!(e, Event::GameEnded { .. }))
            {
                break 'game;
            }
            assert!(round < 3, "the game should have ended by repetition");
        }
    }
    let Some(outcome) = red.replica.outcome().cloned() else {
        panic!("over: {:?}", red.replica.status())
    };
    assert_eq!(outcome.reason, protocol::game::EndReason::Repetition);
    assert_eq!(red.replica.move_count(), released);
    let v = get_json(server.addr, &format!("/games/{id}")).await;
    assert_eq!(v["move_count"], released, "{v}");
    let list = get_json(server.addr, &format!("/games?player={}", red.client.name)).await;
    assert_eq!(list["games"][0]["move_count"], released, "{list}");
}

/// Only a cluster's database is fenced, and a cluster's is PostgreSQL's: a node with
/// `--nats` does not start on an SQLite file, whose journal is not fenced (its batch rows:
/// `server/src/store/sql/batches.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_owners_writes_are_refused_once_the_game_is_fenced_on_postgres() {
    if let Some(db) = TestDb::postgres().await {
        stale_owner_fenced(db).await
    }
}

/// Fencing (issue 18): once a takeover raised a game's epoch, the journal rows and the
/// end of its former owner are refused (and reported once) and change nothing; the new
/// owner's go in.
async fn stale_owner_fenced(db: TestDb) {
    use protocol::record::Entry;
    use server::store::{GameEnd, GameStart, Location, Store, Write};
    let (store, _) = Store::open_at(&Location::of(&db.config()), true)
        .await
        .unwrap();
    let id = protocol::wire::GameId::now_v7();
    let start = GameStart::between(id, "r", "b", Settings::blitz(Level::One), 1);
    let advance = |idx| Entry {
        at_ms: idx,
        kind: EntryKind::Advance,
    };
    let entry = |epoch, idx| Write::Entry {
        game: id,
        epoch,
        idx,
        entry: advance(idx),
    };
    store.submit(Write::GameStarted(start.clone()));
    for idx in 0..3 {
        store.submit(entry(0, idx));
    }
    store.flush().await;
    assert!(store.take_fenced().is_empty(), "the owner's rows go in");
    // What a takeover scan reads: the live games' ids and starts, no journal.
    assert!(store.live_ids().await.unwrap().contains(&(id, 1)));
    assert_eq!(store.fence_game(id).await.unwrap(), Some(1));
    // The former owner writes on, with its epoch 0; the new owner with 1.
    store.submit(entry(0, 3));
    store.submit(entry(1, 3));
    store.submit(entry(0, 4));
    store.flush().await;
    assert!(store.was_fenced(id));
    assert_eq!(store.take_fenced(), vec![id]);
    assert!(store.take_fenced().is_empty(), "taken once");
    let live = store.live_game(id).await.unwrap().expect("still live");
    assert_eq!(live.start.owner_epoch, 1);
    assert_eq!(
        live.entries,
        (0..4).map(advance).collect::<Vec<_>>(),
        "the new owner's row 3, none of the former owner's after the fence"
    );
    // The former owner's end is refused and changes nothing...
    let game = protocol::game::Game::new(start.settings.clone());
    let stale = GameEnd::of(start.clone(), &game, Vec::new(), 5_000, Some("test"));
    let (ack, stored) = tokio::sync::oneshot::channel();
    store.submit(Write::GameEnded(Box::new(stale), Some(ack)));
    assert!(!stored.await.unwrap(), "a stale end is refused");
    assert_eq!(store.take_fenced(), vec![id]);
    assert!(store.live_game(id).await.unwrap().is_some(), "still live");
    assert_eq!(db.stored_game_row(id).await, None);
    // ...the new owner's is stored.
    let fresh = GameStart {
        owner_epoch: 1,
        ..start
    };
    let end = GameEnd::of(fresh, &game, Vec::new(), 5_000, Some("test"));
    let (ack, stored) = tokio::sync::oneshot::channel();
    store.submit(Write::GameEnded(Box::new(end), Some(ack)));
    assert!(stored.await.unwrap());
    assert!(store.take_fenced().is_empty());
    assert!(store.live_game(id).await.unwrap().is_none(), "stored");
    assert!(
        !store
            .live_ids()
            .await
            .unwrap()
            .iter()
            .any(|(g, _)| *g == id),
        "no longer live"
    );
    assert!(db.stored_game_row(id).await.is_some());
    assert_eq!(store.fence_game(id).await.unwrap(), None, "no longer live");
}

backend_tests!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    a_rated_game_moves_the_stored_ratings_once,
    a_rated_game_moves_the_stored_ratings_once_on_postgres
        => rated_once
);

/// A rated game is applied to the stored ratings (from those stored: a player's first
/// game from a fresh rating, his next from where the first left him) and only once, should
/// its end be told again (a game ended again after a takeover).
async fn rated_once(db: TestDb) {
    use protocol::rating::TimeControl;
    use server::glicko::{Rated, RatedGame};
    use server::store::{Location, Store};
    let (store, _) = Store::open_at(&Location::of(&db.config()), true)
        .await
        .unwrap();
    let game = |red: &str, black: &str| RatedGame {
        game: protocol::wire::GameId::now_v7(),
        tc: TimeControl::Rapid,
        players: [red.into(), black.into()],
        score: 1.0,
        at_ms: 1,
    };
    let first = game("ann", "bob");
    let changes = store
        .apply_rated(&first)
        .await
        .unwrap()
        .expect("a database");
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0].before, Rated::default().glicko, "a fresh rating");
    let ann = store
        .ratings_of("ann")
        .await
        .unwrap()
        .get(TimeControl::Rapid);
    assert_eq!(ann, changes[0].after);
    assert_eq!(ann.wins, 1);
    // Told again: nothing changes.
    let again = store
        .apply_rated(&first)
        .await
        .unwrap()
        .expect("a database");
    assert!(again.is_empty(), "{again:?}");
    assert_eq!(
        store
            .ratings_of("ann")
            .await
            .unwrap()
            .get(TimeControl::Rapid),
        ann
    );
    // Ann's next game starts where the first left her.
    let second = store
        .apply_rated(&game("cid", "ann"))
        .await
        .unwrap()
        .expect("a database");
    assert_eq!(second[1].player_id, "ann");
    assert_eq!(second[1].before, ann.glicko);
    let ann = store
        .ratings_of("ann")
        .await
        .unwrap()
        .get(TimeControl::Rapid);
    assert_eq!((ann.wins, ann.losses, ann.games), (1, 1, 2));
}
