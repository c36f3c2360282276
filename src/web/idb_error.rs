//! How [`IdbStore`](super::idb_store::IdbStore) maps what IndexedDB throws or fails with
//! (a DOMException by its name, an aborted transaction) to a [`StoreError`]; the mapping
//! itself is listed in the [`idb_store`](super::idb_store) module docs.

use wasm_bindgen::{JsCast, JsValue};

use crate::core::store::{Cause, StoreError};

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
    let (name, message) = (text(e, "name"), text(e, "message"));
    let message = if message.is_empty() {
        name.clone()
    } else {
        message
    };
    map_dom_error(context, &name, &message).with_cause(Cause::new(JsValue::from(e.clone())))
}

/// String property `field` of a DOMException (`""` when it is not a string): read without a
/// web-sys import for each attribute.
fn text(e: &JsValue, field: &str) -> String {
    js_sys::Reflect::get(e, &JsValue::from_str(field))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// The name of a DOMException (`None` for anything else).
pub(super) fn dom_name(e: &JsValue) -> Option<String> {
    e.is_instance_of::<web_sys::DomException>()
        .then(|| text(e, "name"))
}

/// Maps what an IndexedDB call threw, or what a request or a commit failed with: a
/// DOMException by its name (see `map_dom_error`); `null`, a transaction aborted without an
/// error (by `abort()`), as [`StoreError::Aborted`]; anything else by its message.
pub(super) fn map_js_error(context: &str, e: JsValue) -> StoreError {
    if e.is_null() || e.is_undefined() {
        return StoreError::Aborted(format!(
            "{context}: the transaction was aborted and nothing was written; retry"
        ));
    }
    match e.dyn_into::<web_sys::DomException>() {
        Ok(dom) => store_error_from_dom_exception(context, &dom),
        Err(e) => StoreError::Backend(format!(
            "{context}: {}",
            crate::web::js_tools::message_of(&e, "an unknown error")
        )),
    }
}
