//! Provider codec tests: recorded streams (written from each provider's documented wire format)
//! decoded under every split, error payloads and HTTP error bodies, and request encoding.

#![cfg(not(target_arch = "wasm32"))] // native ring; proptest is a host dev-dependency

use agent_world_wasm::core::llm::types::{
    CallSettings, ChatMessage, LlmError, LlmEvent, Role, Usage,
};
use agent_world_wasm::core::llm::{
    decode::decoder_for_response, decode_error_response, decoder_for, decoder_for_status,
    encode_request, explain_network_error, network_error, HttpRequest, ProviderConfig,
    ProviderKind, StreamDecoder,
};
use proptest::prelude::*;
use serde_json::{json, Value};

const HELLO: &str = "h\u{e9}llo \u{4e16}\u{754c} \u{1f30d}"; // "héllo 世界 🌍"

// ---------------------------------------------------------------------------------------------
// Recorded streams
// ---------------------------------------------------------------------------------------------

/// OpenAI chat completions, `stream_options.include_usage`: role chunk, content, finish chunk,
/// usage chunk with empty choices, `[DONE]`. LF line ends.
const OPENAI_STREAM: &str = concat!(
    "data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\u{4e16}\u{754c} \u{1f30d}\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null}\n\n",
    "data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":6,\"total_tokens\":25,\"prompt_tokens_details\":{\"cached_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n\n",
    "data: [DONE]\n\n",
);

/// An OpenAI-compatible server (OpenRouter-style) streaming a reasoning model: processing
/// comments, `data:` without the space, `reasoning_content` deltas, CRLF line ends, usage in the
/// finish chunk.
const COMPAT_STREAM: &str = concat!(
    ": OPENROUTER PROCESSING\r\n\r\n",
    "data:{\"id\":\"gen-17\",\"object\":\"chat.completion.chunk\",\"created\":1732000001,\"model\":\"deepseek/deepseek-r1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":\"The user greets; \"},\"finish_reason\":null}]}\r\n\r\n",
    ": keep-alive\r\n\r\n",
    "data:{\"id\":\"gen-17\",\"object\":\"chat.completion.chunk\",\"created\":1732000001,\"model\":\"deepseek/deepseek-r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":\"answer in kind.\"},\"finish_reason\":null}]}\r\n\r\n",
    "data:{\"id\":\"gen-17\",\"object\":\"chat.completion.chunk\",\"created\":1732000001,\"model\":\"deepseek/deepseek-r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo \u{4e16}\u{754c}\"},\"finish_reason\":null}]}\r\n\r\n",
    "data:{\"id\":\"gen-17\",\"object\":\"chat.completion.chunk\",\"created\":1732000001,\"model\":\"deepseek/deepseek-r1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" \u{1f30d}\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":31,\"total_tokens\":41}}\r\n\r\n",
    "data:[DONE]\r\n\r\n",
);

/// Azure OpenAI: a first chunk with empty `choices` and `prompt_filter_results`, content filter
/// results on every chunk.
const AZURE_STREAM: &str = concat!(
    "data: {\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\",\"prompt_filter_results\":[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"}}}]}\n\n",
    "data: {\"choices\":[{\"content_filter_results\":{},\"delta\":{\"content\":\"\",\"role\":\"assistant\"},\"finish_reason\":null,\"index\":0,\"logprobs\":null}],\"created\":1732000002,\"id\":\"chatcmpl-Az\",\"model\":\"gpt-4o-2024-08-06\",\"object\":\"chat.completion.chunk\",\"system_fingerprint\":\"fp_1\",\"usage\":null}\n\n",
    "data: {\"choices\":[{\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"}},\"delta\":{\"content\":\"h\u{e9}llo \u{4e16}\u{754c} \u{1f30d}\"},\"finish_reason\":null,\"index\":0,\"logprobs\":null}],\"created\":1732000002,\"id\":\"chatcmpl-Az\",\"model\":\"gpt-4o-2024-08-06\",\"object\":\"chat.completion.chunk\",\"system_fingerprint\":\"fp_1\",\"usage\":null}\n\n",
    "data: {\"choices\":[{\"content_filter_results\":{},\"delta\":{},\"finish_reason\":\"stop\",\"index\":0,\"logprobs\":null}],\"created\":1732000002,\"id\":\"chatcmpl-Az\",\"model\":\"gpt-4o-2024-08-06\",\"object\":\"chat.completion.chunk\",\"system_fingerprint\":\"fp_1\",\"usage\":null}\n\n",
    "data: {\"choices\":[],\"created\":1732000002,\"id\":\"chatcmpl-Az\",\"model\":\"gpt-4o-2024-08-06\",\"object\":\"chat.completion.chunk\",\"system_fingerprint\":\"fp_1\",\"usage\":{\"completion_tokens\":6,\"prompt_tokens\":19,\"total_tokens\":25}}\n\n",
    "data: [DONE]\n\n",
);

/// xAI (grok-3-mini streams `reasoning_content`), OpenAI format.
const XAI_STREAM: &str = concat!(
    "data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1732000003,\"model\":\"grok-3-mini\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Short greeting.\",\"role\":\"assistant\"}}],\"system_fingerprint\":\"fp_x\"}\n\n",
    "data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1732000003,\"model\":\"grok-3-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"h\u{e9}llo \u{4e16}\u{754c} \u{1f30d}\",\"role\":\"assistant\"}}],\"system_fingerprint\":\"fp_x\"}\n\n",
    "data: {\"id\":\"x1\",\"object\":\"chat.completion.chunk\",\"created\":1732000003,\"model\":\"grok-3-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\",\"role\":\"assistant\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,\"total_tokens\":40,\"completion_tokens_details\":{\"reasoning_tokens\":23}},\"system_fingerprint\":\"fp_x\"}\n\n",
    "data: [DONE]\n\n",
);

/// Anthropic Messages with extended thinking: message_start, a thinking block (with its
/// signature delta), ping, a text block, message_delta, message_stop.
const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: ping\n",
    "data: {\"type\": \"ping\"}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"A greeting; \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"reply warmly.\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYkmzbVH8yNsdd==\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"h\u{e9}llo \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"\u{4e16}\u{754c} \u{1f30d}\"}}\n\n",
    "event: content_block_stop\n",
    "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n",
    "event: message_stop\n",
    "data: {\"type\":\"message_stop\"}\n\n",
);

