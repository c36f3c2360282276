//! [`IdbStore`]: the [`Store`] over IndexedDB (every call through the store's JS snippet, in
//! `idb_request`), so that chats and memories survive reloads. Runs in a page and in a
//! dedicated worker (the factory is found through `globalThis`). The schema, its version and
//! its migrations are described in [`idb_schema`](super::idb_schema).
//!
//! Layout: this file holds the connection (opening, `versionchange` and `close`), `apply`
//! (burst or read round) and the read methods of [`Store`]. The rest is beside it:
//! [`idb_schema`](super::idb_schema) the stores, keys, row types and migrations;
//! `idb_fast.rs` the one-burst write and what a connection knows; `idb_write.rs` the read
//! round and `Stores`, a transaction's requests queued as plain data and issued in one call;
//! `idb_request.rs` the request helpers, record encoding and decoding, and the awaiting
//! primitive with the transaction wrapper `Tx`, and the adapter's JS snippet (the queued
//! requests, the `last_n` walk, the open request with its handlers and the
//! migrations, the connection's handlers): host work that takes JS a few lines and Rust an
//! import, glue and a closure per call; `idb_error.rs` the mapping of DOMExceptions and
//! aborts to [`StoreError`].
//!
//! Transaction boundaries:
//! - every read method is one `readonly` transaction over the stores it reads (`dump` one over
//!   all of them, so an export is a consistent snapshot). Opening a world reads through
//!   [`Store::snapshot`], one over all of them too: the read methods' bodies run in it
//!   (`InTx`), one after another, instead of eight transactions. Read transactions are
//!   dropped, not committed: a `Tx` dropped before its commit is aborted, which discards
//!   nothing in a read-only one (and leaves nothing of a batch given up half-way, or whose
//!   future was dropped);
//! - [`Store::apply`] is ONE `readwrite` transaction (over every store, or for a burst over
//!   the ones it writes, `revisions` always among them; over quota, a batch
//!   that only deletes is retried once without its revision record, see `apply`), done one of
//!   two ways. The engine's common batches (a message, a reply, a counter) go in one burst
//!   (`idb_fast.rs`) when this connection knows what they need from its own
//!   last commit to the world: writes only, the revision record's `add` being the check (it
//!   fails, aborting the transaction, when another writer took that revision), one await (the
//!   commit). Every other batch, and one whose burst failed (which
//!   wrote nothing), goes through the read round (`idb_write.rs`): every read
//!   the rules need is issued at once and awaited together, the
//!   [`StoreOp::ExpectRevision`] check and the validation run on what was read (an invalid or
//!   stale batch aborts the transaction before anything was written), then the writes are
//!   issued without waiting for each, and the batch ends with `commit().await`; a failure
//!   while writing (quota, disk) aborts the transaction, which rolls back the writes already
//!   made. The read round decides every error.
//! - Only IndexedDB requests are awaited while a transaction is open: awaiting anything else
//!   (a timer, fetch, a JS promise) would let the browser auto-commit it half-way. A request
//!   is awaited through one primitive, `Pending`: a promise settled by the request's
//!   `success`/`error` handlers (set when the request is issued; the reads issued together
//!   are awaited as one promise of all their results), awaited as a `JsFuture`. The task it wakes runs in a
//!   microtask of the `success` event's dispatch, while the transaction is still active, so
//!   the next request is issued in time; a commit is awaited the same way (`complete` or
//!   `abort`).
//!
//! Reads are bounded: `messages(before, limit)` finds `before` through the unique message-id
//! index and walks at most `limit` records backwards over a key range; `last_memory(n)` walks
//! at most `n`. Cascading deletes are key-range deletes on the compound-key prefixes.
//!
//! Connection life: when another tab opens the database with a higher version (or deletes it),
//! the `versionchange` handler closes this connection at once, so that tab's upgrade is never
//! blocked by us; every later call fails at once with a clear [`StoreError::Closed`] instead
//! of hanging (after an upgrade or a delete by another tab, `close()`, or the browser dropping
//! the connection). An open that is itself blocked by an older
//! connection that does not close fails with [`StoreError::Blocked`]; the caller may retry once
//! the other tab is closed. `delete_database` has no such escape: it waits until connections
//! from other code close (ours close themselves).
//!
//! Errors: DOMException names are mapped to [`StoreError`] variants (`QuotaExceededError` →
//! `QuotaExceeded`, `VersionError` → `Version`, `AbortError` or an aborted transaction →
//! `Aborted`, `ConstraintError` → `Invalid`, `InvalidStateError` → `Closed`); an unreadable
//! record → `Corrupted` naming the store and key, a record from a newer format → `Version`.
//! Stored data never causes a panic.
//!
//! Several tabs and workers: each world's revision ([`Store::revision`]) is the newest of its
//! records in the `revisions` store, keyed `[worldId, rev]` (database version 3, see
//! [`idb_schema`](super::idb_schema)); every `apply` adds the next one for each world its ops
//! name, inside its transaction, so the bump commits or rolls back with the batch, and an
//! `add` that finds the key taken (another writer's revision) fails the batch. The engine's
//! writes need no lock: IndexedDB runs read-write transactions over the same stores one at a
//! time, so the check and the commit see the same revision. [`Store::lock_world`] (the Web Lock
//! `agent-world-wasm:<database>:<worldId>`) is only taken to import or delete a whole world.
//! After each commit the store posts `{worldId, what}` on the BroadcastChannel
//! `agent-world-wasm:<database>` (see [`tabs`]; a burst posts while its commit is
//! under way). Message and memory `seq`s are found inside the write transaction (the last key
//! of the chat's range), or known from this connection's own last commit to the world and
//! used only while the world is still at the revision that commit left (the burst's revision
//! record), so two connections appending to one chat never collide. A fresh connection learns
//! the current revision from the newest key of the world's revision records.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore};

