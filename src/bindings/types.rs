//! The TypeScript shapes of everything that crosses the JS boundary as a plain object: inputs
//! (options, agent configs, patches) and outputs (worlds, agents, messages, chats, events).
//!
//! They mirror the serde shapes of the core's types (`src/core/model.rs`, `src/core/events.rs`;
//! camelCase, `None` fields left out). `tests/js/types.test.mjs` keeps them true: it fails when
//! the published `.d.ts` has an `any`, and compares the keys these interfaces declare with the
//! keys of real objects the package returns and emits.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** An ISO-8601 UTC timestamp with milliseconds, e.g. "2026-11-22T07:30:00.000Z". */
export type Timestamp = string;

/** Where worlds live: IndexedDB (default in pages and workers) or memory (default elsewhere). */
export type StorageKind = "indexeddb" | "memory";

/** Options shared by the static methods of AgentWorld. */
export interface StorageOptions {
  /** Where worlds live (see StorageKind), or your own StoreAdapter. */
  storage?: StorageOption;
  /** Emit `system` `debug` events explaining every routing decision. */
  debug?: boolean;
  /** `create`/`open`: warn on the console about a failed LLM call while nothing listens to
   * `system` events (default true). */
  warnUnhandledErrors?: boolean;
}

/** `AgentWorld.create` options. */
export interface CreateWorldOptions extends StorageOptions {
  name: string;
  description?: string;
  /** LLM calls per agent before it hands control back to the human (integer ≥ 1; 0 → 5). */
  turnLimit?: number;
  /** Memory entries an agent sends to the LLM (default 10). */
  historyLimit?: number;
  /** With chatLLMModel: chat titles are written by this provider's model. */
  chatLLMProvider?: ProviderName;
  chatLLMModel?: string;
  /** A world with this id is stored already: `"error"` (default, `world_exists`) or `"open"`
   * it as it is (open-or-create, e.g. on every page load). */
  ifExists?: "error" | "open";
}

/** `AgentWorld.import` options. */
export interface ImportOptions extends StorageOptions {
  /** `"copy"`: import next to the world the document came from, under a new name and id. */
  as?: "original" | "copy";
  /** With `as: "copy"`: the copy's name (default `<name> (copy)`, then `(copy 2)`, …). */
  name?: string;
}

/** A world's settings. `currentChatId` is null when session mode is off. */
export interface WorldInfo {
  id: string;
  name: string;
  description?: string;
  turnLimit: number;
  historyLimit: number;
  currentChatId: string | null;
  chatLLMProvider?: string;
  chatLLMModel?: string;
  createdAt: Timestamp;
  lastUpdated: Timestamp;
}

/** `world.update` patch: only the given fields change; `null` clears an optional one. */
export interface WorldPatch {
  name?: string;
  description?: string | null;
  turnLimit?: number;
  historyLimit?: number;
  chatLLMProvider?: ProviderName | null;
  chatLLMModel?: string | null;
}

export type ProviderName =
  | "openai" | "anthropic" | "google" | "azure" | "xai" | "openai-compatible" | "ollama" | "custom";

