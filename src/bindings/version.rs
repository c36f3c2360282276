//! `version()`: the package version, so an application can log what it runs.

use wasm_bindgen::prelude::*;

/// The version of agent-world-wasm (the crate and npm package version).
///
/// @example
/// ```js
/// import { version } from "agent-world-wasm";
/// console.log(`agent-world-wasm ${version()}`);
/// ```
// A JS string made in the module (a `String` return would add the glue's copy-out and free).
#[wasm_bindgen(unchecked_return_type = "string")]
pub fn version() -> JsValue {
    JsValue::from_str(env!("CARGO_PKG_VERSION"))
}
