//! The OpenAI chat-completions wire format, spoken by openai, azure, xai and
//! openai-compatible servers (LM Studio, vLLM, OpenRouter, llama.cpp server, DeepSeek ...).
//!
//! Request: `POST {base}/chat/completions` (azure:
//! `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version={v}`) with the
//! messages as given (system entries stay `system`: the format has no alternation rule).
//! Token limit: `max_completion_tokens` for openai, azure and xai (OpenAI deprecated
//! `max_tokens`, and its reasoning models reject it); `max_tokens` for openai-compatible,
//! because that is the field every compatible server understands.
//!
//! Stream: SSE, one `chat.completion.chunk` per event, ended by `data: [DONE]`.
//! `choices[0].delta.content` is text; `delta.reasoning_content` (DeepSeek, vLLM) or
//! `delta.reasoning` (OpenRouter, Ollama) is reasoning; `delta.refusal` is shown as text
//! (it is the model's answer to the user); `usage` arrives in a last chunk with empty
//! `choices` thanks to `stream_options.include_usage`. An `{"error": {...}}` frame is an
//! HTTP error with the response's status.
//!
//! `delta.tool_calls` fragments are assembled into complete calls (emitted at the choice's
//! `finish_reason`, see `tool_codec`); such frames take the general reading, not the fast path.
//!
//! End-of-stream rule: `[DONE]` ends the reply. Some compatible servers never send `[DONE]`;
//! a stream that ends after a `finish_reason` is therefore complete too. A stream that ends
//! with neither was cut: `Decode` error. `Done` carries the last `finish_reason`, and is
//! emitted at `[DONE]` (not at `finish_reason`) so that the usage chunk between them is kept.

use std::borrow::Cow;

use crate::core::json::{Map, Value};

use crate::core::json_write::json_value;

use super::byte_search::same;

use super::http::HttpRequest;
use super::json_scan::Scan;
use super::provider::{ProviderConfig, ProviderKind};
use super::tool_codec::{self, OpenAiCalls};
use super::types::{CallSettings, ChatMessage, LlmError, LlmEvent, Usage};
use super::wire::{
    count_of, encode_component, json_post, put, set, str_of, temperature, Codec, Ctx, FrameHandler,
    Wire,
};

/// This provider's entry in the codec table (`codecs.rs`).
pub(crate) const CODEC: Codec = Codec {
    encode,
    decoder: |ctx| Box::new(Handler::new(ctx)),
    wire: Wire::Sse,
};

pub(crate) fn encode(
    kind: ProviderKind,
    base: &str,
    config: &ProviderConfig,
    settings: &CallSettings,
    messages: &[ChatMessage],
    _browser_like: bool,
) -> HttpRequest {
    let mut body = Map::new();
    if !settings.model.trim().is_empty() {
        set(&mut body, "model", Value::from(settings.model.trim()));
    }
    let mut msgs = Vec::with_capacity(messages.len());
    for m in messages {
        msgs.push(tool_codec::openai_message(m));
    }
    set(&mut body, "messages", Value::Array(msgs));
    if !settings.tools.is_empty() {
        set(
            &mut body,
            "tools",
            tool_codec::openai_tools(&settings.tools),
        );
    }
    if kind != ProviderKind::OpenAiCompatible {
        put(
            &mut body,
            "reasoning_effort",
            tool_codec::openai_reasoning_effort(settings.reasoning.as_ref()),
        );
    }
    set(&mut body, "stream", Value::Bool(settings.stream));
    put(&mut body, "temperature", temperature(settings));
    let limit_field = if kind == ProviderKind::OpenAiCompatible {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    put(&mut body, limit_field, settings.max_tokens);
    if settings.stream {
        set(
            &mut body,
            "stream_options",
            json_value!({ "include_usage": true }),
        );
    }

    let key = config.api_key().map(str::to_string);
    let (url, headers) = if kind == ProviderKind::Azure {
        let deployment = config.deployment().unwrap_or_default();
        let url = format!(
            "{base}/openai/deployments/{}/chat/completions?api-version={}",
            encode_component(deployment),
            encode_component(config.api_version())
        );
        (url, key.map(|k| vec![("api-key", k)]).unwrap_or_default())
    } else {
        let auth = key.map(|k| vec![("authorization", format!("Bearer {k}"))]);
        (format!("{base}/chat/completions"), auth.unwrap_or_default())
    };
    json_post(url, headers, &Value::Object(body))
}

// The fast path for the frames that make up almost all of a stream: a chunk with one choice
// whose delta holds text (or reasoning) and no error or usage. It is read in place by
// `json_scan` (borrowed strings, nothing built for the keys it skips) instead of into a JSON
// `Value`: parsing the frames was the largest share of the engine's cost per streamed chunk.
// Anything it does not take exactly as `frame` would (an error or usage, tool calls, a field
// of another type, a duplicate key, more than one choice, a frame that is not an object, and
// whatever `json_scan` leaves to the full parser) makes it return `None`, and `frame` reads
// the frame as before.

/// What the fast path takes from a frame.
#[derive(Default)]
struct FastChunk<'a> {
    choice: FastChoice<'a>,
}

