//! The persistence seam. A [`Store`] is object-safe and `?Send` (`Rc<dyn Store>`), so the JS
//! binding can choose IndexedDB, memory or a JS object at run time.
//!
//! Reads are small and targeted (a world's metadata, the last `n` memory entries of one agent in
//! one chat, a page of messages) so that reopening a world never loads a whole chat into RAM.
//! Every write goes through [`Store::apply`]: one logical change is one batch of [`StoreOp`]s
//! that commits or fails as a whole (one IndexedDB transaction).
//!
//! Invariants every store must keep (checked by `store_contract`):
//! - `apply` validates the whole batch before changing anything; an op that refers to a world
//!   or chat that does not exist (taking earlier ops of the same batch into account), or appends
//!   a message whose id already exists in that chat, fails the batch with
//!   [`StoreError::Invalid`] and nothing changes.
//! - `agents` lists agents in the order they were first put (routing order, spec §4).
//! - Messages and memory entries keep their append order.
//! - Deleting a world cascades to its agents, chats, messages, memories, agent states and
//!   pending approvals; deleting a chat to its messages, memories, agent states and pending
//!   approvals; deleting an agent to its memories, agent states and pending approvals.
//! - API keys are never stored: no type here has a field for one.
//!
//! Several writers (two tabs, a tab and a worker, two `World`s on one store) may share a world.
//! A store that can be shared across contexts says so through two optional methods, and the
//! engine then keeps every derived value right (`messageCount`, agent counters, memory windows,
//! the current chat): [`Store::revision`] is a per-world counter that every successful batch
//! naming the world raises by exactly one, and each batch the engine sends carries
//! [`StoreOp::ExpectRevision`], the revision its RAM view mirrors. The store checks it inside
//! the batch's own transaction and refuses a stale batch with [`StoreError::Conflict`], writing
//! nothing; the engine then reloads its view and plans the change again, so a `PutChat` never
//! commits a count computed from a stale view. [`Store::lock_world`] is taken only by the
//! whole-world operations, import and delete. Stores that return `None` (the default) are not
//! shared: the engine trusts its RAM view.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde::Serialize;

use crate::core::approval::ApprovalRecord;
use crate::core::model::{Agent, Chat, MemoryEntry, Message, Timestamp, WorldData};

/// A boxed, non-`Send` future (the core runs on one thread: wasm32 or a test executor).
pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Why a store operation failed. `code()` is the stable code of spec §8.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The backend failed (IndexedDB error, JS adapter threw, …).
    #[error("storage failed: {0}")]
    Backend(String),
    /// The batch refers to something that does not exist or would duplicate an id; nothing was
    /// written.
    #[error("storage rejected the change: {0}")]
    Invalid(String),
    /// The storage quota is exhausted; free space or delete old chats.
    #[error("storage quota exceeded: {0}; delete old chats or worlds to free space")]
    QuotaExceeded(String),
    /// The database is blocked by another tab holding an older version open.
    #[error("storage is blocked by another open tab: {0}; close the other tabs of this app")]
    Blocked(String),
    /// The stored data has a newer schema version than this code understands.
    #[error("storage version mismatch: {0}; update the app")]
    Version(String),
    /// The write transaction was aborted (by the browser, another handler, or a failed request)
    /// and nothing of the batch was written.
    #[error("storage transaction aborted, nothing was written: {0}")]
    Aborted(String),
    /// The batch's [`StoreOp::ExpectRevision`] did not match: another writer changed the world
    /// since the view the batch was planned from. Nothing was written. The engine reloads its
    /// view and plans the change again; only when that keeps failing does a caller see it, with
    /// the reason `aborted` (nothing was written, retry).
    #[error("the world was changed by another tab or worker while this change was planned, nothing was written: {0}; retry")]
    Conflict(String),
    /// A stored record cannot be read (no format version, wrong shape).
    #[error("stored data is corrupted: {0}")]
    Corrupted(String),
    /// The connection is closed (closed by the app, by the browser, or because another tab
    /// upgraded or deleted the database); open the store again.
    #[error("storage connection closed: {0}")]
    Closed(String),
    /// `error`, with what the backend threw attached (the JS `Error` a `StoreAdapter` rejected
    /// with, IndexedDB's `DOMException`): the binding hands it to JS as the error's `cause`, so
    /// an application debugging its adapter sees its own error and stack.
    #[error("{error}")]
    Caused {
        error: Box<StoreError>,
        cause: Cause,
    },
}

