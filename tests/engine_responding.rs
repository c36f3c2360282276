//! Spec §5: memory, the LLM input window, counting, SSE, failures, the reply pipeline.
#![cfg(not(target_arch = "wasm32"))] // native ring; the memory store's test hooks are native-only
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::events::Topic;
use agent_world_wasm::core::llm::types::{ChatMessage, LlmError, Role, Usage};
use agent_world_wasm::core::model::{AgentPatch, CreateWorld, MessageKind, NewAgent, WorldPatch};
use agent_world_wasm::core::testing::Step;
use engine_harness::*;
use futures_executor::block_on;

fn user(s: &str) -> ChatMessage {
    ChatMessage::new(Role::User, s)
}
fn asst(s: &str) -> ChatMessage {
    ChatMessage::new(Role::Assistant, s)
}

#[test]
fn public_message_to_three_agents_order_replies_memory_counters() {
    let h = harness();
    for a in ["alice", "bob", "carol"] {
        h.add(a);
        h.llm.reply(a, &format!("{a} reporting"));
    }
    let m = h.send("Hello everyone!");
    let t = h.transcript();
    let got: Vec<(&str, &str)> = t
        .iter()
        .map(|m| (m.sender.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("HUMAN", "Hello everyone!"),
            ("alice", "alice reporting"),
            ("bob", "bob reporting"),
            ("carol", "carol reporting"),
        ]
    );
    for (i, a) in ["alice", "bob", "carol"].iter().enumerate() {
        let reply = &t[i + 1];
        assert_eq!(
            reply.reply_to_message_id.as_deref(),
            Some(m.message_id.as_str())
        );
        assert_eq!(reply.kind, MessageKind::Message);
        assert_eq!(h.count(a), 1);
        assert_eq!(
            h.memory(a),
            vec![
                ("user".to_string(), "Hello everyone!".to_string()),
                ("assistant".to_string(), format!("{a} reporting")),
            ]
        );
        let mem = h.world.agent_memory(a).unwrap();
        assert_eq!(mem[0].sender.as_deref(), Some("HUMAN"));
        assert_eq!(mem[0].message_id, m.message_id);
        assert_eq!(mem[1].sender, None);
        assert!(h.world.agent(a).unwrap().last_llm_call.is_some());
    }
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "idle");
}

#[test]
fn step1_only_responding_agents_save_the_message() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "yes");
    h.send("@alice just you");
    assert_eq!(h.memory("alice").len(), 2);
    assert!(h.memory("bob").is_empty());
}

#[test]
fn step2_input_is_system_prompt_plus_window_with_m_once_differs() {
    let h = harness();
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        system_prompt: Some("You are Alice.".into()),
        ..Default::default()
    });
    h.llm.reply("alice", "first answer");
    h.llm.reply("alice", "second answer");
    h.send("first question");
    h.send("second question");
    let calls = h.llm.calls_to("alice");
    assert_eq!(
        calls[0].messages,
        vec![
            ChatMessage::new(Role::System, "You are Alice."),
            user("first question")
        ]
    );
    assert_eq!(
        calls[1].messages,
        vec![
            ChatMessage::new(Role::System, "You are Alice."),
            user("first question"),
            asst("first answer"),
            user("second question"),
        ],
        "M appears once, last"
    );
}

#[test]
fn step2_blank_system_prompt_counts_as_none() {
    let h = harness();
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        system_prompt: Some("   ".into()),
        ..Default::default()
    });
    h.llm.reply("alice", "ok");
    h.send("hi");
    assert_eq!(h.llm.calls()[0].messages, vec![user("hi")]);
}

#[test]
fn step2_history_limit_window_drops_a_leading_assistant_entry() {
    let h = harness_with(CreateWorld {
        name: "Window".into(),
        history_limit: Some(2),
        ..Default::default()
    });
    h.add("alice");
    for i in 0..3 {
        h.llm.reply("alice", &format!("a{i}"));
    }
    h.send("q0");
    h.send("q1");
    h.send("q2");
    // Memory before the third call: q0 a0 q1 a1 q2 → last 2 = [a1, q2] → a1 dropped.
    assert_eq!(h.llm.calls()[2].messages, vec![user("q2")]);
}

