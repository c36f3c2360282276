//! [`IdbStore`]: the [`Store`] over IndexedDB (indexed_db_futures 0.6), so that chats and
//! memories survive reloads. Runs in a page and in a dedicated worker (the factory is found
//! through `globalThis`). The schema, its version and its migrations are in
//! [`idb_schema`](super::idb_schema).
//!
//! Transaction boundaries:
//! - every read method is one `readonly` transaction over the stores it reads (`dump` one over
//!   all six, so an export is a consistent snapshot). Read transactions are dropped, not
//!   committed: indexed_db_futures aborts a dropped transaction, which discards nothing in a
//!   read-only one;
//! - [`Store::apply`] is ONE `readwrite` transaction over all six stores (over quota, a batch
//!   that only deletes is retried once without its revision put, see `apply`), in two passes. First
//!   every op is validated with reads only, against the data in the transaction plus the
//!   effects of the earlier ops of the batch: the memory store's rules (missing world or chat,
//!   duplicate message id → [`StoreError::Invalid`]). An invalid batch aborts the transaction
//!   before anything was written. Then every op is performed, and the batch ends with
//!   `commit().await`; a failure while writing (quota, disk) aborts the transaction, which
//!   rolls back the writes already made.
//! - Only IndexedDB requests are awaited while a transaction is open: awaiting anything else
//!   (a timer, fetch, a JS promise) would let the browser auto-commit it half-way.
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
//! Several tabs and workers: every world row carries `rev`, the world's revision
//! ([`Store::revision`]); an `apply` reads the revision of each world its ops name inside its
//! transaction and writes it back raised by one, so the bump commits or rolls back with the
//! batch. [`Store::lock_world`] is the Web Lock `agent-world-wasm:<database>:<worldId>`, and
//! after each commit the store posts `{worldId, what}` on the BroadcastChannel
//! `agent-world-wasm:<database>` (see [`tabs`](super::tabs)). Message and memory `seq`s are
//! found inside the write transaction (the last key of the chat's range), never cached across
//! batches, so two connections appending to one chat never collide.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use futures_util::future::{select, Either};
use indexed_db_futures::cursor::CursorDirection;
use indexed_db_futures::database::{Database, VersionChangeEvent};
use indexed_db_futures::error::{Error as IdbError, OpenDbError, UnexpectedDataError};
use indexed_db_futures::index::Index;
use indexed_db_futures::internals::SystemRepr;
use indexed_db_futures::object_store::ObjectStore;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use indexed_db_futures::KeyRange;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::idb_schema::{
    below_range, key, prefix_range, seq_key, AgentRow, ApprovalRow, ChatRow, MemoryRow, MessageRow,
    StateRow, WorldRow, AGENTS, AGENT_STATES, ALL_STORES, APPROVALS, CHATS, DB_VERSION, MEMORY,
    MESSAGES, MESSAGES_BY_ID, RECORD_VERSION, WORLDS,
};
use super::tabs::{self, ChangeChannel};
use crate::core::approval::ApprovalRecord;
use crate::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use crate::core::store::{
    AgentChatState, Cause, ChatDump, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump,
    WorldLockGuard,
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
    db: Database,
    state: Rc<Cell<ConnState>>,
    /// Change notifications to and from the other contexts of this origin.
    changes: ChangeChannel,
    // Held so the JS handlers stay alive as long as the connection; removed on drop.
    _on_versionchange: Closure<dyn FnMut(web_sys::IdbVersionChangeEvent)>,
    _on_close: Closure<dyn FnMut(web_sys::Event)>,
}

