//! Publishing and routing (spec §4, §6 session mode and heuristic titles).
//!
//! Publishing one message is one logical change: under the write lock, a [`Plan`] is computed
//! from the current state (counter reset, each agent's decision, counter increments, queued
//! calls, chat metadata, title), persisted as one store batch when session mode is on, and only
//! then committed to RAM. Turn-limit notices the plan produces are published afterwards, each as
//! its own change, so nothing publishes recursively while the lock is held.
//!
//! Where the spec gives no order: the `turn-limit` system event is emitted with the declined
//! message's events, before the notice's own `message` event.

use crate::core::engine::shared::{cold, replanned};

use crate::core::engine::{Job, JobKind, State, TitleCandidate, World};
use crate::core::error::WorldError;
use crate::core::events::{Decision, Event, SystemEvent, UnansweredReason};
use crate::core::ids::normalize_id;
use crate::core::llm_client::CancelToken;
use crate::core::mentions::{
    all_mentions, is_space, line_start_mentions, sender_type, sender_type_of_id, SenderType,
};
use crate::core::model::{
    validate_content, validate_sender, Chat, MemoryEntry, Message, MessageKind, Timestamp,
    TitleSource,
};
use crate::core::store::{AgentChatState, StoreOp};
use crate::core::title::heuristic_title;

/// The sender used by `send()` when none is given (spec §2).
pub const HUMAN: &str = "HUMAN";

/// The `unanswered` event of a human message nobody will answer (spec §8), if it is one.
/// A message some agent declined only because the queue was full is not `unanswered`: its
/// `queue_full` error says why.
fn unanswered(
    st: &State,
    msg: &Message,
    parsed: &Parsed,
    jobs: &[Job],
    notices: &[Outgoing],
) -> Option<SystemEvent> {
    if parsed.stype != SenderType::Human || msg.kind != MessageKind::Message {
        return None;
    }
    if !jobs.is_empty() || !notices.is_empty() {
        return None;
    }
    let line_start = &parsed.line_start;
    let (reason, mentions) = if st.agents.is_empty() {
        (UnansweredReason::NoAgents, all_mentions(&msg.content))
    } else if !line_start.is_empty() {
        if line_start.iter().any(|m| st.agent_index(m).is_some()) {
            return None; // a named agent declined for another reason (queue full)
        }
        (UnansweredReason::UnknownMention, line_start.clone())
    } else {
        if parsed.any.is_empty() {
            return None; // public: every agent answers unless the queue is full
        }
        (UnansweredReason::MidLineMention, parsed.any.clone())
    };
    Some(SystemEvent::Unanswered {
        message_id: msg.message_id.clone(),
        reason,
        mentions,
    })
}

/// A message about to be published, with the memory entries its publication saves.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// `chat_id` is filled in at publish time.
    pub(crate) msg: Message,
    pub(crate) memory: Vec<(String, MemoryEntry)>,
    /// `Some(chat)`: publish only if `chat` is still the current chat (checked under the write
    /// lock), so a reply or notice of a left chat never lands in another one; otherwise it is
    /// dropped silently (its call was cancelled and reported).
    pub(crate) only_in: Option<Option<String>>,
    /// With `only_in`: when that chat was left but still exists, append the message to it
    /// anyway (the `interrupted` text of a call cancelled by the switch, spec §4), unrouted.
    pub(crate) keep_if_left: bool,
    /// Editing (spec §10): how this message changes the chat besides being appended.
    pub(crate) edit: Edit,
}

/// How a published message edits the chat (spec §10), in the same store batch as the message.
#[derive(Debug, Clone, Default)]
pub(crate) enum Edit {
    /// Appended at the end (every message but the ones below).
    #[default]
    None,
    /// A regenerated reply: it takes the place of message `old` in the log, and `old`'s memory
    /// entries (every agent's) leave memory. `message-replaced` follows its `message` event.
    Replaces { old: String },
    /// An edited human message: `removed` (the old message and everything after it) leave the
    /// log and every memory first, then the message is appended.
    AfterRemoving { removed: Vec<String> },
}

