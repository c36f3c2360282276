//! The common write of [`IdbStore`](super::idb_store::IdbStore) in one burst: a batch whose
//! every read the connection already knows is issued with no awaited read before its writes.
//!
//! The [read round](super::idb_write) costs a round trip to the browser's database process
//! before the first write can be issued (about 0.3–0.6 ms; a bare single-put transaction is
//! about 0.5 ms). A turn of the engine needs nothing from it that the connection did not see
//! at its own last commit: the world row (to raise its revision) and the next `seq` of the
//! chat and of each memory it appends to. [`Known`] keeps those per world, valid exactly while
//! the world is at the revision this connection last committed: every other writer's batch
//! raises it (the over-quota delete retry aside, see below), so the batch's
//! [`StoreOp::ExpectRevision`] both states the engine's view and vouches for what is known.
//!
//! The burst: the checks are requests issued first (the world row: present and at the
//! expected revision; each chat the batch writes into without putting it first), then every
//! write, then the checks' results are awaited. IndexedDB runs a transaction's requests in
//! the order they were placed and delivers their results in that order, and it commits only
//! once every request has completed and its result event has been dispatched (W3C IndexedDB
//! 3.0, "transaction lifecycle": a transaction commits when all requests placed against it
//! have completed and their returned results handled); so the checks' results reach this code
//! (in the microtask of their success event, while the transaction is active) before any write
//! can commit, and a failed check aborts the transaction, which rolls the writes back.
//! `commit()` is called only after the checks passed: an explicit commit does not wait for
//! outstanding results.
//!
//! A failed burst leaves nothing written and the store forgets the world. A failed check or
//! a key the database refused (`ConstraintError`: a duplicate message id through the unique
//! index, a stale `seq`) sends the batch through the read round, which judges it with the
//! memory store's rules and error texts (`Conflict`, `Invalid`, …): the burst never decides
//! those itself, at worst it costs one aborted transaction. Any other failure (quota, an
//! abort from elsewhere, a closed connection) is one the read round would meet as well: it is
//! the batch's error, reported as the read round reports it, and the batch is not retried.
//!
//! What a connection knows survives only its own commits: a batch the burst cannot do (other
//! ops, a chat or memory whose next `seq` it has not seen) goes through the read round, which
//! teaches it; a batch that deletes a world or a chat, the over-quota delete retry that does
//! not raise the revision (another connection's such retry can delete behind a revision that
//! did not move: the `seq`s known stay at or above the stored ones, and a deleted chat still
//! fails its check), and any failure make it forget the world.

use std::collections::HashMap;

use futures_util::future::try_join_all;
use indexed_db_futures::prelude::*;
use indexed_db_futures::KeyRange;
use wasm_bindgen::{JsCast, JsValue};

use super::idb_schema::{key, ChatRow, MemoryRow, MessageRow, StateRow, WorldRow, RECORD_VERSION};
use super::idb_store::{encode, map_idb_error};
use super::idb_write::{issue, row_revision, Fact, Found, Stores};
use crate::core::store::{LocalBoxFuture, StoreError, StoreOp};
use crate::core::store_rules;

/// What one connection knows of the worlds it committed to (see the module docs). Flat maps
/// of the key types the read round uses, and a list of worlds (a connection has few).
#[derive(Default)]
pub(super) struct Known {
    /// Each world: its id, the revision this connection's last commit to it raised it to, and
    /// the world row as that commit left it.
    worlds: Vec<(String, f64, JsValue)>,
    /// The next message `seq` of each `(world, chat)`.
    message_seq: HashMap<(String, String), f64>,
    /// The next memory `seq` of each `(world, chat, agent)`.
    memory_seq: HashMap<(String, String, String), f64>,
}

impl Known {
    fn world(&self, w: &str) -> Option<&(String, f64, JsValue)> {
        self.worlds.iter().find(|(x, _, _)| x == w)
    }

    fn rev(&self, w: &str) -> Option<f64> {
        self.world(w).map(|(_, rev, _)| *rev)
    }

    /// Forgets everything of world `w`.
    pub(super) fn forget(&mut self, w: &str) {
        self.worlds.retain(|(x, _, _)| x != w);
        self.message_seq.retain(|(x, _), _| x != w);
        self.memory_seq.retain(|(x, _, _), _| x != w);
    }