impl std::fmt::Debug for IdbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdbStore")
            .field("name", &self.name)
            .field("state", &self.state.get())
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
        let (blocked, on_blocked) = blocked_signal();
        // The upgrade steps need the version-change transaction, which only the open request
        // carries; it is filled in right after `build`, long before `upgradeneeded` fires.
        let raw_request: Rc<RefCell<Option<web_sys::IdbOpenDbRequest>>> = Rc::default();
        let on_upgrade = {
            let raw_request = raw_request.clone();
            move |event: VersionChangeEvent, db: Database| {
                let tx = raw_request.borrow().as_ref().and_then(|r| r.transaction());
                let Some(tx) = tx else {
                    let msg = "the upgrade has no version-change transaction; reload the page";
                    return Err(JsValue::from(js_sys::Error::new(msg)).into());
                };
                super::idb_schema::upgrade(&db, &tx, event.old_version(), event.new_version())
            }
        };
        let request = Database::open(db_name)
            .with_version(version)
            .with_on_blocked(on_blocked)
            .with_on_upgrade_needed(on_upgrade)
            .build()
            .map_err(|e| open_error(db_name, e))?;
        *raw_request.borrow_mut() = Some(request.as_sys().clone());
        let request = Box::pin(request);
        match select(request, blocked).await {
            Either::Left((opened, _)) => {
                let db = opened.map_err(|e| open_error(db_name, e))?;
                Self::from_connection(db_name, db)
            }
            Either::Right((_, request)) => {
                // The open request stays queued in the browser and succeeds once the other
                // connection closes; close that connection then, so nobody holds an orphan.
                wasm_bindgen_futures::spawn_local(async move {
                    if let Ok(db) = request.await {
                        db.close();
                    }
                });
                Err(StoreError::Blocked(format!(
                    "opening database {db_name:?} (version {version}) waits for a connection \
                     to an older version that does not close"
                )))
            }
        }
    }

    /// Deletes the database `db_name` and everything in it (used by tests and "delete all data").
    pub async fn delete_database(db_name: &str) -> Result<(), StoreError> {
        Database::delete_by_name(db_name)
            .map_err(|e| open_error(db_name, e))?
            .await
            .map_err(|e| map_idb_error(&format!("deleting database {db_name:?}"), e))
    }

    /// Whether the connection is still usable (not closed by `close()`, another tab's upgrade
    /// or delete, or the browser).
    pub fn is_open(&self) -> bool {
        self.state.get() == ConnState::Open
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
        if self.state.get() == ConnState::Open {
            self.state.set(ConnState::Closed);
        }
        self.raw().close();
    }

    fn from_connection(db_name: &str, db: Database) -> Result<IdbStore, StoreError> {
        let present: HashSet<String> = db.object_store_names().collect();
        if let Some(missing) = ALL_STORES.iter().find(|s| !present.contains(**s)) {
            db.close();
            return Err(StoreError::Backend(format!(
                "database {db_name:?} has no {missing:?} object store: it was not created by this \
                 app; delete it or use another database name"
            )));
        }
        let state = Rc::new(Cell::new(ConnState::Open));
        let raw: web_sys::IdbDatabase = db.as_sys().clone().unchecked_into();
        let on_versionchange = {
            let state = state.clone();
            let raw = raw.clone();
            Closure::<dyn FnMut(web_sys::IdbVersionChangeEvent)>::new(
                move |event: web_sys::IdbVersionChangeEvent| {
                    // Give way at once: the other tab's upgrade (or delete) waits for us.
                    raw.close();
                    if state.get() == ConnState::Open {
                        state.set(ConnState::VersionChanged(event.new_version()));
                    }
                },
            )
        };
        let on_close = {
            let state = state.clone();
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_event: web_sys::Event| {
                if state.get() == ConnState::Open {
                    state.set(ConnState::Lost);
                }
            })
        };
        raw.set_onversionchange(Some(on_versionchange.as_ref().unchecked_ref()));
        raw.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        Ok(IdbStore {
            name: db_name.to_string(),
            db,
            state,
            changes: ChangeChannel::open(&format!("agent-world-wasm:{db_name}")),
            _on_versionchange: on_versionchange,
            _on_close: on_close,
        })
    }

    fn raw(&self) -> &web_sys::IdbDatabase {
        self.db.as_sys()
    }

    /// The error every call returns once the connection is gone, `None` while it is open.
    fn closed_error(&self) -> Option<StoreError> {
        let name = &self.name;
        match self.state.get() {
            ConnState::Open => None,
            ConnState::Closed => Some(StoreError::Closed(format!(
                "database {name:?} is closed; open it again"
            ))),
            ConnState::VersionChanged(Some(v)) => Some(StoreError::Closed(format!(
                "another tab upgraded database {name:?} to version {v} (this app uses version \
                 {DB_VERSION}) and this connection was closed; reload the page"
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
    fn fail(&self, context: &str, e: IdbError) -> StoreError {
        self.closed_error()
            .unwrap_or_else(|| map_idb_error(context, e))
    }

    fn transaction(
        &self,
        stores: &[&str],
        mode: TransactionMode,
    ) -> Result<Transaction<'_>, StoreError> {
        self.check_open()?;
        self.db
            .transaction(stores)
            .with_mode(mode)
            .build()
            .map_err(|e| self.fail("starting a transaction", e))
    }

    fn store<'t>(
        &self,
        tx: &'t Transaction<'_>,
        name: &str,
    ) -> Result<ObjectStore<'t>, StoreError> {
        tx.object_store(name)
            .map_err(|e| self.fail(&format!("opening object store {name:?}"), e))
    }

    /// One batch, one transaction. `bump`: raise the revisions of the worlds it names (always,
    /// except for the over-quota retry of a batch that only deletes, see [`Store::apply`]).
    async fn apply_ops(&self, ops: Vec<StoreOp>, bump: bool) -> Result<(), StoreError> {
        let tx = self.transaction(&ALL_STORES, TransactionMode::Readwrite)?;
        // Kept to read the DOMException (e.g. QuotaExceededError) after a failed commit.
        let raw_tx: web_sys::IdbTransaction = tx.as_sys().clone().unchecked_into();
        let outcome = {
            let stores = Stores {
                worlds: self.store(&tx, WORLDS)?,
                agents: self.store(&tx, AGENTS)?,
                chats: self.store(&tx, CHATS)?,
                messages: self.store(&tx, MESSAGES)?,
                memory: self.store(&tx, MEMORY)?,
                states: self.store(&tx, AGENT_STATES)?,
                approvals: self.store(&tx, APPROVALS)?,
            };
            let named = named_worlds(&ops);
            write_batch(&stores, ops, &named, bump)
                .await
                .map(|()| named)
        };
        let named = match outcome {
            Ok(named) => named,
            Err(e) => {
                // Roll back whatever was written (nothing, when validation failed); the abort's
                // own result adds nothing to the error.
                let _ = tx.abort().await;
                return Err(self.closed_error().unwrap_or(e));
            }
        };
        match tx.commit().await {
            Ok(()) => {
                for (world, what) in &named {
                    self.changes.post(world, what);
                }
                Ok(())
            }
            Err(e) => Err(self.closed_error().unwrap_or_else(|| match raw_tx.error() {
                Some(dom) => store_error_from_dom_exception("committing the batch", &dom),
                None => map_idb_error("committing the batch", e),
            })),
        }
    }
}

/// Everything `apply` does inside its transaction: read the named worlds' revisions, check and
/// write the ops, raise the revisions.
async fn write_batch(
    stores: &Stores<'_>,
    ops: Vec<StoreOp>,
    named: &[(String, &'static str)],
    bump: bool,
) -> Result<(), StoreError> {
    if !bump {
        return validate_then_write(stores, ops).await;
    }
    let revs = read_revisions(&stores.worlds, named).await?;
    validate_then_write(stores, ops).await?;
    bump_revisions(&stores.worlds, &revs).await
}

/// Whether a batch only removes records (it frees space and may be retried over quota without
/// its revision put).
fn only_deletes(ops: &[StoreOp]) -> bool {
    ops.iter().all(StoreOp::only_removes)
}

/// The two passes of `apply` inside its transaction: check every op (reads only), then write.
async fn validate_then_write(stores: &Stores<'_>, ops: Vec<StoreOp>) -> Result<(), StoreError> {
    let mut validation = Validation::default();
    for op in &ops {
        validation.check(stores, op).await?;
    }
    let mut batch = Batch::default();
    for op in ops {
        batch.run(stores, op).await?;
    }
    Ok(())
}

/// The worlds a batch names, each with what the other contexts are told (`"delete"` when the
/// batch deletes it, else `"write"`), in first-named order.
fn named_worlds(ops: &[StoreOp]) -> Vec<(String, &'static str)> {
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

/// The `rev` of a raw world row (0 when absent: a world written before revisions existed).
fn row_revision(row: &JsValue) -> f64 {
    js_sys::Reflect::get(row, &JsValue::from_str("rev"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(0.0)
}

async fn get_raw(
    store: &ObjectStore<'_>,
    k: JsValue,
    context: &str,
) -> Result<Option<JsValue>, StoreError> {
    let found: Option<JsValue> = store
        .get::<JsValue, JsValue, _>(KeyRange::Only(k))
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    Ok(found.filter(|v| v.is_object()))
}

/// The revision of each named world before the batch (read in the batch's transaction).
async fn read_revisions(
    worlds: &ObjectStore<'_>,
    named: &[(String, &'static str)],
) -> Result<Vec<(String, f64)>, StoreError> {
    let mut out = Vec::with_capacity(named.len());
    for (w, _) in named {
        let row = get_raw(worlds, JsValue::from_str(w), "reading a world's revision").await?;
        out.push((w.clone(), row.as_ref().map(row_revision).unwrap_or(0.0)));
    }
    Ok(out)
}

/// Writes each surviving named world's row back with `rev` = the revision before the batch + 1
/// (a `PutWorld` of the batch wrote the row without it).
async fn bump_revisions(
    worlds: &ObjectStore<'_>,
    revs: &[(String, f64)],
) -> Result<(), StoreError> {
    let ctx = "raising a world's revision";
    for (w, before) in revs {
        let Some(row) = get_raw(worlds, JsValue::from_str(w), ctx).await? else {
            continue; // deleted by the batch
        };
        let set = |k: &str, v: f64| {
            js_sys::Reflect::set(&row, &JsValue::from_str(k), &JsValue::from_f64(v))
        };
        // A format 1 row becomes format 2 with its first revision.
        set("rev", before + 1.0)
            .and_then(|_| set("v", f64::from(RECORD_VERSION)))
            .map_err(|_| StoreError::Corrupted(format!("world record {w:?} is not an object")))?;
        worlds
            .put(row)
            .primitive()
            .map_err(|e| map_idb_error(ctx, e))?
            .await
            .map_err(|e| map_idb_error(ctx, e))?;
    }
    Ok(())
}

impl Drop for IdbStore {
    fn drop(&mut self) {
        let raw = self.raw();
        raw.set_onversionchange(None);
        raw.set_onclose(None);
        raw.close();
    }
}

/// A future that resolves when the open request reports `blocked`, and the handler for it.
fn blocked_signal() -> (
    wasm_bindgen_futures::JsFuture,
    impl FnOnce(VersionChangeEvent) -> Result<(), IdbError> + 'static,
) {
    let mut resolve: Option<js_sys::Function> = None;
    let promise = js_sys::Promise::new(&mut |res, _rej| resolve = Some(res));
    let handler = move |_event: VersionChangeEvent| {
        if let Some(resolve) = resolve {
            // Resolving a promise cannot meaningfully fail; nothing to report if it did.
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
        Ok(())
    };
    (wasm_bindgen_futures::JsFuture::from(promise), handler)
}

/// The object stores of an `apply` transaction.
struct Stores<'t> {
    worlds: ObjectStore<'t>,
    agents: ObjectStore<'t>,
    chats: ObjectStore<'t>,
    messages: ObjectStore<'t>,
    memory: ObjectStore<'t>,
    states: ObjectStore<'t>,
    approvals: ObjectStore<'t>,
}

/// The write pass of one `apply` (runs only after [`Validation`] accepted the whole batch).
/// Caches the next sequence numbers so a long batch asks the database once per chat.
#[derive(Default)]
struct Batch {
    /// Next `seq` per message key prefix `[world, chat]`.
    message_seq: HashMap<(String, String), f64>,
    /// Next `seq` per memory key prefix `[world, chat, agent]`.
    memory_seq: HashMap<(String, String, String), f64>,
}

impl Batch {
    async fn run(&mut self, s: &Stores<'_>, op: StoreOp) -> Result<(), StoreError> {
        match op {
            StoreOp::PutWorld(world) => {
                // `rev` is written by `bump_revisions` at the end of the batch.
                let row = WorldRow {
                    v: RECORD_VERSION,
                    world_id: world.id.clone(),
                    world,
                    rev: 0.0,
                };
                put(&s.worlds, &row, "writing a world").await?;
            }
            StoreOp::DeleteWorld { world_id } => {
                let w = world_id.as_str();
                let ctx = "deleting a world";
                delete(&s.worlds, KeyRange::Only(JsValue::from_str(w)), ctx).await?;
                for store in [
                    &s.agents,
                    &s.chats,
                    &s.messages,
                    &s.memory,
                    &s.states,
                    &s.approvals,
                ] {
                    delete(store, prefix_range(&[w]), ctx).await?;
                }
            }
            StoreOp::PutAgent { world_id, agent } => {
                let k: JsValue = key(&[&world_id, &agent.id]).into();
                let existing: Option<AgentRow> =
                    get_row(&s.agents, &k, AGENTS, "reading an agent").await?;
                let order = match existing {
                    Some(row) => row.order,
                    None => next_agent_order(&s.agents, &world_id).await?,
                };
                let row = AgentRow {
                    v: RECORD_VERSION,
                    world_id,
                    agent_id: agent.id.clone(),
                    order,
                    agent,
                };
                put(&s.agents, &row, "writing an agent").await?;
            }
            StoreOp::DeleteAgent { world_id, agent_id } => {
                let (w, a) = (world_id.as_str(), agent_id.as_str());
                let ctx = "deleting an agent";
                delete(&s.agents, KeyRange::Only(key(&[w, a]).into()), ctx).await?;
                // Memory and states are keyed by chat first: visit the world's chats.
                for chat_key in get_all_keys(&s.chats, prefix_range(&[w]), ctx).await? {
                    let Some(c) = key_part(&chat_key, 1) else {
                        return Err(StoreError::Corrupted(format!(
                            "unreadable chats key {} in world {w:?}; delete the world",
                            describe(&chat_key)
                        )));
                    };
                    delete(&s.memory, prefix_range(&[w, &c, a]), ctx).await?;
                    delete(&s.states, KeyRange::Only(key(&[w, &c, a]).into()), ctx).await?;
                }
                // Approvals are keyed by chat and id: read the world's, delete the agent's.
                let rows = get_all(&s.approvals, prefix_range(&[w]), ctx).await?;
                let at = format!("in world {w:?}");
                for row in decode_all::<ApprovalRow>(rows, APPROVALS, &at)? {
                    if row.approval.agent_id == a {
                        let k = key(&[w, &row.chat_id, &row.approval_id]);
                        delete(&s.approvals, KeyRange::Only(k.into()), ctx).await?;
                    }
                }
            }
            StoreOp::PutChat(chat) => {
                let row = ChatRow {
                    v: RECORD_VERSION,
                    world_id: chat.world_id.clone(),
                    chat_id: chat.id.clone(),
                    chat,
                };
                put(&s.chats, &row, "writing a chat").await?;
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let ctx = "deleting a chat";
                delete(&s.chats, KeyRange::Only(key(&[w, c]).into()), ctx).await?;
                for store in [&s.messages, &s.memory, &s.states, &s.approvals] {
                    delete(store, prefix_range(&[w, c]), ctx).await?;
                }
            }
            StoreOp::AppendMessage {
                world_id,
                chat_id,
                message,
            } => {
                let prefix = (world_id.clone(), chat_id.clone());
                let seq = match self.message_seq.get(&prefix) {
                    Some(seq) => *seq,
                    None => next_seq(&s.messages, &[&world_id, &chat_id], MESSAGES).await?,
                };
                self.message_seq.insert(prefix, seq + 1.0);
                let row = MessageRow {
                    v: RECORD_VERSION,
                    world_id,
                    chat_id,
                    seq,
                    message_id: message.message_id.clone(),
                    message,
                };
                add(&s.messages, &row, "appending a message").await?;
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                entry,
            } => {
                let prefix = (world_id.clone(), chat_id.clone(), agent_id.clone());
                let seq = match self.memory_seq.get(&prefix) {
                    Some(seq) => *seq,
                    None => next_seq(&s.memory, &[&world_id, &chat_id, &agent_id], MEMORY).await?,
                };
                self.memory_seq.insert(prefix, seq + 1.0);
                let row = MemoryRow {
                    v: RECORD_VERSION,
                    world_id,
                    chat_id,
                    agent_id,
                    seq,
                    entry,
                };
                add(&s.memory, &row, "appending a memory entry").await?;
            }
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                let ctx = "deleting messages";
                let by_id = s
                    .messages
                    .index(MESSAGES_BY_ID)
                    .map_err(|e| map_idb_error("opening the message-id index", e))?;
                for id in &message_ids {
                    let id_key: JsValue = key(&[w, c, id]).into();
                    if let Some(pk) = get_index_key(&by_id, id_key, ctx).await? {
                        delete(&s.messages, KeyRange::Only(pk), ctx).await?;
                    }
                }
                // Memory is keyed by agent then seq: one read of the chat's entries finds the
                // ones that came from these messages (editing is rare; appends stay O(1)).
                let doomed: HashSet<&str> = message_ids.iter().map(String::as_str).collect();
                for js in get_all(&s.memory, prefix_range(&[w, c]), ctx).await? {
                    let row: MemoryRow = decode(js, MEMORY, &format!("chat {c:?}"))?;
                    if doomed.contains(row.entry.message_id.as_str()) {
                        let k = seq_key(&[w, c, &row.agent_id], row.seq);
                        delete(&s.memory, KeyRange::Only(k), ctx).await?;
                    }
                }
            }
            StoreOp::ReplaceMessage {
                world_id,
                chat_id,
                old_message_id,
                message,
            } => {
                let ctx = "replacing a message";
                let by_id = s
                    .messages
                    .index(MESSAGES_BY_ID)
                    .map_err(|e| map_idb_error("opening the message-id index", e))?;
                let id_key: JsValue = key(&[&world_id, &chat_id, &old_message_id]).into();
                let old = match get_index_key(&by_id, id_key, ctx).await? {
                    Some(pk) => get_row::<MessageRow>(&s.messages, &pk, MESSAGES, ctx).await?,
                    None => None,
                };
                let Some(old) = old else {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                };
                // Same primary key (the old `seq`): the new message has the old one's place.
                let row = MessageRow {
                    v: RECORD_VERSION,
                    world_id,
                    chat_id,
                    seq: old.seq,
                    message_id: message.message_id.clone(),
                    message,
                };
                put(&s.messages, &row, ctx).await?;
            }
            StoreOp::ClearMemory {
                world_id,
                chat_id,
                agent_id,
            } => {
                let range = prefix_range(&[&world_id, &chat_id, &agent_id]);
                delete(&s.memory, range, "clearing memory").await?;
            }
            StoreOp::PutAgentState {
                world_id,
                chat_id,
                state,
            } => {
                let row = StateRow {
                    v: RECORD_VERSION,
                    world_id,
                    chat_id,
                    agent_id: state.agent_id.clone(),
                    state,
                };
                put(&s.states, &row, "writing an agent state").await?;
            }
            StoreOp::PutApproval(approval) => {
                // Validation refused a record without a chat id.
                let chat_id = approval.chat_id.clone().unwrap_or_default();
                let row = ApprovalRow {
                    v: RECORD_VERSION,
                    world_id: approval.world_id.clone(),
                    chat_id,
                    approval_id: approval.approval_id.clone(),
                    approval: *approval,
                };
                put(&s.approvals, &row, "writing an approval").await?;
            }
            StoreOp::DeleteApproval {
                world_id,
                chat_id,
                approval_id,
            } => {
                let k = key(&[&world_id, &chat_id, &approval_id]);
                delete(
                    &s.approvals,
                    KeyRange::Only(k.into()),
                    "deleting an approval",
                )
                .await?;
            }
        }
        Ok(())
    }
}

/// The check pass of one `apply`: every op against the data as it stands in the transaction
/// plus the effects of the earlier ops of the batch, with reads only (the rules of the memory
/// store). Nothing is written until the whole batch passes, so an invalid batch leaves the
/// database untouched even before the transaction is aborted.
#[derive(Default)]
struct Validation {
    /// Whether a world exists, from a lookup or an earlier op of the batch.
    worlds: HashMap<String, bool>,
    /// Whether a chat exists, likewise.
    chats: HashMap<(String, String), bool>,
    /// Worlds deleted earlier in the batch: their stored chats and messages are gone.
    cleared_worlds: HashSet<String>,
    /// Chats deleted earlier in the batch: their stored messages are gone.
    cleared_chats: HashSet<(String, String)>,
    /// Message ids appended earlier in the batch (and not deleted since).
    new_ids: HashSet<(String, String, String)>,
    /// Stored message ids deleted or replaced earlier in the batch.
    removed_ids: HashSet<(String, String, String)>,
}

impl Validation {
    async fn check(&mut self, s: &Stores<'_>, op: &StoreOp) -> Result<(), StoreError> {
        match op {
            StoreOp::PutWorld(w) => {
                self.worlds.insert(w.id.clone(), true);
            }
            StoreOp::DeleteWorld { world_id } => {
                self.worlds.insert(world_id.clone(), false);
                self.cleared_worlds.insert(world_id.clone());
                self.chats.retain(|(w, _), _| w != world_id);
                self.new_ids.retain(|(w, _, _)| w != world_id);
            }
            StoreOp::PutAgent { world_id, .. } | StoreOp::DeleteAgent { world_id, .. } => {
                self.require_world(s, world_id).await?;
            }
            StoreOp::PutChat(c) => {
                self.require_world(s, &c.world_id).await?;
                self.chats.insert((c.world_id.clone(), c.id.clone()), true);
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                let pair = (world_id.clone(), chat_id.clone());
                self.chats.insert(pair.clone(), false);
                self.new_ids
                    .retain(|(w, c, _)| (w, c) != (&pair.0, &pair.1));
                self.cleared_chats.insert(pair);
            }
            StoreOp::ClearMemory { .. } | StoreOp::DeleteApproval { .. } => {}
            StoreOp::PutApproval(a) => {
                let Some(chat_id) = &a.chat_id else {
                    return Err(StoreError::Invalid(format!(
                        "approval {:?} has no chat id",
                        a.approval_id
                    )));
                };
                self.require_chat(s, &a.world_id, chat_id).await?;
            }
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                self.require_chat(s, world_id, chat_id).await?;
                for m in message_ids {
                    let id = (world_id.clone(), chat_id.clone(), m.clone());
                    self.new_ids.remove(&id);
                    self.removed_ids.insert(id);
                }
            }
            StoreOp::ReplaceMessage {
                world_id,
                chat_id,
                old_message_id,
                message,
            } => {
                self.require_chat(s, world_id, chat_id).await?;
                let old = (world_id.clone(), chat_id.clone(), old_message_id.clone());
                if !self.has_message(s, &old).await? {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                }
                let new = (
                    world_id.clone(),
                    chat_id.clone(),
                    message.message_id.clone(),
                );
                if new != old && self.has_message(s, &new).await? {
                    return Err(StoreError::Invalid(format!(
                        "message {:?} already exists in chat {chat_id:?}",
                        message.message_id
                    )));
                }
                self.new_ids.remove(&old);
                self.removed_ids.insert(old);
                self.removed_ids.remove(&new);
                self.new_ids.insert(new);
            }
            StoreOp::AppendMessage {
                world_id,
                chat_id,
                message,
            } => {
                self.require_chat(s, world_id, chat_id).await?;
                let id = (
                    world_id.clone(),
                    chat_id.clone(),
                    message.message_id.clone(),
                );
                let duplicate = self.has_message(s, &id).await?;
                if duplicate {
                    return Err(StoreError::Invalid(format!(
                        "message {:?} already exists in chat {chat_id:?}",
                        message.message_id
                    )));
                }
                self.new_ids.insert(id);
            }
            StoreOp::AppendMemory {
                world_id, chat_id, ..
            }
            | StoreOp::PutAgentState {
                world_id, chat_id, ..
            } => {
                self.require_chat(s, world_id, chat_id).await?;
            }
        }
        Ok(())
    }

    /// Whether the chat holds message `id` at this point of the batch: appended earlier in it,
    /// or stored and not deleted, replaced or wiped (world or chat deleted) by it.
    async fn has_message(
        &self,
        s: &Stores<'_>,
        id: &(String, String, String),
    ) -> Result<bool, StoreError> {
        if self.new_ids.contains(id) {
            return Ok(true);
        }
        let pair = (id.0.clone(), id.1.clone());
        if self.cleared_worlds.contains(&id.0)
            || self.cleared_chats.contains(&pair)
            || self.removed_ids.contains(id)
        {
            return Ok(false);
        }
        self.stored_message(s, id).await
    }

    async fn require_world(&mut self, s: &Stores<'_>, w: &str) -> Result<(), StoreError> {
        let live = match self.worlds.get(w) {
            Some(live) => *live,
            None => {
                let found = get_key(&s.worlds, JsValue::from_str(w), "checking a world").await?;
                self.worlds.insert(w.to_string(), found.is_some());
                found.is_some()
            }
        };
        if live {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!("world {w:?} does not exist")))
        }
    }

    async fn require_chat(&mut self, s: &Stores<'_>, w: &str, c: &str) -> Result<(), StoreError> {
        let pair = (w.to_string(), c.to_string());
        let live = match self.chats.get(&pair) {
            Some(live) => *live,
            // The world was deleted earlier in the batch and the chat not put again.
            None if self.cleared_worlds.contains(w) => false,
            None => {
                let found = get_key(&s.chats, key(&[w, c]).into(), "checking a chat").await?;
                self.chats.insert(pair, found.is_some());
                found.is_some()
            }
        };
        if live {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!(
                "chat {c:?} does not exist in world {w:?}"
            )))
        }
    }

    async fn stored_message(
        &self,
        s: &Stores<'_>,
        (w, c, id): &(String, String, String),
    ) -> Result<bool, StoreError> {
        let by_id = s
            .messages
            .index(MESSAGES_BY_ID)
            .map_err(|e| map_idb_error("opening the message-id index", e))?;
        let id_key: JsValue = key(&[w, c, id]).into();
        let found = get_index_key(&by_id, id_key, "checking a message id").await?;
        Ok(found.is_some())
    }
}

// ---- request helpers: each awaits exactly one IndexedDB request (or a cursor walk) ----

/// A row as the plain object IndexedDB stores, by way of JSON text (`JSON.parse`): the row
/// types share their one `Serialize` instance with the export and the adapter store.
fn encode<T: Serialize>(row: &T, context: &str) -> Result<JsValue, StoreError> {
    let fail =
        |e: String| StoreError::Backend(format!("{context}: could not encode the record: {e}"));
    let text = serde_json::to_string(row).map_err(|e| fail(e.to_string()))?;
    js_sys::JSON::parse(&text)
        .map_err(|e| fail(crate::web::js_tools::message_of(&e, "JSON.parse failed")))
}

async fn put<T: Serialize>(
    store: &ObjectStore<'_>,
    row: &T,
    context: &str,
) -> Result<(), StoreError> {
    let value = encode(row, context)?;
    store
        .put(value)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))
}

