//! Chat sessions (spec §6): session mode, new/load/delete/rename chats, paging messages, and
//! clearing an agent's memory. Each operation is one store batch under the write lock; leaving
//! the current chat cancels its queued and running calls first (spec §4 last paragraph).

use crate::core::engine::shared::{committed, unasked, Got, Planned, Read, Step};
use crate::core::engine::{most_recent_chat, without_windows, World};
use crate::core::error::WorldError;
use crate::core::events::{Event, SystemEvent, WorldEvent};
use crate::core::model::{validate_chat_name, Chat, Message, TitleSource, NEW_CHAT_NAME};
use crate::core::sort::sort_by;
use crate::core::store::{AgentChatState, StoreOp};
use std::cell::Cell;

impl World {
    /// Cancels the calls of the current chat (the one being left).
    fn cancel_current_chat_calls(&self) {
        let current = self.st().world.current_chat_id.clone();
        self.st_mut().title = None;
        self.cancel_jobs(&|call| call.chat_id == current.as_deref());
        self.cancel_approvals(&|a| a.chat_id == current);
    }

    /// Ops that give every agent empty memory and `llmCallCount = 0` in chat `cid`.
    fn reset_ops(&self, cid: &str) -> Vec<StoreOp> {
        let st = self.st();
        let mut ops = Vec::new();
        for a in &st.agents {
            ops.push(StoreOp::ClearMemory {
                world_id: st.world.id.clone(),
                chat_id: cid.to_string(),
                agent_id: a.agent.id.clone(),
            });
            ops.push(StoreOp::PutAgentState {
                world_id: st.world.id.clone(),
                chat_id: cid.to_string(),
                state: AgentChatState {
                    agent_id: a.agent.id.clone(),
                    llm_call_count: 0,
                    last_llm_call: None,
                },
            });
        }
        ops
    }

    /// A new, empty `New Chat` of this world (not stored yet).
    pub(crate) fn fresh_chat(&self, now: crate::core::model::Timestamp) -> Chat {
        let st = self.st();
        Chat {
            id: self.inner.ids.new_id(),
            world_id: st.world.id.clone(),
            name: NEW_CHAT_NAME.to_string(),
            description: None,
            message_count: 0,
            title_source: TitleSource::Default,
            created_at: now,
            updated_at: st.chat_update_time(now),
        }
    }

    /// Reuses the current chat when it has no messages (`chat-reused`), otherwise creates a
    /// `New Chat` and makes it current (`new-chat-created`). Every agent starts fresh.
    pub async fn new_chat(&self) -> Result<Chat, WorldError> {
        let out = &Cell::new(None);
        self.change(&mut |w| {
            w.cancel_current_chat_calls();
            let now = w.now();
            let reuse = w
                .st()
                .current_chat()
                .filter(|c| c.message_count == 0)
                .cloned();
            let (chat, created) = match reuse {
                Some(c) => (c, false),
                None => (w.fresh_chat(now), true),
            };
            let mut world = w.info();
            let mut ops = Vec::new();
            if created {
                world.current_chat_id = Some(chat.id.clone());
                world.last_updated = now;
                ops.push(StoreOp::PutChat(chat.clone()));
                ops.push(StoreOp::PutWorld(world.clone()));
            }
            ops.extend(w.reset_ops(&chat.id));
            Ok(Some(Planned::new(ops, move |w| {
                {
                    let mut st = w.st_mut();
                    st.world = world;
                    st.no_chat_left = None;
                    if created {
                        st.chats.push(chat.clone());
                    }
                    st.reset_agents();
                }
                let chat_id = chat.id.clone();
                out.set(Some(chat));
                vec![Event::System(if created {
                    SystemEvent::NewChatCreated { chat_id }
                } else {
                    SystemEvent::ChatReused { chat_id }
                })]
            })))
        })
        .await?;
        committed(out)
    }

    /// Makes chat `id` current and restores every agent's memory and counter from it.
    pub async fn load_chat(&self, id: &str) -> Result<Chat, WorldError> {
        let out = &Cell::new(None);
        self.change_reading(&mut |got| {
            let Some(chat) = self.st().chats.iter().find(|c| c.id == id).cloned() else {
                return Err(WorldError::ChatNotFound(id.to_string()));
            };
            let Some(read) = got.pop() else {
                return Ok(Step::Read(Read::Chat(id.to_string())));
            };
            let Got::Chat(agents, approvals) = read else {
                return Err(unasked());
            };
            let mut world = self.st().world.clone();
            let mut ops = Vec::new();
            if world.current_chat_id.as_deref() != Some(id) {
                self.cancel_current_chat_calls();
                world.current_chat_id = Some(id.to_string());
                world.last_updated = self.now();
                ops.push(StoreOp::PutWorld(world.clone()));
            }
            Ok(Step::Plan(Some(Planned::new(ops, move |w| {
                {
                    let mut st = w.st_mut();
                    st.world = world;
                    st.no_chat_left = None;
                    restore(&mut st.agents, agents);
                    st.approvals = approvals;
                }
                out.set(Some(chat));
                vec![Event::System(SystemEvent::ChatLoaded {
                    chat_id: id.to_string(),
                })]
            }))))
        })
        .await?;
        committed(out)
    }