#[derive(Default)]
struct FastChoice<'a> {
    /// `None`: no `delta` key; `Some(None)`: `"delta": null` (then `message` is not read).
    delta: Option<Option<FastPart<'a>>>,
    message: Option<FastPart<'a>>,
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Default)]
struct FastPart<'a> {
    reasoning_content: Option<Cow<'a, str>>,
    reasoning: Option<Cow<'a, str>>,
    content: Option<Cow<'a, str>>,
    refusal: Option<Cow<'a, str>>,
}

/// Sets `slot` once: a second occurrence of the key (which `frame` would read as the last one
/// wins) is left to `frame`.
fn once<T>(slot: &mut Option<T>, seen: &mut bool, value: Option<T>) -> Option<()> {
    if std::mem::replace(seen, true) {
        return None;
    }
    *slot = value;
    Some(())
}

/// `{...}` or `null` as a part (`Some(None)` for null).
fn fast_part<'a>(s: &mut Scan<'a>, depth: usize) -> Option<Option<FastPart<'a>>> {
    if s.null() {
        return Some(None);
    }
    let mut part = FastPart::default();
    let mut seen = [false; 4];
    s.object(depth, |s, key| {
        let (slot, seen) = match key.as_ref() {
            "reasoning_content" => (&mut part.reasoning_content, &mut seen[0]),
            "reasoning" => (&mut part.reasoning, &mut seen[1]),
            "content" => (&mut part.content, &mut seen[2]),
            "refusal" => (&mut part.refusal, &mut seen[3]),
            // Tool call fragments go through the general reading.
            "tool_calls" => return None,
            _ => return s.skip(depth),
        };
        let value = s.null_or_string()?;
        once(slot, seen, value)
    })?;
    Some(Some(part))
}

fn fast_choice<'a>(s: &mut Scan<'a>, depth: usize) -> Option<FastChoice<'a>> {
    let mut choice = FastChoice::default();
    let (mut delta, mut message, mut finish) = (false, false, false);
    s.object(depth, |s, key| match key.as_ref() {
        "delta" => {
            let part = fast_part(s, depth + 1)?;
            once(&mut choice.delta, &mut delta, Some(part))
        }
        "message" => {
            let part = fast_part(s, depth + 1)?;
            once(&mut choice.message, &mut message, part)
        }
        "finish_reason" => {
            let reason = s.null_or_string()?;
            once(&mut choice.finish_reason, &mut finish, reason)
        }
        _ => s.skip(depth),
    })?;
    Some(choice)
}

