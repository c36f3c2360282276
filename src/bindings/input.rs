//! Reading what JavaScript passes in: the one bounded, cycle-checking reader every export uses
//! for plain-data arguments (options, configs, patches, provider settings).
//!
//! Invariants, each a way a caller could otherwise kill or corrupt the module:
//! - **No unbounded recursion.** Values nested deeper than [`MAX_DEPTH`] are refused, and an
//!   object that contains itself is refused as cyclic, long before the wasm stack could
//!   overflow (which traps and leaves the whole module unusable).
//! - **No unbounded work.** At most [`MAX_VALUES`] values are read per argument, so a small
//!   object graph that shares sub-objects (a DAG that would expand exponentially) is refused.
//! - **No JS exception escapes.** Every property access goes through `Reflect` or a catching
//!   import: a revoked Proxy, a throwing trap or a throwing getter becomes `invalid_input` with
//!   what was thrown as the error's `cause`. An exception unwinding through Rust frames would
//!   skip destructors and leave borrows and promises dangling.
//! - **Only JSON.** `NaN`, `±Infinity`, BigInt, symbols and functions are refused with the path
//!   of the value; they never turn into `null` (which a patch would read as "clear this field").
//!   An `undefined` property counts as absent, as in `JSON.stringify`.

use crate::core::json::{Map, Number, Value};
use wasm_bindgen::prelude::*;

use crate::bindings::error::agent_world_error;

/// Deepest nesting accepted (the options objects of the API are at most 3 levels deep).
pub const MAX_DEPTH: usize = 64;
/// Most values (objects, arrays, fields, elements) read from one argument.
pub const MAX_VALUES: usize = 100_000;

