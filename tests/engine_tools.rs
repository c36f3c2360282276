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

// ---- the registry ----

use std::rc::Rc;

use agent_world_wasm::core::engine::{InstructionsProvider, InstructionsRequest};
use agent_world_wasm::core::events::Topic;
use agent_world_wasm::core::llm::types::{ChatMessage, Role, ThinkingBlock};
use agent_world_wasm::core::model::MessageKind;
use agent_world_wasm::core::store::LocalBoxFuture;
use agent_world_wasm::core::testing::{ScriptedTools, Step, ToolReply};
use agent_world_wasm::core::tools::{NeedsApproval, ToolDefinition, ToolSpec};

/// serde_json's `json!`, as the crate's own JSON value (what tool arguments, results and
/// schemas are).
macro_rules! cjson {
    ($($t:tt)+) => {
        serde_json::from_value::<agent_world_wasm::core::json::Value>(serde_json::json!($($t)+))
            .unwrap()
    };
}

fn def(name: &str, parameters: Value) -> ToolDefinition {
    ToolDefinition {
        spec: ToolSpec {
            name: name.into(),
            description: format!("the {name} tool"),
            parameters: serde_json::from_value(parameters).unwrap(),
        },
        needs_approval: NeedsApproval::Never,
        timeout_ms: 30_000,
    }
}

fn weather_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// A world with the tools `get_weather`, `calc` and `slow` registered over one scripted
/// executor, and agent `alice` listing `tools`.
fn tool_world(tools: &[&str], f: impl FnOnce(&mut NewAgent)) -> (H, Rc<ScriptedTools>) {
    let h = harness();
    let exec = Rc::new(ScriptedTools::new());
    h.world
        .register_tool(def("get_weather", weather_schema()), exec.clone())
        .unwrap();
    h.world
        .register_tool(
            def(
                "calc",
                json!({"type": "object", "properties": {"expr": {"type": "string"}}}),
            ),
            exec.clone(),
        )
        .unwrap();
    let mut slow = def("slow", json!({"type": "object"}));
    slow.timeout_ms = 1_500;
    h.world.register_tool(slow, exec.clone()).unwrap();
    h.add_with(agent_with("alice", |a| {
        a.tools = Some(tools.iter().map(|t| t.to_string()).collect());
        f(a);
    }));
    (h, exec)
}

#[test]
fn tools_register_once_with_valid_definitions_and_unregister() {
    let (h, exec) = tool_world(&[], |_| {});
    let names: Vec<String> = h.world.tools().into_iter().map(|d| d.spec.name).collect();
    assert_eq!(
        names,
        vec!["get_weather", "calc", "slow"],
        "registration order"
    );
    let e = h
        .world
        .register_tool(def("calc", json!({"type": "object"})), exec.clone())
        .unwrap_err();
    assert_eq!(invalid_field(e), "name", "names are unique in the world");
    let e = h
        .world
        .register_tool(
            def(
                "x",
                json!({"type": "object", "properties": {"n": {"minimum": 0}}}),
            ),
            exec.clone(),
        )
        .unwrap_err();
    assert_eq!(invalid_field(e), "parameters.properties.n.minimum");
    let e = h
        .world
        .register_tool(def("bad name", json!({"type": "object"})), exec.clone())
        .unwrap_err();
    assert_eq!(invalid_field(e), "name");
    assert!(h.world.unregister_tool("calc"));
    assert!(!h.world.unregister_tool("calc"));
    assert_eq!(h.world.tools().len(), 2);
}

// ---- the step loop ----

