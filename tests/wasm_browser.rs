//! Ring 3: the wasm build in a headless Chromium page: real fetch (with CORS) against the local
//! mock LLM, and a real IndexedDB database.
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod wasm_support;

use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn fetch_streams_a_reply_from_the_local_mock_in_a_page() {
    let (chunks, text, status) =
        wasm_support::stream_scripted_reply("héllo 世界, streamed into a page").await;
    assert_eq!(status, 200);
    assert_eq!(text, "héllo 世界, streamed into a page");
    assert!(
        chunks >= 2,
        "the body should arrive in several chunks, got {chunks}"
    );
}

#[wasm_bindgen_test]
async fn indexeddb_round_trips_a_record_across_connections() {
    let name = format!("aww-test-{}", agent_world_wasm::web::clock::new_id());
    let db = Database::open(&name)
        .with_version(1u8)
        .with_on_upgrade_needed(|_, db| {
            db.create_object_store("kv").build()?;
            Ok(())
        })
        .await
        .expect("open a fresh database");
    let tx = db
        .transaction("kv")
        .with_mode(TransactionMode::Readwrite)
        .build()
        .expect("tx");
    tx.object_store("kv")
        .expect("store")
        .put("value")
        .with_key("key")
        .await
        .expect("put");
    tx.commit().await.expect("commit");
    db.close();

    // A second connection sees the committed record: it really is on disk, not in a variable.
    let db = Database::open(&name).await.expect("reopen");
    let tx = db.transaction("kv").build().expect("tx");
    let got: Option<String> = tx
        .object_store("kv")
        .expect("store")
        .get("key")
        .primitive()
        .expect("get")
        .await
        .expect("read");
    assert_eq!(got.as_deref(), Some("value"));
    drop(tx);
    db.close();
    Database::delete_by_name(&name)
        .expect("delete")
        .await
        .expect("deleted");
}

#[wasm_bindgen_test]
async fn the_llm_transport_streams_retries_times_out_and_cancels_here_too() {
    wasm_support::llm_cases::all_transport_cases().await;
}

/// One conversation per provider against the third-party mock `@copilotkit/aimock`, over a
/// page's fetch with CORS.
#[wasm_bindgen_test]
async fn every_provider_converses_with_aimock_from_a_page() {
    wasm_support::aimock_cases::every_provider_converses(&wasm_support::aimock_cases::PROVIDERS)
        .await;
}

/// A Web Lock request that fails leaves nothing behind. `tabs::acquire` awaits one promise
/// that settles on the grant or on the request's own failure; had it raced two `JsFuture`s,
/// the dropped loser would keep its two callbacks alive until its promise settles, and
/// "granted" never settles when the request fails (here: a name starting with "-" is
/// reserved, so the request rejects). Each failure leaked those callbacks once; 20,000 of
/// them grew the module's memory by megabytes.
#[wasm_bindgen_test]
async fn a_failed_web_lock_request_leaves_no_callbacks_behind() {
    use agent_world_wasm::web::tabs;
    use wasm_bindgen::JsCast;
    let memory = || {
        wasm_bindgen::memory()
            .dyn_into::<js_sys::WebAssembly::Memory>()
            .unwrap()
            .buffer()
            .dyn_into::<js_sys::ArrayBuffer>()
            .unwrap()
            .byte_length()
    };
    let fail = |n: u32| async move {
        for _ in 0..n {
            let e = tabs::acquire("-reserved")
                .await
                .err()
                .expect("a reserved name fails");
            assert!(e.contains("could not be taken"), "{e}");
        }
    };
    fail(1_000).await; // warm-up: the allocator's first pages
    let before = memory();
    fail(20_000).await;
    let grown = memory() - before;
    assert!(
        grown < 512 * 1024,
        "20,000 failed lock requests grew the module's memory by {grown} bytes"
    );
}