/// What a backend threw, kept opaque: the core never looks inside (it stays free of JS types);
/// the adapter that caught it and the binding that reports it agree on its type.
#[derive(Clone)]
pub struct Cause(Rc<dyn Any>);

impl Cause {
    pub fn new<T: Any>(value: T) -> Self {
        Cause(Rc::new(value))
    }

    /// The value, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cause(..)")
    }
}

/// Two causes are equal when they are the same caught value.
impl PartialEq for Cause {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cause {}

impl StoreError {
    /// `storage_error` for every variant (spec §8); [`StoreError::reason`] tells them apart.
    pub fn code(&self) -> &'static str {
        "storage_error"
    }

    /// The stable, finer reason of a storage failure, one per variant (the `reason` field of
    /// `AgentWorldError` and of the system `error` event).
    pub fn reason(&self) -> &'static str {
        match self {
            StoreError::Backend(_) => "backend",
            StoreError::Invalid(_) => "invalid",
            StoreError::QuotaExceeded(_) => "quota_exceeded",
            StoreError::Blocked(_) => "blocked",
            StoreError::Version(_) => "version",
            StoreError::Aborted(_) | StoreError::Conflict(_) => "aborted",
            StoreError::Corrupted(_) => "corrupted",
            StoreError::Closed(_) => "closed",
            StoreError::Caused { error, .. } => error.reason(),
        }
    }

    /// Attaches what the backend threw (see [`StoreError::Caused`]).
    pub fn with_cause(self, cause: Cause) -> StoreError {
        StoreError::Caused {
            error: Box::new(self.without_cause()),
            cause,
        }
    }

    /// What the backend threw, if the adapter attached it.
    pub fn cause(&self) -> Option<&Cause> {
        match self {
            StoreError::Caused { cause, .. } => Some(cause),
            _ => None,
        }
    }

    /// The error without its cause (to match on the kind of failure).
    pub fn without_cause(self) -> StoreError {
        match self {
            StoreError::Caused { error, .. } => *error,
            other => other,
        }
    }
}

/// Held while one writer changes a world ([`Store::lock_world`]); dropping it releases the lock.
pub type WorldLockGuard = Box<dyn std::any::Any>;

/// An agent's per-chat turn state (spec §6: memory and counters are persisted per chat).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AgentChatState {
    pub agent_id: String,
    pub llm_call_count: u32,
    #[serde(rename = "lastLLMCall", skip_serializing_if = "Option::is_none")]
    pub last_llm_call: Option<Timestamp>,
}

// Decoding (see `crate::core::json`): unknown fields are refused.
crate::core::json::from_json_struct!(AgentChatState, deny, {
    agent_id: "agentId" req,
    llm_call_count: "llmCallCount" req,
    last_llm_call: "lastLLMCall" opt,
});

crate::core::json::deserialize_via_json!(AgentChatState);

/// Writing (see `crate::core::json_write`): the derived form's names and skip rule.
impl crate::core::json_write::ToJson for AgentChatState {
    fn write_json(&self, out: &mut String) {
        crate::core::json_write::Obj::new(out)
            .str("agentId", &self.agent_id)
            .field("llmCallCount", &self.llm_call_count)
            .opt("lastLLMCall", &self.last_llm_call)
            .end();
    }
}

