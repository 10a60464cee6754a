//! The tournament commands and their refusals (docs/PROTOCOL.md, "Tournaments"), in the
//! JSON the docs show: `tournament_create` with partial settings, the limit of a
//! creator's own tournaments, `tournament_cancel`, a withdrawal being final, and the
//! HTTP API's refusals of paths and parameters it does not have.

use super::*;

/// A tournament of 3 rounds at blitz starting in 10 minutes (never within a test).
const LATER: &str = r#"{"type":"tournament_create","rounds":3,"tc":"blitz","starts_in_ms":600000}"#;

fn cancel(id: &str) -> String {
    format!(r#"{{"type":"tournament_cancel","tournament":"{id}"}}"#)
}

fn join(id: &str) -> String {
    format!(r#"{{"type":"tournament_join","tournament":"{id}"}}"#)
}

/// The id of the tournament just created by `c` (its next lobby message).
async fn created(c: &mut Client) -> String {
    match c.recv_lobby().await {
        LobbyMessage::TournamentCreated { tournament, .. } => tournament,
        other => panic!("expected tournament_created, got {other:?}"),
    }
}

async fn joined(c: &mut Client) {
    match c.recv_lobby().await {
        LobbyMessage::TournamentJoined { .. } => {}
        other => panic!("expected tournament_joined, got {other:?}"),
    }
}

/// `c`'s next lobby message is `tournament_finished {id, cancelled: true}`.
async fn told_cancelled(c: &mut Client, id: &str) {
    match c.recv_lobby().await {
        LobbyMessage::TournamentFinished {
            tournament,
            cancelled: true,
        } if tournament == id => {}
        other => panic!("expected tournament_finished {id} cancelled, got {other:?}"),
    }
}

async fn guest(server: &TestServer) -> Client {
    let mut c = Client::connect(server).await;
    c.send_raw(r#"{"type":"hello","version":1,"guest":true}"#)
        .await;
    match c.recv().await {
        protocol::wire::ServerMessage::GuestWelcome { .. } => c,
        other => panic!("expected guest_welcome, got {other:?}"),
    }
}

/// D3: one player filled the 64 places of the whole server for 7 days. A player has at
/// most 3 upcoming or running tournaments of his own (a refusal that says so, not the
/// server's limit); cancelling one frees its place.
#[tokio::test]
async fn a_player_may_have_three_tournaments_of_his_own() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        owner.send_raw(LATER).await;
        ids.push(created(&mut owner).await);
    }
    owner.send_raw(LATER).await;
    let own = owner.expect_error("too_many_tournaments").await;
    assert!(own.contains("your own") && own.contains('3'), "{own}");
    let list = get_json(server.addr, "/api/tournaments").await;
    assert_eq!(list["tournaments"].as_array().unwrap().len(), 3, "{list}");
    // His cancelled one no longer counts.
    owner.send_raw(&cancel(&ids[0])).await;
    told_cancelled(&mut owner, &ids[0]).await;
    owner.send_raw(LATER).await;
    created(&mut owner).await;
    // The server's own limit (64 in all) is another refusal: with his 3, 61 more of
    // other players (3 each) fill it, and the next player, who has none, is told of the
    // server's.
    for i in 0..21 {
        let mut p = Client::new_player(&server, &format!("Filler{i}")).await;
        for _ in 0..(if i < 20 { 3 } else { 1 }) {
            p.send_raw(LATER).await;
            created(&mut p).await;
        }
    }
    let mut late = Client::new_player(&server, "Late").await;
    late.send_raw(LATER).await;
    let all = late.expect_error("too_many_tournaments").await;
    assert!(all.contains("64") && !all.contains("your own"), "{all}");
    assert_ne!(own, all);
    server.stop().await;
}

/// D3: the creator cancels his tournament before it starts: he and its players are
/// told `tournament_finished {cancelled: true}`, it is stored as cancelled and never
/// starts. Nobody else may cancel it (nor a guest), and an unknown one is refused;
/// nothing changes on a refusal.
#[tokio::test]
async fn the_creator_cancels_his_tournament_before_it_starts() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    // Due in 3 s with two players: it would start if the cancellation did not hold.
    owner
        .send_raw(r#"{"type":"tournament_create","rounds":2,"tc":"blitz","starts_in_ms":3000}"#)
        .await;
    let since = tokio::time::Instant::now();
    let id = created(&mut owner).await;
    let mut players = Vec::new();
    for name in ["Ann", "Ben"] {
        let mut p = Client::new_player(&server, name).await;
        p.send_raw(&join(&id)).await;
        joined(&mut p).await;
        players.push(p);
    }
    players[0].send_raw(&cancel(&id)).await;
    let why = players[0].expect_error("not_creator").await;
    assert!(why.contains(&id) && why.contains("created"), "{why}");
    let mut g = guest(&server).await;
    g.send_raw(&cancel(&id)).await;
    g.expect_error("guest").await;
    owner.send_raw(&cancel("nope")).await;
    owner.expect_error("unknown_tournament").await;
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(
        (&t["state"], &t["players"]),
        (&"upcoming".into(), &2.into())
    );
    // The creator cancels: the answer, and every player's connection is told.
    owner.send_raw(&cancel(&id)).await;
    told_cancelled(&mut owner, &id).await;
    for p in &mut players {
        told_cancelled(p, &id).await;
    }
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(t["state"], "cancelled", "{t}");
    // Over: its time passes and it does not start; no join, no second cancel.
    tokio::time::sleep(Duration::from_millis(3_500).saturating_sub(since.elapsed())).await;
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!((&t["state"], &t["round"]), (&"cancelled".into(), &0.into()));
    owner.send_raw(&cancel(&id)).await;
    owner.expect_error("unknown_tournament").await;
    players[1].send_raw(&join(&id)).await;
    players[1].expect_error("unknown_tournament").await;
    for p in &mut players {
        p.sync().await;
        assert!(p.lobby.is_empty(), "nothing more: {:?}", p.lobby);
    }
    server.stop().await;
}

/// D3: a tournament that has started cannot be cancelled; it goes on.
#[tokio::test]
async fn a_running_tournament_cannot_be_cancelled() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    owner
        .send_raw(r#"{"type":"tournament_create","rounds":1,"tc":"standard","starts_in_ms":1000,"settings":{"level":1}}"#)
        .await;
    let id = created(&mut owner).await;
    let mut players = Vec::new();
    for name in ["Ann", "Ben"] {
        let mut p = Client::new_player(&server, name).await;
        p.send_raw(&join(&id)).await;
        joined(&mut p).await;
        players.push(p);
    }
    // Started: both are seated.
    let mut seated = Vec::new();
    for p in players {
        seated.push(Follower::await_snapshot(p).await);
    }
    owner.send_raw(&cancel(&id)).await;
    let why = owner.expect_error("tournament_started").await;
    assert!(why.contains(&id) && why.contains("started"), "{why}");
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!((&t["state"], &t["round"]), (&"running".into(), &1.into()));
    server.stop().await;
}

/// D5: after a withdrawal, joining again was refused as `already_joined` ("you have
/// already joined"): a withdrawal is final, and the refusal says so.
#[tokio::test]
async fn a_withdrawal_is_final() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    owner.send_raw(LATER).await;
    let id = created(&mut owner).await;
    let mut p = Client::new_player(&server, "Wanda").await;
    p.send_raw(&join(&id)).await;
    joined(&mut p).await;
    p.send_raw(&format!(
        r#"{{"type":"tournament_withdraw","tournament":"{id}"}}"#
    ))
    .await;
    assert!(matches!(
        p.recv_lobby().await,
        LobbyMessage::TournamentWithdrawn { .. }
    ));
    p.send_raw(&join(&id)).await;
    let why = p.expect_error("withdrawn").await;
    assert!(why.contains(&id) && why.contains("final"), "{why}");
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(t["players"], 0, "{t}");
    assert_eq!(t["standings"][0]["withdrawn"], true, "{t}");
    server.stop().await;
}

