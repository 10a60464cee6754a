//! The store's unit tests: the ordered write queue, old databases migrated (names made
//! unique, integer game ids become UUIDs), and what `--db` means.

mod store {
    use super::super::*;
    use protocol::record::{Entry, EntryKind};
    use protocol::settings::{Level, Settings};

    /// Writes nobody waits for gather (here for a minute); a write someone awaits, queued
    /// while they gather, ends the gathering: it is on disk at once, not a minute later,
    /// and so is what was queued before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_awaited_write_ends_the_gathering() {
        let store = Store::open_gathering(None, Duration::from_secs(60))
            .await
            .unwrap();
        let id = GameId::from_u64_pair(0, 3);
        let start = GameStart::between(id, "r", "b", Settings::blitz(Level::One), 1);
        store.submit(Write::GameStarted(start.clone()));
        // Let the writer take it and start gathering.
        while store.queued() > 0 {
            tokio::task::yield_now().await;
        }
        let game = protocol::game::Game::new(start.settings.clone());
        let end = GameEnd::of(start, &game, Vec::new(), 5_000, Some("test"));
        let (ack, stored) = oneshot::channel();
        store.submit(Write::GameEnded(Box::new(end), Some(ack)));
        let stored = tokio::time::timeout(Duration::from_secs(10), stored)
            .await
            .expect("acknowledged long before the gathering's end");
        assert!(stored.unwrap(), "the game and its end are on disk");
    }

    /// A Level 1 game numbered `n`, started at 1 ms.
    pub(super) fn start(n: u64) -> GameStart {
        let id = GameId::from_u64_pair(0, n);
        GameStart::between(id, "r", "b", Settings::blitz(Level::One), 1)
    }

    /// Stores the game `start` began as ended, and waits until it is on disk.
    pub(super) async fn end(store: &Store, start: GameStart) {
        let game = protocol::game::Game::new(start.settings.clone());
        let end = GameEnd::of(start, &game, Vec::new(), 5_000, Some("test"));
        let (ack, stored) = oneshot::channel();
        store.submit(Write::GameEnded(Box::new(end), Some(ack)));
        assert!(stored.await.unwrap(), "stored");
    }

    /// Journal row `idx` of `game` (an `advance` at `idx` ms).
    pub(super) fn entry(game: GameId, idx: u64) -> Write {
        Write::Entry {
            game,
            epoch: 0,
            idx,
            entry: Entry {
                at_ms: idx,
                kind: EntryKind::Advance,
            },
        }
    }

    /// A burst far over the queue waits in one ordered overflow: no task per write
    /// (before: one each), the entries are written in the order they came, and the
    /// game's end after all of them; its journal is cleared at the flush.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_overflow_keeps_order_without_a_task_per_write() {
        let store = Store::open_with(None, 4).await.unwrap();
        let metrics = tokio::runtime::Handle::current().metrics();
        let tasks = metrics.num_alive_tasks();
        let id = GameId::from_u64_pair(0, 1);
        let start = GameStart::between(id, "r", "b", Settings::blitz(Level::One), 1);
        store.submit(Write::GameStarted(start.clone()));
        for idx in 0..2_000 {
            store.submit(entry(id, idx));
        }
        assert!(
            metrics.num_alive_tasks() <= tasks,
            "{} tasks, {tasks} before",
            metrics.num_alive_tasks()
        );
        assert!(
            store.stats.queue_full.load(Ordering::Relaxed) > 0,
            "overflowed"
        );
        store.flush().await;
        assert_eq!(store.backlog(), 0);
        let Some(Db::Sqlite(pool)) = &store.db else {
            panic!("an SQLite store")
        };
        let order = sqlite::sql::live_entry_order(pool, id).await.unwrap();
        assert_eq!(order, (0..2_000).collect::<Vec<i64>>(), "written in order");
        let game = protocol::game::Game::new(start.settings.clone());
        let end = GameEnd::of(start, &game, Vec::new(), 5_000, Some("test"));
        store.submit(Write::GameEnded(Box::new(end), None));
        store.flush().await;
        let left = sqlite::sql::live_entry_count(pool, id).await.unwrap();
        assert_eq!(
            left, 0,
            "the journal of a stored game is cleared at a flush"
        );
    }

    /// The journals of stored games are cleared together, not each at its game's end:
    /// at the first batch a second after the first of them was stored (or at a flush).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stored_games_journals_are_cleared_together() {
        let store = Store::open_with(None, 64).await.unwrap();
        let Some(Db::Sqlite(pool)) = store.db.clone() else {
            panic!("an SQLite store")
        };
        let ids = [GameId::from_u64_pair(0, 7), GameId::from_u64_pair(0, 8)];
        for (n, id) in [7, 8].into_iter().zip(ids) {
            let start = start(n);
            store.submit(Write::GameStarted(start.clone()));
            for idx in 0..3 {
                store.submit(entry(id, idx));
            }
            end(&store, start).await;
            // The first stored, and its journal still there: it waits for the sweep.
            // (The second's could be cleared at once were the test held up for a second
            // between the two.)
            if id == ids[0] {
                let left = sqlite::sql::live_entry_count(&pool, id).await.unwrap();
                assert_eq!(left, 3, "cleared at once");
            }
        }
        store.flush().await;
        for id in ids {
            let left = sqlite::sql::live_entry_count(&pool, id).await.unwrap();
            assert_eq!(left, 0, "not cleared at the flush");
        }
    }
}

