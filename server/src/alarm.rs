//! Precise wake-ups for game deadlines (deaths, 15-second expiries, graces).
//!
//! tokio's timer counts whole milliseconds and rounds every deadline up to its next tick,
//! and the driver's own wait is rounded to milliseconds too: a death was announced 1 to
//! 3 ms after its instant (p50 1.5 ms, p99 3 ms measured). Here one thread keeps every
//! game's next deadline in order and sleeps on a condition variable until the first
//! (the kernel's high-resolution timer: tens of microseconds late), then wakes the games
//! that are due. A game task runs on the runtime; when it is due, this thread runs it
//! itself if it can (see [`direct`]), else wakes it.
//!
//! Each game holds one [`Alarm`], set to its next deadline: setting it again moves the
//! entry, so the queue holds one entry per game whatever the traffic.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

pub mod direct;

/// Who is due: the waker of the task waiting, and the task itself if this thread may run
/// it ([`direct`]).
type Due = (Waker, Option<Weak<direct::Slot>>);

/// The alarm thread; it stops when this is dropped.
pub struct Alarms {
    shared: Arc<Shared>,
    /// The alarm thread's id.
    tid: i32,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// How late this thread woke each game: the rest of a game's lateness
    /// (`timer_lateness`) is its wait for a worker of the runtime.
    lateness: crate::metrics::Histogram,
    /// Due tasks this thread ran itself, and those it woke for a worker instead.
    ran: AtomicU64,
    woken: AtomicU64,
}

#[derive(Default)]
struct State {
    /// By instant, then alarm id: the task waiting for it.
    due: BTreeMap<(Instant, u64), Due>,
    next_id: u64,
    stop: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map inconsistent (each change
        // is one map operation), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(&self) {
        let mut state = self.lock();
        let mut ready = Vec::new();
        let mut budget = direct::Budget::default();
        loop {
            if state.stop {
                return;
            }
            let now = Instant::now();
            match state.due.first_key_value() {
                None => state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner()),
                Some((&(at, _), _)) if at <= now => {
                    while let Some(entry) = state.due.first_entry() {
                        if entry.key().0 > now {
                            break;
                        }
                        self.lateness
                            .observe(now.saturating_duration_since(entry.key().0));
                        ready.push(entry.remove());
                    }
                    // Outside the lock: a task run or woken may set its alarm at once.
                    drop(state);
                    for (waker, slot) in ready.drain(..) {
                        let count = match budget.run_or_wake(waker, slot.as_ref()) {
                            true => &self.ran,
                            false => &self.woken,
                        };
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    state = self.lock();
                }
                Some((&(at, _), _)) => {
                    state = self
                        .changed
                        .wait_timeout(state, at - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
        }
    }
}

impl Alarms {
    /// Starts the alarm thread, at real-time `priority` if not 0 (see [`crate::priority`]).
    pub fn start(priority: u8) -> std::io::Result<Alarms> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            lateness: crate::metrics::Histogram::new(crate::metrics::LATENESS_BOUNDS),
            ran: AtomicU64::new(0),
            woken: AtomicU64::new(0),
        });
        let thread_shared = shared.clone();
        let (started, tid) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("tamsk-alarms".into())
            .spawn(move || {
                crate::priority::deadline_thread(priority, "tamsk-alarms");
                let _ = started.send(crate::priority::thread_id());
                thread_shared.run()
            })?;
        let tid = tid
            .recv()
            .map_err(|_| std::io::Error::other("the alarm thread did not start"))?;
        Ok(Alarms { shared, tid })
    }

    /// How late the alarm thread woke the games it woke.
    pub fn lateness(&self) -> crate::metrics::HistogramSnapshot {
        self.shared.lateness.snapshot()
    }

    /// Due tasks the alarm thread ran itself, and those it woke for a worker instead (a
    /// worker was polling it, it was not one the thread may run, or the thread's share was
    /// spent: see [`direct`]).
    pub fn ran_and_woken(&self) -> (u64, u64) {
        (
            self.shared.ran.load(Ordering::Relaxed),
            self.shared.woken.load(Ordering::Relaxed),
        )
    }

    /// The alarm thread's id (for a look at its scheduling).
    pub fn thread_id(&self) -> i32 {
        self.tid
    }

    /// A new alarm, not set.
    pub fn alarm(&self) -> Alarm {
        let id = {
            let mut state = self.shared.lock();
            state.next_id += 1;
            state.next_id
        };
        Alarm {
            shared: self.shared.clone(),
            id,
            set: None,
            waker: None,
            direct: None,
        }
    }
}

impl Drop for Alarms {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_one();
    }
}

/// One task's alarm: at most one instant at a time.
pub struct Alarm {
    shared: Arc<Shared>,
    id: u64,
    /// The instant it is set to, while it is in the queue.
    set: Option<Instant>,
    /// The waker queued with it.
    waker: Option<Waker>,
    /// The task this thread may run when it is due.
    direct: Option<Weak<direct::Slot>>,
}

