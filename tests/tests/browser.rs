//! The pages in a real headless Chromium (driven over the DevTools protocol, see
//! `tests/src/browser.rs`) against the real server on port 0: the lobby lists a live game,
//! a watcher's page shows each move within 200 ms of the players receiving it, a reload
//! resumes a player's seat, a browser player plays a whole game against the bot, a
//! finished game replays to the record's final board, the TV follows the most-watched
//! game. No JavaScript error may reach the console in any of them. Screenshots of every
//! page go to `target/screenshots/`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use protocol::game::{Action, Player};
use protocol::record::Record;
use protocol::settings::{Level, Settings};
use protocol::view::GameView;
use protocol::wire::{ClientMessage, GameId, ServerMessage, PROTOCOL_VERSION};
use serde_json::Value;
use tamsk_tests::browser::Browser;
use tamsk_tests::{get_json, start_game, test_config, Client, Follower, TestServer};

/// One browser at a time: the latency figures mean nothing on two starved cores.
static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
        * 1000.0
}

/// A guest connection watching `game`, with a replica.
async fn watcher(server: &TestServer, game: GameId) -> Follower {
    let mut c = Client::connect(server).await;
    c.send(&ClientMessage::Hello {
        version: PROTOCOL_VERSION,
        name: None,
        token: None,
        guest: true,
    })
    .await;
    assert!(matches!(c.recv().await, ServerMessage::GuestWelcome { .. }));
    c.send(&ClientMessage::Watch {
        game,
        after_seq: None,
    })
    .await;
    Follower::await_snapshot(c).await
}

/// A legal move with a drop, never onto a full socket, for whoever is on turn.
fn some_move(f: &Follower) -> Option<Action> {
    let turn = f.replica.turn();
    f.replica
        .legal_actions(turn)
        .into_iter()
        .find(|a| matches!(a, Action::Move { to, drop: true, .. } if !f.replica.is_full(*to)))
}

