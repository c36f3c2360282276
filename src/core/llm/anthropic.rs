//! The Anthropic Messages API wire format.
//!
//! Request: `POST {base}/v1/messages` with `x-api-key`, `anthropic-version: 2023-06-01`
//! (the current and only stable version of the Messages API), and, from a browser or worker,
//! `anthropic-dangerous-direct-browser-access: true` (without it the API refuses CORS).
//! System entries go to the top-level `system` field; turns must alternate and open with
//! `user` (see `wire::alternate`). `max_tokens` is required by the API: when the call sets
//! none, [`DEFAULT_MAX_TOKENS`] is sent.
//!
//! Stream: SSE with named events: `message_start` (input usage), `content_block_start`,
//! `content_block_delta` (`text_delta` → text, `thinking_delta` → reasoning; a `thinking` or
//! `redacted_thinking` block is also kept whole, its `signature_delta`s included, and emitted
//! at its `content_block_stop` as [`LlmEvent::Thinking`] to go back with the step's tool calls),
//! `tool_use` blocks with `input_json_delta` fragments (a complete tool call at their
//! `content_block_stop`, see `tool_codec`), `content_block_stop`, `message_delta` (stop reason, output usage),
//! `message_stop`, `ping` (ignored), `error` (`{"type":"error","error":{"type":
//! "overloaded_error","message":"Overloaded"}}` → `Http` with the response's status and
//! `overloaded_error: Overloaded` as excerpt). Unknown event types are ignored, as Anthropic's
//! versioning policy asks.
//!
//! End-of-stream rule: `message_stop` ends the reply; a stream that ends after a
//! `message_delta` with a `stop_reason` but before `message_stop` lost nothing of the text and
//! is accepted; anything shorter was cut: `Decode` error.

use crate::core::json::{Map, Value};

use crate::core::json_write::json_value;

use super::errors::excerpt;
use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::tool_codec::{self, AnthropicCalls};
use super::types::{CallSettings, ChatMessage, LlmError, LlmEvent, Usage};
use super::wire::{
    alternate, count_of, json_post, put, set, str_of, temperature, Codec, Ctx, FrameHandler,
    TurnShape, Wire,
};

