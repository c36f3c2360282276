//! [`JsStore`]: the [`Store`] over a key-value adapter the application supplies in JavaScript
//! (the `StoreAdapter` TypeScript interface below), for runtimes without IndexedDB: Deno KV, a
//! Cloudflare Durable Object's storage, a server behind `fetch`, SQLite.
//!
//! Key layout. Every key starts with `aww/`; ids are percent-encoded (everything but
//! `A-Z a-z 0-9 - _ . ~` becomes `%XX` of its UTF-8 bytes), so an id holding `/` cannot reach
//! into another record's range and every key is ASCII (byte order = UTF-16 order = the order
//! of Deno KV, Durable Objects and SQL):
//!
//! | key                                         | value ([`RECORD_VERSION`] in `v`)        |
//! |---------------------------------------------|------------------------------------------|
//! | `aww/w/{world}`                             | `{ v, world }`                           |
//! | `aww/a/{world}/{order:010}/{agent}`         | `{ v, order, agent }` (first-put order)  |
//! | `aww/c/{world}/{chat}`                      | `{ v, chat }`                            |
//! | `aww/m/{world}/{chat}/{seq:012}`            | `{ v, seq, message }`                    |
//! | `aww/mi/{world}/{chat}/{messageId}`         | `{ v, seq }` (finds `before`, rejects duplicates) |
//! | `aww/n/{world}/{chat}`                      | `{ v, next }` (the chat's next message seq) |
//! | `aww/mem/{world}/{chat}/{agent}/{seq:012}`  | `{ v, agentId, seq, entry }`             |
//! | `aww/nm/{world}/{chat}/{agent}`             | `{ v, next }` (the next memory seq)      |
//! | `aww/s/{world}/{chat}/{agent}`              | `{ v, state }`                           |
//! | `aww/ap/{world}/{chat}/{approvalId}`        | `{ v, approval }` (a pending approval, spec §9) |
//!
//! Every read is bounded by a key prefix: a page of messages is one `list` of at most `limit`
//! entries (reverse, `end` = the `before` message's key), the last `n` memory entries one `list`
//! of at most `n`. Adapters that ignore `list` options still give correct results: the returned
//! entries are always filtered, sorted and cut here too (only the bound on work is lost).
//!
//! Writes: [`Store::apply`] validates the batch with the rules every store shares
//! (`core::store_rules`: a later op sees the effects of earlier ones, including a chat deleted
//! and written anew) against the adapter's keys it reads first, then computes the writes
//! against the adapter's data seen through the batch's own pending writes, coalesces them into at most
//! one write per key, and sends it as ONE `batch()` call. Nothing is written when validation
//! fails. The application's `batch` must be atomic; that is what makes `apply` atomic. Applies
//! of one store run one at a time (a write lock held from the first read to the `batch`), and
//! the binding gives every world opened on one adapter object the same store, so two turns of
//! one module instance never take the same sequence number. Separate processes writing one
//! world are not coordinated (a Durable Object per world gives one writer).
//! Cascading deletes list the keys under the doomed prefixes and delete them in that batch.
//!
//! Errors: a thrown or rejected adapter call → [`StoreError::Backend`] with the adapter's
//! message (a `QuotaExceededError` DOMException → [`StoreError::QuotaExceeded`]), and what it
//! threw attached as the cause (JS sees it as `error.cause`); a value that
//! is not a readable record → [`StoreError::Corrupted`] naming the key; a record from a newer
//! format → [`StoreError::Version`]. Stored data never causes a panic.

use crate::core::vec_map::VecMap;
use std::cell::{Cell, RefCell};
use std::task::{Poll, Waker};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::core::approval::ApprovalRecord;
use crate::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use crate::core::sort::{sort_by, sort_dedup_by, Dedup};
use crate::core::store::{
    AgentChatState, Cause, ChatDump, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump,
};

mod apply;
mod records;

use records::*;

