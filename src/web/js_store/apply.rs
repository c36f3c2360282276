//! [`JsStore`]'s writes: one `apply` validates its ops with the rules every store shares
//! ([`store_rules::validate`]) against the adapter's keys it reads first ([`Prefetched`]), then
//! turns them into writes against the adapter's data seen through the batch's own pending
//! writes ([`Tx`]), coalesced into one write per key for the single `batch()` call.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::records::*;
use super::{JsStore, RECORD_VERSION};
use crate::core::store::{StoreError, StoreOp};
use crate::core::store_rules::{self, Rec, Stored};

/// The adapter's answers to [`store_rules::validate`]'s questions: the keys read so far, and
/// the ones a pass asked for that were not read yet (answered as hoped, read before the next).
#[derive(Default)]
struct Prefetched {
    read: BTreeSet<String>,
    /// Of `read`, the keys the adapter holds.
    present: BTreeSet<String>,
    asked: RefCell<Vec<String>>,
}

impl Stored for Prefetched {
    fn exists(&self, rec: Rec<'_>, hoped: bool) -> bool {
        let k = match rec {
            Rec::World(w) => key("w", &[w]),
            Rec::Chat(w, c) => key("c", &[w, c]),
            Rec::Message(w, c, m) => key("mi", &[w, c, m]),
        };
        if self.read.contains(&k) {
            return self.present.contains(&k);
        }
        self.asked.borrow_mut().push(k);
        hoped
    }

    /// No revisions here (`revision` is `None`): one writer per world, nothing to check.
    fn revision(&self, _world_id: &str) -> Option<u64> {
        None
    }
}

impl JsStore {
    /// Validates the batch: a pass of the rules on the keys read so far, reading what it asked
    /// for, until a pass asks for nothing new (two passes, three when an op's first question
    /// is answered "no"); each pass reads at least one new key, so it ends.
    pub(super) async fn validate(&self, ops: &[StoreOp]) -> Result<(), StoreError> {
        let mut seen = Prefetched::default();
        loop {
            let verdict = store_rules::validate(ops, &seen);
            let asked = seen.asked.take();
            if asked.is_empty() {
                return verdict;
            }
            for k in asked {
                if seen.read.insert(k.clone()) && self.get(&k).await?.is_some() {
                    seen.present.insert(k);
                }
            }
        }
    }
}

/// One `apply` in progress: the adapter's data as the batch has changed it so far. Reads see
/// the pending writes first; nothing reaches the adapter until [`JsStore::batch`].
pub(super) struct Tx<'s> {
    pub(super) store: &'s JsStore,
    /// Key → new value (`None`: deleted). One entry per key, so the batch is order-free.
    pub(super) writes: BTreeMap<String, Option<String>>,
}

