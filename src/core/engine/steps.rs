//! The agent runner (spec §9): one reply as one or more LLM calls (*steps*) with tool calls in
//! between. [`World::run_steps`] is §5 step 4 of a reply; the caller (`responder.rs`) does the
//! rest of §5 on what it returns (failure handling, or cleaning, world tags, self-mentions,
//! auto-mention and publishing on the joined text).
//!
//! Before step 1: every tool the agent lists must be registered (else `tool_not_registered`,
//! before any request), and the agent's dynamic instructions, if set, replace the stored system
//! prompt (a throwing function fails the reply with `llm_error` naming the agent).
//!
//! Each step: the LLM is called with the reply's context so far, offered the agent's tools
//! (none on step `maxSteps`); text streams into the reply's SSE `messageId` (a later step's text
//! is preceded by the blank line that will join it, so the streamed text equals the content);
//! `tool-call` is emitted for each complete call. A step without calls ends the reply. Otherwise
//! the calls run one after the other in the model's order; a call is answered without running
//! when the agent does not list the tool (`unknown tool`), the tool is no longer registered, or
//! its arguments are not JSON or do not match the schema; a throwing, timing-out or non-JSON
//! tool is answered `{"error": …}` too. The step's assistant entry (text + calls) and one
//! result entry per call are appended to the context and saved to the agent's memory (one store
//! batch per step, M before them, the final reply after them), `step-finish` is emitted, and the
//! next step is made.
//!
//! Cancellation (stop, chat switch, abort) fires the job's token: the LLM call ends with
//! `Aborted`, the running tool's `cancel` fires and the engine stops waiting for it at once; the
//! reply ends as in §5 step 5 with what was streamed so far.
//!
//! Choices where the spec is silent:
//! - Tool calls a model makes on the last step (which offered no tools) are not run: the
//!   reply ends with that step's text, and each call is recorded (and reported by
//!   `tool-result`) with the error `not run: the last step of a reply offers no tools`.
//! - `step-finish` comes after the step's tools ran, and carries their results (what a UI or a
//!   log wants to know about the step). It is emitted for the steps of agents that list tools
//!   (and of any step that made calls); a reply of an agent without tools keeps exactly the
//!   events it had before tools existed.
//! - Usage on the SSE `end` is the sum over the steps; `step-finish` carries each step's own.
//! - A call cancelled while its tool runs, and the calls of that step not started yet, are
//!   recorded (and reported by `tool-result`) with the error `cancelled`.
//! - A call whose id is missing or was already used in this reply gets
//!   `<messageId>-call-<n>` (ids key the results and the UI's cards).
//! - If saving a step's memory entries fails (reported as a `storage_error` event), the reply
//!   goes on with its context in RAM; later replies do not see that group.

use crate::core::engine::shared::{cold, Planned};
use crate::core::vec_map::VecSet;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::core::json::Value;

use crate::core::approval::ReplyState;
use crate::core::engine::approvals::Decision;
use crate::core::engine::responder::sse_payload;
use crate::core::engine::tools::{InstructionsProvider, InstructionsRequest, RegisteredTool};
use crate::core::engine::{Job, World};
use crate::core::events::{Event, SseEvent, SseType, SystemEvent};
use crate::core::json_write::ToJson;
use crate::core::llm::types::{
    CallPurpose, CallSettings, ChatMessage, LlmError, LlmEvent, Role, ThinkingBlock, ToolCallPart,
    Usage,
};
use crate::core::llm_client::{CancelToken, Cancelled};
use crate::core::model::{Agent, MemoryEntry, MemoryRole, Message, ToolCallRecord, ToolCallRef};
use crate::core::store::{LocalBoxFuture, StoreOp};
use crate::core::tools::ToolSpec;
use crate::core::tools::{
    error_result, parse_args, timeout_message, NeedsApproval, ToolContext, ToolError,
};
use std::rc::Rc;

/// What the steps of one reply produced (also when they failed: the partial text and the calls
/// made so far).
#[derive(Debug, Default)]
pub(crate) struct StepsOutcome {
    /// The texts of the steps joined by a blank line (empty texts skipped).
    pub(crate) text: String,
    /// Summed over the steps.
    pub(crate) usage: Option<Usage>,
    /// Every call of the reply, in order, with its result or error.
    pub(crate) tool_calls: Vec<ToolCallRecord>,
    /// Set when the reply stopped at a call that needs approval (the result is then `Ok`):
    /// the state to resume from.
    pub(crate) suspended: Option<ReplyState>,
}