/// How long one adapter call may take by default (`StoreAdapter.timeoutMs`): 30 s. A call that
/// never settles would otherwise hang `create`, `send` and every later write of the world.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The format version written into every value's `v` field. Format 2 added the tool fields
/// (spec §9: agents' `tools`, `maxSteps`, `reasoning`; messages' `toolCalls`; memory entries'
/// `role: "tool"`, `toolCalls`, `toolCallId`, `toolName`). The records are
/// `deny_unknown_fields`: an app of format 1 reading one that uses them would call it corrupted,
/// and with the raised version it says "newer than this app" instead. Format 1 values read
/// unchanged (every new field is optional).
pub const RECORD_VERSION: u32 = 2;

#[wasm_bindgen(typescript_custom_section)]
const TS_STORE_ADAPTER: &'static str = r#"
/** Options of `StoreAdapter.list`: `start` inclusive, `end` exclusive, both full keys. */
export interface StoreAdapterListOptions {
  start?: string;
  end?: string;
  reverse?: boolean;
  limit?: number;
}
/** One write of an atomic `StoreAdapter.batch`. Each key appears at most once per batch. */
export type StoreAdapterOp =
  | { type: "put"; key: string; value: string }
  | { type: "delete"; key: string };
/**
 * A string key-value store supplied by the application (`storage: adapter` in
 * `AgentWorld.create/open/list/delete/import`): Deno KV, a Durable Object's storage, SQL.
 * Keys are ASCII strings compared lexicographically; values are JSON strings.
 * The engine writes only through `batch`, which MUST be atomic (all ops or none): it is one
 * logical change (a message with its memory and counters, a cascading delete).
 * `list` returns the entries whose key starts with `prefix`, in key order (descending when
 * `reverse`), within `[start, end)`, at most `limit`; an adapter that ignores the options must
 * say so (results stay correct, reads are no longer bounded).
 *
 * @example
 * ```js
 * // In memory, for tests: examples/deno-kv and examples/durable-object persist for real.
 * const map = new Map();
 * const adapter = {
 *   async get(key) { return map.get(key); },
 *   async put(key, value) { map.set(key, value); },
 *   async delete(key) { map.delete(key); },
 *   async list(prefix, { start = "", end, reverse = false, limit = Infinity } = {}) {
 *     const keys = [...map.keys()].filter((k) => k.startsWith(prefix) && k >= start
 *       && (end === undefined || k < end)).sort();
 *     if (reverse) keys.reverse();
 *     return keys.slice(0, limit).map((k) => [k, map.get(k)]);
 *   },
 *   async batch(ops) { // atomic: nothing awaits between the writes
 *     for (const op of ops) op.type === "put" ? map.set(op.key, op.value) : map.delete(op.key);
 *   },
 * };
 * const world = await AgentWorld.create({ name: "Kept by my adapter", storage: adapter });
 * ```
 */
export interface StoreAdapter {
  get(key: string): Promise<string | undefined | null>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string, options?: StoreAdapterListOptions): Promise<Array<[string, string]>>;
  batch(ops: StoreAdapterOp[]): Promise<void>;
  /**
   * How long one call may take, in milliseconds (default 30000), read when the adapter is
   * first used. A call that has not settled by then fails with a `storage_error` (reason
   * `backend`) naming the method, instead of hanging the world.
   */
  timeoutMs?: number;
}
/** The `storage` option of `AgentWorld.create/open/list/delete/import`. */
export type StorageOption = "memory" | "indexeddb" | StoreAdapter;
"#;

#[wasm_bindgen]
extern "C" {
    /// A JS object implementing the `StoreAdapter` interface.
    #[wasm_bindgen(typescript_type = "StoreAdapter")]
    pub type StoreAdapter;

    #[wasm_bindgen(method, catch, js_name = get)]
    fn js_get(this: &StoreAdapter, key: &str) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = list)]
    fn js_list(this: &StoreAdapter, prefix: &str, options: &JsValue) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = batch)]
    fn js_batch(this: &StoreAdapter, ops: &js_sys::Array) -> Result<JsValue, JsValue>;
}

