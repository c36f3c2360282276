//! Export and import (spec §6): one versioned JSON document per world.
//!
//! Format version 3:
//! ```json
//! { "formatVersion": 3,
//!   "world": { …World… },
//!   "agents": [ …Agent… ],
//!   "chats": [ { "chat": { …Chat… }, "messages": [ …Message… ],
//!                "agentStates": [ { "agentId", "llmCallCount", "lastLLMCall"? } ],
//!                "memories": [ { "agentId", "entries": [ …MemoryEntry… ] } ] } ] }
//! ```
//! Version 3 (tools, spec §9) added, all optional: on agents `tools`, `maxSteps` (absent = 5)
//! and `reasoning`; on messages `toolCalls`; memory entries with `role: "tool"` (`toolCallId`,
//! `toolName`) and `assistant` entries with `toolCalls`. A version 2 document is a valid version
//! 3 document, so migrating it only raises the number. Version 1 is version 2 without
//! `titleSource` on chats; migrating derives it from the name
//! (`New Chat` → `default`, anything else → `auto`). API keys are never part of the document
//! (no type of the model has a field for one).
//!
//! Import never half-reads: the whole document is parsed and validated first (errors are
//! `import_invalid` with the JSON path of the bad field, e.g. `agents[1].historyLimit`), then
//! written as one store batch. A chat's `messageCount` is recomputed from its messages.
//!
//! Import accepts exactly what the API accepts: every field goes through the validator the API
//! uses for it (`create`/`update`, `addAgent`/`updateAgent`, `renameChat`, `send`), so ids are
//! kebab-case and bounded, names are not blank and at most 100 characters, providers are
//! known, senders and contents are not blank and bounded, and timestamps are in the years 0000
//! to 9999 (what JavaScript's `Date` reads back). Values the API would normalise (trimmed
//! names, a blank description as none, a provider's case) are normalised the same way.

use crate::core::vec_map::VecSet;

use crate::core::json::{Map, Value};

use crate::core::engine::{Services, World};
use crate::core::error::WorldError;
use crate::core::ids::{agent_id, world_id};
use crate::core::json::{FromJson, JsonProblem};
use crate::core::json_write::{Obj, ToJson};
use crate::core::model::{
    validate_agent_tools, validate_chat_llm_provider, validate_chat_name, validate_content,
    validate_history_limit, validate_id, validate_max_tokens, validate_name, validate_provider,
    validate_record_id, validate_required, validate_sender, validate_temperature, validate_text,
    Agent, Chat, MemoryEntry, MemoryRole, Message, WorldData, DEFAULT_TURN_LIMIT, MAX_MAX_STEPS,
    NEW_CHAT_NAME,
};
use crate::core::path::Path;
use crate::core::sort::sort_by;
use crate::core::store::{AgentChatState, StoreOp};

/// The export format this engine writes.
pub const FORMAT_VERSION: u64 = 3;

#[derive(Debug, Clone)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "camelCase"))]
struct ExportMemory {
    agent_id: String,
    entries: Vec<MemoryEntry>,
}

#[derive(Debug, Clone)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "camelCase"))]
struct ExportChat {
    chat: Chat,
    messages: Vec<Message>,
    agent_states: Vec<AgentChatState>,
    memories: Vec<ExportMemory>,
}

#[derive(Debug, Clone)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "camelCase"))]
struct ExportDoc {
    format_version: u64,
    world: WorldData,
    agents: Vec<Agent>,
    chats: Vec<ExportChat>,
}

// Writing (see `crate::core::json_write`): camelCase names in declaration order, as the
// derived form wrote them (the tests compare the two).

impl ToJson for ExportMemory {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("agentId", &self.agent_id)
            .field("entries", &self.entries)
            .end();
    }
}

impl ToJson for ExportChat {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("chat", &self.chat)
            .field("messages", &self.messages)
            .field("agentStates", &self.agent_states)
            .field("memories", &self.memories)
            .end();
    }
}

impl ToJson for ExportDoc {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("formatVersion", &self.format_version)
            .field("world", &self.world)
            .field("agents", &self.agents)
            .field("chats", &self.chats)
            .end();
    }
}

