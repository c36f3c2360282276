//! How values cross the JS boundary: Rust values go out as JSON text that one `JSON.parse`
//! turns into plain objects (`to_js`), except a message, the hottest value (every `message`
//! event, `send()`'s result), whose fields are decoded from one run of text in one crossing
//! (`crate::bindings::events::message_value`; a message with tool calls still goes as JSON);
//! plain-data arguments come in through the bounded reader
//! of [`crate::bindings::input`] and the hand-written decoders of [`crate::core::json`]
//! (`from_js`); async methods return the one kind of promise (`promise`). Keeping one route
//! per direction keeps one serializer instance per type, and no serde deserializer at all.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::bindings::error::invalid_argument;
use crate::bindings::input::{get, is_plain_object, read_object};
use crate::core::json::{FromJson, JsonError};
use crate::core::json_write::ToJson;

/// Converts a Rust value to a plain JS object (maps as objects, `None` fields left out, `None`
/// values kept as `null`) by way of JSON text: the type's hand-written writer
/// ([`crate::core::json_write`]), then `JSON.parse`. Every type then has one writer (the one
/// export and the stores use too), and one `JSON.parse` builds the object instead of a
/// boundary call per field.
pub(crate) fn to_js<T: ToJson + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    parse_json(&value.to_json())
}

#[inline(never)]
pub(crate) fn parse_json(text: &str) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(text).map_err(|e| {
        let message = crate::web::js_tools::message_of(&e, "JSON.parse failed");
        crate::bindings::error::agent_world_error("internal_error", &message, None)
    })
}

/// Reads a JS object argument into a Rust input type, naming `what` in the error. The value is
/// read by the bounded, cycle-checking reader of [`crate::bindings::input`]: every key is seen
/// (the engine's input types reject unknown fields, spec §1) and non-JSON values are refused.
pub(crate) fn from_js<T: FromJson>(value: &JsValue, what: &str) -> Result<T, JsValue> {
    if !is_plain_object(value, what)? {
        return Err(invalid_argument(what, "must be an object"));
    }
    let (fields, _) = read_object(value, what, &[])?;
    from_fields(fields, what)
}

/// Reads fields already read as plain data into a Rust input type (by the hand-written
/// decoder of [`crate::core::json`]); the error names the field: `addAgent config.temperature
/// must be a number (got a string)`.
pub(crate) fn from_fields<T: FromJson>(
    fields: crate::core::json::Map<String, crate::core::json::Value>,
    what: &str,
) -> Result<T, JsValue> {
    T::from_json(crate::core::json::Value::Object(fields)).map_err(|e| input_error(what, &e))
}

#[inline(never)]
fn input_error(what: &str, e: &JsonError) -> JsValue {
    if e.path.is_empty() {
        invalid_argument(what, &e.problem)
    } else {
        invalid_argument(&format!("{what}.{}", e.path), &e.problem)
    }
}

/// The work of an async method, boxed: one `future_to_promise` instance serves every method.
type Work = std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>>;

/// The promise of an async method. Async methods take `&self` only while they start: the
/// work runs on a clone of the handle, so no borrow of the JS object spans an `.await` and
/// `free()` succeeds at any time. Every async export goes through here instead of being an
/// `async fn` export: `future_to_promise` is generic over the future, and one instance per
/// method cost 2–9 KB of wasm each (the boxed future makes it one instance in all).
pub(crate) fn promise(
    work: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
) -> js_sys::Promise {
    boxed_promise(Box::pin(work))
}

#[inline(never)]
fn boxed_promise(work: Work) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(work)
}

/// A string argument, or an `invalid_input` error naming it (a non-string handed to a
/// wasm-bindgen `String` parameter would hit the glue's memory copy, not a clean error).
pub(crate) fn string_arg(value: &JsValue, name: &str) -> Result<String, JsValue> {
    value
        .as_string()
        .ok_or_else(|| invalid_argument(name, "must be a string"))
}

/// Whether an optional options argument was given: `false` for `undefined`/`null`, an error
/// for anything that is not an object.
pub(crate) fn options_object(options: &JsValue) -> Result<bool, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(false);
    }
    if !is_plain_object(options, "options")? {
        return Err(invalid_argument("options", "must be an object"));
    }
    Ok(true)
}

pub(crate) fn read_signal(options: &JsValue) -> Result<Option<web_sys::AbortSignal>, JsValue> {
    if !options_object(options)? {
        return Ok(None);
    }
    match get(options, "signal", "options")? {
        v if v.is_undefined() || v.is_null() => Ok(None),
        // `instanceof` in the glue is guarded: a throwing Proxy is simply not a signal.
        v => v
            .dyn_into::<web_sys::AbortSignal>()
            .map(Some)
            .map_err(|_| invalid_argument("options.signal", "must be an AbortSignal")),
    }
}
