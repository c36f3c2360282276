//! Shared by the wasm test suites: streaming from the local mock LLM that `make test` starts
//! (address baked in at compile time through AWW_MOCK_URL; see the Makefile).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agent_world_wasm::web::fetch::{fetch_streaming, HttpCall};

pub fn mock_url() -> &'static str {
    option_env!("AWW_MOCK_URL").unwrap_or("http://127.0.0.1:18788")
}

/// Streams an OpenAI-style completion whose reply is scripted by header, and returns the number
/// of body chunks read and the reply text reassembled from the SSE `data:` frames.
pub async fn stream_scripted_reply(reply: &str) -> (usize, String, u16) {
    let url = format!("{}/v1/chat/completions", mock_url());
    let encoded: String = js_sys::encode_uri_component(reply).into();
    let headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("authorization".to_string(), "Bearer test-key".to_string()),
        ("x-mock-reply".to_string(), encoded),
    ];
    let body = r#"{"model":"mock","messages":[{"role":"user","content":"hi"}],"stream":true}"#;
    let call = HttpCall {
        method: "POST",
        url: &url,
        headers: &headers,
        body: Some(body),
    };
    let mut bytes = Vec::new();
    let mut chunks = 0;
    let head = fetch_streaming(&call, None, &mut |_| {}, &mut |b| {
        chunks += 1;
        bytes.extend_from_slice(b);
    })
    .await
    .unwrap_or_else(|e| panic!("fetch from the mock at {url} failed: {e}"));
    let text = String::from_utf8(bytes).unwrap_or_default();
    let mut reply_text = String::new();
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if data == "[DONE]" {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
        if let Some(s) = v["choices"][0]["delta"]["content"].as_str() {
            reply_text.push_str(s);
        }
    }
    (chunks, reply_text, head.status)
}
pub mod aimock_cases;
pub mod llm_cases;

/// The third-party mock LLM (`@copilotkit/aimock`) that scripts/test.sh starts beside ours
/// (address baked in at compile time through AWW_AIMOCK_URL).
pub fn aimock_url() -> &'static str {
    option_env!("AWW_AIMOCK_URL").unwrap_or("http://127.0.0.1:4010")
}