#[test]
fn step2_agent_history_limit_overrides_the_world() {
    let h = harness();
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        history_limit: Some(3),
        ..Default::default()
    });
    for i in 0..3 {
        h.llm.reply("alice", &format!("a{i}"));
    }
    h.send("q0");
    h.send("q1");
    h.send("q2");
    // Last 3 of q0 a0 q1 a1 q2 = [q1, a1, q2].
    assert_eq!(
        h.llm.calls()[2].messages,
        vec![user("q1"), asst("a1"), user("q2")]
    );
    assert!(h.memory("alice").len() <= 3, "RAM keeps only the window");
}

#[test]
fn step2_raising_the_history_limit_reloads_the_window_from_the_store() {
    let h = harness_with(CreateWorld {
        name: "Window".into(),
        history_limit: Some(1),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "a0");
    h.send("q0");
    assert_eq!(h.memory("alice").len(), 1);
    block_on(h.world.update(WorldPatch {
        history_limit: Some(10),
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(h.memory("alice").len(), 2);
    block_on(h.world.update_agent(
        "alice",
        AgentPatch {
            history_limit: Some(Some(1)),
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(h.memory("alice").len(), 1);
}

#[test]
fn step3_one_increment_per_call_and_non_streaming_still_emits_start_chunk_end_differs() {
    let h = harness();
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        stream: Some(false),
        ..Default::default()
    });
    h.llm.script(
        "alice",
        vec![
            Step::Text("Hel".into()),
            Step::Text("lo".into()),
            Step::Usage(Usage {
                input_tokens: Some(3),
                output_tokens: Some(2),
            }),
        ],
    );
    h.send("hi");
    assert_eq!(h.count("alice"), 1);
    let kinds: Vec<String> = h
        .of(Topic::Sse)
        .iter()
        .map(|v| v["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, vec!["start", "chunk", "end"]);
    assert_eq!(h.sse("chunk")[0]["content"], "Hello");
    assert_eq!(h.sse("end")[0]["usage"]["inputTokens"], 3);
    assert!(!h.llm.calls()[0].settings.stream);
}

#[test]
fn step4_sse_events_carry_the_id_of_the_reply_message_differs() {
    let h = harness();
    h.add("alice");
    h.llm.script(
        "alice",
        vec![
            Step::Reasoning("thinking".into()),
            Step::Text("Hi ".into()),
            Step::Text("there".into()),
        ],
    );
    h.send("hello");
    let reply = h.transcript().pop().unwrap();
    let sse = h.of(Topic::Sse);
    let kinds: Vec<&str> = sse.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["start", "reasoning", "chunk", "chunk", "end"]);
    for v in &sse {
        assert_eq!(v["messageId"], reply.message_id.as_str());
        assert_eq!(v["agentName"], "alice");
    }
    assert_eq!(reply.content, "Hi there");
    assert!(h.llm.calls()[0].settings.stream, "streaming is the default");
}

#[test]
fn step5_whitespace_reply_is_llm_empty_response_and_nothing_published_differs() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "  \n\t ");
    h.send("hello");
    assert_eq!(h.transcript().len(), 1);
    let e = h.system("error");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["code"], "llm_empty_response");
    assert_eq!(e[0]["message"], "LLM response is empty");
    assert_eq!(e[0]["agentName"], "alice");
    assert_eq!(h.count("alice"), 1);
}

#[test]
fn step5_llm_error_message_code_partial_content_interrupted_message_differs() {
    let h = harness();
    h.add("alice");
    h.llm.script(
        "alice",
        vec![
            Step::Text("Partial ".into()),
            Step::Text("answer".into()),
            Step::Fail(LlmError::Http {
                provider: "openai".into(),
                status: 500,
                status_text: "Internal Server Error".into(),
                body_excerpt: "boom".into(),
                retry_after_ms: None,
            }),
        ],
    );
    let m = h.send("hello");
    let sse_err = h.sse("error");
    assert_eq!(sse_err.len(), 1);
    assert_eq!(
        sse_err[0]["error"],
        "openai: HTTP 500 Internal Server Error: boom"
    );
    assert_eq!(sse_err[0]["partialContent"], "Partial answer");
    let e = h.system("error");
    assert_eq!(e[0]["code"], "llm_error");
    assert_eq!(
        e[0]["message"],
        "openai: HTTP 500 Internal Server Error: boom"
    );
    let t = h.transcript();
    let last = t.last().unwrap();
    assert_eq!(last.kind, MessageKind::Interrupted);
    assert_eq!(last.sender, "alice");
    assert_eq!(last.content, "Partial answer");
    assert_eq!(
        last.reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    assert_eq!(last.message_id, sse_err[0]["messageId"].as_str().unwrap());
    // M stays in memory, the partial text does not.
    assert_eq!(h.memory("alice"), vec![("user".into(), "hello".into())]);
    assert_eq!(h.count("alice"), 1);
    // The world stays usable.
    h.llm.reply("alice", "recovered");
    h.send("again");
    assert_eq!(h.transcript().last().unwrap().content, "recovered");
}

#[test]
fn step5_error_codes_for_timeout_stall_and_not_configured() {
    let cases = [
        (
            LlmError::Timeout {
                provider: "openai".into(),
                seconds: 120,
            },
            "llm_timeout",
            "openai: no complete reply within 120 s",
        ),
        (
            LlmError::Stalled {
                provider: "openai".into(),
                seconds: 30,
            },
            "llm_stalled",
            "openai: no data for 30 s",
        ),
        (
            LlmError::NotConfigured {
                provider: "anthropic".into(),
                missing: "apiKey".into(),
            },
            "provider_not_configured",
            "provider 'anthropic' is not configured: missing apiKey",
        ),
        (
            LlmError::Custom {
                message: "my model crashed".into(),
            },
            "llm_error",
            "my model crashed",
        ),
    ];
    for (err, code, msg) in cases {
        let h = harness();
        h.add("alice");
        h.llm.script("alice", vec![Step::Fail(err)]);
        h.send("hello");
        let e = h.system("error");
        assert_eq!(e[0]["code"], code);
        assert_eq!(e[0]["message"], msg.to_string());
        assert_eq!(h.sse("start").len(), 1);
        assert_eq!(h.sse("error")[0]["error"], msg);
        assert!(h.sse("error")[0].get("partialContent").is_none());
        assert_eq!(h.count("alice"), 1, "a failed call counts as a turn");
        assert_eq!(
            h.transcript().len(),
            1,
            "no interrupted message without text"
        );
    }
}

#[test]
fn step5_interrupted_text_is_not_kept_with_session_mode_off() {
    let h = harness();
    block_on(h.world.set_session_mode(false)).unwrap();
    h.add("alice");
    h.llm.script(
        "alice",
        vec![
            Step::Text("part".into()),
            Step::Fail(LlmError::Custom {
                message: "x".into(),
            }),
        ],
    );
    h.send("hello");
    assert_eq!(h.sse("error")[0]["partialContent"], "part");
    assert!(h
        .of(Topic::Message)
        .iter()
        .all(|m| m["kind"] != "interrupted"));
}

#[test]
fn step6_reply_is_cleaned_of_trailing_space_and_leading_blank_lines() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "\n\n  indented answer  \n\n");
    h.send("hello");
    assert_eq!(h.transcript().last().unwrap().content, "  indented answer");
}

#[test]
fn step7_pass_tag_publishes_remaining_text_then_the_pass_notice_from_system() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "I am out. <world>pass</world>");
    let m = h.send("hello");
    let t = h.transcript();
    let reply = &t[1];
    assert_eq!(reply.content, "I am out.");
    let notice = &t[2];
    assert_eq!(notice.kind, MessageKind::Pass);
    assert_eq!(notice.sender, "system");
    assert_eq!(notice.content, "@human alice is passing control to you");
    assert_eq!(
        notice.reply_to_message_id.as_deref(),
        Some(reply.message_id.as_str())
    );
    let _ = m;
}

