//! Shared harness of the engine scenario tests: a world on a MemoryStore with a ScriptedLlm, a
//! manual clock, sequential ids and every event recorded as JSON.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

use agent_world_wasm::core::clock::{ManualClock, SequentialIds};
use agent_world_wasm::core::engine::{Services, World};
use agent_world_wasm::core::events::{Event, Subscription, Topic};
use agent_world_wasm::core::memory_store::MemoryStore;
use agent_world_wasm::core::model::{Agent, CreateWorld, Message, NewAgent};
use agent_world_wasm::core::testing::ScriptedLlm;
use futures_executor::block_on;
use serde_json::Value;

pub const T0: i64 = 1_795_000_000_000;

pub struct H {
    pub world: World,
    pub llm: Rc<ScriptedLlm>,
    pub store: Rc<MemoryStore>,
    pub clock: Rc<ManualClock>,
    pub ids: Rc<SequentialIds>,
    pub events: Rc<RefCell<Vec<(Topic, Value)>>>,
    pub subs: Vec<Subscription>,
}

pub fn services(
    store: &Rc<MemoryStore>,
    llm: &Rc<ScriptedLlm>,
    clock: &Rc<ManualClock>,
    ids: &Rc<SequentialIds>,
) -> Services {
    Services {
        store: store.clone(),
        llm: llm.clone(),
        clock: clock.clone(),
        ids: ids.clone(),
    }
}

pub fn record(world: &World, events: &Rc<RefCell<Vec<(Topic, Value)>>>) -> Vec<Subscription> {
    [Topic::Message, Topic::Sse, Topic::System, Topic::World]
        .into_iter()
        .map(|t| {
            let ev = events.clone();
            world.on(
                t,
                Rc::new(move |e: &Event| {
                    ev.borrow_mut()
                        .push((e.topic(), serde_json::to_value(e).unwrap()));
                    Ok(())
                }),
            )
        })
        .collect()
}

pub fn harness() -> H {
    harness_with(CreateWorld {
        name: "Test World".into(),
        ..Default::default()
    })
}

pub fn harness_with(input: CreateWorld) -> H {
    let store = Rc::new(MemoryStore::new());
    let llm = Rc::new(ScriptedLlm::new());
    let clock = Rc::new(ManualClock::new(T0));
    let ids = Rc::new(SequentialIds::new("id"));
    let world = block_on(World::create(services(&store, &llm, &clock, &ids), input)).unwrap();
    let events = Rc::new(RefCell::new(Vec::new()));
    let subs = record(&world, &events);
    H {
        world,
        llm,
        store,
        clock,
        ids,
        events,
        subs,
    }
}

impl H {
    pub fn svc(&self) -> Services {
        services(&self.store, &self.llm, &self.clock, &self.ids)
    }

    /// Adds an agent whose model is its name (so scripts are per agent).
    pub fn add(&self, name: &str) -> Agent {
        self.add_with(NewAgent {
            name: name.into(),
            provider: "openai".into(),
            model: name.into(),
            ..Default::default()
        })
    }

    pub fn add_with(&self, a: NewAgent) -> Agent {
        block_on(self.world.add_agent(a)).unwrap()
    }

    /// Sends as the human and runs until idle.
    pub fn send(&self, content: &str) -> Message {
        self.send_as(content, None)
    }

    pub fn send_as(&self, content: &str, sender: Option<&str>) -> Message {
        self.clock.advance(1000);
        let m = block_on(self.world.send(content, sender)).unwrap();
        block_on(self.world.run_until_idle());
        m
    }

    /// Every message of the current chat, oldest first.
    pub fn transcript(&self) -> Vec<Message> {
        let chat = self.world.current_chat().unwrap();
        block_on(self.world.messages(&chat.id, None, 10_000)).unwrap()
    }

    /// `(sender, content)` of every `message` event.
    pub fn published(&self) -> Vec<(String, String)> {
        self.of(Topic::Message)
            .into_iter()
            .map(|v| {
                (
                    v["sender"].as_str().unwrap().to_string(),
                    v["content"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    pub fn of(&self, topic: Topic) -> Vec<Value> {
        self.events
            .borrow()
            .iter()
            .filter(|(t, _)| *t == topic)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// System events of one `type`.
    pub fn system(&self, kind: &str) -> Vec<Value> {
        self.of(Topic::System)
            .into_iter()
            .filter(|v| v["type"] == kind)
            .collect()
    }

    pub fn sse(&self, kind: &str) -> Vec<Value> {
        self.of(Topic::Sse)
            .into_iter()
            .filter(|v| v["type"] == kind)
            .collect()
    }

    pub fn clear_events(&self) {
        self.events.borrow_mut().clear();
    }

    pub fn count(&self, agent: &str) -> u32 {
        self.world.agent(agent).unwrap().llm_call_count
    }

    /// `(role, content)` of the agent's memory window.
    pub fn memory(&self, agent: &str) -> Vec<(String, String)> {
        self.world
            .agent_memory(agent)
            .unwrap()
            .into_iter()
            .map(|e| {
                (
                    serde_json::to_value(e.role)
                        .unwrap()
                        .as_str()
                        .unwrap()
                        .to_string(),
                    e.content,
                )
            })
            .collect()
    }

    /// Number of LLM calls made with `model`.
    pub fn calls(&self, model: &str) -> usize {
        self.llm.calls_to(model).len()
    }

    pub fn reopen(&self) -> World {
        block_on(World::open(self.svc(), &self.world.id())).unwrap()
    }
}
