//! [`JsStore`]'s writes. One `apply` is planned by synchronous code over the adapter's data
//! read so far ([`Reads`]): the rules every store shares ([`store_rules::validate`]), then the
//! writes of each op ([`Tx`]), coalesced into one write per key for the single `batch()` call.
//! A pass that needs a key or a key range not read yet notes it and goes on with a hopeful
//! answer; the notes are read from the adapter and the batch is planned again, until a pass
//! needs nothing new (two passes for most batches). Only the reads and the `batch` are
//! awaited: the planning is one small sync function instead of an async state machine per op.

use crate::core::vec_map::{VecMap, VecSet};
use std::cell::{Cell, RefCell};

use super::records::*;
use super::{JsStore, RECORD_VERSION};
use crate::core::approval::ApprovalRecord;
use crate::core::json_write::ToJson;
use crate::core::store::{StoreError, StoreOp};
use crate::core::store_rules::{self, Rec, Stored};

/// The adapter's data as read so far by one `apply`, and what its last pass asked for that was
/// not read yet.
#[derive(Default)]
struct Reads {
    /// Key → value as the adapter holds it (`None`: absent), from `get` and from `list`.
    got: VecMap<String, Option<String>>,
    /// Prefixes listed whole: every key under them is in `got`.
    listed: VecSet<String>,
    want_get: RefCell<Vec<String>>,
    want_list: RefCell<Vec<String>>,
    /// Set once the pass asked for something: its result will be thrown away, so it skips
    /// encoding records.
    dry: Cell<bool>,
}

impl Reads {
    fn get(&self, key: &str) -> Option<String> {
        match self.got.get(key) {
            Some(v) => v.clone(),
            None => {
                self.dry.set(true);
                self.want_get.borrow_mut().push(key.to_string());
                None
            }
        }
    }

    /// The keys the adapter holds under `prefix`, ascending.
    fn keys_under(&self, prefix: &str) -> VecSet<String> {
        if !self.listed.contains(prefix) {
            self.dry.set(true);
            self.want_list.borrow_mut().push(prefix.to_string());
            return VecSet::new();
        }
        // In key order: each insert appends.
        let mut keys = VecSet::new();
        for (k, v) in self.got.range_from(prefix) {
            if !k.starts_with(prefix) {
                break;
            }
            if v.is_some() {
                keys.insert(k.clone());
            }
        }
        keys
    }
}

impl Stored for Reads {
    fn exists(&self, rec: Rec<'_>, hoped: bool) -> bool {
        let k = match rec {
            Rec::World(w) => key("w", &[w]),
            Rec::Chat(w, c) => key("c", &[w, c]),
            Rec::Message(w, c, m) => key("mi", &[w, c, m]),
        };
        match self.got.get(&k) {
            Some(v) => v.is_some(),
            None => {
                self.dry.set(true);
                self.want_get.borrow_mut().push(k);
                hoped
            }
        }
    }

    /// No revisions here (`revision` is `None`): one writer per world, nothing to check.
    fn revision(&self, _world_id: &str) -> Option<u64> {
        None
    }
}

impl JsStore {
    /// Plans the batch (see the module docs) and sends its writes as one `batch()`, under the
    /// store's write lock. Each pass that asks for something reads at least one key or range
    /// it had not read, so it ends. One async body for the lock and the passes: a wrapper
    /// that took the lock was a state machine of its own around this one.
    pub(super) async fn apply_ops(&self, ops: Vec<StoreOp>) -> Result<(), StoreError> {
        let _writing = self.writing.lock().await;
        let ops = ops.as_slice();
        let mut reads = Reads::default();
        loop {
            reads.dry.set(false);
            let planned = store_rules::validate(ops, &reads).and_then(|()| {
                let mut tx = Tx {
                    reads: &reads,
                    writes: VecMap::new(),
                };
                for op in ops {
                    tx.run(op)?;
                }
                Ok(tx.writes)
            });
            if reads.want_get.borrow().is_empty() && reads.want_list.borrow().is_empty() {
                let writes = planned?;
                if !writes.is_empty() {
                    self.batch(&writes).await?;
                }
                return Ok(());
            }
            // A pass that asked for reads is thrown away: not held across the reads' awaits.
            drop(planned);
            // Popped one at a time, in the order asked: no list of them is kept across the
            // awaits.
            crate::core::reverse(&mut reads.want_get.borrow_mut());
            loop {
                let Some(k) = reads.want_get.borrow_mut().pop() else {
                    break;
                };
                if !reads.got.contains_key(&k) {
                    let v = self.get(&k).await?;
                    reads.got.insert(k, v);
                }
            }
            // Taken after the gets: not kept across their awaits.
            for p in reads.want_list.take() {
                if reads.listed.insert(p.clone()) {
                    let listed = self.list_all(p).await?;
                    reads
                        .got
                        .extend(listed.into_iter().map(|(k, v)| (k, Some(v))));
                }
            }
        }
    }
}