async fn add<T: Serialize>(
    store: &ObjectStore<'_>,
    row: &T,
    context: &str,
) -> Result<(), StoreError> {
    let value = encode(row, context)?;
    store
        .add(value)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))
}

async fn delete(
    store: &ObjectStore<'_>,
    range: KeyRange<JsValue>,
    context: &str,
) -> Result<(), StoreError> {
    store
        .delete::<JsValue, _>(range)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))
}

async fn get_key(
    store: &ObjectStore<'_>,
    k: JsValue,
    context: &str,
) -> Result<Option<JsValue>, StoreError> {
    store
        .get_key::<JsValue, _>(KeyRange::Only(k))
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))
}

async fn get_index_key(
    index: &Index<'_>,
    k: JsValue,
    context: &str,
) -> Result<Option<JsValue>, StoreError> {
    index
        .get_key::<JsValue, _>(KeyRange::Only(k))
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))
}

async fn get_row<T: DeserializeOwned>(
    store: &ObjectStore<'_>,
    k: &JsValue,
    store_name: &str,
    context: &str,
) -> Result<Option<T>, StoreError> {
    let found: Option<JsValue> = store
        .get::<JsValue, JsValue, _>(KeyRange::Only(k.clone()))
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    match found {
        Some(js) if !js.is_undefined() => decode(js, store_name, &describe(k)).map(Some),
        _ => Ok(None),
    }
}

