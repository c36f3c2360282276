//! Events (spec §8): four topics (`message`, `sse`, `system`, `world`) with the exact JS payload
//! names, and the [`EventBus`] that delivers them.
//!
//! Invariants:
//! - [`EventBus::emit`] only queues. The engine calls [`EventBus::flush`] once it has released
//!   every borrow of its state, so a callback may call back into the engine.
//! - A callback that fails (a throwing JS callback) never stops delivery to the others; the
//!   failure is reported as a `system` `error` event with code `callback_error`. A failure while
//!   delivering such a report is not reported again (no infinite recursion).
//! - `flush` is re-entrant safe: a flush called from inside a callback returns at once and the
//!   outer flush delivers what was queued meanwhile, in order.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use serde::Serialize;

use crate::core::json_write::{write_str, Obj, ToJson};
use crate::core::llm::types::Usage;
use crate::core::model::{Agent, Message, TitleSource, ToolCallRecord, WorldData};

/// The four callback lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Topic {
    Message,
    Sse,
    System,
    World,
}

impl Topic {
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::Message => "message",
            Topic::Sse => "sse",
            Topic::System => "system",
            Topic::World => "world",
        }
    }
}

/// The `type` of an SSE event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SseType {
    Start,
    Chunk,
    Reasoning,
    End,
    Error,
    /// A tool call whose arguments are complete (spec §9), before it runs.
    #[serde(rename = "tool-call")]
    ToolCall,
    /// What a tool call gave back: `result`, or `error` (refused arguments, a throwing,
    /// timing-out or non-JSON tool, an unknown tool).
    #[serde(rename = "tool-result")]
    ToolResult,
}

/// `{type, agentName, messageId, content?, error?, partialContent?, usage?}`. `messageId` is the
/// id of the message that will publish the reply (pre-allocated). `tool-call` events add
/// `toolCallId`, `toolName` and `args`; `tool-result` events `toolCallId`, `toolName` and
/// `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SseEvent {
    #[serde(rename = "type")]
    pub kind: SseType,
    pub agent_name: String,
    pub message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<crate::core::json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<crate::core::json::Value>,
}

/// What a routing decision was, for `debug` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// The agent will call the LLM.
    Respond,
    /// The agent stays silent.
    Ignore,
    /// The agent would respond but publishes the turn-limit notice instead.
    TurnLimit,
    /// The agent would respond but the queue was full.
    QueueFull,
}

/// Why nobody answers a human message (`unanswered` events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnansweredReason {
    /// It mentions agents, none at the start of a line (routing rule 5).
    MidLineMention,
    /// Its line-start mentions name no agent of the world.
    UnknownMention,
    /// The world has no agents.
    NoAgents,
}

