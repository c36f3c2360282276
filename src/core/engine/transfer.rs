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

use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::engine::{Services, World};
use crate::core::error::WorldError;
use crate::core::ids::agent_id;
use crate::core::model::{
    validate_agent_tools, Agent, Chat, MemoryEntry, MemoryRole, Message, MessageKind, Timestamp,
    WorldData, DEFAULT_TURN_LIMIT, MAX_HISTORY_LIMIT, MAX_MAX_STEPS, MAX_NAME_CHARS, NEW_CHAT_NAME,
};
use crate::core::store::{AgentChatState, StoreOp};
use crate::core::store_contract as tpl;

/// The export format this engine writes.
pub const FORMAT_VERSION: u64 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExportMemory {
    agent_id: String,
    entries: Vec<MemoryEntry>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportChat {
    chat: Chat,
    messages: Vec<Message>,
    agent_states: Vec<AgentChatState>,
    memories: Vec<ExportMemory>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportDoc {
    format_version: u64,
    world: WorldData,
    agents: Vec<Agent>,
    chats: Vec<ExportChat>,
}

fn invalid(path: &str, problem: impl Into<String>) -> WorldError {
    WorldError::ImportInvalid {
        path: path.to_string(),
        problem: problem.into(),
    }
}

/// Deserialises `v` as `T`; on failure finds the offending field: serde names missing and
/// unknown fields, otherwise each field is swapped for the template's (or removed) until the
/// value parses.
fn parse_at<T: DeserializeOwned + Serialize>(
    v: &Value,
    path: &str,
    template: &T,
) -> Result<T, WorldError> {
    let err = match serde_json::from_value::<T>(v.clone()) {
        Ok(t) => return Ok(t),
        Err(e) => e.to_string(),
    };
    for marker in ["unknown field `", "missing field `"] {
        if let Some(name) = err.split(marker).nth(1).and_then(|r| r.split('`').next()) {
            return Err(invalid(&format!("{path}.{name}"), err.clone()));
        }
    }
    let Value::Object(obj) = v else {
        return Err(invalid(path, err));
    };
    let good = match serde_json::to_value(template) {
        Ok(Value::Object(g)) => g,
        _ => Map::new(),
    };
    let parses =
        |probe: Map<String, Value>| serde_json::from_value::<T>(Value::Object(probe)).is_ok();
    for k in obj.keys() {
        let mut probe = obj.clone();
        match good.get(k) {
            Some(gv) => {
                probe.insert(k.clone(), gv.clone());
            }
            None => {
                probe.remove(k);
            }
        }
        if parses(probe) {
            return Err(invalid(&format!("{path}.{k}"), err));
        }
    }
    Err(invalid(path, err))
}

fn array_at<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'v [Value], WorldError> {
    match obj.get(key) {
        Some(Value::Array(a)) => Ok(a.as_slice()),
        Some(_) => Err(invalid(&format!("{path}{key}"), "must be an array")),
        None => Err(invalid(&format!("{path}{key}"), "is missing")),
    }
}

fn check_keys(obj: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), WorldError> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(invalid(&format!("{path}{k}"), "unknown field")),
        None => Ok(()),
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

fn template_message() -> Message {
    Message {
        message_id: "m".into(),
        chat_id: None,
        sender: "HUMAN".into(),
        content: "x".into(),
        created_at: Timestamp(0),
        reply_to_message_id: None,
        kind: MessageKind::Message,
        tool_calls: Vec::new(),
    }
}

fn template_memory() -> MemoryEntry {
    MemoryEntry {
        role: MemoryRole::User,
        content: "x".into(),
        sender: None,
        message_id: "m".into(),
        chat_id: None,
        created_at: Timestamp(0),
        tool_calls: Vec::new(),
        tool_call_id: None,
        tool_name: None,
    }
}

/// The tool settings of an imported agent (version 3): the rules of `addAgent`.
fn check_agent_tools(a: &Agent, p: &str) -> Result<(), WorldError> {
    if !(1..=MAX_MAX_STEPS).contains(&a.max_steps) {
        return Err(invalid(
            &format!("{p}.maxSteps"),
            format!("must be an integer from 1 to {MAX_MAX_STEPS}"),
        ));
    }
    validate_agent_tools(a.tools.clone())
        .map_err(|e| invalid(&format!("{p}.tools"), e.to_string()))?;
    if a.reasoning.is_some_and(|r| r.budget_tokens == Some(0)) {
        return Err(invalid(
            &format!("{p}.reasoning.budgetTokens"),
            "must be at least 1",
        ));
    }
    Ok(())
}

/// A memory entry's tool fields fit its role: `toolCallId` and `toolName` exactly on `tool`
/// entries, `toolCalls` only on `assistant` entries.
fn check_memory_entry(e: &MemoryEntry, p: &str) -> Result<(), WorldError> {
    let is_tool = e.role == MemoryRole::Tool;
    if is_tool && e.tool_call_id.is_none() {
        return Err(invalid(
            &format!("{p}.toolCallId"),
            "is missing on a tool entry",
        ));
    }
    if is_tool && e.tool_name.is_none() {
        return Err(invalid(
            &format!("{p}.toolName"),
            "is missing on a tool entry",
        ));
    }
    if !is_tool && e.tool_call_id.is_some() {
        return Err(invalid(
            &format!("{p}.toolCallId"),
            "is only allowed on tool entries",
        ));
    }
    if !is_tool && e.tool_name.is_some() {
        return Err(invalid(
            &format!("{p}.toolName"),
            "is only allowed on tool entries",
        ));
    }
    if e.role != MemoryRole::Assistant && !e.tool_calls.is_empty() {
        return Err(invalid(
            &format!("{p}.toolCalls"),
            "is only allowed on assistant entries",
        ));
    }
    Ok(())
}

/// A parsed and validated document, ready to be written.
struct Parsed {
    world: WorldData,
    agents: Vec<Agent>,
    chats: Vec<ExportChat>,
}

fn parse_document(json: &str) -> Result<Parsed, WorldError> {
    let mut doc: Value =
        serde_json::from_str(json).map_err(|e| invalid("$", format!("not JSON: {e}")))?;
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
    let Value::Object(top) = &doc else {
        return Err(invalid("$", "must be an object"));
    };
    check_keys(top, &["formatVersion", "world", "agents", "chats"], "")?;
    let world_v = top
        .get("world")
        .ok_or_else(|| invalid("world", "is missing"))?;
    let mut world: WorldData = parse_at(world_v, "world", &tpl::world("w"))?;
    if world.id.trim().is_empty() {
        return Err(invalid("world.id", "is empty"));
    }
    if world.turn_limit == 0 {
        world.turn_limit = DEFAULT_TURN_LIMIT;
    }
    if !(1..=MAX_HISTORY_LIMIT).contains(&world.history_limit) {
        return Err(invalid(
            "world.historyLimit",
            "must be an integer from 1 to 1000",
        ));
    }
    if world.name.trim().is_empty() || world.name.chars().count() > MAX_NAME_CHARS {
        return Err(invalid("world.name", "must be 1 to 100 characters"));
    }

    let mut agents = Vec::new();
    let mut agent_ids = BTreeSet::new();
    for (i, v) in array_at(top, "agents", "")?.iter().enumerate() {
        let p = format!("agents[{i}]");
        let a: Agent = parse_at(v, &p, &tpl::agent("a"))?;
        if let Err(e) = agent_id(&a.id) {
            return Err(invalid(&format!("{p}.id"), e.to_string()));
        }
        if !agent_ids.insert(a.id.clone()) {
            return Err(invalid(
                &format!("{p}.id"),
                format!("duplicate agent id {:?}", a.id),
            ));
        }
        if a.history_limit
            .is_some_and(|h| !(1..=MAX_HISTORY_LIMIT).contains(&h))
        {
            return Err(invalid(
                &format!("{p}.historyLimit"),
                "must be an integer from 1 to 1000",
            ));
        }
        if a.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return Err(invalid(
                &format!("{p}.temperature"),
                "must be a number from 0 to 2",
            ));
        }
        if a.max_tokens == Some(0) {
            return Err(invalid(&format!("{p}.maxTokens"), "must be at least 1"));
        }
        check_agent_tools(&a, &p)?;
        agents.push(a);
    }

    let mut chats = Vec::new();
    let mut chat_ids = BTreeSet::new();
    for (i, v) in array_at(top, "chats", "")?.iter().enumerate() {
        let p = format!("chats[{i}]");
        let Value::Object(obj) = v else {
            return Err(invalid(&p, "must be an object"));
        };
        check_keys(
            obj,
            &["chat", "messages", "agentStates", "memories"],
            &format!("{p}."),
        )?;
        let chat_v = obj
            .get("chat")
            .ok_or_else(|| invalid(&format!("{p}.chat"), "is missing"))?;
        let mut chat: Chat = parse_at(chat_v, &format!("{p}.chat"), &tpl::chat("w", "c"))?;
        if chat.world_id != world.id {
            return Err(invalid(
                &format!("{p}.chat.worldId"),
                format!("{:?} is not the world's id {:?}", chat.world_id, world.id),
            ));
        }
        if !chat_ids.insert(chat.id.clone()) {
            return Err(invalid(
                &format!("{p}.chat.id"),
                format!("duplicate chat id {:?}", chat.id),
            ));
        }
        let mut messages = Vec::new();
        let mut message_ids = BTreeSet::new();
        for (j, mv) in array_at(obj, "messages", &format!("{p}."))?
            .iter()
            .enumerate()
        {
            let mp = format!("{p}.messages[{j}]");
            let m: Message = parse_at(mv, &mp, &template_message())?;
            if m.chat_id.as_deref().is_some_and(|c| c != chat.id) {
                return Err(invalid(
                    &format!("{mp}.chatId"),
                    "is not the id of its chat",
                ));
            }
            if !message_ids.insert(m.message_id.clone()) {
                return Err(invalid(&format!("{mp}.messageId"), "duplicate message id"));
            }
            messages.push(m);
        }
        chat.message_count = messages.len() as u64;
        let mut agent_states = Vec::new();
        for (j, sv) in array_at(obj, "agentStates", &format!("{p}."))?
            .iter()
            .enumerate()
        {
            let sp = format!("{p}.agentStates[{j}]");
            let s: AgentChatState = parse_at(sv, &sp, &AgentChatState::default())?;
            if !agent_ids.contains(&s.agent_id) {
                return Err(invalid(
                    &format!("{sp}.agentId"),
                    format!("unknown agent {:?}", s.agent_id),
                ));
            }
            agent_states.push(s);
        }
        let mut memories = Vec::new();
        for (j, gv) in array_at(obj, "memories", &format!("{p}."))?
            .iter()
            .enumerate()
        {
            let gp = format!("{p}.memories[{j}]");
            let Value::Object(g) = gv else {
                return Err(invalid(&gp, "must be an object"));
            };
            check_keys(g, &["agentId", "entries"], &format!("{gp}."))?;
            let agent = g
                .get("agentId")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid(&format!("{gp}.agentId"), "must be a string"))?;
            if !agent_ids.contains(agent) {
                return Err(invalid(
                    &format!("{gp}.agentId"),
                    format!("unknown agent {agent:?}"),
                ));
            }
            let mut entries = Vec::new();
            for (k, ev) in array_at(g, "entries", &format!("{gp}."))?
                .iter()
                .enumerate()
            {
                let ep = format!("{gp}.entries[{k}]");
                let e: MemoryEntry = parse_at(ev, &ep, &template_memory())?;
                check_memory_entry(&e, &ep)?;
                entries.push(e);
            }
            memories.push(ExportMemory {
                agent_id: agent.to_string(),
                entries,
            });
        }
        chats.push(ExportChat {
            chat,
            messages,
            agent_states,
            memories,
        });
    }
    if let Some(cid) = &world.current_chat_id {
        if !chat_ids.contains(cid) {
            return Err(invalid(
                "world.currentChatId",
                format!("no chat with id {cid:?}"),
            ));
        }
    }
    Ok(Parsed {
        world,
        agents,
        chats,
    })
}

