//! A computer player. Pure: given the engine's state, the bot's seat and the instant, it
//! says what to do and when ([`plan`]). The server's in-process bot seat and the
//! external `tamsk-bot` client both drive it, and both send its actions through the same
//! path as a person's.
//!
//! It plays sensibly rather than well: it always drops its ring, never moves onto a full
//! socket, keeps its hourglasses alive (it moves the one with the least sand, never one
//! whose top is still nearly full), keeps its hourglasses free to move and boxes the
//! opponent's in, claims where the opponent did not drop, places its penalty ring
//! where it hurts, flips the 15-second timer on the opponent's turn (Level 3), and moves
//! before any deadline (15-second timer, turn limit, first-move abort, game clock).

use crate::board::Square;
use crate::game::{Action, ActionError, Game, Player};

/// How strong the bot plays (on the wire: `"easy"`, `"normal"`, `"hard"`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BotLevel {
    /// For a beginner: it never flips the 15-second timer during the opening (until
    /// both players have moved each hourglass), flips it late after that, takes its time,
    /// and does not try to box the opponent in.
    Easy,
    /// The move whose outcome scores best, one move ahead.
    #[default]
    Normal,
    /// Searches five moves ahead (its move, the reply, ...) with alpha-beta pruning
    /// over the engine's legal moves ([`crate::bot_search`]).
    Hard,
}

impl BotLevel {
    /// Every level, weakest first.
    pub const ALL: [BotLevel; 3] = [BotLevel::Easy, BotLevel::Normal, BotLevel::Hard];

    /// Its name on the wire and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            BotLevel::Easy => "easy",
            BotLevel::Normal => "normal",
            BotLevel::Hard => "hard",
        }
    }

    /// The timing that goes with the level.
    pub fn config(self) -> BotConfig {
        match self {
            BotLevel::Easy => BotConfig {
                think_ms: 2_500,
                margin_ms: 600,
                flip_after_ms: 8_000,
                level: self,
            },
            BotLevel::Normal | BotLevel::Hard => BotConfig {
                level: self,
                ..BotConfig::default()
            },
        }
    }
}

/// How the bot takes its time, and how well it plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotConfig {
    /// It moves this long after its turn starts, unless a deadline is nearer.
    pub think_ms: u64,
    /// It keeps this much time before a deadline (less when the whole time is short).
    pub margin_ms: u64,
    /// Level 3: it flips the 15-second timer this long after the opponent's turn starts.
    pub flip_after_ms: u64,
    pub level: BotLevel,
}

impl Default for BotConfig {
    fn default() -> BotConfig {
        BotConfig {
            think_ms: 700,
            margin_ms: 250,
            flip_after_ms: 400,
            level: BotLevel::Normal,
        }
    }
}

/// What to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Send this action now.
    Act(Action),
    /// Nothing yet: plan again at this instant (game time), or at the next change.
    Wait(u64),
    /// Nothing to do until the game changes.
    Idle,
}

