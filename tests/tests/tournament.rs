//! Swiss tournaments end to end: bots (external clients over real websockets) play a
//! whole tournament that the server pairs and runs; its standings match a recomputation
//! from the stored games.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use protocol::game::Status;
use protocol::rating::TimeControl;
use protocol::settings::{GameClock, Level, Settings};
use protocol::wire::{ClientMessage, LobbyMessage, ServerFrame};
use server::bot_client::{self, Options};
use server::swiss::{Entrant, GameResult, Pairing, Round};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Row};
use tamsk_tests::*;

#[path = "tournament/commands.rs"]
mod commands;

/// Test speeds with a short game clock on top: every game is over within seconds.
fn fast() -> Settings {
    Settings {
        game_clock: Some(GameClock {
            main_ms: 2_000,
            increment_ms: 0,
        }),
        ..Settings::blitz(Level::Three)
    }
}

fn bot(server: &TestServer, name: &str, tournament: &str) -> Options {
    tournament_bot(server.ws_url(), name, tournament)
}

/// Creates a tournament as a new player; its id.
async fn create(server: &TestServer, rounds: u32, starts_in_ms: u64) -> (Client, String) {
    let mut td = Client::new_player(server, "Director").await;
    td.send(&ClientMessage::TournamentCreate {
        rounds,
        tc: TimeControl::Blitz,
        rated: false,
        starts_in_ms: Some(starts_in_ms),
        settings: Some(fast().into()),
    })
    .await;
    match td.recv_lobby().await {
        LobbyMessage::TournamentCreated { tournament, .. } => (td, tournament),
        other => panic!("expected tournament_created, got {other:?}"),
    }
}

