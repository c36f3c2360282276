//! Tool approvals (spec §9 "Approval"): a reply stops at a call whose tool needs approval, and
//! waits, persisted, for the application's answer.
//!
//! - **Asking.** The step loop (`steps.rs`) stops before running the call and hands back the
//!   state of the reply; [`World::suspend_reply`] writes it as one [`ApprovalRecord`] (one store
//!   batch: the pending approval and the state it resumes from never disagree), keeps it in
//!   RAM (`State::approvals`) and emits `system` `approval-request`. The reply's job then ends:
//!   a reply waiting for approval is not work in progress (`idle` follows), and its SSE stream
//!   stays open (no `end` or `error` yet).
//! - **Answering.** `approve` / `deny` settle the approval under the world's write lock and
//!   read the store's record again; the delete carries the view's revision, so when another
//!   writer (a second tab) moved the world in between, the view is reloaded and the answer
//!   planned again: an approval settled elsewhere is `approval_not_found`
//!   here, never answered twice. The record is deleted in that same change, `approval-resolved`
//!   is emitted, and a `Resume` job is queued (the caller drives `run_until_idle`, as after a
//!   send): it emits SSE `start` again with the reply's `messageId` (a page reloaded since the
//!   request needs it to show the reply), runs the approved tool (or gives the model
//!   `{"error": "denied by the user[: reason]"}`), then the step's remaining calls and the
//!   next steps, and ends the reply as usual. The turn was counted when the reply started.
//! - **Cancelling.** `stop()`, a chat switch, deleting the chat, turning session mode off,
//!   removing the agent, or the send's `AbortSignal` cancel the approvals concerned at once (in
//!   RAM, with `approval-resolved {outcome: "cancelled"}`, `tool-result` `cancelled` for the
//!   waiting call and the step's calls after it, SSE `error` with `partialContent` and `system`
//!   `error` `llm_aborted`, as for a reply cancelled while running), and queue a
//!   `CancelApproval` job that deletes the record and keeps the partial text as an
//!   `interrupted` message in its chat (nothing is kept when the chat was deleted). `stop()` is
//!   synchronous and the store is not, hence the job; the binding drives `run_until_idle`
//!   after `stop()`.
//!
//! Choices where the spec is silent:
//! - If the store refuses the record (reported as a `system` `error` `storage_error`), the
//!   approval is pending in RAM only: it can be answered in this session but not after a reload.
//! - A reply whose chat was left between its last step and the request is not suspended: it
//!   ends as cancelled (the switch already cancelled its calls).
//! - Approving a tool that was unregistered meanwhile gives the model `tool … is not
//!   registered`, like any call of an unregistered tool; resuming a reply whose agent lists a
//!   tool that is not registered fails it with `tool_not_registered`, before any request.
//! - Another writer's answer is seen here at the next refresh (the view is reloaded with the
//!   chat's pending approvals); no `approval-resolved` is emitted for it in this world.

use crate::core::approval::{ApprovalRecord, PendingApproval, ReplyState};
use crate::core::engine::routing::{Edit, Outgoing};
use crate::core::engine::shared::{unasked, Got, Planned, Read, Step};
use crate::core::engine::steps::{stored_args, StepsOutcome};
use crate::core::engine::{Job, JobKind, World};
use crate::core::events::{ApprovalOutcome, Event, SseEvent, SseType, SystemEvent};
use crate::core::llm::types::LlmError;
use crate::core::model::{Agent, Message, MessageKind, ToolCallRecord};
use crate::core::store::StoreOp;
use std::cell::Cell;

use super::responder::{sse, sse_payload};

/// The application's answer to a pending approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    Approve,
    /// With the optional reason given to the model.
    Deny(Option<String>),
}

impl World {
    /// The pending approvals of the current chat (or of RAM with session mode off), oldest
    /// first.
    pub fn pending_approvals(&self) -> Vec<PendingApproval> {
        let mut out = Vec::new();
        for a in &self.st().approvals {
            out.push(a.view());
        }
        out
    }

