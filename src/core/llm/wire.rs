//! What the provider codecs share, below all of them: the request helpers every encoder uses,
//! the [`FrameHandler`] each decoder implements with the response context [`Ctx`] it gets, and
//! the [`Codec`] entry each provider module exports (its encoder, its decoder, its framing).
//! The table that picks a provider's entry is `codecs.rs`; the framing machinery that drives a
//! decoder is `decode.rs`. Nothing here knows any provider.

use crate::core::json::{Map, Value};

use super::errors::{excerpt, json_error_message};
use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::types::{
    CallSettings, ChatMessage, LlmError, LlmEvent, Role, ThinkingBlock, ToolCallPart,
    ToolResultPart, STREAM_CUT,
};
use crate::core::json_write::ToJson;

/// A provider's request encoder: `(kind, base URL, config, settings, messages, browser_like)`.
/// `kind` tells the OpenAI format's dialects apart; `browser_like` is true where CORS applies.
pub(crate) type Encoder =
    fn(ProviderKind, &str, &ProviderConfig, &CallSettings, &[ChatMessage], bool) -> HttpRequest;

/// How a provider frames a streamed reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Server-Sent Events.
    Sse,
    /// One JSON object per line.
    Ndjson,
}

/// What one provider module exports: how to encode a request and how to decode its reply.
#[derive(Clone, Copy)]
pub(crate) struct Codec {
    pub(crate) encode: Encoder,
    /// The frame handler for one response.
    pub(crate) decoder: fn(Ctx) -> Box<dyn FrameHandler>,
    pub(crate) wire: Wire,
}

/// What a frame handler knows about the response: who answered, with which status.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub(crate) provider: &'static str,
    pub(crate) status: u16,
    pub(crate) status_text: String,
}

impl Ctx {
    /// An error payload delivered inside a response of status `self.status`.
    pub(crate) fn http_error(&self, message: &str) -> LlmError {
        LlmError::Http {
            provider: self.provider.to_string(),
            status: self.status,
            status_text: self.status_text.clone(),
            body_excerpt: excerpt(message),
            retry_after_ms: None,
        }
    }

    /// The error payload `v` (the frame `raw`) of a response: the provider's message when the
    /// payload has one (see `errors::json_error_message`), else the frame itself.
    pub(crate) fn payload_error(&self, v: &Value, raw: &str) -> LlmError {
        self.http_error(json_error_message(v).as_deref().unwrap_or(raw))
    }

    /// [`Ctx::payload_error`] when `v` holds an `error` that is not `null`.
    pub(crate) fn check_error(&self, v: &Value, raw: &str) -> Result<(), LlmError> {
        match v.get("error") {
            Some(e) if !e.is_null() => Err(self.payload_error(v, raw)),
            _ => Ok(()),
        }
    }

    pub(crate) fn decode_error(&self, message: String) -> LlmError {
        LlmError::Decode {
            provider: self.provider.to_string(),
            message,
        }
    }

    /// The stream ended without the provider's terminator: the connection was cut or the
    /// server gave up; what arrived is not the whole reply.
    pub(crate) fn cut(&self) -> LlmError {
        self.decode_error(STREAM_CUT.to_string())
    }

    /// The end of a stream whose provider names a finish reason: `Done` with the reason it
    /// recorded, or [`Ctx::cut`] when none arrived (shared by the OpenAI, Anthropic and Gemini
    /// decoders; Ollama ends on a `done` flag instead).
    pub(crate) fn finish(
        &self,
        reason: Option<String>,
        out: &mut Vec<LlmEvent>,
    ) -> Result<(), LlmError> {
        let reason = reason.ok_or_else(|| self.cut())?;
        out.push(LlmEvent::Done {
            finish_reason: Some(reason),
        });
        Ok(())
    }

    pub(crate) fn blocked(&self, reason: String) -> LlmError {
        LlmError::Blocked {
            provider: self.provider.to_string(),
            reason,
        }
    }

    /// Parses one frame as JSON, quoting the frame when it is not.
    pub(crate) fn parse(&self, data: &str) -> Result<Value, LlmError> {
        crate::core::json::from_str(data).map_err(|e| {
            self.decode_error(format!("invalid JSON ({e}) in frame: {}", excerpt(data)))
        })
    }
}