fn invalid(path: &str, problem: impl Into<String>) -> WorldError {
    WorldError::ImportInvalid {
        path: path.to_string(),
        problem: problem.into(),
    }
}

/// The path of the document's world settings.
const WORLD: Path<'static> = Path::Field(&Path::Top, "world");

/// Decodes `v` as `T` (by [`crate::core::json`]); the error names the offending field below
/// `at` (`agents[0].temperature`, `chats[0].messages[1].toolCalls[0].args`).
fn parse_at<T: FromJson>(v: &Value, at: &Path) -> Result<T, WorldError> {
    T::from_json(v.clone()).map_err(|e| located(at, &e))
}

#[inline(never)]
fn located(at: &Path, e: &JsonProblem) -> WorldError {
    let path = if e.path.is_empty() {
        at.to_string()
    } else if e.path.starts_with('[') {
        format!("{at}{}", e.path)
    } else {
        at.field(&e.path).to_string()
    };
    WorldError::ImportInvalid {
        path,
        problem: e.problem.clone(),
    }
}

fn array_at<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    at: &Path,
) -> Result<&'v [Value], WorldError> {
    match obj.get(key) {
        Some(Value::Array(a)) => Ok(a.as_slice()),
        Some(_) => Err(invalid_at(at, key, "must be an array")),
        None => Err(invalid_at(at, key, "is missing")),
    }
}

/// The object at `at`, its fields checked against `allowed`.
fn object_at<'v>(
    v: &'v Value,
    allowed: &[&str],
    at: &Path,
) -> Result<&'v Map<String, Value>, WorldError> {
    let Value::Object(obj) = v else {
        return Err(invalid(&at.to_string(), "must be an object"));
    };
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid_at(at, k, "unknown field")),
        None => Ok(obj),
    }
}

/// v2 → v3: every field version 3 added is optional with the old behaviour as its default
/// (no tools, `maxSteps` 5, no reasoning, no tool calls), so only the number changes.
fn migrate_v2(doc: &mut Value) {
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("formatVersion".into(), Value::from(3u64));
    }
}

/// v1 → v2: chats gain `titleSource`, derived from the name.
fn migrate_v1(doc: &mut Value) {
    if let Some(Value::Array(chats)) = doc.get_mut("chats") {
        for c in chats {
            if let Some(Value::Object(chat)) = c.get_mut("chat") {
                if !chat.contains_key("titleSource") {
                    let derived = match chat.get("name").and_then(Value::as_str) {
                        Some(NEW_CHAT_NAME) | None => "default",
                        Some(_) => "auto",
                    };
                    chat.insert("titleSource".into(), Value::from(derived));
                }
            }
        }
    }
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("formatVersion".into(), Value::from(2u64));
    }
}

