//! Spec §6: session mode, titles, new/load/delete/rename chats, reopening.
#![cfg(not(target_arch = "wasm32"))] // native ring; the memory store's test hooks are native-only
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::events::Topic;
use agent_world_wasm::core::llm::types::{LlmError, Role};
use agent_world_wasm::core::model::{CreateWorld, MessageKind, TitleSource};
use agent_world_wasm::core::store::Store;
use agent_world_wasm::core::testing::Step;
use engine_harness::*;
use futures_executor::block_on;

fn llm_title_harness() -> H {
    harness_with(CreateWorld {
        name: "Titled".into(),
        chat_llm_provider: Some("openai".into()),
        chat_llm_model: Some("titler".into()),
        ..Default::default()
    })
}

#[test]
fn a_new_world_starts_in_session_mode_with_an_empty_new_chat() {
    let h = harness();
    let w = h.world.info();
    let chat = h.world.current_chat().unwrap();
    assert_eq!(w.current_chat_id.as_deref(), Some(chat.id.as_str()));
    assert_eq!(chat.name, "New Chat");
    assert_eq!(chat.message_count, 0);
    assert_eq!(chat.title_source, TitleSource::Default);
    assert_eq!(w.history_limit, 10);
}

#[test]
fn session_mode_on_persists_every_message_and_emits_chat_saved_with_distinct_count_differs() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send("Hello everyone!");
    let saved = h.system("chat-saved");
    let counts: Vec<u64> = saved
        .iter()
        .map(|v| v["messageCount"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, vec![1, 2, 3]);
    assert_eq!(h.world.current_chat().unwrap().message_count, 3);
    assert_eq!(h.transcript().len(), 3);
    for m in h.of(Topic::Message) {
        assert_eq!(m["chatId"], h.world.current_chat().unwrap().id.as_str());
    }
}

#[test]
fn session_mode_off_answers_but_persists_nothing_and_reopens_empty() {
    let h = harness();
    h.add("alice");
    let chat = h.world.current_chat().unwrap();
    block_on(h.world.set_session_mode(false)).unwrap();
    assert!(h.world.info().current_chat_id.is_none());
    h.llm.reply("alice", "hi");
    h.send("hello");
    assert_eq!(h.calls("alice"), 1);
    assert_eq!(h.memory("alice").len(), 2, "memory lives in RAM");
    assert_eq!(h.count("alice"), 1);
    let m = h.of(Topic::Message);
    assert_eq!(m.len(), 2);
    assert!(m[0]["chatId"].is_null());
    assert!(h.system("chat-saved").is_empty());
    let stored = block_on(h.store.messages(&h.world.id(), &chat.id, None, 100)).unwrap();
    assert!(stored.is_empty());
    let w2 = h.reopen();
    assert!(
        w2.info().current_chat_id.is_none(),
        "currentChatId persists as null"
    );
    assert!(w2.agent_memory("alice").unwrap().is_empty());
    assert_eq!(w2.agent("alice").unwrap().llm_call_count, 0);
    // Turning it back on starts a chat.
    block_on(h.world.set_session_mode(true)).unwrap();
    assert!(h.world.current_chat().is_some());
}

#[test]
fn heuristic_title_tries_each_human_message_while_default_differs() {
    let h = harness();
    h.send("?");
    assert_eq!(h.world.current_chat().unwrap().name, "New Chat");
    assert!(h.system("chat-title-updated").is_empty());
    h.send("What is 2+2?");
    let c = h.world.current_chat().unwrap();
    assert_eq!(c.name, "What is 2+2?");
    assert_eq!(c.title_source, TitleSource::Auto);
    h.send("Something else entirely");
    assert_eq!(h.world.current_chat().unwrap().name, "What is 2+2?");
    let ev = h.system("chat-title-updated");
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["titleSource"], "auto");
}

#[test]
fn heuristic_title_examples_through_the_engine() {
    let h = harness();
    h.send("Hello, how do I learn React?");
    assert_eq!(
        h.world.current_chat().unwrap().name,
        "how do I learn React?"
    );
}

#[test]
fn agent_messages_never_set_the_title() {
    let h = harness();
    h.send_as("What is 2+2?", Some("bob"));
    assert_eq!(
        h.world.current_chat().unwrap().title_source,
        TitleSource::Default
    );
}

