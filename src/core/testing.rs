//! [`ScriptedLlm`]: a deterministic [`LlmClient`] for tests (native and wasm). Replies are
//! scripted per model name (give each agent its own model to script per agent) as a list of
//! [`Step`]s, and every call's settings and input messages are recorded.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::core::llm::types::{CallSettings, ChatMessage, LlmError, LlmEvent, Usage};
use crate::core::llm_client::{CancelToken, LlmClient};
use crate::core::store::LocalBoxFuture;

/// One step of a scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Text(String),
    Reasoning(String),
    Usage(Usage),
    /// Fail the call here.
    Fail(LlmError),
    /// Wait until the call is cancelled, then fail with `Aborted`.
    Hang,
    /// Return `Pending` once (lets other futures run).
    Yield,
}

/// A recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    pub settings: CallSettings,
    pub messages: Vec<ChatMessage>,
}

/// The scripted client. A call to a model with no script left fails with a `Custom` error that
/// says so.
#[derive(Debug, Default)]
pub struct ScriptedLlm {
    scripts: RefCell<BTreeMap<String, VecDeque<Vec<Step>>>>,
    calls: RefCell<Vec<RecordedCall>>,
}

impl ScriptedLlm {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a reply made of `steps` for the next call to `model`.
    pub fn script(&self, model: &str, steps: Vec<Step>) {
        self.scripts
            .borrow_mut()
            .entry(model.to_string())
            .or_default()
            .push_back(steps);
    }

    /// Queues a plain text reply for the next call to `model`.
    pub fn reply(&self, model: &str, text: &str) {
        self.script(model, vec![Step::Text(text.to_string())]);
    }

    /// Every call so far, in call order.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.calls.borrow().clone()
    }

    /// The calls made to `model`.
    pub fn calls_to(&self, model: &str) -> Vec<RecordedCall> {
        self.calls
            .borrow()
            .iter()
            .filter(|c| c.settings.model == model)
            .cloned()
            .collect()
    }

    /// How many scripted replies are still unused.
    pub fn pending_scripts(&self) -> usize {
        self.scripts.borrow().values().map(VecDeque::len).sum()
    }
}

struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl LlmClient for ScriptedLlm {
    fn call<'a>(
        &'a self,
        settings: &'a CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &'a mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> LocalBoxFuture<'a, Result<(), LlmError>> {
        self.calls.borrow_mut().push(RecordedCall {
            settings: settings.clone(),
            messages,
        });
        let steps = self
            .scripts
            .borrow_mut()
            .get_mut(&settings.model)
            .and_then(VecDeque::pop_front);
        Box::pin(async move {
            let aborted = || LlmError::Aborted {
                provider: settings.provider.clone(),
            };
            let Some(steps) = steps else {
                return Err(LlmError::Custom {
                    message: format!(
                        "scripted llm: no reply scripted for model {}",
                        settings.model
                    ),
                });
            };
            for step in steps {
                if cancel.is_cancelled() {
                    return Err(aborted());
                }
                match step {
                    Step::Text(t) => on_event(LlmEvent::Text(t)),
                    Step::Reasoning(t) => on_event(LlmEvent::Reasoning(t)),
                    Step::Usage(u) => on_event(LlmEvent::Usage(u)),
                    Step::Fail(e) => return Err(e),
                    Step::Hang => {
                        cancel.cancelled().await;
                        return Err(aborted());
                    }
                    Step::Yield => YieldOnce(false).await,
                }
            }
            if cancel.is_cancelled() {
                return Err(aborted());
            }
            on_event(LlmEvent::Done {
                finish_reason: Some("stop".into()),
            });
            Ok(())
        })
    }
}
