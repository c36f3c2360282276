//! `AgentWorld`'s agents and the providers they call: add, change and remove agents, read and
//! clear their memory, configure the built-in providers, register a custom one and set the
//! timeouts of LLM calls.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{from_js, string_arg, to_js};
use crate::bindings::error::{from_llm_error, invalid_argument};
use crate::bindings::world::{Call, Handle};
use crate::core::llm::{ProviderConfig, ProviderKind};
use crate::core::model::{AgentPatch, NewAgent};
use crate::web::custom_provider::JsCustomProvider;
use crate::web::llm_fetch::Timeouts;

// The async methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Adds an agent. Its id is the kebab-case of its name.
   *
   * @example
   * ```js
   * await world.addAgent({ name: "Alice", provider: "openai", model: "gpt-4o-mini" });
   * ```
   */
  addAgent(config: AgentConfig): Promise<Agent>;
  /**
   * Changes an agent's settings (its id never changes).
   *
   * @example
   * ```js
   * await world.updateAgent("alice", { temperature: 0.2, systemPrompt: "Answer briefly." });
   * ```
   */
  updateAgent(id: string, patch: AgentPatch): Promise<Agent>;
  /**
   * Removes an agent; resolves `false` when there was none with that id.
   *
   * @example
   * ```js
   * await world.removeAgent("alice");
   * ```
   */
  removeAgent(id: string): Promise<boolean>;
  /**
   * Empties an agent's memory in the current chat and resets its turn counter.
   *
   * @example
   * ```js
   * await world.clearAgentMemory("alice"); // the chat's messages stay
   * ```
   */
  clearAgentMemory(agentId: string): Promise<void>;
}
"#;

// The synchronous methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__get` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_GET: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * The agents, in the order they were added (the order they answer in).
   *
   * @example
   * ```js
   * for (const a of world.agents()) console.log(a.id, a.llmCallCount);
   * ```
   */
  agents(): Agent[];
  /**
   * What an agent remembers of the current chat (the window its next LLM call starts from),
   * oldest first; `undefined` for an unknown agent.
   *
   * @example
   * ```js
   * const window = world.agentMemory("alice") ?? [];
   * console.log(window.map((m) => `${m.role}: ${m.content}`));
   * ```
   */
  agentMemory(agentId: string): MemoryEntry[] | undefined;
  /**
   * Sets the settings of one LLM provider (API key, base URL, ...). Kept in memory only.
   *
   * @example
   * ```js
   * world.configureProvider("openai", { apiKey: "sk-..." });
   * ```
   */
  configureProvider(provider: ProviderName, settings: ProviderSettings): void;
  /**
   * Registers the provider that answers agents with `provider: "custom"`: an object with a
   * `stream(request, { signal })` method returning an async iterable of reply pieces (see
   * `CustomProvider`). This is how in-page models and proxies plug in. `null` removes it.
   *
   * @example
   * ```js
   * world.registerProvider({
   *   async *stream({ messages, model }, { signal }) {
   *     for (const word of ["Hello", " from", " JavaScript"]) {
   *       if (signal.aborted) return;
   *       yield word;
   *     }
   *   },
   * });
   * await world.addAgent({ name: "Local", provider: "custom", model: "my-model" });
   * ```
   */
  registerProvider(provider: CustomProvider | null): void;
  /**
   * Sets the total and stall timeouts of LLM calls, in milliseconds.
   *
   * @example
   * ```js
   * world.setTimeouts(60_000, 15_000); // give up after 60 s, or 15 s without a byte
   * ```
   */
  setTimeouts(totalMs: number, stallMs: number): void;
}
"#;

impl Handle {
    /// `agents()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn agents(&self) -> Result<JsValue, JsValue> {
        to_js(&self.world.agents())
    }

    /// `agentMemory()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn agent_memory(&self, agent_id: &JsValue) -> Result<JsValue, JsValue> {
        let agent_id = string_arg(agent_id, "agentId")?;
        match self.world.agent_memory(&agent_id) {
            Some(memory) => to_js(&memory),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// `configureProvider()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn configure_provider(
        &self,
        provider: &JsValue,
        settings: &JsValue,
    ) -> Result<(), JsValue> {
        let provider = string_arg(provider, "provider")?;
        let kind = ProviderKind::parse(&provider).map_err(from_llm_error)?;
        let config: ProviderConfig =
            from_js(settings, &format!("settings of provider '{provider}'"))?;
        self.llm.configure(kind, config).map_err(from_llm_error)
    }

    /// `registerProvider()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn register_provider(&self, provider: &JsValue) -> Result<(), JsValue> {
        if provider.is_null() || provider.is_undefined() {
            self.llm.set_custom(None);
            return Ok(());
        }
        let custom = JsCustomProvider::new(provider.clone())
            .map_err(|problem| invalid_argument("provider", &problem))?;
        self.llm.set_custom(Some(Rc::new(custom)));
        Ok(())
    }

    /// `setTimeouts()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn set_timeouts(
        &self,
        total_ms: &JsValue,
        stall_ms: &JsValue,
    ) -> Result<(), JsValue> {
        let (total_ms, stall_ms) = (
            total_ms.as_f64().unwrap_or(f64::NAN),
            stall_ms.as_f64().unwrap_or(f64::NAN),
        );
        let ok = |v: f64| v.is_finite() && v >= 1.0;
        if !ok(total_ms) || !ok(stall_ms) {
            return Err(invalid_argument(
                "timeouts",
                "must be positive numbers of milliseconds",
            ));
        }
        self.llm.set_timeouts(Timeouts {
            total_ms: total_ms as u64,
            stall_ms: stall_ms as u64,
        });
        Ok(())
    }
}

/// `addAgent(config)`'s argument.
pub(crate) fn add_agent(config: &JsValue) -> Result<Call, JsValue> {
    Ok(Call::AddAgent(from_js::<NewAgent>(
        config,
        "addAgent config",
    )?))
}

/// `updateAgent(id, patch)`'s arguments.
pub(crate) fn update_agent(id: &JsValue, patch: &JsValue) -> Result<Call, JsValue> {
    let id = string_arg(id, "id")?;
    let patch = from_js::<AgentPatch>(patch, "updateAgent patch")?;
    Ok(Call::UpdateAgent(id, patch))
}
