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
//! 1. [`Prefetched::queue`] queues every read the rules need, issued at once and awaited
//!    together:
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
//! 4. [`Batch`] queues the writes, issued with the next read or before the commit (see
//!    [`Stores`]) and never awaited; IndexedDB runs a transaction's requests in order, so a
//!    read a rare op needs later (an agent's order, the keys a cascading delete visits) still
//!    sees the earlier writes. Then each named world's next
//!    revision record is added, so the bump commits or rolls back with the batch (and a writer
//!    that took that revision meanwhile makes the `add`, and so the batch, fail).
//!
//! A write request that fails (quota, a key that already exists) aborts the transaction, which
//! rolls back everything; the caller's `commit().await` then reports the transaction's error.

use std::cell::{RefCell, RefMut};

use wasm_bindgen::{JsCast, JsValue};

use super::idb_error::{dom_name, map_js_error};
use super::idb_fast::{put_world, write_common, Learned, SeqKey};
use super::idb_request::{
    array_of, decode, describe, idb_run, in_chat, in_world, key_part, next_agent_order, row_of,
    seq_after, some_key, Pending, Tx,
};
use super::idb_schema::{
    with_stamp, AgentRow, ApprovalRow, ChatRow, MemoryRow, MessageRow, AGENTS, AGENT_STATES,
    APPROVALS, CHATS, MEMORY, MESSAGES, RECORD_VERSION, REVISIONS, WORLDS,
};
use crate::core::json_write::{number_text, write_str, write_u64, ToJson};
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
    let mut pre = Prefetched::queue(s, ops, named, hoped.noted.into_inner());
    pre.fill(named, s.run().await?)?;
    pre.check_revisions(ops, named)?;
    // A pass on the real answers asks what the hoped pass asked, up to its first error (an
    // answer other than the hoped one fails the op at once), so the prefetch covers it and
    // this runs once; a record it did not read is read in one more round.
    while let Some(noted) = pre.further(s, ops)? {
        let keys = s.run().await?;
        for (i, parts) in noted.into_iter().enumerate() {
            pre.found
                .recs
                .insert(parts, !keys.get(i as u32).is_undefined());
        }
    }
    let mut batch = Batch::new(pre, ops);
    // Each op's steps, one read awaited between two (see `Batch::step`).
    for op in ops {
        let (mut phase, mut got) = (0, JsValue::UNDEFINED);
        while let Next::Read(read, then) = batch.step(s, op, phase, got)? {
            got = read.await?.get(0);
            phase = then;
        }
    }
    if bump {
        batch.raise_revisions(s);
    }
    s.flush()?;
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

/// The context of the reads [`Prefetched::queue`] and the rules' further reads issue.
const DEPENDS: &str = "reading what the batch depends on";

/// Queues the read of whether the record of key parts `parts` ([`Found`]) is stored (its
/// key, `undefined` when it is not): a world by its row's key, a chat by its key, a message
/// id through the message-id index.
fn rec_request(s: &Stores<'_>, parts: &[String]) {
    let mut borrowed = Vec::with_capacity(parts.len());
    for p in parts {
        borrowed.push(p.as_str());
    }
    let (store, op) = match parts.len() {
        1 => (WORLDS, GET_KEY),
        2 => (CHATS, GET_KEY),
        _ => (MESSAGES, GET_KEY_BY_ID),
    };
    s.request(store, op, &borrowed, None, DEPENDS);
}

/// What the database held before the batch, read in one go (step 1 of the module docs).
struct Prefetched {
    /// Whether each named world exists (its row was found; a list: a batch names one or
    /// two), and whether each record a pass of the rules noted is stored.
    found: Found,
    /// Each named world's revision (the newest key of its revision records; 0: none), in
    /// `found.worlds` order.
    revs: Vec<f64>,
    /// The next `seq` of each chat the batch appends a message to.
    message_seq: VecMap<SeqKey, f64>,
    /// The next `seq` of each memory (`[world, chat, agent]`) the batch appends to.
    memory_seq: VecMap<SeqKey, f64>,
}