/// How a step's calls ended.
enum ToolsRun {
    Done {
        records: Vec<ToolCallRecord>,
        cancelled: bool,
    },
    /// A call waits for approval; `records` are the results of the calls before it.
    Suspended { records: Vec<ToolCallRecord> },
}

/// The model's result of a denied call: `denied by the user[: reason]` (spec §9).
pub(crate) fn denied_message(reason: Option<String>) -> String {
    match reason.filter(|r| !r.trim().is_empty()) {
        Some(r) => format!("denied by the user: {}", r.trim()),
        None => "denied by the user".to_string(),
    }
}

/// Resolves with `Some(output)`, or `None` as soon as `cancel` fires (the future is dropped).
struct UntilCancelled<'a, T> {
    fut: LocalBoxFuture<'a, T>,
    cancel: Cancelled,
}

impl<T> Future for UntilCancelled<'_, T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        // Cancellation wins: a tool that settles because its signal fired was cancelled.
        if Pin::new(&mut this.cancel).poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        this.fut.as_mut().poll(cx).map(Some)
    }
}

fn until_cancelled<'a, T>(
    fut: LocalBoxFuture<'a, T>,
    cancel: &CancelToken,
) -> UntilCancelled<'a, T> {
    UntilCancelled {
        fut,
        cancel: cancel.cancelled(),
    }
}

/// Arguments as they are recorded: the parsed object, or (when the text is not a JSON object)
/// the raw text as a JSON string, so nothing the model sent is lost. Blank text is `{}`.
pub(crate) fn stored_args(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match crate::core::json::from_str(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::String(arguments.to_string()),
    }
}

fn add_usage(total: &mut Option<Usage>, step: Option<Usage>) {
    let Some(s) = step else { return };
    let t = total.get_or_insert_with(Usage::default);
    let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, y) => x.or(y),
    };
    t.input_tokens = sum(t.input_tokens, s.input_tokens);
    t.output_tokens = sum(t.output_tokens, s.output_tokens);
}

/// Appends a step's text to the reply's text (spec §9: joined by a blank line, empty skipped).
fn join_text(joined: &mut String, step: &str) {
    if step.trim().is_empty() {
        return;
    }
    if !joined.is_empty() {
        joined.push_str("\n\n");
    }
    joined.push_str(step);
}

/// What one LLM call streamed.
#[derive(Default)]
struct StepState {
    text: String,
    usage: Option<Usage>,
    calls: Vec<ToolCallPart>,
    /// The step's thinking blocks, sent back with its calls (see `ThinkingBlock`).
    thinking: Vec<ThinkingBlock>,
    finish: Option<String>,
    /// Whether this step's text has started showing (after the joining blank line).
    shown: bool,
    /// Leading whitespace of a later step, held until text follows (or dropped with the step).
    held: String,
}

