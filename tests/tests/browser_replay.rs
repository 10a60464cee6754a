//! Replaying in a real headless Chromium (`tests/src/browser.rs`): a finished game's page
//! replays the stored record to the same final board as `tamsk replay` (the engine's
//! `Record::replay`), steps from the start, shows the result in words and the replay's keys
//! (not a player's), and opens from the terminal client's short id.

use std::time::Duration;

use protocol::game::Action;
use protocol::settings::{Level, Settings};
use tamsk_tests::browser::Browser;
use tamsk_tests::pages::*;
use tamsk_tests::{get_json, start_game, test_config, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_replays_to_the_records_final_board() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    // Gone from the live list at once: its page goes straight to the replay.
    config.linger = Duration::from_millis(50);
    let server = TestServer::start_with(config).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    let made = play_fast(&mut red, &mut black, 7, 10).await;
    assert_eq!(made, 10);
    let game = red.game;
    red.act(Action::Resign).await;
    red.until("the end", |e| {
        matches!(e, protocol::game::Event::GameEnded { .. })
    })
    .await;
    // Wait until it is off the live list (its page then replays the stored game).
    let base = format!("http://{}", server.addr);
    let id = game.to_string();
    for _ in 0..500 {
        let lobby = get_json(server.addr, "/api/lobby").await;
        let live = lobby["games"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["game"].to_string().trim_matches('"') == id);
        if !live {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let b = Browser::launch().await;
    b.goto(&format!("{base}/game/{id}")).await;
    b.wait_for(
        "document.body.dataset.mode === 'replay' && window.__tamsk.replay",
        "the replay",
    )
    .await;
    let expected = stored_final_view(&server, &id).await;
    assert_eq!(
        sorted(page_board(&b).await),
        sorted(view_board(&expected)),
        "the replay ends on the record's final board"
    );
    let status = b.eval("document.getElementById('status').innerText").await;
    assert!(
        status.as_str().unwrap().contains("wins"),
        "the result in words: {status}"
    );
    // The help is the replay's keys, not a player's.
    assert_eq!(b.eval("document.body.dataset.help").await, "replay");
    let help = b.eval("document.getElementById('help').innerText").await;
    let help = help.as_str().unwrap();
    for key in ["←", "→", "Home", "End", "space"] {
        assert!(help.contains(key), "the replay's key {key}: {help}");
    }
    assert!(
        !help.contains("Click one of your") && !help.contains("resign"),
        "no player's keys in a replay: {help}"
    );
    b.screenshot("replay-end").await;
    // Back to the start: the opening position, no ring anywhere.
    b.click("#r-start").await;
    let start = sorted(page_board(&b).await);
    assert!(start.iter().all(|(_, rings, _)| *rings == 0));
    assert_eq!(
        start.iter().filter(|(_, _, g)| !g.is_empty()).count(),
        6,
        "six hourglasses on their corners"
    );
    assert_eq!(
        start.iter().find(|(s, _, _)| s == "d1").unwrap().2,
        "X",
        "Red's X starts on d1"
    );
    // One step forward: Red's first move is on the board, its time on the scrubber.
    b.click("#r-next").await;
    let stepped = sorted(page_board(&b).await);
    assert_eq!(
        stepped.iter().map(|s| s.1).sum::<u64>(),
        1,
        "one ring dropped"
    );
    let t = b
        .eval("Number(document.getElementById('r-scrub').value)")
        .await;
    assert_eq!(
        t.as_u64(),
        Some(red.entries[0].at_ms),
        "the scrubber is at the first move's instant"
    );
    // The move list follows the frame shown, not the time (this game's moves share
    // milliseconds): its first line is the one played, marked and in sight (the list was
    // left scrolled to its end), the others greyed.
    let current = b
        .eval(
            "(() => { const ol = document.getElementById('moves'); \
             const c = [...ol.querySelectorAll('li.current')]; \
             if (c.length !== 1) return 'current: ' + c.length; \
             const visible = c[0].offsetTop >= ol.scrollTop \
               && c[0].offsetTop + c[0].offsetHeight <= ol.scrollTop + ol.clientHeight; \
             const items = [...ol.querySelectorAll('li')]; \
             return [c[0] === items[0], items.slice(1).every(l => l.classList.contains('future')), \
               visible]; })()",
        )
        .await;
    assert_eq!(current, serde_json::json!([true, true, true]), "{current}");
    b.screenshot("replay-step").await;
    // The sand at an instant between two entries comes from the frame before it.
    let lobby_ok = get_json(server.addr, &format!("/api/games/{id}/replay")).await;
    assert!(lobby_ok["replay"]["frames"].as_array().unwrap().len() > 10);
    // The terminal client's short id (#0c1d2e3f) of a recent game opens its replay.
    b.goto(&format!("{base}/game/%23{}", &id[id.len() - 8..]))
        .await;
    b.wait_for(
        &format!(
            "document.body.dataset.mode === 'replay' && document.body.dataset.game === '{id}' \
             && location.pathname === '/game/{id}'"
        ),
        "the short id to open the replay",
    )
    .await;
    b.assert_no_errors();
    b.close().await;
}