/// `system` events: flat objects with a `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum SystemEvent {
    Error {
        message: String,
        code: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_name: Option<String>,
        /// With `agentName`: the agent's display name (`name`), for what a UI shows.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent_display_name: Option<String>,
        /// The storage failure's reason (`quota_exceeded`, `closed`, …) when `code` is
        /// `storage_error`.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// A failed reply: the id it would have had (its SSE `messageId`).
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        /// A failed reply: the message it answered. With `agentName`, what
        /// `regenerate(replyToMessageId, {agent})` takes to try again (spec §10).
        #[serde(skip_serializing_if = "Option::is_none")]
        reply_to_message_id: Option<String>,
    },
    TurnLimit {
        agent_name: String,
        /// The agent's display name (`name`), for what a UI shows.
        agent_display_name: String,
        /// The notice's id.
        message_id: String,
        turn_limit: u32,
    },
    ChatTitleUpdated {
        chat_id: String,
        name: String,
        title_source: TitleSource,
    },
    ChatSaved {
        chat_id: String,
        message_count: u64,
    },
    ChatReused {
        chat_id: String,
    },
    NewChatCreated {
        chat_id: String,
    },
    ChatLoaded {
        chat_id: String,
    },
    ChatDeleted {
        chat_id: String,
        new_current_chat_id: Option<String>,
    },
    Debug {
        agent: String,
        message_id: String,
        decision: Decision,
        reason: String,
    },
    /// A human message that no agent will answer (spec §8), emitted always (not only in debug)
    /// so a UI can say why instead of staying silent. `reason`: `mid-line-mention` (it
    /// mentions agents, none at a line start), `unknown-mention` (its line-start mentions name
    /// no agent of the world), `no-agents`. `mentions`: the mentions in question, as ids
    /// (the mid-line ones, the unknown line-start ones; every mention for `no-agents`).
    Unanswered {
        message_id: String,
        reason: UnansweredReason,
        mentions: Vec<String>,
    },
    /// A regenerated reply (spec §10) took the place of `oldMessageId`, which left the chat
    /// and every memory. Follows the new message's `message` event.
    MessageReplaced {
        old_message_id: String,
        message_id: String,
    },
    /// One LLM call (step) of a reply finished, after the tools it called ran (spec §9).
    StepFinish {
        agent_name: String,
        /// The reply's id (the SSE `messageId`).
        message_id: String,
        /// 1 for the first step.
        step: u32,
        /// The provider's finish reason; `null` when it gave none.
        finish_reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// The step's calls with their results or errors (empty for a step without calls).
        tool_calls: Vec<ToolCallRecord>,
    },
    /// A tool call waits for the application's answer (spec §9 "Approval"): `approve` or
    /// `deny` with `approvalId`.
    ApprovalRequest {
        approval_id: String,
        agent_name: String,
        /// The reply's id (the SSE `messageId`).
        message_id: String,
        tool_call_id: String,
        tool_name: String,
        args: crate::core::json::Value,
    },
    /// A pending approval was answered or cancelled.
    ApprovalResolved {
        approval_id: String,
        outcome: ApprovalOutcome,
    },
}

/// How a pending approval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalOutcome {
    Approved,
    Denied,
    Cancelled,
}

/// `world` lifecycle events.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum WorldEvent {
    AgentAdded {
        agent: Agent,
    },
    AgentUpdated {
        agent: Agent,
    },
    AgentRemoved {
        agent_id: String,
    },
    WorldUpdated {
        world: WorldData,
    },
    /// Another writer (another tab, a worker, another `World` on the same store) changed the
    /// world and this world reloaded its view (settings, agents, chats, the current chat's
    /// counters and memory windows); UIs re-read what they show.
    ExternalChange {
        world_id: String,
        current_chat_id: Option<String>,
    },
    /// No agent work pending.
    Idle,
}

/// One event on one topic. Serialises as the payload alone (the topic selects the callback list).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Event {
    Message(Message),
    Sse(SseEvent),
    System(SystemEvent),
    World(WorldEvent),
}

// ---- Writing (see `crate::core::json_write`: the derived form's field order and skip rules;
// `system` and `world` events are flat objects led by their `type`) ----

impl ToJson for Topic {
    fn write_json(&self, out: &mut String) {
        write_str(out, self.as_str());
    }
}

impl ToJson for SseType {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                SseType::Start => "start",
                SseType::Chunk => "chunk",
                SseType::Reasoning => "reasoning",
                SseType::End => "end",
                SseType::Error => "error",
                SseType::ToolCall => "tool-call",
                SseType::ToolResult => "tool-result",
            },
        );
    }
}

impl ToJson for SseEvent {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("type", &self.kind)
            .str("agentName", &self.agent_name)
            .str("messageId", &self.message_id)
            .opt("content", &self.content)
            .opt("error", &self.error)
            .opt("partialContent", &self.partial_content)
            .opt("usage", &self.usage)
            .opt("toolCallId", &self.tool_call_id)
            .opt("toolName", &self.tool_name)
            .opt("args", &self.args)
            .opt("result", &self.result)
            .end();
    }
}

impl ToJson for Decision {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                Decision::Respond => "respond",
                Decision::Ignore => "ignore",
                Decision::TurnLimit => "turn-limit",
                Decision::QueueFull => "queue-full",
            },
        );
    }
}

