//! Editing the conversation (spec §10): `regenerate`, `editMessage`, `deleteMessage`.
//!
//! Each is one atomic store change: the regenerated reply is published in the batch that puts
//! it in the old reply's place (`StoreOp::ReplaceMessage`) and removes the old reply's memory
//! entries (`StoreOp::DeleteMessages`); an edit removes the message and everything after it in
//! the batch that appends the new message; a delete is one batch.
//!
//! Choices where the spec is silent:
//! - Only messages of the current chat can be edited (`message_not_found` otherwise, and with
//!   session mode off, where nothing is kept).
//! - `regenerate` of a failed reply (named by the message it answered and the agent) appends
//!   the new reply like any reply: a failed reply had no place in the log.
//! - The regenerated reply's memory entries (its tool entries and the reply) are appended to the
//!   agent's memory: for the agent's latest reply that is exactly its place; for an older one,
//!   later calls see it as the most recent thing the agent said. Its input is the memory as it
//!   was before the old reply (up to the message it answers).
//! - A regeneration counts as a turn even past the turn limit (the user asked for it), and the
//!   old reply stays until the new one is published: a failed or empty regeneration changes
//!   nothing but the counter (a failure's partial text takes the old reply's place as an
//!   `interrupted` message, since that is what the user saw).
//! - `deleteMessage` removes any message of the chat (notices too) and nothing else: calls
//!   answering it go on. `editMessage` cancels the calls answering the removed messages.

use crate::core::engine::shared::{committed, unasked, Got, Planned, Read, Step};
use std::cell::Cell;

use crate::core::engine::responder::input_from;
use crate::core::engine::routing::{Edit, Outgoing};
use crate::core::engine::{Job, JobKind, World};
use crate::core::error::WorldError;
use crate::core::events::{Event, SystemEvent};
use crate::core::ids::normalize_id;
use crate::core::llm::types::ChatMessage;
use crate::core::llm_client::CancelToken;
use crate::core::mentions::{sender_type, SenderType};
use crate::core::model::{validate_content, Agent, MemoryEntry, Message, MessageKind};
use crate::core::store::{AgentChatState, StoreOp};

/// Messages read per page while looking for the one to edit (from the end of the chat).
const PAGE: usize = 100;
/// How far back the memory of an agent is read to rebuild the input of a regeneration.
const MEMORY_SCAN: usize = 10_000;

impl World {
    /// Regenerates a reply (spec §10): the same agent answers the same message again, with
    /// the memory it had before that reply, and the new reply takes the old one's place
    /// (`message-replaced`). `message_id` names a reply or an `interrupted` message; or, for
    /// a failed reply, the message it answered, with `agent` naming the agent. Counts as a
    /// turn. Returns the id the new reply will have (its SSE `messageId`). Drive
    /// [`World::run_until_idle`] afterwards.
    pub async fn regenerate(
        &self,
        message_id: &str,
        agent: Option<&str>,
    ) -> Result<String, WorldError> {
        let out = &Cell::new(None);
        self.change_reading(&mut |got| {
            let (world_id, chat_id) = self.editable_chat(message_id)?;
            let locate = |message_id: &str, answered| {
                Ok(Step::Read(Read::Locate {
                    world_id: world_id.clone(),
                    chat_id: chat_id.clone(),
                    message_id: message_id.to_string(),
                    answered,
                }))
            };
            let msg = match got.first() {
                None => return locate(message_id, false),
                Some(Got::Located(m)) => m,
                Some(_) => return Err(unasked()),
            };
            let (agent_id, trigger, old) = match regenerated(msg, agent)? {
                Regenerated::Ready(a, trigger, old) => (a, trigger, old),
                Regenerated::Answering(a, answered, old) => match got.get(1) {
                    None => return locate(&answered, true),
                    Some(Got::Located(m)) => (a, m, old),
                    Some(_) => return Err(unasked()),
                },
            };
            let trigger = trigger.clone();
            Ok(Step::Plan(Some(self.plan_regeneration(
                world_id, chat_id, agent_id, trigger, old, out,
            )?)))
        })
        .await?;
        self.wake_runner();
        committed(out)
    }