/// The methods a `StoreAdapter` must have, with their signatures for error messages.
pub const ADAPTER_METHODS: [(&str, &str); 5] = [
    ("get", "get(key)"),
    ("put", "put(key, value)"),
    ("delete", "delete(key)"),
    ("list", "list(prefix, options)"),
    ("batch", "batch(ops)"),
];

/// A [`Store`] over a JS `StoreAdapter`.
pub struct JsStore {
    adapter: StoreAdapter,
    /// How long one adapter call may take before it fails (`StoreAdapter.timeoutMs`).
    timeout_ms: u64,
    /// One `apply` at a time: validation reads (a counter, an id) and the `batch` that depends
    /// on them must not interleave with another `apply` of this store, or two appends would
    /// take the same sequence number.
    writing: WriteLock,
}

impl std::fmt::Debug for JsStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsStore").finish_non_exhaustive()
    }
}

impl JsStore {
    /// Checks the duck interface now, so a wrong object fails where it is passed in, naming
    /// the missing method, instead of at the first write.
    pub fn new(object: JsValue) -> Result<JsStore, String> {
        if !object.is_object() {
            return Err("must be \"memory\", \"indexeddb\" or an object implementing StoreAdapter (get, put, delete, list, batch)".into());
        }
        for (name, signature) in ADAPTER_METHODS {
            let f = js_sys::Reflect::get(&object, &JsValue::from_str(name))
                .unwrap_or(JsValue::UNDEFINED);
            if !f.is_function() {
                return Err(format!(
                    "has no {signature} method (a StoreAdapter needs get, put, delete, list and batch)"
                ));
            }
        }
        let timeout_ms =
            match js_sys::Reflect::get(&object, &JsValue::from_str("timeoutMs")) {
                Ok(v) if v.is_undefined() || v.is_null() => DEFAULT_TIMEOUT_MS,
                Ok(v) => match v.as_f64() {
                    Some(ms) if ms.is_finite() && ms >= 1.0 => ms as u64,
                    _ => return Err(
                        "has an invalid timeoutMs: it must be a positive number of milliseconds"
                            .into(),
                    ),
                },
                Err(_) => return Err("could not be read (reading timeoutMs threw)".into()),
            };
        Ok(JsStore {
            timeout_ms,
            adapter: object.unchecked_into(),
            writing: WriteLock::default(),
        })
    }

    /// The adapter object this store calls.
    pub fn adapter(&self) -> &JsValue {
        &self.adapter
    }

    /// The value at `key` (`None`: absent). The adapter is asked at once: every caller
    /// awaits it straight away.
    fn get(&self, key: &str) -> Got<'_> {
        Got {
            store: self,
            context: format!("get({key:?})"),
            call: self.call(self.adapter.js_get(key)),
            read: true,
        }
    }

    /// The entries under `prefix` within `[start, end)`, ascending (descending when `reverse`),
    /// at most `limit`. The adapter is asked for exactly that (when the future is first
    /// polled); its answer is checked and cut here again, so an adapter that ignores the
    /// options stays correct.
    fn list<'a>(&'a self, prefix: String, range: Range<'a>) -> Rows<'a> {
        Rows {
            store: self,
            prefix,
            range,
            call: None,
            context: String::new(),
        }
    }

    fn list_all(&self, prefix: String) -> Rows<'_> {
        self.list(prefix, Range::default())
    }

    /// Sends `writes` (not empty) as one `batch()`; what it resolves to is not read.
    fn batch(&self, writes: &VecMap<String, Option<String>>) -> Got<'_> {
        let ops = js_sys::Array::new();
        for (key, value) in writes {
            let op = js_sys::Object::new();
            set(&op, "key", &JsValue::from_str(key));
            match value {
                Some(value) => {
                    set(&op, "type", &JsValue::from_str("put"));
                    set(&op, "value", &JsValue::from_str(value));
                }
                None => set(&op, "type", &JsValue::from_str("delete")),
            }
            ops.push(&op);
        }
        Got {
            store: self,
            context: format!("batch() of {} writes", writes.len()),
            call: self.call(self.adapter.js_batch(&ops)),
            read: false,
        }
    }
}

