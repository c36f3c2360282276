//! The world engine: a [`World`] holds the injected store, LLM client, clock and id source, its
//! state in a `RefCell` (borrowed briefly, never across an await) and an event bus.
//!
//! Invariants:
//! - Executor-agnostic and `?Send`; it never spawns. `send` publishes and routes; the caller
//!   (the JS binding) then drives [`World::run_until_idle`], which runs the queued LLM calls.
//! - Every logical change takes the world's write lock for plan → persist (one store batch) →
//!   commit to RAM, so RAM mirrors what the store committed; a failed batch changes nothing.
//!   The write lock is this world's local lock. Writers in other tabs, workers or other
//!   `World`s on the same store are kept apart by the batch itself: it carries the revision
//!   its view mirrors ([`StoreOp::ExpectRevision`]), the store refuses it when another writer
//!   moved the world ([`Store::revision`]), and the change is planned again from the reloaded
//!   view (`engine/shared.rs`), so no batch commits a stale `messageCount`, counter or memory
//!   window; a reload emits `world` `external-change`.
//! - Every storage failure of a change is also reported as a `system` `error` event (with its
//!   `reason`); the change is not applied and the world stays usable.
//! - Events are queued while state is borrowed and flushed once every borrow is released.
//! - RAM stays bounded: per agent only the last `historyLimit` memory entries of the current chat
//!   are kept; messages are read from the store a page at a time.
//!
//! Choices where the spec is silent:
//! - After the last chat is deleted, session mode stays on: `currentChatId` is `null` (spec §6)
//!   and the next message sent starts a new chat (`new-chat-created`); see
//!   `State::no_chat_left`. Only `setSessionMode(false)` turns session mode off.
//! - Same-millisecond chat updates keep their order through `updatedAt` itself
//!   (`State::chat_update_time`).
//! - Renaming a world or an agent never changes its id.
//! - The debug flag ([`World::set_debug`]) and the queue settings are runtime-only.
//! - `lastActive` changes in RAM when the agent publishes; it is persisted with the next write of
//!   the agent record.
//! - `World::list` sorts by name; `list_chats` by `updatedAt` (newest first).
//!
//! ```
//! use std::rc::Rc;
//! use agent_world_wasm::core::clock::{ManualClock, SequentialIds};
//! use agent_world_wasm::core::engine::{Services, World};
//! use agent_world_wasm::core::events::{Event, Topic};
//! use agent_world_wasm::core::testing::ScriptedLlm;
//! use agent_world_wasm::core::memory_store::MemoryStore;
//! use agent_world_wasm::core::model::{CreateWorld, NewAgent};
//!
//! let llm = Rc::new(ScriptedLlm::new());
//! let svc = Services {
//!     store: Rc::new(MemoryStore::new()),
//!     llm: llm.clone(),
//!     clock: Rc::new(ManualClock::new(0)),
//!     ids: Rc::new(SequentialIds::new("id")),
//! };
//! futures_executor::block_on(async {
//!     let world = World::create(svc, CreateWorld { name: "My World".into(), ..Default::default() })
//!         .await?;
//!     let _sub = world.on(Topic::Message, Rc::new(|e: &Event| {
//!         println!("{}", serde_json::to_string(e).unwrap_or_default());
//!         Ok(())
//!     }));
//!     world.add_agent(NewAgent {
//!         name: "Alice".into(),
//!         provider: "openai".into(),
//!         model: "gpt-4o-mini".into(),
//!         ..Default::default()
//!     }).await?;
//!     llm.reply("gpt-4o-mini", "Hi! How can I help?");
//!     world.send("Hello everyone!", None).await?;
//!     world.run_until_idle().await; // the JS binding spawns this after each send
//!     let chat = world.current_chat().map(|c| c.id).unwrap_or_default();
//!     assert_eq!(world.messages(&chat, None, 50).await?.len(), 2);
//!     Ok::<(), agent_world_wasm::core::error::WorldError>(())
//! })
//! .unwrap_or_else(|e| panic!("{e}"));
//! ```

mod approvals;
mod chats;
mod editing;
mod responder;
mod routing;
mod settings;
mod shared;
mod steps;
mod tools;
mod transfer;

use std::cell::{Cell, Ref, RefCell, RefMut};
use std::rc::Rc;
use std::task::Waker;

