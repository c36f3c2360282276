//! The LLM transport's behaviour against the local mock LLM, written once and run in Node, a
//! Chromium page and a Chromium dedicated worker (each suite file calls these).
//!
//! Every case uses a fresh random `x-mock-key`, so `status-once` faults and request-log lookups
//! never see another case's (or another run's) requests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agent_world_wasm::core::vec_map::VecMap;
use std::cell::RefCell;
use std::rc::Rc;

use agent_world_wasm::core::llm::types::{
    CallSettings, ChatMessage, LlmError, LlmEvent, Role, ToolCallPart, ToolResultPart,
};
use agent_world_wasm::core::llm::{ProviderConfig, ProviderKind};
use agent_world_wasm::core::llm_client::{CancelToken, LlmClient};
use agent_world_wasm::core::tools::ToolSpec;
use agent_world_wasm::web::fetch::{fetch_streaming, HttpCall};
use agent_world_wasm::web::llm_fetch::{FetchLlm, Timeouts};

use super::mock_url;

/// Where each provider's requests go on the mock, keyed by a fresh `x-mock-key`.
pub fn config_for(kind: ProviderKind, key: &str) -> ProviderConfig {
    let mock = mock_url();
    let mut config = ProviderConfig {
        api_key: Some("test-key".into()),
        headers: VecMap::from([("x-mock-key".to_string(), key.to_string())]),
        ..Default::default()
    };
    match kind {
        ProviderKind::OpenAi | ProviderKind::Xai => config.base_url = Some(format!("{mock}/v1")),
        ProviderKind::OpenAiCompatible => {
            config.api_key = None;
            config.base_url = Some(format!("{mock}/compat/v1"));
        }
        ProviderKind::Azure => {
            config.endpoint = Some(mock.to_string());
            config.deployment = Some("gpt-test".into());
        }
        ProviderKind::Anthropic | ProviderKind::Google => config.base_url = Some(mock.to_string()),
        ProviderKind::Ollama => {
            config.api_key = None;
            config.base_url = Some(mock.to_string());
        }
        ProviderKind::Custom => {}
    }
    config
}

pub const STREAMING_PROVIDERS: [ProviderKind; 7] = [
    ProviderKind::OpenAi,
    ProviderKind::Azure,
    ProviderKind::Xai,
    ProviderKind::OpenAiCompatible,
    ProviderKind::Anthropic,
    ProviderKind::Google,
    ProviderKind::Ollama,
];

pub fn settings(kind: ProviderKind, stream: bool) -> CallSettings {
    CallSettings {
        provider: kind.as_str().to_string(),
        model: "mock-model".into(),
        temperature: Some(0.2),
        max_tokens: Some(256),
        stream,
        ..Default::default()
    }
}

pub fn messages(system: &str, user: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::System, system),
        ChatMessage::new(Role::User, user),
    ]
}

/// What one call produced.
#[derive(Debug, Default)]
pub struct Outcome {
    pub text: String,
    pub reasoning: String,
    pub text_events: usize,
    pub done: bool,
    pub finish_reason: Option<String>,
    pub tool_calls: Vec<ToolCallPart>,
    pub result: Option<Result<(), LlmError>>,
}

pub async fn call(
    llm: &FetchLlm,
    settings: &CallSettings,
    messages: Vec<ChatMessage>,
    cancel: CancelToken,
    cancel_after_first_text: bool,
) -> Outcome {
    let out = RefCell::new(Outcome::default());
    let trigger = cancel.clone();
    let mut on_event = |e: LlmEvent| {
        let mut o = out.borrow_mut();
        match e {
            LlmEvent::Text(t) => {
                o.text.push_str(&t);
                o.text_events += 1;
                if cancel_after_first_text {
                    trigger.cancel();
                }
            }
            LlmEvent::Reasoning(t) => o.reasoning.push_str(&t),
            LlmEvent::Done { finish_reason } => {
                o.done = true;
                o.finish_reason = finish_reason;
            }
            LlmEvent::ToolCall(c) => o.tool_calls.push(c),
            LlmEvent::Usage(_) | LlmEvent::Thinking(_) => {}
        }
    };
    let result = llm.call(settings, messages, &mut on_event, cancel).await;
    let mut o = out.into_inner();
    o.result = Some(result);
    o
}

