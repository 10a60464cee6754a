//! A task that the alarm thread runs itself when its alarm fires.
//!
//! Woken the ordinary way, a game due at a deadline waits for a worker of the runtime, and
//! at 18,000 sockets on 2 cores both workers can be busy for several milliseconds with a
//! backlog of sockets (BENCHMARKS.md, sessions 25 and 27): the announcement of a death
//! came up to 10 ms late while the alarm thread itself had woken on time. So the alarm
//! thread polls such a task on the spot, at its own (real-time) priority, unless a worker
//! is polling it at that moment, in which case that worker sees the deadline. The task
//! then hands the rest of its work back to the workers ([`yield_to_workers`]), so the
//! alarm thread does only what is due, and never more than [`MOST`] of each [`WINDOW`] on it.
//!
//! The task is a tokio task like any other (spawned, tracked, polled by the workers); its
//! future sits behind a lock that either side takes to poll it.

use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What the alarm thread holds of a task it may run: see [`Direct::slot`].
pub struct Slot {
    task: Mutex<Option<Task>>,
    /// The runtime the task runs on (its timers and I/O), known from its first poll.
    runtime: OnceLock<Handle>,
}

/// A task the alarm thread may run: make it, give [`Direct::slot`] to the task's alarm,
/// then spawn [`Direct::run`].
pub struct Direct {
    slot: Arc<Slot>,
}

impl Default for Direct {
    fn default() -> Self {
        Direct {
            slot: Arc::new(Slot {
                task: Mutex::new(None),
                runtime: OnceLock::new(),
            }),
        }
    }
}

impl Direct {
    pub fn slot(&self) -> Weak<Slot> {
        Arc::downgrade(&self.slot)
    }

