//! Real services for the tests, started by the tests themselves: a throwaway PostgreSQL
//! cluster (`initdb` into a temporary directory, `pg_ctl start` on a free port) and a
//! `nats-server` on a free port. Both stop when dropped.
//!
//! When a service's binaries are missing, a test skips with a loud message, unless
//! `TAMSK_REQUIRE_SERVICES` is set (CI sets it): then the test fails. A service whose
//! binaries are there but which does not start always fails the test.
//!
//! One PostgreSQL cluster is shared by the tests of a process that run at the same time
//! ([`Postgres::shared`]; starting one takes about a second and a half, mostly `initdb`),
//! each test in a database of its own ([`Postgres::database`]).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use server::Config;
use sqlx::{Connection, Executor};

use crate::{config_with_db, test_config};

/// Whether missing services fail the tests (`TAMSK_REQUIRE_SERVICES` set, not `0`).
pub fn required() -> bool {
    std::env::var("TAMSK_REQUIRE_SERVICES").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// A service's binaries are missing: fails when services are required, else says loudly
/// that the test is skipped.
fn missing(what: &str, hint: &str) {
    if required() {
        panic!("{what} is missing and TAMSK_REQUIRE_SERVICES is set: {hint}");
    }
    eprintln!(
        "\n!!!!! SKIPPED: {what} is missing ({hint}); this test did not run. \
         Set TAMSK_REQUIRE_SERVICES=1 to make that a failure. !!!!!\n"
    );
}

/// A port free on 127.0.0.1 just now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Running as root (the owner of /proc/self is the effective user).
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The directory of PostgreSQL's server binaries: `TAMSK_PG_BIN`, else the newest of
/// `/usr/lib/postgresql/*/bin` (Debian), else wherever `initdb` is on the PATH.
fn pg_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TAMSK_PG_BIN") {
        let dir = PathBuf::from(dir);
        return dir.join("initdb").exists().then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
}

/// Where an executable is on the PATH (or in /usr/sbin, where Debian puts nats-server).
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A throwaway PostgreSQL cluster: its data directory is a temporary one, it listens on
/// 127.0.0.1 on a port of its own, trusts every local connection (user `postgres`, no
/// password) and does not sync to disk. Stopped (and its directory removed) when dropped.
pub struct Postgres {
    pub port: u16,
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// Run PostgreSQL's commands as the `postgres` user (we are root: initdb refuses).
    as_postgres: bool,
    /// How long initdb and the start took.
    pub startup: Duration,
}

static SHARED: Mutex<Weak<Postgres>> = Mutex::new(Weak::new());
static DATABASES: AtomicU32 = AtomicU32::new(0);

