//! Wakers: a task id packed into the data word, and the thread-local world.
//!
//! A waker carries no pointer and no reference count, so making, cloning and dropping one
//! allocates nothing, and waking reaches the executor through the same thread-local as the
//! ambient API. A waker of a finished or killed task names a slot generation that has moved
//! on, so waking it is harmlessly ignored; so is waking after the world is gone.

use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::ids::TaskId;

use super::ambient::with_entered;

static VTABLE: RawWakerVTable = RawWakerVTable::new(waker_clone, waker_wake, waker_wake, waker_drop);

/// The waker of task `id`.
pub(super) fn waker_for(id: TaskId) -> Waker {
    // SAFETY: the data is a plain integer and the vtable functions never dereference it.
    unsafe { Waker::from_raw(RawWaker::new(id.pack() as *const (), &VTABLE)) }
}

fn waker_clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

fn waker_wake(data: *const ()) {
    let id = TaskId::unpack(data as usize);
    // No world (a future dropped after the run woke a waiter): nothing to do.
    with_entered(|state| state.borrow_mut().wake(id));
}

fn waker_drop(_: *const ()) {}