/// The journal in batch rows (SQLite's layout, `sql/batches.rs`).
mod batched {
    use super::super::*;
    use super::store::{end, entry, start};

    async fn rows(pool: &sqlx::SqlitePool) -> i64 {
        sqlx::query_scalar("SELECT COUNT(*) FROM live_batches")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    /// One transaction's entries of two games are one row, which stays while either game
    /// is live and goes once both are stored.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_row_stays_until_its_last_game_is_stored() {
        let store = Store::open_gathering(None, Duration::from_secs(60))
            .await
            .unwrap();
        let Some(Db::Sqlite(pool)) = store.db.clone() else {
            panic!("an SQLite store")
        };
        let (a, b) = (start(1), start(2));
        store.submit(Write::GameStarted(a.clone()));
        store.submit(Write::GameStarted(b.clone()));
        for idx in 0..2 {
            store.submit(entry(a.id, idx));
            store.submit(entry(b.id, idx));
        }
        store.flush().await;
        assert_eq!(rows(&pool).await, 1, "one transaction, one row");
        end(&store, a).await;
        store.flush().await;
        assert_eq!(rows(&pool).await, 1, "b is still live");
        let order = sqlite::sql::live_entry_order(&pool, b.id).await.unwrap();
        assert_eq!(order, vec![0, 1]);
        end(&store, b.clone()).await;
        store.flush().await;
        assert_eq!(rows(&pool).await, 0, "both stored: the row goes");
    }

    /// A start finds what each row holds: rows of games no longer live go (a stop before
    /// the writer cleared them), and a live game's entries come back from every row that
    /// holds them, in order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_start_resumes_from_the_rows_and_clears_the_dead_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let (a, b) = (start(1), start(2));
        {
            let (store, live) = Store::open_resuming(Some(&path)).await.unwrap();
            assert!(live.is_empty());
            store.submit(Write::GameStarted(a.clone()));
            store.submit(Write::GameStarted(b.clone()));
            store.submit(entry(a.id, 0));
            store.submit(entry(b.id, 0));
            store.flush().await;
            store.submit(entry(b.id, 1));
            store.flush().await;
            store.submit(entry(a.id, 1));
            store.flush().await;
            let Some(Db::Sqlite(pool)) = store.db.clone() else {
                panic!("an SQLite store")
            };
            assert_eq!(rows(&pool).await, 3);
            // b stored by a node that stopped before its writer cleared b's rows.
            sqlx::query("UPDATE games SET state = 'aborted' WHERE id = $1")
                .bind(b.id.to_string())
                .execute(&pool)
                .await
                .unwrap();
        }
        let (store, live) = Store::open_resuming(Some(&path)).await.unwrap();
        store.flush().await;
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].start.id, a.id);
        let at: Vec<u64> = live[0].entries.iter().map(|e| e.at_ms).collect();
        assert_eq!(at, vec![0, 1], "a's entries from both of its rows");
        let Some(Db::Sqlite(pool)) = store.db.clone() else {
            panic!("an SQLite store")
        };
        assert_eq!(
            rows(&pool).await,
            2,
            "b's own row went; the shared one stays"
        );
        let left = sqlite::sql::live_entry_count(&pool, b.id).await.unwrap();
        assert_eq!(left, 1, "b's entry in a's first row");
    }

    /// On a store with nothing more to write, a stored game's rows still go once the
    /// sweep's time (a second) has come, not at the next write.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_idle_store_clears_a_stored_games_rows() {
        let store = Store::open_with(None, 64).await.unwrap();
        let Some(Db::Sqlite(pool)) = store.db.clone() else {
            panic!("an SQLite store")
        };
        let a = start(1);
        store.submit(Write::GameStarted(a.clone()));
        store.submit(entry(a.id, 0));
        end(&store, a).await;
        // Another database's state: nothing to await but the rows themselves.
        let cleared = async {
            while rows(&pool).await > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), cleared)
            .await
            .expect("cleared about a second after the end, with no write after it");
    }

    /// A cut-off game stored as aborted after the start (its player unknown, its journal
    /// not placeable) goes through the writer, which deletes its rows.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_game_stored_as_aborted_after_the_start_leaves_no_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let a = start(1);
        {
            let (store, _) = Store::open_resuming(Some(&path)).await.unwrap();
            store.submit(Write::GameStarted(a.clone()));
            store.submit(entry(a.id, 0));
            store.flush().await;
        }
        let (store, mut live) = Store::open_resuming(Some(&path)).await.unwrap();
        let Some(Db::Sqlite(pool)) = store.db.clone() else {
            panic!("an SQLite store")
        };
        store.flush().await;
        assert_eq!(rows(&pool).await, 1, "a is live: its row stays");
        store.store_aborted(live.pop().expect("a")).await.unwrap();
        store.flush().await;
        assert_eq!(rows(&pool).await, 0);
        assert!(!store.is_live(a.id).await.unwrap(), "stored");
    }
}