impl ToJson for UnansweredReason {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                UnansweredReason::MidLineMention => "mid-line-mention",
                UnansweredReason::UnknownMention => "unknown-mention",
                UnansweredReason::NoAgents => "no-agents",
            },
        );
    }
}

impl ToJson for SystemEvent {
    fn write_json(&self, out: &mut String) {
        let mut o = Obj::new(out);
        match self {
            SystemEvent::Error {
                message,
                code,
                agent_name,
                agent_display_name,
                reason,
                message_id,
                reply_to_message_id,
            } => o
                .str("type", "error")
                .str("message", message)
                .str("code", code)
                .opt("agentName", agent_name)
                .opt("agentDisplayName", agent_display_name)
                .opt("reason", reason)
                .opt("messageId", message_id)
                .opt("replyToMessageId", reply_to_message_id),
            SystemEvent::TurnLimit {
                agent_name,
                agent_display_name,
                message_id,
                turn_limit,
            } => o
                .str("type", "turn-limit")
                .str("agentName", agent_name)
                .str("agentDisplayName", agent_display_name)
                .str("messageId", message_id)
                .field("turnLimit", turn_limit),
            SystemEvent::ChatTitleUpdated {
                chat_id,
                name,
                title_source,
            } => o
                .str("type", "chat-title-updated")
                .str("chatId", chat_id)
                .str("name", name)
                .field("titleSource", title_source),
            SystemEvent::ChatSaved {
                chat_id,
                message_count,
            } => o
                .str("type", "chat-saved")
                .str("chatId", chat_id)
                .field("messageCount", message_count),
            SystemEvent::ChatReused { chat_id } => {
                o.str("type", "chat-reused").str("chatId", chat_id)
            }
            SystemEvent::NewChatCreated { chat_id } => {
                o.str("type", "new-chat-created").str("chatId", chat_id)
            }
            SystemEvent::ChatLoaded { chat_id } => {
                o.str("type", "chat-loaded").str("chatId", chat_id)
            }
            SystemEvent::ChatDeleted {
                chat_id,
                new_current_chat_id,
            } => o
                .str("type", "chat-deleted")
                .str("chatId", chat_id)
                .field("newCurrentChatId", new_current_chat_id),
            SystemEvent::Debug {
                agent,
                message_id,
                decision,
                reason,
            } => o
                .str("type", "debug")
                .str("agent", agent)
                .str("messageId", message_id)
                .field("decision", decision)
                .str("reason", reason),
            SystemEvent::Unanswered {
                message_id,
                reason,
                mentions,
            } => o
                .str("type", "unanswered")
                .str("messageId", message_id)
                .field("reason", reason)
                .field("mentions", mentions),
            SystemEvent::MessageReplaced {
                old_message_id,
                message_id,
            } => o
                .str("type", "message-replaced")
                .str("oldMessageId", old_message_id)
                .str("messageId", message_id),
            SystemEvent::StepFinish {
                agent_name,
                message_id,
                step,
                finish_reason,
                usage,
                tool_calls,
            } => o
                .str("type", "step-finish")
                .str("agentName", agent_name)
                .str("messageId", message_id)
                .field("step", step)
                .field("finishReason", finish_reason)
                .opt("usage", usage)
                .field("toolCalls", tool_calls),
            SystemEvent::ApprovalRequest {
                approval_id,
                agent_name,
                message_id,
                tool_call_id,
                tool_name,
                args,
            } => o
                .str("type", "approval-request")
                .str("approvalId", approval_id)
                .str("agentName", agent_name)
                .str("messageId", message_id)
                .str("toolCallId", tool_call_id)
                .str("toolName", tool_name)
                .field("args", args),
            SystemEvent::ApprovalResolved {
                approval_id,
                outcome,
            } => o
                .str("type", "approval-resolved")
                .str("approvalId", approval_id)
                .field("outcome", outcome),
        }
        .end();
    }
}