impl World {
    /// Runs the steps of one reply (see the module docs). `messages` is the input of step 1
    /// (§5 step 2). Returns the outcome with `Err` when the reply failed (its text so far is
    /// the partial text).
    pub(crate) async fn run_steps(
        &self,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        mut messages: Vec<ChatMessage>,
        resume: Option<(ReplyState, Decision)>,
    ) -> (Result<(), LlmError>, StepsOutcome) {
        let mut out = StepsOutcome::default();
        let aborted = || LlmError::Aborted {
            provider: agent.provider.clone(),
        };
        // Every listed tool must be registered before any request.
        let specs = match self.offered_specs(agent) {
            Ok(specs) => specs,
            Err(e) => return (Err(e), out),
        };
        // Dynamic instructions replace the stored system prompt (a resumed reply has its
        // prompt in its saved context already).
        let provider = match resume {
            None => self.instructions_of(&agent.id),
            Some(_) => None,
        };
        if let Some(provider) = provider {
            let instructed =
                cold(self.apply_instructions(provider, job, agent, trigger, &mut messages));
            if let Err(e) = instructed.await {
                return (Err(e), out);
            }
        }
        // Call ids seen in this reply: a repeated or missing one is replaced (some providers
        // have no ids, and their codecs number calls per step).
        let mut used_ids: VecSet<String> = VecSet::new();
        let max = agent.max_steps.max(1);
        // A resumed reply first finishes the step it stopped in, from the call that waited.
        let mut pending: Option<Pending> = resume.map(|(state, decision)| {
            resumed(state, decision, &mut messages, &mut out, &mut used_ids)
        });
        let mut next = 1;
        loop {
            let (step, s, done, decision) = match pending.take() {
                Some(p) => p,
                None => {
                    let step = next;
                    if step > max {
                        return (Ok(()), out);
                    }
                    if job.cancel.is_cancelled() {
                        return (Err(aborted()), out);
                    }
                    // The last step is offered no tools, so it answers in text.
                    let settings = step_settings(agent, if step < max { &specs } else { &[] });
                    let mut s = StepState::default();
                    let joined_before = !out.text.is_empty();
                    let result = {
                        let mut on_event = |ev: LlmEvent| {
                            self.on_step_event(
                                agent,
                                reply_id,
                                joined_before,
                                &mut used_ids,
                                &mut s,
                                ev,
                            )
                        };
                        self.inner
                            .llm
                            .call(
                                &settings,
                                messages.clone(),
                                &mut on_event,
                                job.cancel.clone(),
                            )
                            .await
                    };
                    let result = match result {
                        Ok(()) if job.cancel.is_cancelled() => Err(aborted()),
                        r => r,
                    };
                    add_usage(&mut out.usage, s.usage);
                    if let Err(e) = result {
                        // The partial text is what was streamed, blank text included.
                        if !out.text.is_empty() && !s.text.trim().is_empty() {
                            out.text.push_str("\n\n");
                        }
                        out.text.push_str(&s.text);
                        return (Err(e), out);
                    }
                    join_text(&mut out.text, &s.text);
                    if s.calls.is_empty() || step == max {
                        self.end_last_step(agent, reply_id, step, &s, &mut out);
                        return (Ok(()), out);
                    }
                    (step, s, Vec::new(), None)
                }
            };
            next = step + 1;
            let ran = cold(self.tool_step(
                job,
                agent,
                reply_id,
                (step, s, done, decision),
                &mut messages,
                &mut out,
                &mut used_ids,
            ));
            if let Some(result) = ran.await {
                return (result, out);
            }
        }
    }

    /// The specs of the tools `agent` lists, or `tool_not_registered` for the first one that is
    /// not registered (checked before any request).
    // Out of `run_steps`'s poll (see `shared::cold`): plain code, so a plain call.
    #[inline(never)]
    fn offered_specs(&self, agent: &Agent) -> Result<Vec<ToolSpec>, LlmError> {
        let rt = self.inner.runtime.borrow();
        let mut specs = Vec::with_capacity(agent.tools.len());
        for name in &agent.tools {
            match rt.tool(name) {
                Some(t) => specs.push(t.def.spec.clone()),
                None => {
                    return Err(LlmError::ToolNotRegistered {
                        tool: name.clone(),
                        agent: agent.id.clone(),
                    })
                }
            }
        }
        Ok(specs)
    }

