//! Engine events, results and what a player may do, in words for people.

use protocol::game::{
    AbortReason, Action, DropKind, Event, ForfeitReason, Game, Outcome, Player, Status,
};
use protocol::notation::to_notation;
use protocol::Square;

fn rings(n: u8) -> String {
    match n {
        1 => "1 ring left".into(),
        n => format!("{n} rings left"),
    }
}

/// One event as a sentence, e.g. "Black's B died on e5".
pub fn event(e: &Event) -> String {
    match e {
        Event::MoveStarted {
            player,
            glass,
            from,
            ..
        } => format!("{player} picks up {glass} on {from}"),
        Event::MoveReleased {
            player,
            glass,
            from,
            to,
            late,
            ..
        } => {
            let late = if *late {
                " (late: the 15-second timer had run out)"
            } else {
                ""
            };
            format!("{player} moves {glass} {from}-{to}{late}")
        }
        Event::Placed {
            player, glass, to, ..
        } => format!("{player} places {glass} on {to}"),
        Event::RingDropped {
            player,
            square,
            kind,
            left,
            ..
        } => match kind {
            DropKind::Regular => format!("{player} drops a ring on {square} ({})", rings(*left)),
            DropKind::Claim => format!(
                "{player} claims {square}: a ring where {} did not drop ({})",
                player.other(),
                rings(*left)
            ),
            DropKind::Penalty => {
                format!(
                    "{player} drops a penalty ring on {square} ({})",
                    rings(*left)
                )
            }
        },
        Event::DropGraceEnded { mover, square, .. } => {
            format!("{mover} did not drop on {square}")
        }
        Event::NeutralFlipped { by, target, .. } => {
            format!("{by} flips the 15-second timer on {target}")
        }
        Event::NeutralExpired {
            target, started, ..
        } => {
            if *started {
                format!("The 15-second timer ran out on {target}, with his hourglass in hand")
            } else {
                format!("The 15-second timer ran out on {target}")
            }
        }
        Event::PenaltyEarned { player, .. } => {
            format!("{player} earns a penalty ring for his next move")
        }
        Event::LagCompensated {
            player, comp_ms, ..
        } => format!("{player}'s lag was compensated ({comp_ms} ms)"),
        Event::TurnForfeited { player, reason, .. } => match reason {
            ForfeitReason::NeutralTimer => format!(
                "{player} forfeits the turn: {} may drop two rings",
                player.other()
            ),
            ForfeitReason::TurnLimit => {
                format!("{player} forfeits the turn: the turn limit ran out")
            }
            ForfeitReason::LateRelease => format!(
                "{player} forfeits the turn: he did not put his hourglass down within the late-release bound"
            ),
        },
        Event::LateReleaseMissed {
            player,
            glass,
            square,
            ..
        } => format!("{player} did not put {glass} down in time: it stays on {square}"),
        Event::HourglassDied {
            glass,
            square,
            in_hand,
            ..
        } => {
            let owner = glass.owner();
            if *in_hand {
                format!("{owner}'s {glass} died in hand on {square}: the move is void")
            } else {
                format!("{owner}'s {glass} died on {square}")
            }
        }
        Event::Passed { player, reason, .. } => {
            format!("{player} cannot move and is passed: {}", reason.describe())
        }
        Event::TurnStarted { player, .. } => format!("{player} to move"),
        Event::GameEnded { outcome, .. } => format!("Game over. {}", outcome.describe()),
        Event::GameAborted { reason, .. } => format!("Game aborted: {}", abort(reason)),
    }
}

pub fn abort(reason: &AbortReason) -> String {
    reason.describe()
}

/// The result of a game that is over, in one line.
pub fn result(game: &Game) -> Option<String> {
    match game.status() {
        Status::Playing => None,
        Status::Finished { outcome } => Some(outcome.describe()),
        Status::Aborted { reason, .. } => Some(format!("Aborted: {}", abort(reason))),
    }
}

/// The tiebreak line-up, latest death first, one line per hourglass.
pub fn lineup(outcome: &Outcome) -> Vec<String> {
    let Some(t) = &outcome.tiebreak else {
        return Vec::new();
    };
    t.lineup
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let how = if e.running { "runs out" } else { "died" };
            let mark = if Some(i) == t.deciding_index {
                "  <- decides"
            } else {
                ""
            };
            format!(
                "{} ({}) {how} at {}{mark}",
                e.glass,
                e.player,
                seconds(e.dies_at_ms)
            )
        })
        .collect()
}

/// Game time as seconds with one decimal: `12.3s`.
pub fn seconds(ms: u64) -> String {
    format!("{}.{}s", ms / 1000, (ms % 1000) / 100)
}

