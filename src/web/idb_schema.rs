//! The IndexedDB schema of [`IdbStore`](super::idb_store::IdbStore), declared in one place: the
//! database version, the object stores with their key paths and indexes, the record shapes, and
//! the versioned upgrade steps.
//!
//! | store          | key path                          | index                                        | record         |
//! |----------------|-----------------------------------|----------------------------------------------|----------------|
//! | `worlds`       | `worldId`                         |                                              | [`WorldRow`]   |
//! | `agents`       | `[worldId, agentId]`              |                                              | [`AgentRow`]   |
//! | `chats`        | `[worldId, chatId]`               |                                              | [`ChatRow`]    |
//! | `messages`     | `[worldId, chatId, seq]`          | `byMessageId`: `[worldId, chatId, messageId]`, unique | [`MessageRow`] |
//! | `memory`       | `[worldId, chatId, agentId, seq]` |                                              | [`MemoryRow`]  |
//! | `agent_states` | `[worldId, chatId, agentId]`      |                                              | [`StateRow`]   |
//! | `approvals`    | `[worldId, chatId, approvalId]`   |                                              | [`ApprovalRow`] (since database version 2) |
//! | `revisions`    | `[worldId, rev]` (out of line)    |                                              | `0` (since database version 3) |
//!
//! Why compound keys: every "everything of a world / chat / agent in a chat" question is a key
//! range on a key prefix (see [`prefix_range`]), so reads, paging and cascading deletes never scan
//! another world's data and need no secondary index (a "chats by world" index would duplicate
//! the `[worldId, …]` prefix of the primary key). `seq` is a per-chat (messages) or per
//! agent-and-chat (memory) counter that only grows, so key order is append order and the last
//! `n` are a reverse cursor walk. `agents` carry an `order` field (first-put order, the routing
//! order of spec §4) because their key order is alphabetical.
//!
//! Every record carries `v`, the record format version ([`RECORD_VERSION`]). A record without a
//! readable `v` is corrupt; one with a larger `v` was written by a newer app. Both are reported
//! as errors naming the record, never a panic. Format 2 added `rev` (the world's revision, for
//! several tabs) to `worlds` records; version 1 records read as `rev` 0, and an app that only
//! knows format 1 reports a format 2 record as "written by a newer app" rather than corrupted.
//! Format 3 added the tool fields (spec §9): `tools`, `maxSteps`, `reasoning` on agents,
//! `toolCalls` on messages, `role: "tool"`, `toolCalls`, `toolCallId`, `toolName` on memory
//! entries. The records are `deny_unknown_fields`, so an app of format 2 would call a record
//! using them corrupted; the raised version makes it say "written by a newer app" instead.
//! Format 2 records read unchanged (every new field is optional).
//!
//! Migrations: one step per database version (listed below, with `DB_VERSION`). Opening runs the
//! steps whose version is above the database's old version, in order, inside the browser's
//! version-change transaction (atomic: a failing step leaves the old database). Version 2 is an
//! added step and `DB_VERSION = 2`, never an edit of version 1's.
//!
//! Version 2 adds the `approvals` store (pending tool approvals, spec §9). A database of
//! version 1 gains it, empty, the first time this app opens it; an app that knows only
//! version 1 then reports the database as written by a newer app (the browser's
//! `VersionError`) instead of missing the approvals.
//!
//! Version 3 moves the world's revision into the schema: the `revisions` store holds one
//! record per revision of each world, keyed `[worldId, rev]` (the value is `0`: only keys are
//! ever read). A world's revision is the `rev` of its newest key (0 when it has none), and a
//! batch raises it from `R` to `R + 1` by `add`ing `[worldId, R + 1]`, which fails with
//! `ConstraintError`, aborting the batch's transaction, when another writer already took that
//! revision: the revision check of a write needs no read (see
//! `idb_fast`). The records are never deleted, not even with their world
//! (a deleted world's revision keeps rising, so a connection that knew the world before the
//! delete cannot mistake a re-created world for the one it knew): an `add` only proves nobody
//! took that key, so a pruned `[w, R + 1]` could be added again by a connection that still
//! believes the world is at `R`, and its write would pass as current. One key of a few dozen
//! bytes per committed batch is the price. The upgrade copies each world row's `rev`
//! (database version 2's place for it, which version 3 no longer writes or reads) into its
//! first revision record, so revisions go on from where they were.
//!
//! Version 4 changes what a `chats` record's `messageCount` and `updatedAt` mean: they may be
//! older than the chat's, whose newest values can ride on a message instead. A batch that
//! appends a message to a chat and changes nothing of it but those two (every message and
//! reply of the engine) need not rewrite the chat's record: its last appended message carries
//! `chatCount` and `chatUpdatedAt` (epoch milliseconds), the chat's stamp, and a reader of the
//! chat ([`with_stamp`]: the chat list, the export) takes the stamp of the chat's newest
//! message (one step of a reverse cursor per chat) when it is newer than the record's
//! `updatedAt`. That is the chat: its `updatedAt` rises with every write that changes its count,
//! and a batch that writes the record writes the chat as it is after it. A batch that does not
//! put the chat keeps it reading the same (`idb_write`): a replaced message keeps its stamp,
//! and before an append or a delete would leave a stamped newest message behind, the record is
//! written as readers see it. No record is rewritten by the upgrade (a version 3 database has
//! no stamps); the version is raised so that an app of version 3, which would show the
//! records' stale counts and call a stamped message corrupted, refuses the database instead.