    /// The agent's dynamic instructions replace the system prompt of `messages` (none when
    /// they return blank text). A throwing function fails the reply naming the agent.
    async fn apply_instructions(
        &self,
        provider: Rc<dyn InstructionsProvider>,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<(), LlmError> {
        let req = InstructionsRequest {
            agent_name: agent.id.clone(),
            chat_id: job.chat_id.clone(),
            message: trigger.clone(),
        };
        match until_cancelled(provider.instructions(req), &job.cancel).await {
            None => Err(LlmError::Aborted {
                provider: agent.provider.clone(),
            }),
            Some(Err(message)) => Err(LlmError::Instructions {
                agent: agent.id.clone(),
                message,
            }),
            Some(Ok(prompt)) => {
                if messages.first().is_some_and(|m| m.role == Role::System) {
                    messages.remove(0);
                }
                if !prompt.trim().is_empty() {
                    messages.insert(0, ChatMessage::new(Role::System, prompt));
                }
                Ok(())
            }
        }
    }

    /// The end of a reply's last step (no calls, or calls on step `maxSteps`): calls on the
    /// last step are not run, but every announced call gets its result; `step-finish` as the
    /// module docs say.
    #[inline(never)]
    fn end_last_step(
        &self,
        agent: &Agent,
        reply_id: &str,
        step: u32,
        s: &StepState,
        out: &mut StepsOutcome,
    ) {
        let mut records = Vec::new();
        for c in &s.calls {
            let record = ToolCallRecord {
                tool_call_id: c.id.clone(),
                tool_name: c.name.clone(),
                args: stored_args(&c.arguments),
                result: None,
                error: Some(NOT_RUN_ON_LAST_STEP.to_string()),
            };
            self.emit(tool_result_event(agent, reply_id, &record));
            records.push(record);
        }
        out.tool_calls.extend(records.iter().cloned());
        if !agent.tools.is_empty() || !records.is_empty() {
            self.emit_all(vec![step_finish(agent, reply_id, step, s, records)]);
        }
    }

    /// A step that made calls (not the last step): runs them, then appends the step's group to
    /// the context and the agent's memory and emits `step-finish`. `Some(result)` ends the
    /// reply there (cancelled, or suspended at a call that needs approval: `out.suspended`);
    /// `None` goes on to the next step. Its own future, behind [`cold`]: a reply without
    /// tools never polls it.
    #[allow(clippy::too_many_arguments)]
    async fn tool_step(
        &self,
        job: &Job,
        agent: &Agent,
        reply_id: &str,
        (step, s, done, decision): Pending,
        messages: &mut Vec<ChatMessage>,
        out: &mut StepsOutcome,
        used_ids: &mut VecSet<String>,
    ) -> Option<Result<(), LlmError>> {
        let (records, cancelled) = match self
            .run_tools(job, agent, reply_id, &s.calls, done, decision)
            .await
        {
            ToolsRun::Done { records, cancelled } => (records, cancelled),
            ToolsRun::Suspended { records } => {
                // A call waits for approval: the reply stops here, with what resuming needs.
                out.suspended = Some(ReplyState {
                    step,
                    messages: std::mem::take(messages),
                    text: out.text.clone(),
                    usage: out.usage,
                    tool_calls: out.tool_calls.clone(),
                    step_text: s.text,
                    step_finish: s.finish,
                    step_usage: s.usage,
                    step_calls: s.calls,
                    step_thinking: s.thinking,
                    step_records: records,
                    used_ids: std::mem::take(used_ids).into_iter().collect(),
                });
                return Some(Ok(()));
            }
        };
        out.tool_calls.extend(records.iter().cloned());
        if cancelled {
            return Some(Err(LlmError::Aborted {
                provider: agent.provider.clone(),
            }));
        }
        // The step's group: the model's calls, then one result per call.
        // The step's thinking goes back with its calls (providers that sign it require it).
        messages.push(ChatMessage {
            thinking: s.thinking.clone(),
            ..ChatMessage::tool_calls(s.text.clone(), s.calls.clone())
        });
        let now = self.now();
        let mut refs = Vec::new();
        for r in &records {
            refs.push(ToolCallRef {
                tool_call_id: r.tool_call_id.clone(),
                tool_name: r.tool_name.clone(),
                args: r.args.clone(),
            });
        }
        let mut group = vec![MemoryEntry {
            tool_calls: refs,
            ..MemoryEntry::text(
                MemoryRole::Assistant,
                s.text.clone(),
                None,
                reply_id,
                job.chat_id.clone(),
                now,
            )
        }];
        for r in &records {
            let content = match (&r.result, &r.error) {
                (Some(v), _) => v.to_json(),
                (None, e) => error_result(e.as_deref().unwrap_or("no result")).to_json(),
            };
            messages.push(ChatMessage::tool_result(
                r.tool_call_id.clone(),
                r.tool_name.clone(),
                content.clone(),
            ));
            group.push(MemoryEntry {
                tool_call_id: Some(r.tool_call_id.clone()),
                tool_name: Some(r.tool_name.clone()),
                ..MemoryEntry::text(
                    MemoryRole::Tool,
                    content,
                    None,
                    reply_id,
                    job.chat_id.clone(),
                    now,
                )
            });
        }
        // A storage failure was reported by `persist`; the reply goes on (module docs).
        let _ = self
            .save_group(job.chat_id.as_deref(), &agent.id, group)
            .await;
        self.emit_all(vec![step_finish(agent, reply_id, step, &s, records)]);
        None
    }

    /// One streamed event of a step: text (with the joining blank line before a later step's
    /// first visible text), reasoning, usage, tool calls, the finish reason.
    fn on_step_event(
        &self,
        agent: &Agent,
        reply_id: &str,
        joined_before: bool,
        used_ids: &mut VecSet<String>,
        s: &mut StepState,
        ev: LlmEvent,
    ) {
        match ev {
            LlmEvent::Text(t) => {
                s.text.push_str(&t);
                if !agent.stream {
                    return;
                }
                let chunk = if s.shown || !joined_before {
                    s.shown = true;
                    t
                } else {
                    s.held.push_str(&t);
                    if s.held.trim().is_empty() {
                        return;
                    }
                    s.shown = true;
                    format!("\n\n{}", std::mem::take(&mut s.held))
                };
                self.emit(Event::Sse(SseEvent {
                    content: Some(chunk),
                    ..sse_payload(SseType::Chunk, &agent.id, reply_id)
                }));
                self.flush();
            }
            LlmEvent::Reasoning(t) => {
                self.emit(Event::Sse(SseEvent {
                    content: Some(t),
                    ..sse_payload(SseType::Reasoning, &agent.id, reply_id)
                }));
                self.flush();
            }
            LlmEvent::Usage(u) => {
                let prev = s.usage.unwrap_or_default();
                s.usage = Some(Usage {
                    input_tokens: u.input_tokens.or(prev.input_tokens),
                    output_tokens: u.output_tokens.or(prev.output_tokens),
                });
            }
            LlmEvent::ToolCall(mut call) => {
                if call.id.is_empty() || used_ids.contains(&call.id) {
                    call.id = format!("{reply_id}-call-{}", used_ids.len() + 1);
                }
                used_ids.insert(call.id.clone());
                self.emit(Event::Sse(SseEvent {
                    tool_call_id: Some(call.id.clone()),
                    tool_name: Some(call.name.clone()),
                    args: Some(stored_args(&call.arguments)),
                    ..sse_payload(SseType::ToolCall, &agent.id, reply_id)
                }));
                self.flush();
                s.calls.push(call);
            }
            LlmEvent::Thinking(block) => s.thinking.push(block),
            LlmEvent::Done { finish_reason } => s.finish = finish_reason,
        }
    }

    /// Runs one step's calls in order, from the first without a record in `records` (a
    /// resumed step: `decision` answers that call). Stops at a call that needs approval.
    /// Otherwise returns every record and whether the reply was cancelled meanwhile (the
    /// current and the remaining calls are then recorded as `cancelled`).
    async fn run_tools(
        &self,
        job: &Job,
        agent: &Agent,
        reply_id: &str,
        calls: &[ToolCallPart],
        mut records: Vec<ToolCallRecord>,
        mut decision: Option<Decision>,
    ) -> ToolsRun {
        let mut cancelled = false;
        for call in calls.iter().skip(records.len()) {
            let outcome: Result<Value, String> = if cancelled || job.cancel.is_cancelled() {
                cancelled = true;
                Err("cancelled".to_string())
            } else {
                let checked = self.check_call(agent, call);
                let ran = match (checked, decision.take()) {
                    (Err(problem), _) => Some(Err(problem)),
                    (Ok(_), Some(Decision::Deny(reason))) => Some(Err(denied_message(reason))),
                    (Ok((tool, args)), Some(Decision::Approve)) => {
                        self.execute(job, agent, reply_id, call, &tool, args).await
                    }
                    (Ok((tool, args)), None) => match self.asks_approval(job, &tool, &args).await {
                        None => None,
                        Some(true) => return ToolsRun::Suspended { records },
                        Some(false) => self.execute(job, agent, reply_id, call, &tool, args).await,
                    },
                };
                match ran {
                    Some(r) => r,
                    None => {
                        cancelled = true;
                        Err("cancelled".to_string())
                    }
                }
            };
            let record = ToolCallRecord {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: stored_args(&call.arguments),
                result: outcome.as_ref().ok().cloned(),
                error: outcome.err(),
            };
            self.emit_all(vec![tool_result_event(agent, reply_id, &record)]);
            records.push(record);
        }
        ToolsRun::Done { records, cancelled }
    }

    /// Checks one call: the agent lists the tool, it is registered, the arguments match its
    /// schema. `Err` is the problem the model is told.
    fn check_call(
        &self,
        agent: &Agent,
        call: &ToolCallPart,
    ) -> Result<(RegisteredTool, Value), String> {
        if !agent.tools.iter().any(|t| t == &call.name) {
            let available = if agent.tools.is_empty() {
                "this agent has no tools".to_string()
            } else {
                format!(
                    "the tools available are {}",
                    crate::core::join(&agent.tools, ", ")
                )
            };
            return Err(format!("unknown tool {:?}: {available}", call.name));
        }
        let Some(tool) = self.inner.runtime.borrow().tool(&call.name) else {
            return Err(format!("tool {:?} is not registered", call.name));
        };
        let args = parse_args(&tool.def.spec.parameters, &call.arguments)?;
        Ok((tool, args))
    }

    /// Whether a checked call must wait for the application's answer (spec §9): `needsApproval`
    /// true, or its function of the arguments says so (a throwing function asks: the safe
    /// side). `None`: the reply was cancelled while the function ran.
    async fn asks_approval(&self, job: &Job, tool: &RegisteredTool, args: &Value) -> Option<bool> {
        match tool.def.needs_approval {
            NeedsApproval::Never => Some(false),
            NeedsApproval::Always => Some(true),
            NeedsApproval::ByArgs => {
                let asked = tool.executor.needs_approval(&tool.def.spec.name, args);
                Some(until_cancelled(asked, &job.cancel).await?.unwrap_or(true))
            }
        }
    }

    /// Runs one checked call. `None`: the reply was cancelled while the tool ran.
    async fn execute(
        &self,
        job: &Job,
        agent: &Agent,
        reply_id: &str,
        call: &ToolCallPart,
        tool: &RegisteredTool,
        args: Value,
    ) -> Option<Result<Value, String>> {
        let ctx = ToolContext {
            agent_name: agent.id.clone(),
            message_id: reply_id.to_string(),
            tool_call_id: call.id.clone(),
            timeout_ms: tool.def.timeout_ms,
            cancel: job.cancel.clone(),
        };
        let ran =
            until_cancelled(tool.executor.execute(&call.name, args, ctx), &job.cancel).await?;
        Some(match ran {
            Ok(v) => Ok(v),
            Err(ToolError::TimedOut) => Err(timeout_message(tool.def.timeout_ms)),
            Err(e) => Err(e.to_string()),
        })
    }

    /// Saves one step's memory entries in one batch (RAM, and the store in session mode) under
    /// the write lock, after the agent's unsaved entries of the chat (its M, `State::unsaved`);
    /// entries for a chat that is no longer current are dropped.
    async fn save_group(
        &self,
        chat_id: Option<&str>,
        agent_id: &str,
        entries: Vec<MemoryEntry>,
    ) -> Result<bool, crate::core::error::WorldError> {
        self.change(&mut |w| {
            let (world_id, current) = {
                let st = w.st();
                (st.world.id.clone(), st.world.current_chat_id.clone())
            };
            if current.as_deref() != chat_id {
                return Ok(None);
            }
            let mut flushed = Vec::new();
            let mut all = Vec::new();
            if let Some(cid) = chat_id {
                for u in w.st().unsaved_of(agent_id, cid) {
                    flushed.push(u.id);
                    all.push(u.entry.clone());
                }
            }
            all.extend(entries.iter().cloned());
            let mut ops = Vec::new();
            if let Some(cid) = chat_id {
                for entry in &all {
                    ops.push(StoreOp::AppendMemory {
                        world_id: world_id.clone(),
                        chat_id: cid.to_string(),
                        agent_id: agent_id.to_string(),
                        entry: entry.clone(),
                    });
                }
            }
            let planned = Planned::new(ops, move |w| {
                let mut st = w.st_mut();
                st.saved(&flushed);
                for e in all {
                    st.remember(agent_id, e);
                }
                Vec::new()
            });
            Ok(Some(planned.for_agent(agent_id.to_string())))
        })
        .await
    }
}

/// The error of a call made on step `maxSteps`, which offered no tools.
const NOT_RUN_ON_LAST_STEP: &str = "not run: the last step of a reply offers no tools";

fn tool_result_event(agent: &Agent, reply_id: &str, record: &ToolCallRecord) -> Event {
    Event::Sse(SseEvent {
        tool_call_id: Some(record.tool_call_id.clone()),
        tool_name: Some(record.tool_name.clone()),
        result: record.result.clone(),
        error: record.error.clone(),
        ..sse_payload(SseType::ToolResult, &agent.id, reply_id)
    })
}

fn step_finish(
    agent: &Agent,
    reply_id: &str,
    step: u32,
    s: &StepState,
    tool_calls: Vec<ToolCallRecord>,
) -> Event {
    Event::System(SystemEvent::StepFinish {
        agent_name: agent.id.clone(),
        message_id: reply_id.to_string(),
        step,
        finish_reason: s.finish.clone(),
        usage: s.usage,
        tool_calls,
    })
}

/// A step to run the calls of: its number, what it streamed, the records of its calls already
/// answered and the decision on the next one (a resumed reply).
type Pending = (u32, StepState, Vec<ToolCallRecord>, Option<Decision>);

/// The state of a reply resumed after an approval: the context, text, usage and calls so far
/// go back into place, and the step it stopped in is the one to finish first.
#[inline(never)]
fn resumed(
    state: ReplyState,
    decision: Decision,
    messages: &mut Vec<ChatMessage>,
    out: &mut StepsOutcome,
    used_ids: &mut VecSet<String>,
) -> Pending {
    *messages = state.messages;
    out.text = state.text;
    out.usage = state.usage;
    out.tool_calls = state.tool_calls;
    used_ids.extend(state.used_ids);
    let s = StepState {
        text: state.step_text,
        usage: state.step_usage,
        calls: state.step_calls,
        thinking: state.step_thinking,
        finish: state.step_finish,
        shown: true,
        held: String::new(),
    };
    (state.step, s, state.step_records, Some(decision))
}

/// The settings of one step's call: the agent's, offering `tools`.
#[inline(never)]
fn step_settings(agent: &Agent, tools: &[ToolSpec]) -> CallSettings {
    CallSettings {
        provider: agent.provider.clone(),
        model: agent.model.clone(),
        temperature: agent.temperature,
        max_tokens: agent.max_tokens,
        stream: agent.stream,
        tools: tools.to_vec(),
        reasoning: agent.reasoning,
        agent_name: Some(agent.id.clone()),
        purpose: CallPurpose::Reply,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_join_with_a_blank_line_skipping_empty_ones() {
        let mut t = String::new();
        for s in ["", "Let me check.", "  \n", "It is sunny."] {
            join_text(&mut t, s);
        }
        assert_eq!(t, "Let me check.\n\nIt is sunny.");
    }

    #[test]
    fn arguments_are_recorded_parsed_or_raw() {
        assert_eq!(
            stored_args(r#"{"a":1}"#),
            crate::core::json::json!({"a": 1})
        );
        assert_eq!(stored_args(" "), crate::core::json::json!({}));
        assert_eq!(
            stored_args(r#"{"a":"#),
            crate::core::json::json!(r#"{"a":"#)
        );
        assert_eq!(stored_args("[1]"), crate::core::json::json!("[1]"));
    }

    #[test]
    fn usage_sums_over_steps() {
        let mut t = None;
        add_usage(&mut t, None);
        assert_eq!(t, None);
        add_usage(
            &mut t,
            Some(Usage {
                input_tokens: Some(3),
                output_tokens: None,
            }),
        );
        add_usage(
            &mut t,
            Some(Usage {
                input_tokens: Some(4),
                output_tokens: Some(2),
            }),
        );
        assert_eq!(
            t,
            Some(Usage {
                input_tokens: Some(7),
                output_tokens: Some(2)
            })
        );
    }
}
