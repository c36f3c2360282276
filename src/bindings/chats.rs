//! `AgentWorld`'s chats: start, load, rename and delete them, page through their messages,
//! and session mode (whether the conversation is kept in a chat at all).

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{options_object, string_arg, to_js};
use crate::bindings::error::invalid_argument;
use crate::bindings::input::get;
use crate::bindings::world::{Call, Handle};

// The async methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Starts a new chat (reusing the current one when it has no messages).
   *
   * @example
   * ```js
   * const chat = await world.newChat();
   * console.log(chat.id === world.currentChat()?.id); // true
   * ```
   */
  newChat(): Promise<Chat>;
  /**
   * Makes a chat current and restores every agent's memory and counter from it.
   *
   * @example
   * ```js
   * const [latest, previous] = world.listChats();
   * await world.loadChat(previous.id); // agents remember that chat again
   * ```
   */
  loadChat(id: string): Promise<Chat>;
  /**
   * Deletes a chat and its messages; resolves `false` when there was none.
   *
   * @example
   * ```js
   * const deleted = await world.deleteChat(chat.id); // false for an unknown id
   * ```
   */
  deleteChat(id: string): Promise<boolean>;
  /**
   * Renames a chat; a manual title is never overwritten automatically.
   *
   * @example
   * ```js
   * await world.renameChat(world.currentChat().id, "Rust rewrite");
   * ```
   */
  renameChat(id: string, name: string): Promise<Chat>;
  /**
   * A page of a chat's messages (`before`: a message id; `limit`: default 50).
   *
   * @example
   * ```js
   * const chatId = world.currentChat().id;
   * const last = await world.messages(chatId, { limit: 20 });
   * const older = await world.messages(chatId, { before: last[0].messageId, limit: 20 });
   * ```
   */
  messages(chatId: string, options?: PageOptions | null): Promise<Message[]>;
  /**
   * Turns session mode on (conversation persisted in the current chat) or off.
   *
   * @example
   * ```js
   * await world.setSessionMode(false); // answer, but keep nothing of the conversation
   * ```
   */
  setSessionMode(on: boolean): Promise<void>;
}
"#;

// The synchronous methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__get` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_GET: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * The chats, most recently updated first.
   *
   * @example
   * ```js
   * for (const chat of world.listChats()) console.log(chat.name, chat.messageCount);
   * ```
   */
  listChats(): Chat[];
  /**
   * The current chat, or `null` when session mode is off.
   *
   * @example
   * ```js
   * const chat = world.currentChat(); // null with session mode off
   * ```
   */
  currentChat(): Chat | null;
}
"#;

impl Handle {
    /// `listChats()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn list_chats(&self) -> Result<JsValue, JsValue> {
        to_js(&self.world.list_chats())
    }

    /// `currentChat()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn current_chat(&self) -> Result<JsValue, JsValue> {
        to_js(&self.world.current_chat())
    }
}

/// `renameChat(id, name)`'s arguments.
pub(crate) fn rename_chat(id: &JsValue, name: &JsValue) -> Result<Call, JsValue> {
    let id = string_arg(id, "id")?;
    Ok(Call::RenameChat(id, string_arg(name, "name")?))
}

/// `messages(chatId, options?)`'s arguments.
pub(crate) fn messages(chat_id: &JsValue, options: &JsValue) -> Result<Call, JsValue> {
    let chat_id = string_arg(chat_id, "chatId")?;
    let (before, limit) = read_page(options)?;
    Ok(Call::Messages(chat_id, before, limit))
}

/// `setSessionMode(on)`'s argument.
pub(crate) fn set_session_mode(on: &JsValue) -> Result<Call, JsValue> {
    let on = on
        .as_bool()
        .ok_or_else(|| invalid_argument("on", "must be a boolean"))?;
    Ok(Call::SetSessionMode(on))
}

fn read_page(options: &JsValue) -> Result<(Option<String>, usize), JsValue> {
    if !options_object(options)? {
        return Ok((None, 50));
    }
    let before = match get(options, "before", "options")? {
        v if v.is_undefined() || v.is_null() => None,
        v => Some(
            v.as_string()
                .ok_or_else(|| invalid_argument("options.before", "must be a message id string"))?,
        ),
    };
    let limit = match get(options, "limit", "options")? {
        v if v.is_undefined() || v.is_null() => 50,
        v => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=10_000.0).contains(&n) => n as usize,
            _ => {
                return Err(invalid_argument(
                    "options.limit",
                    "must be an integer from 1 to 10000",
                ))
            }
        },
    };
    Ok((before, limit))
}
