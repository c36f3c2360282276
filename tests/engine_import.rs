//! Import applies the API's rules (spec §6 "imports from it with validation"): what the API
//! refuses, an import document refuses too, with `import_invalid` and the path of the bad
//! field, and a refused document leaves the store as it was. The property tests mutate valid
//! exports (removed fields, swapped types, hostile strings, huge numbers, bad dates): every
//! document either imports whole or is refused, never half-imported, never a panic.

#![cfg(not(target_arch = "wasm32"))] // native ring; proptest is a host dev-dependency
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::error::WorldError;
use agent_world_wasm::core::model::NewAgent;
use engine_harness::*;
use futures_executor::block_on;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A world with two chats, messages, memories and counters, exported.
fn valid_export() -> Value {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.llm.reply("bob", "b1");
    h.send("What is 2+2?");
    block_on(h.world.new_chat()).unwrap();
    h.llm.reply("alice", "a2");
    h.send("@alice second chat");
    serde_json::from_str(&block_on(h.world.export()).unwrap()).unwrap()
}

/// Imports `doc` into a fresh, empty store: `Ok(export of the imported world)` or the error,
/// after checking that a refused document left the store empty.
fn import_fresh(doc: &str) -> Result<Value, WorldError> {
    let h = harness();
    block_on(World::delete(&*h.store, "test-world")).unwrap();
    match block_on(World::import(h.svc(), doc)) {
        Ok(w) => Ok(serde_json::from_str(&block_on(w.export()).unwrap()).unwrap()),
        Err(e) => {
            assert!(
                block_on(World::list(&*h.store)).unwrap().is_empty(),
                "a refused document wrote something: {e}"
            );
            Err(e)
        }
    }
}

fn refused_at(mutate: impl Fn(&mut Value)) -> String {
    let mut v = valid_export();
    mutate(&mut v);
    match import_fresh(&v.to_string()) {
        Err(WorldError::ImportInvalid { path, .. }) => path,
        other => panic!("expected import_invalid, got {other:?}"),
    }
}

/// A change to a valid export.
type Mutate = Box<dyn Fn(&mut Value)>;

#[test]
fn import_refuses_what_the_api_refuses_and_names_the_field() {
    let cases: Vec<(&str, Mutate)> = vec![
        // Ids the API could never have made: not kebab-case, or huge.
        (
            "world.id",
            Box::new(|v| v["world"]["id"] = json!("Test World")),
        ),
        (
            "world.id",
            Box::new(|v| v["world"]["id"] = json!("x".repeat(1_000_000))),
        ),
        (
            "agents[0].id",
            Box::new(|v| v["agents"][0]["id"] = json!("Alice")),
        ),
        (
            "agents[1].id",
            Box::new(|v| v["agents"][1]["id"] = json!("human")),
        ),
        // Names: empty, blank, 100k characters, no letter to make an id from.
        ("world.name", Box::new(|v| v["world"]["name"] = json!(""))),
        (
            "world.name",
            Box::new(|v| v["world"]["name"] = json!("n".repeat(100_000))),
        ),
        (
            "agents[0].name",
            Box::new(|v| v["agents"][0]["name"] = json!("  ")),
        ),
        (
            "agents[0].name",
            Box::new(|v| v["agents"][0]["name"] = json!("System")),
        ),
        (
            "chats[0].chat.name",
            Box::new(|v| v["chats"][0]["chat"]["name"] = json!("")),
        ),
        (
            "chats[1].chat.name",
            Box::new(|v| v["chats"][1]["chat"]["name"] = json!("c".repeat(101))),
        ),
        // Providers that do not exist.
        (
            "agents[0].provider",
            Box::new(|v| v["agents"][0]["provider"] = json!("opnai")),
        ),
        (
            "world.chatLLMProvider",
            Box::new(|v| v["world"]["chatLLMProvider"] = json!("skynet")),
        ),
        (
            "agents[1].model",
            Box::new(|v| v["agents"][1]["model"] = json!(" ")),
        ),
        // Messages: an empty sender, an empty or 20 MB content.
        (
            "chats[0].messages[0].sender",
            Box::new(|v| v["chats"][0]["messages"][0]["sender"] = json!("")),
        ),
        (
            "chats[0].messages[1].content",
            Box::new(|v| v["chats"][0]["messages"][1]["content"] = json!(" \n")),
        ),
        (
            "chats[1].messages[0].content",
            Box::new(|v| v["chats"][1]["messages"][0]["content"] = json!("m".repeat(20_000_000))),
        ),
        (
            "chats[0].messages[0].messageId",
            Box::new(|v| v["chats"][0]["messages"][0]["messageId"] = json!("")),
        ),
        (
            "chats[0].chat.id",
            Box::new(|v| v["chats"][0]["chat"]["id"] = json!("i".repeat(100_000))),
        ),
        (
            "chats[0].memories[0].entries[0].content",
            Box::new(|v| v["chats"][0]["memories"][0]["entries"][0]["content"] = json!("")),
        ),
        // Dates JavaScript could not read back.
        (
            "chats[0].messages[0].createdAt",
            Box::new(|v| {
                v["chats"][0]["messages"][0]["createdAt"] = json!("10000-01-01T00:00:00.000Z")
            }),
        ),
        (
            "chats[0].chat.updatedAt",
            Box::new(|v| v["chats"][0]["chat"]["updatedAt"] = json!("9999-12-31T23:59:60Z")),
        ),
        (
            "world.createdAt",
            Box::new(|v| v["world"]["createdAt"] = json!("+275760-09-13T00:00:00.000Z")),
        ),
    ];
    for (path, mutate) in cases {
        assert_eq!(refused_at(mutate), path);
    }
}