    /// Sets world `w` at `rev` with `row`, keeping its `seq`s only when they were known at
    /// `from` (the revision the commit started from).
    fn set(&mut self, w: String, from: f64, rev: f64, row: JsValue) {
        if self.rev(&w) != Some(from) {
            self.forget(&w);
        }
        self.worlds.retain(|(x, _, _)| *x != w);
        self.worlds.push((w, rev, row));
    }

    /// Adds `seq`s of worlds that are known.
    fn extend(
        &mut self,
        message_seq: HashMap<(String, String), f64>,
        memory_seq: HashMap<(String, String, String), f64>,
    ) {
        for (k, seq) in message_seq {
            if self.world(&k.0).is_some() {
                self.message_seq.insert(k, seq);
            }
        }
        for (k, seq) in memory_seq {
            if self.world(&k.0).is_some() {
                self.memory_seq.insert(k, seq);
            }
        }
    }
}

/// What a committed batch through the read round taught (see [`learn`]).
#[derive(Default)]
pub(super) struct Learned {
    /// Each named world: its revision before the batch and its row after it (`None`: the
    /// world does not exist after the batch).
    pub(super) worlds: Vec<(String, f64, Option<JsValue>)>,
    /// The next `seq` of each chat the batch appended to or looked up.
    pub(super) message_seq: HashMap<(String, String), f64>,
    /// The next `seq` of each memory the batch appended to or looked up.
    pub(super) memory_seq: HashMap<(String, String, String), f64>,
}

/// Records what a batch committed through the read round with its revision raised taught.
/// A batch that deleted a world or a chat teaches nothing about that world (a chat's `seq`s
/// restart once it is gone). Knowledge of an older revision is dropped, not merged.
pub(super) fn learn(known: &mut Known, ops: &[StoreOp], learned: Learned) {
    let Learned {
        worlds,
        message_seq,
        memory_seq,
    } = learned;
    for (w, rev_before, row) in worlds {
        let wipes = ops.iter().any(|op| {
            matches!(op, StoreOp::DeleteWorld { world_id } | StoreOp::DeleteChat { world_id, .. }
                if *world_id == w)
        });
        match row.filter(|_| !wipes) {
            // What was known at the revision this batch started from still holds.
            Some(row) => known.set(w, rev_before, rev_before + 1.0, row),
            None => known.forget(&w),
        }
    }
    known.extend(message_seq, memory_seq);
}

/// Records a committed burst: `after` (from [`write`]) over what was known, which still
/// holds for the chats and memories the burst did not touch (the revision moved by our own
/// commit only).
pub(super) fn committed(known: &mut Known, after: Known) {
    for (w, rev, row) in after.worlds {
        known.set(w, rev - 1.0, rev, row);
    }
    known.extend(after.message_seq, after.memory_seq);
}

/// A batch the burst can do: everything it needs to know, taken from [`Known`].
pub(super) struct Plan {
    /// Each named world with the revision the batch expects and its row as known.
    worlds: Vec<(String, f64, JsValue)>,
    /// The chats whose existence the burst checks.
    chats: Vec<(String, String)>,
    /// The `seq` of each append of the batch, in op order.
    seqs: Vec<f64>,
    /// The next `seq`s after the batch.
    message_seq: HashMap<(String, String), f64>,
    memory_seq: HashMap<(String, String, String), f64>,
}