#[test]
fn rename_chat_is_manual_and_never_overwritten() {
    let h = harness();
    let c = h.world.current_chat().unwrap();
    let r = block_on(h.world.rename_chat(&c.id, "My plans")).unwrap();
    assert_eq!(r.title_source, TitleSource::Manual);
    let ev = h.system("chat-title-updated");
    assert_eq!(ev[0]["name"], "My plans");
    assert_eq!(ev[0]["titleSource"], "manual");
    h.send("What is 2+2?");
    assert_eq!(h.world.current_chat().unwrap().name, "My plans");
    assert_eq!(
        block_on(h.world.rename_chat("nope", "x"))
            .unwrap_err()
            .code(),
        "chat_not_found"
    );
    assert_eq!(
        block_on(h.world.rename_chat(&c.id, "  "))
            .unwrap_err()
            .code(),
        "invalid_input"
    );
}

#[test]
fn llm_title_one_call_when_idle_after_a_human_message_no_sse_not_a_turn() {
    let h = llm_title_harness();
    h.add("alice");
    h.llm.reply("alice", "Paris is lovely.");
    h.llm.reply("titler", "\"Trip  to Paris\"");
    h.send("Plan a trip to Paris");
    let calls = h.llm.calls_to("titler");
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!(c.settings.temperature, Some(0.2));
    assert_eq!(c.settings.max_tokens, Some(32));
    assert_eq!(c.messages.len(), 1);
    assert_eq!(c.messages[0].role, Role::User);
    assert_eq!(
        c.messages[0].content,
        "Write a short title (at most 6 words) for a chat that starts with:\nUser: Plan a trip to Paris\nalice: Paris is lovely."
    );
    let chat = h.world.current_chat().unwrap();
    assert_eq!(chat.title_source, TitleSource::Auto);
    assert!(h.sse("start").iter().all(|v| v["agentName"] == "alice"));
    assert_eq!(h.count("alice"), 1);
    assert_eq!(h.system("chat-title-updated").len(), 1);
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "idle");
    // Titled now: no further title calls.
    h.llm.reply("alice", "ok");
    h.send("More please");
    assert_eq!(h.llm.calls_to("titler").len(), 1);
}

#[test]
fn llm_title_answer_is_cleaned_of_quotes_and_whitespace() {
    let h = llm_title_harness();
    h.llm.reply("titler", "  \u{201c}Trip   to Paris\u{201d} ");
    h.send("Plan a trip to Paris");
    assert_eq!(h.world.current_chat().unwrap().name, "Trip to Paris");
}

#[test]
fn llm_title_error_falls_back_to_the_heuristic() {
    let h = llm_title_harness();
    h.llm.script(
        "titler",
        vec![Step::Fail(LlmError::Custom {
            message: "down".into(),
        })],
    );
    h.send("What is 2+2?");
    let c = h.world.current_chat().unwrap();
    assert_eq!(c.name, "What is 2+2?");
    assert_eq!(c.title_source, TitleSource::Auto);
    assert!(
        h.system("error").is_empty(),
        "a title failure is not a turn error"
    );
}

#[test]
fn llm_title_blank_answer_and_empty_heuristic_keep_default_for_the_next_try() {
    let h = llm_title_harness();
    h.llm.reply("titler", "   ");
    h.send("?");
    assert_eq!(
        h.world.current_chat().unwrap().title_source,
        TitleSource::Default
    );
    h.llm.reply("titler", "Arithmetic");
    h.send("What is 2+2?");
    assert_eq!(h.world.current_chat().unwrap().name, "Arithmetic");
}

#[test]
fn llm_title_is_dropped_if_the_chat_was_renamed_meanwhile() {
    let h = llm_title_harness();
    h.llm
        .script("titler", vec![Step::Yield, Step::Text("LLM Title".into())]);
    h.clock.advance(1000);
    block_on(h.world.send("Plan a trip", None)).unwrap();
    let id = h.world.current_chat().unwrap().id;
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            // Runs while the title call yields.
            w.rename_chat(&id, "Mine").await.unwrap();
        },
    ));
    assert_eq!(h.llm.calls_to("titler").len(), 1);
    let c = h.world.current_chat().unwrap();
    assert_eq!(c.name, "Mine");
    assert_eq!(c.title_source, TitleSource::Manual);
}

