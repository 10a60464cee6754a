//! Swiss pairing, pure: rounds in, the next round's pairing and the standings out. The
//! same standings always give the same pairing (every order ends on the player id).
//!
//! The system follows the Dutch rules as FIDE publishes them, simplified (documented in
//! `docs/TOURNAMENTS.md`):
//! - Players are ranked by score, then seed rating, then id. An odd number of players:
//!   the lowest-ranked player who has not had a bye gets it (worth a win, once per player
//!   while anyone else is left who has not had one).
//! - From the top, each player is paired inside his score group the Dutch way: the group
//!   (the players still unpaired with his score) is cut in halves and the first of the
//!   top half meets the first of the bottom half (1-5, 2-6, 3-7, 4-8 in a group of
//!   eight); when that pairing was played before, the next of the bottom half, then the
//!   top half from the bottom; a player left over floats down to the next group, taking
//!   its highest-ranked player he has not met.
//! - Two players never meet twice while any other pairing of the round exists
//!   (backtracking finds it); only when none does are repeats allowed.
//! - Colours: the player who had Red fewer times (net) gets Red; equal, the one who had
//!   Black last; still equal, the higher-ranked player gets the colour he did not have
//!   last, and in the first round Red on odd boards, Black on even ones.
//! - Late joiners are paired from the round after they join, with 0 points for the
//!   rounds they missed; withdrawn players are paired no more (their games count).
//! - Tiebreaks: Buchholz (the sum of the opponents' scores), then Sonneborn-Berger (the
//!   opponents' scores weighted by the result against them), then direct encounter (the
//!   points scored in the games among the players still tied), then seed rating, then
//!   id. A bye adds 1 to the score and nothing to either tiebreak.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A player's id.
pub type Pid = String;

/// A player in the tournament.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub id: Pid,
    /// His seed: his rating in the tournament's control when he joined.
    pub rating: f64,
    /// The first round he may be paired in (1-based).
    pub joined: u32,
    pub withdrawn: bool,
}

/// The result of one pairing: each side's points.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GameResult {
    pub red: f64,
    pub black: f64,
    /// Not played (a no-show): it counts for the score, not for colours.
    pub forfeit: bool,
}

impl GameResult {
    pub const RED_WINS: GameResult = GameResult {
        red: 1.0,
        black: 0.0,
        forfeit: false,
    };
    pub const BLACK_WINS: GameResult = GameResult {
        red: 0.0,
        black: 1.0,
        forfeit: false,
    };
    pub const DRAW: GameResult = GameResult {
        red: 0.5,
        black: 0.5,
        forfeit: false,
    };
}

/// One pairing of a round.
#[derive(Clone, Debug, PartialEq)]
pub struct Pairing {
    pub red: Pid,
    pub black: Pid,
    /// `None` until the game is over.
    pub result: Option<GameResult>,
}

/// One round: its pairings by board, and the bye.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    pub pairings: Vec<Pairing>,
    pub bye: Option<Pid>,
}

/// A player's line in the standings.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub id: Pid,
    /// 1 for the first.
    pub rank: u32,
    pub score: f64,
    pub buchholz: f64,
    pub sonneborn_berger: f64,
    pub rating: f64,
    pub withdrawn: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Colour {
    Red,
    Black,
}

/// What the rounds so far say of one player.
#[derive(Default, Debug)]
struct Record {
    score: f64,
    opponents: HashSet<Pid>,
    /// Played games only, in order.
    colours: Vec<Colour>,
    byes: u32,
}

impl Record {
    fn balance(&self) -> i32 {
        self.colours
            .iter()
            .map(|c| if *c == Colour::Red { 1 } else { -1 })
            .sum()
    }
}

