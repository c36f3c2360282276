//! `AgentWorld`: the JavaScript handle of one open world. It converts and validates JS values,
//! delegates to the core engine, drives the engine's call queue with `spawn_local`, and turns
//! engine events into JS callbacks. No engine logic lives here.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::bindings::error::{
    agent_world_error, from_llm_error, from_world_error, invalid_argument,
};
use crate::bindings::events::event_payload;
use crate::bindings::input::{get, is_plain_object, read_object};
use crate::bindings::storage::CommonOptions;
use crate::bindings::types::{or_undefined, PageOptionsArg, SendOptionsArg, StorageOptionsArg};
use crate::core::engine::{Services, WeakWorld, World};
use crate::core::error::WorldError;
use crate::core::events::{Callback, Event, SystemEvent, Topic, WorldEvent};
use crate::core::llm::{ProviderConfig, ProviderKind};
use crate::core::model::{AgentPatch, CreateWorld, NewAgent, WorldPatch};
use crate::web::clock::{JsClock, UuidIds};
use crate::web::custom_provider::JsCustomProvider;
use crate::web::idb_store::IdbStore;
use crate::web::llm_fetch::{FetchLlm, Timeouts};

/// Converts a Rust value to a plain JS object (maps as objects, `None` fields left out).
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| {
            crate::bindings::error::agent_world_error("internal_error", &e.to_string(), None)
        })
}

/// Reads a JS object argument into a Rust input type, naming `what` in the error. The value is
/// read by the bounded, cycle-checking reader of [`crate::bindings::input`]: every key is seen
/// (the engine's input types reject unknown fields, spec §1) and non-JSON values are refused.
pub(crate) fn from_js<T: serde::de::DeserializeOwned>(
    value: &JsValue,
    what: &str,
) -> Result<T, JsValue> {
    if !is_plain_object(value, what)? {
        return Err(invalid_argument(what, "must be an object"));
    }
    let (fields, _) = read_object(value, what, &[])?;
    from_fields(fields, what)
}

/// Reads fields already read as plain data into a Rust input type.
pub(crate) fn from_fields<T: serde::de::DeserializeOwned>(
    fields: serde_json::Map<String, serde_json::Value>,
    what: &str,
) -> Result<T, JsValue> {
    serde_json::from_value(serde_json::Value::Object(fields)).map_err(|e| {
        // serde quotes the offending value, which may be megabytes long.
        let mut problem = format!("is invalid: {e}");
        if let Some((cut, _)) = problem.char_indices().nth(300) {
            problem.truncate(cut);
            problem.push('…');
        }
        invalid_argument(what, &problem)
    })
}

/// The error of every call on a closed world (after `free()` or the end of a `using` block).
fn closed() -> JsValue {
    agent_world_error(
        "world_closed",
        "this world was closed (free() or the end of a `using` block); open it again with AgentWorld.open(id)",
        None,
    )
}

/// The promise of an async method. Async methods take `&self` only while they start: the
/// work runs on a clone of the handle, so no borrow of the JS object spans an `.await` and
/// `free()` succeeds at any time.
pub(crate) fn promise(
    work: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(work)
}

fn is_browser_like() -> bool {
    // A window or a worker sends an Origin header: providers that gate browser access need
    // their opt-in header there. Node, Deno and workerd have neither global.
    let global = js_sys::global();
    ["window", "WorkerGlobalScope"].iter().any(|name| {
        js_sys::Reflect::get(&global, &JsValue::from_str(name)).is_ok_and(|v| !v.is_undefined())
    })
}

pub(crate) struct Handle {
    pub(crate) world: World,
    llm: Rc<FetchLlm>,
    /// The IndexedDB store and this world's subscription to other contexts' changes.
    changes: Option<(Rc<IdbStore>, u64)>,
    /// What ends each live `events()` iteration when the world is closed.
    iterations: RefCell<Vec<crate::bindings::events::EndIteration>>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Some((store, id)) = &self.changes {
            store.unsubscribe_changes(*id);
        }
    }
}