use crate::core::json::Value;
use js_sys::Array;
use wasm_bindgen::JsValue;

use crate::core::approval::ApprovalRecord;
use crate::core::json::{from_json_struct, Fields, FromJson, JsonError};
use crate::core::json_write::{Obj, ToJson};
use crate::core::model::{Agent, Chat, MemoryEntry, Message, Timestamp, WorldData};
use crate::core::store::AgentChatState;

/// The IndexedDB database version this code creates and understands: the number of steps of
/// `awwIdbUpgrade` (see the migrations below).
pub const DB_VERSION: u32 = 4;
/// The format version written into every record's `v` field.
pub const RECORD_VERSION: u32 = 3;

pub const WORLDS: &str = "worlds";
pub const AGENTS: &str = "agents";
pub const CHATS: &str = "chats";
pub const MESSAGES: &str = "messages";
pub const MEMORY: &str = "memory";
pub const AGENT_STATES: &str = "agent_states";
pub const APPROVALS: &str = "approvals";
pub const REVISIONS: &str = "revisions";
/// Unique index of `messages` on `[worldId, chatId, messageId]`.
pub const MESSAGES_BY_ID: &str = "byMessageId";
/// Every object store (an `apply` transaction spans all of them).
pub const ALL_STORES: [&str; 8] = [
    WORLDS,
    AGENTS,
    CHATS,
    MESSAGES,
    MEMORY,
    AGENT_STATES,
    APPROVALS,
    REVISIONS,
];

// The migrations (database versions 1 to 4, see the module docs) are `awwIdbUpgrade` in the
// IndexedDB adapter's JS snippet (`idb_request.rs`), run by the open request's `upgradeneeded`
// handler (`awwIdbOpen`) inside the browser's version-change transaction: the steps above the
// old version up to the new one, oldest first. Append a step; never edit a released one. They
// are data and a few calls, so they are JS: no Rust closure, web-sys import or glue per call.
// What a step throws (a DOMException) aborts the upgrade and is the open's error. The store
// names and key paths are the table's above (checked at every open: a missing store fails it).
//
// - 1: the six stores and the message-id index (a fresh database: no transaction work).
// - 2: the `approvals` store (spec §9 pending approvals), keyed by chat so a chat's approvals
//   are one key range and go with the chat's other records.
// - 3: the `revisions` store, out-of-line keys, filled with each world's revision as its row
//   holds it (a positive finite `rev`; a row that is not an object is reported when read, as
//   before the upgrade). The rows are read with one `getAll` and the records added from its
//   success handler, while the transaction is still active; a failed request or a throw
//   aborts the transaction, and with it the upgrade (the open then fails and the database
//   stays at its old version).
// - 4: no record changes: a version 3 database has no stamps, so its chat records read as
//   before. The version is raised so that an app that knows only version 3, which would show
//   the records' stale counts, refuses the database as written by a newer app (the browser's
//   `VersionError`).

/// The key of world `w`'s revision record `rev`.
pub fn rev_key(w: &str, rev: f64) -> JsValue {
    seq_key(&[w], rev)
}

/// An `approvals` record (a pending approval with the reply's state).
#[derive(Debug)]
pub struct ApprovalRow<S = String, P = ApprovalRecord> {
    pub v: u32,
    pub world_id: S,
    pub chat_id: S,
    pub approval_id: S,
    pub approval: P,
}

/// A `worlds` record.
#[derive(Debug)]
pub struct WorldRow<S = String, P = WorldData> {
    pub v: u32,
    pub world_id: S,
    pub world: P,
    /// The world's revision in database version 2 (raised by every committed batch that
    /// names the world). Version 3 keeps revisions in the `revisions` store: its upgrade copies
    /// this value there, and it is no longer written (a row written since has none) or read.
    pub rev: f64,
}

