//! `tamsk play` as scripts use it: two `tamsk` processes in plain JSON mode play a whole
//! short-timer game against the real server, each driven through its stdin.

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tamsk_processes_play_a_whole_blitz_game() {
    let server = start_server().await;
    let play = |who: &str| {
        let config = config_path("blitz", who);
        tamsk(
            &config,
            &[
                "--server",
                &server.url,
                "--name",
                who,
                "--json",
                "play",
                "--level",
                "3",
                "--test-speeds",
            ],
        )
    };
    let alice = tokio::spawn(bot(play("Alice"), "Alice"));
    let bob = tokio::spawn(bot(play("Bob"), "Bob"));
    let (a, b) = tokio::time::timeout(WAIT, async { (alice.await.unwrap(), bob.await.unwrap()) })
        .await
        .expect("the game ends");
    let ((a, a_status), (b, b_status)) = (a, b);
    assert!(
        a_status.success() && b_status.success(),
        "{a_status} {b_status}"
    );

    // Both were seated in the same game, on opposite sides.
    let (sa, sb) = (of_type(&a, "start"), of_type(&b, "start"));
    assert_eq!((sa.len(), sb.len()), (1, 1), "{a:?}");
    assert_eq!(sa[0]["game"], sb[0]["game"]);
    assert_ne!(sa[0]["seat"], sb[0]["seat"]);
    assert_eq!(sa[0]["settings"]["hourglass_ms"], 3000);

    // The same result, of a game that was played to its end.
    let (ra, rb) = (of_type(&a, "result"), of_type(&b, "result"));
    assert_eq!((ra.len(), rb.len()), (1, 1));
    for key in ["status", "winner", "rings", "outcome", "lineup", "text"] {
        assert_eq!(ra[0][key], rb[0][key], "{key}");
    }
    assert_eq!(ra[0]["status"], "finished", "{}", ra[0]);
    let rings = &ra[0]["rings"];
    let dropped = 64 - rings["red"].as_u64().unwrap() - rings["black"].as_u64().unwrap();
    let moves: usize = a
        .iter()
        .filter(|v| v["type"] == "event" && v["event"]["type"] == "move_released")
        .count();
    assert!(moves >= 6, "a real game: {moves} moves");
    assert!(dropped >= 6, "rings were dropped: {dropped}");
    // Both saw the same moves, in the same order, at the same instants.
    let events = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|v| v["type"] == "event")
            .map(|v| v["event"].clone())
            .collect()
    };
    assert_eq!(events(&a), events(&b));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_client_takes_the_same_seat_again() {
    let server = start_server().await;
    let (cfg_a, cfg_b) = (config_path("resume", "a"), config_path("resume", "b"));
    let play = |cfg: &PathBuf, name: Option<&str>| {
        let mut args = vec!["--server", server.url.as_str(), "--json"];
        if let Some(n) = name {
            args.extend(["--name", n]);
        }
        args.extend(["play", "--level", "1"]);
        Proc::new(tamsk(cfg, &args))
    };
    let mut a = play(&cfg_a, Some("Ann"));
    let mut b = play(&cfg_b, Some("Ben"));
    let start_a = a.until("start").await;
    let start_b = b.until("start").await;
    let game = start_a["game"].clone();
    assert_eq!(game, start_b["game"]);

    // Ann leaves; her seat and token are in her config file.
    a.say("quit").await;
    assert!(a.exit().await.success());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&cfg_a).unwrap()).unwrap();
    let account = &saved["accounts"][server.url.as_str()];
    assert_eq!(account["game"], game);
    assert_eq!(account["name"], "Ann");
    assert!(account["token"].as_str().unwrap().len() >= 16);
    let away = b.until("presence").await;
    assert_eq!(away["connected"], false);
    assert_eq!(away["player"], start_a["seat"]);

    // Started again, without a name: the same player, the same seat.
    let mut a = play(&cfg_a, None);
    let welcome = a.until("welcome").await;
    assert_eq!(welcome["player_id"], account["player_id"]);
    assert_eq!(a.until("resuming").await["game"], game);
    let again = a.until("start").await;
    assert_eq!(again["game"], game);
    assert_eq!(again["seat"], start_a["seat"]);
    let back = b.until("presence").await;
    assert_eq!(back["connected"], true);

    // Ann resigns: both see Ben win, and both clients stop.
    a.say("resign").await;
    let (ra, rb) = (a.until("result").await, b.until("result").await);
    assert_eq!(ra["winner"], start_b["seat"]);
    assert_eq!(ra["outcome"], rb["outcome"]);
    assert!(a.exit().await.success());
    assert!(b.exit().await.success());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&cfg_a).unwrap()).unwrap();
    assert_eq!(
        saved["accounts"][server.url.as_str()]["game"],
        Value::Null,
        "the game is over: nothing to resume"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_games_are_listed_and_replayed_from_the_server() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stored");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = start_server_with(server::Config {
        db_path: Some(dir.join("tamsk.db")),
        ..server::Config::default()
    })
    .await;
    let (cfg_a, cfg_b) = (config_path("stored", "a"), config_path("stored", "b"));
    let play = |cfg: &PathBuf, name: &str| {
        let args = [
            "--server",
            server.url.as_str(),
            "--json",
            "--name",
            name,
            "play",
            "--level",
            "1",
        ];
        Proc::new(tamsk(cfg, &args))
    };
    let mut a = play(&cfg_a, "Ann");
    let mut b = play(&cfg_b, "Ben");
    let game = a.until("start").await["game"]
        .as_str()
        .unwrap()
        .parse::<protocol::wire::GameId>()
        .unwrap();
    b.until("start").await;
    a.say("resign").await;
    let result = a.until("result").await;
    b.until("result").await;
    assert!(a.exit().await.success());
    assert!(b.exit().await.success());

    // tamsk games --player Ann: no live game, the finished one with its result.
    let out = output(
        &cfg_a,
        &[
            "--server",
            &server.url,
            "--json",
            "games",
            "--player",
            "Ann",
        ],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.iter().any(|v| v["text"] == "No live games of Ann"),
        "{lines:?}"
    );
    let stored = lines
        .iter()
        .find(|v| v["type"] == "stored_game")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(stored["summary"]["id"], game.to_string());
    let text = stored["text"].as_str().unwrap();
    let short = tamsk_client::gameref::short_id(game);
    assert!(text.starts_with(&format!("{short}  ")), "{text}");
    assert!(
        text.contains("Ann") && text.contains("Ben") && text.contains("resigned"),
        "{text}"
    );

    // tamsk replay GAME: the record fetched from the server, its final board and result.
    let id = game.to_string();
    let out = output(&cfg_a, &["--server", &server.url, "replay", &id, "--json"]).await;
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["winner"], result["winner"]);
    assert_eq!(v["reason_code"], "resigned");
    // By its short id, as listed.
    let out = output(&cfg_a, &["--server", &server.url, "replay", &short]).await;
    let board = String::from_utf8(out.stdout).unwrap();
    assert!(
        board.contains("Result: ") && board.contains("resigned"),
        "{board}"
    );
    let out = output(&cfg_a, &["--server", &server.url, "replay", "#0000dead"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("No game #0000dead among the 200 newest stored games"),
        "{err}"
    );
    let unknown = protocol::wire::GameId::now_v7();
    let out = output(
        &cfg_a,
        &["--server", &server.url, "replay", &unknown.to_string()],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(&format!("no stored game {unknown}")), "{err}");
    server.stop().await;
}

