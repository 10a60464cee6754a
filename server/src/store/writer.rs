//! The writer: one task on the store's own thread that takes the queued writes in
//! batches (one transaction each) and acknowledges them, and the overflow that holds, in
//! order, what found the queue full.

use super::*;
use futures::FutureExt;

/// Most writes in one transaction.
const BATCH: usize = 1024;
/// How long writes nobody waits for may wait for others to share their transaction: a
/// crash loses at most this much of the games' entries (plus a commit's time). 20 ms
/// until session 18; 50 took the store's threads from 2.0-2.2% of a core to 1.0-1.2% at
/// 3,000 moves a second (BENCHMARKS.md).
pub(super) const GATHER: Duration = Duration::from_millis(50);

/// How long the journals of stored games wait to be cleared together (see
/// `sql::forget_journals`): this long after the first of them was stored (at the first
/// batch after, or then if nothing is written); also at a flush, when [`SWEEP_MAX`]
/// games wait, and when the writer ends.
pub(super) const SWEEP: Duration = Duration::from_secs(1);
/// Most stored games whose journals wait to be cleared.
const SWEEP_MAX: usize = 4096;

/// Writes that found the queue full, in order, for one forwarding task to hand on as room
/// comes: nobody who submits ever waits, and nothing overtakes what was submitted before.
#[derive(Default)]
pub(super) struct Overflow {
    pub(super) writes: Arc<Mutex<VecDeque<Write>>>,
    pub(super) more: Arc<Notify>,
}

impl Drop for Overflow {
    /// The last handle of the store went: the forwarding task ends.
    fn drop(&mut self) {
        self.more.notify_one();
    }
}

impl Overflow {
    pub(super) fn len(&self) -> usize {
        self.writes.lock().expect("overflow lock").len()
    }

    /// Hands the overflow on to the writer's queue, in order, as room comes; ends with the
    /// store.
    pub(super) fn start_forwarding(&self, tx: &mpsc::Sender<Write>) {
        let writes = Arc::downgrade(&self.writes);
        let more = self.more.clone();
        let tx = tx.downgrade();
        tokio::spawn(async move {
            loop {
                more.notified().await;
                loop {
                    let Some(tx) = tx.upgrade() else { return };
                    let Ok(permit) = tx.reserve().await else {
                        return;
                    };
                    let Some(writes) = writes.upgrade() else {
                        return;
                    };
                    // Taken under the lock with the room in hand: a write submitted
                    // meanwhile queues behind it.
                    let mut writes = writes.lock().expect("overflow lock");
                    match writes.pop_front() {
                        Some(w) => permit.send(w),
                        None => break,
                    }
                }
                if writes.strong_count() == 0 {
                    return;
                }
            }
        });
    }
}