/// Gemini `streamGenerateContent?alt=sse` with thoughts included; the API ends lines with CRLF.
const GOOGLE_STREAM: &str = concat!(
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"**Greeting back**\\n\\nThe user said hello.\",\"thought\": true}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,\"totalTokenCount\": 40,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 9}],\"thoughtsTokenCount\": 31},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"h\u{e9}llo \"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,\"totalTokenCount\": 42,\"thoughtsTokenCount\": 31},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n",
    "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\u{4e16}\u{754c} \u{1f30d}\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,\"candidatesTokenCount\": 5,\"totalTokenCount\": 45,\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 9}],\"thoughtsTokenCount\": 31},\"modelVersion\": \"gemini-2.5-flash\",\"responseId\": \"r1\"}\r\n\r\n",
);

/// Ollama `/api/chat` NDJSON with thinking, final line with counts.
const OLLAMA_STREAM: &str = concat!(
    "{\"model\":\"qwen3:4b\",\"created_at\":\"2025-06-01T10:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"Okay, a greeting.\"},\"done\":false}\n",
    "{\"model\":\"qwen3:4b\",\"created_at\":\"2025-06-01T10:00:00.100Z\",\"message\":{\"role\":\"assistant\",\"content\":\"h\u{e9}llo \"},\"done\":false}\n",
    "{\"model\":\"qwen3:4b\",\"created_at\":\"2025-06-01T10:00:00.200Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\u{4e16}\u{754c} \u{1f30d}\"},\"done\":false}\n",
    "{\"model\":\"qwen3:4b\",\"created_at\":\"2025-06-01T10:00:00.300Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"total_duration\":4883583458,\"load_duration\":1334875,\"prompt_eval_count\":26,\"prompt_eval_duration\":342546000,\"eval_count\":282,\"eval_duration\":4535599000}\n",
);

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

type Outcome = (Vec<LlmEvent>, Option<LlmError>);

/// Decodes `chunks` in order through both forms of the decoder API (`feed`/`finish` and the
/// lossless `push`/`close`), asserts they agree, and returns the events and the first error.
fn run(kind: ProviderKind, streaming: bool, chunks: &[&[u8]]) -> Outcome {
    let via_push = run_with(chunks, || decoder_for(kind, streaming), false);
    let via_feed = run_with(chunks, || decoder_for(kind, streaming), true);
    assert_eq!(
        via_push, via_feed,
        "{kind}: push/close and feed/finish disagree"
    );
    via_feed
}

fn run_with(
    chunks: &[&[u8]],
    make: impl Fn() -> Box<dyn StreamDecoder>,
    result_form: bool,
) -> Outcome {
    let mut d = make();
    let mut events = Vec::new();
    if result_form {
        for c in chunks {
            match d.feed(c) {
                Ok(e) => events.extend(e),
                Err(e) => return (events, Some(e)),
            }
        }
        match d.finish() {
            Ok(e) => events.extend(e),
            Err(e) => return (events, Some(e)),
        }
        // A late error is returned by the call after the events it followed.
        if let Err(e) = d.finish() {
            return (events, Some(e));
        }
        (events, None)
    } else {
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
}

/// Decodes `bytes` whole, then at every two-chunk split and one byte at a time, asserting that
/// every decode gives the same outcome; returns it.
fn every_split(kind: ProviderKind, streaming: bool, bytes: &[u8]) -> Outcome {
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
    whole
}

/// What a reply amounts to: the concatenations, the merged usage, the done reason.
#[derive(Debug, PartialEq, Eq)]
struct Summary {
    text: String,
    reasoning: String,
    usage: Usage,
    done: Option<Option<String>>,
}

fn summary(events: &[LlmEvent]) -> Summary {
    let mut s = Summary {
        text: String::new(),
        reasoning: String::new(),
        usage: Usage::default(),
        done: None,
    };
    for e in events {
        assert!(s.done.is_none(), "an event after Done: {e:?}");
        match e {
            LlmEvent::Text(t) => s.text.push_str(t),
            LlmEvent::Reasoning(r) => s.reasoning.push_str(r),
            LlmEvent::Usage(u) => {
                s.usage.input_tokens = u.input_tokens.or(s.usage.input_tokens);
                s.usage.output_tokens = u.output_tokens.or(s.usage.output_tokens);
            }
            LlmEvent::Done { finish_reason } => s.done = Some(finish_reason.clone()),
            // The kept thinking block (Anthropic) repeats the reasoning text: not shown.
            LlmEvent::Thinking(_) => {}
            LlmEvent::ToolCall(c) => panic!("a text stream decoded a tool call: {c:?}"),
        }
    }
    s
}

fn expect(text: &str, reasoning: &str, input: u64, output: u64, reason: &str) -> Summary {
    Summary {
        text: text.to_string(),
        reasoning: reasoning.to_string(),
        usage: Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
        },
        done: Some(Some(reason.to_string())),
    }
}