    /// Approves a pending call: the tool runs and the reply resumes once the queue runs
    /// (`run_until_idle`). `approval_not_found` for an unknown or settled id.
    pub fn approve<'s, 'a: 's>(
        &'s self,
        approval_id: &'a str,
    ) -> impl std::future::Future<Output = Result<(), crate::core::error::WorldError>> + use<'s, 'a>
    {
        self.settle(approval_id, Decision::Approve)
    }

    /// Denies a pending call: the model gets `{"error": "denied by the user[: reason]"}` as its
    /// result and the reply resumes once the queue runs. `approval_not_found` for an unknown or
    /// settled id.
    pub fn deny<'s, 'a: 's>(
        &'s self,
        approval_id: &'a str,
        reason: Option<String>,
    ) -> impl std::future::Future<Output = Result<(), crate::core::error::WorldError>> + use<'s, 'a>
    {
        self.settle(approval_id, Decision::Deny(reason))
    }

    async fn settle(
        &self,
        approval_id: &str,
        decision: Decision,
    ) -> Result<(), crate::core::error::WorldError> {
        let not_found = || crate::core::error::WorldError::ApprovalNotFound(approval_id.into());
        self.change_reading(&mut |got| {
            let Some(rec) = self
                .st()
                .approvals
                .iter()
                .find(|a| a.approval_id == approval_id)
                .cloned()
            else {
                return Err(not_found());
            };
            let unstored = self.st().unstored.contains(&rec.approval_id);
            let mut ops = Vec::new();
            if let (Some(cid), false) = (&rec.chat_id, unstored) {
                // Still pending in the store? The delete below carries the revision check,
                // so no other writer can settle it between this read and the delete
                // unnoticed.
                let stored = match got.pop() {
                    None => {
                        return Ok(Step::Read(Read::Approvals {
                            world_id: rec.world_id.clone(),
                            chat_id: cid.clone(),
                            lenient: false,
                        }))
                    }
                    Some(Got::Approvals(Some(stored))) => stored,
                    Some(_) => return Err(unasked()),
                };
                if !stored.iter().any(|a| a.approval_id == approval_id) {
                    remove_approval(&mut self.st_mut().approvals, approval_id);
                    return Err(not_found());
                }
                ops.push(StoreOp::DeleteApproval {
                    world_id: rec.world_id.clone(),
                    chat_id: cid.clone(),
                    approval_id: approval_id.to_string(),
                });
            }
            let decision = decision.clone();
            Ok(Step::Plan(Some(Planned::new(ops, move |w| {
                resolve(w, rec, decision, approval_id)
            }))))
        })
        .await?;
        self.wake_runner();
        Ok(())
    }

    /// A reply stopped at a call that needs approval: record it (see the module docs).
    pub(crate) async fn suspend_reply(
        &self,
        job: &Job,
        agent: &Agent,
        trigger: &Message,
        reply_id: &str,
        state: ReplyState,
    ) {
        let rec = ApprovalRecord {
            approval_id: self.inner.ids.new_id(),
            world_id: self.id(),
            chat_id: job.chat_id.clone(),
            agent_id: agent.id.clone(),
            reply_id: reply_id.to_string(),
            trigger: trigger.clone(),
            created_at: self.now(),
            state,
        };
        let mut attempts = 0;
        let (guard, stored) = loop {
            let guard = self.write_lock_for(Some(&agent.id)).await;
            let left = self.st().world.current_chat_id != job.chat_id || job.cancel.is_cancelled();
            if left {
                drop(guard);
                // Never stored: nothing to delete, only the partial text to keep.
                self.cancel_records(vec![(rec, false)]);
                return;
            }
            // The agent's unsaved entries of the chat (its M, `State::unsaved`) go with the record.
            let mut held = Vec::new();
            if let Some(cid) = &rec.chat_id {
                for u in self.st().unsaved_of(&agent.id, cid) {
                    held.push(u.clone());
                }
            }
            let stored = match (&guard, &rec.chat_id) {
                (Ok(_), Some(_)) => {
                    let mut ops = Vec::new();
                    let mut ids = Vec::new();
                    for u in &held {
                        ops.push(u.op(&rec.world_id));
                        ids.push(u.id);
                    }
                    ops.push(StoreOp::PutApproval(Box::new(rec.clone())));
                    match self.persist_for(ops, Some(&agent.id)).await {
                        Ok(()) => {
                            let mut st = self.st_mut();
                            st.saved(&ids);
                            for u in held {
                                st.remember(&u.agent_id, u.entry);
                            }
                            true
                        }
                        // Another writer moved the world: the view was reloaded, check again.
                        Err(e) if self.replan_after(&e, &mut attempts) => continue,
                        Err(_) => false,
                    }
                }
                // Session mode off: RAM is where it belongs.
                (_, None) => true,
                (Err(_), Some(_)) => false,
            };
            break (guard, stored);
        };
        let view = rec.view();
        {
            // A refusal was reported by `persist`; the approval then lives in RAM only.
            let mut st = self.st_mut();
            if !stored {
                st.unstored.push(rec.approval_id.clone());
            }
            st.approvals.push(rec);
        }
        drop(guard);
        self.emit_all(vec![Event::System(SystemEvent::ApprovalRequest {
            approval_id: view.approval_id,
            agent_name: view.agent_name,
            message_id: view.message_id,
            tool_call_id: view.tool_call_id,
            tool_name: view.tool_name,
            args: view.args,
        })]);
    }

    /// Cancels the pending approvals `pred` selects (see the module docs). Synchronous: the
    /// store work is queued.
    pub(crate) fn cancel_approvals(&self, pred: &dyn Fn(&ApprovalRecord) -> bool) {
        let mut taken = Vec::new();
        {
            let mut st = self.st_mut();
            let mut kept = Vec::new();
            for a in std::mem::take(&mut st.approvals) {
                if pred(&a) {
                    // Stored unless `unstored` names it (and it leaves that list with it).
                    let stored = !remove_id(&mut st.unstored, &a.approval_id);
                    taken.push((a, stored));
                } else {
                    kept.push(a);
                }
            }
            st.approvals = kept;
        }
        self.cancel_records(taken);
    }

    /// Emits the end of cancelled approvals and queues their store work (`bool`: whether the
    /// record was stored).
    fn cancel_records(&self, records: Vec<(ApprovalRecord, bool)>) {
        if records.is_empty() {
            return;
        }
        for (rec, _) in &records {
            self.emit(Event::System(SystemEvent::ApprovalResolved {
                approval_id: rec.approval_id.clone(),
                outcome: ApprovalOutcome::Cancelled,
            }));
            for r in cancelled_calls(&rec.state) {
                self.emit(Event::Sse(SseEvent {
                    tool_call_id: Some(r.tool_call_id.clone()),
                    tool_name: Some(r.tool_name.clone()),
                    error: r.error.clone(),
                    ..sse_payload(SseType::ToolResult, &rec.agent_id, &rec.reply_id)
                }));
            }
            let provider = self
                .agent(&rec.agent_id)
                .map(|a| a.provider)
                .unwrap_or_else(|| "llm".to_string());
            self.emit_llm_failure(
                &rec.agent_id,
                &rec.reply_id,
                &rec.trigger.message_id,
                &LlmError::Aborted { provider },
                &rec.state.text,
            );
        }
        {
            let mut st = self.st_mut();
            for (approval, stored) in records {
                let id = st.next_job;
                st.next_job += 1;
                st.queue.push(Job {
                    id,
                    chat_id: approval.chat_id.clone(),
                    cancel: Default::default(),
                    kind: JobKind::CancelApproval { approval, stored },
                });
            }
        }
        self.flush();
        self.wake_runner();
    }

    /// The store half of a cancellation: deletes the record (unless its chat is gone, which
    /// took it along) and keeps the partial text as `interrupted`.
    pub(crate) async fn finish_cancel(&self, rec: &ApprovalRecord, stored: bool) {
        if let Some(cid) = &rec.chat_id {
            // Deletes the stored record; keeps nothing when another tab answered it first (it
            // resumed the reply, which publishes under the same id). A failed delete was
            // reported; the record then reappears after a reload.
            let answered = &Cell::new(false);
            let _ = self
                .change_reading(&mut |got| {
                    let chat_exists = self.st().chats.iter().any(|c| c.id == *cid);
                    if !(chat_exists && stored) {
                        return Ok(Step::Plan(None));
                    }
                    let still_pending = match got.pop() {
                        None => {
                            return Ok(Step::Read(Read::Approvals {
                                world_id: rec.world_id.clone(),
                                chat_id: cid.clone(),
                                lenient: true,
                            }))
                        }
                        // Unread (the failure was reported): deleted anyway.
                        Some(Got::Approvals(v)) => {
                            v.is_none_or(|v| v.iter().any(|a| a.approval_id == rec.approval_id))
                        }
                        Some(_) => return Err(unasked()),
                    };
                    if !still_pending {
                        answered.set(true);
                        return Ok(Step::Plan(None));
                    }
                    let op = StoreOp::DeleteApproval {
                        world_id: rec.world_id.clone(),
                        chat_id: cid.clone(),
                        approval_id: rec.approval_id.clone(),
                    };
                    Ok(Step::Plan(Some(Planned::new(vec![op], |_| Vec::new()))))
                })
                .await;
            if answered.get() {
                return;
            }
        }
        let text = &rec.state.text;
        if text.trim().is_empty() || rec.chat_id.is_none() {
            return;
        }
        let mut tool_calls = rec.state.tool_calls.clone();
        tool_calls.extend(rec.state.step_records.iter().cloned());
        tool_calls.extend(cancelled_calls(&rec.state));
        let out = Outgoing {
            msg: Message {
                message_id: rec.reply_id.clone(),
                chat_id: None,
                sender: rec.agent_id.clone(),
                content: text.clone(),
                created_at: self.now(),
                reply_to_message_id: Some(rec.trigger.message_id.clone()),
                kind: MessageKind::Interrupted,
                tool_calls,
            },
            memory: Vec::new(),
            only_in: Some(rec.chat_id.clone()),
            keep_if_left: true,
            edit: Edit::None,
        };
        if let Err(e) = self.publish(out).await {
            self.report(&e);
        }
    }

    /// Runs a `Resume` job: the answered call, the rest of its step, the next steps.
    pub(crate) async fn run_resume(&self, job: &Job) {
        let JobKind::Resume { approval, decision } = &job.kind else {
            return;
        };
        // The agent was removed meanwhile: its replies end with it.
        let Some(agent) = self.agent(&approval.agent_id) else {
            return;
        };
        self.emit_all(vec![sse(SseType::Start, &agent.id, &approval.reply_id)]);
        let (result, steps): (Result<(), LlmError>, StepsOutcome) = self
            .run_steps(
                job,
                &agent,
                &approval.trigger,
                &approval.reply_id,
                Vec::new(),
                Some((approval.state.clone(), decision.clone())),
            )
            .await;
        self.finish_reply(
            job,
            &agent,
            &approval.trigger,
            &approval.reply_id,
            result,
            steps,
        )
        .await;
    }
}

