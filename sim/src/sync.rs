//! Synchronisation for tasks of the simulated world: a one-shot channel, a notification,
//! and an unbounded FIFO queue. Single-threaded (`Rc`, `RefCell`), wake through the
//! executor's wakers, and never block: a task that must wait returns `Pending`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

// --- oneshot -------------------------------------------------------------------------------

struct OneshotInner<T> {
    value: Option<T>,
    waker: Option<Waker>,
    /// Invariant: set once the sender is sent or dropped; never cleared.
    closed: bool,
}

/// The sending half of a one-shot channel.
pub struct Sender<T> {
    inner: Rc<RefCell<OneshotInner<T>>>,
}

/// The receiving half: a future resolving to `Ok(value)`, or `Err(Canceled)` if the sender
/// was dropped without sending (its task was killed, for instance).
pub struct Receiver<T> {
    inner: Rc<RefCell<OneshotInner<T>>>,
}

/// The sender went away without sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Canceled;

/// A new one-shot channel.
pub fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Rc::new(RefCell::new(OneshotInner { value: None, waker: None, closed: false }));
    (Sender { inner: inner.clone() }, Receiver { inner })
}

impl<T> Sender<T> {
    /// Delivers the value and wakes the receiver (which runs later, on its own poll).
    pub fn send(self, value: T) {
        let waker = {
            let mut inner = self.inner.borrow_mut();
            inner.value = Some(value);
            inner.closed = true;
            inner.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// True if the receiver was dropped.
    pub fn is_canceled(&self) -> bool {
        Rc::strong_count(&self.inner) == 1
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let Ok(mut inner) = self.inner.try_borrow_mut() else { return };
            if inner.closed {
                return;
            }
            inner.closed = true;
            inner.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, Canceled>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut inner = self.inner.borrow_mut();
        if let Some(v) = inner.value.take() {
            return Poll::Ready(Ok(v));
        }
        if inner.closed {
            return Poll::Ready(Err(Canceled));
        }
        inner.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

// --- notify ----------------------------------------------------------------------------------

/// Wakes every task waiting on it; a notification with no waiter is remembered once.
#[derive(Clone, Default)]
pub struct Notify {
    inner: Rc<RefCell<NotifyInner>>,
}

#[derive(Default)]
struct NotifyInner {
    permit: bool,
    waiters: Vec<Waker>,
}

impl Notify {
    /// A notification with no permit and no waiter.
    pub fn new() -> Notify {
        Notify::default()
    }

    /// Wakes all waiters, or stores one permit if none waits.
    pub fn notify(&self) {
        let waiters = {
            let mut inner = self.inner.borrow_mut();
            if inner.waiters.is_empty() {
                inner.permit = true;
            }
            std::mem::take(&mut inner.waiters)
        };
        for w in waiters {
            w.wake();
        }
    }

    /// Completes at the next notification (or at once, consuming a stored permit).
    pub fn notified(&self) -> Notified {
        Notified { inner: self.inner.clone(), registered: false }
    }
}

/// Future returned by [`Notify::notified`].
pub struct Notified {
    inner: Rc<RefCell<NotifyInner>>,
    registered: bool,
}

impl Future for Notified {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut inner = self.inner.borrow_mut();
        if inner.permit {
            inner.permit = false;
            return Poll::Ready(());
        }
        if self.registered && !inner.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            // Our waker was taken by a notify: that was our notification.
            return Poll::Ready(());
        }
        if !inner.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            inner.waiters.push(cx.waker().clone());
        }
        drop(inner);
        self.registered = true;
        Poll::Pending
    }
}

// --- queue -----------------------------------------------------------------------------------

/// An unbounded FIFO queue between tasks: `push` never waits, `pop` waits for an item.
pub struct Queue<T> {
    inner: Rc<RefCell<QueueInner<T>>>,
}

struct QueueInner<T> {
    items: VecDeque<T>,
    waiters: Vec<Waker>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue { inner: self.inner.clone() }
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { inner: Rc::new(RefCell::new(QueueInner { items: VecDeque::new(), waiters: Vec::new() })) }
    }
}

impl<T> Queue<T> {
    /// An empty queue.
    pub fn new() -> Queue<T> {
        Queue::default()
    }

    /// Appends an item and wakes the waiting poppers.
    pub fn push(&self, item: T) {
        let waiters = {
            let mut inner = self.inner.borrow_mut();
            inner.items.push_back(item);
            std::mem::take(&mut inner.waiters)
        };
        for w in waiters {
            w.wake();
        }
    }

    /// Takes the oldest item without waiting.
    pub fn try_pop(&self) -> Option<T> {
        self.inner.borrow_mut().items.pop_front()
    }

    /// Number of queued items.
    pub fn len(&self) -> usize {
        self.inner.borrow().items.len()
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Completes with the oldest item, waiting for one if the queue is empty.
    pub fn pop(&self) -> Pop<T> {
        Pop { queue: self.clone() }
    }
}

/// Future returned by [`Queue::pop`].
pub struct Pop<T> {
    queue: Queue<T>,
}

impl<T> Future for Pop<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut inner = self.queue.inner.borrow_mut();
        if let Some(item) = inner.items.pop_front() {
            return Poll::Ready(item);
        }
        if !inner.waiters.iter().any(|w| w.will_wake(cx.waker())) {
            inner.waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
