//! [`ScriptedLlm`]: a deterministic [`LlmClient`] for tests (native and wasm). Replies are
//! scripted per model name (give each agent its own model to script per agent) as a list of
//! [`Step`]s, and every call's settings and input messages are recorded. One scripted list is
//! one LLM call: a reply of several steps (spec §9) is several scripts, e.g. one ending with
//! [`Step::ToolCall`]s, then one with the text that follows the results.
//!
//! [`ScriptedTools`]: a deterministic [`ToolExecutor`] answering each tool with a scripted
//! [`ToolReply`] and recording every execution with its context.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::core::llm::types::{
    CallSettings, ChatMessage, LlmError, LlmEvent, ThinkingBlock, ToolCallPart, Usage,
};
use crate::core::llm_client::{CancelToken, LlmClient};
use crate::core::store::LocalBoxFuture;
use crate::core::tools::{ToolContext, ToolError, ToolExecutor};

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
    /// A complete tool call: `id`, tool name, arguments as JSON text (malformed text allowed).
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        /// Gemini's `thoughtSignature` of the call, if any.
        signature: Option<String>,
    },
    /// A complete thinking block (Anthropic's signed thinking).
    Thinking(ThinkingBlock),
    /// The finish reason of the call (default: `tool_calls` when the call made tool calls,
    /// else `stop`).
    Finish(String),
}

impl Step {
    /// A tool call step.
    pub fn call(id: &str, name: &str, arguments: &str) -> Step {
        Step::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            signature: None,
        }
    }

    /// A tool call step with a (Gemini) thought signature.
    pub fn signed_call(id: &str, name: &str, arguments: &str, signature: &str) -> Step {
        Step::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            signature: Some(signature.to_string()),
        }
    }
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
            let mut finish: Option<String> = None;
            let mut called = false;
            for step in steps {
                if cancel.is_cancelled() {
                    return Err(aborted());
                }
                match step {
                    Step::ToolCall {
                        id,
                        name,
                        arguments,
                        signature,
                    } => {
                        called = true;
                        on_event(LlmEvent::ToolCall(ToolCallPart {
                            id,
                            name,
                            arguments,
                            signature,
                        }));
                    }
                    Step::Thinking(t) => on_event(LlmEvent::Thinking(t)),
                    Step::Finish(reason) => finish = Some(reason),
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
            let default = if called { "tool_calls" } else { "stop" };
            on_event(LlmEvent::Done {
                finish_reason: Some(finish.unwrap_or_else(|| default.to_string())),
            });
            Ok(())
        })
    }
}

/// How a scripted tool answers.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    /// Resolve with this value.
    Value(crate::core::json::Value),
    /// Resolve with the arguments it got, as `{"echo": args}`.
    Echo,
    /// Throw with this message.
    Fail(String),
    /// Report a timeout (the executor's side of `timeoutMs`).
    TimeOut,
    /// Return something that is not JSON (described by the text).
    NotJson(String),
    /// Wait until the call is cancelled, then throw `aborted`.
    Hang,
}

/// One recorded execution.
#[derive(Debug, Clone)]
pub struct ToolRun {
    pub name: String,
    pub args: crate::core::json::Value,
    pub ctx: ToolContext,
}

/// How a scripted tool's `needsApproval` function of the arguments answers (tools registered
/// with `NeedsApproval::ByArgs`).
#[derive(Debug, Clone, PartialEq)]
pub enum AskWhen {
    /// True when the argument `key` equals the value.
    ArgIs(String, crate::core::json::Value),
    /// The function throws with this message.
    Throws(String),
}

/// A scripted tool executor: each tool name answers with its [`ToolReply`] (a tool without one
/// throws `no reply scripted`); every execution is recorded. `needs_approval` answers with the
/// tool's [`AskWhen`] (`false` without one); every question is recorded too.
#[derive(Debug, Default)]
pub struct ScriptedTools {
    replies: RefCell<BTreeMap<String, ToolReply>>,
    runs: RefCell<Vec<ToolRun>>,
    asks: RefCell<BTreeMap<String, AskWhen>>,
    asked: RefCell<Vec<(String, crate::core::json::Value)>>,
}

impl ScriptedTools {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how `name` answers from now on.
    pub fn reply(&self, name: &str, reply: ToolReply) {
        self.replies.borrow_mut().insert(name.to_string(), reply);
    }

    /// Every execution so far, in order.
    pub fn runs(&self) -> Vec<ToolRun> {
        self.runs.borrow().clone()
    }

    /// Sets how `name`'s approval function answers.
    pub fn ask_when(&self, name: &str, when: AskWhen) {
        self.asks.borrow_mut().insert(name.to_string(), when);
    }

    /// Every approval question so far: `(tool name, arguments)`.
    pub fn asked(&self) -> Vec<(String, crate::core::json::Value)> {
        self.asked.borrow().clone()
    }
}

impl ToolExecutor for ScriptedTools {
    fn execute<'a>(
        &'a self,
        name: &'a str,
        args: crate::core::json::Value,
        ctx: ToolContext,
    ) -> LocalBoxFuture<'a, Result<crate::core::json::Value, ToolError>> {
        self.runs.borrow_mut().push(ToolRun {
            name: name.to_string(),
            args: args.clone(),
            ctx: ctx.clone(),
        });
        let reply = self.replies.borrow().get(name).cloned();
        Box::pin(async move {
            match reply {
                None => Err(ToolError::Failed(format!("no reply scripted for {name}"))),
                Some(ToolReply::Value(v)) => Ok(v),
                Some(ToolReply::Echo) => Ok(crate::core::json_write::json_value!({ "echo": args })),
                Some(ToolReply::Fail(m)) => Err(ToolError::Failed(m)),
                Some(ToolReply::TimeOut) => Err(ToolError::TimedOut),
                Some(ToolReply::NotJson(what)) => Err(ToolError::NotJson(what)),
                Some(ToolReply::Hang) => {
                    ctx.cancel.cancelled().await;
                    Err(ToolError::Failed("aborted".into()))
                }
            }
        })
    }

    fn needs_approval<'a>(
        &'a self,
        name: &'a str,
        args: &'a crate::core::json::Value,
    ) -> LocalBoxFuture<'a, Result<bool, String>> {
        self.asked
            .borrow_mut()
            .push((name.to_string(), args.clone()));
        let answer = match self.asks.borrow().get(name) {
            None => Ok(false),
            Some(AskWhen::ArgIs(key, value)) => Ok(args.get(key) == Some(value)),
            Some(AskWhen::Throws(m)) => Err(m.clone()),
        };
        Box::pin(async move { answer })
    }
}