/// The tournament's rounds rebuilt from the stored games alone (players by id).
async fn rounds_from_games(db: &std::path::Path, detail: &serde_json::Value) -> Vec<Round> {
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .connect()
        .await
        .unwrap();
    let mut rounds = Vec::new();
    for round in detail["pairings"].as_array().unwrap() {
        let mut r = Round::default();
        for g in round["games"].as_array().unwrap() {
            // The game's id as the API gives it (text), compared as the games table keeps it.
            let id = g["game"].as_str().unwrap();
            let row =
                sqlx::query("SELECT red_id, black_id, state, winner FROM games WHERE id = $1")
                    .bind(id)
                    .fetch_one(&mut conn)
                    .await
                    .unwrap();
            assert_eq!(row.get::<String, _>("state"), "finished", "game {id}");
            let result = match row.get::<Option<String>, _>("winner").as_deref() {
                Some("red") => GameResult::RED_WINS,
                Some("black") => GameResult::BLACK_WINS,
                _ => GameResult::DRAW,
            };
            r.pairings.push(Pairing {
                red: row.get("red_id"),
                black: row.get("black_id"),
                result: Some(result),
            });
        }
        assert!(round.get("bye").is_none(), "eight players: no bye");
        rounds.push(r);
    }
    rounds
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_bots_play_a_four_round_swiss() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tamsk.db");
    // Bots at test speeds act many times a second: above a person's message rate.
    let config = server::Config {
        rate_per_sec: 1_000,
        rate_burst: 1_000,
        ..config_with_db(&db)
    };
    let server = TestServer::start_with(config).await;
    let starts_in = Duration::from_millis(3_000);
    let created = tokio::time::Instant::now();
    let (_td, id) = create(&server, 4, starts_in.as_millis() as u64).await;
    let bots: Vec<_> = (1..=8)
        .map(|i| {
            let options = bot(&server, &format!("Bot{i}"), &id);
            tokio::spawn(bot_client::run(options, |_| {}))
        })
        .collect();
    // All eight are in before it starts (the API counts them).
    within("eight players joined", async {
        loop {
            let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
            if t["players"] == 8 {
                assert_eq!(t["state"], "upcoming");
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(created.elapsed() < starts_in, "the bots joined in time");
    // Each bot returns when told the tournament is over.
    let reports = tokio::time::timeout(Duration::from_secs(180), futures::future::join_all(bots))
        .await
        .expect("the tournament ends");
    let detail = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    let reports: Vec<_> = reports
        .into_iter()
        .map(|r| r.unwrap().expect("a bot ran to the end"))
        .collect();
    for r in reports {
        let ids: Vec<_> = r.games.iter().map(|g| g.0).collect();
        assert_eq!(r.games.len(), 4, "one game a round: {ids:?} {detail}");
        assert!(r
            .games
            .iter()
            .all(|(_, s)| matches!(s, Status::Finished { .. })));
    }
    let detail = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(detail["state"], "finished");
    assert_eq!(detail["round"], 4);
    let rounds = rounds_from_games(&db, &detail).await;
    assert_eq!(rounds.len(), 4);
    // Swiss rules: everyone plays every round, nobody meets anyone twice, colours stay
    // balanced.
    let mut met = HashSet::new();
    let mut reds: HashMap<String, i32> = HashMap::new();
    for r in &rounds {
        let mut seen = HashSet::new();
        for p in &r.pairings {
            assert!(seen.insert(p.red.clone()) && seen.insert(p.black.clone()));
            let mut two = [p.red.clone(), p.black.clone()];
            two.sort();
            assert!(met.insert(two), "a repeated pairing: {p:?}");
            *reds.entry(p.red.clone()).or_default() += 1;
            *reds.entry(p.black.clone()).or_default() -= 1;
        }
        assert_eq!(seen.len(), 8);
    }
    assert!(reds.values().all(|b| b.abs() <= 2), "{reds:?}");
    // The standings are those the stored games give.
    let entrants: Vec<Entrant> = detail["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Entrant {
            id: s["player_id"].as_str().unwrap().into(),
            rating: s["seed"].as_f64().unwrap(),
            joined: 1,
            withdrawn: false,
        })
        .collect();
    let again = server::swiss::standings(&entrants, &rounds);
    let shown = detail["standings"].as_array().unwrap();
    assert_eq!(again.len(), shown.len());
    for (want, got) in again.iter().zip(shown) {
        assert_eq!(got["player_id"], want.id.as_str());
        assert_eq!(got["rank"], want.rank);
        assert_eq!(got["score"].as_f64(), Some(want.score));
        assert_eq!(got["buchholz"].as_f64(), Some(want.buchholz));
        assert_eq!(
            got["sonneborn_berger"].as_f64(),
            Some(want.sonneborn_berger)
        );
    }
    let total: f64 = again.iter().map(|s| s.score).sum();
    assert_eq!(total, 16.0, "16 games, a point each");
    // Listed as finished.
    let list = get_json(server.addr, "/api/tournaments").await;
    assert!(list["tournaments"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == id.as_str() && t["state"] == "finished"));
    server.stop().await;
}

#[tokio::test]
async fn bad_tournament_requests_are_refused_clearly() {
    let server = TestServer::start().await;
    let mut p = Client::new_player(&server, "Tess").await;
    let create = |rounds, rated, settings| ClientMessage::TournamentCreate {
        rounds,
        tc: TimeControl::Rapid,
        rated,
        starts_in_ms: None,
        settings,
    };
    p.send(&create(0, false, None)).await;
    assert!(p.expect_error("bad_tournament").await.contains("rounds"));
    // Rated needs the named control's settings.
    p.send(&create(3, true, Some(fast().into()))).await;
    assert!(p.expect_error("bad_tournament").await.contains("rapid"));
    p.send(&ClientMessage::TournamentJoin {
        tournament: "nope".into(),
    })
    .await;
    p.expect_error("unknown_tournament").await;
    // A good one, joined twice.
    p.send(&create(3, true, None)).await;
    let LobbyMessage::TournamentCreated { tournament, .. } = p.recv_lobby().await else {
        panic!("created")
    };
    let join = ClientMessage::TournamentJoin {
        tournament: tournament.clone(),
    };
    p.send(&join).await;
    assert!(matches!(
        p.recv_lobby().await,
        LobbyMessage::TournamentJoined { .. }
    ));
    p.send(&join).await;
    p.expect_error("already_joined").await;
    // Withdrawn once; not twice.
    let withdraw = ClientMessage::TournamentWithdraw {
        tournament: tournament.clone(),
    };
    p.send(&withdraw).await;
    assert!(matches!(
        p.recv_lobby().await,
        LobbyMessage::TournamentWithdrawn { .. }
    ));
    p.send(&withdraw).await;
    p.expect_error("not_joined").await;
    // Its default settings: the control with the 20-minute game clock.
    let t = get_json(server.addr, &format!("/api/tournaments/{tournament}")).await;
    assert_eq!(t["settings"]["game_clock"]["main_ms"], 1_200_000);
    assert_eq!(t["settings"]["hourglass_ms"], 90_000);
    assert_eq!(t["rated"], true);
    assert_eq!(t["players"], 0, "the withdrawn player is not counted");
    assert_eq!(t["standings"][0]["withdrawn"], true);
    let r = http_get(server.addr, "/api/tournaments/nope", None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"], "unknown_tournament");
    server.stop().await;
}

/// Settings that never end a game by themselves within a test: the players resign.
fn slow() -> Settings {
    Settings {
        game_clock: Some(GameClock {
            main_ms: 600_000,
            increment_ms: 0,
        }),
        ..Settings::level(Level::One)
    }
}

/// Resigns `me`'s game and waits for its end.
async fn resign_in(mut me: Follower) -> Client {
    me.act(protocol::game::Action::Resign).await;
    me.until("the end", |e| {
        matches!(e, protocol::game::Event::GameEnded { .. })
    })
    .await;
    me.client
}

/// A tournament of `rounds` at the standard control with slow games, starting in 0.4 s,
/// joined by two new players: its id and their clients (they are seated at its start).
async fn two_player_tournament(
    server: &TestServer,
    rounds: u32,
    names: [&str; 2],
) -> (String, Vec<Client>) {
    let mut td = Client::new_player(server, "Host").await;
    td.send(&ClientMessage::TournamentCreate {
        rounds,
        tc: TimeControl::Standard,
        rated: false,
        starts_in_ms: Some(400),
        settings: Some(slow().into()),
    })
    .await;
    let LobbyMessage::TournamentCreated { tournament: id, .. } = td.recv_lobby().await else {
        panic!("created")
    };
    let mut players = Vec::new();
    for name in names {
        let mut c = Client::new_player(server, name).await;
        c.send(&ClientMessage::TournamentJoin {
            tournament: id.clone(),
        })
        .await;
        assert!(matches!(
            c.recv_lobby().await,
            LobbyMessage::TournamentJoined { .. }
        ));
        players.push(c);
    }
    (id, players)
}

backend_tests!(
    #[tokio::test]
    a_tournament_goes_on_after_a_restart,
    a_tournament_goes_on_after_a_restart_on_postgres => goes_on_after_a_restart
);

async fn goes_on_after_a_restart(db: tamsk_tests::services::TestDb) {
    let server = TestServer::start_with(db.config()).await;
    let (id, players) = two_player_tournament(&server, 2, ["Ann", "Ben"]).await;
    // Round 1 starts: both are seated in one game.
    let mut tokens = Vec::new();
    let mut first = None;
    for c in players {
        tokens.push(c.token.clone());
        let f = Follower::await_snapshot(c).await;
        assert_eq!(*first.get_or_insert(f.game), f.game);
    }
    let cut_off = first.unwrap();
    // The server stops mid-game and comes back: the game is resumed where it was (with
    // `--resume-games false` it would be aborted, not scored, and played again).
    server.stop().await;
    let server = TestServer::start_with(db.config()).await;
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(t["state"], "running");
    assert_eq!(t["round"], 1);
    let replay = t["pairings"][0]["games"][0]["game"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(replay, cut_off.to_string(), "the cut-off game goes on");
    // Both come back: the welcome lists the game; they take their seats.
    let mut seated = Vec::new();
    for token in &tokens {
        let (mut c, games) = Client::returning(&server, token).await;
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].to_string(), replay);
        c.send(&ClientMessage::Join {
            game: games[0],
            after_seq: None,
        })
        .await;
        seated.push(Follower::await_snapshot(c).await);
    }
    // Round 1 ends by resignation; round 2 is paired at once (colours swapped).
    let loser = seated.remove(0);
    let loser_name = loser.client.name.clone();
    let mut clients = vec![resign_in(loser).await, seated.remove(0).client];
    let mut round2 = Vec::new();
    for mut c in clients.drain(..) {
        // The winner still hears the end of round 1's game first.
        let snapshot = loop {
            if let protocol::wire::ServerMessage::Snapshot(s) = c.recv().await {
                break s;
            }
        };
        round2.push(Follower::from_snapshot(c, *snapshot));
    }
    let loser = round2.remove(0);
    let mut loser_client = resign_in(loser).await;
    // Finished: told, and stored.
    loop {
        if let LobbyMessage::TournamentFinished {
            tournament,
            cancelled,
        } = loser_client.recv_lobby().await
        {
            assert_eq!((tournament.as_str(), cancelled), (id.as_str(), false));
            break;
        }
    }
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(t["state"], "finished");
    let standings = t["standings"].as_array().unwrap();
    assert_eq!(standings[0]["score"], 2.0);
    assert_eq!(standings[1]["name"], loser_name.as_str());
    assert_eq!(standings[1]["score"], 0.0);
    let r1 = &t["pairings"][0]["games"][0];
    let r2 = &t["pairings"][1]["games"][0];
    assert_eq!(r1["red"], r2["black"], "colours alternate");
    server.stop().await;
}

backend_tests!(
    #[tokio::test]
    a_finished_game_whose_result_was_not_recorded_counts_after_a_restart,
    a_finished_game_whose_result_was_not_recorded_counts_after_a_restart_on_postgres
        => unrecorded_result_counts
);

/// A tournament game stored as finished whose result the tournament never recorded (the
/// server stopped in between; with several nodes, it ended between two leaders' terms):
/// taken up again, the tournament counts the stored game instead of playing it again.
async fn unrecorded_result_counts(db: tamsk_tests::services::TestDb) {
    let server = TestServer::start_with(db.config()).await;
    let (id, players) = two_player_tournament(&server, 1, ["Cleo", "Dirk"]).await;
    let mut seated = Vec::new();
    for c in players {
        seated.push(Follower::await_snapshot(c).await);
    }
    let game = seated[0].game;
    let mut loser = resign_in(seated.remove(0)).await;
    loop {
        if let LobbyMessage::TournamentFinished { .. } = loser.recv_lobby().await {
            break;
        }
    }
    server.stop().await;
    // What a stop between the game's end and its result would have left.
    db.execute(&format!(
        "UPDATE tournaments SET state = 'running' WHERE id = '{id}'"
    ))
    .await;
    db.execute(&format!(
        "UPDATE tournament_pairings SET red_score = NULL, black_score = NULL \
         WHERE tournament_id = '{id}'"
    ))
    .await;
    let server = TestServer::start_with(db.config()).await;
    let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(t["state"], "finished", "{t}");
    assert_eq!(t["pairings"][0]["games"][0]["game"], game.to_string());
    let scores: Vec<f64> = t["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores, [1.0, 0.0], "{t}");
}

/// No-shows (docs/TOURNAMENTS.md, "Running"): Red who lets his first move's bound run
/// out forfeits; Black, who cannot move before Red, forfeits with him when he is not at
/// the game then either (before: Black won whether he was there or not, and `0-0
/// forfeit` never happened).
#[tokio::test]
async fn a_no_show_forfeits_and_two_no_shows_both_lose() {
    use protocol::game::Player;
    use protocol::wire::ServerMessage;
    // Who leaves the game (and so is away) before Red's bound runs out, and the result.
    let cases: [([&str; 2], &[Player], &str); 4] = [
        (["Ann", "Ben"], &[], "0-1 forfeit"),
        (["Cat", "Dan"], &[Player::Black], "0-0 forfeit"),
        (["Eve", "Fay"], &[Player::Red, Player::Black], "0-0 forfeit"),
        (["Gus", "Hal"], &[Player::Red], "0-1 forfeit"),
    ];
    for (names, leaving, result) in cases {
        let server = TestServer::start_with(server::Config {
            abort_ms: 300,
            ..test_config()
        })
        .await;
        let (id, players) = two_player_tournament(&server, 1, names).await;
        let mut seated = Vec::new();
        for c in players {
            seated.push(Follower::await_snapshot(c).await);
        }
        for f in &mut seated {
            if leaving.contains(&f.seat.unwrap()) {
                f.client.send(&ClientMessage::Leave { game: f.game }).await;
            }
        }
        for f in &mut seated {
            let mut left = !leaving.contains(&f.seat.unwrap());
            loop {
                match f.client.recv_any().await.expect("open") {
                    ServerFrame::Message(ServerMessage::Left { .. }) => left = true,
                    ServerFrame::Lobby(LobbyMessage::TournamentFinished { .. }) => break,
                    _ => {}
                }
            }
            assert!(left, "the leave was answered before the end");
        }
        let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
        assert_eq!(
            t["pairings"][0]["games"][0]["result"], result,
            "{names:?}: {t}"
        );
    }
    // Neither ever came to the game (both offline from before the start): both lose (a
    // seat given to a player offline has a peer with no connection behind it, which
    // counted him there).
    let server = TestServer::start_with(server::Config {
        abort_ms: 300,
        ..test_config()
    })
    .await;
    let (id, players) = two_player_tournament(&server, 1, ["Ivo", "Jon"]).await;
    for c in players {
        c.close().await;
    }
    let t = within("the end of the tournament", async {
        loop {
            let t = get_json(server.addr, &format!("/api/tournaments/{id}")).await;
            if t["state"] == "finished" {
                return t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(t["pairings"][0]["games"][0]["result"], "0-0 forfeit", "{t}");
}