use crate::core::clock::{Clock, IdSource};
use crate::core::error::WorldError;
use crate::core::events::{Callback, Event, EventBus, Subscription, Topic};
use crate::core::ids::world_id;
use crate::core::llm_client::{CancelToken, LlmClient};
use crate::core::lock::WriteLock;
use crate::core::model::{
    validate_chat_llm_provider, validate_history_limit, validate_name, validate_text,
    validate_turn_limit, Agent, Chat, CreateWorld, MemoryEntry, Message, Timestamp, TitleSource,
    WorldData, DEFAULT_HISTORY_LIMIT, NEW_CHAT_NAME,
};
use crate::core::sort::sort_by;
use crate::core::store::{Store, StoreError, StoreOp};

pub use tools::{InstructionsProvider, InstructionsRequest};
pub use transfer::FORMAT_VERSION;

/// Default bound of the call queue (spec §7).
pub const DEFAULT_QUEUE_LIMIT: usize = 100;
/// Default number of LLM calls in flight per world (spec §7).
pub const DEFAULT_CONCURRENCY: usize = 1;

/// An agent with its RAM state: the memory window of the current chat (oldest first, at most
/// the agent's effective `historyLimit` entries).
#[derive(Debug, Clone)]
pub(crate) struct AgentRt {
    pub(crate) agent: Agent,
    pub(crate) memory: Vec<MemoryEntry>,
}

/// Drops the oldest entries of a memory window beyond `cap`.
pub(crate) fn keep_last(memory: &mut Vec<MemoryEntry>, cap: usize) {
    if memory.len() > cap {
        memory.drain(..memory.len() - cap);
    }
}

/// `agents` with empty memory windows, for a reader that fills or clears every window itself
/// (a chat's state read from the store, a deleted current chat): copying the windows only to
/// replace them cost every entry of every agent, and the windows' clone code in the module.
pub(crate) fn without_windows(agents: &[AgentRt]) -> Vec<AgentRt> {
    let mut out = Vec::with_capacity(agents.len());
    for a in agents {
        out.push(AgentRt {
            agent: a.agent.clone(),
            memory: Vec::new(),
        });
    }
    out
}

/// The LLM title waiting for the world to become idle (spec §6 "LLM title").
#[derive(Debug, Clone)]
pub(crate) struct TitleCandidate {
    pub(crate) chat_id: String,
    pub(crate) human_id: String,
    pub(crate) human: String,
    /// `(agent id, reply)` of the first reply to the human message.
    pub(crate) reply: Option<(String, String)>,
}

#[derive(Debug, Clone)]
pub(crate) enum JobKind {
    /// `agent_id` answers `trigger`; the reply will be published with id `reply_id`.
    Reply {
        agent_id: String,
        trigger: Message,
        reply_id: String,
        /// `Some`: a regeneration (spec §10) of the reply `Some(id)` (or of a failed reply,
        /// `None`): the input is the memory as it was before that reply, and the new reply
        /// takes its place.
        regenerate: Option<Option<String>>,
    },
    /// Resumes a reply that waited for an approval (spec §9), with the application's answer.
    /// Not a new turn: the turn was counted when the reply started.
    Resume {
        approval: crate::core::approval::ApprovalRecord,
        decision: approvals::Decision,
    },
    /// Finishes cancelling a pending approval (its events were emitted when it was cancelled):
    /// deletes its record and keeps the reply's partial text as an `interrupted` message.
    /// Queued because `stop()` is synchronous and this needs the store; never cancelled itself.
    CancelApproval {
        approval: crate::core::approval::ApprovalRecord,
        /// Whether its record was stored (else it lived in RAM only).
        stored: bool,
    },
    /// A chat title call (not a turn, no SSE).
    Title {
        chat_id: String,
        prompt: String,
        fallback: Option<String>,
        provider: String,
        model: String,
    },
}

/// A queued LLM call. `chat_id` is the chat current when it was enqueued.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) id: u64,
    pub(crate) chat_id: Option<String>,
    pub(crate) cancel: CancelToken,
    pub(crate) kind: JobKind,
}

impl Job {
    fn agent_id(&self) -> Option<&str> {
        match &self.kind {
            JobKind::Reply { agent_id, .. } => Some(agent_id),
            JobKind::Resume { approval, .. } => Some(&approval.agent_id),
            JobKind::Title { .. } | JobKind::CancelApproval { .. } => None,
        }
    }

    /// The message a reply call answers.
    fn trigger_id(&self) -> Option<&str> {
        match &self.kind {
            JobKind::Reply { trigger, .. } => Some(&trigger.message_id),
            JobKind::Resume { approval, .. } => Some(&approval.trigger.message_id),
            JobKind::Title { .. } | JobKind::CancelApproval { .. } => None,
        }
    }
}

/// What a cancellation predicate sees of a queued or running call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallRef<'a> {
    pub(crate) agent_id: Option<&'a str>,
    pub(crate) chat_id: Option<&'a str>,
    /// The message a reply call answers (`None` for title calls).
    pub(crate) trigger_id: Option<&'a str>,
}

