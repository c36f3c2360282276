//! Tools on the wire (spec §9 "Providers"): each provider's shape for the tools offered, the
//! tool entries of the history, the `reasoning` setting, and the accumulation of streamed tool
//! calls into complete [`LlmEvent::ToolCall`]s. Kept apart from the text codecs so that a
//! conversation without tools is encoded exactly as before.
//!
//! - OpenAI-style (openai, azure, xai, openai-compatible): `tools: [{type: "function",
//!   function: {name, description, parameters}}]`; an assistant entry carries `tool_calls:
//!   [{id, type: "function", function: {name, arguments}}]` (content `null` when it has no
//!   text); a result is `{role: "tool", tool_call_id, content}`. Streamed calls arrive as
//!   `delta.tool_calls[]` fragments keyed by `index` (id and name in the first, `arguments` in
//!   pieces), several calls interleaved; they are complete at the choice's `finish_reason`.
//!   `reasoning.effort` → `reasoning_effort` (openai, azure, xai; compatible servers vary, so
//!   none is sent to them).
//! - Anthropic: `tools: [{name, description, input_schema}]`; an assistant turn holds `text`
//!   and `tool_use {id, name, input}` blocks; results are `tool_result {tool_use_id, content}`
//!   blocks of the next user turn (first in it, as the API requires). Streamed: a `tool_use`
//!   `content_block_start`, `input_json_delta` fragments, complete at `content_block_stop`.
//!   `reasoning` → `thinking: {type: "enabled", budget_tokens}` (the budget, or 1,024 / 4,096 /
//!   16,384 for low / medium / high; at least 1,024, the API's minimum); `temperature` is then
//!   not sent (the API refuses it with thinking) and a `max_tokens` the call did not set is
//!   raised above the budget. With thinking on, the step's `thinking` / `redacted_thinking`
//!   blocks (kept whole, signature included) open the assistant turn of its calls, as the API
//!   requires.
//! - Gemini: `tools: [{functionDeclarations: [{name, description, parameters}]}]` (Gemini's
//!   schema has no `additionalProperties`: it is left out); calls are `functionCall {name, args}`
//!   parts of a `model` turn, results `functionResponse {name, response}` parts of a `user` turn
//!   (`response` must be an object: other results are wrapped as `{result: …}`). Calls arrive
//!   whole, without ids (newer models send `id`; it is kept when present); a call's sibling
//!   `thoughtSignature` is kept and sent back on the same part. `reasoning` →
//!   `generationConfig.thinkingConfig: {thinkingBudget, includeThoughts: true}` (the budget, or
//!   1,024 / 8,192 / 24,576).
//! - Ollama: OpenAI-style `tools`; assistant `tool_calls: [{function: {name, arguments}}]` with
//!   `arguments` an object; results `{role: "tool", tool_name, content}`. Calls arrive whole in
//!   `message.tool_calls`, without ids. `reasoning` is ignored.
//!
//! Calls without an id get `call_<n>` (n counting the decoder's calls); the engine makes ids
//! unique within a reply.

use crate::core::vec_map::VecMap;

use crate::core::json::{Map, Value};

use super::types::{ChatMessage, LlmEvent, Role, ThinkingBlock, ToolCallPart, ToolResultPart};
use super::wire::{set, str_of};
use crate::core::json_write::{json_value, ToJson};
use crate::core::model::{Reasoning, ReasoningEffort};
use crate::core::tools::ToolSpec;

/// Arguments text as a JSON object (for providers that take an object); text that is not an
/// object becomes `{}` (the engine already answered such a call with an error).
fn args_object(arguments: &str) -> Value {
    match crate::core::json::from_str(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => Value::Object(Map::new()),
    }
}

fn effort_budget(r: &Reasoning, low: u32, medium: u32, high: u32) -> Option<u32> {
    r.budget_tokens.or(match r.effort? {
        ReasoningEffort::Low => Some(low),
        ReasoningEffort::Medium => Some(medium),
        ReasoningEffort::High => Some(high),
    })
}

// ---- OpenAI-style ----

pub(crate) fn openai_tools(tools: &[ToolSpec]) -> Value {
    let mut out = Vec::new();
    for t in tools {
        out.push(json_value!({"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": t.parameters}}));
    }
    Value::Array(out)
}