/// The API's validators for the fields of the object at document path `obj`, run by
/// `checks`, which names in its argument the field it checks before each: the first error
/// becomes `import_invalid` at the path `obj.field`, so an import accepts exactly what the API
/// accepts. The path is only built on failure, and one error conversion serves every check
/// (one per check cost the wasm module a kilobyte).
fn fields(
    obj: &Path,
    checks: impl FnOnce(&mut &'static str) -> Result<(), WorldError>,
) -> Result<(), WorldError> {
    let mut field = "";
    checks(&mut field).map_err(|e| invalid_at(obj, field, e.to_string()))
}

/// [`invalid`] at the path `obj.field` (`field` alone at the top).
fn invalid_at(obj: &Path, field: &str, problem: impl Into<String>) -> WorldError {
    invalid_field(obj, field, problem.into())
}

#[inline(never)]
fn invalid_field(obj: &Path, field: &str, problem: String) -> WorldError {
    WorldError::ImportInvalid {
        path: obj.field(field).to_string(),
        problem,
    }
}

/// The world's settings by the rules of `create` and `update`.
fn check_world(w: &mut WorldData) -> Result<(), WorldError> {
    fields(&WORLD, |f| {
        *f = "id";
        validate_id("id", &w.id, false)?;
        *f = "name";
        world_id(&w.name)?;
        w.name = validate_name("name", &w.name)?;
        *f = "description";
        w.description = validate_text("description", w.description.take())?;
        if let Some(c) = &w.current_chat_id {
            *f = "currentChatId";
            validate_record_id("currentChatId", c)?;
        }
        if w.turn_limit == 0 {
            w.turn_limit = DEFAULT_TURN_LIMIT;
        }
        *f = "historyLimit";
        validate_history_limit("historyLimit", i64::from(w.history_limit))?;
        *f = "chatLLMProvider";
        w.chat_llm_provider = validate_chat_llm_provider(w.chat_llm_provider.take())?;
        w.chat_llm_model = w.chat_llm_model.take().filter(|m| !m.trim().is_empty());
        Ok(())
    })
}

/// An agent by the rules of `addAgent` and `updateAgent`.
fn check_agent(a: &mut Agent, p: &Path) -> Result<(), WorldError> {
    fields(p, |f| {
        *f = "id";
        validate_id("id", &a.id, true)?;
        *f = "name";
        agent_id(&a.name)?;
        a.name = validate_name("name", &a.name)?;
        *f = "type";
        a.agent_type = validate_required("type", &a.agent_type)?;
        *f = "provider";
        a.provider = validate_provider("provider", &a.provider)?;
        *f = "model";
        a.model = validate_required("model", &a.model)?;
        *f = "systemPrompt";
        a.system_prompt = validate_text("systemPrompt", a.system_prompt.take())?;
        if let Some(t) = a.temperature {
            *f = "temperature";
            validate_temperature(t)?;
        }
        if let Some(m) = a.max_tokens {
            *f = "maxTokens";
            validate_max_tokens(i64::from(m))?;
        }
        if let Some(h) = a.history_limit {
            *f = "historyLimit";
            validate_history_limit("historyLimit", i64::from(h))?;
        }
        *f = "status";
        a.status = validate_required("status", &a.status)?;
        Ok(())
    })
}

/// A chat's metadata by the rules of `renameChat`.
fn check_chat(c: &mut Chat, p: &Path) -> Result<(), WorldError> {
    fields(p, |f| {
        *f = "id";
        validate_record_id("id", &c.id)?;
        *f = "name";
        c.name = validate_chat_name("name", &c.name)?;
        *f = "description";
        c.description = validate_text("description", c.description.take())?;
        Ok(())
    })
}

/// A message by the rules of `send()` (notices included: they are never empty either).
fn check_message(m: &Message, p: &Path) -> Result<(), WorldError> {
    fields(p, |f| {
        *f = "messageId";
        validate_record_id("messageId", &m.message_id)?;
        *f = "sender";
        validate_sender(&m.sender)?;
        *f = "content";
        validate_content(&m.content)?;
        if let Some(r) = &m.reply_to_message_id {
            *f = "replyToMessageId";
            validate_record_id("replyToMessageId", r)?;
        }
        Ok(())
    })
}

/// The tool settings of an imported agent (version 3): the rules of `addAgent`.
fn check_agent_tools(a: &Agent, p: &Path) -> Result<(), WorldError> {
    if !(1..=MAX_MAX_STEPS).contains(&a.max_steps) {
        return Err(invalid_at(
            p,
            "maxSteps",
            format!("must be an integer from 1 to {MAX_MAX_STEPS}"),
        ));
    }
    validate_agent_tools(a.tools.clone()).map_err(|e| invalid_at(p, "tools", e.to_string()))?;
    if a.reasoning.is_some_and(|r| r.budget_tokens == Some(0)) {
        return Err(invalid_at(
            p,
            "reasoning.budgetTokens",
            "must be at least 1",
        ));
    }
    Ok(())
}

/// A memory entry: what publishing a message would have saved.
fn check_memory(e: &MemoryEntry, chat_id: &str, p: &Path) -> Result<(), WorldError> {
    fields(p, |f| {
        *f = "messageId";
        validate_record_id("messageId", &e.message_id)?;
        // An assistant entry that carries tool calls may have no text (the model only called
        // tools).
        if e.tool_calls.is_empty() || !e.content.is_empty() {
            *f = "content";
            validate_content(&e.content)?;
        }
        if let Some(s) = &e.sender {
            *f = "sender";
            validate_sender(s)?;
        }
        Ok(())
    })?;
    if e.chat_id.as_deref().is_some_and(|c| c != chat_id) {
        return Err(invalid_at(p, "chatId", "is not the id of its chat"));
    }
    Ok(())
}

/// A memory entry's tool fields fit its role: `toolCallId` and `toolName` exactly on `tool`
/// entries, `toolCalls` only on `assistant` entries.
fn check_memory_entry(e: &MemoryEntry, p: &Path) -> Result<(), WorldError> {
    let is_tool = e.role == MemoryRole::Tool;
    if is_tool && e.tool_call_id.is_none() {
        return Err(invalid_at(p, "toolCallId", "is missing on a tool entry"));
    }
    if is_tool && e.tool_name.is_none() {
        return Err(invalid_at(p, "toolName", "is missing on a tool entry"));
    }
    if !is_tool && e.tool_call_id.is_some() {
        return Err(invalid_at(
            p,
            "toolCallId",
            "is only allowed on tool entries",
        ));
    }
    if !is_tool && e.tool_name.is_some() {
        return Err(invalid_at(p, "toolName", "is only allowed on tool entries"));
    }
    if e.role != MemoryRole::Assistant && !e.tool_calls.is_empty() {
        return Err(invalid_at(
            p,
            "toolCalls",
            "is only allowed on assistant entries",
        ));
    }
    Ok(())
}

/// A parsed and validated document, ready to be written: the world, and the batch that stores
/// the rest (agents, then each chat with its messages, memories and counters) in order. The
/// batch's ops name the world by [`with_world_id`] once its id is final (an import as a copy
/// changes it), so no op is built twice.
struct Parsed {
    world: WorldData,
    ops: Vec<StoreOp>,
}

fn parse_document(json: &str) -> Result<Parsed, WorldError> {
    let mut doc: Value =
        crate::core::json::from_str(json).map_err(|e| invalid("$", format!("not JSON: {e}")))?;
    let version = match doc.get("formatVersion") {
        None => return Err(invalid("formatVersion", "is missing")),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| invalid("formatVersion", "must be a positive integer"))?,
    };
    match version {
        1 => {
            migrate_v1(&mut doc);
            migrate_v2(&mut doc);
        }
        2 => migrate_v2(&mut doc),
        FORMAT_VERSION => {}
        v => {
            return Err(invalid(
                "formatVersion",
                format!(
                "version {v} is not supported; this engine reads versions 1 to {FORMAT_VERSION}"
            ),
            ))
        }
    }
    let Value::Object(_) = &doc else {
        return Err(invalid("$", "must be an object"));
    };
    let top = object_at(
        &doc,
        &["formatVersion", "world", "agents", "chats"],
        &Path::Top,
    )?;
    let world_v = top
        .get("world")
        .ok_or_else(|| invalid("world", "is missing"))?;
    let mut world: WorldData = parse_at(world_v, &WORLD)?;
    check_world(&mut world)?;

    let mut ops = Vec::new();
    let mut agent_ids = VecSet::new();
    let list = Path::Field(&Path::Top, "agents");
    for (i, v) in array_at(top, "agents", &Path::Top)?.iter().enumerate() {
        let p = list.item(i);
        let mut a: Agent = parse_at(v, &p)?;
        check_agent(&mut a, &p)?;
        if !agent_ids.insert(a.id.clone()) {
            return Err(invalid_at(
                &p,
                "id",
                format!("duplicate agent id {:?}", a.id),
            ));
        }
        check_agent_tools(&a, &p)?;
        ops.push(StoreOp::PutAgent {
            world_id: String::new(),
            agent: a,
        });
    }

    let mut chat_ids = VecSet::new();
    let list = Path::Field(&Path::Top, "chats");
    for (i, v) in array_at(top, "chats", &Path::Top)?.iter().enumerate() {
        let p = list.item(i);
        let obj = object_at(v, &["chat", "messages", "agentStates", "memories"], &p)?;
        let chat_v = obj
            .get("chat")
            .ok_or_else(|| invalid_at(&p, "chat", "is missing"))?;
        let cp = p.field("chat");
        let mut chat: Chat = parse_at(chat_v, &cp)?;
        check_chat(&mut chat, &cp)?;
        if chat.world_id != world.id {
            return Err(invalid_at(
                &cp,
                "worldId",
                format!("{:?} is not the world's id {:?}", chat.world_id, world.id),
            ));
        }
        if !chat_ids.insert(chat.id.clone()) {
            return Err(invalid_at(
                &cp,
                "id",
                format!("duplicate chat id {:?}", chat.id),
            ));
        }
        let messages = array_at(obj, "messages", &p)?;
        // Every message is stored or the import fails: the count is the array's length.
        chat.message_count = messages.len() as u64;
        let chat_id = chat.id.clone();
        ops.push(StoreOp::PutChat(chat));
        let mut message_ids = VecSet::new();
        let list = p.field("messages");
        for (j, mv) in messages.iter().enumerate() {
            let mp = list.item(j);
            let mut m: Message = parse_at(mv, &mp)?;
            check_message(&m, &mp)?;
            if m.chat_id.as_deref().is_some_and(|c| c != chat_id) {
                return Err(invalid_at(&mp, "chatId", "is not the id of its chat"));
            }
            if !message_ids.insert(m.message_id.clone()) {
                return Err(invalid_at(&mp, "messageId", "duplicate message id"));
            }
            m.chat_id = Some(chat_id.clone());
            ops.push(StoreOp::AppendMessage {
                world_id: String::new(),
                chat_id: chat_id.clone(),
                message: m,
            });
        }
        // Read before the memories (the first bad field is reported in document order),
        // stored after them.
        let mut states = Vec::new();
        let list = p.field("agentStates");
        for (j, sv) in array_at(obj, "agentStates", &p)?.iter().enumerate() {
            let sp = list.item(j);
            let s: AgentChatState = parse_at(sv, &sp)?;
            if !agent_ids.contains(&s.agent_id) {
                return Err(invalid_at(
                    &sp,
                    "agentId",
                    format!("unknown agent {:?}", s.agent_id),
                ));
            }
            states.push(StoreOp::PutAgentState {
                world_id: String::new(),
                chat_id: chat_id.clone(),
                state: s,
            });
        }
        let list = p.field("memories");
        for (j, gv) in array_at(obj, "memories", &p)?.iter().enumerate() {
            let gp = list.item(j);
            let g = object_at(gv, &["agentId", "entries"], &gp)?;
            let agent = g
                .get("agentId")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid_at(&gp, "agentId", "must be a string"))?;
            if !agent_ids.contains(agent) {
                return Err(invalid_at(
                    &gp,
                    "agentId",
                    format!("unknown agent {agent:?}"),
                ));
            }
            let list = gp.field("entries");
            for (k, ev) in array_at(g, "entries", &gp)?.iter().enumerate() {
                let ep = list.item(k);
                let e: MemoryEntry = parse_at(ev, &ep)?;
                check_memory(&e, &chat_id, &ep)?;
                check_memory_entry(&e, &ep)?;
                ops.push(StoreOp::AppendMemory {
                    world_id: String::new(),
                    chat_id: chat_id.clone(),
                    agent_id: agent.to_string(),
                    entry: e,
                });
            }
        }
        ops.append(&mut states);
    }
    if let Some(cid) = &world.current_chat_id {
        // With no chat at all, a pointer to a deleted chat is how an export says "session mode
        // on, no chat left" (the next message starts a new chat); otherwise it must name one.
        if !chat_ids.contains(cid) && !chat_ids.is_empty() {
            return Err(invalid_at(
                &WORLD,
                "currentChatId",
                format!("no chat with id {cid:?}"),
            ));
        }
    }
    Ok(Parsed { world, ops })
}

