//! The tools part of `AgentWorld` (spec §9): `registerTool`, `unregisterTool`, `tools()` and
//! `setInstructions`. Reads and checks the JS values, then hands the core a definition and a
//! [`JsTool`] / [`JsInstructions`] (src/web/js_tools.rs). Nothing here is persisted: functions
//! cannot be stored, so an application registers its tools again after `open`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::bindings::convert::{string_arg, to_js};
use crate::bindings::error::{from_world_error, invalid_argument};
use crate::bindings::world::Handle;
use crate::core::json_write::{Obj, ToJson};
use crate::core::tools::{
    NeedsApproval, ToolDefinition, ToolSpec, DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS,
};
use crate::web::js_tools::{to_json, JsInstructions, JsTool};

// The synchronous methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__get` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_GET: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * Registers a tool agents can call (runtime only: register it again after `open`). An agent
   * uses it when its `tools` lists the name. The model gets `execute`'s JSON result; a throw, a
   * rejection, a timeout (`timeoutMs`, default 30 s) or a non-JSON result reaches it as
   * `{"error": "…"}` and the reply goes on. Bad definitions throw `invalid_input` naming the
   * field (`name`, `parameters.properties.x.minimum`, `execute`, …).
   *
   * @example
   * ```js
   * world.registerTool({
   *   name: "get_weather",
   *   description: "The current weather in a city",
   *   parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
   *   execute: async ({ city }, { signal }) => (await fetch(`/weather?q=${city}`, { signal })).json(),
   * });
   * ```
   */
  registerTool<Args extends object = JsonObject>(tool: ToolDefinition<Args>): void;
  /**
   * Removes a tool; `false` when none had that name. An agent that still lists it fails its
   * next reply with `tool_not_registered`.
   *
   * @example
   * ```js
   * world.unregisterTool("get_weather"); // true
   * ```
   */
  unregisterTool(name: string): boolean;
  /**
   * The registered tools, in registration order (without their functions).
   *
   * @example
   * ```js
   * for (const t of world.tools()) console.log(t.name, t.timeoutMs);
   * ```
   */
  tools(): ToolInfo[];
  /**
   * Gives an agent its system prompt per reply (runtime only): `fn({agentName, chatId,
   * message})` returns a string or a Promise of one, used in place of the stored
   * `systemPrompt`. If it throws, the reply fails with `llm_error` naming the agent.
   * `null` removes it.
   *
   * @example
   * ```js
   * world.setInstructions("alice", ({ message }) =>
   *   `You are Alice. Today is ${new Date().toDateString()}. Answer: ${message.sender}.`);
   * world.setInstructions("alice", null); // back to the stored systemPrompt
   * ```
   */
  setInstructions(agentId: string, f: InstructionsFn | null | undefined): void;
}
"#;

/// `def[key]`, an `invalid_input` error when reading it throws (a Proxy's trap, a getter).
fn field(def: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    js_sys::Reflect::get(def, &JsValue::from_str(key)).map_err(|e| {
        invalid_argument(
            &format!("tool.{key}"),
            &format!(
                "could not be read ({})",
                crate::web::js_tools::message_of(&e, "its getter threw")
            ),
        )
    })
}

/// The fields of a tool definition (the error about an unknown one lists them, in this order).
const KEYS: [&str; 6] = [
    "name",
    "description",
    "parameters",
    "execute",
    "needsApproval",
    "timeoutMs",
];

