//! The read round of [`IdbStore`](super::idb_store::IdbStore): what [`Store::apply`] does
//! inside its one `readwrite` transaction for a batch that cannot go in one burst
//! ([`idb_fast`](super::idb_fast): the engine's common batches once the connection knows the
//! world), and for one whose burst failed. It decides every error, and what a committed batch
//! read is what the connection then knows ([`Learned`]).
//!
//! [`Store::apply`]: crate::core::store::Store::apply
//!
//! Every request a transaction waits for costs a round trip to the browser's database process
//! (about 0.3 ms in Chromium, several times a bare put's whole transaction when awaited one by
//! one), so a batch waits for as few as it can:
//! 1. [`Prefetched::read`] issues every read the rules need at once and awaits them together:
//!    the row of each world the batch names (existence) and its newest revision record, the records
//!    a first pass of the rules on hoped answers asked about ([`Found`]: the chats it writes
//!    into, the message ids it adds or replaces), and the next `seq` of each chat and memory
//!    it appends to. One round trip for every batch (a message, a reply, a counter).
//! 2. Each [`StoreOp::ExpectRevision`] is compared with the world's revision: a mismatch
//!    fails the batch with [`StoreError::Conflict`] before anything is written (another writer
//!    moved the world since the engine planned the batch; it reloads and plans again).
//! 3. [`store_rules::validate`] checks every op against that data plus the effects of the
//!    earlier ops of the batch (the rules every store shares: missing world or chat, duplicate
//!    message id → [`StoreError::Invalid`]). The first pass asked about the same records, so
//!    the prefetch covers them; a record it did not read would be read in one more round.
//! 4. [`Batch`] issues the writes without awaiting them; IndexedDB runs a transaction's
//!    requests in order, so a read a rare op needs later (an agent's order, the keys a
//!    cascading delete visits) still sees the earlier writes. Then each named world's next
//!    revision record is added, so the bump commits or rolls back with the batch (and a writer
//!    that took that revision meanwhile makes the `add`, and so the batch, fail).
//!
//! A write request that fails (quota, a key that already exists) aborts the transaction, which
//! rolls back everything; the caller's `commit().await` then reports the transaction's error.

use std::cell::{OnceCell, RefCell};

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{IdbObjectStore, IdbRequest};

use super::idb_error::{dom_name, map_js_error};
use super::idb_fast::{add_revision, put_world, write_common, Learned};
use super::idb_request::{
    all_request, array_of, call, cursor_of, decode, describe, encode, key_part, next_agent_order,
    open_reverse, prop, req, row_of, seq_after, seq_request, some_key, Op, Pending, Tx,
};
use super::idb_schema::{
    key, prefix_range, seq_key, with_stamp, AgentRow, ApprovalRow, ChatRow, KeyRange, MemoryRow,
    MessageRow, AGENTS, AGENT_STATES, ALL_STORES, APPROVALS, CHATS, MEMORY, MESSAGES,
    MESSAGES_BY_ID, RECORD_VERSION, REVISIONS, WORLDS,
};
use crate::core::json_write::{number_text, ToJson};
use crate::core::store::{StoreError, StoreOp};
use crate::core::store_rules::{self, Rec, Stored};
use crate::core::vec_map::{VecMap, VecSet};