/// One pass of planning: the adapter's data as the batch has changed it so far. Reads see the
/// pending writes first; nothing reaches the adapter until [`JsStore::batch`].
struct Tx<'r> {
    reads: &'r Reads,
    /// Key → new value (`None`: deleted). One entry per key, so the batch is order-free.
    writes: VecMap<String, Option<String>>,
}

impl Tx<'_> {
    fn get(&self, key: &str) -> Option<String> {
        match self.writes.get(key) {
            Some(pending) => pending.clone(),
            None => self.reads.get(key),
        }
    }

    /// The keys under `prefix`, as the batch has changed them so far, ascending.
    fn keys_under(&self, prefix: &str) -> VecSet<String> {
        let mut keys = self.reads.keys_under(prefix);
        for (k, v) in self.writes.range_from(prefix) {
            if !k.starts_with(prefix) {
                break;
            }
            if v.is_some() {
                keys.insert(k.clone());
            } else {
                keys.remove(k);
            }
        }
        keys
    }

    /// Writes a record; a dry pass (see [`Reads::dry`]) only notes the key, unless `always`
    /// (the counters and sequence rows later ops of the pass read back).
    fn put<T: ToJson>(&mut self, key: String, row: &T) {
        self.put_row(key, row, false)
    }

    fn put_row<T: ToJson>(&mut self, key: String, row: &T, always: bool) {
        let value = if always || !self.reads.dry.get() {
            encode(row)
        } else {
            String::new()
        };
        self.write(key, Some(value));
    }

    fn delete(&mut self, key: String) {
        self.write(key, None);
    }

    /// The one body behind [`Tx::put_row`] and [`Tx::delete`].
    #[inline(never)]
    fn write(&mut self, key: String, value: Option<String>) {
        self.writes.insert(key, value);
    }

    fn delete_under(&mut self, prefix: &str) {
        for k in self.keys_under(prefix) {
            self.delete(k);
        }
    }

    /// Takes the next number of the counter at `counter_key` (1 for a new counter).
    fn next(&mut self, counter_key: String) -> Result<u64, StoreError> {
        let seq = match self.get(&counter_key) {
            Some(v) => decode_num(&counter_key, &v, "next")?,
            None => 1,
        };
        self.put_row(
            counter_key,
            &CounterRow {
                v: RECORD_VERSION,
                next: seq + 1,
            },
            true,
        );
        Ok(seq)
    }

    /// The agent's key in the world (`aww/a/{w}/{order}/{a}`), if it exists.
    fn agent_key(&self, w: &str, a: &str) -> Result<(Option<String>, u64), StoreError> {
        let enc = encode_id(a);
        let mut next_order = 0;
        let mut found = None;
        for k in self.keys_under(&prefix("a", &[w])) {
            let mut parts = crate::core::rsplit(&k, b'/');
            let id = parts.next().unwrap_or_default();
            let order = parts.next().and_then(crate::core::parse_u64);
            let Some(order) = order else {
                return Err(StoreError::Corrupted(format!(
                    "unreadable agent key {k:?}: no order; delete the key"
                )));
            };
            next_order = next_order.max(order + 1);
            if id == enc {
                found = Some(k);
            }
        }
        Ok((found, next_order))
    }

    /// Adds one op's writes. The batch has passed [`store_rules::validate`]: the worlds and chats
    /// it needs exist and its message ids are new, so this only writes.
    fn run(&mut self, op: &StoreOp) -> Result<(), StoreError> {
        match op {
            StoreOp::ExpectRevision { .. } => {}
            StoreOp::PutWorld(world) => {
                let k = key("w", &[&world.id]);
                self.put(
                    k,
                    &WorldRow {
                        v: RECORD_VERSION,
                        world,
                    },
                );
            }
            StoreOp::DeleteWorld { world_id } => {
                let w = world_id.as_str();
                self.delete(key("w", &[w]));
                for kind in ["a", "c", "m", "mi", "n", "mem", "nm", "s", "ap"] {
                    self.delete_under(&prefix(kind, &[w]));
                }
            }
            StoreOp::PutAgent { world_id, agent } => {
                let (existing, next_order) = self.agent_key(world_id, &agent.id)?;
                let (k, order) = match existing {
                    Some(k) => {
                        let order = crate::core::rsplit(&k, b'/')
                            .nth(1)
                            .and_then(crate::core::parse_u64)
                            .unwrap_or(next_order);
                        (k, order)
                    }
                    None => {
                        let enc = [
                            encode_id(world_id),
                            format!("{next_order:010}"),
                            encode_id(&agent.id),
                        ];
                        (raw_key("a", &[&enc[0], &enc[1], &enc[2]]), next_order)
                    }
                };
                self.put(
                    k,
                    &AgentRow {
                        v: RECORD_VERSION,
                        order,
                        agent,
                    },
                );
            }
            StoreOp::DeleteAgent { world_id, agent_id } => {
                let (w, a) = (world_id.as_str(), agent_id.as_str());
                if let Some(k) = self.agent_key(w, a)?.0 {
                    self.delete(k);
                }
                let (we, ae) = (encode_id(w), encode_id(a));
                for chat_key in self.keys_under(&prefix("c", &[w])) {
                    let ce = last_part(&chat_key).to_string();
                    self.delete_under(&format!("{}/", raw_key("mem", &[&we, &ce, &ae])));
                    self.delete(raw_key("nm", &[&we, &ce, &ae]));
                    self.delete(raw_key("s", &[&we, &ce, &ae]));
                    // The agent's pending approvals (their key does not name the agent).
                    for k in self.keys_under(&format!("{}/", raw_key("ap", &[&we, &ce]))) {
                        let Some(v) = self.get(&k) else {
                            continue;
                        };
                        let (_, approval): (_, ApprovalRecord) = decode(&k, &v, None, "approval")?;
                        if approval.agent_id == a {
                            self.delete(k);
                        }
                    }
                }
            }
            StoreOp::PutChat(chat) => {
                let k = key("c", &[&chat.world_id, &chat.id]);
                self.put(
                    k,
                    &ChatRow {
                        v: RECORD_VERSION,
                        chat,
                    },
                );
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                self.delete(key("c", &ids));
                self.delete(key("n", &ids));
                for kind in ["m", "mi", "mem", "nm", "s", "ap"] {
                    self.delete_under(&prefix(kind, &ids));
                }
            }
            StoreOp::AppendMessage {
                world_id,
                chat_id,
                message,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                let id_key = key("mi", &[ids[0], ids[1], &message.message_id]);
                let seq = self.next(key("n", &ids))?;
                let k = seq_key(prefix("m", &ids), seq);
                self.put(
                    id_key,
                    &SeqRow {
                        v: RECORD_VERSION,
                        seq,
                    },
                );
                self.put(
                    k,
                    &MessageRow {
                        v: RECORD_VERSION,
                        seq,
                        message,
                    },
                );
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                entry,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str(), agent_id.as_str()];
                let seq = self.next(key("nm", &ids))?;
                let k = seq_key(prefix("mem", &ids), seq);
                self.put(
                    k,
                    &MemoryRow {
                        v: RECORD_VERSION,
                        agent_id,
                        seq,
                        entry,
                    },
                );
            }
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                for id in message_ids {
                    let id_key = key("mi", &[ids[0], ids[1], id]);
                    if let Some(v) = self.get(&id_key) {
                        let seq = decode_num(&id_key, &v, "seq")?;
                        self.delete(seq_key(prefix("m", &ids), seq));
                        self.delete(id_key);
                    }
                }
                // Memory is keyed by agent then seq: the chat's entries are read once to find
                // the ones that came from these messages (editing is rare; appends stay O(1)).
                let doomed: VecSet<&str> = message_ids.iter().map(String::as_str).collect();
                for k in self.keys_under(&prefix("mem", &ids)) {
                    let Some(v) = self.get(&k) else {
                        continue;
                    };
                    let row: MemoryRow = decode_row(&k, &v)?;
                    if doomed.contains(row.entry.message_id.as_str()) {
                        self.delete(k);
                    }
                }
            }
            StoreOp::ReplaceMessage {
                world_id,
                chat_id,
                old_message_id,
                message,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                let old_key = key("mi", &[ids[0], ids[1], old_message_id]);
                let Some(v) = self.get(&old_key) else {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                };
                let seq = decode_num(&old_key, &v, "seq")?;
                let new_key = key("mi", &[ids[0], ids[1], &message.message_id]);
                // Same seq: the new message has the old one's place.
                self.delete(old_key);
                self.put(
                    new_key,
                    &SeqRow {
                        v: RECORD_VERSION,
                        seq,
                    },
                );
                self.put(
                    seq_key(prefix("m", &ids), seq),
                    &MessageRow {
                        v: RECORD_VERSION,
                        seq,
                        message,
                    },
                );
            }
            StoreOp::ClearMemory {
                world_id,
                chat_id,
                agent_id,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str(), agent_id.as_str()];
                self.delete_under(&prefix("mem", &ids));
            }
            StoreOp::PutAgentState {
                world_id,
                chat_id,
                state,
            } => {
                let k = key("s", &[world_id, chat_id, &state.agent_id]);
                self.put(
                    k,
                    &StateRow {
                        v: RECORD_VERSION,
                        state,
                    },
                );
            }
            StoreOp::PutApproval(approval) => {
                let chat_id = approval.chat_id.as_deref().unwrap_or_default();
                let k = key("ap", &[&approval.world_id, chat_id, &approval.approval_id]);
                self.put(
                    k,
                    &ApprovalRow {
                        v: RECORD_VERSION,
                        approval: &**approval,
                    },
                );
            }
            StoreOp::DeleteApproval {
                world_id,
                chat_id,
                approval_id,
            } => {
                self.delete(key("ap", &[world_id, chat_id, approval_id]));
            }
        }
        Ok(())
    }
}
