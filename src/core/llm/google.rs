//! The Gemini API (Google AI Studio, `generativelanguage.googleapis.com`) wire format.
//!
//! Request: `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` (or
//! `:generateContent` when not streaming) with `x-goog-api-key`. System entries go to
//! `systemInstruction`; turns use roles `user`/`model`, alternate and open with `user` (see
//! `wire::alternate`); `generationConfig` holds `temperature` and `maxOutputTokens` when set.
//! A model given as `models/<name>` is accepted as well as `<name>`.
//!
//! Stream: SSE, each `data:` a whole `GenerateContentResponse`:
//! `candidates[0].content.parts[].text` is text, or reasoning when the part has
//! `thought: true`; `usageMetadata` gives `promptTokenCount` as input and the sum of
//! `candidatesTokenCount` and `thoughtsTokenCount` as output (what is billed as output);
//! `finishReason` ends the reply.
//! A blocked reply is an error, not an empty success: `promptFeedback.blockReason`, or a
//! finish reason of SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST or SPII while no text
//! was produced, → `LlmError::Blocked` naming the reason (and the safety categories that
//! tripped). If text had already streamed, the reply just ends with that finish reason.
//!
//! End-of-stream rule: Gemini sends no terminator besides `finishReason`, so `Done` is emitted
//! when the body ends after one; a body that ends without it was cut: `Decode` error.

use crate::core::json::{Map, Value};

use crate::core::json_write::json_value;

use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::tool_codec;
use super::types::{CallSettings, ChatMessage, LlmError, LlmEvent, Usage};
use super::wire::{
    alternate, count_of, encode_component, json_post, put, set, str_of, temperature, Codec, Ctx,
    FrameHandler, TurnShape, Wire,
};

/// Finish reasons meaning "the reply was withheld", not "the reply is complete".
const BLOCKING_REASONS: [&str; 6] = [
    "SAFETY",
    "RECITATION",
    "PROHIBITED_CONTENT",
    "BLOCKLIST",
    "SPII",
    "IMAGE_SAFETY",
];

/// This provider's entry in the codec table (`codecs.rs`).
pub(crate) const CODEC: Codec = Codec {
    encode,
    decoder: |ctx| Box::new(Handler::new(ctx)),
    wire: Wire::Sse,
};

/// Gemini contents: `{role, parts}` with roles `user` / `model`; without tool entries, one
/// text part per turn.
const TURNS: TurnShape = TurnShape {
    assistant: "model",
    blocks: "parts",
    text: tool_codec::gemini_text,
    plain: |text| Value::Array(vec![tool_codec::gemini_text(&text)]),
    result: tool_codec::gemini_result,
    call: tool_codec::gemini_call_part,
    thinking: None,
};

pub(crate) fn encode(
    _kind: ProviderKind,
    base: &str,
    config: &ProviderConfig,
    settings: &CallSettings,
    messages: &[ChatMessage],
    _browser_like: bool,
) -> HttpRequest {
    let (system, contents) = alternate(messages, &TURNS);
    let mut body = Map::new();
    set(&mut body, "contents", Value::Array(contents));
    if !settings.tools.is_empty() {
        set(
            &mut body,
            "tools",
            tool_codec::gemini_tools(&settings.tools),
        );
    }
    if let Some(system) = system {
        set(
            &mut body,
            "systemInstruction",
            json_value!({ "parts": [{ "text": system }] }),
        );
    }
    let mut generation = Map::new();
    put(&mut generation, "temperature", temperature(settings));
    put(&mut generation, "maxOutputTokens", settings.max_tokens);
    put(
        &mut generation,
        "thinkingConfig",
        tool_codec::gemini_thinking(settings.reasoning.as_ref()),
    );
    if !generation.is_empty() {
        set(&mut body, "generationConfig", Value::Object(generation));
    }

    let model = settings.model.trim();
    let model = model.strip_prefix("models/").unwrap_or(model);
    let method = if settings.stream {
        "streamGenerateContent?alt=sse"
    } else {
        "generateContent"
    };
    let url = format!("{base}/v1beta/models/{}:{method}", encode_component(model));
    let headers = vec![(
        "x-goog-api-key",
        config.api_key().unwrap_or_default().to_string(),
    )];
    json_post(url, headers, &Value::Object(body))
}