pub use super::idb_error::store_error_from_dom_exception;
use super::idb_error::{dom_name, map_js_error};
use super::idb_fast::{self, Known, Learned};
use super::idb_request::{
    array_of, call, decode, decode_all, describe, get_all, idb_open, idb_watch, in_chat, in_world,
    last_n, payloads, prop, row_of, seq_after, some_key, Op, Pending, Tx,
};
use super::idb_schema::{
    below_range, key, prefix_range, with_stamp, AgentRow, ApprovalRow, ChatRow, KeyRange,
    MemoryRow, MessageRow, StateRow, WorldRow, AGENTS, AGENT_STATES, ALL_STORES, APPROVALS, CHATS,
    DB_VERSION, MEMORY, MESSAGES, REVISIONS, WORLDS,
};
use super::idb_write::{
    named_worlds, write_batch, Stores, GET, GET_ALL, GET_KEY_BY_ID, LAST_KEY, LAST_VALUE,
};
use super::tabs::{self, ChangeChannel};
use crate::core::approval::ApprovalRecord;
use crate::core::json_write::{number_text, ToJson};
use crate::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use crate::core::sort::sort_by;
use crate::core::store::{
    AgentChatState, ChatDump, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump, WorldLockGuard,
};

/// The state of this store's connection, set by `close()` and the connection's event handlers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ConnState {
    Open,
    /// `close()` was called.
    Closed,
    /// Another tab upgraded (`Some(new version)`) or deleted (`None`) the database; we closed.
    VersionChanged(Option<f64>),
    /// The browser closed the connection (site data cleared, disk error).
    Lost,
}

/// A [`Store`] over one IndexedDB database (one connection). Dropping it closes the connection.
pub struct IdbStore {
    name: String,
    db: IdbDatabase,
    /// `close()` was called while the connection was open.
    closed: Cell<bool>,
    /// How the connection ended, pushed by its JS handlers (`awwIdbWatch`): empty while it is
    /// open, else first another tab's upgrade (the new version) or delete (`null`), or
    /// `undefined` when the browser closed it. Read by [`IdbStore::state`]: no Rust callback
    /// is handed to the browser for them.
    ended: js_sys::Array,
    /// Change notifications to and from the other contexts of this origin.
    changes: ChangeChannel,
    /// What this connection knows of the worlds it committed to, for writes in one burst
    /// ([`idb_fast`](super::idb_fast)). A world another context tells of a change to is
    /// forgotten: every other writer's batch moves the revision, which the burst's revision
    /// record catches anyway, but the over-quota delete retry does not (see `apply`), and
    /// the notice then keeps this connection from writing into a chat that retry deleted.
    known: Rc<RefCell<Known>>,
}

impl std::fmt::Debug for IdbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdbStore")
            .field("name", &self.name)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// The schema version [`IdbStore::open`] creates (re-exported for tests and tools).
pub const SCHEMA_VERSION: u32 = DB_VERSION;

impl IdbStore {
    /// Opens (creating or upgrading) the database `db_name`.
    ///
    /// Fails with [`StoreError::Version`] when the database was created by a newer version of
    /// the app, with [`StoreError::Blocked`] when another tab keeps an older version open and
    /// does not give way, and with [`StoreError::Backend`] when IndexedDB is unavailable or the
    /// database was not made by this store.
    pub async fn open(db_name: &str) -> Result<IdbStore, StoreError> {
        Self::open_version(db_name, DB_VERSION).await
    }

