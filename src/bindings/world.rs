//! `AgentWorld`: the JavaScript handle of one open world, and the methods about the world as a
//! whole (create, open, list, delete, import, export, settings, stop, close). The methods about
//! chats (`chats.rs`), agents and providers (`agents.rs`), the conversation and its events
//! (`conversation.rs`), editing, tools and approvals are further `impl AgentWorld` blocks, one
//! file per topic. They convert and validate JS values, delegate to the core engine, drive the
//! engine's call queue with `spawn_local`, and turn engine events into JS callbacks. No engine
//! logic lives here.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{from_fields, from_js, parse_json, promise, string_arg, to_js};
use crate::bindings::error::{agent_world_error, from_world_error, invalid_argument};
use crate::bindings::storage::CommonOptions;
use crate::bindings::types::{or_undefined, StorageOptionsArg};
use crate::core::engine::{NewWorld, Services, World};
use crate::core::error::WorldError;
use crate::core::model::{AgentPatch, CreateWorld, NewAgent, WorldPatch};
use crate::web::clock::{JsClock, UuidIds};
use crate::web::idb_store::IdbStore;
use crate::web::llm_fetch::FetchLlm;

/// The error of every call on a closed world (after `free()` or the end of a `using` block).
fn closed() -> JsValue {
    agent_world_error(
        "world_closed",
        "this world was closed (free() or the end of a `using` block); open it again with AgentWorld.open(id)",
        None,
    )
}

/// Whether requests from here carry an Origin header (a window or a worker): providers that
/// gate browser access need their opt-in header there. Node, Deno and workerd have neither.
fn is_browser_like() -> bool {
    crate::bindings::events::host_has(1)
}

pub(crate) struct Handle {
    pub(crate) world: World,
    pub(crate) llm: Rc<FetchLlm>,
    /// The IndexedDB store and this world's subscription to other contexts' changes.
    changes: Option<(Rc<IdbStore>, u64)>,
    /// The end functions of the live `events()` iterations, called when the world is closed
    /// (see `crate::bindings::events`).
    pub(crate) iterations: js_sys::Array,
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

/// What a static method of `AgentWorld` does once its store is open (see [`start`]).
enum Start {
    Open(Opening),
    List,
    Delete(String),
}

/// How `create`, `open` or `import` gets the world it opens.
enum Opening {
    /// `ifExists: "open"` opens a stored world of the plan's id instead of failing.
    Create {
        plan: NewWorld,
        open_existing: bool,
    },
    Existing(String),
    /// `copy`: `None` keeps the document's id; `Some(name)` imports a copy (see `import`).
    Import {
        json: String,
        copy: Option<Option<String>>,
    },
}

/// The one body of the static methods (`create`, `open`, `import`, `list`, `delete`): the
/// store, then the world's work, then the handle of the world opened. One async fn for all:
/// one state machine, with one copy of the store opening and of `World::open` instead of one
/// per method.
async fn start(args: Result<(CommonOptions, Start), JsValue>) -> Result<JsValue, JsValue> {
    let (options, how) = args?;
    crate::web::clock::inject_text_ops();
    let store = options.store().await?;
    let opening = match how {
        Start::List => {
            let worlds = World::list(store.as_ref()).await;
            return to_js(&worlds.map_err(from_world_error)?);
        }
        Start::Delete(id) => {
            let deleted = World::delete(store.as_ref(), &id).await;
            return Ok(JsValue::from_bool(deleted.map_err(from_world_error)?));
        }
        Start::Open(opening) => opening,
    };
    let llm = Rc::new(FetchLlm::new(is_browser_like()));
    let svc = Services {
        store,
        llm: llm.clone(),
        clock: Rc::new(JsClock),
        ids: Rc::new(UuidIds),
    };
    // Every way ends by opening the stored world, but a create that wrote it (and has its
    // view): one `World::open` in this state machine, not one per way.
    let id = match opening {
        Opening::Create {
            plan,
            open_existing,
        } => match World::create_planned(svc.clone(), plan).await {
            // Open-or-create (a page reload, HMR): the stored world as it is.
            Err(WorldError::WorldExists(id)) if open_existing => id,
            created => return handle_of(created, llm, &options),
        },
        Opening::Existing(id) => id,
        Opening::Import { json, copy } => {
            let copy = copy.as_ref().map(|c| c.as_deref());
            World::import_stored(&*svc.store, &json, copy)
                .await
                .map_err(from_world_error)?
        }
    };
    handle_of(World::open(svc, &id).await, llm, &options)
}

// The async methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * The whole world (settings, agents, chats, messages, memories) as versioned JSON. API
   * keys are never included.
   *
   * @example
   * ```js
   * const json = await world.export();
   * const copy = await AgentWorld.import(json, { storage: "memory" });
   * ```
   */
  export(): Promise<string>;
  /**
   * Changes the world's settings.
   *
   * @example
   * ```js
   * await world.update({ turnLimit: 10, description: "A longer rally" });
   * ```
   */
  update(patch: WorldPatch): Promise<WorldInfo>;
}
"#;