fn recorded() -> Vec<(ProviderKind, &'static str, Summary)> {
    vec![
        (
            ProviderKind::OpenAi,
            OPENAI_STREAM,
            expect(HELLO, "", 19, 6, "stop"),
        ),
        (
            ProviderKind::OpenAiCompatible,
            COMPAT_STREAM,
            expect(HELLO, "The user greets; answer in kind.", 10, 31, "stop"),
        ),
        (
            ProviderKind::Azure,
            AZURE_STREAM,
            expect(HELLO, "", 19, 6, "stop"),
        ),
        (
            ProviderKind::Xai,
            XAI_STREAM,
            expect(HELLO, "Short greeting.", 12, 5, "stop"),
        ),
        (
            ProviderKind::Anthropic,
            ANTHROPIC_STREAM,
            expect(HELLO, "A greeting; reply warmly.", 25, 15, "end_turn"),
        ),
        (
            ProviderKind::Google,
            GOOGLE_STREAM,
            expect(
                HELLO,
                "**Greeting back**\n\nThe user said hello.",
                9,
                36,
                "STOP",
            ),
        ),
        (
            ProviderKind::Ollama,
            OLLAMA_STREAM,
            expect(HELLO, "Okay, a greeting.", 26, 282, "stop"),
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// Streams under every split
// ---------------------------------------------------------------------------------------------

#[test]
fn recorded_streams_decode_identically_under_every_split() {
    for (kind, stream, expected) in recorded() {
        let (events, err) = every_split(kind, true, stream.as_bytes());
        assert_eq!(err, None, "{kind}");
        assert_eq!(summary(&events), expected, "{kind}");
        assert!(
            matches!(events.last(), Some(LlmEvent::Done { .. })),
            "{kind}: Done must be last"
        );
    }
}

/// OpenAI-style frames of unusual shapes: the typed fast path for plain text chunks must give
/// exactly the events the general reading gives (it hands every frame it is unsure of over).
#[test]
fn openai_frames_of_unusual_shapes() {
    let frames = [
        // Escapes in the text (an owned string, not a borrowed one).
        r#"{"choices":[{"index":0,"delta":{"content":"a\"b\n\u00e9"},"finish_reason":null}]}"#,
        // A duplicate key: the last one wins.
        r#"{"choices":[{"delta":{"content":"x","content":"y"}}]}"#,
        // `delta: null` beside a `message`: nothing (the delta is what counts).
        r#"{"choices":[{"delta":null,"message":{"content":"ignored"}}]}"#,
        // A `message` without a delta (non-streamed shape inside a stream).
        r#"{"choices":[{"message":{"content":"m"}}]}"#,
        // Text of the wrong type is no text; null and empty strings are nothing.
        r#"{"choices":[{"delta":{"content":7}}]}"#,
        r#"{"choices":[{"delta":{"content":null,"refusal":""}}]}"#,
        // Reasoning in both spellings (reasoning_content wins), then a refusal shown as text.
        r#"{"choices":[{"delta":{"reasoning_content":"r1","reasoning":"r2"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"r3","refusal":"no"}}]}"#,
        // Not an object, an empty and a null `choices`: nothing.
        r#"[{"delta":{"content":"arr"}}]"#,
        r#"{"choices":[]}"#,
        r#"{"choices":null}"#,
        // Usage on a chunk that also carries text, then the finish reason.
        r#"{"choices":[{"delta":{"content":"u"}}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#,
        // What the in-place reader decodes itself: an escaped key, a surrogate pair, skipped
        // values of every kind (nested deep), a null error.
        r#"{"choices":[{"delta":{"cont\u0065nt":"k"}}]}"#,
        r#"{"choices":[{"delta":{"content":"\ud83d\ude00"}}]}"#,
        r#"{"error":null,"choices":[{"delta":{"content":"n"}}],"x":{"d":[[[{"a":[true,false,null,-0.5,"s"]}]]]}}"#,
        // What it leaves to the general reading: an exponent, a second choice (only the first
        // counts), a duplicate `choices` (the last wins), `tool_calls: null`.
        r#"{"created":1.5e3,"choices":[{"delta":{"content":"e"}}]}"#,
        r#"{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}"#,
        r#"{"choices":[{"delta":{"content":"c"}}],"choices":[{"delta":{"content":"C"}}]}"#,
        r#"{"choices":[{"delta":{"content":"t","tool_calls":null}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"length"}],"usage":null}"#,
    ];
    let mut body = String::new();
    for f in frames {
        body.push_str(&format!("data: {f}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    let (events, err) = every_split(ProviderKind::OpenAi, true, body.as_bytes());
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            LlmEvent::Text("a\"b\n\u{e9}".into()),
            LlmEvent::Text("y".into()),
            LlmEvent::Text("m".into()),
            LlmEvent::Reasoning("r1".into()),
            LlmEvent::Reasoning("r3".into()),
            LlmEvent::Text("no".into()),
            LlmEvent::Text("u".into()),
            LlmEvent::Usage(Usage {
                input_tokens: Some(3),
                output_tokens: Some(4),
            }),
            LlmEvent::Text("k".into()),
            LlmEvent::Text("\u{1f600}".into()),
            LlmEvent::Text("n".into()),
            LlmEvent::Text("e".into()),
            LlmEvent::Text("a".into()),
            LlmEvent::Text("C".into()),
            LlmEvent::Text("t".into()),
            LlmEvent::Done {
                finish_reason: Some("length".into()),
            },
        ]
    );

    // An error payload is still an error when it rides on a chunk with text.
    let err_frame = "data: {\"choices\":[{\"delta\":{\"content\":\"t\"}}],\"error\":{\"message\":\"boom\"}}\n\n";
    let (events, err) = run(ProviderKind::OpenAi, true, &[err_frame.as_bytes()]);
    assert_eq!(events, vec![]);
    assert!(matches!(&err, Some(LlmError::Http { .. })), "{err:?}");
    assert!(format!("{err:?}").contains("boom"), "{err:?}");
}

/// OpenAI-style frames that repeat the last text frame's bytes around their content (the
/// decoder reads only the string then): whatever stands in the string's place, the events are
/// the ones the full reading gives.
#[test]
fn openai_frames_that_repeat_the_last_text_frame() {
    let frame = |middle: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"created\":17,\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{middle}}},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let mut body = String::new();
    for middle in [
        r#""A""#,
        r#""B""#,
        // Escapes, a surrogate pair, an empty string (no event), `null` and a number (no text).
        r#""a\"b\n\u00e9\ud83d\ude00""#,
        r#""""#,
        "null",
        "7",
        // Two tokens where one stood: a duplicate key, the last one wins.
        r#""x","content":"y""#,
        // Whitespace around the string: not the same bytes, read in full.
        r#" "w" "#,
        r#""D""#,
    ] {
        body.push_str(&frame(middle));
    }
    // Another id: a new template, used by the next frame.
    body.push_str("data: {\"id\":\"c2\",\"choices\":[{\"delta\":{\"content\":\"E\"}}]}\n\n");
    body.push_str("data: {\"id\":\"c2\",\"choices\":[{\"delta\":{\"content\":\"F\"}}]}\n\n");
    body.push_str("data: [DONE]\n\n");
    let (events, err) = every_split(ProviderKind::OpenAi, true, body.as_bytes());
    assert_eq!(err, None);
    let texts = |list: &[&str]| {
        list.iter()
            .map(|t| LlmEvent::Text(t.to_string()))
            .collect::<Vec<_>>()
    };
    let mut want = texts(&["A", "B", "a\"b\n\u{e9}\u{1f600}", "y", "w", "D", "E", "F"]);
    want.push(LlmEvent::Done {
        finish_reason: None,
    });
    assert_eq!(events, want);

    let bad = format!("{}{}", frame(r#""A""#), frame("\"a\u{1}\""));
    let (events, err) = run(ProviderKind::OpenAi, true, &[bad.as_bytes()]);
    assert_eq!(events, texts(&["A"]));
    assert!(matches!(&err, Some(LlmError::Decode { .. })), "{err:?}");
}

#[test]
fn events_after_done_are_ignored() {
    let mut bytes = OPENAI_STREAM.as_bytes().to_vec();
    bytes.extend_from_slice(b"data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n");
    let (events, err) = run(ProviderKind::OpenAi, true, &[&bytes]);
    assert_eq!(err, None);
    assert_eq!(summary(&events).text, HELLO);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn recorded_streams_decode_identically_under_random_chunkings(
        which in 0usize..7,
        cuts in proptest::collection::vec(any::<u16>(), 0..40),
    ) {
        let all = recorded();
        let (kind, stream, expected) = &all[which];
        let bytes = stream.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| usize::from(*c) % (bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut at = 0;
        for p in points {
            chunks.push(&bytes[at..p]);
            at = p;
        }
        chunks.push(&bytes[at..]);
        let (events, err) = run(*kind, true, &chunks);
        prop_assert_eq!(err, None);
        prop_assert_eq!(&events, &run(*kind, true, &[bytes]).0);
        prop_assert_eq!(&summary(&events), expected);
    }

    #[test]
    fn mutated_recorded_streams_never_panic_and_stay_split_invariant(
        which in 0usize..7,
        edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..6),
        cut in any::<u16>(),
    ) {
        let all = recorded();
        let (kind, stream, _) = &all[which];
        let mut bytes = stream.as_bytes().to_vec();
        for (at, b) in edits {
            let i = usize::from(at) % bytes.len();
            bytes[i] = b;
        }
        let i = usize::from(cut) % (bytes.len() + 1);
        let whole = run(*kind, true, &[&bytes]);
        prop_assert_eq!(run(*kind, true, &[&bytes[..i], &bytes[i..]]), whole);
        let _ = run(*kind, false, &[&bytes]);
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        which in 0usize..8,
        streaming in any::<bool>(),
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8),
    ) {
        let kind = ProviderKind::ALL[which];
        let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        let _ = run(kind, streaming, &slices);
    }
}

// ---------------------------------------------------------------------------------------------
// Non-streamed bodies
// ---------------------------------------------------------------------------------------------

/// One whole (non-streamed) reply per wire format, and what it decodes to.
fn whole_bodies() -> Vec<(ProviderKind, String, Summary)> {
    vec![
        (
            ProviderKind::OpenAi,
            json!({"id":"chatcmpl-B","object":"chat.completion","created":1,"model":"gpt-4o-mini",
                "choices":[{"index":0,"message":{"role":"assistant","content":HELLO,"refusal":null},
                "logprobs":null,"finish_reason":"stop"}],
                "usage":{"prompt_tokens":19,"completion_tokens":6,"total_tokens":25}})
            .to_string(),
            expect(HELLO, "", 19, 6, "stop"),
        ),
        (
            ProviderKind::OpenAiCompatible,
            json!({"choices":[{"index":0,"message":{"role":"assistant","content":HELLO,
                "reasoning_content":"think"},"finish_reason":"length"}],
                "usage":{"prompt_tokens":3,"completion_tokens":4}})
            .to_string(),
            expect(HELLO, "think", 3, 4, "length"),
        ),
        (
            ProviderKind::Anthropic,
            json!({"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5",
                "content":[{"type":"thinking","thinking":"hmm","signature":"sig"},
                           {"type":"text","text":HELLO}],
                "stop_reason":"end_turn","stop_sequence":null,
                "usage":{"input_tokens":25,"output_tokens":15}})
            .to_string(),
            expect(HELLO, "hmm", 25, 15, "end_turn"),
        ),
        (
            ProviderKind::Google,
            json!({"candidates":[{"content":{"parts":[{"text":HELLO}],"role":"model"},
                "finishReason":"STOP","index":0}],
                "usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":5,"totalTokenCount":14},
                "modelVersion":"gemini-2.5-flash"})
            .to_string(),
            expect(HELLO, "", 9, 5, "STOP"),
        ),
        (
            ProviderKind::Ollama,
            json!({"model":"llama3.2","created_at":"2025-06-01T10:00:00Z",
                "message":{"role":"assistant","content":HELLO},"done_reason":"stop","done":true,
                "prompt_eval_count":26,"eval_count":6})
            .to_string(),
            expect(HELLO, "", 26, 6, "stop"),
        ),
    ]
}

#[test]
fn non_streamed_bodies_emit_the_text_once_on_finish() {
    for (kind, body, expected) in whole_bodies() {
        let bytes = body.as_bytes();
        // Nothing is emitted before the body is complete.
        let mut d = decoder_for(kind, false);
        assert_eq!(d.feed(bytes).ok(), Some(vec![]), "{kind}");
        let (events, err) = every_split(kind, false, bytes);
        assert_eq!(err, None, "{kind}");
        assert_eq!(summary(&events), expected, "{kind}");
        let texts = events
            .iter()
            .filter(|e| matches!(e, LlmEvent::Text(_)))
            .count();
        assert_eq!(texts, 1, "{kind}: the text comes once");
    }
}

/// A proxy that answers a streaming request with one JSON document (`content-type:
/// application/json`): the decoder chosen for the response reads it as the whole reply of the
/// provider's format, under every split; a stream's content types keep the stream decoder.
#[test]
fn a_json_body_answering_a_streaming_request_is_one_whole_reply() {
    for (kind, body, expected) in whole_bodies() {
        let bytes = body.as_bytes();
        for content_type in ["application/json", "Application/JSON; charset=utf-8"] {
            let make = || decoder_for_response(kind, true, 200, "OK", Some(content_type));
            let whole = run_with(&[bytes], make, true);
            assert_eq!(whole.1, None, "{kind}");
            assert_eq!(summary(&whole.0), expected, "{kind}");
            for i in 0..=bytes.len() {
                for form in [true, false] {
                    assert_eq!(
                        run_with(&[&bytes[..i], &bytes[i..]], make, form),
                        whole,
                        "{kind}: split at {i}"
                    );
                }
            }
        }
        // Read as a stream (what happened before), the same body is no reply at all (except
        // for Ollama, whose one-line JSON is also a one-line NDJSON stream).
        if kind != ProviderKind::Ollama {
            let (events, err) = run(kind, true, &[bytes]);
            assert!(err.is_some() || summary(&events) != expected, "{kind}");
        }
    }
    // An in-band error as a whole JSON body is the provider's message.
    let make = || {
        decoder_for_response(
            ProviderKind::OpenAi,
            true,
            200,
            "OK",
            Some("application/json"),
        )
    };
    let (_, err) = run_with(
        &[br#"{"error":{"message":"upstream failed","type":"server_error"}}"#],
        make,
        true,
    );
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("openai: server_error: upstream failed")
    );
    // Streams keep streaming: SSE, NDJSON, no content type at all.
    for (kind, stream, content_type) in [
        (
            ProviderKind::OpenAi,
            OPENAI_STREAM,
            Some("text/event-stream; charset=utf-8"),
        ),
        (ProviderKind::Anthropic, ANTHROPIC_STREAM, None),
        (
            ProviderKind::Ollama,
            OLLAMA_STREAM,
            Some("application/x-ndjson"),
        ),
    ] {
        let make = || decoder_for_response(kind, true, 200, "OK", content_type);
        let (events, err) = run_with(&[stream.as_bytes()], make, true);
        assert_eq!(err, None, "{kind}");
        assert_eq!(summary(&events).text, HELLO, "{kind}");
    }
}

#[test]
fn non_streamed_body_of_the_wrong_shape_is_a_decode_error() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let (_, err) = run(kind, false, &[b"{\"hello\": 1}"]);
        assert!(
            matches!(err, Some(LlmError::Decode { .. })),
            "{kind}: {err:?}"
        );
    }
    let (_, err) = run(ProviderKind::Google, false, &[b"<html>proxy page</html>"]);
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        msg.starts_with("google: malformed response: invalid JSON"),
        "{msg}"
    );
    assert!(msg.contains("<html>proxy page</html>"), "{msg}");
}

// ---------------------------------------------------------------------------------------------
// Errors inside streams, cut streams, malformed frames
// ---------------------------------------------------------------------------------------------

fn http_parts(err: &Option<LlmError>) -> Option<(u16, String, String)> {
    match err {
        Some(LlmError::Http {
            status,
            status_text,
            body_excerpt,
            ..
        }) => Some((*status, status_text.clone(), body_excerpt.clone())),
        _ => None,
    }
}

/// Like `every_split` for a decoder constructed with a status.
fn every_split_status(kind: ProviderKind, status: u16, text: &str, bytes: &[u8]) -> Outcome {
    let go = |chunks: &[&[u8]]| {
        let make = || decoder_for_status(kind, true, status, text);
        let outcome = run_with(chunks, make, true);
        assert_eq!(
            run_with(chunks, make, false),
            outcome,
            "{kind}: forms disagree"
        );
        outcome
    };
    let whole = go(&[bytes]);
    for i in 0..=bytes.len() {
        assert_eq!(
            go(&[&bytes[..i], &bytes[i..]]),
            whole,
            "{kind}: split at {i}"
        );
    }
    whole
}

#[test]
fn openai_error_payload_mid_stream() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial \u{1f30d}\"},\"finish_reason\":null}]}\n\n",
        "data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
    );
    let (events, err) = every_split_status(ProviderKind::OpenAi, 200, "OK", stream.as_bytes());
    assert_eq!(summary(&events).text, "partial \u{1f30d}");
    assert_eq!(
        http_parts(&err),
        Some((
            200,
            "OK".to_string(),
            "server_error: The server had an error while processing your request. Sorry about that!"
                .to_string()
        ))
    );
    assert_eq!(err.as_ref().map(LlmError::code), Some("llm_error"));
    // The provider's message, not "HTTP 200 OK" (spec §5).
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("openai: server_error: The server had an error while processing your request. Sorry about that!")
    );
    // Failed before any output with a transient type: the retry policy may try again.
    assert!(err
        .as_ref()
        .is_some_and(agent_world_wasm::core::llm::is_retryable));
    // Unknown status defaults to 200.
    let (_, err) = run(ProviderKind::Xai, true, &[stream.as_bytes()]);
    assert_eq!(http_parts(&err).map(|p| p.0), Some(200));
}

