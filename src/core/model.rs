//! The data model of spec §1: worlds, agents, messages, memory entries and chats, with the JS
//! field names (serde camelCase), the input types for creating and patching them (unknown fields
//! are an error, not silently dropped) and their validation.
//!
//! Timestamps are epoch milliseconds inside the engine ([`Timestamp`]) and ISO-8601 UTC strings
//! with milliseconds on the wire (`2026-11-22T07:30:00.000Z`).

use crate::core::json::Value;
use serde::{Serialize, Serializer};

use crate::core::error::WorldError;
use crate::core::json::{deserialize_via_json, from_json_struct, one_of, FromJson, JsonError};
use crate::core::json_write::{number_text, write_str, Obj, ToJson};

/// The default turn limit (spec §1: 0 or missing means 5).
pub const DEFAULT_TURN_LIMIT: u32 = 5;
/// The default number of memory entries sent to the LLM.
pub const DEFAULT_HISTORY_LIMIT: u32 = 10;
/// Longest world, agent or chat name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest system prompt or description, in characters.
pub const MAX_PROMPT_CHARS: usize = 100_000;
/// Longest message content, in characters (about 1 MB of text).
pub const MAX_MESSAGE_CHARS: usize = 1_000_000;
/// Longest world or agent id, in characters: an id is `kebab(name)` of a name of at most
/// [`MAX_NAME_CHARS`] characters, and lower-casing turns one character into at most three.
/// Also the bound of senders and of chat and message ids given from outside.
pub const MAX_ID_CHARS: usize = 3 * MAX_NAME_CHARS;
/// Largest accepted `historyLimit` (keeps the RAM window bounded).
pub const MAX_HISTORY_LIMIT: u32 = 1_000;
/// The name of every new chat.
pub const NEW_CHAT_NAME: &str = "New Chat";
/// The default number of LLM calls (steps) one reply may take (spec §9).
pub const DEFAULT_MAX_STEPS: u32 = 5;
/// The largest accepted `maxSteps` (spec §9).
pub const MAX_MAX_STEPS: u32 = 50;
/// The most tools one agent may list (a provider's request carries every one of them).
pub const MAX_AGENT_TOOLS: usize = 128;

/// Epoch milliseconds, serialised as an ISO-8601 UTC string with milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// `2026-11-22T07:30:00.000Z`.
    pub fn to_iso(self) -> String {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        if !(0..=9999).contains(&y) {
            // Outside what JavaScript's `Date` reads in this form: written as before, sign
            // and all (the fast path below has room for four digits only).
            return format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
                sod / 3600,
                (sod / 60) % 60,
                sod % 60
            );
        }
        // Digits written in place: every message event and stored record carries a timestamp,
        // and `format!` (the generic formatting machinery, a dozen calls per field) was a
        // tenth of the main thread's work per reply in a fresh process.
        let mut out = *b"0000-00-00T00:00:00.000Z";
        for (at, width, value) in [
            (0, 4, y),
            (5, 2, i64::from(m)),
            (8, 2, i64::from(d)),
            (11, 2, sod / 3600),
            (14, 2, (sod / 60) % 60),
            (17, 2, sod % 60),
            (20, 3, ms),
        ] {
            let mut v = value;
            for i in (at..at + width).rev() {
                if let Some(b) = out.get_mut(i) {
                    *b = b'0' + (v % 10) as u8;
                }
                v /= 10;
            }
        }
        // ASCII digits and separators only: always valid UTF-8.
        String::from_utf8(out.to_vec()).unwrap_or_default()
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (the form [`Timestamp::to_iso`] writes; a `+00:00`
    /// offset is accepted too), years 0000 to 9999, no leap second (`:60` would roll
    /// `9999-12-31T23:59:60Z` over into the year 10000). Anything else is `None`.
    pub fn parse_iso(s: &str) -> Option<Timestamp> {
        let s = s.strip_suffix('Z').or_else(|| s.strip_suffix("+00:00"))?;
        let (date, time) = s.split_once('T')?;
        let mut dp = date.splitn(3, '-');
        // Four digits: years 0000 to 9999, the range JavaScript's `Date` parses in this form
        // (a year 10000 would be written back as `10000-…`, which JavaScript cannot read).
        let year = dp.next()?;
        if year.len() != 4 || !year.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let y = super::parse_i64(year)?;
        let m = super::parse_u32(dp.next()?)?;
        let d = super::parse_u32(dp.next()?)?;
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (time, None),
        };
        let mut tp = hms.splitn(3, ':');
        let hh = super::parse_i64(tp.next()?)?;
        let mm = super::parse_i64(tp.next()?)?;
        let ss = super::parse_i64(tp.next()?)?;
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
            return None;
        }
        if !(0..24).contains(&hh) || !(0..60).contains(&mm) || !(0..60).contains(&ss) {
            return None;
        }
        let ms = match frac {
            None => 0,
            Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
                let padded = format!("{f:0<3}");
                super::parse_i64(padded.get(..3)?)?
            }
            Some(_) => return None,
        };
        let days = days_from_civil(y, m, d);
        Some(Timestamp(
            ((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1000) + ms,
        ))
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's `days_from_civil`: days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_iso())
    }
}

