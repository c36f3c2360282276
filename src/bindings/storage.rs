//! Where a world lives: the `storage` option of `AgentWorld.create/open/list/delete/import`.
//!
//! `"memory"` is one store shared by every world of this module instance (so `open` finds what
//! `create` made, until the page or process ends). IndexedDB and application-supplied stores
//! are added by the persistence work; until then asking for them is a clear error, never a
//! silent fallback that would lose data the application expected to keep.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::bindings::error::invalid_argument;
use crate::core::memory_store::MemoryStore;
use crate::core::store::Store;

thread_local! {
    static MEMORY: Rc<MemoryStore> = Rc::new(MemoryStore::new());
}

/// The storage choice read from an options object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    Memory,
    IndexedDb,
}

/// The binding-level options shared by the static methods, read without touching the
/// caller's object.
#[derive(Debug, Clone)]
pub struct CommonOptions {
    pub storage: Storage,
    pub debug: bool,
    /// The remaining fields, for the engine's own (strict) input type.
    pub rest: JsValue,
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl CommonOptions {
    /// Reads `storage` and `debug` from `options` (which may be undefined) and returns a copy
    /// of it without them.
    pub fn read(options: &JsValue, what: &str) -> Result<Self, JsValue> {
        if options.is_undefined() || options.is_null() {
            return Ok(Self {
                storage: Storage::Memory,
                debug: false,
                rest: js_sys::Object::new().into(),
            });
        }
        if !options.is_object() || js_sys::Array::is_array(options) {
            return Err(invalid_argument(what, "must be an object"));
        }
        let storage = match get(options, "storage") {
            v if v.is_undefined() || v.is_null() => Storage::Memory,
            v => match v.as_string().as_deref() {
                Some("memory") => Storage::Memory,
                Some("indexeddb") => Storage::IndexedDb,
                _ => {
                    return Err(invalid_argument(
                        &format!("{what}.storage"),
                        "must be \"memory\" or \"indexeddb\"",
                    ))
                }
            },
        };
        let debug = match get(options, "debug") {
            v if v.is_undefined() || v.is_null() => false,
            v => v
                .as_bool()
                .ok_or_else(|| invalid_argument(&format!("{what}.debug"), "must be a boolean"))?,
        };
        let rest = js_sys::Object::assign(&js_sys::Object::new(), options.unchecked_ref());
        for key in ["storage", "debug"] {
            let _ = js_sys::Reflect::delete_property(&rest, &JsValue::from_str(key));
        }
        Ok(Self {
            storage,
            debug,
            rest: rest.into(),
        })
    }

    pub fn store(&self) -> Result<Rc<dyn Store>, JsValue> {
        match self.storage {
            Storage::Memory => Ok(MEMORY.with(|m| m.clone() as Rc<dyn Store>)),
            Storage::IndexedDb => Err(crate::bindings::error::agent_world_error(
                "storage_unavailable",
                "IndexedDB storage is not available in this build yet; pass { storage: \"memory\" }",
                None,
            )),
        }
    }
}
