//! Ring 2: the wasm build in Node (wasm-bindgen-test-runner's default environment).
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod id_cases;
mod wasm_support;

use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(
        agent_world_wasm::bindings::version::version(),
        env!("CARGO_PKG_VERSION")
    );
}

#[wasm_bindgen_test]
fn ids_normalise_with_the_host_like_the_native_build() {
    use agent_world_wasm::core::ids::{kebab, normalize_id};
    // What every world's creation does first (the product's path is tests/js/ids.test.mjs).
    agent_world_wasm::web::clock::inject_text_ops();
    for &(name, id) in id_cases::KEBAB {
        assert_eq!(kebab(name), id, "kebab({name:?})");
    }
    for &(s, id) in id_cases::NORMALIZE_ID {
        assert_eq!(normalize_id(s), id, "normalize_id({s:?})");
    }
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
    let (chunks, text, status) =
        wasm_support::stream_scripted_reply("streamed through Node fetch").await;
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

/// Sleeps share one JS timer (src/web/timer.rs): a shorter sleep started after a longer one
/// must re-arm it earlier, dropped sleeps must not hold the others back, and a sleep started
/// after all others ended must still fire.
#[wasm_bindgen_test]
async fn sleeps_sharing_one_timer_each_end_on_time_and_in_order() {
    use agent_world_wasm::web::clock::now_ms;
    use agent_world_wasm::web::timer::sleep;
    use futures_util::future::{select, Either};
    let long = Box::pin(sleep(5_000));
    let mut dropped = Box::pin(sleep(1));
    let t0 = now_ms();
    let short = Box::pin(sleep(20));
    // Polled once, then dropped before its deadline.
    std::future::poll_fn(|cx| {
        let _ = std::future::Future::poll(dropped.as_mut(), cx);
        std::task::Poll::Ready(())
    })
    .await;
    drop(dropped);
    match select(long, short).await {
        Either::Right(((), _long)) => {}
        Either::Left(_) => panic!("the 5 s sleep ended before the 20 ms one"),
    }
    assert!(now_ms() - t0 >= 15, "the 20 ms sleep ended early");
    // Every sleep above is gone (the timer was cleared): a new one arms it again.
    sleep(5).await;
    let ends = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let run = |ms: u64| {
        let ends = ends.clone();
        async move {
            sleep(ms).await;
            ends.borrow_mut().push(ms);
        }
    };
    futures_util::future::join3(run(30), run(10), run(20)).await;
    assert_eq!(*ends.borrow(), vec![10, 20, 30]);
}

/// Ids are uuid v4 (version 4, variant 10xx), drawn from a pool refilled every 64 ids: no
/// two alike across refills.
#[wasm_bindgen_test]
fn ids_are_distinct_uuid_v4_across_pool_refills() {
    let ids: Vec<String> = (0..300)
        .map(|_| agent_world_wasm::web::clock::new_id())
        .collect();
    for id in &ids {
        assert_eq!(id.len(), 36, "{id}");
        let b = id.as_bytes();
        for (i, c) in b.iter().enumerate() {
            if matches!(i, 8 | 13 | 18 | 23) {
                assert_eq!(*c, b'-', "{id}");
            } else {
                assert!(c.is_ascii_hexdigit() && !c.is_ascii_uppercase(), "{id}");
            }
        }
        assert_eq!(b[14], b'4', "version nibble of {id}");
        assert!(
            matches!(b[19], b'8' | b'9' | b'a' | b'b'),
            "variant of {id}"
        );
    }
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len());
    assert_eq!(
        agent_world_wasm::web::clock::format_v4([0xff; 16]),
        "ffffffff-ffff-4fff-bfff-ffffffffffff"
    );
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

// The LLM transport against the mock LLM, one test per behaviour (Node).
mod transport {
    use super::wasm_support::llm_cases as cases;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    async fn every_provider_streams_a_scripted_reply() {
        cases::every_provider_streams_a_scripted_reply().await
    }
    #[wasm_bindgen_test]
    async fn reasoning_is_kept_apart_from_the_reply() {
        cases::reasoning_is_kept_apart_from_the_reply().await
    }
    #[wasm_bindgen_test]
    async fn a_transient_failure_before_output_is_retried() {
        cases::a_transient_failure_before_output_is_retried().await
    }
    #[wasm_bindgen_test]
    async fn retry_after_is_honoured() {
        cases::retry_after_is_honoured().await
    }
    #[wasm_bindgen_test]
    async fn a_bad_key_fails_at_once_with_the_status() {
        cases::a_bad_key_fails_at_once_with_the_status().await
    }
    #[wasm_bindgen_test]
    async fn retries_stop_after_three_attempts() {
        cases::retries_stop_after_three_attempts().await
    }
    #[wasm_bindgen_test]
    async fn a_stalled_stream_is_aborted_for_real() {
        cases::a_stalled_stream_is_aborted_for_real().await
    }
    #[wasm_bindgen_test]
    async fn the_total_timeout_aborts_a_slow_reply() {
        cases::the_total_timeout_aborts_a_slow_reply().await
    }
    #[wasm_bindgen_test]
    async fn cancelling_mid_stream_closes_the_connection() {
        cases::cancelling_mid_stream_closes_the_connection().await
    }
    #[wasm_bindgen_test]
    async fn a_cut_connection_after_output_is_not_retried() {
        cases::a_cut_connection_after_output_is_not_retried().await
    }
    #[wasm_bindgen_test]
    async fn a_malformed_frame_is_a_decode_error() {
        cases::a_malformed_frame_is_a_decode_error().await
    }
    #[wasm_bindgen_test]
    async fn an_unconfigured_provider_fails_before_any_request() {
        cases::an_unconfigured_provider_fails_before_any_request().await
    }
    #[wasm_bindgen_test]
    async fn an_error_event_at_the_end_of_a_stream_is_reported_at_once() {
        cases::an_error_event_at_the_end_of_a_stream_is_reported_at_once().await
    }
    #[wasm_bindgen_test]
    async fn a_json_body_answers_a_streaming_request() {
        cases::a_json_body_answers_a_streaming_request().await
    }
    #[wasm_bindgen_test]
    async fn an_empty_stream_before_any_text_is_retried() {
        cases::an_empty_stream_before_any_text_is_retried().await
    }
    #[wasm_bindgen_test]
    async fn an_illegal_header_is_an_error_not_a_throw() {
        cases::an_illegal_header_is_an_error_not_a_throw().await
    }
    #[wasm_bindgen_test]
    async fn user_info_in_a_url_is_masked_in_errors() {
        cases::user_info_in_a_url_is_masked_in_errors().await
    }
    #[wasm_bindgen_test]
    async fn tool_calls_and_their_results_round_trip() {
        cases::tool_calls_and_their_results_round_trip().await;
    }
    #[wasm_bindgen_test]
    async fn malformed_tool_arguments_arrive_verbatim() {
        cases::malformed_tool_arguments_arrive_verbatim().await;
    }
    #[wasm_bindgen_test]
    async fn a_tool_not_offered_is_never_called() {
        cases::a_tool_not_offered_is_never_called().await;
    }
    #[wasm_bindgen_test]
    async fn a_custom_provider_that_never_yields_stalls() {
        cases::a_custom_provider_that_never_yields_stalls().await
    }
    #[wasm_bindgen_test]
    async fn a_custom_provider_stalls_after_its_last_piece() {
        cases::a_custom_provider_stalls_after_its_last_piece().await
    }
    #[wasm_bindgen_test]
    async fn a_custom_provider_that_never_ends_times_out() {
        cases::a_custom_provider_that_never_ends_times_out().await
    }
    #[wasm_bindgen_test]
    async fn a_request_fetch_refuses_is_a_call_error() {
        cases::a_request_fetch_refuses_is_a_call_error().await
    }
    #[wasm_bindgen_test]
    async fn an_unreachable_server_is_a_network_error() {
        cases::an_unreachable_server_is_a_network_error().await
    }
}

#[wasm_bindgen_test]
fn llm_calls_default_to_a_120_s_total_and_30_s_stall_timeout() {
    use agent_world_wasm::web::llm_fetch::{FetchLlm, Timeouts};
    assert_eq!(
        FetchLlm::new(false).timeouts(),
        Timeouts {
            total_ms: 120_000,
            stall_ms: 30_000
        }
    );
}

// One conversation per provider against the third-party mock `@copilotkit/aimock`.
mod aimock {
    use super::wasm_support::aimock_cases as cases;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test]
    async fn every_provider_converses_with_aimock() {
        cases::every_provider_converses(&cases::PROVIDERS).await
    }
}