/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` sent when the call does not set one (the API requires the field). 4096 is
/// accepted by every current Claude model and is ample for a chat turn.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// This provider's entry in the codec table (`codecs.rs`).
pub(crate) const CODEC: Codec = Codec {
    encode,
    decoder: |ctx| Box::new(Handler::new(ctx)),
    wire: Wire::Sse,
};

/// Messages turns: `{role, content}`, `content` the text, or with tool entries the blocks.
const TURNS: TurnShape = TurnShape {
    assistant: "assistant",
    blocks: "content",
    text: tool_codec::anthropic_text,
    plain: Value::String,
    result: tool_codec::anthropic_result,
    call: tool_codec::anthropic_use,
    thinking: Some(tool_codec::anthropic_thinking_block),
};

pub(crate) fn encode(
    _kind: ProviderKind,
    base: &str,
    config: &ProviderConfig,
    settings: &CallSettings,
    messages: &[ChatMessage],
    browser_like: bool,
) -> HttpRequest {
    let (system, turns) = alternate(messages, &TURNS);
    let thinking = tool_codec::anthropic_thinking_budget(settings.reasoning.as_ref());
    let max_tokens = match (settings.max_tokens, thinking) {
        (Some(m), _) => m,
        // The API needs room for the answer beyond the thinking budget.
        (None, Some(budget)) => DEFAULT_MAX_TOKENS.max(budget.saturating_add(DEFAULT_MAX_TOKENS)),
        (None, None) => DEFAULT_MAX_TOKENS,
    };
    let mut body = Map::new();
    set(&mut body, "model", Value::from(settings.model.trim()));
    set(&mut body, "max_tokens", Value::from(max_tokens));
    put(&mut body, "system", system);
    set(&mut body, "messages", Value::Array(turns));
    set(&mut body, "stream", Value::Bool(settings.stream));
    if !settings.tools.is_empty() {
        set(
            &mut body,
            "tools",
            tool_codec::anthropic_tools(&settings.tools),
        );
    }
    match thinking {
        Some(budget) => {
            set(
                &mut body,
                "thinking",
                json_value!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        None => put(&mut body, "temperature", temperature(settings)),
    }

    let mut headers = vec![
        (
            "x-api-key",
            config.api_key().unwrap_or_default().to_string(),
        ),
        ("anthropic-version", ANTHROPIC_VERSION.to_string()),
    ];
    if browser_like {
        headers.push((
            "anthropic-dangerous-direct-browser-access",
            "true".to_string(),
        ));
    }
    json_post(format!("{base}/v1/messages"), headers, &Value::Object(body))
}

/// Frames of a Messages stream.
pub(crate) struct Handler {
    ctx: Ctx,
    stop_reason: Option<String>,
    /// `tool_use` blocks being streamed (complete at `content_block_stop`).
    calls: AnthropicCalls,
}

impl Handler {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Self {
            ctx,
            stop_reason: None,
            calls: AnthropicCalls::default(),
        }
    }
}

fn usage(u: &Value) -> Option<LlmEvent> {
    let usage = Usage {
        input_tokens: count_of(u.get("input_tokens")),
        output_tokens: count_of(u.get("output_tokens")),
    };
    (usage != Usage::default()).then_some(LlmEvent::Usage(usage))
}

/// The `index` of a content block event (0 when missing).
fn block_index(v: &Value) -> u64 {
    v.get("index").and_then(Value::as_u64).unwrap_or(0)
}

/// A content block's text (or thinking), as an event.
fn block_event(block: &Value) -> Option<LlmEvent> {
    match block.get("type").and_then(Value::as_str)? {
        "text" | "text_delta" => str_of(block.get("text")).map(|t| LlmEvent::Text(t.into())),
        "thinking" | "thinking_delta" => {
            str_of(block.get("thinking")).map(|t| LlmEvent::Reasoning(t.into()))
        }
        _ => None,
    }
}

impl FrameHandler for Handler {
    fn frame(&mut self, event: &str, data: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let v = self.ctx.parse(data)?;
        // The payload's `type` is authoritative; the SSE event name is a fallback.
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event);
        match kind {
            "message_start" => {
                if let Some(e) = v.pointer("/message/usage").and_then(usage) {
                    out.push(e);
                }
            }
            "content_block_start" => {
                if let Some(block) = v.get("content_block") {
                    if let Some(e) = block_event(block) {
                        out.push(e);
                    }
                    self.calls.start(block_index(&v), block);
                }
            }
            "content_block_delta" => {
                if let Some(delta) = v.get("delta") {
                    if let Some(e) = block_event(delta) {
                        out.push(e);
                    }
                    self.calls.delta(block_index(&v), delta);
                }
            }
            "content_block_stop" => self.calls.stop(block_index(&v), out),
            "message_delta" => {
                if let Some(r) = str_of(v.pointer("/delta/stop_reason")) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(e) = v.get("usage").and_then(usage) {
                    out.push(e);
                }
            }
            "message_stop" => out.push(LlmEvent::Done {
                finish_reason: self.stop_reason.take(),
            }),
            "error" => return Err(self.ctx.payload_error(&v, data)),
            _ => {} // ping, and event types added after this was written
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        self.ctx.finish(self.stop_reason.take(), out)
    }

    /// A non-streamed reply: `{"type":"message","content":[...],"stop_reason","usage"}`.
    fn body(&mut self, body: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let v = self.ctx.parse(body.trim())?;
        if v.get("type").and_then(Value::as_str) == Some("error") || v.get("error").is_some() {
            return Err(self.ctx.payload_error(&v, body));
        }
        let Some(blocks) = v.get("content").and_then(Value::as_array) else {
            return Err(self.ctx.decode_error(format!(
                "expected a message with `content`, got: {}",
                excerpt(body)
            )));
        };
        // Each block as the stream delivers it whole: its start, then its stop.
        for (index, block) in (0u64..).zip(blocks) {
            if let Some(e) = block_event(block) {
                out.push(e);
            }
            self.calls.start(index, block);
            self.calls.stop(index, out);
        }
        if let Some(e) = v.get("usage").and_then(usage) {
            out.push(e);
        }
        out.push(LlmEvent::Done {
            finish_reason: str_of(v.get("stop_reason")).map(str::to_string),
        });
        Ok(())
    }
}