/// A world's persisted settings (spec §1 "World").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldData {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub turn_limit: u32,
    pub history_limit: u32,
    /// `None` = session mode off (spec §6).
    pub current_chat_id: Option<String>,
    #[serde(rename = "chatLLMProvider", skip_serializing_if = "Option::is_none")]
    pub chat_llm_provider: Option<String>,
    #[serde(rename = "chatLLMModel", skip_serializing_if = "Option::is_none")]
    pub chat_llm_model: Option<String>,
    pub created_at: Timestamp,
    pub last_updated: Timestamp,
}

/// An agent (spec §1 "Agent"). `llm_call_count` and `last_llm_call` are the turn counter of the
/// current chat (or of RAM when session mode is off); the store keeps them per chat.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub agent_type: String,
    pub provider: String,
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_limit: Option<u32>,
    pub stream: bool,
    /// The names of the world's tools this agent may call (spec §9); checked against the
    /// registered tools when a reply starts, not when the agent is saved (tools are runtime
    /// only and may be registered later).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// LLM calls one reply may take (1–50); the last one is offered no tools. Left out of the
    /// serialised agent when it is the default (5), like the other optional settings: records
    /// and exports of agents that never set it look as they did before tools.
    #[serde(skip_serializing_if = "is_default_max_steps")]
    pub max_steps: u32,
    /// The thinking setting each provider codec encodes in its own way (ignored by providers
    /// without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    pub llm_call_count: u32,
    #[serde(rename = "lastLLMCall", skip_serializing_if = "Option::is_none")]
    pub last_llm_call: Option<Timestamp>,
    pub created_at: Timestamp,
    pub last_active: Timestamp,
    pub status: String,
}

fn is_default_max_steps(n: &u32) -> bool {
    *n == DEFAULT_MAX_STEPS
}

/// How hard a model should think (spec §9 `reasoning.effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

/// An agent's `reasoning` setting: `{effort?, budgetTokens?}` (spec §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Reasoning {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<ReasoningEffort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u32>,
}

/// One tool call of a published reply (spec §9 "The published reply"): what was called with
/// which arguments, and what came back. Exactly one of `result` / `error` is set once the call
/// ran; a call whose arguments were refused has `error` and was never executed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    pub tool_call_id: String,
    pub tool_name: String,
    /// The parsed arguments; arguments that were not valid JSON are kept as their raw text
    /// (a JSON string), so the transcript shows what the model sent.
    pub args: crate::core::json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<crate::core::json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A tool call as the agent's memory keeps it (on a `role: "assistant"` entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRef {
    pub tool_call_id: String,
    pub tool_name: String,
    /// As in [`ToolCallRecord::args`].
    pub args: crate::core::json::Value,
}

/// What kind of message was published (spec §1 "Message").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    #[default]
    Message,
    TurnLimit,
    Pass,
    Interrupted,
}

/// A published message.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub message_id: String,
    /// `null` when session mode is off (the message event always carries the field).
    pub chat_id: Option<String>,
    pub sender: String,
    pub content: String,
    pub created_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_to_message_id: Option<String>,
    pub kind: MessageKind,
    /// The tool calls the reply made (spec §9), absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRecord>,
}

/// `user`, `assistant` or `tool` (spec §1 "Memory entry", §9 "Memory").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MemoryRole {
    #[default]
    User,
    Assistant,
    /// The result of one tool call (`toolCallId`, `toolName`; `content` is the result as JSON
    /// text).
    Tool,
}

/// One entry of an agent's memory. The entries of one reply's tool steps share the reply's
/// `messageId`: an `assistant` entry with `toolCalls` followed by one `tool` entry per call (a
/// *tool group*), between M and the final reply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    pub role: MemoryRole,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    pub message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    pub created_at: Timestamp,
    /// On an `assistant` entry: the calls of that step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRef>,
    /// On a `tool` entry: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// On a `tool` entry: the tool that was called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl MemoryEntry {
    /// A plain text entry (no tool data).
    pub fn text(
        role: MemoryRole,
        content: impl Into<String>,
        sender: Option<String>,
        message_id: impl Into<String>,
        chat_id: Option<String>,
        created_at: Timestamp,
    ) -> Self {
        MemoryEntry {
            role,
            content: content.into(),
            sender,
            message_id: message_id.into(),
            chat_id,
            created_at,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        }
    }
}

/// Where a chat's name came from (spec §6 "Title").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TitleSource {
    #[default]
    Default,
    Auto,
    Manual,
}