#[test]
fn new_chat_reuses_an_empty_current_chat_else_creates_one_differs() {
    let h = harness();
    h.add("alice");
    let first = h.world.current_chat().unwrap();
    let again = block_on(h.world.new_chat()).unwrap();
    assert_eq!(again.id, first.id, "an empty chat is reused");
    assert_eq!(h.system("chat-reused")[0]["chatId"], first.id.as_str());
    h.llm.reply("alice", "hi");
    h.send("hello");
    assert_eq!(h.count("alice"), 1);
    let second = block_on(h.world.new_chat()).unwrap();
    assert_ne!(second.id, first.id, "a chat with messages is never reused");
    assert_eq!(second.name, "New Chat");
    assert_eq!(
        h.system("new-chat-created")[0]["chatId"],
        second.id.as_str()
    );
    assert_eq!(
        h.world.info().current_chat_id.as_deref(),
        Some(second.id.as_str())
    );
    assert!(h.memory("alice").is_empty());
    assert_eq!(h.count("alice"), 0);
    // The old chat is untouched.
    let old = block_on(h.world.messages(&first.id, None, 100)).unwrap();
    assert_eq!(old.len(), 2);
    assert_eq!(h.world.list_chats().len(), 2);
}

#[test]
fn load_chat_restores_memory_and_counters_as_they_were() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    h.send("q1");
    let first = h.world.current_chat().unwrap();
    block_on(h.world.new_chat()).unwrap();
    h.llm.reply("alice", "b1");
    h.llm.reply("alice", "b2");
    h.send("r1");
    h.send_as("@alice r2", Some("bob"));
    assert_eq!(h.count("alice"), 2);
    let second = h.world.current_chat().unwrap();
    block_on(h.world.load_chat(&first.id)).unwrap();
    assert_eq!(h.system("chat-loaded")[0]["chatId"], first.id.as_str());
    assert_eq!(h.count("alice"), 1);
    assert_eq!(
        h.memory("alice"),
        vec![
            ("user".into(), "q1".into()),
            ("assistant".into(), "a1".into())
        ]
    );
    block_on(h.world.load_chat(&second.id)).unwrap();
    assert_eq!(h.count("alice"), 2);
    assert_eq!(h.memory("alice").len(), 4);
    let e = block_on(h.world.load_chat("missing")).unwrap_err();
    assert_eq!(e.code(), "chat_not_found");
    assert_eq!(
        h.world.current_chat().unwrap().id,
        second.id,
        "nothing changed"
    );
}

#[test]
fn delete_current_chat_falls_back_to_the_most_recently_updated() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a");
    h.send("in chat one");
    let one = h.world.current_chat().unwrap();
    block_on(h.world.new_chat()).unwrap();
    h.send("in chat two");
    let two = h.world.current_chat().unwrap();
    block_on(h.world.new_chat()).unwrap();
    let three = h.world.current_chat().unwrap();
    // Chat one was updated last among the others.
    h.clock.advance(1000);
    block_on(h.world.rename_chat(&one.id, "Renamed")).unwrap();
    h.clear_events();
    assert!(block_on(h.world.delete_chat(&three.id)).unwrap());
    let ev = h.system("chat-deleted");
    assert_eq!(ev[0]["chatId"], three.id.as_str());
    assert_eq!(ev[0]["newCurrentChatId"], one.id.as_str());
    assert!(h.system("chat-loaded").is_empty());
    assert_eq!(h.world.current_chat().unwrap().id, one.id);
    assert_eq!(h.count("alice"), 1, "memory and counter restored");
    assert_eq!(h.memory("alice").len(), 2);
    assert!(!block_on(h.world.delete_chat("missing")).unwrap());
    // Deleting a chat that is not current leaves the current one alone.
    assert!(block_on(h.world.delete_chat(&two.id)).unwrap());
    assert_eq!(h.world.current_chat().unwrap().id, one.id);
    assert!(block_on(h.world.messages(&two.id, None, 10)).is_err());
    // Deleting the last chat leaves no current chat and resets every agent (session mode
    // stays on: the next message starts a new chat, see below).
    assert!(block_on(h.world.delete_chat(&one.id)).unwrap());
    assert!(h.world.info().current_chat_id.is_none());
    assert!(h.system("chat-deleted").last().unwrap()["newCurrentChatId"].is_null());
    assert_eq!(h.count("alice"), 0);
    assert!(h.memory("alice").is_empty());
    assert!(h.reopen().info().current_chat_id.is_none());
}

