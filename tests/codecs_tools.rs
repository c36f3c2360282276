//! Tools on the wire (spec §9 "Providers"): the tools offered, the tool entries of the history
//! and `reasoning` encoded per provider; streamed tool calls decoded under every split of the
//! byte stream (OpenAI-style index-keyed argument fragments of parallel calls, Anthropic
//! `tool_use` + `input_json_delta`, Gemini `functionCall`, Ollama `tool_calls`), and in
//! non-streamed bodies. The streams are written from each provider's documented format.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agent_world_wasm::core::llm::types::{
    CallSettings, ChatMessage, LlmError, LlmEvent, Role, ThinkingBlock, ToolCallPart, Usage,
};
use agent_world_wasm::core::llm::{
    decoder_for, encode_request, HttpRequest, ProviderConfig, ProviderKind, StreamDecoder,
};
use agent_world_wasm::core::model::{Reasoning, ReasoningEffort};
use agent_world_wasm::core::tools::ToolSpec;
use serde_json::{json, Value};

/// serde_json's `json!`, as the crate's own JSON value (what tool arguments, results and
/// schemas are).
macro_rules! cjson {
    ($($t:tt)+) => {
        serde_json::from_value::<agent_world_wasm::core::json::Value>(serde_json::json!($($t)+))
            .unwrap()
    };
}

// ---- encoding ----

fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::System, "You are alice."),
        ChatMessage::new(Role::User, "Weather in Oslo, and 1+1?"),
        ChatMessage::tool_calls(
            "Let me check.",
            vec![
                ToolCallPart {
                    id: "call_a".into(),
                    name: "get_weather".into(),
                    arguments: r#"{"city":"Oslo"}"#.into(),
                    signature: None,
                },
                ToolCallPart {
                    id: "call_b".into(),
                    name: "calc".into(),
                    arguments: r#"{"expr":"1+1"}"#.into(),
                    signature: None,
                },
            ],
        ),
        ChatMessage::tool_result("call_a", "get_weather", r#"{"sky":"sunny"}"#),
        ChatMessage::tool_result("call_b", "calc", "2"),
    ]
}

fn weather_spec() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Current weather".into(),
        parameters: cjson!({"type": "object", "additionalProperties": false,
            "properties": {"city": {"type": "string"},
                           "opts": {"type": "object", "additionalProperties": false,
                                    "properties": {"unit": {"type": "string"}}}},
            "required": ["city"]}),
    }
}

fn settings(provider: &str, effort: Option<ReasoningEffort>) -> CallSettings {
    CallSettings {
        provider: provider.into(),
        model: "m".into(),
        temperature: Some(0.5),
        max_tokens: None,
        stream: true,
        tools: vec![weather_spec()],
        reasoning: effort.map(|e| Reasoning {
            effort: Some(e),
            budget_tokens: None,
        }),
        ..Default::default()
    }
}

fn key() -> ProviderConfig {
    ProviderConfig {
        api_key: Some("k".into()),
        base_url: Some("http://127.0.0.1:9".into()),
        ..Default::default()
    }
}

fn body(kind: ProviderKind, s: &CallSettings) -> Value {
    let r: HttpRequest = encode_request(kind, &key(), s, &conversation(), false).unwrap();
    serde_json::from_str(&r.body).unwrap()
}

