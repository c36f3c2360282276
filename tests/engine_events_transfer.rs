//! Spec §8 events through the engine, agent/world CRUD, and §6 export/import.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use std::cell::RefCell;
use std::rc::Rc;

use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::events::{Event, Topic};
use agent_world_wasm::core::model::{AgentPatch, NewAgent, WorldPatch};
use engine_harness::*;
use futures_executor::block_on;
use serde_json::{json, Value};

#[test]
fn a_failing_subscriber_is_reported_as_callback_error_and_others_still_get_events() {
    let h = harness();
    let _bad = h.world.on(
        Topic::Message,
        Rc::new(|_| Err("TypeError: x is undefined".into())),
    );
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.send("hello");
    assert_eq!(
        h.of(Topic::Message).len(),
        2,
        "the other subscriber got both messages"
    );
    let errs = h.system("error");
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|e| e["code"] == "callback_error"));
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("x is undefined"));
    assert_eq!(h.transcript().len(), 2, "the engine went on");
}

#[test]
fn a_subscriber_that_throws_on_its_own_error_report_does_not_recurse() {
    let h = harness();
    let _bad = h.world.on(Topic::System, Rc::new(|_| Err("again".into())));
    let _bad2 = h.world.on(Topic::World, Rc::new(|_| Err("boom".into())));
    h.send("hello");
    // One report per failed original event (chat-saved, idle, maybe a title); the system
    // subscriber failing again on each report is not reported again.
    let originals = h
        .of(Topic::System)
        .iter()
        .filter(|v| v["type"] != "error")
        .count()
        + h.of(Topic::World).len();
    assert!(originals >= 2, "chat-saved and idle at least");
    assert_eq!(h.system("error").len(), originals);
}

#[test]
fn callbacks_may_call_back_into_the_engine() {
    let h = harness();
    let w = h.world.clone();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let _sub = h.world.on(
        Topic::Message,
        Rc::new(move |e: &Event| {
            // Reading state from inside a callback must not hit a borrow.
            s.borrow_mut()
                .push((w.agents().len(), w.list_chats().len()));
            let _ = e;
            Ok(())
        }),
    );
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.send("hello");
    assert_eq!(seen.borrow().len(), 2);
}

#[test]
fn unsubscribing_stops_delivery() {
    let h = harness();
    let got = Rc::new(RefCell::new(0));
    let g = got.clone();
    let sub = h.world.on(
        Topic::Message,
        Rc::new(move |_| {
            *g.borrow_mut() += 1;
            Ok(())
        }),
    );
    h.send("one");
    sub.unsubscribe();
    h.send("two");
    assert_eq!(*got.borrow(), 1);
}

