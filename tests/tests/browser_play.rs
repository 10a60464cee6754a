//! Playing in a real headless Chromium (`tests/src/browser.rs`) against the real server on
//! port 0: a reload (or a dropped connection) resumes the seat; a browser player plays a
//! whole game against the bot with the mouse, takes the rematch, and replays the first game
//! to the record's final board; keys flip the timer and a refusal is explained in words;
//! placement by click and by a typed move; an open seek is taken from the lobby. No
//! JavaScript error may reach the console; screenshots go to `target/screenshots/`.

use std::time::Duration;

use protocol::board::Square;
use protocol::game::{Action, Player};
use protocol::settings::{Level, Settings};
use protocol::view::GameView;
use protocol::wire::{ClientMessage, GameId, ServerMessage};
use serde_json::Value;
use tamsk_tests::browser::Browser;
use tamsk_tests::pages::*;
use tamsk_tests::{test_config, Client, Follower, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_resumes_the_players_seat() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    // A first move from a page that just loaded, on a loaded machine: no abort meanwhile.
    config.abort_ms = 10_000;
    // The server measures the browser's lag (websocket pings the browser answers itself).
    config.first_ping = Some(Duration::from_millis(100));
    config.ping_interval = Duration::from_millis(500);
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    // A named control, so rated unless asked otherwise: the form's "rated" box unticked
    // makes it casual, which the page says beside the names.
    let id = play_bot_from_form(&b, &base, "Reloader", r#"{"level":1}"#, "normal", false).await;
    b.wait_for(
        "document.getElementById('title').innerText.endsWith(' · casual')",
        "the game said to be casual",
    )
    .await;
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
    // A dropped connection (not a reload): the page connects again and resumes too. On
    // our turn, once the page has the bot's answer: nothing happens in the game meanwhile.
    while watch.replica.turn() != me {
        watch.next_event().await;
    }
    b.wait_for(
        &format!("Number(document.body.dataset.seq) >= {}", watch.seq),
        "the page to have the bot's answer",
    )
    .await;
    let resumes = b.eval("window.__tamsk.resumes").await.as_u64().unwrap();
    b.eval("window.__tamsk.session().ws.close(); 1").await;
    // Offline, the page says so until it is back (nothing can be played meanwhile).
    b.wait_for(
        "document.body.dataset.mode === 'connecting' && document.getElementById('controls').hidden \
         && document.getElementById('status').innerText.startsWith('Connection lost')",
        "the page offline",
    )
    .await;
    b.wait_for(
        &format!("window.__tamsk.resumes > {resumes} && document.body.dataset.mode === 'live'"),
        "the page to reconnect and resume",
    )
    .await;
    // Back, the status line is the game's again at once, with the resumption (it kept
    // "Connection lost" until the game's next event).
    let status = b.eval("document.getElementById('status').innerText").await;
    assert!(
        status.as_str().unwrap().contains("to move"),
        "the game's status line: {status}"
    );
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
    // A first move from a page that just loaded, on a loaded machine: no abort meanwhile.
    config.abort_ms = 10_000;
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
            // A player is told his clicks and keys.
            assert_eq!(b.eval("document.body.dataset.help").await, "player");
            let help = b.eval("document.getElementById('help').innerText").await;
            assert!(
                help.as_str()
                    .unwrap()
                    .contains("Click one of your hourglasses"),
                "{help}"
            );
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
    // The result is a sentence of its own, the watchers another.
    let (result, watchers) = status.split_once(" Watchers: ").expect("the watchers");
    assert!(result.ends_with('.'), "{status}");
    assert!(watchers.ends_with('.'), "{status}");
    // Nothing more can be played: no ring owed, the typed move and its button disabled,
    // and the help says what is left.
    b.wait_for(
        "document.getElementById('typed-move').disabled          && document.querySelector('#typed button').disabled          && document.body.dataset.help === 'over'",
        "the controls of a game that is over",
    )
    .await;
    let panels = b
        .eval("document.getElementById('p-red').innerText + document.getElementById('p-black').innerText")
        .await;
    assert!(!panels.as_str().unwrap().contains("owed"), "{panels}");
    b.screenshot("game-finished").await;
    // What the page kept from the events is the engine's game: the board, and every
    // glass's flips and death.
    watch.check_against_snapshot().await;
    assert_eq!(
        sorted(page_board(&b).await),
        sorted(view_board(&GameView::of(&watch.replica, &[])))
    );
    let page_glasses = b
        .eval(
            "Object.entries(window.__tamsk.state().glasses).map(([g, v]) => \
             [g, v.square, v.sand.top_ms, v.sand.since_ms, v.dead_at_ms])",
        )
        .await;
    let engine_glasses: Vec<Value> = watch
        .replica
        .glasses()
        .iter()
        .map(|g| {
            serde_json::json!([
                g.glass.to_string(),
                g.square.map(|s| s.to_string()),
                g.sand.top_ms,
                g.sand.since_ms,
                g.dead_at_ms
            ])
        })
        .collect();
    let mut page_glasses = page_glasses.as_array().unwrap().clone();
    page_glasses.sort_by_key(|v| v[0].as_str().unwrap().to_string());
    let mut engine_glasses = engine_glasses;
    engine_glasses.sort_by_key(|v| v[0].as_str().unwrap().to_string());
    assert_eq!(page_glasses, engine_glasses, "the sand of every glass");

    // A rematch (the bot always takes it) opens the new game's page, colours swapped.
    b.click("#b-rematch").await;
    let other_seat = if me == Player::Red { "black" } else { "red" };
    b.wait_for(
        &format!(
            "document.body.dataset.game !== '{id}' && document.body.dataset.mode === 'live' \
             && document.body.dataset.seat === '{other_seat}'"
        ),
        "the rematch's page",
    )
    .await;
    // Back on the finished game (still listed a while): its replay, from the button,
    // ends on the record's board.
    b.goto(&format!("{base}/game/{id}")).await;
    b.wait_for(
        "document.body.dataset.state === 'finished' && document.getElementById('to-replay')",
        "the finished game",
    )
    .await;
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
async fn keys_flip_the_timer_and_a_refused_action_is_explained_in_words() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    // A first move from a page that just loaded, on a loaded machine: no abort meanwhile.
    config.abort_ms = 10_000;
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    // The easy bot: it thinks 2.5 s over each move, so our flip lands on its turn before
    // it moves, and it leaves the opening alone, so it has not flipped the timer on us
    // first (the normal one flips 0.4 s into our turn: then our flip was refused as
    // "still running", the failure this test used to have one run in four).
    let id = play_bot_level_from_lobby(
        &b,
        &base,
        "Flipper",
        r#"{"level":3,"hourglass_ms":60000,"neutral_ms":20000}"#,
        "easy",
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
    // Our flip must land while the bot thinks on its turn: so we move first, after the
    // bot's opening move when we are Black.
    if me == Player::Black {
        watch
            .until("the bot's first move", |e| {
                matches!(e, protocol::game::Event::MoveReleased { .. })
            })
            .await;
    }
    {
        b.wait_for(
            &format!("Number(document.body.dataset.seq) >= {}", watch.seq),
            "the page to be up to date",
        )
        .await;
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
            rated: None,
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
    take_first_seek(&b, "Taker").await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_by_click_and_a_typed_move() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    config.abort_ms = 10_000;
    let server = TestServer::start_with(config).await;
    let b = Browser::launch().await;
    let base = format!("http://{}", server.addr);
    let id = play_bot_from_lobby(&b, &base, "Placer", r#"{"level":1,"setup":"placement"}"#).await;
    let seat = b.eval("document.body.dataset.seat").await;
    let seat = seat.as_str().unwrap().to_string();
    let me = if seat == "red" {
        Player::Red
    } else {
        Player::Black
    };
    let game: GameId = id.parse().expect("a game id");
    let mut watch = watcher(&server, game).await;
    for round in 0..2 {
        while watch.replica.turn() != me {
            watch.next_event().await;
        }
        b.wait_for(
            &format!("Number(document.body.dataset.seq) >= {}", watch.seq),
            "the page to be up to date",
        )
        .await;
        let place = watch
            .replica
            .legal_actions(me)
            .into_iter()
            .find(|a| matches!(a, Action::Place { drop: true, .. }))
            .expect("a placement");
        let Action::Place { glass, to, .. } = place else {
            unreachable!()
        };
        if round == 0 {
            // The button beside the hourglass, then the socket.
            b.click(&format!("#p-{seat} button.place")).await;
            let first = b
                .eval(&format!(
                    "document.querySelector('#p-{seat} button.place').innerText"
                ))
                .await;
            let chosen = first
                .as_str()
                .unwrap()
                .trim_start_matches("place ")
                .to_string();
            // The choice shows: its button pressed, the free sockets outlined.
            let shown = b
                .eval(&format!(
                    "[document.querySelector('#p-{seat} button.place').getAttribute('aria-pressed'), \
                     document.querySelector('.socket[data-square={to}]').getAttribute('class').includes('target'), \
                     [...document.querySelectorAll('.socket.target')].every(s => s.dataset.glass === '')]"
                ))
                .await;
            assert_eq!(shown, serde_json::json!(["true", true, true]), "{shown}");
            b.click(&format!(".socket[data-square={to}]")).await;
            let (_, placed) = watch
                .until(
                    "our placement",
                    |e| matches!(e, protocol::game::Event::Placed { player, .. } if *player == me),
                )
                .await;
            let protocol::game::Event::Placed {
                glass: g, to: t, ..
            } = placed
            else {
                unreachable!()
            };
            assert_eq!((g.to_string(), t), (chosen, to));
        } else {
            // Typed: "X@c3".
            b.click("#typed-move").await;
            b.eval(&format!(
                "document.getElementById('typed-move').value = '{glass}@{to}'; 1"
            ))
            .await;
            b.click("#typed button").await;
            let (_, placed) = watch
                .until(
                    "our typed placement",
                    |e| matches!(e, protocol::game::Event::Placed { player, .. } if *player == me),
                )
                .await;
            assert!(
                matches!(placed, protocol::game::Event::Placed { glass: g, to: t, .. } if g == glass && t == to)
            );
        }
    }
    // A typed line that is no move is explained, and nothing is sent.
    b.eval("document.getElementById('typed-move').value = 'hello'; 1")
        .await;
    b.click("#typed button").await;
    let error = b
        .wait_for(
            "document.getElementById('error').innerText",
            "the explanation",
        )
        .await;
    assert!(error.as_str().unwrap().contains("is not a move"), "{error}");
    b.screenshot("game-placement").await;
    b.assert_no_errors();
    b.close().await;
}

/// A full destination, where releasing loses (the rulebook's `full_socket: lose`), is drawn
/// apart from a safe one (`loses`, a red finer dash), and a click there asks first: the
/// dismissed question sends nothing (the safe move made next is the game's next move).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_destination_is_drawn_as_a_loss_and_asks_first() {
    let _one = ONE_BROWSER.lock().await;
    let mut config = test_config();
    config.abort_ms = 20_000;
    let server = TestServer::start_with(config).await;
    let mut opponent = Client::new_player(&server, "Opponent").await;
    opponent
        .send(&ClientMessage::Seek {
            settings: Settings::level(Level::One),
            rated: Some(false),
        })
        .await;
    assert!(matches!(
        opponent.recv().await,
        ServerMessage::Seeking { .. }
    ));
    let b = Browser::launch().await;
    b.goto(&format!("http://{}/", server.addr)).await;
    b.wait_for(
        "document.querySelector('#seeks tbody tr button') != null",
        "the open seek in the lobby",
    )
    .await;
    take_first_seek(&b, "Clicker").await;
    let mut opp = Follower::await_snapshot(opponent).await;
    let me = opp.seat().other();
    // The page's move by clicks, once it shows the position the opponent's replica has.
    async fn click_move(b: &Browser, opp: &mut Follower, me: Player, from: Square, to: Square) {
        b.wait_for(
            &format!("Number(document.body.dataset.seq) >= {}", opp.seq),
            "the page to be up to date",
        )
        .await;
        b.click(&format!(".socket[data-square={from}]")).await;
        b.click(&format!(".socket[data-square={to}]")).await;
        opp.until(
            "the page's move",
            |e| matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == me),
        )
        .await;
    }
    async fn opponent_moves(opp: &mut Follower) {
        let action = some_move(opp).expect("a move for the opponent");
        let them = opp.seat();
        opp.act(action).await;
        opp.until(
            "the opponent's move",
            |e| matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == them),
        )
        .await;
    }
    if opp.replica.turn() != me {
        opponent_moves(&mut opp).await;
    }
    // A move of ours that fills its destination, then that glass steps on to a socket
    // beside it: the socket it left is a full, free neighbour.
    let fills = |g: &protocol::game::Game| {
        g.legal_actions(me).into_iter().find_map(|a| match a {
            Action::Move {
                from,
                to,
                drop: true,
            } => {
                let mut after = g.clone();
                after.apply(me, a, g.now()).ok()?;
                (after.is_full(to) && !g.is_full(to)).then_some((from, to))
            }
            _ => None,
        })
    };
    let (from, full) = fills(&opp.replica).expect("a move that fills its socket");
    click_move(&b, &mut opp, me, from, full).await;
    opponent_moves(&mut opp).await;
    let on = opp
        .replica
        .legal_actions(me)
        .into_iter()
        .find_map(|a| match a {
            Action::Move {
                from,
                to,
                drop: true,
            } if from == full && !opp.replica.is_full(to) => Some(to),
            _ => None,
        })
        .expect("a step on from the full socket");
    click_move(&b, &mut opp, me, full, on).await;
    let them = opp.seat();
    let action = opp
        .replica
        .legal_actions(them)
        .into_iter()
        .find(|a| matches!(a, Action::Move { to, drop: true, .. } if *to != full && !opp.replica.is_full(*to)))
        .expect("a move for the opponent");
    opp.act(action).await;
    opp.until(
        "the opponent's move",
        |e| matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == them),
    )
    .await;
    b.wait_for(
        &format!("Number(document.body.dataset.seq) >= {}", opp.seq),
        "the page to be up to date",
    )
    .await;

    b.click(&format!(".socket[data-square={on}]")).await;
    let class = b
        .wait_for(
            &format!(
                "document.querySelector('.socket[data-square={full}]').getAttribute('class').includes('target') \
                 && document.querySelector('.socket[data-square={full}]').getAttribute('class')"
            ),
            "the full socket among the destinations",
        )
        .await;
    assert!(class.as_str().unwrap().contains("loses"), "{class}");
    let safe = b
        .eval(
            "[...document.querySelectorAll('.socket.target')].map(s => s.getAttribute('class') + ' ' + s.dataset.square)",
        )
        .await;
    let safe: Vec<String> = serde_json::from_value(safe).unwrap();
    let safe_target = safe
        .iter()
        .find(|c| !c.contains("loses"))
        .and_then(|c| c.split(' ').next_back())
        .expect("a safe destination too")
        .to_string();
    b.screenshot("game-full-destination").await;
    // Asked, answered no: nothing is sent, the glass stays selected.
    b.eval(
        "window.__asked = []; window.confirm = (m) => { window.__asked.push(m); return false; }; 1",
    )
    .await;
    b.click(&format!(".socket[data-square={full}]")).await;
    let asked = b.eval("window.__asked").await;
    let asked: Vec<String> = serde_json::from_value(asked).unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains(&full.to_string()) && asked[0].contains("loses"),
        "{asked:?}"
    );
    b.click(&format!(".socket[data-square={safe_target}]"))
        .await;
    let (ev, _) = opp
        .until(
            "the page's next move",
            |e| matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == me),
        )
        .await;
    let entry = ev.entry().expect("an entry");
    assert!(
        matches!(entry.kind, protocol::record::EntryKind::Act { action: Action::Move { from, to, .. }, .. }
            if from == on && to.to_string() == safe_target),
        "the safe move, not the full socket: {entry:?}"
    );
    assert!(opp.replica.is_playing(), "the game goes on");

    // A move in two steps from the page (rules, section 4): select, `s` picks it up,
    // a click puts it down.
    opponent_moves(&mut opp).await;
    b.wait_for(
        &format!("Number(document.body.dataset.seq) >= {}", opp.seq),
        "the page to be up to date",
    )
    .await;
    let Some(Action::Move { from, to, .. }) = some_move(&opp) else {
        panic!("a move for the page")
    };
    b.click(&format!(".socket[data-square={from}]")).await;
    b.key("s").await;
    opp.until(
        "the page's pick-up",
        |e| matches!(e, protocol::game::Event::MoveStarted { player, .. } if *player == me),
    )
    .await;
    b.wait_for(
        "document.body.dataset.held !== ''",
        "the page to show the hourglass in hand",
    )
    .await;
    b.click(&format!(".socket[data-square={to}]")).await;
    let (ev, _) = opp
        .until(
            "the page's release",
            |e| matches!(e, protocol::game::Event::MoveReleased { player, .. } if *player == me),
        )
        .await;
    assert!(
        matches!(
            ev.entry().expect("an entry").kind,
            protocol::record::EntryKind::Act {
                action: Action::Release { to: released },
                ..
            } if released == to
        ),
        "released where clicked: {ev:?}"
    );
    b.assert_no_errors();
    b.close().await;
}