/// An async lock for one thread: `lock()` waits until no guard is alive. Dropping the guard
/// wakes every waiter (one wins, the others wait again), so a waiter dropped after its wake-up
/// cannot strand the rest.
#[derive(Default)]
struct WriteLock {
    locked: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

struct WriteGuard<'a>(&'a WriteLock);

impl WriteLock {
    fn lock(&self) -> impl std::future::Future<Output = WriteGuard<'_>> {
        std::future::poll_fn(move |cx| {
            if self.locked.get() {
                self.waiters.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            } else {
                self.locked.set(true);
                Poll::Ready(WriteGuard(self))
            }
        })
    }
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.0.locked.set(false);
        let waiters = std::mem::take(&mut *self.0.waiters.borrow_mut());
        for w in waiters {
            w.wake();
        }
    }
}

/// A bounded `list` request.
#[derive(Debug, Default)]
struct Range<'a> {
    start: Option<&'a str>,
    end: Option<&'a str>,
    reverse: bool,
    limit: Option<usize>,
}

impl Range<'_> {
    /// The `options` argument of the adapter's `list` for this range.
    fn options(&self) -> js_sys::Object {
        let options = js_sys::Object::new();
        if let Some(start) = self.start {
            set(&options, "start", &JsValue::from_str(start));
        }
        if let Some(end) = self.end {
            set(&options, "end", &JsValue::from_str(end));
        }
        if self.reverse {
            set(&options, "reverse", &JsValue::TRUE);
        }
        if let Some(limit) = self.limit {
            set(&options, "limit", &JsValue::from_f64(limit as f64));
        }
        options
    }
}

/// The value a `get` resolved to (`undefined` or `null`: no value).
fn string_of(v: JsValue, context: &str) -> Result<Option<String>, StoreError> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.as_string().map(Some).ok_or_else(|| {
        StoreError::Backend(format!(
            "the store adapter's {context} resolved to a non-string value; values are JSON strings"
        ))
    })
}

/// The entries a `list` of `prefix` over `range` resolved to, checked and cut here again (see
/// [`JsStore::list`]).
fn rows_of(
    v: JsValue,
    prefix: &str,
    range: &Range<'_>,
    context: &str,
) -> Result<Vec<(String, String)>, StoreError> {
    let malformed = || {
        StoreError::Backend(format!(
            "the store adapter's {context} must resolve to an array of [key, value] string pairs"
        ))
    };
    if !js_sys::Array::is_array(&v) {
        return Err(malformed());
    }
    let mut out = Vec::new();
    for entry in js_sys::Array::from(&v).iter() {
        if !js_sys::Array::is_array(&entry) {
            return Err(malformed());
        }
        let pair = js_sys::Array::from(&entry);
        let (Some(k), Some(val)) = (pair.get(0).as_string(), pair.get(1).as_string()) else {
            return Err(malformed());
        };
        let inside = k.starts_with(prefix)
            && range.start.is_none_or(|s| k.as_str() >= s)
            && range.end.is_none_or(|e| k.as_str() < e);
        if inside {
            out.push((k, val));
        }
    }
    sort_dedup_by(&mut out, &|a, b| a.0.cmp(&b.0), Dedup::First);
    if range.reverse {
        crate::core::reverse(&mut out);
    }
    if let Some(limit) = range.limit {
        out.truncate(limit);
    }
    Ok(out)
}

/// A `list` of the adapter (see [`JsStore::list`]): one concrete future for every list, so
/// the reads that are one list and a synchronous step ([`Then`]) need no async state
/// machine each.
struct Rows<'a> {
    store: &'a JsStore,
    prefix: String,
    range: Range<'a>,
    /// The call, once made (at the first poll, as the `async fn` it replaces did).
    call: Option<Call>,
    context: String,
}

