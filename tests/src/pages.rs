//! Helpers of the browser tests (`tests/tests/browser_*.rs`): a guest watcher with a
//! replica, a legal move, the board as a page draws it and as the engine has it, and the
//! lobby's form filled for a game against the bot.

use std::time::{SystemTime, UNIX_EPOCH};

use protocol::game::Action;
use protocol::record::Record;
use protocol::view::GameView;
use protocol::wire::{ClientMessage, GameId, ServerMessage, PROTOCOL_VERSION};

use crate::browser::Browser;
use crate::{get_json, Client, Follower, TestServer};

/// One browser at a time: the latency figures mean nothing on two starved cores.
pub static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
        * 1000.0
}

/// A guest connection watching `game`, with a replica.
pub async fn watcher(server: &TestServer, game: GameId) -> Follower {
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
pub fn some_move(f: &Follower) -> Option<Action> {
    let turn = f.replica.turn();
    f.replica
        .legal_actions(turn)
        .into_iter()
        .find(|a| matches!(a, Action::Move { to, drop: true, .. } if !f.replica.is_full(*to)))
}

/// The board as the page draws it: per socket, its rings and its hourglass.
pub async fn page_board(b: &Browser) -> Vec<(String, u64, String)> {
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
pub fn view_board(view: &GameView) -> Vec<(String, u64, String)> {
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
pub async fn stored_final_view(server: &TestServer, game: &str) -> GameView {
    let stored = get_json(server.addr, &format!("/games/{game}")).await;
    let record: Record = serde_json::from_value(stored["record"].clone()).expect("a record");
    let replayed = record.replay().expect("the record replays");
    GameView::of(&replayed, &[])
}

pub fn sorted(mut v: Vec<(String, u64, String)>) -> Vec<(String, u64, String)> {
    v.sort();
    v
}

/// Fills the lobby's form for a game against the bot with `settings` and submits it;
/// returns the game id once the game page follows it as a player. The bot is the form's
/// default strength (normal).
pub async fn play_bot_from_lobby(b: &Browser, base: &str, name: &str, settings: &str) -> String {
    play_bot_level_from_lobby(b, base, name, settings, "normal").await
}

/// [`play_bot_from_lobby`] against the bot of strength `level` (easy, normal, hard): the
/// page asks for a level, and the level, not the server's `--bot-*` settings, sets how
/// the bot takes its time (`BotLevel::config`).
pub async fn play_bot_level_from_lobby(
    b: &Browser,
    base: &str,
    name: &str,
    settings: &str,
    level: &str,
) -> String {
    play_bot_from_form(b, base, name, settings, level, true).await
}

/// Takes the first open seek the lobby lists (already open in `b`) as the player `name`;
/// returns once the game page follows the game as a player.
pub async fn take_first_seek(b: &Browser, name: &str) {
    b.eval(&format!(
        "document.getElementById('name').value = {}; 1",
        serde_json::json!(name)
    ))
    .await;
    b.click("#seeks tbody tr button").await;
    b.wait_for(
        "document.body.dataset.mode === 'live' && document.body.dataset.seat !== ''",
        "the game page with a seat",
    )
    .await;
}

/// [`play_bot_level_from_lobby`], with the form's "rated" box ticked or not (unticked: a
/// casual game).
pub async fn play_bot_from_form(
    b: &Browser,
    base: &str,
    name: &str,
    settings: &str,
    level: &str,
    rated: bool,
) -> String {
    b.goto(&format!("{base}/")).await;
    b.eval(&format!(
        "document.getElementById('name').value = {n}; \
         document.getElementById('settings-json').value = {s}; \
         document.getElementById('bot-level').value = {l}; \
         document.getElementById('rated').checked = {rated}; 1",
        n = serde_json::json!(name),
        s = serde_json::json!(settings),
        l = serde_json::json!(level)
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

/// Plays up to `n` random moves (with drops, never onto a full socket) as fast as the
/// server takes them; returns how many were made. Unlike [`crate::play_random`] it lives
/// with the race of Levels 2-3 at that pace: a glass moved again a few milliseconds after
/// its flip has a few milliseconds of sand, and its death (perhaps a pass) may reach the
/// players only after the next move was sent, which the server then refuses. The refusal
/// is skipped and the move chosen again from the replica that the death brought up to date.
pub async fn play_fast(red: &mut Follower, black: &mut Follower, seed: u64, n: usize) -> usize {
    use protocol::game::Player;
    use protocol::wire::Change;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut made = 0;
    for _ in 0..n * 4 {
        if made == n || !red.replica.is_playing() {
            break;
        }
        let turn = red.replica.turn();
        let (mover, other) = if turn == Player::Red {
            (&mut *red, &mut *black)
        } else {
            (&mut *black, &mut *red)
        };
        let legal: Vec<Action> = mover
            .replica
            .legal_actions(turn)
            .into_iter()
            .filter(
                |a| matches!(a, Action::Move { to, drop: true, .. } if !mover.replica.is_full(*to)),
            )
            .collect();
        let Some(&action) = legal.choose(&mut rng) else {
            mover.next_event().await;
            other.catch_up_to(mover.seq).await;
            continue;
        };
        mover.act(action).await;
        let mut changed = false;
        loop {
            match mover.client.recv().await {
                ServerMessage::Event(ev) => {
                    mover.check(&ev);
                    let ours = matches!(&ev.change, Change::Play { entry, .. }
                        if matches!(&entry.kind, protocol::record::EntryKind::Act { action: a, .. } if *a == action));
                    if ours {
                        made += 1;
                        break;
                    }
                    changed = true;
                }
                ServerMessage::Error { .. } => {
                    if !changed {
                        // The change that made the move illegal is on its way.
                        mover.next_event().await;
                    }
                    break;
                }
                ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => {}
                other => panic!("expected an event or a refusal, got {other:?}"),
            }
        }
        other.catch_up_to(mover.seq).await;
    }
    made
}