/// What the bot playing `me` does at game time `now` (the game may be behind `now`: what
/// was due by then is taken into account).
pub fn plan(game: &Game, me: Player, now: u64, config: &BotConfig) -> Plan {
    let mut g = game.clone();
    g.advance(now.max(g.now()));
    let now = g.now();
    if !g.is_playing() {
        return Plan::Idle;
    }
    let legal = g.legal_actions(me);
    // A move in hand: put it down at once.
    if let Some(release) = best(
        &g,
        me,
        now,
        legal.iter().filter(|a| matches!(a, Action::Release { .. })),
    ) {
        return Plan::Act(release);
    }
    // One's own ring, the penalty ring, a claim: rings down are what wins.
    if legal.contains(&Action::Drop) {
        return Plan::Act(Action::Drop);
    }
    if let Some(penalty) = best(
        &g,
        me,
        now,
        legal
            .iter()
            .filter(|a| matches!(a, Action::PenaltyDrop { .. })),
    ) {
        return Plan::Act(penalty);
    }
    if legal.contains(&Action::Claim) {
        // Easy leaves a person time to drop his own ring: at Level 1 there is no drop
        // grace, and a claim the instant he puts his hourglass down took his ring's
        // place before he could press the key.
        if let (BotLevel::Easy, Some(w)) = (config.level, g.window(me.other())) {
            let at = w.opened_ms + config.think_ms;
            if at > now {
                return Plan::Wait(at);
            }
        }
        return Plan::Act(Action::Claim);
    }
    let moves: Vec<&Action> = legal
        .iter()
        .filter(|a| {
            matches!(
                a,
                Action::Move { drop: true, .. } | Action::Place { drop: true, .. }
            )
        })
        .collect();
    if g.turn() == me && !moves.is_empty() {
        let start = g.turn_started_ms();
        let mut at = start + config.think_ms;
        // A claim about to open on the opponent's last move is worth waiting for.
        if let Some(opens) = claim_opening(&g, me) {
            at = at.max(opens);
        }
        if let Some(deadline) = deadline(&g, me) {
            let budget = deadline.saturating_sub(start);
            let margin = config.margin_ms.min(budget / 3);
            at = at.min(deadline.saturating_sub(margin));
        }
        if at > now {
            return Plan::Wait(at);
        }
        let chosen = match config.level {
            BotLevel::Hard => crate::bot_search::best_move(&g, me, now, &moves, config.think_ms),
            BotLevel::Normal => best(&g, me, now, moves.into_iter()),
            BotLevel::Easy => best_by(&g, me, now, moves.into_iter(), |after, now| {
                gentle(after, me, now)
            }),
        };
        return match chosen {
            Some(a) => Plan::Act(a),
            None => Plan::Idle,
        };
    }
    // Easy leaves a beginner his opening: no flip until every hourglass has moved.
    let opening = Player::BOTH.iter().any(|&p| g.moves_made(p) < 3);
    if legal.contains(&Action::Flip) && !(config.level == BotLevel::Easy && opening) {
        let at = g.turn_started_ms() + config.flip_after_ms;
        return if at > now {
            Plan::Wait(at)
        } else {
            Plan::Act(Action::Flip)
        };
    }
    if let Some(opens) = claim_opening(&g, me) {
        return Plan::Wait(opens);
    }
    match g.next_deadline() {
        Some(t) => Plan::Wait(t.max(now + 1)),
        None => Plan::Idle,
    }
}

/// When a claim on the opponent's last destination opens, if it will and is worth it.
fn claim_opening(g: &Game, me: Player) -> Option<u64> {
    let w = g.window(me.other())?;
    let useful = w.claim_allowed
        && !w.dropped
        && !g.is_full(w.square)
        && g.rings_left(me) > 0
        && g.held().is_none_or(|h| h.player != me);
    let opens = g.claim_opens_at(w);
    (useful && opens > g.now()).then_some(opens)
}

/// The nearest instant by which `me`, on turn, must have started a move.
fn deadline(g: &Game, me: Player) -> Option<u64> {
    let s = g.settings();
    let mut out: Option<u64> = None;
    let mut consider = |t: u64| out = Some(out.map_or(t, |o: u64| o.min(t)));
    let neutral = g.neutral();
    if neutral.target.is_some_and(|(p, _)| p == me) {
        consider(neutral.sand.empties_at());
    }
    if let Some(limit) = s.turn_limit_ms {
        consider(g.turn_started_ms() + limit);
    }
    if g.moves_made(me) == 0 {
        consider(g.turn_started_ms() + s.abort_ms);
    }
    if let Some(left) = g.clock_left(me, g.now()) {
        // Spend at most a tenth of what is left on one move.
        consider(g.now() + left / 10);
    }
    out
}

/// The action among `candidates` whose outcome scores best for `me`.
fn best<'a>(
    g: &Game,
    me: Player,
    now: u64,
    candidates: impl Iterator<Item = &'a Action>,
) -> Option<Action> {
    best_by(g, me, now, candidates, |after, now| {
        evaluate(after, me, now)
    })
}