/// A call that left the queue and has not finished.
#[derive(Debug, Clone)]
pub(crate) struct Flight {
    pub(crate) id: u64,
    pub(crate) chat_id: Option<String>,
    pub(crate) agent_id: Option<String>,
    pub(crate) trigger_id: Option<String>,
    pub(crate) cancel: CancelToken,
}

pub(crate) struct State {
    pub(crate) world: WorldData,
    /// In the order they were added (routing order).
    pub(crate) agents: Vec<AgentRt>,
    /// Metadata of every chat of the world, in creation order.
    pub(crate) chats: Vec<Chat>,
    pub(crate) queue: Vec<Job>,
    pub(crate) in_flight: Vec<Flight>,
    pub(crate) queue_limit: usize,
    pub(crate) concurrency: usize,
    pub(crate) debug: bool,
    pub(crate) title: Option<TitleCandidate>,
    pub(crate) next_job: u64,
    /// Bumped by every cancellation; a publish planned in an older epoch enqueues nothing.
    pub(crate) epoch: u64,
    /// Session mode is on but its last chat was deleted: `world.current_chat_id` is `None`
    /// (what JS sees, spec §6 `deleteChat`), and the next message sent starts a new chat
    /// (`new-chat-created`) instead of being kept nowhere. Holds the deleted chat's id: the
    /// stored world record keeps pointing at it, and a pointer to a chat that no longer exists
    /// is how the store says "no chat left" (an explicit `null` is session mode off). Deleting
    /// the last chat thus writes nothing but the delete, which works over quota.
    pub(crate) no_chat_left: Option<String>,
    /// The pending approvals of the current chat (or, with session mode off, of RAM), oldest
    /// first (spec §9 "Approval"; `engine/approvals.rs`).
    pub(crate) approvals: Vec<crate::core::approval::ApprovalRecord>,
    /// Ids of `approvals` whose record the store refused: pending in RAM only (kept across a
    /// reload of the view, lost on reopen).
    pub(crate) unstored: Vec<String>,
    /// Memory entries of running calls not written yet (session mode on): the message M each
    /// responding agent saved when its call left the queue (spec §5 step 1). They count as the
    /// agent's memory (its LLM input holds them) and are written with that agent's next write
    /// of the chat's memory, usually its reply, so a reply is one store batch instead of two;
    /// a call that publishes nothing (failure, empty reply, dropped reply) writes them on its
    /// own when it ends (`responder.rs`). Not in `AgentRt::memory`, which mirrors the store.
    pub(crate) unsaved: Vec<Unsaved>,
    pub(crate) next_unsaved: u64,
}

/// A memory entry waiting for its agent's next write (see `State::unsaved`).
#[derive(Debug, Clone)]
pub(crate) struct Unsaved {
    pub(crate) id: u64,
    pub(crate) agent_id: String,
    pub(crate) chat_id: String,
    pub(crate) entry: MemoryEntry,
}

impl Unsaved {
    /// The store op that writes this entry into its chat's memory of its agent.
    pub(crate) fn op(&self, world_id: &str) -> StoreOp {
        StoreOp::AppendMemory {
            world_id: world_id.to_string(),
            chat_id: self.chat_id.clone(),
            agent_id: self.agent_id.clone(),
            entry: self.entry.clone(),
        }
    }
}

impl State {
    pub(crate) fn agent_index(&self, id: &str) -> Option<usize> {
        self.agents.iter().position(|a| a.agent.id == id)
    }

    pub(crate) fn history_limit(&self, a: &Agent) -> usize {
        a.history_limit.unwrap_or(self.world.history_limit).max(1) as usize
    }

    pub(crate) fn current_chat(&self) -> Option<&Chat> {
        let id = self.world.current_chat_id.as_deref()?;
        self.chats.iter().find(|c| c.id == id)
    }

    /// The world record as the store keeps it: with the dangling pointer of
    /// `State::no_chat_left` in place of `null`.
    pub(crate) fn stored_world(&self) -> WorldData {
        let mut w = self.world.clone();
        if w.current_chat_id.is_none() {
            w.current_chat_id = self.no_chat_left.clone();
        }
        w
    }

    /// The `updatedAt` of a chat updated at `now`: `now`, or one millisecond after the most
    /// recently updated chat of the world when that is not earlier (spec §4: chats updated in
    /// the same millisecond are ordered by the order of their updates). So no two chats of a
    /// world share an `updatedAt`, and the order survives a reopen in every store without a
    /// field of its own; the time runs ahead of the clock only by the number of updates made
    /// within one millisecond (or while the clock stepped back).
    pub(crate) fn chat_update_time(&self, now: Timestamp) -> Timestamp {
        match self.chats.iter().map(|c| c.updated_at).max() {
            Some(latest) if latest >= now => Timestamp(latest.0.saturating_add(1)),
            _ => now,
        }
    }