/// D4: partial settings were filled from the level's defaults: a tournament labelled
/// blitz played the standard control's hourglasses and timer. They start from the named
/// control's (at their level, with the 20-minute game clock); the fields given override.
#[tokio::test]
async fn partial_settings_start_from_the_named_control() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    let addr = server.addr;
    // Creates the tournament `create` asks for; its settings, as the API shows them.
    async fn settings_of(
        owner: &mut Client,
        addr: std::net::SocketAddr,
        create: &str,
    ) -> serde_json::Value {
        owner.send_raw(create).await;
        let id = created(owner).await;
        get_json(addr, &format!("/api/tournaments/{id}")).await["settings"].clone()
    }
    // Without a game clock: blitz's hourglasses and timer, and still the control (the
    // game clock does not count), so it may be rated.
    let s = settings_of(&mut owner, addr, r#"{"type":"tournament_create","rounds":3,"tc":"blitz","rated":true,"settings":{"game_clock":null}}"#).await;
    assert_eq!(
        (&s["level"], &s["hourglass_ms"], &s["neutral_ms"]),
        (&3.into(), &45_000.into(), &5_000.into()),
        "{s}"
    );
    assert_eq!(
        (&s["drop_grace_ms"], &s["game_clock"]),
        (&2_000.into(), &serde_json::Value::Null)
    );
    // Level 2 at rapid: the control's turn limit, the 20-minute clock.
    let s = settings_of(
        &mut owner,
        addr,
        r#"{"type":"tournament_create","rounds":3,"tc":"rapid","settings":{"level":2}}"#,
    )
    .await;
    assert_eq!(
        (
            &s["hourglass_ms"],
            &s["turn_limit_ms"],
            &s["game_clock"]["main_ms"]
        ),
        (&90_000.into(), &20_000.into(), &1_200_000.into()),
        "{s}"
    );
    // Another hourglass: not the control's any more, so not rated (refused as before)...
    owner
        .send_raw(r#"{"type":"tournament_create","rounds":3,"tc":"blitz","rated":true,"settings":{"hourglass_ms":60000}}"#)
        .await;
    let why = owner.expect_error("bad_tournament").await;
    assert!(why.contains("blitz"), "{why}");
    // ...but casual it is played as given, the rest still blitz's.
    let s = settings_of(
        &mut owner,
        addr,
        r#"{"type":"tournament_create","rounds":3,"tc":"blitz","settings":{"hourglass_ms":60000}}"#,
    )
    .await;
    assert_eq!(
        (
            &s["hourglass_ms"],
            &s["neutral_ms"],
            &s["game_clock"]["main_ms"]
        ),
        (&60_000.into(), &5_000.into(), &1_200_000.into()),
        "{s}"
    );
    // Out of range is refused as for a seek, and creates nothing.
    owner
        .send_raw(
            r#"{"type":"tournament_create","rounds":3,"tc":"blitz","settings":{"neutral_ms":5}}"#,
        )
        .await;
    let why = owner.expect_error("bad_message").await;
    assert!(why.contains("neutral_ms"), "{why}");
    let list = get_json(server.addr, "/api/tournaments").await;
    assert_eq!(list["tournaments"].as_array().unwrap().len(), 3, "{list}");
    server.stop().await;
}

/// D6: `GET /api/tournaments/` answered 404 with an empty body, and the tournaments'
/// paths took any parameter. A path under `/api/` that is none of the API's is the JSON
/// error `not_found`; a parameter they do not have is `unknown_parameter`, as for the
/// leaderboard.
#[tokio::test]
async fn the_tournament_api_refuses_unknown_paths_and_parameters() {
    let server = TestServer::start().await;
    let mut owner = Client::new_player(&server, "Owner").await;
    owner.send_raw(LATER).await;
    let id = created(&mut owner).await;
    let detail = format!("/api/tournaments/{id}/");
    let extra = format!("/api/tournaments/{id}/pairings");
    for path in [
        "/api/tournaments/",
        "/api/tournament",
        "/api/",
        "/api",
        "/api/players/",
        detail.as_str(),
        extra.as_str(),
    ] {
        let r = http_get(server.addr, path, None).await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
        assert_eq!(r.json()["error"], "not_found", "{path}");
        assert!(
            r.json()["message"].as_str().unwrap().contains(path),
            "{path}"
        );
    }
    let show = format!("/api/tournaments/{id}?x=1");
    for path in [
        "/api/tournaments?x=1",
        "/api/tournaments?tc=blitz",
        show.as_str(),
    ] {
        let r = http_get(server.addr, path, None).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.json()["error"], "unknown_parameter", "{path}");
    }
    // Without parameters, as before.
    assert_eq!(
        get_json(server.addr, &format!("/api/tournaments/{id}")).await["id"],
        id.as_str()
    );
    assert!(get_json(server.addr, "/api/tournaments").await["tournaments"].is_array());
    server.stop().await;
}