fn fresh_key() -> String {
    agent_world_wasm::web::clock::new_id()
}

fn client(kind: ProviderKind, key: &str) -> FetchLlm {
    let llm = FetchLlm::new(true);
    llm.configure(kind, config_for(kind, key))
        .expect("valid config");
    llm
}

/// The mock's log of the requests made with `key`.
pub async fn mock_requests(key: &str) -> Vec<serde_json::Value> {
    let url = format!("{}/__mock/requests", mock_url());
    let call = HttpCall {
        method: "GET",
        url: &url,
        headers: &[],
        body: None,
    };
    let mut bytes = Vec::new();
    fetch_streaming(&call, None, &mut |_| {}, &mut |b| {
        bytes.extend_from_slice(b)
    })
    .await
    .unwrap();
    let all: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let list = all
        .as_array()
        .cloned()
        .or_else(|| all["requests"].as_array().cloned())
        .unwrap_or_default();
    list.into_iter()
        .filter(|r| r["headers"]["x-mock-key"].as_str() == Some(key))
        .collect()
}

/// Every provider streams a scripted reply (with a multi-byte text) into ordered text events.
pub async fn every_provider_streams_a_scripted_reply() {
    for kind in STREAMING_PROVIDERS {
        for stream in [true, false] {
            let key = fresh_key();
            let llm = client(kind, &key);
            let o = call(
                &llm,
                &settings(kind, stream),
                messages("mock-reply: héllo 世界 from the mock 🌍", "hi"),
                CancelToken::new(),
                false,
            )
            .await;
            assert_eq!(o.result, Some(Ok(())), "{kind:?} stream={stream}");
            assert_eq!(
                o.text, "héllo 世界 from the mock 🌍",
                "{kind:?} stream={stream}"
            );
            assert!(o.done, "{kind:?} stream={stream}: no Done event");
            if stream {
                assert!(
                    o.text_events > 1,
                    "{kind:?}: the reply should stream in pieces"
                );
            }
        }
    }
}

/// Reasoning deltas arrive as reasoning, never as reply text.
pub async fn reasoning_is_kept_apart_from_the_reply() {
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Google,
        ProviderKind::Ollama,
    ] {
        let key = fresh_key();
        let llm = client(kind, &key);
        let o = call(
            &llm,
            &settings(kind, true),
            messages(
                "mock-reply: the answer is 4\nmock-reasoning: two plus two",
                "2+2?",
            ),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{kind:?}");
        assert_eq!(o.text, "the answer is 4", "{kind:?}");
        assert_eq!(o.reasoning, "two plus two", "{kind:?}");
    }
}

/// A 503 before the first token is retried, and the retry succeeds: one call, two requests.
pub async fn a_transient_failure_before_output_is_retried() {
    let key = fresh_key();
    let llm = client(ProviderKind::OpenAi, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAi, true),
        messages(
            "mock-reply: second time lucky\nmock-fault: status-once:503",
            "hi",
        ),
        CancelToken::new(),
        false,
    )
    .await;
    assert_eq!(o.result, Some(Ok(())));
    assert_eq!(o.text, "second time lucky");
    assert_eq!(
        mock_requests(&key).await.len(),
        2,
        "one failed attempt and one retry"
    );
}

/// A 429 with Retry-After is retried no sooner than the server asked.
pub async fn retry_after_is_honoured() {
    let key = fresh_key();
    let llm = client(ProviderKind::Anthropic, &key);
    let t0 = agent_world_wasm::web::clock::now_ms();
    let o = call(
        &llm,
        &settings(ProviderKind::Anthropic, true),
        messages(
            "mock-reply: after the wait\nmock-fault: status-once:429:1",
            "hi",
        ),
        CancelToken::new(),
        false,
    )
    .await;
    assert_eq!(o.result, Some(Ok(())));
    assert!(
        agent_world_wasm::web::clock::now_ms() - t0 >= 950,
        "retried before Retry-After: 1"
    );
}