// The synchronous methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__get` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_GET: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * The world's settings.
   *
   * @example
   * ```js
   * const { turnLimit, currentChatId } = world.info();
   * ```
   */
  info(): WorldInfo;
  /**
   * Cancels every queued and running LLM call. The world stays usable.
   *
   * @example
   * ```js
   * stopButton.onclick = () => world.stop(); // partial replies are kept as `interrupted`
   * ```
   */
  stop(): void;
}
"#;

/// The async work of an instance method once its arguments are read (see [`call`]).
pub(crate) enum Call {
    NewChat,
    LoadChat(String),
    DeleteChat(String),
    RenameChat(String, String),
    Messages(String, Option<String>, usize),
    SetSessionMode(bool),
    AddAgent(NewAgent),
    UpdateAgent(String, AgentPatch),
    RemoveAgent(String),
    ClearAgentMemory(String),
    Approve(String),
    Deny(String, Option<String>),
    Regenerate(String, Option<String>),
    EditMessage(String, String),
    DeleteMessage(String),
    Export,
    Update(WorldPatch),
}

/// The promise of an instance method: `args` is the handle and the call, or the error of
/// reading them (the promise rejects with it). One async fn for every method, as [`start`] is
/// for the static ones: one state machine, one drop glue and one boxed future type instead of
/// one per method. `send` keeps its own (the hot path).
pub(crate) fn call(args: Result<(Rc<Handle>, Call), JsValue>) -> js_sys::Promise {
    promise(run_call(args))
}

async fn run_call(args: Result<(Rc<Handle>, Call), JsValue>) -> Result<JsValue, JsValue> {
    let (h, call) = args?;
    let w = &h.world;
    // Approving, denying, regenerating and editing queue LLM calls: run them once it worked.
    let mut drive = false;
    // Each way yields its result as plain data; one plain function after the await turns it
    // (or the error) into JS, instead of an error and a conversion per way in this machine.
    let done = match call {
        Call::NewChat => w.new_chat().await.map(json),
        Call::LoadChat(id) => w.load_chat(&id).await.map(json),
        Call::DeleteChat(id) => w.delete_chat(&id).await.map(Done::Bool),
        Call::RenameChat(id, name) => w.rename_chat(&id, &name).await.map(json),
        Call::Messages(chat_id, before, limit) => w
            .messages(&chat_id, before.as_deref(), limit)
            .await
            .map(json),
        Call::SetSessionMode(on) => w.set_session_mode(on).await.map(unit),
        Call::AddAgent(input) => w.add_agent(input).await.map(json),
        Call::UpdateAgent(id, patch) => w.update_agent(&id, patch).await.map(json),
        Call::RemoveAgent(id) => w.remove_agent(&id).await.map(Done::Bool),
        Call::ClearAgentMemory(id) => w.clear_agent_memory(&id).await.map(unit),
        Call::Approve(id) => {
            drive = true;
            w.approve(&id).await.map(unit)
        }
        Call::Deny(id, reason) => {
            drive = true;
            w.deny(&id, reason).await.map(unit)
        }
        Call::Regenerate(id, agent) => {
            drive = true;
            w.regenerate(&id, agent.as_deref()).await.map(Done::Text)
        }
        Call::EditMessage(id, content) => {
            drive = true;
            w.edit_message(&id, &content).await.map(json)
        }
        Call::DeleteMessage(id) => w.delete_message(&id).await.map(unit),
        Call::Export => w.export().await.map(Done::Text),
        Call::Update(patch) => w.update(patch).await.map(json),
    };
    finish(&h, drive, done)
}

/// What an instance method resolves with, before it is a JS value (see [`finish`]).
enum Done {
    /// A value's JSON text (see [`to_js`]).
    Json(String),
    Bool(bool),
    /// A string as it is (a message id, an export).
    Text(String),
    Undefined,
}

fn json<T: crate::core::json_write::ToJson>(value: T) -> Done {
    Done::Json(value.to_json())
}

fn unit(_: ()) -> Done {
    Done::Undefined
}

/// The end of [`run_call`]: the engine's error as a JS error, or the result as a JS value
/// (and the queued LLM calls started when `drive`).
fn finish(h: &Rc<Handle>, drive: bool, done: Result<Done, WorldError>) -> Result<JsValue, JsValue> {
    let done = done.map_err(from_world_error)?;
    if drive {
        h.drive();
    }
    match done {
        Done::Json(text) => parse_json(&text),
        Done::Bool(b) => Ok(JsValue::from_bool(b)),
        Done::Text(text) => Ok(JsValue::from_str(&text)),
        Done::Undefined => Ok(JsValue::UNDEFINED),
    }
}