    /// Appends to an agent's RAM window, keeping it within the agent's history limit.
    pub(crate) fn remember(&mut self, agent_id: &str, entry: MemoryEntry) {
        let Some(i) = self.agent_index(agent_id) else {
            return;
        };
        let cap = self
            .agents
            .get(i)
            .map(|a| self.history_limit(&a.agent))
            .unwrap_or(1);
        if let Some(a) = self.agents.get_mut(i) {
            a.memory.push(entry);
            keep_last(&mut a.memory, cap);
        }
    }

    /// The unsaved entries of `agent_id` in chat `chat_id`, oldest first.
    pub(crate) fn unsaved_of<'a>(
        &'a self,
        agent_id: &'a str,
        chat_id: &'a str,
    ) -> impl Iterator<Item = &'a Unsaved> + 'a {
        self.unsaved
            .iter()
            .filter(move |u| u.agent_id == agent_id && u.chat_id == chat_id)
    }

    /// Copies of the unsaved entries of `agent_id` in chat `chat_id`, oldest first (a plain
    /// loop: an iterator chain instantiates its own adapters).
    pub(crate) fn unsaved_cloned(&self, agent_id: &str, chat_id: &str) -> Vec<Unsaved> {
        let mut held = Vec::new();
        for u in &self.unsaved {
            if u.agent_id == agent_id && u.chat_id == chat_id {
                held.push(u.clone());
            }
        }
        held
    }

    /// Marks entries written (or dropped): they leave `unsaved`.
    pub(crate) fn saved(&mut self, ids: &[u64]) {
        if !ids.is_empty() {
            self.unsaved.retain(|u| !ids.contains(&u.id));
        }
    }

    /// Every agent starts with empty memory and `llmCallCount = 0` (RAM only).
    pub(crate) fn reset_agents(&mut self) {
        for a in &mut self.agents {
            a.memory.clear();
            a.agent.llm_call_count = 0;
            a.agent.last_llm_call = None;
        }
    }
}

pub(crate) struct Inner {
    pub(crate) store: Rc<dyn Store>,
    pub(crate) llm: Rc<dyn LlmClient>,
    pub(crate) clock: Rc<dyn Clock>,
    pub(crate) ids: Rc<dyn IdSource>,
    pub(crate) bus: Rc<EventBus>,
    pub(crate) state: RefCell<State>,
    pub(crate) lock: WriteLock,
    /// The store's revision of this world that RAM mirrors (`None`: not tracked).
    pub(crate) seen_rev: Cell<Option<u64>>,
    pub(crate) running: Cell<bool>,
    pub(crate) queue_waker: RefCell<Option<Waker>>,
    /// Registered tools and dynamic instructions (runtime only, spec §9).
    pub(crate) runtime: RefCell<tools::Runtime>,
}

/// A world [`World::plan_create`] checked and [`World::create_planned`] writes.
pub struct NewWorld {
    world: WorldData,
    chat: Chat,
}

/// The services a world runs on (all injected).
#[derive(Clone)]
pub struct Services {
    pub store: Rc<dyn Store>,
    pub llm: Rc<dyn LlmClient>,
    pub clock: Rc<dyn Clock>,
    pub ids: Rc<dyn IdSource>,
}

/// An open world. Cloning gives another handle to the same world.
#[derive(Clone)]
pub struct World {
    pub(crate) inner: Rc<Inner>,
}

/// A handle that does not keep the world alive (for listeners the world must outlive).
#[derive(Clone)]
pub struct WeakWorld(std::rc::Weak<Inner>);

impl WeakWorld {
    pub fn upgrade(&self) -> Option<World> {
        self.0.upgrade().map(|inner| World { inner })
    }
}

impl World {
    fn from_parts(svc: Services, view: View, rev: Option<u64>) -> Self {
        let View {
            world,
            agents,
            chats,
            no_chat_left,
            approvals,
            revision: _,
        } = view;
        World {
            inner: Rc::new(Inner {
                store: svc.store,
                llm: svc.llm,
                clock: svc.clock,
                ids: svc.ids,
                bus: EventBus::new(),
                state: RefCell::new(State {
                    world,
                    agents,
                    chats,
                    queue: Vec::new(),
                    in_flight: Vec::new(),
                    queue_limit: DEFAULT_QUEUE_LIMIT,
                    concurrency: DEFAULT_CONCURRENCY,
                    debug: false,
                    title: None,
                    next_job: 1,
                    epoch: 0,
                    no_chat_left,
                    approvals,
                    unstored: Vec::new(),
                    unsaved: Vec::new(),
                    next_unsaved: 1,
                }),
                lock: WriteLock::default(),
                seen_rev: Cell::new(rev),
                running: Cell::new(false),
                queue_waker: RefCell::new(None),
                runtime: RefCell::new(tools::Runtime::default()),
            }),
        }
    }