    /// [`IdbStore::open`] asking for database version `version` (the upgrade steps up to it
    /// run). For tests of what another app version sees; applications use `open`.
    #[doc(hidden)]
    pub async fn open_version(db_name: &str, version: u32) -> Result<IdbStore, StoreError> {
        let context = format!("opening database {db_name:?}");
        if version == 0 {
            return Err(StoreError::Version(format!(
                "{context}: version 0 is invalid"
            )));
        }
        // The open request, its handlers and the migrations are JS (`awwIdbOpen`).
        let open = idb_open(&factory(&context)?, db_name, version)
            .map_err(|e| map_js_error(&context, e))?;
        let settled: js_sys::Promise = open.get(1).unchecked_into();
        match JsFuture::from(js_sys::Promise::from(open.get(0))).await {
            Ok(v) if v.is_undefined() => {
                // The open request stays queued in the browser and succeeds (upgrading) once
                // the other connection closes; close that connection then, so nobody holds an
                // orphan.
                wasm_bindgen_futures::spawn_local(async move {
                    if let Ok(db) = JsFuture::from(settled).await {
                        db.unchecked_into::<IdbDatabase>().close();
                    }
                });
                Err(StoreError::Blocked(format!(
                    "opening database {db_name:?} (version {version}) waits for a connection \
                     to an older version that does not close"
                )))
            }
            Ok(db) => Self::from_connection(db_name, db.unchecked_into()),
            // A failed upgrade step's error, not the browser's abort it caused.
            Err(e) => Err(map_js_error(&context, e)),
        }
    }

    /// Deletes the database `db_name` and everything in it (used by tests and "delete all data").
    pub async fn delete_database(db_name: &str) -> Result<(), StoreError> {
        let context = format!("deleting database {db_name:?}");
        let name = JsValue::from_str(db_name);
        let request = call(
            &factory(&context)?,
            Op::DeleteDatabase,
            &name,
            &JsValue::UNDEFINED,
        );
        Pending::of(request.map(JsCast::unchecked_into))
            .outcome(&context)
            .await
            .map(drop)
    }

    /// Whether the connection is still usable (not closed by `close()`, another tab's upgrade
    /// or delete, or the browser).
    pub fn is_open(&self) -> bool {
        self.state() == ConnState::Open
    }

    /// The database name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Calls `listener` with the world id of every write another context (tab, worker) of this
    /// origin commits to this database; returns an id for [`IdbStore::unsubscribe_changes`].
    pub fn subscribe_changes(&self, listener: Rc<dyn Fn(&str)>) -> u64 {
        self.changes.subscribe(listener)
    }

    pub fn unsubscribe_changes(&self, id: u64) {
        self.changes.unsubscribe(id);
    }

    /// Closes the connection; every later call fails with [`StoreError::Closed`].
    pub fn close(&self) {
        if self.state() == ConnState::Open {
            self.closed.set(true);
        }
        self.raw().close();
    }

    fn from_connection(db_name: &str, db: IdbDatabase) -> Result<IdbStore, StoreError> {
        let present = prop(&db, "objectStoreNames");
        let has = |name: &str| {
            let name = JsValue::from_str(name);
            call(&present, Op::Contains, &name, &JsValue::UNDEFINED).is_ok_and(|b| b.is_truthy())
        };
        if let Some(missing) = ALL_STORES.iter().find(|s| !has(s)) {
            db.close();
            return Err(StoreError::Backend(format!(
                "database {db_name:?} has no {missing:?} object store: it was not created by this \
                 app; delete it or use another database name"
            )));
        }
        let ended = js_sys::Array::new();
        let _ = idb_watch(&db, Some(&ended));
        let changes = ChangeChannel::open(&format!("agent-world-wasm:{db_name}"));
        let known: Rc<RefCell<Known>> = Rc::default();
        let forget = Rc::downgrade(&known);
        // Called from a message event, never while `known` is borrowed (no borrow is held
        // across an await).
        changes.subscribe(Rc::new(move |world: &str| {
            if let Some(known) = forget.upgrade() {
                if let Ok(mut known) = known.try_borrow_mut() {
                    known.forget(world);
                }
            }
        }));
        Ok(IdbStore {
            name: db_name.to_string(),
            db,
            closed: Cell::new(false),
            ended,
            changes,
            known,
        })
    }

    fn raw(&self) -> &IdbDatabase {
        &self.db
    }

    /// The connection's state: `close()`, else the first end its JS handlers recorded.
    fn state(&self) -> ConnState {
        if self.closed.get() {
            return ConnState::Closed;
        }
        if self.ended.length() == 0 {
            return ConnState::Open;
        }
        let end = self.ended.get(0);
        match end.is_undefined() {
            true => ConnState::Lost,
            false => ConnState::VersionChanged(end.as_f64()),
        }
    }