impl ToJson for ApprovalOutcome {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                ApprovalOutcome::Approved => "approved",
                ApprovalOutcome::Denied => "denied",
                ApprovalOutcome::Cancelled => "cancelled",
            },
        );
    }
}

impl ToJson for WorldEvent {
    fn write_json(&self, out: &mut String) {
        let mut o = Obj::new(out);
        match self {
            WorldEvent::AgentAdded { agent } => o.str("type", "agent-added").field("agent", agent),
            WorldEvent::AgentUpdated { agent } => {
                o.str("type", "agent-updated").field("agent", agent)
            }
            WorldEvent::AgentRemoved { agent_id } => {
                o.str("type", "agent-removed").str("agentId", agent_id)
            }
            WorldEvent::WorldUpdated { world } => {
                o.str("type", "world-updated").field("world", world)
            }
            WorldEvent::ExternalChange {
                world_id,
                current_chat_id,
            } => o
                .str("type", "external-change")
                .str("worldId", world_id)
                .field("currentChatId", current_chat_id),
            WorldEvent::Idle => o.str("type", "idle"),
        }
        .end();
    }
}

impl ToJson for Event {
    fn write_json(&self, out: &mut String) {
        match self {
            Event::Message(m) => m.write_json(out),
            Event::Sse(e) => e.write_json(out),
            Event::System(e) => e.write_json(out),
            Event::World(e) => e.write_json(out),
        }
    }
}

impl Event {
    pub fn topic(&self) -> Topic {
        match self {
            Event::Message(_) => Topic::Message,
            Event::Sse(_) => Topic::Sse,
            Event::System(_) => Topic::System,
            Event::World(_) => Topic::World,
        }
    }

    /// A `system` `error` event.
    pub fn error(message: impl Into<String>, code: &str, agent_name: Option<&str>) -> Event {
        Event::System(SystemEvent::Error {
            message: message.into(),
            code: code.to_string(),
            agent_name: agent_name.map(str::to_string),
            agent_display_name: None,
            reason: None,
            message_id: None,
            reply_to_message_id: None,
        })
    }

    /// The `system` `error` event of a failed reply of `agent_name`: `reply_id` is the id the
    /// reply would have had, `trigger_id` the message it answered.
    pub fn reply_error(
        message: String,
        code: &str,
        agent_name: &str,
        reply_id: &str,
        trigger_id: &str,
    ) -> Event {
        Event::System(SystemEvent::Error {
            message,
            code: code.to_string(),
            agent_name: Some(agent_name.to_string()),
            agent_display_name: None,
            reason: None,
            message_id: Some(reply_id.to_string()),
            reply_to_message_id: Some(trigger_id.to_string()),
        })
    }

    /// The `system` `error` event of an engine error, with its `reason` when it has one.
    pub fn world_error(e: &crate::core::error::WorldError, agent_name: Option<&str>) -> Event {
        Event::System(SystemEvent::Error {
            message: e.to_string(),
            code: e.code().to_string(),
            agent_name: agent_name.map(str::to_string),
            agent_display_name: None,
            reason: e.reason().map(str::to_string),
            message_id: None,
            reply_to_message_id: None,
        })
    }
}

/// A subscriber. `Err` is a failed (thrown) callback, with its message.
pub type Callback = Rc<dyn Fn(&Event) -> Result<(), String>>;

/// Identifies one subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

/// A subscription handle: dropping it unsubscribes (call [`Subscription::forget`] to keep the
/// callback for the bus's lifetime, e.g. when JS keeps the unsubscribe function instead).
pub struct Subscription {
    bus: Weak<EventBus>,
    id: SubscriptionId,
}

impl Subscription {
    pub fn id(&self) -> SubscriptionId {
        self.id
    }

    /// Keeps the callback subscribed after this handle is dropped.
    pub fn forget(mut self) -> SubscriptionId {
        self.bus = Weak::new();
        self.id
    }

    /// Unsubscribes now.
    pub fn unsubscribe(self) {}
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(bus) = self.bus.upgrade() {
            bus.unsubscribe(self.id);
        }
    }
}