#[test]
fn step7_pass_without_text_publishes_only_the_notice_replying_to_m() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "<world>pass</world>");
    let m = h.send("hello");
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].kind, MessageKind::Pass);
    assert_eq!(
        t[1].reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    assert_eq!(h.memory("alice").len(), 1, "nothing stored for the agent");
}

#[test]
fn step7_to_tag_addresses_the_named_agents_without_auto_mention() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.add("carol");
    h.llm
        .reply("alice", "<world>to: @bob, carol</world> over to you");
    h.llm.reply("bob", "b");
    h.llm.reply("carol", "c");
    h.send_as("@alice decide", Some("dave"));
    let t = h.transcript();
    assert_eq!(t[1].content, "@bob\n@carol\n\nover to you");
    assert_eq!(h.calls("bob"), 1);
    assert_eq!(h.calls("carol"), 1);
}

#[test]
fn step8_leading_self_mentions_are_removed_whole_names_only_differs() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "@alice @ALICE I can help.");
    h.send("hello");
    assert_eq!(h.transcript()[1].content, "I can help.");
}

#[test]
fn step8_self_mention_only_reply_is_kept_as_it_was() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "@alice");
    h.send("hello");
    assert_eq!(h.transcript()[1].content, "@alice");
}

#[test]
fn step9_auto_mention_examples() {
    let h = harness();
    h.add("me");
    h.add("pro");
    h.llm.reply("me", "Thank you!");
    h.send_as("@me thanks for the help", Some("other-agent"));
    assert_eq!(h.transcript()[1].content, "@other-agent Thank you!");

    let h = harness();
    h.add("pro");
    h.add("gm");
    h.llm.reply("pro", "@pro I will handle it");
    h.llm.reply("gm", "fine");
    h.send_as("@pro can you?", Some("gm"));
    assert_eq!(h.transcript()[1].content, "@gm I will handle it");
}