    /// The turn of a regeneration (persisted like any other, spec §5 step 3) and its queued
    /// call; the commit leaves the new reply's id in `out`.
    fn plan_regeneration<'a>(
        &self,
        world_id: String,
        chat_id: String,
        agent_id: String,
        trigger: Message,
        old: Option<String>,
        out: &'a Cell<Option<String>>,
    ) -> Result<Planned<'a>, WorldError> {
        if self.agent(&agent_id).is_none() {
            return Err(WorldError::AgentNotFound(agent_id));
        }
        let now = self.now();
        let (count, full) = {
            let st = self.st();
            let count = st
                .agent_index(&agent_id)
                .and_then(|i| st.agents.get(i))
                .map(|a| a.agent.llm_call_count)
                .unwrap_or(0);
            (count + 1, st.queue.len() >= st.queue_limit)
        };
        if full {
            return Err(WorldError::QueueFull(self.st().queue_limit));
        }
        let ops = vec![StoreOp::PutAgentState {
            world_id,
            chat_id: chat_id.clone(),
            state: AgentChatState {
                agent_id: agent_id.clone(),
                llm_call_count: count,
                last_llm_call: Some(now),
            },
        }];
        let named = agent_id.clone();
        let planned = Planned::new(ops, move |w| {
            let reply_id = w.inner.ids.new_id();
            let mut st = w.st_mut();
            if let Some(i) = st.agent_index(&agent_id) {
                if let Some(a) = st.agents.get_mut(i) {
                    a.agent.llm_call_count = count;
                    a.agent.last_llm_call = Some(now);
                }
            }
            let id = st.next_job;
            st.next_job += 1;
            st.queue.push(Job {
                id,
                chat_id: Some(chat_id),
                cancel: CancelToken::new(),
                kind: JobKind::Reply {
                    agent_id,
                    trigger,
                    reply_id: reply_id.clone(),
                    regenerate: Some(old),
                },
            });
            out.set(Some(reply_id));
            Vec::new()
        });
        Ok(planned.for_agent(named))
    }

    /// Edits a human message (spec §10): the message and everything after it leave the chat
    /// and every memory, and `content` is sent in its place with a new id (counters reset as
    /// for any human message), all in one store change. Calls answering the removed messages
    /// are cancelled. Returns the new message; drive [`World::run_until_idle`] afterwards.
    pub async fn edit_message(
        &self,
        message_id: &str,
        content: &str,
    ) -> Result<Message, WorldError> {
        validate_content(content)?;
        let (world_id, chat_id) = self.editable_chat(message_id)?;
        let (msg, removed) = self.locate(&world_id, &chat_id, message_id).await?;
        if sender_type(Some(&msg.sender)) != SenderType::Human || msg.kind != MessageKind::Message {
            return Err(WorldError::input(
                "messageId",
                "names a message that is not yours (an agent's reply or a notice); only human \
                 messages can be edited: regenerate a reply instead",
            ));
        }
        self.cancel_replies_to(&removed);
        let out = Outgoing {
            msg: Message {
                message_id: self.inner.ids.new_id(),
                chat_id: None,
                sender: msg.sender,
                content: content.to_string(),
                created_at: self.now(),
                reply_to_message_id: None,
                kind: MessageKind::Message,
                tool_calls: Vec::new(),
            },
            memory: Vec::new(),
            only_in: Some(Some(chat_id)),
            keep_if_left: false,
            edit: Edit::AfterRemoving { removed },
        };
        self.publish(out).await?.ok_or_else(|| {
            WorldError::input("messageId", "the chat changed while editing; try again")
        })
    }

    /// Deletes one message of the current chat, from the chat and from every memory (spec §10),
    /// in one store change; nothing else changes. `chat-saved` follows.
    pub async fn delete_message(&self, message_id: &str) -> Result<(), WorldError> {
        self.change_reading(&mut |got| {
            let (world_id, chat_id) = self.editable_chat(message_id)?;
            match got.pop() {
                None => {
                    return Ok(Step::Read(Read::Locate {
                        world_id,
                        chat_id,
                        message_id: message_id.to_string(),
                        answered: false,
                    }))
                }
                Some(Got::Located(_)) => {}
                Some(_) => return Err(unasked()),
            }
            let chat = {
                let st = self.st();
                st.chats
                    .iter()
                    .find(|c| c.id == chat_id)
                    .cloned()
                    .map(|mut c| {
                        c.message_count = c.message_count.saturating_sub(1);
                        c.updated_at = st.chat_update_time(self.now());
                        c
                    })
            };
            let Some(chat) = chat else {
                return Err(WorldError::MessageNotFound(message_id.to_string()));
            };
            let ops = vec![
                StoreOp::DeleteMessages {
                    world_id,
                    chat_id: chat_id.clone(),
                    message_ids: vec![message_id.to_string()],
                },
                StoreOp::PutChat(chat.clone()),
            ];
            let planned = Planned::new(ops, move |w| {
                let saved = SystemEvent::ChatSaved {
                    chat_id: chat.id.clone(),
                    message_count: chat.message_count,
                };
                if let Some(c) = w.st_mut().chats.iter_mut().find(|c| c.id == chat_id) {
                    *c = chat;
                }
                w.forget(&[message_id.to_string()]);
                vec![Event::System(saved)]
            });
            Ok(Step::Plan(Some(planned.reloading_windows(true))))
        })
        .await
        .map(|_| ())
    }

    /// The current chat, where editing happens: `(world id, chat id)`.
    fn editable_chat(&self, message_id: &str) -> Result<(String, String), WorldError> {
        let st = self.st();
        match st.current_chat() {
            Some(c) => Ok((st.world.id.clone(), c.id.clone())),
            None => Err(WorldError::MessageNotFound(message_id.to_string())),
        }
    }

    /// Finds message `id` in the chat, reading pages from the end (edits are usually recent):
    /// the message, and the ids of it and every message after it, in order.
    pub(crate) async fn locate(
        &self,
        world_id: &str,
        chat_id: &str,
        id: &str,
    ) -> Result<(Message, Vec<String>), WorldError> {
        // Newest first while reading backwards; reversed once found.
        let mut after: Vec<String> = Vec::new();
        let mut before: Option<String> = None;
        loop {
            let page = self
                .inner
                .store
                .messages(world_id, chat_id, before.as_deref(), PAGE)
                .await?;
            let Some(first) = page.first() else {
                return Err(WorldError::MessageNotFound(id.to_string()));
            };
            let next = first.message_id.clone();
            let full = page.len() == PAGE;
            for m in page.into_iter().rev() {
                after.push(m.message_id.clone());
                if m.message_id == id {
                    crate::core::reverse(&mut after);
                    return Ok((m, after));
                }
            }
            if !full {
                return Err(WorldError::MessageNotFound(id.to_string()));
            }
            before = Some(next);
        }
    }

    /// Removes the entries of `ids` from every agent's RAM window (and the unsaved ones).
    pub(crate) fn forget(&self, ids: &[String]) {
        let mut st = self.st_mut();
        for a in &mut st.agents {
            a.memory.retain(|e| !ids.contains(&e.message_id));
        }
        st.unsaved.retain(|u| !ids.contains(&u.entry.message_id));
    }

    /// The input of a regeneration: the agent's memory as it was before the old reply (up to
    /// the last entry of the message it answers, without the old reply's entries), cut to the
    /// history window like any input. If the memory no longer holds that message (cleared), it
    /// is added at the end, unsaved.
    pub(crate) async fn regeneration_input(
        &self,
        chat_id: Option<&str>,
        agent: &Agent,
        trigger: &Message,
        old: Option<&str>,
    ) -> Result<Vec<ChatMessage>, WorldError> {
        let (world_id, n, ram) = {
            let st = self.st();
            let mut ram = Vec::new();
            if let Some(a) = st.agent_index(&agent.id).and_then(|i| st.agents.get(i)) {
                for e in &a.memory {
                    ram.push(e.clone());
                }
            }
            (st.world.id.clone(), st.history_limit(agent), ram)
        };
        let all = match chat_id {
            Some(cid) => {
                self.inner
                    .store
                    .last_memory(&world_id, cid, &agent.id, MEMORY_SCAN)
                    .await?
            }
            None => ram,
        };
        let cut = all
            .iter()
            .rposition(|e| e.message_id == trigger.message_id)
            .map(|i| i + 1);
        let mut before = Vec::new();
        for e in all.iter().take(cut.unwrap_or(all.len())) {
            if Some(e.message_id.as_str()) != old {
                before.push(e.clone());
            }
        }
        if cut.is_none() {
            before.push(MemoryEntry::text(
                crate::core::model::MemoryRole::User,
                trigger.content.clone(),
                Some(trigger.sender.clone()),
                trigger.message_id.clone(),
                chat_id.map(str::to_string),
                trigger.created_at,
            ));
        }
        let skip = before.len().saturating_sub(n);
        let mut window = Vec::new();
        for e in before.iter().skip(skip) {
            window.push(e);
        }
        Ok(input_from(agent, &window))
    }
}

