//! The requests of [`IdbStore`](super::idb_store::IdbStore): the snippet that issues a
//! transaction's queued requests in one call (`awwIdbRun`, see `idb_write::Stores`), and
//! helpers that issue one IndexedDB request (or walk a cursor) when called and return a
//! concrete future of its outcome ([`Outcome`], [`Rows`]), with a
//! plain function that reads a result (`row_of`, `array_of`, `seq_after`, `some_key`), so
//! that an `async fn` awaiting several kinds of request holds one small state per await, not
//! an async helper's state machine each; rows are encoded to and decoded from
//! the plain objects IndexedDB stores (checking each record's format version), and the one
//! awaiting primitive, [`Pending`], with the transaction wrapper [`Tx`] (aborted when dropped
//! before its commit). Why only IndexedDB requests are awaited inside a transaction, and how:
//! see the [`idb_store`](super::idb_store) module docs. Its JS snippet also holds the Web Lock
//! request and the change channel of [`tabs`](super::tabs) (one snippet file for the store).

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbObjectStore, IdbRequest, IdbTransaction};

use super::idb_error::map_js_error;
use super::idb_schema::{AgentRow, KeyRange, AGENTS, RECORD_VERSION};
use crate::core::json::FromJson;
use crate::core::store::StoreError;

// ---- request helpers: each awaits (or only issues) one IndexedDB request or cursor walk ----

/// The kinds of request [`req`] issues (their order is `awwIdbOps`'s, in the JS snippet).
#[derive(Clone, Copy)]
pub(super) enum Op {
    GetAll,
    /// A transaction's `objectStore(name)`.
    ObjectStore,
    /// A connection's `transaction(names, mode)`: `b` true for `readwrite`.
    Transaction,
    /// A transaction's `abort()`.
    Abort,
    /// The factory's `deleteDatabase(name)`.
    DeleteDatabase,
    /// A `DOMStringList`'s `contains(name)`.
    Contains,
}

/// Issues request `op` on `target` (an object store) with `a`: the query. Most requests are
/// issued in bulk instead, as plain data (see `idb_write::Stores`).
pub(super) fn req(target: &JsValue, op: Op, a: &JsValue) -> Result<IdbRequest, JsValue> {
    call(target, op, a, &JsValue::UNDEFINED).map(JsCast::unchecked_into)
}

/// Calls IndexedDB method `op` of `target` with `a` and `b` (see [`Op`]): every IndexedDB
/// call of this store, the transactions and object stores of the send path included, goes
/// through the one imported function (one JS shim, not a web-sys import each). Throws what
/// the method throws.
pub(super) fn call(target: &JsValue, op: Op, a: &JsValue, b: &JsValue) -> Result<JsValue, JsValue> {
    idb_req(target, op as u32, a, b)
}

/// Property `name` of `target` (`undefined` when reading it throws): an IndexedDB object's
/// attribute (a cursor's `key` or `value`, a transaction's `error`), read without a web-sys
/// import each.
pub(super) fn prop(target: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(target, &JsValue::from_str(name)).unwrap_or_default()
}

/// A key (or `None`) from a `getKey` request.
pub(super) fn some_key(found: JsValue) -> Option<JsValue> {
    Some(found).filter(|k| !k.is_undefined())
}

/// The row a `get` request of key `k` (as JSON text) found (`None`: no record).
pub(super) fn row_of<T: FromJson>(
    found: JsValue,
    store_name: &str,
    k: &str,
) -> Result<Option<T>, StoreError> {
    if found.is_undefined() {
        return Ok(None);
    }
    decode(found, store_name, k).map(Some)
}

/// The records of `range`, in key order: the request is issued now, and the future settles
/// with its records.
pub(super) fn get_all<'c>(store: &IdbObjectStore, range: KeyRange, context: &'c str) -> Rows<'c> {
    Rows {
        pending: Some(all_request(store, range)),
        context,
        last: false,
    }
}