/// Everything one chat holds, for export.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatDump {
    pub chat: Option<Chat>,
    /// Oldest first.
    pub messages: Vec<Message>,
    /// Per agent, oldest first; agents without entries may be absent.
    pub memories: Vec<(String, Vec<MemoryEntry>)>,
    pub states: Vec<AgentChatState>,
}

/// Everything a world holds, for export.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorldDump {
    pub world: Option<WorldData>,
    pub agents: Vec<Agent>,
    pub chats: Vec<ChatDump>,
}

/// One write. See the module docs for what makes a batch invalid.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreOp {
    /// Writes nothing: the batch commits only if the world's revision ([`Store::revision`]) is
    /// `rev` when the batch runs, checked inside the batch's own transaction; otherwise the
    /// batch fails with [`StoreError::Conflict`] and nothing is written. A store that does not
    /// track revisions (`revision` is `None`) has a single writer and accepts it as is.
    ExpectRevision { world_id: String, rev: u64 },
    /// Insert or replace a world's settings.
    PutWorld(WorldData),
    /// Delete a world and everything in it (a missing world is not an error).
    DeleteWorld { world_id: String },
    /// Insert or replace an agent (the world must exist).
    PutAgent { world_id: String, agent: Agent },
    /// Delete an agent with its memories and states (a missing agent is not an error).
    DeleteAgent { world_id: String, agent_id: String },
    /// Insert or replace a chat's metadata (`chat.world_id` must exist).
    PutChat(Chat),
    /// Delete a chat with its messages, memories and states (a missing chat is not an error).
    DeleteChat { world_id: String, chat_id: String },
    /// Append a message to an existing chat; its id must be new in that chat.
    AppendMessage {
        world_id: String,
        chat_id: String,
        message: Message,
    },
    /// Append an entry to an agent's memory in an existing chat.
    AppendMemory {
        world_id: String,
        chat_id: String,
        agent_id: String,
        entry: MemoryEntry,
    },
    /// Empty an agent's memory in a chat (a missing chat is not an error).
    ClearMemory {
        world_id: String,
        chat_id: String,
        agent_id: String,
    },
    /// Removes messages from an existing chat's log, and every memory entry (of any agent, in
    /// that chat) whose `messageId` is one of them: tool entries of a reply carry the reply's
    /// id, so they go with it. Ids not in the chat are ignored. The other messages keep their
    /// order (spec §10 `deleteMessage`, `editMessage`).
    DeleteMessages {
        world_id: String,
        chat_id: String,
        message_ids: Vec<String>,
    },
    /// Puts `message` in the place of message `old_message_id` of an existing chat: the old
    /// message leaves the log and the new one has its position in the order (spec §10
    /// `regenerate`: the new reply takes the old one's place). The old id must be in the chat;
    /// the new id must not be (unless it is the old one). Memory is not touched.
    ReplaceMessage {
        world_id: String,
        chat_id: String,
        old_message_id: String,
        message: Message,
    },
    /// Insert or replace an agent's turn state in an existing chat.
    PutAgentState {
        world_id: String,
        chat_id: String,
        state: AgentChatState,
    },
    /// Insert or replace a pending approval (spec §9) in an existing chat: `world_id` and
    /// `chat_id` are the record's (a record without a chat id is never stored: the batch is
    /// invalid).
    PutApproval(Box<ApprovalRecord>),
    /// Delete a pending approval (a missing one, or a missing chat, is not an error: the engine
    /// checks that it is still pending in the same change, see `engine/approvals.rs`).
    DeleteApproval {
        world_id: String,
        chat_id: String,
        approval_id: String,
    },
}

