//! Spec §10: editing the conversation (regenerate, editMessage, deleteMessage).
#![cfg(not(target_arch = "wasm32"))] // native ring; the memory store's test hooks are native-only
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::model::MessageKind;
use agent_world_wasm::core::store::StoreError;
use agent_world_wasm::core::testing::Step;
use engine_harness::*;
use futures_executor::block_on;

fn contents(h: &H) -> Vec<String> {
    h.transcript().into_iter().map(|m| m.content).collect()
}

fn regenerate(h: &H, id: &str, agent: Option<&str>) -> String {
    h.clock.advance(1000);
    let new_id = block_on(h.world.regenerate(id, agent)).unwrap();
    block_on(h.world.run_until_idle());
    new_id
}

/// The input of the last call to `model`: `(role, content)`.
fn last_input(h: &H, model: &str) -> Vec<(String, String)> {
    h.llm
        .calls_to(model)
        .last()
        .unwrap()
        .messages
        .iter()
        .map(|m| {
            (
                serde_json::to_value(m.role)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
                m.content.clone(),
            )
        })
        .collect()
}

#[test]
fn regenerate_a_reply_takes_its_place_with_the_memory_before_it() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "first answer");
    h.llm.reply("bob", "bob answer");
    let q = h.send("Hello all");
    h.llm.reply("alice", "later answer");
    h.send("@alice and then?");
    let old = h
        .transcript()
        .into_iter()
        .find(|m| m.content == "first answer")
        .unwrap();
    assert_eq!(
        old.reply_to_message_id.as_deref(),
        Some(q.message_id.as_str())
    );
    let count = h.count("alice");
    h.clear_events();

    h.llm.reply("alice", "second answer");
    let new_id = regenerate(&h, &old.message_id, None);
    // In the old reply's place, not at the end; the old one is gone.
    assert_eq!(
        contents(&h),
        vec![
            "Hello all",
            "second answer",
            "bob answer",
            "@alice and then?",
            "later answer"
        ]
    );
    let new = h
        .transcript()
        .into_iter()
        .find(|m| m.message_id == new_id)
        .unwrap();
    assert_eq!(
        new.reply_to_message_id.as_deref(),
        Some(q.message_id.as_str())
    );
    assert_eq!(new.sender, "alice");
    // The input was the memory as it was before the old reply: M last, nothing after it.
    assert_eq!(
        last_input(&h, "alice"),
        vec![("user".to_string(), "Hello all".to_string())]
    );
    // Memory: the old reply left, the new one is in.
    let mem = h.memory("alice");
    assert!(!mem.iter().any(|(_, c)| c == "first answer"), "{mem:?}");
    assert!(
        mem.contains(&("assistant".into(), "second answer".into())),
        "{mem:?}"
    );
    // One turn; one event saying what replaced what; the chat's count is unchanged.
    assert_eq!(h.count("alice"), count + 1);
    let replaced = h.system("message-replaced");
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0]["oldMessageId"], old.message_id.as_str());
    assert_eq!(replaced[0]["messageId"], new_id.as_str());
    assert_eq!(h.world.current_chat().unwrap().message_count, 5);
    // Persisted: a reopened world sees the same chat and memory.
    let w2 = h.reopen();
    let mem2: Vec<String> = w2
        .agent_memory("alice")
        .unwrap()
        .into_iter()
        .map(|e| e.content)
        .collect();
    assert!(!mem2.contains(&"first answer".to_string()), "{mem2:?}");
    assert!(mem2.contains(&"second answer".to_string()), "{mem2:?}");
}

#[test]
fn regenerate_a_reply_with_tool_entries_removes_them_from_memory() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "plain");
    let q = h.send("go");
    let old = h.transcript().pop().unwrap();
    // Simulate the old reply's tool entries: they carry the reply's id.
    let chat = h.world.current_chat().unwrap().id;
    let entry = agent_world_wasm::core::model::MemoryEntry::text(
        agent_world_wasm::core::model::MemoryRole::Tool,
        "{\"ok\":true}",
        None,
        old.message_id.clone(),
        Some(chat.clone()),
        agent_world_wasm::core::model::Timestamp(T0),
    );
    use agent_world_wasm::core::store::Store;
    block_on(
        h.store
            .apply(vec![agent_world_wasm::core::store::StoreOp::AppendMemory {
                world_id: h.world.id(),
                chat_id: chat.clone(),
                agent_id: "alice".into(),
                entry,
            }]),
    )
    .unwrap();
    h.llm.reply("alice", "again");
    regenerate(&h, &old.message_id, None);
    let stored = block_on(h.store.last_memory(&h.world.id(), &chat, "alice", 100)).unwrap();
    assert!(
        stored.iter().all(|e| e.message_id != old.message_id),
        "{stored:?}"
    );
    assert_eq!(stored.first().unwrap().message_id, q.message_id);
}