#[test]
fn step9_replies_to_humans_are_never_auto_mentioned() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "Sure.");
    h.send_as("hi", Some("user"));
    assert_eq!(h.transcript()[1].content, "Sure.");
}

#[test]
fn step9_a_hand_off_that_starts_with_a_mention_is_left_alone() {
    let h = harness();
    h.add("gm");
    h.add("con");
    h.llm.reply("gm", "@con please handle this");
    h.llm.reply("con", "done");
    h.send_as("@gm plan it", Some("pro"));
    assert_eq!(h.transcript()[1].content, "@con please handle this");
    assert_eq!(h.calls("con"), 1, "the hand-off routes to con");
}

#[test]
fn stop_mid_stream_aborts_with_llm_aborted_and_the_world_stays_usable() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm
        .script("alice", vec![Step::Text("Half".into()), Step::Hang]);
    h.llm.reply("bob", "never");
    h.clock.advance(1000);
    let m = block_on(h.world.send("Hello everyone!", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.stop();
        },
    ));
    let errs = h.sse("error");
    assert_eq!(
        errs.len(),
        2,
        "running and queued calls both end with an SSE error"
    );
    assert_eq!(errs.iter().filter(|e| e["agentName"] == "alice").count(), 1);
    let alice_err = errs.iter().find(|e| e["agentName"] == "alice").unwrap();
    assert_eq!(alice_err["error"], "openai: cancelled");
    assert_eq!(alice_err["partialContent"], "Half");
    let codes: Vec<_> = h
        .system("error")
        .iter()
        .map(|e| e["code"].clone())
        .collect();
    assert!(codes.iter().all(|c| c == "llm_aborted"));
    assert_eq!(
        h.sse("start").len(),
        2,
        "the queued call emits start then error"
    );
    assert_eq!(h.calls("bob"), 0);
    assert_eq!(
        h.count("bob"),
        1,
        "a call cancelled while queued keeps its turn"
    );
    let t = h.transcript();
    assert_eq!(t.last().unwrap().kind, MessageKind::Interrupted);
    assert_eq!(
        t.last().unwrap().reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    h.llm.reply("alice", "back");
    h.send("@alice still there?");
    assert_eq!(h.transcript().last().unwrap().content, "back");
}

#[test]
fn run_until_idle_twice_at_once_is_harmless() {
    let h = harness();
    h.add("alice");
    h.llm
        .script("alice", vec![Step::Yield, Step::Text("one".into())]);
    h.clock.advance(1000);
    block_on(h.world.send("hello", None)).unwrap();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        h.world.run_until_idle(),
    ));
    assert_eq!(h.calls("alice"), 1);
    assert_eq!(h.transcript().len(), 2);
    assert!(!h.world.is_busy());
}

#[test]
fn storage_failure_on_send_is_returned_and_nothing_is_routed() {
    let h = harness();
    h.add("alice");
    h.store
        .fail_next_apply(agent_world_wasm::core::store::StoreError::Backend(
            "disk".into(),
        ));
    let e = block_on(h.world.send("hello", None)).unwrap_err();
    assert_eq!(e.code(), "storage_error");
    assert_eq!(h.count("alice"), 0);
    assert!(!h.world.is_busy());
    assert!(h.of(Topic::Message).is_empty());
}

/// The store's revision of the world: every successful batch raises it by one.
fn writes(h: &H) -> u64 {
    use agent_world_wasm::core::store::Store;
    block_on(h.store.revision(&h.world.id())).unwrap().unwrap()
}