#[test]
fn after_the_last_chat_is_deleted_the_next_message_starts_a_new_chat() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    h.send("in the only chat");
    let only = h.world.current_chat().unwrap();
    assert!(block_on(h.world.delete_chat(&only.id)).unwrap());
    assert!(h.world.list_chats().is_empty());
    // Also after a reopen: the store keeps "session mode on, no chat left".
    let h = H {
        world: h.reopen(),
        ..h
    };
    let subs = record(&h.world, &h.events);
    h.clear_events();
    h.llm.reply("alice", "a2");
    let sent = h.send("What is the plan?");
    let chat = h.world.current_chat().expect("a new chat");
    assert_eq!(sent.chat_id.as_deref(), Some(chat.id.as_str()));
    assert_ne!(chat.id, only.id);
    assert_eq!(chat.name, "What is the plan?", "titled as any new chat");
    let created = h.system("new-chat-created");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0]["chatId"], chat.id.as_str());
    // The event comes before the message it was created for.
    let order: Vec<String> = h
        .events
        .borrow()
        .iter()
        .map(|(_, v)| v["type"].as_str().unwrap_or("message").to_string())
        .collect();
    let pos = |t: &str| order.iter().position(|x| x == t).unwrap();
    assert!(pos("new-chat-created") < pos("message"), "{order:?}");
    let stored: Vec<_> = h.transcript().into_iter().map(|m| m.content).collect();
    assert_eq!(
        stored,
        vec!["What is the plan?", "a2"],
        "the message and the reply are kept"
    );
    let reopened = h.reopen();
    assert_eq!(reopened.current_chat().map(|c| c.id), Some(chat.id.clone()));
    assert_eq!(reopened.list_chats().len(), 1);
    drop(subs);
}

#[test]
fn with_session_mode_off_deleting_every_chat_still_keeps_nothing() {
    let h = harness();
    h.send("kept");
    let only = h.world.current_chat().unwrap();
    block_on(h.world.set_session_mode(false)).unwrap();
    assert!(block_on(h.world.delete_chat(&only.id)).unwrap());
    for w in [h.world.clone(), h.reopen()] {
        let sent = block_on(w.send("not kept", None)).unwrap();
        assert_eq!(sent.chat_id, None);
        assert!(w.current_chat().is_none() && w.list_chats().is_empty());
    }
    assert!(h.system("new-chat-created").is_empty());
    // And turning session mode off after the last chat was deleted is remembered too.
    let h = harness();
    let only = h.world.current_chat().unwrap();
    assert!(block_on(h.world.delete_chat(&only.id)).unwrap());
    block_on(h.world.set_session_mode(false)).unwrap();
    let sent = block_on(h.reopen().send("not kept", None)).unwrap();
    assert_eq!(sent.chat_id, None);
}

#[test]
fn chats_updated_in_the_same_millisecond_keep_the_order_of_their_updates() {
    // The clock never moves: every update below happens in the same millisecond.
    let h = harness();
    let send = |text: &str| {
        block_on(h.world.send(text, None)).unwrap();
    };
    let a = h.world.current_chat().unwrap().id;
    send("in a");
    let b = block_on(h.world.new_chat()).unwrap().id;
    send("in b");
    let c = block_on(h.world.new_chat()).unwrap().id;
    send("in c");
    block_on(h.world.load_chat(&a)).unwrap();
    send("again in a");
    block_on(h.world.rename_chat(&b, "B")).unwrap();
    let ids = |w: &World| -> Vec<String> { w.list_chats().into_iter().map(|c| c.id).collect() };
    assert_eq!(ids(&h.world), vec![b.clone(), a.clone(), c.clone()]);
    assert_eq!(
        ids(&h.reopen()),
        vec![b.clone(), a.clone(), c.clone()],
        "across a reopen"
    );
    // deleteChat's fallback is the chat updated last, not the one created last.
    assert!(block_on(h.world.delete_chat(&a)).unwrap());
    assert_eq!(h.world.current_chat().unwrap().id, b);
    let reopened = h.reopen();
    assert_eq!(reopened.current_chat().unwrap().id, b);
    assert_eq!(ids(&reopened), vec![b, c]);
}