#[test]
fn anthropic_error_event_is_typed() {
    let stream = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-haiku-4-5\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: error\n",
        "data: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n",
    );
    let (_, err) = every_split_status(ProviderKind::Anthropic, 200, "OK", stream.as_bytes());
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("anthropic: overloaded_error: Overloaded")
    );
}

#[test]
fn google_errors_and_blocks() {
    let err_stream = "data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded. Please try again later.\", \"status\": \"UNAVAILABLE\"}}\r\n\r\n";
    let (_, err) = every_split_status(ProviderKind::Google, 200, "OK", err_stream.as_bytes());
    assert_eq!(
        http_parts(&err).map(|p| p.2),
        Some("UNAVAILABLE: The model is overloaded. Please try again later.".to_string())
    );

    let prompt_blocked = "data: {\"promptFeedback\": {\"blockReason\": \"PROHIBITED_CONTENT\"},\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8},\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n";
    let (_, err) = every_split(ProviderKind::Google, true, prompt_blocked.as_bytes());
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("google: the reply was blocked: the prompt was blocked (PROHIBITED_CONTENT)")
    );
    assert_eq!(err.as_ref().map(LlmError::code), Some("llm_error"));
    assert!(err.and_then(|e| e.hint()).is_some());

    let reply_blocked = "data: {\"candidates\": [{\"finishReason\": \"SAFETY\",\"index\": 0,\"safetyRatings\": [{\"category\": \"HARM_CATEGORY_HARASSMENT\",\"probability\": \"HIGH\",\"blocked\": true},{\"category\": \"HARM_CATEGORY_HATE_SPEECH\",\"probability\": \"NEGLIGIBLE\"}]}]}\r\n\r\n";
    let (_, err) = every_split(ProviderKind::Google, true, reply_blocked.as_bytes());
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("google: the reply was blocked: finishReason SAFETY (HARM_CATEGORY_HARASSMENT)")
    );

    // Text already streamed: the reply just ends with the filter's reason.
    let cut_by_filter = concat!(
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Once upon\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n",
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"RECITATION\",\"index\": 0}]}\r\n\r\n",
    );
    let (events, err) = every_split(ProviderKind::Google, true, cut_by_filter.as_bytes());
    assert_eq!(err, None);
    let s = summary(&events);
    assert_eq!(s.text, "Once upon");
    assert_eq!(s.done, Some(Some("RECITATION".to_string())));
}