    /// The error every call returns once the connection is gone, `None` while it is open.
    fn closed_error(&self) -> Option<StoreError> {
        let name = &self.name;
        match self.state() {
            ConnState::Open => None,
            ConnState::Closed => Some(StoreError::Closed(format!(
                "database {name:?} is closed; open it again"
            ))),
            ConnState::VersionChanged(Some(v)) => Some(StoreError::Closed(format!(
                "another tab upgraded database {name:?} to version {} (this app uses version \
                 {DB_VERSION}) and this connection was closed; reload the page",
                number_text(v)
            ))),
            ConnState::VersionChanged(None) => Some(StoreError::Closed(format!(
                "another tab deleted database {name:?} and this connection was closed; reload \
                 the page"
            ))),
            ConnState::Lost => Some(StoreError::Closed(format!(
                "the browser closed database {name:?} (site data cleared or a disk error); \
                 reload the page"
            ))),
        }
    }

    fn check_open(&self) -> Result<(), StoreError> {
        self.closed_error().map_or(Ok(()), Err)
    }

    /// Maps an IndexedDB error, preferring the closed-connection error when that is the cause.
    fn fail(&self, context: &str, e: JsValue) -> StoreError {
        self.closed_error()
            .unwrap_or_else(|| map_js_error(context, e))
    }

    /// A transaction over `stores`, `readwrite` when `write`, else `readonly`.
    fn transaction(&self, stores: &[&str], write: bool) -> Result<Tx, StoreError> {
        self.check_open()?;
        let names = key(stores);
        call(
            &self.db,
            Op::Transaction,
            &names,
            &JsValue::from_bool(write),
        )
        .map(|raw| Tx::new(raw.unchecked_into()))
        .map_err(|e| self.fail("starting a transaction", e))
    }

