//! A bounded queue with many senders and one receiver, for the queues there is one of per
//! game (its commands) and per frame reader that is not a socket (an in-process bot seat,
//! a proxy for another node's connection: see `peer::Outlet`).
//!
//! Why not tokio's `mpsc`: its channel allocates a block of 32 slots when it is made and
//! keeps one or two for its life, 1–2 KB per queue of frames and 2–5 KB per game (a command is
//! 72 bytes) whatever is queued; with tens of thousands of mostly idle connections that was
//! a tenth of the server's memory. Here
//! the queue holds what is queued (a `VecDeque` that grows with a burst and is given back
//! when a large one empties), behind a lock that is only ever taken for a push or a pop.
//! The interface is the part of `mpsc`'s that the server uses, with its error types.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;
pub use tokio::sync::mpsc::error::{SendError, TryRecvError, TrySendError};
use tokio::sync::Notify;

/// Capacity an emptied queue may keep: past it, the memory of a burst is given back.
const KEPT: usize = 16;

struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    receiver: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// The receiver's task, woken by a push or by the last sender's going.
    waker: AtomicWaker,
    /// Senders waiting for room (`send`), woken by a pop from a full queue or by the
    /// receiver's going.
    space: Notify,
    cap: usize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding the lock leaves the queue consistent (a push or a pop).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A queue of at most `cap` items (at least one).
pub fn channel<T>(cap: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            receiver: true,
        }),
        waker: AtomicWaker::new(),
        space: Notify::new(),
        cap: cap.max(1),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let last = {
            let mut state = self.shared.lock();
            state.senders -= 1;
            state.senders == 0
        };
        if last {
            self.shared.waker.wake();
        }
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("cap", &self.shared.cap)
            .finish()
    }
}

impl<T> Sender<T> {
    /// Queues `item`, unless the queue is full or its receiver is gone.
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        {
            let mut state = self.shared.lock();
            if !state.receiver {
                return Err(TrySendError::Closed(item));
            }
            if state.queue.len() >= self.shared.cap {
                return Err(TrySendError::Full(item));
            }
            state.queue.push_back(item);
        }
        self.shared.waker.wake();
        Ok(())
    }

    /// Queues `item`, waiting for room while the queue is full; `Err` if the receiver is
    /// (or goes) away.
    pub async fn send(&self, mut item: T) -> Result<(), SendError<T>> {
        loop {
            let room = self.shared.space.notified();
            tokio::pin!(room);
            // Registered before looking, so a pop between the look and the wait wakes it.
            room.as_mut().enable();
            match self.try_send(item) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Closed(back)) => return Err(SendError(back)),
                Err(TrySendError::Full(back)) => item = back,
            }
            room.await;
        }
    }

    /// Items that can still be queued.
    pub fn capacity(&self) -> usize {
        self.shared.cap - self.shared.lock().queue.len().min(self.shared.cap)
    }

    /// Items the queue holds at most.
    pub fn max_capacity(&self) -> usize {
        self.shared.cap
    }

    /// The receiver is gone.
    pub fn is_closed(&self) -> bool {
        !self.shared.lock().receiver
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let dropped = {
            let mut state = self.shared.lock();
            state.receiver = false;
            std::mem::take(&mut state.queue)
        };
        // Dropped without the lock held (an item's drop could be anything).
        drop(dropped);
        self.shared.space.notify_waiters();
    }
}

