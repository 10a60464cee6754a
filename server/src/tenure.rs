//! How long this node may still run a game (issue 18, fencing). On a single node a game's
//! tenure never ends. In a cluster it lasts as long as the node can prove its lease
//! (one for all its games) is valid: the `cluster` layer extends it at each successful
//! renewal of the lease and ends it when the lease lapsed or the database refuses a write
//! of the game (a newer owner fenced it). The game task asks [`Tenure::holds`] before anything it
//! does, so a node that stalled past its lease (a pause, an overload, SIGSTOP) finds on
//! waking that it no longer holds the game and suspends it instead of playing on.
//!
//! It lives here, below both the game task and `cluster`, because the game task cannot
//! import `cluster` (which takes games up through the game module).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tokio::sync::Notify;
use tokio::time::{Duration, Instant};

use crate::config::Config;

/// A game's hold on being run here.
pub struct Tenure {
    /// Until when the hold is proven; `None`: for ever (a single node).
    until: Mutex<Option<Instant>>,
    /// Made for ever: `until` stays `None` (the game task asks at every turn of its
    /// loop, and a single node's needs no lock for the answer).
    forever: bool,
    lost: AtomicBool,
    notify: Notify,
}

/// The part of a lease a node counts on after a refresh: the rest (a quarter) is a safety
/// margin, so that a node stops running a game well before another may take it (the
/// lease is counted from before the refresh was sent, the key expires from when NATS
/// received it).
pub fn proven_part(lease: Duration) -> Duration {
    lease - lease / 4
}

/// A cluster's lease as the nodes use it (never below 300 ms).
pub fn lease_of(config: &Config) -> Duration {
    config.lease.max(Duration::from_millis(300))
}

impl Tenure {
    /// The tenure of a game starting (or taken up) here: for ever on a single node; in a
    /// cluster, proven for a lease's proven part from now (no other node claims a game
    /// younger than a lease, and this node claims it within moments, see `cluster`).
    pub fn of_game(config: &Config) -> Tenure {
        match config.nats_url {
            None => Tenure::forever(),
            Some(_) => Tenure::until(Instant::now() + proven_part(lease_of(config))),
        }
    }

    fn new(until: Option<Instant>) -> Tenure {
        Tenure {
            forever: until.is_none(),
            until: Mutex::new(until),
            lost: AtomicBool::new(false),
            notify: Notify::new(),
        }
    }

    /// A tenure that never ends (a single node).
    pub fn forever() -> Tenure {
        Tenure::new(None)
    }

    /// A tenure proven until `until` (a node of a cluster, before its next refresh).
    pub fn until(until: Instant) -> Tenure {
        Tenure::new(Some(until))
    }

    /// The hold is proven until `until` (a lease refresh succeeded).
    pub fn extend(&self, until: Instant) {
        if !self.forever && !self.lost.load(Ordering::SeqCst) {
            *self.until.lock().expect("tenure lock") = Some(until);
        }
    }

    /// The hold is gone for good (the lease was taken, or a write was refused): the game
    /// task is woken to suspend the game.
    pub fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
        self.notify.notify_one();
    }

    /// Whether the game may still be run here now.
    pub fn holds(&self) -> bool {
        !self.lost.load(Ordering::SeqCst)
            && self.deadline().is_none_or(|until| Instant::now() < until)
    }

    /// When the proven hold runs out, if it ever does (the game task wakes then to check).
    pub fn deadline(&self) -> Option<Instant> {
        if self.forever {
            return None;
        }
        *self.until.lock().expect("tenure lock")
    }

    /// Resolves once [`Tenure::lose`] was called.
    pub async fn lost(&self) {
        loop {
            let notified = self.notify.notified();
            if self.lost.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_tenure_holds_until_its_proven_instant_and_never_after_it_is_lost() {
        let forever = Tenure::forever();
        assert!(forever.holds() && forever.deadline().is_none());
        forever.extend(Instant::now());
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(forever.holds(), "a single node's hold never ends");
        forever.lose();
        assert!(!forever.holds(), "but it can be lost");
        let t = Tenure::until(Instant::now() + Duration::from_millis(100));
        assert!(t.holds());
        tokio::time::advance(Duration::from_millis(101)).await;
        assert!(!t.holds(), "a hold nobody extended runs out");
        t.extend(Instant::now() + Duration::from_millis(100));
        assert!(t.holds(), "a refresh extends it");
        t.lose();
        assert!(!t.holds());
        t.extend(Instant::now() + Duration::from_millis(100));
        assert!(!t.holds(), "a lost hold is not extended again");
        tokio::time::timeout(Duration::from_millis(1), t.lost())
            .await
            .expect("lost() resolves once lost");
    }
}
