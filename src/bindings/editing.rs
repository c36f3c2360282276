//! Editing the conversation (spec §10) on `AgentWorld`: `regenerate`, `editMessage`,
//! `deleteMessage`. A separate `impl` block of the same JS class (see world.rs): converts,
//! delegates to the core, and starts the queued calls.

use wasm_bindgen::prelude::*;

use crate::bindings::convert::string_arg;
use crate::bindings::error::invalid_argument;
use crate::bindings::input::get;
use crate::bindings::world::Call;

#[wasm_bindgen(typescript_custom_section)]
const TS_EDITING: &'static str = r#"
/** Options of `world.regenerate`. */
export interface RegenerateOptions {
  /** For a failed reply (nothing was published): the agent whose reply failed, with
   * `messageId` naming the message it answered. */
  agent?: string;
}
"#;

// The async methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Asks the same agent to answer the same message again, with the memory it had before
   * that reply. `messageId` names an agent's reply or an `interrupted` message; for a failed
   * reply (an `error` event, nothing published), name the message it answered and the
   * agent. The new reply takes the old one's place in the chat (the `system` event
   * `message-replaced {oldMessageId, messageId}` follows its `message` event); the old
   * reply leaves the chat and the agent's memory. Counts as a turn. Resolves, once the call
   * is queued, with the id the new reply will have (its `sse` events carry it). Rejects
   * with `message_not_found` (not in the current chat), `invalid_input` (a notice, or not
   * a reply without `{agent}`), `agent_not_found`.
   *
   * @example
   * ```js
   * const newId = await world.regenerate(reply.messageId);
   * await world.idle(); // the new reply has taken the old one's place
   * // a failed reply: the message it answered, and the agent
   * await world.regenerate(question.messageId, { agent: "alice" });
   * ```
   */
  regenerate(messageId: string, options?: RegenerateOptions | null): Promise<string>;
  /**
   * Edits one of your messages: it and everything after it leave the chat (and every
   * agent's memory), and `content` is sent in its place as a new message (new id), which
   * resets the turn counters and is answered like any message. One atomic store change.
   * Resolves with the new message. Rejects with `message_not_found`, `invalid_input`
   * (an agent's reply or a notice: regenerate replies instead) or `empty_message`.
   *
   * @example
   * ```js
   * const edited = await world.editMessage(mine.messageId, "@alice, in French please");
   * await world.idle();
   * ```
   */
  editMessage(messageId: string, content: string): Promise<Message>;
  /**
   * Deletes one message of the current chat, from the chat and from every agent's memory;
   * nothing else changes (calls answering it go on). One atomic store change; `chat-saved`
   * follows. Rejects with `message_not_found`.
   *
   * @example
   * ```js
   * await world.deleteMessage(message.messageId);
   * ```
   */
  deleteMessage(messageId: string): Promise<void>;
}
"#;

/// `regenerate(messageId, options?)`'s arguments.
pub(crate) fn regenerate(message_id: &JsValue, options: &JsValue) -> Result<Call, JsValue> {
    let message_id = string_arg(message_id, "messageId")?;
    let agent = if options.is_undefined() || options.is_null() {
        None
    } else if !options.is_object() {
        return Err(invalid_argument(
            "options",
            "must be an object like { agent }",
        ));
    } else {
        let a = get(options, "agent", "options")?;
        if a.is_undefined() || a.is_null() {
            None
        } else {
            Some(string_arg(&a, "options.agent")?)
        }
    };
    Ok(Call::Regenerate(message_id, agent))
}

/// `editMessage(messageId, content)`'s arguments.
pub(crate) fn edit_message(message_id: &JsValue, content: &JsValue) -> Result<Call, JsValue> {
    let message_id = string_arg(message_id, "messageId")?;
    Ok(Call::EditMessage(
        message_id,
        string_arg(content, "content")?,
    ))
}
