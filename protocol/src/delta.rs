//! Deltas on the wire (issue 14): a `play` event carries its entry and only the engine
//! events a client cannot derive from the entry alone.
//!
//! An accepted action has direct consequences at its own instant that follow from the
//! action and the documented state (`docs/PROTOCOL.md`, "Implied events"): a `move` starts
//! (flips) the hourglass on `from`, releases it on `to`, starts the opponent's turn and,
//! with `drop`, drops a ring on `to`. Those are the *implied* events of the entry
//! ([`implied`]); the server leaves them out of the frame. What remains are the events
//! only an engine knows: deaths, expiries, forfeits, passes, penalties, lag
//! compensation, the end of the game.
//!
//! Where the implied events go: after the kept events that are earlier than the entry's
//! instant (what time brought before the action), before the others. When the engine's
//! events do not hold the implied ones there exactly (a glass dying in hand, a pass
//! between the release and the drop, a late release, ...), nothing is left out and the
//! frame says so (`complete`). [`compact`] decides; [`expand`] is its inverse, given the
//! implied events, and a test checks `expand(compact(events)) == events` over many games
//! with [`implied`] computed from the documented view alone.

use crate::game::{Action, DropKind, Event, Glass, Player, Sand};
use crate::record::{Entry, EntryKind};
use crate::view::GameView;

/// How many implied events `entry` has when they all occur as they usually do.
fn implied_len(entry: &Entry) -> usize {
    let EntryKind::Act { action, .. } = entry.kind else {
        return 0;
    };
    match action {
        Action::Move { drop, .. } => 3 + drop as usize,
        Action::Place { drop, .. } => 2 + drop as usize,
        Action::Release { .. } => 2,
        Action::Start { .. }
        | Action::Drop
        | Action::Claim
        | Action::PenaltyDrop { .. }
        | Action::Flip => 1,
        Action::Resign => 0,
    }
}

/// Whether `run` is the implied events of `entry` (in what the entry fixes: instants,
/// players, squares, kinds; the rest follows from the state, see [`implied`]).
fn is_implied_run(entry: &Entry, run: &[Event]) -> bool {
    let EntryKind::Act { player, action, .. } = entry.kind else {
        return run.is_empty();
    };
    let a = entry.at_ms;
    let other = player.other();
    let started = |e: &Event, f| {
        matches!(*e, Event::MoveStarted { at, player: p, from, .. }
            if at == a && p == player && from == f)
    };
    let released = |e: &Event, t| {
        matches!(*e, Event::MoveReleased { at, player: p, to, late: false, .. }
            if at == a && p == player && to == t)
    };
    let turn =
        |e: &Event| matches!(*e, Event::TurnStarted { at, player: p } if at == a && p == other);
    let dropped = |e: &Event, k: DropKind, s: Option<crate::Square>| {
        matches!(*e, Event::RingDropped { at, player: p, kind, square, .. }
            if at == a && p == player && kind == k && s.is_none_or(|s| s == square))
    };
    match (action, run) {
        (Action::Move { from, to, drop }, [s, r, t, rest @ ..]) => {
            let same_glass = matches!((s, r), (Event::MoveStarted { glass: g1, .. },
                Event::MoveReleased { glass: g2, from: f2, .. }) if g1 == g2 && *f2 == from);
            started(s, from)
                && released(r, to)
                && same_glass
                && turn(t)
                && match rest {
                    [] => !drop,
                    [d] => drop && dropped(d, DropKind::Regular, Some(to)),
                    _ => false,
                }
        }
        (Action::Place { glass, to, drop }, [p, t, rest @ ..]) => {
            matches!(*p, Event::Placed { at, player: pl, glass: g, to: t2, .. }
                if at == a && pl == player && g == glass && t2 == to)
                && turn(t)
                && match rest {
                    [] => !drop,
                    [d] => drop && dropped(d, DropKind::Regular, Some(to)),
                    _ => false,
                }
        }
        (Action::Start { from }, [s]) => started(s, from),
        (Action::Release { to }, [r, t]) => released(r, to) && turn(t),
        (Action::Drop, [d]) => dropped(d, DropKind::Regular, None),
        (Action::Claim, [d]) => dropped(d, DropKind::Claim, None),
        (Action::PenaltyDrop { at }, [d]) => dropped(d, DropKind::Penalty, Some(at)),
        (Action::Flip, [f]) => matches!(*f, Event::NeutralFlipped { at, by, target, .. }
            if at == a && by == player && target == other),
        _ => false,
    }
}

/// Where the implied events of an entry at `at_ms` go among the kept `events`: after the
/// leading ones that are earlier than it.
pub fn insertion_point(at_ms: u64, events: &[Event]) -> usize {
    events.iter().take_while(|e| e.at() < at_ms).count()
}

/// The events of `entry` as a `play` event carries them: all of `events` but the implied
/// ones, and `false`; or all of them and `true` (complete) when they do not hold the
/// implied events where [`expand`] puts them.
pub fn compact(entry: &Entry, mut events: Vec<Event>) -> (Vec<Event>, bool) {
    let n = implied_len(entry);
    if n == 0 {
        return (events, false);
    }
    let i = insertion_point(entry.at_ms, &events);
    let fits = events.len() >= i + n
        && is_implied_run(entry, &events[i..i + n])
        && events.get(i + n).is_none_or(|e| e.at() >= entry.at_ms);
    if !fits {
        return (events, true);
    }
    events.drain(i..i + n);
    (events, false)
}