/// The stored memory of an agent, as a reopened world reads it.
fn stored_memory(h: &H, agent: &str) -> Vec<(String, String)> {
    let w = h.reopen();
    w.agent_memory(agent)
        .unwrap()
        .into_iter()
        .map(|e| {
            let role = serde_json::to_value(e.role).unwrap();
            (role.as_str().unwrap().to_string(), e.content)
        })
        .collect()
}

#[test]
fn a_reply_is_one_store_write_with_m_in_it() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "alice here");
    h.llm.reply("bob", "bob here");
    let before = writes(&h);
    h.send("Hello everyone!");
    // The human message, then one batch per reply: M rides with the reply (spec §5 steps 1
    // and 10), not a write of its own when the call starts.
    assert_eq!(writes(&h) - before, 3);
    for (agent, reply) in [("alice", "alice here"), ("bob", "bob here")] {
        let expected = vec![
            ("user".to_string(), "Hello everyone!".to_string()),
            ("assistant".to_string(), reply.to_string()),
        ];
        assert_eq!(h.memory(agent), expected);
        assert_eq!(stored_memory(&h, agent), expected);
    }
}

#[test]
fn m_is_in_the_input_and_in_agent_memory_while_its_call_runs() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "hi");
    // What `agentMemory` says while the reply streams (at its first chunk).
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (w, s2) = (h.world.downgrade(), seen.clone());
    let _sub = h.world.on(
        Topic::Sse,
        std::rc::Rc::new(move |e: &agent_world_wasm::core::events::Event| {
            let v = serde_json::to_value(e).unwrap();
            if v["type"] == "chunk" {
                let mem = w.upgrade().unwrap().agent_memory("alice").unwrap();
                s2.borrow_mut().extend(mem.into_iter().map(|m| m.content));
            }
            Ok(())
        }),
    );
    h.send("hello");
    assert_eq!(*seen.borrow(), vec!["hello".to_string()]);
    assert_eq!(h.llm.calls_to("alice")[0].messages, vec![user("hello")]);
    assert_eq!(stored_memory(&h, "alice").len(), 2);
}

#[test]
fn storage_failure_on_the_reply_write_is_reported_and_m_stays_in_memory() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "never published");
    h.clock.advance(1000);
    block_on(h.world.send("hello", None)).unwrap();
    h.store
        .fail_next_apply(agent_world_wasm::core::store::StoreError::Backend(
            "disk full".into(),
        ));
    block_on(h.world.run_until_idle());
    // The call was made; its reply (with M) could not be written: reported, not published.
    assert_eq!(h.calls("alice"), 1);
    let e = h.system("error");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0]["code"], "storage_error");
    assert_eq!(h.transcript().len(), 1);
    // M stays in memory (spec §5 step 5): written on its own once the call ended.
    assert_eq!(
        stored_memory(&h, "alice"),
        vec![("user".to_string(), "hello".to_string())]
    );
    assert_eq!(h.memory("alice"), stored_memory(&h, "alice"));
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "idle");
    // The world stays usable.
    h.llm.reply("alice", "here");
    h.send("again");
    assert_eq!(h.calls("alice"), 2);
    assert_eq!(h.transcript().len(), 3);
}

#[test]
fn a_failed_call_writes_m_with_its_interrupted_message_or_alone() {
    let h = harness();
    h.add("alice");
    let fail = || {
        Step::Fail(LlmError::Http {
            provider: "openai".into(),
            status: 500,
            status_text: "Internal Server Error".into(),
            body_excerpt: "boom".into(),
            retry_after_ms: None,
        })
    };
    h.llm
        .script("alice", vec![Step::Text("Partial".into()), fail()]);
    let before = writes(&h);
    h.send("one");
    // The human message, then M with the interrupted message in one batch.
    assert_eq!(writes(&h) - before, 2);
    h.llm.script("alice", vec![fail()]);
    let before = writes(&h);
    h.send("two");
    // Nothing streamed: M alone.
    assert_eq!(writes(&h) - before, 2);
    let expected: Vec<(String, String)> = ["one", "two"]
        .iter()
        .map(|m| ("user".to_string(), m.to_string()))
        .collect();
    assert_eq!(stored_memory(&h, "alice"), expected);
    assert_eq!(h.memory("alice"), expected);
}