/// One input entry; a plain entry is `{role, content}` exactly as before tools.
pub(crate) fn openai_message(m: &ChatMessage) -> Value {
    if let Some(r) = &m.tool_result {
        return json_value!({"role": "tool", "tool_call_id": r.tool_call_id, "content": m.content});
    }
    if m.role == Role::Assistant && !m.tool_calls.is_empty() {
        let mut calls = Vec::new();
        for c in &m.tool_calls {
            calls.push(json_value!({"id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments}}));
        }
        let content = if m.content.is_empty() {
            Value::Null
        } else {
            Value::from(m.content.clone())
        };
        return json_value!({"role": "assistant", "content": content, "tool_calls": calls});
    }
    json_value!({ "role": m.role.as_str(), "content": m.content })
}

pub(crate) fn openai_reasoning_effort(r: Option<&Reasoning>) -> Option<&'static str> {
    Some(match r?.effort? {
        ReasoningEffort::Low => "low",
        ReasoningEffort::Medium => "medium",
        ReasoningEffort::High => "high",
    })
}

/// Index-keyed fragments of streamed OpenAI-style calls.
#[derive(Debug, Default)]
pub(crate) struct OpenAiCalls {
    calls: VecMap<u64, (String, String, String)>,
    emitted: u64,
}

impl OpenAiCalls {
    /// Adds the fragments of one `delta.tool_calls` (or a whole `message.tool_calls`).
    pub(crate) fn add(&mut self, items: &Value) {
        let Some(items) = items.as_array() else {
            return;
        };
        for (pos, item) in items.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            let entry = self.calls.get_or_default(&index);
            if let Some(id) = str_of(item.get("id")) {
                entry.0 = id.to_string();
            }
            if let Some(name) = str_of(item.pointer("/function/name")) {
                entry.1.push_str(name);
            }
            match item.pointer("/function/arguments") {
                Some(Value::String(a)) => entry.2.push_str(a),
                // A few servers send the arguments as an object.
                Some(v @ Value::Object(_)) => v.write_json(&mut entry.2),
                _ => {}
            }
        }
    }

    /// Emits every call gathered so far, in index order.
    pub(crate) fn flush(&mut self, out: &mut Vec<LlmEvent>) {
        for (_, (id, name, arguments)) in std::mem::take(&mut self.calls) {
            let id = if id.is_empty() {
                format!("call_{}", self.emitted)
            } else {
                id
            };
            self.emitted += 1;
            out.push(LlmEvent::ToolCall(ToolCallPart {
                id,
                name,
                arguments,
                signature: None,
            }));
        }
    }
}

// ---- Anthropic ----

pub(crate) fn anthropic_tools(tools: &[ToolSpec]) -> Value {
    let mut out = Vec::new();
    for t in tools {
        out.push(json_value!({"name": t.name, "description": t.description,
            "input_schema": t.parameters}));
    }
    Value::Array(out)
}

/// A text block of a Messages turn.
pub(crate) fn anthropic_text(text: &str) -> Value {
    json_value!({"type": "text", "text": text})
}

/// A `tool_result` block (first in its user turn, see `wire::alternate`).
pub(crate) fn anthropic_result(m: &ChatMessage, r: &ToolResultPart) -> Value {
    json_value!({"type": "tool_result", "tool_use_id": r.tool_call_id, "content": m.content})
}

/// A `tool_use` block of an assistant turn.
pub(crate) fn anthropic_use(c: &ToolCallPart) -> Value {
    json_value!({"type": "tool_use", "id": c.id, "name": c.name,
        "input": args_object(&c.arguments)})
}

/// A thinking block as the Messages API sends and takes it.
pub(crate) fn anthropic_thinking_block(b: &ThinkingBlock) -> Value {
    match b {
        ThinkingBlock::Thinking {
            thinking,
            signature,
        } => json_value!({"type": "thinking", "thinking": thinking, "signature": signature}),
        ThinkingBlock::Redacted { data } => {
            json_value!({"type": "redacted_thinking", "data": data})
        }
    }
}

/// A `thinking` or `redacted_thinking` block of a non-streamed reply.
pub(crate) fn anthropic_thinking(block: &Value) -> Option<ThinkingBlock> {
    match block.get("type").and_then(Value::as_str)? {
        "thinking" => Some(ThinkingBlock::Thinking {
            thinking: str_of(block.get("thinking"))
                .unwrap_or_default()
                .to_string(),
            signature: str_of(block.get("signature"))
                .unwrap_or_default()
                .to_string(),
        }),
        "redacted_thinking" => Some(ThinkingBlock::Redacted {
            data: str_of(block.get("data")).unwrap_or_default().to_string(),
        }),
        _ => None,
    }
}

/// The thinking budget for Anthropic (at least 1,024), when reasoning is asked for.
pub(crate) fn anthropic_thinking_budget(r: Option<&Reasoning>) -> Option<u32> {
    effort_budget(r?, 1024, 4096, 16_384).map(|b| b.max(1024))
}

/// `tool_use` and thinking blocks of a Messages stream, by block index.
#[derive(Debug, Default)]
pub(crate) struct AnthropicCalls {
    open: VecMap<u64, (String, String, String, Value)>,
    /// Thinking blocks being streamed (`thinking_delta` and `signature_delta` fragments),
    /// complete at `content_block_stop`.
    thinking: VecMap<u64, ThinkingBlock>,
}

impl AnthropicCalls {
    /// A `content_block_start`: a `tool_use` or thinking block opens.
    pub(crate) fn start(&mut self, index: u64, block: &Value) {
        if let Some(t) = anthropic_thinking(block) {
            self.thinking.insert(index, t);
            return;
        }
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            return;
        }
        let id = str_of(block.get("id")).unwrap_or_default().to_string();
        let name = str_of(block.get("name")).unwrap_or_default().to_string();
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        self.open.insert(index, (id, name, String::new(), input));
    }

    /// An `input_json_delta`, `thinking_delta` or `signature_delta` fragment.
    pub(crate) fn delta(&mut self, index: u64, delta: &Value) {
        if let Some(ThinkingBlock::Thinking {
            thinking,
            signature,
        }) = self.thinking.get_mut(&index)
        {
            match delta.get("type").and_then(Value::as_str) {
                Some("thinking_delta") => {
                    thinking.push_str(str_of(delta.get("thinking")).unwrap_or_default())
                }
                Some("signature_delta") => {
                    signature.push_str(str_of(delta.get("signature")).unwrap_or_default())
                }
                _ => {}
            }
            return;
        }
        if delta.get("type").and_then(Value::as_str) != Some("input_json_delta") {
            return;
        }
        if let (Some(call), Some(part)) = (
            self.open.get_mut(&index),
            delta.get("partial_json").and_then(Value::as_str),
        ) {
            call.2.push_str(part);
        }
    }

    /// A `content_block_stop`: the call at `index` is complete.
    pub(crate) fn stop(&mut self, index: u64, out: &mut Vec<LlmEvent>) {
        if let Some(t) = self.thinking.remove(&index) {
            out.push(LlmEvent::Thinking(t));
        }
        if let Some((id, name, json, input)) = self.open.remove(&index) {
            out.push(LlmEvent::ToolCall(anthropic_call(id, name, json, &input)));
        }
    }
}

