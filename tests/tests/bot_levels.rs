//! The bot level a player chooses in `play_bot` reaches the bot seat, over real sockets.

use protocol::bot::BotLevel;
use protocol::game::{Action, Player};
use protocol::settings::{Level, Settings};
use protocol::wire::{ClientMessage, ServerMessage};
use protocol::Event;
use tamsk_tests::*;
use tokio::time::{timeout_at, Duration, Instant};

/// The server's own default bot flips the 15-second timer 5 ms into its opponent's turn,
/// opening or not: whatever differs comes from the level asked for.
fn eager_flipper() -> server::Config {
    server::Config {
        bot: protocol::bot::BotConfig {
            think_ms: 15,
            margin_ms: 60,
            flip_after_ms: 5,
            ..Default::default()
        },
        ..test_config()
    }
}

/// A Level 3 game against the bot at `level`, read until it is my turn with the bot
/// free to flip the timer against me.
async fn my_turn_against(server: &TestServer, name: &str, level: Option<BotLevel>) -> Follower {
    let mut me = Client::new_player(server, name).await;
    me.send(&ClientMessage::PlayBot {
        settings: Settings::level(Level::Three),
        level,
        rated: None,
    })
    .await;
    my_turn(Follower::await_snapshot(me).await).await
}

/// Reads on until it is my turn with the bot free to flip the timer against me.
async fn my_turn(mut me: Follower) -> Follower {
    let (seat, bot) = (me.seat(), me.seat().other());
    while !(me.replica.turn() == seat && me.replica.check(bot, Action::Flip).is_ok()) {
        within("my turn", me.next_event()).await;
    }
    me
}

fn flips_by(me: &Follower, bot: Player) -> usize {
    me.log
        .iter()
        .flat_map(engine_events)
        .filter(|e| matches!(e, Event::NeutralFlipped { by, .. } if *by == bot))
        .count()
}

#[tokio::test]
async fn an_easy_bot_leaves_the_timer_alone_in_the_opening() {
    let server = TestServer::start_with(eager_flipper()).await;

    // Without a level: the server's default, which flips at once.
    let mut me = my_turn_against(&server, "Control", None).await;
    let bot = me.seat().other();
    me.until(
        "the default bot's flip",
        |e| matches!(e, Event::NeutralFlipped { by, .. } if *by == bot),
    )
    .await;

    // Easy: my first turn passes 1.5 s (300 times the default's delay) without a flip.
    let mut me = my_turn_against(&server, "Beginner", Some(BotLevel::Easy)).await;
    no_flip_on_my_first_turn(&mut me).await;

    // The rematch is against the same easy bot.
    let first = me.game;
    me.act(Action::Resign).await;
    me.until("the end", |e| matches!(e, Event::GameEnded { .. }))
        .await;
    me.client
        .send(&ClientMessage::Rematch { game: first })
        .await;
    let mut me = my_turn(Follower::await_snapshot(me.client).await).await;
    assert!(me.game > first);
    no_flip_on_my_first_turn(&mut me).await;
}

/// My first turn, with the bot free to flip, passes 1.5 s (300 times the server's
/// default delay) without its flip.
async fn no_flip_on_my_first_turn(me: &mut Follower) {
    let bot = me.seat().other();
    assert_eq!(me.replica.moves_made(me.seat()), 0, "still the opening");
    let quiet_until = Instant::now() + Duration::from_millis(1_500);
    while let Ok(msg) = timeout_at(quiet_until, me.client.recv()).await {
        match msg {
            ServerMessage::Event(ev) => me.check(&ev),
            ServerMessage::Watchers { .. } | ServerMessage::Lag { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(flips_by(me, bot), 0, "the easy bot flipped in the opening");
    assert_eq!(me.replica.turn(), me.seat(), "still my turn");
}

#[tokio::test]
async fn a_level_that_does_not_exist_is_refused_and_starts_nothing() {
    let server = TestServer::start_with(eager_flipper()).await;
    let mut me = Client::new_player(&server, "Typo").await;
    me.send_raw(r#"{"type":"play_bot","settings":{},"level":"expert"}"#)
        .await;
    let why = me.expect_error("bad_bot_level").await;
    assert!(
        why.contains("\"expert\"") && why.contains("\"hard\""),
        "{why}"
    );
    // Nothing started: no snapshot before the pong, no live game.
    me.sync().await;
    me.send(&ClientMessage::ListGames).await;
    match me.recv().await {
        ServerMessage::Games { games } => assert!(games.is_empty(), "{games:?}"),
        other => panic!("expected the games, got {other:?}"),
    }
    // A valid level right after is served.
    me.send_raw(r#"{"type":"play_bot","settings":{},"level":"hard"}"#)
        .await;
    let me = Follower::await_snapshot(me).await;
    assert_eq!(me.snapshot.view.settings.level, Level::Three);
}