    pub fn downgrade(&self) -> WeakWorld {
        WeakWorld(Rc::downgrade(&self.inner))
    }

    pub(crate) fn st(&self) -> Ref<'_, State> {
        self.inner.state.borrow()
    }

    pub(crate) fn st_mut(&self) -> RefMut<'_, State> {
        self.inner.state.borrow_mut()
    }

    pub(crate) fn now(&self) -> Timestamp {
        Timestamp(self.inner.clock.now_ms())
    }

    pub(crate) fn emit(&self, e: Event) {
        self.inner.bus.emit(self.with_display_name(e));
    }

    /// An `error` event naming an agent gets its display name (`agentDisplayName`), for what
    /// a UI shows. Skipped, harmlessly, if the state is borrowed at that moment.
    fn with_display_name(&self, mut e: Event) -> Event {
        if let Event::System(crate::core::events::SystemEvent::Error {
            agent_name: Some(id),
            agent_display_name: display @ None,
            ..
        }) = &mut e
        {
            if let Ok(st) = self.inner.state.try_borrow() {
                *display = st
                    .agent_index(id)
                    .and_then(|i| st.agents.get(i))
                    .map(|a| a.agent.name.clone());
            }
        }
        e
    }

    /// Delivers queued events. Only called where no state borrow is held.
    pub(crate) fn flush(&self) {
        self.inner.bus.flush();
    }

    pub(crate) fn emit_all(&self, events: Vec<Event>) {
        for e in events {
            self.inner.bus.emit(self.with_display_name(e));
        }
        self.flush();
    }

    pub(crate) fn wake_runner(&self) {
        let w = self.inner.queue_waker.borrow_mut().take();
        if let Some(w) = w {
            w.wake();
        }
    }

    /// Creates a world (id = kebab(name)) with one empty chat, session mode on.
    pub async fn create(svc: Services, input: CreateWorld) -> Result<World, WorldError> {
        let plan = Self::plan_create(&*svc.clock, &*svc.ids, input)?;
        Self::create_planned(svc, plan).await
    }

    /// The checked settings and first chat of a world to create: all of `create` that needs
    /// no store, so that a caller can run it while the store opens (a cold start).
    pub fn plan_create(
        clock: &dyn Clock,
        ids: &dyn IdSource,
        input: CreateWorld,
    ) -> Result<NewWorld, WorldError> {
        let id = world_id(&input.name)?;
        let name = validate_name("name", &input.name)?;
        let turn_limit = validate_turn_limit(input.turn_limit)?;
        let history_limit = match input.history_limit {
            Some(h) => validate_history_limit("historyLimit", h)?,
            None => DEFAULT_HISTORY_LIMIT,
        };
        let description = validate_text("description", input.description)?;
        let chat_llm_provider = validate_chat_llm_provider(input.chat_llm_provider)?;
        let chat_llm_model = input.chat_llm_model.filter(|s| !s.trim().is_empty());
        let now = Timestamp(clock.now_ms());
        let chat = Chat {
            id: ids.new_id(),
            world_id: id.clone(),
            name: NEW_CHAT_NAME.to_string(),
            description: None,
            message_count: 0,
            title_source: TitleSource::Default,
            created_at: now,
            updated_at: now,
        };
        let world = WorldData {
            id,
            name,
            description,
            turn_limit,
            history_limit,
            current_chat_id: Some(chat.id.clone()),
            chat_llm_provider,
            chat_llm_model,
            created_at: now,
            last_updated: now,
        };
        Ok(NewWorld { world, chat })
    }

    /// Writes a world planned by [`World::plan_create`] and opens it; `world_exists` when a
    /// world with its id is stored.
    pub async fn create_planned(svc: Services, plan: NewWorld) -> Result<World, WorldError> {
        let NewWorld { world, chat } = plan;
        // No world lock and no read after the write (a cold start pays for each): the
        // revision and the existence check are read together, and the write carries that
        // revision, checked inside its own transaction. Two tabs creating the same world cannot
        // both succeed: the first write raises the revision, so the second conflicts, looks
        // again and finds the world. A store without revisions has a single writer.
        let mut conflicts = 0;
        let rev = loop {
            // Both reads at once (one round trip); the revision's is issued first, so a write
            // that lands between the two is seen by the second read or conflicts below.
            let (rev, stored) = both(
                svc.store.revision(&world.id),
                svc.store.load_world(&world.id),
            )
            .await;
            let rev = rev?;
            if stored?.is_some() {
                return Err(WorldError::WorldExists(world.id));
            }
            let mut ops = Vec::with_capacity(3);
            if let Some(rev) = rev {
                ops.push(StoreOp::ExpectRevision {
                    world_id: world.id.clone(),
                    rev,
                });
            }
            ops.push(StoreOp::PutWorld(world.clone()));
            ops.push(StoreOp::PutChat(chat.clone()));
            match svc.store.apply(ops).await {
                // The batch raised the revision by exactly one.
                Ok(()) => break rev.map(|r| r + 1),
                // Another writer wrote this id in between (created it, or created and deleted
                // it): look again. A bound, so a store that keeps conflicting fails clearly.
                Err(StoreError::Conflict(_)) if conflicts < 8 => conflicts += 1,
                Err(e) => return Err(e.into()),
            }
        };
        let view = View {
            world,
            agents: Vec::new(),
            chats: vec![chat],
            no_chat_left: None,
            approvals: Vec::new(),
            revision: rev,
        };
        Ok(World::from_parts(svc, view, rev))
    }

    /// Opens a stored world: settings, agents, chat metadata, and for the current chat each
    /// agent's counter and last `historyLimit` memory entries (never a whole chat).
    pub async fn open(svc: Services, id: &str) -> Result<World, WorldError> {
        // The revision is read with the view, first (in the same snapshot where the store has
        // one): a write that lands before the rest is read makes the first change reload.
        let view = load_view(&*svc.store, id).await?;
        let rev = view.revision;
        Ok(World::from_parts(svc, view, rev))
    }

    /// Every stored world's settings, by name.
    pub async fn list(store: &dyn Store) -> Result<Vec<WorldData>, WorldError> {
        let mut v = store.list_worlds().await?;
        sort_by(&mut v, &|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
        Ok(v)
    }

    /// Deletes a stored world and everything in it; `false` when there was none.
    pub async fn delete(store: &dyn Store, id: &str) -> Result<bool, WorldError> {
        // Under the world's lock against a concurrent create or import; a change another tab
        // plans meanwhile is refused by its revision check and finds the world gone.
        let _g = store.lock_world(id).await?;
        if store.load_world(id).await?.is_none() {
            return Ok(false);
        }
        store
            .apply(vec![StoreOp::DeleteWorld {
                world_id: id.to_string(),
            }])
            .await?;
        Ok(true)
    }

    /// The world's settings.
    pub fn info(&self) -> WorldData {
        self.st().world.clone()
    }

    pub fn id(&self) -> String {
        self.st().world.id.clone()
    }

    /// Subscribes to a topic; dropping the handle unsubscribes.
    pub fn on(&self, topic: Topic, cb: Callback) -> Subscription {
        self.inner.bus.subscribe(topic, cb)
    }

    /// Subscribes a callback of the library itself, which does not count as the
    /// application's listener ([`World::has_listeners`]).
    pub fn on_internal(&self, topic: Topic, cb: Callback) -> Subscription {
        self.inner.bus.subscribe_internal(topic, cb)
    }

    /// Whether the application listens to `topic`.
    pub fn has_listeners(&self, topic: Topic) -> bool {
        self.inner.bus.has_listeners(topic)
    }

    /// Whether no queued or running reply call answers one of `chain` (the work a message
    /// started is done when this holds for the message and every reply in its chain).
    pub fn chain_done(&self, chain: &[String]) -> bool {
        let st = self.st();
        let busy = |t: Option<&str>| t.is_some_and(|t| chain.iter().any(|c| c == t));
        !st.queue.iter().any(|j| busy(j.trigger_id()))
            && !st.in_flight.iter().any(|f| busy(f.trigger_id.as_deref()))
    }

    /// Removes a subscription kept with [`Subscription::forget`] (the JS `unsubscribe()`
    /// function); `false` when it was not subscribed.
    pub fn off(&self, id: crate::core::events::SubscriptionId) -> bool {
        self.inner.bus.unsubscribe(id)
    }

    /// Turns `debug` routing events on or off (runtime only).
    pub fn set_debug(&self, on: bool) {
        self.st_mut().debug = on;
    }

    /// Sets the queue bound (pending calls) and the number of calls in flight; both ≥ 1.
    pub fn set_queue_limits(
        &self,
        max_pending: usize,
        concurrency: usize,
    ) -> Result<(), WorldError> {
        if max_pending == 0 {
            return Err(WorldError::input(
                "maxPending",
                "0 is too small; use at least 1",
            ));
        }
        if concurrency == 0 {
            return Err(WorldError::input(
                "concurrency",
                "0 is too small; use at least 1",
            ));
        }
        {
            let mut st = self.st_mut();
            st.queue_limit = max_pending;
            st.concurrency = concurrency;
        }
        self.wake_runner();
        Ok(())
    }

    /// The agents in routing order, with their current counters.
    pub fn agents(&self) -> Vec<Agent> {
        let st = self.st();
        let mut out = Vec::with_capacity(st.agents.len());
        for a in &st.agents {
            out.push(a.agent.clone());
        }
        out
    }

    pub fn agent(&self, id: &str) -> Option<Agent> {
        let st = self.st();
        st.agent_index(id)
            .and_then(|i| st.agents.get(i))
            .map(|a| a.agent.clone())
    }

    /// The agent's memory window of the current chat (oldest first).
    pub fn agent_memory(&self, id: &str) -> Option<Vec<MemoryEntry>> {
        let st = self.st();
        let a = st.agent_index(id).and_then(|i| st.agents.get(i))?;
        // With the entries of a running call not written yet (`State::unsaved`), newest last,
        // cut to the window: what the agent's next input starts from.
        let mut all = Vec::with_capacity(a.memory.len());
        for e in &a.memory {
            all.push(e.clone());
        }
        if let Some(cid) = st.world.current_chat_id.as_deref() {
            for u in st.unsaved_of(id, cid) {
                all.push(u.entry.clone());
            }
        }
        let skip = all.len().saturating_sub(st.history_limit(&a.agent));
        all.drain(..skip);
        Some(all)
    }

    /// Cancels queued and running calls whose `(agent id, chat id)` matches `pred`. Queued reply
    /// calls end at once with SSE `start` + `error` and a system `error` (`llm_aborted`); they
    /// keep their turn. Running calls end with the same events when they notice the token.
    pub(crate) fn cancel_jobs(&self, pred: &dyn Fn(CallRef<'_>) -> bool) {
        let (drained, tokens) = {
            let mut st = self.st_mut();
            // Calls being published right now (between plan and commit) are cancelled at commit.
            st.epoch += 1;
            let mut drained = Vec::new();
            let mut kept = Vec::new();
            for j in std::mem::take(&mut st.queue) {
                match &j.kind {
                    // Cleanup work, never cancelled.
                    JobKind::CancelApproval { .. } => {
                        kept.push(j);
                        continue;
                    }
                    // An answered approval not resumed yet: it stays queued with its token
                    // cancelled, and ends like a running reply cancelled (its partial text is
                    // kept as `interrupted`).
                    JobKind::Resume { .. }
                        if pred(CallRef {
                            agent_id: j.agent_id(),
                            chat_id: j.chat_id.as_deref(),
                            trigger_id: j.trigger_id(),
                        }) =>
                    {
                        j.cancel.cancel();
                        kept.push(j);
                        continue;
                    }
                    _ => {}
                }
                if pred(CallRef {
                    agent_id: j.agent_id(),
                    chat_id: j.chat_id.as_deref(),
                    trigger_id: j.trigger_id(),
                }) {
                    drained.push(j);
                } else {
                    kept.push(j);
                }
            }
            st.queue = kept;
            let mut tokens: Vec<CancelToken> = Vec::new();
            for f in &st.in_flight {
                if pred(CallRef {
                    agent_id: f.agent_id.as_deref(),
                    chat_id: f.chat_id.as_deref(),
                    trigger_id: f.trigger_id.as_deref(),
                }) {
                    tokens.push(f.cancel.clone());
                }
            }
            (drained, tokens)
        };
        for t in tokens {
            t.cancel();
        }
        self.emit_cancelled(drained);
    }

    /// Ends calls that never left the queue: each reply call emits SSE `start`, SSE `error` and
    /// a system `error` (`llm_aborted`) and keeps its turn; title calls end silently.
    pub(crate) fn emit_cancelled(&self, jobs: Vec<Job>) {
        for job in jobs {
            if let JobKind::Reply {
                agent_id,
                reply_id,
                trigger,
                ..
            } = &job.kind
            {
                let provider = self
                    .agent(agent_id)
                    .map(|a| a.provider)
                    .unwrap_or_else(|| "llm".to_string());
                let err = crate::core::llm::types::LlmError::Aborted { provider };
                self.emit(responder::sse(
                    crate::core::events::SseType::Start,
                    agent_id,
                    reply_id,
                ));
                self.emit_llm_failure(agent_id, reply_id, &trigger.message_id, &err, "");
            }
        }
        self.flush();
    }
}

/// What a world holds in RAM of its stored data.
pub(crate) struct View {
    pub(crate) world: WorldData,
    pub(crate) agents: Vec<AgentRt>,
    pub(crate) chats: Vec<Chat>,
    /// See `State::no_chat_left`.
    pub(crate) no_chat_left: Option<String>,
    /// The current chat's pending approvals.
    pub(crate) approvals: Vec<crate::core::approval::ApprovalRecord>,
    /// The store's revision, read with the view.
    pub(crate) revision: Option<u64>,
}

/// The chat that becomes current when the current one is deleted (spec §6): the most recently
/// updated of `chats` (ties: the one created last, then the later in the list).
pub(crate) fn most_recent_chat<'a>(chats: impl Iterator<Item = &'a Chat>) -> Option<&'a Chat> {
    // A plain loop: `>=` keeps the later of equal keys, as the index in the key did.
    let mut best: Option<&Chat> = None;
    for c in chats {
        if best.is_none_or(|b| (c.updated_at, c.created_at) >= (b.updated_at, b.created_at)) {
            best = Some(c);
        }
    }
    best
}

