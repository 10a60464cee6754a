//! The protocol says what the server does (issue 12, section 4): each documented promise
//! of `docs/PROTOCOL.md` checked over real sockets.

use protocol::game::{Action, Event, Player};
use protocol::settings::{Level, Settings};
use tamsk_tests::*;

/// `sand.neutral.target` names the player the 15-second timer judges, and becomes `null`
/// once it judges nobody (his turn ended), even while its sand still runs.
#[tokio::test]
async fn the_neutral_target_is_null_once_it_judges_nobody() {
    let server = TestServer::start().await;
    let settings = Settings {
        neutral_ms: 5_000,
        ..Settings::blitz(Level::Three)
    };
    let (mut red, mut black) = start_game(&server, &settings).await;
    red.act(mv("d1", "d2", true)).await;
    red.until("Red's move", |e| {
        matches!(
            e,
            Event::TurnStarted {
                player: Player::Black,
                ..
            }
        )
    })
    .await;
    red.act(Action::Flip).await;
    let (flip, _) = red
        .until("flip", |e| matches!(e, Event::NeutralFlipped { .. }))
        .await;
    let judged = flip.sand.neutral.target.expect("the timer judges Black");
    assert_eq!(judged.0, Player::Black);
    black.catch_up_to(red.seq).await;
    // Black moves at once: his turn is over, the sand runs on, and judges nobody.
    black.act(mv("a1", "b1", true)).await;
    let (moved, _) = black
        .until("Black's move", |e| matches!(e, Event::MoveReleased { .. }))
        .await;
    assert_eq!(moved.sand.neutral.target, None, "{:?}", moved.sand.neutral);
    assert!(
        moved.sand.neutral.sand.remaining(moved.now_ms) > 0,
        "the sand still runs"
    );
    let v = serde_json::to_value(&moved.sand).unwrap();
    assert!(v["neutral"]["target"].is_null(), "{v}");
}