/// The records a read ([`get_all`], [`last_n`]) found: one concrete future for both, so an
/// `async fn` awaiting several reads holds one small state per await, not a copy of an async
/// helper's state machine.
pub(super) struct Rows<'c> {
    /// `None`: nothing to read (settles at once with no records).
    pending: Option<Pending>,
    context: &'c str,
    /// [`last_n`]'s read: its records come newest first.
    last: bool,
}

impl std::future::Future for Rows<'_> {
    type Output = Result<Vec<JsValue>, StoreError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        let found = match &mut this.pending {
            None => return std::task::Poll::Ready(Ok(Vec::new())),
            Some(pending) => std::task::ready!(std::pin::Pin::new(pending).poll(cx)),
        };
        std::task::Poll::Ready(rows_of(found, this.context, this.last))
    }
}

/// The records of a read's outcome (see [`Rows`]), oldest first.
#[inline(never)]
fn rows_of(
    found: Result<JsValue, JsValue>,
    context: &str,
    last: bool,
) -> Result<Vec<JsValue>, StoreError> {
    let found = found.map_err(|e| map_js_error(context, e))?;
    if !last {
        return array_of(found, context);
    }
    let mut out = js_sys::Array::from(&found).to_vec();
    out.reverse();
    Ok(out)
}

/// Issues a `getAll` of `range`: see [`array_of`].
fn all_request(store: &IdbObjectStore, range: KeyRange) -> Pending {
    Pending::of(range.query().and_then(|q| req(store, Op::GetAll, &q)))
}

/// The records (or keys) a `getAll` request found, in key order.
pub(super) fn array_of(found: JsValue, context: &str) -> Result<Vec<JsValue>, StoreError> {
    if !js_sys::Array::is_array(&found) {
        return Err(StoreError::Backend(format!(
            "{context}: the browser answered {} instead of an array",
            describe(&found)
        )));
    }
    Ok(js_sys::Array::from(&found).to_vec())
}

/// The last `n` records of `range` in key order (oldest first), never the whole range: one
/// `getAllRecords` request (count `n`, direction `prev`) where the browser has it, else a
/// reverse cursor stopped after `n` records. Either runs in JS (`awwIdbDone` with a store, a
/// count and a range): one wake of the store per read instead of one per record. Chromium's
/// `getAllRecords` read the last 50 of 10,000 records in about a third of the cursor walk's
/// time (1.1 ms against 3.7, in one page). Issued now; the future settles with the records.
pub(super) fn last_n<'c>(
    store: &IdbObjectStore,
    range: KeyRange,
    n: usize,
    context: &'c str,
) -> Rows<'c> {
    // A count past u32::MAX walks the whole range, which is what it asks for anyway.
    let count = u32::try_from(n).unwrap_or(u32::MAX);
    let pending = (n > 0).then(|| {
        let walk = range.query().and_then(|q| idb_last(store, count, &q));
        Pending::from(walk)
    });
    Rows {
        pending,
        context,
        last: true,
    }
}

/// The `seq` after the one of key `last` of `len` key parts (`undefined`: an empty range, 1),
/// the last key under the parts before it; `name`: the store, for the error.
pub(super) fn seq_after(last: JsValue, len: usize, name: &str) -> Result<f64, StoreError> {
    if last.is_undefined() {
        return Ok(1.0);
    }
    let seq = js_sys::Array::from(&last)
        .get(len as u32)
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

/// The position after the last agent of the world (first-put order), from the world's agent
/// rows.
pub(super) fn next_agent_order(rows: Vec<JsValue>, world_id: &str) -> Result<f64, StoreError> {
    let mut next = 0.0_f64;
    for js in rows {
        let row: AgentRow = decode(js, AGENTS, &in_world(world_id))?;
        next = next.max(row.order + 1.0);
    }
    Ok(next)
}

/// Part `i` of a compound key, if it is a string.
pub(super) fn key_part(k: &JsValue, i: u32) -> Option<String> {
    if !js_sys::Array::is_array(k) {
        return None;
    }
    js_sys::Array::from(k).get(i).as_string()
}

/// A key or value as short JSON for error messages.
pub(super) fn describe(value: &JsValue) -> String {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "(unprintable)".to_string())
}