/// Everything `apply` does inside its transaction (see the module docs). `bump`: raise the
/// revisions of the named worlds (always, except for the over-quota retry of a batch that only
/// deletes, see `IdbStore::apply`).
pub(super) async fn write_batch(
    s: &Stores<'_>,
    ops: &[StoreOp],
    named: &[(String, &'static str)],
    bump: bool,
) -> Result<Learned, StoreError> {
    // A pass on hoped answers says which records the rules ask about (see `Found`).
    let hoped = Found::default();
    let _ = store_rules::validate(ops, &hoped);
    let pre = Prefetched::read(s, ops, named, hoped.noted.into_inner()).await?;
    let revs = pre.revs;
    let mut found = Found {
        worlds: pre.worlds,
        recs: pre.recs,
        noted: RefCell::default(),
    };
    for op in ops {
        if let StoreOp::ExpectRevision { world_id, rev } = op {
            let mut now = 0.0;
            for ((w, _), r) in named.iter().zip(&revs) {
                if w == world_id {
                    now = *r;
                    break;
                }
            }
            if now != *rev as f64 {
                return Err(StoreError::Conflict(format!(
                    "world {world_id:?} is at revision {}, the batch expected {rev}",
                    number_text(now)
                )));
            }
        }
    }
    // A pass on the real answers asks what the hoped pass asked, up to its first error (an
    // answer other than the hoped one fails the op at once), so the prefetch covers it and
    // this runs once; a record it did not read is read in one more round.
    loop {
        let checked = store_rules::validate(ops, &found);
        let noted = found.noted.take();
        if noted.is_empty() {
            checked?;
            break;
        }
        let mut reads = Vec::with_capacity(noted.len());
        for parts in &noted {
            reads.push((rec_request(s, parts)?, DEPENDS));
        }
        let mut keys = settle(reads).await?.into_iter();
        for parts in &noted {
            let Some(key) = keys.next() else {
                break;
            };
            found.recs.insert(parts.clone(), some_key(key).is_some());
        }
    }
    // The chats that exist after the batch (one that deletes a chat teaches nothing of its
    // world, see `idb_fast::learn`): those found and those put. And the chats whose record
    // the batch writes: their stamps need no keeping (`keep_stamp`). Plain loops: no iterator
    // adapter stack each.
    let mut chats: Vec<(String, String)> = Vec::new();
    for (parts, stored) in found.recs.iter() {
        if let ([w, c], true) = (&parts[..], *stored) {
            chats.push((w.clone(), c.clone()));
        }
    }
    let mut current = Vec::new();
    for op in ops {
        if let StoreOp::PutChat(c) = op {
            let k = (c.world_id.clone(), c.id.clone());
            chats.push(k.clone());
            current.push(k);
        }
    }
    let mut batch = Batch {
        revs,
        chats,
        current,
        message_seq: pre.message_seq,
        memory_seq: pre.memory_seq,
        worlds: found.worlds,
        written: VecMap::new(),
        newest: None,
        held: JsValue::UNDEFINED,
    };
    // Each op's steps, one read awaited between two (see `Batch::step`).
    for op in ops {
        let (mut phase, mut got) = (0, JsValue::UNDEFINED);
        while let Next::Read(read, ctx, then) = batch.step(s, op, phase, got)? {
            got = read.outcome(ctx).await?;
            phase = then;
        }
    }
    if bump {
        batch.raise_revisions(s)?;
    }
    Ok(batch.learned())
}

/// The worlds a batch names, each with what the other contexts are told (`"delete"` when the
/// batch deletes it, else `"write"`), in first-named order.
pub(super) fn named_worlds(ops: &[StoreOp]) -> Vec<(String, &'static str)> {
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for op in ops {
        let w = op.world_id();
        let what = match op {
            StoreOp::DeleteWorld { .. } => "delete",
            _ => "write",
        };
        match out.iter_mut().find(|(x, _)| x == w) {
            Some(entry) => {
                if what == "delete" {
                    entry.1 = what;
                }
            }
            None => out.push((w.to_string(), what)),
        }
    }
    out
}

/// The stored data as [`store_rules::validate`] asks for it: a world from its row read before
/// the batch, a chat (`[world, chat]`) or message id (`[world, chat, id]`) from `recs`. What
/// neither holds is noted and answered as hoped: a first pass on nothing read lists what the
/// rules ask about ([`write_batch`] and the burst's plan read or check exactly that).
#[derive(Default)]
pub(super) struct Found {
    /// Whether each named world exists (its row was found).
    worlds: Vec<(String, bool)>,
    /// Whether each record read is stored, by its key parts.
    recs: VecMap<Vec<String>, bool>,
    /// The records a pass asked about that were not read, by their key parts.
    pub(super) noted: RefCell<Vec<Vec<String>>>,
}

impl Stored for Found {
    fn exists(&self, rec: Rec<'_>, hoped: bool) -> bool {
        let parts: &[&str] = match rec {
            Rec::World(w) => {
                if let Some((_, exists)) = self.worlds.iter().find(|(x, _)| x == w) {
                    return *exists;
                }
                &[w]
            }
            Rec::Chat(w, c) => &[w, c],
            Rec::Message(w, c, m) => &[w, c, m],
        };
        let mut owned = Vec::with_capacity(parts.len());
        for p in parts {
            owned.push(p.to_string());
        }
        let parts = owned;
        match self.recs.get(&parts) {
            Some(stored) => *stored,
            None => {
                let mut noted = self.noted.borrow_mut();
                if !noted.contains(&parts) {
                    noted.push(parts);
                }
                hoped
            }
        }
    }

    /// Compared before validation, for every `ExpectRevision` of the batch at once (a stale
    /// batch is a `Conflict` whatever else is wrong with it).
    fn revision(&self, _world_id: &str) -> Option<u64> {
        None
    }
}

/// The context of a next `seq`'s read.
const SEQ: &str = "finding the next sequence number";

/// The context of the reads [`Prefetched::read`] and the rules' further reads issue.
const DEPENDS: &str = "reading what the batch depends on";

/// Issues the read of whether the record of key parts `parts` ([`Found`]) is stored (its
/// key, `undefined` when it is not): a world by its row's key, a chat by its key, a message
/// id through the message-id index.
fn rec_request(s: &Stores<'_>, parts: &[String]) -> Result<Pending, StoreError> {
    let mut borrowed = Vec::with_capacity(parts.len());
    for p in parts {
        borrowed.push(p.as_str());
    }
    let parts = borrowed;
    Ok(Pending::of(match parts[..] {
        [w] => req(s.worlds()?, Op::GetKey, &JsValue::from_str(w)),
        [_, _] => req(s.chats()?, Op::GetKey, &key(&parts).into()),
        _ => req(&by_id(s)?, Op::GetKey, &key(&parts).into()),
    }))
}

/// Awaits requests issued together, in order (each one's handlers were set when it was
/// issued, so the wait is the slowest one's): their results, or the first error in order,
/// mapped with its context.
async fn settle(reads: Vec<(Pending, &str)>) -> Result<Vec<JsValue>, StoreError> {
    let mut out = Vec::with_capacity(reads.len());
    for (read, ctx) in reads {
        out.push(read.await.map_err(|e| map_js_error(ctx, e))?);
    }
    Ok(out)
}

/// What the database held before the batch, read in one go (step 1 of the module docs).
struct Prefetched {
    /// Whether each named world exists (its row was found). A list: a batch names one or two.
    worlds: Vec<(String, bool)>,
    /// Each named world's revision (the newest key of its revision records; 0: none), in
    /// `worlds` order.
    revs: Vec<f64>,
    /// Whether each record a first pass of the rules noted is stored (see [`Found`]).
    recs: VecMap<Vec<String>, bool>,
    /// The next `seq` of each chat the batch appends a message to.
    message_seq: VecMap<(String, String), f64>,
    /// The next `seq` of each memory (`[world, chat, agent]`) the batch appends to.
    memory_seq: VecMap<(String, String, String), f64>,
}

impl Prefetched {
    /// Reads the named worlds' rows and revisions, the records in `noted` (less the named
    /// worlds: their rows answer) and the next `seq` of each chat and memory the batch appends
    /// to.
    async fn read(
        s: &Stores<'_>,
        ops: &[StoreOp],
        named: &[(String, &'static str)],
        mut noted: Vec<Vec<String>>,
    ) -> Result<Prefetched, StoreError> {
        noted.retain(|parts| !matches!(&parts[..], [w] if named.iter().any(|(x, _)| x == w)));
        let mut message_seqs: Vec<(String, String)> = Vec::new();
        let mut memory_seqs: Vec<(String, String, String)> = Vec::new();
        for op in ops {
            match op {
                StoreOp::AppendMessage {
                    world_id, chat_id, ..
                } if !message_seqs
                    .iter()
                    .any(|(w, c)| w == world_id && c == chat_id) =>
                {
                    message_seqs.push((world_id.clone(), chat_id.clone()));
                }
                StoreOp::AppendMemory {
                    world_id,
                    chat_id,
                    agent_id,
                    ..
                } if !memory_seqs
                    .iter()
                    .any(|(w, c, a)| w == world_id && c == chat_id && a == agent_id) =>
                {
                    memory_seqs.push((world_id.clone(), chat_id.clone(), agent_id.clone()));
                }
                _ => {}
            }
        }
        // Every request is issued at once, then awaited together.
        let mut reads: Vec<(Pending, &str)> = Vec::new();
        for (w, _) in named {
            let row = req(s.worlds()?, Op::Get, &JsValue::from_str(w));
            reads.push((Pending::of(row), DEPENDS));
        }
        for (w, _) in named {
            reads.push((seq_request(s.revisions()?, &[w]), SEQ));
        }
        for parts in &noted {
            reads.push((rec_request(s, parts)?, DEPENDS));
        }
        for (w, c) in &message_seqs {
            reads.push((seq_request(s.messages()?, &[w, c]), SEQ));
        }
        for (w, c, a) in &memory_seqs {
            reads.push((seq_request(s.memory()?, &[w, c, a]), SEQ));
        }
        let mut facts = settle(reads).await?.into_iter();
        let mut next = || facts.next().unwrap_or(JsValue::UNDEFINED);
        let mut worlds = Vec::with_capacity(named.len());
        for (w, _) in named {
            worlds.push((w.clone(), next().is_object()));
        }
        // The next revision record's `rev` is the revision after this one.
        let mut revs = Vec::with_capacity(named.len());
        for _ in named {
            revs.push(seq_after(next(), 1, REVISIONS)? - 1.0);
        }
        let mut recs = VecMap::new();
        for k in noted {
            recs.insert(k, some_key(next()).is_some());
        }
        let mut message_seq = VecMap::new();
        for k in message_seqs {
            let after = seq_after(next(), 2, MESSAGES)?;
            message_seq.insert(k, after);
        }
        let mut memory_seq = VecMap::new();
        for k in memory_seqs {
            let after = seq_after(next(), 3, MEMORY)?;
            memory_seq.insert(k, after);
        }
        Ok(Prefetched {
            worlds,
            revs,
            recs,
            message_seq,
            memory_seq,
        })
    }
}

/// The object stores of an `apply` transaction, each opened on first use: a burst touches
/// three to five of the eight, and opening one is a call into the browser.
pub(super) struct Stores<'t> {
    tx: &'t Tx,
    /// In [`ALL_STORES`] order.
    open: [OnceCell<IdbObjectStore>; ALL_STORES.len()],
}

impl<'t> Stores<'t> {
    pub(super) fn new(tx: &'t Tx) -> Stores<'t> {
        Stores {
            tx,
            open: Default::default(),
        }
    }

    /// Object store `name` (one of [`ALL_STORES`], the transaction's scope).
    fn get(&self, name: &str) -> Result<&IdbObjectStore, StoreError> {
        let opening = || format!("opening object store {name:?}");
        let i = ALL_STORES.iter().position(|n| *n == name);
        let Some(cell) = i.and_then(|i| self.open.get(i)) else {
            return Err(StoreError::Backend(format!("internal: {}", opening())));
        };
        if let Some(store) = cell.get() {
            return Ok(store);
        }
        // This runs while the transaction is active (before the batch's first await or in
        // the microtask of a request's result), so a refusal means something aborted it while
        // the batch was being issued (a closed connection is told apart by the caller):
        // nothing was written, as `issue` reports a refused request.
        let name = JsValue::from_str(name);
        let opened = call(&self.tx.raw, Op::ObjectStore, &name, &JsValue::UNDEFINED);
        let store = opened.map(JsCast::unchecked_into).map_err(|e| {
            if dom_name(&e) == Some("InvalidStateError".into()) {
                StoreError::Aborted(format!(
                    "{}: the transaction was aborted and nothing was written; retry",
                    opening()
                ))
            } else {
                map_js_error(&opening(), e)
            }
        })?;
        Ok(cell.get_or_init(|| store))
    }

    pub(super) fn worlds(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(WORLDS)
    }
    pub(super) fn agents(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(AGENTS)
    }
    pub(super) fn chats(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(CHATS)
    }
    pub(super) fn messages(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(MESSAGES)
    }
    pub(super) fn memory(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(MEMORY)
    }
    pub(super) fn states(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(AGENT_STATES)
    }
    pub(super) fn approvals(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(APPROVALS)
    }
    pub(super) fn revisions(&self) -> Result<&IdbObjectStore, StoreError> {
        self.get(REVISIONS)
    }
}

/// The write pass of one `apply` (runs only after [`store_rules::validate`] accepted the whole batch).
/// Writes are issued, not awaited (see the module docs); the next sequence numbers come from
/// [`Prefetched`] and are cached so a long batch asks the database once per chat.
struct Batch {
    /// Next `seq` per message key prefix `[world, chat]`.
    message_seq: VecMap<(String, String), f64>,
    /// Next `seq` per memory key prefix `[world, chat, agent]`.
    memory_seq: VecMap<(String, String, String), f64>,
    /// Whether each named world existed before the batch.
    worlds: Vec<(String, bool)>,
    /// Worlds the batch wrote (`true`) or deleted (`false`), by its last op on each.
    written: VecMap<String, bool>,
    /// The named worlds' revisions before the batch, in `worlds` order.
    revs: Vec<f64>,
    /// The chats that exist after the batch (for [`Learned`]).
    chats: Vec<(String, String)>,
    /// The chats whose record is as readers see them whatever the batch does to their
    /// messages: those the batch puts, and those `keep_stamp` wrote.
    current: Vec<(String, String)>,
    /// The newest message of the chat whose stamp is being kept, between the steps of
    /// `keep_stamp` ([`Batch::stamp_newest`], [`Batch::stamp_put`]).
    newest: Option<MessageRow>,
    /// The primary key of the message a `ReplaceMessage` replaces, between its two reads.
    held: JsValue,
}

impl Batch {
    /// What the connection may know of the named worlds once the batch commits (see
    /// [`idb_fast`](super::idb_fast)): revision before, whether the world exists after, the
    /// chats that exist, next `seq`s.
    fn learned(self) -> Learned {
        let mut worlds = Vec::with_capacity(self.worlds.len());
        for ((w, before), rev) in self.worlds.iter().zip(&self.revs) {
            let exists = match self.written.get(w) {
                Some(written) => *written,
                None => *before,
            };
            worlds.push((w.clone(), *rev, exists));
        }
        Learned {
            worlds,
            chats: self.chats,
            message_seq: self.message_seq,
            memory_seq: self.memory_seq,
            current: self.current,
        }
    }

    /// Adds each named world's next revision record: every world the batch names, written,
    /// deleted (its revision goes on rising, see [`idb_schema`](super::idb_schema)) or
    /// neither.
    fn raise_revisions(&mut self, s: &Stores<'_>) -> Result<(), StoreError> {
        for ((w, _), rev) in self.worlds.iter().zip(&self.revs) {
            add_revision(s, w, rev + 1.0)?;
        }
        Ok(())
    }

    /// One step of op `op`'s writes, at `phase` (0 first; later ones with `got`, the result of
    /// the read the previous step asked for): issues its writes up to its next read, which it
    /// returns to [`write_batch`]'s loop to await (one await for every read of every op,
    /// instead of an async body per op), or `Next::Done`. The reads and writes are issued in
    /// the order an op's own async body would issue them.
    fn step(
        &mut self,
        s: &Stores<'_>,
        op: &StoreOp,
        phase: usize,
        got: JsValue,
    ) -> Result<Next, StoreError> {
        match op {
            StoreOp::AppendMessage {
                world_id, chat_id, ..
            } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let prefix = (world_id.clone(), chat_id.clone());
                let seq = if phase < 3 {
                    // The chat's stamp first (`keep_stamp`), then the next `seq` (phase 3).
                    let kept = match phase {
                        0 if !self.is_current(w, c) => {
                            return Ok(Next::Read(stamp_read(s, w, c)?, APPENDING, 1));
                        }
                        0 => false,
                        1 => match self.stamp_newest(s, got, w, c, None)? {
                            Some(read) => return Ok(Next::Read(read, APPENDING, 2)),
                            None => true,
                        },
                        _ => {
                            self.stamp_put(s, got, w, c, APPENDING)?;
                            true
                        }
                    };
                    if kept {
                        self.current.push(prefix.clone());
                    }
                    match self.message_seq.get(&prefix) {
                        Some(seq) => *seq,
                        None => {
                            let read = seq_request(s.messages()?, &[w, c]);
                            return Ok(Next::Read(read, SEQ, 3));
                        }
                    }
                } else {
                    seq_after(got, 2, MESSAGES)?
                };
                self.message_seq.insert(prefix, seq + 1.0);
                write_common(s, op, seq)?;
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                ..
            } => {
                let prefix = (world_id.clone(), chat_id.clone(), agent_id.clone());
                let seq = match (phase, self.memory_seq.get(&prefix)) {
                    (0, Some(seq)) => *seq,
                    (0, None) => {
                        let read = seq_request(s.memory()?, &[world_id, chat_id, agent_id]);
                        return Ok(Next::Read(read, SEQ, 1));
                    }
                    _ => seq_after(got, 3, MEMORY)?,
                };
                self.memory_seq.insert(prefix, seq + 1.0);
                write_common(s, op, seq)?;
            }
            // The common ops are written as the burst writes them (one copy of that code).
            StoreOp::PutChat(_) | StoreOp::PutAgentState { .. } => write_common(s, op, 0.0)?,
            StoreOp::ExpectRevision { .. } => {} // checked before validation
            StoreOp::PutWorld(world) => {
                self.written.insert(world.id.clone(), true);
                put_world(s, world)?;
            }
            StoreOp::DeleteWorld { world_id } => {
                let w = world_id.as_str();
                let ctx = "deleting a world";
                self.written.insert(world_id.clone(), false);
                delete(s.worlds()?, KeyRange::Only(JsValue::from_str(w)), ctx)?;
                let under = [AGENTS, CHATS, MESSAGES, MEMORY, AGENT_STATES, APPROVALS];
                delete_under(s, &under, &[w], ctx)?;
            }
            StoreOp::PutAgent { world_id, agent } => {
                let k: JsValue = key(&[world_id, &agent.id]).into();
                let order = match phase {
                    0 => {
                        let read = Pending::of(req(s.agents()?, Op::Get, &k));
                        return Ok(Next::Read(read, "reading an agent", 1));
                    }
                    1 => match row_of::<AgentRow>(got, AGENTS, &k)? {
                        Some(row) => row.order,
                        None => {
                            let read = all_request(s.agents()?, prefix_range(&[world_id]), false);
                            return Ok(Next::Read(read, "reading agents", 2));
                        }
                    },
                    _ => next_agent_order(array_of(got, "reading agents")?, world_id)?,
                };
                let row = AgentRow {
                    v: RECORD_VERSION,
                    world_id: world_id.as_str(),
                    agent_id: agent.id.as_str(),
                    order,
                    agent,
                };
                put(s.agents()?, &row, "writing an agent")?;
            }
            StoreOp::DeleteAgent { world_id, agent_id } => {
                let (w, a) = (world_id.as_str(), agent_id.as_str());
                let ctx = "deleting an agent";
                match phase {
                    0 => {
                        delete(s.agents()?, KeyRange::Only(key(&[w, a]).into()), ctx)?;
                        // Memory and states are keyed by chat first: visit the world's chats.
                        let read = all_request(s.chats()?, prefix_range(&[w]), true);
                        return Ok(Next::Read(read, ctx, 1));
                    }
                    1 => {
                        for chat_key in array_of(got, ctx)? {
                            let Some(c) = key_part(&chat_key, 1) else {
                                return Err(StoreError::Corrupted(format!(
                                    "unreadable chats key {} in world {w:?}; delete the world",
                                    describe(&chat_key)
                                )));
                            };
                            delete(s.memory()?, prefix_range(&[w, &c, a]), ctx)?;
                            delete(s.states()?, KeyRange::Only(key(&[w, &c, a]).into()), ctx)?;
                        }
                        // Approvals are keyed by chat and id: read the world's, delete the
                        // agent's.
                        let read = all_request(s.approvals()?, prefix_range(&[w]), false);
                        return Ok(Next::Read(read, ctx, 2));
                    }
                    _ => {
                        let at = format!("in world {w:?}");
                        for row in array_of(got, ctx)? {
                            let row: ApprovalRow = decode(row, APPROVALS, &at)?;
                            if row.approval.agent_id == a {
                                let k = key(&[w, &row.chat_id, &row.approval_id]);
                                delete(s.approvals()?, KeyRange::Only(k.into()), ctx)?;
                            }
                        }
                    }
                }
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let ctx = "deleting a chat";
                delete(s.chats()?, KeyRange::Only(key(&[w, c]).into()), ctx)?;
                delete_under(
                    s,
                    &[MESSAGES, MEMORY, AGENT_STATES, APPROVALS],
                    &[w, c],
                    ctx,
                )?;
            }
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let ctx = "deleting messages";
                // The chat's stamp (phases 0 to 2), then one message id after the other
                // (phase `FIRST_ID + i`: the primary key of id `i`), then the memory (3).
                let next_id = match phase {
                    0 if !self.is_current(w, c) => {
                        return Ok(Next::Read(stamp_read(s, w, c)?, ctx, 1));
                    }
                    0 => 0,
                    1 => match self.stamp_newest(s, got, w, c, Some(message_ids))? {
                        Some(read) => return Ok(Next::Read(read, ctx, 2)),
                        None => 0,
                    },
                    2 => {
                        self.stamp_put(s, got, w, c, ctx)?;
                        0
                    }
                    3 => {
                        // Memory is keyed by agent then seq: one read of the chat's entries
                        // finds the ones that came from these messages (editing is rare;
                        // appends stay O(1)).
                        let doomed: VecSet<&str> = message_ids.iter().map(String::as_str).collect();
                        for js in array_of(got, ctx)? {
                            let row: MemoryRow = decode(js, MEMORY, &format!("chat {c:?}"))?;
                            if doomed.contains(row.entry.message_id.as_str()) {
                                let k = seq_key(&[w, c, &row.agent_id], row.seq);
                                delete(s.memory()?, KeyRange::Only(k), ctx)?;
                            }
                        }
                        return Ok(Next::Done);
                    }
                    _ => {
                        if let Some(pk) = some_key(got) {
                            delete(s.messages()?, KeyRange::Only(pk), ctx)?;
                        }
                        phase - FIRST_ID + 1
                    }
                };
                let by_id = by_id(s)?;
                let read = match message_ids.get(next_id) {
                    Some(id) => {
                        let id_key: JsValue = key(&[w, c, id]).into();
                        return Ok(Next::Read(
                            Pending::of(req(&by_id, Op::GetKey, &id_key)),
                            ctx,
                            FIRST_ID + next_id,
                        ));
                    }
                    None => all_request(s.memory()?, prefix_range(&[w, c]), false),
                };
                return Ok(Next::Read(read, ctx, 3));
            }
            StoreOp::ReplaceMessage {
                world_id,
                chat_id,
                old_message_id,
                message,
            } => {
                let ctx = "replacing a message";
                let old = match phase {
                    0 => {
                        let id_key: JsValue = key(&[world_id, chat_id, old_message_id]).into();
                        let index = by_id(s)?;
                        let read = Pending::of(req(&index, Op::GetKey, &id_key));
                        return Ok(Next::Read(read, ctx, 1));
                    }
                    1 => match some_key(got) {
                        Some(pk) => {
                            let read = Pending::of(req(s.messages()?, Op::Get, &pk));
                            self.held = pk;
                            return Ok(Next::Read(read, ctx, 2));
                        }
                        None => None,
                    },
                    _ => row_of::<MessageRow>(got, MESSAGES, &self.held)?,
                };
                let Some(old) = old else {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                };
                // Same primary key (the old `seq`): the new message has the old one's place.
                let row = MessageRow {
                    v: RECORD_VERSION,
                    world_id: world_id.as_str(),
                    chat_id: chat_id.as_str(),
                    seq: old.seq,
                    message_id: message.message_id.as_str(),
                    message,
                    // The chat's stamp stays with its place (see `idb_schema::with_stamp`).
                    chat_count: old.chat_count,
                    chat_updated_at: old.chat_updated_at,
                };
                put(s.messages()?, &row, ctx)?;
            }
            StoreOp::ClearMemory {
                world_id,
                chat_id,
                agent_id,
            } => {
                let range = prefix_range(&[world_id, chat_id, agent_id]);
                delete(s.memory()?, range, "clearing memory")?;
            }
            StoreOp::PutApproval(approval) => {
                // The rules refused a record without a chat id.
                let row = ApprovalRow {
                    v: RECORD_VERSION,
                    world_id: approval.world_id.as_str(),
                    chat_id: approval.chat_id.as_deref().unwrap_or_default(),
                    approval_id: approval.approval_id.as_str(),
                    approval: &**approval,
                };
                put(s.approvals()?, &row, "writing an approval")?;
            }
            StoreOp::DeleteApproval {
                world_id,
                chat_id,
                approval_id,
            } => {
                let k = key(&[world_id, chat_id, approval_id]);
                delete(
                    s.approvals()?,
                    KeyRange::Only(k.into()),
                    "deleting an approval",
                )?;
            }
        }
        Ok(Next::Done)
    }

    /// Whether chat `[w, c]`'s record is as readers see it (see `current`).
    fn is_current(&self, w: &str, c: &str) -> bool {
        self.current.iter().any(|(x, y)| x == w && y == c)
    }

    /// The first part of `keep_stamp` (see [`stamp_read`]): the newest message of chat
    /// `[w, c]` as its reverse cursor's first step `got` found it. When the chat's record
    /// must be written, keeps that message and returns the read of the record.
    fn stamp_newest(
        &mut self,
        s: &Stores<'_>,
        got: JsValue,
        w: &str,
        c: &str,
        deleted: Option<&[String]>,
    ) -> Result<Option<Pending>, StoreError> {
        let Some(cursor) = cursor_of::<JsValue>(got) else {
            return Ok(None);
        };
        let at = format!("in chat {c:?} of world {w:?}");
        let newest = prop(&cursor, "value");
        let newest: MessageRow = decode(newest, MESSAGES, &at)?;
        let goes = deleted.is_none_or(|ids| ids.contains(&newest.message_id));
        if newest.stamp().is_none() || !goes {
            return Ok(None);
        }
        let k: JsValue = key(&[w, c]).into();
        let read = Pending::of(req(s.chats()?, Op::Get, &k));
        self.newest = Some(newest);
        Ok(Some(read))
    }

    /// The last part of `keep_stamp`: writes chat `[w, c]`'s record `got` as readers see the
    /// chat, by the newest message [`Batch::stamp_newest`] kept.
    fn stamp_put(
        &mut self,
        s: &Stores<'_>,
        got: JsValue,
        w: &str,
        c: &str,
        ctx: &str,
    ) -> Result<(), StoreError> {
        let k: JsValue = key(&[w, c]).into();
        let Some(mut row) = row_of::<ChatRow>(got, CHATS, &k)? else {
            return Ok(());
        };
        with_stamp(&mut row.chat, self.newest.take().and_then(|m| m.stamp()));
        let row = ChatRow {
            v: row.v,
            world_id: row.world_id.as_str(),
            chat_id: row.chat_id.as_str(),
            chat: &row.chat,
        };
        put(s.chats()?, &row, ctx)
    }
}

/// What an op's step ([`Batch::step`]) asks of [`write_batch`]'s loop.
enum Next {
    /// The op is written.
    Done,
    /// Await this read (its error mapped with the context), then step again at this phase.
    Read(Pending, &'static str, usize),
}

/// The context of an appended message's reads.
const APPENDING: &str = "appending a message";

/// The phase of [`Batch::step`] for a `DeleteMessages` that has the result of its first
/// message id's read (`FIRST_ID + i`: of id `i`).
const FIRST_ID: usize = 4;

/// The message-id index of the `messages` store.
fn by_id(s: &Stores<'_>) -> Result<JsValue, StoreError> {
    let name = JsValue::from_str(MESSAGES_BY_ID);
    call(s.messages()?, Op::Index, &name, &JsValue::UNDEFINED)
        .map_err(|e| map_js_error("opening the message-id index", e))
}

/// `keep_stamp`, before a batch that does not put chat `[w, c]` appends to it or deletes its
/// messages (`deleted`): when the newest message carries the chat's stamp (and is among those
/// deleted), the chat's record is written as readers see the chat, so that the stamp no
/// longer being the newest does not take the chat back to an older count (see
/// `idb_schema::with_stamp`). The engine's batches put the chat whenever they append or
/// delete; this keeps the others (the store contract's) reading as they did. Its first read:
/// the newest message, one step of a reverse cursor (then [`Batch::stamp_newest`] and
/// [`Batch::stamp_put`]).
fn stamp_read(s: &Stores<'_>, w: &str, c: &str) -> Result<Pending, StoreError> {
    Ok(Pending::of(open_reverse(
        s.messages()?,
        &prefix_range(&[w, c]),
        false,
    )))
}

// ---- write requests: issued, not awaited (a failure aborts the transaction) ----

/// Drops a request once issued: IndexedDB runs it in order; its failure aborts the transaction.
/// A request refused because the transaction already ended (something aborted it while the
/// batch was being issued) is that abort: nothing was written.
pub(super) fn issue(request: Result<IdbRequest, JsValue>, context: &str) -> Result<(), StoreError> {
    match request {
        Ok(_) => Ok(()),
        Err(e) if dom_name(&e) == Some("TransactionInactiveError".into()) => {
            Err(StoreError::Aborted(format!(
                "{context}: the transaction was aborted and nothing was written; retry"
            )))
        }
        Err(e) => Err(map_js_error(context, e)),
    }
}

fn put<T: ToJson>(store: &IdbObjectStore, row: &T, context: &str) -> Result<(), StoreError> {
    let value = encode(row, context)?;
    issue(req(store, Op::Put, &value), context)
}

/// Deletes every record under key prefix `parts` in each of `stores`, in order.
fn delete_under(
    s: &Stores<'_>,
    stores: &[&str],
    parts: &[&str],
    context: &str,
) -> Result<(), StoreError> {
    for name in stores {
        delete(s.get(name)?, prefix_range(parts), context)?;
    }
    Ok(())
}

fn delete(store: &IdbObjectStore, range: KeyRange, context: &str) -> Result<(), StoreError> {
    issue(
        range.query().and_then(|q| req(store, Op::Delete, &q)),
        context,
    )
}