/// The writer task: batches what is queued into one transaction, then acknowledges.
pub(super) async fn writer(
    db: Db,
    mut rx: mpsc::Receiver<Write>,
    stats: Arc<StoreStats>,
    fenced: Arc<Fenced>,
    urgent: Arc<Notify>,
    gather: Duration,
) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut sweep = Sweep::default();
    let mut journal = Batches::default();
    let seeded = on_db!(Some(&db), Ok(()), |sql, pool| sql::batches::seed(
        pool,
        &mut journal
    )
    .await);
    if let Err(e) = seeded {
        // Rows it could not account for stay until a start that can.
        tracing::warn!(error = %e, "reading the journal's batch rows failed");
    }
    loop {
        // Stored games' journals are cleared a sweep's time after the first of them, by
        // the next batch or, on a server with nothing more to write, when that time comes.
        let got = match sweep.since {
            Some(since) => tokio::select! {
                n = rx.recv_many(&mut batch, BATCH) => n,
                _ = tokio::time::sleep_until(since + SWEEP) => {
                    sweep.run(&db, &mut journal).await;
                    continue;
                }
            },
            None => rx.recv_many(&mut batch, BATCH).await,
        };
        if got == 0 {
            break;
        }
        // Writes nobody waits for (journal rows, game starts) wait a little for company:
        // a transaction per write cost the store a third of the server's CPU with 6,000
        // live games; what someone waits for (a game's end, a new player) goes at once.
        // The gathering sleeps rather than waiting on the queue: a wake-up of this thread
        // per write (each an eventfd write and an epoll round) cost about as much CPU as
        // the write itself; `urgent` (from `Store::submit`) ends it early.
        if !batch.iter().any(Write::awaited) {
            tokio::select! {
                _ = tokio::time::sleep(gather) => {}
                _ = urgent.notified() => {}
            }
            while batch.len() < BATCH {
                let (before, room) = (batch.len(), BATCH - batch.len());
                if rx.recv_many(&mut batch, room).now_or_never().unwrap_or(0) == 0
                    || batch.len() == before
                {
                    break;
                }
            }
        }
        let n = batch.len() as u64;
        let flush = batch.iter().any(|w| matches!(w, Write::Flush(_)));
        let ok = match write_batch(&db, &batch, &mut journal).await {
            Ok(refused) => {
                fenced.add(refused.iter().copied());
                Some(refused)
            }
            Err(e) => {
                tracing::error!(error = %e, "store batch failed: writing one by one");
                None
            }
        };
        // A flush is answered once the journals of the games stored before it are
        // cleared too.
        let mut flushes = Vec::new();
        for w in batch.drain(..) {
            if let Some(refused) = &ok {
                let kept =
                    !matches!(&w, Write::GameEnded(end, _) if refused.contains(&end.start.id));
                settle(w, kept, &stats, &mut sweep, &mut flushes);
                continue;
            }
            let res = write_batch(&db, std::slice::from_ref(&w), &mut journal).await;
            let kept = match res {
                Ok(refused) => {
                    let kept = refused.is_empty();
                    fenced.add(refused);
                    kept
                }
                Err(e) => {
                    stats.write_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(error = %e, "store write failed");
                    false
                }
            };
            settle(w, kept, &stats, &mut sweep, &mut flushes);
        }
        stats.writes.fetch_add(n, Ordering::Relaxed);
        if flush || sweep.due() {
            sweep.run(&db, &mut journal).await;
        }
        for ack in flushes {
            let _ = ack.send(());
        }
    }
    sweep.run(&db, &mut journal).await;
    db.close().await;
}

/// The stored games whose journals are still to be cleared (see [`SWEEP`]), and when
/// the first of them was noted.
#[derive(Default)]
struct Sweep {
    games: Vec<GameId>,
    since: Option<tokio::time::Instant>,
}

impl Sweep {
    /// Notes a game stored by `w` (`kept`: written, not refused as a stale owner's).
    fn note(&mut self, w: &Write, kept: bool) {
        if let (Write::GameEnded(end, _), true) = (w, kept) {
            self.games.push(end.start.id);
            self.since.get_or_insert_with(tokio::time::Instant::now);
        }
    }

    fn due(&self) -> bool {
        self.games.len() >= SWEEP_MAX || self.since.is_some_and(|t| t.elapsed() >= SWEEP)
    }

    /// Clears the noted games' journals. On failure they are left to the next start,
    /// which clears the journals of every game no longer live.
    async fn run(&mut self, db: &Db, journal: &mut Batches) {
        if !self.games.is_empty() {
            let games = std::mem::take(&mut self.games);
            let done = on_db!(Some(db), Ok(()), |sql, pool| sql::forget_journals(
                pool, &games, journal
            )
            .await);
            if let Err(e) = done {
                tracing::warn!(error = %e, games = games.len(), "clearing stored games' journals failed");
            }
        }
        self.since = None;
    }
}

/// A write of the batch is done (`kept`: written): its game noted for the sweep and its
/// writer answered; a flush is answered after the sweep (kept in `flushes`).
fn settle(
    w: Write,
    kept: bool,
    stats: &StoreStats,
    sweep: &mut Sweep,
    flushes: &mut Vec<oneshot::Sender<()>>,
) {
    sweep.note(&w, kept);
    match w {
        Write::Player(_, Some(ack)) => {
            let _ = ack.send(kept);
        }
        Write::GameEnded(_, ack) => {
            if kept {
                stats.games_stored.fetch_add(1, Ordering::Relaxed);
            }
            if let Some(ack) = ack {
                let _ = ack.send(kept);
            }
        }
        Write::Flush(ack) => flushes.push(ack),
        _ => {}
    }
}

/// Writes a batch in one transaction; answers the games whose writes were refused as a
/// stale owner's.
async fn write_batch(
    db: &Db,
    batch: &[Write],
    journal: &mut Batches,
) -> anyhow::Result<Vec<GameId>> {
    on_db!(Some(db), Ok(Vec::new()), |sql, pool| sql::write_batch(
        pool, batch, journal
    )
    .await)
}