/// A 401 is not retried and keeps the status and the provider's message.
pub async fn a_bad_key_fails_at_once_with_the_status() {
    let key = fresh_key();
    let llm = client(ProviderKind::OpenAi, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAi, true),
        messages("mock-fault: status:401", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    match o.result {
        Some(Err(LlmError::Http {
            status: 401,
            ref body_excerpt,
            ..
        })) => {
            assert!(!body_excerpt.is_empty())
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert_eq!(mock_requests(&key).await.len(), 1, "a 401 is never retried");
}

/// Retries give up after three attempts and report the last status.
pub async fn retries_stop_after_three_attempts() {
    let key = fresh_key();
    let llm = client(ProviderKind::Ollama, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::Ollama, true),
        messages("mock-fault: status:500", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    assert!(
        matches!(o.result, Some(Err(LlmError::Http { status: 500, .. }))),
        "{:?}",
        o.result
    );
    assert_eq!(mock_requests(&key).await.len(), 3);
}

/// A stream that stops sending is aborted by the stall timeout, and the server sees the close.
pub async fn a_stalled_stream_is_aborted_for_real() {
    let key = fresh_key();
    let llm = client(ProviderKind::OpenAi, &key);
    llm.set_timeouts(Timeouts {
        total_ms: 10_000,
        stall_ms: 300,
    });
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAi, true),
        messages(
            "mock-reply: this will stall midway\nmock-fault: stall:120",
            "hi",
        ),
        CancelToken::new(),
        false,
    )
    .await;
    assert!(
        matches!(o.result, Some(Err(LlmError::Stalled { .. }))),
        "{:?}",
        o.result
    );
    assert_closed_by_client(&key).await;
}

/// A reply slower than the total timeout is aborted with `llm_timeout`.
pub async fn the_total_timeout_aborts_a_slow_reply() {
    let key = fresh_key();
    let llm = client(ProviderKind::Google, &key);
    llm.set_timeouts(Timeouts {
        total_ms: 400,
        stall_ms: 10_000,
    });
    let o = call(
        &llm,
        &settings(ProviderKind::Google, true),
        messages(
            "mock-reply: one two three four five six seven eight\nmock-fault: drip:150",
            "hi",
        ),
        CancelToken::new(),
        false,
    )
    .await;
    assert!(
        matches!(o.result, Some(Err(LlmError::Timeout { .. }))),
        "{:?}",
        o.result
    );
    assert_eq!(
        o.result
            .as_ref()
            .and_then(|r| r.as_ref().err())
            .map(LlmError::code),
        Some("llm_timeout")
    );
    assert_closed_by_client(&key).await;
}

/// Cancelling mid-stream aborts the request: the server sees the connection close and no
/// retry happens after output started.
pub async fn cancelling_mid_stream_closes_the_connection() {
    let key = fresh_key();
    let llm = client(ProviderKind::Anthropic, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::Anthropic, true),
        messages(
            "mock-reply: w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29\nmock-delay: 100",
            "hi",
        ),
        CancelToken::new(),
        true,
    )
    .await;
    assert!(
        matches!(o.result, Some(Err(LlmError::Aborted { .. }))),
        "{:?}",
        o.result
    );
    // A 3-second stream cancelled after its first piece: the server is still sending.
    assert!(!o.text.is_empty() && o.text.len() < "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29".len());
    assert_closed_by_client(&key).await;
    assert_eq!(
        mock_requests(&key).await.len(),
        1,
        "no retry after a cancel"
    );
}

/// A connection cut after output started is an error, and is not retried.
pub async fn a_cut_connection_after_output_is_not_retried() {
    let key = fresh_key();
    let llm = client(ProviderKind::OpenAi, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAi, true),
        messages(
            "mock-reply: one two three four five six seven\nmock-fault: cut:1000",
            "hi",
        ),
        CancelToken::new(),
        false,
    )
    .await;
    assert!(matches!(o.result, Some(Err(_))), "{:?}", o.result);
    assert!(!o.text.is_empty(), "some text streamed before the cut");
    assert_eq!(mock_requests(&key).await.len(), 1);
}