mod names {
    use super::super::*;
    use protocol::settings::Settings;
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    fn row(id: &str, name: &str) -> PlayerRow {
        PlayerRow {
            id: id.into(),
            name: name.into(),
            token_hash: format!("hash-{id}"),
            created_ms: 1,
            is_bot: false,
        }
    }

    /// A database file in `dir` with only the migrations older than `before` (a file
    /// name's prefix) applied: a database of an older server.
    async fn old_database(dir: &std::path::Path, before: &str) -> sqlx::SqlitePool {
        let old = dir.join("migrations");
        std::fs::create_dir(&old).unwrap();
        let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        for file in std::fs::read_dir(&from).unwrap() {
            let name = file.unwrap().file_name();
            if name.to_str().unwrap() < before {
                std::fs::copy(from.join(&name), old.join(&name)).unwrap();
            }
        }
        let options = SqliteConnectOptions::new()
            .filename(dir.join("old.db"))
            .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .connect_with(options)
            .await
            .unwrap();
        let migrator = sqlx::migrate::Migrator::new(old.as_path()).await.unwrap();
        migrator.run(&pool).await.unwrap();
        pool
    }

    /// A database from before unique names, with names equal but for case, takes the
    /// migration; from then on a name is free only if no player has it in any case.
    #[tokio::test]
    async fn names_become_unique_on_an_old_database() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.db");
        {
            let pool = old_database(dir.path(), "20251125000000").await;
            for (id, name) in [("1", "Ann"), ("2", "ann"), ("3", "Ben")] {
                sqlx::query(
                    "INSERT INTO players (id, name, token_hash, created_ms) VALUES ($1, $2, $3, 1)",
                )
                .bind(id)
                .bind(name)
                .bind(format!("old-{id}"))
                .execute(&pool)
                .await
                .unwrap();
            }
            pool.close().await;
        }
        let store = Store::open(Some(&db)).await.unwrap();
        assert!(!store.register_player(&row("a", "ANN")).await.unwrap());
        assert!(!store.register_player(&row("b", "bEN")).await.unwrap());
        assert!(store.register_player(&row("c", "Cid")).await.unwrap());
        assert!(!store.register_player(&row("d", "CID")).await.unwrap());
        // The older players are all still there.
        let ann = store.player_by_token_hash("old-2").await.unwrap().unwrap();
        assert_eq!(ann.name, "ann");
    }

    /// Games stored under the old integer ids keep their records and their order, under
    /// UUIDs older than every v7 id; their cut-off journal rows follow them.
    #[tokio::test]
    async fn integer_game_ids_become_uuids_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.db");
        {
            let pool = old_database(dir.path(), "20261125000000").await;
            for id in [5i64, 12] {
                sqlx::query(
                    "INSERT INTO games (id, red_id, red_name, black_id, black_name, level, \
                     settings, state, move_count, started_ms, ended_ms) \
                     VALUES ($1, 'r', 'Ann', 'b', 'Ben', 1, $2, 'finished', 3, 1, 2)",
                )
                .bind(id)
                .bind(
                    serde_json::to_string(&Settings::level(protocol::settings::Level::One))
                        .unwrap(),
                )
                .execute(&pool)
                .await
                .unwrap();
            }
            pool.close().await;
        }
        let store = Store::open(Some(&db)).await.unwrap();
        let ids: Vec<String> = store
            .recent_games(Some("Ann"), None, 10)
            .await
            .unwrap()
            .iter()
            .map(|g| g.id.to_string())
            .collect();
        assert_eq!(
            ids,
            [
                "00000000-0000-0000-0000-00000000000c",
                "00000000-0000-0000-0000-000000000005"
            ]
        );
        let newer = GameId::now_v7();
        assert!(newer > ids[0].parse::<GameId>().unwrap());
        let before_12 = store
            .recent_games(None, Some(ids[0].parse().unwrap()), 10)
            .await
            .unwrap();
        assert_eq!(before_12.len(), 1);
        assert_eq!(before_12[0].id.to_string(), ids[1]);
    }

    /// A journal cut off under the keyed layout (a row per entry) is moved into one batch
    /// row by the migration, and its game resumes with every entry.
    #[tokio::test]
    async fn a_keyed_journal_becomes_a_batch_row() {
        use protocol::record::{Entry, EntryKind};
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.db");
        let id = GameId::now_v7();
        {
            let pool = old_database(dir.path(), "20261127000000").await;
            sqlx::query(
                "INSERT INTO games (id, red_id, red_name, black_id, black_name, level, \
                 settings, state, move_count, started_ms) \
                 VALUES ($1, 'r', 'Ann', 'b', 'Ben', 1, $2, 'playing', 0, 1)",
            )
            .bind(id.to_string())
            .bind(serde_json::to_string(&Settings::blitz(protocol::settings::Level::One)).unwrap())
            .execute(&pool)
            .await
            .unwrap();
            for idx in [1i64, 0] {
                let entry = Entry {
                    at_ms: 10 * idx as u64,
                    kind: EntryKind::Advance,
                };
                sqlx::query("INSERT INTO live_entries (game_id, idx, entry) VALUES ($1, $2, $3)")
                    .bind(id.to_string())
                    .bind(idx)
                    .bind(serde_json::to_string(&entry).unwrap())
                    .execute(&pool)
                    .await
                    .unwrap();
            }
            pool.close().await;
        }
        let (_store, live) = Store::open_resuming(Some(&db)).await.unwrap();
        assert_eq!(live.len(), 1);
        let at: Vec<u64> = live[0].entries.iter().map(|e| e.at_ms).collect();
        assert_eq!(at, vec![0, 10], "both entries, in order");
    }
}

