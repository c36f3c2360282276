//! `AgentWorld`'s agents and the providers they call: add, change and remove agents, read and
//! clear their memory, configure the built-in providers, register a custom one and set the
//! timeouts of LLM calls.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{from_js, string_arg, to_js};
use crate::bindings::error::{from_llm_error, invalid_argument};
use crate::bindings::world::{call, AgentWorld, Call};
use crate::core::llm::{ProviderConfig, ProviderKind};
use crate::core::model::{AgentPatch, NewAgent};
use crate::web::custom_provider::JsCustomProvider;
use crate::web::llm_fetch::Timeouts;

#[wasm_bindgen]
impl AgentWorld {
    /// Adds an agent. Its id is the kebab-case of its name.
    ///
    /// @example
    /// ```js
    /// await world.addAgent({ name: "Alice", provider: "openai", model: "gpt-4o-mini" });
    /// ```
    #[wasm_bindgen(js_name = addAgent, unchecked_return_type = "Promise<Agent>")]
    pub fn add_agent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "AgentConfig")] config: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let input = from_js::<NewAgent>(&config, "addAgent config")?;
            Ok((h, Call::AddAgent(input)))
        }))
    }

    /// Changes an agent's settings (its id never changes).
    ///
    /// @example
    /// ```js
    /// await world.updateAgent("alice", { temperature: 0.2, systemPrompt: "Answer briefly." });
    /// ```
    #[wasm_bindgen(js_name = updateAgent, unchecked_return_type = "Promise<Agent>")]
    pub fn update_agent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "AgentPatch")] patch: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let id = string_arg(&id, "id")?;
            let patch = from_js::<AgentPatch>(&patch, "updateAgent patch")?;
            Ok((h, Call::UpdateAgent(id, patch)))
        }))
    }

    /// Removes an agent; resolves `false` when there was none with that id.
    ///
    /// @example
    /// ```js
    /// await world.removeAgent("alice");
    /// ```
    #[wasm_bindgen(js_name = removeAgent, unchecked_return_type = "Promise<boolean>")]
    pub fn remove_agent(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> js_sys::Promise {
        call(
            self.handle()
                .and_then(|h| Ok((h, Call::RemoveAgent(string_arg(&id, "id")?)))),
        )
    }

    /// The agents, in the order they were added (the order they answer in).
    ///
    /// @example
    /// ```js
    /// for (const a of world.agents()) console.log(a.id, a.llmCallCount);
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Agent[]")]
    pub fn agents(&self) -> Result<JsValue, JsValue> {
        to_js(&self.handle()?.world.agents())
    }

    /// What an agent remembers of the current chat (the window its next LLM call starts from),
    /// oldest first; `undefined` for an unknown agent.
    ///
    /// @example
    /// ```js
    /// const window = world.agentMemory("alice") ?? [];
    /// console.log(window.map((m) => `${m.role}: ${m.content}`));
    /// ```
    #[wasm_bindgen(js_name = agentMemory, unchecked_return_type = "MemoryEntry[] | undefined")]
    pub fn agent_memory(
        &self,
        #[wasm_bindgen(js_name = "agentId", unchecked_param_type = "string")] agent_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        let h = self.handle()?;
        let agent_id = string_arg(&agent_id, "agentId")?;
        match h.world.agent_memory(&agent_id) {
            Some(memory) => to_js(&memory),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Empties an agent's memory in the current chat and resets its turn counter.
    ///
    /// @example
    /// ```js
    /// await world.clearAgentMemory("alice"); // the chat's messages stay
    /// ```
    #[wasm_bindgen(js_name = clearAgentMemory, unchecked_return_type = "Promise<void>")]
    pub fn clear_agent_memory(
        &self,
        #[wasm_bindgen(js_name = "agentId", unchecked_param_type = "string")] agent_id: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let agent_id = string_arg(&agent_id, "agentId")?;
            Ok((h, Call::ClearAgentMemory(agent_id)))
        }))
    }

    /// Sets the settings of one LLM provider (API key, base URL, ...). Kept in memory only.
    ///
    /// @example
    /// ```js
    /// world.configureProvider("openai", { apiKey: "sk-..." });
    /// ```
    #[wasm_bindgen(js_name = configureProvider)]
    pub fn configure_provider(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProviderName")] provider: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProviderSettings")] settings: JsValue,
    ) -> Result<(), JsValue> {
        let h = self.handle()?;
        let provider = string_arg(&provider, "provider")?;
        let kind = ProviderKind::parse(&provider).map_err(from_llm_error)?;
        let config: ProviderConfig =
            from_js(&settings, &format!("settings of provider '{provider}'"))?;
        h.llm.configure(kind, config).map_err(from_llm_error)
    }

    /// Registers the provider that answers agents with `provider: "custom"`: an object with a
    /// `stream(request, { signal })` method returning an async iterable of reply pieces (see
    /// `CustomProvider`). This is how in-page models and proxies plug in. `null` removes it.
    ///
    /// @example
    /// ```js
    /// world.registerProvider({
    ///   async *stream({ messages, model }, { signal }) {
    ///     for (const word of ["Hello", " from", " JavaScript"]) {
    ///       if (signal.aborted) return;
    ///       yield word;
    ///     }
    ///   },
    /// });
    /// await world.addAgent({ name: "Local", provider: "custom", model: "my-model" });
    /// ```
    #[wasm_bindgen(js_name = registerProvider)]
    pub fn register_provider(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CustomProvider | null")] provider: JsValue,
    ) -> Result<(), JsValue> {
        let h = self.handle()?;
        if provider.is_null() || provider.is_undefined() {
            h.llm.set_custom(None);
            return Ok(());
        }
        let custom = JsCustomProvider::new(provider)
            .map_err(|problem| invalid_argument("provider", &problem))?;
        h.llm.set_custom(Some(Rc::new(custom)));
        Ok(())
    }

    /// Sets the total and stall timeouts of LLM calls, in milliseconds.
    ///
    /// @example
    /// ```js
    /// world.setTimeouts(60_000, 15_000); // give up after 60 s, or 15 s without a byte
    /// ```
    #[wasm_bindgen(js_name = setTimeouts)]
    pub fn set_timeouts(
        &self,
        #[wasm_bindgen(js_name = "totalMs", unchecked_param_type = "number")] total_ms: JsValue,
        #[wasm_bindgen(js_name = "stallMs", unchecked_param_type = "number")] stall_ms: JsValue,
    ) -> Result<(), JsValue> {
        let h = self.handle()?;
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
        h.llm.set_timeouts(Timeouts {
            total_ms: total_ms as u64,
            stall_ms: stall_ms as u64,
        });
        Ok(())
    }
}