/// The callback lists and the pending-event queue.
#[derive(Default)]
pub struct EventBus {
    subs: RefCell<Vec<(SubscriptionId, Topic, Callback)>>,
    /// Subscriptions of the engine or binding itself (not the application's): they do not
    /// count as listeners in [`EventBus::has_listeners`].
    internal: RefCell<Vec<SubscriptionId>>,
    next_id: Cell<u64>,
    /// `(event, is a callback_error report)`.
    queue: RefCell<Vec<(Event, bool)>>,
    delivering: Cell<bool>,
    /// The callbacks of the event being delivered (a buffer reused from event to event).
    targets: Cell<Vec<Callback>>,
}

impl EventBus {
    pub fn new() -> Rc<Self> {
        Rc::new(Self::default())
    }

    /// Adds a callback for `topic`; the handle unsubscribes on drop.
    pub fn subscribe(self: &Rc<Self>, topic: Topic, cb: Callback) -> Subscription {
        let id = SubscriptionId(self.next_id.get());
        self.next_id.set(id.0 + 1);
        self.subs.borrow_mut().push((id, topic, cb));
        Subscription {
            bus: Rc::downgrade(self),
            id,
        }
    }

    /// [`EventBus::subscribe`] for the library's own callbacks (see `has_listeners`).
    pub fn subscribe_internal(self: &Rc<Self>, topic: Topic, cb: Callback) -> Subscription {
        let sub = self.subscribe(topic, cb);
        self.internal.borrow_mut().push(sub.id);
        sub
    }

    /// Whether the application listens to `topic` (internal subscriptions aside): an LLM
    /// error nobody listens to is warned about on the console by the binding.
    pub fn has_listeners(&self, topic: Topic) -> bool {
        let internal = self.internal.borrow();
        self.subs
            .borrow()
            .iter()
            .any(|(id, t, _)| *t == topic && !internal.contains(id))
    }

    /// Removes a callback; `false` when it was not subscribed.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        self.internal.borrow_mut().retain(|i| *i != id);
        let mut subs = self.subs.borrow_mut();
        let before = subs.len();
        subs.retain(|(i, _, _)| *i != id);
        subs.len() != before
    }

    /// Queues an event (delivered by the next [`EventBus::flush`]).
    pub fn emit(&self, e: Event) {
        self.queue.borrow_mut().push((e, false));
    }

    /// Delivers every queued event, in order, to the callbacks of its topic.
    pub fn flush(&self) {
        if self.delivering.replace(true) {
            return;
        }
        loop {
            let next = crate::core::pop_front(&mut self.queue.borrow_mut());
            let Some((event, is_report)) = next else {
                break;
            };
            let topic = event.topic();
            // The callbacks are cloned out first (a callback may subscribe or unsubscribe),
            // into a buffer kept for the next event: a streamed reply delivers one event per
            // token, and an allocation per event showed in its cost.
            let mut targets = self.targets.take();
            for (_, t, cb) in self.subs.borrow().iter() {
                if *t == topic {
                    targets.push(cb.clone());
                }
            }
            for cb in &targets {
                if let Err(msg) = cb(&event) {
                    if !is_report {
                        self.queue.borrow_mut().push((
                            Event::error(
                                format!("a '{}' event callback failed: {msg}", topic.as_str()),
                                "callback_error",
                                None,
                            ),
                            true,
                        ));
                    }
                }
            }
            targets.clear();
            self.targets.set(targets);
        }
        self.delivering.set(false);
    }
}

#[cfg(test)]
mod listener_tests {
    use super::*;