#[test]
fn regenerate_an_interrupted_or_failed_reply() {
    let h = harness();
    h.add("alice");
    // A failed reply: no script → the call fails; nothing is published.
    let q = h.send("Hello");
    assert_eq!(contents(&h), vec!["Hello"]);
    let err = h.system("error");
    assert_eq!(err.len(), 1);
    // The error says which reply failed and what it answered: what regenerate takes.
    assert_eq!(err[0]["agentName"], "alice");
    assert_eq!(err[0]["replyToMessageId"], q.message_id.as_str());
    assert!(err[0]["messageId"].is_string());
    // Named by the message it answered and the agent.
    h.llm.reply("alice", "now it works");
    regenerate(&h, &q.message_id, Some("Alice"));
    assert_eq!(contents(&h), vec!["Hello", "now it works"]);
    assert_eq!(
        last_input(&h, "alice"),
        vec![("user".to_string(), "Hello".to_string())],
        "M is in memory once"
    );
    // An interrupted message is replaced by the new reply.
    h.llm.script(
        "alice",
        vec![
            Step::Text("half".into()),
            Step::Fail(agent_world_wasm::core::llm::types::LlmError::Custom {
                message: "boom".into(),
            }),
        ],
    );
    let q2 = h.send("@alice more");
    let interrupted = h.transcript().pop().unwrap();
    assert_eq!(interrupted.kind, MessageKind::Interrupted);
    h.llm.reply("alice", "whole");
    regenerate(&h, &interrupted.message_id, None);
    let t = h.transcript();
    assert_eq!(t.last().unwrap().content, "whole");
    assert_eq!(t.last().unwrap().kind, MessageKind::Message);
    assert_eq!(
        t.last().unwrap().reply_to_message_id.as_deref(),
        Some(q2.message_id.as_str())
    );
    assert!(t.iter().all(|m| m.message_id != interrupted.message_id));
}

#[test]
fn regenerate_rejects_notices_unknown_ids_and_non_replies() {
    let h = harness_with(agent_world_wasm::core::model::CreateWorld {
        name: "W".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "@bob over to you");
    h.llm.reply("bob", "@alice back");
    let q = h.send("@alice start");
    let notice = h
        .transcript()
        .into_iter()
        .find(|m| m.kind == MessageKind::TurnLimit)
        .unwrap();
    let code = |r: Result<String, agent_world_wasm::core::error::WorldError>| {
        r.unwrap_err().code().to_string()
    };
    assert_eq!(
        code(block_on(h.world.regenerate(&notice.message_id, None))),
        "invalid_input"
    );
    assert_eq!(
        code(block_on(h.world.regenerate("nope", None))),
        "message_not_found"
    );
    assert_eq!(
        code(block_on(h.world.regenerate(&q.message_id, None))),
        "invalid_input",
        "a human message needs {{agent}}"
    );
    assert_eq!(
        code(block_on(h.world.regenerate(&q.message_id, Some("zed")))),
        "agent_not_found"
    );
    assert!(h.system("message-replaced").is_empty());
}

#[test]
fn edit_message_removes_it_and_everything_after_and_sends_the_new_text() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.llm.reply("bob", "b1");
    h.send("first");
    h.llm.reply("alice", "a2");
    let second = h.send("@alice second");
    h.llm.reply("alice", "a3");
    h.send("@alice third");
    assert_eq!(h.world.current_chat().unwrap().message_count, 7);
    let bob_count = h.count("bob");
    assert_eq!(bob_count, 0, "reset by the last human message");

    h.llm.reply("alice", "a2 again");
    h.clock.advance(1000);
    let edited = block_on(
        h.world
            .edit_message(&second.message_id, "@alice second, edited"),
    )
    .unwrap();
    block_on(h.world.run_until_idle());
    assert_ne!(edited.message_id, second.message_id, "a new id");
    assert_eq!(
        contents(&h),
        vec!["first", "a1", "b1", "@alice second, edited", "a2 again"]
    );
    assert_eq!(h.world.current_chat().unwrap().message_count, 5);
    // Memory: what came from the removed messages left; the rest stays.
    let mem: Vec<String> = h.memory("alice").into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        mem,
        vec!["first", "a1", "@alice second, edited", "a2 again"]
    );
    // The input of the new call did not see the removed messages.
    let input: Vec<String> = last_input(&h, "alice")
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(input, vec!["first", "a1", "@alice second, edited"]);
    // Persisted.
    let w2 = h.reopen();
    let chat = w2.current_chat().unwrap();
    assert_eq!(chat.message_count, 5);
    assert_eq!(block_on(w2.messages(&chat.id, None, 100)).unwrap().len(), 5);
}

