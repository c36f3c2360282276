//! Ring 3: the IndexedDB store in a headless Chromium page: the store contract unchanged, plus
//! persistence across connections, atomic batches, bounded paging, corrupted records and a
//! newer version opened elsewhere (cases in `idb_support`).
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod idb_support;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

idb_cases!();