impl World {
    /// The world as a version-3 export document (settings, agents, chats, messages, memories and
    /// per-chat counters), compact JSON: a second, pretty serializer of every type cost the wasm
    /// module 7.5 KB raw, and a reader can pretty-print the text itself. Never contains API keys.
    pub async fn export(&self) -> Result<String, WorldError> {
        let world_id = self.id();
        let dump = self
            .inner
            .store
            .dump(&world_id)
            .await
            .map_err(|e| self.report_storage(e.into(), None))?;
        // As stored: "no chat left" keeps its pointer, so the import starts a chat on the next
        // message too (an explicit null would be session mode off).
        let world = self.st().stored_world();
        let mut chats: Vec<ExportChat> = dump
            .chats
            .into_iter()
            .filter_map(|c| {
                let chat = c.chat?;
                Some(ExportChat {
                    chat,
                    messages: c.messages,
                    agent_states: c.states,
                    memories: c
                        .memories
                        .into_iter()
                        .map(|(agent_id, entries)| ExportMemory { agent_id, entries })
                        .collect(),
                })
            })
            .collect();
        sort_by(&mut chats, &|a, b| {
            (a.chat.created_at, &a.chat.id).cmp(&(b.chat.created_at, &b.chat.id))
        });
        let doc = ExportDoc {
            format_version: FORMAT_VERSION,
            world,
            agents: self.agents(),
            chats,
        };
        Ok(doc.to_json())
    }

