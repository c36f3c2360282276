//! Editing the conversation (spec §10) on `AgentWorld`: `regenerate`, `editMessage`,
//! `deleteMessage`. A separate `impl` block of the same JS class (see world.rs): converts,
//! delegates to the core, and starts the queued calls.

use wasm_bindgen::prelude::*;

use crate::bindings::convert::string_arg;
use crate::bindings::error::invalid_argument;
use crate::bindings::input::get;
use crate::bindings::world::{call, AgentWorld, Call};

#[wasm_bindgen(typescript_custom_section)]
const TS_EDITING: &'static str = r#"
/** Options of `world.regenerate`. */
export interface RegenerateOptions {
  /** For a failed reply (nothing was published): the agent whose reply failed, with
   * `messageId` naming the message it answered. */
  agent?: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "RegenerateOptions")]
    pub type RegenerateOptionsArg;
}

#[wasm_bindgen]
impl AgentWorld {
    /// Asks the same agent to answer the same message again, with the memory it had before
    /// that reply. `messageId` names an agent's reply or an `interrupted` message; for a failed
    /// reply (an `error` event, nothing published), name the message it answered and the
    /// agent. The new reply takes the old one's place in the chat (the `system` event
    /// `message-replaced {oldMessageId, messageId}` follows its `message` event); the old
    /// reply leaves the chat and the agent's memory. Counts as a turn. Resolves, once the call
    /// is queued, with the id the new reply will have (its `sse` events carry it). Rejects
    /// with `message_not_found` (not in the current chat), `invalid_input` (a notice, or not
    /// a reply without `{agent}`), `agent_not_found`.
    ///
    /// @example
    /// ```js
    /// const newId = await world.regenerate(reply.messageId);
    /// await world.idle(); // the new reply has taken the old one's place
    /// // a failed reply: the message it answered, and the agent
    /// await world.regenerate(question.messageId, { agent: "alice" });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn regenerate(
        &self,
        #[wasm_bindgen(js_name = "messageId", unchecked_param_type = "string")] message_id: JsValue,
        options: Option<RegenerateOptionsArg>,
    ) -> js_sys::Promise {
        // Arguments are read now; the work runs on a clone of the handle (no borrow of the JS
        // object spans an await, so `free()` succeeds meanwhile).
        let args = self.handle().and_then(|h| {
            let message_id = string_arg(&message_id, "messageId")?;
            let agent = match options.map(JsValue::from) {
                None => None,
                Some(o) if o.is_undefined() || o.is_null() => None,
                Some(o) if !o.is_object() => {
                    return Err(invalid_argument(
                        "options",
                        "must be an object like { agent }",
                    ))
                }
                Some(o) => {
                    let a = get(&o, "agent", "options")?;
                    if a.is_undefined() || a.is_null() {
                        None
                    } else {
                        Some(string_arg(&a, "options.agent")?)
                    }
                }
            };
            Ok((h, Call::Regenerate(message_id, agent)))
        });
        call(args)
    }

    /// Edits one of your messages: it and everything after it leave the chat (and every
    /// agent's memory), and `content` is sent in its place as a new message (new id), which
    /// resets the turn counters and is answered like any message. One atomic store change.
    /// Resolves with the new message. Rejects with `message_not_found`, `invalid_input`
    /// (an agent's reply or a notice: regenerate replies instead) or `empty_message`.
    ///
    /// @example
    /// ```js
    /// const edited = await world.editMessage(mine.messageId, "@alice, in French please");
    /// await world.idle();
    /// ```
    #[wasm_bindgen(js_name = "editMessage", unchecked_return_type = "Promise<Message>")]
    pub fn edit_message(
        &self,
        #[wasm_bindgen(js_name = "messageId", unchecked_param_type = "string")] message_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let message_id = string_arg(&message_id, "messageId")?;
            Ok((
                h,
                Call::EditMessage(message_id, string_arg(&content, "content")?),
            ))
        }))
    }

    /// Deletes one message of the current chat, from the chat and from every agent's memory;
    /// nothing else changes (calls answering it go on). One atomic store change; `chat-saved`
    /// follows. Rejects with `message_not_found`.
    ///
    /// @example
    /// ```js
    /// await world.deleteMessage(message.messageId);
    /// ```
    #[wasm_bindgen(js_name = "deleteMessage", unchecked_return_type = "Promise<void>")]
    pub fn delete_message(
        &self,
        #[wasm_bindgen(js_name = "messageId", unchecked_param_type = "string")] message_id: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let message_id = string_arg(&message_id, "messageId")?;
            Ok((h, Call::DeleteMessage(message_id)))
        }))
    }
}