impl Handle {
    /// Runs the queued LLM calls in the background; harmless when they already run.
    pub(crate) fn drive(self: &Rc<Self>) {
        let world = self.world.clone();
        wasm_bindgen_futures::spawn_local(async move { world.run_until_idle().await });
    }
}

/// One open world: its agents, chats, and the conversation between them and you.
#[wasm_bindgen]
pub struct AgentWorld {
    /// Kept after `free()` so that the id stays readable.
    id: String,
    /// `None` once closed: every later call fails with `world_closed`.
    h: RefCell<Option<Rc<Handle>>>,
}

impl AgentWorld {
    /// The open world's handle (a clone, so no borrow outlives the call), or `world_closed`.
    pub(crate) fn handle(&self) -> Result<Rc<Handle>, JsValue> {
        self.h.borrow().clone().ok_or_else(closed)
    }
}

async fn services(options: &CommonOptions) -> Result<(Services, Rc<FetchLlm>), JsValue> {
    let llm = Rc::new(FetchLlm::new(is_browser_like()));
    let store = options.store().await?;
    Ok((
        Services {
            store,
            llm: llm.clone(),
            clock: Rc::new(JsClock),
            ids: Rc::new(UuidIds),
        },
        llm,
    ))
}

/// The background refresh of a world told of another context's write.
#[derive(Clone, Copy, PartialEq)]
enum Refresh {
    Idle,
    Running,
    /// Running, and told again meanwhile: run once more after.
    Again,
}

fn wrap(world: World, llm: Rc<FetchLlm>, options: &CommonOptions) -> AgentWorld {
    if options.warn_unhandled_errors {
        crate::bindings::outcome::warn_unhandled_errors(&world);
    }
    // Another tab or worker committed a write to this world: reload the view now (after any
    // change in progress), which emits `world` `external-change` when something moved. A burst
    // of notifications runs at most one refresh at a time plus one more after it.
    let changes = options.indexeddb().map(|store| {
        let weak = world.downgrade();
        let id = world.id();
        let pending = Rc::new(std::cell::Cell::new(Refresh::Idle));
        let sub = store.subscribe_changes(Rc::new(move |changed: &str| {
            if changed != id {
                return;
            }
            match pending.get() {
                Refresh::Running => pending.set(Refresh::Again),
                Refresh::Again => {}
                Refresh::Idle => {
                    let Some(world) = weak.upgrade() else {
                        return;
                    };
                    pending.set(Refresh::Running);
                    let pending = pending.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        loop {
                            match world.refresh().await {
                                // Deleted by the other tab: the next call says world_not_found.
                                Err(WorldError::WorldNotFound(_)) | Ok(_) => {}
                                // A storage failure was reported as a `system` event already.
                                Err(e) => world.report(&e),
                            }
                            if pending.get() == Refresh::Again {
                                pending.set(Refresh::Running);
                            } else {
                                pending.set(Refresh::Idle);
                                break;
                            }
                        }
                    });
                }
            }
        }));
        (store, sub)
    });
    AgentWorld {
        id: world.id(),
        h: RefCell::new(Some(Rc::new(Handle {
            world,
            llm,
            changes,
            iterations: RefCell::new(Vec::new()),
        }))),
    }
}

impl AgentWorld {
    /// The engine behind this handle (for the other `impl AgentWorld` blocks, e.g. tools.rs),
    /// or `world_closed` after `free()`. A clone: no borrow of the JS object outlives the call.
    pub(crate) fn world(&self) -> Result<World, JsValue> {
        Ok(self.handle()?.world.clone())
    }
}