/// The JS handle of a world just created or opened.
fn handle_of(
    world: Result<World, WorldError>,
    llm: Rc<FetchLlm>,
    options: &CommonOptions,
) -> Result<JsValue, JsValue> {
    let world = world.map_err(from_world_error)?;
    world.set_debug(options.debug);
    Ok(wrap(world, llm, options).into())
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
            iterations: js_sys::Array::new(),
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
    #[wasm_bindgen(unchecked_return_type = "Promise<AgentWorld>")]
    pub fn create(
        #[wasm_bindgen(unchecked_param_type = "CreateWorldOptions")] options: JsValue,
    ) -> js_sys::Promise {
        let what = "AgentWorld.create options";
        // Before anything else: the browser creates the database while the options are read.
        crate::bindings::storage::start_indexeddb_open(&options);
        let args = CommonOptions::read(&options, what).and_then(|mut options| {
            let open_existing = options
                .take_choice(
                    "ifExists",
                    what,
                    &["error", "open"],
                    r#"must be "error" or "open""#,
                )?
                .as_deref()
                == Some("open");
            let input: CreateWorld = from_fields(options.rest.clone(), what)?;
            // Checked while the database opens (see `start_indexeddb_open`): on a first visit
            // this code runs for the first time, which costs as much as the open.
            crate::web::clock::inject_text_ops(); // the id's normalisation is the host's
            let plan = World::plan_create(&JsClock, &UuidIds, input).map_err(from_world_error)?;
            let create = Opening::Create {
                plan,
                open_existing,
            };
            Ok((options, Start::Open(create)))
        });
        promise(start(args))
    }

    /// Opens an existing world by id.
    ///
    /// @example
    /// ```js
    /// const world = await AgentWorld.open("team");
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<AgentWorld>")]
    pub fn open(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        options: Option<StorageOptionsArg>,
    ) -> js_sys::Promise {
        let options = or_undefined(options);
        crate::bindings::storage::start_indexeddb_open(&options);
        let args = string_arg(&id, "id").and_then(|id| {
            Ok((
                CommonOptions::read(&options, "AgentWorld.open options")?,
                Start::Open(Opening::Existing(id)),
            ))
        });
        promise(start(args))
    }

    /// The worlds in a storage (settings only).
    ///
    /// @example
    /// ```js
    /// for (const w of await AgentWorld.list()) console.log(w.id, w.name);
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<WorldInfo[]>")]
    pub fn list(options: Option<StorageOptionsArg>) -> js_sys::Promise {
        let options = CommonOptions::read(&or_undefined(options), "AgentWorld.list options");
        promise(start(options.map(|options| (options, Start::List))))
    }

    /// Deletes a world and everything in it; resolves `false` when there was none.
    ///
    /// @example
    /// ```js
    /// await AgentWorld.delete("team");
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn delete(
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
        options: Option<StorageOptionsArg>,
    ) -> js_sys::Promise {
        let args = string_arg(&id, "id").and_then(|id| {
            let options = or_undefined(options);
            Ok((
                CommonOptions::read(&options, "AgentWorld.delete options")?,
                Start::Delete(id),
            ))
        });
        promise(start(args))
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
    #[wasm_bindgen(unchecked_return_type = "Promise<AgentWorld>")]
    pub fn import(
        #[wasm_bindgen(unchecked_param_type = "string")] json: JsValue,
        options: Option<crate::bindings::types::ImportOptionsArg>,
    ) -> js_sys::Promise {
        promise(start(import_args(&json, &or_undefined(options))))
    }

    /// The id of this world (kebab-case of its name, never changes).
    // A JS string made in the module (a `String` return would add the glue's copy-out and
    // free).
    #[wasm_bindgen(getter, unchecked_return_type = "string")]
    pub fn id(&self) -> JsValue {
        JsValue::from_str(&self.id)
    }

    /// The async instance methods but `send` (declared in `TS_CALL` blocks), one export for
    /// all: the glue step (scripts/glue-step.mjs) defines each on the class as
    /// `method(a, b) { return this.__call("method", a, b); }`. One export instead of 19 saves
    /// the per-export code wasm-bindgen generates on both sides (the borrow of `self`, the
    /// argument and result shims, a glue method). `send` keeps its own (the hot path).
    #[wasm_bindgen(js_name = "__call", skip_typescript)]
    pub fn call_method(&self, method: JsValue, a: JsValue, b: JsValue) -> js_sys::Promise {
        let method = method.as_string().unwrap_or_default();
        match method.as_str() {
            // Each with its own body (conversation.rs, outcome.rs).
            "idle" => self.idle(),
            "sendAndWait" => self.send_and_wait(&a, &b),
            _ => call(
                self.handle()
                    .and_then(|h| Ok((h, read_call(&method, &a, &b)?))),
            ),
        }
    }

    /// The synchronous instance methods declared in `TS_GET` blocks, one export for all (as
    /// [`AgentWorld::call_method`] is for the async ones). Each but `stop` (harmless on a closed
    /// world) needs the open world first: a closed one answers `world_closed` before any
    /// argument is read, and the handle is taken once here instead of in every method.
    #[wasm_bindgen(js_name = "__get", skip_typescript)]
    pub fn get(&self, method: JsValue, a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
        let method = method.as_string().unwrap_or_default();
        if method == "stop" {
            self.stop();
            return Ok(JsValue::UNDEFINED);
        }
        let h = self.handle()?;
        let undefined = |()| JsValue::UNDEFINED;
        match method.as_str() {
            "info" => to_js(&h.world.info()),
            "listChats" => h.list_chats(),
            "currentChat" => h.current_chat(),
            "agents" => h.agents(),
            "agentMemory" => h.agent_memory(&a),
            "configureProvider" => h.configure_provider(&a, &b).map(undefined),
            "registerProvider" => h.register_provider(&a).map(undefined),
            "setTimeouts" => h.set_timeouts(&a, &b).map(undefined),
            "pendingApprovals" => h.pending_approvals(),
            "registerTool" => h.register_tool(&a).map(undefined),
            "unregisterTool" => h.unregister_tool(&a).map(JsValue::from_bool),
            "tools" => h.tools(),
            "setInstructions" => h.set_instructions(&a, &b).map(undefined),
            "on" => h.on(&a, &b).map(JsValue::from),
            "events" => h.events(&a),
            _ => Err(no_such_method()),
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
            // Nothing in an end function throws (it catches the signal's own).
            let _ = crate::bindings::events::end_events(&h.iterations);
        }
    }
}

/// `AgentWorld.import`'s arguments: the document, the options, whether to import a copy and
/// the copy's name.
fn import_args(json: &JsValue, options: &JsValue) -> Result<(CommonOptions, Start), JsValue> {
    let json = json.as_string().ok_or_else(|| {
        invalid_argument("json", "must be a string (the result of world.export())")
    })?;
    let what = "AgentWorld.import options";
    let mut options = CommonOptions::read(options, what)?;
    let copy = options
        .take_choice(
            "as",
            what,
            &["original", "copy"],
            r#"must be "original" or "copy""#,
        )?
        .as_deref()
        == Some("copy");
    let name = options.take_choice("name", what, &[], "must be a string")?;
    if name.is_some() && !copy {
        return Err(invalid_argument(
            &format!("{what}.name"),
            "is only for { as: \"copy\" }",
        ));
    }
    let copy = copy.then_some(name);
    Ok((options, Start::Open(Opening::Import { json, copy })))
}

/// The [`Call`] of an async instance method named `method`, from its arguments `a` and `b`
/// (`undefined` when not passed).
fn read_call(method: &str, a: &JsValue, b: &JsValue) -> Result<Call, JsValue> {
    use crate::bindings::{agents, approvals, chats, editing};
    Ok(match method {
        "newChat" => Call::NewChat,
        "loadChat" => Call::LoadChat(string_arg(a, "id")?),
        "deleteChat" => Call::DeleteChat(string_arg(a, "id")?),
        "renameChat" => chats::rename_chat(a, b)?,
        "messages" => chats::messages(a, b)?,
        "setSessionMode" => chats::set_session_mode(a)?,
        "addAgent" => agents::add_agent(a)?,
        "updateAgent" => agents::update_agent(a, b)?,
        "removeAgent" => Call::RemoveAgent(string_arg(a, "id")?),
        "clearAgentMemory" => Call::ClearAgentMemory(string_arg(a, "agentId")?),
        "approve" => Call::Approve(approvals::approval_id(a)?),
        "deny" => approvals::deny(a, b)?,
        "regenerate" => editing::regenerate(a, b)?,
        "editMessage" => editing::edit_message(a, b)?,
        "deleteMessage" => Call::DeleteMessage(string_arg(a, "messageId")?),
        "export" => Call::Export,
        "update" => Call::Update(from_js::<WorldPatch>(a, "update patch")?),
        _ => return Err(no_such_method()),
    })
}

/// A name `__call` or `__get` does not serve (only the glue step's methods call them, with
/// their own names; anything else is a caller reaching into the internals).
fn no_such_method() -> JsValue {
    invalid_argument("method", "is not a method of AgentWorld")
}

impl AgentWorld {
    /// `stop()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn stop(&self) {
        if let Ok(h) = self.handle() {
            h.world.stop();
            // Cancelled approvals queue their store work (deleting the record, keeping the
            // partial reply).
            h.drive();
        }
    }
}