#[test]
fn sender_type_is_case_insensitive_user_is_a_human_differs() {
    let h = harness_with(CreateWorld {
        name: "Case".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "one");
    h.llm.reply("alice", "two");
    h.send_as("@alice go", Some("bob"));
    assert_eq!(h.count("alice"), 1);
    // `USER` is a human: it resets the counters and gets a reply that is not auto-mentioned.
    h.send_as("@alice again", Some("USER"));
    assert_eq!(h.calls("alice"), 2);
    assert_eq!(h.transcript().last().unwrap().content, "two");
    // `SYSTEM` is system: never answered.
    h.send_as("@alice hello", Some("SYSTEM"));
    assert_eq!(h.calls("alice"), 2);
}

#[test]
fn step8_a_longer_name_is_not_a_self_mention_differs() {
    let h = harness();
    h.add("gm");
    h.llm.reply("gm", "@gmail is down");
    h.send("status?");
    assert_eq!(h.transcript()[1].content, "@gmail is down");
}

#[test]
fn event_order_of_one_exchange() {
    let h = harness();
    h.add("alice");
    h.llm.script("alice", vec![Step::Text("Hi".into())]);
    h.send("What is 2+2?");
    let seq: Vec<String> = h
        .events
        .borrow()
        .iter()
        .map(|(t, v)| format!("{}:{}", t.as_str(), v["type"].as_str().unwrap_or("-")))
        .collect();
    assert_eq!(
        seq,
        vec![
            "world:agent-added",
            "message:-",
            "system:chat-saved",
            "system:chat-title-updated",
            "sse:start",
            "sse:chunk",
            "sse:end",
            "message:-",
            "system:chat-saved",
            "world:idle",
        ]
    );
}

#[test]
fn a_callback_may_stop_the_world_from_inside_a_chunk() {
    let h = harness();
    h.add("alice");
    h.llm.script(
        "alice",
        vec![
            Step::Text("first ".into()),
            Step::Yield,
            Step::Text("second".into()),
        ],
    );
    let w = h.world.clone();
    let _sub = h.world.on(
        Topic::Sse,
        std::rc::Rc::new(move |e: &agent_world_wasm::core::events::Event| {
            let v = serde_json::to_value(e).unwrap();
            if v["type"] == "chunk" {
                w.stop();
            }
            Ok(())
        }),
    );
    h.send("hello");
    let err = h.sse("error");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0]["partialContent"], "first ");
    assert_eq!(
        h.transcript().last().unwrap().kind,
        MessageKind::Interrupted
    );
}

#[test]
fn send_while_running_is_picked_up_by_the_running_loop() {
    let h = harness();
    h.world.set_queue_limits(100, 2).unwrap();
    h.add("alice");
    h.add("bob");
    h.llm
        .script("alice", vec![Step::Text("wait".into()), Step::Hang]);
    h.llm.reply("bob", "bob answers");
    h.clock.advance(1000);
    block_on(h.world.send("@alice long job", None)).unwrap();
    let w = h.world.clone();
    let h_ref = &h;
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.send("@bob quick one", None).await.unwrap();
            // A second runner returns at once; the first one runs bob's call next to alice's.
            w.run_until_idle().await;
            for _ in 0..5 {
                Yield(false).await;
            }
            assert_eq!(
                h_ref.calls("bob"),
                1,
                "bob ran while alice was still streaming"
            );
            w.stop();
        },
    ));
    let senders: Vec<String> = h.transcript().into_iter().map(|m| m.sender).collect();
    assert!(senders.contains(&"bob".to_string()));
    assert_eq!(
        h.transcript().last().unwrap().kind,
        MessageKind::Interrupted
    );
}

struct Yield(bool);
impl std::future::Future for Yield {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            std::task::Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}

#[test]
fn stop_while_a_message_is_being_written_cancels_the_calls_it_routes() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "never");
    h.llm.reply("bob", "never");
    h.store.set_apply_delay(3);
    h.clock.advance(1000);
    let w = h.world.clone();
    let (sent, ()) = block_on(futures_util::future::join(
        h.world.send("Hello everyone!", None),
        async move {
            Yield(false).await;
            w.stop();
        },
    ));
    sent.unwrap();
    h.store.set_apply_delay(0);
    block_on(h.world.run_until_idle());
    assert_eq!(h.calls("alice") + h.calls("bob"), 0);
    assert_eq!(h.sse("start").len(), 2);
    assert_eq!(h.sse("error").len(), 2);
    assert!(h.system("error").iter().all(|e| e["code"] == "llm_aborted"));
    assert_eq!(h.count("alice"), 1, "a cancelled call keeps its turn");
    assert_eq!(
        h.transcript().len(),
        1,
        "the human message itself was published"
    );
}

