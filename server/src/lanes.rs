//! The games' own threads (`--game-threads N`, off by default): a tokio runtime that runs
//! only game tasks.
//!
//! The idea: on the runtime that also serves thousands of sockets, a game woken at a
//! deadline (a death, the 15-second timer, a grace) waits its turn behind every socket
//! task that is ready; on a thread of their own, light game tasks run as soon as they are
//! woken. Measured on 2 cores (docs/ARCHITECTURE.md) it did not pay: every move then
//! crosses threads twice, CPU per move rose about 20% and lateness did not improve at
//! 6,000 sockets. It stays an option for machines with cores to spare.

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
    /// itself; more are a work-stealing pool), at real-time `priority` if not 0 (see
    /// [`crate::priority`]).
    pub fn start(threads: usize, priority: u8) -> std::io::Result<Lanes> {
        let mut builder = if threads <= 1 {
            Builder::new_current_thread()
        } else {
            let mut b = Builder::new_multi_thread();
            b.worker_threads(threads);
            // Its blocking threads too: game tasks start no blocking work.
            b.on_thread_start(move || crate::priority::deadline_thread(priority, "tamsk-game"));
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
                // With one thread, this one runs the games (a pool's have the hook above).
                if threads <= 1 {
                    crate::priority::deadline_thread(priority, "tamsk-games");
                }
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
