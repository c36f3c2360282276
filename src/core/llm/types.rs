//! Provider-neutral LLM types: what the engine sends and what a streamed reply yields.

use crate::core::json::Value;
use serde::{Deserialize, Serialize};

use crate::core::json::{
    deserialize_via_json, from_json_struct, one_of, Fields, FromJson, JsonError,
};
use crate::core::json_write::{write_str, Obj, ToJson};

use crate::core::model::Reasoning;
use crate::core::tools::ToolSpec;

/// The message of the `Decode` error for a stream that ended without its terminator; the retry
/// policy treats it as a cut connection.
pub const STREAM_CUT: &str = "stream ended before the reply was complete";

/// The role of one entry of the LLM input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    #[default]
    User,
    Assistant,
}

impl Role {
    /// The role's name in the OpenAI-style wire formats (OpenAI, Azure, xAI, compatible
    /// servers, Ollama).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One tool call the model made: its id (the provider's, or one the decoder made up for
/// providers without ids), the tool's name, and the arguments exactly as the model sent them
/// (JSON text, not checked: the engine answers malformed arguments with an error result).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPart {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// Gemini's `thoughtSignature` of the `functionCall` part (thinking models): opaque, and
    /// sent back on the same part in the next step's request, which the API requires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// One block of a step's extended thinking as Anthropic sent it (opaque: text and signature,
/// or encrypted data). With thinking on, the assistant turn that carries a step's `tool_use`
/// blocks must start with that step's thinking blocks exactly as received, or the next step's
/// request is refused; other providers ignore them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThinkingBlock {
    /// `{"type":"thinking","thinking","signature"}`.
    Thinking { thinking: String, signature: String },
    /// `{"type":"redacted_thinking","data"}`.
    Redacted { data: String },
}

/// Marks an input entry as the result of one tool call (its `content` is the result as JSON
/// text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPart {
    pub tool_call_id: String,
    pub tool_name: String,
}

/// One entry of the LLM input, in the order the engine built it.
///
/// Tool steps (spec §9) add two shapes: an `Assistant` entry with `tool_calls` (the model's
/// calls of one step, `content` its text of that step, possibly empty), and one entry per call
/// with `tool_result` set. A tool result has the role `User`: the role says which side of the
/// conversation an entry is on, and results are given *to* the model (Anthropic and Gemini send
/// them in user turns; the OpenAI-style and Ollama codecs send `role: "tool"` when
/// `tool_result` is set). An adapter that predates tools therefore still sends a coherent
/// conversation (results as user text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallPart>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResultPart>,
    /// The thinking blocks of the step that made `tool_calls` (Anthropic; see
    /// [`ThinkingBlock`]). Empty for every other entry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<ThinkingBlock>,
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_result: None,
            thinking: Vec::new(),
        }
    }

    /// The model's turn of one tool step: its text and its calls.
    pub fn tool_calls(content: impl Into<String>, calls: Vec<ToolCallPart>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// The result of one tool call, as JSON text.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        result_json: impl Into<String>,
    ) -> Self {
        Self {
            tool_result: Some(ToolResultPart {
                tool_call_id: tool_call_id.into(),
                tool_name: tool_name.into(),
            }),
            ..Self::new(Role::User, result_json)
        }
    }
}

/// Per-call settings the engine passes with the message list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CallSettings {
    /// Provider name as the agent wrote it: `openai`, `anthropic`, `google`, `azure`, `xai`,
    /// `openai-compatible`, `ollama` or `custom`.
    pub provider: String,
    pub model: String,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// Whether to request a streamed reply. A non-streamed reply is still delivered as events.
    pub stream: bool,
    /// The tools offered to the model in this call (spec §9); empty = none (the last step of a
    /// reply, an agent without tools, a title call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// The agent's thinking setting, for the codecs of providers that have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// Who is asking: the agent's id for a reply, `None` for a chat-title call. Not sent to
    /// providers; a `custom` provider gets it (`agentName`) to serve several agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// What the call is for (`reply` or `title`); given to `custom` providers.
    #[serde(default)]
    pub purpose: CallPurpose,
}

/// What an LLM call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum CallPurpose {
    /// A step of an agent's reply.
    #[default]
    Reply,
    /// A chat-title call (spec §6 "LLM title").
    Title,
}