    /// The future to spawn: it polls `task` wherever the runtime runs it.
    pub fn run(
        self,
        task: impl Future<Output = ()> + Send + 'static,
    ) -> impl Future<Output = ()> + Send + 'static {
        *self.slot.lock() = Some(Box::pin(task));
        let slot = self.slot;
        std::future::poll_fn(move |cx| {
            slot.runtime.get_or_init(Handle::current);
            // Waits, at most, for the alarm thread's poll of the same task.
            let mut task = slot.lock();
            let Some(t) = task.as_mut() else {
                return Poll::Ready(());
            };
            let polled = t.as_mut().poll(cx);
            if polled.is_ready() {
                *task = None;
            }
            polled
        })
    }
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Task>> {
        // A panicking poll leaves no half-changed state here: the task is dropped with it.
        self.task.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Polls the task on this thread with `waker` (its tokio task's); false if it cannot
    /// now (a worker is polling it, it has not started or it is over): wake it instead.
    fn poll_here(&self, waker: &Waker) -> bool {
        let Some(runtime) = self.runtime.get() else {
            return false;
        };
        let mut task = match self.task.try_lock() {
            Ok(task) => task,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        let Some(t) = task.as_mut() else {
            return false;
        };
        let _runtime = runtime.enter();
        HERE.set(true);
        let polled = catch_unwind(AssertUnwindSafe(|| {
            t.as_mut().poll(&mut Context::from_waker(waker))
        }));
        HERE.set(false);
        match polled {
            Ok(Poll::Pending) => {}
            done => {
                if done.is_err() {
                    tracing::error!("a task run by the alarm thread panicked: it is dropped");
                }
                // Dropped here, in the runtime's context; its tokio task then ends.
                *task = None;
                waker.wake_by_ref();
            }
        }
        true
    }
}

thread_local! {
    static HERE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the alarm thread is running the current task (then it should hand back what
/// is not due: [`yield_to_workers`]).
pub fn on_alarm_thread() -> bool {
    HERE.get()
}

/// Ends this poll and has the runtime poll the task again: from the alarm thread, the rest
/// of the task's work goes back to the workers.
pub async fn yield_to_workers() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// At most this much of each [`WINDOW`] of the alarm thread's time goes to running tasks;
/// past it, due tasks are woken as usual. A real-time thread takes its core from
/// everything else; the bound keeps a burst of deadlines (thousands of games taken up at
/// once) from doing so for long.
const MOST: Duration = Duration::from_millis(2);
const WINDOW: Duration = Duration::from_millis(10);

/// The alarm thread's account of the time it spent running tasks.
#[derive(Default)]
pub(super) struct Budget {
    since: Option<Instant>,
    spent: Duration,
}

impl Budget {
    /// Runs the task of `slot` here if it can and the budget allows (true); else wakes it.
    pub(super) fn run_or_wake(&mut self, waker: Waker, slot: Option<&Weak<Slot>>) -> bool {
        let slot = slot.and_then(Weak::upgrade);
        let ran = match &slot {
            Some(slot) if self.allows_at(Instant::now()) => {
                let began = Instant::now();
                let ran = slot.poll_here(&waker);
                self.spent += began.elapsed();
                ran
            }
            _ => false,
        };
        if !ran {
            waker.wake();
        }
        if let Some(slot) = slot {
            // Should the runtime have dropped the task meanwhile, it ends here: in its
            // runtime's context.
            let runtime = slot.runtime.get().cloned();
            let _runtime = runtime.as_ref().map(Handle::enter);
            drop(slot);
        }
        ran
    }

    fn allows_at(&mut self, now: Instant) -> bool {
        if self.since.is_none_or(|s| now.duration_since(s) >= WINDOW) {
            self.since = Some(now);
            self.spent = Duration::ZERO;
        }
        self.spent < MOST
    }
}

#[cfg(test)]
mod tests {
    use super::super::Alarms;
    use super::*;

    /// A task with an alarm the alarm thread may run, spawned on the current runtime.
    fn spawn_direct<F>(
        alarms: &Alarms,
        task: impl FnOnce(super::super::Alarm) -> F,
    ) -> tokio::task::JoinHandle<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let mut alarm = alarms.alarm();
        let direct = Direct::default();
        alarm.run_by_alarm_thread(direct.slot());
        tokio::spawn(direct.run(task(alarm)))
    }

    /// Lets the runtime poll what was spawned until `alarms` holds `n` deadlines.
    async fn until_set(alarms: &Alarms, n: usize) {
        while alarms.shared.lock().due.len() < n {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_due_task_runs_on_the_alarm_thread_while_the_worker_is_busy() {
        let alarms = Alarms::start(0).unwrap();
        let (ran, seen) = std::sync::mpsc::channel();
        let at = Instant::now() + Duration::from_millis(20);
        let task = spawn_direct(&alarms, |mut alarm| async move {
            alarm.until(at).await;
            let here = std::thread::current().name().map(str::to_owned);
            ran.send((here, on_alarm_thread(), Instant::now() >= at))
                .unwrap();
        });
        until_set(&alarms, 1).await;
        // This blocks the runtime's only thread until the task ran: only the alarm thread
        // can run it.
        let seen = seen
            .recv_timeout(Duration::from_secs(10))
            .expect("the task did not run while the worker was busy");
        assert_eq!(seen, (Some("tamsk-alarms".to_owned()), true, true));
        // Its tokio task ends too.
        task.await.unwrap();
        assert_eq!(alarms.ran_and_woken(), (1, 0));
    }

    #[tokio::test]
    async fn what_a_task_hands_back_runs_on_the_runtime() {
        let alarms = Alarms::start(0).unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let at = Instant::now() + Duration::from_millis(5);
        let task = spawn_direct(&alarms, |mut alarm| async move {
            alarm.until(at).await;
            let before = on_alarm_thread();
            yield_to_workers().await;
            tx.send((before, on_alarm_thread(), std::thread::current().id()))
                .unwrap();
        });
        let (before, after, thread) = rx.await.unwrap();
        assert!(before, "the alarm thread ran it at its deadline");
        assert!(!after);
        assert_eq!(thread, std::thread::current().id(), "the runtime's thread");
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_task_the_runtime_is_polling_is_woken_not_run() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let direct = Direct::default();
        let slot = direct.slot();
        // The task keeps the waker it was last polled with, counts its polls and ends
        // once `done` is set.
        let waker = Arc::new(Mutex::new(None::<Waker>));
        let (polls, done) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let task = tokio::spawn(direct.run({
            let (waker, polls, done) = (waker.clone(), polls.clone(), done.clone());
            std::future::poll_fn(move |cx| {
                polls.fetch_add(1, Ordering::SeqCst);
                *waker.lock().unwrap() = Some(cx.waker().clone());
                if done.load(Ordering::SeqCst) {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
        }));
        tokio::task::yield_now().await;
        assert_eq!(polls.load(Ordering::SeqCst), 1, "polled by the runtime");
        let slot = slot.upgrade().expect("the task is alive");
        let task_waker = waker.lock().unwrap().clone().unwrap();
        {
            let _polling = slot.lock();
            assert!(!slot.poll_here(&task_waker), "held by a poll elsewhere");
        }
        assert_eq!(polls.load(Ordering::SeqCst), 1);
        assert!(slot.poll_here(&task_waker), "free: run here");
        assert_eq!(polls.load(Ordering::SeqCst), 2);
        done.store(true, Ordering::SeqCst);
        task_waker.wake_by_ref();
        task.await.unwrap();
        assert!(!slot.poll_here(&task_waker), "over: nothing to run");
    }

    #[tokio::test]
    async fn a_task_that_panics_on_the_alarm_thread_ends_and_the_thread_goes_on() {
        let alarms = Alarms::start(0).unwrap();
        let at = Instant::now() + Duration::from_millis(5);
        let task = spawn_direct(&alarms, |mut alarm| async move {
            alarm.until(at).await;
            panic!("a task's bug");
        });
        until_set(&alarms, 1).await;
        task.await.expect("ended, its panic caught where it ran");
        // The thread still runs the next one.
        let (tx, rx) = tokio::sync::oneshot::channel();
        let at = Instant::now() + Duration::from_millis(5);
        let _next = spawn_direct(&alarms, |mut alarm| async move {
            alarm.until(at).await;
            tx.send(on_alarm_thread()).unwrap();
        });
        assert!(rx.await.unwrap());
    }

    #[test]
    fn the_alarm_thread_runs_tasks_for_at_most_its_share_of_a_window() {
        let start = Instant::now();
        let mut budget = Budget::default();
        assert!(budget.allows_at(start));
        budget.spent = MOST - Duration::from_micros(1);
        assert!(budget.allows_at(start + WINDOW / 2));
        budget.spent = MOST;
        assert!(
            !budget.allows_at(start + WINDOW / 2),
            "spent in this window"
        );
        assert!(budget.allows_at(start + WINDOW), "a new window");
        assert_eq!(budget.spent, Duration::ZERO);
    }
}