/// The easy bot's view of a position: rings and its own hourglasses' lives, not the
/// opponent's mobility (it does not box him in).
fn gentle(g: &Game, me: Player, now: u64) -> i64 {
    if g.outcome().is_some() {
        return evaluate(g, me, now);
    }
    let rings = (g.rings_left(me.other()) as i64 - g.rings_left(me) as i64) * 100;
    rings + mobility(g, me) * 10 + life(g, me, now)
}

/// The action among `me`'s `candidates` whose outcome `score` rates best.
fn best_by<'a>(
    g: &Game,
    me: Player,
    now: u64,
    candidates: impl Iterator<Item = &'a Action>,
    score: impl Fn(&Game, u64) -> i64,
) -> Option<Action> {
    let mut best: Option<(i64, Action)> = None;
    for &action in candidates {
        let mut after = g.clone();
        if after.apply(me, action, now).is_err() {
            continue;
        }
        let score = score(&after, now);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, action));
        }
    }
    best.map(|(_, a)| a)
}

/// How good the position is for `me` (higher is better).
pub fn evaluate(g: &Game, me: Player, now: u64) -> i64 {
    if let Some(outcome) = g.outcome() {
        return match outcome.winner {
            Some(p) if p == me => 1_000_000,
            Some(_) => -1_000_000,
            None => 0,
        };
    }
    let opp = me.other();
    let rings = (g.rings_left(opp) as i64 - g.rings_left(me) as i64) * 100;
    let mobility = (mobility(g, me) - mobility(g, opp)) * 10;
    let life = life(g, me, now) - life(g, opp, now) / 2;
    rings + mobility + life
}

/// Live hourglasses that can move (weighted) and their free neighbours.
pub(crate) fn mobility(g: &Game, p: Player) -> i64 {
    let mut score = 0;
    for glass in p.glasses() {
        let state = g.glass(glass);
        if state.is_dead() {
            continue;
        }
        let Some(sq) = state.square else {
            score += 4;
            continue;
        };
        let free = sq.neighbours().iter().filter(|&&n| is_free(g, n)).count() as i64;
        if free > 0 {
            score += 4 + free;
        }
    }
    score
}

fn is_free(g: &Game, sq: Square) -> bool {
    g.occupant(sq).is_none() && !g.is_full(sq)
}

/// Minus the risk to `p`'s hourglasses: a dead one costs most, one running low costs
/// more the less sand it has.
fn life(g: &Game, p: Player, now: u64) -> i64 {
    if !g.settings().level.timed() {
        return 0;
    }
    let h = g.settings().hourglass_ms.max(1) as i64;
    let mut score = 0;
    for glass in p.glasses() {
        let state = g.glass(glass);
        if state.is_dead() {
            score -= 600;
        } else if state.started {
            let used = h - state.remaining(now) as i64;
            score -= 300 * used * used / (h * h);
        }
    }
    score
}

