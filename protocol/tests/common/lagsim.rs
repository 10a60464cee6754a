//! A Level 3 game in memory in which Red is `lag_ms` (round trip) away from the server and
//! answers every flip of the 15-second timer as late as he dares: `margin_ms` before it
//! runs out as he sees it (his first move comes at once). Black sits next to the server,
//! flips the timer at the start of each of Red's later turns and moves at once. Shared by the lag tests and the lag benchmark.

use protocol::game::{Action, ActionError, Event, ForfeitReason, Game, Player};
use protocol::settings::{Level, Settings};

/// What one of Red's turns came to.
#[derive(Clone, Copy, Debug)]
pub struct RedTurn {
    pub comp_ms: u64,
    pub quota_after_ms: u64,
    /// The timer forfeited the turn before the move arrived.
    pub forfeited: bool,
}

/// The first legal move that does not lose on a full socket.
fn first_move(game: &Game, player: Player) -> Option<Action> {
    game.legal_actions(player)
        .into_iter()
        .find(|a| matches!(a, Action::Move { drop: true, to, .. } if !game.is_full(*to)))
}

/// Plays `turns` of Red's turns (fewer if the game ends).
pub fn simulate(lag_ms: u64, margin_ms: u64, turns: usize) -> Vec<RedTurn> {
    let settings = Settings::level(Level::Three);
    let neutral = settings.neutral_ms;
    let mut game = Game::new(settings);
    game.set_lag(Player::Red, lag_ms);
    let mut out = Vec::new();
    let mut now = 0;
    while out.len() < turns && game.is_playing() {
        if game.turn() == Player::Black {
            now = now.max(game.now()) + 1;
            game.advance(now);
            let Some(mv) = first_move(&game, Player::Black) else {
                break;
            };
            game.apply(Player::Black, mv, now).expect("Black's move");
            continue;
        }
        if game.moves_made(Player::Red) == 0 {
            // Red's first move comes at once: the game has begun.
            now = game.now() + lag_ms + 1;
            game.advance(now);
            let mv = first_move(&game, Player::Red).expect("a first move");
            game.apply(Player::Red, mv, now).expect("Red's first move");
            continue;
        }
        let flip_at = (game.now() + 1).max(game.neutral().sand.empties_at());
        game.apply(Player::Black, Action::Flip, flip_at)
            .expect("Black flips the timer");
        // Red sees the flip half a round trip late and his answer takes the other half.
        let arrives = flip_at + lag_ms + neutral - margin_ms;
        let turn_no_before = game.moves_made(Player::Red);
        let mut events = game.advance(arrives);
        // If his turn lapsed meanwhile, the move he still sends is refused.
        let result = match first_move(&game, Player::Red) {
            Some(mv) => game.apply(Player::Red, mv, arrives),
            None if game.turn() == Player::Red => break,
            None => Err(ActionError::NotYourTurn {
                player: Player::Black,
            }),
        };
        if let Ok(more) = &result {
            events.extend(more.iter().cloned());
        }
        let forfeited = events.iter().any(|e| {
            matches!(
                e,
                Event::TurnForfeited {
                    player: Player::Red,
                    reason: ForfeitReason::NeutralTimer,
                    ..
                }
            )
        });
        let comp_ms = events
            .iter()
            .map(|e| match e {
                Event::LagCompensated { comp_ms, .. } => *comp_ms,
                _ => 0,
            })
            .sum();
        assert!(
            forfeited || game.moves_made(Player::Red) > turn_no_before,
            "{result:?} {events:?}"
        );
        out.push(RedTurn {
            comp_ms,
            quota_after_ms: game.credit(Player::Red).quota_ms,
            forfeited,
        });
        now = arrives;
    }
    out
}
