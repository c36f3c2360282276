//! `AgentWorld`'s chats: start, load, rename and delete them, page through their messages,
//! and session mode (whether the conversation is kept in a chat at all).

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{options_object, string_arg, to_js};
use crate::bindings::error::invalid_argument;
use crate::bindings::input::get;
use crate::bindings::types::{or_undefined, PageOptionsArg};
use crate::bindings::world::{call, AgentWorld, Call};

#[wasm_bindgen]
impl AgentWorld {
    /// Starts a new chat (reusing the current one when it has no messages).
    ///
    /// @example
    /// ```js
    /// const chat = await world.newChat();
    /// console.log(chat.id === world.currentChat()?.id); // true
    /// ```
    #[wasm_bindgen(js_name = newChat, unchecked_return_type = "Promise<Chat>")]
    pub fn new_chat(&self) -> js_sys::Promise {
        call(self.handle().map(|h| (h, Call::NewChat)))
    }

    /// Makes a chat current and restores every agent's memory and counter from it.
    ///
    /// @example
    /// ```js
    /// const [latest, previous] = world.listChats();
    /// await world.loadChat(previous.id); // agents remember that chat again
    /// ```
    #[wasm_bindgen(js_name = loadChat, unchecked_return_type = "Promise<Chat>")]
    pub fn load_chat(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> js_sys::Promise {
        call(
            self.handle()
                .and_then(|h| Ok((h, Call::LoadChat(string_arg(&id, "id")?)))),
        )
    }

    /// Deletes a chat and its messages; resolves `false` when there was none.
    ///
    /// @example
    /// ```js
    /// const deleted = await world.deleteChat(chat.id); // false for an unknown id
    /// ```
    #[wasm_bindgen(js_name = deleteChat, unchecked_return_type = "Promise<boolean>")]
    pub fn delete_chat(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> js_sys::Promise {
        call(
            self.handle()
                .and_then(|h| Ok((h, Call::DeleteChat(string_arg(&id, "id")?)))),
        )
    }

    /// Renames a chat; a manual title is never overwritten automatically.
    ///
    /// @example
    /// ```js
    /// await world.renameChat(world.currentChat().id, "Rust rewrite");
    /// ```
    #[wasm_bindgen(js_name = renameChat, unchecked_return_type = "Promise<Chat>")]
    pub fn rename_chat(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let id = string_arg(&id, "id")?;
            Ok((h, Call::RenameChat(id, string_arg(&name, "name")?)))
        }))
    }

    /// The chats, most recently updated first.
    ///
    /// @example
    /// ```js
    /// for (const chat of world.listChats()) console.log(chat.name, chat.messageCount);
    /// ```
    #[wasm_bindgen(js_name = listChats, unchecked_return_type = "Chat[]")]
    pub fn list_chats(&self) -> Result<JsValue, JsValue> {
        to_js(&self.handle()?.world.list_chats())
    }

    /// The current chat, or `null` when session mode is off.
    ///
    /// @example
    /// ```js
    /// const chat = world.currentChat(); // null with session mode off
    /// ```
    #[wasm_bindgen(js_name = currentChat, unchecked_return_type = "Chat | null")]
    pub fn current_chat(&self) -> Result<JsValue, JsValue> {
        to_js(&self.handle()?.world.current_chat())
    }

    /// A page of a chat's messages (`before`: a message id; `limit`: default 50).
    ///
    /// @example
    /// ```js
    /// const chatId = world.currentChat().id;
    /// const last = await world.messages(chatId, { limit: 20 });
    /// const older = await world.messages(chatId, { before: last[0].messageId, limit: 20 });
    /// ```
    #[wasm_bindgen(js_name = messages, unchecked_return_type = "Promise<Message[]>")]
    pub fn messages(
        &self,
        #[wasm_bindgen(js_name = "chatId", unchecked_param_type = "string")] chat_id: JsValue,
        options: Option<PageOptionsArg>,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let chat_id = string_arg(&chat_id, "chatId")?;
            let (before, limit) = read_page(&or_undefined(options))?;
            Ok((h, Call::Messages(chat_id, before, limit)))
        }))
    }

    /// Turns session mode on (conversation persisted in the current chat) or off.
    ///
    /// @example
    /// ```js
    /// await world.setSessionMode(false); // answer, but keep nothing of the conversation
    /// ```
    #[wasm_bindgen(js_name = setSessionMode, unchecked_return_type = "Promise<void>")]
    pub fn set_session_mode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "boolean")] on: JsValue,
    ) -> js_sys::Promise {
        call(self.handle().and_then(|h| {
            let on = on
                .as_bool()
                .ok_or_else(|| invalid_argument("on", "must be a boolean"))?;
            Ok((h, Call::SetSessionMode(on)))
        }))
    }
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