/// One step of a game between two bots (`configs`: Red's, Black's): the first that wants
/// to act acts at `now`; otherwise the game is brought up to the next instant one of them
/// waits for, or the engine's next deadline. Returns the new instant, or the action the
/// engine refused. For bot matches and tests.
pub fn step(
    game: &mut Game,
    now: u64,
    configs: [&BotConfig; 2],
) -> Result<u64, (Player, Action, ActionError)> {
    let plans = Player::BOTH.map(|p| (p, plan(game, p, now, configs[p.index()])));
    if let Some(&(p, Plan::Act(a))) = plans.iter().find(|(_, pl)| matches!(pl, Plan::Act(_))) {
        game.advance(now);
        game.apply(p, a, now).map_err(|e| (p, a, e))?;
        return Ok(now);
    }
    let next = plans
        .iter()
        .filter_map(|(_, pl)| match pl {
            Plan::Wait(t) => Some(*t),
            _ => None,
        })
        .chain(game.next_deadline())
        .min()
        .unwrap_or(now)
        .max(now);
    game.advance(next);
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Status;
    use crate::settings::{Level, Settings};

    fn quick() -> BotConfig {
        BotConfig {
            think_ms: 0,
            margin_ms: 50,
            flip_after_ms: 0,
            level: BotLevel::Normal,
        }
    }

    /// Two bots play whole games at every level, acting exactly when they plan to: every
    /// action is accepted, nobody moves onto a full socket, and the games end.
    #[test]
    fn bots_finish_games_legally() {
        for level in [Level::One, Level::Two, Level::Three] {
            let mut g = Game::new(Settings::blitz(level));
            let config = BotConfig {
                think_ms: 40,
                ..quick()
            };
            let mut now = 0;
            let mut steps = 0;
            while g.is_playing() {
                steps += 1;
                assert!(steps < 20_000, "level {level:?}: the game should end");
                now = step(&mut g, now, [&config, &config]).unwrap_or_else(|(p, a, e)| {
                    panic!("level {level:?}: {p:?} {a:?} refused: {e}")
                });
            }
            let Status::Finished { outcome } = g.status() else {
                panic!("level {level:?}: finished, not {:?}", g.status());
            };
            assert!(
                !matches!(outcome.reason, crate::game::EndReason::FullSocket { .. }),
                "{outcome:?}"
            );
            assert!(
                g.move_count() > 20,
                "level {level:?}: {} moves",
                g.move_count()
            );
        }
    }

    /// Plays `red` against `black` from a new game of `settings` to the end.
    fn play_out(settings: Settings, red: &BotConfig, black: &BotConfig) -> Game {
        let mut g = Game::new(settings);
        let mut now = 0;
        while g.is_playing() {
            now = step(&mut g, now, [red, black]).expect("legal");
        }
        g
    }

    #[test]
    fn the_hard_bot_finishes_games_legally_and_beats_normal_here() {
        let normal = BotLevel::Normal.config();
        let hard = BotLevel::Hard.config();
        let g = play_out(Settings::blitz(Level::Two), &hard, &normal);
        let Status::Finished { outcome } = g.status() else {
            panic!("finished, not {:?}", g.status());
        };
        assert_eq!(outcome.winner, Some(Player::Red), "{outcome:?}");
    }

    /// A person who puts an hourglass down without its ring, then drops it a moment
    /// later, is not beaten to it by the easy bot's claim (Level 1 has no drop grace: it
    /// claimed at once), at any level; the other bots claim as soon as the rules allow.
    #[test]
    fn the_easy_bot_leaves_a_person_time_to_drop() {
        let easy = BotLevel::Easy.config();
        for level in [Level::One, Level::Two, Level::Three] {
            let mut g = Game::new(Settings::level(level));
            let mv = Action::Move {
                from: "d1".parse().unwrap(),
                to: "d2".parse().unwrap(),
                drop: false,
            };
            g.apply(Player::Red, mv, 1_000).unwrap();
            let first_claim = (1_000..5_000)
                .step_by(10)
                .find(|&t| plan(&g, Player::Black, t, &easy) == Plan::Act(Action::Claim));
            assert_eq!(first_claim, Some(1_000 + easy.think_ms), "{level:?}");
            let normal = BotLevel::Normal.config();
            let opens = g.claim_opens_at(g.window(Player::Red).unwrap());
            assert_eq!(
                plan(&g, Player::Black, opens, &normal),
                Plan::Act(Action::Claim),
                "{level:?}"
            );
        }
    }

    #[test]
    fn the_easy_bot_leaves_the_opening_alone_and_flips_late() {
        let easy = BotLevel::Easy.config();
        let mut g = Game::new(Settings::level(Level::Three));
        // Red (a person) thinks for 20 s on his first move: Black (easy) never flips.
        for t in (0..20_000).step_by(100) {
            assert_ne!(
                plan(&g, Player::Black, t, &easy),
                Plan::Act(Action::Flip),
                "{t}"
            );
        }
        // After the opening (three moves each), it flips, but only 8 s into the turn.
        let moves = [
            (Player::Red, "d1", "d2"),
            (Player::Black, "a1", "b1"),
            (Player::Red, "g4", "g3"),
            (Player::Black, "g1", "f1"),
            (Player::Red, "a4", "a3"),
            (Player::Black, "d7", "d6"),
        ];
        for (i, (p, from, to)) in moves.into_iter().enumerate() {
            let mv = Action::Move {
                from: from.parse().unwrap(),
                to: to.parse().unwrap(),
                drop: true,
            };
            g.apply(p, mv, 1_000 * (i as u64 + 1)).unwrap();
        }
        let start = g.turn_started_ms();
        assert_eq!(
            plan(&g, Player::Black, start + 100, &easy),
            Plan::Wait(start + 8_000)
        );
        assert_eq!(
            plan(&g, Player::Black, start + 8_000, &easy),
            Plan::Act(Action::Flip)
        );
        // Normal flips 0.4 s into the turn, opening or not.
        let fresh = Game::new(Settings::level(Level::Three));
        assert_eq!(
            plan(&fresh, Player::Black, 400, &BotLevel::Normal.config()),
            Plan::Act(Action::Flip)
        );
    }

    #[test]
    fn it_drops_and_moves_the_glass_with_least_sand() {
        let mut g = Game::new(Settings {
            turn_limit_ms: None,
            ..Settings::blitz(Level::Two)
        });
        let mv = |from: &str, to: &str| Action::Move {
            from: from.parse().unwrap(),
            to: to.parse().unwrap(),
            drop: true,
        };
        // Red starts X (d1) at 0, Y (g4) at 1500, Z (a4) at 1600 (the opening rule
        // wants three different hourglasses); Black answers each time.
        g.apply(Player::Red, mv("d1", "d2"), 0).unwrap();
        g.apply(Player::Black, mv("a1", "b1"), 50).unwrap();
        let Plan::Act(Action::Move { from, drop, .. }) = plan(&g, Player::Red, 1500, &quick())
        else {
            panic!("a move")
        };
        assert!(drop, "it always drops");
        assert_ne!(from, "d2".parse().unwrap(), "the opening rule: not X again");
        g.apply(Player::Red, mv("g4", "f5"), 1500).unwrap();
        g.apply(Player::Black, mv("g1", "f1"), 1550).unwrap();
        g.apply(Player::Red, mv("a4", "b5"), 1600).unwrap();
        g.apply(Player::Black, mv("d7", "d6"), 1650).unwrap();
        // At 2600 X has 400 ms left, Y 1900, Z 2000: X is saved.
        let Plan::Act(Action::Move { from, to, .. }) = plan(&g, Player::Red, 2600, &quick()) else {
            panic!("a move")
        };
        assert_eq!(from, "d2".parse().unwrap(), "X is about to die");
        assert!(!g.is_full(to));
    }

    #[test]
    fn it_waits_its_think_time_but_beats_the_neutral_timer() {
        let mut g = Game::new(Settings::blitz(Level::Three));
        let config = BotConfig {
            think_ms: 10_000,
            margin_ms: 50,
            flip_after_ms: 100,
            level: BotLevel::Normal,
        };
        // Red's first turn: it thinks, but the abort deadline (3 s) comes first.
        assert_eq!(plan(&g, Player::Red, 0, &config), Plan::Wait(3000 - 50));
        // Black, not on turn, flips the 15-second timer after 100 ms.
        assert_eq!(plan(&g, Player::Black, 20, &config), Plan::Wait(100));
        assert_eq!(
            plan(&g, Player::Black, 100, &config),
            Plan::Act(Action::Flip)
        );
        g.apply(Player::Black, Action::Flip, 100).unwrap();
        // Now Red must move before 400 (100 + 300), with a margin of at most a third.
        assert_eq!(plan(&g, Player::Red, 120, &config), Plan::Wait(350));
        assert!(matches!(
            plan(&g, Player::Red, 350, &config),
            Plan::Act(Action::Move { drop: true, .. })
        ));
    }
}