#[test]
fn openai_style_encodes_tools_calls_results_and_reasoning_effort() {
    let b = body(
        ProviderKind::OpenAi,
        &settings("openai", Some(ReasoningEffort::High)),
    );
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "function": {"name": "get_weather",
            "description": "Current weather", "parameters": weather_spec().parameters}}])
    );
    assert_eq!(b["reasoning_effort"], "high");
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "You are alice."},
            {"role": "user", "content": "Weather in Oslo, and 1+1?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "calc", "arguments": "{\"expr\":\"1+1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_a", "content": "{\"sky\":\"sunny\"}"},
            {"role": "tool", "tool_call_id": "call_b", "content": "2"},
        ])
    );
    // Compatible servers vary: no reasoning_effort; no tools when none are offered.
    let mut s = settings("openai-compatible", Some(ReasoningEffort::Low));
    s.tools.clear();
    let b = body(ProviderKind::OpenAiCompatible, &s);
    assert!(b.get("reasoning_effort").is_none() && b.get("tools").is_none());
    // A call step without text has `content: null`.
    let msgs = vec![ChatMessage::tool_calls(
        "",
        vec![ToolCallPart {
            id: "x".into(),
            name: "calc".into(),
            arguments: "{}".into(),
            signature: None,
        }],
    )];
    let r = encode_request(ProviderKind::Xai, &key(), &s, &msgs, false).unwrap();
    let b: Value = serde_json::from_str(&r.body).unwrap();
    assert!(b["messages"][0]["content"].is_null());
}

#[test]
fn anthropic_encodes_tool_use_and_tool_result_blocks_and_thinking() {
    let b = body(
        ProviderKind::Anthropic,
        &settings("anthropic", Some(ReasoningEffort::Medium)),
    );
    assert_eq!(b["system"], "You are alice.");
    assert_eq!(
        b["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo, and 1+1?"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "call_b", "name": "calc", "input": {"expr": "1+1"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "{\"sky\":\"sunny\"}"},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "2"}]},
        ])
    );
    assert_eq!(
        b["tools"],
        json!([{"name": "get_weather", "description": "Current weather",
            "input_schema": weather_spec().parameters}])
    );
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    assert!(
        b.get("temperature").is_none(),
        "the API refuses temperature with thinking"
    );
    assert_eq!(b["max_tokens"], 4096 + 4096, "room beyond the budget");
    // Without reasoning: temperature as before, no thinking.
    let b = body(ProviderKind::Anthropic, &settings("anthropic", None));
    assert_eq!(b["temperature"], 0.5);
    assert!(b.get("thinking").is_none());
}

#[test]
fn gemini_encodes_function_calls_and_responses_and_thinking_config() {
    let b = body(
        ProviderKind::Google,
        &settings("google", Some(ReasoningEffort::Low)),
    );
    assert_eq!(
        b["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Weather in Oslo, and 1+1?"}]},
            {"role": "model", "parts": [
                {"text": "Let me check."},
                {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
                {"functionCall": {"name": "calc", "args": {"expr": "1+1"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"sky": "sunny"}}},
                {"functionResponse": {"name": "calc", "response": {"result": 2}}}]},
        ])
    );
    assert_eq!(
        b["tools"],
        json!([{"functionDeclarations": [{"name": "get_weather", "description": "Current weather",
            "parameters": {"type": "object",
                "properties": {"city": {"type": "string"},
                               "opts": {"type": "object", "properties": {"unit": {"type": "string"}}}},
                "required": ["city"]}}]}]),
        "additionalProperties is not part of Gemini's schema"
    );
    assert_eq!(
        b["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 1024, "includeThoughts": true})
    );
    assert_eq!(b["systemInstruction"]["parts"][0]["text"], "You are alice.");
}

#[test]
fn ollama_encodes_tool_calls_with_object_arguments_and_ignores_reasoning() {
    let b = body(
        ProviderKind::Ollama,
        &settings("ollama", Some(ReasoningEffort::High)),
    );
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "You are alice."},
            {"role": "user", "content": "Weather in Oslo, and 1+1?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
                {"function": {"name": "calc", "arguments": {"expr": "1+1"}}}]},
            {"role": "tool", "tool_name": "get_weather", "content": "{\"sky\":\"sunny\"}"},
            {"role": "tool", "tool_name": "calc", "content": "2"},
        ])
    );
    assert_eq!(b["tools"][0]["function"]["name"], "get_weather");
    let text = b.to_string();
    assert!(!text.contains("reasoning") && !text.contains("think"));
}

// ---- decoding ----

type Outcome = (Vec<LlmEvent>, Option<LlmError>);

