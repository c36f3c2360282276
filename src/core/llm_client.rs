//! The engine's side of the LLM seam: the object-safe, `?Send` [`LlmClient`] the provider layer
//! implements, and [`CancelToken`], a pure `Rc` token the web adapter wires to an
//! `AbortController` (the engine cancels; the adapter aborts the fetch).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use crate::core::llm::types::{CallSettings, ChatMessage, LlmError, LlmEvent};
use crate::core::store::LocalBoxFuture;

/// Something that answers one LLM call, streaming its events into `on_event`.
///
/// Contract: the future resolves once the reply is complete (`Ok`) or failed (`Err`); it emits
/// [`LlmEvent::Text`] pieces in order; when `cancel` fires it stops as soon as it can with
/// [`LlmError::Aborted`]. Retries happen inside (one call is one turn for the engine).
pub trait LlmClient {
    fn call<'a>(
        &'a self,
        settings: &'a CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &'a mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> LocalBoxFuture<'a, Result<(), LlmError>>;
}

#[derive(Default)]
struct CancelInner {
    cancelled: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

/// A cancellation flag shared by clones. Cancelling is permanent and wakes every
/// [`CancelToken::cancelled`] future.
#[derive(Clone, Default)]
pub struct CancelToken(Rc<CancelInner>);

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        if !self.0.cancelled.replace(true) {
            let wakers = std::mem::take(&mut *self.0.wakers.borrow_mut());
            for w in wakers {
                w.wake();
            }
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    /// Resolves once the token is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled(self.clone())
    }
}

/// The future of [`CancelToken::cancelled`].
pub struct Cancelled(CancelToken);

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_cancelled() {
            return Poll::Ready(());
        }
        let mut wakers = self.0 .0.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelled_future_resolves_after_cancel() {
        let t = CancelToken::new();
        let t2 = t.clone();
        assert!(!t.is_cancelled());
        futures_executor::block_on(futures_util::future::join(t.cancelled(), async move {
            t2.cancel();
        }));
        assert!(t.is_cancelled());
    }
}
