//! The runtime-only parts of agents (spec §9): the world's registered tools and the agents'
//! dynamic instructions. Functions cannot be stored, so neither is persisted: an application
//! registers them again after `open` (an agent that lists a tool nobody registered fails its
//! reply with `tool_not_registered`, before any request).

use crate::core::vec_map::VecMap;
use std::rc::Rc;

use crate::core::engine::World;
use crate::core::error::WorldError;
use crate::core::model::Message;
use crate::core::store::LocalBoxFuture;
use crate::core::tools::{ToolDefinition, ToolExecutor};

/// What a dynamic instructions function is told about the reply it writes the system prompt
/// for (`fn({agentName, chatId, message})`).
#[derive(Debug, Clone)]
pub struct InstructionsRequest {
    pub agent_name: String,
    /// `None` when session mode is off.
    pub chat_id: Option<String>,
    /// The message the agent answers (M).
    pub message: Message,
}

/// Gives an agent's system prompt per reply, in place of the stored `systemPrompt`
/// (`setInstructions(agentId, fn)`). `Err` is the message of a throwing function: the reply
/// then fails with `llm_error` naming the agent. A blank prompt means none.
pub trait InstructionsProvider {
    fn instructions(&self, req: InstructionsRequest) -> LocalBoxFuture<'_, Result<String, String>>;
}

/// A registered tool and the executor that runs it.
#[derive(Clone)]
pub(crate) struct RegisteredTool {
    pub(crate) def: ToolDefinition,
    pub(crate) executor: Rc<dyn ToolExecutor>,
}

/// The runtime-only registry of a world.
#[derive(Default)]
pub(crate) struct Runtime {
    /// In registration order (the order `tools()` lists them).
    pub(crate) tools: Vec<RegisteredTool>,
    pub(crate) instructions: VecMap<String, Rc<dyn InstructionsProvider>>,
}

impl Runtime {
    pub(crate) fn tool(&self, name: &str) -> Option<RegisteredTool> {
        self.tools.iter().find(|t| t.def.spec.name == name).cloned()
    }
}

impl World {
    /// Registers a tool (runtime only): its definition is checked (name rule, schema subset,
    /// `timeoutMs`) and its name must be new in the world (`invalid_input` naming `name`
    /// otherwise). `executor` runs it when an agent that lists it calls it.
    pub fn register_tool(
        &self,
        def: ToolDefinition,
        executor: Rc<dyn ToolExecutor>,
    ) -> Result<(), WorldError> {
        def.validate()?;
        let mut rt = self.inner.runtime.borrow_mut();
        if rt.tools.iter().any(|t| t.def.spec.name == def.spec.name) {
            return Err(WorldError::input(
                "name",
                format!(
                    "a tool named {:?} is already registered; unregister it first or choose another name",
                    def.spec.name
                ),
            ));
        }
        rt.tools.push(RegisteredTool { def, executor });
        Ok(())
    }

    /// Removes a tool; `false` when none had that name. Replies already running keep the tools
    /// they started with for the call in progress; a later call of the removed tool is
    /// answered `{"error": "tool … is not registered"}`.
    pub fn unregister_tool(&self, name: &str) -> bool {
        let mut rt = self.inner.runtime.borrow_mut();
        // Names are unique (`register_tool`): at most one goes.
        match rt.tools.iter().position(|t| t.def.spec.name == name) {
            Some(i) => {
                rt.tools.remove(i);
                true
            }
            None => false,
        }
    }

    /// The registered tools, in registration order.
    pub fn tools(&self) -> Vec<ToolDefinition> {
        let mut out = Vec::new();
        for t in &self.inner.runtime.borrow().tools {
            out.push(t.def.clone());
        }
        out
    }

    /// Sets (`Some`) or removes (`None`) an agent's dynamic instructions (runtime only);
    /// `agent_not_found` for an unknown agent. Removing the agent removes them too.
    pub fn set_instructions(
        &self,
        agent_id: &str,
        provider: Option<Rc<dyn InstructionsProvider>>,
    ) -> Result<(), WorldError> {
        if self.agent(agent_id).is_none() {
            return Err(WorldError::AgentNotFound(agent_id.to_string()));
        }
        let mut rt = self.inner.runtime.borrow_mut();
        match provider {
            Some(p) => {
                rt.instructions.insert(agent_id.to_string(), p);
            }
            None => {
                rt.instructions.remove(agent_id);
            }
        }
        Ok(())
    }

    pub(crate) fn instructions_of(&self, agent_id: &str) -> Option<Rc<dyn InstructionsProvider>> {
        self.inner
            .runtime
            .borrow()
            .instructions
            .get(agent_id)
            .cloned()
    }
}
