//! A shutdown signal that is cheap to look at.
//!
//! Every connection looks whether the server is stopping each time its task wakes (a frame
//! in or out), thousands of times a second. `CancellationToken::is_cancelled` takes the
//! token's lock, one lock shared by every connection on every worker thread: about 1% of
//! the server's CPU at compare.sh's load (`perf`). Here the look is an atomic load of a
//! flag nobody writes until the end, so its cache line stays shared by every core; the
//! token is still there to be awaited.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

#[derive(Clone, Default)]
pub struct Stop {
    token: CancellationToken,
    flag: Arc<AtomicBool>,
}

impl Stop {
    /// Sets the flag, then wakes every waiter: a waiter woken sees the flag set.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Release);
        self.token.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Completes once [`cancel`](Self::cancel) was called.
    pub fn cancelled_owned(&self) -> WaitForCancellationFutureOwned {
        self.token.clone().cancelled_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_waiter_is_woken_and_every_clone_sees_the_flag() {
        let stop = Stop::default();
        let other = stop.clone();
        let waiter = tokio::spawn(other.cancelled_owned());
        assert!(!other.is_cancelled());
        stop.cancel();
        waiter.await.unwrap();
        assert!(other.is_cancelled() && stop.is_cancelled());
    }
}