/// Loads a world's view: the store's revision, settings, agents, chat metadata, and for the
/// current chat each agent's counter and last `historyLimit` memory entries (never a whole
/// chat). All of it through one [`Store::snapshot`] where the store has one (IndexedDB: one
/// read-only transaction, not eight); nothing but its reads is awaited until it is done.
pub(crate) async fn load_view(store: &dyn Store, id: &str) -> Result<View, WorldError> {
    let snapshot = store.snapshot()?;
    let store = snapshot.as_deref().unwrap_or(store);
    let revision = store.revision(id).await?;
    let Some(mut world) = store.load_world(id).await? else {
        return Err(WorldError::WorldNotFound(id.to_string()));
    };
    let agents = store.agents(id).await?;
    let mut chats = store.chats(id).await?;
    sort_by(&mut chats, &|a, b| {
        (a.created_at, &a.id).cmp(&(b.created_at, &b.id))
    });
    let mut no_chat_left = None;
    if let Some(cid) = world.current_chat_id.clone() {
        if !chats.iter().any(|c| c.id == cid) {
            // The pointer names a deleted chat. With chats left, the pointer's own update did
            // not land (over quota, the delete is committed first and alone; or a crash in
            // between): what `deleteChat` chose is what is chosen here. With none left, this
            // is "session mode on, no chat left" (see `State::no_chat_left`).
            world.current_chat_id = most_recent_chat(chats.iter()).map(|c| c.id.clone());
            if world.current_chat_id.is_none() {
                no_chat_left = Some(cid);
            }
        }
    }
    let mut rts: Vec<AgentRt> = Vec::with_capacity(agents.len());
    for mut agent in agents {
        agent.llm_call_count = 0;
        agent.last_llm_call = None;
        rts.push(AgentRt {
            agent,
            memory: Vec::new(),
        });
    }
    let mut approvals = Vec::new();
    if let Some(cid) = world.current_chat_id.clone() {
        load_chat_state(store, &world, &cid, &mut rts).await?;
        approvals = store.approvals(&world.id, &cid).await?;
    }
    Ok(View {
        world,
        agents: rts,
        chats,
        no_chat_left,
        approvals,
        revision,
    })
}

/// Loads each agent's counter and memory window of chat `cid` from the store into `agents`.
pub(crate) async fn load_chat_state(
    store: &dyn Store,
    world: &WorldData,
    cid: &str,
    agents: &mut [AgentRt],
) -> Result<(), WorldError> {
    let states = store.agent_states(&world.id, cid).await?;
    for a in agents.iter_mut() {
        let st = states.iter().find(|s| s.agent_id == a.agent.id);
        a.agent.llm_call_count = st.map(|s| s.llm_call_count).unwrap_or(0);
        a.agent.last_llm_call = st.and_then(|s| s.last_llm_call);
        let n = a.agent.history_limit.unwrap_or(world.history_limit).max(1) as usize;
        let mem = store.last_memory(&world.id, cid, &a.agent.id, n).await?;
        a.memory = mem;
    }
    Ok(())
}

/// Runs two futures at once, `a` polled first each time, and returns both outputs.
async fn both<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => std::task::Poll::Ready((x, y)),
            (x, y) => {
                (ra, rb) = (x, y);
                std::task::Poll::Pending
            }
        }
    })
    .await
}