fn records(rounds: &[Round]) -> HashMap<&str, Record> {
    let mut out: HashMap<&str, Record> = HashMap::new();
    for round in rounds {
        if let Some(bye) = &round.bye {
            let r = out.entry(bye).or_default();
            r.score += 1.0;
            r.byes += 1;
        }
        for p in &round.pairings {
            let result = p.result;
            let red = out.entry(&p.red).or_default();
            red.opponents.insert(p.black.clone());
            if let Some(res) = result {
                red.score += res.red;
                if !res.forfeit {
                    red.colours.push(Colour::Red);
                }
            }
            let black = out.entry(&p.black).or_default();
            black.opponents.insert(p.red.clone());
            if let Some(res) = result {
                black.score += res.black;
                if !res.forfeit {
                    black.colours.push(Colour::Black);
                }
            }
        }
    }
    out
}

/// Most steps the search for a pairing without repeats takes before it allows them.
const SEARCH_STEPS: usize = 200_000;

/// The pairing of round `number` (1-based) after `rounds`.
pub fn pair(entrants: &[Entrant], rounds: &[Round], number: u32) -> Round {
    let recs = records(rounds);
    let empty = Record::default();
    let rec = |id: &str| recs.get(id).unwrap_or(&empty);
    let mut order: Vec<&Entrant> = entrants
        .iter()
        .filter(|e| !e.withdrawn && e.joined <= number)
        .collect();
    order.sort_by(|a, b| {
        rec(&b.id)
            .score
            .total_cmp(&rec(&a.id).score)
            .then(b.rating.total_cmp(&a.rating))
            .then(a.id.cmp(&b.id))
    });
    let mut bye = None;
    if !order.len().is_multiple_of(2) {
        let i = (0..order.len())
            .rev()
            .find(|&i| rec(&order[i].id).byes == 0)
            .unwrap_or(order.len() - 1);
        bye = Some(order.remove(i).id.clone());
    }
    let ids: Vec<&str> = order.iter().map(|e| e.id.as_str()).collect();
    let scores: Vec<f64> = ids.iter().map(|id| rec(id).score).collect();
    let met = |a: usize, b: usize| rec(ids[a]).opponents.contains(ids[b]);
    let mut pairs = Vec::new();
    let mut steps = 0;
    let found = search(
        &scores,
        &met,
        &mut vec![false; ids.len()],
        &mut pairs,
        &mut steps,
    );
    if !found {
        pairs.clear();
        let mut steps = 0;
        search(
            &scores,
            &|_, _| false,
            &mut vec![false; ids.len()],
            &mut pairs,
            &mut steps,
        );
    }
    // Boards: the pairs in the order they were made (top score, top rank first).
    let pairings = pairs
        .iter()
        .enumerate()
        .map(|(board, &(a, b))| {
            let (red, black) = if a_gets_red(rec(ids[a]), rec(ids[b]), board) {
                (a, b)
            } else {
                (b, a)
            };
            Pairing {
                red: ids[red].to_string(),
                black: ids[black].to_string(),
                result: None,
            }
        })
        .collect();
    Round { pairings, bye }
}

/// Whether the higher-ranked `a` gets Red against `b` on `board` (0-based).
fn a_gets_red(a: &Record, b: &Record, board: usize) -> bool {
    match a.balance().cmp(&b.balance()) {
        Ordering::Less => return true,
        Ordering::Greater => return false,
        Ordering::Equal => {}
    }
    match (a.colours.last(), b.colours.last()) {
        (Some(Colour::Black), Some(Colour::Red)) => true,
        (Some(Colour::Red), Some(Colour::Black)) => false,
        (Some(last), _) => *last == Colour::Black,
        (None, Some(last)) => *last == Colour::Red,
        (None, None) => board.is_multiple_of(2),
    }
}

/// Pairs the first unpaired player (in rank order) with his candidates in Dutch order,
/// and the rest recursively; false when no pairing without `met` exists (or the search
/// ran out of steps).
fn search(
    scores: &[f64],
    met: &dyn Fn(usize, usize) -> bool,
    paired: &mut Vec<bool>,
    pairs: &mut Vec<(usize, usize)>,
    steps: &mut usize,
) -> bool {
    let Some(top) = (0..scores.len()).find(|&i| !paired[i]) else {
        return true;
    };
    *steps += 1;
    if *steps > SEARCH_STEPS {
        return false;
    }
    paired[top] = true;
    for c in candidates(scores, paired, top) {
        if met(top, c) {
            continue;
        }
        paired[c] = true;
        pairs.push((top, c));
        if search(scores, met, paired, pairs, steps) {
            return true;
        }
        pairs.pop();
        paired[c] = false;
    }
    paired[top] = false;
    false
}