/// A complete `tool_use`: the streamed JSON, or the block's own `input` when nothing streamed.
/// An `input` that is a string (never an object: a broken model or proxy) is kept as the
/// arguments text, so the engine tells the model its arguments are not an object instead of
/// running the tool with `{}`.
pub(crate) fn anthropic_call(
    id: String,
    name: String,
    json: String,
    input: &Value,
) -> ToolCallPart {
    let arguments = if !json.trim().is_empty() {
        json
    } else if input.is_object() {
        input.to_json()
    } else if let Value::String(raw) = input {
        raw.clone()
    } else {
        "{}".to_string()
    };
    ToolCallPart {
        id,
        name,
        arguments,
        signature: None,
    }
}

// ---- Gemini ----

/// A schema without `additionalProperties` (not part of Gemini's schema), at every level.
fn gemini_schema(v: &Value) -> Value {
    let Value::Object(m) = v else {
        return v.clone();
    };
    // The map's keys come in order, so each insert appends.
    let mut out = Map::new();
    for (k, v) in m {
        let v = match (k.as_str(), v) {
            ("additionalProperties", _) => continue,
            ("properties", Value::Object(props)) => {
                let mut schemas = Map::new();
                for (n, s) in props {
                    schemas.insert(n.clone(), gemini_schema(s));
                }
                Value::Object(schemas)
            }
            ("items", v) => gemini_schema(v),
            (_, v) => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

pub(crate) fn gemini_tools(tools: &[ToolSpec]) -> Value {
    let mut decls = Vec::new();
    for t in tools {
        decls.push(json_value!({"name": t.name, "description": t.description,
            "parameters": gemini_schema(&t.parameters)}));
    }
    json_value!([{ "functionDeclarations": decls }])
}

/// A text part of a Gemini turn.
pub(crate) fn gemini_text(text: &str) -> Value {
    json_value!({ "text": text })
}

/// A `functionResponse` part (`response` must be an object: other results are wrapped).
pub(crate) fn gemini_result(m: &ChatMessage, r: &ToolResultPart) -> Value {
    let response = match crate::core::json::from_str(&m.content) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => json_value!({ "result": other }),
        Err(_) => json_value!({ "result": m.content }),
    };
    json_value!({"functionResponse": {"name": r.tool_name, "response": response}})
}

/// A `functionCall` part, with its `thoughtSignature` when the call had one.
pub(crate) fn gemini_call_part(c: &ToolCallPart) -> Value {
    let mut part = json_value!({"functionCall": {"name": c.name,
        "args": args_object(&c.arguments)}});
    if let (Some(sig), Value::Object(p)) = (&c.signature, &mut part) {
        set(p, "thoughtSignature", Value::from(sig.clone()));
    }
    part
}

pub(crate) fn gemini_thinking(r: Option<&Reasoning>) -> Option<Value> {
    let budget = effort_budget(r?, 1024, 8192, 24_576)?;
    Some(json_value!({"thinkingBudget": budget, "includeThoughts": true}))
}

/// A `functionCall` part as a complete call (`n` numbers the calls without an id).
pub(crate) fn gemini_call(part: &Value, n: &mut u64) -> Option<ToolCallPart> {
    let call = part.get("functionCall")?;
    let name = str_of(call.get("name"))?;
    // `args` is a protobuf Struct; text from a proxy is kept (see `whole_call`).
    Some(whole_call(
        str_of(call.get("id")),
        name,
        call.get("args"),
        n,
        str_of(part.get("thoughtSignature")).map(str::to_string),
    ))
}

/// A call that arrives whole (Gemini, Ollama): its arguments object as JSON text, arguments
/// sent as text (not the API's shape, but a proxy may send it) kept as they are, as for
/// Anthropic's `input`, so the engine reports them rather than running the tool with `{}`;
/// `call_<n>` as the id when it has none.
fn whole_call(
    id: Option<&str>,
    name: &str,
    args: Option<&Value>,
    n: &mut u64,
    signature: Option<String>,
) -> ToolCallPart {
    let arguments = match args {
        Some(v @ Value::Object(_)) => v.to_json(),
        Some(Value::String(raw)) => raw.clone(),
        _ => "{}".to_string(),
    };
    let id = match id {
        Some(id) => id.to_string(),
        None => format!("call_{n}"),
    };
    *n += 1;
    ToolCallPart {
        id,
        name: name.to_string(),
        arguments,
        signature,
    }
}

// ---- Ollama ----

pub(crate) fn ollama_message(m: &ChatMessage) -> Value {
    if let Some(r) = &m.tool_result {
        return json_value!({"role": "tool", "tool_name": r.tool_name, "content": m.content});
    }
    if m.role == Role::Assistant && !m.tool_calls.is_empty() {
        let mut calls = Vec::new();
        for c in &m.tool_calls {
            calls.push(
                json_value!({"function": {"name": c.name, "arguments": args_object(&c.arguments)}}),
            );
        }
        return json_value!({"role": "assistant", "content": m.content, "tool_calls": calls});
    }
    json_value!({ "role": m.role.as_str(), "content": m.content })
}

/// `message.tool_calls` of an Ollama line, as complete calls.
pub(crate) fn ollama_calls(v: &Value, n: &mut u64, out: &mut Vec<LlmEvent>) {
    let Some(calls) = v.pointer("/message/tool_calls").and_then(Value::as_array) else {
        return;
    };
    for c in calls {
        let Some(name) = str_of(c.pointer("/function/name")) else {
            continue;
        };
        let args = c.pointer("/function/arguments");
        out.push(LlmEvent::ToolCall(whole_call(
            str_of(c.get("id")),
            name,
            args,
            n,
            None,
        )));
    }
}
