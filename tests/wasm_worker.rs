//! Ring 3: the wasm build inside a dedicated Web Worker in headless Chromium: no `window`,
//! so this proves fetch and the clock are reached through the global scope.
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod wasm_support;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
async fn fetch_streams_a_reply_from_the_local_mock_in_a_worker() {
    let (_, text, status) = wasm_support::stream_scripted_reply("streamed inside a worker").await;
    assert_eq!(status, 200);
    assert_eq!(text, "streamed inside a worker");
    assert!(agent_world_wasm::web::clock::now_ms() > 0);
}

#[wasm_bindgen_test]
async fn the_llm_transport_streams_retries_times_out_and_cancels_here_too() {
    wasm_support::llm_cases::all_transport_cases().await;
}
