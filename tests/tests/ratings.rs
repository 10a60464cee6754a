//! Ratings end to end: rated games move both players' ratings (visible in snapshots, the
//! game list and the HTTP API); casual games and games that count for nothing do not.

use protocol::game::{Action, Event, Player};
use protocol::rating::ShownRating;
use protocol::rating::TimeControl;
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerFrame, ServerMessage};
use tamsk_tests::*;

/// Two new players seek `settings` (rated as asked); returns them as `(red, black)`.
async fn pair(
    server: &TestServer,
    names: [&str; 2],
    settings: &Settings,
    rated: Option<bool>,
) -> (Follower, Follower) {
    let mut a = Client::new_player(server, names[0]).await;
    let mut b = Client::new_player(server, names[1]).await;
    for c in [&mut a, &mut b] {
        c.send(&ClientMessage::Seek {
            settings: settings.clone(),
            rated,
        })
        .await;
    }
    let a = Follower::await_snapshot(a).await;
    let b = Follower::await_snapshot(b).await;
    if a.seat() == Player::Red {
        (a, b)
    } else {
        (b, a)
    }
}

/// `loser` resigns; both see the end.
async fn resign(loser: &mut Follower, winner: &mut Follower) {
    loser.act(Action::Resign).await;
    for f in [loser, winner] {
        f.until("the end", |e| matches!(e, Event::GameEnded { .. }))
            .await;
    }
}

/// The `rating_changed` the player is told once his rating change is stored (skipping
/// what is left of the game): `(before, after)`.
async fn rating_changed(c: &mut Client) -> (ShownRating, ShownRating) {
    loop {
        match c.recv_any().await {
            Some(ServerFrame::Lobby(LobbyMessage::RatingChanged { before, after, .. })) => {
                return (before, after)
            }
            Some(_) => continue,
            None => panic!("closed before the rating change"),
        }
    }
}

async fn profile(server: &TestServer, name: &str) -> serde_json::Value {
    get_json(server.addr, &format!("/api/players/{name}")).await
}

backend_tests!(
    #[tokio::test]
    a_rated_game_moves_both_ratings_and_shows_them_everywhere,
    a_rated_game_moves_both_ratings_and_shows_them_everywhere_on_postgres => rated_game
);