/// The waiting call and the step's calls after it, recorded as `cancelled`.
fn cancelled_calls(state: &ReplyState) -> Vec<ToolCallRecord> {
    let mut out = Vec::new();
    for c in state.step_calls.iter().skip(state.step_records.len()) {
        out.push(ToolCallRecord {
            tool_call_id: c.id.clone(),
            tool_name: c.name.clone(),
            args: stored_args(&c.arguments),
            result: None,
            error: Some("cancelled".to_string()),
        });
    }
    out
}

/// Drops the pending approval `approval_id` (ids are unique: at most one).
fn remove_approval(list: &mut Vec<ApprovalRecord>, approval_id: &str) {
    if let Some(i) = list.iter().position(|a| a.approval_id == approval_id) {
        list.remove(i);
    }
}

/// Drops `id` from `list` (at most once: the ids are unique); whether it was there.
fn remove_id(list: &mut Vec<String>, id: &str) -> bool {
    match list.iter().position(|x| x == id) {
        Some(i) => {
            list.remove(i);
            true
        }
        None => false,
    }
}

/// The commit of settling approval `approval_id` (see `World::settle`): it leaves the pending
/// list and its reply is queued to resume with `decision`.
fn resolve(w: &World, rec: ApprovalRecord, decision: Decision, approval_id: &str) -> Vec<Event> {
    let outcome = match decision {
        Decision::Approve => ApprovalOutcome::Approved,
        Decision::Deny(_) => ApprovalOutcome::Denied,
    };
    let mut st = w.st_mut();
    remove_approval(&mut st.approvals, approval_id);
    remove_id(&mut st.unstored, approval_id);
    let id = st.next_job;
    st.next_job += 1;
    // Not bounded by the queue limit: the answer continues a reply already counted.
    st.queue.push(Job {
        id,
        chat_id: rec.chat_id.clone(),
        cancel: Default::default(),
        kind: JobKind::Resume {
            approval: rec,
            decision,
        },
    });
    vec![Event::System(SystemEvent::ApprovalResolved {
        approval_id: approval_id.to_string(),
        outcome,
    })]
}