#[test]
fn ollama_error_line() {
    let stream = concat!(
        "{\"model\":\"llama3.2\",\"created_at\":\"2025-06-01T10:00:00Z\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n",
        "{\"error\":\"an error was encountered while running the model: unexpected EOF\"}\n",
    );
    // An empty statusText (HTTP/2) is replaced by the standard reason phrase.
    let (events, err) = every_split_status(ProviderKind::Ollama, 200, "", stream.as_bytes());
    assert_eq!(summary(&events).text, "Hel");
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("ollama: an error was encountered while running the model: unexpected EOF")
    );
}

#[test]
fn streams_without_their_terminator_are_cut() {
    let cut = |kind: ProviderKind, stream: &str| {
        let (events, err) = every_split(kind, true, stream.as_bytes());
        assert!(
            !events.iter().any(|e| matches!(e, LlmEvent::Done { .. })),
            "{kind}"
        );
        assert_eq!(
            err.as_ref().map(ToString::to_string),
            Some(format!(
                "{kind}: malformed response: stream ended before the reply was complete"
            ))
        );
        events
    };
    // Each recorded stream cut just before its terminating frame.
    let openai = &OPENAI_STREAM[..OPENAI_STREAM.find("data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1732000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0ba0d124f1\",\"choices\":[{\"index\":0,\"delta\":{},").unwrap_or(0)];
    assert_eq!(summary(&cut(ProviderKind::OpenAi, openai)).text, HELLO);
    let anthropic = &ANTHROPIC_STREAM[..ANTHROPIC_STREAM.find("event: message_delta").unwrap_or(0)];
    assert_eq!(
        summary(&cut(ProviderKind::Anthropic, anthropic)).text,
        HELLO
    );
    let google_last = GOOGLE_STREAM.rfind("data: ").unwrap_or(0);
    cut(ProviderKind::Google, &GOOGLE_STREAM[..google_last]);
    let ollama_last = OLLAMA_STREAM.trim_end().rfind('\n').unwrap_or(0) + 1;
    cut(ProviderKind::Ollama, &OLLAMA_STREAM[..ollama_last]);
    // An empty body is a cut stream too.
    cut(ProviderKind::OpenAiCompatible, "");
}