    /// Imports an export document (any supported version) as a new world and opens it. The
    /// document is validated completely before one batch writes it; a world with the same id
    /// must not exist (`world_exists`).
    pub async fn import(svc: Services, json: &str) -> Result<World, WorldError> {
        Self::import_as(svc, json, None).await
    }

    /// Imports a document as a copy next to the world it came from (a backup restored beside
    /// the live world): the copy is named `name`, or `<name> (copy)`, `<name> (copy 2)`, … the
    /// first whose id is free; its id is `kebab(name)`. Chat and message ids are kept: every
    /// store keys them under the world, so they cannot clash with the original's (and the
    /// copy's references between messages, memory and chats stay as they were). A given `name`
    /// whose id exists → `world_exists`.
    pub async fn import_copy(
        svc: Services,
        json: &str,
        name: Option<&str>,
    ) -> Result<World, WorldError> {
        Self::import_as(svc, json, Some(name)).await
    }

    /// [`World::import`] (`copy` = `None`) or [`World::import_copy`] (`copy` = `Some(name)`):
    /// one future for both, so `AgentWorld.import` instantiates one state machine, not two.
    pub async fn import_as(
        svc: Services,
        json: &str,
        copy: Option<Option<&str>>,
    ) -> Result<World, WorldError> {
        let id = Self::import_stored(&*svc.store, json, copy).await?;
        World::open(svc, &id).await
    }