#[test]
fn agent_crud_events_and_errors() {
    let h = harness();
    let a = h.add("Agent 007");
    assert_eq!(a.id, "agent-007");
    assert!(a.stream);
    assert_eq!(a.llm_call_count, 0);
    let ev = h.of(Topic::World);
    assert_eq!(ev[0]["type"], "agent-added");
    assert_eq!(ev[0]["agent"]["id"], "agent-007");
    let dup = block_on(h.world.add_agent(NewAgent {
        name: "agent 007".into(),
        provider: "openai".into(),
        model: "m".into(),
        ..Default::default()
    }))
    .unwrap_err();
    assert_eq!(dup.code(), "agent_exists");
    for (name, code) in [
        ("Human", "reserved_name"),
        ("system", "reserved_name"),
        ("  ", "invalid_name"),
    ] {
        let e = block_on(h.world.add_agent(NewAgent {
            name: name.into(),
            provider: "openai".into(),
            model: "m".into(),
            ..Default::default()
        }))
        .unwrap_err();
        assert_eq!(e.code(), code, "{name}");
    }
    let e = block_on(h.world.add_agent(NewAgent {
        name: "Hot".into(),
        provider: "openai".into(),
        model: "m".into(),
        temperature: Some(7.0),
        ..Default::default()
    }))
    .unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    assert!(e.to_string().contains("temperature"));
    let u = block_on(h.world.update_agent(
        "agent-007",
        AgentPatch {
            name: Some("Bond".into()),
            temperature: Some(Some(0.5)),
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(u.id, "agent-007", "the id never changes on rename");
    assert_eq!(u.name, "Bond");
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "agent-updated");
    let reopened = h.reopen();
    assert_eq!(reopened.agent("agent-007").unwrap().temperature, Some(0.5));
    assert!(block_on(h.world.remove_agent("agent-007")).unwrap());
    assert!(!block_on(h.world.remove_agent("agent-007")).unwrap());
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "agent-removed");
    assert!(h.reopen().agents().is_empty());
    let e = block_on(h.world.update_agent("ghost", AgentPatch::default())).unwrap_err();
    assert_eq!(e.code(), "agent_not_found");
}

#[test]
fn world_update_persists_and_emits_world_updated() {
    let h = harness();
    let w = block_on(h.world.update(WorldPatch {
        turn_limit: Some(3.0),
        description: Some(Some("desc".into())),
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(w.turn_limit, 3);
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "world-updated");
    assert_eq!(h.reopen().info().turn_limit, 3);
    let e = block_on(h.world.update(WorldPatch {
        turn_limit: Some(-2.0),
        ..Default::default()
    }))
    .unwrap_err();
    assert_eq!(e.code(), "invalid_turn_limit");
}

fn populated() -> H {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.llm.reply("bob", "b1");
    h.send("What is 2+2?");
    block_on(h.world.new_chat()).unwrap();
    h.llm.reply("alice", "a2");
    h.send("@alice second chat");
    h
}

#[test]
fn export_import_round_trip_keeps_everything() {
    let h = populated();
    let doc = block_on(h.world.export()).unwrap();
    let v: Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(v["formatVersion"], 3);
    assert_eq!(v["chats"].as_array().unwrap().len(), 2);
    assert!(
        !doc.to_lowercase().contains("apikey"),
        "keys are never exported"
    );
    // Import into a fresh store.
    let h2 = harness();
    block_on(World::delete(&*h2.store, "test-world")).unwrap();
    let w2 = block_on(World::import(h2.svc(), &doc)).unwrap();
    assert_eq!(w2.info(), h.world.info());
    assert_eq!(w2.list_chats(), h.world.list_chats());
    assert_eq!(w2.agents(), h.world.agents());
    for a in ["alice", "bob"] {
        assert_eq!(w2.agent_memory(a), h.world.agent_memory(a));
    }
    for c in h.world.list_chats() {
        assert_eq!(
            block_on(w2.messages(&c.id, None, 100)).unwrap(),
            block_on(h.world.messages(&c.id, None, 100)).unwrap()
        );
    }
    // Importing over an existing world is refused.
    let e = block_on(World::import(h2.svc(), &doc)).err().unwrap();
    assert_eq!(e.code(), "world_exists");
}

/// Compact JSON, one line: the serializer's pretty printer cost the wasm module 7.5 KB raw for
/// whitespace (the README says so: a reader pretty-prints it with `JSON.stringify`).
#[test]
fn export_is_compact_json() {
    let h = populated();
    let doc = block_on(h.world.export()).unwrap();
    assert!(
        !doc.contains('\n'),
        "one line: {}",
        &doc[..doc.len().min(80)]
    );
    assert!(doc.starts_with("{\"formatVersion\":3,\"world\":{"));
}

#[test]
fn import_migrates_format_version_1() {
    let h = populated();
    let mut v: Value = serde_json::from_str(&block_on(h.world.export()).unwrap()).unwrap();
    v["formatVersion"] = json!(1);
    for c in v["chats"].as_array_mut().unwrap() {
        c["chat"].as_object_mut().unwrap().remove("titleSource");
    }
    let h2 = harness();
    block_on(World::delete(&*h2.store, "test-world")).unwrap();
    let w2 = block_on(World::import(h2.svc(), &v.to_string())).unwrap();
    let sources: Vec<String> = w2
        .list_chats()
        .iter()
        .map(|c| {
            serde_json::to_value(c.title_source)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let names: Vec<String> = w2.list_chats().into_iter().map(|c| c.name).collect();
    for (n, s) in names.iter().zip(&sources) {
        if n == "New Chat" {
            assert_eq!(s, "default");
        } else {
            assert_eq!(s, "auto");
        }
    }
}

fn import_error(mutate: impl Fn(&mut Value)) -> (String, String) {
    let h = populated();
    let mut v: Value = serde_json::from_str(&block_on(h.world.export()).unwrap()).unwrap();
    mutate(&mut v);
    let h2 = harness();
    block_on(World::delete(&*h2.store, "test-world")).unwrap();
    let e = block_on(World::import(h2.svc(), &v.to_string()))
        .err()
        .unwrap();
    assert_eq!(e.code(), "import_invalid", "{e}");
    assert!(
        block_on(World::list(&*h2.store)).unwrap().is_empty(),
        "never half-imported"
    );
    match e {
        agent_world_wasm::core::error::WorldError::ImportInvalid { path, problem } => {
            (path, problem)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalid_import_documents_name_the_bad_field() {
    assert_eq!(
        import_error(|v| v["agents"][1]["historyLimit"] = json!(0)).0,
        "agents[1].historyLimit"
    );
    assert_eq!(
        import_error(|v| v["agents"][1]["stream"] = json!("yes")).0,
        "agents[1].stream"
    );
    assert_eq!(
        import_error(|v| v["world"]["turnLimit"] = json!(-1)).0,
        "world.turnLimit"
    );
    assert_eq!(
        import_error(|v| v["agents"][0]["apiKey"] = json!("sk-1")).0,
        "agents[0].apiKey"
    );
    assert_eq!(
        import_error(|v| {
            v["agents"][0].as_object_mut().unwrap().remove("model");
        })
        .0,
        "agents[0].model"
    );
    assert_eq!(
        import_error(|v| v["chats"][1]["messages"][0]["createdAt"] = json!("yesterday")).0,
        "chats[1].messages[0].createdAt"
    );
    assert_eq!(
        import_error(|v| v["chats"][0]["messages"][1]["kind"] = json!("shout")).0,
        "chats[0].messages[1].kind"
    );
    assert_eq!(
        import_error(|v| v["chats"][0]["memories"][0]["agentId"] = json!("ghost")).0,
        "chats[0].memories[0].agentId"
    );
    assert_eq!(
        import_error(|v| v["world"]["currentChatId"] = json!("ghost")).0,
        "world.currentChatId"
    );
    assert_eq!(
        import_error(|v| v["formatVersion"] = json!(99)).0,
        "formatVersion"
    );
    assert_eq!(
        import_error(|v| {
            v.as_object_mut().unwrap().remove("formatVersion");
        })
        .0,
        "formatVersion"
    );
    assert_eq!(
        import_error(|v| v["agents"][1]["id"] = json!("alice")).0,
        "agents[1].id"
    );
    assert_eq!(
        import_error(|v| v["chats"][0]["chat"]["worldId"] = json!("other")).0,
        "chats[0].chat.worldId"
    );
}

#[test]
fn import_rejects_non_json() {
    let h = harness();
    let e = block_on(World::import(h.svc(), "{not json")).err().unwrap();
    assert_eq!(e.code(), "import_invalid");
}

#[test]
fn agent_ids_follow_kebab_through_the_engine() {
    let h = harness();
    assert_eq!(h.add("Agent_007").id, "agent-007");
    assert_eq!(h.add("XMLParser").id, "xmlparser");
    assert_eq!(h.add("Ünïcode Name").id, "ünïcode-name");
    let e = block_on(h.world.add_agent(NewAgent {
        name: "!!!".into(),
        provider: "openai".into(),
        model: "m".into(),
        ..Default::default()
    }))
    .unwrap_err();
    assert_eq!(e.code(), "invalid_name");
}

#[test]
fn a_forgotten_subscription_is_removed_with_off() {
    let h = harness();
    let got = Rc::new(RefCell::new(0));
    let g = got.clone();
    let id = h
        .world
        .on(
            Topic::Message,
            Rc::new(move |_| {
                *g.borrow_mut() += 1;
                Ok(())
            }),
        )
        .forget();
    h.send("one");
    assert!(h.world.off(id));
    assert!(!h.world.off(id));
    h.send("two");
    assert_eq!(*got.borrow(), 1);
}

#[test]
fn input_bounds_name_prompt_temperature_tokens_history() {
    let h = harness();
    let base = || NewAgent {
        name: "Bounded".into(),
        provider: "openai".into(),
        model: "m".into(),
        ..Default::default()
    };
    let cases: Vec<(NewAgent, &str)> = vec![
        (
            NewAgent {
                name: "n".repeat(101),
                ..base()
            },
            "name",
        ),
        (
            NewAgent {
                system_prompt: Some("p".repeat(100_001)),
                ..base()
            },
            "systemPrompt",
        ),
        (
            NewAgent {
                temperature: Some(-0.1),
                ..base()
            },
            "temperature",
        ),
        (
            NewAgent {
                max_tokens: Some(0),
                ..base()
            },
            "maxTokens",
        ),
        (
            NewAgent {
                history_limit: Some(0),
                ..base()
            },
            "historyLimit",
        ),
        (
            NewAgent {
                provider: " ".into(),
                ..base()
            },
            "provider",
        ),
    ];
    for (input, field) in cases {
        let e = block_on(h.world.add_agent(input)).unwrap_err();
        assert_eq!(e.code(), "invalid_input", "{field}");
        assert!(e.to_string().contains(field), "{e} names {field}");
    }
    assert!(h.world.agents().is_empty());
    let ok = block_on(h.world.add_agent(NewAgent {
        name: "n".repeat(100),
        system_prompt: Some("p".repeat(100_000)),
        temperature: Some(2.0),
        max_tokens: Some(1),
        history_limit: Some(1),
        ..base()
    }));
    assert!(ok.is_ok());
}

#[test]
fn message_event_payload_has_every_field_and_ids_are_unique() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.send("hello");
    let ms = h.of(Topic::Message);
    assert_eq!(ms.len(), 2);
    let chat = h.world.current_chat().unwrap().id;
    for m in &ms {
        for k in [
            "messageId",
            "chatId",
            "sender",
            "content",
            "kind",
            "createdAt",
        ] {
            assert!(m.get(k).is_some(), "{k} in {m}");
        }
        assert_eq!(m["chatId"], chat.as_str());
        assert_eq!(m["kind"], "message");
        assert!(!m["messageId"].as_str().unwrap().is_empty());
    }
    assert!(ms[0].get("replyToMessageId").is_none());
    assert_eq!(ms[1]["replyToMessageId"], ms[0]["messageId"]);
    assert_ne!(ms[0]["messageId"], ms[1]["messageId"]);
    assert_eq!(ms[0]["createdAt"], "2026-11-18T11:06:41.000Z");
}

#[test]
fn message_event_carries_chat_id_null_with_session_mode_off() {
    let h = harness();
    block_on(h.world.set_session_mode(false)).unwrap();
    h.send("hello");
    let m = &h.of(Topic::Message)[0];
    assert!(m.get("chatId").is_some_and(Value::is_null), "{m}");
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

#[test]
fn data_model_uses_the_js_field_names_of_section_1() {
    let h = harness_with(agent_world_wasm::core::model::CreateWorld {
        name: "Full".into(),
        description: Some("d".into()),
        chat_llm_provider: Some("openai".into()),
        chat_llm_model: Some("titler".into()),
        ..Default::default()
    });
    let w = serde_json::to_value(h.world.info()).unwrap();
    assert_eq!(
        keys(&w),
        sorted(&[
            "id",
            "name",
            "description",
            "turnLimit",
            "historyLimit",
            "currentChatId",
            "chatLLMProvider",
            "chatLLMModel",
            "createdAt",
            "lastUpdated"
        ])
    );
    h.add_with(NewAgent {
        name: "Alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        system_prompt: Some("p".into()),
        temperature: Some(0.5),
        max_tokens: Some(10),
        history_limit: Some(5),
        ..Default::default()
    });
    h.llm.reply("alice", "hi");
    h.llm.reply("titler", "T");
    h.send("hello");
    let a = serde_json::to_value(h.world.agent("alice").unwrap()).unwrap();
    assert_eq!(
        keys(&a),
        sorted(&[
            "id",
            "name",
            "type",
            "provider",
            "model",
            "systemPrompt",
            "temperature",
            "maxTokens",
            "historyLimit",
            "stream",
            "llmCallCount",
            "lastLLMCall",
            "createdAt",
            "lastActive",
            "status"
        ])
    );
    let c = serde_json::to_value(h.world.current_chat().unwrap()).unwrap();
    assert_eq!(
        keys(&c),
        sorted(&[
            "id",
            "worldId",
            "name",
            "messageCount",
            "titleSource",
            "createdAt",
            "updatedAt"
        ])
    );
    let mem = h.world.agent_memory("alice").unwrap();
    let m0 = serde_json::to_value(&mem[0]).unwrap();
    assert_eq!(
        keys(&m0),
        sorted(&[
            "role",
            "content",
            "sender",
            "messageId",
            "chatId",
            "createdAt"
        ])
    );
    let m1 = serde_json::to_value(&mem[1]).unwrap();
    assert_eq!(m1["role"], "assistant");
    assert!(m1.get("sender").is_none(), "own replies have no sender");
}
