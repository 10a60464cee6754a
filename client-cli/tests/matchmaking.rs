//! Finding a game other than by quick match, as scripts do it: the computer, a private
//! game by code, a challenge accepted and one declined. Real server, `tamsk` processes in
//! JSON mode.

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tamsk_play_bot_plays_a_whole_game_against_the_computer() {
    let server = start_server().await;
    let cfg = config_path("bot", "me");
    let child = tamsk(
        &cfg,
        &[
            "--server",
            &server.url,
            "--name",
            "Dee",
            "--json",
            "play",
            "--bot",
            "--level",
            "3",
            "--test-speeds",
        ],
    );
    let (lines, status) = tokio::time::timeout(WAIT, bot(child, "Dee"))
        .await
        .expect("the game ends");
    assert!(status.success(), "{lines:?}");
    let start = of_type(&lines, "start");
    assert_eq!(start.len(), 1);
    let seat = start[0]["seat"].as_str().unwrap();
    let other = if seat == "red" { "black" } else { "red" };
    assert_eq!(start[0][other], "TAMSK bot", "{}", start[0]);
    let result = of_type(&lines, "result");
    assert_eq!(result.len(), 1);
    assert_eq!(result[0]["status"], "finished", "{}", result[0]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_game_by_code() {
    let server = start_server().await;
    let args = |name: &'static str| vec!["--server", server.url.as_str(), "--json", "--name", name];
    let mut host_args = args("Hal");
    host_args.extend(["host", "--level", "1"]);
    let mut hal = Proc::new(tamsk(&config_path("code", "hal"), &host_args));
    let hosting = hal.until("hosting").await;
    let code = hosting["code"].as_str().unwrap().to_string();
    assert!(hosting["text"]
        .as_str()
        .unwrap()
        .contains(&format!("tamsk join {code}")));
    // Codes are not case sensitive.
    let lower = code.to_lowercase();
    let mut join_args = args("Jo");
    join_args.extend(["join", &lower]);
    let mut jo = Proc::new(tamsk(&config_path("code", "jo"), &join_args));
    let (a, b) = (hal.until("start").await, jo.until("start").await);
    assert_eq!(a["game"], b["game"]);
    assert_eq!(a["settings"]["level"], 1);
    jo.say("resign").await;
    let (ra, rb) = (hal.until("result").await, jo.until("result").await);
    assert_eq!(ra["outcome"], rb["outcome"]);
    assert_eq!(ra["winner"], a["seat"]);
    assert!(hal.exit().await.success());
    assert!(jo.exit().await.success());
    // A code nobody hosts: no game, exit 1, the reason.
    let out = output(
        &config_path("code", "nobody"),
        &[
            "--server",
            &server.url,
            "--json",
            "--name",
            "Nob",
            "join",
            "zzzzzz",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("unknown_code"), "{text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_accepted_and_one_declined() {
    let server = start_server().await;
    let url = server.url.as_str();
    // Ben is online, waiting for a quick match at Level 2.
    let mut ben = Proc::new(tamsk(
        &config_path("challenge", "ben"),
        &[
            "--server", url, "--json", "--name", "Ben", "play", "--level", "2",
        ],
    ));
    ben.until("seeking").await;
    // Cid challenges him and is declined.
    let mut cid = Proc::new(tamsk(
        &config_path("challenge", "cid"),
        &[
            "--server",
            url,
            "--json",
            "--name",
            "Cid",
            "challenge",
            "Ben",
            "--level",
            "1",
        ],
    ));
    cid.until("challenge_sent").await;
    let challenged = ben.until("challenged").await;
    assert_eq!(challenged["from"], "Cid");
    ben.say("decline").await;
    cid.until("challenge_closed").await;
    assert_eq!(cid.exit().await.code(), Some(1), "no game");
    // Ann challenges him and he accepts: a Level 1 game.
    let mut ann = Proc::new(tamsk(
        &config_path("challenge", "ann"),
        &[
            "--server",
            url,
            "--json",
            "--name",
            "Ann",
            "challenge",
            "Ben",
            "--level",
            "1",
        ],
    ));
    let sent = ann.until("challenge_sent").await;
    assert_eq!(sent["to"], "Ben");
    let challenged = ben.until("challenged").await;
    assert_eq!(challenged["from"], "Ann");
    ben.say(&format!("accept {}", challenged["challenge"]))
        .await;
    let (a, b) = (ann.until("start").await, ben.until("start").await);
    assert_eq!(a["game"], b["game"]);
    assert_eq!(b["settings"]["level"], 1);
    ann.say("resign").await;
    let (ra, rb) = (ann.until("result").await, ben.until("result").await);
    assert_eq!(ra["winner"], b["seat"]);
    assert_eq!(ra["outcome"], rb["outcome"]);
    assert!(ann.exit().await.success());
    assert!(ben.exit().await.success());
    server.stop().await;
}