    /// `tx`, or a new read-only transaction over `stores` kept in `own`: each read method runs
    /// in a transaction of its own, or in a snapshot's (`InTx`, [`Store::snapshot`]).
    fn tx_or<'t>(
        &self,
        tx: Option<&'t Tx>,
        own: &'t mut Option<Tx>,
        stores: &[&str],
    ) -> Result<&'t Tx, StoreError> {
        match tx {
            Some(tx) => Ok(tx),
            None => Ok(own.insert(self.transaction(stores, false)?)),
        }
    }

    /// Read `op` of object store `name` at key `parts` (see `idb_write::Stores::request`:
    /// `GET_ALL`, every record under that key prefix in key order, for [`decode_all`]) in
    /// `tx` (`None`: in a read-only transaction of its own): its result; `ctx` names the read
    /// in its error. Not generic: one state machine for the reads of every read method.
    fn read_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        name: &'a str,
        op: u32,
        parts: &'a [&'a str],
        ctx: &'static str,
    ) -> LocalBoxFuture<'a, Result<JsValue, StoreError>> {
        Box::pin(async move {
            let mut own = None;
            let s = Stores::new(self.tx_or(tx, &mut own, &[name])?);
            match s.read(name, op, parts, ctx).await {
                Ok(found) => Ok(found.get(0)),
                Err(e) => Err(self.closed_error().unwrap_or(e)),
            }
        })
    }

    fn store(&self, tx: &Tx, name: &str) -> Result<IdbObjectStore, StoreError> {
        call(
            &tx.raw,
            Op::ObjectStore,
            &JsValue::from_str(name),
            &JsValue::UNDEFINED,
        )
        .map(JsCast::unchecked_into)
        .map_err(|e| self.fail(&format!("opening object store {name:?}"), e))
    }

    /// [`Store::load_world`] in `tx` (`None`: a transaction of its own); `ctx` names the read
    /// in its error (the export's differs).
    fn load_world_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
        ctx: &'static str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        Box::pin(async move {
            let found = self.read_in(tx, WORLDS, GET, &[world_id], ctx).await?;
            world_of(found, world_id)
        })
    }

    /// [`Store::agent_states`] in `tx` (`None`: a transaction of its own); `ctx`: see
    /// [`IdbStore::load_world_in`].
    fn states_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
        chat_id: &'a str,
        ctx: &'static str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        Box::pin(async move {
            let parts = [world_id, chat_id];
            let rows = self.read_in(tx, AGENT_STATES, GET_ALL, &parts, ctx).await?;
            states_of(rows, world_id, chat_id, ctx)
        })
    }

    /// [`Store::revision`] in `tx` (`None`: a transaction of its own): the newest of the
    /// world's revision records (see `idb_schema`).
    fn revision_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move {
            let ctx = "finding the next sequence number";
            let last = self
                .read_in(tx, REVISIONS, LAST_KEY, &[world_id], ctx)
                .await?;
            let next = seq_after(last, 1, REVISIONS)?;
            // `rev` is a whole number below 2^53 (one per write), so the cast is exact.
            Ok(Some((next - 1.0) as u64))
        })
    }

    /// [`Store::agents`] in `tx` (`None`: a transaction of its own); `ctx`: see
    /// [`IdbStore::load_world_in`].
    fn agents_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
        ctx: &'static str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        Box::pin(async move {
            let rows = self.read_in(tx, AGENTS, GET_ALL, &[world_id], ctx).await?;
            agents_of(rows, world_id, ctx)
        })
    }

    /// [`Store::chats`] in `tx` (over `chats` and `messages`; `None`: a transaction of its
    /// own).
    fn chats_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        Box::pin(async move {
            let mut own = None;
            let s = Stores::new(self.tx_or(tx, &mut own, &[CHATS, MESSAGES])?);
            let ctx = "reading chats";
            let rows = match s.read(CHATS, GET_ALL, &[world_id], ctx).await {
                Ok(rows) => array_of(rows.get(0), ctx)?,
                Err(e) => return Err(self.closed_error().unwrap_or(e)),
            };
            let rows: Vec<ChatRow> = decode_all(rows, CHATS, &in_world(world_id))?;
            // Each chat's newest message, for its stamp: all read at once.
            for r in &rows {
                s.request(MESSAGES, LAST_VALUE, &[world_id, &r.chat_id], None, ctx);
            }
            let newest = s.run().await?;
            let mut out = Vec::with_capacity(rows.len());
            for (i, row) in rows.into_iter().enumerate() {
                out.push(with_newest(row, newest.get(i as u32), world_id)?);
            }
            Ok(out)
        })
    }

    /// [`Store::approvals`] in `tx` (`None`: a transaction of its own).
    fn approvals_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            let ctx = "reading approvals";
            let parts = [world_id, chat_id];
            let rows = self.read_in(tx, APPROVALS, GET_ALL, &parts, ctx).await?;
            let at = in_chat(world_id, chat_id);
            let mut v = payloads::<ApprovalRow>(array_of(rows, ctx)?, APPROVALS, &at)?;
            sort_by(&mut v, &|a, b| {
                (a.created_at, &a.approval_id).cmp(&(b.created_at, &b.approval_id))
            });
            Ok(v)
        })
    }

    /// [`Store::last_memory`] in `tx` (`None`: a transaction of its own).
    fn last_memory_in<'a>(
        &'a self,
        tx: Option<&'a Tx>,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        Box::pin(async move {
            let mut own = None;
            let memory = self.store(self.tx_or(tx, &mut own, &[MEMORY])?, MEMORY)?;
            let range = prefix_range(&[world_id, chat_id, agent_id]);
            let rows = last_n(&memory, range, n, "reading memory").await?;
            let at = format!("of agent {agent_id:?} in chat {chat_id:?} of world {world_id:?}");
            payloads::<MemoryRow>(rows, MEMORY, &at)
        })
    }

    /// One batch, one transaction: in one burst when the connection knows what the batch
    /// needs ([`idb_fast`](super::idb_fast)), else through the read round
    /// ([`idb_write`](super::idb_write)); a burst that fails wrote nothing and the batch
    /// goes through the read round, which decides. `bump`: raise the revisions of the worlds
    /// it names (always, except for the over-quota retry of a batch that only deletes, see
    /// [`Store::apply`]).
    async fn apply_ops(&self, ops: &[StoreOp], bump: bool) -> Result<(), StoreError> {
        let named = named_worlds(ops);
        let plan = if bump {
            idb_fast::plan(&self.known.borrow(), ops, &named)
        } else {
            None
        };
        if let Some(plan) = plan {
            match self.apply_burst(ops, &named, plan).await {
                Burst::Committed => return Ok(()),
                Burst::Failed(e) => {
                    self.forget(&named);
                    return Err(e);
                }
                Burst::ReadRound => {}
            }
        }
        self.forget(&named);
        let learned = self.apply_read_round(ops, &named, bump).await?;
        if bump {
            idb_fast::learn(&mut self.known.borrow_mut(), ops, learned);
        }
        for (world, what) in &named {
            self.changes.post(world, what);
        }
        Ok(())
    }

    /// Forgets what this connection knew of the named worlds.
    fn forget(&self, named: &[(String, &'static str)]) {
        let mut known = self.known.borrow_mut();
        for (w, _) in named {
            known.forget(w);
        }
    }

    /// The burst of [`idb_fast`](super::idb_fast). When it committed, what the connection
    /// knows is updated and the change posted.
    async fn apply_burst(
        &self,
        ops: &[StoreOp],
        named: &[(String, &'static str)],
        plan: idb_fast::Plan,
    ) -> Burst {
        // Only the stores the burst writes (see `Plan::scope`).
        let tx = match self.transaction(plan.scope(), true) {
            Ok(tx) => tx,
            Err(e) => return Burst::Failed(e),
        };
        let after = {
            let stores = Stores::new(&tx);
            match idb_fast::write(&stores, ops, plan) {
                Ok(after) => after,
                // Dropping the transaction aborts it: nothing is written.
                Err(e) => return Burst::Failed(self.closed_error().unwrap_or(e)),
            }
        };
        // Kept to read the DOMException (e.g. QuotaExceededError) after a failed commit.
        let raw_tx = tx.raw.clone();
        // The other contexts are told while the commit is under way (asked for first): a
        // read they start on the news is a transaction created after this one, which
        // IndexedDB runs only once this one has committed or aborted when it reads a store
        // this one writes (`revisions` always; a store outside the scope holds nothing this
        // batch changed). An abort makes the news
        // a false alarm, which costs them a revision read (`World::refresh`).
        let committing = tx.commit();
        for (world, what) in named {
            self.changes.post(world, what);
        }
        match committing.await {
            Ok(_) => {
                idb_fast::committed(&mut self.known.borrow_mut(), after);
                Burst::Committed
            }
            Err(e) => {
                // The transaction's error, set once it has aborted (the commit reports it; or
                // what `commit()` threw, when something had already ended the transaction).
                let dom = tx_error(&raw_tx);
                let is_constraint = |d: Option<&JsValue>| {
                    d.is_some_and(|d| dom_name(d).as_deref() == Some("ConstraintError"))
                };
                let constraint = is_constraint(dom.as_ref()) || is_constraint(Some(&e));
                if self.closed_error().is_none() && constraint {
                    // A key the batch adds exists (a revision another writer took, a
                    // duplicate message id, a stale `seq`): nothing was written, and the read
                    // round judges the batch in a transaction that starts once this one has
                    // ended.
                    return Burst::ReadRound;
                }
                Burst::Failed(self.commit_error(dom, e))
            }
        }
    }

    /// The batch through the read round (see [`idb_write`](super::idb_write)), committed.
    async fn apply_read_round(
        &self,
        ops: &[StoreOp],
        named: &[(String, &'static str)],
        bump: bool,
    ) -> Result<Learned, StoreError> {
        let tx = self.transaction(&ALL_STORES, true)?;
        // Kept to read the DOMException (e.g. QuotaExceededError) after a failed commit.
        let raw_tx = tx.raw.clone();
        let outcome = {
            let stores = Stores::new(&tx);
            write_batch(&stores, ops, named, bump).await
        };
        let learned = match outcome {
            Ok(learned) => learned,
            Err(e) => {
                // Roll back whatever was written (nothing, when validation failed).
                tx.abort();
                return Err(self.closed_error().unwrap_or(e));
            }
        };
        match tx.commit().await {
            Ok(_) => Ok(learned),
            Err(e) => Err(self.commit_error(tx_error(&raw_tx), e)),
        }
    }

    /// The error of a commit that failed with `e`: the closed connection, else the
    /// transaction's error `dom` (set once it has aborted), else `e` (what `commit()` threw
    /// when something had already ended the transaction).
    #[inline(never)]
    fn commit_error(&self, dom: Option<JsValue>, e: JsValue) -> StoreError {
        self.closed_error().unwrap_or_else(|| match dom {
            Some(dom) => {
                store_error_from_dom_exception("committing the batch", dom.unchecked_ref())
            }
            None => map_js_error("committing the batch", e),
        })
    }
}

/// How a burst ended (see [`IdbStore::apply_burst`]).
enum Burst {
    Committed,
    /// Nothing was written and the read round must judge the batch: a check failed, or the
    /// database refused a key the batch adds.
    ReadRound,
    /// Nothing was written, for a reason the read round would meet too (quota, an abort from
    /// elsewhere, a closed connection): the batch's error.
    Failed(StoreError),
}

/// Whether a batch only removes records (it frees space and may be retried over quota without
/// its revision record).
fn only_deletes(ops: &[StoreOp]) -> bool {
    ops.iter().all(StoreOp::only_removes)
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        let raw = self.raw();
        let _ = idb_watch(raw, None);
    }
}

/// A transaction's error (`None` while it has none: not aborted, or aborted by `abort()`).
fn tx_error(tx: &JsValue) -> Option<JsValue> {
    Some(prop(tx, "error")).filter(|e| !e.is_null() && !e.is_undefined())
}

/// The IndexedDB factory of this context (`globalThis.indexedDB`: pages, workers).
fn factory(context: &str) -> Result<JsValue, StoreError> {
    let found = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("indexedDB"))
        .map_err(|e| map_js_error(context, e))?;
    if found.is_null() || found.is_undefined() {
        return Err(StoreError::Backend(format!(
            "{context}: indexeddb is not available here; use the memory store or a js store \
             adapter"
        )));
    }
    Ok(found)
}

// ---- the Store impl ----

impl Store for IdbStore {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[WORLDS], false)?;
            let worlds = self.store(&tx, WORLDS)?;
            let all = KeyRange {
                lower: JsValue::from_str(""),
                lower_open: false,
                upper: JsValue::UNDEFINED,
                upper_open: false,
            };
            let rows = get_all(&worlds, all, "listing worlds").await?;
            payloads::<WorldRow>(rows, WORLDS, "(listing worlds)")
        })
    }

    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        self.load_world_in(None, world_id, LOADING)
    }

    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        self.agents_in(None, world_id, AGENTS_READ)
    }

    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        self.chats_in(None, world_id)
    }

    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        self.states_in(None, world_id, chat_id, STATES_READ)
    }

    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.approvals_in(None, world_id, chat_id)
    }

    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        self.last_memory_in(None, world_id, chat_id, agent_id, n)
    }

    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[MESSAGES], false)?;
            let messages = self.store(&tx, MESSAGES)?;
            if limit == 0 {
                return Ok(Vec::new());
            }
            let parts = [world_id, chat_id];
            let range = match before {
                None => prefix_range(&parts),
                Some(id) => {
                    let s = Stores::new(&tx);
                    let found = s.read(MESSAGES, GET_KEY_BY_ID, &[world_id, chat_id, id], FINDING);
                    let Some(primary) = some_key(found.await?.get(0)) else {
                        return Ok(Vec::new());
                    };
                    let seq = js_sys::Array::from(&primary).get(2).as_f64();
                    let Some(seq) = seq.filter(|s| s.is_finite()) else {
                        return Err(StoreError::Corrupted(format!(
                            "unreadable {MESSAGES} key {}; delete the chat",
                            describe(&primary)
                        )));
                    };
                    below_range(&parts, seq)
                }
            };
            let rows = last_n(&messages, range, limit, "reading messages").await?;
            payloads::<MessageRow>(rows, MESSAGES, &in_chat(world_id, chat_id))
        })
    }

    /// One `readonly` transaction over every store (a view reads them all, the messages for
    /// the chats' stamps), which the read methods' bodies run in (`InTx`).
    fn snapshot(&self) -> Result<Option<Box<dyn Store + '_>>, StoreError> {
        let tx = self.transaction(&ALL_STORES, false)?;
        Ok(Some(Box::new(InTx { store: self, tx })))
    }

    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&ALL_STORES, false)?;
            // Two rounds of reads in this one transaction, each error naming the export: the
            // world, its agents and chats, then every chat's records, all at once.
            let s = Stores::new(&tx);
            let ctx = "exporting a world";
            s.request(WORLDS, GET, &[world_id], None, ctx);
            s.request(AGENTS, GET_ALL, &[world_id], None, ctx);
            s.request(CHATS, GET_ALL, &[world_id], None, ctx);
            let found = s
                .run()
                .await
                .map_err(|e| self.closed_error().unwrap_or(e))?;
            let world = world_of(found.get(0), world_id)?;
            let agents = agents_of(found.get(1), world_id, ctx)?;
            let chat_rows: Vec<ChatRow> =
                decode_all(array_of(found.get(2), ctx)?, CHATS, &in_world(world_id))?;
            for row in &chat_rows {
                let parts = [world_id, &row.chat_id];
                for name in [MESSAGES, MEMORY, AGENT_STATES] {
                    s.request(name, GET_ALL, &parts, None, ctx);
                }
            }
            let found = s.run().await?;
            let mut chats = Vec::with_capacity(chat_rows.len());
            for (i, row) in chat_rows.into_iter().enumerate() {
                let at = in_chat(world_id, &row.chat_id);
                let i = 3 * i as u32;
                // The messages, and the stamp on the newest (plain loops: no iterator adapter
                // stack per row type).
                let rows = array_of(found.get(i), ctx)?;
                let (mut messages, mut stamp) = (Vec::with_capacity(rows.len()), None);
                for js in rows {
                    let m: MessageRow = decode(js, MESSAGES, &at)?;
                    stamp = m.stamp();
                    messages.push(m.message);
                }
                // Key order is agent id, then seq: group consecutive runs by agent.
                let mut memories: Vec<(String, Vec<MemoryEntry>)> = Vec::new();
                for js in array_of(found.get(i + 1), ctx)? {
                    let m: MemoryRow = decode(js, MEMORY, &at)?;
                    match memories.last_mut() {
                        Some((agent, entries)) if *agent == m.agent_id => entries.push(m.entry),
                        _ => memories.push((m.agent_id, vec![m.entry])),
                    }
                }
                let states = states_of(found.get(i + 2), world_id, &row.chat_id, ctx)?;
                let mut chat = row.chat;
                with_stamp(&mut chat, stamp);
                chats.push(ChatDump {
                    chat: Some(chat),
                    messages,
                    memories,
                    states,
                });
            }
            Ok(WorldDump {
                world,
                agents,
                chats,
            })
        })
    }

    /// Over quota, the browser refuses every transaction that puts a record, and raising the
    /// revision adds one: a batch that only deletes (the way to free space) is then retried
    /// without it, so deleting works when the origin is full. The revision does not move for
    /// that batch: the engine re-reads it (`World::persist_freeing`), and another tab with the
    /// world open notices the deletes at the next write that raises it. Until then its view
    /// may be stale; over quota its writes fail anyway (each adds a record), and once there is
    /// room, one of its writes made before any other could still act on that view: an append
    /// to a deleted chat is refused as invalid once that tab has had this one's change notice
    /// (its store then forgets what it knew of the world and reads before writing), and would
    /// be written (the chat's row put back) by a write made before the notice arrives.
    /// Reopening the world in that tab reloads it.
    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            if !only_deletes(&ops) {
                return self.apply_ops(&ops, true).await;
            }
            match self.apply_ops(&ops, true).await {
                Err(e) if e.reason() == "quota_exceeded" => self.apply_ops(&ops, false).await,
                r => r,
            }
        })
    }

    fn revision<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        self.revision_in(None, world_id)
    }

    fn lock_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<WorldLockGuard, StoreError>> {
        Box::pin(async move {
            let name = format!("agent-world-wasm:{}:{world_id}", self.name);
            match tabs::acquire(&name).await {
                Ok(guard) => Ok(Box::new(guard) as WorldLockGuard),
                Err(e) => Err(StoreError::Backend(e)),
            }
        })
    }
}

