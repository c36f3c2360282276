//! Agents and world settings: adding, changing and removing agents, changing the world's
//! settings. Ids never change; every change is one store batch under the write lock, then RAM,
//! then the `world` lifecycle event.

use crate::core::engine::shared::{committed, Planned};
use std::cell::Cell;

use crate::core::engine::{keep_last, load_chat_state, without_windows, AgentRt, World};
use crate::core::error::WorldError;
use crate::core::events::{Event, WorldEvent};
use crate::core::ids::{agent_id, world_id};
use crate::core::model::{
    validate_agent_tools, validate_chat_llm_provider, validate_history_limit, validate_max_steps,
    validate_max_tokens, validate_name, validate_provider, validate_reasoning, validate_required,
    validate_temperature, validate_text, validate_turn_limit, Agent, AgentPatch, NewAgent,
    Timestamp, WorldData, WorldPatch, DEFAULT_MAX_STEPS,
};
use crate::core::store::StoreOp;

impl World {
    /// Adds an agent (id = kebab(name), reserved names refused).
    pub async fn add_agent(&self, input: NewAgent) -> Result<Agent, WorldError> {
        let agent = new_agent(input)?;
        let out = &Cell::new(None);
        self.change(&mut |w| {
            let now = w.now();
            let mut agent = agent.clone();
            (agent.created_at, agent.last_active) = (now, now);
            let st = w.st();
            if st.agent_index(&agent.id).is_some() {
                return Err(WorldError::AgentExists(agent.id));
            }
            let ops = vec![StoreOp::PutAgent {
                world_id: st.world.id.clone(),
                agent: agent.clone(),
            }];
            Ok(Some(Planned::new(ops, |w| {
                w.st_mut().agents.push(AgentRt {
                    agent: agent.clone(),
                    memory: Vec::new(),
                });
                out.set(Some(agent.clone()));
                vec![Event::World(WorldEvent::AgentAdded { agent })]
            })))
        })
        .await?;
        committed(out)
    }

    /// Changes an agent's settings (the id never changes).
    pub async fn update_agent(&self, id: &str, patch: AgentPatch) -> Result<Agent, WorldError> {
        let out = &Cell::new(None);
        self.change(&mut |w| {
            let Some(agent) = w.agent(id) else {
                return Err(WorldError::AgentNotFound(id.to_string()));
            };
            let agent = patched_agent(agent, &patch)?;
            let ops = vec![StoreOp::PutAgent {
                world_id: w.st().world.id.clone(),
                agent: agent.clone(),
            }];
            let planned = Planned::new(ops, |w| {
                if let Some(a) = w.st_mut().agents.iter_mut().find(|a| a.agent.id == id) {
                    a.agent = agent.clone();
                }
                out.set(Some(agent.clone()));
                vec![Event::World(WorldEvent::AgentUpdated { agent })]
            });
            Ok(Some(
                planned.reloading_windows(patch.history_limit.is_some()),
            ))
        })
        .await?;
        committed(out)
    }

    /// Removes an agent with its memories; its queued and running calls are cancelled.
    pub async fn remove_agent(&self, id: &str) -> Result<bool, WorldError> {
        self.change(&mut |w| {
            let world_id = {
                let st = w.st();
                if st.agent_index(id).is_none() {
                    return Ok(None);
                }
                st.world.id.clone()
            };
            // Frees space, so it works over quota (see `persist_freeing`).
            let deletes = vec![StoreOp::DeleteAgent {
                world_id,
                agent_id: id.to_string(),
            }];
            Ok(Some(Planned::freeing(deletes, Vec::new(), |w| {
                w.cancel_jobs(&|call| call.agent_id == Some(id));
                w.cancel_approvals(&|a| a.agent_id == id);
                {
                    let mut st = w.st_mut();
                    if let Some(i) = st.agent_index(id) {
                        st.agents.remove(i);
                    }
                    // Its running call's M (not written yet) goes with its memory.
                    st.unsaved.retain(|u| u.agent_id != id);
                }
                w.inner.runtime.borrow_mut().instructions.remove(id);
                vec![Event::World(WorldEvent::AgentRemoved {
                    agent_id: id.to_string(),
                })]
            })))
        })
        .await
    }

    /// Changes the world's settings (the id never changes).
    pub async fn update(&self, patch: WorldPatch) -> Result<WorldData, WorldError> {
        let out = &Cell::new(None);
        self.change(&mut |w| {
            let mut data = patched_world(w.info(), &patch)?;
            data.last_updated = w.now();
            let mut stored = data.clone();
            stored.current_chat_id = w.st().stored_world().current_chat_id;
            let planned = Planned::new(vec![StoreOp::PutWorld(stored)], |w| {
                w.st_mut().world = data.clone();
                out.set(Some(data.clone()));
                vec![Event::World(WorldEvent::WorldUpdated { world: data })]
            });
            Ok(Some(
                planned.reloading_windows(patch.history_limit.is_some()),
            ))
        })
        .await?;
        committed(out)
    }