/// `top`'s opponents in the order the Dutch rules prefer them: his score group cut in
/// halves (the bottom half first, then the top half from the bottom), then the lower
/// players in rank order.
fn candidates(scores: &[f64], paired: &[bool], top: usize) -> Vec<usize> {
    let group: Vec<usize> = (0..scores.len())
        .filter(|&i| (i == top || !paired[i]) && scores[i] == scores[top])
        .collect();
    let half = group.len() / 2;
    let mut out: Vec<usize> = group[half.max(1)..].to_vec();
    out.extend(group[1..half.max(1)].iter().rev());
    out.retain(|&i| i != top);
    out.extend((0..scores.len()).filter(|&i| !paired[i] && scores[i] != scores[top]));
    out
}

/// The standings after `rounds`, best first.
pub fn standings(entrants: &[Entrant], rounds: &[Round]) -> Vec<Standing> {
    let recs = records(rounds);
    let score = |id: &str| recs.get(id).map_or(0.0, |r| r.score);
    let mut table: Vec<Standing> = entrants
        .iter()
        .map(|e| {
            let (mut buchholz, mut sb) = (0.0, 0.0);
            for round in rounds {
                for p in &round.pairings {
                    let Some(res) = p.result else { continue };
                    let (opp, mine) = if p.red == e.id {
                        (&p.black, res.red)
                    } else if p.black == e.id {
                        (&p.red, res.black)
                    } else {
                        continue;
                    };
                    buchholz += score(opp);
                    sb += mine * score(opp);
                }
            }
            Standing {
                id: e.id.clone(),
                rank: 0,
                score: score(&e.id),
                buchholz,
                sonneborn_berger: sb,
                rating: e.rating,
                withdrawn: e.withdrawn,
            }
        })
        .collect();
    table.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.buchholz.total_cmp(&a.buchholz))
            .then(b.sonneborn_berger.total_cmp(&a.sonneborn_berger))
    });
    // Direct encounter inside each group still tied, then rating and id.
    let mut start = 0;
    while start < table.len() {
        let tied = |a: &Standing, b: &Standing| {
            a.score == b.score
                && a.buchholz == b.buchholz
                && a.sonneborn_berger == b.sonneborn_berger
        };
        let end = (start..table.len())
            .find(|&i| !tied(&table[start], &table[i]))
            .unwrap_or(table.len());
        direct_encounter(&mut table[start..end], rounds);
        start = end;
    }
    for (i, s) in table.iter_mut().enumerate() {
        s.rank = i as u32 + 1;
    }
    table
}

/// Orders players tied on score, Buchholz and Sonneborn-Berger by the points each made
/// in the games among them, then by seed rating, then by id.
pub fn direct_encounter(tied: &mut [Standing], rounds: &[Round]) {
    if tied.len() < 2 {
        return;
    }
    let ids: HashSet<&str> = tied.iter().map(|s| s.id.as_str()).collect();
    let mut points: HashMap<String, f64> = HashMap::new();
    for p in rounds.iter().flat_map(|r| &r.pairings) {
        if let (Some(res), true) = (
            p.result,
            ids.contains(p.red.as_str()) && ids.contains(p.black.as_str()),
        ) {
            *points.entry(p.red.clone()).or_default() += res.red;
            *points.entry(p.black.clone()).or_default() += res.black;
        }
    }
    let pts = |id: &str| points.get(id).copied().unwrap_or(0.0);
    tied.sort_by(|a, b| {
        pts(&b.id)
            .total_cmp(&pts(&a.id))
            .then(b.rating.total_cmp(&a.rating))
            .then(a.id.cmp(&b.id))
    });
}

#[cfg(test)]
#[path = "swiss_tests.rs"]
mod tests;
