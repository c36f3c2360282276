//! One conversation per provider against a mock LLM we did not write: `@copilotkit/aimock`
//! (npm), started by scripts/test.sh with `tests/aimock/fixtures.json`. Text, reasoning, two
//! parallel tool calls and the answer to their results, and a 429, so the codecs are checked
//! against another reading of each wire format than our own mock's.
//!
//! What aimock cannot do, and how the cases deal with it:
//! - Its CORS answer is `Access-Control-Allow-Headers: *`, which by the Fetch standard does not
//!   cover `Authorization`; Chromium still lets it through (checked: a page's Bearer-key POST
//!   gets 200), so the page runs every provider, but a browser that enforces the rule would
//!   refuse the OpenAI and xAI preflights.
//! - Its Ollama stream sends reasoning as `message.reasoning_content`; real Ollama sends
//!   `message.thinking` (what our codec reads), so for Ollama the case only checks that the
//!   reasoning does not leak into the reply.
//! - `Retry-After` is not in its `Access-Control-Expose-Headers`, so a page retries a 429 on
//!   its own backoff; the case checks the status that is finally reported.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use agent_world_wasm::core::vec_map::VecMap;

use agent_world_wasm::core::llm::types::LlmError;
use agent_world_wasm::core::llm::{ProviderConfig, ProviderKind};
use agent_world_wasm::core::llm_client::CancelToken;
use agent_world_wasm::web::llm_fetch::FetchLlm;

use super::aimock_url;
use super::llm_cases::{call, history_with_results, messages, settings, with_tools};

/// Every provider with a wire format of its own or a route of its own (Node and Chromium).
pub const PROVIDERS: [ProviderKind; 7] = [
    ProviderKind::OpenAi,
    ProviderKind::Xai,
    ProviderKind::OpenAiCompatible,
    ProviderKind::Azure,
    ProviderKind::Anthropic,
    ProviderKind::Google,
    ProviderKind::Ollama,
];

fn config(kind: ProviderKind) -> ProviderConfig {
    let url = aimock_url();
    let mut c = ProviderConfig {
        api_key: Some("test-key".into()),
        headers: VecMap::new(),
        ..Default::default()
    };
    match kind {
        ProviderKind::OpenAi | ProviderKind::Xai => c.base_url = Some(format!("{url}/v1")),
        ProviderKind::OpenAiCompatible => {
            c.api_key = None;
            c.base_url = Some(format!("{url}/v1"));
        }
        ProviderKind::Azure => {
            c.endpoint = Some(url.to_string());
            c.deployment = Some("gpt-test".into());
        }
        ProviderKind::Ollama => {
            c.api_key = None;
            c.base_url = Some(url.to_string());
        }
        _ => c.base_url = Some(url.to_string()),
    }
    c
}

fn client(kind: ProviderKind) -> FetchLlm {
    let llm = FetchLlm::new(true);
    llm.configure(kind, config(kind)).expect("valid config");
    llm
}

/// Text, reasoning, tool calls + results, and a 429, for one provider, streamed and not.
pub async fn conversation(kind: ProviderKind) {
    let llm = client(kind);
    for stream in [true, false] {
        let what = format!("aimock {kind:?} stream={stream}");
        let s = settings(kind, stream);

        // Text (multi-byte characters across aimock's 20-character chunks).
        let o = call(
            &llm,
            &s,
            messages("You are terse.", "aimock: say hello"),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{what}: text");
        assert_eq!(o.text, "Hello from aimock, héllo 世界.", "{what}");
        assert!(o.done, "{what}: no Done");

        // Reasoning, kept apart from the reply.
        let o = call(
            &llm,
            &s,
            messages("You are terse.", "aimock: think first"),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{what}: reasoning");
        assert_eq!(
            o.text, "The answer is 4.",
            "{what}: reasoning never leaks into the reply"
        );
        if kind != ProviderKind::Ollama {
            assert_eq!(o.reasoning, "Two plus two is four.", "{what}");
        }

        // Two parallel tool calls, then the answer once the results are in the request (the
        // fixture only matches when the last result contains `"time":"10:30"`: else aimock answers 404).
        let st = with_tools(s.clone(), &["get_weather", "get_time"]);
        let o = call(
            &llm,
            &st,
            messages("You are terse.", "aimock: weather in Oslo"),
            CancelToken::new(),
            false,
        )
        .await;
        assert_eq!(o.result, Some(Ok(())), "{what}: tool calls");
        let calls: Vec<(String, serde_json::Value)> = o
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    serde_json::from_str(&c.arguments).unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                (
                    "get_weather".to_string(),
                    serde_json::json!({"city": "Oslo", "days": [1, 2]})
                ),
                (
                    "get_time".to_string(),
                    serde_json::json!({"tz": "Europe/Oslo"})
                ),
            ],
            "{what}"
        );
        assert_ne!(o.tool_calls[0].id, o.tool_calls[1].id, "{what}");
        assert_eq!(o.text, "", "{what}");
        let mut history = history_with_results(
            "You are terse.",
            &o.tool_calls,
            &[r#"{"sky":"clear","temp":7}"#, r#"{"time":"10:30"}"#],
        );
        // history_with_results asks its own question: this fixture matches aimock's.
        history[1].content = "aimock: weather in Oslo".into();
        let o = call(&llm, &st, history, CancelToken::new(), false).await;
        assert_eq!(o.result, Some(Ok(())), "{what}: the answer to the results");
        assert_eq!(o.text, "It is 7 degrees and clear in Oslo.", "{what}");
        assert!(o.tool_calls.is_empty(), "{what}");

        // A 429 (retried like any 429, then reported with its status and message); once per
        // provider, as its retries wait for real.
        if !stream {
            continue;
        }
        let o = call(
            &llm,
            &s,
            messages("You are terse.", "aimock: rate limit me"),
            CancelToken::new(),
            false,
        )
        .await;
        match o.result {
            Some(Err(LlmError::Http {
                status: 429,
                ref body_excerpt,
                ..
            })) => {
                assert!(
                    body_excerpt.contains("Rate limited by aimock"),
                    "{what}: {body_excerpt}"
                )
            }
            other => panic!("{what}: expected HTTP 429, got {other:?}"),
        }
    }
}

pub async fn every_provider_converses(kinds: &[ProviderKind]) {
    for kind in kinds {
        conversation(*kind).await;
    }
}