    /// After a history limit change or an edit (§10): in session mode re-read each window from
    /// the store (it may have grown, or lost entries); otherwise trim the RAM windows. Caller
    /// holds the write lock.
    pub(crate) async fn reload_windows(&self) -> Result<(), WorldError> {
        let (world, cid, mut agents) = {
            let st = self.st();
            (
                st.world.clone(),
                st.world.current_chat_id.clone(),
                without_windows(&st.agents),
            )
        };
        match cid {
            Some(cid) => {
                load_chat_state(&*self.inner.store, &world, &cid, &mut agents).await?;
                let mut st = self.st_mut();
                for src in agents {
                    if let Some(a) = st.agents.iter_mut().find(|a| a.agent.id == src.agent.id) {
                        a.memory = src.memory;
                    }
                }
            }
            None => {
                let st = &mut *self.st_mut();
                let world_limit = st.world.history_limit;
                for a in &mut st.agents {
                    // `State::history_limit`, with the world's default read once.
                    let cap = a.agent.history_limit.unwrap_or(world_limit).max(1) as usize;
                    keep_last(&mut a.memory, cap);
                }
            }
        }
        Ok(())
    }
}

// The validation of the changes above, plain code out of their async bodies: each `?` inside an
// async fn is an exit of its state machine that drops every live local (the lock guard, the
// rest of the input), and those exits, not the checks, made most of their size.

/// The agent `input` describes, validated (its times are set under the write lock): the
/// defaults patched with every field given, so `addAgent` and `updateAgent` check a field by
/// the same code, in the same order (one validator body in the wasm, not two).
#[inline(never)]
fn new_agent(input: NewAgent) -> Result<Agent, WorldError> {
    let defaults = Agent {
        id: agent_id(&input.name)?,
        name: String::new(),
        // Not `validate_required`: a blank type means the default, and a given one is kept as
        // written.
        agent_type: input
            .agent_type
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| "default".to_string()),
        provider: String::new(),
        model: String::new(),
        system_prompt: None,
        temperature: None,
        max_tokens: None,
        history_limit: None,
        stream: true,
        tools: Vec::new(),
        max_steps: DEFAULT_MAX_STEPS,
        reasoning: None,
        llm_call_count: 0,
        last_llm_call: None,
        created_at: Timestamp::default(),
        last_active: Timestamp::default(),
        status: "active".to_string(),
    };
    let given = AgentPatch {
        name: Some(input.name),
        agent_type: None,
        provider: Some(input.provider),
        model: Some(input.model),
        system_prompt: Some(input.system_prompt),
        temperature: Some(input.temperature),
        max_tokens: Some(input.max_tokens),
        history_limit: Some(input.history_limit),
        stream: input.stream,
        status: None,
        tools: Some(input.tools),
        max_steps: Some(input.max_steps),
        reasoning: Some(input.reasoning),
    };
    patched_agent(defaults, &given)
}

/// `agent` with `patch` applied, validated.
#[inline(never)]
fn patched_agent(mut agent: Agent, patch: &AgentPatch) -> Result<Agent, WorldError> {
    if let Some(n) = &patch.name {
        agent_id(n)?;
        agent.name = validate_name("name", n)?;
    }
    if let Some(t) = &patch.agent_type {
        agent.agent_type = validate_required("type", t)?;
    }
    if let Some(p) = &patch.provider {
        agent.provider = validate_provider("provider", p)?;
    }
    if let Some(m) = &patch.model {
        agent.model = validate_required("model", m)?;
    }
    if let Some(s) = &patch.system_prompt {
        agent.system_prompt = validate_text("systemPrompt", s.clone())?;
    }
    if let Some(t) = &patch.temperature {
        agent.temperature = t.map(validate_temperature).transpose()?;
    }
    if let Some(m) = &patch.max_tokens {
        agent.max_tokens = m.map(validate_max_tokens).transpose()?;
    }
    if let Some(h) = &patch.history_limit {
        agent.history_limit = h
            .map(|h| validate_history_limit("historyLimit", h))
            .transpose()?;
    }
    if let Some(s) = &patch.stream {
        agent.stream = *s;
    }
    if let Some(s) = &patch.status {
        agent.status = validate_required("status", s)?;
    }
    if let Some(t) = &patch.tools {
        agent.tools = validate_agent_tools(t.clone().unwrap_or_default())?;
    }
    if let Some(m) = &patch.max_steps {
        agent.max_steps = m
            .map(validate_max_steps)
            .transpose()?
            .unwrap_or(DEFAULT_MAX_STEPS);
    }
    if let Some(r) = &patch.reasoning {
        agent.reasoning = r.map(validate_reasoning).transpose()?;
    }
    Ok(agent)
}

/// The world's settings `w` with `patch` applied, validated.
#[inline(never)]
fn patched_world(mut w: WorldData, patch: &WorldPatch) -> Result<WorldData, WorldError> {
    if let Some(n) = &patch.name {
        world_id(n)?;
        w.name = validate_name("name", n)?;
    }
    if let Some(d) = &patch.description {
        w.description = validate_text("description", d.clone())?;
    }
    if patch.turn_limit.is_some() {
        w.turn_limit = validate_turn_limit(patch.turn_limit)?;
    }
    if let Some(h) = &patch.history_limit {
        w.history_limit = validate_history_limit("historyLimit", *h)?;
    }
    if let Some(p) = &patch.chat_llm_provider {
        w.chat_llm_provider = validate_chat_llm_provider(p.clone())?;
    }
    if let Some(m) = &patch.chat_llm_model {
        w.chat_llm_model = m.clone().filter(|s| !s.trim().is_empty());
    }
    Ok(w)
}