#[test]
fn over_quota_deleting_and_clearing_still_work_and_survive_a_reopen() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.llm.reply("bob", "b1");
    h.send("in one");
    let one = h.world.current_chat().unwrap().id;
    block_on(h.world.new_chat()).unwrap();
    h.llm.reply("alice", "a2");
    h.llm.reply("bob", "b2");
    h.send("in two");
    let two = h.world.current_chat().unwrap().id;
    h.store.set_over_quota(true);
    h.clear_events();
    let e = block_on(h.world.send("more", None)).unwrap_err();
    assert_eq!(e.reason(), Some("quota_exceeded"), "the store is full");
    // clearAgentMemory frees alice's memory (its counter reset is best effort).
    block_on(h.world.clear_agent_memory("alice")).unwrap();
    assert!(h.memory("alice").is_empty());
    assert_eq!(h.count("alice"), 0);
    // removeAgent.
    assert!(block_on(h.world.remove_agent("bob")).unwrap());
    // deleteChat of the current chat: the fallback becomes current, as after a reopen.
    assert!(block_on(h.world.delete_chat(&two)).unwrap());
    assert_eq!(h.world.current_chat().unwrap().id, one);
    assert_eq!(h.memory("alice").len(), 2, "chat one's memory restored");
    let reopened = h.reopen();
    assert_eq!(reopened.current_chat().unwrap().id, one);
    assert_eq!(reopened.list_chats().len(), 1);
    assert_eq!(
        reopened
            .agents()
            .into_iter()
            .map(|a| a.id)
            .collect::<Vec<_>>(),
        vec!["alice"]
    );
    assert_eq!(reopened.agent_memory("alice").unwrap().len(), 2);
    // setSessionMode(false) takes effect (kept in RAM until there is room to store it).
    block_on(h.world.set_session_mode(false)).unwrap();
    assert!(h.world.current_chat().is_none());
    assert_eq!(
        block_on(h.world.send("unkept", None)).unwrap().chat_id,
        None
    );
    // Each put that could not be stored was reported.
    assert!(h
        .system("error")
        .iter()
        .all(|e| e["reason"] == "quota_exceeded"));
    // Deleting the last chat over quota: nothing to write but the delete.
    assert!(block_on(h.world.delete_chat(&one)).unwrap());
    h.store.set_over_quota(false);
    assert!(h.reopen().list_chats().is_empty());
}

#[test]
fn list_chats_is_most_recently_updated_first_a_new_chat_after_an_update_in_the_same_ms() {
    let h = harness();
    let a = h.world.current_chat().unwrap();
    h.send("first");
    let b = block_on(h.world.new_chat()).unwrap();
    h.clock.advance(0);
    let ids: Vec<String> = h.world.list_chats().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, vec![b.id.clone(), a.id.clone()]);
}

#[test]
fn reopen_restores_current_chat_memory_and_counters() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send("Hello everyone!");
    let w2 = h.reopen();
    assert_eq!(w2.info().current_chat_id, h.world.info().current_chat_id);
    for a in ["alice", "bob"] {
        assert_eq!(w2.agent(a).unwrap().llm_call_count, 1);
        assert_eq!(
            w2.agent_memory(a).unwrap(),
            h.world.agent_memory(a).unwrap()
        );
    }
    let names: Vec<String> = w2.agents().into_iter().map(|a| a.id).collect();
    assert_eq!(names, vec!["alice", "bob"], "routing order survives");
    assert_eq!(w2.list_chats(), h.world.list_chats());
}

#[test]
fn reopen_loads_only_the_last_history_limit_entries() {
    let h = harness_with(CreateWorld {
        name: "Small".into(),
        history_limit: Some(3),
        ..Default::default()
    });
    h.add("alice");
    for i in 0..5 {
        h.llm.reply("alice", &format!("a{i}"));
        h.send(&format!("q{i}"));
    }
    let w2 = h.reopen();
    let mem = w2.agent_memory("alice").unwrap();
    assert_eq!(mem.len(), 3);
    assert_eq!(mem[2].content, "a4");
}