/// A chat (spec §1 "Chat").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chat {
    pub id: String,
    pub world_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub message_count: u64,
    pub title_source: TitleSource,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// Input of `World::create`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateWorld {
    pub name: String,
    pub description: Option<String>,
    /// A number so that `2.5` and `-1` reach validation (→ `invalid_turn_limit`).
    pub turn_limit: Option<f64>,
    pub history_limit: Option<i64>,
    #[serde(rename = "chatLLMProvider")]
    pub chat_llm_provider: Option<String>,
    #[serde(rename = "chatLLMModel")]
    pub chat_llm_model: Option<String>,
}

/// Input of `World::add_agent`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewAgent {
    pub name: String,
    /// Free-form agent type; `"default"` when missing.
    #[serde(rename = "type")]
    pub agent_type: Option<String>,
    pub provider: String,
    pub model: String,
    pub system_prompt: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<i64>,
    pub history_limit: Option<i64>,
    /// Streaming is the default (spec §1).
    pub stream: Option<bool>,
    /// Names of registered (or later registered) tools the agent may call.
    pub tools: Option<Vec<String>>,
    /// A number so that `2.5` and `0` reach validation (→ `invalid_input` naming `maxSteps`).
    pub max_steps: Option<f64>,
    pub reasoning: Option<Reasoning>,
}

/// A partial update of an agent. A missing field keeps its value; for the optional settings,
/// `null` clears them (`Some(None)`). The id never changes, even when the name does.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentPatch {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub agent_type: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub system_prompt: Option<Option<String>>,
    pub temperature: Option<Option<f64>>,
    pub max_tokens: Option<Option<i64>>,
    pub history_limit: Option<Option<i64>>,
    pub stream: Option<bool>,
    pub status: Option<String>,
    /// `null` empties the list.
    pub tools: Option<Option<Vec<String>>>,
    /// `null` restores the default (5).
    pub max_steps: Option<Option<f64>>,
    /// `null` clears it.
    pub reasoning: Option<Option<Reasoning>>,
}

/// A partial update of a world. The id never changes, even when the name does (renaming a world
/// must not orphan its chats).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorldPatch {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub turn_limit: Option<f64>,
    pub history_limit: Option<i64>,
    #[serde(rename = "chatLLMProvider")]
    pub chat_llm_provider: Option<Option<String>>,
    #[serde(rename = "chatLLMModel")]
    pub chat_llm_model: Option<Option<String>>,
}

// ---- Writing (see `crate::core::json_write`: one hand-written writer per type, the derived
// form's field order and skip rules) ----

impl ToJson for WorldData {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("id", &self.id)
            .str("name", &self.name)
            .opt("description", &self.description)
            .field("turnLimit", &self.turn_limit)
            .field("historyLimit", &self.history_limit)
            .field("currentChatId", &self.current_chat_id)
            .opt("chatLLMProvider", &self.chat_llm_provider)
            .opt("chatLLMModel", &self.chat_llm_model)
            .field("createdAt", &self.created_at)
            .field("lastUpdated", &self.last_updated)
            .end();
    }
}

impl ToJson for Agent {
    fn write_json(&self, out: &mut String) {
        let mut o = Obj::new(out);
        o.str("id", &self.id)
            .str("name", &self.name)
            .str("type", &self.agent_type)
            .str("provider", &self.provider)
            .str("model", &self.model)
            .opt("systemPrompt", &self.system_prompt)
            .opt("temperature", &self.temperature)
            .opt("maxTokens", &self.max_tokens)
            .opt("historyLimit", &self.history_limit)
            .field("stream", &self.stream)
            .list("tools", &self.tools);
        if !is_default_max_steps(&self.max_steps) {
            o.field("maxSteps", &self.max_steps);
        }
        o.opt("reasoning", &self.reasoning)
            .field("llmCallCount", &self.llm_call_count)
            .opt("lastLLMCall", &self.last_llm_call)
            .field("createdAt", &self.created_at)
            .field("lastActive", &self.last_active)
            .str("status", &self.status)
            .end();
    }
}

impl ToJson for ReasoningEffort {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                ReasoningEffort::Low => "low",
                ReasoningEffort::Medium => "medium",
                ReasoningEffort::High => "high",
            },
        );
    }
}

impl ToJson for Reasoning {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .opt("effort", &self.effort)
            .opt("budgetTokens", &self.budget_tokens)
            .end();
    }
}

impl ToJson for ToolCallRecord {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("toolCallId", &self.tool_call_id)
            .str("toolName", &self.tool_name)
            .field("args", &self.args)
            .opt("result", &self.result)
            .opt("error", &self.error)
            .end();
    }
}

impl ToJson for ToolCallRef {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("toolCallId", &self.tool_call_id)
            .str("toolName", &self.tool_name)
            .field("args", &self.args)
            .end();
    }
}

impl ToJson for MessageKind {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                MessageKind::Message => "message",
                MessageKind::TurnLimit => "turn-limit",
                MessageKind::Pass => "pass",
                MessageKind::Interrupted => "interrupted",
            },
        );
    }
}

