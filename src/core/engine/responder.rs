//! Running the queue (spec §5 responding, §6 LLM titles, §7 queue).
//!
//! [`World::run_until_idle`] takes calls from the FIFO queue, keeps at most `concurrency` of them
//! in flight (polled by a small hand-written join set, no spawning), and returns once nothing is
//! queued or running, after emitting `world` `idle`. A second call while one runs returns at once
//! (the running one picks up the new work).
//!
//! A reply call: SSE `start`; save M to memory; build the input window; call the LLM (chunks
//! stream as SSE events carrying the pre-allocated reply id); then either a failure (SSE `error`
//! with `partialContent`, system `error`, an `interrupted` message in session mode) or the reply
//! pipeline: clean → world tag → self-mentions → auto-mention → save and publish.
//!
//! One write per reply: in session mode M joins the agent's memory in RAM when the call leaves
//! the queue (it is in the input, and in `agent_memory`), but it is written to the store with
//! the agent's next batch of the chat: the reply (M, the reply's entry, the message and the
//! chat in one batch), or a tool step's group, or an approval's record, or the interrupted
//! message of a failed call. A call that ends with none of these (a failure with nothing
//! streamed, an empty reply, a reply dropped because its chat was left) writes M alone when it
//! ends. So M stays in memory however the call ends (spec §5 step 5), as before; a page closed
//! while the call runs keeps neither M nor the reply.
//!
//! A call whose chat was left (new/load chat, session mode off, another tab's switch) keeps the
//! text it had streamed as an `interrupted` message in that chat, never in the current one
//! (spec §4: nothing the user saw is lost); when the chat was deleted, nothing is kept.
//!
//! Choices where the spec is silent:
//! - A reply that completes just as its chat is left has had its SSE `end`, but is dropped (the
//!   check is made under the write lock when publishing).
//! - If the write lock cannot be taken when the call starts (the view could not be brought up
//!   to date), the LLM is not called; the turn is spent and the failure is reported as SSE
//!   `error` and system `error` with `storage_error`. If the reply's batch fails, the failure
//!   is reported (`storage_error`), the reply is not published, and M is written on its own.
//! - An LLM title call with no reply yet (no agent answered) sends the `User:` line alone.
//! - When several human messages arrive before the world is idle, the LLM title is asked for
//!   the last of them (and the first reply to it).
//! - A partial text that is only whitespace is carried by the SSE `error` as `partialContent`
//!   but not kept as an `interrupted` message (it would show as an empty message).

use crate::core::engine::shared::{cold, Planned};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::core::engine::routing::{Edit, Outgoing};
use crate::core::engine::steps::StepsOutcome;
use crate::core::engine::{Flight, Job, JobKind, Unsaved, World};
use crate::core::events::{Event, SseEvent, SseType, SystemEvent, WorldEvent};
use crate::core::ids::normalize_id;
use crate::core::llm::types::{
    CallPurpose, CallSettings, ChatMessage, LlmError, LlmEvent, Role, ToolCallPart, Usage,
};
use crate::core::mentions::{sender_type, SenderType};
use crate::core::model::{
    Agent, MemoryEntry, MemoryRole, Message, MessageKind, TitleSource, ToolCallRecord,
};
use crate::core::reply::{
    apply_to_tag, auto_mention, clean_reply, extract_world_tag, remove_self_mentions, WorldTag,
};
use crate::core::store::{LocalBoxFuture, StoreOp};
use crate::core::title::{clean_llm_title, heuristic_title, llm_title_prompt, truncate_chars};

/// Temperature and token budget of an LLM title call (spec §6).
const TITLE_TEMPERATURE: f64 = 0.2;
const TITLE_MAX_TOKENS: u32 = 32;
const TITLE_PROMPT_CHARS: usize = 2000;

pub(crate) fn sse(kind: SseType, agent: &str, message_id: &str) -> Event {
    Event::Sse(sse_payload(kind, agent, message_id))
}