#[test]
fn switching_chats_cancels_the_left_chats_calls_so_no_reply_lands_in_the_wrong_chat() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm
        .script("alice", vec![Step::Text("x".into()), Step::Hang]);
    h.llm.reply("bob", "late");
    h.clock.advance(1000);
    block_on(h.world.send("Hello everyone!", None)).unwrap();
    let first = h.world.current_chat().unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.new_chat().await.unwrap();
        },
    ));
    let second = h.world.current_chat().unwrap();
    assert_ne!(first.id, second.id);
    let codes: Vec<_> = h.sse("error").iter().map(|e| e["error"].clone()).collect();
    assert_eq!(codes.len(), 2);
    assert!(codes.iter().all(|c| c == "openai: cancelled"));
    assert!(block_on(h.world.messages(&second.id, None, 10))
        .unwrap()
        .is_empty());
    // Spec §4: the text alice had streamed stays, as `interrupted`, in the chat it belongs to
    // (never in the new one); bob's queued call had streamed nothing and leaves nothing.
    let old = block_on(h.world.messages(&first.id, None, 10)).unwrap();
    let kept: Vec<_> = old
        .iter()
        .map(|m| (m.sender.as_str(), m.content.as_str(), m.kind))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("HUMAN", "Hello everyone!", MessageKind::Message),
            ("alice", "x", MessageKind::Interrupted),
        ]
    );
    assert_eq!(
        old[1].reply_to_message_id.as_deref(),
        Some(old[0].message_id.as_str())
    );
    let chats = h.world.list_chats();
    let first_now = chats.iter().find(|c| c.id == first.id).unwrap();
    assert_eq!(first_now.message_count, 2, "the left chat counts it");
    assert_eq!(h.reopen().list_chats(), chats, "and it is stored");
    assert_eq!(
        h.world.current_chat().unwrap().message_count,
        0,
        "nothing lands in the new chat"
    );
    assert!(h.world.agent_memory("alice").unwrap().is_empty());
    assert_eq!(h.calls("bob"), 0);
}

#[test]
fn clear_agent_memory_empties_memory_and_counter_not_messages() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a");
    h.send("hello");
    h.clear_events();
    block_on(h.world.clear_agent_memory("alice")).unwrap();
    assert!(h.memory("alice").is_empty());
    assert_eq!(h.count("alice"), 0);
    assert_eq!(h.transcript().len(), 2);
    assert_eq!(h.of(Topic::World)[0]["type"], "agent-updated");
    let w2 = h.reopen();
    assert!(w2.agent_memory("alice").unwrap().is_empty());
    assert_eq!(
        block_on(h.world.clear_agent_memory("nobody"))
            .unwrap_err()
            .code(),
        "agent_not_found"
    );
}

#[test]
fn messages_page_backwards_oldest_first() {
    let h = harness();
    for i in 0..5 {
        h.send(&format!("m{i}"));
    }
    let chat = h.world.current_chat().unwrap();
    let last2 = block_on(h.world.messages(&chat.id, None, 2)).unwrap();
    let c: Vec<&str> = last2.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(c, vec!["m3", "m4"]);
    let prev = block_on(h.world.messages(&chat.id, Some(&last2[0].message_id), 2)).unwrap();
    let c: Vec<&str> = prev.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(c, vec!["m1", "m2"]);
}

#[test]
fn notices_are_persisted_in_the_chat_but_never_in_memory() {
    let h = harness_with(CreateWorld {
        name: "N".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "one");
    h.send_as("@alice a", Some("bob"));
    h.send_as("@alice b", Some("bob"));
    let t = h.transcript();
    assert_eq!(t.last().unwrap().kind, MessageKind::TurnLimit);
    assert!(h
        .memory("alice")
        .iter()
        .all(|(_, c)| !c.contains("Turn limit")));
    assert_eq!(h.world.current_chat().unwrap().message_count, 4);
}

#[test]
fn world_crud_create_exists_open_list_delete() {
    let h = harness();
    let e = block_on(World::create(
        h.svc(),
        CreateWorld {
            name: "test world".into(),
            ..Default::default()
        },
    ))
    .err()
    .unwrap();
    assert_eq!(e.code(), "world_exists");
    let list = block_on(World::list(&*h.store)).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, "test-world");
    assert_eq!(
        block_on(World::open(h.svc(), "nope")).err().unwrap().code(),
        "world_not_found"
    );
    assert!(block_on(World::delete(&*h.store, "test-world")).unwrap());
    assert!(!block_on(World::delete(&*h.store, "test-world")).unwrap());
    assert!(block_on(World::list(&*h.store)).unwrap().is_empty());
}

#[test]
fn new_chat_reuse_keeps_id_name_and_title_source() {
    let h = harness();
    let c = h.world.current_chat().unwrap();
    block_on(h.world.rename_chat(&c.id, "Planning")).unwrap();
    let r = block_on(h.world.new_chat()).unwrap();
    assert_eq!(r.id, c.id);
    assert_eq!(r.name, "Planning");
    assert_eq!(r.title_source, TitleSource::Manual);
    assert_eq!(h.world.list_chats().len(), 1);
    assert!(h.system("new-chat-created").is_empty());
}

