//! Where a world lives: the `storage` option of `AgentWorld.create/open/list/delete/import`.
//!
//! `"indexeddb"` (the default wherever `globalThis.indexedDB` exists: pages and workers) is one
//! database, [`DATABASE_NAME`], opened once per module instance and shared by every world.
//! `"memory"` (the default elsewhere: Node, Deno, workerd) is one store shared by every world of
//! this module instance, so `open` finds what `create` made until the page or process ends.
//! Asking for IndexedDB where it does not exist is a clear error, never a silent fallback that
//! would lose data the application expected to keep. An object implementing the
//! `StoreAdapter` interface (see [`JsStore`]) keeps worlds wherever the application says (Deno
//! KV, a Durable Object, a server); its methods are checked where it is passed in.

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::future::{FutureExt, Shared};
use wasm_bindgen::prelude::*;

use crate::bindings::error::invalid_argument;
use crate::bindings::input::read_object;
use crate::core::memory_store::MemoryStore;
use crate::core::store::{LocalBoxFuture, Store, StoreError};
use crate::web::idb_store::IdbStore;
use crate::web::js_store::JsStore;

/// The IndexedDB database that holds every world of an origin.
pub const DATABASE_NAME: &str = "agent-world-wasm";

thread_local! {
    static MEMORY: Rc<MemoryStore> = Rc::new(MemoryStore::new());
    /// The live store of each adapter object, so that every world opened on one adapter shares
    /// one [`JsStore`] and its writes are serialised (see `JsStore`'s write lock).
    static ADAPTERS: RefCell<Vec<std::rc::Weak<JsStore>>> = const { RefCell::new(Vec::new()) };
    static IDB: RefCell<Option<Rc<IdbStore>>> = const { RefCell::new(None) };
    /// The open of [`DATABASE_NAME`] in progress, shared by every call that needs it meanwhile
    /// (one connection, not one per concurrent `create`/`open`).
    static OPENING: RefCell<Option<Opening>> = const { RefCell::new(None) };
}

type Opening = Shared<LocalBoxFuture<'static, Result<Rc<IdbStore>, StoreError>>>;

/// The open of the database in progress, or a new one. A new open issues its
/// `indexedDB.open` request before returning: the browser creates or opens the database in
/// its own process while this context goes on with the rest of the call (option parsing,
/// the engine's set-up), which on a first visit is most of a cold start.
fn opening() -> Opening {
    if let Some(o) = OPENING.with(|o| o.borrow().clone()) {
        // A settled open nobody took (its call failed on its options) is used only while its
        // connection is still open; a failure or a closed connection is not handed out again.
        let stale = o
            .peek()
            .is_some_and(|r| r.as_ref().map_or(true, |s| !s.is_open()));
        if !stale {
            return o;
        }
    }
    let open: LocalBoxFuture<'static, _> =
        Box::pin(async { IdbStore::open(DATABASE_NAME).await.map(Rc::new) });
    let shared = open.shared();
    OPENING.with(|o| *o.borrow_mut() = Some(shared.clone()));
    // One poll runs the open up to its first await: the request is on its way.
    let _ = shared.clone().now_or_never();
    shared
}

/// Starts opening the database when `options` (the argument of `create`/`open`) will use
/// IndexedDB and no connection is open yet, before the options are read: see `opening`.
/// Reads only `options.storage`; the call reads and checks the options as usual after.
pub fn start_indexeddb_open(options: &JsValue) {
    let storage = if options.is_object() {
        js_sys::Reflect::get(options, &JsValue::from_str("storage")).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    };
    let wants = storage.is_undefined()
        || storage.is_null()
        || storage.as_string().as_deref() == Some("indexeddb");
    let open = IDB.with(|c| c.borrow().as_ref().is_some_and(|s| s.is_open()));
    if wants && !open && indexeddb_available() {
        // Started; `OPENING` keeps it for the call that awaits it.
        drop(opening());
    }
}