enum Next {
    Done(usize),
    Refill,
}

/// Resolves when one in-flight call finishes, or when queued work could start.
struct NextEvent<'a, 'b> {
    world: &'a World,
    flights: &'b mut Vec<LocalBoxFuture<'a, ()>>,
}

impl Future for NextEvent<'_, '_> {
    type Output = Next;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Next> {
        let this = self.get_mut();
        for (i, f) in this.flights.iter_mut().enumerate() {
            if f.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Next::Done(i));
            }
        }
        let can_start = {
            let st = this.world.st();
            !st.queue.is_empty() && this.flights.len() < st.concurrency
        };
        if can_start {
            return Poll::Ready(Next::Refill);
        }
        *this.world.inner.queue_waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

struct RunGuard<'a>(&'a World);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.inner.running.set(false);
        // The run's waker goes with it: the next message's `wake_runner` would otherwise wake
        // this finished task (with an executor that queues a microtask per wakeup, one for
        // nothing per message); the next run registers its own.
        self.0.inner.queue_waker.borrow_mut().take();
        // If the run future was dropped mid-way, its calls died with it.
        if let Ok(mut st) = self.0.inner.state.try_borrow_mut() {
            st.in_flight.clear();
        }
    }
}

impl World {
    /// Processes the queue until nothing is pending, then emits `world` `idle`. Harmless to call
    /// while it already runs (returns at once).
    pub async fn run_until_idle(&self) {
        if self.inner.running.replace(true) {
            return;
        }
        let _guard = RunGuard(self);
        let mut flights: Vec<LocalBoxFuture<'_, ()>> = Vec::new();
        loop {
            loop {
                let job = {
                    let mut st = self.st_mut();
                    if flights.len() < st.concurrency {
                        let job = crate::core::pop_front(&mut st.queue);
                        if let Some(j) = &job {
                            let flight = Flight {
                                id: j.id,
                                chat_id: j.chat_id.clone(),
                                agent_id: j.agent_id().map(str::to_string),
                                trigger_id: j.trigger_id().map(str::to_string),
                                cancel: j.cancel.clone(),
                            };
                            st.in_flight.push(flight);
                        }
                        job
                    } else {
                        None
                    }
                };
                match job {
                    Some(j) => flights.push(Box::pin(self.run_job(j))),
                    None => break,
                }
            }
            if flights.is_empty() {
                if self.schedule_title() {
                    continue;
                }
                self.emit_all(vec![Event::World(WorldEvent::Idle)]);
                break;
            }
            let next = NextEvent {
                world: self,
                flights: &mut flights,
            }
            .await;
            if let Next::Done(i) = next {
                if i < flights.len() {
                    drop(flights.remove(i));
                }
            }
        }
    }

    /// Cancels every queued and running call (each reply call ends with SSE `error` and
    /// `llm_aborted`; queued ones keep their turn). The world stays usable.
    pub fn stop(&self) {
        self.st_mut().title = None;
        self.cancel_jobs(&|_| true);
        self.cancel_approvals(&|_| true);
    }

    /// Cancels the queued and running reply calls that answer one of `message_ids` (each ends
    /// like a call cancelled by [`World::stop`]); other calls go on. This is how a caller
    /// cancels the agent work one message started: pass its id, then the ids of the replies it
    /// received, so the chain it set off stops too.
    pub fn cancel_replies_to(&self, message_ids: &[String]) {
        self.cancel_jobs(&|call| {
            call.trigger_id
                .is_some_and(|t| message_ids.iter().any(|m| m == t))
        });
        self.cancel_approvals(&|a| message_ids.contains(&a.trigger.message_id));
    }

    /// Whether [`World::run_until_idle`] runs now (a second call would return at once).
    pub fn is_running(&self) -> bool {
        self.inner.running.get()
    }

    /// Whether calls are queued or running.
    pub fn is_busy(&self) -> bool {
        let st = self.st();
        !st.queue.is_empty() || !st.in_flight.is_empty()
    }