impl World {
    /// The world as a version-3 export document (settings, agents, chats, messages, memories and
    /// per-chat counters). Never contains API keys.
    pub async fn export(&self) -> Result<String, WorldError> {
        let world_id = self.id();
        let dump = self
            .inner
            .store
            .dump(&world_id)
            .await
            .map_err(|e| self.report_storage(e.into(), None))?;
        let world = self.info();
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
        chats.sort_by(|a, b| (a.chat.created_at, &a.chat.id).cmp(&(b.chat.created_at, &b.chat.id)));
        let doc = ExportDoc {
            format_version: FORMAT_VERSION,
            world,
            agents: self.agents(),
            chats,
        };
        serde_json::to_string_pretty(&doc)
            .map_err(|e| WorldError::input("export", format!("could not serialise: {e}")))
    }

    /// Imports an export document (any supported version) as a new world and opens it. The
    /// document is validated completely before one batch writes it; a world with the same id
    /// must not exist (`world_exists`).
    pub async fn import(svc: Services, json: &str) -> Result<World, WorldError> {
        let parsed = parse_document(json)?;
        let id = parsed.world.id.clone();
        // Under the world's lock, so two tabs importing the same world cannot both succeed.
        let guard = svc.store.lock_world(&id).await?;
        if svc.store.load_world(&id).await?.is_some() {
            return Err(WorldError::WorldExists(id));
        }
        let mut ops = vec![StoreOp::PutWorld(parsed.world.clone())];
        for a in parsed.agents {
            ops.push(StoreOp::PutAgent {
                world_id: id.clone(),
                agent: a,
            });
        }
        for c in parsed.chats {
            let chat_id = c.chat.id.clone();
            ops.push(StoreOp::PutChat(c.chat));
            for mut m in c.messages {
                m.chat_id = Some(chat_id.clone());
                ops.push(StoreOp::AppendMessage {
                    world_id: id.clone(),
                    chat_id: chat_id.clone(),
                    message: m,
                });
            }
            for g in c.memories {
                for e in g.entries {
                    ops.push(StoreOp::AppendMemory {
                        world_id: id.clone(),
                        chat_id: chat_id.clone(),
                        agent_id: g.agent_id.clone(),
                        entry: e,
                    });
                }
            }
            for s in c.agent_states {
                ops.push(StoreOp::PutAgentState {
                    world_id: id.clone(),
                    chat_id: chat_id.clone(),
                    state: s,
                });
            }
        }
        svc.store.apply(ops).await?;
        drop(guard);
        World::open(svc, &id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_source_is_derived_in_v1() {
        let mut v: Value = serde_json::json!({"formatVersion": 1, "chats": [
            {"chat": {"name": "New Chat"}}, {"chat": {"name": "Trip plans"}}]});
        migrate_v1(&mut v);
        assert_eq!(v["formatVersion"], 2);
        migrate_v2(&mut v);
        assert_eq!(v["formatVersion"], 3);
        assert_eq!(v["chats"][0]["chat"]["titleSource"], "default");
        assert_eq!(v["chats"][1]["chat"]["titleSource"], "auto");
    }
}
