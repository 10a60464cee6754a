//! Lag compensation over a game: Red, `lag` away from the server, answers each flip of the
//! 15-second timer 100 ms before it runs out as he sees it; Black flips at once every turn.
//! Prints, per simulated round trip, the compensation per move and the quota over the game.
//! `cargo bench -p tamsk-protocol --bench lag`

#[path = "../tests/common/lagsim.rs"]
mod lagsim;

fn main() {
    const TURNS: usize = 30;
    println!(
        "Red answers each flip 100 ms before the timer runs out as he sees it ({TURNS} turns)"
    );
    println!(
        "{:>8} | {:>10} | {:>9} | {:>9} | {:>12} | {:>12} | quota over the game (ms, every 5th turn)",
        "lag ms", "turns lost", "comp p50", "comp max", "comp total", "quota min"
    );
    for lag in [0u64, 50, 150, 300, 600, 1_000] {
        let turns = lagsim::simulate(lag, 100, TURNS);
        let lost = turns.iter().filter(|t| t.forfeited).count();
        let mut comps: Vec<u64> = turns.iter().map(|t| t.comp_ms).collect();
        comps.sort_unstable();
        let p50 = comps.get(comps.len() / 2).copied().unwrap_or(0);
        let max = comps.last().copied().unwrap_or(0);
        let total: u64 = comps.iter().sum();
        let min_quota = turns.iter().map(|t| t.quota_after_ms).min().unwrap_or(0);
        let curve: Vec<String> = turns
            .iter()
            .step_by(5)
            .map(|t| t.quota_after_ms.to_string())
            .collect();
        println!(
            "{lag:>8} | {:>10} | {p50:>9} | {max:>9} | {total:>12} | {min_quota:>12} | {}",
            format!("{lost}/{}", turns.len()),
            curve.join(" ")
        );
    }
}
