//! The games' own threads: a tokio runtime that runs only game tasks.
//!
//! Why: on the runtime that also serves thousands of sockets, a game woken at a deadline
//! (a death, the 15-second timer, a grace) waited its turn behind every socket task that
//! was ready, so under load deaths were announced hundreds of milliseconds late (p99.9
//! up to 500 ms at 18,000 sockets). Game tasks are light (the engine takes microseconds,
//! the fan-out is `try_send`), so on their own thread one that is woken runs at once; and
//! a thread that mostly sleeps is scheduled promptly by the kernel when it wakes, even
//! while the socket threads keep the cores busy.
//!
//! Tests on tokio's paused clock keep games on their own runtime (`game_threads` 0).

use std::future::Future;

use tokio::runtime::{Builder, Handle};
use tokio::sync::oneshot;

/// A runtime on its own threads; it stops when this is dropped.
pub struct Lanes {
    handle: Handle,
    /// Dropped to stop the runtime's thread.
    _stop: oneshot::Sender<()>,
}

impl Lanes {
    /// Starts a runtime on `threads` threads (at least one: one thread runs the games
    /// itself; more are a work-stealing pool).
    pub fn start(threads: usize) -> std::io::Result<Lanes> {
        let mut builder = if threads <= 1 {
            Builder::new_current_thread()
        } else {
            let mut b = Builder::new_multi_thread();
            b.worker_threads(threads);
            b
        };
        let runtime = builder.thread_name("tamsk-game").enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        // The runtime lives on a thread of its own (with one thread, the one that runs
        // the games): dropping a runtime inside another's async context is not allowed,
        // and the server's state may be dropped there.
        std::thread::Builder::new()
            .name("tamsk-games".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
                runtime.shutdown_background();
            })?;
        Ok(Lanes {
            handle,
            _stop: stop,
        })
    }

    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `task` on the games' threads, tracked by `tracker`.
    pub fn spawn<F>(&self, tracker: &tokio_util::task::TaskTracker, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        tracker.spawn_on(task, &self.handle);
    }
}
