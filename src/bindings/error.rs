//! Errors as JavaScript sees them: every rejection is a real `Error` whose `name` is
//! `"AgentWorldError"`, with a stable snake_case `code` (documented as a TypeScript union) and,
//! where there is one, a `cause`. Never a thrown string, never a wasm trap.

use wasm_bindgen::prelude::*;

/// Builds the JS `Error` for `code` and `message`, with `cause` when given.
pub fn agent_world_error(code: &str, message: &str, cause: Option<JsValue>) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("AgentWorldError");
    // Reflect::set on a fresh Error object cannot fail (it is extensible and has no setters).
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    if let Some(cause) = cause {
        let _ = js_sys::Reflect::set(&error, &JsValue::from_str("cause"), &cause);
    }
    error.into()
}

/// A bad argument: names the field and what it must be (code `invalid_input`).
pub fn invalid_argument(field: &str, problem: &str) -> JsValue {
    agent_world_error("invalid_input", &format!("{field} {problem}"), None)
}

/// The JS error of an engine error, with its stable code (and `reason` for a storage failure,
/// and as `cause` what the storage backend threw when its adapter caught it).
pub fn from_world_error(error: crate::core::error::WorldError) -> JsValue {
    let cause = error.cause().and_then(|c| c.get::<JsValue>()).cloned();
    let js = agent_world_error(error.code(), &error.to_string(), cause);
    if let Some(reason) = error.reason() {
        // Setting a property on a fresh Error object cannot fail.
        let _ = js_sys::Reflect::set(
            &js,
            &JsValue::from_str("reason"),
            &JsValue::from_str(reason),
        );
    }
    js
}

/// The JS error of a storage failure: code `storage_error` with its `reason`.
pub fn from_store_error(error: crate::core::store::StoreError) -> JsValue {
    from_world_error(error.into())
}

/// The JS error of an LLM/provider configuration error, with its stable code and a hint.
pub fn from_llm_error(error: crate::core::llm::types::LlmError) -> JsValue {
    let message = match error.hint() {
        Some(hint) => format!("{error} ({hint})"),
        None => error.to_string(),
    };
    agent_world_error(error.code(), &message, None)
}

/// True when `value` is an error thrown by agent-world-wasm (an `Error` named
/// `AgentWorldError` with a string `code`). Narrows the type in TypeScript.
///
/// @example
/// ```js
/// try { await world.send(""); }
/// catch (e) { if (isAgentWorldError(e) && e.code === "empty_message") showHint(); }
/// ```
#[wasm_bindgen(js_name = isAgentWorldError, skip_typescript)]
pub fn is_agent_world_error(value: &JsValue) -> bool {
    value.is_instance_of::<js_sys::Error>()
        && js_sys::Reflect::get(value, &JsValue::from_str("name"))
            .ok()
            .and_then(|n| n.as_string())
            .is_some_and(|n| n == "AgentWorldError")
        && js_sys::Reflect::get(value, &JsValue::from_str("code"))
            .ok()
            .is_some_and(|c| c.is_string())
}

#[wasm_bindgen(typescript_custom_section)]
const TS_ERRORS: &'static str = r#"
/** An error thrown or rejected by agent-world-wasm. `code` is stable; `message` is for people. */
export interface AgentWorldError extends Error {
  name: "AgentWorldError";
  code: AgentWorldErrorCode;
  /** Set when `code` is `"storage_error"`: which storage failure it was. */
  reason?: StorageErrorReason;
  cause?: unknown;
}
/** Why storage failed (`AgentWorldError.reason` and the `system` `error` event's `reason`). */
export type StorageErrorReason =
  | "quota_exceeded" | "blocked" | "version" | "aborted" | "corrupted" | "closed" | "backend"
  | "invalid";
/**
 * True when `value` is an error thrown by agent-world-wasm.
 *
 * @example
 * ```js
 * try { await world.send(""); }
 * catch (e) { if (isAgentWorldError(e) && e.code === "empty_message") showHint(); }
 * ```
 */
export function isAgentWorldError(value: unknown): value is AgentWorldError;
"#;