/// The read methods of an [`IdbStore`] in one read-only transaction ([`Store::snapshot`]):
/// their own bodies, given the transaction. The other methods go to the store itself.
struct InTx<'t> {
    store: &'t IdbStore,
    tx: Tx,
}

impl Store for InTx<'_> {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        self.store.list_worlds()
    }

    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        self.store.load_world_in(Some(&self.tx), world_id, LOADING)
    }

    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        self.store.agents_in(Some(&self.tx), world_id, AGENTS_READ)
    }

    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        self.store.chats_in(Some(&self.tx), world_id)
    }

    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        self.store
            .states_in(Some(&self.tx), world_id, chat_id, STATES_READ)
    }

    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        self.store
            .last_memory_in(Some(&self.tx), world_id, chat_id, agent_id, n)
    }

    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        self.store.messages(world_id, chat_id, before, limit)
    }

    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.store.approvals_in(Some(&self.tx), world_id, chat_id)
    }

    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        self.store.dump(world_id)
    }

    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        self.store.apply(ops)
    }

    fn revision<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        self.store.revision_in(Some(&self.tx), world_id)
    }
}

/// The contexts of the read methods' errors (the export's is its own).
const FINDING: &str = "finding a message";
const LOADING: &str = "loading a world";
const AGENTS_READ: &str = "reading agents";
const STATES_READ: &str = "reading agent_states";