/// Which records of a world a decoding error names (one copy of the text's code).
pub(super) fn in_world(world_id: &str) -> String {
    format!("in world {world_id:?}")
}

/// Which records of a chat a decoding error names.
pub(super) fn in_chat(world_id: &str, chat_id: &str) -> String {
    format!("in chat {chat_id:?} of world {world_id:?}")
}

/// Decodes a record, checking its format version first. `at` says which record it is.
pub(super) fn decode<T: FromJson>(js: JsValue, store: &str, at: &str) -> Result<T, StoreError> {
    match T::from_json(parse(js, store, at)?) {
        Ok(row) => Ok(row),
        Err(e) => Err(bad_field(store, at, e)),
    }
}

/// A field [`decode`] could not read: one copy for every row type (the error's text is made
/// here, not in each row type's `decode`).
#[inline(never)]
fn bad_field(store: &str, at: &str, e: crate::core::json::JsonError) -> StoreError {
    unreadable(store, at, e.to_string())
}

/// The JSON of a stored record, once its format version is known to be readable: the part of
/// [`decode`] that does not depend on the row type, so one copy serves them all.
#[inline(never)]
fn parse(js: JsValue, store: &str, at: &str) -> Result<crate::core::json::Value, StoreError> {
    let version = if js.is_object() {
        js_sys::Reflect::get(&js, &JsValue::from_str("v"))
            .ok()
            .and_then(|v| v.as_f64())
    } else {
        None
    };
    match version {
        None => {
            return Err(unreadable(
                store,
                at,
                "it has no format version (corrupted or written by another program)".into(),
            ))
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
    // Read as JSON text (`JSON.stringify`), then as a JSON value, the one form every
    // row type is decoded from (`crate::core::json`).
    let unreadable = |e: String| unreadable(store, at, e);
    let text = js_sys::JSON::stringify(&js)
        .map_err(|e| {
            unreadable(crate::web::js_tools::message_of(
                &e,
                "JSON.stringify failed",
            ))
        })?
        .as_string()
        .ok_or_else(|| unreadable("it is not JSON".to_string()))?;
    crate::core::json::from_str(&text).map_err(|e| unreadable(e.to_string()))
}

/// One copy for every row type.
#[inline(never)]
fn unreadable(store: &str, at: &str, why: String) -> StoreError {
    StoreError::Corrupted(format!(
        "unreadable {store} record {at}: {why}; delete it or clear this site's data"
    ))
}

/// Every record decoded, or the first error: a plain loop (a `collect` into a `Result` costs
/// an iterator adapter stack per row type).
pub(super) fn decode_all<T: FromJson>(
    rows: Vec<JsValue>,
    store: &str,
    at: &str,
) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for js in rows {
        out.push(decode(js, store, at)?);
    }
    Ok(out)
}

/// A row type whose readers want only its payload (see [`payloads`]).
pub(super) trait Payload: FromJson {
    type Of;
    fn payload(self) -> Self::Of;
}

/// Every record's payload, or the first error: [`decode_all`] and taking each row's payload
/// in one loop (a `map` and `collect` after it cost an iterator adapter stack per row type).
pub(super) fn payloads<T: Payload>(
    rows: Vec<JsValue>,
    store: &str,
    at: &str,
) -> Result<Vec<T::Of>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for js in rows {
        out.push(decode::<T>(js, store, at)?.payload());
    }
    Ok(out)
}

// ---- the awaiting primitive ----