/// Whether this runtime has IndexedDB (pages and workers do; Node, Deno and workerd do not).
pub fn indexeddb_available() -> bool {
    crate::bindings::events::host_has(0)
}

/// The [`JsStore`] over `object`: the live one if a world already uses this adapter object,
/// else a new one (after checking the object's methods).
fn adapter_store(object: JsValue) -> Result<Rc<JsStore>, String> {
    ADAPTERS.with(|list| {
        let mut list = list.borrow_mut();
        list.retain(|w| w.strong_count() > 0);
        for w in list.iter() {
            if let Some(store) = w.upgrade().filter(|s| *s.adapter() == object) {
                return Ok(store);
            }
        }
        let store = Rc::new(JsStore::new(object)?);
        list.push(Rc::downgrade(&store));
        Ok(store)
    })
}

/// Removes the boolean option `key` from `rest`: `default` when absent or `null`, an
/// `invalid_input` error naming `what.key` when not a boolean.
fn take_bool(
    rest: &mut crate::core::json::Map<String, crate::core::json::Value>,
    key: &str,
    default: bool,
    what: &str,
) -> Result<bool, JsValue> {
    match rest.remove(key) {
        None | Some(crate::core::json::Value::Null) => Ok(default),
        Some(crate::core::json::Value::Bool(b)) => Ok(b),
        Some(_) => Err(invalid_argument(
            &format!("{what}.{key}"),
            "must be a boolean",
        )),
    }
}

/// The storage choice read from an options object.
#[derive(Debug, Clone)]
pub enum Storage {
    Memory,
    IndexedDb,
    /// A JS object implementing `StoreAdapter`, already checked.
    Adapter(Rc<JsStore>),
}

/// The binding-level options shared by the static methods, read without touching the
/// caller's object.
#[derive(Debug, Clone)]
pub struct CommonOptions {
    pub storage: Storage,
    pub debug: bool,
    /// `warnUnhandledErrors` (default true): a failed LLM call no `system` listener receives
    /// is warned about on the console (see `outcome.rs`).
    pub warn_unhandled_errors: bool,
    /// The remaining fields, for the engine's own (strict) input type.
    pub rest: crate::core::json::Map<String, crate::core::json::Value>,
}

impl CommonOptions {
    /// Reads `storage`, `debug` and `warnUnhandledErrors` from `options` (which may be
    /// undefined) and the other fields as plain data (see [`crate::bindings::input`]).
    pub fn read(options: &JsValue, what: &str) -> Result<Self, JsValue> {
        let default = if indexeddb_available() {
            Storage::IndexedDb
        } else {
            Storage::Memory
        };
        let (mut rest, raw) = read_object(options, what, &["storage"])?;
        let storage = match raw.into_iter().next().unwrap_or(JsValue::UNDEFINED) {
            v if v.is_undefined() || v.is_null() => default,
            v if v.is_object() => Storage::Adapter(
                adapter_store(v).map_err(|e| invalid_argument(&format!("{what}.storage"), &e))?,
            ),
            v => match v.as_string().as_deref() {
                Some("memory") => Storage::Memory,
                Some("indexeddb") => Storage::IndexedDb,
                _ => {
                    return Err(invalid_argument(
                        &format!("{what}.storage"),
                        "must be \"memory\", \"indexeddb\" or a StoreAdapter object",
                    ))
                }
            },
        };
        let debug = take_bool(&mut rest, "debug", false, what)?;
        let warn_unhandled_errors = take_bool(&mut rest, "warnUnhandledErrors", true, what)?;
        Ok(Self {
            storage,
            debug,
            warn_unhandled_errors,
            rest,
        })
    }

    /// Removes the string option `key` from `rest` and returns it (`None` when absent), or an
    /// `invalid_input` error naming `what.key` and saying `problem` when it is not a string or,
    /// unless `choices` is empty, not one of them (`problem` spelt out by the caller: no
    /// message joined at run time).
    pub fn take_choice(
        &mut self,
        key: &str,
        what: &str,
        choices: &[&str],
        problem: &str,
    ) -> Result<Option<String>, JsValue> {
        match self.rest.remove(key) {
            None | Some(crate::core::json::Value::Null) => Ok(None),
            Some(crate::core::json::Value::String(s))
                if choices.is_empty() || choices.contains(&s.as_str()) =>
            {
                Ok(Some(s))
            }
            Some(_) => Err(invalid_argument(&format!("{what}.{key}"), problem)),
        }
    }