#[test]
fn new_chat_resets_every_agent_and_the_reset_is_persisted() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a");
    h.send("hello");
    block_on(h.world.new_chat()).unwrap();
    let w2 = h.reopen();
    assert_eq!(w2.agent("alice").unwrap().llm_call_count, 0);
    assert!(w2.agent_memory("alice").unwrap().is_empty());
    assert_eq!(w2.info().current_chat_id, h.world.info().current_chat_id);
}

/// A chat `one` with a message, then chat `two` current with alice streaming (hanging) and
/// bob queued for "Hello everyone!"; `leave` runs while alice's call hangs.
fn leave_while_busy<F>(leave: F) -> (H, String, String)
where
    F: FnOnce(World, String) -> futures_util::future::LocalBoxFuture<'static, ()>,
{
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.send_as("a note", Some("system"));
    let one = h.world.current_chat().unwrap().id;
    block_on(h.world.new_chat()).unwrap();
    let two = h.world.current_chat().unwrap().id;
    h.llm
        .script("alice", vec![Step::Text("x".into()), Step::Hang]);
    h.llm.reply("bob", "late");
    h.clock.advance(1000);
    block_on(h.world.send("Hello everyone!", None)).unwrap();
    h.clear_events();
    let fut = leave(h.world.clone(), one.clone());
    block_on(futures_util::future::join(h.world.run_until_idle(), fut));
    (h, one, two)
}