#[wasm_bindgen(inline_js = r#"
export function awwIdbDone(target, n, range) {
  return new Promise((resolve, reject) => {
    if (target instanceof IDBObjectStore) {
      if (typeof target.getAllRecords === 'function') {
        const r = target.getAllRecords({ query: range, count: n, direction: 'prev' });
        r.onsuccess = () => resolve(r.result.map((record) => record.value));
        r.onerror = () => reject(r.error);
        return;
      }
      target = target.openCursor(range, 'prev');
    }
    if (target instanceof IDBRequest && n === undefined) {
      target.onsuccess = () => resolve(target.result);
      target.onerror = () => reject(target.error);
    } else if (target instanceof IDBRequest) {
      const rows = [];
      target.onsuccess = () => {
        const cursor = target.result;
        if (!cursor) return resolve(rows);
        rows.push(cursor.value);
        if (rows.length >= n) return resolve(rows);
        try { cursor.continue(); } catch (e) { reject(e); }
      };
      target.onerror = () => reject(target.error);
    } else {
      target.oncomplete = () => resolve();
      target.onabort = () => reject(target.error);
      target.commit();
    }
  });
}
const awwIdbOps = ['getAll', 'objectStore', 'transaction', 'abort', 'deleteDatabase', 'contains'];
export function awwIdbReq(target, op, a, b) {
  return target[awwIdbOps[op]](a, op === 2 ? (b ? 'readwrite' : 'readonly') : b);
}
export function awwIdbRun(tx, text) {
  const reads = [], range = (a) => IDBKeyRange.bound(a, [...a, []]);
  let i = 0;
  try {
    for (const [name, op, a, b] of JSON.parse('[' + text + ']')) {
      const store = tx.objectStore(name);
      if (op < 4) {
        op === 0 ? store.put(a) : op === 1 ? store.add(a, b) : store.delete(op === 2 ? a : range(a));
      } else {
        const r = op === 4 ? store.get(a) : op === 5 ? store.getKey(a) : op === 6 ? store.index('byMessageId').getKey(a)
          : op === 7 ? store.getAll(range(a)) : op === 8 ? store.getAllKeys(range(a))
          : store[op === 9 ? 'openCursor' : 'openKeyCursor'](range(a), 'prev');
        const at = i;
        reads.push(new Promise((resolve, reject) => {
          r.onsuccess = () => resolve(op === 9 ? r.result?.value : op === 10 ? r.result?.key : r.result);
          r.onerror = () => reject([at, r.error]);
        }));
      }
      i++;
    }
  } catch (e) {
    return [i, e];
  }
  return reads.length ? Promise.allSettled(reads).then((all) => {
    const failed = all.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    return all.map((o) => o.value);
  }) : undefined;
}
export function awwIdbRange(lower, upper, lowerOpen, upperOpen) {
  return upper === undefined ? IDBKeyRange.lowerBound(lower, lowerOpen) : IDBKeyRange.bound(lower, upper, lowerOpen, upperOpen);
}
export function awwIdbOpen(factory, name, version) {
  const r = factory.open(name, version);
  let failed;
  const settled = new Promise((resolve, reject) => {
    r.onupgradeneeded = (e) => {
      try { awwIdbUpgrade(r.result, r.transaction, e.oldVersion, e.newVersion); } catch (x) { failed = x; throw x; }
    };
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(failed ?? r.error);
  });
  return [Promise.race([settled, new Promise((blocked) => (r.onblocked = () => blocked()))]), settled];
}
export function awwIdbWatch(db, ended) {
  db.onversionchange = ended && ((e) => (db.close(), ended.push(e.newVersion)));
  db.onclose = ended && (() => ended.push(undefined));
  if (!ended) db.close();
}
export function awwIdbUpgrade(db, tx, from, to) {
  const store = (name, ...path) => db.createObjectStore(name, path.length ? { keyPath: path.length > 1 ? path : path[0] } : {});
  const steps = [
    () => {
      store('worlds', 'worldId');
      store('agents', 'worldId', 'agentId');
      store('chats', 'worldId', 'chatId');
      store('messages', 'worldId', 'chatId', 'seq')
        .createIndex('byMessageId', ['worldId', 'chatId', 'messageId'], { unique: true });
      store('memory', 'worldId', 'chatId', 'agentId', 'seq');
      store('agent_states', 'worldId', 'chatId', 'agentId');
    },
    () => store('approvals', 'worldId', 'chatId', 'approvalId'),
    () => {
      store('revisions');
      const read = tx.objectStore('worlds').getAll();
      read.onsuccess = () => {
        try {
          const revisions = tx.objectStore('revisions');
          for (const row of read.result) {
            if (typeof row !== 'object' || row === null) continue;
            const { worldId, rev } = row;
            if (typeof worldId === 'string' && Number.isFinite(rev) && rev > 0) revisions.add(0, [worldId, rev]);
          }
        } catch (e) {
          tx.abort();
        }
      };
    },
    () => {},
  ];
  for (let v = 1; v <= steps.length; v++) if (v > from && v <= (to ?? steps.length)) steps[v - 1]();
}
export function awwLock(name) {
  let locks, release;
  try { locks = navigator.locks; } catch (e) {}
  if (typeof locks?.request !== 'function') return [];
  const held = new Promise((r) => (release = r));
  const text = (e) => {
    try {
      return e instanceof Error ? `${e.name}: ${e.message}` : typeof e === 'string' ? e : JSON.stringify(e) ?? 'a value that is not JSON';
    } catch (x) {
      return 'a value that is not JSON';
    }
  };
  return [release, new Promise((granted, reject) => {
    const fail = (how, e) => reject((how < 2 ? 'navigator.locks.request(' : 'the Web Lock ') + JSON.stringify(name)
      + [') threw ', ') did not return a promise', ' could not be taken: ', ' ended before it was granted'][how] + (how % 2 ? '' : text(e)));
    let done;
    try { done = locks.request(name, () => (granted(), held)); } catch (e) { return fail(0, e); }
    if (!(done instanceof Promise)) return fail(1);
    done.then(() => fail(3), (e) => fail(2, e));
  })];
}
export function awwChannel(name, onWorld) {
  let ch, seen = false;
  const untold = [], send = (m) => { try { ch.postMessage(m); } catch (e) {} };
  try { ch = new BroadcastChannel(name); } catch (e) { return null; }
  ch.onmessage = ({ data }) => {
    if (data?.hello) send({ here: 1 });
    if (!seen) untold.forEach((w) => send({ worldId: w, what: 'write' }));
    seen = true;
    if (typeof data?.worldId === 'string') onWorld(data.worldId);
  };
  send({ hello: 1 });
  return (w, what) => {
    if (what === undefined) { ch.onmessage = null; ch.close(); }
    else if (seen) send({ worldId: w, what });
    else if (!untold.includes(w)) untold.push(w);
  };
}
"#)]
extern "C" {
    /// A promise of a request's outcome (its `result`, or its `error`), or, given a
    /// transaction, commits it and settles when it ends (`complete`, or `abort` with the
    /// transaction's `error`, `null` after `abort()`; a throwing `commit()` rejects). Its
    /// handlers are set at once: call it when the request is issued. `catch`: see
    /// `crate::web::timer`'s `hold_timer`.
    #[wasm_bindgen(catch, js_name = awwIdbDone)]
    fn idb_done(target: &JsValue) -> Result<js_sys::Promise, JsValue>;

    /// Given an object store, a count `n` and a key range: a promise of the values of the
    /// range's last `n` records, newest first (fewer when the range holds fewer), read by one
    /// `getAllRecords` where the browser has it, else by a reverse cursor walked by the
    /// request's own handlers, so either costs the store one wake. Rejects with the request's
    /// error, or what issuing it or `continue()` threw.
    #[wasm_bindgen(catch, js_name = awwIdbDone)]
    fn idb_last(
        store: &IdbObjectStore,
        n: u32,
        range: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    /// Issues the requests of JSON text `text` in `tx`, in order (see `idb_write::Stores`):
    /// each `[store, op, a, b]`, `op` a write, 0 `put(a)`, 1 `add(a, b)` (`b`: an out-of-line
    /// key), 2 `delete(a)`, 3 the `delete` of every key that starts with the parts of array
    /// `a`, or a read: 4 `get(a)`, 5 `getKey(a)`, 6 `getKey(a)` of the message-id index, 7
    /// `getAll` and 8 `getAllKeys` of the keys that start with `a`, 9 the value and 10 the key
    /// of the last of them (a reverse cursor's first step; `undefined` for none). Writes are
    /// not awaited. `[i, error]` when request `i` (or parsing the text, `i` 0) threw `error`
    /// (the requests after it were not issued), else a promise of the reads' results in order
    /// (rejected with `[i, error]`, request `i` the first that failed), `undefined` when there
    /// are none. Every read's handlers are set at once, so a promise settles while the
    /// transaction is active. Never throws; `catch`: see `idb_done`.
    #[wasm_bindgen(catch, js_name = awwIdbRun)]
    pub(super) fn idb_run(tx: &IdbTransaction, text: &str) -> Result<JsValue, JsValue>;

    /// Calls method `op` (an [`Op`]) of `target` (an object store, a connection, a
    /// transaction, the factory) with `a` (the query or name) and `b` (a transaction's mode,
    /// `readwrite` when truthy):
    /// one imported function for every IndexedDB call instead of a web-sys one each. Throws
    /// what the call throws.
    #[wasm_bindgen(catch, js_name = awwIdbReq)]
    fn idb_req(target: &JsValue, op: u32, a: &JsValue, b: &JsValue) -> Result<JsValue, JsValue>;

    /// `IDBKeyRange.bound(lower, upper, lowerOpen, upperOpen)`, or, `upper` undefined,
    /// `IDBKeyRange.lowerBound(lower, lowerOpen)` (for `idb_schema::KeyRange`). Throws what
    /// they throw (a key that is not valid).
    #[wasm_bindgen(catch, js_name = awwIdbRange)]
    pub(super) fn idb_range(
        lower: &JsValue,
        upper: &JsValue,
        lower_open: bool,
        upper_open: bool,
    ) -> Result<JsValue, JsValue>;

    /// Opens database `name` at `version` with `factory`, running the migrations
    /// (`awwIdbUpgrade`, see `idb_schema`) from the request's `upgradeneeded` handler (what a
    /// step throws aborts the upgrade): `[first, settled]`, `settled` a promise of the
    /// connection (rejected with the failed step's error, else the request's), `first` the same
    /// or `undefined` as soon as the request reports `blocked` (one promise race, not two Rust
    /// futures raced: the open resolves with the connection, never `undefined`). Throws what
    /// `open` throws.
    #[wasm_bindgen(catch, js_name = awwIdbOpen)]
    pub(super) fn idb_open(
        factory: &JsValue,
        name: &str,
        version: u32,
    ) -> Result<js_sys::Array, JsValue>;

    /// Given a connection and `ended`: sets its `versionchange` handler (closes the
    /// connection, then pushes the new version on `ended`, `null` when the database is
    /// deleted) and its `close` handler (pushes `undefined`); given no `ended`: removes them
    /// and closes the connection. Never throws; `catch`: see `idb_done`.
    #[wasm_bindgen(catch, js_name = awwIdbWatch)]
    pub(super) fn idb_watch(
        db: &web_sys::IdbDatabase,
        ended: Option<&js_sys::Array>,
    ) -> Result<(), JsValue>;

    /// `[]` where Web Locks do not exist, else `[release, granted]`: `release()` releases the
    /// lock (at once when it is held, as soon as it is granted while the request still
    /// waits), `granted` a promise settled when the lock is held, or rejected with the
    /// message of `tabs::acquire`'s error when the request failed first (it threw, did not
    /// return a promise, rejected, or ended before the grant; an error is described by its
    /// name and message, else as JSON). No Rust callback is handed to the browser, so a
    /// failed request leaves nothing behind.
    #[wasm_bindgen(catch, js_name = awwLock)]
    pub(super) fn web_lock(name: &str) -> Result<js_sys::Array, JsValue>;

    /// Opens BroadcastChannel `name` with the protocol of `tabs::ChangeChannel`, calling
    /// `on_world` with the world id of every other context's notice: `null` where
    /// BroadcastChannel is missing (or refuses the name), else a function: `(worldId, what)`
    /// posts (or keeps) a notice, `()` closes the channel. Posting is best effort (a closed
    /// channel throws).
    #[wasm_bindgen(catch, js_name = awwChannel)]
    pub(super) fn open_channel(
        name: &str,
        on_world: &wasm_bindgen::closure::Closure<dyn FnMut(JsValue)>,
    ) -> Result<Option<js_sys::Function>, JsValue>;
}

/// An issued request, awaited as it is (a future of its result, or of its error or what
/// issuing it threw) or by [`Pending::outcome`] (the one way this store awaits IndexedDB, see
/// the module docs). Its handlers are set when it is made, so requests issued together may be
/// awaited in any order, one after the other. One concrete future for every request: an
/// `async fn` that awaits several kinds of them holds one small state per await, not a copy of
/// each helper's own state machine.
pub(super) struct Pending(Result<JsFuture, Option<JsValue>>);

impl Pending {
    /// `issued`: what issuing the request returned (or threw).
    pub(super) fn of(issued: Result<IdbRequest, JsValue>) -> Pending {
        Pending::from(issued.and_then(|r| idb_done(&r)))
    }

    /// A promise (or what making it threw) as a request's outcome.
    pub(super) fn from(promise: Result<js_sys::Promise, JsValue>) -> Pending {
        Pending(promise.map(JsFuture::from).map_err(Some))
    }

    /// The request's result, or its error (or what issuing it threw) mapped with `context`.
    pub(super) fn outcome(self, context: &str) -> Outcome<'_> {
        Outcome {
            pending: self,
            context,
        }
    }
}

