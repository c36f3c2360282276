//! Spec §9 (tools and steps) through the engine: agent tool settings, the step loop with
//! scripted LLM steps and a scripted tool executor, memory and the history window, the
//! published `toolCalls`, events, cancellation, export/import.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::error::WorldError;
use agent_world_wasm::core::model::{
    AgentPatch, NewAgent, Reasoning, ReasoningEffort, DEFAULT_MAX_STEPS,
};
use engine_harness::*;
use futures_executor::block_on;
use serde_json::{json, Value};

fn invalid_field(e: WorldError) -> String {
    match e {
        WorldError::InvalidInput { field, .. } => field,
        other => panic!("expected invalid_input, got {other:?}"),
    }
}

fn agent_with(name: &str, f: impl FnOnce(&mut NewAgent)) -> NewAgent {
    let mut a = NewAgent {
        name: name.into(),
        provider: "openai".into(),
        model: name.into(),
        ..Default::default()
    };
    f(&mut a);
    a
}

// ---- agent settings: tools, maxSteps, reasoning ----

#[test]
fn agents_get_tools_max_steps_and_reasoning_with_defaults_and_they_persist() {
    let h = harness();
    let plain = h.add("plain");
    assert_eq!(plain.max_steps, DEFAULT_MAX_STEPS);
    assert!(plain.tools.is_empty() && plain.reasoning.is_none());
    let a = h.add_with(agent_with("alice", |a| {
        a.tools = Some(vec!["get_weather".into(), "calc".into()]);
        a.max_steps = Some(3.0);
        a.reasoning = Some(Reasoning {
            effort: Some(ReasoningEffort::Low),
            budget_tokens: Some(1024),
        });
    }));
    assert_eq!(a.tools, vec!["get_weather", "calc"]);
    assert_eq!(a.max_steps, 3);
    let w2 = h.reopen();
    assert_eq!(w2.agent("alice").unwrap(), a, "persisted");
    let v = serde_json::to_value(&a).unwrap();
    assert_eq!(v["tools"], json!(["get_weather", "calc"]));
    assert_eq!(v["maxSteps"], 3);
    assert_eq!(
        v["reasoning"],
        json!({"effort": "low", "budgetTokens": 1024})
    );
}

#[test]
fn bad_max_steps_tools_and_reasoning_are_invalid_input_naming_the_field() {
    let h = harness();
    for bad in [0.0, 51.0, 2.5, -3.0] {
        let e = block_on(
            h.world
                .add_agent(agent_with("a", |a| a.max_steps = Some(bad))),
        )
        .unwrap_err();
        assert_eq!(e.code(), "invalid_input");
        assert_eq!(invalid_field(e), "maxSteps", "{bad}");
    }
    let e = block_on(h.world.add_agent(agent_with("a", |a| {
        a.tools = Some(vec!["ok".into(), "not ok".into()])
    })))
    .unwrap_err();
    assert_eq!(invalid_field(e), "tools[1]");
    let e = block_on(h.world.add_agent(agent_with("a", |a| {
        a.reasoning = Some(Reasoning {
            effort: None,
            budget_tokens: Some(0),
        })
    })))
    .unwrap_err();
    assert_eq!(invalid_field(e), "reasoning.budgetTokens");
    assert!(h.world.agents().is_empty(), "nothing was added");
    // Unknown effort values never reach the engine: the input type refuses them.
    let r: Result<NewAgent, _> = serde_json::from_value(json!({"name": "a", "provider": "openai",
        "model": "m", "reasoning": {"effort": "extreme"}}));
    assert!(r.is_err());
}