#[wasm_bindgen]
impl AgentWorld {
    /// Creates a world and opens it. A world with that id already stored → `world_exists`;
    /// with `ifExists: "open"` the stored world is opened as it is instead (the other options
    /// are not applied to it): what a page that reloads wants.
    ///
    /// @example
    /// ```js
    /// const world = await AgentWorld.create({ name: "Team", turnLimit: 5 });
    /// // open-or-create, e.g. on every page load
    /// const same = await AgentWorld.create({ name: "Team", ifExists: "open" });
    /// ```
    pub async fn create(
        #[wasm_bindgen(unchecked_param_type = "CreateWorldOptions")] options: JsValue,
    ) -> Result<AgentWorld, JsValue> {
        let options = CommonOptions::read(&options, "AgentWorld.create options")?;
        let mut options = options;
        let what = "AgentWorld.create options";
        let open_existing = options
            .take_choice("ifExists", what, &["error", "open"])?
            .as_deref()
            == Some("open");
        let input: CreateWorld = from_fields(options.rest.clone(), what)?;
        let (svc, llm) = services(&options).await?;
        let world = match World::create(svc.clone(), input).await {
            // Open-or-create (a page reload, HMR): the stored world as it is.
            Err(WorldError::WorldExists(id)) if open_existing => World::open(svc, &id).await,
            other => other,
        }
        .map_err(from_world_error)?;
        world.set_debug(options.debug);
        Ok(wrap(world, llm, &options))
    }

    /// Opens an existing world by id.
    ///
    /// @example
    /// ```js
    /// const world = await AgentWorld.open("team");
    /// ```
    pub async fn open(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        options: Option<StorageOptionsArg>,
    ) -> Result<AgentWorld, JsValue> {
        let id = string_arg(&id, "id")?;
        let options = or_undefined(options);
        let options = CommonOptions::read(&options, "AgentWorld.open options")?;
        let (svc, llm) = services(&options).await?;
        let world = World::open(svc, &id).await.map_err(from_world_error)?;
        world.set_debug(options.debug);
        Ok(wrap(world, llm, &options))
    }

    /// The worlds in a storage (settings only).
    ///
    /// @example
    /// ```js
    /// for (const w of await AgentWorld.list()) console.log(w.id, w.name);
    /// ```
    #[wasm_bindgen(unchecked_return_type = "WorldInfo[]")]
    pub async fn list(options: Option<StorageOptionsArg>) -> Result<JsValue, JsValue> {
        let options = or_undefined(options);
        let options = CommonOptions::read(&options, "AgentWorld.list options")?;
        let store = options.store().await?;
        to_js(
            &World::list(store.as_ref())
                .await
                .map_err(from_world_error)?,
        )
    }

    /// Deletes a world and everything in it; resolves `false` when there was none.
    ///
    /// @example
    /// ```js
    /// await AgentWorld.delete("team");
    /// ```
    pub async fn delete(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        options: Option<StorageOptionsArg>,
    ) -> Result<bool, JsValue> {
        let id = string_arg(&id, "id")?;
        let options = or_undefined(options);
        let options = CommonOptions::read(&options, "AgentWorld.delete options")?;
        let store = options.store().await?;
        World::delete(store.as_ref(), &id)
            .await
            .map_err(from_world_error)
    }