/// A bad value deep inside a record is named by its full path, and the problem says what was
/// expected without quoting the value.
#[test]
fn a_bad_nested_field_is_named_by_its_full_path() {
    let refused = |mutate: &dyn Fn(&mut Value)| {
        let mut v = valid_export();
        mutate(&mut v);
        match import_fresh(&v.to_string()) {
            Err(WorldError::ImportInvalid { path, problem }) => (path, problem),
            other => panic!("expected import_invalid, got {other:?}"),
        }
    };
    let (path, problem) = refused(&|v| {
        v["chats"][0]["messages"][1]["toolCalls"] = json!([{"toolCallId": "c1", "toolName": "t"}])
    });
    assert_eq!(
        (path.as_str(), problem.as_str()),
        ("chats[0].messages[1].toolCalls[0].args", "is missing")
    );
    let (path, problem) = refused(&|v| v["agents"][0]["reasoning"] = json!({"effort": "extreme"}));
    assert_eq!(path, "agents[0].reasoning.effort");
    assert_eq!(
        problem,
        r#"must be one of "low", "medium", "high" (got "extreme")"#
    );
    let (path, problem) = refused(&|v| v["agents"][1]["temperature"] = json!("hot"));
    assert_eq!(
        (path.as_str(), problem.as_str()),
        ("agents[1].temperature", "must be a number (got a string)")
    );
    let (path, problem) =
        refused(&|v| v["chats"][1]["memories"][0]["entries"][0]["createdAt"] = json!(1.5));
    assert_eq!(
        (path.as_str(), problem.as_str()),
        (
            "chats[1].memories[0].entries[0].createdAt",
            "must be a string (got a fractional number)"
        )
    );
}

#[test]
fn import_normalises_like_the_api() {
    let mut v = valid_export();
    v["world"]["name"] = json!("  Test World  ");
    v["agents"][0]["provider"] = json!(" OpenAI ");
    v["agents"][0]["systemPrompt"] = json!("   ");
    let out = import_fresh(&v.to_string()).unwrap();
    assert_eq!(out["world"]["name"], "Test World");
    assert_eq!(out["agents"][0]["provider"], "openai");
    assert!(out["agents"][0].get("systemPrompt").is_none());
}

#[test]
fn a_world_whose_last_chat_was_deleted_exports_and_imports_as_such() {
    let h = harness();
    h.send("kept until deleted");
    let only = h.world.current_chat().unwrap().id;
    assert!(block_on(h.world.delete_chat(&only)).unwrap());
    let doc = block_on(h.world.export()).unwrap();
    let h2 = harness();
    block_on(World::delete(&*h2.store, "test-world")).unwrap();
    let w2 = block_on(World::import(h2.svc(), &doc)).unwrap();
    assert!(w2.current_chat().is_none());
    // Session mode is still on there: the next message starts a new chat.
    let sent = block_on(w2.send("hello", None)).unwrap();
    assert!(sent.chat_id.is_some());
    assert_eq!(w2.list_chats().len(), 1);
}