/// What `player` may do now, summarised: "move X (d1→d2 c1 e1), drop on d2, flip the
/// 15-second timer, resign". Empty when only resigning is possible.
pub fn may(game: &Game, player: Player, legal: &[Action]) -> Vec<String> {
    let mut out = Vec::new();
    let mut moves: Vec<(Square, Vec<(Square, bool)>)> = Vec::new();
    let mut places: Vec<String> = Vec::new();
    let mut releases: Vec<Square> = Vec::new();
    let mut penalty = false;
    for a in legal {
        match *a {
            Action::Move {
                from,
                to,
                drop: true,
            } => {
                let full = game.is_full(to);
                match moves.iter_mut().find(|(f, _)| *f == from) {
                    Some((_, tos)) => tos.push((to, full)),
                    None => moves.push((from, vec![(to, full)])),
                }
            }
            Action::Place {
                glass, drop: true, ..
            } => {
                let g = glass.to_string();
                if !places.contains(&g) {
                    places.push(g);
                }
            }
            Action::Release { to } => releases.push(to),
            Action::PenaltyDrop { .. } => penalty = true,
            _ => {}
        }
    }
    for (from, tos) in moves {
        let glass = game.occupant(from).map_or('?', |g| g.label());
        let list: Vec<String> = tos
            .iter()
            .map(|(t, full)| {
                if *full {
                    format!("{t}!")
                } else {
                    t.to_string()
                }
            })
            .collect();
        out.push(format!("move {glass} {from}→{}", list.join(",")));
    }
    if !places.is_empty() {
        out.push(format!("place {} on a free socket", places.join("/")));
    }
    if !releases.is_empty() {
        let held = game
            .held()
            .into_iter()
            .chain(game.late())
            .find(|h| h.player == player);
        let what = held.map_or("the hourglass".to_string(), |h| h.glass.to_string());
        let list: Vec<String> = releases.iter().map(|s| s.to_string()).collect();
        out.push(format!("put {what} down on {}", list.join(",")));
    }
    if legal.contains(&Action::Drop) {
        let at = game.window(player).map(|w| w.square.to_string());
        out.push(format!("drop on {}", at.unwrap_or_default()));
    }
    if penalty {
        out.push("drop the penalty ring on any socket that is not full".into());
    }
    if legal.contains(&Action::Claim) {
        let at = game.window(player.other()).map(|w| w.square.to_string());
        out.push(format!("claim {}", at.unwrap_or_default()));
    }
    if legal.contains(&Action::Flip) {
        out.push(format!("flip the 15-second timer on {}", player.other()));
    }
    out
}

/// Every legal action in notation (moves with and without drop, ...), for scripts.
pub fn notations(legal: &[Action]) -> Vec<String> {
    legal.iter().map(to_notation).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::game::{Glass, Sand};
    use protocol::settings::{Level, Settings};

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    /// The abort names the player the engine judged, whoever is on turn by then.
    #[test]
    fn an_abort_names_the_player_without_a_first_move() {
        use protocol::game::Action;
        let mut g = Game::new(Settings::blitz(Level::Three)); // abort 3000, neutral 300
        let d1_d2 = Action::Move {
            from: sq("d1"),
            to: sq("d2"),
            drop: true,
        };
        g.apply(Player::Red, d1_d2, 0).unwrap();
        g.apply(Player::Red, Action::Flip, 0).unwrap();
        // Black's turn is forfeited at 300; Red is on turn when Black's 3 s run out.
        let events = g.advance(3_000);
        assert_eq!(g.turn(), Player::Red);
        assert_eq!(
            events.last().map(event).as_deref(),
            Some("Game aborted: Black did not make his first move in time")
        );
        assert_eq!(
            result(&g).as_deref(),
            Some("Aborted: Black did not make his first move in time")
        );
    }

    #[test]
    fn events_read_as_sentences() {
        let b = Glass::from_label('B').unwrap();
        assert_eq!(
            event(&Event::HourglassDied {
                at: 5,
                glass: b,
                square: sq("e5"),
                in_hand: false
            }),
            "Black's B died on e5"
        );
        assert_eq!(
            event(&Event::TurnForfeited {
                at: 5,
                player: Player::Red,
                reason: ForfeitReason::NeutralTimer
            }),
            "Red forfeits the turn: Black may drop two rings"
        );
        assert_eq!(
            event(&Event::MoveStarted {
                at: 0,
                player: Player::Red,
                glass: Glass::from_label('X').unwrap(),
                from: sq("d1"),
                sand: Sand::default()
            }),
            "Red picks up X on d1"
        );
        assert_eq!(
            event(&Event::RingDropped {
                at: 0,
                player: Player::Black,
                square: sq("d2"),
                kind: DropKind::Claim,
                left: 1
            }),
            "Black claims d2: a ring where Red did not drop (1 ring left)"
        );
    }

    #[test]
    fn what_red_may_do_at_the_start() {
        let game = Game::new(Settings::level(Level::Three));
        let legal = game.legal_actions(Player::Red);
        assert_eq!(
            may(&game, Player::Red, &legal),
            [
                "move X d1→d2,e1,c1",
                "move Y g4→g3,f4,f5",
                "move Z a4→a3,b5,b4"
            ]
        );
        let legal = game.legal_actions(Player::Black);
        assert_eq!(
            may(&game, Player::Black, &legal),
            ["flip the 15-second timer on Red"]
        );
        assert!(notations(&legal).contains(&"flip".to_string()));
    }

    #[test]
    fn losing_destinations_are_marked() {
        let mut game = Game::new(Settings::level(Level::One));
        let mv = |f: &str, t: &str| Action::Move {
            from: sq(f),
            to: sq(t),
            drop: true,
        };
        game.apply(Player::Red, mv("d1", "d2"), 0).unwrap();
        game.apply(Player::Black, mv("g1", "f1"), 1).unwrap();
        // e1 holds one ring and is empty: a move there does not lose. f1 is full but
        // occupied by B; g1 (capacity 1) is empty and unfilled.
        game.apply(Player::Red, mv("d2", "e2"), 2).unwrap();
        game.apply(Player::Black, mv("f1", "e1"), 3).unwrap();
        let legal = game.legal_actions(Player::Red);
        let lines = may(&game, Player::Red, &legal);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("move X e2→") && l.contains("f1!")),
            "{lines:?}"
        );
    }
}