/// What a regeneration answers (see [`regenerated`]).
enum Regenerated<'m> {
    /// `(agent, trigger, None)`: a failed reply, retried on the message named.
    Ready(String, &'m Message, Option<String>),
    /// `(agent, the id of the message the reply answered, the reply's id)`: a reply, to replace.
    Answering(String, String, Option<String>),
}

/// Which agent answers which message again when message `msg` is named for regeneration (spec
/// §10), with `agent` if the caller named one, or the input error saying why it cannot be.
fn regenerated<'m>(msg: &'m Message, agent: Option<&str>) -> Result<Regenerated<'m>, WorldError> {
    let named = agent.map(normalize_id);
    let is_reply = matches!(msg.kind, MessageKind::Message | MessageKind::Interrupted)
        && sender_type(Some(&msg.sender)) == SenderType::Agent
        && msg.reply_to_message_id.is_some();
    match msg.kind {
        MessageKind::TurnLimit | MessageKind::Pass => Err(WorldError::input(
            "messageId",
            format!(
                "names a {} notice, which cannot be regenerated; name the agent's reply \
                 (or the message it answered, with {{agent}})",
                if msg.kind == MessageKind::Pass {
                    "pass"
                } else {
                    "turn-limit"
                }
            ),
        )),
        _ if is_reply
            && named
                .as_deref()
                .is_none_or(|a| a == normalize_id(&msg.sender)) =>
        {
            Ok(Regenerated::Answering(
                normalize_id(&msg.sender),
                msg.reply_to_message_id.clone().unwrap_or_default(),
                Some(msg.message_id.clone()),
            ))
        }
        MessageKind::Interrupted => Err(WorldError::input(
            "agent",
            "names another agent than the one whose text this is",
        )),
        _ => match named {
            Some(a) => Ok(Regenerated::Ready(a, msg, None)),
            None => Err(WorldError::input(
                "messageId",
                "is not an agent's reply; to retry a failed reply, name the message it \
                 answered and the agent: regenerate(messageId, {agent})",
            )),
        },
    }
}

/// The error of a reply whose message `answered` left the chat.
pub(crate) fn gone(answered: &str) -> WorldError {
    WorldError::input(
        "messageId",
        format!(
            "answers message {answered:?}, which is no longer in the chat; \
             the reply cannot be regenerated"
        ),
    )
}