#[test]
fn update_sets_and_clears_tool_settings() {
    let h = harness();
    h.add("alice");
    let a = block_on(h.world.update_agent(
        "alice",
        AgentPatch {
            tools: Some(Some(vec!["calc".into()])),
            max_steps: Some(Some(50.0)),
            reasoning: Some(Some(Reasoning {
                effort: Some(ReasoningEffort::High),
                budget_tokens: None,
            })),
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(
        (a.tools.clone(), a.max_steps),
        (vec!["calc".to_string()], 50)
    );
    assert_eq!(h.reopen().agent("alice").unwrap(), a);
    let e = block_on(h.world.update_agent(
        "alice",
        AgentPatch {
            max_steps: Some(Some(51.0)),
            ..Default::default()
        },
    ))
    .unwrap_err();
    assert_eq!(invalid_field(e), "maxSteps");
    // `null` clears: no tools, the default step count, no reasoning.
    let patch: AgentPatch =
        serde_json::from_value(json!({"tools": null, "maxSteps": null, "reasoning": null}))
            .unwrap();
    let a = block_on(h.world.update_agent("alice", patch)).unwrap();
    assert!(a.tools.is_empty() && a.reasoning.is_none());
    assert_eq!(a.max_steps, DEFAULT_MAX_STEPS);
}

// ---- export / import of the tool settings (format version 3) ----

fn export_value(h: &H) -> Value {
    serde_json::from_str(&block_on(h.world.export()).unwrap()).unwrap()
}

fn import_into_fresh(doc: &Value) -> Result<World, WorldError> {
    let h2 = harness();
    block_on(World::delete(&*h2.store, "test-world")).unwrap();
    block_on(World::import(h2.svc(), &doc.to_string()))
}

#[test]
fn export_is_format_3_and_keeps_tool_settings() {
    let h = harness();
    h.add_with(agent_with("alice", |a| {
        a.tools = Some(vec!["calc".into()]);
        a.max_steps = Some(7.0);
        a.reasoning = Some(Reasoning {
            effort: Some(ReasoningEffort::Medium),
            budget_tokens: None,
        });
    }));
    let v = export_value(&h);
    assert_eq!(v["formatVersion"], 3);
    assert_eq!(v["agents"][0]["maxSteps"], 7);
    let w2 = import_into_fresh(&v).unwrap();
    assert_eq!(w2.agents(), h.world.agents());
}

#[test]
fn a_version_2_document_imports_with_the_tool_defaults() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.send("hello");
    let mut v = export_value(&h);
    v["formatVersion"] = json!(2);
    // A version 2 document has none of the version 3 fields.
    v["agents"][0].as_object_mut().unwrap().remove("maxSteps");
    let w2 = import_into_fresh(&v).unwrap();
    let a = w2.agent("alice").unwrap();
    assert_eq!((a.max_steps, a.tools.len()), (DEFAULT_MAX_STEPS, 0));
    assert_eq!(w2.agent_memory("alice"), h.world.agent_memory("alice"));
}

#[test]
fn imported_tool_settings_and_tool_memory_are_validated_with_their_path() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.send("hello");
    let base = export_value(&h);
    let path_of = |mutate: &dyn Fn(&mut Value)| {
        let mut v = base.clone();
        mutate(&mut v);
        match import_into_fresh(&v).err() {
            Some(WorldError::ImportInvalid { path, .. }) => path,
            other => panic!("expected import_invalid, got {other:?}"),
        }
    };
    assert_eq!(
        path_of(&|v| v["agents"][0]["maxSteps"] = json!(0)),
        "agents[0].maxSteps"
    );
    assert_eq!(
        path_of(&|v| v["agents"][0]["tools"] = json!(["a b"])),
        "agents[0].tools"
    );
    assert_eq!(
        path_of(
            &|v| v["chats"][0]["memories"][0]["entries"][1] = json!({"role": "tool", "content": "{}", "messageId": "x",
                   "createdAt": "2026-01-01T00:00:00.000Z", "toolName": "calc"})
        ),
        "chats[0].memories[0].entries[1].toolCallId"
    );
    assert_eq!(
        path_of(&|v| v["chats"][0]["memories"][0]["entries"][0]["toolCallId"] = json!("c1")),
        "chats[0].memories[0].entries[0].toolCallId"
    );
}
