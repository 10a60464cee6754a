//! Watching in a real headless Chromium (`tests/src/browser.rs`) against the real server on
//! port 0: the lobby lists a live game, its page shows each move within 200 ms of the
//! players receiving it with the engine's sand, on a phone's screen too; the TV follows the
//! most-watched game, then the next; ratings show as players read them (`1500?`), every
//! bound is counted down, a watcher is told what applies to him, and a game id that is no
//! game's is said in words (a short id finds its game). No JavaScript error may reach the
//! console; screenshots go to `target/screenshots/`.

use std::time::Duration;

use protocol::game::{Action, Player};
use protocol::rating::TimeControl;
use protocol::settings::{Level, Settings};
use protocol::view::GameView;
use protocol::wire::ClientMessage;
use serde_json::Value;
use tamsk_tests::browser::Browser;
use tamsk_tests::pages::*;
use tamsk_tests::{get_json, start_game, test_config, Client, Follower, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_lists_a_live_game_and_its_watcher_sees_each_move_within_200_ms() {
    let _one = ONE_BROWSER.lock().await;
    let server = TestServer::start().await;
    // Level 3 with time to spare: the sand runs, nothing dies during the test.
    let settings = Settings {
        hourglass_ms: 60_000,
        neutral_ms: 20_000,
        ..Settings::blitz(Level::Three)
    };
    let (mut red, mut black) = start_game(&server, &settings).await;
    let game = red.game;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);

    b.goto(&format!("{base}/")).await;
    let row = format!("#live-games tr[data-game='{game}']");
    let text = b
        .wait_for(
            &format!("document.querySelector(\"{row}\")?.innerText"),
            "the live game in the lobby",
        )
        .await;
    let text = text.as_str().unwrap();
    assert!(text.contains(&red.client.name), "{text}");
    assert!(text.contains(&black.client.name), "{text}");
    assert!(text.contains("Level 3"), "{text}");
    b.screenshot("lobby").await;

    // Watch it from the lobby's link.
    b.click(&format!("{row} a")).await;
    b.wait_for(
        "document.body.dataset.mode === 'live' && document.body.dataset.seq === '0'",
        "the game page to follow the game",
    )
    .await;
    let mut latencies = Vec::new();
    for step in 0..13 {
        // Twelve moves, and the 15-second timer flipped by the waiting player at step 5.
        let on_turn = red.replica.turn() == Player::Red;
        let (action, red_acts) = if step == 5 {
            (Action::Flip, !on_turn)
        } else {
            (some_move(&red).expect("a move"), on_turn)
        };
        let (mover, other) = if red_acts {
            (&mut red, &mut black)
        } else {
            (&mut black, &mut red)
        };
        mover.act(action).await;
        mover.next_event().await;
        // The players have it: the mover first, then his opponent.
        let received = epoch_ms();
        other.catch_up_to(mover.seq).await;
        let seq = mover.seq;
        let applied = b
            .wait_for(
                &format!("window.__tamsk.applied[{seq}]"),
                "the page to show the move",
            )
            .await
            .as_f64()
            .expect("a time");
        latencies.push(applied - received);
        let Action::Move { to, .. } = action else {
            continue;
        };
        let glass = b
            .eval(&format!(
                "document.querySelector('.socket[data-square={to}]').dataset.glass"
            ))
            .await;
        assert_eq!(
            glass.as_str(),
            Some(mover.replica.occupant(to).unwrap().to_string().as_str()),
            "the moved hourglass is drawn on {to}"
        );
    }
    let worst = latencies.iter().cloned().fold(f64::MIN, f64::max);
    let mut sorted_lat = latencies.clone();
    sorted_lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "event -> watcher's page: median {:.1} ms, worst {:.1} ms over {} events",
        sorted_lat[sorted_lat.len() / 2],
        worst,
        latencies.len()
    );
    assert!(
        worst < 200.0,
        "every move within 200 ms of the players: {latencies:?}"
    );
    // The move list has every move, and the status line says who is to move.
    let moves = b
        .eval("document.querySelectorAll('#moves li').length")
        .await;
    if moves.as_u64() != Some(13) {
        // Once in CI (14 lines, never here in 15 runs): what the page listed, to tell why.
        let listed = b
            .eval("[...document.querySelectorAll('#moves li')].map(l => l.innerText)")
            .await;
        panic!("twelve moves and a flip, not {moves}: {listed}");
    }
    // The sand the page draws comes from the same instants as the engine's: every
    // glass's flip (top and instant), and the timer's.
    let page_sand = b
        .eval(
            "(() => { const st = window.__tamsk.state(); \
             return { glasses: Object.fromEntries(Object.entries(st.glasses).map(([g, v]) => \
             [g, [v.square, v.sand.top_ms, v.sand.since_ms, v.started, v.dead_at_ms]])), \
             neutral: [st.neutral.sand.top_ms, st.neutral.sand.since_ms] }; })()",
        )
        .await;
    for g in red.replica.glasses() {
        assert_eq!(
            page_sand["glasses"][g.glass.to_string()],
            serde_json::json!([
                g.square.map(|s| s.to_string()),
                g.sand.top_ms,
                g.sand.since_ms,
                g.started,
                g.dead_at_ms
            ]),
            "glass {}",
            g.glass
        );
    }
    let neutral = red.replica.neutral().sand;
    assert_eq!(
        page_sand["neutral"],
        serde_json::json!([neutral.top_ms, neutral.since_ms])
    );
    assert!(neutral.top_ms > 0, "the timer was flipped");
    let status = b.eval("document.getElementById('status').innerText").await;
    assert!(status.as_str().unwrap().contains("to move"), "{status}");
    assert!(
        status.as_str().unwrap().contains("Watchers: 1"),
        "the page itself watches: {status}"
    );
    assert_eq!(
        sorted(page_board(&b).await),
        sorted(view_board(&GameView::of(&red.replica, &[]))),
        "the page's board is the game's"
    );
    b.screenshot("game-watch").await;

    // A phone-sized screen: everything fits across.
    b.viewport(390, 844, true).await;
    b.wait_for(
        "document.documentElement.scrollWidth <= window.innerWidth + 1",
        "the page to fit a phone's width",
    )
    .await;
    b.screenshot("game-phone").await;
    b.assert_no_errors();
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tv_shows_the_most_watched_game_then_the_next() {
    let _one = ONE_BROWSER.lock().await;
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::One);
    let (mut quiet, mut quiet_black) = start_game(&server, &settings).await;
    let (mut busy, mut busy_black) = start_game(&server, &settings).await;
    // Both players moved in both games: neither is aborted for want of a first move.
    assert_eq!(
        tamsk_tests::play_random(&mut quiet, &mut quiet_black, 1, 2).await,
        2
    );
    assert_eq!(
        tamsk_tests::play_random(&mut busy, &mut busy_black, 2, 2).await,
        2
    );
    let _fan = watcher(&server, busy.game).await;
    // The lobby counts the watcher (counts go out at most every 500 ms).
    let busy_id = busy.game.to_string();
    let mut counted = false;
    for _ in 0..300 {
        let lobby = get_json(server.addr, "/api/lobby").await;
        counted = lobby["games"].as_array().unwrap().iter().any(|g: &Value| {
            g["game"].to_string().trim_matches('"') == busy_id && g["watchers"] == 1
        });
        if counted {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(counted, "the lobby counts the watcher");
    let b = Browser::launch().await;
    b.goto(&format!("http://{}/tv", server.addr)).await;
    b.wait_for(
        &format!(
            "document.body.dataset.game === '{busy_id}' && document.body.dataset.mode === 'live'"
        ),
        "the TV to show the most-watched game",
    )
    .await;
    b.screenshot("tv").await;
    busy.act(Action::Resign).await;
    let quiet_id = quiet.game.to_string();
    b.wait_for(
        &format!(
            "document.body.dataset.game === '{quiet_id}' && document.body.dataset.mode === 'live'"
        ),
        "the TV to move on to the next game",
    )
    .await;
    b.assert_no_errors();
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_deadlines_and_the_watchers_help_show_and_a_bad_game_id_is_said_in_words() {
    let _one = ONE_BROWSER.lock().await;
    // A rated game at a named control, with the rules page's own bounds: 30 s for a first
    // move, and without a turn limit the idle bound of 5 minutes.
    let settings = TimeControl::Blitz.settings(Level::Three);
    let mut config = test_config();
    config.abort_ms = settings.abort_ms;
    config.late_release_ms = settings.late_release_ms;
    let server = TestServer::start_with(config).await;
    let (mut red, mut black) = start_game(&server, &settings).await;
    let id = red.game.to_string();
    let first = some_move(&red).expect("a first move");
    red.act(first).await;
    red.next_event().await;
    black.catch_up_to(red.seq).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);

    // The lobby: each player's rating as players read it, provisional with a `?`.
    b.goto(&format!("{base}/")).await;
    let row = b
        .wait_for(
            &format!("document.querySelector(\"#live-games tr[data-game='{id}']\")?.innerText"),
            "the rated game in the lobby",
        )
        .await;
    let row = row.as_str().unwrap();
    assert!(
        row.contains(&format!("{} (1500?)", red.client.name))
            && row.contains(&format!("{} (1500?)", black.client.name)),
        "{row}"
    );
    assert!(!row.contains("object"), "{row}");

    // The game page: the ratings beside the names, every bound counted down (Black's
    // first move before the abort, his turn's idle bound), and the help of a watcher.
    b.goto(&format!("{base}/game/{id}")).await;
    b.wait_for(
        "document.body.dataset.mode === 'live' \
         && document.getElementById('p-red').innerText.includes('rating')",
        "the game page with the players",
    )
    .await;
    let title = b.eval("document.getElementById('title').innerText").await;
    assert!(
        title.as_str().unwrap().ends_with(" · rated blitz"),
        "rated, in its control: {title}"
    );
    for p in ["red", "black"] {
        let panel = b
            .eval(&format!("document.getElementById('p-{p}').innerText"))
            .await;
        let panel = panel.as_str().unwrap();
        assert!(
            panel.contains("rating 1500?") && !panel.contains("object"),
            "{panel}"
        );
    }
    let deadlines = b
        .wait_for(
            "(() => { const t = document.getElementById('deadlines').innerText; \
             return t.includes('idle bound') && t; })()",
            "the idle bound among the deadlines",
        )
        .await;
    let deadlines = deadlines.as_str().unwrap();
    assert!(
        deadlines.contains("Black's first move, or the game is aborted: "),
        "{deadlines}"
    );
    assert!(
        deadlines.contains("Black's turn, idle bound: 4:"),
        "{deadlines}"
    );
    // The page's countdowns of drop windows, from a state as the page keeps it (Black on
    // turn): a penalty ring owed goes within the mover's window, so it is counted down also
    // once his own ring is down (a move with its drop left only it open, and nothing was
    // shown); a grace that ended without the drop says the claim is open; the page's own
    // drop is counted down to the server's instant less the one-way delay.
    let windows = b
        .eval(
            "(() => { const st = window.__tamsk.state(); \
             const at = (w) => TamskDeadlines.list(Object.assign({}, st, { \
               windows: { red: w, black: null }, neutral: { target: null } }), {}, null, 1500) \
               .filter((l) => l.startsWith('Red may') || l.startsWith('Red did')); \
             const w = { square: 'd2', opened_ms: 1000, dropped: true }; \
             return [ \
               at(Object.assign({}, w, { drop_open: false, penalty_open: true })), \
               at(Object.assign({}, w, { drop_open: true, penalty_open: true })), \
               at(Object.assign({}, w, { drop_open: false, penalty_open: false })), \
               at(Object.assign({}, w, { drop_open: false, penalty_open: false, dropped: false })), \
               TamskDeadlines.list(Object.assign({}, st, { neutral: { target: null }, windows: { \
                 red: Object.assign({}, w, { drop_open: true, penalty_open: false, claim_opens_ms: 3000, \
                   claim_allowed: false }), black: null } }), {}, 'red', 1500, 200) \
                 .filter((l) => l.startsWith('Red may'))]; })()",
        )
        .await;
    let grace = format!("{:.1} s", (settings.drop_grace_ms as f64 - 500.0) / 1000.0);
    assert_eq!(
        windows,
        serde_json::json!([
            [format!("Red may drop the penalty ring: {grace}")],
            [format!(
                "Red may drop on d2 (and the penalty ring): {grace}, then Black may claim"
            )],
            [],
            ["Red did not drop on d2: Black may claim it now"],
            // The page's own drop, by the server's 3,000 less the way there (200 ms).
            ["Red may drop on d2: 1.3 s"]
        ]),
        "{windows}"
    );
    let help = b.eval("document.getElementById('help').innerText").await;
    let help = help.as_str().unwrap();
    assert_eq!(b.eval("document.body.dataset.help").await, "watcher");
    assert!(
        help.contains("watching")
            && !help.contains("Click one of your")
            && !help.contains("resign"),
        "a watcher is not told a player's keys: {help}"
    );
    b.screenshot("game-rated").await;

    // The terminal client's short id (the last 8 hex digits) finds the live game.
    let short = &id[id.len() - 8..];
    b.goto(&format!("{base}/game/{short}")).await;
    b.wait_for(
        &format!("document.body.dataset.game === '{id}' && document.body.dataset.mode === 'live'"),
        "the short id to open the game",
    )
    .await;
    let path = b.eval("location.pathname").await;
    assert_eq!(path, format!("/game/{id}").as_str());

    // The TV: the same ratings, and its own help.
    b.goto(&format!("{base}/tv")).await;
    b.wait_for(
        &format!(
            "document.body.dataset.game === '{id}' && document.body.dataset.mode === 'live' \
             && document.getElementById('p-black').innerText.includes('rating 1500?')"
        ),
        "the TV with the ratings",
    )
    .await;
    assert_eq!(b.eval("document.body.dataset.help").await, "tv");
    let panel = b.eval("document.getElementById('p-red').innerText").await;
    assert!(!panel.as_str().unwrap().contains("object"), "{panel}");

    b.assert_no_errors();

    // Ids that are no game's: said in words, without an empty board.
    for bad in [
        "c2c2973f".to_string(),
        "nonexistent".to_string(),
        "0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f".to_string(),
    ] {
        b.goto(&format!("{base}/game/{bad}")).await;
        b.wait_for(
            "document.body.dataset.mode === 'missing'",
            "the page to say there is no such game",
        )
        .await;
        let error = b.eval("document.getElementById('error').innerText").await;
        let error = error.as_str().unwrap();
        assert!(
            error.contains(&format!("No game has the id “{bad}”")) && error.contains("full id"),
            "{error}"
        );
        assert!(
            !error.contains("UUID") && !error.contains("parsing") && !error.contains("bad watch"),
            "no parser's words: {error}"
        );
        let board_shown = b
            .eval("document.getElementById('board').offsetParent !== null")
            .await;
        assert_eq!(board_shown, false, "no empty board for {bad}");
        assert_eq!(
            b.eval("document.getElementById('title').innerText").await,
            "No such game"
        );
    }
    b.screenshot("game-missing").await;
    // The one failed request expected: the replay of the unknown full id (404, which told
    // the page there is no such game either).
    b.errors.lock().expect("errors").retain(|e| {
        !(e.contains("404") && e.contains("/api/games/0193a3f0-7c1e-7d3a-9f2b-3f9a0c1d2e3f/replay"))
    });
    b.assert_no_errors();
    b.close().await;
}

/// On a phone the lobby fits across: with the longest names a player may have in every
/// table (a live game, an open seek, finished games), nothing is wider than the screen
/// and every link is on it (the recent games' "replay" links were off the right edge).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_fits_a_phone_with_the_longest_names() {
    let _one = ONE_BROWSER.lock().await;
    let server = TestServer::start().await;
    // Names of 24 characters, the most a name may have.
    let long = |n: usize| format!("Bartholomew Abernathy {n:02}");
    let settings = Settings::blitz(Level::Three);
    let mut live = Vec::new();
    for g in 0..4 {
        let mut x = Client::new_player(&server, &long(2 * g)).await;
        let mut y = Client::new_player(&server, &long(2 * g + 1)).await;
        for c in [&mut x, &mut y] {
            c.send(&ClientMessage::Seek {
                settings: settings.clone(),
                rated: None,
            })
            .await;
        }
        let mut x = Follower::await_snapshot(x).await;
        let _y = Follower::await_snapshot(y).await;
        if g < 3 {
            // Finished: listed among the recent games, with its result.
            x.act(Action::Resign).await;
            x.until("the end", |e| {
                matches!(e, protocol::game::Event::GameEnded { .. })
            })
            .await;
        } else {
            live.push((x, _y));
        }
    }
    let mut seeker = Client::new_player(&server, &long(99)).await;
    seeker
        .send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::One),
            rated: None,
        })
        .await;
    let b = Browser::launch().await;
    b.viewport(390, 844, true).await;
    b.goto(&format!("http://{}/", server.addr)).await;
    b.wait_for(
        "document.querySelectorAll('#recent tbody tr').length >= 3 \
         && document.querySelectorAll('#live-games tbody tr').length >= 1 \
         && document.querySelectorAll('#seeks tbody tr').length >= 1",
        "every table filled",
    )
    .await;
    b.screenshot("lobby-phone").await;
    b.eval("document.getElementById('recent').scrollIntoView(); 1")
        .await;
    b.screenshot("lobby-phone-recent").await;
    let width = b
        .eval("[document.documentElement.scrollWidth, window.innerWidth]")
        .await;
    let (scroll, inner) = (width[0].as_f64().unwrap(), width[1].as_f64().unwrap());
    assert!(
        scroll <= inner + 1.0,
        "the page is {scroll} px wide in {inner}"
    );
    let off = b
        .eval(
            "[...document.querySelectorAll('main a, main button')] \
             .filter(e => e.offsetParent !== null && e.getBoundingClientRect().right > window.innerWidth + 1) \
             .map(e => e.innerText)",
        )
        .await;
    assert_eq!(
        off,
        serde_json::json!([]),
        "links and buttons off the screen"
    );
    b.assert_no_errors();
    b.close().await;
}