/// The board as the page draws it: per socket, its rings and its hourglass.
async fn page_board(b: &Browser) -> Vec<(String, u64, String)> {
    let v = b
        .eval(
            "[...document.querySelectorAll('.socket')].map(s => [s.dataset.square, \
             Number(s.dataset.rings), s.dataset.glass])",
        )
        .await;
    v.as_array()
        .expect("sockets")
        .iter()
        .map(|s| {
            (
                s[0].as_str().unwrap().to_string(),
                s[1].as_u64().unwrap(),
                s[2].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The same triples from a game view.
fn view_board(view: &GameView) -> Vec<(String, u64, String)> {
    view.board
        .iter()
        .map(|s| {
            (
                s.square.to_string(),
                u64::from(s.rings),
                s.glass.map_or(String::new(), |g| g.to_string()),
            )
        })
        .collect()
}

/// The final game of the stored record, replayed by the rules engine (as `tamsk replay`).
async fn stored_final_view(server: &TestServer, game: &str) -> GameView {
    let stored = get_json(server.addr, &format!("/games/{game}")).await;
    let record: Record = serde_json::from_value(stored["record"].clone()).expect("a record");
    let replayed = record.replay().expect("the record replays");
    GameView::of(&replayed, &[])
}

fn sorted(mut v: Vec<(String, u64, String)>) -> Vec<(String, u64, String)> {
    v.sort();
    v
}

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
    assert_eq!(moves.as_u64(), Some(13), "twelve moves and a flip");
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

/// Fills the lobby's form for a game against the bot with `settings` and submits it;
/// returns the game id once the game page follows it as a player.
async fn play_bot_from_lobby(b: &Browser, base: &str, name: &str, settings: &str) -> String {
    b.goto(&format!("{base}/")).await;
    b.eval(&format!(
        "document.getElementById('name').value = {n}; \
         document.getElementById('settings-json').value = {s}; 1",
        n = serde_json::json!(name),
        s = serde_json::json!(settings)
    ))
    .await;
    b.click("#play-button").await;
    b.wait_for(
        "document.body.dataset.mode === 'live' && document.body.dataset.seat !== ''",
        "the game page with a seat",
    )
    .await;
    let id = b.eval("document.body.dataset.game").await;
    id.as_str().expect("a game id").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_resumes_the_players_seat() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    config.bot.think_ms = 100;
    // The server measures the browser's lag (websocket pings the browser answers itself).
    config.first_ping = Some(Duration::from_millis(100));
    config.ping_interval = Duration::from_millis(500);
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    let id = play_bot_from_lobby(&b, &base, "Reloader", r#"{"level":1}"#).await;
    let seat = b.eval("document.body.dataset.seat").await;
    let game: GameId = id.parse().expect("a game id");
    let mut watch = watcher(&server, game).await;
    let me = if seat == "red" {
        Player::Red
    } else {
        Player::Black
    };
    // One move of ours before and one after the reload.
    for round in 0..2 {
        while watch.replica.turn() != me {
            watch.next_event().await;
        }
        let seq = watch.seq;
        b.wait_for(
            &format!("Number(document.body.dataset.seq) >= {seq}"),
            "the page to be up to date",
        )
        .await;
        let Some(Action::Move { from, to, .. }) = some_move(&watch) else {
            panic!("no move for us")
        };
        b.click(&format!(".socket[data-square={from}]")).await;
        b.click(&format!(".socket[data-square={to}]")).await;
        watch
            .until("our move", |e| {
                matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == me)
            })
            .await;
        if round == 0 {
            let before = watch.seq;
            b.wait_for(
                &format!("Number(document.body.dataset.seq) >= {before}"),
                "the page to have our move",
            )
            .await;
            b.reload().await;
            // It resumes where it was (join with after_seq) and still holds the seat.
            b.wait_for(
                &format!(
                    "document.body.dataset.mode === 'live' && document.body.dataset.seat === {seat} \
                     && window.__tamsk.resumed != null"
                ),
                "the page to resume the seat",
            )
            .await;
            let from_seq = b.eval("window.__tamsk.resumed").await;
            assert!(
                from_seq.as_u64().unwrap() >= before,
                "resumed after the events it had: {from_seq} >= {before}"
            );
        }
    }
    b.wait_for(
        &format!("/lag \\d+ ms/.test(document.getElementById('p-' + {seat}).innerText)"),
        "our lag shown beside our name",
    )
    .await;
    b.screenshot("game-after-reload").await;
    b.assert_no_errors();
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_player_plays_a_whole_game_against_the_bot_and_replays_it() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    config.bot.think_ms = 150;
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    let id = play_bot_from_lobby(
        &b,
        &base,
        "Clicker",
        r#"{"level":2,"hourglass_ms":4000,"turn_limit_ms":null}"#,
    )
    .await;
    let seat = b.eval("document.body.dataset.seat").await;
    let me = if seat == "red" {
        Player::Red
    } else {
        Player::Black
    };
    let game: GameId = id.parse().expect("a game id");
    let mut watch = watcher(&server, game).await;
    let mut moves = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while watch.replica.is_playing() {
        assert!(
            std::time::Instant::now() < deadline,
            "the game ends within 90 s"
        );
        let ours = watch.replica.turn() == me && watch.replica.held().is_none();
        let action = if ours { some_move(&watch) } else { None };
        let Some(Action::Move { from, to, .. }) = action else {
            watch.next_event().await;
            continue;
        };
        let seq = watch.seq;
        b.wait_for(
            &format!("Number(document.body.dataset.seq) >= {seq}"),
            "the page to be up to date",
        )
        .await;
        b.click(&format!(".socket[data-square={from}]")).await;
        b.click(&format!(".socket[data-square={to}]")).await;
        // Our move, or whatever came first (a glass of ours ran out meanwhile: try again).
        let before = watch.seq;
        while watch.seq == before {
            watch.next_event().await;
        }
        moves += 1;
        if moves == 3 {
            b.screenshot("game-playing").await;
        }
    }
    assert!(moves >= 3, "we moved {moves} times");
    b.wait_for(
        "document.body.dataset.state === 'finished'",
        "the page to show the end",
    )
    .await;
    let status = b.eval("document.getElementById('status').innerText").await;
    let status = status.as_str().unwrap();
    assert!(
        status.contains("wins") || status.contains("Draw"),
        "{status}"
    );
    b.screenshot("game-finished").await;

    // The replay, from the button on the finished game, ends on the record's board.
    b.click("#to-replay").await;
    b.wait_for(
        "document.body.dataset.mode === 'replay' && window.__tamsk.replay",
        "the replay",
    )
    .await;
    let expected = stored_final_view(&server, &id).await;
    assert_eq!(sorted(page_board(&b).await), sorted(view_board(&expected)));
    b.assert_no_errors();
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_replays_to_the_records_final_board() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    // Gone from the live list at once: its page goes straight to the replay.
    config.linger = Duration::from_millis(50);
    let server = TestServer::start_with(config).await;
    let (mut red, mut black) = start_game(&server, &Settings::blitz(Level::Three)).await;
    let made = tamsk_tests::play_random(&mut red, &mut black, 7, 10).await;
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
    b.screenshot("replay-step").await;
    // The sand at an instant between two entries comes from the frame before it.
    let lobby_ok = get_json(server.addr, &format!("/api/games/{id}/replay")).await;
    assert!(lobby_ok["replay"]["frames"].as_array().unwrap().len() > 10);
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
async fn keys_flip_the_timer_and_a_refused_action_is_explained_in_words() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    // The bot takes its time: our flip lands on its turn before it moves.
    config.bot.think_ms = 3000;
    config.bot.flip_after_ms = 60_000;
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    let id = play_bot_from_lobby(
        &b,
        &base,
        "Flipper",
        r#"{"level":3,"hourglass_ms":60000,"neutral_ms":20000}"#,
    )
    .await;
    let seat = b.eval("document.body.dataset.seat").await;
    let me = if seat == "red" {
        Player::Red
    } else {
        Player::Black
    };
    let game: GameId = id.parse().expect("a game id");
    let mut watch = watcher(&server, game).await;
    if me == Player::Red {
        let Some(Action::Move { from, to, .. }) = some_move(&watch) else {
            panic!("no first move")
        };
        b.click(&format!(".socket[data-square={from}]")).await;
        b.click(&format!(".socket[data-square={to}]")).await;
        watch
            .until("our move", |e| {
                matches!(e, protocol::game::Event::MoveReleased { .. })
            })
            .await;
    }
    b.wait_for(
        &format!(
            "document.body.dataset.turn === '{}'",
            me.other().to_string().to_lowercase()
        ),
        "the bot's turn on the page",
    )
    .await;
    b.key("f").await;
    watch
        .until(
            "our flip",
            |e| matches!(e, protocol::game::Event::NeutralFlipped { by, .. } if *by == me),
        )
        .await;
    let bot = if me == Player::Red { "Black" } else { "Red" };
    b.wait_for(
        &format!(
            "document.getElementById('neutral').innerText.includes('on {bot}') && \
             [...document.querySelectorAll('#deadlines li')].some(l => l.innerText.includes('15-second timer on {bot}'))"
        ),
        "the timer running on the bot, with its countdown",
    )
    .await;
    b.screenshot("game-flip").await;
    // A second flip while it runs is refused: the page says why, in words.
    b.key("f").await;
    let message = b
        .wait_for(
            "document.getElementById('error').innerText",
            "the refusal in words",
        )
        .await;
    let message = message.as_str().unwrap();
    assert!(
        message.contains(' ') && !message.contains("neutral_running"),
        "a sentence, not a code: {message}"
    );
    b.assert_no_errors();
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_shows_an_open_seek_and_takes_it() {
    let _one = ONE_BROWSER.lock().await;
    let server = TestServer::start().await;
    let mut seeker = Client::new_player(&server, "Seeker").await;
    seeker
        .send(&ClientMessage::Seek {
            settings: Settings::blitz(Level::One),
        })
        .await;
    assert!(matches!(seeker.recv().await, ServerMessage::Seeking { .. }));
    let b = Browser::launch().await;
    b.goto(&format!("http://{}/", server.addr)).await;
    let row = b
        .wait_for(
            "document.querySelector('#seeks tbody tr')?.innerText",
            "the open seek in the lobby",
        )
        .await;
    assert!(row.as_str().unwrap().contains("Seeker"), "{row}");
    assert!(row.as_str().unwrap().contains("Level 1"), "{row}");
    // Without a name the page asks for one, in words.
    b.click("#seeks tbody tr button").await;
    b.wait_for(
        "document.getElementById('play-status').innerText.includes('name')",
        "the page to ask for a name",
    )
    .await;
    b.eval("document.getElementById('name').value = 'Taker'; 1")
        .await;
    b.click("#seeks tbody tr button").await;
    b.wait_for(
        "document.body.dataset.mode === 'live' && document.body.dataset.seat !== ''",
        "the game page with a seat",
    )
    .await;
    let seeker = Follower::await_snapshot(seeker).await;
    let id = b.eval("document.body.dataset.game").await;
    assert_eq!(id.as_str().unwrap(), seeker.game.to_string());
    let title = b.eval("document.getElementById('title').innerText").await;
    assert!(
        title.as_str().unwrap().contains("Seeker") && title.as_str().unwrap().contains("Taker"),
        "{title}"
    );
    b.assert_no_errors();
    b.close().await;
}
