//! The Ollama native chat API wire format.
//!
//! Request: `POST {base}/api/chat` (base default `http://127.0.0.1:11434`) with
//! `{model, messages, stream, options: {temperature, num_predict}}`; messages keep their roles
//! (Ollama applies the model's own chat template). No key is needed; when one is configured
//! (Ollama behind an authenticating proxy, or ollama.com) it is sent as a bearer token.
//!
//! Stream: NDJSON, one object per line: `message.content` is text, `message.thinking` is
//! reasoning; the last line has `done: true`, `done_reason`, `prompt_eval_count` (input) and
//! `eval_count` (output). `{"error": "..."}` as a line (Ollama's way of failing mid-stream)
//! → `Http` with the response's status. A non-streamed reply is one such object.
//!
//! End-of-stream rule: the `done: true` line ends the reply; a body that ends without one
//! was cut: `Decode` error.

use crate::core::json::{Map, Value};

use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::tool_codec;
use super::types::{CallSettings, ChatMessage, LlmError, LlmEvent, Usage};
use super::wire::{
    count_of, json_post, put, set, str_of, temperature, Codec, Ctx, FrameHandler, Wire,
};

/// This provider's entry in the codec table (`codecs.rs`).
pub(crate) const CODEC: Codec = Codec {
    encode,
    decoder: |ctx| Box::new(Handler::new(ctx)),
    wire: Wire::Ndjson,
};

pub(crate) fn encode(
    _kind: ProviderKind,
    base: &str,
    config: &ProviderConfig,
    settings: &CallSettings,
    messages: &[ChatMessage],
    _browser_like: bool,
) -> HttpRequest {
    let mut msgs = Vec::with_capacity(messages.len());
    for m in messages {
        msgs.push(tool_codec::ollama_message(m));
    }
    let mut body = Map::new();
    set(&mut body, "model", Value::from(settings.model.trim()));
    set(&mut body, "messages", Value::Array(msgs));
    if !settings.tools.is_empty() {
        set(
            &mut body,
            "tools",
            tool_codec::openai_tools(&settings.tools),
        );
    }
    set(&mut body, "stream", Value::Bool(settings.stream));
    let mut options = Map::new();
    put(&mut options, "temperature", temperature(settings));
    put(&mut options, "num_predict", settings.max_tokens);
    if !options.is_empty() {
        set(&mut body, "options", Value::Object(options));
    }
    let headers = config
        .api_key()
        .map(|k| vec![("authorization", format!("Bearer {k}"))])
        .unwrap_or_default();
    json_post(format!("{base}/api/chat"), headers, &Value::Object(body))
}

/// Lines of an Ollama chat stream.
pub(crate) struct Handler {
    ctx: Ctx,
    done: bool,
    /// Tool calls so far (they arrive whole, without ids; this numbers them).
    calls: u64,
}

impl Handler {
    pub(crate) fn new(ctx: Ctx) -> Self {
        Self {
            ctx,
            done: false,
            calls: 0,
        }
    }
}

impl FrameHandler for Handler {
    fn frame(&mut self, _event: &str, data: &str, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let v = self.ctx.parse(data)?;
        self.ctx.check_error(&v, data)?;
        if let Some(t) = str_of(v.pointer("/message/thinking")) {
            out.push(LlmEvent::Reasoning(t.to_string()));
        }
        if let Some(t) = str_of(v.pointer("/message/content")) {
            out.push(LlmEvent::Text(t.to_string()));
        }
        tool_codec::ollama_calls(&v, &mut self.calls, out);
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            let usage = Usage {
                input_tokens: count_of(v.get("prompt_eval_count")),
                output_tokens: count_of(v.get("eval_count")),
            };
            if usage != Usage::default() {
                out.push(LlmEvent::Usage(usage));
            }
            self.done = true;
            out.push(LlmEvent::Done {
                finish_reason: str_of(v.get("done_reason")).map(str::to_string),
            });
        }
        Ok(())
    }

    fn end(&mut self, _out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        if self.done {
            Ok(())
        } else {
            Err(self.ctx.cut())
        }
    }
}