#[test]
fn everything_still_works_with_a_slow_store() {
    let h = harness();
    h.store.set_apply_delay(2);
    for a in ["alice", "bob"] {
        h.add(a);
        h.llm.reply(a, &format!("{a} here"));
    }
    h.send("Hello everyone!");
    let senders: Vec<String> = h.transcript().into_iter().map(|m| m.sender).collect();
    assert_eq!(senders, vec!["HUMAN", "alice", "bob"]);
    assert_eq!(h.memory("bob").len(), 2);
}

#[test]
fn step3_counter_and_last_llm_call_are_persisted_when_the_message_is_published() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "hi");
    h.clock.advance(1000);
    let now = agent_world_wasm::core::model::Timestamp(
        agent_world_wasm::core::clock::Clock::now_ms(&*h.clock),
    );
    block_on(h.world.send("hello", None)).unwrap();
    // Not run yet: the queued call has already used (and persisted) its turn.
    let w2 = h.reopen();
    let a = w2.agent("alice").unwrap();
    assert_eq!(a.llm_call_count, 1);
    assert_eq!(a.last_llm_call, Some(now));
    assert_eq!(h.world.agent("alice").unwrap().last_llm_call, Some(now));
}

#[test]
fn step7_done_tag_text_is_published_without_auto_mention_and_stored() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "@bob All set. <world>done</world>");
    h.send_as("@alice finish it", Some("bob"));
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[1].content, "All set.",
        "no auto-mention after a world tag"
    );
    assert_eq!(
        h.memory("alice"),
        vec![
            ("user".into(), "@alice finish it".into()),
            ("assistant".into(), "All set.".into())
        ]
    );
    assert_eq!(h.calls("bob"), 0);
}

#[test]
fn step7_stop_tag_with_nothing_left_publishes_and_stores_nothing() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "@bob\n<world>stop</world>");
    h.send_as("@alice anything?", Some("bob"));
    assert_eq!(h.transcript().len(), 1);
    assert_eq!(
        h.memory("alice"),
        vec![("user".into(), "@alice anything?".into())]
    );
    assert!(
        h.system("error").is_empty(),
        "an empty stop is not an error"
    );
}

#[test]
fn step7_pass_reply_to_an_agent_is_not_auto_mentioned() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "Over. <world>PASS</world>");
    h.send_as("@alice your move", Some("bob"));
    let t = h.transcript();
    assert_eq!(t[1].content, "Over.");
    assert_eq!(t[2].kind, MessageKind::Pass);
    assert_eq!(t[2].content, "@human alice is passing control to you");
}

#[test]
fn step7_empty_to_list_behaves_like_done() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "Thanks. <world>to: , </world>");
    h.send_as("@alice go", Some("bob"));
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].content, "Thanks.");
}

#[test]
fn step7_tag_inside_a_fenced_code_block_does_not_count() {
    let h = harness();
    h.add("alice");
    let reply = "Write this:\n```\n<world>pass</world>\n```";
    h.llm.reply("alice", reply);
    h.send("how do I pass?");
    let t = h.transcript();
    assert_eq!(t.len(), 2, "no pass notice");
    assert_eq!(t[1].content, reply);
}

#[test]
fn step9_a_reply_to_the_world_is_auto_mentioned() {
    // The contract: auto-mention unless the sender of M is `human` or this agent.
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "Noted.");
    h.send_as("The sun sets.", Some("World"));
    assert_eq!(h.transcript()[1].content, "@World Noted.");
}

