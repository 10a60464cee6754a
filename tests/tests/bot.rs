//! Playing the computer over a real socket: a whole Level 3 blitz game that the bot
//! finishes legally, its actions going through the game task like a person's.

use protocol::game::{Action, EndReason, Player, Status};
use protocol::record::EntryKind;
use protocol::settings::{Level, Settings};
use protocol::wire::{Change, ClientMessage, ServerMessage};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tamsk_tests::*;

fn quick_bot_config() -> server::Config {
    server::Config {
        bot: quick_bot(),
        ..test_config()
    }
}

/// The person's side of a game: a seeded random mover that always drops and shuffles
/// back and forth once out of rings. It acts whenever its replica says it is on turn,
/// but while the bot may flip the 15-second timer it waits for the bot to do so; an
/// action that crossed a deadline on the way is refused, and it reads on.
pub async fn play_against(me: &mut Follower, seed: u64, max_moves: u32) -> usize {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut refused = 0;
    let mut last: Option<(protocol::Square, protocol::Square)> = None;
    let mut sent_at_seq = None;
    while me.replica.is_playing() {
        assert!(
            me.replica.move_count() < max_moves,
            "the game should have ended"
        );
        let seat = me.seat();
        let mine = me.replica.turn() == seat
            && me.replica.held().is_none()
            && !me.replica.is_ending()
            && sent_at_seq != Some(me.seq)
            && me.replica.check(seat.other(), Action::Flip).is_err();
        if mine {
            let legal: Vec<Action> = me
                .replica
                .legal_actions(seat)
                .into_iter()
                .filter(|a| matches!(a, Action::Move { to, drop: true, .. } if !me.replica.is_full(*to)))
                .collect();
            let back = last.and_then(|(from, to)| {
                legal.iter().copied().find(
                    |a| matches!(a, Action::Move { from: f, to: t, .. } if *f == to && *t == from),
                )
            });
            let action = match back {
                Some(b) if me.replica.rings_left(seat) == 0 => Some(b),
                _ => legal.choose(&mut rng).copied(),
            };
            if let Some(action) = action {
                if let Action::Move { from, to, .. } = action {
                    last = Some((from, to));
                }
                me.act(action).await;
                sent_at_seq = Some(me.seq);
            }
        }
        match me.client.recv().await {
            ServerMessage::Event(ev) => me.check(&ev),
            ServerMessage::Error { .. } => refused += 1,
            ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    refused
}

#[tokio::test]
async fn a_whole_game_against_the_bot() {
    let server = TestServer::start_with(quick_bot_config()).await;
    let mut me = Client::new_player(&server, "Human").await;
    let settings = Settings::blitz(Level::Three);
    me.send(&ClientMessage::PlayBot {
        settings: settings.clone(),
        level: None,
        rated: None,
    })
    .await;
    let mut me = Follower::await_snapshot(me).await;
    let bot = me.seat().other();
    let bot_info = match bot {
        Player::Red => &me.snapshot.red,
        Player::Black => &me.snapshot.black,
    };
    assert_eq!(bot_info.name, "TAMSK bot");
    assert_eq!(me.snapshot.view.settings, settings);
    play_against(&mut me, 11, 1500).await;

    let Status::Finished { outcome } = me.replica.status().clone() else {
        panic!("the game finished, not {:?}", me.replica.status());
    };
    assert!(
        !matches!(outcome.reason, EndReason::FullSocket { player } if player == bot),
        "{outcome:?}"
    );
    // The bot played: moves with drops, and the 15-second timer on my turns.
    let bot_actions: Vec<Action> = me
        .log
        .iter()
        .filter_map(|ev| match &ev.change {
            Change::Play { entry, .. } => match entry.kind {
                EntryKind::Act { player, action, .. } if player == bot => Some(action),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let moves = bot_actions
        .iter()
        .filter(|a| matches!(a, Action::Move { drop: true, .. }))
        .count();
    assert!(moves >= 10, "the bot moved {moves} times");
    assert!(
        bot_actions.contains(&Action::Flip),
        "the bot uses the timer"
    );
    assert!(
        me.replica.rings_left(bot) < 32 - 10,
        "the bot drops its rings: {} left",
        me.replica.rings_left(bot)
    );
    eprintln!(
        "{} after {} moves",
        outcome.describe(),
        me.replica.move_count()
    );
    // The game is stored with the bot as a player.
    let v = get_json(server.addr, &format!("/games/{}", me.game)).await;
    assert_eq!(v["state"], "finished");
    let bot_side = if bot == Player::Red { "red" } else { "black" };
    assert_eq!(v[bot_side]["player_id"], "bot");
}

/// The bot always takes a rematch.
#[tokio::test]
async fn the_bot_takes_a_rematch() {
    let server = TestServer::start_with(quick_bot_config()).await;
    let mut me = Client::new_player(&server, "Human").await;
    me.send(&ClientMessage::PlayBot {
        settings: Settings::blitz(Level::One),
        level: None,
        rated: None,
    })
    .await;
    let mut me = Follower::await_snapshot(me).await;
    let first = me.game;
    let seat = me.seat();
    me.act(Action::Resign).await;
    me.until("end", |e| matches!(e, protocol::Event::GameEnded { .. }))
        .await;
    me.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    let me = Follower::await_snapshot(me.client).await;
    assert!(me.game > first);
    assert_eq!(me.seat(), seat.other(), "colours swapped");
}

/// The same bot as an external client over the protocol: it hosts a private game, a
/// person joins with the code, and the bot plays it to the end.
#[tokio::test]
async fn the_bot_plays_as_an_external_client() {
    let server = TestServer::start().await;
    let settings = Settings::blitz(Level::Three);
    let (bot, mut me) = hosting_bot(server.addr, server.ws_url(), &settings, "Human").await;
    let bot_seat = me.seat().other();
    play_against(&mut me, 5, 1500).await;
    let report = within("the bot's report", bot)
        .await
        .expect("bot task")
        .expect("the bot ran");
    assert_eq!(report.games.len(), 1);
    let (game, status) = &report.games[0];
    assert_eq!(*game, me.game);
    assert_eq!(status, me.replica.status(), "the bot saw the same end");
    assert!(matches!(status, Status::Finished { .. }));
    assert!(report.actions >= 10, "{report:?}");
    assert!(me.replica.rings_left(bot_seat) < 32 - 10);
}

/// The bot's connection drops during a game (its network; behind a load balancer, its
/// node dying): it opens a new one as the same player, takes its seat again from a fresh
/// snapshot and plays the game to its end.
#[tokio::test]
async fn the_bot_takes_its_seat_again_after_its_connection_drops() {
    let server = TestServer::start().await;
    let proxy = tamsk_tests::proxy::Cuttable::start(server.addr).await;
    let url = format!("ws://{}/ws", proxy.addr);
    let settings = Settings::blitz(Level::One);
    let (bot, mut me) = hosting_bot(server.addr, url, &settings, "Stayer").await;
    let bot_seat = me.seat().other();
    // Once the bot has acted (so it is in the game, not still waiting for it)...
    if me.seat() == Player::Red {
        let first = me
            .replica
            .legal_actions(Player::Red)
            .into_iter()
            .find(|a| matches!(a, Action::Move { drop: true, .. }))
            .expect("a first move");
        me.act(first).await;
    }
    me.until_change("the bot's first action", |c| {
        matches!(c, Change::Play { entry, .. } if matches!(entry.kind, EntryKind::Act { player, .. } if player == bot_seat))
    })
    .await;
    // ...its connection is cut: the game sees it leave and come back.
    assert_eq!(proxy.cut(), 1);
    me.until_presence("the bot away", bot_seat, false).await;
    me.until_presence("the bot back", bot_seat, true).await;
    play_against(&mut me, 6, 1500).await;
    let report = within("the bot's report", bot)
        .await
        .expect("bot task")
        .expect("the bot ran");
    assert_eq!(report.reconnects, 1);
    assert_eq!(proxy.accepted(), 2);
    assert_eq!(report.games.len(), 1);
    let (game, status) = &report.games[0];
    assert_eq!(*game, me.game);
    assert_eq!(status, me.replica.status(), "the bot saw the same end");
    assert!(matches!(status, Status::Finished { .. }), "{status:?}");
}

/// A person who leaves a game against the bot and does not come back loses it: the bot
/// claims the win once his grace runs out (no game waits forever).
#[tokio::test]
async fn the_bot_claims_the_win_when_its_opponent_is_gone() {
    let server = TestServer::start_with(quick_bot_config()).await;
    let mut me = Client::new_player(&server, "Quitter").await;
    me.send(&ClientMessage::PlayBot {
        settings: Settings::blitz(Level::One),
        level: None,
        rated: None,
    })
    .await;
    let mut me = Follower::await_snapshot(me).await;
    let seat = me.seat();
    let mut watcher = Client::new_player(&server, "Wes").await;
    watcher
        .send(&ClientMessage::Watch {
            game: me.game,
            after_seq: None,
        })
        .await;
    let mut watcher = Follower::await_snapshot(watcher).await;
    // One move each, so that the game is not aborted for a missing first move.
    while me.replica.moves_made(seat) == 0 || me.replica.moves_made(seat.other()) == 0 {
        if me.replica.turn() == seat && me.replica.moves_made(seat) == 0 {
            let from = if seat == Player::Red { "d1" } else { "a1" };
            let to = if seat == Player::Red { "d2" } else { "b1" };
            me.act(mv(from, to, true)).await;
        }
        me.next_event().await;
    }
    me.client.close().await;
    let (_, ended) = watcher
        .until("the end", |e| {
            matches!(e, protocol::Event::GameEnded { .. })
        })
        .await;
    let protocol::Event::GameEnded { outcome, .. } = ended else {
        unreachable!()
    };
    assert_eq!(outcome.reason, EndReason::Abandoned { player: seat });
    assert_eq!(outcome.winner, Some(seat.other()));
}