fn run(kind: ProviderKind, streaming: bool, chunks: &[&[u8]]) -> Outcome {
    let mut d: Box<dyn StreamDecoder> = decoder_for(kind, streaming);
    let mut events = Vec::new();
    for c in chunks {
        let (e, err) = d.push(c);
        events.extend(e);
        if err.is_some() {
            return (events, err);
        }
    }
    let (e, err) = d.close();
    events.extend(e);
    (events, err)
}

/// Whole, at every two-chunk split, and byte by byte: the same outcome each time.
fn every_split(kind: ProviderKind, streaming: bool, bytes: &[u8]) -> Vec<LlmEvent> {
    let whole = run(kind, streaming, &[bytes]);
    for i in 0..=bytes.len() {
        assert_eq!(
            run(kind, streaming, &[&bytes[..i], &bytes[i..]]),
            whole,
            "{kind}: split at byte {i}"
        );
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(
        run(kind, streaming, &singles),
        whole,
        "{kind}: byte by byte"
    );
    assert_eq!(whole.1, None, "{kind}: {:?}", whole.1);
    whole.0
}

fn call(id: &str, name: &str, arguments: &str) -> LlmEvent {
    LlmEvent::ToolCall(ToolCallPart {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
        signature: None,
    })
}

fn done(reason: &str) -> LlmEvent {
    LlmEvent::Done {
        finish_reason: Some(reason.into()),
    }
}

/// Text, then two parallel calls whose argument fragments interleave by `index`.
const OPENAI_TOOL_STREAM: &str = concat!(
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me check."},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"calc","arguments":"{\"ex"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"pr\":\"1+1\"}"}}]},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    "\n\n",
    r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20}}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