#[test]
fn step5_non_streaming_failure_still_emits_start_and_error() {
    let h = harness();
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        stream: Some(false),
        ..Default::default()
    });
    h.llm.script(
        "alice",
        vec![Step::Fail(LlmError::Custom {
            message: "nope".into(),
        })],
    );
    h.send("hello");
    let kinds: Vec<String> = h
        .of(Topic::Sse)
        .iter()
        .map(|v| v["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, vec!["start", "error"]);
    assert_eq!(h.count("alice"), 1);
}

#[test]
fn step5_m_stays_in_memory_after_an_empty_reply() {
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", " \n ");
    h.send("hello");
    assert_eq!(h.memory("alice"), vec![("user".into(), "hello".into())]);
}

#[test]
fn step5_whitespace_only_partial_text_is_reported_but_not_kept_as_interrupted() {
    // Spec ambiguity: a blank partial text is carried by the SSE error, not kept in the chat.
    let h = harness();
    h.add("alice");
    h.llm.script(
        "alice",
        vec![
            Step::Text(" \n ".into()),
            Step::Fail(LlmError::Custom {
                message: "x".into(),
            }),
        ],
    );
    h.send("hello");
    assert_eq!(h.sse("error")[0]["partialContent"], " \n ");
    assert_eq!(h.transcript().len(), 1);
}

#[test]
fn cancel_replies_to_stops_only_the_calls_answering_the_given_messages() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm
        .script("alice", vec![Step::Text("Half".into()), Step::Hang]);
    h.llm.reply("bob", "bob answers the second message");
    h.clock.advance(1000);
    let first = block_on(h.world.send("@alice take your time", None)).unwrap();
    let second = block_on(h.world.send("@bob a quick one", None)).unwrap();
    let w = h.world.clone();
    let ids = vec![first.message_id.clone()];
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.cancel_replies_to(&ids);
        },
    ));
    let errs = h.sse("error");
    assert_eq!(errs.len(), 1, "only alice's call is cancelled: {errs:?}");
    assert_eq!(errs[0]["agentName"], "alice");
    assert_eq!(errs[0]["error"], "openai: cancelled");
    let bob_reply = h
        .transcript()
        .into_iter()
        .find(|m| m.sender == "bob")
        .expect("bob still answers");
    assert_eq!(bob_reply.content, "bob answers the second message");
    assert_eq!(
        bob_reply.reply_to_message_id.as_deref(),
        Some(second.message_id.as_str())
    );
}

#[test]
fn removing_an_agent_mid_call_keeps_none_of_its_memory() {
    let h = harness();
    h.add("alice");
    h.llm.script("alice", vec![Step::Hang]);
    h.clock.advance(1000);
    block_on(h.world.send("hello", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            // The call is running (its M held, not written): the agent goes.
            assert!(w.remove_agent("alice").await.unwrap());
        },
    ));
    // An agent of the same name starts with no memory, stored or in RAM.
    h.add("alice");
    assert!(stored_memory(&h, "alice").is_empty());
    assert!(h.memory("alice").is_empty());
}

#[test]
fn clearing_an_agents_memory_mid_call_clears_its_held_m_too() {
    let h = harness();
    h.add("alice");
    h.llm.script("alice", vec![Step::Hang]);
    h.clock.advance(1000);
    block_on(h.world.send("hello", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.clear_agent_memory("alice").await.unwrap();
            w.stop();
        },
    ));
    assert!(h.memory("alice").is_empty());
    assert!(stored_memory(&h, "alice").is_empty());
}

#[test]
fn deleting_m_mid_call_leaves_no_memory_entry_of_it() {
    let h = harness();
    h.add("alice");
    h.llm.script("alice", vec![Step::Hang]);
    h.clock.advance(1000);
    let m = block_on(h.world.send("hello", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.delete_message(&m.message_id).await.unwrap();
            w.stop();
        },
    ));
    assert!(h.transcript().is_empty());
    assert!(h.memory("alice").is_empty());
    assert!(stored_memory(&h, "alice").is_empty());
}

#[test]
fn a_call_cancelled_by_a_chat_switch_keeps_m_in_the_chat_it_left() {
    let h = harness();
    h.add("alice");
    let fail_after = |text: &str| vec![Step::Text(text.into()), Step::Hang];
    h.llm.script("alice", fail_after("Half"));
    h.clock.advance(1000);
    let first = h.world.current_chat().unwrap().id;
    block_on(h.world.send("one", None)).unwrap();
    let w = h.world.clone();
    block_on(futures_util::future::join(
        h.world.run_until_idle(),
        async move {
            w.new_chat().await.unwrap();
        },
    ));
    // In the new chat: nothing of it.
    assert!(h.memory("alice").is_empty());
    // The chat it left kept M (with the interrupted text as a message, never in memory).
    block_on(h.world.load_chat(&first)).unwrap();
    let expected = vec![("user".to_string(), "one".to_string())];
    assert_eq!(h.memory("alice"), expected);
    assert_eq!(stored_memory(&h, "alice"), expected);
    let kinds: Vec<MessageKind> = h.transcript().into_iter().map(|m| m.kind).collect();
    assert_eq!(kinds, vec![MessageKind::Message, MessageKind::Interrupted]);
}