impl Alarm {
    /// When due, the alarm thread runs the task of `slot` itself if it can.
    pub fn run_by_alarm_thread(&mut self, slot: Weak<direct::Slot>) {
        self.direct = Some(slot);
    }

    /// Completes at `at` (at once if it has passed).
    pub fn until(&mut self, at: Instant) -> Wait<'_> {
        Wait { alarm: self, at }
    }

    fn clear(&mut self) {
        self.waker = None;
        if let Some(old) = self.set.take() {
            self.shared.lock().due.remove(&(old, self.id));
        }
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        self.clear();
    }
}

/// See [`Alarm::until`].
pub struct Wait<'a> {
    alarm: &'a mut Alarm,
    at: Instant,
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let (at, alarm) = (this.at, &mut *this.alarm);
        if Instant::now() >= at {
            alarm.clear();
            return Poll::Ready(());
        }
        // A game task polls its alarm after every command, mostly for the same deadline:
        // then nothing changes and the lock is not taken. (Should the thread fire between
        // the check above and here, it wakes this same waker: the task polls again.)
        let unchanged = alarm.set == Some(at)
            && alarm
                .waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()));
        if unchanged {
            return Poll::Pending;
        }
        let shared = alarm.shared.clone();
        let mut state = shared.lock();
        if let Some(old) = alarm.set.replace(at).filter(|&old| old != at) {
            state.due.remove(&(old, alarm.id));
        }
        let key = (at, alarm.id);
        let first = state.due.first_key_value().is_none_or(|(&k, _)| key <= k);
        state
            .due
            .insert(key, (cx.waker().clone(), alarm.direct.clone()));
        drop(state);
        alarm.waker = Some(cx.waker().clone());
        if first {
            // The thread may be sleeping until a later instant.
            shared.changed.notify_one();
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Waits for `alarm` until `at`, failing (not hanging) if it never wakes.
    async fn wait(alarm: &mut Alarm, at: Instant) {
        tokio::time::timeout(Duration::from_secs(10), alarm.until(at))
            .await
            .expect("the alarm never woke");
        assert!(Instant::now() >= at, "woke before its instant");
    }

    #[tokio::test]
    async fn wakes_at_its_instant_never_before() {
        let alarms = Alarms::start(0).unwrap();
        let mut alarm = alarms.alarm();
        for ms in [5, 1, 12] {
            wait(&mut alarm, Instant::now() + Duration::from_millis(ms)).await;
        }
    }

    #[tokio::test]
    async fn each_wake_is_counted_with_how_late_it_was() {
        let alarms = Alarms::start(0).unwrap();
        let mut alarm = alarms.alarm();
        assert_eq!(alarms.lateness().count, 0);
        let began = Instant::now();
        for ms in [2, 4] {
            wait(&mut alarm, Instant::now() + Duration::from_millis(ms)).await;
        }
        let seen = alarms.lateness();
        assert_eq!(seen.count, 2);
        // Each lateness is at most the time the whole test took.
        assert!(seen.sum <= began.elapsed().as_secs_f64(), "{seen:?}");
    }

    #[tokio::test]
    async fn a_moved_alarm_keeps_one_entry_and_the_earliest_wins() {
        let alarms = Alarms::start(0).unwrap();
        let mut late = alarms.alarm();
        let mut soon = alarms.alarm();
        let far = Instant::now() + Duration::from_secs(3600);
        // Polled once (registered), then moved to another instant: one entry remains.
        let waited = tokio::time::timeout(Duration::from_millis(1), late.until(far)).await;
        assert!(waited.is_err());
        let farther = far + Duration::from_secs(1);
        let waited = tokio::time::timeout(Duration::from_millis(1), late.until(farther)).await;
        assert!(waited.is_err());
        assert_eq!(alarms.shared.lock().due.len(), 1);
        // A sooner alarm set while the thread sleeps towards the far one still fires.
        wait(&mut soon, Instant::now() + Duration::from_millis(3)).await;
        drop(late);
        assert!(alarms.shared.lock().due.is_empty());
    }

    #[test]
    fn the_alarm_thread_runs_real_time_when_asked_and_allowed() {
        let allowed = std::thread::spawn(|| crate::priority::realtime(2).is_ok())
            .join()
            .unwrap();
        let expected = if allowed {
            libc::SCHED_FIFO
        } else {
            libc::SCHED_OTHER
        };
        let alarms = Alarms::start(2).unwrap();
        assert_eq!(
            crate::priority::policy_of(alarms.thread_id()).unwrap(),
            expected
        );
        let plain = Alarms::start(0).unwrap();
        assert_eq!(
            crate::priority::policy_of(plain.thread_id()).unwrap(),
            libc::SCHED_OTHER
        );
    }
}