    /// Deletes a chat and its messages; `false` (and nothing happens) for an unknown id. When it
    /// was current, the most recently updated remaining chat becomes current (no `chat-loaded`),
    /// or none, and then every agent starts fresh; session mode stays on, and the next message
    /// sent starts a new chat (see `State::no_chat_left`(super::State)).
    ///
    /// Works over quota (`World::persist_freeing`): the delete frees space, and the only
    /// record it rewrites is the world's current-chat pointer (not even that when the last chat
    /// goes: the pointer left naming the deleted chat says "no chat left").
    pub async fn delete_chat(&self, id: &str) -> Result<bool, WorldError> {
        self.change_reading(&mut |got| {
            let (mut world, mut agents, next) = {
                let st = self.st();
                if !st.chats.iter().any(|c| c.id == id) {
                    return Ok(Step::Plan(None));
                }
                let next =
                    most_recent_chat(st.chats.iter().filter(|c| c.id != id)).map(|c| c.id.clone());
                (st.world.clone(), without_windows(&st.agents), next)
            };
            let was_current = world.current_chat_id.as_deref() == Some(id);
            let deletes = vec![StoreOp::DeleteChat {
                world_id: world.id.clone(),
                chat_id: id.to_string(),
            }];
            let mut puts = Vec::new();
            let mut approvals = Vec::new();
            if was_current {
                // The calls of the chat left are cancelled before the next chat is read (on the
                // first call; the second is handed the read).
                if got.is_empty() {
                    self.cancel_current_chat_calls();
                }
                match (&next, got.pop()) {
                    (Some(n), None) => return Ok(Step::Read(Read::Chat(n.clone()))),
                    (Some(_), Some(Got::Chat(a, ap))) => (agents, approvals) = (a, ap),
                    (Some(_), Some(_)) => return Err(unasked()),
                    (None, _) => {
                        for a in &mut agents {
                            a.memory.clear();
                            a.agent.llm_call_count = 0;
                            a.agent.last_llm_call = None;
                        }
                    }
                }
                world.current_chat_id = next;
                if world.current_chat_id.is_some() {
                    world.last_updated = self.now();
                    puts.push(StoreOp::PutWorld(world.clone()));
                }
            }
            Ok(Step::Plan(Some(Planned::freeing(
                deletes,
                puts,
                move |w| {
                    let new_current = world.current_chat_id.clone();
                    {
                        let mut st = w.st_mut();
                        if let Some(i) = st.chats.iter().position(|c| c.id == id) {
                            st.chats.remove(i);
                        }
                        if was_current {
                            if world.current_chat_id.is_none() {
                                st.no_chat_left = Some(id.to_string());
                            }
                            st.world = world;
                            restore(&mut st.agents, agents);
                            st.approvals = approvals;
                        }
                    }
                    vec![Event::System(SystemEvent::ChatDeleted {
                        chat_id: id.to_string(),
                        new_current_chat_id: new_current,
                    })]
                },
            ))))
        })
        .await
    }

    /// Renames a chat; its title becomes `manual` and nothing automatic overwrites it.
    pub async fn rename_chat(&self, id: &str, name: &str) -> Result<Chat, WorldError> {
        let name = validate_chat_name("name", name)?;
        let out = &Cell::new(None);
        self.change(&mut |w| {
            let Some(mut chat) = w.st().chats.iter().find(|c| c.id == id).cloned() else {
                return Err(WorldError::ChatNotFound(id.to_string()));
            };
            chat.name = name.clone();
            chat.title_source = TitleSource::Manual;
            chat.updated_at = w.st().chat_update_time(w.now());
            Ok(Some(Planned::new(
                vec![StoreOp::PutChat(chat.clone())],
                |w| {
                    if let Some(c) = w.st_mut().chats.iter_mut().find(|c| c.id == id) {
                        *c = chat.clone();
                    }
                    let event = Event::System(SystemEvent::ChatTitleUpdated {
                        chat_id: chat.id.clone(),
                        name: chat.name.clone(),
                        title_source: chat.title_source,
                    });
                    out.set(Some(chat));
                    vec![event]
                },
            )))
        })
        .await?;
        committed(out)
    }