/// A player whose node died goes on from another address with his token (`--token`): the
/// same player, back in his seat, though this address has no account in his config yet;
/// his account is then kept under the new address too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_given_is_the_same_player_at_another_address() {
    let server = start_server().await;
    // The same server under another address, as another node of a cluster would be.
    let other = format!("{}?node=2", server.url);
    let (cfg_a, cfg_b, cfg_c) = (
        config_path("token", "a"),
        config_path("token", "b"),
        config_path("token", "c"),
    );
    let args = |url: &str, name: &str| {
        let mut v = vec!["--server".to_string(), url.to_string(), "--json".into()];
        v.extend([
            "--name".into(),
            name.into(),
            "play".into(),
            "--level".into(),
            "1".into(),
        ]);
        v
    };
    let run = |cfg: &PathBuf, args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        Proc::new(tamsk(cfg, &args))
    };
    let mut a = run(&cfg_a, args(&server.url, "Tia"));
    let mut b = run(&cfg_b, args(&server.url, "Tom"));
    let start_a = a.until("start").await;
    b.until("start").await;
    a.say("quit").await;
    assert!(a.exit().await.success());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&cfg_a).unwrap()).unwrap();
    let account = &saved["accounts"][server.url.as_str()];
    let token = account["token"].as_str().unwrap().to_string();

    // A config that knows nothing of the other address: the token alone says who he is.
    let mut again = args(&other, "Tia");
    again.splice(0..0, ["--token".to_string(), token]);
    let mut a = run(&cfg_c, again);
    assert_eq!(a.until("welcome").await["player_id"], account["player_id"]);
    assert_eq!(a.until("resuming").await["game"], start_a["game"]);
    let back = a.until("start").await;
    assert_eq!(
        (&back["game"], &back["seat"]),
        (&start_a["game"], &start_a["seat"])
    );
    a.say("resign").await;
    a.until("result").await;
    b.until("result").await;
    assert!(a.exit().await.success());
    assert!(b.exit().await.success());
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&cfg_c).unwrap()).unwrap();
    assert_eq!(
        kept["accounts"][other.as_str()]["player_id"],
        account["player_id"]
    );
    server.stop().await;
}