/// Reads `registerTool`'s argument into a definition and its executor.
fn read_tool(def: &JsValue) -> Result<(ToolDefinition, JsTool), JsValue> {
    if !def.is_object() || def.is_function() {
        return Err(invalid_argument(
            "tool",
            "must be an object {name, description, parameters, execute}",
        ));
    }
    // Unknown keys are refused like everywhere else in the API (a misspelt `timeoutMS` would
    // otherwise silently mean 30 s).
    let keys = js_sys::Reflect::own_keys(def)
        .map_err(|_| invalid_argument("tool", "could not be read (its ownKeys trap threw)"))?;
    for key in keys.iter() {
        if let Some(k) = key.as_string() {
            if !KEYS.contains(&k.as_str()) {
                return Err(invalid_argument(
                    &format!("tool.{k}"),
                    // KEYS as one text: no list joined at run time.
                    "is not a tool field; use name, description, parameters, execute, needsApproval, timeoutMs",
                ));
            }
        }
    }
    let name = field(def, "name")?.as_string().ok_or_else(|| {
        invalid_argument("name", "must be a string of 1 to 64 of A-Z a-z 0-9 _ -")
    })?;
    let description = field(def, "description")?;
    let description = if description.is_undefined() {
        String::new()
    } else {
        description
            .as_string()
            .ok_or_else(|| invalid_argument("description", "must be a string"))?
    };
    let parameters = field(def, "parameters")?;
    if !parameters.is_object() || parameters.is_function() || js_sys::Array::is_array(&parameters) {
        return Err(invalid_argument(
            "parameters",
            "must be a JSON Schema object, e.g. {type: \"object\", properties: {…}}",
        ));
    }
    let parameters = to_json(&parameters)
        .map_err(|p| invalid_argument("parameters", &format!("is not plain JSON: {p}")))?;
    let execute: js_sys::Function = field(def, "execute")?.dyn_into().map_err(|_| {
        invalid_argument(
            "execute",
            "must be a function (args, {signal, agentName, messageId, toolCallId}) => result",
        )
    })?;
    let approval = field(def, "needsApproval")?;
    let (needs_approval, check) = if approval.is_undefined() || approval.is_null() {
        (NeedsApproval::Never, None)
    } else if let Some(b) = approval.as_bool() {
        let mode = if b {
            NeedsApproval::Always
        } else {
            NeedsApproval::Never
        };
        (mode, None)
    } else if let Some(f) = approval.dyn_ref::<js_sys::Function>() {
        (NeedsApproval::ByArgs, Some(f.clone()))
    } else {
        return Err(invalid_argument(
            "needsApproval",
            "must be a boolean or a function (args) => boolean",
        ));
    };
    let timeout = field(def, "timeoutMs")?;
    let timeout_ms = if timeout.is_undefined() {
        DEFAULT_TOOL_TIMEOUT_MS
    } else {
        match timeout.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=f64::from(MAX_TOOL_TIMEOUT_MS)).contains(&n) => {
                n as u32
            }
            _ => {
                return Err(invalid_argument(
                    "timeoutMs",
                    &format!("must be an integer from 1 to {MAX_TOOL_TIMEOUT_MS} (milliseconds)"),
                ))
            }
        }
    };
    Ok((
        ToolDefinition {
            spec: ToolSpec {
                name,
                description,
                parameters,
            },
            needs_approval,
            timeout_ms,
        },
        JsTool::new(execute, check),
    ))
}

/// What `tools()` lists (the functions stay with the application).
struct ToolInfo<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a crate::core::json::Value,
    needs_approval: bool,
    timeout_ms: u32,
}

impl ToJson for ToolInfo<'_> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("name", self.name)
            .str("description", self.description)
            .field("parameters", self.parameters)
            .field("needsApproval", &self.needs_approval)
            .field("timeoutMs", &self.timeout_ms)
            .end();
    }
}

impl Handle {
    /// `registerTool()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn register_tool(&self, tool: &JsValue) -> Result<(), JsValue> {
        let (def, executor) = read_tool(tool)?;
        self.world
            .register_tool(def, Rc::new(executor))
            .map_err(from_world_error)
    }

    /// `unregisterTool()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn unregister_tool(&self, name: &JsValue) -> Result<bool, JsValue> {
        let name = string_arg(name, "name")?;
        Ok(self.world.unregister_tool(&name))
    }

    /// `tools()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn tools(&self) -> Result<JsValue, JsValue> {
        let world = &self.world;
        let defs = world.tools();
        // A plain loop: an iterator chain instantiates its own adapters.
        let mut list: Vec<ToolInfo<'_>> = Vec::with_capacity(defs.len());
        for d in defs.iter() {
            list.push(ToolInfo {
                name: &d.spec.name,
                description: &d.spec.description,
                parameters: &d.spec.parameters,
                needs_approval: d.needs_approval != NeedsApproval::Never,
                timeout_ms: d.timeout_ms,
            });
        }
        to_js(&list)
    }

    /// `setInstructions()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn set_instructions(&self, agent_id: &JsValue, f: &JsValue) -> Result<(), JsValue> {
        let agent_id = string_arg(agent_id, "agentId")?;
        let provider: Option<Rc<dyn crate::core::engine::InstructionsProvider>> =
            if f.is_null() || f.is_undefined() {
                None
            } else {
                let f: js_sys::Function = f.clone().dyn_into().map_err(|_| {
                    invalid_argument(
                        "instructions",
                        "must be a function ({agentName, chatId, message}) => string, or null",
                    )
                })?;
                Some(Rc::new(JsInstructions::new(f)))
            };
        self.world
            .set_instructions(&agent_id, provider)
            .map_err(from_world_error)
    }
}