fn tool_names(call: &agent_world_wasm::core::testing::RecordedCall) -> Vec<String> {
    call.settings.tools.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn a_tool_call_runs_and_the_next_step_answers_one_turn_one_message_id() {
    let (h, exec) = tool_world(&["get_weather"], |_| {});
    exec.reply(
        "get_weather",
        ToolReply::Value(cjson!({"sky": "sunny", "c": 21})),
    );
    h.llm.script(
        "alice",
        vec![
            Step::Text("Let me check.".into()),
            Step::call("call_1", "get_weather", r#"{"city":"Oslo"}"#),
        ],
    );
    h.llm.reply("alice", "It is sunny in Oslo.");
    let m = h.send("Weather in Oslo?");

    // Two steps, one turn.
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 2);
    assert_eq!(h.count("alice"), 1, "one reply is one turn");
    assert_eq!(tool_names(&calls[0]), vec!["get_weather"]);
    assert_eq!(
        tool_names(&calls[1]),
        vec!["get_weather"],
        "step 2 of 5 still offers them"
    );
    assert_eq!(
        calls[0].messages,
        vec![ChatMessage::new(Role::User, "Weather in Oslo?")]
    );
    // Step 2 sees the step-1 group appended: the calls, then the result.
    let second = &calls[1].messages;
    assert_eq!(second.len(), 3);
    assert_eq!(second[1].role, Role::Assistant);
    assert_eq!(second[1].content, "Let me check.");
    assert_eq!(second[1].tool_calls.len(), 1);
    assert_eq!(second[1].tool_calls[0].id, "call_1");
    assert_eq!(second[1].tool_calls[0].arguments, r#"{"city":"Oslo"}"#);
    let result = second[2].tool_result.clone().unwrap();
    assert_eq!(
        (result.tool_call_id.as_str(), result.tool_name.as_str()),
        ("call_1", "get_weather")
    );
    assert_eq!(
        serde_json::from_str::<Value>(&second[2].content).unwrap(),
        json!({"sky": "sunny", "c": 21})
    );

    // The tool got the parsed arguments and its context.
    let runs = exec.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].args, cjson!({"city": "Oslo"}));
    assert_eq!(runs[0].ctx.agent_name, "alice");
    assert_eq!(runs[0].ctx.tool_call_id, "call_1");

    // One published reply: the texts joined by a blank line, with its tool calls.
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    let reply = &t[1];
    assert_eq!(reply.content, "Let me check.\n\nIt is sunny in Oslo.");
    assert_eq!(
        reply.reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    assert_eq!(runs[0].ctx.message_id, reply.message_id);
    let v = serde_json::to_value(reply).unwrap();
    assert_eq!(
        v["toolCalls"],
        json!([{"toolCallId": "call_1", "toolName": "get_weather", "args": {"city": "Oslo"},
                "result": {"sky": "sunny", "c": 21}}])
    );

    // Every SSE event carries the reply's id; one start, one end; the chunks spell the content.
    let sse = h.of(Topic::Sse);
    assert!(sse
        .iter()
        .all(|e| e["messageId"] == reply.message_id.as_str()));
    let kinds: Vec<&str> = sse.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec!["start", "chunk", "tool-call", "tool-result", "chunk", "end"]
    );
    let streamed: String = h
        .sse("chunk")
        .iter()
        .map(|c| c["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(streamed, reply.content);
    let call_ev = &h.sse("tool-call")[0];
    assert_eq!(
        (
            call_ev["toolCallId"].clone(),
            call_ev["toolName"].clone(),
            call_ev["args"].clone()
        ),
        (
            json!("call_1"),
            json!("get_weather"),
            json!({"city": "Oslo"})
        )
    );
    assert_eq!(
        h.sse("tool-result")[0]["result"],
        json!({"sky": "sunny", "c": 21})
    );

    // step-finish per step, after the step's tools ran.
    let steps = h.system("step-finish");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["step"], 1);
    assert_eq!(steps[0]["finishReason"], "tool_calls");
    assert_eq!(steps[0]["toolCalls"][0]["result"]["sky"], "sunny");
    assert_eq!(steps[1]["step"], 2);
    assert_eq!(steps[1]["finishReason"], "stop");
    assert_eq!(steps[1]["toolCalls"], json!([]));
    assert_eq!(steps[0]["messageId"], reply.message_id.as_str());

    // Memory: M, the group (assistant with toolCalls, tool result), the final reply.
    let mem = h.world.agent_memory("alice").unwrap();
    let roles: Vec<Value> = mem
        .iter()
        .map(|e| serde_json::to_value(e.role).unwrap())
        .collect();
    assert_eq!(
        roles,
        vec![
            json!("user"),
            json!("assistant"),
            json!("tool"),
            json!("assistant")
        ]
    );
    assert_eq!(mem[1].tool_calls[0].tool_call_id, "call_1");
    assert_eq!(mem[2].tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(mem[2].tool_name.as_deref(), Some("get_weather"));
    assert_eq!(mem[3].content, reply.content);
    assert!(mem[1..].iter().all(|e| e.message_id == reply.message_id));

    // All of it persisted.
    let w2 = h.reopen();
    assert_eq!(w2.agent_memory("alice").unwrap(), mem);
    let chat = w2.current_chat().unwrap();
    assert_eq!(block_on(w2.messages(&chat.id, None, 10)).unwrap(), t);
}

/// With `reasoning` on, providers sign the thinking of a step and refuse the next step unless
/// it comes back with that step's calls: Anthropic's thinking blocks on the assistant entry,
/// Gemini's `thoughtSignature` on each call.
#[test]
fn a_steps_signed_thinking_goes_back_with_its_calls_in_the_next_step() {
    let (h, exec) = tool_world(&["get_weather", "calc"], |a| {
        a.reasoning = Some(Reasoning {
            effort: Some(ReasoningEffort::Low),
            budget_tokens: None,
        });
    });
    exec.reply("get_weather", ToolReply::Value(cjson!({"sky": "sunny"})));
    exec.reply("calc", ToolReply::Value(cjson!(2)));
    let thinking = ThinkingBlock::Thinking {
        thinking: "Weather first.".into(),
        signature: "sig-anthropic-1".into(),
    };
    let redacted = ThinkingBlock::Redacted {
        data: "sig-redacted-1".into(),
    };
    h.llm.script(
        "alice",
        vec![
            Step::Reasoning("Weather first.".into()),
            Step::Thinking(thinking.clone()),
            Step::Thinking(redacted.clone()),
            Step::signed_call("c1", "get_weather", r#"{"city":"Oslo"}"#, "sig-gemini-1"),
        ],
    );
    h.llm.script(
        "alice",
        vec![
            Step::Thinking(ThinkingBlock::Thinking {
                thinking: "Now the sum.".into(),
                signature: "sig-anthropic-2".into(),
            }),
            Step::call("c2", "calc", r#"{"expr":"1+1"}"#),
        ],
    );
    h.llm.reply("alice", "Sunny, and 2.");
    h.send("Weather in Oslo, and 1+1?");

    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 3);
    let step1 = &calls[1].messages[1];
    assert_eq!(step1.role, Role::Assistant);
    assert_eq!(step1.thinking, vec![thinking.clone(), redacted.clone()]);
    assert_eq!(step1.tool_calls[0].id, "c1");
    assert_eq!(
        step1.tool_calls[0].signature.as_deref(),
        Some("sig-gemini-1")
    );
    // Each step's entry carries its own thinking only.
    let third = &calls[2].messages;
    assert_eq!(third[1], *step1);
    assert_eq!(
        third[3].thinking,
        vec![ThinkingBlock::Thinking {
            thinking: "Now the sum.".into(),
            signature: "sig-anthropic-2".into(),
        }]
    );
    assert_eq!(third[3].tool_calls[0].signature, None);
    assert!(third[0].thinking.is_empty() && third[2].thinking.is_empty());
    assert_eq!(h.transcript()[1].content, "Sunny, and 2.");
    // Signatures are wire data: no event, message or memory entry shows them.
    let everything = format!(
        "{:?}{:?}{:?}",
        h.events.borrow(),
        h.transcript(),
        h.world.agent_memory("alice").unwrap()
    );
    assert!(
        !everything.contains("sig-"),
        "a signature leaked: {everything}"
    );
}

#[test]
fn parallel_calls_run_in_the_order_the_model_gave() {
    let (h, exec) = tool_world(&["get_weather", "calc"], |_| {});
    exec.reply("get_weather", ToolReply::Echo);
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    h.llm.script(
        "alice",
        vec![
            Step::call("b", "calc", r#"{"expr":"2+2"}"#),
            Step::call("a", "get_weather", r#"{"city":"Rome"}"#),
        ],
    );
    h.llm.reply("alice", "Done.");
    h.send("go");
    let order: Vec<String> = exec.runs().iter().map(|r| r.name.clone()).collect();
    assert_eq!(order, vec!["calc", "get_weather"]);
    let second = &h.llm.calls_to("alice")[1].messages;
    let ids: Vec<String> = second
        .iter()
        .filter_map(|m| m.tool_result.as_ref().map(|r| r.tool_call_id.clone()))
        .collect();
    assert_eq!(ids, vec!["b", "a"]);
    assert_eq!(
        second[1].tool_calls.len(),
        2,
        "one assistant entry holds both calls"
    );
    let reply = &h.transcript()[1];
    assert_eq!(
        reply.content, "Done.",
        "a step without text adds no blank line"
    );
    assert_eq!(reply.tool_calls.len(), 2);
    assert_eq!(reply.tool_calls[0].result, Some(cjson!(4)));
    assert_eq!(
        reply.tool_calls[1].result,
        Some(cjson!({"echo": {"city": "Rome"}}))
    );
}

#[test]
fn max_steps_bounds_a_reply_and_the_last_step_is_offered_no_tools() {
    let (h, exec) = tool_world(&["calc"], |a| a.max_steps = Some(2.0));
    exec.reply("calc", ToolReply::Value(cjson!(1)));
    h.llm.script("alice", vec![Step::call("1", "calc", "{}")]);
    // The last step calls a tool anyway: it is not run, the reply ends with its text.
    h.llm.script(
        "alice",
        vec![Step::Text("Final.".into()), Step::call("2", "calc", "{}")],
    );
    h.send("count");
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 2);
    assert_eq!(tool_names(&calls[0]), vec!["calc"]);
    assert!(
        calls[1].settings.tools.is_empty(),
        "step maxSteps offers no tools"
    );
    assert_eq!(exec.runs().len(), 1);
    let reply = &h.transcript()[1];
    assert_eq!(reply.content, "Final.");
    assert_eq!(
        reply.tool_calls[1].error.as_deref(),
        Some("not run: the last step of a reply offers no tools")
    );
    assert_eq!(
        h.sse("tool-result").len(),
        2,
        "every announced call gets its result"
    );
    assert_eq!(h.count("alice"), 1);
}

#[test]
fn max_steps_one_is_a_plain_reply_without_tools_offered() {
    let (h, _exec) = tool_world(&["calc"], |a| a.max_steps = Some(1.0));
    h.llm.reply("alice", "No tools needed.");
    h.send("hi");
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 1);
    assert!(calls[0].settings.tools.is_empty());
}

#[test]
fn bad_calls_are_answered_with_errors_and_never_executed() {
    let (h, exec) = tool_world(&["get_weather"], |_| {});
    exec.reply("get_weather", ToolReply::Echo);
    exec.reply("calc", ToolReply::Value(cjson!("ran")));
    h.llm.script(
        "alice",
        vec![
            Step::call("c1", "get_weather", r#"{"city": "Os"#),
            Step::call("c2", "get_weather", r#"{"city": 3}"#),
            Step::call("c3", "calc", r#"{"expr":"1"}"#),
            Step::call("c4", "get_weather", r#"{"city":"Oslo"}"#),
        ],
    );
    h.llm.reply("alice", "Sorry about that.");
    h.send("weather?");
    // Only the valid call ran; `calc` is registered but alice does not list it.
    let runs = exec.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].args, cjson!({"city": "Oslo"}));
    let second = &h.llm.calls_to("alice")[1].messages;
    let results: Vec<Value> = second
        .iter()
        .filter(|m| m.tool_result.is_some())
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    let err = |i: usize| results[i]["error"].as_str().unwrap().to_string();
    assert!(
        err(0).starts_with("invalid arguments: not valid JSON ("),
        "{}",
        err(0)
    );
    assert_eq!(
        err(1),
        "invalid arguments: args.city: expected string, got integer"
    );
    assert_eq!(
        err(2),
        "unknown tool \"calc\": the tools available are get_weather"
    );
    assert_eq!(results[3], json!({"echo": {"city": "Oslo"}}));
    // The published reply records them: malformed arguments as their raw text.
    let reply = &h.transcript()[1];
    assert_eq!(reply.tool_calls[0].args, cjson!(r#"{"city": "Os"#));
    assert_eq!(reply.tool_calls[0].result, None);
    assert_eq!(reply.tool_calls[1].error.as_deref(), Some(err(1).as_str()));
    let errors: Vec<Value> = h
        .sse("tool-result")
        .iter()
        .map(|e| e["error"].clone())
        .collect();
    assert_eq!(errors[2], json!(err(2)));
    assert!(errors[3].is_null());
    assert_eq!(reply.content, "Sorry about that.");
}

#[test]
fn throwing_timing_out_and_non_json_tools_give_error_results_and_the_reply_goes_on() {
    let (h, exec) = tool_world(&["get_weather", "calc", "slow"], |_| {});
    exec.reply("get_weather", ToolReply::Fail("service down".into()));
    exec.reply("slow", ToolReply::TimeOut);
    exec.reply("calc", ToolReply::NotJson("a function".into()));
    h.llm.script(
        "alice",
        vec![
            Step::call("1", "get_weather", r#"{"city":"x"}"#),
            Step::call("2", "slow", "{}"),
            Step::call("3", "calc", "{}"),
        ],
    );
    h.llm.reply("alice", "All three failed.");
    h.send("try");
    let second = &h.llm.calls_to("alice")[1].messages;
    let results: Vec<Value> = second
        .iter()
        .filter(|m| m.tool_result.is_some())
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect();
    assert_eq!(
        results,
        vec![
            json!({"error": "service down"}),
            json!({"error": "timed out after 1.5 s"}),
            json!({"error": "the tool returned a value that is not JSON: a function"}),
        ]
    );
    assert_eq!(h.transcript()[1].content, "All three failed.");
    assert_eq!(
        exec.runs()[1].ctx.timeout_ms,
        1_500,
        "the executor gets the budget"
    );
}

#[test]
fn a_listed_tool_that_is_not_registered_fails_before_any_request_and_counts_as_a_turn() {
    let (h, _exec) = tool_world(&["get_weather", "ghost"], |_| {});
    h.llm.reply("alice", "unused");
    h.send("hello");
    assert_eq!(h.calls("alice"), 0, "no request");
    assert_eq!(h.count("alice"), 1, "counts as a turn");
    let kinds: Vec<String> = h
        .of(Topic::Sse)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, vec!["start", "error"]);
    let err = &h.system("error")[0];
    assert_eq!(err["code"], "tool_not_registered");
    assert_eq!(err["agentName"], "alice");
    let msg = err["message"].as_str().unwrap();
    assert!(msg.starts_with("tool 'ghost' is not registered"), "{msg}");
    assert_eq!(h.transcript().len(), 1, "nothing published");
    assert_eq!(h.memory("alice"), vec![("user".into(), "hello".into())]);
}

#[test]
fn stop_aborts_the_running_tool_and_keeps_the_partial_text_and_calls() {
    let (h, exec) = tool_world(&["slow", "calc"], |_| {});
    exec.reply("slow", ToolReply::Hang);
    h.llm.script(
        "alice",
        vec![
            Step::Text("Working on it.".into()),
            Step::call("s1", "slow", "{}"),
            Step::call("c1", "calc", "{}"),
        ],
    );
    h.clock.advance(1000);
    block_on(h.world.send("do the slow thing", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.stop();
        },
    ));
    let runs = exec.runs();
    assert_eq!(runs.len(), 1, "the second call never starts");
    assert!(
        runs[0].ctx.cancel.is_cancelled(),
        "the running tool's signal fired"
    );
    let err = &h.sse("error")[0];
    assert_eq!(err["error"], "openai: cancelled");
    assert_eq!(err["partialContent"], "Working on it.");
    assert_eq!(h.system("error")[0]["code"], "llm_aborted");
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].kind, MessageKind::Interrupted);
    assert_eq!(t[1].content, "Working on it.");
    let errors: Vec<Option<String>> = t[1].tool_calls.iter().map(|c| c.error.clone()).collect();
    assert_eq!(
        errors,
        vec![Some("cancelled".into()), Some("cancelled".into())]
    );
    assert_eq!(
        h.sse("tool-result").len(),
        2,
        "every announced call gets its result event"
    );
    assert_eq!(h.calls("alice"), 1, "no step after the cancellation");
    assert!(!h.world.is_busy());
}

#[test]
fn the_steps_text_gets_the_reply_pipeline_as_a_whole() {
    // Auto-mention of the whole joined reply to an agent sender, cleaning, world tags.
    let (h, exec) = tool_world(&["calc"], |_| {});
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    h.llm.script(
        "alice",
        vec![
            Step::Text("\n\nComputing.".into()),
            Step::call("1", "calc", "{}"),
        ],
    );
    h.llm.reply("alice", "It is 4.   ");
    h.send_as("@alice what is 2+2?", Some("bob"));
    assert_eq!(h.transcript()[1].content, "@bob Computing.\n\nIt is 4.");

    h.llm.script(
        "alice",
        vec![
            Step::Text("Checking.".into()),
            Step::call("2", "calc", "{}"),
        ],
    );
    h.llm.reply("alice", "<world>pass</world>");
    h.send("@alice again");
    let t = h.transcript();
    let n = t.len();
    assert_eq!(
        t[n - 2].content,
        "Checking.",
        "the tag of a later step applies to the whole"
    );
    assert_eq!(t[n - 1].kind, MessageKind::Pass);
}

#[test]
fn an_empty_reply_after_tool_steps_is_llm_empty_response() {
    let (h, exec) = tool_world(&["calc"], |_| {});
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    h.llm.script("alice", vec![Step::call("1", "calc", "{}")]);
    h.llm.reply("alice", "  ");
    h.send("compute");
    assert_eq!(h.system("error")[0]["code"], "llm_empty_response");
    assert_eq!(h.transcript().len(), 1);
    assert_eq!(exec.runs().len(), 1, "the tool did run");
}

#[test]
fn a_non_streaming_agent_gets_one_chunk_with_the_whole_joined_text() {
    let (h, exec) = tool_world(&["calc"], |a| a.stream = Some(false));
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    h.llm.script(
        "alice",
        vec![Step::Text("One.".into()), Step::call("1", "calc", "{}")],
    );
    h.llm.reply("alice", "Two.");
    h.send("go");
    let chunks = h.sse("chunk");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["content"], "One.\n\nTwo.");
}

#[test]
fn usage_on_end_is_summed_over_the_steps_and_step_finish_has_each_steps_own() {
    use agent_world_wasm::core::llm::types::Usage;
    let (h, exec) = tool_world(&["calc"], |_| {});
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    let u = |i, o| {
        Step::Usage(Usage {
            input_tokens: Some(i),
            output_tokens: Some(o),
        })
    };
    h.llm
        .script("alice", vec![u(10, 2), Step::call("1", "calc", "{}")]);
    h.llm
        .script("alice", vec![Step::Text("4".into()), u(20, 3)]);
    h.send("go");
    assert_eq!(
        h.sse("end")[0]["usage"],
        json!({"inputTokens": 30, "outputTokens": 5})
    );
    let steps = h.system("step-finish");
    assert_eq!(
        steps[0]["usage"],
        json!({"inputTokens": 10, "outputTokens": 2})
    );
    assert_eq!(
        steps[1]["usage"],
        json!({"inputTokens": 20, "outputTokens": 3})
    );
}

// ---- memory and the history window ----

fn one_tool_reply(h: &H, exec: &ScriptedTools, question: &str) {
    exec.reply("calc", ToolReply::Value(cjson!(4)));
    h.llm.script("alice", vec![Step::call("k", "calc", "{}")]);
    h.llm.reply("alice", "Four.");
    h.send(question);
}

#[test]
fn later_replies_see_whole_tool_groups_and_a_cut_group_is_left_out_whole() {
    // historyLimit 6: [M1, A(calls), T, A1, M2] fits: the group is sent whole.
    let (h, exec) = tool_world(&["calc"], |a| a.history_limit = Some(6));
    one_tool_reply(&h, &exec, "first");
    h.llm.reply("alice", "ok");
    h.send("second");
    let input = &h.llm.calls_to("alice")[2].messages;
    let shape: Vec<(Role, bool, bool)> = input
        .iter()
        .map(|m| (m.role, !m.tool_calls.is_empty(), m.tool_result.is_some()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (Role::User, false, false),
            (Role::Assistant, true, false),
            (Role::User, false, true),
            (Role::Assistant, false, false),
            (Role::User, false, false),
        ]
    );

    // historyLimit 3: the window [T, A1, M2] would start inside the group: it is left out
    // whole (no result without its call), and the reply after it too (§5 step 2).
    let (h, exec) = tool_world(&["calc"], |a| a.history_limit = Some(3));
    one_tool_reply(&h, &exec, "first");
    h.llm.reply("alice", "ok");
    h.send("second");
    let input = &h.llm.calls_to("alice")[2].messages;
    assert_eq!(input, &vec![ChatMessage::new(Role::User, "second")]);

    // historyLimit 4: the window [A(calls), T, A1, M2] starts with the group's calls; the
    // group and the reply are left out (a window opens with a user entry).
    let (h, exec) = tool_world(&["calc"], |a| a.history_limit = Some(4));
    one_tool_reply(&h, &exec, "first");
    h.llm.reply("alice", "ok");
    h.send("second");
    let input = &h.llm.calls_to("alice")[2].messages;
    assert_eq!(input, &vec![ChatMessage::new(Role::User, "second")]);
}

#[test]
fn a_reply_longer_than_the_history_limit_keeps_its_own_context_between_steps() {
    // historyLimit 2 with three tool steps: the reply's context is its own, not the window.
    let (h, exec) = tool_world(&["calc"], |a| a.history_limit = Some(2));
    exec.reply("calc", ToolReply::Value(cjson!(1)));
    for i in 0..3 {
        h.llm
            .script("alice", vec![Step::call(&format!("k{i}"), "calc", "{}")]);
    }
    h.llm.reply("alice", "done");
    h.send("go");
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 4);
    assert_eq!(
        calls[3].messages.len(),
        1 + 3 * 2,
        "M and three whole groups"
    );
    assert_eq!(h.transcript()[1].content, "done");
}

// ---- dynamic instructions ----

struct Prompt(
    Result<String, String>,
    std::cell::RefCell<Vec<InstructionsRequest>>,
);

impl InstructionsProvider for Prompt {
    fn instructions(&self, req: InstructionsRequest) -> LocalBoxFuture<'_, Result<String, String>> {
        self.1.borrow_mut().push(req);
        let r = self.0.clone();
        Box::pin(async move { r })
    }
}

#[test]
fn dynamic_instructions_replace_the_system_prompt_per_reply() {
    let h = harness();
    h.add_with(agent_with("alice", |a| {
        a.system_prompt = Some("stored".into())
    }));
    let p = Rc::new(Prompt(Ok("dynamic".into()), Default::default()));
    h.world.set_instructions("alice", Some(p.clone())).unwrap();
    h.llm.reply("alice", "hi");
    let m = h.send("hello");
    let input = &h.llm.calls_to("alice")[0].messages;
    assert_eq!(input[0], ChatMessage::new(Role::System, "dynamic"));
    assert_eq!(input.len(), 2, "the stored prompt is not sent too");
    let req = p.1.borrow()[0].clone();
    assert_eq!(req.agent_name, "alice");
    assert_eq!(req.message.message_id, m.message_id);
    assert_eq!(req.chat_id, h.world.current_chat().map(|c| c.id));
    // Removing them restores the stored prompt.
    h.world.set_instructions("alice", None).unwrap();
    h.llm.reply("alice", "hi");
    h.send("again");
    assert_eq!(
        h.llm.calls_to("alice")[1].messages[0],
        ChatMessage::new(Role::System, "stored")
    );
    assert_eq!(
        h.world.set_instructions("nobody", None).unwrap_err().code(),
        "agent_not_found"
    );
}

#[test]
fn failing_instructions_fail_the_reply_with_llm_error_naming_the_agent() {
    let h = harness();
    h.add("alice");
    let p = Rc::new(Prompt(Err("no profile".into()), Default::default()));
    h.world.set_instructions("alice", Some(p)).unwrap();
    h.llm.reply("alice", "unused");
    h.send("hello");
    assert_eq!(h.calls("alice"), 0);
    let err = &h.system("error")[0];
    assert_eq!(err["code"], "llm_error");
    assert_eq!(
        err["message"],
        "the instructions of agent 'alice' failed: no profile"
    );
    assert_eq!(h.sse("error").len(), 1);
}

// ---- export of tool data ----

#[test]
fn tool_calls_and_tool_memory_survive_export_and_import() {
    let (h, exec) = tool_world(&["calc"], |_| {});
    one_tool_reply(&h, &exec, "compute");
    let v = export_value(&h);
    let msgs = &v["chats"][0]["messages"];
    assert_eq!(msgs[1]["toolCalls"][0]["result"], 4);
    assert!(msgs[0].get("toolCalls").is_none(), "absent when empty");
    let w2 = import_into_fresh(&v).unwrap();
    assert_eq!(w2.agent_memory("alice"), h.world.agent_memory("alice"));
    let chat = w2.current_chat().unwrap();
    assert_eq!(
        block_on(w2.messages(&chat.id, None, 10)).unwrap(),
        h.transcript()
    );
}

#[test]
fn a_chat_switch_cancels_the_running_tool_and_nothing_lands_in_the_new_chat() {
    let (h, exec) = tool_world(&["slow"], |_| {});
    exec.reply("slow", ToolReply::Hang);
    h.llm.script("alice", vec![Step::call("s1", "slow", "{}")]);
    h.clock.advance(1000);
    block_on(h.world.send("slow please", None)).unwrap();
    let first_chat = h.world.current_chat().unwrap().id;
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.new_chat().await.unwrap();
        },
    ));
    assert!(exec.runs()[0].ctx.cancel.is_cancelled());
    assert_eq!(h.system("error")[0]["code"], "llm_aborted");
    assert_ne!(h.world.current_chat().unwrap().id, first_chat);
    assert!(h.transcript().is_empty(), "nothing lands in the new chat");
    assert!(
        h.memory("alice").is_empty(),
        "the new chat starts with empty memory"
    );
    assert_eq!(h.calls("alice"), 1, "no step after the cancellation");
}