impl std::future::Future for Rows<'_> {
    type Output = Result<Entries, StoreError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let call = match &mut this.call {
            Some(call) => call,
            None => {
                if this.range.limit == Some(0) {
                    return Poll::Ready(Ok(Vec::new()));
                }
                this.context = format!("list({:?})", this.prefix);
                let issued = this
                    .store
                    .adapter
                    .js_list(&this.prefix, &this.range.options());
                this.call.insert(this.store.call(issued))
            }
        };
        let Poll::Ready(answer) = std::pin::Pin::new(call).poll(cx) else {
            return Poll::Pending;
        };
        Poll::Ready(
            this.store
                .answer(answer, &this.context)
                .and_then(|v| rows_of(v, &this.prefix, &this.range, &this.context)),
        )
    }
}

/// A `get` or a `batch` of the adapter (see [`JsStore::get`], [`JsStore::batch`]): one
/// concrete future for both, as [`Rows`] is for every list, instead of an async state machine
/// inside each caller. A batch's value is not read (`read` is false): it resolves to `None`.
struct Got<'a> {
    store: &'a JsStore,
    context: String,
    call: Call,
    read: bool,
}

impl std::future::Future for Got<'_> {
    type Output = Result<Option<String>, StoreError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        std::pin::Pin::new(&mut this.call).poll(cx).map(|answer| {
            let v = this.store.answer(answer, &this.context)?;
            if !this.read {
                return Ok(None);
            }
            string_of(v, &this.context)
        })
    }
}

/// The `[key, value]` entries of a `list`, in the order asked for.
type Entries = Vec<(String, String)>;

/// A read that is one `list` and a synchronous step over its rows (decoding them).
struct Then<'a, T> {
    rows: Rows<'a>,
    then: fn(Entries) -> Result<T, StoreError>,
}

impl<T> std::future::Future for Then<'_, T> {
    type Output = Result<T, StoreError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        std::pin::Pin::new(&mut this.rows)
            .poll(cx)
            .map(|rows| rows.and_then(this.then))
    }
}

/// The world's row read and decoded (see [`JsStore::world_of`]): a concrete future, not an
/// async state machine around the `get`.
struct WorldOf<'a> {
    got: Got<'a>,
    key: String,
}

impl std::future::Future for WorldOf<'_> {
    type Output = Result<Option<WorldData>, StoreError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        std::pin::Pin::new(&mut this.got)
            .poll(cx)
            .map(|got| match got? {
                Some(v) => Ok(Some(decode(&this.key, &v, None, "world")?.1)),
                None => Ok(None),
            })
    }
}

/// One adapter call: its answer (a promise, a thenable or a plain value), raced against the
/// store's timeout. One concrete future for every call (`get`, `list`, `batch`): the async
/// code that awaits them holds one small state per await, not a copy of a generic race.
/// Its output: the settled value, or what the call threw or rejected with, or `None` when
/// the timeout came first (see [`JsStore::answer`]).
struct Call {
    answer: Result<JsFuture, Option<JsValue>>,
    timeout: super::timer::Sleep,
}

impl std::future::Future for Call {
    type Output = Result<JsValue, Option<JsValue>>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match &mut this.answer {
            Ok(answer) => {
                if let Poll::Ready(settled) = std::pin::Pin::new(answer).poll(cx) {
                    return Poll::Ready(settled.map_err(Some));
                }
            }
            Err(thrown) => return Poll::Ready(Err(thrown.take())),
        }
        std::pin::Pin::new(&mut this.timeout)
            .poll(cx)
            .map(|()| Err(None))
    }
}

impl JsStore {
    /// Awaits what an adapter method returned (or threw) for at most `timeout_ms`.
    fn call(&self, issued: Result<JsValue, JsValue>) -> Call {
        Call {
            answer: issued
                .map(|v| JsFuture::from(js_sys::Promise::resolve(&v)))
                .map_err(Some),
            timeout: super::timer::sleep(self.timeout_ms),
        }
    }