    /// The writing half of [`World::import_as`]: stores the document (as a copy when `copy` is
    /// `Some`) and returns the stored world's id, to open with [`World::open`] (the binding
    /// opens a world in one place for create, open and import).
    pub async fn import_stored(
        store: &dyn crate::core::store::Store,
        json: &str,
        copy: Option<Option<&str>>,
    ) -> Result<String, WorldError> {
        let mut parsed = parse_document(json)?;
        if let Some(name) = copy {
            let name = match name {
                Some(n) => crate::core::model::validate_name("name", n)?,
                None => free_copy_name(store, &parsed.world.name).await?,
            };
            renamed(&mut parsed, name)?;
        }
        let (id, ops) = import_ops(parsed);
        // Under the world's lock, so two tabs importing the same world cannot both succeed.
        let _guard = store.lock_world(&id).await?;
        if store.load_world(&id).await?.is_some() {
            return Err(WorldError::WorldExists(id));
        }
        store.apply(ops).await?;
        Ok(id)
    }
}

/// The first of `<base> (copy)`, `<base> (copy 2)`, … up to 100 whose id is free in `store`.
async fn free_copy_name(
    store: &dyn crate::core::store::Store,
    base: &str,
) -> Result<String, WorldError> {
    for i in 1..=100u32 {
        let candidate = if i == 1 {
            format!("{base} (copy)")
        } else {
            format!("{base} (copy {i})")
        };
        let id = crate::core::ids::world_id(&candidate)?;
        if store.load_world(&id).await?.is_none() {
            return Ok(candidate);
        }
    }
    Err(WorldError::input(
        "name",
        "100 copies exist already; give the copy a name",
    ))
}

/// A parsed document given the name `name` and its id (a copy).
fn renamed(parsed: &mut Parsed, name: String) -> Result<(), WorldError> {
    parsed.world.id = crate::core::ids::world_id(&name)?;
    parsed.world.name = name;
    Ok(())
}

