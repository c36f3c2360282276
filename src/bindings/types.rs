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
}

export interface MemoryEntry {
  role: "user" | "assistant";
  content: string;
  /** Who said it; absent for the agent's own replies. */
  sender?: string;
  messageId: string;
  chatId?: string;
  createdAt: Timestamp;
}

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

/** A streaming event; `messageId` is the id the reply will be published with. */
export interface SseEvent {
  type: "start" | "chunk" | "reasoning" | "end" | "error";
  agentName: string;
  messageId: string;
  content?: string;
  error?: string;
  partialContent?: string;
  usage?: Usage;
}

/** The stable codes of `system` `error` events. */
export type SystemErrorCode =
  | "llm_empty_response" | "llm_error" | "llm_timeout" | "llm_stalled" | "llm_aborted"
  | "provider_not_configured" | "queue_full" | "storage_error" | "callback_error";

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
    };

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
  | "message_too_long" | "chat_not_found" | "message_not_found" | "queue_full" | "storage_error" | "storage_unavailable"
  | "import_invalid" | "internal_error" | SystemErrorCode;
"#;

#[wasm_bindgen]
extern "C" {
    /// `StorageOptions` as a parameter type: `Option<StorageOptionsArg>` renders as the optional
    /// `options?: StorageOptions` (an unchecked type on a plain `JsValue` would be required).
    #[wasm_bindgen(typescript_type = "StorageOptions")]
    pub type StorageOptionsArg;
    #[wasm_bindgen(typescript_type = "ImportOptions")]
    pub type ImportOptionsArg;
    #[wasm_bindgen(typescript_type = "PageOptions")]
    pub type PageOptionsArg;
    #[wasm_bindgen(typescript_type = "SendOptions")]
    pub type SendOptionsArg;
}

/// The options object, or `undefined` when it was left out.
pub fn or_undefined<T: Into<JsValue>>(options: Option<T>) -> JsValue {
    options.map(Into::into).unwrap_or(JsValue::UNDEFINED)
}