    /// The IndexedDB store when that is the storage (after [`CommonOptions::store`] opened it),
    /// for its change notifications.
    pub fn indexeddb(&self) -> Option<Rc<IdbStore>> {
        match self.storage {
            Storage::IndexedDb => IDB.with(|c| c.borrow().clone()),
            _ => None,
        }
    }

    /// The store to use, opening the IndexedDB database on first use.
    pub async fn store(&self) -> Result<Rc<dyn Store>, JsValue> {
        match &self.storage {
            Storage::Adapter(store) => Ok(store.clone() as Rc<dyn Store>),
            Storage::Memory => Ok(MEMORY.with(|m| m.clone() as Rc<dyn Store>)),
            Storage::IndexedDb => {
                if let Some(store) = IDB.with(|c| c.borrow().clone()) {
                    if store.is_open() {
                        return Ok(store);
                    }
                    // Closed (another tab upgraded or deleted the database, or the browser
                    // dropped it): worlds opened from now on get a new connection; the worlds
                    // on the old one keep failing with `closed` until they are opened again.
                    IDB.with(|c| {
                        let mut c = c.borrow_mut();
                        if c.as_ref().is_some_and(|s| Rc::ptr_eq(s, &store)) {
                            *c = None;
                        }
                    });
                }
                if !indexeddb_available() {
                    return Err(crate::bindings::error::agent_world_error(
                        "storage_unavailable",
                        "IndexedDB is not available in this runtime (Node, Deno and workerd have none); pass { storage: \"memory\" } or a store object",
                        None,
                    ));
                }
                let shared = opening();
                let opened = shared.clone().await;
                // Settled: the next open (after this connection closes, or after a failure)
                // starts afresh.
                OPENING.with(|o| {
                    let mut o = o.borrow_mut();
                    if o.as_ref().is_some_and(|x| x.ptr_eq(&shared)) {
                        *o = None;
                    }
                });
                let store = opened.map_err(crate::bindings::error::from_store_error)?;
                // Another open may have been kept while we awaited: keep the first.
                let kept =
                    IDB.with(|c| c.borrow_mut().get_or_insert_with(|| store.clone()).clone());
                if !Rc::ptr_eq(&kept, &store) {
                    store.close();
                }
                Ok(kept)
            }
        }
    }
}

/// Asks the browser to keep this origin's data (IndexedDB) even under storage pressure.
/// Resolves `true` when storage is (now) persistent, `false` when the browser said no or the
/// runtime has no storage manager (Node, Deno, workerd). Browsers may prompt the user or
/// decide from engagement; call it from a user gesture such as a "keep my chats" button.
///
/// @example
/// ```js
/// button.onclick = async () => { kept.textContent = (await requestPersistentStorage()) ? "yes" : "no"; };
/// ```
#[wasm_bindgen(js_name = requestPersistentStorage, unchecked_return_type = "Promise<boolean>")]
pub fn request_persistent_storage() -> js_sys::Promise {
    crate::bindings::events::storage_call("persist")
}

/// How much storage this origin uses and may use, in bytes, or `null` where the runtime has no
/// storage manager. Browsers round these figures on purpose.
///
/// @example
/// ```js
/// const e = await storageEstimate();
/// if (e) console.log(`${(e.usage / 1e6).toFixed(1)} MB of ${(e.quota / 1e6).toFixed(0)} MB`);
/// ```
#[wasm_bindgen(
    js_name = storageEstimate,
    unchecked_return_type = "Promise<{ usage: number; quota: number } | null>"
)]
pub fn storage_estimate() -> js_sys::Promise {
    crate::bindings::events::storage_call("estimate")
}