impl<T> Receiver<T> {
    fn pop(&self) -> Result<T, TryRecvError> {
        let mut state = self.shared.lock();
        let was_full = state.queue.len() >= self.shared.cap;
        match state.queue.pop_front() {
            Some(item) => {
                if state.queue.is_empty() && state.queue.capacity() > KEPT {
                    state.queue = VecDeque::new();
                }
                drop(state);
                if was_full {
                    self.shared.space.notify_waiters();
                }
                Ok(item)
            }
            None if state.senders == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    /// The next item if one is queued.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        self.pop()
    }

    /// The next item; `None` once the queue is empty and every sender gone. Registers the
    /// task to be woken when it is pending.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        match self.pop() {
            Ok(item) => return Poll::Ready(Some(item)),
            Err(TryRecvError::Disconnected) => return Poll::Ready(None),
            Err(TryRecvError::Empty) => {}
        }
        self.shared.waker.register(cx.waker());
        // Again: a push between the first look and the registration woke no one.
        match self.pop() {
            Ok(item) => Poll::Ready(Some(item)),
            Err(TryRecvError::Disconnected) => Poll::Ready(None),
            Err(TryRecvError::Empty) => Poll::Pending,
        }
    }

    /// Waits for the next item; `None` once the queue is empty and every sender gone.
    pub async fn recv(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

/// Tests: the order in which queues were woken, by wakers registered on them.
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct WakeLog(Arc<Mutex<Vec<&'static str>>>);

#[cfg(test)]
impl WakeLog {
    /// Registers on `rx` (which must be empty) a waker that logs `who` when it wakes. Polling
    /// `rx` again replaces it.
    pub(crate) fn watch<T>(&self, rx: &mut Receiver<T>, who: &'static str) {
        struct Logger(WakeLog, &'static str);
        impl std::task::Wake for Logger {
            fn wake(self: Arc<Self>) {
                self.0 .0.lock().unwrap().push(self.1);
            }
        }
        let waker = std::task::Waker::from(Arc::new(Logger(self.clone(), who)));
        let mut cx = Context::from_waker(&waker);
        assert!(rx.poll_recv(&mut cx).is_pending(), "{who}'s queue is empty");
    }

    /// Who was woken, in order.
    pub(crate) fn order(&self) -> Vec<&'static str> {
        self.0.lock().unwrap().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_refuses_and_keeps_what_it_holds() {
        let (tx, mut rx) = channel(2);
        assert_eq!((tx.capacity(), tx.max_capacity()), (2, 2));
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        assert_eq!(tx.capacity(), 0);
        assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3))));
        assert_eq!(rx.try_recv(), Ok(1));
        assert_eq!(tx.capacity(), 1);
        assert_eq!(rx.try_recv(), Ok(2));
        assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    }

    #[test]
    fn the_receivers_going_closes_the_queue_for_every_sender() {
        let (tx, rx) = channel(4);
        let other = tx.clone();
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed() && other.is_closed());
        assert!(matches!(other.try_send(1), Err(TrySendError::Closed(1))));
    }

    #[tokio::test]
    async fn the_receiver_gets_everything_queued_then_the_end_when_every_sender_is_gone() {
        let (tx, mut rx) = channel(8);
        let other = tx.clone();
        tx.try_send("a").unwrap();
        other.try_send("b").unwrap();
        drop(tx);
        assert_eq!(rx.recv().await, Some("a"));
        drop(other);
        assert_eq!(rx.recv().await, Some("b"));
        assert_eq!(rx.recv().await, None);
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_by_a_push_from_another_task() {
        let (tx, mut rx) = channel(1);
        let waiting = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        tx.try_send(7).unwrap();
        assert_eq!(waiting.await.unwrap(), Some(7));
    }

    #[tokio::test]
    async fn a_waiting_receiver_is_woken_by_the_last_senders_going() {
        let (tx, mut rx) = channel::<u8>(1);
        let waiting = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(waiting.await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_sender_waits_for_room_and_is_told_when_the_receiver_goes() {
        let (tx, mut rx) = channel(1);
        tx.send(1).await.unwrap();
        let waiting = tokio::spawn({
            let tx = tx.clone();
            async move { tx.send(2).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        assert_eq!(rx.recv().await, Some(1));
        waiting.await.unwrap().unwrap();
        assert_eq!(rx.recv().await, Some(2));
        tx.send(3).await.unwrap();
        let refused = tokio::spawn(async move { tx.send(4).await });
        tokio::task::yield_now().await;
        drop(rx);
        assert_eq!(refused.await.unwrap().map_err(|e| e.0), Err(4));
    }

    #[test]
    fn an_emptied_queue_gives_back_the_memory_of_a_burst() {
        let (tx, mut rx) = channel(1000);
        for i in 0..500 {
            tx.try_send(i).unwrap();
        }
        while rx.try_recv().is_ok() {}
        assert!(rx.shared.lock().queue.capacity() <= KEPT);
    }
}
