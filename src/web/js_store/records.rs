//! The adapter store's key layout (see the table in [`super`]) and its records: the row
//! types, and how a row becomes the JSON text stored at its key and back (format version
//! checked first).

use crate::core::json::Value;

use super::RECORD_VERSION;
use crate::core::json::{from_json_struct, Fields, FromJson};
use crate::core::json_write::{Obj, ToJson};
use crate::core::model::MemoryEntry;
use crate::core::store::StoreError;

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
    let mut k = format!("aww/{kind}");
    for id in ids {
        k.push('/');
        k.push_str(&encode_id(id));
    }
    k
}

/// The prefix of every key of `kind` under the ids (ends with `/`).
pub(crate) fn prefix(kind: &str, ids: &[&str]) -> String {
    let mut k = key(kind, ids);
    k.push('/');
    k
}

/// The key of the record numbered `seq` under `prefix` (a message, a memory entry).
#[inline(never)]
pub(super) fn seq_key(mut prefix: String, seq: u64) -> String {
    prefix.push_str(&format!("{seq:012}"));
    prefix
}

/// The last `/`-separated part of a key.
pub(super) fn last_part(k: &str) -> &str {
    crate::core::rsplit(k, b'/').next().unwrap_or(k)
}

// The record types, as they are written (a borrowed payload); reads take their fields out
// with [`decode`], except for the memory rows (a string field before the number).
pub(super) struct WorldRow<T> {
    pub(super) v: u32,
    pub(super) world: T,
}

pub(super) struct AgentRow<T> {
    pub(super) v: u32,
    pub(super) order: u64,
    pub(super) agent: T,
}

pub(super) struct ChatRow<T> {
    pub(super) v: u32,
    pub(super) chat: T,
}

pub(super) struct MessageRow<T> {
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

pub(super) struct StateRow<T> {
    pub(super) v: u32,
    pub(super) state: T,
}

pub(super) struct ApprovalRow<T> {
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

// The memory rows as they are read back (unknown fields ignored, by `crate::core::json`'s
// rules, which are serde's).
from_json_struct!(MemoryRow, allow, { v: "v" req, agent_id: "agentId" req, seq: "seq" req,
    entry: "entry" need });

/// A record's stored text (its hand-written writer: byte-identical to the derived form it
/// replaced, so values already stored and read by an application's own code do not change).
pub(super) fn encode<T: ToJson>(row: &T) -> String {
    row.to_json()
}

/// Reads the record stored at `key` as serde read its row type did (unknown fields ignored,
/// the first error by field order): the format version checked first, then the number field
/// `num` (required; returned, 0 without one), then the `payload` field. One generic step per
/// payload type: reading rows through a `FromJson` per row type cost a decoder, a `decode`
/// and a `decode_all` for each of them.
pub(super) fn decode<T: FromJson>(
    key: &str,
    value: &str,
    num: Option<&str>,
    payload: &str,
) -> Result<(u64, T), StoreError> {
    let (mut fields, n) = fields(key, value, num)?;
    match fields.need(payload) {
        Ok(t) => Ok((n, t)),
        Err(e) => Err(unreadable(key, e.to_string())),
    }
}

/// The number field `name` of the record stored at `key` (a counter's `next`, a message id's
/// `seq`).
pub(super) fn decode_num(key: &str, value: &str, name: &str) -> Result<u64, StoreError> {
    let (mut fields, n) = fields(key, value, Some(name))?;
    fields.done(n).map_err(|e| unreadable(key, e.to_string()))
}

/// A memory row stored at `key`, read whole (its `agentId` comes before its number).
pub(super) fn decode_row<T: FromJson>(key: &str, value: &str) -> Result<T, StoreError> {
    T::from_json(parse(key, value)?).map_err(|e| unreadable(key, e.to_string()))
}

/// The fields of the record at `key` with its number field `num` read: the part of [`decode`]
/// that does not depend on the payload type. (`v` needs no reading: [`parse`] has checked it
/// is an integer no larger than [`RECORD_VERSION`].)
#[inline(never)]
fn fields(key: &str, value: &str, num: Option<&str>) -> Result<(Fields, u64), StoreError> {
    let mut fields = Fields::of(parse(key, value)?, &[], false);
    let n = match num {
        Some(name) => fields.req::<u64>(name),
        None => 0,
    };
    Ok((fields, n))
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

/// Every row's payload decoded (see [`decode`]), or the first error.
pub(super) fn decode_all<T: FromJson>(
    rows: &[(String, String)],
    num: Option<&str>,
    payload: &str,
) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for (k, v) in rows {
        out.push(decode(k, v, num, payload)?.1);
    }
    Ok(out)
}