/// The world a `get` of its row found (`undefined`: none).
fn world_of(found: JsValue, world_id: &str) -> Result<Option<WorldData>, StoreError> {
    let row: Option<WorldRow> = row_of(found, WORLDS, &world_id.to_json())?;
    Ok(row.map(|r| r.world))
}

/// A world's agents from its agent records (`rows`, a `getAll`'s result), in first-put order.
fn agents_of(rows: JsValue, world_id: &str, ctx: &str) -> Result<Vec<Agent>, StoreError> {
    let at = in_world(world_id);
    let mut rows: Vec<AgentRow> = decode_all(array_of(rows, ctx)?, AGENTS, &at)?;
    sort_by(&mut rows, &|a, b| a.order.total_cmp(&b.order));
    let mut agents = Vec::with_capacity(rows.len());
    for r in rows {
        agents.push(r.agent);
    }
    Ok(agents)
}

/// A chat's agent states from their records (`rows`, a `getAll`'s result).
fn states_of(
    rows: JsValue,
    world_id: &str,
    chat_id: &str,
    ctx: &str,
) -> Result<Vec<AgentChatState>, StoreError> {
    let rows = array_of(rows, ctx)?;
    payloads::<StateRow>(rows, AGENT_STATES, &in_chat(world_id, chat_id))
}

/// The chat of record `row` as readers see it: with the stamp of its newest message
/// (`newest`, `undefined` for none; see `idb_schema::with_stamp`).
fn with_newest(row: ChatRow, newest: JsValue, world_id: &str) -> Result<Chat, StoreError> {
    let newest: Option<MessageRow> = match newest.is_undefined() {
        true => None,
        false => Some(decode(newest, MESSAGES, &in_chat(world_id, &row.chat_id))?),
    };
    let mut chat = row.chat;
    with_stamp(&mut chat, newest.as_ref().and_then(MessageRow::stamp));
    Ok(chat)
}