/// [`Pending::outcome`]'s future: a concrete type, not an `async fn`'s state machine in each
/// awaiting state machine.
pub(super) struct Outcome<'c> {
    pending: Pending,
    context: &'c str,
}

impl std::future::Future for Outcome<'_> {
    type Output = Result<JsValue, StoreError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        let found = std::task::ready!(std::pin::Pin::new(&mut this.pending).poll(cx));
        std::task::Poll::Ready(found.map_err(|e| map_js_error(this.context, e)))
    }
}

impl std::future::Future for Pending {
    type Output = Result<JsValue, JsValue>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match &mut self.get_mut().0 {
            Ok(future) => std::pin::Pin::new(future).poll(cx),
            Err(e) => std::task::Poll::Ready(Err(e.take().unwrap_or(JsValue::UNDEFINED))),
        }
    }
}

/// A transaction, aborted if dropped before [`Tx::commit`] or [`Tx::abort`]: a batch given
/// up half-way (or whose future was dropped) writes nothing.
pub(super) struct Tx {
    pub(super) raw: IdbTransaction,
    done: bool,
}

impl Tx {
    pub(super) fn new(raw: IdbTransaction) -> Tx {
        Tx { raw, done: false }
    }

    /// Commits at once; the future settles when the transaction has ended. `Err`: the
    /// transaction's error (`null` when it was aborted without one) or what `commit()` threw.
    pub(super) fn commit(mut self) -> Pending {
        self.done = true;
        Pending::from(idb_done(&self.raw))
    }

    /// Aborts the transaction (nothing it wrote is kept); the abort's outcome is not awaited:
    /// IndexedDB runs a later transaction over these stores only once this one has ended.
    pub(super) fn abort(mut self) {
        self.done = true;
        abort(&self.raw);
    }
}

/// Aborts `raw`; fails only when the transaction has already ended, which is then no error.
fn abort(raw: &JsValue) {
    let _ = call(raw, Op::Abort, &JsValue::UNDEFINED, &JsValue::UNDEFINED);
}

impl Drop for Tx {
    fn drop(&mut self) {
        if !self.done {
            abort(&self.raw);
        }
    }
}