/// Chats that tie on both `updatedAt` and `createdAt` (only an imported document can hold
/// them: the engine never gives two chats the same `updatedAt`) list in a stable order, the
/// one the world holds later first, however often they are listed.
#[test]
fn chats_tied_on_both_times_list_the_one_held_later_first() {
    let mut doc = valid_export();
    let chats = doc["chats"].as_array_mut().unwrap();
    assert_eq!(chats.len(), 2);
    let (updated, created) = (
        chats[0]["chat"]["updatedAt"].clone(),
        chats[0]["chat"]["createdAt"].clone(),
    );
    let mut ids = Vec::new();
    for c in chats.iter_mut() {
        c["chat"]["updatedAt"] = updated.clone();
        c["chat"]["createdAt"] = created.clone();
        ids.push(c["chat"]["id"].as_str().unwrap().to_string());
    }
    let h = harness();
    block_on(World::delete(&*h.store, "test-world")).unwrap();
    let w = block_on(World::import(h.svc(), &doc.to_string())).unwrap();
    let listed = |w: &World| -> Vec<String> { w.list_chats().into_iter().map(|c| c.id).collect() };
    ids.reverse();
    assert_eq!(listed(&w), ids, "the chat held later first");
    assert_eq!(listed(&w), ids, "the same order on every call");
}