async fn get_all(
    store: &ObjectStore<'_>,
    range: KeyRange<JsValue>,
    context: &str,
) -> Result<Vec<JsValue>, StoreError> {
    let found = store
        .get_all::<JsValue>()
        .with_query::<JsValue, _>(range)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    found
        .collect::<Result<Vec<JsValue>, _>>()
        .map_err(|e| map_idb_error(context, e))
}

async fn get_all_keys(
    store: &ObjectStore<'_>,
    range: KeyRange<JsValue>,
    context: &str,
) -> Result<Vec<JsValue>, StoreError> {
    let found = store
        .get_all_keys::<JsValue>()
        .with_query::<JsValue, _>(range)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    found
        .collect::<Result<Vec<JsValue>, _>>()
        .map_err(|e| map_idb_error(context, e))
}

/// The last `n` records of `range` in key order (oldest first), read by a reverse cursor that
/// stops after `n` records: never the whole range.
async fn last_n(
    store: &ObjectStore<'_>,
    range: KeyRange<JsValue>,
    n: usize,
    context: &str,
) -> Result<Vec<JsValue>, StoreError> {
    let mut out = Vec::new();
    if n == 0 {
        return Ok(out);
    }
    let cursor = store
        .open_cursor()
        .with_query::<JsValue, _>(range)
        .with_direction(CursorDirection::Prev)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    if let Some(mut cursor) = cursor {
        while out.len() < n {
            match cursor
                .next_record::<JsValue>()
                .await
                .map_err(|e| map_idb_error(context, e))?
            {
                Some(value) => out.push(value),
                None => break,
            }
        }
    }
    out.reverse();
    Ok(out)
}