fn fast_chunk(data: &str) -> Option<FastChunk<'_>> {
    if !data.starts_with('{') {
        return None;
    }
    let mut s = Scan::new(data);
    let mut chunk = FastChunk::default();
    let mut choices = false;
    s.object(0, |s, key| match key.as_ref() {
        "choices" => {
            if std::mem::replace(&mut choices, true) {
                return None;
            }
            s.array(1, |s, index| {
                if index > 0 {
                    return None;
                }
                chunk.choice = fast_choice(s, 2)?;
                Some(())
            })
        }
        // `null` is no error and no usage; anything else is read by `frame`.
        "error" | "usage" => s.null().then_some(()),
        _ => s.skip(0),
    })?;
    s.at_end().then_some(chunk)
}

/// A non-empty string field, as `str_of` reads it.
fn text(v: &Option<Cow<'_, str>>) -> Option<String> {
    v.as_deref().filter(|s| !s.is_empty()).map(str::to_string)
}

impl FastChunk<'_> {
    /// The delta's content when it is all the frame says (no reasoning, refusal or finish
    /// reason), read in place (no escape in it).
    fn only_content(&self) -> Option<&str> {
        let choice = &self.choice;
        let Some(Some(part)) = &choice.delta else {
            return None;
        };
        let quiet = |v: &Option<Cow<'_, str>>| v.as_deref().is_none_or(str::is_empty);
        if !(quiet(&part.reasoning_content)
            && quiet(&part.reasoning)
            && quiet(&part.refusal)
            && quiet(&choice.finish_reason))
        {
            return None;
        }
        match &part.content {
            Some(Cow::Borrowed(content)) if !content.is_empty() => Some(content),
            _ => None,
        }
    }

    /// The events `Handler::frame` emits for the same frame, in the same order.
    fn emit(&self, finish_reason: &mut Option<String>, out: &mut Vec<LlmEvent>) {
        let choice = &self.choice;
        let part = match &choice.delta {
            Some(delta) => delta.as_ref(),
            None => choice.message.as_ref(),
        };
        if let Some(part) = part {
            part.emit(out);
        }
        if let Some(reason) = text(&choice.finish_reason) {
            *finish_reason = Some(reason);
        }
    }
}

impl<'a> FastPart<'a> {
    /// The part of a frame read into a `Value` (the general reading), its strings borrowed.
    fn of(part: &'a Value) -> Self {
        let field = |key: &str| part.get(key).and_then(Value::as_str).map(Cow::Borrowed);
        FastPart {
            reasoning_content: field("reasoning_content"),
            reasoning: field("reasoning"),
            content: field("content"),
            refusal: field("refusal"),
        }
    }

    /// The part's events, the same for both readings: its reasoning (`reasoning_content`, else
    /// `reasoning`), its content and its refusal, each when not empty.
    fn emit(&self, out: &mut Vec<LlmEvent>) {
        if let Some(r) = text(&self.reasoning_content).or_else(|| text(&self.reasoning)) {
            out.push(LlmEvent::Reasoning(r));
        }
        if let Some(t) = text(&self.content) {
            out.push(LlmEvent::Text(t));
        }
        if let Some(t) = text(&self.refusal) {
            out.push(LlmEvent::Text(t));
        }
    }
}

/// The last text-only frame around its content string: the bytes before the string's opening
/// quote and after its closing quote. A stream's text frames usually differ in nothing else
/// (same id, created, model, fingerprint, layout), and a frame that is these same bytes around
/// another JSON string token is the same document with another string at the same place: it
/// means exactly that text, and nothing else needs reading (the string is still checked).
/// Streams whose frames vary elsewhere (OpenAI's per-chunk `obfuscation` padding) only pay
/// for the comparison and for refilling these buffers, which keep their capacity.
#[derive(Default)]
struct TextFrame {
    before: String,
    after: String,
    /// `before` and `after` describe a frame (false until the first text-only frame).
    set: bool,
}