#[test]
fn lenient_terminators() {
    // A compatible server that never sends [DONE]: the finish_reason ends the reply.
    let no_done = COMPAT_STREAM.replace("data:[DONE]\r\n\r\n", "");
    let (events, err) = every_split(ProviderKind::OpenAiCompatible, true, no_done.as_bytes());
    assert_eq!(err, None);
    assert_eq!(summary(&events).done, Some(Some("stop".to_string())));
    // Anthropic cut between message_delta and message_stop: nothing of the reply was lost.
    let no_stop = &ANTHROPIC_STREAM[..ANTHROPIC_STREAM.find("event: message_stop").unwrap_or(0)];
    let (events, err) = every_split(ProviderKind::Anthropic, true, no_stop.as_bytes());
    assert_eq!(err, None);
    assert_eq!(summary(&events).done, Some(Some("end_turn".to_string())));
    // OpenRouter-style `reasoning` field.
    let s = "data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\"},\"finish_reason\":null}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"t\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let (events, _) = run(ProviderKind::OpenAiCompatible, true, &[s.as_bytes()]);
    assert_eq!(summary(&events).reasoning, "r");
}

#[test]
fn malformed_frames_are_decode_errors_with_a_short_excerpt() {
    let bad = format!(
        "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\n\n",
        "x".repeat(500)
    );
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Google,
    ] {
        let (_, err) = every_split(kind, true, bad.as_bytes());
        let Some(LlmError::Decode { provider, message }) = &err else {
            panic!("{kind}: expected Decode, got {err:?}");
        };
        assert_eq!(provider, kind.as_str());
        assert!(message.starts_with("invalid JSON ("), "{message}");
        let quoted = message.split_once("in frame: ").map(|p| p.1).unwrap_or("");
        assert!(quoted.starts_with("{\"choices\""), "{message}");
        assert_eq!(quoted.chars().count(), 200, "{message}");
        assert_eq!(err.as_ref().map(LlmError::code), Some("llm_error"));
    }
    let (_, err) = every_split(ProviderKind::Ollama, true, b"{\"message\": oops}\n");
    assert!(matches!(err, Some(LlmError::Decode { .. })), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// HTTP error responses
// ---------------------------------------------------------------------------------------------

const NOW_MS: u64 = 1_763_800_000_000; // 2025-11-22T08:26:40Z

#[test]
fn http_error_bodies_per_provider() {
    let openai_401 = r#"{
    "error": {
        "message": "Incorrect API key provided: sk-abc123. You can find your API key at https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error",
        "param": null,
        "code": "invalid_api_key"
    }
}"#;
    let e = decode_error_response(ProviderKind::OpenAi, 401, "", openai_401, None, NOW_MS);
    assert_eq!(
        e.to_string(),
        "openai: HTTP 401 Unauthorized: invalid_api_key: Incorrect API key provided: sk-abc123. \
         You can find your API key at https://platform.openai.com/account/api-keys."
    );
    assert_eq!(e.code(), "llm_error");
    assert!(e
        .hint()
        .unwrap_or_default()
        .contains("check the apiKey for provider 'openai'"));
    assert!(!agent_world_wasm::core::llm::is_retryable(&e));

    let openai_429 = r#"{"error":{"message":"Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
    let e = decode_error_response(
        ProviderKind::OpenAi,
        429,
        "Too Many Requests",
        openai_429,
        Some("20"),
        NOW_MS,
    );
    let LlmError::Http {
        status,
        retry_after_ms,
        body_excerpt,
        ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!((*status, *retry_after_ms), (429, Some(20_000)));
    assert!(body_excerpt.starts_with("rate_limit_exceeded: Rate limit reached"));
    assert!(agent_world_wasm::core::llm::is_retryable(&e));

    let azure_404 = r#"{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}"#;
    let e = decode_error_response(
        ProviderKind::Azure,
        404,
        "Not Found",
        azure_404,
        None,
        NOW_MS,
    );
    assert!(e
        .to_string()
        .starts_with("azure: HTTP 404 Not Found: DeploymentNotFound: The API deployment"));
    assert!(e.hint().unwrap_or_default().contains("deployment"));

    let anthropic_529 = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011"}"#;
    let e = decode_error_response(
        ProviderKind::Anthropic,
        529,
        "",
        anthropic_529,
        Some("Sat, 22 Nov 2025 08:27:10 GMT"),
        NOW_MS,
    );
    assert_eq!(
        e.to_string(),
        "anthropic: HTTP 529 Overloaded: overloaded_error: Overloaded"
    );
    assert!(matches!(
        e,
        LlmError::Http {
            retry_after_ms: Some(30_000),
            ..
        }
    ));
    assert!(agent_world_wasm::core::llm::is_retryable(&e));

    let anthropic_404 =
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#;
    let e = decode_error_response(
        ProviderKind::Anthropic,
        404,
        "Not Found",
        anthropic_404,
        None,
        NOW_MS,
    );
    assert_eq!(
        e.to_string(),
        "anthropic: HTTP 404 Not Found: not_found_error: model: claude-nope"
    );
    assert!(e.hint().unwrap_or_default().contains("model name"));

    let google_400 = r#"{
  "error": {
    "code": 400,
    "message": "API key not valid. Please pass a valid API key.",
    "status": "INVALID_ARGUMENT",
    "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]
  }
}"#;
    let e = decode_error_response(
        ProviderKind::Google,
        400,
        "Bad Request",
        google_400,
        None,
        NOW_MS,
    );
    assert_eq!(
        e.to_string(),
        "google: HTTP 400 Bad Request: INVALID_ARGUMENT: API key not valid. Please pass a valid API key."
    );

    let google_429_array = r#"[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]"#;
    let e = decode_error_response(
        ProviderKind::Google,
        429,
        "",
        google_429_array,
        None,
        NOW_MS,
    );
    assert_eq!(
        e.to_string(),
        "google: HTTP 429 Too Many Requests: RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota)."
    );
    assert!(e.hint().unwrap_or_default().contains("rate limiting"));

    let ollama_404 = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
    let e = decode_error_response(
        ProviderKind::Ollama,
        404,
        "Not Found",
        ollama_404,
        None,
        NOW_MS,
    );
    assert_eq!(
        e.to_string(),
        "ollama: HTTP 404 Not Found: model \"llama9\" not found, try pulling it first"
    );

    // Not JSON: the raw body, first 200 characters, on one line.
    let html = format!(
        "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>{}</body></html>",
        "\u{e9}".repeat(400)
    );
    let e = decode_error_response(
        ProviderKind::OpenAiCompatible,
        502,
        "Bad Gateway",
        &html,
        Some("soon"),
        NOW_MS,
    );
    let LlmError::Http {
        body_excerpt,
        retry_after_ms,
        ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!(body_excerpt.chars().count(), 200);
    assert!(body_excerpt.starts_with("<html> <head><title>502 Bad Gateway</title>"));
    assert_eq!(*retry_after_ms, None);
    assert!(agent_world_wasm::core::llm::is_retryable(&e));
}

#[test]
fn network_errors_explain_cors_per_provider() {
    let ollama = explain_network_error(ProviderKind::Ollama, "http://127.0.0.1:11434");
    assert!(ollama.contains("OLLAMA_ORIGINS"), "{ollama}");
    assert!(!ollama.contains("mixed content"), "{ollama}");
    let compat = network_error(ProviderKind::OpenAiCompatible, "http://192.168.1.9:1234/v1");
    let text = compat.to_string();
    assert!(text.starts_with("openai-compatible: could not reach http://192.168.1.9:1234/v1"));
    assert!(
        text.contains("CORS") && text.contains("mixed content"),
        "{text}"
    );
    assert_eq!(compat.code(), "llm_error");
    assert!(agent_world_wasm::core::llm::is_retryable(&compat));
    for kind in ProviderKind::ALL {
        assert!(!explain_network_error(kind, "https://x.test").is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Request encoding
// ---------------------------------------------------------------------------------------------

fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(Role::System, "You are alice."),
        ChatMessage::new(Role::User, "@alice hi"),
        ChatMessage::new(Role::User, "bob: @alice and me"),
        ChatMessage::new(Role::Assistant, "Hello both."),
        ChatMessage::new(Role::User, HELLO),
    ]
}

fn settings(provider: &str, model: &str, stream: bool) -> CallSettings {
    CallSettings {
        provider: provider.to_string(),
        model: model.to_string(),
        temperature: Some(0.5),
        max_tokens: Some(256),
        stream,
        ..Default::default()
    }
}

fn key(k: &str) -> ProviderConfig {
    ProviderConfig {
        api_key: Some(k.to_string()),
        ..Default::default()
    }
}

fn body(r: &HttpRequest) -> Value {
    serde_json::from_str(&r.body).unwrap_or(Value::Null)
}

fn openai_messages() -> Value {
    json!([
        {"role": "system", "content": "You are alice."},
        {"role": "user", "content": "@alice hi"},
        {"role": "user", "content": "bob: @alice and me"},
        {"role": "assistant", "content": "Hello both."},
        {"role": "user", "content": HELLO},
    ])
}

fn encode(
    kind: ProviderKind,
    cfg: &ProviderConfig,
    s: &CallSettings,
    browser: bool,
) -> HttpRequest {
    match encode_request(kind, cfg, s, &conversation(), browser) {
        Ok(r) => r,
        Err(e) => panic!("{kind}: {e}"),
    }
}

#[test]
fn encodes_openai_and_xai() {
    let r = encode(
        ProviderKind::OpenAi,
        &key("sk-test"),
        &settings("openai", "gpt-4o-mini", true),
        true,
    );
    assert_eq!(r.method, "POST");
    assert_eq!(r.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        body(&r),
        json!({
            "model": "gpt-4o-mini",
            "messages": openai_messages(),
            "stream": true,
            "temperature": 0.5,
            "max_completion_tokens": 256,
            "stream_options": {"include_usage": true},
        })
    );

    let mut s = settings("xai", "grok-4", false);
    s.temperature = None;
    s.max_tokens = None;
    let r = encode(ProviderKind::Xai, &key("xai-k"), &s, false);
    assert_eq!(r.url, "https://api.x.ai/v1/chat/completions");
    assert_eq!(
        body(&r),
        json!({"model": "grok-4", "messages": openai_messages(), "stream": false})
    );
}

#[test]
fn encodes_openai_compatible_and_azure() {
    let cfg = ProviderConfig {
        base_url: Some("http://127.0.0.1:1234/v1/".to_string()),
        ..Default::default()
    };
    let r = encode(
        ProviderKind::OpenAiCompatible,
        &cfg,
        &settings("openai-compatible", "qwen/qwen3-8b", true),
        true,
    );
    assert_eq!(r.url, "http://127.0.0.1:1234/v1/chat/completions");
    assert_eq!(r.header("authorization"), None);
    assert_eq!(body(&r)["max_tokens"], json!(256));
    let with_key = ProviderConfig {
        api_key: Some("lm-key".to_string()),
        ..cfg.clone()
    };
    let s = settings("openai-compatible", "m", false);
    let r2 = encode(ProviderKind::OpenAiCompatible, &with_key, &s, true);
    assert_eq!(r2.header("authorization"), Some("Bearer lm-key"));
    assert_eq!(body(&r).get("max_completion_tokens"), None);
    assert_eq!(body(&r)["model"], json!("qwen/qwen3-8b"));

    let cfg = ProviderConfig {
        api_key: Some("az-key".to_string()),
        endpoint: Some("https://my-res.openai.azure.com/".to_string()),
        deployment: Some("gpt-4o prod".to_string()),
        ..Default::default()
    };
    let r = encode(
        ProviderKind::Azure,
        &cfg,
        &settings("azure", "", true),
        true,
    );
    assert_eq!(
        r.url,
        "https://my-res.openai.azure.com/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(r.header("api-key"), Some("az-key"));
    // baseUrl (a proxy or a mock) replaces the endpoint; apiVersion is configurable.
    let proxied = ProviderConfig {
        base_url: Some("http://127.0.0.1:9000".to_string()),
        api_version: Some("2025-04-01-preview".to_string()),
        ..cfg.clone()
    };
    let r2 = encode(
        ProviderKind::Azure,
        &proxied,
        &settings("azure", "", true),
        true,
    );
    assert_eq!(
        r2.url,
        "http://127.0.0.1:9000/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2025-04-01-preview"
    );
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        body(&r),
        json!({
            "messages": openai_messages(),
            "stream": true,
            "temperature": 0.5,
            "max_completion_tokens": 256,
            "stream_options": {"include_usage": true},
        })
    );
}

#[test]
fn encodes_anthropic_with_merged_roles_and_the_browser_header() {
    let s = settings("anthropic", "claude-sonnet-4-5", true);
    let r = encode(ProviderKind::Anthropic, &key("sk-ant"), &s, true);
    assert_eq!(r.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("sk-ant"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        r.header("anthropic-dangerous-direct-browser-access"),
        Some("true")
    );
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        body(&r),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 256,
            "system": "You are alice.",
            "messages": [
                {"role": "user", "content": "@alice hi\n\nbob: @alice and me"},
                {"role": "assistant", "content": "Hello both."},
                {"role": "user", "content": HELLO},
            ],
            "stream": true,
            "temperature": 0.5,
        })
    );
    // Not from a browser: no opt-in header. No maxTokens: the documented default.
    let mut s = s;
    s.max_tokens = None;
    let r = encode(ProviderKind::Anthropic, &key("sk-ant"), &s, false);
    assert_eq!(r.header("anthropic-dangerous-direct-browser-access"), None);
    assert_eq!(body(&r)["max_tokens"], json!(4096));
    // A conversation that opens with the assistant gets an opening user turn.
    let msgs = [
        ChatMessage::new(Role::Assistant, "I spoke first"),
        ChatMessage::new(Role::User, "ok"),
    ];
    let r = encode_request(ProviderKind::Anthropic, &key("k"), &s, &msgs, false);
    let first_role = r.map(|r| body(&r)["messages"][0]["role"].clone()).ok();
    assert_eq!(first_role, Some(json!("user")));
}