/// The world id of a parsed document and the one batch that stores it: the world first, then
/// the parsed ops, each naming the world's (final) id. Plain code, built before the import's
/// awaits, so only the batch is held across them.
fn import_ops(parsed: Parsed) -> (String, Vec<StoreOp>) {
    let id = parsed.world.id.clone();
    let mut ops = parsed.ops;
    with_world_id(&mut ops, &id);
    ops.insert(0, StoreOp::PutWorld(parsed.world));
    (id, ops)
}

/// Sets the world every op of an import's batch names to `id`.
fn with_world_id(ops: &mut [StoreOp], id: &str) {
    for op in ops {
        let (StoreOp::PutChat(Chat { world_id, .. })
        | StoreOp::PutAgent { world_id, .. }
        | StoreOp::AppendMessage { world_id, .. }
        | StoreOp::AppendMemory { world_id, .. }
        | StoreOp::PutAgentState { world_id, .. }) = op
        else {
            continue;
        };
        id.clone_into(world_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::store_contract as tpl;

    #[test]
    fn title_source_is_derived_in_v1() {
        let mut v: Value = crate::core::json::json!({"formatVersion": 1, "chats": [
            {"chat": {"name": "New Chat"}}, {"chat": {"name": "Trip plans"}}]});
        migrate_v1(&mut v);
        assert_eq!(v["formatVersion"], 2);
        migrate_v2(&mut v);
        assert_eq!(v["formatVersion"], 3);
        assert_eq!(v["chats"][0]["chat"]["titleSource"], "default");
        assert_eq!(v["chats"][1]["chat"]["titleSource"], "auto");
    }

    /// The paths of the structural errors: bare at the top of the document, dotted below it.
    #[test]
    fn structural_errors_name_their_path() {
        let doc = |extra: Value| {
            let mut d = crate::core::json::json!({"formatVersion": 3,
                "world": crate::core::json::to_value(&tpl::world("w")),
                "agents": [], "chats": []});
            if let (Some(d), Value::Object(e)) = (d.as_object_mut(), extra) {
                d.extend(e);
            }
            d.to_string()
        };
        let path = |json: String| match parse_document(&json) {
            Err(WorldError::ImportInvalid { path, .. }) => path,
            other => format!("not refused: {:?}", other.is_ok()),
        };
        assert!(parse_document(&doc(crate::core::json::json!({}))).is_ok());
        assert_eq!(path(doc(crate::core::json::json!({"extra": 1}))), "extra");
        assert_eq!(
            path(doc(crate::core::json::json!({"agents": {}}))),
            "agents"
        );
        let chat = crate::core::json::to_value(&tpl::chat("w", "c"));
        let cases = [
            (
                crate::core::json::json!({"chats": [{"chat": chat, "bogus": 1}]}),
                "chats[0].bogus",
            ),
            // An empty field name is still a field below the object.
            (
                crate::core::json::json!({"chats": [{"chat": chat, "": 1}]}),
                "chats[0].",
            ),
            (crate::core::json::json!({"chats": [7]}), "chats[0]"),
            (
                crate::core::json::json!({"chats": [{"chat": chat}]}),
                "chats[0].messages",
            ),
            (
                crate::core::json::json!({"chats": [{"chat": chat, "messages": [], "agentStates": [],
                    "memories": [{"agentId": "a"}]}]}),
                "chats[0].memories[0].agentId",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(path(doc(extra)), want);
        }
    }

    /// The import's one batch, in the order the stores receive it: the world, the agents, then
    /// per chat its metadata (with the recomputed count), messages (with their chat id), memory
    /// entries and counters; every op names the world's final id (a copy's new one).
    #[test]
    fn the_import_batch_keeps_its_order_and_names_the_final_world() {
        let part = |op| match op {
            StoreOp::AppendMessage { message, .. } => (Some(message), None),
            StoreOp::AppendMemory { entry, .. } => (None, Some(entry)),
            _ => (None, None),
        };
        let (Some(mut m1), _) = part(tpl::append("w", "c", "m1")) else {
            unreachable!("append builds a message")
        };
        m1.chat_id = None;
        let (Some(m2), _) = part(tpl::append("w", "c", "m2")) else {
            unreachable!("append builds a message")
        };
        let (_, Some(entry)) = part(tpl::remember("w", "c", "a", "m1")) else {
            unreachable!("remember builds an entry")
        };
        let mut chat = tpl::chat("w", "c");
        chat.message_count = 9;
        let doc = ExportDoc {
            format_version: FORMAT_VERSION,
            world: tpl::world("w"),
            agents: vec![tpl::agent("a"), tpl::agent("b")],
            chats: vec![ExportChat {
                chat,
                messages: vec![m1, m2],
                agent_states: vec![AgentChatState {
                    agent_id: "b".into(),
                    llm_call_count: 1,
                    last_llm_call: None,
                }],
                memories: vec![ExportMemory {
                    agent_id: "a".into(),
                    entries: vec![entry],
                }],
            }],
        };
        for copy in [None, Some("Copy")] {
            let mut parsed = parse_document(&doc.to_json()).unwrap_or_else(|e| panic!("{e}"));
            if let Some(name) = copy {
                renamed(&mut parsed, name.into()).unwrap_or_else(|e| panic!("{e}"));
            }
            let want_id = copy.map_or("w", |_| "copy");
            let (id, ops) = import_ops(parsed);
            assert_eq!(id, want_id);
            let kinds: Vec<String> = ops
                .iter()
                .map(|op| match op {
                    StoreOp::PutWorld(w) => format!("world {}", w.id),
                    StoreOp::PutAgent { agent, .. } => format!("agent {}", agent.id),
                    StoreOp::PutChat(c) => format!("chat {} {}", c.id, c.message_count),
                    StoreOp::AppendMessage { message, .. } => {
                        format!("message {} in {:?}", message.message_id, message.chat_id)
                    }
                    StoreOp::AppendMemory {
                        agent_id, entry, ..
                    } => format!("memory {agent_id} {}", entry.message_id),
                    StoreOp::PutAgentState { state, .. } => format!("state {}", state.agent_id),
                    _ => "other".into(),
                })
                .collect();
            assert_eq!(
                kinds,
                [
                    &format!("world {want_id}"),
                    "agent a",
                    "agent b",
                    "chat c 2",
                    "message m1 in Some(\"c\")",
                    "message m2 in Some(\"c\")",
                    "memory a m1",
                    "state b",
                ]
            );
            assert!(ops.iter().all(|op| op.world_id() == want_id));
        }
    }

    /// The export document's hand-written writer gives the derived form's bytes (field names,
    /// order, the states' skipped `lastLLMCall`), with and without chats.
    #[test]
    fn export_document_is_written_as_the_derived_form() {
        use crate::core::store::StoreOp;
        let (message, entry) = match (
            tpl::append("w", "c", "m1"),
            tpl::remember("w", "c", "a", "e1"),
        ) {
            (StoreOp::AppendMessage { message, .. }, StoreOp::AppendMemory { entry, .. }) => {
                (message, entry)
            }
            _ => unreachable!("append and remember build these ops"),
        };
        let states = vec![
            AgentChatState {
                agent_id: "a".into(),
                llm_call_count: 2,
                last_llm_call: None,
            },
            AgentChatState {
                agent_id: "b\"q".into(),
                llm_call_count: 0,
                last_llm_call: Some(crate::core::model::Timestamp(1_764_000_000_123)),
            },
        ];
        let full = ExportDoc {
            format_version: FORMAT_VERSION,
            world: tpl::world("w"),
            agents: vec![tpl::agent("a"), tpl::agent("b")],
            chats: vec![ExportChat {
                chat: tpl::chat("w", "c"),
                messages: vec![message],
                agent_states: states,
                memories: vec![ExportMemory {
                    agent_id: "a".into(),
                    entries: vec![entry],
                }],
            }],
        };
        let empty = ExportDoc {
            format_version: FORMAT_VERSION,
            world: tpl::world("w"),
            agents: vec![],
            chats: vec![],
        };
        for doc in [full, empty] {
            let want = serde_json::to_string(&doc).unwrap_or_default();
            assert!(want.starts_with("{\"formatVersion\":3,"));
            assert_eq!(doc.to_json(), want);
        }
    }
}
