//! `tamsk games` and `tamsk watch` without a saved token register no player: they come
//! as guests. A player whose name they would have taken meets no `name_taken`.

mod common;

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_and_watch_register_nobody() {
    let server = start_server().await;
    let (onlooker, player) = (
        config_path("guest", "onlooker"),
        config_path("guest", "player"),
    );

    // `tamsk games` under the name Rita, with no config: a guest.
    let out = output(
        &onlooker,
        &["--server", &server.url, "--json", "--name", "Rita", "games"],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(r#""guest":true"#), "{text}");
    assert!(!text.contains("player_id"), "{text}");
    assert!(!onlooker.exists(), "no account was saved");

    // So Rita is still free for a player.
    let mut rita = Proc::new(tamsk(
        &player,
        &[
            "--server",
            &server.url,
            "--json",
            "--name",
            "Rita",
            "play",
            "--bot",
            "easy",
        ],
    ));
    let welcome = rita.until("welcome").await;
    assert_eq!(welcome["name"], "Rita", "{welcome}");
    let game = rita.until("start").await["game"]
        .as_str()
        .unwrap()
        .to_string();

    // Watching her game under her name: a guest again, who sees the game to its end.
    let mut watcher = Proc::new(tamsk(
        &onlooker,
        &[
            "--server",
            &server.url,
            "--json",
            "--name",
            "Rita",
            "watch",
            &game.to_string(),
        ],
    ));
    assert_eq!(watcher.until("welcome").await["guest"], true);
    let start = watcher.until("start").await;
    assert_eq!(start["game"], game, "{start}");
    rita.say("resign").await;
    rita.until("result").await;
    let result = watcher.until("result").await;
    assert_eq!(result["game"], game, "{result}");
    assert!(rita.exit().await.success());
    assert!(!onlooker.exists(), "still no account");
    server.stop().await;
}
