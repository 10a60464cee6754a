//! Worked examples, checked by hand (the reasoning is in the comments and in
//! `docs/TOURNAMENTS.md`).

use super::*;

fn entrant(id: &str, rating: f64) -> Entrant {
    Entrant {
        id: id.into(),
        rating,
        joined: 1,
        withdrawn: false,
    }
}

fn pairs(round: &Round) -> Vec<(&str, &str)> {
    round
        .pairings
        .iter()
        .map(|p| (p.red.as_str(), p.black.as_str()))
        .collect()
}

/// Plays `round` with the results given board by board.
fn play(mut round: Round, results: &[GameResult]) -> Round {
    assert_eq!(round.pairings.len(), results.len());
    for (p, r) in round.pairings.iter_mut().zip(results) {
        p.result = Some(*r);
    }
    round
}

fn ranked(table: &[Standing]) -> Vec<(&str, f64)> {
    table.iter().map(|s| (s.id.as_str(), s.score)).collect()
}

/// Four players, three rounds:
/// R1: one score group [a b c d] cut in halves: a-c, b-d; Red on board 1 to the higher
///     ranked, on board 2 to the lower: a-c, d-b. a and b win.
/// R2: groups [a b] (1) and [c d] (0): a-b, c-d; b had Black (balance -1 < +1): b-a; c
///     had Black: c-d. a wins, c-d drawn.
/// R3: a (2) is alone: he floats and meets the highest he has not met: d; b (1) alone:
///     meets c. a and d each had Red then Black: a (higher) gets the colour he did not
///     have last: a-d. b and c each had Black then Red: b gets Black: c-b. a and c win.
/// Final: a 3, c 1.5, b 1, d 0.5. Buchholz: a 1.5+1+0.5 = 3, b 0.5+3+1.5 = 5,
/// c 3+0.5+1 = 4.5, d 1+1.5+3 = 5.5. Sonneborn-Berger: a 3, b 0.5, c 0.25+1 = 1.25,
/// d 0.75.
#[test]
fn four_players_three_rounds() {
    let players = [
        entrant("a", 2000.0),
        entrant("b", 1900.0),
        entrant("c", 1800.0),
        entrant("d", 1700.0),
    ];
    let r1 = pair(&players, &[], 1);
    assert_eq!(pairs(&r1), [("a", "c"), ("d", "b")]);
    assert_eq!(r1.bye, None);
    let r1 = play(r1, &[GameResult::RED_WINS, GameResult::BLACK_WINS]);
    let r2 = pair(&players, std::slice::from_ref(&r1), 2);
    assert_eq!(pairs(&r2), [("b", "a"), ("c", "d")]);
    let r2 = play(r2, &[GameResult::BLACK_WINS, GameResult::DRAW]);
    let r3 = pair(&players, &[r1.clone(), r2.clone()], 3);
    assert_eq!(pairs(&r3), [("a", "d"), ("c", "b")]);
    let r3 = play(r3, &[GameResult::RED_WINS, GameResult::RED_WINS]);
    let table = standings(&players, &[r1, r2, r3]);
    assert_eq!(
        ranked(&table),
        [("a", 3.0), ("c", 1.5), ("b", 1.0), ("d", 0.5)]
    );
    let tb = |id: &str| {
        let s = table.iter().find(|s| s.id == id).unwrap();
        (s.buchholz, s.sonneborn_berger)
    };
    assert_eq!(tb("a"), (3.0, 3.0));
    assert_eq!(tb("b"), (5.0, 0.5));
    assert_eq!(tb("c"), (4.5, 1.25));
    assert_eq!(tb("d"), (5.5, 0.75));
}