impl ToJson for Message {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("messageId", &self.message_id)
            .field("chatId", &self.chat_id)
            .str("sender", &self.sender)
            .str("content", &self.content)
            .field("createdAt", &self.created_at)
            .opt("replyToMessageId", &self.reply_to_message_id)
            .field("kind", &self.kind)
            .list("toolCalls", &self.tool_calls)
            .end();
    }
}

impl ToJson for MemoryRole {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                MemoryRole::User => "user",
                MemoryRole::Assistant => "assistant",
                MemoryRole::Tool => "tool",
            },
        );
    }
}

impl ToJson for MemoryEntry {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("role", &self.role)
            .str("content", &self.content)
            .opt("sender", &self.sender)
            .str("messageId", &self.message_id)
            .opt("chatId", &self.chat_id)
            .field("createdAt", &self.created_at)
            .list("toolCalls", &self.tool_calls)
            .opt("toolCallId", &self.tool_call_id)
            .opt("toolName", &self.tool_name)
            .end();
    }
}

impl ToJson for TitleSource {
    fn write_json(&self, out: &mut String) {
        write_str(
            out,
            match self {
                TitleSource::Default => "default",
                TitleSource::Auto => "auto",
                TitleSource::Manual => "manual",
            },
        );
    }
}

impl ToJson for Chat {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("id", &self.id)
            .str("worldId", &self.world_id)
            .str("name", &self.name)
            .opt("description", &self.description)
            .field("messageCount", &self.message_count)
            .field("titleSource", &self.title_source)
            .field("createdAt", &self.created_at)
            .field("updatedAt", &self.updated_at)
            .end();
    }
}

// ---- Decoding (see `crate::core::json`: one hand-written reader per type, serde's rules) ----

impl FromJson for ReasoningEffort {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        use ReasoningEffort::*;
        Ok([Low, Medium, High][one_of(v, &["low", "medium", "high"])?])
    }
}

impl FromJson for MessageKind {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        use MessageKind::*;
        let names = ["message", "turn-limit", "pass", "interrupted"];
        Ok([Message, TurnLimit, Pass, Interrupted][one_of(v, &names)?])
    }
}

impl FromJson for MemoryRole {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        use MemoryRole::*;
        Ok([User, Assistant, Tool][one_of(v, &["user", "assistant", "tool"])?])
    }
}

impl FromJson for TitleSource {
    fn from_json(v: Value) -> Result<Self, JsonError> {
        use TitleSource::*;
        Ok([Default, Auto, Manual][one_of(v, &["default", "auto", "manual"])?])
    }
}

from_json_struct!(WorldData, deny, {
    id: "id" req,
    name: "name" req,
    description: "description" opt,
    turn_limit: "turnLimit" req,
    history_limit: "historyLimit" req,
    current_chat_id: "currentChatId" opt,
    chat_llm_provider: "chatLLMProvider" opt,
    chat_llm_model: "chatLLMModel" opt,
    created_at: "createdAt" req,
    last_updated: "lastUpdated" req,
});

from_json_struct!(Agent, deny, {
    id: "id" req,
    name: "name" req,
    agent_type: "type" req,
    provider: "provider" req,
    model: "model" req,
    system_prompt: "systemPrompt" opt,
    temperature: "temperature" opt,
    max_tokens: "maxTokens" opt,
    history_limit: "historyLimit" opt,
    stream: "stream" req,
    tools: "tools" opt,
    max_steps: "maxSteps" or(DEFAULT_MAX_STEPS),
    reasoning: "reasoning" opt,
    llm_call_count: "llmCallCount" opt,
    last_llm_call: "lastLLMCall" opt,
    created_at: "createdAt" req,
    last_active: "lastActive" req,
    status: "status" req,
});

from_json_struct!(Reasoning, deny, {
    effort: "effort" opt,
    budget_tokens: "budgetTokens" opt,
});

from_json_struct!(ToolCallRecord, deny, {
    tool_call_id: "toolCallId" req,
    tool_name: "toolName" req,
    args: "args" req,
    // As serde reads an `Option<Value>`: `null` is `None`.
    result: "result" opt,
    error: "error" opt,
});

from_json_struct!(ToolCallRef, deny, {
    tool_call_id: "toolCallId" req,
    tool_name: "toolName" req,
    args: "args" req,
});

from_json_struct!(Message, deny, {
    message_id: "messageId" req,
    chat_id: "chatId" opt,
    sender: "sender" req,
    content: "content" req,
    created_at: "createdAt" req,
    reply_to_message_id: "replyToMessageId" opt,
    kind: "kind" req,
    tool_calls: "toolCalls" opt,
});