impl TextFrame {
    /// The text of `data` when it is the template around another string token.
    fn text_of<'d>(&self, data: &'d str) -> Option<Cow<'d, str>> {
        if !self.set {
            return None;
        }
        let end = data.len().checked_sub(self.after.len())?;
        let bytes = data.as_bytes();
        // The end first: it is where frames that vary per chunk differ.
        if !same(bytes.get(end..)?, self.after.as_bytes())
            || !same(bytes.get(..self.before.len())?, self.before.as_bytes())
        {
            return None;
        }
        Scan::string_token(data.get(self.before.len()..end)?)
    }

    /// Remembers `data` as the template when its only event is `content`, read in place from it.
    fn remember(&mut self, data: &str, content: &str) {
        let start = (content.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
        let end = start.wrapping_add(content.len());
        let bytes = data.as_bytes();
        let (Some(before), Some(after)) = (
            start.checked_sub(1).and_then(|quote| data.get(..quote)),
            data.get(end.saturating_add(1)..),
        ) else {
            return;
        };
        // Borrowed from `data` between its quotes, or it is not the string token this is for.
        if end > data.len()
            || bytes.get(start.wrapping_sub(1)) != Some(&b'"')
            || bytes.get(end) != Some(&b'"')
        {
            return;
        }
        self.before.clear();
        self.before.push_str(before);
        self.after.clear();
        self.after.push_str(after);
        self.set = true;
    }
}

/// Frames of an OpenAI-style stream (or the one object of a non-streamed body).
pub(crate) struct Handler {
    ctx: Ctx,
    finish_reason: Option<String>,
    text_frame: TextFrame,
    /// Tool calls being assembled (see `tool_codec`): emitted complete at the choice's
    /// `finish_reason`, or before `Done` at the latest.
    calls: OpenAiCalls,
}

impl Handler {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Self {
            ctx,
            finish_reason: None,
            calls: OpenAiCalls::default(),
            text_frame: TextFrame::default(),
        }
    }
}

impl FrameHandler for Handler {
    fn frame(&mut self, _event: &str, data: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.calls.flush(out);
            out.push(LlmEvent::Done {
                finish_reason: self.finish_reason.take(),
            });
            return Ok(());
        }
        if let Some(content) = self.text_frame.text_of(data) {
            if !content.is_empty() {
                out.push(LlmEvent::Text(content.into_owned()));
            }
            return Ok(());
        }
        if let Some(fast) = fast_chunk(data) {
            if let Some(content) = fast.only_content() {
                self.text_frame.remember(data, content);
            }
            fast.emit(&mut self.finish_reason, out);
            if self.finish_reason.is_some() {
                // The calls are complete at the finish reason (a chunk without calls itself).
                self.calls.flush(out);
            }
            return Ok(());
        }
        let v = self.ctx.parse(data)?;
        self.ctx.check_error(&v, data)?;
        if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
            // Streamed chunks carry `delta`, a non-streamed body carries `message`.
            let part = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(part) = part {
                FastPart::of(part).emit(out);
                if let Some(calls) = part.get("tool_calls") {
                    self.calls.add(calls);
                }
            }
            if let Some(reason) = str_of(choice.get("finish_reason")) {
                self.finish_reason = Some(reason.to_string());
                self.calls.flush(out);
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            out.push(LlmEvent::Usage(Usage {
                input_tokens: count_of(u.get("prompt_tokens")),
                output_tokens: count_of(u.get("completion_tokens")),
            }));
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        if self.finish_reason.is_some() {
            self.calls.flush(out);
        }
        self.ctx.finish(self.finish_reason.take(), out)
    }

    fn body(&mut self, body: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let v = self.ctx.parse(body.trim())?;
        if v.get("choices").is_none() && v.get("error").is_none() {
            return Err(self.ctx.decode_error(format!(
                "expected a chat completion with `choices`, got: {}",
                super::errors::excerpt(body)
            )));
        }
        self.frame("", body, out)?;
        // A non-streamed body is complete by construction; a missing finish_reason (some
        // compatible servers) is not a cut stream.
        self.calls.flush(out);
        let finish_reason = self.finish_reason.take();
        out.push(LlmEvent::Done { finish_reason });
        Ok(())
    }
}