/// An `agents` record; `order` is the first-put position within the world.
#[derive(Debug)]
pub struct AgentRow<S = String, P = Agent> {
    pub v: u32,
    pub world_id: S,
    pub agent_id: S,
    pub order: f64,
    pub agent: P,
}

/// A `chats` record.
#[derive(Debug)]
pub struct ChatRow<S = String, P = Chat> {
    pub v: u32,
    pub world_id: S,
    pub chat_id: S,
    pub chat: P,
}

/// A `messages` record; `messageId` is copied out of `message` for the unique index.
/// `chatCount` and `chatUpdatedAt` (epoch milliseconds), both or neither, are the chat's
/// stamp: its `messageCount` and `updatedAt` after the batch that appended this message
/// without writing the chat's record (see the module docs, database version 4).
#[derive(Debug)]
pub struct MessageRow<S = String, P = Message> {
    pub v: u32,
    pub world_id: S,
    pub chat_id: S,
    pub seq: f64,
    pub message_id: S,
    pub message: P,
    pub chat_count: Option<f64>,
    pub chat_updated_at: Option<f64>,
}

impl MessageRow {
    /// The chat's stamp on this message, `(messageCount, updatedAt)`, if it has one.
    pub fn stamp(&self) -> Option<(f64, f64)> {
        self.chat_count.zip(self.chat_updated_at)
    }
}

/// `chat` as a reader sees it: its record's `messageCount` and `updatedAt`, unless the stamp
/// on the chat's newest message (`stamp`, [`MessageRow::stamp`]) is newer. The engine raises a chat's `updatedAt`
/// with every write of the chat (`chat_update_time`: above every chat's), and a batch that
/// writes the record writes what the chat is after it; so the newer of the two is the chat,
/// and on a tie (only a record written after the stamp can tie with it) the record is.
pub fn with_stamp(chat: &mut Chat, stamp: Option<(f64, f64)>) {
    let Some((count, updated_at)) = stamp else {
        return;
    };
    // Stamps are whole numbers this code wrote from a `u64` count and an `i64` time.
    let updated_at = Timestamp(updated_at as i64);
    if updated_at > chat.updated_at {
        chat.message_count = count as u64;
        chat.updated_at = updated_at;
    }
}

/// A `memory` record.
#[derive(Debug)]
pub struct MemoryRow<S = String, P = MemoryEntry> {
    pub v: u32,
    pub world_id: S,
    pub chat_id: S,
    pub agent_id: S,
    pub seq: f64,
    pub entry: P,
}

/// An `agent_states` record.
#[derive(Debug)]
pub struct StateRow<S = String, P = AgentChatState> {
    pub v: u32,
    pub world_id: S,
    pub chat_id: S,
    pub agent_id: S,
    pub state: P,
}

// Writing (see `crate::core::json_write`): camelCase names in declaration order. Each row type
// is generic over its ids (`S`) and payload (`P`) so that a write encodes a row of borrowed
// parts (`MessageRow<&str, &Message>`): no copy of the message, chat or agent per write, and
// one writer per row type; reading makes the owned rows (the defaults).

impl<S: AsRef<str>, P: ToJson> ToJson for ApprovalRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("chatId", self.chat_id.as_ref())
            .str("approvalId", self.approval_id.as_ref())
            .field("approval", &self.approval)
            .end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for WorldRow<S, P> {
    fn write_json(&self, out: &mut String) {
        let mut o = Obj::new(out);
        o.field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .field("world", &self.world);
        // A zero revision is left out (rows since database version 3 have none).
        if self.rev != 0.0 {
            o.field("rev", &self.rev);
        }
        o.end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for AgentRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("agentId", self.agent_id.as_ref())
            .field("order", &self.order)
            .field("agent", &self.agent)
            .end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for ChatRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("chatId", self.chat_id.as_ref())
            .field("chat", &self.chat)
            .end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for MessageRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("chatId", self.chat_id.as_ref())
            .field("seq", &self.seq)
            .str("messageId", self.message_id.as_ref())
            .field("message", &self.message)
            .opt("chatCount", &self.chat_count)
            .opt("chatUpdatedAt", &self.chat_updated_at)
            .end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for MemoryRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("chatId", self.chat_id.as_ref())
            .str("agentId", self.agent_id.as_ref())
            .field("seq", &self.seq)
            .field("entry", &self.entry)
            .end();
    }
}