#[wasm_bindgen]
extern "C" {
    // Catching versions of the checks js-sys exposes without `catch`: both throw on a revoked
    // Proxy.
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(value: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(value: &JsValue) -> Result<js_sys::Array, JsValue>;
}

/// `invalid_input` naming `path`, with what JavaScript threw as the `cause`.
fn threw(path: &str, what: &str, cause: JsValue) -> JsValue {
    let message = js_sys::Reflect::get(&cause, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| cause.as_string())
        .unwrap_or_else(|| "an exception".to_string());
    agent_world_error(
        "invalid_input",
        &format!("{path} could not be read: {what} threw ({message}); pass plain data"),
        Some(cause),
    )
}

fn invalid(path: &str, problem: &str) -> JsValue {
    agent_world_error("invalid_input", &format!("{path} {problem}"), None)
}

/// `path.key`, with long keys cut (a key can be megabytes long).
fn child(path: &str, key: &str) -> String {
    match key.char_indices().nth(40) {
        Some((i, _)) => format!("{path}.{}…", &key[..i]),
        None => format!("{path}.{key}"),
    }
}

/// Reads property `key` of `object`, or `invalid_input` naming `path.key` when the access
/// throws (a revoked Proxy, a throwing getter).
pub fn get(object: &JsValue, key: &str, path: &str) -> Result<JsValue, JsValue> {
    js_sys::Reflect::get(object, &JsValue::from_str(key))
        .map_err(|e| threw(&child(path, key), "reading it", e))
}

/// Whether `value` is an object that is not an array (a Proxy included), or `invalid_input`
/// when even asking throws (a revoked Proxy).
pub fn is_plain_object(value: &JsValue, path: &str) -> Result<bool, JsValue> {
    if !value.is_object() {
        return Ok(false);
    }
    Ok(!is_array(value).map_err(|e| threw(path, "inspecting it", e))?)
}

struct Reader {
    /// The objects and arrays being read, outermost first: meeting one again is a cycle.
    ancestors: Vec<JsValue>,
    budget: usize,
}

impl Reader {
    fn count(&mut self, path: &str, n: usize) -> Result<(), JsValue> {
        if n > self.budget {
            return Err(invalid(
                path,
                &format!("is too large: more than {MAX_VALUES} values in one argument"),
            ));
        }
        self.budget -= n;
        Ok(())
    }

    fn value(&mut self, v: &JsValue, path: &str) -> Result<Value, JsValue> {
        self.count(path, 1)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        if let Some(b) = v.as_bool() {
            return Ok(Value::Bool(b));
        }
        if let Some(s) = v.as_string() {
            return Ok(Value::String(s));
        }
        if let Some(n) = v.as_f64() {
            return number(n, path);
        }
        if v.is_undefined() {
            return Err(invalid(path, "is undefined; leave the field out instead"));
        }
        if v.is_bigint() {
            return Err(invalid(path, "is a BigInt; pass a number"));
        }
        if v.is_symbol() {
            return Err(invalid(path, "is a symbol; pass plain data (JSON values)"));
        }
        if v.is_function() {
            return Err(invalid(
                path,
                "is a function; pass plain data (JSON values)",
            ));
        }
        if !v.is_object() {
            return Err(invalid(path, "is not plain data (JSON values)"));
        }
        if self.ancestors.iter().any(|a| a == v) {
            return Err(invalid(
                path,
                "is cyclic: it refers to an object that contains it",
            ));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(invalid(
                path,
                &format!("is nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.ancestors.push(v.clone());
        let out = if is_array(v).map_err(|e| threw(path, "inspecting it", e))? {
            self.array(v, path)
        } else {
            self.object(v, path, &mut |_, _| false).map(Value::Object)
        };
        self.ancestors.pop();
        out
    }

    fn array(&mut self, v: &JsValue, path: &str) -> Result<Value, JsValue> {
        let len = get(v, "length", path)?
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0)
            .ok_or_else(|| invalid(path, "has no valid length"))?;
        if len > self.budget as f64 {
            return Err(invalid(
                path,
                &format!("is too large: more than {MAX_VALUES} values in one argument"),
            ));
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len as u32 {
            let at = format!("{path}[{i}]");
            let item = js_sys::Reflect::get_u32(v, i).map_err(|e| threw(&at, "reading it", e))?;
            out.push(self.value(&item, &at)?);
        }
        Ok(Value::Array(out))
    }

    /// The fields of object `v`; `take(key, value)` returning true keeps a field out of the
    /// result (the caller took it as it is).
    fn object(
        &mut self,
        v: &JsValue,
        path: &str,
        take: &mut dyn FnMut(&str, &JsValue) -> bool,
    ) -> Result<Map<String, Value>, JsValue> {
        let keys = object_keys(v).map_err(|e| threw(path, "listing its fields", e))?;
        let n = keys.length() as usize;
        self.count(path, n)?;
        let mut out = Map::new();
        for i in 0..keys.length() {
            // Object.keys returns strings only.
            let Some(key) = keys.get(i).as_string() else {
                continue;
            };
            let at = child(path, &key);
            let item = get(v, &key, path)?;
            if item.is_undefined() || take(&key, &item) {
                continue;
            }
            out.insert(key, self.value(&item, &at)?);
        }
        Ok(out)
    }
}

fn number(n: f64, path: &str) -> Result<Value, JsValue> {
    if !n.is_finite() {
        return Err(invalid(
            path,
            // Named as JavaScript writes them; formatting the f64 would pull in Rust's float
            // printing for three fixed words.
            &format!(
                "must be a finite number (got {})",
                if n.is_nan() {
                    "NaN"
                } else if n > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                }
            ),
        ));
    }
    // Integers as integers, so that they read into integer fields.
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() <= SAFE {
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| invalid(path, "must be a finite number"))
}

/// Reads an object argument: its plain-data fields, except the `raw` ones (a storage adapter,
/// an `AbortSignal`), returned as they are (unread, `undefined` when absent), in `raw`'s order.
/// `undefined` or `null` reads as `{}`; anything else that is not an object is refused.
pub fn read_object(
    value: &JsValue,
    path: &str,
    raw: &[&str],
) -> Result<(Map<String, Value>, Vec<JsValue>), JsValue> {
    let mut raws = vec![JsValue::UNDEFINED; raw.len()];
    if value.is_undefined() || value.is_null() {
        return Ok((Map::new(), raws));
    }
    if !is_plain_object(value, path)? {
        return Err(invalid(path, "must be an object"));
    }
    let mut reader = Reader {
        ancestors: vec![value.clone()],
        budget: MAX_VALUES,
    };
    let fields = reader.object(
        value,
        path,
        &mut |key, v| match raw.iter().position(|r| *r == key) {
            Some(i) => {
                raws[i] = v.clone();
                true
            }
            None => false,
        },
    )?;
    Ok((fields, raws))
}