/// Five players, a bye each round, a late joiner and a withdrawal:
/// R1: p5 (lowest) has the bye; p1-p3, p4-p2. p1 and p2 win.
/// R2: ranking p1 p2 p5 (1 point) p3 p4 (0): p4 is the lowest without a bye. Group
///     [p1 p2 p5]: p1-p2, p5 floats down to p3. p2 had Black: p2-p1; p3 had Black, p5
///     nothing: p3-p5. p2 wins, p3-p5 drawn.
/// Before R3 p2 withdraws and p6 (1600) joins: active p5 (1.5) p1 p4 (1) p3 (0.5)
///     p6 (0): p6 is the lowest without a bye. p5 alone floats to p1; p4 to p3 (they have
///     not met). p5 had Black (net -1), p1 Red then Black (0): p5-p1; p4 had Red, p3
///     Black then Red: p3-p4.
#[test]
fn byes_late_joiners_and_withdrawals() {
    let mut players: Vec<Entrant> = (1..=5)
        .map(|i| entrant(&format!("p{i}"), 1600.0 - 100.0 * i as f64))
        .collect();
    let r1 = pair(&players, &[], 1);
    assert_eq!(r1.bye.as_deref(), Some("p5"));
    assert_eq!(pairs(&r1), [("p1", "p3"), ("p4", "p2")]);
    let r1 = play(r1, &[GameResult::RED_WINS, GameResult::BLACK_WINS]);
    let r2 = pair(&players, std::slice::from_ref(&r1), 2);
    assert_eq!(r2.bye.as_deref(), Some("p4"));
    assert_eq!(pairs(&r2), [("p2", "p1"), ("p3", "p5")]);
    let r2 = play(r2, &[GameResult::RED_WINS, GameResult::DRAW]);
    players[1].withdrawn = true;
    players.push(Entrant {
        joined: 3,
        ..entrant("p6", 1600.0)
    });
    let r3 = pair(&players, &[r1.clone(), r2.clone()], 3);
    assert_eq!(r3.bye.as_deref(), Some("p6"));
    assert_eq!(pairs(&r3), [("p5", "p1"), ("p3", "p4")]);
    let r3 = play(r3, &[GameResult::RED_WINS, GameResult::DRAW]);
    let table = standings(&players, &[r1, r2, r3]);
    // p5 2.5; p2 2 (withdrawn, his games count); p4 1.5; p1, p3, p6 on 1 point:
    // Buchholz p1 = p3 1 + p2 2 + p5 2.5 = 5.5, p3 = p1 1 + p5 2.5 + p4 1.5 = 5,
    // p6 = 0 (a bye only).
    assert_eq!(
        ranked(&table),
        [
            ("p5", 2.5),
            ("p2", 2.0),
            ("p4", 1.5),
            ("p1", 1.0),
            ("p3", 1.0),
            ("p6", 1.0)
        ]
    );
    assert!(table[1].withdrawn);
}

/// A bye goes once per player: with three players over three rounds each has one.
#[test]
fn one_bye_per_player() {
    let players = [
        entrant("x", 1500.0),
        entrant("y", 1400.0),
        entrant("z", 1300.0),
    ];
    let mut rounds = Vec::new();
    let mut byes = Vec::new();
    for n in 1..=3 {
        let r = pair(&players, &rounds, n);
        byes.push(r.bye.clone().unwrap());
        let results = vec![GameResult::RED_WINS; r.pairings.len()];
        rounds.push(play(r, &results));
    }
    byes.sort();
    assert_eq!(byes, ["x", "y", "z"]);
    // Every pair met exactly once: no repeated pairing.
    let mut met: Vec<(String, String)> = rounds
        .iter()
        .flat_map(|r| &r.pairings)
        .map(|p| {
            let mut two = [p.red.clone(), p.black.clone()];
            two.sort();
            (two[0].clone(), two[1].clone())
        })
        .collect();
    met.sort();
    met.dedup();
    assert_eq!(met.len(), 3);
}

/// When the Dutch first choice was played before, the search takes the next one, and
/// backtracks when a choice leaves the rest unpairable without repeats. Six players
/// all on half a point after a round of draws that paired 1-4, 2-5, 3-6: 1 takes 5 (4
/// was played); 2 takes 4, which leaves 3-6 (played): back to 2, who takes 6; then 3-4.
#[test]
fn no_repeated_pairing_while_another_exists() {
    let players: Vec<Entrant> = (1..=6)
        .map(|i| entrant(&i.to_string(), 2000.0 - i as f64))
        .collect();
    let r1 = pair(&players, &[], 1);
    assert_eq!(pairs(&r1), [("1", "4"), ("5", "2"), ("3", "6")]);
    let r1 = play(r1, &[GameResult::DRAW; 3]);
    let r2 = pair(&players, std::slice::from_ref(&r1), 2);
    let got: Vec<(String, String)> = r2
        .pairings
        .iter()
        .map(|p| {
            let mut two = [p.red.clone(), p.black.clone()];
            two.sort();
            (two[0].clone(), two[1].clone())
        })
        .collect();
    let want: Vec<(String, String)> = [("1", "5"), ("2", "6"), ("3", "4")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
    // The same standings give the same pairing.
    assert_eq!(r2, pair(&players, &[r1], 2));
}

/// Players tied on score, Buchholz and Sonneborn-Berger are ordered by the points they
/// made against each other, then by seed.
#[test]
fn direct_encounter_breaks_the_last_tie() {
    let s = |id: &str, rating| Standing {
        id: id.into(),
        rank: 0,
        score: 1.0,
        buchholz: 2.0,
        sonneborn_berger: 1.0,
        rating,
        withdrawn: false,
    };
    let rounds = [Round {
        pairings: vec![Pairing {
            red: "strong".into(),
            black: "weak".into(),
            result: Some(GameResult::BLACK_WINS),
        }],
        bye: None,
    }];
    let mut tied = vec![s("strong", 2000.0), s("weak", 1000.0), s("other", 1500.0)];
    direct_encounter(&mut tied, &rounds);
    let order: Vec<&str> = tied.iter().map(|s| s.id.as_str()).collect();
    // weak beat strong (1 point); other met neither: 0 like strong, seed decides.
    assert_eq!(order, ["weak", "strong", "other"]);
}