    #[test]
    fn internal_subscriptions_are_not_listeners() {
        let bus = EventBus::new();
        assert!(!bus.has_listeners(Topic::System));
        let internal = bus.subscribe_internal(Topic::System, Rc::new(|_: &Event| Ok(())));
        assert!(!bus.has_listeners(Topic::System));
        let app = bus.subscribe(Topic::System, Rc::new(|_: &Event| Ok(())));
        assert!(bus.has_listeners(Topic::System));
        assert!(!bus.has_listeners(Topic::Sse));
        drop(app);
        assert!(!bus.has_listeners(Topic::System));
        drop(internal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collector(bus: &Rc<EventBus>, topic: Topic) -> (Rc<RefCell<Vec<Event>>>, Subscription) {
        let got = Rc::new(RefCell::new(Vec::new()));
        let g = got.clone();
        let sub = bus.subscribe(
            topic,
            Rc::new(move |e: &Event| {
                g.borrow_mut().push(e.clone());
                Ok(())
            }),
        );
        (got, sub)
    }

    #[test]
    fn events_wait_for_flush_and_go_to_their_topic() {
        let bus = EventBus::new();
        let (sys, _s1) = collector(&bus, Topic::System);
        let (world, _s2) = collector(&bus, Topic::World);
        bus.emit(Event::World(WorldEvent::Idle));
        assert!(world.borrow().is_empty());
        bus.flush();
        assert_eq!(world.borrow().len(), 1);
        assert!(sys.borrow().is_empty());
    }

    #[test]
    fn failing_callback_is_reported_once_and_others_still_receive() {
        let bus = EventBus::new();
        let _bad_world = bus.subscribe(Topic::World, Rc::new(|_| Err("boom".to_string())));
        let _bad_sys = bus.subscribe(Topic::System, Rc::new(|_| Err("again".to_string())));
        let (world, _s) = collector(&bus, Topic::World);
        let (sys, _s2) = collector(&bus, Topic::System);
        bus.emit(Event::World(WorldEvent::Idle));
        bus.flush();
        assert_eq!(world.borrow().len(), 1);
        let sys = sys.borrow();
        assert_eq!(sys.len(), 1, "the report is not reported again");
        match sys.first() {
            Some(Event::System(SystemEvent::Error { code, message, .. })) => {
                assert_eq!(code, "callback_error");
                assert!(message.contains("boom"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn dropping_the_handle_unsubscribes() {
        let bus = EventBus::new();
        let (got, sub) = collector(&bus, Topic::World);
        drop(sub);
        bus.emit(Event::World(WorldEvent::Idle));
        bus.flush();
        assert!(got.borrow().is_empty());
        let (got2, sub2) = collector(&bus, Topic::World);
        let _id = sub2.forget();
        bus.emit(Event::World(WorldEvent::Idle));
        bus.flush();
        assert_eq!(got2.borrow().len(), 1);
    }

    #[test]
    fn payloads_use_js_names() {
        let e = Event::System(SystemEvent::ChatDeleted {
            chat_id: "c".into(),
            new_current_chat_id: None,
        });
        let v = crate::core::json::to_value(&e);
        assert_eq!(v["type"], "chat-deleted");
        assert_eq!(v["chatId"], "c");
        assert!(v["newCurrentChatId"].is_null());
        let e = Event::Sse(SseEvent {
            kind: SseType::Error,
            agent_name: "a".into(),
            message_id: "m".into(),
            content: None,
            error: Some("x".into()),
            partial_content: Some("p".into()),
            usage: None,
            tool_call_id: None,
            tool_name: None,
            args: None,
            result: None,
        });
        let v = crate::core::json::to_value(&e);
        assert_eq!(v["type"], "error");
        assert_eq!(v["agentName"], "a");
        assert_eq!(v["partialContent"], "p");
        let v = crate::core::json::to_value(&Event::World(WorldEvent::Idle));
        assert_eq!(v["type"], "idle");
        let v = serde_json::to_value(Event::System(SystemEvent::TurnLimit {
            agent_name: "a".into(),
            agent_display_name: "A".into(),
            message_id: "n".into(),
            turn_limit: 5,
        }))
        .unwrap_or_default();
        assert_eq!(v["turnLimit"], 5);
        assert_eq!(v["agentDisplayName"], "A");
        assert_eq!(v["type"], "turn-limit");
    }
}
