//! A shutdown signal that is cheap to look at.
//!
//! Every connection looks whether the server is stopping each time its task wakes (a frame
//! in or out), thousands of times a second. `CancellationToken::is_cancelled` takes the
//! token's lock, one lock shared by every connection on every worker thread: about 1% of
//! the server's CPU at compare.sh's load (`perf`). Here the look is an atomic load of a
//! flag nobody writes until the end, so its cache line stays shared by every core; the
//! token is still there to be awaited.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use tokio_util::sync::{
    CancellationToken, WaitForCancellationFuture, WaitForCancellationFutureOwned,
};

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

    /// Completes once [`cancel`](Self::cancel) was called.
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.token.cancelled()
    }

    /// A waiter for a task that polls it at every turn of its loop (a game's, a
    /// connection's): polled again by the same task, it reads the flag only. The token's
    /// own future takes the token's lock at every poll, one lock for every task on every
    /// worker thread.
    pub fn waiter(&self) -> Waiter {
        Waiter {
            flag: self.flag.clone(),
            token: Box::pin(self.cancelled_owned()),
            waker: None,
        }
    }
}

/// See [`Stop::waiter`].
pub struct Waiter {
    flag: Arc<AtomicBool>,
    token: Pin<Box<WaitForCancellationFutureOwned>>,
    /// The waker the token's future was last polled with: it stays registered with the
    /// token (which wakes it after the flag is set) until the token is cancelled.
    waker: Option<Waker>,
}

impl Future for Waiter {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.flag.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            return Poll::Pending;
        }
        self.waker = Some(cx.waker().clone());
        self.token.as_mut().poll(cx)
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

    #[tokio::test]
    async fn a_waiter_polled_again_and_again_is_woken_once_stopped() {
        let stop = Stop::default();
        let mut waiter = stop.waiter();
        for _ in 0..3 {
            assert!(futures::poll!(&mut waiter).is_pending());
        }
        let task = tokio::spawn(async move {
            // Polled here by another task (another waker): registered again.
            waiter.await;
        });
        tokio::task::yield_now().await;
        stop.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), task)
            .await
            .expect("the waiter was woken")
            .unwrap();
        // A waiter made after the stop is ready at once.
        stop.waiter().await;
    }
}