/// `kept_in`: the left chat when it still exists, where alice's streamed `x` is kept as an
/// `interrupted` message (spec §4); `None` when it was deleted, and then nothing is published.
fn assert_left_calls_cancelled(h: &H, kept_in: Option<&str>) {
    assert_eq!(h.sse("start").len(), 2, "the queued call emits start too");
    let errs = h.sse("error");
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|e| e["error"] == "openai: cancelled"));
    let sys = h.system("error");
    assert_eq!(sys.len(), 2);
    assert!(sys.iter().all(|e| e["code"] == "llm_aborted"));
    assert_eq!(h.calls("bob"), 0);
    let published: Vec<(String, String, String)> = h
        .of(Topic::Message)
        .iter()
        .map(|m| {
            (
                m["chatId"].as_str().unwrap_or("").to_string(),
                m["kind"].as_str().unwrap_or("").to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = kept_in
        .map(|c| (c.to_string(), "interrupted".to_string(), "x".to_string()))
        .into_iter()
        .collect();
    assert_eq!(published, expected, "nothing lands in the chat switched to");
}

#[test]
fn load_chat_cancels_the_left_chats_calls_and_a_queued_one_keeps_its_turn() {
    let (h, one, two) = leave_while_busy(|w, one| {
        Box::pin(async move {
            w.load_chat(&one).await.unwrap();
        })
    });
    assert_left_calls_cancelled(&h, Some(&two));
    assert_eq!(block_on(h.world.messages(&one, None, 10)).unwrap().len(), 1);
    // alice's streamed text is kept in the chat that was left (spec §4), as `interrupted`.
    let left = block_on(h.world.messages(&two, None, 10)).unwrap();
    assert_eq!(left.len(), 2);
    assert_eq!(
        (left[1].kind, left[1].content.as_str()),
        (MessageKind::Interrupted, "x")
    );
    block_on(h.world.load_chat(&two)).unwrap();
    assert_eq!(h.count("bob"), 1, "the cancelled queued call kept its turn");
    assert_eq!(h.count("alice"), 1);
}

#[test]
fn delete_current_chat_cancels_its_calls_so_no_reply_lands_in_the_next_one() {
    let (h, one, two) = leave_while_busy(|w, _| {
        Box::pin(async move {
            let id = w.current_chat().unwrap().id;
            assert!(w.delete_chat(&id).await.unwrap());
        })
    });
    assert_left_calls_cancelled(&h, None);
    assert_eq!(h.world.current_chat().unwrap().id, one);
    assert_eq!(block_on(h.world.messages(&one, None, 10)).unwrap().len(), 1);
    assert!(block_on(h.world.messages(&two, None, 10)).is_err());
}

#[test]
fn clear_agent_memory_with_session_mode_off_empties_ram() {
    let h = harness();
    h.add("alice");
    block_on(h.world.set_session_mode(false)).unwrap();
    h.llm.reply("alice", "a");
    h.send("hello");
    assert_eq!(h.memory("alice").len(), 2);
    h.clear_events();
    block_on(h.world.clear_agent_memory("alice")).unwrap();
    assert!(h.memory("alice").is_empty());
    assert_eq!(h.count("alice"), 0);
    assert_eq!(h.of(Topic::World)[0]["type"], "agent-updated");
}

#[test]
fn session_mode_off_still_persists_world_and_agent_settings() {
    let h = harness();
    block_on(h.world.set_session_mode(false)).unwrap();
    h.add("alice");
    block_on(h.world.update(agent_world_wasm::core::model::WorldPatch {
        turn_limit: Some(7.0),
        ..Default::default()
    }))
    .unwrap();
    let w2 = h.reopen();
    assert_eq!(w2.agents().len(), 1);
    assert_eq!(w2.info().turn_limit, 7);
    assert!(w2.info().current_chat_id.is_none());
}

#[test]
fn world_fields_all_persist() {
    let h = llm_title_harness();
    block_on(h.world.update(agent_world_wasm::core::model::WorldPatch {
        description: Some(Some("about".into())),
        history_limit: Some(4),
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(h.reopen().info(), h.world.info());
}

#[test]
fn llm_title_prompt_uses_the_first_reply_to_the_human_message() {
    let h = llm_title_harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "Alice first.");
    h.llm.reply("bob", "Bob second.");
    h.llm.reply("titler", "Greetings");
    h.send("Hello everyone, plan the week");
    let calls = h.llm.calls_to("titler");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].messages[0].content,
        "Write a short title (at most 6 words) for a chat that starts with:\nUser: Hello everyone, plan the week\nalice: Alice first."
    );
}

#[test]
fn llm_title_is_not_a_turn_and_emits_no_sse_even_without_agents() {
    let h = llm_title_harness();
    h.llm.reply("titler", "Lonely question");
    h.send("Is anyone there?");
    assert_eq!(h.llm.calls_to("titler").len(), 1);
    assert!(h.of(Topic::Sse).is_empty());
    assert_eq!(h.world.current_chat().unwrap().name, "Lonely question");
}

#[test]
fn updated_at_changes_on_append_and_rename() {
    let h = harness();
    let c0 = h.world.current_chat().unwrap();
    h.send("hello");
    let c1 = h.world.current_chat().unwrap();
    assert!(c1.updated_at > c0.updated_at);
    h.clock.advance(500);
    let c2 = block_on(h.world.rename_chat(&c1.id, "Other")).unwrap();
    assert!(c2.updated_at > c1.updated_at);
}

#[test]
fn delete_unknown_chat_returns_false_with_no_event_and_no_change() {
    let h = harness();
    let before = h.world.list_chats();
    h.clear_events();
    assert!(!block_on(h.world.delete_chat("missing")).unwrap());
    assert!(h.system("chat-deleted").is_empty());
    assert_eq!(h.world.list_chats(), before);
}

#[test]
fn clear_agent_memory_counter_reset_is_persisted() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a");
    h.send("hello");
    block_on(h.world.clear_agent_memory("alice")).unwrap();
    assert_eq!(h.reopen().agent("alice").unwrap().llm_call_count, 0);
}

#[test]
fn chat_saved_and_chat_title_updated_carry_the_chat_id() {
    let h = harness();
    let id = h.world.current_chat().unwrap().id;
    h.send("What is 2+2?");
    let saved = h.system("chat-saved");
    assert_eq!(saved[0]["chatId"], id.as_str());
    assert_eq!(saved[0]["messageCount"], 1);
    let t = h.system("chat-title-updated");
    assert_eq!(t[0]["chatId"], id.as_str());
    assert_eq!(t[0]["name"], "What is 2+2?");
    assert_eq!(t[0]["titleSource"], "auto");
}

#[test]
fn llm_title_uses_the_last_human_message_before_the_world_is_idle() {
    // Spec ambiguity: several human messages before idle → the last one (and its first reply).
    let h = llm_title_harness();
    h.llm.reply("titler", "Two");
    h.clock.advance(1000);
    block_on(h.world.send("first question", None)).unwrap();
    block_on(h.world.send("second question", None)).unwrap();
    block_on(h.world.run_until_idle());
    let calls = h.llm.calls_to("titler");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].messages[0].content,
        "Write a short title (at most 6 words) for a chat that starts with:\nUser: second question"
    );
}