    /// When the world is idle after a human message with an LLM title pending, queue the title
    /// call. Returns whether one was queued.
    fn schedule_title(&self) -> bool {
        let mut st = self.st_mut();
        let Some(cand) = st.title.take() else {
            return false;
        };
        let (Some(provider), Some(model)) = (
            st.world.chat_llm_provider.clone(),
            st.world.chat_llm_model.clone(),
        ) else {
            return false;
        };
        let still_default = st
            .chats
            .iter()
            .any(|c| c.id == cand.chat_id && c.title_source == TitleSource::Default);
        if !still_default || st.world.current_chat_id.as_deref() != Some(cand.chat_id.as_str()) {
            return false;
        }
        let prompt = match &cand.reply {
            Some((agent, reply)) => llm_title_prompt(&cand.human, agent, reply),
            // No agent answered: the prompt holds the human message alone.
            None => {
                let mut p = format!(
                    "Write a short title (at most 6 words) for a chat that starts with:\nUser: {}",
                    cand.human
                );
                truncate_chars(&mut p, TITLE_PROMPT_CHARS);
                p
            }
        };
        let id = st.next_job;
        st.next_job += 1;
        st.queue.push(Job {
            id,
            chat_id: Some(cand.chat_id.clone()),
            cancel: Default::default(),
            kind: JobKind::Title {
                chat_id: cand.chat_id,
                prompt,
                fallback: heuristic_title(&cand.human),
                provider,
                model,
            },
        });
        true
    }

    async fn run_job(&self, job: Job) {
        let id = job.id;
        match &job.kind {
            JobKind::Reply { .. } => self.run_reply(&job).await,
            JobKind::Resume { .. } => cold(self.run_resume(&job)).await,
            JobKind::CancelApproval { approval, stored } => {
                cold(self.finish_cancel(approval, *stored)).await
            }
            JobKind::Title { .. } => cold(self.run_title(&job)).await,
        }
        self.st_mut().in_flight.retain(|f| f.id != id);
        self.flush();
    }

    /// SSE `error` + system `error` for a failed reply call.
    pub(crate) fn emit_llm_failure(
        &self,
        agent_id: &str,
        reply_id: &str,
        trigger_id: &str,
        err: &LlmError,
        partial: &str,
    ) {
        let message = err.to_string();
        self.emit(Event::Sse(SseEvent {
            error: Some(message.clone()),
            partial_content: (!partial.is_empty()).then(|| partial.to_string()),
            ..sse_payload(SseType::Error, agent_id, reply_id)
        }));
        self.emit(Event::reply_error(
            message,
            err.code(),
            agent_id,
            reply_id,
            trigger_id,
        ));
    }

    async fn run_reply(&self, job: &Job) {
        let JobKind::Reply {
            agent_id,
            trigger,
            reply_id,
            regenerate,
        } = &job.kind
        else {
            return;
        };
        let Some(agent) = self.agent(agent_id) else {
            return;
        };
        self.emit_all(vec![sse(SseType::Start, agent_id, reply_id)]);
        let aborted = || LlmError::Aborted {
            provider: agent.provider.clone(),
        };
        if job.cancel.is_cancelled() {
            self.emit_llm_failure(agent_id, reply_id, &trigger.message_id, &aborted(), "");
            self.flush();
            return;
        }
        // A regeneration (§10) answers from the memory as it was before the old reply, where
        // M already is (it stays in memory whatever happens to the reply).
        let messages = if let Some(old) = regenerate {
            match cold(self.regeneration_input(
                job.chat_id.as_deref(),
                &agent,
                trigger,
                old.as_deref(),
            ))
            .await
            {
                Ok(m) => m,
                Err(e) => return self.input_failed(agent_id, reply_id, &e, true),
            }
        } else {
            // Step 1: M joins the responding agent's memory when the call leaves the queue.
            let entry = self.trigger_entry(job, trigger);
            if let Err(e) = self
                .hold_memory(job.chat_id.as_deref(), agent_id, entry)
                .await
            {
                // Without an up-to-date view the input would be wrong: the call is not made (its
                // turn is spent, like any failed call) and the storage failure is reported on
                // both topics.
                return self.input_failed(agent_id, reply_id, &e, false);
            }
            // Step 2: the input window.
            self.llm_input(&agent)
        };
        // Step 4: call; chunks stream out as they come. With tools (§9) one reply may take
        // several steps, all streaming into `reply_id` (steps.rs).
        let (result, steps) = self
            .run_steps(job, &agent, trigger, reply_id, messages, None)
            .await;
        self.finish_reply(job, &agent, trigger, reply_id, result, steps)
            .await;
        // M, when nothing carried it (no reply, no tool step published or saved).
        self.save_unsaved(job.chat_id.as_deref(), agent_id).await;
    }