impl<S: AsRef<str>, P: ToJson> ToJson for StateRow<S, P> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .str("worldId", self.world_id.as_ref())
            .str("chatId", self.chat_id.as_ref())
            .str("agentId", self.agent_id.as_ref())
            .field("state", &self.state)
            .end();
    }
}

/// What the read methods return of each row (`idb_request::payloads`).
macro_rules! payload {
    ($($row:ident . $field:ident: $of:ty),*) => {$(
        impl super::idb_request::Payload for $row {
            type Of = $of;
            fn payload(self) -> $of {
                self.$field
            }
        }
    )*};
}
payload!(WorldRow.world: WorldData, MessageRow.message: Message, MemoryRow.entry: MemoryEntry,
    StateRow.state: AgentChatState, ApprovalRow.approval: ApprovalRecord);

/// A compound key of string parts (or any array of strings: store names). A plain loop: one
/// copy, not an iterator adapter stack per caller.
pub fn key(parts: &[&str]) -> Array {
    let out = Array::new();
    for p in parts {
        out.push(&JsValue::from_str(p));
    }
    out
}

/// A compound key of string parts followed by a sequence number.
pub fn seq_key(parts: &[&str], seq: f64) -> JsValue {
    let k = key(parts);
    k.push(&JsValue::from_f64(seq));
    k.into()
}

/// What a read or a delete asks for: a range of keys (an `IDBKeyRange`, made when the request
/// is issued: making one can throw, which the request reports as its error).
pub struct KeyRange {
    pub lower: JsValue,
    pub lower_open: bool,
    /// `undefined`: every key from `lower` up.
    pub upper: JsValue,
    pub upper_open: bool,
}

impl KeyRange {
    /// The `IDBKeyRange` a request takes.
    pub fn query(&self) -> Result<JsValue, JsValue> {
        super::idb_request::idb_range(&self.lower, &self.upper, self.lower_open, self.upper_open)
    }
}

/// Every key that starts with `parts`: from `[..parts]` to `[..parts, []]`. An array sorts above
/// every string and number key, so `[..parts, []]` is above every key under the prefix and
/// below the next prefix (`["w"]` never reaches `["w2", …]`).
pub fn prefix_range(parts: &[&str]) -> KeyRange {
    let upper = key(parts);
    upper.push(&Array::new());
    KeyRange {
        lower: key(parts).into(),
        lower_open: false,
        upper: upper.into(),
        upper_open: false,
    }
}

/// Keys under `parts` strictly below `[..parts, seq]`.
pub fn below_range(parts: &[&str], seq: f64) -> KeyRange {
    KeyRange {
        lower: key(parts).into(),
        lower_open: false,
        upper: seq_key(parts, seq),
        upper_open: true,
    }
}

// Reads the rows back (see `crate::core::json`): unknown fields are refused, as before; the
// payload, last, is read by `need` (its type has no placeholder).
from_json_struct!(ApprovalRow, deny, { v: "v" req, world_id: "worldId" req, chat_id: "chatId" req,
    approval_id: "approvalId" req, approval: "approval" need });
from_json_struct!(AgentRow, deny, { v: "v" req, world_id: "worldId" req, agent_id: "agentId" req,
    order: "order" req, agent: "agent" need });
from_json_struct!(ChatRow, deny, { v: "v" req, world_id: "worldId" req, chat_id: "chatId" req,
    chat: "chat" need });
// A `messages` record's chat stamp is absent in most (and in every record written before
// database version 4).
from_json_struct!(MessageRow, deny, { v: "v" req, world_id: "worldId" req, chat_id: "chatId" req,
    seq: "seq" req, message_id: "messageId" req, message: "message" need,
    chat_count: "chatCount" opt, chat_updated_at: "chatUpdatedAt" opt });
from_json_struct!(MemoryRow, deny, { v: "v" req, world_id: "worldId" req, chat_id: "chatId" req,
    agent_id: "agentId" req, seq: "seq" req, entry: "entry" need });
from_json_struct!(StateRow, deny, { v: "v" req, world_id: "worldId" req, chat_id: "chatId" req,
    agent_id: "agentId" req, state: "state" need });

/// A `worlds` record; `rev` is absent in rows written before revisions existed (0). (Read by
/// hand: `rev` is read before the payload but listed after it.)
impl FromJson for WorldRow {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        let mut f = Fields::of(v, &["v", "worldId", "world", "rev"], true);
        let v = f.req("v");
        let world_id = f.req("worldId");
        let rev = f.opt("rev");
        let world = f.need("world")?;
        f.done(WorldRow {
            v,
            world_id,
            world,
            rev,
        })
    }
}