mod location {
    use super::super::*;

    /// `--db` takes a PostgreSQL URL or keeps meaning a path; passwords stay out of logs.
    #[test]
    fn db_is_a_postgres_url_or_a_path() {
        assert_eq!(
            Location::parse("postgres://u:pw@h:5432/tamsk"),
            Location::Postgres("postgres://u:pw@h:5432/tamsk".into())
        );
        assert!(matches!(
            Location::parse("postgresql://h/tamsk"),
            Location::Postgres(_)
        ));
        assert_eq!(
            Location::parse("tamsk.db"),
            Location::Sqlite(PathBuf::from("tamsk.db"))
        );
        assert_eq!(
            Location::parse("./postgres:/x.db"),
            Location::Sqlite(PathBuf::from("./postgres:/x.db"))
        );
        assert_eq!(
            Location::parse("postgres://u:pw@h:5432/tamsk").describe(),
            "postgres://u@h:5432/tamsk"
        );
    }
}

mod busy {
    use super::super::*;
    use crate::glicko::RatedGame;
    use protocol::rating::TimeControl;

    /// A rated game applied while the writer commits on its own connection: SQLite
    /// refused the ratings' transaction (`database is locked`, code 5 or 517) when it had
    /// read before the writer's commit and then wrote, and the game was never rated.
    /// Every one is applied now.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ratings_are_stored_while_the_writer_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let pool = sqlite::open(Some(&path)).await.unwrap();
        let writer = sqlite::open_writer(&path).await.unwrap();
        for id in ["a", "b", "c", "d"] {
            let row = PlayerRow {
                id: id.into(),
                name: format!("P{id}"),
                token_hash: format!("hash-{id}"),
                created_ms: 1,
                is_bot: false,
            };
            assert!(sqlite::sql::register_player(&pool, &row).await.unwrap());
        }
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let commits = tokio::spawn({
            let stop = stop.clone();
            async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    sqlx::query("INSERT INTO live_batches (body) VALUES ('[]')")
                        .execute(&writer)
                        .await
                        .unwrap();
                    n += 1;
                }
                n
            }
        });
        let mut failed = Vec::new();
        for i in 0..200u64 {
            let players = if i % 2 == 0 { ["a", "b"] } else { ["c", "d"] };
            let game = RatedGame {
                game: GameId::from_u64_pair(7, i),
                tc: TimeControl::Blitz,
                players: players.map(String::from),
                score: 1.0,
                at_ms: i,
            };
            if let Err(e) = sqlite::sql::ratings::apply_rated(&pool, &game).await {
                failed.push(e.to_string());
            }
        }
        stop.store(true, Ordering::Relaxed);
        let commits = commits.await.unwrap();
        assert!(commits > 0);
        assert!(
            failed.is_empty(),
            "{} of 200 failed: {:?}",
            failed.len(),
            &failed[..1]
        );
    }
}