    /// The trigger M as the responding agent's memory entry (§5 step 1).
    // Out of `run_job`'s poll (see `shared::cold`): plain code, so a plain call.
    #[inline(never)]
    fn trigger_entry(&self, job: &Job, trigger: &Message) -> MemoryEntry {
        MemoryEntry {
            role: MemoryRole::User,
            content: trigger.content.clone(),
            sender: Some(trigger.sender.clone()),
            message_id: trigger.message_id.clone(),
            chat_id: job.chat_id.clone(),
            created_at: self.now(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        }
    }

    /// The input of a reply could not be built (`regenerating`: the memory before the old
    /// reply could not be read; else M could not join the memory): SSE `error`, and the
    /// `system` `error` (a storage failure's was already emitted by the write lock).
    #[inline(never)]
    fn input_failed(
        &self,
        agent_id: &str,
        reply_id: &str,
        e: &crate::core::error::WorldError,
        regenerating: bool,
    ) {
        let sse = Event::Sse(SseEvent {
            error: Some(e.to_string()),
            ..sse_payload(SseType::Error, agent_id, reply_id)
        });
        if regenerating {
            self.emit_all(vec![sse, Event::world_error(e, Some(agent_id))]);
            return;
        }
        self.emit_all(vec![sse]);
        if e.reason().is_none() {
            self.emit_all(vec![Event::error(e.to_string(), e.code(), Some(agent_id))]);
        }
    }

    /// What follows the steps of a reply (new or resumed): a pending approval (the reply waits,
    /// `approvals.rs`), §5 step 5 on a failure, or steps 6–10 on the joined text.
    pub(crate) async fn finish_reply(
        &self,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        result: Result<(), LlmError>,
        steps: StepsOutcome,
    ) {
        let agent_id = &agent.id;
        let StepsOutcome {
            text,
            usage,
            tool_calls,
            suspended,
        } = steps;
        if let (Ok(()), Some(state)) = (&result, suspended) {
            cold(self.suspend_reply(job, agent, trigger, reply_id, state)).await;
            return;
        }
        if let Err(e) = result {
            self.emit_llm_failure(agent_id, reply_id, &trigger.message_id, &e, &text);
            self.flush();
            // Kept in the chat the call belongs to, even when that chat was left meanwhile
            // (spec §4): not when it was deleted, and not with session mode off.
            if !text.trim().is_empty() && job.chat_id.is_some() {
                let out = self.interrupted(job, agent, trigger, reply_id, text, tool_calls);
                cold(self.publish_or_report(out)).await;
            }
            return;
        }
        if !self.end_reply(agent, trigger, reply_id, &text, usage) {
            return;
        }
        let Some(out) = self.reply_outgoing(job, agent, trigger, reply_id, &text, tool_calls)
        else {
            return;
        };
        let published = match out.msg {
            Some(msg) => self.publish_or_report(msg).await,
            None => false,
        };
        if out.pass {
            let reply_to = match published {
                true => reply_id.to_string(),
                false => trigger.message_id.clone(),
            };
            cold(self.publish_or_report(self.pass_notice(job, agent, reply_to))).await;
        }
    }

    /// The `interrupted` message that keeps the partial text of a failed reply.
    #[inline(never)]
    fn interrupted(
        &self,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        text: String,
        tool_calls: Vec<ToolCallRecord>,
    ) -> Outgoing {
        Outgoing {
            msg: Message {
                message_id: reply_id.to_string(),
                chat_id: None,
                sender: agent.id.clone(),
                content: text,
                created_at: self.now(),
                reply_to_message_id: Some(trigger.message_id.clone()),
                kind: MessageKind::Interrupted,
                tool_calls,
            },
            memory: Vec::new(),
            only_in: Some(job.chat_id.clone()),
            keep_if_left: true,
            edit: job_edit(job),
        }
    }

    /// The SSE `end` of a reply that did not fail (its one `chunk` first when it did not
    /// stream), and the `llm_empty_response` error when its text is blank. Returns whether
    /// there is text to publish.
    // Out of `finish_reply`'s poll (see `shared::cold`): plain code, so a plain call.
    #[inline(never)]
    fn end_reply(
        &self,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        text: &str,
        usage: Option<Usage>,
    ) -> bool {
        let agent_id = &agent.id;
        if !agent.stream {
            self.emit(Event::Sse(SseEvent {
                content: Some(text.to_string()),
                ..sse_payload(SseType::Chunk, agent_id, reply_id)
            }));
        }
        self.emit_all(vec![Event::Sse(SseEvent {
            usage,
            ..sse_payload(SseType::End, agent_id, reply_id)
        })]);
        if text.trim().is_empty() {
            self.emit_all(vec![Event::reply_error(
                "LLM response is empty".to_string(),
                "llm_empty_response",
                agent_id,
                reply_id,
                &trigger.message_id,
            )]);
            return false;
        }
        true
    }

    /// Steps 6–9 on the text of a reply: clean, world tag, self-mentions, auto-mention; the
    /// message to save and publish (step 10), if any, and whether a `pass` notice follows it.
    /// `None`: nothing to publish (a tag left no text and passes nothing, or the chat is no
    /// longer current).
    // Out of `finish_reply`'s poll (see `shared::cold`): plain code, so a plain call.
    #[inline(never)]
    fn reply_outgoing(
        &self,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        raw: &str,
        tool_calls: Vec<ToolCallRecord>,
    ) -> Option<ReplyOut> {
        let cleaned = clean_reply(raw);
        // A tag opens with `<`: a reply without one (most) skips the scan for it (its code
        // spans, then a copy of the whole reply as the text without a tag).
        let (tag, rest) = if cleaned.as_bytes().contains(&b'<') {
            extract_world_tag(&cleaned)
        } else {
            (None, String::new())
        };
        let nonempty = |s: String| (!s.trim().is_empty()).then_some(s);
        let (body, tag_applied, pass) = match tag {
            None => (Some(cleaned), false, false),
            Some(WorldTag::Pass) => (nonempty(rest), true, true),
            Some(WorldTag::Stop | WorldTag::Done) => (nonempty(rest), true, false),
            Some(WorldTag::To(names)) if names.is_empty() => (nonempty(rest), true, false),
            Some(WorldTag::To(names)) => (Some(apply_to_tag(&names, &rest)), true, false),
        };
        let Some(body) = body else {
            return pass.then_some(ReplyOut { msg: None, pass });
        };
        let mut reply = remove_self_mentions(&body, &agent.id);
        let stype = sender_type(Some(&trigger.sender));
        if !tag_applied && stype != SenderType::Human && normalize_id(&trigger.sender) != agent.id {
            reply = auto_mention(&reply, &trigger.sender);
        }
        let now = self.now();
        let entry = MemoryEntry {
            role: MemoryRole::Assistant,
            content: reply.clone(),
            sender: None,
            message_id: reply_id.to_string(),
            chat_id: job.chat_id.clone(),
            created_at: now,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        };
        let same_chat = self.st().world.current_chat_id == job.chat_id;
        if !same_chat {
            return None;
        }
        let msg = Outgoing {
            msg: Message {
                message_id: reply_id.to_string(),
                chat_id: None,
                sender: agent.id.clone(),
                content: reply,
                created_at: now,
                reply_to_message_id: Some(trigger.message_id.clone()),
                kind: MessageKind::Message,
                tool_calls,
            },
            memory: vec![(agent.id.clone(), entry)],
            only_in: Some(job.chat_id.clone()),
            keep_if_left: false,
            edit: job_edit(job),
        };
        Some(ReplyOut {
            msg: Some(msg),
            pass,
        })
    }

    /// The `pass` notice of a reply tagged `<world>pass</world>`, answering `reply_to` (the
    /// reply, or its trigger when the reply was not published). A plain function: published
    /// through the same boxed future as an `interrupted` message, not an async layer of its own.
    fn pass_notice(&self, job: &Job, agent: &Agent, reply_to: String) -> Outgoing {
        Outgoing {
            msg: Message {
                message_id: self.inner.ids.new_id(),
                chat_id: None,
                sender: "system".to_string(),
                content: format!("@human {} is passing control to you", agent.id),
                created_at: self.now(),
                reply_to_message_id: Some(reply_to),
                kind: MessageKind::Pass,
                tool_calls: Vec::new(),
            },
            memory: Vec::new(),
            only_in: Some(job.chat_id.clone()),
            keep_if_left: false,
            edit: Edit::None,
        }
    }

    /// Publishes; a failure becomes a `system` `error` event. Returns whether it was published.
    async fn publish_or_report(&self, out: Outgoing) -> bool {
        match self.publish(out).await {
            Ok(published) => published.is_some(),
            Err(e) => {
                self.report(&e);
                false
            }
        }
    }

    /// Step 1: M joins the agent's memory, under the write lock (so the view is up to date
    /// with other writers before the input is built). With session mode on it is not written
    /// now but held in `State::unsaved` (it is in the input all the same) and written with the
    /// agent's next write of the chat's memory: the reply, a tool step, or, if the call
    /// publishes nothing, [`World::save_unsaved`] when the call ends. Entries for a chat that
    /// is no longer current are dropped.
    async fn hold_memory(
        &self,
        chat_id: Option<&str>,
        agent_id: &str,
        entry: MemoryEntry,
    ) -> Result<(), crate::core::error::WorldError> {
        // RAM only: nothing is written here, so there is nothing to plan again.
        let _g = self.write_lock_for(Some(agent_id)).await?;
        let mut st = self.st_mut();
        if st.world.current_chat_id.as_deref() != chat_id {
            return Ok(());
        }
        match chat_id {
            Some(cid) => {
                let id = st.next_unsaved;
                st.next_unsaved += 1;
                st.unsaved.push(Unsaved {
                    id,
                    agent_id: agent_id.to_string(),
                    chat_id: cid.to_string(),
                    entry,
                });
            }
            None => st.remember(agent_id, entry),
        }
        Ok(())
    }

    /// Writes the entries of `agent_id` in chat `chat_id` still unsaved when its call ends
    /// (one batch; nothing when its reply or a tool step carried them): to the chat's memory
    /// in the store, and to the RAM window when the chat is still current. A chat left
    /// meanwhile gets them in the store only (spec §5 step 5: M stays in memory however the
    /// call ends); a deleted chat drops them. A storage failure is reported (as a `system`
    /// `error`) and drops them.
    pub(crate) async fn save_unsaved(&self, chat_id: Option<&str>, agent_id: &str) {
        let Some(cid) = chat_id else { return };
        if self.st().unsaved_of(agent_id, cid).next().is_none() {
            return;
        }
        // Most calls publish a reply that carried M: the write is off the common path.
        cold(self.write_unsaved(cid, agent_id)).await;
    }

    /// [`World::save_unsaved`] when entries are left to write.
    async fn write_unsaved(&self, cid: &str, agent_id: &str) {
        let mut attempts = 0;
        loop {
            let Ok(_g) = self.write_lock_for(Some(agent_id)).await else {
                return;
            };
            let (world_id, current, exists, held) = {
                let st = self.st();
                let held = st.unsaved_cloned(agent_id, cid);
                (
                    st.world.id.clone(),
                    st.world.current_chat_id.as_deref() == Some(cid),
                    // A deleted chat, or a removed agent: nothing of it is kept.
                    st.chats.iter().any(|c| c.id == cid) && st.agent_index(agent_id).is_some(),
                    held,
                )
            };
            // Plain loops: an iterator chain instantiates its own adapters.
            let mut ids = Vec::with_capacity(held.len());
            for u in &held {
                ids.push(u.id);
            }
            let written = if exists && !held.is_empty() {
                let mut ops = Vec::with_capacity(held.len());
                for u in &held {
                    ops.push(u.op(&world_id));
                }
                match self.persist_for(ops, Some(agent_id)).await {
                    Ok(()) => true,
                    // Another writer moved the world: the view was reloaded, plan again.
                    Err(e) if self.replan_after(&e, &mut attempts) => continue,
                    Err(_) => false,
                }
            } else {
                false
            };
            let mut st = self.st_mut();
            st.saved(&ids);
            if written && current {
                for u in held {
                    st.remember(agent_id, u.entry);
                }
            }
            return;
        }
    }

    /// Step 2: system prompt + the last `historyLimit` memory entries (M last). The window then
    /// starts at its first `user` entry: a leading `assistant` reply is dropped (§5 step 2), and
    /// so is a tool group the window cut (its `tool` results without the `assistant` entry that
    /// made the calls, or calls whose results follow), left out whole (§9 "Memory").
    pub(crate) fn llm_input(&self, agent: &Agent) -> Vec<ChatMessage> {
        let st = self.st();
        let n = st.history_limit(agent);
        // Plain loops: an iterator chain instantiates its own adapters.
        let mut all: Vec<&MemoryEntry> = Vec::new();
        if let Some(a) = st.agent_index(&agent.id).and_then(|i| st.agents.get(i)) {
            all.reserve(a.memory.len());
            for e in &a.memory {
                all.push(e);
            }
        }
        // Entries not written yet (`State::unsaved`) are the newest of the agent's memory.
        if let Some(cid) = st.world.current_chat_id.as_deref() {
            for u in st.unsaved_of(&agent.id, cid) {
                all.push(&u.entry);
            }
        }
        let skip = all.len().saturating_sub(n);
        input_from(agent, all.get(skip..).unwrap_or(&[]))
    }

    async fn run_title(&self, job: &Job) {
        let JobKind::Title {
            chat_id,
            prompt,
            fallback,
            provider,
            model,
        } = &job.kind
        else {
            return;
        };
        let settings = CallSettings {
            provider: provider.clone(),
            model: model.clone(),
            temperature: Some(TITLE_TEMPERATURE),
            max_tokens: Some(TITLE_MAX_TOKENS),
            stream: false,
            purpose: CallPurpose::Title,
            ..Default::default()
        };
        let mut text = String::new();
        let result = {
            let mut on_event = |ev: LlmEvent| {
                if let LlmEvent::Text(t) = ev {
                    text.push_str(&t);
                }
            };
            self.inner
                .llm
                .call(
                    &settings,
                    vec![ChatMessage::new(Role::User, prompt.clone())],
                    &mut on_event,
                    job.cancel.clone(),
                )
                .await
        };
        if job.cancel.is_cancelled() {
            return;
        }
        let title = match result {
            Ok(()) => clean_llm_title(&text).or_else(|| fallback.clone()),
            Err(_) => fallback.clone(),
        };
        let Some(title) = title else {
            return;
        };
        // A storage failure was reported as a `system` `error` event; the title is dropped, as
        // when the chat was renamed, titled or deleted meanwhile.
        let _ = self
            .change(&mut |w| {
                let chat = w.st().chats.iter().find(|c| c.id == *chat_id).cloned();
                let Some(mut chat) = chat.filter(|c| c.title_source == TitleSource::Default) else {
                    return Ok(None);
                };
                chat.name = title.clone();
                chat.title_source = TitleSource::Auto;
                chat.updated_at = w.st().chat_update_time(w.now());
                Ok(Some(Planned::new(
                    vec![StoreOp::PutChat(chat.clone())],
                    move |w| {
                        if let Some(c) = w.st_mut().chats.iter_mut().find(|c| c.id == chat.id) {
                            *c = chat.clone();
                        }
                        vec![Event::System(SystemEvent::ChatTitleUpdated {
                            chat_id: chat.id,
                            name: chat.name,
                            title_source: chat.title_source,
                        })]
                    },
                )))
            })
            .await;
    }
}

/// One memory entry as an LLM input entry (tool calls and results in the seam's shapes).
/// The input of one reply from its memory window (see [`World::llm_input`]).
pub(crate) fn input_from(agent: &Agent, mem: &[&MemoryEntry]) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(mem.len() + 1);
    if let Some(p) = agent
        .system_prompt
        .as_deref()
        .filter(|p| !p.trim().is_empty())
    {
        out.push(ChatMessage::new(Role::System, p));
    }
    let mut started = false;
    for e in mem {
        started = started || e.role == MemoryRole::User;
        if started {
            out.push(memory_to_input(e));
        }
    }
    out
}