#[test]
fn openai_streamed_parallel_calls_are_assembled_by_index_under_every_split() {
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Azure,
        ProviderKind::OpenAiCompatible,
    ] {
        let events = every_split(kind, true, OPENAI_TOOL_STREAM.as_bytes());
        assert_eq!(
            events,
            vec![
                LlmEvent::Text("Let me check.".into()),
                call("call_a", "get_weather", r#"{"city":"Oslo"}"#),
                call("call_b", "calc", r#"{"expr":"1+1"}"#),
                LlmEvent::Usage(Usage {
                    input_tokens: Some(50),
                    output_tokens: Some(20)
                }),
                done("tool_calls"),
            ]
        );
    }
}

#[test]
fn openai_non_streamed_body_with_tool_calls() {
    let body = r#"{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_z","type":"function","function":{"name":"calc","arguments":"{\"expr\":\"2*3\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":4}}"#;
    let events = every_split(ProviderKind::OpenAi, false, body.as_bytes());
    assert_eq!(events[0], call("call_z", "calc", r#"{"expr":"2*3"}"#));
    assert_eq!(events.last(), Some(&done("tool_calls")));
}

const ANTHROPIC_TOOL_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":40,"output_tokens":1}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check."}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Os"}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"lo\"}"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":1}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"calc","input":{}}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":2}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

#[test]
fn anthropic_tool_use_blocks_are_assembled_from_input_json_deltas_under_every_split() {
    let events = every_split(
        ProviderKind::Anthropic,
        true,
        ANTHROPIC_TOOL_STREAM.as_bytes(),
    );
    let calls: Vec<&LlmEvent> = events
        .iter()
        .filter(|e| matches!(e, LlmEvent::ToolCall(_)))
        .collect();
    assert_eq!(
        calls,
        vec![
            &call("toolu_01", "get_weather", r#"{"city": "Oslo"}"#),
            &call("toolu_02", "calc", "{}"),
        ],
        "a tool without input gives {{}}"
    );
    assert_eq!(events[1], LlmEvent::Text("Let me check.".into()));
    assert_eq!(events.last(), Some(&done("tool_use")));
}

#[test]
fn anthropic_non_streamed_tool_use() {
    let body = r#"{"id":"msg_2","type":"message","role":"assistant","content":[{"type":"text","text":"On it."},{"type":"tool_use","id":"toolu_9","name":"calc","input":{"expr":"2*3"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7}}"#;
    let events = every_split(ProviderKind::Anthropic, false, body.as_bytes());
    assert_eq!(events[0], LlmEvent::Text("On it.".into()));
    assert_eq!(events[1], call("toolu_9", "calc", r#"{"expr":"2*3"}"#));
}

const GOOGLE_TOOL_STREAM: &str = concat!(
    r#"data: {"candidates": [{"content": {"parts": [{"text": "Let me check."}],"role": "model"},"index": 0}],"modelVersion": "gemini-2.5-flash"}"#,
    "\r\n\r\n",
    r#"data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_weather","args": {"city": "Oslo"}}},{"functionCall": {"name": "calc","args": {"expr": "1+1"}}}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": 12}}"#,
    "\r\n\r\n",
);

#[test]
fn gemini_function_calls_decode_under_every_split_with_numbered_ids() {
    let events = every_split(ProviderKind::Google, true, GOOGLE_TOOL_STREAM.as_bytes());
    assert_eq!(
        events,
        vec![
            LlmEvent::Text("Let me check.".into()),
            call("call_0", "get_weather", r#"{"city":"Oslo"}"#),
            call("call_1", "calc", r#"{"expr":"1+1"}"#),
            LlmEvent::Usage(Usage {
                input_tokens: Some(30),
                output_tokens: Some(12)
            }),
            done("STOP"),
        ]
    );
}

const OLLAMA_TOOL_STREAM: &str = concat!(
    r#"{"model":"qwen3:4b","created_at":"2025-06-01T10:00:00.000Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]},"done":false}"#,
    "\n",
    r#"{"model":"qwen3:4b","created_at":"2025-06-01T10:00:00.300Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":26,"eval_count":12}"#,
    "\n",
);

#[test]
fn ollama_tool_calls_decode_under_every_split() {
    let events = every_split(ProviderKind::Ollama, true, OLLAMA_TOOL_STREAM.as_bytes());
    assert_eq!(
        events[0],
        call("call_0", "get_weather", r#"{"city":"Oslo"}"#)
    );
    assert_eq!(events.last(), Some(&done("stop")));
}

#[test]
fn text_only_requests_are_encoded_as_before_tools() {
    // No tools offered and no tool entries: the plain shapes (string contents, text parts).
    let mut s = settings("anthropic", None);
    s.tools.clear();
    let msgs = vec![
        ChatMessage::new(Role::User, "hi"),
        ChatMessage::new(Role::Assistant, "hello"),
        ChatMessage::new(Role::User, "again"),
    ];
    let r = encode_request(ProviderKind::Anthropic, &key(), &s, &msgs, false).unwrap();
    let b: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(b["messages"][0], json!({"role": "user", "content": "hi"}));
    assert!(b.get("tools").is_none());
}

/// Arguments sent as a string (not an object: a broken model or proxy) reach the engine as
/// that text, as the OpenAI-style and Ollama decoders already do, so the engine answers the
/// model "arguments are not a JSON object" instead of running the tool with `{}`.
#[test]
fn string_arguments_of_whole_calls_are_kept_verbatim() {
    let raw = r#"{\"city\": \"Os"#; // JSON-escaped inside the bodies below
    let want = r#"{"city": "Os"#;
    let anthropic = format!(
        r#"{{"id":"msg_3","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"get_weather","input":"{raw}"}}],"stop_reason":"tool_use","usage":{{"input_tokens":5,"output_tokens":7}}}}"#
    );
    let events = every_split(ProviderKind::Anthropic, false, anthropic.as_bytes());
    assert_eq!(events[0], call("toolu_1", "get_weather", want));
    let google = format!(
        r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"get_weather","args":"{raw}"}}}}],"role":"model"}},"finishReason":"STOP","index":0}}]}}"#
    );
    let events = every_split(ProviderKind::Google, false, google.as_bytes());
    assert_eq!(events[0], call("call_0", "get_weather", want));
    let ollama = format!(
        r#"{{"model":"m","message":{{"role":"assistant","content":"","tool_calls":[{{"function":{{"name":"get_weather","arguments":"{raw}"}}}}]}},"done_reason":"stop","done":true}}"#
    );
    let events = every_split(ProviderKind::Ollama, false, ollama.as_bytes());
    assert_eq!(events[0], call("call_0", "get_weather", want));
}