impl Tx<'_> {
    async fn get(&self, key: &str) -> Result<Option<String>, StoreError> {
        match self.writes.get(key) {
            Some(pending) => Ok(pending.clone()),
            None => self.store.get(key).await,
        }
    }

    /// The keys under `prefix`, as the batch has changed them so far, ascending.
    async fn keys_under(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: std::collections::BTreeSet<String> = self
            .store
            .list_all(prefix)
            .await?
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for (k, v) in self.writes.range(prefix.to_string()..) {
            if !k.starts_with(prefix) {
                break;
            }
            if v.is_some() {
                keys.insert(k.clone());
            } else {
                keys.remove(k);
            }
        }
        Ok(keys.into_iter().collect())
    }

    fn put<T: Serialize>(&mut self, key: String, row: &T) -> Result<(), StoreError> {
        let value = encode(row, &key)?;
        self.writes.insert(key, Some(value));
        Ok(())
    }

    fn delete(&mut self, key: String) {
        self.writes.insert(key, None);
    }

    async fn delete_under(&mut self, prefix: &str) -> Result<(), StoreError> {
        for k in self.keys_under(prefix).await? {
            self.delete(k);
        }
        Ok(())
    }

    /// Takes the next number of the counter at `counter_key` (1 for a new counter).
    async fn next(&mut self, counter_key: String) -> Result<u64, StoreError> {
        let seq = match self.get(&counter_key).await? {
            Some(v) => decode::<CounterRow>(&counter_key, &v)?.next,
            None => 1,
        };
        self.put(
            counter_key,
            &CounterRow {
                v: RECORD_VERSION,
                next: seq + 1,
            },
        )?;
        Ok(seq)
    }

    /// The agent's key in the world (`aww/a/{w}/{order}/{a}`), if it exists.
    async fn agent_key(&self, w: &str, a: &str) -> Result<(Option<String>, u64), StoreError> {
        let enc = encode_id(a);
        let mut next_order = 0;
        let mut found = None;
        for k in self.keys_under(&prefix("a", &[w])).await? {
            let mut parts = k.rsplit('/');
            let id = parts.next().unwrap_or_default();
            let order = parts.next().and_then(|o| o.parse::<u64>().ok());
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

    /// Adds one op's writes. The batch has passed [`JsStore::validate`]: the worlds and chats
    /// it needs exist and its message ids are new, so this only writes.
    pub(super) async fn run(&mut self, op: StoreOp) -> Result<(), StoreError> {
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
                )?;
            }
            StoreOp::DeleteWorld { world_id } => {
                let w = world_id.as_str();
                self.delete(key("w", &[w]));
                for kind in ["a", "c", "m", "mi", "n", "mem", "nm", "s", "ap"] {
                    self.delete_under(&prefix(kind, &[w])).await?;
                }
            }
            StoreOp::PutAgent { world_id, agent } => {
                let (existing, next_order) = self.agent_key(&world_id, &agent.id).await?;
                let (k, order) = match existing {
                    Some(k) => {
                        let order = k
                            .rsplit('/')
                            .nth(1)
                            .and_then(|o| o.parse::<u64>().ok())
                            .unwrap_or(next_order);
                        (k, order)
                    }
                    None => {
                        let enc = [
                            encode_id(&world_id),
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
                )?;
            }
            StoreOp::DeleteAgent { world_id, agent_id } => {
                let (w, a) = (world_id.as_str(), agent_id.as_str());
                if let Some(k) = self.agent_key(w, a).await?.0 {
                    self.delete(k);
                }
                let (we, ae) = (encode_id(w), encode_id(a));
                for chat_key in self.keys_under(&prefix("c", &[w])).await? {
                    let ce = last_part(&chat_key).to_string();
                    self.delete_under(&format!("{}/", raw_key("mem", &[&we, &ce, &ae])))
                        .await?;
                    self.delete(raw_key("nm", &[&we, &ce, &ae]));
                    self.delete(raw_key("s", &[&we, &ce, &ae]));
                    // The agent's pending approvals (their key does not name the agent).
                    for k in self
                        .keys_under(&format!("{}/", raw_key("ap", &[&we, &ce])))
                        .await?
                    {
                        let Some(v) = self.get(&k).await? else {
                            continue;
                        };
                        if decode::<ApprovalRow>(&k, &v)?.approval.agent_id == a {
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
                )?;
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                self.delete(key("c", &ids));
                self.delete(key("n", &ids));
                for kind in ["m", "mi", "mem", "nm", "s", "ap"] {
                    self.delete_under(&prefix(kind, &ids)).await?;
                }
            }
            StoreOp::AppendMessage {
                world_id,
                chat_id,
                message,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                let id_key = key("mi", &[ids[0], ids[1], &message.message_id]);
                let seq = self.next(key("n", &ids)).await?;
                let k = format!("{}{}", prefix("m", &ids), seq_part(seq));
                self.put(
                    id_key,
                    &SeqRow {
                        v: RECORD_VERSION,
                        seq,
                    },
                )?;
                self.put(
                    k,
                    &MessageRow {
                        v: RECORD_VERSION,
                        seq,
                        message,
                    },
                )?;
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                entry,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str(), agent_id.as_str()];
                let seq = self.next(key("nm", &ids)).await?;
                let k = format!("{}{}", prefix("mem", &ids), seq_part(seq));
                self.put(
                    k,
                    &MemoryRow {
                        v: RECORD_VERSION,
                        agent_id,
                        seq,
                        entry,
                    },
                )?;
            }
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str()];
                for id in &message_ids {
                    let id_key = key("mi", &[ids[0], ids[1], id]);
                    if let Some(v) = self.get(&id_key).await? {
                        let seq = decode::<SeqRow>(&id_key, &v)?.seq;
                        self.delete(format!("{}{}", prefix("m", &ids), seq_part(seq)));
                        self.delete(id_key);
                    }
                }
                // Memory is keyed by agent then seq: the chat's entries are read once to find
                // the ones that came from these messages (editing is rare; appends stay O(1)).
                let doomed: std::collections::BTreeSet<&str> =
                    message_ids.iter().map(String::as_str).collect();
                for k in self.keys_under(&prefix("mem", &ids)).await? {
                    let Some(v) = self.get(&k).await? else {
                        continue;
                    };
                    let row: MemoryRow = decode(&k, &v)?;
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
                let old_key = key("mi", &[ids[0], ids[1], &old_message_id]);
                let Some(v) = self.get(&old_key).await? else {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                };
                let seq = decode::<SeqRow>(&old_key, &v)?.seq;
                let new_key = key("mi", &[ids[0], ids[1], &message.message_id]);
                // Same seq: the new message has the old one's place.
                self.delete(old_key);
                self.put(
                    new_key,
                    &SeqRow {
                        v: RECORD_VERSION,
                        seq,
                    },
                )?;
                self.put(
                    format!("{}{}", prefix("m", &ids), seq_part(seq)),
                    &MessageRow {
                        v: RECORD_VERSION,
                        seq,
                        message,
                    },
                )?;
            }
            StoreOp::ClearMemory {
                world_id,
                chat_id,
                agent_id,
            } => {
                let ids = [world_id.as_str(), chat_id.as_str(), agent_id.as_str()];
                self.delete_under(&prefix("mem", &ids)).await?;
            }
            StoreOp::PutAgentState {
                world_id,
                chat_id,
                state,
            } => {
                let k = key("s", &[&world_id, &chat_id, &state.agent_id]);
                self.put(
                    k,
                    &StateRow {
                        v: RECORD_VERSION,
                        state,
                    },
                )?;
            }
            StoreOp::PutApproval(approval) => {
                let chat_id = approval.chat_id.as_deref().unwrap_or_default();
                let k = key("ap", &[&approval.world_id, chat_id, &approval.approval_id]);
                self.put(
                    k,
                    &ApprovalRow {
                        v: RECORD_VERSION,
                        approval: *approval,
                    },
                )?;
            }
            StoreOp::DeleteApproval {
                world_id,
                chat_id,
                approval_id,
            } => {
                self.delete(key("ap", &[&world_id, &chat_id, &approval_id]));
            }
        }
        Ok(())
    }
}