/// How the reply of a job is placed: a regeneration (§10) takes the old reply's place. A reply
/// resumed after an approval (§9) is published at the end: its approval record does not carry a
/// regeneration target (a regeneration that waited for an approval is appended, not replaced).
fn job_edit(job: &Job) -> Edit {
    match &job.kind {
        JobKind::Reply { regenerate, .. } => replacing(regenerate),
        _ => Edit::None,
    }
}

/// How the reply of a call is placed: in the old reply's place for a regeneration (§10).
fn replacing(regenerate: &Option<Option<String>>) -> Edit {
    match regenerate {
        Some(Some(old)) => Edit::Replaces { old: old.clone() },
        _ => Edit::None,
    }
}

pub(crate) fn memory_to_input(e: &MemoryEntry) -> ChatMessage {
    match e.role {
        MemoryRole::User => ChatMessage::new(Role::User, e.content.clone()),
        MemoryRole::Assistant => {
            let mut calls = Vec::with_capacity(e.tool_calls.len());
            for c in &e.tool_calls {
                calls.push(ToolCallPart {
                    id: c.tool_call_id.clone(),
                    name: c.tool_name.clone(),
                    arguments: args_text(&c.args),
                    signature: None,
                });
            }
            ChatMessage::tool_calls(e.content.clone(), calls)
        }
        MemoryRole::Tool => ChatMessage::tool_result(
            e.tool_call_id.clone().unwrap_or_default(),
            e.tool_name.clone().unwrap_or_default(),
            e.content.clone(),
        ),
    }
}

/// The JSON text of stored arguments. Arguments that were not valid JSON are stored as their
/// raw text (a JSON string), and are given back as that text, as the model sent them.
pub(crate) fn args_text(args: &crate::core::json::Value) -> String {
    match args {
        crate::core::json::Value::String(raw) => raw.clone(),
        v => crate::core::json_write::ToJson::to_json(v),
    }
}

pub(crate) fn sse_payload(kind: SseType, agent: &str, message_id: &str) -> SseEvent {
    SseEvent {
        kind,
        agent_name: agent.to_string(),
        message_id: message_id.to_string(),
        content: None,
        error: None,
        partial_content: None,
        usage: None,
        tool_call_id: None,
        tool_name: None,
        args: None,
        result: None,
    }
}

/// What a reply publishes (see [`World::reply_outgoing`]): its message, if any text is left,
/// and whether a `pass` notice follows it.
struct ReplyOut {
    msg: Option<Outgoing>,
    pass: bool,
}