from_json_struct!(MemoryEntry, deny, {
    role: "role" req,
    content: "content" req,
    sender: "sender" opt,
    message_id: "messageId" req,
    chat_id: "chatId" opt,
    created_at: "createdAt" req,
    tool_calls: "toolCalls" opt,
    tool_call_id: "toolCallId" opt,
    tool_name: "toolName" opt,
});

from_json_struct!(Chat, deny, {
    id: "id" req,
    world_id: "worldId" req,
    name: "name" req,
    description: "description" opt,
    message_count: "messageCount" req,
    title_source: "titleSource" req,
    created_at: "createdAt" req,
    updated_at: "updatedAt" req,
});

from_json_struct!(CreateWorld, deny, {
    name: "name" req,
    description: "description" opt,
    turn_limit: "turnLimit" opt,
    history_limit: "historyLimit" opt,
    chat_llm_provider: "chatLLMProvider" opt,
    chat_llm_model: "chatLLMModel" opt,
});

from_json_struct!(NewAgent, deny, {
    name: "name" req,
    agent_type: "type" opt,
    provider: "provider" req,
    model: "model" req,
    system_prompt: "systemPrompt" opt,
    temperature: "temperature" opt,
    max_tokens: "maxTokens" opt,
    history_limit: "historyLimit" opt,
    stream: "stream" opt,
    tools: "tools" opt,
    max_steps: "maxSteps" opt,
    reasoning: "reasoning" opt,
});

from_json_struct!(AgentPatch, deny, {
    name: "name" opt,
    agent_type: "type" opt,
    provider: "provider" opt,
    model: "model" opt,
    system_prompt: "systemPrompt" patch,
    temperature: "temperature" patch,
    max_tokens: "maxTokens" patch,
    history_limit: "historyLimit" patch,
    stream: "stream" opt,
    status: "status" opt,
    tools: "tools" patch,
    max_steps: "maxSteps" patch,
    reasoning: "reasoning" patch,
});

from_json_struct!(WorldPatch, deny, {
    name: "name" opt,
    description: "description" patch,
    turn_limit: "turnLimit" opt,
    history_limit: "historyLimit" opt,
    chat_llm_provider: "chatLLMProvider" patch,
    chat_llm_model: "chatLLMModel" patch,
});

deserialize_via_json!(
    Timestamp,
    ReasoningEffort,
    MessageKind,
    MemoryRole,
    TitleSource,
    WorldData,
    Agent,
    Reasoning,
    ToolCallRecord,
    ToolCallRef,
    Message,
    MemoryEntry,
    Chat,
    CreateWorld,
    NewAgent,
    AgentPatch,
    WorldPatch,
);

/// spec §1: an integer ≥ 1; 0 or missing means 5; anything else is `invalid_turn_limit`.
pub fn validate_turn_limit(v: Option<f64>) -> Result<u32, WorldError> {
    match v {
        None => Ok(DEFAULT_TURN_LIMIT),
        Some(0.0) => Ok(DEFAULT_TURN_LIMIT),
        Some(x) if x.is_finite() && x.fract() == 0.0 && x >= 1.0 && x <= f64::from(u32::MAX) => {
            Ok(x as u32)
        }
        Some(x) => Err(WorldError::InvalidTurnLimit(number_text(x))),
    }
}

/// `historyLimit`: an integer in 1..=[`MAX_HISTORY_LIMIT`].
pub fn validate_history_limit(field: &str, v: i64) -> Result<u32, WorldError> {
    if (1..=i64::from(MAX_HISTORY_LIMIT)).contains(&v) {
        Ok(v as u32)
    } else {
        Err(WorldError::input(
            field,
            format!("{v} is out of range; use an integer from 1 to {MAX_HISTORY_LIMIT}"),
        ))
    }
}

/// A display name: not blank, at most [`MAX_NAME_CHARS`] characters. Returned trimmed.
pub fn validate_name(field: &str, name: &str) -> Result<String, WorldError> {
    let t = name.trim();
    at_most(field, t, MAX_NAME_CHARS)?;
    Ok(t.to_string())
}

/// Long free text (system prompt, description): at most [`MAX_PROMPT_CHARS`] characters; blank
/// counts as none (spec §1).
pub fn validate_text(field: &str, text: Option<String>) -> Result<Option<String>, WorldError> {
    match text {
        None => Ok(None),
        Some(t) if t.trim().is_empty() => Ok(None),
        Some(t) => {
            at_most(field, &t, MAX_PROMPT_CHARS)?;
            Ok(Some(t))
        }
    }
}

/// A chat's name (`renameChat`, import): a display name that is not blank.
pub fn validate_chat_name(field: &str, name: &str) -> Result<String, WorldError> {
    let name = validate_name(field, name)?;
    if name.is_empty() {
        return Err(WorldError::input(field, "is blank; give the chat a name"));
    }
    Ok(name)
}