/// A malformed frame is a decode error that keeps an excerpt of the frame.
pub async fn a_malformed_frame_is_a_decode_error() {
    let key = fresh_key();
    let llm = client(ProviderKind::OpenAi, &key);
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAi, true),
        messages("mock-reply: fine until here\nmock-fault: malformed", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    assert!(
        matches!(o.result, Some(Err(LlmError::Decode { .. }))),
        "{:?}",
        o.result
    );
}

/// A provider with no key configured fails before any request, naming the missing field.
pub async fn an_unconfigured_provider_fails_before_any_request() {
    let llm = FetchLlm::new(true);
    let o = call(
        &llm,
        &settings(ProviderKind::Anthropic, true),
        messages("", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    let err = o.result.and_then(Result::err).expect("an error");
    assert_eq!(err.code(), "provider_not_configured");
    assert_eq!(
        err.to_string(),
        "provider 'anthropic' is not configured: missing apiKey"
    );
}

/// A refused connection is a network error that explains itself, after the retries.
pub async fn an_unreachable_server_is_a_network_error() {
    let llm = FetchLlm::new(true);
    let mut config = config_for(ProviderKind::Ollama, "unreachable");
    config.base_url = Some("http://127.0.0.1:9".into());
    llm.configure(ProviderKind::Ollama, config).unwrap();
    let o = call(
        &llm,
        &settings(ProviderKind::Ollama, true),
        messages("", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    match o.result {
        Some(Err(e @ LlmError::Network { .. })) => assert!(e.to_string().contains("ollama"), "{e}"),
        other => panic!("expected a network error, got {other:?}"),
    }
}

/// The error of a call that must have failed.
fn error_of(o: &Outcome) -> &LlmError {
    match &o.result {
        Some(Err(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A server that sends text, then an in-band error event, then ends the body (LiteLLM on an
/// upstream failure): the provider's own error arrives at once, as `<provider>: <message>`,
/// with the text kept; never a stall (the stall timeout here is 60 s: a reader that waits for
/// more would hang the test).
pub async fn an_error_event_at_the_end_of_a_stream_is_reported_at_once() {
    for (kind, expected) in [
        (
            ProviderKind::OpenAi,
            "openai: server_error: mock fault: error in stream",
        ),
        (
            ProviderKind::Azure,
            "azure: 500: mock fault: error in stream",
        ),
        (
            ProviderKind::Anthropic,
            "anthropic: api_error: mock fault: error in stream",
        ),
        (
            ProviderKind::Google,
            "google: INTERNAL: mock fault: error in stream",
        ),
        (ProviderKind::Ollama, "ollama: mock fault: error in stream"),
    ] {
        let key = fresh_key();
        let llm = client(kind, &key);
        llm.set_timeouts(Timeouts {
            total_ms: 120_000,
            stall_ms: 60_000,
        });
        let o = call(
            &llm,
            &settings(kind, true),
            messages(
                "mock-reply: first second third\nmock-fault: stream-error",
                "hi",
            ),
            CancelToken::new(),
            false,
        )
        .await;
        let err = error_of(&o);
        assert!(
            !matches!(err, LlmError::Stalled { .. }),
            "{kind:?}: {err:?}"
        );
        assert_eq!(err.code(), "llm_error", "{kind:?}");
        assert_eq!(err.to_string(), expected, "{kind:?}");
        assert_eq!(
            o.text, "first",
            "{kind:?}: the text before the error is kept"
        );
        assert_eq!(
            mock_requests(&key).await.len(),
            1,
            "{kind:?}: no retry after text"
        );
    }
}

/// A proxy that answers a streaming request with one complete JSON body: decoded as a whole
/// reply of the provider's format.
pub async fn a_json_body_answers_a_streaming_request() {
    for kind in STREAMING_PROVIDERS {
        let key = fresh_key();
        let llm = client(kind, &key);
        let o = call(
            &llm,
            &settings(kind, true),
            messages(
                "mock-reply: the whole reply at once\nmock-fault: json-body",
                "hi",
            ),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{kind:?}");
        assert_eq!(o.text, "the whole reply at once", "{kind:?}");
        assert!(o.done, "{kind:?}");
    }
}

/// A 200 whose body ends before any text (an empty stream) is retried like a cut connection.
pub async fn an_empty_stream_before_any_text_is_retried() {
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Ollama,
    ] {
        let key = fresh_key();
        let llm = client(kind, &key);
        let o = call(
            &llm,
            &settings(kind, true),
            messages(
                "mock-reply: on the second try\nmock-fault: end-once:0",
                "hi",
            ),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{kind:?}");
        assert_eq!(o.text, "on the second try", "{kind:?}");
        assert_eq!(
            mock_requests(&key).await.len(),
            2,
            "{kind:?}: one empty body, one retry"
        );
    }
}

/// A header fetch refuses (a bad name, a value with a character above U+00FF) is an error the
/// transport returns, never a JavaScript exception thrown through the engine; the value is not
/// quoted back.
pub async fn an_illegal_header_is_an_error_not_a_throw() {
    let url = format!("{}/v1/chat/completions", mock_url());
    for (name, value) in [
        ("x-api-key", "sk-SECRET\u{200b}"),
        ("X Foo", "1"),
        ("x-a", "line\r\nbreak-SECRET"),
    ] {
        let headers = vec![(name.to_string(), value.to_string())];
        let call = HttpCall {
            method: "POST",
            url: &url,
            headers: &headers,
            body: Some("{}"),
        };
        let result = fetch_streaming(&call, None, &mut |_| {}, &mut |_| {}).await;
        match result {
            Err(agent_world_wasm::web::fetch::FetchError::InvalidRequest(m)) => {
                assert!(m.contains(name), "{m}");
                assert!(!m.contains("SECRET"), "{m}");
            }
            other => panic!("{name:?}: expected an invalid request, got {other:?}"),
        }
    }
}

/// A URL that passes the settings check but that fetch refuses (a port out of range) ends the
/// call with an `llm_error` at once: no exception, no retry of a request that cannot be built.
pub async fn a_request_fetch_refuses_is_a_call_error() {
    let llm = FetchLlm::new(true);
    let mut config = config_for(ProviderKind::OpenAiCompatible, "unsendable");
    config.base_url = Some("http://127.0.0.1:99999/v1".into());
    llm.configure(ProviderKind::OpenAiCompatible, config)
        .unwrap();
    let o = call(
        &llm,
        &settings(ProviderKind::OpenAiCompatible, true),
        messages("", "hi"),
        CancelToken::new(),
        false,
    )
    .await;
    let err = error_of(&o);
    assert_eq!(err.code(), "llm_error");
    assert!(
        err.to_string()
            .starts_with("openai-compatible: the request could not be sent: "),
        "{err}"
    );
}

/// A URL with a key in its user-info (fetch refuses it, quoting the URL) fails with the
/// user-info masked.
pub async fn user_info_in_a_url_is_masked_in_errors() {
    let url = format!(
        "{}/v1/chat/completions",
        mock_url().replacen("://", "://user:sk-SECRET@", 1)
    );
    let call = HttpCall {
        method: "POST",
        url: &url,
        headers: &[],
        body: Some("{}"),
    };
    match fetch_streaming(&call, None, &mut |_| {}, &mut |_| {}).await {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains("SECRET"), "{msg}");
            assert!(msg.contains("***@127.0.0.1"), "{msg}");
        }
        Ok(head) => panic!("fetch accepted a URL with credentials: {head:?}"),
    }
}

/// A custom provider built from JavaScript source (an object with `stream`), plus the `log`
/// object its code writes to (`aborted`: its signal fired; `returned`: `return()` was called).
fn custom_provider(
    stream_body: &str,
) -> (
    agent_world_wasm::web::custom_provider::JsCustomProvider,
    wasm_bindgen::JsValue,
) {
    use wasm_bindgen::JsCast;
    let source = format!(
        "const log = {{ aborted: false, returned: false, pulls: 0 }};
         const provider = {{
           stream(request, {{ signal }}) {{
             signal.addEventListener('abort', () => {{ log.aborted = true; }});
             return {{
               [Symbol.asyncIterator]() {{ return this; }},
               next() {{ log.pulls++; {stream_body} }},
               return() {{ log.returned = true; return Promise.resolve({{ done: true }}); }},
             }};
           }},
         }};
         return [provider, log];"
    );
    let pair: js_sys::Array = js_sys::Function::new_no_args(&source)
        .call0(&wasm_bindgen::JsValue::UNDEFINED)
        .unwrap()
        .unchecked_into();
    let provider =
        agent_world_wasm::web::custom_provider::JsCustomProvider::new(pair.get(0)).unwrap();
    (provider, pair.get(1))
}

fn flag(log: &wasm_bindgen::JsValue, name: &str) -> bool {
    js_sys::Reflect::get(log, &name.into()).unwrap().is_truthy()
}

async fn call_custom(
    provider: agent_world_wasm::web::custom_provider::JsCustomProvider,
    timeouts: Timeouts,
) -> Outcome {
    let llm = FetchLlm::new(false);
    llm.set_custom(Some(Rc::new(provider)));
    llm.set_timeouts(timeouts);
    let settings = CallSettings {
        provider: "custom".into(),
        model: "local".into(),
        temperature: None,
        max_tokens: None,
        stream: true,
        ..Default::default()
    };
    call(
        &llm,
        &settings,
        messages("", "hi"),
        CancelToken::new(),
        false,
    )
    .await
}

/// A custom provider that never yields is stopped by the stall timeout: `llm_stalled`, its
/// signal aborted and its iterator's `return()` called.
pub async fn a_custom_provider_that_never_yields_stalls() {
    let (provider, log) = custom_provider("return new Promise(() => {});");
    let o = call_custom(
        provider,
        Timeouts {
            total_ms: 5_000,
            stall_ms: 200,
        },
    )
    .await;
    let err = error_of(&o);
    assert_eq!(err.code(), "llm_stalled", "{err:?}");
    assert_eq!(err.to_string(), "custom: no data for 1 s");
    assert!(
        flag(&log, "aborted"),
        "the provider's signal was not aborted"
    );
    assert!(
        flag(&log, "returned"),
        "the iterator's return() was not called"
    );
}

/// The stall timeout counts from the provider's last piece, not from the call's start: three
/// pieces 80 ms apart under a 200 ms stall timeout all arrive (the call is 240 ms old by the
/// third), then the silence after them stalls the call.
pub async fn a_custom_provider_stalls_after_its_last_piece() {
    let (provider, log) = custom_provider(
        "return log.pulls > 3 ? new Promise(() => {}) \
           : new Promise((resolve) => setTimeout(() => resolve({ done: false, value: 'piece ' }), 80));",
    );
    let o = call_custom(
        provider,
        Timeouts {
            total_ms: 5_000,
            stall_ms: 200,
        },
    )
    .await;
    let err = error_of(&o);
    assert_eq!(err.code(), "llm_stalled", "{err:?}");
    assert_eq!(o.text, "piece piece piece ");
    assert!(flag(&log, "aborted"));
    assert!(flag(&log, "returned"));
}

/// A custom provider that yields slowly forever is stopped by the total timeout, with the text
/// it produced kept by the caller.
pub async fn a_custom_provider_that_never_ends_times_out() {
    let (provider, log) = custom_provider(
        "return new Promise((resolve) => setTimeout(() => resolve({ done: false, value: 'tick ' }), 40));",
    );
    let o = call_custom(
        provider,
        Timeouts {
            total_ms: 400,
            stall_ms: 5_000,
        },
    )
    .await;
    let err = error_of(&o);
    assert_eq!(err.code(), "llm_timeout", "{err:?}");
    assert_eq!(err.to_string(), "custom: no complete reply within 1 s");
    assert!(o.text.starts_with("tick "), "{:?}", o.text);
    assert!(flag(&log, "aborted"));
    assert!(flag(&log, "returned"));
}

async fn assert_closed_by_client(key: &str) {
    // The mock notices the close asynchronously: poll its log briefly.
    for _ in 0..40 {
        let reqs = mock_requests(key).await;
        if reqs
            .iter()
            .any(|r| r["closedByClient"] == serde_json::Value::Bool(true))
        {
            return;
        }
        agent_world_wasm::web::timer::sleep(50).await;
    }
    panic!(
        "the mock never saw the client close the connection: {:?}",
        mock_requests(key).await
    );
}

// ---- Tools (spec §9) over real fetch: the codecs against the mock's tool frames.

const TOOL_SYSTEM: &str =
    "mock-tool: get_weather {\"city\":\"Oslo\",\"days\":[1,2]}\nmock-tool: get_time {\"tz\":\"Europe/Oslo\"}";

pub fn tool_spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} for the tests"),
        parameters: serde_json::from_value(serde_json::json!({"type": "object", "properties": {}}))
            .unwrap(),
    }
}

pub fn with_tools(mut s: CallSettings, names: &[&str]) -> CallSettings {
    s.tools = names.iter().map(|n| tool_spec(n)).collect();
    s
}

fn args_of(c: &ToolCallPart) -> serde_json::Value {
    serde_json::from_str(&c.arguments).unwrap_or_else(|e| {
        panic!(
            "arguments of {} are not JSON ({e}): {}",
            c.name, c.arguments
        )
    })
}

/// The finish reason each provider really sends with tool calls.
pub fn tool_finish_reason(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "tool_use",
        ProviderKind::Google => "STOP",
        ProviderKind::Ollama => "stop",
        _ => "tool_calls",
    }
}

/// The second step's input: the first step's calls, then one result per call.
pub fn history_with_results(
    system: &str,
    calls: &[ToolCallPart],
    results: &[&str],
) -> Vec<ChatMessage> {
    let mut m = messages(system, "weather and time in Oslo?");
    m.push(ChatMessage::tool_calls("", calls.to_vec()));
    for (c, r) in calls.iter().zip(results) {
        let mut entry = ChatMessage::new(Role::User, *r);
        entry.tool_result = Some(ToolResultPart {
            tool_call_id: c.id.clone(),
            tool_name: c.name.clone(),
        });
        m.push(entry);
    }
    m
}

/// Every provider, streamed and not: offered tools come back as the scripted parallel calls
/// (in order, distinct ids, arguments exact) with the provider's finish reason; a second call
/// with the results in the history gets text that includes them.
pub async fn tool_calls_and_their_results_round_trip() {
    for kind in STREAMING_PROVIDERS {
        for stream in [true, false] {
            let key = fresh_key();
            let llm = client(kind, &key);
            let s = with_tools(settings(kind, stream), &["get_weather", "get_time"]);
            let o = call(
                &llm,
                &s,
                messages(TOOL_SYSTEM, "weather and time in Oslo?"),
                CancelToken::new(),
                false,
            )
            .await;
            let what = format!("{kind:?} stream={stream}");
            assert_eq!(o.result, Some(Ok(())), "{what}");
            assert_eq!(o.text, "", "{what}: no text with the calls");
            let names: Vec<&str> = o.tool_calls.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["get_weather", "get_time"], "{what}");
            assert_eq!(
                args_of(&o.tool_calls[0]),
                serde_json::json!({"city": "Oslo", "days": [1, 2]}),
                "{what}"
            );
            assert_eq!(
                args_of(&o.tool_calls[1]),
                serde_json::json!({"tz": "Europe/Oslo"}),
                "{what}"
            );
            assert!(!o.tool_calls[0].id.is_empty(), "{what}");
            assert_ne!(o.tool_calls[0].id, o.tool_calls[1].id, "{what}");
            assert_eq!(
                o.finish_reason.as_deref(),
                Some(tool_finish_reason(kind)),
                "{what}"
            );
            // The tools really were offered in the request the mock saw.
            let sent = mock_requests(&key).await;
            assert_eq!(sent.len(), 1, "{what}");

            let history = history_with_results(
                TOOL_SYSTEM,
                &o.tool_calls,
                // Keys in sorted order: the Gemini codec re-serialises the object.
                &[r#"{"sky":"clear","temp":7}"#, r#"{"time":"10:30"}"#],
            );
            let o2 = call(&llm, &s, history, CancelToken::new(), false).await;
            assert_eq!(o2.result, Some(Ok(())), "{what}: second step");
            assert!(
                o2.tool_calls.is_empty(),
                "{what}: no calls once results are in"
            );
            assert_eq!(
                o2.text,
                r#"Tool results: get_weather: {"sky":"clear","temp":7}; get_time: {"time":"10:30"}"#,
                "{what}: the results reached the model, each under its tool's name"
            );
        }
    }
}

/// Arguments that are not JSON reach the engine verbatim (it answers them with an error), in
/// every format that can carry them: OpenAI-style and Anthropic fragments streamed, and the
/// string arguments of the others.
pub async fn malformed_tool_arguments_arrive_verbatim() {
    let raw = r#"{"city": "Os"#;
    for kind in STREAMING_PROVIDERS {
        for stream in [true, false] {
            let key = fresh_key();
            let llm = client(kind, &key);
            let s = with_tools(settings(kind, stream), &["get_weather"]);
            let o = call(
                &llm,
                &s,
                messages(&format!("mock-tool-malformed: get_weather {raw}"), "hi"),
                CancelToken::new(),
                false,
            )
            .await;
            let what = format!("{kind:?} stream={stream}");
            assert_eq!(o.result, Some(Ok(())), "{what}");
            assert_eq!(o.tool_calls.len(), 1, "{what}");
            assert_eq!(o.tool_calls[0].name, "get_weather", "{what}");
            assert_eq!(o.tool_calls[0].arguments, raw, "{what}");
        }
    }
}

/// A request that offers no tools gets no calls, whatever is scripted (the last step of a
/// reply offers none).
pub async fn a_tool_not_offered_is_never_called() {
    for kind in STREAMING_PROVIDERS {
        let key = fresh_key();
        let llm = client(kind, &key);
        let o = call(
            &llm,
            &settings(kind, true),
            messages(TOOL_SYSTEM, "hi"),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{kind:?}");
        assert!(o.tool_calls.is_empty(), "{kind:?}");
        assert_eq!(
            o.text, "mock-llm: the tools get_weather, get_time were not offered (offered: none)",
            "{kind:?}"
        );
    }
}

/// Used by suites that want them all in one test (the browser suites pay a page per test).
pub async fn all_transport_cases() {
    every_provider_streams_a_scripted_reply().await;
    reasoning_is_kept_apart_from_the_reply().await;
    a_transient_failure_before_output_is_retried().await;
    a_bad_key_fails_at_once_with_the_status().await;
    a_stalled_stream_is_aborted_for_real().await;
    cancelling_mid_stream_closes_the_connection().await;
    a_malformed_frame_is_a_decode_error().await;
    an_unconfigured_provider_fails_before_any_request().await;
    an_illegal_header_is_an_error_not_a_throw().await;
    an_error_event_at_the_end_of_a_stream_is_reported_at_once().await;
    a_json_body_answers_a_streaming_request().await;
    a_custom_provider_that_never_yields_stalls().await;
    tool_calls_and_their_results_round_trip().await;
    malformed_tool_arguments_arrive_verbatim().await;
    a_tool_not_offered_is_never_called().await;
}

pub type SharedLlm = Rc<FetchLlm>;
