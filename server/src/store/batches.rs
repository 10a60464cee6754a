//! Which rows of a batched journal (SQLite's layout, see `sql/batches.rs`) hold entries of
//! which live games, kept by the writer: a row is deleted once every game with an entry
//! in it is stored. Rebuilt from the rows themselves when the writer starts
//! (`sql::batches::seed`).

use std::collections::HashMap;

use protocol::wire::GameId;

/// Bounded by the live games and their entries: a game lists at most one row per entry
/// (the rooms keep every entry of a live game anyway), and a row is counted only while a
/// live game has entries in it.
#[derive(Default)]
pub(crate) struct Batches {
    /// Each row still kept: how many live games have entries in it.
    refs: HashMap<i64, u32>,
    /// Each live game with entries: the rows holding them, in order, without repeats.
    games: HashMap<GameId, Vec<i64>>,
}

impl Batches {
    /// Row `id` was written with entries of `games`.
    pub(crate) fn written(&mut self, id: i64, games: impl IntoIterator<Item = GameId>) {
        let mut n = 0;
        for game in games {
            let rows = self.games.entry(game).or_default();
            // Kept in order, so a row is looked for by halves, not by a scan: a long
            // game lists a row per batch (20 a second), and a scan for each of its
            // entries grew with the game. Rows come in order anyway (the writer appends
            // them, `seed` reads them by id): the insert is a push.
            if let Err(at) = rows.binary_search(&id) {
                rows.insert(at, id);
                n += 1;
            }
        }
        if n > 0 {
            *self.refs.entry(id).or_default() += n;
        }
    }

    /// `games` are stored: the rows in which no live game has entries any more.
    pub(crate) fn forget(&mut self, games: &[GameId]) -> Vec<i64> {
        let mut dead = Vec::new();
        for game in games {
            for id in self.games.remove(game).unwrap_or_default() {
                if let Some(n) = self.refs.get_mut(&id) {
                    *n -= 1;
                    if *n == 0 {
                        self.refs.remove(&id);
                        dead.push(id);
                    }
                }
            }
        }
        dead
    }

    /// Rows kept.
    #[cfg(test)]
    pub(crate) fn rows(&self) -> usize {
        self.refs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(n: u64) -> GameId {
        GameId::from_u64_pair(0, n)
    }

    #[test]
    fn a_row_goes_when_the_last_of_its_games_is_stored() {
        let mut b = Batches::default();
        b.written(1, [g(1), g(2)]);
        b.written(2, [g(2)]);
        b.written(3, [g(1), g(3)]);
        assert_eq!(b.rows(), 3);
        assert_eq!(
            b.forget(&[g(2)]),
            vec![2],
            "row 1 still holds game 1's entries"
        );
        let mut dead = b.forget(&[g(1)]);
        dead.sort_unstable();
        assert_eq!(dead, vec![1], "row 3 still holds game 3's");
        assert_eq!(b.forget(&[g(3), g(9)]), vec![3]);
        assert_eq!(b.rows(), 0);
        assert!(b.games.is_empty());
    }

    #[test]
    fn a_game_counts_once_per_row() {
        let mut b = Batches::default();
        b.written(5, [g(1), g(1)]);
        b.written(5, [g(1)]);
        assert_eq!(b.refs[&5], 1);
        assert_eq!(b.forget(&[g(1)]), vec![5]);
        assert!(
            b.forget(&[g(1)]).is_empty(),
            "forgetting twice frees nothing more"
        );
    }

    #[test]
    fn a_row_read_out_of_order_still_counts_once_per_game() {
        let mut b = Batches::default();
        b.written(7, [g(1)]);
        b.written(5, [g(1)]);
        b.written(7, [g(1)]);
        b.written(5, [g(1)]);
        assert_eq!((b.refs[&5], b.refs[&7]), (1, 1));
        let mut dead = b.forget(&[g(1)]);
        dead.sort_unstable();
        assert_eq!(dead, vec![5, 7]);
    }
}
