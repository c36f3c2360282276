//! Ring 3: the IndexedDB store in a headless Chromium page: the store contract unchanged, plus
//! persistence across connections, atomic batches, bounded paging, corrupted records and a
//! newer version opened elsewhere (cases in `idb_support`).
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod idb_support;

use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn the_store_contract_passes_in_a_page() {
    idb_support::contract_passes().await;
}

#[wasm_bindgen_test]
async fn data_survives_closing_and_reopening() {
    idb_support::data_survives_closing_and_reopening().await;
}

#[wasm_bindgen_test]
async fn a_failing_batch_writes_nothing() {
    idb_support::a_failing_batch_writes_nothing().await;
}

#[wasm_bindgen_test]
async fn paging_over_ten_thousand_messages_is_bounded() {
    idb_support::paging_over_ten_thousand_messages_is_bounded().await;
}

#[wasm_bindgen_test]
async fn corrupted_records_give_errors() {
    idb_support::corrupted_records_give_errors().await;
}

#[wasm_bindgen_test]
async fn a_newer_version_elsewhere_closes_this_connection() {
    idb_support::a_newer_version_elsewhere_closes_this_connection().await;
}

#[wasm_bindgen_test]
async fn a_foreign_database_is_refused() {
    idb_support::a_foreign_database_is_refused().await;
}

#[wasm_bindgen_test]
async fn a_delete_elsewhere_closes_this_connection() {
    idb_support::a_delete_elsewhere_closes_this_connection().await;
}

#[wasm_bindgen_test]
fn dom_exceptions_map_to_typed_errors() {
    idb_support::dom_exceptions_map_to_typed_errors();
}

#[wasm_bindgen_test]
async fn ops_see_earlier_deletes_of_the_batch() {
    idb_support::ops_see_earlier_deletes_of_the_batch().await;
}

#[wasm_bindgen_test]
async fn two_connections_append_to_one_chat() {
    idb_support::two_connections_append_to_one_chat().await;
}

#[wasm_bindgen_test]
async fn the_world_lock_serialises_connections() {
    idb_support::the_world_lock_serialises_connections().await;
}

#[wasm_bindgen_test]
async fn a_format_1_world_record_gets_its_first_revision() {
    idb_support::a_format_1_world_record_gets_its_first_revision().await;
}

#[wasm_bindgen_test]
async fn a_blocked_upgrade_fails_with_blocked() {
    idb_support::a_blocked_upgrade_fails_with_blocked().await;
}