/// The burst's plan for `ops`, or `None` when the batch needs the read round: a named world
/// not known or not expected at its known revision, an op other than the engine's common
/// ones, an append whose next `seq` is not known.
pub(super) fn plan(
    known: &Known,
    ops: &[StoreOp],
    named: &[(String, &'static str)],
) -> Option<Plan> {
    let mut worlds = Vec::with_capacity(named.len());
    for (w, _) in named {
        let k = known.world(w)?;
        let expects_known = ops.iter().any(|op| {
            matches!(op, StoreOp::ExpectRevision { world_id, rev } if world_id == w
                && *rev as f64 == k.1)
        });
        if !expects_known {
            return None;
        }
        worlds.push(k.clone());
    }
    // The rules on hoped answers: a batch they refuse whatever is stored goes through the read
    // round, which reports it; the chats they ask about are checked. The named worlds are
    // checked above and message ids by the unique index (see the module docs).
    let hoped = Found::default();
    store_rules::validate(ops, &hoped).ok()?;
    let chats = hoped
        .noted
        .into_inner()
        .into_iter()
        .filter_map(|parts| match <[String; 2]>::try_from(parts) {
            Ok([w, c]) => Some((w, c)),
            Err(_) => None,
        })
        .collect();
    let mut seqs = Vec::new();
    let mut message_seq: HashMap<(String, String), f64> = HashMap::new();
    let mut memory_seq: HashMap<(String, String, String), f64> = HashMap::new();
    for op in ops {
        match op {
            // Every named world's is checked above; a second one for it must agree.
            StoreOp::ExpectRevision { world_id, rev } => {
                if known.rev(world_id) != Some(*rev as f64) {
                    return None;
                }
            }
            StoreOp::PutWorld(_) | StoreOp::PutChat(_) | StoreOp::PutAgentState { .. } => {}
            StoreOp::AppendMessage {
                world_id, chat_id, ..
            } => {
                let k = (world_id.clone(), chat_id.clone());
                let next = match message_seq.get(&k) {
                    Some(seq) => *seq,
                    None => *known.message_seq.get(&k)?,
                };
                seqs.push(next);
                message_seq.insert(k, next + 1.0);
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                ..
            } => {
                let k = (world_id.clone(), chat_id.clone(), agent_id.clone());
                let next = match memory_seq.get(&k) {
                    Some(seq) => *seq,
                    None => *known.memory_seq.get(&k)?,
                };
                seqs.push(next);
                memory_seq.insert(k, next + 1.0);
            }
            _ => return None,
        }
    }
    Some(Plan {
        worlds,
        chats,
        seqs,
        message_seq,
        memory_seq,
    })
}

/// Issues the burst (checks, then writes) and awaits the checks: `Ok(true)` when they passed
/// (the caller commits, in the same microtask), `Ok(false)` when one failed (the caller
/// aborts at once). Afterwards `known` is what the commit will leave, to store on success.
pub(super) async fn write(
    s: &Stores<'_>,
    ops: &[StoreOp],
    plan: Plan,
) -> Result<(bool, Known), StoreError> {
    const CTX: &str = "checking what the batch depends on";
    let fail = |e| map_idb_error(CTX, e);
    // The checks first (requests are issued when built; awaited below). The boxed future
    // type and `Fact` are the read round's, so the module keeps one copy of the join.
    let mut checks: Vec<LocalBoxFuture<'_, Result<Fact, StoreError>>> = Vec::new();
    for (w, _, _) in &plan.worlds {
        let request = s
            .worlds
            .get::<JsValue, JsValue, _>(KeyRange::Only(JsValue::from_str(w)))
            .primitive()
            .map_err(fail)?;
        checks.push(Box::pin(async move {
            Ok(Fact::Value(request.await.map_err(fail)?))
        }));
    }
    for (w, c) in &plan.chats {
        let request = s
            .chats
            .get_key::<JsValue, _>(KeyRange::Only(key(&[w, c]).into()))
            .primitive()
            .map_err(fail)?;
        checks.push(Box::pin(async move {
            Ok(Fact::Value(request.await.map_err(fail)?))
        }));
    }
    // Then every write, in op order.
    let mut rows: Vec<(String, JsValue)> = Vec::new();
    let mut seqs = plan.seqs.into_iter();
    for op in ops {
        match op {
            StoreOp::ExpectRevision { .. } => {}
            StoreOp::PutWorld(world) => {
                let row = WorldRow {
                    v: RECORD_VERSION,
                    world_id: world.id.clone(),
                    world: world.clone(),
                    rev: revision_of(&plan.worlds, &world.id) + 1.0,
                };
                let value = encode(&row, "writing a world")?;
                issue(s.worlds.put(value.clone()).primitive(), "writing a world")?;
                rows.push((world.id.clone(), value));
            }
            StoreOp::PutChat(_)
            | StoreOp::AppendMessage { .. }
            | StoreOp::AppendMemory { .. }
            | StoreOp::PutAgentState { .. } => {
                write_common(s, op, seqs.next().unwrap_or_default())?;
            }
            // `plan` accepts no other op.
            _ => {
                return Err(StoreError::Backend(
                    "internal: an op the one-burst write does not do".to_string(),
                ))
            }
        }
    }
    // Each named world the batch did not put: its row as known, revision raised by one.
    let mut after = Known {
        worlds: Vec::with_capacity(plan.worlds.len()),
        message_seq: plan.message_seq,
        memory_seq: plan.memory_seq,
    };
    let expected: Vec<f64> = plan.worlds.iter().map(|(_, rev, _)| *rev).collect();
    for (w, rev, row) in plan.worlds {
        let row = match rows.iter().rposition(|(x, _)| *x == w) {
            Some(i) => rows.swap_remove(i).1,
            None => {
                let raised = raise(&row, &w, rev + 1.0)?;
                issue(
                    s.worlds.put(raised.clone()).primitive(),
                    "raising a world's revision",
                )?;
                raised
            }
        };
        after.worlds.push((w, rev + 1.0, row));
    }
    // Each world row present at its expected revision, each chat present.
    let facts = try_join_all(checks).await?;
    let passed = facts
        .iter()
        .enumerate()
        .all(|(i, fact)| match (fact, expected.get(i)) {
            (Fact::Value(Some(row)), Some(rev)) => row.is_object() && row_revision(row) == *rev,
            (Fact::Value(found), None) => found.is_some(),
            (Fact::Value(None), Some(_)) | (Fact::Seq(_), _) => false,
        });
    Ok((passed, after))
}

/// Issues the write of one of the common ops (a chat, a message or memory entry at `seq`, an
/// agent's counters), as the burst and the read round both write it. Other ops: nothing.
pub(super) fn write_common(s: &Stores<'_>, op: &StoreOp, seq: f64) -> Result<(), StoreError> {
    match op {
        StoreOp::PutChat(chat) => {
            let row = ChatRow {
                v: RECORD_VERSION,
                world_id: chat.world_id.clone(),
                chat_id: chat.id.clone(),
                chat: chat.clone(),
            };
            let ctx = "writing a chat";
            issue(s.chats.put(encode(&row, ctx)?).primitive(), ctx)
        }
        StoreOp::AppendMessage {
            world_id,
            chat_id,
            message,
        } => {
            let row = MessageRow {
                v: RECORD_VERSION,
                world_id: world_id.clone(),
                chat_id: chat_id.clone(),
                seq,
                message_id: message.message_id.clone(),
                message: message.clone(),
            };
            let ctx = "appending a message";
            issue(s.messages.add(encode(&row, ctx)?).primitive(), ctx)
        }
        StoreOp::AppendMemory {
            world_id,
            chat_id,
            agent_id,
            entry,
        } => {
            let row = MemoryRow {
                v: RECORD_VERSION,
                world_id: world_id.clone(),
                chat_id: chat_id.clone(),
                agent_id: agent_id.clone(),
                seq,
                entry: entry.clone(),
            };
            let ctx = "appending a memory entry";
            issue(s.memory.add(encode(&row, ctx)?).primitive(), ctx)
        }
        StoreOp::PutAgentState {
            world_id,
            chat_id,
            state,
        } => {
            let row = StateRow {
                v: RECORD_VERSION,
                world_id: world_id.clone(),
                chat_id: chat_id.clone(),
                agent_id: state.agent_id.clone(),
                state: state.clone(),
            };
            let ctx = "writing an agent state";
            issue(s.states.put(encode(&row, ctx)?).primitive(), ctx)
        }
        _ => Ok(()),
    }
}

fn revision_of(worlds: &[(String, f64, JsValue)], id: &str) -> f64 {
    worlds
        .iter()
        .find(|(w, _, _)| w == id)
        .map(|(_, rev, _)| *rev)
        .unwrap_or(0.0)
}

/// A copy of a world row with `rev` set (and the current record format: a format 1 row
/// becomes format 2 with its first revision). The known row stays as it was, for a retry.
pub(super) fn raise(row: &JsValue, w: &str, rev: f64) -> Result<JsValue, StoreError> {
    let corrupted = || StoreError::Corrupted(format!("world record {w:?} is not an object"));
    if !row.is_object() {
        return Err(corrupted());
    }
    let copy = js_sys::Object::assign(&js_sys::Object::new(), row.unchecked_ref());
    let set =
        |k: &str, v: f64| js_sys::Reflect::set(&copy, &JsValue::from_str(k), &JsValue::from_f64(v));
    set("rev", rev)
        .and_then(|_| set("v", f64::from(RECORD_VERSION)))
        .map_err(|_| corrupted())?;
    Ok(copy.into())
}