#[test]
fn the_api_refuses_an_unknown_provider_too() {
    let h = harness();
    let e = block_on(h.world.add_agent(NewAgent {
        name: "Alice".into(),
        provider: "opnai".into(),
        model: "m".into(),
        ..Default::default()
    }))
    .unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    assert!(
        e.to_string().contains("provider") && e.to_string().contains("openai"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Property: any document imports whole or is refused with `import_invalid`, store unchanged.
// ---------------------------------------------------------------------------------------------

/// Every JSON path of `v` (as pointer segments), the root excluded.
fn paths(v: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                prefix.push(k.clone());
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                prefix.push(i.to_string());
                out.push(prefix.clone());
                paths(c, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|s| format!("/{s}")).collect()
}

fn hostile_value(i: usize) -> Value {
    match i % 26 {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(1e300),
        5 => json!(u64::MAX),
        6 => json!(1.5),
        7 => json!(""),
        8 => json!("   "),
        9 => json!("\u{202E}gnp.exe"),
        10 => json!("10000-01-01T00:00:00.000Z"),
        11 => json!("9999-12-31T23:59:60Z"),
        12 => json!("0000-01-01T00:00:00.000Z"),
        13 => json!([]),
        14 => json!({}),
        15 => json!("New Chat"),
        16 => json!("HUMAN"),
        17 => json!("alice"),
        18 => json!(9_007_199_254_740_993u64),
        19 => json!("x".repeat(1_000_001)),
        20 => json!("Not Kebab"),
        21 => json!("system"),
        22 => json!("\u{0}"),
        23 => json!("2026-02-30T00:00:00Z"),
        24 => json!([{"x": 1}]),
        _ => json!("id-1"),
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Remove(usize),
    Replace(usize, usize),
    /// Swap the value at one path for the value found at another (type swaps between fields).
    Swap(usize, usize),
}

fn apply(doc: &mut Value, all: &[Vec<String>], m: &Mutation) {
    let pick = |i: usize| &all[i % all.len()];
    match m {
        Mutation::Remove(i) => {
            let p = pick(*i);
            let (last, parent) = p.split_last().unwrap();
            match doc.pointer_mut(&pointer(parent)) {
                Some(Value::Object(o)) => {
                    o.remove(last);
                }
                Some(Value::Array(a)) => {
                    if let Ok(k) = last.parse::<usize>() {
                        if k < a.len() {
                            a.remove(k);
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::Replace(i, h) => {
            if let Some(slot) = doc.pointer_mut(&pointer(pick(*i))) {
                *slot = hostile_value(*h);
            }
        }
        Mutation::Swap(i, j) => {
            let other = doc.pointer(&pointer(pick(*j))).cloned();
            if let (Some(o), Some(slot)) = (other, doc.pointer_mut(&pointer(pick(*i)))) {
                *slot = o;
            }
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Remove),
        (any::<usize>(), any::<usize>()).prop_map(|(i, h)| Mutation::Replace(i, h)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
    ]
}

/// The chats of an export as `(chat id, [message ids])`, sorted.
fn shape(doc: &Value) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<(String, Vec<String>)> = doc["chats"]
        .as_array()
        .map(|chats| {
            chats
                .iter()
                .map(|c| {
                    let ids = c["messages"]
                        .as_array()
                        .map(|ms| {
                            ms.iter()
                                .map(|m| m["messageId"].as_str().unwrap_or("").to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                    (c["chat"]["id"].as_str().unwrap_or("").to_string(), ids)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// What the API could have produced, checked independently of the engine's validators: ids
/// kebab-case and bounded, names and senders not blank and bounded, contents not blank and at
/// most 1,000,000 characters, known providers, and dates JavaScript's `Date` reads.
fn api_valid(doc: &Value) -> Result<(), String> {
    let s = |v: &Value, what: &str| {
        v.as_str()
            .map(str::to_string)
            .ok_or(format!("{what} is not a string"))
    };
    let id_ok = |id: &str| {
        !id.is_empty()
            && id.chars().count() <= 300
            && !id.starts_with('-')
            && !id.ends_with('-')
            && !id.contains("--")
            && id
                .chars()
                .all(|c| c == '-' || (c.is_alphanumeric() && !c.is_uppercase()) || !c.is_ascii())
            && !id.chars().any(char::is_whitespace)
    };
    let name_ok = |n: &str| !n.trim().is_empty() && n.chars().count() <= 100 && n.trim() == n;
    let text_ok = |t: &str| !t.trim().is_empty() && t.chars().count() <= 1_000_000;
    let date_ok = |d: &str| {
        let b = d.as_bytes();
        d.len() == 24
            && b[4] == b'-'
            && b[10] == b'T'
            && b[23] == b'Z'
            && b[..4].iter().all(u8::is_ascii_digit)
            && &d[17..19] < "60"
    };
    const PROVIDERS: [&str; 8] = [
        "openai",
        "azure",
        "xai",
        "openai-compatible",
        "anthropic",
        "google",
        "ollama",
        "custom",
    ];
    let w = &doc["world"];
    let wid = s(&w["id"], "world.id")?;
    if !id_ok(&wid) {
        return Err(format!("world.id {wid:?}"));
    }
    if !name_ok(&s(&w["name"], "world.name")?) {
        return Err("world.name".into());
    }
    if let Some(p) = w.get("chatLLMProvider") {
        if !PROVIDERS.contains(&s(p, "provider")?.as_str()) {
            return Err("world.chatLLMProvider".into());
        }
    }
    let mut dates = vec![s(&w["createdAt"], "date")?, s(&w["lastUpdated"], "date")?];
    for a in doc["agents"].as_array().ok_or("agents")? {
        let id = s(&a["id"], "agent id")?;
        if !id_ok(&id) || ["human", "user", "you", "system", "world"].contains(&id.as_str()) {
            return Err(format!("agent id {id:?}"));
        }
        if !name_ok(&s(&a["name"], "agent name")?) {
            return Err(format!("agent {id} name"));
        }
        if !PROVIDERS.contains(&s(&a["provider"], "provider")?.as_str()) {
            return Err(format!("agent {id} provider"));
        }
        if s(&a["model"], "model")?.trim().is_empty() {
            return Err(format!("agent {id} model"));
        }
        dates.push(s(&a["createdAt"], "date")?);
        dates.push(s(&a["lastActive"], "date")?);
    }
    for c in doc["chats"].as_array().ok_or("chats")? {
        let chat = &c["chat"];
        let cid = s(&chat["id"], "chat id")?;
        if cid.trim().is_empty() || cid.chars().count() > 300 {
            return Err("chat id".into());
        }
        if !name_ok(&s(&chat["name"], "chat name")?) {
            return Err(format!("chat {cid} name"));
        }
        dates.push(s(&chat["createdAt"], "date")?);
        dates.push(s(&chat["updatedAt"], "date")?);
        for m in c["messages"].as_array().ok_or("messages")? {
            let sender = s(&m["sender"], "sender")?;
            if sender.trim().is_empty() || sender.chars().count() > 300 {
                return Err(format!("sender {sender:?}"));
            }
            if !text_ok(&s(&m["content"], "content")?) {
                return Err("message content".into());
            }
            dates.push(s(&m["createdAt"], "date")?);
        }
        for g in c["memories"].as_array().ok_or("memories")? {
            for e in g["entries"].as_array().ok_or("entries")? {
                if !text_ok(&s(&e["content"], "content")?) {
                    return Err("memory content".into());
                }
                dates.push(s(&e["createdAt"], "date")?);
            }
        }
    }
    match dates.iter().find(|d| !date_ok(d)) {
        Some(d) => Err(format!("date {d:?}")),
        None => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn any_document_imports_whole_or_is_refused_leaving_the_store_unchanged(
        muts in proptest::collection::vec(mutation(), 1..4),
    ) {
        let mut doc = valid_export();
        let mut all = Vec::new();
        paths(&doc, &mut Vec::new(), &mut all);
        for m in &muts {
            apply(&mut doc, &all, m);
        }
        match import_fresh(&doc.to_string()) {
            Ok(out) => {
                // Whole: every chat and message of the document is there, in order.
                prop_assert_eq!(shape(&out), shape(&doc));
                prop_assert_eq!(out["agents"].as_array().map(Vec::len),
                    doc["agents"].as_array().map(Vec::len));
                // What was imported is something the API could have made...
                prop_assert_eq!(api_valid(&out), Ok(()));
                // ...so it imports again, the same.
                let again = import_fresh(&out.to_string());
                prop_assert!(again.is_ok(), "re-import failed: {:?}", again.err());
                prop_assert_eq!(again.ok(), Some(out));
            }
            Err(e) => prop_assert_eq!(e.code(), "import_invalid", "{}", e),
        }
    }
}

/// Issue 15: a backup imports as a copy next to the live world: a new id and name, everything
/// else as it was; the original untouched; copies after the first get a number.
#[test]
fn import_as_a_copy_restores_a_backup_next_to_the_live_world() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    h.send("What is 2+2?");
    let backup = block_on(h.world.export()).unwrap();
    // A plain import clashes with the live world.
    let err = block_on(World::import(h.svc(), &backup)).err().unwrap();
    assert_eq!(err.code(), "world_exists");

    let copy = block_on(World::import_copy(h.svc(), &backup, None)).unwrap();
    assert_eq!(copy.id(), "test-world-copy");
    assert_eq!(copy.info().name, "Test World (copy)");
    let chat = copy.current_chat().unwrap();
    assert_eq!(chat.world_id, "test-world-copy");
    let texts: Vec<String> = block_on(copy.messages(&chat.id, None, 100))
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(texts, vec!["What is 2+2?", "a1"]);
    assert_eq!(copy.agent_memory("alice").unwrap().len(), 2);
    // Independent: a message in the copy leaves the original as it was.
    h.llm.reply("alice", "copy only");
    block_on(copy.send("in the copy", None)).unwrap();
    block_on(copy.run_until_idle());
    assert_eq!(h.transcript().len(), 2);
    assert_eq!(h.reopen().current_chat().unwrap().message_count, 2);

    let second = block_on(World::import_copy(h.svc(), &backup, None)).unwrap();
    assert_eq!(second.info().name, "Test World (copy 2)");
    let named = block_on(World::import_copy(h.svc(), &backup, Some("Restored"))).unwrap();
    assert_eq!(named.id(), "restored");
    let err = block_on(World::import_copy(h.svc(), &backup, Some("Restored")))
        .err()
        .unwrap();
    assert_eq!(err.code(), "world_exists");
    let names: Vec<String> = block_on(World::list(&*h.store))
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(
        names,
        vec![
            "Restored",
            "Test World",
            "Test World (copy 2)",
            "Test World (copy)"
        ]
    );
}