async fn rated_game(db: tamsk_tests::services::TestDb) {
    let server = TestServer::start_with(db.config()).await;
    let settings = TimeControl::Blitz.settings(Level::Three);
    let (mut red, mut black) = pair(&server, ["Rita", "Bert"], &settings, None).await;
    // Rated by default for a named control; both start at 1500 provisional.
    assert!(red.snapshot.rated);
    assert_eq!(red.snapshot.tc, Some(TimeControl::Blitz));
    let r = red.snapshot.red.rating.expect("a rating beside the name");
    assert_eq!((r.rating, r.deviation, r.provisional), (1500, 500, true));
    // The game list shows it too.
    red.client.send(&ClientMessage::ListGames).await;
    let ServerMessage::Games { games } = red.client.recv().await else {
        panic!("expected games")
    };
    let g = games.iter().find(|g| g.game == red.game).expect("listed");
    assert!(g.rated);
    assert_eq!(g.red.rating.map(|r| r.rating), Some(1500));
    resign(&mut black, &mut red).await;
    let winner_name = &red.snapshot.red.name;
    let loser_name = &red.snapshot.black.name;
    // Each is told, once it is stored.
    let (before, after) = rating_changed(&mut red.client).await;
    assert_eq!(before.rating, 1500);
    assert!(after.rating > 1600 && after.provisional);
    let (_, lost) = rating_changed(&mut black.client).await;
    assert!(lost.rating < 1400);

    let winner = profile(&server, winner_name).await;
    let loser = profile(&server, loser_name).await;
    let w = &winner["ratings"][0];
    let l = &loser["ratings"][0];
    assert_eq!(w["tc"], "blitz");
    assert_eq!(
        (w["games"].as_u64(), w["wins"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        (l["games"].as_u64(), l["losses"].as_u64()),
        (Some(1), Some(1))
    );
    let (wr, lr) = (w["rating"].as_i64().unwrap(), l["rating"].as_i64().unwrap());
    // Glicko-2 from 1500/500/0.09 on both sides, τ 0.75: +-242 (skillratings).
    assert!(
        wr > 1600 && lr < 1400 && wr - 1500 == 1500 - lr,
        "{wr} {lr}"
    );
    assert_eq!((wr, lr), (after.rating as i64, lost.rating as i64));
    assert_eq!(w["provisional"], true);
    let h = &winner["history"][0];
    assert_eq!(h["opponent"], loser_name.as_str());
    assert_eq!(
        (h["before"].as_i64(), h["after"].as_i64()),
        (Some(1500), Some(wr))
    );
    assert_eq!(h["score"], 1.0);

    let board = get_json(server.addr, "/api/leaderboard?tc=blitz").await;
    let rows = board["players"].as_array().unwrap();
    assert_eq!(rows[0]["name"], winner_name.as_str());
    assert_eq!(rows[0]["rank"], 1);
    assert_eq!(rows[1]["name"], loser_name.as_str());
    // No other control moved.
    let standard = get_json(server.addr, "/api/leaderboard?tc=standard").await;
    assert_eq!(standard["players"], serde_json::json!([]));

    // The next game shows the new ratings beside the names.
    red.client
        .send(&ClientMessage::Rematch { game: red.game })
        .await;
    black
        .client
        .send(&ClientMessage::Rematch { game: black.game })
        .await;
    let next = loop {
        if let ServerMessage::Snapshot(s) = red.client.recv().await {
            break s;
        }
    };
    assert!(next.rated, "a rematch of a rated game is rated");
    let seats = [&next.red, &next.black];
    let mine = seats.iter().find(|s| &s.name == winner_name).unwrap();
    assert_eq!(mine.rating.map(|r| r.rating as i64), Some(wr));
    server.stop().await;
}

#[tokio::test]
async fn casual_and_unnamed_games_change_nothing() {
    let server = TestServer::start().await;
    // Asked casual.
    let named = TimeControl::Standard.settings(Level::Two);
    let (mut red, mut black) = pair(&server, ["Cas", "Ual"], &named, Some(false)).await;
    assert!(!red.snapshot.rated);
    resign(&mut red, &mut black).await;
    // Asked rated, but the test speeds are no named control: casual only.
    let (mut red2, mut black2) = pair(
        &server,
        ["Fast", "Er"],
        &Settings::blitz(Level::Three),
        Some(true),
    )
    .await;
    assert!(!red2.snapshot.rated);
    assert_eq!(red2.snapshot.tc, None);
    assert_eq!(red2.snapshot.red.rating, None);
    resign(&mut red2, &mut black2).await;
    // A rated game after them, so that the ratings task has certainly handled the two.
    let (mut red3, mut black3) = pair(&server, ["Late", "Comer"], &named, None).await;
    assert!(red3.snapshot.rated);
    resign(&mut red3, &mut black3).await;
    // Told after the games before it were handled (one task, in order).
    rating_changed(&mut red3.client).await;
    for name in ["Cas", "Ual", "Fast", "Er"] {
        let p = get_json(server.addr, &format!("/api/players/{name}")).await;
        assert_eq!(p["ratings"], serde_json::json!([]), "{name}: {p}");
        assert_eq!(p["history"], serde_json::json!([]), "{name}");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_bot_is_rated_like_anyone() {
    let server = TestServer::start().await;
    let mut me = Client::new_player(&server, "Botbeater").await;
    me.send(&ClientMessage::PlayBot {
        settings: TimeControl::Rapid.settings(Level::Three),
        level: None,
        rated: None,
    })
    .await;
    let mut f = Follower::await_snapshot(me).await;
    assert!(f.snapshot.rated);
    f.act(Action::Resign).await;
    f.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    rating_changed(&mut f.client).await;
    let bot = profile(&server, "TAMSK%20bot").await;
    assert_eq!(bot["bot"], true);
    assert_eq!(bot["ratings"][0]["tc"], "rapid");
    assert_eq!(bot["ratings"][0]["wins"], 1);
    server.stop().await;
}

#[tokio::test]
async fn the_api_refuses_bad_input_clearly() {
    let server = TestServer::start().await;
    let r = http_get(server.addr, "/api/leaderboard?tc=bullet", None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "bad_tc");
    let r = http_get(server.addr, "/api/leaderboard?limit=3", None).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "unknown_parameter");
    // The names as documented, in lower case, as the websocket takes them (`Blitz` was
    // accepted over HTTP and refused by `tournament_create`).
    for tc in ["Blitz", "BLITZ", "%20blitz", ""] {
        let r = http_get(server.addr, &format!("/api/leaderboard?tc={tc}"), None).await;
        assert_eq!(r.status, 400, "{tc}");
        assert_eq!(r.json()["error"], "bad_tc", "{tc}");
    }
    let board = get_json(server.addr, "/api/leaderboard?tc=blitz").await;
    assert_eq!(board["tc"], "blitz");
    let r = http_get(server.addr, "/api/players/Nobody", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "unknown_player");
    // A segment that does not decode is refused as JSON too (it was the router's text).
    for path in [
        "/api/players/%ff",
        "/api/tournaments/%ff",
        "/api/games/%ff/replay",
    ] {
        let r = http_get(server.addr, path, None).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.json()["error"], "bad_path", "{path}: {}", r.body);
    }
    // The default control is standard.
    let board = get_json(server.addr, "/api/leaderboard").await;
    assert_eq!(board["tc"], "standard");
    server.stop().await;
}

/// The next `seeking` or `snapshot` (skipping what is left of a game over).
async fn seeking_or_snapshot(c: &mut Client) -> ServerMessage {
    loop {
        match c.recv().await {
            m @ (ServerMessage::Seeking { .. } | ServerMessage::Snapshot(_)) => return m,
            _ => continue,
        }
    }
}

#[tokio::test]
async fn rated_quick_match_pairs_once_the_range_has_widened() {
    // A narrow range that widens fast, so that the test takes about a second.
    let config = server::Config {
        match_range: server::matching::Range {
            start: 100.0,
            growth_per_sec: 400.0,
            max: 700.0,
        },
        ..test_config()
    };
    let server = TestServer::start_with(config).await;
    let settings = TimeControl::Blitz.settings(Level::Three);
    let (mut red, mut black) = pair(&server, ["Hi", "Lo"], &settings, None).await;
    resign(&mut black, &mut red).await;
    // The ratings are some 480 points apart now.
    let mut hi = red.client;
    let mut lo = black.client;
    rating_changed(&mut hi).await;
    rating_changed(&mut lo).await;
    hi.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    assert!(matches!(
        seeking_or_snapshot(&mut hi).await,
        ServerMessage::Seeking { .. }
    ));
    let asked = tokio::time::Instant::now();
    lo.send(&ClientMessage::Seek {
        settings: settings.clone(),
        rated: None,
    })
    .await;
    // Out of range: both wait...
    assert!(matches!(
        seeking_or_snapshot(&mut lo).await,
        ServerMessage::Seeking { .. }
    ));
    // ...until the older seek's range reaches the gap (about 1 s) and a sweep pairs them.
    for c in [&mut hi, &mut lo] {
        let ServerMessage::Snapshot(s) = seeking_or_snapshot(c).await else {
            panic!("paired")
        };
        assert!(s.rated);
    }
    assert!(asked.elapsed() >= std::time::Duration::from_millis(800));
    // A casual seek is not held back by the range: it pairs at once.
    for c in [&mut hi, &mut lo] {
        c.send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::Three),
            rated: Some(false),
        })
        .await;
    }
    assert!(matches!(
        seeking_or_snapshot(&mut lo).await,
        ServerMessage::Snapshot(_)
    ));
    server.stop().await;
}

