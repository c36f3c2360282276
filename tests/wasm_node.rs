//! Ring 2: the wasm build in Node (wasm-bindgen-test-runner's default environment).
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(
        agent_world_wasm::bindings::version::version(),
        env!("CARGO_PKG_VERSION")
    );
}

#[wasm_bindgen_test]
fn js_clock_and_ids_work_without_a_window() {
    let now = agent_world_wasm::web::clock::now_ms();
    assert!(now > 1_700_000_000_000, "Date.now() looks wrong: {now}");
    let (a, b) = (
        agent_world_wasm::web::clock::new_id(),
        agent_world_wasm::web::clock::new_id(),
    );
    assert_eq!(a.len(), 36);
    assert_ne!(a, b, "ids must be random");
}

#[wasm_bindgen_test]
async fn fetch_streams_a_reply_from_the_local_mock_in_node() {
    let (chunks, text, status) = common::stream_scripted_reply("streamed through Node fetch").await;
    assert_eq!(status, 200);
    assert_eq!(text, "streamed through Node fetch");
    assert!(chunks >= 1);
}

#[wasm_bindgen_test]
async fn sleep_waits_and_a_dropped_timeout_never_fires() {
    use std::cell::Cell;
    use std::rc::Rc;
    let fired = Rc::new(Cell::new(0));
    let f = fired.clone();
    let kept = agent_world_wasm::web::timer::Timeout::new(5, move || f.set(f.get() + 1));
    let f = fired.clone();
    drop(agent_world_wasm::web::timer::Timeout::new(5, move || {
        f.set(f.get() + 10)
    }));
    let t0 = agent_world_wasm::web::clock::now_ms();
    agent_world_wasm::web::timer::sleep(30).await;
    assert!(
        agent_world_wasm::web::clock::now_ms() - t0 >= 25,
        "sleep returned early"
    );
    assert_eq!(
        fired.get(),
        1,
        "the kept timeout fires once, the dropped one never"
    );
    drop(kept);
}

#[wasm_bindgen_test]
fn errors_are_real_js_errors_with_a_stable_code_and_cause() {
    use agent_world_wasm::bindings::error::{agent_world_error, is_agent_world_error};
    use wasm_bindgen::{JsCast, JsValue};
    let cause = JsValue::from(js_sys::Error::new("disk full"));
    let err = agent_world_error(
        "storage_error",
        "could not save the chat",
        Some(cause.clone()),
    );
    let e: &js_sys::Error = err.dyn_ref().expect("an Error instance");
    assert_eq!(String::from(e.name()), "AgentWorldError");
    assert_eq!(String::from(e.message()), "could not save the chat");
    let code = js_sys::Reflect::get(&err, &"code".into()).unwrap();
    assert_eq!(code.as_string().as_deref(), Some("storage_error"));
    assert_eq!(js_sys::Reflect::get(&err, &"cause".into()).unwrap(), cause);
    assert!(is_agent_world_error(&err));
    assert!(!is_agent_world_error(&js_sys::Error::new("plain").into()));
    assert!(!is_agent_world_error(&JsValue::from_str("AgentWorldError")));
}