    /// Imports a world exported with `world.export()` and opens it. API keys are never part of
    /// an export: configure providers again after importing. The world keeps its id (a stored
    /// world with it → `world_exists`); `{as: "copy", name?}` imports it next to it instead,
    /// as `name` or `<name> (copy)`, `<name> (copy 2)`, … with the id of that name (chat and
    /// message ids are kept: they are per world).
    ///
    /// @example
    /// ```js
    /// const world = await AgentWorld.import(json, { storage: "memory" });
    /// // restore a backup beside the live world
    /// const restored = await AgentWorld.import(backup, { as: "copy" });
    /// ```
    pub async fn import(
        #[wasm_bindgen(unchecked_param_type = "string")] json: JsValue,
        options: Option<crate::bindings::types::ImportOptionsArg>,
    ) -> Result<AgentWorld, JsValue> {
        let options = or_undefined(options);
        let json = json.as_string().ok_or_else(|| {
            invalid_argument("json", "must be a string (the result of world.export())")
        })?;
        let mut options = CommonOptions::read(&options, "AgentWorld.import options")?;
        let what = "AgentWorld.import options";
        let copy = options
            .take_choice("as", what, &["original", "copy"])?
            .as_deref()
            == Some("copy");
        let name = options.take_choice("name", what, &[])?;
        if name.is_some() && !copy {
            return Err(invalid_argument(
                &format!("{what}.name"),
                "is only for { as: \"copy\" }",
            ));
        }
        let (svc, llm) = services(&options).await?;
        let world = if copy {
            World::import_copy(svc, &json, name.as_deref()).await
        } else {
            World::import(svc, &json).await
        }
        .map_err(from_world_error)?;
        world.set_debug(options.debug);
        Ok(wrap(world, llm, &options))
    }

    /// The whole world (settings, agents, chats, messages, memories) as versioned JSON. API
    /// keys are never included.
    ///
    /// @example
    /// ```js
    /// const json = await world.export();
    /// const copy = await AgentWorld.import(json, { storage: "memory" });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<string>")]
    pub fn export(&self) -> js_sys::Promise {
        let h = self.handle();
        promise(async move {
            let json = h?.world.export().await.map_err(from_world_error)?;
            Ok(JsValue::from_str(&json))
        })
    }

    /// The world's settings.
    ///
    /// @example
    /// ```js
    /// const { turnLimit, currentChatId } = world.info();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "WorldInfo")]
    pub fn info(&self) -> Result<JsValue, JsValue> {
        to_js(&self.handle()?.world.info())
    }