/// The whole list of engine events from a `play` event's `events` (`kept`), its
/// `complete` flag and the entry's implied events (see [`implied`]).
pub fn expand(entry: &Entry, kept: &[Event], complete: bool, implied: Vec<Event>) -> Vec<Event> {
    if complete {
        return kept.to_vec();
    }
    let i = insertion_point(entry.at_ms, kept);
    let mut all = Vec::with_capacity(kept.len() + implied.len());
    all.extend_from_slice(&kept[..i]);
    all.extend(implied);
    all.extend_from_slice(&kept[i..]);
    all
}

/// The implied events of `entry`, derived from the documented state only: `view` is the
/// game just before them (after the kept events earlier than the entry). No rule is
/// judged: the entry was accepted. A client without an engine does the same (the page's
/// `state.js`).
///
/// - `move {from, to, drop}`: `move_started` of the hourglass on `from` (Levels 2-3 flip
///   it: `top_ms` = capacity (`hourglass_ms`) minus the sand left in its top at the
///   instant, `since_ms` = the instant; Level 1: its sand unchanged), `move_released` on
///   `to` (`late: false`), `turn_started` of the opponent, and with `drop` `ring_dropped`
///   on `to` (`regular`, `left` = the mover's rings minus one).
/// - `start {from}`: `move_started` as above. `release {to}`: `move_released` of the held
///   hourglass from where it was picked up, then `turn_started` of the opponent.
/// - `place {glass, to, drop}`: `placed` (timed levels: a full top since the instant),
///   `turn_started` of the opponent, and with `drop` a `regular` ring on `to`.
/// - `drop`: a `regular` ring on the mover's window; `claim`: a `claim` ring on the
///   opponent's window; `penalty_drop {at}`: a `penalty` ring on `at`.
/// - `flip`: `neutral_flipped` against the opponent, `neutral_ms` of sand since the instant.
/// - Anything else: none.
pub fn implied(view: &GameView, entry: &Entry) -> Vec<Event> {
    let EntryKind::Act { player, action, .. } = entry.kind else {
        return Vec::new();
    };
    let at = entry.at_ms;
    let s = &view.settings;
    let other = player.other();
    let state = |g: Glass| view.glasses.iter().find(|x| x.glass == g);
    let flip = |g: Glass| match state(g) {
        Some(st) if s.level.timed() => Sand {
            top_ms: s.hourglass_ms - st.remaining(at),
            since_ms: at,
        },
        Some(st) => st.sand,
        None => Sand::default(),
    };
    let left = view.holders.get(player).saturating_sub(1);
    let ring = |square, kind| Event::RingDropped {
        at,
        player,
        square,
        kind,
        left,
    };
    let turn = Event::TurnStarted { at, player: other };
    let window = |p: Player| view.windows.iter().find(|w| w.mover == p).map(|w| w.square);
    let on = |sq: crate::Square| view.board.iter().find(|x| x.square == sq)?.glass;
    let mut out = Vec::new();
    match action {
        Action::Move { from, to, drop } => {
            let Some(glass) = on(from) else {
                return out;
            };
            out.push(Event::MoveStarted {
                at,
                player,
                glass,
                from,
                sand: flip(glass),
            });
            out.push(Event::MoveReleased {
                at,
                player,
                glass,
                from,
                to,
                late: false,
            });
            out.push(turn);
            if drop {
                out.push(ring(to, DropKind::Regular));
            }
        }
        Action::Start { from } => {
            if let Some(glass) = on(from) {
                out.push(Event::MoveStarted {
                    at,
                    player,
                    glass,
                    from,
                    sand: flip(glass),
                });
            }
        }
        Action::Release { to } => {
            if let Some(h) = view.held.filter(|h| h.player == player) {
                out.push(Event::MoveReleased {
                    at,
                    player,
                    glass: h.glass,
                    from: h.from,
                    to,
                    late: false,
                });
                out.push(turn);
            }
        }
        Action::Place { glass, to, drop } => {
            let sand = if s.level.timed() {
                Sand {
                    top_ms: s.hourglass_ms,
                    since_ms: at,
                }
            } else {
                state(glass).map(|st| st.sand).unwrap_or_default()
            };
            out.push(Event::Placed {
                at,
                player,
                glass,
                to,
                sand,
            });
            out.push(turn);
            if drop {
                out.push(ring(to, DropKind::Regular));
            }
        }
        Action::Drop => out.extend(window(player).map(|sq| ring(sq, DropKind::Regular))),
        Action::Claim => out.extend(window(other).map(|sq| ring(sq, DropKind::Claim))),
        Action::PenaltyDrop { at: sq } => out.push(ring(sq, DropKind::Penalty)),
        Action::Flip => out.push(Event::NeutralFlipped {
            at,
            by: player,
            target: other,
            sand: Sand {
                top_ms: s.neutral_ms,
                since_ms: at,
            },
        }),
        Action::Resign => {}
    }
    out
}