impl Prefetched {
    /// Queues the reads of the named worlds' rows and revisions, the records in `noted`
    /// (less the named worlds: their rows answer) and the next `seq` of each chat and memory
    /// the batch appends to; [`Prefetched::fill`] takes what they found. Not async: the
    /// caller's one await.
    fn queue(
        s: &Stores<'_>,
        ops: &[StoreOp],
        named: &[(String, &'static str)],
        noted: Vec<Vec<String>>,
    ) -> Prefetched {
        let mut recs = VecMap::new();
        for parts in noted {
            if !matches!(&parts[..], [w] if named.iter().any(|(x, _)| x == w)) {
                recs.insert(parts, false);
            }
        }
        let mut message_seq = VecMap::new();
        let mut memory_seq = VecMap::new();
        for op in ops {
            match op {
                StoreOp::AppendMessage {
                    world_id, chat_id, ..
                } => {
                    message_seq.insert((world_id.clone(), chat_id.clone(), String::new()), 1.0);
                }
                StoreOp::AppendMemory {
                    world_id,
                    chat_id,
                    agent_id,
                    ..
                } => {
                    let k = (world_id.clone(), chat_id.clone(), agent_id.clone());
                    memory_seq.insert(k, 1.0);
                }
                _ => {}
            }
        }
        // Every request is issued at once, then awaited together; `fill` takes the results
        // in this order (the maps' key order).
        for (w, _) in named {
            s.request(WORLDS, GET, &[w], None, DEPENDS);
        }
        for (w, _) in named {
            s.request(REVISIONS, LAST_KEY, &[w], None, SEQ);
        }
        for parts in recs.keys() {
            rec_request(s, parts);
        }
        for (w, c, _) in message_seq.keys() {
            s.request(MESSAGES, LAST_KEY, &[w, c], None, SEQ);
        }
        for (w, c, a) in memory_seq.keys() {
            s.request(MEMORY, LAST_KEY, &[w, c, a], None, SEQ);
        }
        Prefetched {
            found: Found {
                worlds: Vec::new(),
                recs,
                noted: RefCell::default(),
            },
            revs: Vec::new(),
            message_seq,
            memory_seq,
        }
    }

    /// Takes what the reads [`Prefetched::queue`] queued found (`facts`, in its order).
    fn fill(
        &mut self,
        named: &[(String, &'static str)],
        facts: js_sys::Array,
    ) -> Result<(), StoreError> {
        let mut at = 0;
        let mut next = || {
            at += 1;
            facts.get(at - 1)
        };
        for (w, _) in named {
            self.found.worlds.push((w.clone(), next().is_object()));
        }
        // The next revision record's `rev` is the revision after this one.
        for _ in named {
            self.revs.push(seq_after(next(), 1, REVISIONS)? - 1.0);
        }
        for stored in self.found.recs.values_mut() {
            *stored = !next().is_undefined();
        }
        for seq in self.message_seq.values_mut() {
            *seq = seq_after(next(), 2, MESSAGES)?;
        }
        for seq in self.memory_seq.values_mut() {
            *seq = seq_after(next(), 3, MEMORY)?;
        }
        Ok(())
    }

    /// Step 2 of the module docs: each `ExpectRevision` against the world's revision.
    fn check_revisions(
        &self,
        ops: &[StoreOp],
        named: &[(String, &'static str)],
    ) -> Result<(), StoreError> {
        for op in ops {
            if let StoreOp::ExpectRevision { world_id, rev } = op {
                let mut now = 0.0;
                for ((w, _), r) in named.iter().zip(&self.revs) {
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
        Ok(())
    }

    /// Step 3 of the module docs: validates the batch on what was read. `Some`: the records
    /// the rules asked about that were not read, whose reads (their keys, in this order) are
    /// queued; the batch is validated again once they are in `found`.
    fn further(
        &mut self,
        s: &Stores<'_>,
        ops: &[StoreOp],
    ) -> Result<Option<Vec<Vec<String>>>, StoreError> {
        let checked = store_rules::validate(ops, &self.found);
        let noted = self.found.noted.take();
        if noted.is_empty() {
            return checked.map(|_| None);
        }
        for parts in &noted {
            rec_request(s, parts);
        }
        Ok(Some(noted))
    }
}

/// The requests of a transaction, issued in bulk: each is queued as plain data (its store,
/// kind and key or record, JSON text) and the queue is issued by one call into the snippet
/// (`awwIdbRun`), before each read ([`Stores::run`]) and before the commit
/// ([`Stores::flush`]), instead of a call (and a row's `JSON.parse`) per request. IndexedDB
/// runs a transaction's requests in the order they were issued, so a read sees the writes
/// queued before it.
pub(super) struct Stores<'t> {
    tx: &'t Tx,
    /// The requests queued since the last issue: their commands for `awwIdbRun` (JSON text,
    /// separated by commas) and each one's context, for its error.
    queued: RefCell<(String, Vec<&'static str>)>,
}

/// The kinds of request of `awwIdbRun` (see `idb_request::idb_run`): writes, then reads.
pub(super) const PUT: u32 = 0;
pub(super) const ADD: u32 = 1;
const DELETE: u32 = 2;
const DELETE_UNDER: u32 = 3;
pub(super) const GET: u32 = 4;
const GET_KEY: u32 = 5;
pub(super) const GET_KEY_BY_ID: u32 = 6;
pub(super) const GET_ALL: u32 = 7;
const GET_ALL_KEYS: u32 = 8;
pub(super) const LAST_VALUE: u32 = 9;
pub(super) const LAST_KEY: u32 = 10;

impl<'t> Stores<'t> {
    pub(super) fn new(tx: &'t Tx) -> Stores<'t> {
        Stores {
            tx,
            queued: RefCell::default(),
        }
    }

    /// Queues a request: `[store, op, ` is written, the caller writes the rest of the
    /// command, `]` included.
    fn queue(
        &self,
        store: &str,
        op: u32,
        ctx: &'static str,
    ) -> RefMut<'_, (String, Vec<&'static str>)> {
        let mut queued = self.queued.borrow_mut();
        queued.1.push(ctx);
        let text = &mut queued.0;
        if !text.is_empty() {
            text.push(',');
        }
        text.push('[');
        write_str(text, store);
        text.push(',');
        write_u64(text, u64::from(op));
        text.push(',');
        queued
    }

    /// Queues the `put` (`op` [`PUT`]) or `add` ([`ADD`]) of `row`, whose key is in line.
    pub(super) fn put<T: ToJson>(&self, store: &str, op: u32, row: &T, ctx: &'static str) {
        let mut queued = self.queue(store, op, ctx);
        row.write_json(&mut queued.0);
        queued.0.push(']');
    }

    /// Queues the `add` of world `w`'s revision record `rev`: it fails, aborting the
    /// transaction, when another writer took that revision (see
    /// [`idb_fast`](super::idb_fast)).
    pub(super) fn add_revision(&self, w: &str, rev: f64) {
        let mut queued = self.queue(REVISIONS, ADD, "raising a world's revision");
        queued.0.push_str("0,");
        write_key(&mut queued.0, &[w], Some(rev));
        queued.0.push(']');
    }

    /// Queues request `op` of `store` at key `parts` (with `seq` after them when given; the
    /// key of a `worlds` record is its one part, the world id), or, for the requests over a
    /// key prefix, at every key that starts with `parts`.
    pub(super) fn request(
        &self,
        store: &str,
        op: u32,
        parts: &[&str],
        seq: Option<f64>,
        ctx: &'static str,
    ) {
        let mut queued = self.queue(store, op, ctx);
        match parts {
            [w] if store == WORLDS => write_str(&mut queued.0, w),
            _ => write_key(&mut queued.0, parts, seq),
        }
        queued.0.push(']');
    }

    /// Queues request `op` of `store` at key `key` (JSON text).
    fn request_text(&self, store: &str, op: u32, key: &str, ctx: &'static str) {
        let mut queued = self.queue(store, op, ctx);
        queued.0.push_str(key);
        queued.0.push(']');
    }

    /// Queues read `op` of `store` at `parts` (see [`Stores::request`]) and issues the queue.
    pub(super) fn read(&self, store: &str, op: u32, parts: &[&str], ctx: &'static str) -> Run {
        self.request(store, op, parts, None, ctx);
        self.run()
    }

    /// Issues the queue: the outcome of `awwIdbRun`, and the requests' contexts.
    fn issue(&self) -> (Result<JsValue, JsValue>, Vec<&'static str>) {
        let (text, contexts) = std::mem::take(&mut *self.queued.borrow_mut());
        (idb_run(&self.tx.raw, &text), contexts)
    }

    /// Issues the queue, writes only (the burst's, and the read round's last before its
    /// commit): nothing is awaited. A write that fails later aborts the transaction, which
    /// the commit reports.
    pub(super) fn flush(&self) -> Result<(), StoreError> {
        match self.issue() {
            (Ok(failed), contexts) if !failed.is_undefined() => Err(failure(&contexts, failed)),
            (Err(e), contexts) => Err(failure(&contexts, e)),
            _ => Ok(()),
        }
    }

    /// Issues the queue: a future of its reads' results, in order.
    pub(super) fn run(&self) -> Run {
        let (issued, contexts) = self.issue();
        let pending = match issued {
            Ok(promise) if promise.is_instance_of::<js_sys::Promise>() => Ok(promise),
            // No reads, or a request that threw (`[i, error]`).
            Ok(failed) => Err(failed),
            Err(e) => Err(e),
        };
        Run {
            pending: Pending::from(pending.map(JsCast::unchecked_into)),
            contexts,
        }
    }
}

/// The reads [`Stores::run`] issued: a future of their results, in order, or the first error
/// (see [`failure`]).
pub(super) struct Run {
    pending: Pending,
    contexts: Vec<&'static str>,
}

impl std::future::Future for Run {
    type Output = Result<js_sys::Array, StoreError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        let found = std::task::ready!(std::pin::Pin::new(&mut this.pending).poll(cx));
        std::task::Poll::Ready(match found {
            Ok(results) => Ok(results.unchecked_into()),
            // A queue without reads has nothing to wait for.
            Err(e) if e.is_undefined() => Ok(js_sys::Array::new()),
            Err(e) => Err(failure(&this.contexts, e)),
        })
    }
}

/// What `awwIdbRun` failed with (`[i, error]`: request `i` threw `error` or its request
/// failed), mapped with that request's context. A request refused because the transaction
/// already ended (something aborted it while the batch was being issued; a closed connection
/// is told apart by the caller) is that abort: nothing was written.
#[inline(never)]
fn failure(contexts: &[&'static str], failed: JsValue) -> StoreError {
    let (i, e) = match failed.dyn_into::<js_sys::Array>() {
        Ok(failed) => (
            failed.get(0).as_f64().unwrap_or_default() as usize,
            failed.get(1),
        ),
        Err(e) => (0, e),
    };
    let ctx = contexts.get(i).copied().unwrap_or(DEPENDS);
    match dom_name(&e).as_deref() {
        Some("TransactionInactiveError" | "InvalidStateError") => StoreError::Aborted(format!(
            "{ctx}: the transaction was aborted and nothing was written; retry"
        )),
        _ => map_js_error(ctx, e),
    }
}

/// The write pass of one `apply` (runs only after [`store_rules::validate`] accepted the whole batch).
/// Writes are issued, not awaited (see the module docs); the next sequence numbers come from
/// [`Prefetched`] and are cached so a long batch asks the database once per chat.
struct Batch {
    /// Next `seq` per message key prefix `[world, chat]` (see [`SeqKey`]).
    message_seq: VecMap<SeqKey, f64>,
    /// Next `seq` per memory key prefix `[world, chat, agent]`.
    memory_seq: VecMap<SeqKey, f64>,
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
    /// The primary key of the message a `ReplaceMessage` replaces (JSON text), between its
    /// two reads.
    held: String,
}

impl Batch {
    /// The write pass after the read round `pre`.
    fn new(pre: Prefetched, ops: &[StoreOp]) -> Batch {
        // The chats that exist after the batch (one that deletes a chat teaches nothing of
        // its world, see `idb_fast::learn`): those found and those put. And the chats whose
        // record the batch writes: their stamps need no keeping (`keep_stamp`). Plain loops:
        // no iterator adapter stack each.
        let mut chats: Vec<(String, String)> = Vec::new();
        for (parts, stored) in pre.found.recs.iter() {
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
        Batch {
            revs: pre.revs,
            chats,
            current,
            message_seq: pre.message_seq,
            memory_seq: pre.memory_seq,
            worlds: pre.found.worlds,
            written: VecMap::new(),
            newest: None,
            held: String::new(),
        }
    }

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
    fn raise_revisions(&mut self, s: &Stores<'_>) {
        for ((w, _), rev) in self.worlds.iter().zip(&self.revs) {
            s.add_revision(w, rev + 1.0);
        }
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
                let prefix = (world_id.clone(), chat_id.clone(), String::new());
                // The chat's stamp first (`keep_stamp`), then the message.
                let kept = match phase {
                    0 if !self.is_current(w, c) => {
                        let read = s.read(MESSAGES, LAST_VALUE, &[w, c], APPENDING);
                        return Ok(Next::Read(read, 1));
                    }
                    0 => false,
                    1 => match self.stamp_newest(s, got, w, c, None, APPENDING)? {
                        Some(read) => return Ok(Next::Read(read, 2)),
                        None => true,
                    },
                    _ => {
                        self.stamp_put(s, got, w, c, APPENDING)?;
                        true
                    }
                };
                if kept {
                    self.current.push((prefix.0.clone(), prefix.1.clone()));
                }
                let seq = next_seq(self.message_seq.get(&prefix));
                self.message_seq.insert(prefix, seq + 1.0);
                write_common(s, op, seq);
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                ..
            } => {
                let prefix = (world_id.clone(), chat_id.clone(), agent_id.clone());
                let seq = next_seq(self.memory_seq.get(&prefix));
                self.memory_seq.insert(prefix, seq + 1.0);
                write_common(s, op, seq);
            }
            // The common ops are written as the burst writes them (one copy of that code).
            StoreOp::PutChat(_) | StoreOp::PutAgentState { .. } => write_common(s, op, 0.0),
            StoreOp::ExpectRevision { .. } => {} // checked before validation
            StoreOp::PutWorld(world) => {
                self.written.insert(world.id.clone(), true);
                put_world(s, world);
            }
            StoreOp::DeleteWorld { world_id } => {
                let w = world_id.as_str();
                let ctx = "deleting a world";
                self.written.insert(world_id.clone(), false);
                s.request(WORLDS, DELETE, &[w], None, ctx);
                for store in [AGENTS, CHATS, MESSAGES, MEMORY, AGENT_STATES, APPROVALS] {
                    s.request(store, DELETE_UNDER, &[w], None, ctx);
                }
            }
            StoreOp::PutAgent { world_id, agent } => {
                let k = [world_id.as_str(), &agent.id];
                let order = match phase {
                    0 => return Ok(Next::Read(s.read(AGENTS, GET, &k, "reading an agent"), 1)),
                    1 => match row_of::<AgentRow>(got, AGENTS, &key_text(&k))? {
                        Some(row) => row.order,
                        None => {
                            let read = s.read(AGENTS, GET_ALL, &[world_id], "reading agents");
                            return Ok(Next::Read(read, 2));
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
                s.put(AGENTS, PUT, &row, "writing an agent");
            }
            StoreOp::DeleteAgent { world_id, agent_id } => {
                let (w, a) = (world_id.as_str(), agent_id.as_str());
                let ctx = "deleting an agent";
                match phase {
                    0 => {
                        s.request(AGENTS, DELETE, &[w, a], None, ctx);
                        // Memory and states are keyed by chat first: visit the world's chats.
                        return Ok(Next::Read(s.read(CHATS, GET_ALL_KEYS, &[w], ctx), 1));
                    }
                    1 => {
                        for chat_key in array_of(got, ctx)? {
                            let Some(c) = key_part(&chat_key, 1) else {
                                return Err(StoreError::Corrupted(format!(
                                    "unreadable chats key {} in world {w:?}; delete the world",
                                    describe(&chat_key)
                                )));
                            };
                            s.request(MEMORY, DELETE_UNDER, &[w, &c, a], None, ctx);
                            s.request(AGENT_STATES, DELETE, &[w, &c, a], None, ctx);
                        }
                        // Approvals are keyed by chat and id: read the world's, delete the
                        // agent's.
                        return Ok(Next::Read(s.read(APPROVALS, GET_ALL, &[w], ctx), 2));
                    }
                    _ => {
                        let at = in_world(w);
                        for row in array_of(got, ctx)? {
                            let row: ApprovalRow = decode(row, APPROVALS, &at)?;
                            if row.approval.agent_id == a {
                                let k = [w, &row.chat_id, &row.approval_id];
                                s.request(APPROVALS, DELETE, &k, None, ctx);
                            }
                        }
                    }
                }
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let ctx = "deleting a chat";
                s.request(CHATS, DELETE, &[w, c], None, ctx);
                for store in [MESSAGES, MEMORY, AGENT_STATES, APPROVALS] {
                    s.request(store, DELETE_UNDER, &[w, c], None, ctx);
                }
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
                        return Ok(Next::Read(s.read(MESSAGES, LAST_VALUE, &[w, c], ctx), 1));
                    }
                    0 => 0,
                    1 => match self.stamp_newest(s, got, w, c, Some(message_ids), ctx)? {
                        Some(read) => return Ok(Next::Read(read, 2)),
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
                                let k = [w, c, &row.agent_id];
                                s.request(MEMORY, DELETE, &k, Some(row.seq), ctx);
                            }
                        }
                        return Ok(Next::Done);
                    }
                    _ => {
                        // The key as JSON text: an array of strings and a number, which
                        // `JSON.stringify` writes as it reads back.
                        if let Some(pk) = some_key(got) {
                            s.request_text(MESSAGES, DELETE, &describe(&pk), ctx);
                        }
                        phase - FIRST_ID + 1
                    }
                };
                return Ok(match message_ids.get(next_id) {
                    Some(id) => Next::Read(
                        s.read(MESSAGES, GET_KEY_BY_ID, &[w, c, id], ctx),
                        FIRST_ID + next_id,
                    ),
                    None => Next::Read(s.read(MEMORY, GET_ALL, &[w, c], ctx), 3),
                });
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
                        let id_key = [world_id.as_str(), chat_id, old_message_id];
                        let read = s.read(MESSAGES, GET_KEY_BY_ID, &id_key, ctx);
                        return Ok(Next::Read(read, 1));
                    }
                    1 => match some_key(got) {
                        // The key as JSON text (see `DeleteMessages`).
                        Some(pk) => {
                            self.held = describe(&pk);
                            s.request_text(MESSAGES, GET, &self.held, ctx);
                            return Ok(Next::Read(s.run(), 2));
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
                s.put(MESSAGES, PUT, &row, ctx);
            }
            StoreOp::ClearMemory {
                world_id,
                chat_id,
                agent_id,
            } => {
                let parts = [world_id.as_str(), chat_id, agent_id];
                s.request(MEMORY, DELETE_UNDER, &parts, None, "clearing memory");
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
                s.put(APPROVALS, PUT, &row, "writing an approval");
            }
            StoreOp::DeleteApproval {
                world_id,
                chat_id,
                approval_id,
            } => {
                let k = [world_id.as_str(), chat_id, approval_id];
                s.request(APPROVALS, DELETE, &k, None, "deleting an approval");
            }
        }
        Ok(Next::Done)
    }

    /// Whether chat `[w, c]`'s record is as readers see it (see `current`).
    fn is_current(&self, w: &str, c: &str) -> bool {
        self.current.iter().any(|(x, y)| x == w && y == c)
    }

    /// `keep_stamp`, before a batch that does not put chat `[w, c]` appends to it or deletes
    /// its messages (`deleted`): when the newest message carries the chat's stamp (and is
    /// among those deleted), the chat's record is written as readers see the chat, so that the
    /// stamp no longer being the newest does not take the chat back to an older count (see
    /// `idb_schema::with_stamp`). The engine's batches put the chat whenever they append or
    /// delete; this keeps the others (the store contract's) reading as they did. Its first
    /// read: the newest message (`LAST_VALUE` of the chat's messages), then this and
    /// [`Batch::stamp_put`].
    ///
    /// This is its second part: the newest message of chat `[w, c]` as that read found it
    /// (`got`, `undefined` for none). When the chat's record must be written, keeps that
    /// message and returns the read of the record.
    fn stamp_newest(
        &mut self,
        s: &Stores<'_>,
        got: JsValue,
        w: &str,
        c: &str,
        deleted: Option<&[String]>,
        ctx: &'static str,
    ) -> Result<Option<Run>, StoreError> {
        if got.is_undefined() {
            return Ok(None);
        }
        let at = in_chat(w, c);
        let newest: MessageRow = decode(got, MESSAGES, &at)?;
        let goes = deleted.is_none_or(|ids| ids.contains(&newest.message_id));
        if newest.stamp().is_none() || !goes {
            return Ok(None);
        }
        let read = s.read(CHATS, GET, &[w, c], ctx);
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
        ctx: &'static str,
    ) -> Result<(), StoreError> {
        let Some(mut row) = row_of::<ChatRow>(got, CHATS, &key_text(&[w, c]))? else {
            return Ok(());
        };
        with_stamp(&mut row.chat, self.newest.take().and_then(|m| m.stamp()));
        let row = ChatRow {
            v: row.v,
            world_id: row.world_id.as_str(),
            chat_id: row.chat_id.as_str(),
            chat: &row.chat,
        };
        s.put(CHATS, PUT, &row, ctx);
        Ok(())
    }
}

/// What an op's step ([`Batch::step`]) asks of [`write_batch`]'s loop.
enum Next {
    /// The op is written.
    Done,
    /// Await this read, then step again at this phase.
    Read(Run, usize),
}

/// The `seq` of an append, `known` by [`Prefetched::queue`], which reads the next `seq` of
/// every chat and memory the batch appends to. Never `None` then; were it, the append at 1
/// (an `add`, which never overwrites) would fail the batch on an existing record rather than
/// overwrite it.
fn next_seq(known: Option<&f64>) -> f64 {
    known.copied().unwrap_or(1.0)
}

/// The context of an appended message's reads.
const APPENDING: &str = "appending a message";

/// The phase of [`Batch::step`] for a `DeleteMessages` that has the result of its first
/// message id's read (`FIRST_ID + i`: of id `i`).
const FIRST_ID: usize = 4;

/// Writes key `parts` (with `seq` after them when given) as a JSON array.
fn write_key(out: &mut String, parts: &[&str], seq: Option<f64>) {
    out.push('[');
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, p);
    }
    if let Some(seq) = seq {
        out.push(',');
        seq.write_json(out);
    }
    out.push(']');
}

/// Key `parts` as JSON text, for an error naming the record.
fn key_text(parts: &[&str]) -> String {
    let mut out = String::new();
    write_key(&mut out, parts, None);
    out
}