/// Token usage as reported by the provider (fields the provider does not report stay `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

impl ToJson for Role {
    fn write_json(&self, out: &mut String) {
        write_str(out, self.as_str());
    }
}

impl ToJson for ToolCallPart {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("id", &self.id)
            .str("name", &self.name)
            .str("arguments", &self.arguments)
            .opt("signature", &self.signature)
            .end();
    }
}

impl ToJson for ThinkingBlock {
    fn write_json(&self, out: &mut String) {
        let mut o = Obj::new(out);
        match self {
            ThinkingBlock::Thinking {
                thinking,
                signature,
            } => o
                .str("type", "thinking")
                .str("thinking", thinking)
                .str("signature", signature),
            ThinkingBlock::Redacted { data } => o.str("type", "redacted").str("data", data),
        }
        .end();
    }
}

impl ToJson for ToolResultPart {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("toolCallId", &self.tool_call_id)
            .str("toolName", &self.tool_name)
            .end();
    }
}

impl ToJson for ChatMessage {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("role", &self.role)
            .str("content", &self.content)
            .list("toolCalls", &self.tool_calls)
            .opt("toolResult", &self.tool_result)
            .list("thinking", &self.thinking)
            .end();
    }
}

impl ToJson for Usage {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("inputTokens", &self.input_tokens)
            .field("outputTokens", &self.output_tokens)
            .end();
    }
}

// ---- Decoding (see `crate::core::json`): these are read back from stored approval records ----

impl FromJson for Role {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        use Role::*;
        Ok([System, User, Assistant][one_of(v, &["system", "user", "assistant"])?])
    }
}

from_json_struct!(ToolCallPart, allow, {
    id: "id" req,
    name: "name" req,
    arguments: "arguments" req,
    signature: "signature" opt,
});

impl FromJson for ThinkingBlock {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        let mut f = Fields::of(v, &[], false);
        let tag: Value = f.req("type");
        let value = match one_of(tag, &["thinking", "redacted"]) {
            Ok(0) => ThinkingBlock::Thinking {
                thinking: f.req("thinking"),
                signature: f.req("signature"),
            },
            Ok(_) => ThinkingBlock::Redacted {
                data: f.req("data"),
            },
            Err(e) => {
                f.fail(e, "type");
                ThinkingBlock::Redacted {
                    data: String::new(),
                }
            }
        };
        f.done(value)
    }
}

from_json_struct!(ToolResultPart, allow, {
    tool_call_id: "toolCallId" req,
    tool_name: "toolName" req,
});

from_json_struct!(ChatMessage, allow, {
    role: "role" req,
    content: "content" req,
    tool_calls: "toolCalls" opt,
    tool_result: "toolResult" opt,
    thinking: "thinking" opt,
});

from_json_struct!(Usage, allow, {
    input_tokens: "inputTokens" opt,
    output_tokens: "outputTokens" opt,
});

deserialize_via_json!(
    Role,
    ToolCallPart,
    ThinkingBlock,
    ToolResultPart,
    ChatMessage,
    Usage
);

/// One decoded event of a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmEvent {
    /// A piece of the reply text.
    Text(String),
    /// A piece of reasoning/thinking text (never part of the reply).
    Reasoning(String),
    /// Usage numbers; may arrive more than once (later values win field by field).
    Usage(Usage),
    /// A complete thinking block of the step (Anthropic), emitted at its end, to be sent back
    /// with the step's tool calls. Never shown: its text already came as `Reasoning`.
    Thinking(ThinkingBlock),
    /// A complete tool call: emitted once its arguments are complete (decoders assemble
    /// streamed argument fragments first), in the order the model made the calls.
    ToolCall(ToolCallPart),
    /// The provider said the step is complete, with its finish/stop reason when given
    /// (`tool_calls`, `tool_use`, … when the model stopped to have tools run).
    Done { finish_reason: Option<String> },
}