/// Frames of a Gemini stream (or the one response of a non-streamed call).
pub(crate) struct Handler {
    ctx: Ctx,
    finish_reason: Option<String>,
    produced_text: bool,
    /// Tool calls so far (they arrive whole; this numbers the ones without an id).
    calls: u64,
}

impl Handler {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Self {
            ctx,
            finish_reason: None,
            produced_text: false,
            calls: 0,
        }
    }

    fn response(&mut self, v: &Value, raw: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        self.ctx.check_error(v, raw)?;
        if let Some(reason) = str_of(v.pointer("/promptFeedback/blockReason")) {
            let mut why = format!("the prompt was blocked ({reason})");
            if let Some(m) = str_of(v.pointer("/promptFeedback/blockReasonMessage")) {
                why.push_str(&format!(": {m}"));
            }
            return Err(self.ctx.blocked(why));
        }
        let candidate = v.get("candidates").and_then(|c| c.get(0));
        if let Some(parts) = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array)
        {
            for part in parts {
                if let Some(call) = tool_codec::gemini_call(part, &mut self.calls) {
                    self.produced_text = true;
                    out.push(LlmEvent::ToolCall(call));
                    continue;
                }
                let Some(text) = str_of(part.get("text")) else {
                    continue;
                };
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    out.push(LlmEvent::Reasoning(text.to_string()));
                } else {
                    self.produced_text = true;
                    out.push(LlmEvent::Text(text.to_string()));
                }
            }
        }
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            let candidates = count_of(u.get("candidatesTokenCount"));
            let thoughts = count_of(u.get("thoughtsTokenCount"));
            let output = match (candidates, thoughts) {
                (None, None) => None,
                (c, t) => Some(c.unwrap_or(0).saturating_add(t.unwrap_or(0))),
            };
            out.push(LlmEvent::Usage(Usage {
                input_tokens: count_of(u.get("promptTokenCount")),
                output_tokens: output,
            }));
        }
        let reason = candidate.and_then(|c| str_of(c.get("finishReason")));
        if let Some(reason) = reason {
            if BLOCKING_REASONS.contains(&reason) && !self.produced_text {
                return Err(self.ctx.blocked(blocked_why(reason, candidate)));
            }
            self.finish_reason = Some(reason.to_string());
        }
        Ok(())
    }
}

/// `finishReason SAFETY (HARM_CATEGORY_HARASSMENT)`: the reason and the categories that
/// were rated `blocked`.
fn blocked_why(reason: &str, candidate: Option<&Value>) -> String {
    let mut categories = Vec::new();
    let ratings = candidate
        .and_then(|c| c.get("safetyRatings"))
        .and_then(Value::as_array);
    if let Some(ratings) = ratings {
        for r in ratings {
            if r.get("blocked").and_then(Value::as_bool) == Some(true) {
                if let Some(c) = r.get("category").and_then(Value::as_str) {
                    categories.push(c);
                }
            }
        }
    }
    let mut why = format!("finishReason {reason}");
    if !categories.is_empty() {
        why.push_str(&format!(" ({})", crate::core::join(&categories, ", ")));
    }
    why
}

impl FrameHandler for Handler {
    fn frame(&mut self, _event: &str, data: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let v = self.ctx.parse(data)?;
        match &v {
            // The non-SSE streaming endpoint (and some proxies) send a JSON array of responses.
            Value::Array(items) => {
                for item in items {
                    self.response(item, data, out)?;
                }
                Ok(())
            }
            other => self.response(other, data, out),
        }
    }

    fn end(&mut self, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        self.ctx.finish(self.finish_reason.take(), out)
    }
}
