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

// --- waiter lists --------------------------------------------------------------------------

/// The wakers waiting on a notify or a queue. Waking takes the whole list out (so no
/// borrow is held while wakers run) and gives its buffer back afterwards, emptied, unless
/// a waiter came meanwhile: a steady wait/wake cycle allocates nothing.
#[derive(Default)]
struct Waiters {
    waiting: Vec<Waker>,
}

impl Waiters {
    fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    fn contains(&self, waker: &Waker) -> bool {
        self.waiting.iter().any(|w| w.will_wake(waker))
    }

    /// Adds `waker` unless it is waiting already.
    fn register(&mut self, waker: &Waker) {
        if !self.contains(waker) {
            self.waiting.push(waker.clone());
        }
    }

    /// Takes every waiting waker, in registration order.
    fn take_all(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.waiting)
    }

    /// Gives back a buffer from [`Waiters::take_all`], its wakers woken, for reuse: kept if
    /// the list is still the empty one `take_all` left (one buffer, not two swapped in
    /// turn, which cost a second move and a comparison of capacities at every wake).
    #[inline]
    fn recycle(&mut self, mut buffer: Vec<Waker>) {
        buffer.clear();
        if self.waiting.capacity() == 0 {
            self.waiting = buffer;
        }
    }
}

/// Wakes every waker in `buffer`, in order, then hands the buffer back to `waiters`.
fn wake_all<I>(inner: &RefCell<I>, mut buffer: Vec<Waker>, waiters: impl FnOnce(&mut I) -> &mut Waiters) {
    for w in buffer.drain(..) {
        w.wake();
    }
    if let Ok(mut inner) = inner.try_borrow_mut() {
        waiters(&mut inner).recycle(buffer);
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
    waiters: Waiters,
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
                // Nobody to wake (more than half of all notifies: a lane's worker says it
                // drained on every idle): no buffers to swap and hand back.
                inner.permit = true;
                return;
            }
            inner.waiters.take_all()
        };
        wake_all(&self.inner, waiters, |inner| &mut inner.waiters);
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
        if self.registered && !inner.waiters.contains(cx.waker()) {
            // Our waker was taken by a notify: that was our notification.
            return Poll::Ready(());
        }
        inner.waiters.register(cx.waker());
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
    waiters: Waiters,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue { inner: self.inner.clone() }
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { inner: Rc::new(RefCell::new(QueueInner { items: VecDeque::new(), waiters: Waiters::default() })) }
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
            if inner.waiters.is_empty() {
                return;
            }
            inner.waiters.take_all()
        };
        wake_all(&self.inner, waiters, |inner| &mut inner.waiters);
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
        inner.waiters.register(cx.waker());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waker of its own (each call makes a different one) and the count of its wakes.
    fn counting_waker() -> (std::sync::Arc<WakeCount>, Waker) {
        let count = std::sync::Arc::new(WakeCount::default());
        (count.clone(), Waker::from(count))
    }

    /// Counts the wakes of the waker made from it.
    #[derive(Default)]
    struct WakeCount(std::sync::atomic::AtomicU32);

    impl std::task::Wake for WakeCount {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn a_notify_that_wakes_a_waiter_stores_no_permit() {
        use std::pin::pin;
        let notify = Notify::new();
        let (woken, waiter) = counting_waker();
        let (_, latecomer) = counting_waker();
        let mut first = pin!(notify.notified());
        assert!(first.as_mut().poll(&mut Context::from_waker(&waiter)).is_pending());
        notify.notify();
        assert_eq!(woken.0.load(std::sync::atomic::Ordering::Relaxed), 1, "the waiter is woken");
        // The notification was the waiter's: a wait that starts after it still waits.
        let mut second = pin!(notify.notified());
        assert!(second.as_mut().poll(&mut Context::from_waker(&latecomer)).is_pending());
        assert!(first.as_mut().poll(&mut Context::from_waker(&waiter)).is_ready());
    }

    #[test]
    fn a_notify_with_no_waiter_stores_one_permit() {
        use std::pin::pin;
        let notify = Notify::new();
        let (_, waker) = counting_waker();
        notify.notify();
        notify.notify();
        let mut first = pin!(notify.notified());
        assert!(first.as_mut().poll(&mut Context::from_waker(&waker)).is_ready());
        let mut second = pin!(notify.notified());
        assert!(second.as_mut().poll(&mut Context::from_waker(&waker)).is_pending(), "permits do not add up");
    }

    #[test]
    fn a_list_of_woken_wakers_is_kept_for_the_next_wait() {
        // The doc's promise: a steady wait/wake cycle allocates nothing, because the buffer
        // a wake takes out comes back as the list the next waits fill.
        let mut waiters = Waiters::default();
        let wakers: Vec<Waker> = (0..3).map(|_| counting_waker().1).collect();
        for w in &wakers {
            waiters.register(w);
        }
        let taken = waiters.take_all();
        let (capacity, buffer) = (taken.capacity(), taken.as_ptr());
        assert!(capacity >= 3);
        assert!(waiters.is_empty());
        waiters.recycle(taken);
        assert_eq!((waiters.waiting.capacity(), waiters.waiting.as_ptr()), (capacity, buffer));
        assert!(waiters.is_empty());
        // A waiter that came while the others were woken keeps its own list.
        let taken = waiters.take_all();
        waiters.register(&wakers[0]);
        waiters.recycle(taken);
        assert_eq!(waiters.waiting.len(), 1);
        assert!(waiters.contains(&wakers[0]));
    }

    #[test]
    fn a_pop_on_an_empty_queue_waits_for_the_next_push_to_any_of_its_handles() {
        use std::pin::pin;
        let queue = Queue::new();
        let (woken, waker) = counting_waker();
        let mut pop = pin!(queue.pop());
        assert!(pop.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        queue.clone().push(7);
        assert_eq!(woken.0.load(std::sync::atomic::Ordering::Relaxed), 1, "the push wakes the popper");
        assert_eq!(pop.as_mut().poll(&mut Context::from_waker(&waker)), Poll::Ready(7));
    }

    #[test]
    fn a_wait_polled_again_before_any_notify_still_waits() {
        use std::pin::pin;
        let notify = Notify::new();
        let (_, waker) = counting_waker();
        let mut waiting = pin!(notify.notified());
        assert!(waiting.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        // A spurious poll: the waker is still on the list, so no notification came.
        assert!(waiting.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        notify.notify();
        assert!(waiting.as_mut().poll(&mut Context::from_waker(&waker)).is_ready());
    }

    #[test]
    fn a_sender_knows_when_its_receiver_is_gone() {
        let (sender, receiver) = oneshot::<u32>();
        assert!(!sender.is_canceled());
        drop(receiver);
        assert!(sender.is_canceled());
    }

    #[test]
    fn a_queue_counts_what_it_holds() {
        let queue = Queue::new();
        assert!(queue.is_empty());
        queue.push(1);
        queue.push(2);
        assert_eq!((queue.len(), queue.is_empty()), (2, false));
        assert_eq!(queue.try_pop(), Some(1));
        assert_eq!(queue.len(), 1);
    }
}