    /// Starts a new chat (reusing the current one when it has no messages).
    ///
    /// @example
    /// ```js
    /// const chat = await world.newChat();
    /// console.log(chat.id === world.currentChat()?.id); // true
    /// ```
    #[wasm_bindgen(js_name = newChat, unchecked_return_type = "Promise<Chat>")]
    pub fn new_chat(&self) -> js_sys::Promise {
        let h = self.handle();
        promise(async move { to_js(&h?.world.new_chat().await.map_err(from_world_error)?) })
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
        let args = self.handle().and_then(|h| Ok((h, string_arg(&id, "id")?)));
        promise(async move {
            let (h, id) = args?;
            to_js(&h.world.load_chat(&id).await.map_err(from_world_error)?)
        })
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
        let args = self.handle().and_then(|h| Ok((h, string_arg(&id, "id")?)));
        promise(async move {
            let (h, id) = args?;
            let deleted = h.world.delete_chat(&id).await.map_err(from_world_error)?;
            Ok(JsValue::from_bool(deleted))
        })
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
        let args = self
            .handle()
            .and_then(|h| Ok((h, string_arg(&id, "id")?, string_arg(&name, "name")?)));
        promise(async move {
            let (h, id, name) = args?;
            to_js(
                &h.world
                    .rename_chat(&id, &name)
                    .await
                    .map_err(from_world_error)?,
            )
        })
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
        let args = self.handle().and_then(|h| {
            let chat_id = string_arg(&chat_id, "chatId")?;
            Ok((h, chat_id, read_page(&or_undefined(options))?))
        });
        promise(async move {
            let (h, chat_id, (before, limit)) = args?;
            to_js(
                &h.world
                    .messages(&chat_id, before.as_deref(), limit)
                    .await
                    .map_err(from_world_error)?,
            )
        })
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
        let args = self.handle().and_then(|h| {
            let on = on
                .as_bool()
                .ok_or_else(|| invalid_argument("on", "must be a boolean"))?;
            Ok((h, on))
        });
        promise(async move {
            let (h, on) = args?;
            h.world
                .set_session_mode(on)
                .await
                .map_err(from_world_error)?;
            Ok(JsValue::UNDEFINED)
        })
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
        let args = self
            .handle()
            .and_then(|h| Ok((h, string_arg(&agent_id, "agentId")?)));
        promise(async move {
            let (h, agent_id) = args?;
            h.world
                .clear_agent_memory(&agent_id)
                .await
                .map_err(from_world_error)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// The id of this world (kebab-case of its name, never changes).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
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
        let args = self
            .handle()
            .and_then(|h| Ok((h, from_js::<NewAgent>(&config, "addAgent config")?)));
        promise(async move {
            let (h, input) = args?;
            to_js(&h.world.add_agent(input).await.map_err(from_world_error)?)
        })
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
        let args = self.handle().and_then(|h| {
            let id = string_arg(&id, "id")?;
            Ok((h, id, from_js::<AgentPatch>(&patch, "updateAgent patch")?))
        });
        promise(async move {
            let (h, id, patch) = args?;
            to_js(
                &h.world
                    .update_agent(&id, patch)
                    .await
                    .map_err(from_world_error)?,
            )
        })
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
        let args = self.handle().and_then(|h| Ok((h, string_arg(&id, "id")?)));
        promise(async move {
            let (h, id) = args?;
            let removed = h.world.remove_agent(&id).await.map_err(from_world_error)?;
            Ok(JsValue::from_bool(removed))
        })
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

    /// Changes the world's settings.
    ///
    /// @example
    /// ```js
    /// await world.update({ turnLimit: 10, description: "A longer rally" });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<WorldInfo>")]
    pub fn update(
        &self,
        #[wasm_bindgen(unchecked_param_type = "WorldPatch")] patch: JsValue,
    ) -> js_sys::Promise {
        let args = self
            .handle()
            .and_then(|h| Ok((h, from_js::<WorldPatch>(&patch, "update patch")?)));
        promise(async move {
            let (h, patch) = args?;
            to_js(&h.world.update(patch).await.map_err(from_world_error)?)
        })
    }

    /// Publishes a message (from the human unless `sender` says otherwise) and starts the
    /// agents that answer it. Resolves with the published message once it is persisted.
    ///
    /// @example
    /// ```js
    /// await world.send("@alice, what do you think?");
    /// await world.idle();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<Message>")]
    pub fn send(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        options: Option<SendOptionsArg>,
    ) -> js_sys::Promise {
        let args = self.handle().and_then(|h| {
            let options = or_undefined(options);
            let content = content
                .as_string()
                .ok_or_else(|| invalid_argument("content", "must be a string"))?;
            let sender = read_sender(&options)?;
            let signal = read_signal(&options)?;
            if let Some(signal) = &signal {
                if get(signal, "aborted", "options.signal")?.is_truthy() {
                    return Err(agent_world_error(
                        "llm_aborted",
                        "send() was aborted before the message was published (options.signal)",
                        None,
                    ));
                }
            }
            Ok((h, content, sender, signal))
        });
        promise(async move {
            let (h, content, sender, signal) = args?;
            let message = h
                .world
                .send(&content, sender.as_deref())
                .await
                .map_err(from_world_error)?;
            if let Some(signal) = signal {
                cancel_chain_on_abort(&h.world, &message.message_id, signal);
            }
            h.drive();
            to_js(&message)
        })
    }

    /// Resolves when no agent work is pending (the `world` `idle` event).
    ///
    /// @example
    /// ```js
    /// await world.send("Hello, everyone!");
    /// await world.idle(); // every reply (and hand-over) has been published
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn idle(&self) -> js_sys::Promise {
        let h = self.handle();
        promise(async move {
            let h = h?;
            if !h.world.is_busy() {
                return Ok(JsValue::UNDEFINED);
            }
            let (tx, rx) = futures_channel_oneshot();
            let tx = RefCell::new(Some(tx));
            let _sub = h.world.on(
                Topic::World,
                Rc::new(move |e: &Event| {
                    if matches!(e, Event::World(WorldEvent::Idle)) {
                        if let Some(tx) = tx.borrow_mut().take() {
                            tx.resolve();
                        }
                    }
                    Ok(())
                }),
            );
            h.drive();
            rx.await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Cancels every queued and running LLM call. The world stays usable.
    ///
    /// @example
    /// ```js
    /// stopButton.onclick = () => world.stop(); // partial replies are kept as `interrupted`
    /// ```
    pub fn stop(&self) {
        if let Ok(h) = self.handle() {
            h.world.stop();
            // Cancelled approvals queue their store work (deleting the record, keeping the
            // partial reply).
            h.drive();
        }
    }

    /// What `free()` and `[Symbol.dispose]()` do (the package's JS layer routes them here):
    /// stops the world's work like `stop()`, ends its `events()` iterations and closes the
    /// handle; every later call fails with `world_closed`. Calls already running settle as the
    /// stop makes them. Safe at any time, also from an event callback, and more than once.
    #[wasm_bindgen(js_name = "__close", skip_typescript)]
    pub fn close(&self) {
        let h = self.h.borrow_mut().take();
        if let Some(h) = h {
            h.world.stop();
            // Cancelled approvals still delete their records and keep the partial reply.
            h.drive();
            let iterations = std::mem::take(&mut *h.iterations.borrow_mut());
            for end in iterations.iter().filter_map(std::rc::Weak::upgrade) {
                end();
            }
        }
    }

    /// Calls `callback` with every event of `topic` (`message`, `sse`, `system`, `world`).
    /// Returns the function that unsubscribes.
    ///
    /// @example
    /// ```js
    /// const off = world.on("sse", (e) => e.type === "chunk" && process.stdout.write(e.content));
    /// off();
    /// ```
    // Typed generically in TS_ON below (interface merging): the callback's event type follows
    // the topic.
    #[wasm_bindgen(skip_typescript)]
    pub fn on(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] topic: JsValue,
        callback: JsValue,
    ) -> Result<js_sys::Function, JsValue> {
        let h = self.handle()?;
        let topic = string_arg(&topic, "topic")?;
        let topic = parse_topic(&topic)?;
        let callback: js_sys::Function = callback
            .dyn_into()
            .map_err(|_| invalid_argument("callback", "must be a function"))?;
        let weak = h.world.downgrade();
        let cb: Callback = Rc::new(move |event: &Event| {
            let payload =
                event_payload(event).map_err(|_| "could not convert the event".to_string())?;
            let returned = callback
                .call1(&JsValue::NULL, &payload)
                .map_err(|e| message_of(&e, "the callback threw"))?;
            // An async callback's rejection is reported like a throw (never left unhandled),
            // except for a callback handling a report itself, which would loop.
            if returned.is_object() {
                report_rejection(&returned, weak.clone(), topic, !is_callback_error(event));
            }
            Ok(())
        });
        // The subscription lives as long as the world, not as long as the returned function:
        // callers often ignore it (`world.on(...)` as a statement), and a subscription tied to
        // a closure JS may garbage-collect would silently stop delivering events.
        let id = h.world.on(topic, cb).forget();
        // Weak: a kept `off` function must not keep a closed world alive.
        let world = h.world.downgrade();
        let off = Closure::<dyn FnMut()>::new(move || {
            if let Some(world) = world.upgrade() {
                world.off(id);
            }
        });
        Ok(off.into_js_value().unchecked_into())
    }

    /// Every event of every topic as an async iterator (typed in `TS_EVENTS`).
    #[wasm_bindgen(skip_typescript)]
    pub fn events(&self, options: JsValue) -> Result<JsValue, JsValue> {
        let h = self.handle()?;
        let signal = read_signal(&options)?;
        let (iterator, end) = crate::bindings::events::events(&h.world, signal, event_payload)?;
        let mut iterations = h.iterations.borrow_mut();
        iterations.retain(|e| e.strong_count() > 0);
        iterations.push(end);
        Ok(iterator)
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

// The generic `on`, merged into the class's declaration: the callback's event type follows the
// topic.
#[wasm_bindgen(typescript_custom_section)]
const TS_ON: &'static str = r#"
export interface AgentWorld {
  /**
   * Calls `callback` with every event of `topic`; returns the function that unsubscribes.
   * A callback that throws is reported as a `system` `error` event (`callback_error`).
   *
   * @example
   * ```js
   * const off = world.on("sse", (e) => { if (e.type === "chunk") out.append(e.content ?? ""); });
   * off();
   * ```
   */
  on<T extends Topic>(topic: T, callback: (event: EventMap[T]) => void): () => void;
}
"#;

fn parse_topic(topic: &str) -> Result<Topic, JsValue> {
    Ok(match topic {
        "message" => Topic::Message,
        "sse" => Topic::Sse,
        "system" => Topic::System,
        "world" => Topic::World,
        other => {
            return Err(invalid_argument(
                "topic",
                &format!(
                    "unknown topic {other:?}; use \"message\", \"sse\", \"system\" or \"world\""
                ),
            ))
        }
    })
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

/// Whether an optional options argument was given: `false` for `undefined`/`null`, an error
/// for anything that is not an object.
fn options_object(options: &JsValue) -> Result<bool, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(false);
    }
    if !is_plain_object(options, "options")? {
        return Err(invalid_argument("options", "must be an object"));
    }
    Ok(true)
}

fn read_sender(options: &JsValue) -> Result<Option<String>, JsValue> {
    if !options_object(options)? {
        return Ok(None);
    }
    let sender = get(options, "sender", "options")?;
    if sender.is_undefined() || sender.is_null() {
        return Ok(None);
    }
    sender
        .as_string()
        .map(Some)
        .ok_or_else(|| invalid_argument("options.sender", "must be a string"))
}

/// A string argument, or an `invalid_input` error naming it (a non-string handed to a
/// wasm-bindgen `String` parameter would hit the glue's memory copy, not a clean error).
pub(crate) fn string_arg(value: &JsValue, name: &str) -> Result<String, JsValue> {
    value
        .as_string()
        .ok_or_else(|| invalid_argument(name, "must be a string"))
}

fn read_signal(options: &JsValue) -> Result<Option<web_sys::AbortSignal>, JsValue> {
    if !options_object(options)? {
        return Ok(None);
    }
    match get(options, "signal", "options")? {
        v if v.is_undefined() || v.is_null() => Ok(None),
        // `instanceof` in the glue is guarded: a throwing Proxy is simply not a signal.
        v => v
            .dyn_into::<web_sys::AbortSignal>()
            .map(Some)
            .map_err(|_| invalid_argument("options.signal", "must be an AbortSignal")),
    }
}

/// The `message` of something JavaScript threw, or `fallback`.
fn message_of(e: &JsValue, fallback: &str) -> String {
    js_sys::Reflect::get(e, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| fallback.to_string())
}

fn is_callback_error(event: &Event) -> bool {
    matches!(event, Event::System(SystemEvent::Error { code, .. }) if code == "callback_error")
}

/// When `returned` (what an `on` callback returned) is a promise or thenable that rejects,
/// handles the rejection and, when `report`, reports it as a `system` `error` event with code
/// `callback_error`, as a throw is.
fn report_rejection(returned: &JsValue, world: WeakWorld, topic: Topic, report: bool) {
    // Promise.resolve adopts thenables and never throws (a throwing `then` rejects).
    let settled = js_sys::Promise::resolve(returned);
    let on_rejected = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        if let Some(world) = world.upgrade().filter(|_| report) {
            let message = message_of(&e, "the callback's promise rejected");
            world.emit_all(vec![Event::error(
                format!("a '{}' event callback failed: {message}", topic.as_str()),
                "callback_error",
                None,
            )]);
        }
    });
    let _ = settled.catch(&on_rejected);
    // Owned by the JS function from now on: freed when the promise is collected.
    let _ = on_rejected.into_js_value();
}

/// While the agent work started by `root` runs, aborting `signal` cancels it: the calls
/// answering `root` and, transitively, the replies it produced (an agent hand-over chain).
/// Other work goes on. The tracking ends when the world is next idle.
fn cancel_chain_on_abort(world: &World, root: &str, signal: web_sys::AbortSignal) {
    struct Tracker {
        chain: Vec<String>,
        subscriptions: Vec<crate::core::events::SubscriptionId>,
        listener: Option<Closure<dyn FnMut()>>,
        done: bool,
    }
    let tracker = Rc::new(RefCell::new(Tracker {
        chain: vec![root.to_string()],
        subscriptions: Vec::new(),
        listener: None,
        done: false,
    }));
    let finish = {
        let (world, tracker, signal) = (world.clone(), tracker.clone(), signal.clone());
        move || {
            let (subscriptions, listener) = {
                let mut t = tracker.borrow_mut();
                if t.done {
                    return;
                }
                t.done = true;
                (std::mem::take(&mut t.subscriptions), t.listener.take())
            };
            for id in subscriptions {
                world.off(id);
            }
            if let Some(listener) = listener {
                let _ = signal.remove_event_listener_with_callback(
                    "abort",
                    listener.as_ref().unchecked_ref(),
                );
            }
        }
    };
    let t = tracker.clone();
    let on_message = world
        .on(
            Topic::Message,
            Rc::new(move |event: &Event| {
                if let Event::Message(m) = event {
                    let mut t = t.borrow_mut();
                    let in_chain = m
                        .reply_to_message_id
                        .as_ref()
                        .is_some_and(|r| t.chain.contains(r));
                    if in_chain {
                        t.chain.push(m.message_id.clone());
                    }
                }
                Ok(())
            }),
        )
        .forget();
    let idle_finish = finish.clone();
    let on_idle = world
        .on(
            Topic::World,
            Rc::new(move |event: &Event| {
                if matches!(event, Event::World(WorldEvent::Idle)) {
                    idle_finish();
                }
                Ok(())
            }),
        )
        .forget();
    let (w, t) = (world.clone(), tracker.clone());
    let listener = Closure::<dyn FnMut()>::new(move || {
        let chain = t.borrow().chain.clone();
        w.cancel_replies_to(&chain);
        // Cancelled approvals of the chain queue their store work.
        let runner = w.clone();
        wasm_bindgen_futures::spawn_local(async move { runner.run_until_idle().await });
        finish();
    });
    let added = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
    let mut t = tracker.borrow_mut();
    t.subscriptions = vec![on_message, on_idle];
    if added.is_ok() {
        t.listener = Some(listener);
    }
}

/// A tiny one-shot signal (resolve once, await once) without another dependency.
fn futures_channel_oneshot() -> (OneshotTx, OneshotRx) {
    let shared = Rc::new(RefCell::new((false, None::<std::task::Waker>)));
    (OneshotTx(shared.clone()), OneshotRx(shared))
}

struct OneshotTx(Rc<RefCell<(bool, Option<std::task::Waker>)>>);
struct OneshotRx(Rc<RefCell<(bool, Option<std::task::Waker>)>>);

impl OneshotTx {
    fn resolve(self) {
        let waker = {
            let mut s = self.0.borrow_mut();
            s.0 = true;
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl std::future::Future for OneshotRx {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let mut s = self.0.borrow_mut();
        if s.0 {
            std::task::Poll::Ready(())
        } else {
            s.1 = Some(cx.waker().clone());
            std::task::Poll::Pending
        }
    }
}
