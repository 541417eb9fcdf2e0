//! The channel from the hub to one subscriber: a bounded queue for one sender and one receiver
//! that allocates nothing until a message arrives.
//!
//! A held lock's monitor keeps a subscription for as long as it holds, and most subscriptions
//! see one or two messages in their life. tokio's `mpsc` allocates a block of 32 slots and a
//! cache-padded channel at creation, about 1.5 KB per subscription; this one is a mutex around a
//! `VecDeque` that grows only when used.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};

struct State<T> {
    queue: VecDeque<T>,
    waker: Option<Waker>,
    sender_gone: bool,
    receiver_gone: bool,
}

type Shared<T> = Arc<Mutex<State<T>>>;

fn lock<T>(shared: &Shared<T>) -> MutexGuard<'_, State<T>> {
    // Nothing panics while holding it; a poisoned lock still holds a consistent queue.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A channel that holds at most `capacity` messages not yet received.
pub(crate) fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Mutex::new(State { queue: VecDeque::new(), waker: None, sender_gone: false, receiver_gone: false }));
    (Sender { shared: shared.clone(), capacity }, Receiver { shared })
}

pub(crate) struct Sender<T> {
    shared: Shared<T>,
    capacity: usize,
}

pub(crate) struct Receiver<T> {
    shared: Shared<T>,
}

/// Why a message was not sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SendError {
    Full,
    Closed,
}

impl<T> Sender<T> {
    /// Queues `msg` unless the receiver is gone or `capacity` messages wait already.
    pub fn try_send(&self, msg: T) -> Result<(), SendError> {
        let mut state = lock(&self.shared);
        if state.receiver_gone {
            return Err(SendError::Closed);
        }
        if state.queue.len() >= self.capacity {
            return Err(SendError::Full);
        }
        state.queue.push_back(msg);
        let waker = state.waker.take();
        drop(state);
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared).receiver_gone
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = lock(&self.shared);
        state.sender_gone = true;
        let waker = state.waker.take();
        drop(state);
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// The next message; `None` once the sender is gone and every message was received.
    /// Cancel-safe: a message is taken only when this returns it.
    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| {
            let mut state = lock(&self.shared);
            if let Some(msg) = state.queue.pop_front() {
                if state.queue.is_empty() {
                    // Most subscriptions wait long between messages: they keep no buffer.
                    state.queue = VecDeque::new();
                }
                return Poll::Ready(Some(msg));
            }
            if state.sender_gone {
                return Poll::Ready(None);
            }
            match &mut state.waker {
                Some(w) => w.clone_from(cx.waker()),
                None => state.waker = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = lock(&self.shared);
        state.receiver_gone = true;
        // Dropped outside the lock: a message's drop may do anything.
        let queued = std::mem::take(&mut state.queue);
        drop(state);
        drop(queued);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn delivers_in_order_then_ends_when_the_sender_goes() {
        let (tx, mut rx) = channel(2);
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        assert_eq!(tx.try_send(3), Err(SendError::Full));
        drop(tx);
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn a_waiting_receiver_wakes_and_a_gone_receiver_closes() {
        let (tx, mut rx) = channel(4);
        let waiting = tokio::spawn(async move { (rx.recv().await, rx) });
        tokio::task::yield_now().await;
        tx.try_send(7).unwrap();
        let (got, rx) = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await.unwrap().unwrap();
        assert_eq!(got, Some(7));
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
        assert_eq!(tx.try_send(8), Err(SendError::Closed));
    }
}