    /// A [`Call`]'s output as the store's result: a thrown or rejected call keeps the
    /// adapter's message, a call that never settled fails with a `backend` storage error.
    fn answer(
        &self,
        answer: Result<JsValue, Option<JsValue>>,
        context: &str,
    ) -> Result<JsValue, StoreError> {
        answer.map_err(|e| match e {
            Some(e) => js_error(context, &e),
            None => StoreError::Backend(format!(
                "the store adapter's {context} did not settle within {} s \
                 (StoreAdapter.timeoutMs = {}); check the backend, or raise timeoutMs if it \
                 is just slow (a timed-out write may still complete later)",
                seconds(self.timeout_ms),
                self.timeout_ms
            )),
        })
    }
}

/// `ms` in seconds as JavaScript would print `ms / 1000` (`30`, `1.5`, `0.05`), without
/// Rust's float printing.
fn seconds(ms: u64) -> String {
    let (whole, frac) = (ms / 1000, ms % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:03}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

fn set(target: &js_sys::Object, key: &str, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), value);
}

/// The [`StoreError`] of a thrown or rejected adapter call, keeping the adapter's message.
fn js_error(context: &str, e: &JsValue) -> StoreError {
    let context = format!("the store adapter's {context} failed");
    if let Some(dom) = e.dyn_ref::<web_sys::DomException>() {
        return super::idb_store::store_error_from_dom_exception(&context, dom);
    }
    let message = js_sys::Reflect::get(e, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "(no message)".to_string());
    StoreError::Backend(format!("{context}: {message}")).with_cause(Cause::new(e.clone()))
}

// ---- the Store impl ----

impl JsStore {
    fn world_of(&self, world_id: &str) -> WorldOf<'_> {
        let key = key("w", &[world_id]);
        WorldOf {
            got: self.get(&key),
            key,
        }
    }

    fn agents_of(&self, world_id: &str) -> Then<'_, Vec<Agent>> {
        Then {
            rows: self.list_all(prefix("a", &[world_id])),
            then: agents_in,
        }
    }

    fn chats_of(&self, world_id: &str) -> Then<'_, Vec<Chat>> {
        Then {
            rows: self.list_all(prefix("c", &[world_id])),
            then: |rows| decode_all(&rows, None, "chat"),
        }
    }

    fn states_of(&self, w: &str, c: &str) -> Then<'_, Vec<AgentChatState>> {
        Then {
            rows: self.list_all(prefix("s", &[w, c])),
            then: |rows| decode_all(&rows, None, "state"),
        }
    }

    async fn page(
        &self,
        w: &str,
        c: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Message>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let end = match before {
            None => None,
            Some(id) => {
                let id_key = key("mi", &[w, c, id]);
                let Some(v) = self.get(&id_key).await? else {
                    return Ok(Vec::new());
                };
                let seq = decode_num(&id_key, &v, "seq")?;
                Some(seq_key(prefix("m", &[w, c]), seq))
            }
        };
        // Made after the `get`: not kept across its await.
        let p = prefix("m", &[w, c]);
        let range = Range {
            end: end.as_deref(),
            reverse: true,
            limit: Some(limit),
            ..Range::default()
        };
        let mut rows = self.list(p, range).await?;
        crate::core::reverse(&mut rows);
        decode_all(&rows, Some("seq"), "message")
    }
}