#[test]
fn call_ids_are_unique_within_a_reply_even_when_the_provider_repeats_or_omits_them() {
    // Providers without ids (Gemini, Ollama) get ids numbered per step by their codecs.
    let (h, exec) = tool_world(&["calc"], |_| {});
    exec.reply("calc", ToolReply::Value(cjson!(1)));
    h.llm
        .script("alice", vec![Step::call("call_0", "calc", "{}")]);
    h.llm.script(
        "alice",
        vec![
            Step::call("call_0", "calc", "{}"),
            Step::call("", "calc", "{}"),
        ],
    );
    h.llm.reply("alice", "done");
    h.send("go");
    let reply = &h.transcript()[1];
    let ids: Vec<&str> = reply
        .tool_calls
        .iter()
        .map(|c| c.tool_call_id.as_str())
        .collect();
    let r = &reply.message_id;
    assert_eq!(
        ids,
        vec![
            "call_0".to_string(),
            format!("{r}-call-2"),
            format!("{r}-call-3")
        ]
    );
    let results: Vec<String> = h.llm.calls_to("alice")[2]
        .messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref().map(|t| t.tool_call_id.clone()))
        .collect();
    assert_eq!(results, ids, "each result answers its own call");
}

#[test]
fn aborting_the_send_cancels_the_running_tool_like_stop() {
    // `send(content, {signal})` aborts through `cancel_replies_to` (the binding's wiring).
    let (h, exec) = tool_world(&["slow"], |_| {});
    exec.reply("slow", ToolReply::Hang);
    h.llm.script(
        "alice",
        vec![Step::Text("On it.".into()), Step::call("s1", "slow", "{}")],
    );
    h.clock.advance(1000);
    let m = block_on(h.world.send("slow please", None)).unwrap();
    let w = h.world.clone();
    let id = m.message_id.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.cancel_replies_to(&[id]);
        },
    ));
    assert!(exec.runs()[0].ctx.cancel.is_cancelled());
    assert_eq!(h.system("error")[0]["code"], "llm_aborted");
    let t = h.transcript();
    assert_eq!(t[1].kind, MessageKind::Interrupted);
    assert_eq!(t[1].content, "On it.");
}

#[test]
fn every_call_says_who_is_asking_and_what_for() {
    // For `custom` providers serving several agents and the chat-title call.
    use agent_world_wasm::core::llm::types::CallPurpose;
    use agent_world_wasm::core::model::CreateWorld;
    let h = harness_with(CreateWorld {
        name: "Titled".into(),
        chat_llm_provider: Some("openai".into()),
        chat_llm_model: Some("titler".into()),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.llm.reply("titler", "Greetings");
    h.send("hello");
    let reply = &h.llm.calls_to("alice")[0].settings;
    assert_eq!(
        (reply.agent_name.as_deref(), reply.purpose),
        (Some("alice"), CallPurpose::Reply)
    );
    let title = &h.llm.calls_to("titler")[0].settings;
    assert_eq!(
        (title.agent_name.as_deref(), title.purpose),
        (None, CallPurpose::Title)
    );
}