#[test]
fn edit_rejects_replies_notices_and_unknown_ids() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    h.send("hi");
    let reply = h.transcript().pop().unwrap();
    let err = block_on(h.world.edit_message(&reply.message_id, "x")).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let err = block_on(h.world.edit_message("nope", "x")).unwrap_err();
    assert_eq!(err.code(), "message_not_found");
    let err = block_on(h.world.edit_message(&reply.message_id, "  ")).unwrap_err();
    assert_eq!(err.code(), "empty_message");
    assert_eq!(contents(&h), vec!["hi", "a1"]);
}

/// A reply whose message left the chat cannot be regenerated (its answered message is read
/// from the store in a second step of the same change): a clear input error, nothing changes.
#[test]
fn regenerate_a_reply_whose_message_was_deleted_says_so_and_changes_nothing() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    let q = h.send("hello");
    let reply = h
        .transcript()
        .into_iter()
        .find(|m| m.content == "a1")
        .unwrap();
    block_on(h.world.delete_message(&q.message_id)).unwrap();
    let count = h.count("alice");
    h.clear_events();
    let err = block_on(h.world.regenerate(&reply.message_id, None)).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(
        err.to_string().contains("which is no longer in the chat"),
        "{err}"
    );
    assert_eq!(contents(&h), vec!["a1"]);
    assert_eq!(h.count("alice"), count, "no turn");
    assert_eq!(h.calls("alice"), 1, "no call");
    assert!(h.system("message-replaced").is_empty());
}

#[test]
fn delete_message_removes_one_message_from_chat_and_every_memory_only() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.llm.reply("bob", "b1");
    let q = h.send("hello");
    let counts = (h.count("alice"), h.count("bob"));
    block_on(h.world.delete_message(&q.message_id)).unwrap();
    assert_eq!(contents(&h), vec!["a1", "b1"]);
    assert_eq!(h.world.current_chat().unwrap().message_count, 2);
    assert_eq!(h.memory("alice"), vec![("assistant".into(), "a1".into())]);
    assert_eq!(h.memory("bob"), vec![("assistant".into(), "b1".into())]);
    assert_eq!((h.count("alice"), h.count("bob")), counts, "nothing else");
    assert_eq!(h.calls("alice") + h.calls("bob"), 2, "no new call");
    let saved = h.system("chat-saved");
    assert_eq!(saved.last().unwrap()["messageCount"], 2);
    let err = block_on(h.world.delete_message(&q.message_id)).unwrap_err();
    assert_eq!(err.code(), "message_not_found");
}

#[test]
fn a_failed_store_change_leaves_everything_as_it_was() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    let q = h.send("hello");
    h.store.fail_next_apply(StoreError::Backend("disk".into()));
    let err = block_on(h.world.delete_message(&q.message_id)).unwrap_err();
    assert_eq!(err.code(), "storage_error");
    assert_eq!(contents(&h), vec!["hello", "a1"]);
    assert_eq!(h.world.current_chat().unwrap().message_count, 2);
    assert_eq!(h.memory("alice").len(), 2);
}

/// Issue 15 item 6: what people read. Error events carry the agent's display name and no
/// `[Error]` prefix; the turn-limit event carries the display name too.
#[test]
fn error_and_turn_limit_events_carry_the_display_name_without_an_error_prefix() {
    let h = harness_with(agent_world_wasm::core::model::CreateWorld {
        name: "W".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("Alice Smith");
    h.add("Bob");
    h.send("hello"); // no script: both fail
    let errors = h.system("error");
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["agentName"], "alice-smith");
    assert_eq!(errors[0]["agentDisplayName"], "Alice Smith");
    assert!(
        !errors[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("[Error]"),
        "{errors:?}"
    );
    h.llm.reply("Alice Smith", "@bob your turn");
    h.llm.reply("Bob", "@alice-smith back");
    h.send("@alice-smith go");
    let tl = h.system("turn-limit");
    assert_eq!(tl.len(), 1, "{tl:?}");
    assert_eq!(tl[0]["agentName"], "alice-smith");
    assert_eq!(tl[0]["agentDisplayName"], "Alice Smith");
}
