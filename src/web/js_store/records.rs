//! The adapter store's key layout (see the table in [`super`]) and its records: the row
//! types, and how a row becomes the JSON text stored at its key and back (format version
//! checked first).

use crate::core::json::Value;

use super::RECORD_VERSION;
use crate::core::approval::ApprovalRecord;
use crate::core::json::{from_json_struct, FromJson};
use crate::core::json_write::{Obj, ToJson};
use crate::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use crate::core::store::{AgentChatState, StoreError};

/// Percent-encodes an id: everything but `A-Z a-z 0-9 - _ . ~` becomes `%XX` (UTF-8 bytes).
pub(crate) fn encode_id(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `aww/{kind}/{part}/{part}…` from already-encoded parts.
pub(super) fn raw_key(kind: &str, parts: &[&str]) -> String {
    let mut k = format!("aww/{kind}");
    for p in parts {
        k.push('/');
        k.push_str(p);
    }
    k
}

/// The key of a record: `kind` and the ids it hangs off (encoded here).
pub(crate) fn key(kind: &str, ids: &[&str]) -> String {
    let enc: Vec<String> = ids.iter().map(|i| encode_id(i)).collect();
    let refs: Vec<&str> = enc.iter().map(String::as_str).collect();
    raw_key(kind, &refs)
}

/// The prefix of every key of `kind` under the ids (ends with `/`).
pub(crate) fn prefix(kind: &str, ids: &[&str]) -> String {
    let mut k = key(kind, ids);
    k.push('/');
    k
}

pub(super) fn seq_part(seq: u64) -> String {
    format!("{seq:012}")
}

/// The last `/`-separated part of a key.
pub(super) fn last_part(k: &str) -> &str {
    k.rsplit('/').next().unwrap_or(k)
}

// The record types are generic in their payload so that a write serialises a borrowed payload
// (`WorldRow<&WorldData>`) and a read decodes an owned one (the default; `FromJson` below).
pub(super) struct WorldRow<T = WorldData> {
    pub(super) v: u32,
    pub(super) world: T,
}

pub(super) struct AgentRow<T = Agent> {
    pub(super) v: u32,
    pub(super) order: u64,
    pub(super) agent: T,
}

pub(super) struct ChatRow<T = Chat> {
    pub(super) v: u32,
    pub(super) chat: T,
}

pub(super) struct MessageRow<T = Message> {
    pub(super) v: u32,
    pub(super) seq: u64,
    pub(super) message: T,
}

pub(super) struct SeqRow {
    pub(super) v: u32,
    pub(super) seq: u64,
}

pub(super) struct MemoryRow<S = String, T = MemoryEntry> {
    pub(super) v: u32,
    pub(super) agent_id: S,
    pub(super) seq: u64,
    pub(super) entry: T,
}

pub(super) struct StateRow<T = AgentChatState> {
    pub(super) v: u32,
    pub(super) state: T,
}

pub(super) struct ApprovalRow<T = ApprovalRecord> {
    pub(super) v: u32,
    pub(super) approval: T,
}

pub(super) struct CounterRow {
    pub(super) v: u32,
    pub(super) next: u64,
}

// Writing (see `crate::core::json_write`): the fields in declaration order, camelCase.

impl<T: ToJson> ToJson for WorldRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("world", &self.world)
            .end();
    }
}

impl<T: ToJson> ToJson for AgentRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("order", &self.order)
            .field("agent", &self.agent)
            .end();
    }
}

impl<T: ToJson> ToJson for ChatRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("chat", &self.chat)
            .end();
    }
}

impl<T: ToJson> ToJson for MessageRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("seq", &self.seq)
            .field("message", &self.message)
            .end();
    }
}

impl ToJson for SeqRow {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("seq", &self.seq)
            .end();
    }
}

impl<S: ToJson, T: ToJson> ToJson for MemoryRow<S, T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("agentId", &self.agent_id)
            .field("seq", &self.seq)
            .field("entry", &self.entry)
            .end();
    }
}

impl<T: ToJson> ToJson for StateRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("state", &self.state)
            .end();
    }
}

impl<T: ToJson> ToJson for ApprovalRow<T> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("approval", &self.approval)
            .end();
    }
}

impl ToJson for CounterRow {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("v", &self.v)
            .field("next", &self.next)
            .end();
    }
}

// The rows as they are read back: `v`, the numbers, then the payload (`need`: its type has no
// placeholder), unknown fields ignored (by `crate::core::json`'s rules, which are serde's).
from_json_struct!(WorldRow, allow, { v: "v" req, world: "world" need });
from_json_struct!(AgentRow, allow, { v: "v" req, order: "order" req, agent: "agent" need });
from_json_struct!(ChatRow, allow, { v: "v" req, chat: "chat" need });
from_json_struct!(MessageRow, allow, { v: "v" req, seq: "seq" req, message: "message" need });
from_json_struct!(SeqRow, allow, { v: "v" req, seq: "seq" req });
from_json_struct!(MemoryRow, allow, { v: "v" req, agent_id: "agentId" req, seq: "seq" req,
    entry: "entry" need });
from_json_struct!(StateRow, allow, { v: "v" req, state: "state" need });
from_json_struct!(ApprovalRow, allow, { v: "v" req, approval: "approval" need });
from_json_struct!(CounterRow, allow, { v: "v" req, next: "next" req });

/// A record's stored text (its hand-written writer: byte-identical to the derived form it
/// replaced, so values already stored and read by an application's own code do not change).
pub(super) fn encode<T: ToJson>(row: &T) -> String {
    row.to_json()
}

/// Decodes the value stored at `key`, checking its format version first.
pub(super) fn decode<T: FromJson>(key: &str, value: &str) -> Result<T, StoreError> {
    T::from_json(parse(key, value)?).map_err(|e| unreadable(key, e.to_string()))
}

/// The JSON of the value stored at `key`, once its format version is known to be readable:
/// the part of [`decode`] that does not depend on the row type, so one copy serves them all.
#[inline(never)]
fn parse(key: &str, value: &str) -> Result<Value, StoreError> {
    let json: Value = crate::core::json::from_str(value)
        .map_err(|e| unreadable(key, format!("not JSON ({e})")))?;
    match json.get("v").and_then(Value::as_u64) {
        None => Err(unreadable(key, "it has no format version \"v\"".into())),
        Some(v) if v > u64::from(RECORD_VERSION) => Err(StoreError::Version(format!(
            "record at key {key:?} has format version {v}, newer than this app's {RECORD_VERSION}"
        ))),
        Some(_) => Ok(json),
    }
}

/// One copy for every row type.
#[inline(never)]
fn unreadable(key: &str, why: String) -> StoreError {
    StoreError::Corrupted(format!(
        "unreadable record at key {key:?}: {why}; delete the key or restore it from a backup"
    ))
}

/// Every row decoded, or the first error: a plain loop (a `collect` into a `Result` costs an
/// iterator adapter stack per row type).
pub(super) fn decode_all<T: FromJson>(rows: &[(String, String)]) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for (k, v) in rows {
        out.push(decode(k, v)?);
    }
    Ok(out)
}