/// The `seq` after the largest one under `parts` (1 for an empty range), from one step of a
/// reverse key cursor.
async fn next_seq(store: &ObjectStore<'_>, parts: &[&str], name: &str) -> Result<f64, StoreError> {
    let context = "finding the next sequence number";
    let cursor = store
        .open_key_cursor()
        .with_query::<JsValue, _>(prefix_range(parts))
        .with_direction(CursorDirection::Prev)
        .primitive()
        .map_err(|e| map_idb_error(context, e))?
        .await
        .map_err(|e| map_idb_error(context, e))?;
    let Some(mut cursor) = cursor else {
        return Ok(1.0);
    };
    let last: Option<JsValue> = cursor
        .next_key::<JsValue>()
        .await
        .map_err(|e| map_idb_error(context, e))?;
    let Some(last) = last else {
        return Ok(1.0);
    };
    let seq = js_sys::Array::from(&last)
        .get(parts.len() as u32)
        .as_f64()
        .filter(|s| s.is_finite());
    match seq {
        Some(seq) => Ok(seq + 1.0),
        None => Err(StoreError::Corrupted(format!(
            "unreadable {name} key {}: no sequence number; delete the chat",
            describe(&last)
        ))),
    }
}

/// The position after the last agent of the world (first-put order).
async fn next_agent_order(agents: &ObjectStore<'_>, world_id: &str) -> Result<f64, StoreError> {
    let rows = get_all(agents, prefix_range(&[world_id]), "reading agents").await?;
    let mut next = 0.0_f64;
    for js in rows {
        let row: AgentRow = decode(js, AGENTS, &format!("in world {world_id:?}"))?;
        next = next.max(row.order + 1.0);
    }
    Ok(next)
}

