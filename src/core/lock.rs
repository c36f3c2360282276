//! A tiny single-threaded async lock. Every logical change of a world (publish a message, switch
//! chats, save a memory entry) takes it for "plan → persist → commit to RAM", so a change that
//! awaits the store never interleaves with another change and RAM always mirrors what was
//! committed. It is not a `RefCell` borrow: holding it across an await is the point. The memory
//! store uses the owned form ([`WriteLock::lock_owned`]) as its per-world writer lock.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

#[derive(Debug, Default)]
pub(crate) struct WriteLock {
    locked: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

pub(crate) struct Guard<'a>(&'a WriteLock);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A guard that owns its lock (it can outlive the borrow it was taken from).
pub(crate) struct OwnedGuard(Rc<WriteLock>);

impl Drop for OwnedGuard {
    fn drop(&mut self) {
        self.0.release();
    }
}

pub(crate) struct Acquire<'a>(&'a WriteLock);

impl<'a> Future for Acquire<'a> {
    type Output = Guard<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Guard<'a>> {
        let lock = self.0;
        if lock.try_take(cx) {
            Poll::Ready(Guard(lock))
        } else {
            Poll::Pending
        }
    }
}

pub(crate) struct AcquireOwned(Rc<WriteLock>);

impl Future for AcquireOwned {
    type Output = OwnedGuard;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<OwnedGuard> {
        if self.0.try_take(cx) {
            Poll::Ready(OwnedGuard(self.0.clone()))
        } else {
            Poll::Pending
        }
    }
}

impl WriteLock {
    pub(crate) fn lock(&self) -> Acquire<'_> {
        Acquire(self)
    }

    pub(crate) fn lock_owned(self: &Rc<Self>) -> AcquireOwned {
        AcquireOwned(self.clone())
    }

    /// Takes the lock, or registers the task to be woken when it is released.
    fn try_take(&self, cx: &mut Context<'_>) -> bool {
        if self.locked.replace(true) {
            self.waiters.borrow_mut().push(cx.waker().clone());
            false
        } else {
            true
        }
    }

    fn release(&self) {
        self.locked.set(false);
        // Wake every waiter: the first to be polled takes the lock, the others re-register.
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        for w in waiters {
            w.wake();
        }
    }
}