/** `world.configureProvider` settings. Kept in memory only: never logged, stored or exported. */
export interface ProviderSettings {
  apiKey?: string;
  /** Replaces the provider's default URL (a proxy, a local server); for azure, the endpoint. */
  baseUrl?: string;
  /** Azure: `https://<resource>.openai.azure.com`. */
  endpoint?: string;
  /** Azure: the deployment name. */
  deployment?: string;
  /** Azure: the api-version (default "2024-10-21"). */
  apiVersion?: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** `world.addAgent` config. The agent's id is the kebab-case of its name. */
export interface AgentConfig {
  name: string;
  type?: string;
  provider: ProviderName;
  model: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  historyLimit?: number;
  /** Stream the reply (default true). */
  stream?: boolean;
  /** Names of tools (world.registerTool) this agent may call; each must be registered when it replies. */
  tools?: string[];
  /** LLM calls one reply may take, 1 to 50 (default 5); the last one is offered no tools. */
  maxSteps?: number;
  /** The thinking setting, encoded per provider (ignored by providers without one). */
  reasoning?: Reasoning;
}

/** An agent's thinking setting. */
export interface Reasoning {
  effort?: "low" | "medium" | "high";
  budgetTokens?: number;
}

/** `world.updateAgent` patch: only the given fields change; `null` clears an optional one. */
export interface AgentPatch {
  name?: string;
  type?: string;
  provider?: ProviderName;
  model?: string;
  systemPrompt?: string | null;
  temperature?: number | null;
  maxTokens?: number | null;
  historyLimit?: number | null;
  stream?: boolean;
  status?: string;
  tools?: string[] | null;
  maxSteps?: number | null;
  reasoning?: Reasoning | null;
}

export interface Agent {
  id: string;
  name: string;
  type: string;
  provider: string;
  model: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  historyLimit?: number;
  stream: boolean;
  /** The tools it may call (absent when none). */
  tools?: string[];
  /** Absent when it is the default, 5. */
  maxSteps?: number;
  reasoning?: Reasoning;
  /** LLM calls since the last human or world message, in the current chat. */
  llmCallCount: number;
  lastLLMCall?: Timestamp;
  createdAt: Timestamp;
  lastActive: Timestamp;
  status: string;
}

/** `message` for everything `send()` publishes; otherwise an engine notice. */
export type MessageKind = "message" | "turn-limit" | "pass" | "interrupted";

export interface Message {
  messageId: string;
  /** The chat it was published in; null when session mode is off. */
  chatId: string | null;
  sender: string;
  content: string;
  createdAt: Timestamp;
  replyToMessageId?: string;
  kind: MessageKind;
  /** The tool calls the reply made, in order (absent when none). */
  toolCalls?: ToolCallRecord[];
}

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object (a tool's arguments). */
export type JsonObject = { [key: string]: JsonValue };

/** One tool call of a reply: exactly one of `result` / `error` once it ran. */
export interface ToolCallRecord {
  toolCallId: string;
  toolName: string;
  /** The parsed arguments (the model's raw text, as a string, when it was not JSON). */
  args: JsonValue;
  result?: JsonValue;
  error?: string;
}

/** A tool call in an agent's memory (on its assistant entry). */
export interface ToolCallRef {
  toolCallId: string;
  toolName: string;
  args: JsonValue;
}

export interface MemoryEntry {
  /** `tool`: the result of one call (`content` is the result as JSON text). */
  role: "user" | "assistant" | "tool";
  content: string;
  /** Who said it; absent for the agent's own replies. */
  sender?: string;
  messageId: string;
  chatId?: string;
  createdAt: Timestamp;
  /** On an assistant entry: the calls it made. */
  toolCalls?: ToolCallRef[];
  /** On a tool entry: the call it answers. */
  toolCallId?: string;
  toolName?: string;
}

/** The JSON Schema types of the supported subset. */
export type JsonSchemaType = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

/**
 * The JSON Schema subset tool parameters may use (every provider accepts it): any other
 * keyword is refused by registerTool with its path.
 */
export interface JsonSchema {
  type?: JsonSchemaType;
  description?: string;
  properties?: { [name: string]: JsonSchema };
  required?: readonly string[];
  items?: JsonSchema;
  enum?: readonly JsonValue[];
  additionalProperties?: boolean | JsonSchema;
}

/** A tool's `parameters`: an object schema (a tool takes one object of named arguments). */
export interface ToolParameters extends JsonSchema {
  type: "object";
}

/** What `execute` knows about its call. `signal` aborts on stop(), a chat switch, an abort or the timeout. */
export interface ToolContext {
  signal: AbortSignal;
  agentName: string;
  /** The id the reply will be published with (the SSE `messageId`). */
  messageId: string;
  toolCallId: string;
}

/** `world.registerTool` argument. */
export interface ToolDefinition<Args extends object = JsonObject> {
  /** 1 to 64 of A-Z a-z 0-9 _ -, unique in the world. */
  name: string;
  /** What the tool does, for the model. */
  description?: string;
  parameters: ToolParameters;
  /**
   * Runs the call with arguments that passed the schema check. Return JSON (or a Promise of
   * it): a throw, a rejection or a non-JSON value (function, cycle, BigInt, undefined, NaN)
   * is given to the model as `{"error": "…"}`.
   */
  execute: (args: Args, context: ToolContext) => unknown;
  /** Ask the application before running a call (approvals: not supported by this version yet). */
  needsApproval?: boolean | ((args: Args) => boolean | Promise<boolean>);
  /** Time budget of one call in milliseconds, 1 to 3,600,000 (default 30,000). */
  timeoutMs?: number;
}

/** A registered tool as `world.tools()` lists it. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: ToolParameters;
  needsApproval: boolean;
  timeoutMs: number;
}

/** What an instructions function (`world.setInstructions`) is told. */
export interface InstructionsInput {
  agentName: string;
  /** null when session mode is off. */
  chatId: string | null;
  /** The message the agent answers. */
  message: Message;
}
/** Gives an agent's system prompt for one reply. */
export type InstructionsFn = (input: InstructionsInput) => string | Promise<string>;

export type TitleSource = "default" | "auto" | "manual";

export interface Chat {
  id: string;
  worldId: string;
  name: string;
  description?: string;
  messageCount: number;
  titleSource: TitleSource;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** `world.send` options. `sender` defaults to the human ("HUMAN"). */
export interface SendOptions {
  sender?: string;
  /**
   * Aborting cancels the agent work this message started (its replies, and the replies those
   * set off), not other work; already aborted → the message is not sent (`llm_aborted`).
   */
  signal?: AbortSignal;
}

/** `world.messages` paging: the `limit` (default 50) messages before `before`, oldest first. */
export interface PageOptions {
  before?: string;
  limit?: number;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

/** What every streaming event has; `messageId` is the id the reply will be published with. */
export interface SseBase {
  agentName: string;
  messageId: string;
}
/** A reply started. */
export interface SseStartEvent extends SseBase {
  type: "start";
}
/** A piece of the reply text. */
export interface SseChunkEvent extends SseBase {
  type: "chunk";
  content: string;
}
/** A piece of the model's reasoning (never part of the reply). */
export interface SseReasoningEvent extends SseBase {
  type: "reasoning";
  content: string;
}
/** The reply is complete; usage summed over its steps. */
export interface SseEndEvent extends SseBase {
  type: "end";
  usage?: Usage;
}
/** The reply failed; `partialContent` is the text streamed before. */
export interface SseErrorEvent extends SseBase {
  type: "error";
  error: string;
  partialContent?: string;
}
/** The model called a tool (its arguments are complete). */
export interface SseToolCallEvent extends SseBase {
  type: "tool-call";
  toolCallId: string;
  toolName: string;
  args: JsonValue;
}
/** A tool call's outcome: `result`, or `error` (what the model was told went wrong). */
export interface SseToolResultEvent extends SseBase {
  type: "tool-result";
  toolCallId: string;
  toolName: string;
  result?: JsonValue;
  error?: string;
}
/** A streaming event, discriminated on `type`. */
export type SseEvent =
  | SseStartEvent | SseChunkEvent | SseReasoningEvent | SseEndEvent | SseErrorEvent
  | SseToolCallEvent | SseToolResultEvent;

/** The stable codes of `system` `error` events. */
export type SystemErrorCode =
  | "llm_empty_response" | "llm_error" | "llm_timeout" | "llm_stalled" | "llm_aborted"
  | "provider_not_configured" | "queue_full" | "storage_error" | "callback_error"
  | "tool_not_registered";

export type SystemEvent =
  | { type: "error"; message: string; code: SystemErrorCode; agentName?: string;
      /** With `agentName` (an id): the agent's name to show. */
      agentDisplayName?: string;
      /** Set when `code` is `"storage_error"`. */
      reason?: StorageErrorReason;
      /** A failed reply: the id it would have had (its `sse` `messageId`). */
      messageId?: string;
      /** A failed reply: the message it answered; `world.regenerate(replyToMessageId,
       * {agent: agentName})` tries again. */
      replyToMessageId?: string }
  /** `agentName` is the id; `agentDisplayName` the name to show. */
  | { type: "turn-limit"; agentName: string; agentDisplayName: string; messageId: string; turnLimit: number }
  | { type: "chat-title-updated"; chatId: string; name: string; titleSource: TitleSource }
  | { type: "chat-saved"; chatId: string; messageCount: number }
  | { type: "chat-reused"; chatId: string }
  | { type: "new-chat-created"; chatId: string }
  | { type: "chat-loaded"; chatId: string }
  | { type: "chat-deleted"; chatId: string; newCurrentChatId: string | null }
  /** A human message no agent will answer (always emitted): show why. `mentions` are ids. */
  /** A regenerated reply (`world.regenerate`) took the place of `oldMessageId`. */
  | { type: "message-replaced"; oldMessageId: string; messageId: string }
  | { type: "unanswered"; messageId: string;
      reason: "mid-line-mention" | "unknown-mention" | "no-agents"; mentions: string[] }
  | {
      type: "debug";
      agent: string;
      messageId: string;
      decision: "respond" | "ignore" | "turn-limit" | "queue-full";
      reason: string;
    }
  | {
      /** One LLM call of a reply finished (agents with tools, or a step that made calls). */
      type: "step-finish";
      agentName: string;
      messageId: string;
      /** 1 for the first call of the reply. */
      step: number;
      finishReason: string | null;
      usage?: Usage;
      /** The step's calls with their outcomes. */
      toolCalls: ToolCallRecord[];
    }
  /** A tool call waits for `world.approve(approvalId)` or `world.deny(approvalId, reason?)`. */
  | { type: "approval-request"; approvalId: string; agentName: string; messageId: string;
      toolCallId: string; toolName: string; args: unknown }
  | { type: "approval-resolved"; approvalId: string;
      outcome: "approved" | "denied" | "cancelled" };

export type WorldEvent =
  | { type: "agent-added"; agent: Agent }
  | { type: "agent-updated"; agent: Agent }
  | { type: "agent-removed"; agentId: string }
  | { type: "world-updated"; world: WorldInfo }
  /** Another tab or worker changed this world; the world reloaded its view (re-read it). */
  | { type: "external-change"; worldId: string; currentChatId: string | null }
  | { type: "idle" };

/** What each topic of `world.on(topic, callback)` delivers. */
export interface EventMap {
  message: Message;
  sse: SseEvent;
  system: SystemEvent;
  world: WorldEvent;
}
export type Topic = keyof EventMap;

/** The codes of `AgentWorldError` (rejections and throws). */
export type AgentWorldErrorCode =
  | "world_exists" | "world_not_found" | "agent_exists" | "agent_not_found" | "invalid_name"
  | "reserved_name" | "invalid_turn_limit" | "invalid_input" | "invalid_sender" | "empty_message"
  | "message_too_long" | "chat_not_found" | "message_not_found" | "queue_full" | "storage_error"
  | "storage_unavailable" | "import_invalid" | "internal_error" | "world_closed"
  | "approval_not_found" | SystemErrorCode;
"#;

#[wasm_bindgen]
extern "C" {
    /// `StorageOptions` as a parameter type: `Option<StorageOptionsArg>` renders as the optional
    /// `options?: StorageOptions` (an unchecked type on a plain `JsValue` would be required).
    #[wasm_bindgen(typescript_type = "StorageOptions")]
    pub type StorageOptionsArg;
    #[wasm_bindgen(typescript_type = "ImportOptions")]
    pub type ImportOptionsArg;
    #[wasm_bindgen(typescript_type = "SendOptions")]
    pub type SendOptionsArg;
}

/// The options object, or `undefined` when it was left out.
pub fn or_undefined<T: Into<JsValue>>(options: Option<T>) -> JsValue {
    options.map(Into::into).unwrap_or(JsValue::UNDEFINED)
}