#[test]
fn encodes_google_with_model_role_and_system_instruction() {
    let r = encode(
        ProviderKind::Google,
        &key("g-key"),
        &settings("google", "gemini-2.5-flash", true),
        true,
    );
    assert_eq!(
        r.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(r.header("x-goog-api-key"), Some("g-key"));
    assert_eq!(
        body(&r),
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "@alice hi\n\nbob: @alice and me"}]},
                {"role": "model", "parts": [{"text": "Hello both."}]},
                {"role": "user", "parts": [{"text": HELLO}]},
            ],
            "systemInstruction": {"parts": [{"text": "You are alice."}]},
            "generationConfig": {"temperature": 0.5, "maxOutputTokens": 256},
        })
    );
    let mut s = settings("google", "models/gemini-2.5-pro", false);
    s.temperature = None;
    s.max_tokens = None;
    let cfg = ProviderConfig {
        api_key: Some("g".into()),
        base_url: Some("http://127.0.0.1:8787".into()),
        ..Default::default()
    };
    let r = encode(ProviderKind::Google, &cfg, &s, false);
    assert_eq!(
        r.url,
        "http://127.0.0.1:8787/v1beta/models/gemini-2.5-pro:generateContent"
    );
    assert_eq!(body(&r).get("generationConfig"), None);
}