/// docs/API.md's example of a first rated game (D7): a first win from 1500 (deviation
/// 500, volatility 0.09) against 1500 (500) with τ 0.75 is what the server's Glicko-2
/// gives (it showed 1662 / 290, which these parameters cannot give), and its game ids are
/// game ids (UUIDs).
#[test]
fn the_api_doc_shows_a_first_win_as_the_server_rates_it() {
    let new = server::glicko::Rated::default();
    let (winner, loser) = server::glicko::update(&new, &new, 1.0);
    let (w, l) = (winner.shown(), loser.shown());
    assert_eq!((w.rating, w.deviation, w.provisional), (1742, 397, true));
    assert_eq!((l.rating, l.deviation), (1258, 397));
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/API.md"))
        .expect("docs/API.md");
    let shown = format!(
        r#"{{"rating": {}, "deviation": {}, "provisional": true}}"#,
        w.rating, w.deviation
    );
    assert!(doc.contains(&shown), "API.md shows a rating as {shown}");
    let history = format!(
        r#""before": 1500, "after": {}, "deviation": {}"#,
        w.rating, w.deviation
    );
    assert!(doc.contains(&history), "API.md's history: {history}");
    assert!(!doc.contains("1662"), "no other first-win figure");
    let ids: Vec<&str> = doc
        .split(r#""game": ""#)
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    assert!(ids.len() >= 2, "{ids:?}");
    for id in ids {
        assert!(id.parse::<protocol::wire::GameId>().is_ok(), "{id:?}");
    }
}