/// The world's agents in first-put order, from their rows.
fn agents_in(rows: Entries) -> Result<Vec<Agent>, StoreError> {
    let mut agents: Vec<(u64, Agent)> = Vec::with_capacity(rows.len());
    for (k, v) in &rows {
        agents.push(decode(k, v, Some("order"), "agent")?);
    }
    sort_by(&mut agents, &|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(agents.len());
    for (_, agent) in agents {
        out.push(agent);
    }
    Ok(out)
}

/// The prefix `dump` lists at `step` (`None`: done), in the order the reads were always made:
/// the agents, the chats, then each chat's messages, memory and states.
fn dump_list(w: &str, dump: &WorldDump, step: usize) -> Option<String> {
    let kind = match step {
        0 => return Some(prefix("a", &[w])),
        1 => return Some(prefix("c", &[w])),
        n => ["m", "mem", "s"][(n - 2) % 3],
    };
    let chat = dump.chats.get((step - 2) / 3)?.chat.as_ref()?;
    Some(prefix(kind, &[w, &chat.id]))
}

/// Decodes the rows of [`dump_list`]'s `step` into `dump`.
fn dump_rows(dump: &mut WorldDump, step: usize, rows: Entries) -> Result<(), StoreError> {
    if step == 0 {
        dump.agents = agents_in(rows)?;
        return Ok(());
    }
    if step == 1 {
        let chats: Vec<Chat> = decode_all(&rows, None, "chat")?;
        for chat in chats {
            dump.chats.push(ChatDump {
                chat: Some(chat),
                ..ChatDump::default()
            });
        }
        return Ok(());
    }
    let Some(chat) = dump.chats.get_mut((step - 2) / 3) else {
        return Ok(());
    };
    match (step - 2) % 3 {
        0 => chat.messages = decode_all(&rows, Some("seq"), "message")?,
        1 => {
            // Key order is agent, then seq: group consecutive runs by agent.
            for (k, v) in &rows {
                let m: MemoryRow = decode_row(k, v)?;
                match chat.memories.last_mut() {
                    Some((agent, entries)) if *agent == m.agent_id => entries.push(m.entry),
                    _ => chat.memories.push((m.agent_id, vec![m.entry])),
                }
            }
        }
        _ => chat.states = decode_all(&rows, None, "state")?,
    }
    Ok(())
}

impl Store for JsStore {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        Box::pin(Then {
            rows: self.list_all(raw_key("w", &[""])),
            then: |rows| decode_all(&rows, None, "world"),
        })
    }

    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        Box::pin(self.world_of(world_id))
    }

    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        Box::pin(self.agents_of(world_id))
    }

    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        Box::pin(self.chats_of(world_id))
    }

    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        Box::pin(self.states_of(world_id, chat_id))
    }

    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        let range = Range {
            reverse: true,
            limit: Some(n),
            ..Range::default()
        };
        Box::pin(Then {
            rows: self.list(prefix("mem", &[world_id, chat_id, agent_id]), range),
            then: |mut rows| {
                crate::core::reverse(&mut rows);
                let mut entries = Vec::with_capacity(rows.len());
                for (k, v) in &rows {
                    entries.push(decode_row::<MemoryRow>(k, v)?.entry);
                }
                Ok(entries)
            },
        })
    }

    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        Box::pin(self.page(world_id, chat_id, before, limit))
    }

    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(Then {
            rows: self.list_all(prefix("ap", &[world_id, chat_id])),
            then: |rows| {
                let mut v: Vec<ApprovalRecord> = decode_all(&rows, None, "approval")?;
                sort_by(&mut v, &|a, b| {
                    (a.created_at, &a.approval_id).cmp(&(b.created_at, &b.approval_id))
                });
                Ok(v)
            },
        })
    }

    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        Box::pin(async move {
            let world = self.world_of(world_id).await?;
            let mut dump = WorldDump {
                world,
                ..WorldDump::default()
            };
            // One list per step and one await for all of them (see `dump_list`), instead of
            // a state machine holding a different future at each of six awaits.
            let mut step = 0;
            while let Some(p) = dump_list(world_id, &dump, step) {
                let rows = self.list_all(p).await?;
                dump_rows(&mut dump, step, rows)?;
                step += 1;
            }
            Ok(dump)
        })
    }

    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.apply_ops(ops))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    // `src/web` builds for wasm32 only, where a plain `#[test]` is never run.
    #[wasm_bindgen_test]
    fn ids_cannot_break_the_layout() {
        assert_eq!(encode_id("team-1"), "team-1");
        assert_eq!(encode_id("a/b"), "a%2Fb");
        assert_eq!(encode_id("100%"), "100%25");
        assert_eq!(encode_id("é"), "%C3%A9");
        assert_eq!(key("m", &["w/x", "c"]), "aww/m/w%2Fx/c");
        assert_eq!(prefix("mem", &["w", "c", "a"]), "aww/mem/w/c/a/");
    }
}