/// Why an LLM call failed. `code()` is the stable code of spec §8 (`system` `error` events).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The provider answered with an HTTP error status (or an error payload inside the stream,
    /// then `status` is the HTTP status of the response that carried it). Shown as
    /// `<provider>: HTTP <status> <statusText>: <excerpt>`; an error event inside a 2xx stream
    /// shows only the provider's message, `<provider>: <excerpt>` (spec §5: "HTTP 200 OK"
    /// would say the opposite of what happened).
    #[error("{provider}: {}", http_detail(*.status, .status_text, .body_excerpt))]
    Http {
        provider: String,
        status: u16,
        status_text: String,
        /// The first 200 characters of the body (or the error payload).
        body_excerpt: String,
        /// `Retry-After` in milliseconds when the provider sent one.
        retry_after_ms: Option<u64>,
    },
    /// The request never got a response (DNS, refused connection, CORS, cut connection).
    #[error("{provider}: {message}")]
    Network { provider: String, message: String },
    /// The bytes received do not follow the provider's wire format.
    #[error("{provider}: malformed response: {message}")]
    Decode { provider: String, message: String },
    #[error("{provider}: no complete reply within {seconds} s")]
    Timeout { provider: String, seconds: u64 },
    #[error("{provider}: no data for {seconds} s")]
    Stalled { provider: String, seconds: u64 },
    #[error("{provider}: cancelled")]
    Aborted { provider: String },
    /// `provider 'anthropic' is not configured: missing apiKey`
    #[error("provider '{provider}' is not configured: missing {missing}")]
    NotConfigured { provider: String, missing: String },
    /// A custom (JavaScript) provider threw or rejected; the message is its error's message.
    #[error("{message}")]
    Custom { message: String },
    /// A provider setting holds a value that cannot be used (an API key with a character an
    /// HTTP header cannot carry, a header name with a space, a `baseUrl` that is not an http(s)
    /// URL). `field` is spelled as in JSON (`apiKey`, `headers["X Foo"]`); `problem` says what
    /// is wrong and where, never the secret itself.
    #[error("invalid settings for provider '{provider}': {field} {problem}")]
    InvalidConfig {
        provider: String,
        field: String,
        problem: String,
    },
    /// The agent names a provider this engine does not know (a typo, most often).
    #[error("unknown provider '{provider}': use one of {valid}")]
    UnknownProvider {
        provider: String,
        /// The valid provider names, comma-separated, for the message.
        valid: String,
    },
    /// An agent lists a tool that is not registered when its reply starts (spec §9): the reply
    /// fails before any request, like a provider that is not configured.
    #[error("tool '{tool}' is not registered: agent '{agent}' lists it; register it with registerTool or remove it from the agent's tools")]
    ToolNotRegistered { tool: String, agent: String },
    /// The agent's dynamic instructions (`setInstructions`) threw or rejected; `message` is its
    /// error's message.
    #[error("the instructions of agent '{agent}' failed: {message}")]
    Instructions { agent: String, message: String },
    /// The provider answered, but refused to produce the reply (Gemini safety/recitation
    /// filters, a blocked prompt). `reason` says which filter and why, as the provider put it.
    #[error("{provider}: the reply was blocked: {reason}")]
    Blocked { provider: String, reason: String },
}

impl LlmError {
    /// The stable code carried by `system` `error` events.
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Http { .. }
            | LlmError::Network { .. }
            | LlmError::Decode { .. }
            | LlmError::Custom { .. }
            | LlmError::Instructions { .. }
            | LlmError::Blocked { .. } => "llm_error",
            LlmError::ToolNotRegistered { .. } => "tool_not_registered",
            LlmError::Timeout { .. } => "llm_timeout",
            LlmError::Stalled { .. } => "llm_stalled",
            LlmError::Aborted { .. } => "llm_aborted",
            LlmError::InvalidConfig { .. } => "invalid_input",
            // An unknown provider name is a configuration problem of the same kind as a missing
            // key: the call fails before any request and the fix is in the agent's settings.
            LlmError::NotConfigured { .. } | LlmError::UnknownProvider { .. } => {
                "provider_not_configured"
            }
        }
    }
}

/// The part of an HTTP failure's message after the provider's name.
fn http_detail(status: u16, status_text: &str, body_excerpt: &str) -> String {
    if (200..300).contains(&status) {
        body_excerpt.to_string()
    } else {
        format!("HTTP {status} {status_text}: {body_excerpt}")
    }
}