#[test]
fn encodes_ollama() {
    let r = encode(
        ProviderKind::Ollama,
        &ProviderConfig::default(),
        &settings("ollama", "llama3.2", true),
        true,
    );
    assert_eq!(r.url, "http://127.0.0.1:11434/api/chat");
    assert_eq!(r.header("authorization"), None);
    let behind_proxy = ProviderConfig {
        api_key: Some("ol-key".to_string()),
        base_url: Some("https://ollama.example.test/".to_string()),
        ..Default::default()
    };
    let r2 = encode(
        ProviderKind::Ollama,
        &behind_proxy,
        &settings("ollama", "m", false),
        true,
    );
    assert_eq!(r2.url, "https://ollama.example.test/api/chat");
    assert_eq!(r2.header("authorization"), Some("Bearer ol-key"));
    assert_eq!(
        body(&r),
        json!({
            "model": "llama3.2",
            "messages": openai_messages(),
            "stream": true,
            "options": {"temperature": 0.5, "num_predict": 256},
        })
    );
}

#[test]
fn config_headers_come_last_and_override() {
    let mut cfg = key("sk-1");
    cfg.headers.insert("X-Title".into(), "agent world".into());
    cfg.headers
        .insert("Authorization".into(), "Bearer proxy-token".into());
    let r = encode(
        ProviderKind::OpenAi,
        &cfg,
        &settings("openai", "gpt-4o", true),
        true,
    );
    assert_eq!(r.header("authorization"), Some("Bearer proxy-token"));
    assert_eq!(
        r.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("authorization"))
            .count(),
        1
    );
    assert_eq!(r.headers.last().map(|(n, _)| n.as_str()), Some("x-title"));
    let shown = format!("{r:?}");
    assert!(
        !shown.contains("proxy-token") && !shown.contains("sk-1"),
        "{shown}"
    );
}

#[test]
fn encoding_refuses_unconfigured_providers_and_custom() {
    let s = settings("anthropic", "claude-haiku-4-5", true);
    let err = encode_request(
        ProviderKind::Anthropic,
        &ProviderConfig::default(),
        &s,
        &[],
        true,
    );
    let err = err.err();
    assert_eq!(
        err.as_ref().map(ToString::to_string).as_deref(),
        Some("provider 'anthropic' is not configured: missing apiKey")
    );
    assert_eq!(err.map(|e| e.code()), Some("provider_not_configured"));
    let no_model = settings("openai", " ", true);
    let err = encode_request(ProviderKind::OpenAi, &key("k"), &no_model, &[], true).err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("provider 'openai' is not configured: missing model")
    );
    let err = encode_request(
        ProviderKind::Custom,
        &ProviderConfig::default(),
        &s,
        &[],
        true,
    );
    assert!(matches!(err, Err(LlmError::Custom { .. })));
}

#[test]
fn debug_of_config_and_request_never_shows_the_key() {
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Google,
        ProviderKind::Xai,
    ] {
        let cfg = key("sk-SECRET-42");
        let r = encode(kind, &cfg, &settings(kind.as_str(), "m", true), true);
        assert!(!format!("{r:?}").contains("SECRET"), "{kind}");
        assert!(!format!("{cfg:?}").contains("SECRET"), "{kind}");
    }
}