/// The meaning of one provider's frames.
pub(crate) trait FrameHandler {
    /// One complete frame: an SSE event (`event` may be empty) or an NDJSON line.
    fn frame(&mut self, event: &str, data: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError>;
    /// The body ended: emit `Done` or say the stream was cut.
    fn end(&mut self, out: &mut Vec<LlmEvent>) -> Result<(), LlmError>;
    /// A whole non-streamed body. Most providers send the same object as a stream frame.
    fn body(&mut self, body: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        self.frame("", body, out)?;
        self.end(out)
    }
}

/// A JSON POST to `url` with the given headers (after `content-type`).
pub(crate) fn json_post(url: String, headers: Vec<(&str, String)>, body: &Value) -> HttpRequest {
    let mut all = vec![("content-type".to_string(), "application/json".to_string())];
    for (n, v) in headers {
        all.push((n.to_string(), v));
    }
    HttpRequest {
        method: "POST".to_string(),
        url,
        headers: all,
        body: body.to_json(),
    }
}

/// Sets `key: value` in a request object: one call per field, where a key copy, a map insert
/// and the drop of a replaced value were inlined at every field of every encoder.
#[inline(never)]
pub(crate) fn set(obj: &mut Map<String, Value>, key: &str, value: Value) {
    obj.insert(key.to_string(), value);
}

/// Sets `key: value` when the value is present.
pub(crate) fn put<T: Into<Value>>(obj: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(v) = value {
        set(obj, key, v.into());
    }
}

/// The call's temperature, when it is a finite number.
pub(crate) fn temperature(settings: &CallSettings) -> Option<f64> {
    settings.temperature.filter(|t| t.is_finite())
}

/// Percent-encodes one URL path segment or query value (model and deployment names may hold
/// characters such as `/` or `:` that would change the URL's meaning).
pub(crate) fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Stands in for the missing opening user turn when the conversation would start with the
/// assistant (or hold no turn at all): both APIs reject that, and dropping the assistant's
/// words would lose context.
pub(crate) const OPENING_USER_TURN: &str = "(conversation continues)";

/// How a provider with strict alternation (Anthropic, Gemini) shapes its turns: the one table
/// [`alternate`] walks the history with, so both share a single walk.
pub(crate) struct TurnShape {
    /// The assistant side's role name (the other side is `user`).
    pub(crate) assistant: &'static str,
    /// The key of a turn's blocks (`content`, `parts`).
    pub(crate) blocks: &'static str,
    /// A text block of a history with tool entries.
    pub(crate) text: fn(&str) -> Value,
    /// A turn's blocks when the history has no tool entry, from its text: the encoding these
    /// providers had before tools, kept byte for byte.
    pub(crate) plain: fn(String) -> Value,
    /// A tool result's block (the message is the result's entry).
    pub(crate) result: fn(&ChatMessage, &ToolResultPart) -> Value,
    /// A tool call's block.
    pub(crate) call: fn(&ToolCallPart) -> Value,
    /// The blocks of a step's thinking, which open its assistant turn (Anthropic's); `None`
    /// where the provider takes none back.
    pub(crate) thinking: Option<fn(&ThinkingBlock) -> Value>,
}

/// What providers with strict alternation need: every system entry joined into one system
/// prompt, and the rest as user/assistant turns with consecutive same-role entries merged,
/// blank text dropped (both APIs reject empty text), and a first turn that is `user`.
///
/// Without tool entries a turn is its entries' texts joined by a blank line (and a blank
/// system entry is dropped too), in [`TurnShape::plain`]'s shape. With them, a turn is a list
/// of blocks: a result's block (a result is on the user side, first in its turn because it
/// follows the assistant turn that made the call), or a step's thinking blocks, its text and
/// its calls.
pub(crate) fn alternate(
    messages: &[ChatMessage],
    shape: &TurnShape,
) -> (Option<String>, Vec<Value>) {
    let tools = messages
        .iter()
        .any(|m| !m.tool_calls.is_empty() || m.tool_result.is_some());
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for m in messages {
        let mut blocks = Vec::new();
        let blank = m.content.trim().is_empty();
        let role = if let Some(r) = &m.tool_result {
            blocks.push((shape.result)(m, r));
            Role::User
        } else if m.role == Role::System {
            if tools || !blank {
                system.push(&m.content);
            }
            continue;
        } else {
            if let (true, Some(thinking)) = (tools, shape.thinking) {
                // Exactly as received (the API checks them).
                for t in &m.thinking {
                    blocks.push(thinking(t));
                }
            }
            if !blank {
                blocks.push(if tools {
                    (shape.text)(&m.content)
                } else {
                    Value::from(m.content.as_str())
                });
            }
            for c in &m.tool_calls {
                blocks.push((shape.call)(c));
            }
            m.role
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, b)) if *last == role => b.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    if turns.first().map(|(r, _)| *r) != Some(Role::User) {
        let opening = if tools {
            (shape.text)(OPENING_USER_TURN)
        } else {
            Value::from(OPENING_USER_TURN)
        };
        turns.insert(0, (Role::User, vec![opening]));
    }
    let mut out = Vec::with_capacity(turns.len());
    for (role, blocks) in turns {
        let role = if role == Role::Assistant {
            shape.assistant
        } else {
            "user"
        };
        let blocks = if tools {
            Value::Array(blocks)
        } else {
            // Without tools every block is a text.
            let mut text = String::new();
            for (i, b) in blocks.iter().filter_map(Value::as_str).enumerate() {
                if i > 0 {
                    text.push_str("\n\n");
                }
                text.push_str(b);
            }
            (shape.plain)(text)
        };
        let mut turn = Map::new();
        set(&mut turn, "role", Value::from(role));
        set(&mut turn, shape.blocks, blocks);
        out.push(Value::Object(turn));
    }
    let system = (!system.is_empty()).then(|| crate::core::join(&system, "\n\n"));
    (system, out)
}

/// `v` as a non-empty string.
pub(crate) fn str_of(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `v` as a token count (providers send integers; tolerate floats such as `12.0`).
pub(crate) fn count_of(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64)
    })
}