/// A message's sender as given to `send()` (spec §2): not blank, kept as written; at most
/// [`MAX_ID_CHARS`] characters (a sender is a person's or an agent's name).
pub fn validate_sender(sender: &str) -> Result<(), WorldError> {
    if sender.trim().is_empty() {
        return Err(WorldError::InvalidSender(sender.to_string()));
    }
    at_most("sender", sender, MAX_ID_CHARS)
}

/// A message's content (spec §2): not empty after trimming, at most [`MAX_MESSAGE_CHARS`].
pub fn validate_content(content: &str) -> Result<(), WorldError> {
    if content.trim().is_empty() {
        return Err(WorldError::EmptyMessage);
    }
    let n = content.chars().count();
    if n > MAX_MESSAGE_CHARS {
        return Err(WorldError::MessageTooLong(n, MAX_MESSAGE_CHARS));
    }
    Ok(())
}

/// A provider name (spec §7): one of the known providers, in any ASCII case and surrounded by
/// any whitespace; returned as the provider's own name (`" OpenAI "` → `openai`).
pub fn validate_provider(field: &str, v: &str) -> Result<String, WorldError> {
    crate::core::llm::provider::ProviderKind::parse(v)
        .map(|k| k.as_str().to_string())
        .map_err(|e| WorldError::input(field, e.to_string()))
}

/// A world or agent id given from outside (import): one the API could have made from a name,
/// i.e. `kebab(id) == id` (not empty, no reserved agent id), at most [`MAX_ID_CHARS`].
pub fn validate_id(field: &str, id: &str, agent: bool) -> Result<(), WorldError> {
    at_most(field, id, MAX_ID_CHARS)?;
    let canonical = if agent {
        crate::core::ids::agent_id(id)
    } else {
        crate::core::ids::world_id(id)
    }
    .map_err(|e| WorldError::input(field, e.to_string()))?;
    if canonical != id {
        return Err(WorldError::input(
            field,
            format!("{id:?} is not an id; ids are kebab-case, such as {canonical:?}"),
        ));
    }
    Ok(())
}

/// A world's `chatLLMProvider`: blank or none → none, else a known provider.
pub fn validate_chat_llm_provider(v: Option<String>) -> Result<Option<String>, WorldError> {
    match v {
        Some(p) if !p.trim().is_empty() => validate_provider("chatLLMProvider", &p).map(Some),
        _ => Ok(None),
    }
}

/// The id of a chat or a message given from outside (import): the engine makes them (uuids),
/// so anything not blank and at most [`MAX_ID_CHARS`] characters is accepted.
pub fn validate_record_id(field: &str, id: &str) -> Result<(), WorldError> {
    if id.trim().is_empty() {
        return Err(WorldError::input(
            field,
            "is blank; every record needs an id",
        ));
    }
    at_most(field, id, MAX_ID_CHARS)
}

/// At most `max` characters: the one length check (and its error) of the text fields.
#[inline(never)]
fn at_most(field: &str, s: &str, max: usize) -> Result<(), WorldError> {
    let n = s.chars().count();
    if n > max {
        return Err(WorldError::input(
            field,
            format!("{n} characters is too long; use at most {max}"),
        ));
    }
    Ok(())
}

/// A provider or model name: not blank.
pub fn validate_required(field: &str, v: &str) -> Result<String, WorldError> {
    let t = v.trim();
    if t.is_empty() {
        Err(WorldError::input(field, "is blank; give a value"))
    } else {
        Ok(t.to_string())
    }
}

/// `temperature`: a finite number from 0 to 2.
pub fn validate_temperature(v: f64) -> Result<f64, WorldError> {
    if v.is_finite() && (0.0..=2.0).contains(&v) {
        Ok(v)
    } else {
        Err(WorldError::input(
            "temperature",
            format!(
                "{} is out of range; use a number from 0 to 2",
                number_text(v)
            ),
        ))
    }
}

/// `maxTokens`: an integer ≥ 1.
pub fn validate_max_tokens(v: i64) -> Result<u32, WorldError> {
    if v >= 1 && v <= i64::from(u32::MAX) {
        Ok(v as u32)
    } else {
        Err(WorldError::input(
            "maxTokens",
            format!("{v} is out of range; use an integer of at least 1"),
        ))
    }
}

/// `maxSteps`: an integer from 1 to [`MAX_MAX_STEPS`].
pub fn validate_max_steps(v: f64) -> Result<u32, WorldError> {
    if v.is_finite() && v.fract() == 0.0 && (1.0..=f64::from(MAX_MAX_STEPS)).contains(&v) {
        Ok(v as u32)
    } else {
        Err(WorldError::input(
            "maxSteps",
            format!(
                "{} is out of range; use an integer from 1 to {MAX_MAX_STEPS}",
                number_text(v)
            ),
        ))
    }
}