impl Postgres {
    /// The cluster the running tests share, started if none is running; `None` when the
    /// binaries are missing (and not [`required`]).
    pub fn shared() -> Option<Arc<Postgres>> {
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pg) = shared.upgrade() {
            return Some(pg);
        }
        let pg = Arc::new(Postgres::start()?);
        *shared = Arc::downgrade(&pg);
        Some(pg)
    }

    /// Starts a cluster of its own; `None` when the binaries are missing (and not
    /// [`required`]).
    pub fn start() -> Option<Postgres> {
        let Some(bin) = pg_bin() else {
            missing(
                "PostgreSQL (initdb, pg_ctl)",
                "apt-get install postgresql, or set TAMSK_PG_BIN",
            );
            return None;
        };
        let started = Instant::now();
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("tamsk-pg-")
            .tempdir()
            .expect("a temporary directory");
        if as_postgres {
            let (uid, gid) = (id_of("-u"), id_of("-g"));
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("hand the temporary directory to postgres");
        }
        let mut pg = Postgres {
            port: 0,
            bin,
            dir,
            as_postgres,
            startup: Duration::ZERO,
        };
        let data = pg.data();
        pg.run(
            "initdb",
            &[
                "-D",
                path_str(&data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ],
        );
        // A port taken between choosing and binding fails the start: try another.
        for attempt in 0.. {
            pg.port = free_port();
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c synchronous_commit=off -c full_page_writes=off -c max_connections=300",
                pg.port,
                path_str(pg.dir.path())
            );
            let log = pg.dir.path().join("postgres.log");
            let ok = pg.try_run(
                "pg_ctl",
                &[
                    "-D",
                    path_str(&data),
                    "-l",
                    path_str(&log),
                    "-o",
                    &options,
                    "-w",
                    "-t",
                    "30",
                    "start",
                ],
            );
            if ok {
                break;
            }
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(attempt < 3, "PostgreSQL did not start:\n{log}");
        }
        pg.startup = started.elapsed();
        eprintln!(
            "PostgreSQL started on 127.0.0.1:{} in {} ms",
            pg.port,
            pg.startup.as_millis()
        );
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn try_run(&self, program: &str, args: &[&str]) -> bool {
        let out = self
            .command(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        if !out.status.success() {
            eprintln!(
                "{program} failed: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out.status.success()
    }

    fn run(&self, program: &str, args: &[&str]) {
        assert!(self.try_run(program, args), "{program} failed");
    }

    /// The URL of database `name` as user `postgres`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A new empty database of its own, by URL.
    pub async fn database(&self) -> String {
        let name = format!(
            "tamsk_{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn = sqlx::PgConnection::connect(&self.url("postgres"))
            .await
            .expect("connect to the test cluster");
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await
            .expect("create a test database");
        conn.close().await.ok();
        self.url(&name)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .command("pg_ctl")
            .args(["-D", path_str(&data), "-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The `postgres` user's uid (`-u`) or gid (`-g`).
fn id_of(flag: &str) -> u32 {
    let out = Command::new("id")
        .args([flag, "postgres"])
        .output()
        .expect("run id");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the postgres user (created by Debian's postgresql package)")
}

/// A `nats-server` on a free port of 127.0.0.1, with JetStream (its store in a temporary
/// directory). Killed when dropped.
pub struct Nats {
    pub port: u16,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Nats {
    /// Starts one; `None` when `nats-server` is missing (and not [`required`]).
    pub fn start() -> Option<Nats> {
        let Some(exe) = which("nats-server") else {
            missing("nats-server", "apt-get install nats-server");
            return None;
        };
        let dir = tempfile::tempdir().expect("a temporary directory");
        for attempt in 0.. {
            let port = free_port();
            let mut child = Command::new(&exe)
                .args(["-a", "127.0.0.1", "-p", &port.to_string(), "--jetstream"])
                .arg("--store_dir")
                .arg(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("run nats-server");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Nats {
                        port,
                        child,
                        _dir: dir,
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            assert!(attempt < 3, "nats-server did not start");
        }
        unreachable!()
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Speaks NATS's text protocol to it: its INFO, then CONNECT and PING answered by
    /// PONG. Returns the INFO line.
    pub fn ping(&self) -> std::io::Result<String> {
        let stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut info = String::new();
        reader.read_line(&mut info)?;
        (&stream).write_all(b"CONNECT {\"verbose\":false}\r\nPING\r\n")?;
        let mut pong = String::new();
        reader.read_line(&mut pong)?;
        if pong.trim_end() != "PONG" {
            return Err(std::io::Error::other(format!("not a PONG: {pong:?}")));
        }
        Ok(info)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The database of a test: an SQLite file in a temporary directory, or a database of its
/// own in the shared throwaway PostgreSQL. Test bodies take one, and run on each
/// ([`backend_tests!`](crate::backend_tests)).
pub enum TestDb {
    Sqlite {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
    Postgres {
        url: String,
        cluster: Arc<Postgres>,
    },
}

impl TestDb {
    pub fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("a temporary directory");
        TestDb::Sqlite {
            path: dir.path().join("tamsk.db"),
            _dir: dir,
        }
    }

    /// A fresh database in the shared cluster; `None`: skipped (no PostgreSQL here).
    pub async fn postgres() -> Option<TestDb> {
        let cluster = tokio::task::spawn_blocking(Postgres::shared)
            .await
            .expect("start PostgreSQL")?;
        let url = cluster.database().await;
        Some(TestDb::Postgres { url, cluster })
    }

    /// The backend's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            TestDb::Sqlite { .. } => "sqlite",
            TestDb::Postgres { .. } => "postgres",
        }
    }

    /// The test config of a server on this database.
    pub fn config(&self) -> Config {
        match self {
            TestDb::Sqlite { path, .. } => config_with_db(path),
            TestDb::Postgres { url, .. } => Config {
                db_url: Some(url.clone()),
                ..test_config()
            },
        }
    }

    /// A stored (not live) game's state, winner and reason, read straight from the
    /// database as another process would.
    pub async fn stored_game_row(
        &self,
        id: protocol::wire::GameId,
    ) -> Option<(String, Option<String>, String)> {
        match self.game_row(id).await? {
            (state, winner, Some(reason)) if state != "playing" => Some((state, winner, reason)),
            _ => None,
        }
    }

    /// Whether the database has game `id` as live (its start written, its end not yet).
    pub async fn is_live(&self, id: protocol::wire::GameId) -> bool {
        matches!(self.game_row(id).await, Some((state, ..)) if state == "playing")
    }

    /// A game's row (state, winner, reason), read straight from the database as another
    /// process would.
    async fn game_row(
        &self,
        id: protocol::wire::GameId,
    ) -> Option<(String, Option<String>, Option<String>)> {
        use sqlx::{ConnectOptions, Row};
        const QUERY: &str = "SELECT state, winner, reason FROM games WHERE id = $1";
        match self {
            TestDb::Sqlite { path, .. } => {
                let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
                    .filename(path)
                    .read_only(true)
                    .connect()
                    .await
                    .expect("open the database file");
                sqlx::query(QUERY)
                    .bind(id.to_string())
                    .fetch_optional(&mut conn)
                    .await
                    .expect("query")
                    .map(|r| (r.get("state"), r.get("winner"), r.get("reason")))
            }
            TestDb::Postgres { url, .. } => {
                let mut conn = sqlx::PgConnection::connect(url)
                    .await
                    .expect("connect to the test database");
                sqlx::query(QUERY)
                    .bind(id.to_string())
                    .fetch_optional(&mut conn)
                    .await
                    .expect("query")
                    .map(|r| (r.get("state"), r.get("winner"), r.get("reason")))
            }
        }
    }

    /// Runs one SQL statement on the database as another process would (a test that
    /// stages what a crash could leave).
    pub async fn execute(&self, sql: &str) {
        use sqlx::ConnectOptions;
        match self {
            TestDb::Sqlite { path, .. } => {
                let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
                    .filename(path)
                    .connect()
                    .await
                    .expect("open the database file");
                sqlx::query(sql).execute(&mut conn).await.expect("execute");
            }
            TestDb::Postgres { url, .. } => {
                let mut conn = sqlx::PgConnection::connect(url)
                    .await
                    .expect("connect to the test database");
                sqlx::query(sql).execute(&mut conn).await.expect("execute");
            }
        }
    }

    /// The cluster of a PostgreSQL database.
    pub fn cluster(&self) -> Option<&Postgres> {
        match self {
            TestDb::Postgres { cluster, .. } => Some(cluster),
            TestDb::Sqlite { .. } => None,
        }
    }
}

/// Declares a test body (an `async fn(TestDb)`) as two tests: on an SQLite file (the first
/// name) and on a throwaway PostgreSQL (the second; skipped loudly without PostgreSQL,
/// unless `TAMSK_REQUIRE_SERVICES` is set).
#[macro_export]
macro_rules! backend_tests {
    ($(#[$meta:meta])* $sqlite:ident, $postgres:ident => $body:path) => {
        $(#[$meta])*
        async fn $sqlite() {
            $body($crate::services::TestDb::sqlite()).await
        }

        $(#[$meta])*
        async fn $postgres() {
            if let Some(db) = $crate::services::TestDb::postgres().await {
                $body(db).await
            }
        }
    };
}