    /// Every chat, most recently updated first. The engine never gives two chats of a world
    /// the same `updatedAt` (`State::chat_update_time`); ties (in an imported
    /// document) go to the chat created last.
    pub fn list_chats(&self) -> Vec<Chat> {
        // Reversed first, so the stable sort leaves ties with the chat created last first.
        let mut v = self.st().chats.clone();
        crate::core::reverse(&mut v);
        sort_by(&mut v, &|a, b| {
            (b.updated_at, b.created_at).cmp(&(a.updated_at, a.created_at))
        });
        v
    }

    /// The current chat, or `None` when session mode is off or its last chat was deleted (the
    /// next message then starts a new one).
    pub fn current_chat(&self) -> Option<Chat> {
        self.st().current_chat().cloned()
    }

    /// A page of a chat's messages, oldest first: the last `limit` before message `before`
    /// (or the last `limit` of the chat).
    pub async fn messages(
        &self,
        chat_id: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Message>, WorldError> {
        let world_id = {
            let st = self.st();
            if !st.chats.iter().any(|c| c.id == chat_id) {
                return Err(WorldError::ChatNotFound(chat_id.to_string()));
            }
            st.world.id.clone()
        };
        self.inner
            .store
            .messages(&world_id, chat_id, before, limit)
            .await
            .map_err(|e| self.report_storage(e.into(), None))
    }

    /// Session mode on: if it was off (or its last chat was deleted), start a new chat. Off:
    /// `currentChatId = null`, the calls of the left chat are cancelled and every agent starts
    /// fresh in RAM (the old chat keeps its memories; nothing of the new conversation is
    /// persisted). Over quota, turning it off still works in RAM (the pointer is written by a
    /// later change, see `World::persist_freeing`).
    pub async fn set_session_mode(&self, on: bool) -> Result<(), WorldError> {
        if on {
            if self.st().world.current_chat_id.is_none() {
                self.new_chat().await?;
            }
            return Ok(());
        }
        self.change(&mut |w| {
            let (current, no_chat_left) = {
                let st = w.st();
                (
                    st.world.current_chat_id.is_some(),
                    st.no_chat_left.is_some(),
                )
            };
            if current {
                w.cancel_current_chat_calls();
            } else if !no_chat_left {
                return Ok(None);
            }
            let mut world = w.info();
            world.current_chat_id = None;
            world.last_updated = w.now();
            let puts = vec![StoreOp::PutWorld(world.clone())];
            Ok(Some(Planned::freeing(Vec::new(), puts, |w| {
                let mut st = w.st_mut();
                st.world = world;
                st.no_chat_left = None;
                st.reset_agents();
                Vec::new()
            })))
        })
        .await
        .map(|_| ())
    }

    /// Empties an agent's memory in the current chat (or RAM) and sets its counter to 0.
    pub async fn clear_agent_memory(&self, agent_id: &str) -> Result<(), WorldError> {
        self.change(&mut |w| {
            let Some(mut agent) = w.agent(agent_id) else {
                return Err(WorldError::AgentNotFound(agent_id.to_string()));
            };
            let (world_id, cid) = {
                let st = w.st();
                (st.world.id.clone(), st.world.current_chat_id.clone())
            };
            // Frees space, so it works over quota (the counter reset is then best effort).
            let (deletes, puts) = match cid {
                Some(cid) => (
                    vec![StoreOp::ClearMemory {
                        world_id: world_id.clone(),
                        chat_id: cid.clone(),
                        agent_id: agent_id.to_string(),
                    }],
                    vec![StoreOp::PutAgentState {
                        world_id,
                        chat_id: cid,
                        state: AgentChatState {
                            agent_id: agent_id.to_string(),
                            llm_call_count: 0,
                            last_llm_call: None,
                        },
                    }],
                ),
                None => (Vec::new(), Vec::new()),
            };
            Ok(Some(Planned::freeing(deletes, puts, move |w| {
                agent.llm_call_count = 0;
                agent.last_llm_call = None;
                let mut st = w.st_mut();
                if let Some(a) = st.agents.iter_mut().find(|a| a.agent.id == agent_id) {
                    a.memory.clear();
                    a.agent.llm_call_count = 0;
                    a.agent.last_llm_call = None;
                }
                // A running call's M (not written yet) goes too, as if it had been written.
                let current = st.world.current_chat_id.clone();
                st.unsaved
                    .retain(|u| !(u.agent_id == agent_id && Some(&u.chat_id) == current.as_ref()));
                vec![Event::World(WorldEvent::AgentUpdated { agent })]
            })))
        })
        .await
        .map(|_| ())
    }
}

/// Copies counters and memory windows loaded into `loaded` onto the live agents.
fn restore(live: &mut [crate::core::engine::AgentRt], loaded: Vec<crate::core::engine::AgentRt>) {
    for src in loaded {
        if let Some(a) = live.iter_mut().find(|a| a.agent.id == src.agent.id) {
            a.memory = src.memory;
            a.agent.llm_call_count = src.agent.llm_call_count;
            a.agent.last_llm_call = src.agent.last_llm_call;
        }
    }
}