/// Whether `name` is a valid tool name (spec §9: `^[A-Za-z0-9_-]{1,64}$`, the rule every
/// provider accepts).
pub fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// An agent's `tools`: valid tool names, each at most once, at most [`MAX_AGENT_TOOLS`].
/// Whether they are registered is checked when a reply starts (`tool_not_registered`).
pub fn validate_agent_tools(names: Vec<String>) -> Result<Vec<String>, WorldError> {
    if names.len() > MAX_AGENT_TOOLS {
        return Err(WorldError::input(
            "tools",
            format!(
                "{} tools is too many; list at most {MAX_AGENT_TOOLS}",
                names.len()
            ),
        ));
    }
    for (i, n) in names.iter().enumerate() {
        if !is_tool_name(n) {
            return Err(WorldError::input(
                &format!("tools[{i}]"),
                format!("{n:?} is not a tool name; use 1 to 64 of A-Z a-z 0-9 _ -"),
            ));
        }
        if names.iter().take(i).any(|m| m == n) {
            return Err(WorldError::input(
                &format!("tools[{i}]"),
                format!("{n:?} is listed twice; list each tool once"),
            ));
        }
    }
    Ok(names)
}

/// `reasoning.budgetTokens`: an integer ≥ 1 when given.
pub fn validate_reasoning(r: Reasoning) -> Result<Reasoning, WorldError> {
    if r.budget_tokens == Some(0) {
        return Err(WorldError::input(
            "reasoning.budgetTokens",
            "0 is out of range; use an integer of at least 1",
        ));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_digits_are_the_formatted_fields() {
        // Across the fast path's whole range (years 0000 to 9999, every field's carries) and
        // beyond it (negative and five-digit years take the formatted path).
        let reference = |t: Timestamp| {
            let ms = t.0.rem_euclid(1000);
            let secs = t.0.div_euclid(1000);
            let sod = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
            format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
                sod / 3600,
                (sod / 60) % 60,
                sod % 60
            )
        };
        let mut ms = -62_200_000_000_000i64; // before the year 0000
        while ms < 253_500_000_000_000 {
            // after the year 9999
            assert_eq!(Timestamp(ms).to_iso(), reference(Timestamp(ms)), "{ms}");
            ms += 987_654_321_987;
        }
        // Every hour, minute, second and millisecond digit, days of every month and leap year.
        let mut ms = 0i64;
        while ms < 40_000_000_000_000 {
            assert_eq!(Timestamp(ms).to_iso(), reference(Timestamp(ms)), "{ms}");
            ms += 3_777_777_777;
        }
        for ms in [
            -62_167_219_200_001i64,
            -62_167_219_200_000,
            253_402_300_799_999,
            253_402_300_800_000,
        ] {
            assert_eq!(Timestamp(ms).to_iso(), reference(Timestamp(ms)), "{ms}");
        }
        assert_eq!(
            Timestamp(253_402_300_799_999).to_iso(),
            "9999-12-31T23:59:59.999Z"
        );
        assert_eq!(
            Timestamp(1_764_012_345_678).to_iso(),
            "2025-11-24T19:25:45.678Z"
        );
    }

    #[test]
    fn iso_round_trip() {
        let t = Timestamp::parse_iso("2026-11-22T07:30:00.000Z");
        assert!(t.is_some());
        let t = t.unwrap_or_default();
        assert_eq!(t.to_iso(), "2026-11-22T07:30:00.000Z");
        assert_eq!(Timestamp(0).to_iso(), "1970-01-01T00:00:00.000Z");
        assert_eq!(Timestamp(-1).to_iso(), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            Timestamp(951_782_400_123).to_iso(),
            "2000-02-29T00:00:00.123Z"
        );
        for ms in [
            0i64,
            1,
            86_399_999,
            1_700_000_000_000,
            -86_400_001,
            4_102_444_800_000,
        ] {
            assert_eq!(
                Timestamp::parse_iso(&Timestamp(ms).to_iso()),
                Some(Timestamp(ms))
            );
        }
        assert_eq!(
            Timestamp::parse_iso("2026-11-22T07:30:00Z"),
            Some(Timestamp(t.0))
        );
        assert_eq!(Timestamp::parse_iso("2026-02-30T00:00:00Z"), None);
        assert_eq!(Timestamp::parse_iso("yesterday"), None);
        // Only what JavaScript can read back: four-digit years, no leap second.
        assert_eq!(Timestamp::parse_iso("10000-01-01T00:00:00.000Z"), None);
        assert_eq!(Timestamp::parse_iso("9999-12-31T23:59:60Z"), None);
        assert_eq!(Timestamp::parse_iso("+2026-01-01T00:00:00Z"), None);
        assert_eq!(
            Timestamp::parse_iso("9999-12-31T23:59:59.999Z").map(Timestamp::to_iso),
            Some("9999-12-31T23:59:59.999Z".to_string())
        );
    }

    #[test]
    fn turn_limit_rule() {
        assert_eq!(validate_turn_limit(None), Ok(5));
        assert_eq!(validate_turn_limit(Some(0.0)), Ok(5));
        assert_eq!(validate_turn_limit(Some(3.0)), Ok(3));
        for bad in [-1.0, 2.5, f64::NAN] {
            assert_eq!(
                validate_turn_limit(Some(bad)).map_err(|e| e.code()),
                Err("invalid_turn_limit")
            );
        }
    }

    /// The texts quote the rejected number as the JS caller wrote it (`Infinity`, `1e+21`, not
    /// Rust's `inf` and 22 digits), name the field and say what to pass instead.
    #[test]
    fn number_errors_quote_the_value_as_js_does() {
        let text = |r: Result<u32, WorldError>| r.err().map(|e| e.to_string());
        assert_eq!(
            text(validate_turn_limit(Some(2.5))).as_deref(),
            Some("turnLimit 2.5 is invalid; use an integer of at least 1 (0 or none means 5)")
        );
        assert_eq!(
            text(validate_turn_limit(Some(f64::INFINITY))).as_deref(),
            Some("turnLimit Infinity is invalid; use an integer of at least 1 (0 or none means 5)")
        );
        assert_eq!(
            text(validate_turn_limit(Some(-1.0))).as_deref(),
            Some("turnLimit -1 is invalid; use an integer of at least 1 (0 or none means 5)")
        );
        assert_eq!(
            text(validate_max_steps(1e21)).as_deref(),
            Some("invalid maxSteps: 1e+21 is out of range; use an integer from 1 to 50")
        );
        assert_eq!(
            text(validate_max_steps(0.5)).as_deref(),
            Some("invalid maxSteps: 0.5 is out of range; use an integer from 1 to 50")
        );
        for (v, shown) in [
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (3.0, "3"),
        ] {
            assert_eq!(
                validate_temperature(v).err().map(|e| e.to_string()),
                Some(format!(
                    "invalid temperature: {shown} is out of range; use a number from 0 to 2"
                ))
            );
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let r: Result<NewAgent, _> =
            serde_json::from_str(r#"{"name":"a","provider":"openai","model":"m","temprature":1}"#);
        assert!(r.is_err());
        let p: AgentPatch = serde_json::from_str(r#"{"temperature":null}"#).unwrap_or_default();
        assert_eq!(p.temperature, Some(None));
    }

    #[test]
    fn message_serialises_with_js_names() {
        let m = Message {
            message_id: "m1".into(),
            chat_id: None,
            sender: "HUMAN".into(),
            content: "hi".into(),
            created_at: Timestamp(0),
            reply_to_message_id: Some("m0".into()),
            kind: MessageKind::TurnLimit,
            tool_calls: Vec::new(),
        };
        let v = crate::core::json::to_value(&m);
        assert_eq!(v["messageId"], "m1");
        assert_eq!(v["replyToMessageId"], "m0");
        assert_eq!(v["kind"], "turn-limit");
        assert_eq!(v["createdAt"], "1970-01-01T00:00:00.000Z");
        assert!(v.get("toolCalls").is_none(), "absent when there are none");
    }

    #[test]
    fn max_steps_rule() {
        assert_eq!(validate_max_steps(1.0), Ok(1));
        assert_eq!(validate_max_steps(50.0), Ok(50));
        for bad in [0.0, 51.0, 2.5, -1.0, f64::INFINITY] {
            match validate_max_steps(bad) {
                Err(WorldError::InvalidInput { field, .. }) => assert_eq!(field, "maxSteps"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn tool_names() {
        assert!(is_tool_name("get_weather"));
        assert!(is_tool_name("A-1"));
        assert!(is_tool_name(&"x".repeat(64)));
        for bad in ["", "a b", "a.b", "é", &"x".repeat(65)] {
            assert!(!is_tool_name(bad), "{bad:?}");
        }
        assert_eq!(
            validate_agent_tools(vec!["a".into(), "a".into()]).map_err(|e| e.to_string()),
            Err("invalid tools[1]: \"a\" is listed twice; list each tool once".to_string())
        );
    }

    #[test]
    fn agents_of_older_records_get_the_tool_defaults() {
        let v = serde_json::json!({"id": "a", "name": "a", "type": "default", "provider": "openai",
            "model": "m", "stream": true, "createdAt": "2026-01-01T00:00:00.000Z",
            "lastActive": "2026-01-01T00:00:00.000Z", "status": "active"});
        let a: Agent = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.tools.len(), a.max_steps, a.reasoning), (0, 5, None));
        let out = crate::core::json::to_value(&a);
        assert!(
            out.get("maxSteps").is_none() && out.get("tools").is_none(),
            "defaults are left out"
        );
        assert!(out.get("reasoning").is_none());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::Timestamp;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn iso_round_trips_for_any_instant(ms in -62_135_596_800_000i64..253_402_300_799_999i64) {
            let iso = Timestamp(ms).to_iso();
            prop_assert_eq!(iso.len(), 24);
            prop_assert_eq!(Timestamp::parse_iso(&iso), Some(Timestamp(ms)));
        }
    }
}
