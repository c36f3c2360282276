//! A tiny single-threaded async lock. Every logical change of a world (publish a message, switch
//! chats, save a memory entry) takes it for "plan → persist → commit to RAM", so a change that
//! awaits the store never interleaves with another change and RAM always mirrors what was
//! committed. It is not a `RefCell` borrow: holding it across an await is the point.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

#[derive(Default)]
pub(crate) struct WriteLock {
    locked: Cell<bool>,
    waiters: RefCell<VecDeque<Waker>>,
}

pub(crate) struct Guard<'a>(&'a WriteLock);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.locked.set(false);
        // Wake every waiter: the first to be polled takes the lock, the others re-register.
        let waiters = std::mem::take(&mut *self.0.waiters.borrow_mut());
        for w in waiters {
            w.wake();
        }
    }
}

pub(crate) struct Acquire<'a>(&'a WriteLock);

impl<'a> Future for Acquire<'a> {
    type Output = Guard<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Guard<'a>> {
        let lock = self.0;
        if lock.locked.replace(true) {
            lock.waiters.borrow_mut().push_back(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(Guard(lock))
        }
    }
}

impl WriteLock {
    pub(crate) fn lock(&self) -> Acquire<'_> {
        Acquire(self)
    }
}
