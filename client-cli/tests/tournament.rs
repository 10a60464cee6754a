//! `tamsk tournament create|join|withdraw|cancel` speak to the server as the player the
//! config file remembers (a new one the first time); `tamsk tournament show` reads the
//! HTTP API.

mod common;

use common::*;

/// Runs `tamsk --server URL --name NAME ARGS...` with `config`: its exit code, stdout and
/// stderr.
async fn tamsk_as(
    config: &std::path::PathBuf,
    url: &str,
    name: &str,
    args: &[&str],
) -> (i32, String, String) {
    let out = output(config, &[&["--server", url, "--name", name], args].concat()).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The director creates a tournament and cancels it before it starts; a player who
/// joined cannot cancel it, and once cancelled it is gone for everyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_creator_cancels_his_tournament() {
    let server = start_server().await;
    let url = server.url.clone();
    let (director, pia) = (
        config_path("tournament", "director"),
        config_path("tournament", "pia"),
    );
    let create = [
        "tournament",
        "create",
        "--rounds",
        "2",
        "--tc",
        "blitz",
        "--starts-in",
        "10m",
        "--settings",
        r#"{"game_clock":null}"#,
    ];
    let (code, out, err) = tamsk_as(&director, &url, "Director", &create).await;
    assert_eq!(code, 0, "{out} {err}");
    let id = out.trim().to_string();
    assert!(
        err.contains(&format!("tamsk tournament join {id}")),
        "{err}"
    );
    // Its settings are blitz's, without a game clock (the server filled them in).
    let (code, out, err) = tamsk_as(
        &director,
        &url,
        "Director",
        &["--json", "tournament", "show", &id],
    )
    .await;
    assert_eq!(code, 0, "{out} {err}");
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["settings"]["hourglass_ms"], 45_000, "{shown}");
    assert_eq!(shown["settings"]["game_clock"], serde_json::Value::Null);

    let (code, out, err) = tamsk_as(&pia, &url, "Pia", &["tournament", "join", &id]).await;
    assert_eq!(code, 0, "{out} {err}");
    assert!(out.contains("You joined tournament"), "{out}");
    // Not hers to cancel.
    let (code, out, err) = tamsk_as(&pia, &url, "Pia", &["tournament", "cancel", &id]).await;
    assert_eq!(code, 2, "{out} {err}");
    assert!(err.contains("not_creator"), "{err}");

    let (code, out, err) =
        tamsk_as(&director, &url, "Director", &["tournament", "cancel", &id]).await;
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(
        out.trim(),
        format!("You cancelled tournament {id}: its players are told")
    );
    let (code, out, _) = tamsk_as(
        &director,
        &url,
        "Director",
        &["--json", "tournament", "show", &id],
    )
    .await;
    assert_eq!(code, 0);
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["state"], "cancelled", "{shown}");
    // Gone: neither cancelled again nor withdrawn from.
    let (code, _, err) =
        tamsk_as(&director, &url, "Director", &["tournament", "cancel", &id]).await;
    assert_eq!(code, 2);
    assert!(err.contains("unknown_tournament"), "{err}");
    let (code, _, err) = tamsk_as(&pia, &url, "Pia", &["tournament", "withdraw", &id]).await;
    assert_eq!(code, 2);
    assert!(err.contains("unknown_tournament"), "{err}");

    // With --json, the server's answer as it came.
    let (code, out, err) = tamsk_as(&director, &url, "Director", &create).await;
    assert_eq!(code, 0, "{out} {err}");
    let id = out.trim().to_string();
    let (code, out, err) = tamsk_as(
        &director,
        &url,
        "Director",
        &["--json", "tournament", "cancel", &id],
    )
    .await;
    assert_eq!(code, 0, "{out} {err}");
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"type": "tournament_finished", "tournament": id, "cancelled": true})
    );
    server.stop().await;
}