// ---- signed thinking sent back with the calls (multi-step replies with reasoning on) ----

/// Extended thinking then a tool call: a `thinking` block (two `thinking_delta`s and a
/// `signature_delta`), a `redacted_thinking` block, a `tool_use` block.
const ANTHROPIC_THINKING_TOOL_STREAM: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":60,"output_tokens":1}}}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I need "}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the weather."}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h=="}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":1}"#,
    "\n\n",
    "event: content_block_start\n",
    r#"data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}"#,
    "\n\n",
    "event: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Oslo\"}"}}"#,
    "\n\n",
    "event: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":2}"#,
    "\n\n",
    "event: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":80}}"#,
    "\n\n",
    "event: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n",
);

fn signed_thinking() -> ThinkingBlock {
    ThinkingBlock::Thinking {
        thinking: "I need the weather.".into(),
        signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h==".into(),
    }
}

fn redacted_thinking() -> ThinkingBlock {
    ThinkingBlock::Redacted {
        data: "EmwKAhgBEgy3va3pzix/LafPsn4a".into(),
    }
}

#[test]
fn anthropic_thinking_blocks_are_kept_whole_with_their_signature_under_every_split() {
    let events = every_split(
        ProviderKind::Anthropic,
        true,
        ANTHROPIC_THINKING_TOOL_STREAM.as_bytes(),
    );
    assert_eq!(
        events,
        vec![
            LlmEvent::Usage(Usage {
                input_tokens: Some(60),
                output_tokens: Some(1)
            }),
            LlmEvent::Reasoning("I need ".into()),
            LlmEvent::Reasoning("the weather.".into()),
            LlmEvent::Thinking(signed_thinking()),
            LlmEvent::Thinking(redacted_thinking()),
            call("toolu_01", "get_weather", r#"{"city":"Oslo"}"#),
            LlmEvent::Usage(Usage {
                input_tokens: None,
                output_tokens: Some(80)
            }),
            done("tool_use"),
        ]
    );
    // A non-streamed reply keeps them as well.
    let body = r#"{"id":"msg_n","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"I need the weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h=="},{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Oslo"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":7}}"#;
    let events = every_split(ProviderKind::Anthropic, false, body.as_bytes());
    assert_eq!(
        events[..4],
        [
            LlmEvent::Reasoning("I need the weather.".into()),
            LlmEvent::Thinking(signed_thinking()),
            LlmEvent::Thinking(redacted_thinking()),
            call("toolu_01", "get_weather", r#"{"city":"Oslo"}"#),
        ]
    );
}

/// Step 2's context: the user's question, step 1's turn (its thinking, text and call), the
/// result. With thinking on, Anthropic refuses this request unless the assistant turn opens
/// with step 1's thinking blocks exactly as received.
fn two_step_context() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::User, "Weather in Oslo?"),
        ChatMessage {
            thinking: vec![signed_thinking(), redacted_thinking()],
            ..ChatMessage::tool_calls(
                "Let me check.",
                vec![ToolCallPart {
                    id: "toolu_01".into(),
                    name: "get_weather".into(),
                    arguments: r#"{"city":"Oslo"}"#.into(),
                    signature: Some("CiQB0e2Kb0sig".into()),
                }],
            )
        },
        ChatMessage::tool_result("toolu_01", "get_weather", r#"{"sky":"sunny"}"#),
    ]
}