impl StoreOp {
    /// The world the op names (every op names exactly one).
    pub fn world_id(&self) -> &str {
        match self {
            StoreOp::PutWorld(w) => &w.id,
            StoreOp::PutChat(c) => &c.world_id,
            StoreOp::PutApproval(a) => &a.world_id,
            StoreOp::DeleteWorld { world_id }
            | StoreOp::ExpectRevision { world_id, .. }
            | StoreOp::PutAgent { world_id, .. }
            | StoreOp::DeleteAgent { world_id, .. }
            | StoreOp::DeleteChat { world_id, .. }
            | StoreOp::AppendMessage { world_id, .. }
            | StoreOp::AppendMemory { world_id, .. }
            | StoreOp::ClearMemory { world_id, .. }
            | StoreOp::DeleteMessages { world_id, .. }
            | StoreOp::ReplaceMessage { world_id, .. }
            | StoreOp::PutAgentState { world_id, .. }
            | StoreOp::DeleteApproval { world_id, .. } => world_id,
        }
    }

    /// Whether the op only removes records. A batch of such ops frees space: stores over
    /// quota still accept it (`MemoryStore`), or retry it without the revision put (IndexedDB).
    /// Exhaustive on purpose: a new op must say which it is.
    pub fn only_removes(&self) -> bool {
        match self {
            StoreOp::DeleteWorld { .. }
            | StoreOp::ExpectRevision { .. }
            | StoreOp::DeleteAgent { .. }
            | StoreOp::DeleteChat { .. }
            | StoreOp::ClearMemory { .. }
            | StoreOp::DeleteApproval { .. }
            | StoreOp::DeleteMessages { .. } => true,
            StoreOp::PutWorld(_)
            | StoreOp::PutChat(_)
            | StoreOp::PutApproval(_)
            | StoreOp::PutAgent { .. }
            | StoreOp::AppendMessage { .. }
            | StoreOp::AppendMemory { .. }
            | StoreOp::ReplaceMessage { .. }
            | StoreOp::PutAgentState { .. } => false,
        }
    }
}

/// The persistence seam.
pub trait Store {
    /// Every world's settings, in no particular order.
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>>;
    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>>;
    /// The world's agents in the order they were first put.
    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>>;
    /// The world's chats' metadata, in no particular order.
    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>>;
    /// The agents' turn states in one chat (agents never written may be absent).
    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>>;
    /// The last `n` memory entries of an agent in a chat, oldest first.
    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>>;
    /// A page of a chat's messages, **oldest first**: the last `limit` messages appended before
    /// the message whose id is `before` (or the last `limit` of the chat when `before` is
    /// `None`). To page backwards, pass the first id of the previous page. An unknown `before`
    /// id or an unknown chat gives an empty page.
    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>>;
    /// The pending approvals of one chat (spec §9), oldest first (by `createdAt`, then id).
    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>>;
    /// Everything the world holds (export).
    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>>;
    /// Applies a batch atomically: all ops or none. A store that tracks revisions raises the
    /// revision of every world an op of a successful batch names by exactly one.
    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>>;

    /// A reader of this store whose reads all see one snapshot, for a run of reads awaited one
    /// after another with nothing else awaited in between (opening a world): IndexedDB runs
    /// them in one read-only transaction instead of one each (awaiting anything but its reads
    /// would let the browser end that transaction). Its writes go to the store. `None` (the
    /// default): the store's reads need no set-up of their own; read from it directly.
    fn snapshot(&self) -> Result<Option<Box<dyn Store + '_>>, StoreError> {
        Ok(None)
    }

    /// The world's revision: `None` when this store does not track revisions (it is never
    /// written by more than one context, or its backend serialises writers itself); `Some(0)`
    /// for a world that does not exist. See the module docs.
    fn revision<'a>(
        &'a self,
        _world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async { Ok(None) })
    }

    /// Waits until no other writer (in this or another tab or worker) holds the world and
    /// returns a guard. Not reentrant: a writer takes it once per change. The default is a
    /// no-op for stores that are not shared.
    fn lock_world<'a>(
        &'a self,
        _world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<WorldLockGuard, StoreError>> {
        Box::pin(async { Ok(Box::new(()) as WorldLockGuard) })
    }
}