/// What routing reads of a message, parsed once per message rather than once per agent: the
/// sender's id and type and the mentions (NFC-normalised ids; each parse walks the content).
pub(crate) struct Parsed {
    sender_id: String,
    stype: SenderType,
    /// Line-start mentions (humans and agents only: the other senders' rules do not read them).
    line_start: Vec<String>,
    /// Every mention, for a human message without line-start mentions (else not needed).
    any: Vec<String>,
}

impl Parsed {
    pub(crate) fn of(msg: &Message) -> Self {
        let sender_id = normalize_id(&msg.sender);
        let stype = if msg.sender.trim_matches(is_space).len() == msg.sender.len() {
            sender_type_of_id(&sender_id)
        } else {
            sender_type(Some(&msg.sender))
        };
        let reads_mentions = msg.kind == MessageKind::Message
            && matches!(stype, SenderType::Human | SenderType::Agent);
        let line_start = if reads_mentions {
            line_start_mentions(&msg.content)
        } else {
            Vec::new()
        };
        let any = if reads_mentions && stype == SenderType::Human && line_start.is_empty() {
            all_mentions(&msg.content)
        } else {
            Vec::new()
        };
        Self {
            sender_id,
            stype,
            line_start,
            any,
        }
    }
}

/// Why an agent does or does not respond (spec §4 rules 1–7), written out by [`Why::text`]
/// only for a `debug` event: every agent decides on every published message, and formatting
/// each reason (the generic formatting machinery, an allocation) cost the routing of every
/// reply whether anybody read it or not.
pub(crate) enum Why<'a> {
    Own,
    Notice,
    FromSystem,
    FromWorld,
    /// Mentioned at the start of a line by this human sender.
    HumanMention(&'a str),
    /// The line-start mentions of a message that does not name the agent.
    NotMentioned(&'a [String]),
    PublicHuman,
    /// The mentions of a human message that mentions nobody at the start of a line.
    NotPublic(&'a [String]),
    /// Mentioned at the start of a line by this agent sender.
    AgentMention(&'a str),
    /// A public message of this agent sender.
    AgentPublic(&'a str),
    TurnLimit(u32),
    QueueFull(usize),
}

impl Why<'_> {
    pub(crate) fn text(&self) -> String {
        // A plain loop, not `map`/`collect`/`join`: std's `join` leaves the package.
        let mentions_list = |v: &[String]| {
            let mut s = String::new();
            for m in v {
                if !s.is_empty() {
                    s.push_str(", ");
                }
                s.push('@');
                s.push_str(m);
            }
            s
        };
        match self {
            Why::Own => "own message".to_string(),
            Why::Notice => "engine notices are never answered".to_string(),
            Why::FromSystem => "messages from system are never answered".to_string(),
            Why::FromWorld => "world messages are answered by every agent".to_string(),
            Why::HumanMention(sender) => format!("mentioned at the start of a line by {sender}"),
            Why::NotMentioned(ls) => {
                format!("not mentioned: the message addresses {}", mentions_list(ls))
            }
            Why::PublicHuman => "public message from a human".to_string(),
            Why::NotPublic(any) => format!(
                "not public: the message mentions {} but not at the start of a line",
                mentions_list(any)
            ),
            Why::AgentMention(sender) => {
                format!("mentioned at the start of a line by agent {sender}")
            }
            Why::AgentPublic(sender) => format!(
                "agents answer other agents only when mentioned at the start of a line; {sender} sent a public message"
            ),
            Why::TurnLimit(turn_limit) => format!("turn limit reached ({turn_limit})"),
            Why::QueueFull(limit) => format!("queue full ({limit} pending)"),
        }
    }
}

/// Whether an agent responds, and why (spec §4 rules 1–7). `parsed` is [`Parsed::of`] `msg`.
pub(crate) fn decide<'a>(
    agent_id: &str,
    llm_call_count: u32,
    turn_limit: u32,
    msg: &'a Message,
    parsed: &'a Parsed,
) -> (Decision, Why<'a>) {
    if parsed.sender_id == agent_id {
        return (Decision::Ignore, Why::Own);
    }
    if msg.kind != MessageKind::Message {
        return (Decision::Ignore, Why::Notice);
    }
    let yes = match parsed.stype {
        SenderType::System => return (Decision::Ignore, Why::FromSystem),
        SenderType::World => Why::FromWorld,
        SenderType::Human => {
            let ls = &parsed.line_start;
            if !ls.is_empty() {
                if ls.iter().any(|m| m == agent_id) {
                    Why::HumanMention(&msg.sender)
                } else {
                    return (Decision::Ignore, Why::NotMentioned(ls));
                }
            } else {
                let any = &parsed.any;
                if any.is_empty() {
                    Why::PublicHuman
                } else {
                    return (Decision::Ignore, Why::NotPublic(any));
                }
            }
        }
        SenderType::Agent => {
            let ls = &parsed.line_start;
            if ls.iter().any(|m| m == agent_id) {
                Why::AgentMention(&msg.sender)
            } else if ls.is_empty() {
                return (Decision::Ignore, Why::AgentPublic(&msg.sender));
            } else {
                return (Decision::Ignore, Why::NotMentioned(ls));
            }
        }
    };
    if llm_call_count >= turn_limit {
        return (Decision::TurnLimit, Why::TurnLimit(turn_limit));
    }
    (Decision::Respond, yes)
}

/// The exact turn-limit notice (spec §4 rule 7, kept verbatim).
pub(crate) fn turn_limit_notice(turn_limit: u32) -> String {
    format!(
        "@human Turn limit reached ({turn_limit} LLM calls). Please take control of the conversation."
    )
}

/// Everything publishing one message changes, computed before anything is written.
struct Plan {
    msg: Message,
    /// The sender's id (normalised once, see [`Parsed`]).
    sender_id: String,
    ops: Vec<StoreOp>,
    /// `(agent id, llmCallCount, lastLLMCall)` after the change.
    counters: Vec<(String, u32, Option<Timestamp>)>,
    jobs: Vec<Job>,
    chat: Option<Chat>,
    /// With the message's own entries: the `State::unsaved` entries the batch writes (first).
    memory: Vec<(String, MemoryEntry)>,
    /// The ids of those unsaved entries.
    flushed: Vec<u64>,
    title: Option<Option<TitleCandidate>>,
    events: Vec<Event>,
    notices: Vec<Outgoing>,
}

impl World {
    /// Validates and publishes a message from `sender` (the human when `None`), persisting it
    /// before any LLM call, and queues the calls of the agents that respond. Drive
    /// [`World::run_until_idle`] afterwards to run them.
    pub async fn send(&self, content: &str, sender: Option<&str>) -> Result<Message, WorldError> {
        let sender = sender.unwrap_or(HUMAN);
        validate_sender(sender)?;
        let sender = sender.to_string();
        validate_content(content)?;
        let msg = Message {
            message_id: self.inner.ids.new_id(),
            chat_id: None,
            sender,
            content: content.to_string(),
            created_at: self.now(),
            reply_to_message_id: None,
            kind: MessageKind::Message,
            tool_calls: Vec::new(),
        };
        self.publish(Outgoing {
            msg,
            memory: Vec::new(),
            only_in: None,
            keep_if_left: false,
            edit: Edit::None,
        })
        .await?
        .ok_or_else(|| WorldError::input("message", "was not published"))
    }

    /// Publishes a message and then the notices its routing produced. The first message's
    /// failure is returned; a later notice's failure is reported as a `storage_error` event.
    /// `Ok(None)`: the message was dropped because its chat is no longer current.
    pub(crate) async fn publish(&self, out: Outgoing) -> Result<Option<Message>, WorldError> {
        let mut work = vec![out];
        let mut first: Option<Message> = None;
        let mut is_first = true;
        while let Some(o) = crate::core::pop_front(&mut work) {
            match self.publish_one(o).await {
                Ok(Some((m, notices))) => {
                    if is_first {
                        first = Some(m);
                    }
                    work.extend(notices);
                }
                Ok(None) => {}
                Err(e) if is_first => return Err(e),
                Err(e) => self.report(&e),
            }
            is_first = false;
        }
        Ok(first)
    }

    async fn publish_one(
        &self,
        out: Outgoing,
    ) -> Result<Option<(Message, Vec<Outgoing>)>, WorldError> {
        replanned!(self, self.publish_one_once(out.clone()))
    }

    /// One attempt of [`World::publish_one`] (see `replanned!`).
    async fn publish_one_once(
        &self,
        out: Outgoing,
    ) -> Result<Option<(Message, Vec<Outgoing>)>, WorldError> {
        let guard = self.write_lock().await?;
        if let Some(expected) = &out.only_in {
            if self.st().world.current_chat_id != *expected {
                return match expected {
                    Some(chat_id) if out.keep_if_left => {
                        let chat_id = chat_id.clone();
                        let m = cold(self.append_to_left_chat(out, &chat_id)).await?;
                        drop(guard);
                        Ok(m.map(|m| (m, Vec::new())))
                    }
                    _ => Ok(None),
                };
            }
        }
        let now = self.now();
        // Session mode on with no chat left (the last one was deleted): a message the caller
        // sends starts a new chat, in the same batch, rather than being kept nowhere.
        let new_chat = (out.only_in.is_none() && self.st().no_chat_left.is_some())
            .then(|| self.fresh_chat(now));
        let edited: Vec<String> = match &out.edit {
            Edit::None => Vec::new(),
            Edit::Replaces { old } => vec![old.clone()],
            Edit::AfterRemoving { removed } => removed.clone(),
        };
        let (mut plan, epoch) = {
            let st = self.st();
            (self.plan(&st, out, now, new_chat.clone()), st.epoch)
        };
        if !plan.ops.is_empty() {
            // Handed over, not cloned (nothing reads them after the write; a failed write
            // returns, and `replanned!` plans again from scratch).
            self.persist(std::mem::take(&mut plan.ops)).await?;
        }
        let (queued, cancelled) = self.commit(&mut plan, new_chat, now, epoch);
        if !edited.is_empty() {
            // Entries left memory: the windows are read again (they may reach further back).
            self.forget(&edited);
            if let Err(e) = cold(self.reload_windows()).await {
                self.report(&e);
            }
        }
        drop(guard);
        // The runner waits for queued work (or its calls): a message that queued no call
        // leaves it asleep. Most messages are replies that nobody answers, published by the
        // runner's own calls; a wake for each cost the runner a microtask and a poll of
        // every call in flight, per reply.
        if queued {
            self.wake_runner();
        }
        self.emit_all(plan.events);
        self.emit_cancelled(cancelled);
        Ok(Some((plan.msg, plan.notices)))
    }

    /// The RAM side of a published batch: the new chat, counters, chat metadata, memory
    /// windows, the sender's `lastActive`, the queued calls and the title candidate. Returns
    /// whether calls were queued, and the calls cancelled instead (a cancellation happened
    /// while the batch was written: `epoch` moved).
    // Out of `publish`'s poll (see `shared::cold`): plain code, so a plain call.
    #[inline(never)]
    fn commit(
        &self,
        plan: &mut Plan,
        new_chat: Option<Chat>,
        now: Timestamp,
        epoch: u64,
    ) -> (bool, Vec<Job>) {
        let mut cancelled = Vec::new();
        let mut queued = false;
        let mut st = self.st_mut();
        if let Some(c) = new_chat {
            st.world.current_chat_id = Some(c.id.clone());
            st.world.last_updated = now;
            st.no_chat_left = None;
            st.chats.push(c);
        }
        for (id, count, last) in &plan.counters {
            if let Some(i) = st.agent_index(id) {
                if let Some(a) = st.agents.get_mut(i) {
                    a.agent.llm_call_count = *count;
                    a.agent.last_llm_call = *last;
                }
            }
        }
        if let Some(chat) = plan.chat.take() {
            if let Some(c) = st.chats.iter_mut().find(|c| c.id == chat.id) {
                *c = chat;
            }
        }
        st.saved(&plan.flushed);
        for (agent, entry) in std::mem::take(&mut plan.memory) {
            st.remember(&agent, entry);
        }
        if let Some(i) = st.agent_index(&plan.sender_id) {
            if let Some(a) = st.agents.get_mut(i) {
                a.agent.last_active = now;
            }
        }
        // Job ids are given at commit time: other work may have taken ids meanwhile. If a
        // cancellation (stop, chat switch) happened while the batch was being written, the
        // calls this message routed are cancelled too (they keep their turn).
        if st.epoch == epoch {
            queued = !plan.jobs.is_empty();
            for mut job in std::mem::take(&mut plan.jobs) {
                job.id = st.next_job;
                st.next_job += 1;
                st.queue.push(job);
            }
        } else {
            cancelled = std::mem::take(&mut plan.jobs);
        }
        if let Some(t) = plan.title.take() {
            st.title = t;
        }
        (queued, cancelled)
    }

    /// Appends `out` to chat `chat_id`, which is no longer current but exists (else `None`):
    /// the message is stored and announced (`message`, `chat-saved`) but not routed, not
    /// remembered and not titled. Only engine notices take this path (spec §4 `interrupted`).
    /// Caller holds the write lock.
    async fn append_to_left_chat(
        &self,
        out: Outgoing,
        chat_id: &str,
    ) -> Result<Option<Message>, WorldError> {
        let now = self.now();
        let (mut chat, world_id, updated_at, held) = {
            let st = self.st();
            let Some(chat) = st.chats.iter().find(|c| c.id == chat_id).cloned() else {
                return Ok(None); // deleted: nothing of it is kept
            };
            // The agent's unsaved entries of that chat (its M) go with its message, to the
            // store only: the RAM windows are the current chat's.
            let sender = normalize_id(&out.msg.sender);
            let held = st.unsaved_cloned(&sender, chat_id);
            (chat, st.world.id.clone(), st.chat_update_time(now), held)
        };
        let mut msg = out.msg;
        msg.chat_id = Some(chat_id.to_string());
        chat.message_count += 1;
        chat.updated_at = updated_at;
        // Plain loops here and below: an iterator chain instantiates its own adapters.
        let mut ops = Vec::with_capacity(held.len() + 2);
        let mut ids = Vec::with_capacity(held.len());
        for u in &held {
            ops.push(u.op(&world_id));
            ids.push(u.id);
        }
        ops.push(StoreOp::AppendMessage {
            world_id,
            chat_id: chat_id.to_string(),
            message: msg.clone(),
        });
        ops.push(StoreOp::PutChat(chat.clone()));
        self.persist(ops).await?;
        self.st_mut().saved(&ids);
        let saved = SystemEvent::ChatSaved {
            chat_id: chat.id.clone(),
            message_count: chat.message_count,
        };
        if let Some(c) = self.st_mut().chats.iter_mut().find(|c| c.id == chat_id) {
            *c = chat;
        }
        self.emit_all(vec![Event::Message(msg.clone()), Event::System(saved)]);
        Ok(Some(msg))
    }

    /// `new_chat`: a chat to create and make current with this message (no chat left).
    // Not inlined into `publish`'s poll: see `shared::cold` (sync code, so a plain call).
    #[inline(never)]
    fn plan(&self, st: &State, out: Outgoing, now: Timestamp, new_chat: Option<Chat>) -> Plan {
        let mut msg = out.msg;
        let world_id = st.world.id.clone();
        let mut ops = Vec::new();
        let mut events = Vec::new();
        if let Some(c) = &new_chat {
            create_chat(st, c, now, &mut ops, &mut events);
        }
        let chat = new_chat.or_else(|| st.current_chat().cloned());
        msg.chat_id = chat.as_ref().map(|c| c.id.clone());
        let session = chat.is_some();
        let parsed = Parsed::of(&msg);
        let stype = parsed.stype;
        events.push(Event::Message(msg.clone()));
        let mut title = None;
        let mut new_chat = None;
        let mut flushed = Vec::new();
        let mut memory = Vec::new();
        let mut own_memory = out.memory;

        // `chat` is not read after this: moved, not cloned (a chat row per published message).
        if let Some(mut c) = chat {
            match &out.edit {
                Edit::None => {
                    ops.push(StoreOp::AppendMessage {
                        world_id: world_id.clone(),
                        chat_id: c.id.clone(),
                        message: msg.clone(),
                    });
                    c.message_count += 1;
                }
                edit => edit_ops(&world_id, &mut c, &msg, edit, &mut ops),
            }
            // A message of an agent carries the agent's unsaved entries of this chat (its M:
            // `State::unsaved`), written before the message's own entries.
            if stype == SenderType::Agent {
                for u in st.unsaved_of(&parsed.sender_id, &c.id) {
                    flushed.push(u.id);
                    memory.push((u.agent_id.clone(), u.entry.clone()));
                }
            }
            memory.append(&mut own_memory);
            for (agent, entry) in &memory {
                ops.push(StoreOp::AppendMemory {
                    world_id: world_id.clone(),
                    chat_id: c.id.clone(),
                    agent_id: agent.clone(),
                    entry: entry.clone(),
                });
            }
            c.updated_at = st.chat_update_time(now);
            if let Edit::Replaces { old } = &out.edit {
                events.push(Event::System(SystemEvent::MessageReplaced {
                    old_message_id: old.clone(),
                    message_id: msg.message_id.clone(),
                }));
            }
            events.push(Event::System(SystemEvent::ChatSaved {
                chat_id: c.id.clone(),
                message_count: c.message_count,
            }));
            let is_human_message = stype == SenderType::Human && msg.kind == MessageKind::Message;
            let llm_title =
                st.world.chat_llm_provider.is_some() && st.world.chat_llm_model.is_some();
            if is_human_message && c.title_source == TitleSource::Default {
                if llm_title {
                    title = Some(Some(TitleCandidate {
                        chat_id: c.id.clone(),
                        human_id: msg.message_id.clone(),
                        human: msg.content.clone(),
                        reply: None,
                    }));
                } else if let Some(t) = heuristic_title(&msg.content) {
                    c.name = t;
                    c.title_source = TitleSource::Auto;
                    events.push(Event::System(SystemEvent::ChatTitleUpdated {
                        chat_id: c.id.clone(),
                        name: c.name.clone(),
                        title_source: c.title_source,
                    }));
                }
            }
            if let Some(cand) = &st.title {
                if cand.reply.is_none()
                    && stype == SenderType::Agent
                    && msg.kind == MessageKind::Message
                    && msg.reply_to_message_id.as_deref() == Some(cand.human_id.as_str())
                {
                    let mut cand = cand.clone();
                    cand.reply = Some((parsed.sender_id.clone(), msg.content.clone()));
                    title = Some(Some(cand));
                }
            }
            ops.push(StoreOp::PutChat(c.clone()));
            new_chat = Some(c);
        }

        // Rule 8: a human or world message resets every counter, once, before any decision.
        let reset = matches!(stype, SenderType::Human | SenderType::World)
            && msg.kind == MessageKind::Message;
        let mut counters = Vec::new();
        let mut jobs = Vec::new();
        let mut notices = Vec::new();
        let turn_limit = st.world.turn_limit;
        for a in &st.agents {
            let id = &a.agent.id;
            let (mut count, mut last) = (a.agent.llm_call_count, a.agent.last_llm_call);
            let mut changed = false;
            if reset && count != 0 {
                count = 0;
                changed = true;
            }
            let (mut decision, mut reason) = decide(id, count, turn_limit, &msg, &parsed);
            match decision {
                Decision::Respond => {
                    if st.queue.len() + jobs.len() >= st.queue_limit {
                        // The refused call gives its turn back: the counter is not incremented.
                        decision = Decision::QueueFull;
                        reason = Why::QueueFull(st.queue_limit);
                        events.push(queue_full(id, st.queue_limit));
                    } else {
                        count += 1;
                        last = Some(now);
                        changed = true;
                        jobs.push(Job {
                            id: 0,
                            chat_id: msg.chat_id.clone(),
                            cancel: CancelToken::new(),
                            kind: JobKind::Reply {
                                agent_id: id.clone(),
                                trigger: msg.clone(),
                                reply_id: self.inner.ids.new_id(),
                                regenerate: None,
                            },
                        });
                    }
                }
                Decision::TurnLimit => {
                    let notice_id = self.inner.ids.new_id();
                    let (event, notice) =
                        turn_limit_reached(&a.agent, &msg, notice_id, turn_limit, now);
                    events.push(event);
                    notices.push(notice);
                }
                Decision::Ignore | Decision::QueueFull => {}
            }
            if st.debug {
                events.push(debug_event(id, &msg, decision, reason));
            }
            if changed {
                counters.push((id.clone(), count, last));
                if let Some(c) = &new_chat {
                    ops.push(StoreOp::PutAgentState {
                        world_id: world_id.clone(),
                        chat_id: c.id.clone(),
                        state: AgentChatState {
                            agent_id: id.clone(),
                            llm_call_count: count,
                            last_llm_call: last,
                        },
                    });
                }
            }
        }
        if let Some(e) = unanswered(st, &msg, &parsed, &jobs, &notices) {
            events.push(Event::System(e));
        }
        if !session {
            ops.clear();
        }
        // Session mode off: RAM only (nothing is unsaved then).
        memory.append(&mut own_memory);
        Plan {
            msg,
            sender_id: parsed.sender_id,
            ops,
            counters,
            jobs,
            chat: new_chat,
            memory,
            flushed,
            title,
            events,
            notices,
        }
    }
}

/// The batch and event of a chat created for this message (no chat left).
// Rare: out of `plan`, which the engine's JS hosts compile optimised (see `shared::cold`).
#[cold]
#[inline(never)]
fn create_chat(
    st: &State,
    c: &Chat,
    now: Timestamp,
    ops: &mut Vec<StoreOp>,
    events: &mut Vec<Event>,
) {
    let mut world = st.world.clone();
    world.current_chat_id = Some(c.id.clone());
    world.last_updated = now;
    ops.push(StoreOp::PutChat(c.clone()));
    ops.push(StoreOp::PutWorld(world));
    events.push(Event::System(SystemEvent::NewChatCreated {
        chat_id: c.id.clone(),
    }));
}

/// The log ops of an edit (a message that replaces one, or follows removed ones) in chat `c`.
#[cold]
#[inline(never)]
fn edit_ops(world_id: &str, c: &mut Chat, msg: &Message, edit: &Edit, ops: &mut Vec<StoreOp>) {
    let world_id = world_id.to_string();
    match edit {
        Edit::None => {}
        Edit::Replaces { old } => {
            ops.push(StoreOp::ReplaceMessage {
                world_id: world_id.clone(),
                chat_id: c.id.clone(),
                old_message_id: old.clone(),
                message: msg.clone(),
            });
            // The log no longer holds `old`: this removes its memory entries.
            ops.push(StoreOp::DeleteMessages {
                world_id: world_id.clone(),
                chat_id: c.id.clone(),
                message_ids: vec![old.clone()],
            });
        }
        Edit::AfterRemoving { removed } => {
            ops.push(StoreOp::DeleteMessages {
                world_id: world_id.clone(),
                chat_id: c.id.clone(),
                message_ids: removed.clone(),
            });
            ops.push(StoreOp::AppendMessage {
                world_id: world_id.clone(),
                chat_id: c.id.clone(),
                message: msg.clone(),
            });
            let n = u64::try_from(removed.len()).unwrap_or(u64::MAX);
            c.message_count = c.message_count.saturating_sub(n) + 1;
        }
    }
}

/// The `queue_full` error of a call the full queue refused.
#[cold]
#[inline(never)]
fn queue_full(id: &str, limit: usize) -> Event {
    Event::error(
        format!("the call queue is full ({limit} pending); {id} did not respond"),
        "queue_full",
        Some(id),
    )
}

/// The `turn-limit` event and the notice message of an agent that reached the turn limit.
#[cold]
#[inline(never)]
fn turn_limit_reached(
    agent: &crate::core::model::Agent,
    msg: &Message,
    notice_id: String,
    turn_limit: u32,
    now: Timestamp,
) -> (Event, Outgoing) {
    let event = Event::System(SystemEvent::TurnLimit {
        agent_name: agent.id.clone(),
        agent_display_name: agent.name.clone(),
        message_id: notice_id.clone(),
        turn_limit,
    });
    let notice = Outgoing {
        msg: Message {
            message_id: notice_id,
            chat_id: None,
            sender: agent.id.clone(),
            content: turn_limit_notice(turn_limit),
            created_at: now,
            reply_to_message_id: Some(msg.message_id.clone()),
            kind: MessageKind::TurnLimit,
            tool_calls: Vec::new(),
        },
        memory: Vec::new(),
        only_in: Some(msg.chat_id.clone()),
        keep_if_left: false,
        edit: Edit::None,
    };
    (event, notice)
}

/// The `debug` event of one agent's routing decision.
#[cold]
#[inline(never)]
fn debug_event(id: &str, msg: &Message, decision: Decision, reason: Why) -> Event {
    Event::System(SystemEvent::Debug {
        agent: id.to_string(),
        message_id: msg.message_id.clone(),
        decision,
        reason: reason.text(),
    })
}