#[test]
fn anthropic_sends_a_steps_thinking_blocks_first_in_its_tool_use_turn() {
    let s = settings("anthropic", Some(ReasoningEffort::Low));
    let r = encode_request(
        ProviderKind::Anthropic,
        &key(),
        &s,
        &two_step_context(),
        false,
    )
    .unwrap();
    let b: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(
        b["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I need the weather.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h=="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
             "input": {"city": "Oslo"}}]})
    );
    // Gemini's call signature means nothing to Anthropic.
    assert!(!r.body.contains("CiQB0e2Kb0sig"));
}

const GOOGLE_SIGNED_CALL_STREAM: &str = concat!(
    r#"data: {"candidates": [{"content": {"parts": [{"text": "Checking the weather.","thought": true}],"role": "model"},"index": 0}]}"#,
    "\r\n\r\n",
    r#"data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_weather","args": {"city": "Oslo"}},"thoughtSignature": "CiQB0e2Kb0sig"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 30,"candidatesTokenCount": 12}}"#,
    "\r\n\r\n",
);

#[test]
fn gemini_thought_signature_is_decoded_and_sent_back_on_the_same_part() {
    let events = every_split(
        ProviderKind::Google,
        true,
        GOOGLE_SIGNED_CALL_STREAM.as_bytes(),
    );
    let LlmEvent::ToolCall(decoded) = &events[1] else {
        panic!("expected the call second: {events:?}");
    };
    assert_eq!(
        decoded,
        &ToolCallPart {
            id: "call_0".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"Oslo"}"#.into(),
            signature: Some("CiQB0e2Kb0sig".into()),
        }
    );
    // Next step: the decoded call goes back with its signature beside its functionCall.
    let msgs = vec![
        ChatMessage::new(Role::User, "Weather in Oslo?"),
        ChatMessage::tool_calls("", vec![decoded.clone()]),
        ChatMessage::tool_result("call_0", "get_weather", r#"{"sky":"sunny"}"#),
    ];
    let s = settings("google", Some(ReasoningEffort::Low));
    let r = encode_request(ProviderKind::Google, &key(), &s, &msgs, false).unwrap();
    let b: Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(
        b["contents"][1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}},
             "thoughtSignature": "CiQB0e2Kb0sig"}]})
    );
    // Anthropic's thinking blocks mean nothing to Gemini.
    let r = encode_request(ProviderKind::Google, &key(), &s, &two_step_context(), false).unwrap();
    assert!(!r.body.contains("EqQBCgIYAhIM1gbcDa9GJwZA2b3h") && !r.body.contains("EmwKAhg"));
}

#[test]
fn openai_style_and_ollama_leave_thinking_blocks_and_signatures_out() {
    for (kind, p) in [
        (ProviderKind::OpenAi, "openai"),
        (ProviderKind::Ollama, "ollama"),
    ] {
        let s = settings(p, Some(ReasoningEffort::Low));
        let r = encode_request(kind, &key(), &s, &two_step_context(), false).unwrap();
        for secret in ["EqQBCgIYAhIM1gbcDa9GJwZA2b3h", "EmwKAhg", "CiQB0e2Kb0sig"] {
            assert!(!r.body.contains(secret), "{p}: {}", r.body);
        }
    }
}

#[test]
fn entries_without_thinking_or_signatures_serialize_as_before() {
    // Older stored step contexts (pending approvals) have neither field and still read; new
    // ones without them are written without the keys.
    let old = r#"{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"calc","arguments":"{}"}]}"#;
    let m: ChatMessage = serde_json::from_str(old).unwrap();
    assert!(m.thinking.is_empty() && m.tool_calls[0].signature.is_none());
    assert_eq!(serde_json::to_string(&m).unwrap(), old);
    let signed = serde_json::to_value(&two_step_context()[1]).unwrap();
    assert_eq!(
        signed["thinking"][0],
        json!({"type": "thinking", "thinking": "I need the weather.",
               "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h=="})
    );
    assert_eq!(signed["toolCalls"][0]["signature"], "CiQB0e2Kb0sig");
}