/// Part `i` of a compound key, if it is a string.
fn key_part(k: &JsValue, i: u32) -> Option<String> {
    if !js_sys::Array::is_array(k) {
        return None;
    }
    js_sys::Array::from(k).get(i).as_string()
}

/// A key or value as short JSON for error messages.
fn describe(value: &JsValue) -> String {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "(unprintable)".to_string())
}

/// Decodes a record, checking its format version first. `at` says which record it is.
fn decode<T: DeserializeOwned>(js: JsValue, store: &str, at: &str) -> Result<T, StoreError> {
    let version = if js.is_object() {
        js_sys::Reflect::get(&js, &JsValue::from_str("v"))
            .ok()
            .and_then(|v| v.as_f64())
    } else {
        None
    };
    match version {
        None => {
            return Err(StoreError::Corrupted(format!(
                "unreadable {store} record {at}: it has no format version (corrupted or written \
                 by another program); delete it or clear this site's data"
            )))
        }
        Some(v) if v > f64::from(RECORD_VERSION) => {
            return Err(StoreError::Version(format!(
                "{store} record {at} has format version {}, newer than this app's \
                 {RECORD_VERSION}",
                // As JavaScript prints the number, without Rust's float printing.
                describe(&JsValue::from_f64(v))
            )));
        }
        Some(_) => {}
    }
    // Read as JSON text (`JSON.stringify`), then as a serde_json value: the row types share
    // their one `Deserialize` instance with the adapter store and the import.
    let unreadable = |e: String| {
        StoreError::Corrupted(format!(
            "unreadable {store} record {at}: {e}; delete it or clear this site's data"
        ))
    };
    let text = js_sys::JSON::stringify(&js)
        .map_err(|e| {
            unreadable(crate::web::js_tools::message_of(
                &e,
                "JSON.stringify failed",
            ))
        })?
        .as_string()
        .ok_or_else(|| unreadable("it is not JSON".to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
    serde_json::from_value(value).map_err(|e| unreadable(e.to_string()))
}

fn decode_all<T: DeserializeOwned>(
    rows: Vec<JsValue>,
    store: &str,
    at: &str,
) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(|js| decode(js, store, at)).collect()
}

// ---- error mapping ----

/// Maps a DOMException by name.
fn map_dom_error(context: &str, name: &str, message: &str) -> StoreError {
    match name {
        "QuotaExceededError" => StoreError::QuotaExceeded(format!("{context}: {message}")),
        "VersionError" => StoreError::Version(format!(
            "{context}: the database was created by a newer version of this app ({message})"
        )),
        "AbortError" => StoreError::Aborted(format!(
            "{context}: the transaction was aborted and nothing was written ({message}); retry"
        )),
        "ConstraintError" => StoreError::Invalid(format!(
            "{context}: a record with this key already exists ({message})"
        )),
        "InvalidStateError" => StoreError::Closed(format!(
            "{context}: the database connection is closed ({message}); open the store again"
        )),
        _ => StoreError::Backend(format!("{context}: {name}: {message}")),
    }
}

/// Maps a DOMException thrown by IndexedDB (here or in a JS-supplied store) to a
/// [`StoreError`] by its `name` (see `map_dom_error`), with the exception attached as the
/// error's cause. `context` says what was being done ("committing the batch").
pub fn store_error_from_dom_exception(context: &str, e: &web_sys::DomException) -> StoreError {
    // Some browsers give quota errors an empty message: the name then says what happened.
    let (name, message) = (e.name(), e.message());
    let message = if message.is_empty() {
        name.clone()
    } else {
        message
    };
    map_dom_error(context, &name, &message).with_cause(Cause::new(JsValue::from(e.clone())))
}

fn map_idb_error(context: &str, e: IdbError) -> StoreError {
    match e {
        IdbError::DomException(dom) => {
            let dom: web_sys::DomException = dom.into();
            store_error_from_dom_exception(context, &dom)
        }
        IdbError::MissingData(UnexpectedDataError::TransactionAborted) => StoreError::Aborted(
            format!("{context}: the transaction was aborted and nothing was written; retry"),
        ),
        other => StoreError::Backend(format!("{context}: {other}")),
    }
}

fn open_error(db_name: &str, e: OpenDbError) -> StoreError {
    let context = format!("opening database {db_name:?}");
    match e {
        OpenDbError::NullFactory | OpenDbError::UnsupportedEnvironment => {
            StoreError::Backend(format!(
                "{context}: indexeddb is not available here; use the memory store or a js store \
                 adapter"
            ))
        }
        OpenDbError::VersionZero => StoreError::Version(format!("{context}: version 0 is invalid")),
        OpenDbError::Base(e) => map_idb_error(&context, e),
    }
}

// ---- the Store impl ----

impl Store for IdbStore {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[WORLDS], TransactionMode::Readonly)?;
            let worlds = self.store(&tx, WORLDS)?;
            let all = KeyRange::LowerBound(JsValue::from_str(""), false);
            let rows = get_all(&worlds, all, "listing worlds").await?;
            let rows: Vec<WorldRow> = decode_all(rows, WORLDS, "(listing worlds)")?;
            Ok(rows.into_iter().map(|r| r.world).collect())
        })
    }

    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[WORLDS], TransactionMode::Readonly)?;
            let worlds = self.store(&tx, WORLDS)?;
            let k = JsValue::from_str(world_id);
            let row: Option<WorldRow> = get_row(&worlds, &k, WORLDS, "loading a world").await?;
            Ok(row.map(|r| r.world))
        })
    }

    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[AGENTS], TransactionMode::Readonly)?;
            let agents = self.store(&tx, AGENTS)?;
            let rows = get_all(&agents, prefix_range(&[world_id]), "reading agents").await?;
            let mut rows: Vec<AgentRow> =
                decode_all(rows, AGENTS, &format!("in world {world_id:?}"))?;
            rows.sort_by(|a, b| a.order.total_cmp(&b.order));
            Ok(rows.into_iter().map(|r| r.agent).collect())
        })
    }

    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[CHATS], TransactionMode::Readonly)?;
            let chats = self.store(&tx, CHATS)?;
            let rows = get_all(&chats, prefix_range(&[world_id]), "reading chats").await?;
            let rows: Vec<ChatRow> = decode_all(rows, CHATS, &format!("in world {world_id:?}"))?;
            Ok(rows.into_iter().map(|r| r.chat).collect())
        })
    }

    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[AGENT_STATES], TransactionMode::Readonly)?;
            let states = self.store(&tx, AGENT_STATES)?;
            let range = prefix_range(&[world_id, chat_id]);
            let rows = get_all(&states, range, "reading agent states").await?;
            let at = format!("in chat {chat_id:?} of world {world_id:?}");
            let rows: Vec<StateRow> = decode_all(rows, AGENT_STATES, &at)?;
            Ok(rows.into_iter().map(|r| r.state).collect())
        })
    }

    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[APPROVALS], TransactionMode::Readonly)?;
            let store = self.store(&tx, APPROVALS)?;
            let range = prefix_range(&[world_id, chat_id]);
            let rows = get_all(&store, range, "reading approvals").await?;
            let at = format!("in chat {chat_id:?} of world {world_id:?}");
            let rows: Vec<ApprovalRow> = decode_all(rows, APPROVALS, &at)?;
            let mut v: Vec<ApprovalRecord> = rows.into_iter().map(|r| r.approval).collect();
            v.sort_by(|a, b| (a.created_at, &a.approval_id).cmp(&(b.created_at, &b.approval_id)));
            Ok(v)
        })
    }

    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[MEMORY], TransactionMode::Readonly)?;
            let memory = self.store(&tx, MEMORY)?;
            let range = prefix_range(&[world_id, chat_id, agent_id]);
            let rows = last_n(&memory, range, n, "reading memory").await?;
            let at = format!("of agent {agent_id:?} in chat {chat_id:?} of world {world_id:?}");
            let rows: Vec<MemoryRow> = decode_all(rows, MEMORY, &at)?;
            Ok(rows.into_iter().map(|r| r.entry).collect())
        })
    }

    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[MESSAGES], TransactionMode::Readonly)?;
            let messages = self.store(&tx, MESSAGES)?;
            if limit == 0 {
                return Ok(Vec::new());
            }
            let parts = [world_id, chat_id];
            let range = match before {
                None => prefix_range(&parts),
                Some(id) => {
                    let by_id = messages
                        .index(MESSAGES_BY_ID)
                        .map_err(|e| self.fail("opening the message-id index", e))?;
                    let id_key: JsValue = key(&[world_id, chat_id, id]).into();
                    let Some(primary) = get_index_key(&by_id, id_key, "finding a message").await?
                    else {
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
            let at = format!("in chat {chat_id:?} of world {world_id:?}");
            let rows: Vec<MessageRow> = decode_all(rows, MESSAGES, &at)?;
            Ok(rows.into_iter().map(|r| r.message).collect())
        })
    }

    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&ALL_STORES, TransactionMode::Readonly)?;
            let ctx = "exporting a world";
            let k = JsValue::from_str(world_id);
            let world: Option<WorldRow> =
                get_row(&self.store(&tx, WORLDS)?, &k, WORLDS, ctx).await?;
            let in_world = format!("in world {world_id:?}");
            let rows = get_all(&self.store(&tx, AGENTS)?, prefix_range(&[world_id]), ctx).await?;
            let mut agents: Vec<AgentRow> = decode_all(rows, AGENTS, &in_world)?;
            agents.sort_by(|a, b| a.order.total_cmp(&b.order));
            let rows = get_all(&self.store(&tx, CHATS)?, prefix_range(&[world_id]), ctx).await?;
            let chat_rows: Vec<ChatRow> = decode_all(rows, CHATS, &in_world)?;
            let (messages, memory, states) = (
                self.store(&tx, MESSAGES)?,
                self.store(&tx, MEMORY)?,
                self.store(&tx, AGENT_STATES)?,
            );
            let mut chats = Vec::with_capacity(chat_rows.len());
            for row in chat_rows {
                let parts = [world_id, row.chat_id.as_str()];
                let at = format!("in chat {:?} of world {world_id:?}", row.chat_id);
                let rows = get_all(&messages, prefix_range(&parts), ctx).await?;
                let msgs: Vec<MessageRow> = decode_all(rows, MESSAGES, &at)?;
                // Key order is agent id, then seq: group consecutive runs by agent.
                let rows = get_all(&memory, prefix_range(&parts), ctx).await?;
                let mut memories: Vec<(String, Vec<MemoryEntry>)> = Vec::new();
                for m in decode_all::<MemoryRow>(rows, MEMORY, &at)? {
                    match memories.last_mut() {
                        Some((agent, entries)) if *agent == m.agent_id => entries.push(m.entry),
                        _ => memories.push((m.agent_id, vec![m.entry])),
                    }
                }
                let rows = get_all(&states, prefix_range(&parts), ctx).await?;
                let st: Vec<StateRow> = decode_all(rows, AGENT_STATES, &at)?;
                chats.push(ChatDump {
                    chat: Some(row.chat),
                    messages: msgs.into_iter().map(|m| m.message).collect(),
                    memories,
                    states: st.into_iter().map(|s| s.state).collect(),
                });
            }
            Ok(WorldDump {
                world: world.map(|w| w.world),
                agents: agents.into_iter().map(|a| a.agent).collect(),
                chats,
            })
        })
    }

    /// Over quota, the browser refuses every transaction that puts a record, and raising the
    /// revision is a put: a batch that only deletes (the way to free space) is then retried
    /// without it, so deleting works when the origin is full. The revision does not move for
    /// that batch: the engine re-reads it (`World::persist_freeing`), and another tab with the
    /// world open notices the deletes at the next write that raises it. Until then its view
    /// may be stale; over quota its writes fail anyway (each puts a record), and once there is
    /// room, one of its writes made before any other could still act on that view (an append
    /// to a deleted chat is refused as invalid; reopening the world in that tab reloads it).
    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            if !only_deletes(&ops) {
                return self.apply_ops(ops, true).await;
            }
            match self.apply_ops(ops.clone(), true).await {
                Err(e) if e.reason() == "quota_exceeded" => self.apply_ops(ops, false).await,
                r => r,
            }
        })
    }

    fn revision<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move {
            let tx = self.transaction(&[WORLDS], TransactionMode::Readonly)?;
            let worlds = self.store(&tx, WORLDS)?;
            let row = get_raw(&worlds, JsValue::from_str(world_id), "reading a revision").await?;
            // `rev` is a whole number below 2^53 (one per write), so the cast is exact.
            Ok(Some(row.as_ref().map(row_revision).unwrap_or(0.0) as u64))
        })
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
