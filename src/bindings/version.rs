//! `version()`: the package version, so an application can log what it runs.

use wasm_bindgen::prelude::*;

/// The version of agent-world-wasm (the crate and npm package version).
///
/// @example
/// ```js
/// import { version } from "agent-world-wasm";
/// console.log(`agent-world-wasm ${version()}`);
/// ```
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
