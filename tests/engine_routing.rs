//! Spec §2 and §4: senders, who responds, turn limits, counter resets, the queue bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use agent_world_wasm::core::events::Topic;
use agent_world_wasm::core::model::{CreateWorld, MessageKind};
use engine_harness::*;
use futures_executor::block_on;

/// Whether `test-agent` (limit 5, count 0) calls the LLM for `content` from `sender`.
fn responds(content: &str, sender: &str) -> bool {
    let h = harness();
    h.add("test-agent");
    h.llm.reply("test-agent", "ok");
    h.send_as(content, Some(sender));
    h.calls("test-agent") == 1
}

#[test]
fn routing_examples_of_spec_section_4() {
    assert!(responds("@test-agent, please help", "user"));
    assert!(!responds("Hello @test-agent, how are you?", "user"));
    assert!(responds("Hello everyone!", "user"));
    assert!(!responds(
        "I think @test-agent should handle this.",
        "other-agent"
    ));
    assert!(responds("@Test-Agent, hi", "user"));
    assert!(!responds("@test-agent anything", "system"));
    assert!(!responds("anything at all", "system"));
    assert!(responds("@other-agent hi", "world"));
}

#[test]
fn rule1_an_agent_never_answers_its_own_message_case_insensitive() {
    assert!(!responds("@test-agent talking to myself", "Test-Agent"));
}

#[test]
fn rule2_text_turn_limit_reached_from_a_human_is_answered_differs() {
    assert!(responds(
        "Turn limit reached (5 LLM calls). Please take control of the conversation.",
        "HUMAN"
    ));
}

#[test]
fn rule4_world_messages_are_answered_by_every_agent() {
    let h = harness();
    for a in ["a", "b", "c"] {
        h.add(a);
        h.llm.reply(a, &format!("{a} here"));
    }
    h.send_as("@a only you", Some("world"));
    for a in ["a", "b", "c"] {
        assert_eq!(h.calls(a), 1, "{a}");
    }
}

#[test]
fn rule5_human_mid_text_mention_is_not_public() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.send("I think @alice knows");
    assert_eq!(h.calls("alice") + h.calls("bob"), 0);
}

#[test]
fn rule5_email_address_is_not_a_mention_so_the_message_is_public_differs() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send("write to bob@example.com please");
    assert_eq!(h.calls("alice"), 1);
    assert_eq!(h.calls("bob"), 1);
}

#[test]
fn rule5_every_mention_of_the_leading_run_counts_differs() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.add("carol");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send("@alice @bob what now?");
    assert_eq!(h.calls("alice"), 1);
    assert_eq!(h.calls("bob"), 1);
    assert_eq!(h.calls("carol"), 0);
}

#[test]
fn rule5_every_line_counts_for_line_start_mentions() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.add("charlie");
    h.llm.reply("alice", "a");
    h.llm.reply("charlie", "c");
    h.send("@alice, please start. Then ask @bob.\n@charlie, you finish.");
    assert_eq!(h.calls("alice"), 1);
    assert_eq!(h.calls("bob"), 0);
    assert_eq!(h.calls("charlie"), 1);
}

#[test]
fn rule6_agents_never_answer_other_agents_public_messages() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.send_as("Just thinking aloud", Some("bob"));
    assert_eq!(h.calls("alice"), 0);
}

#[test]
fn sender_rules_blank_sender_and_empty_content_are_rejected() {
    let h = harness();
    let e = block_on(h.world.send("hi", Some("  "))).unwrap_err();
    assert_eq!(e.code(), "invalid_sender");
    let e = block_on(h.world.send("  \n ", None)).unwrap_err();
    assert_eq!(e.code(), "empty_message");
    let long = "x".repeat(1_000_001);
    let e = block_on(h.world.send(&long, None)).unwrap_err();
    assert_eq!(e.code(), "message_too_long");
    let m = block_on(h.world.send("hi", None)).unwrap();
    assert_eq!(m.sender, "HUMAN");
    let m = block_on(h.world.send("hi", Some("You"))).unwrap();
    assert_eq!(m.sender, "You", "senders are kept as written");
    assert_eq!(m.kind, MessageKind::Message);
}

#[test]
fn rule7_turn_limit_notice_is_published_verbatim_with_reply_to_and_event() {
    let h = harness_with(CreateWorld {
        name: "Limits".into(),
        turn_limit: Some(2.0),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "one");
    h.llm.reply("alice", "two");
    h.send_as("@alice first", Some("bob"));
    h.send_as("@alice second", Some("bob"));
    assert_eq!(h.count("alice"), 2);
    h.clear_events();
    let m = h.send_as("@alice third", Some("bob"));
    assert_eq!(h.calls("alice"), 2, "no LLM call past the limit");
    let t = h.transcript();
    let notice = t.last().unwrap();
    assert_eq!(notice.kind, MessageKind::TurnLimit);
    assert_eq!(notice.sender, "alice");
    assert_eq!(
        notice.content,
        "@human Turn limit reached (2 LLM calls). Please take control of the conversation."
    );
    assert_eq!(
        notice.reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    let ev = h.system("turn-limit");
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0]["agentName"], "alice");
    assert_eq!(ev[0]["turnLimit"], 2);
    assert_eq!(ev[0]["messageId"], notice.message_id.as_str());
}

#[test]
fn rule7_no_notice_for_messages_not_addressed_to_the_agent_differs() {
    let h = harness_with(CreateWorld {
        name: "Limits".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "one");
    h.send_as("@alice first", Some("bob"));
    h.clear_events();
    h.send_as("@carol not you", Some("bob"));
    h.send_as("anything", Some("system"));
    assert!(h.system("turn-limit").is_empty());
    assert!(h
        .transcript()
        .iter()
        .all(|m| m.kind != MessageKind::TurnLimit));
}

#[test]
fn rule8_human_or_world_message_resets_counters_once_before_deciding() {
    let h = harness_with(CreateWorld {
        name: "Limits".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a1");
    h.send_as("@alice go", Some("bob"));
    assert_eq!(h.count("alice"), 1);
    h.llm.reply("alice", "a2");
    h.send("@alice again");
    assert_eq!(
        h.calls("alice"),
        2,
        "the human's message reset the counter first"
    );
    assert_eq!(h.count("alice"), 1);
    h.llm.reply("alice", "a3");
    h.send_as("@alice from the world", Some("world"));
    assert_eq!(h.count("alice"), 1);
    assert_eq!(h.calls("alice"), 3);
}

#[test]
fn turn_limit_invalid_values_are_rejected_and_zero_means_five() {
    let h = harness();
    assert_eq!(h.world.info().turn_limit, 5);
    for bad in [-1.0, 1.5] {
        let e = block_on(agent_world_wasm::core::engine::World::create(
            h.svc(),
            CreateWorld {
                name: format!("W {bad}"),
                turn_limit: Some(bad),
                ..Default::default()
            },
        ))
        .err()
        .unwrap();
        assert_eq!(e.code(), "invalid_turn_limit");
    }
    let w = block_on(agent_world_wasm::core::engine::World::create(
        h.svc(),
        CreateWorld {
            name: "Zero".into(),
            turn_limit: Some(0.0),
            ..Default::default()
        },
    ))
    .unwrap();
    assert_eq!(w.info().turn_limit, 5);
}

#[test]
fn queue_bound_refuses_calls_with_queue_full_and_gives_the_turn_back() {
    let h = harness();
    h.world.set_queue_limits(2, 1).unwrap();
    for a in ["a", "b", "c"] {
        h.add(a);
        h.llm.reply(a, "hi");
    }
    h.clock.advance(1000);
    block_on(h.world.send("hello all", None)).unwrap();
    let full = h.system("error");
    assert_eq!(full.len(), 1);
    assert_eq!(full[0]["code"], "queue_full");
    assert_eq!(full[0]["agentName"], "c");
    assert_eq!(h.count("c"), 0, "the refused call gives its turn back");
    assert_eq!(h.count("a"), 1, "a queued call has already used its turn");
    block_on(h.world.run_until_idle());
    assert_eq!(h.calls("a") + h.calls("b") + h.calls("c"), 2);
}

#[test]
fn ping_pong_to_the_turn_limit_then_notice_and_the_chain_stops() {
    let h = harness_with(CreateWorld {
        name: "Ping".into(),
        turn_limit: Some(3.0),
        ..Default::default()
    });
    h.add("ping");
    h.add("pong");
    for i in 0..5 {
        h.llm.reply("ping", &format!("@pong ball {i}"));
        h.llm.reply("pong", &format!("@ping ball {i}"));
    }
    h.send("@ping start");
    assert_eq!(h.calls("ping"), 3);
    assert_eq!(h.calls("pong"), 3);
    let t = h.transcript();
    let notices: Vec<_> = t
        .iter()
        .filter(|m| m.kind == MessageKind::TurnLimit)
        .collect();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].sender, "ping");
    assert_eq!(
        notices[0].content,
        "@human Turn limit reached (3 LLM calls). Please take control of the conversation."
    );
    let last_pong = t.iter().rev().find(|m| m.sender == "pong").unwrap();
    assert_eq!(
        notices[0].reply_to_message_id.as_deref(),
        Some(last_pong.message_id.as_str())
    );
    assert_eq!(
        t.last().unwrap().kind,
        MessageKind::TurnLimit,
        "the chain stops"
    );
    assert_eq!(h.system("turn-limit").len(), 1);
    // A human message resets the counters: the exchange can start again.
    h.send("@ping again");
    assert!(h.calls("ping") > 3, "the counters were reset");
    assert!(!h.of(Topic::World).is_empty());
}

#[test]
fn concurrency_one_keeps_transcript_order_of_agents_added() {
    let h = harness();
    for a in ["zed", "amy", "mo"] {
        h.add(a);
        h.llm.script(
            a,
            vec![
                agent_world_wasm::core::testing::Step::Yield,
                agent_world_wasm::core::testing::Step::Text(format!("{a} says hi")),
            ],
        );
    }
    h.send("Hello everyone!");
    let senders: Vec<String> = h.transcript().into_iter().map(|m| m.sender).collect();
    assert_eq!(senders, vec!["HUMAN", "zed", "amy", "mo"]);
}

#[test]
fn concurrency_two_runs_two_calls_at_once_and_all_finish() {
    let h = harness();
    h.world.set_queue_limits(100, 2).unwrap();
    for a in ["a", "b", "c"] {
        h.add(a);
        h.llm.script(
            a,
            vec![
                agent_world_wasm::core::testing::Step::Yield,
                agent_world_wasm::core::testing::Step::Text(format!("{a}!")),
            ],
        );
    }
    h.send("Hello everyone!");
    assert_eq!(h.transcript().len(), 4);
    assert_eq!(h.of(Topic::World).last().unwrap()["type"], "idle");
}

#[test]
fn debug_events_explain_each_decision_only_when_debug_is_on() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "hi");
    h.send("@alice hello");
    assert!(h.system("debug").is_empty());
    h.world.set_debug(true);
    h.llm.reply("alice", "hi");
    let m = h.send("@alice hello again");
    let d: Vec<_> = h
        .system("debug")
        .into_iter()
        .filter(|v| v["messageId"] == m.message_id.as_str())
        .collect();
    assert_eq!(d.len(), 2, "one per agent per message");
    assert_eq!(d[0]["agent"], "alice");
    assert_eq!(d[0]["decision"], "respond");
    assert_eq!(d[1]["agent"], "bob");
    assert_eq!(d[1]["decision"], "ignore");
    assert_eq!(
        d[1]["reason"],
        "not mentioned: the message addresses @alice"
    );
}

#[test]
fn debug_reasons_word_every_routing_rule() {
    let h = harness();
    h.world.set_debug(true);
    h.add("alice");
    h.add("bob");
    let reasons = |m: &str| -> Vec<(String, String)> {
        h.system("debug")
            .into_iter()
            .filter(|v| v["messageId"] == m)
            .map(|v| {
                let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                (s("agent"), s("reason"))
            })
            .collect()
    };
    let pair = |a: &str, r: &str| (a.to_string(), r.to_string());
    // A public human message: both answer; each reply is public, so the other ignores it.
    h.llm.reply("alice", "from alice");
    h.llm.reply("bob", "from bob");
    let m = h.send("Hello everyone");
    assert_eq!(
        reasons(&m.message_id),
        vec![
            pair("alice", "public message from a human"),
            pair("bob", "public message from a human"),
        ]
    );
    let reply = h
        .transcript()
        .into_iter()
        .find(|x| x.sender == "alice")
        .unwrap();
    assert_eq!(
        reasons(&reply.message_id),
        vec![
            pair("alice", "own message"),
            pair(
                "bob",
                "agents answer other agents only when mentioned at the start of a line; alice sent a public message"
            ),
        ]
    );
    // Mentions: at a line start by a human or an agent; elsewhere only.
    h.llm.reply("alice", "@bob over to you");
    h.llm.reply("bob", "done");
    let m = h.send("@alice start");
    assert_eq!(
        reasons(&m.message_id),
        vec![
            pair("alice", "mentioned at the start of a line by HUMAN"),
            pair("bob", "not mentioned: the message addresses @alice"),
        ]
    );
    let handoff = h
        .transcript()
        .into_iter()
        .find(|x| x.content == "@bob over to you")
        .unwrap();
    assert_eq!(
        reasons(&handoff.message_id)[1],
        pair("bob", "mentioned at the start of a line by agent alice")
    );
    let m = h.send("ask @alice and @bob");
    assert_eq!(
        reasons(&m.message_id)[0],
        pair(
            "alice",
            "not public: the message mentions @alice, @bob but not at the start of a line"
        )
    );
}

#[test]
fn debug_reason_names_the_turn_limit() {
    let h = harness_with(CreateWorld {
        name: "Dbg".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.world.set_debug(true);
    h.add("alice");
    h.llm.reply("alice", "x");
    h.send_as("@alice one", Some("bob"));
    h.send_as("@alice two", Some("bob"));
    let d = h.system("debug");
    let tl: Vec<_> = d.iter().filter(|v| v["decision"] == "turn-limit").collect();
    assert_eq!(tl.len(), 1);
    assert_eq!(tl[0]["reason"], "turn limit reached (1)");
}

#[test]
fn send_rejects_an_empty_sender_string_and_uses_human_for_none() {
    let h = harness();
    let e = block_on(h.world.send("hi", Some(""))).unwrap_err();
    assert_eq!(e.code(), "invalid_sender");
    assert!(h.of(Topic::Message).is_empty(), "nothing was published");
    let m = block_on(h.world.send("hi", None)).unwrap();
    assert_eq!(m.sender, "HUMAN");
}

#[test]
fn mentions_match_ids_only_test_underscore_agent_does_not_name_test_dash_agent() {
    // A line-start mention of nobody: `test-agent` is not named, so it does not answer.
    assert!(!responds("@test_agent please help", "user"));
    assert!(!responds("@test_agent please help", "other-agent"));
}

#[test]
fn rule2_engine_notices_are_never_answered_even_when_they_mention_an_agent() {
    use agent_world_wasm::core::llm::types::LlmError;
    use agent_world_wasm::core::testing::Step;
    let h = harness();
    h.world.set_debug(true);
    h.add("alice");
    h.add("bob");
    // alice's call fails after streaming a hand-off to bob: it is kept as `interrupted`.
    h.llm.script(
        "alice",
        vec![
            Step::Text("@bob please finish this".into()),
            Step::Fail(LlmError::Custom {
                message: "cut".into(),
            }),
        ],
    );
    h.llm.reply("bob", "never");
    h.send("@alice go");
    let notice = h.transcript().pop().unwrap();
    assert_eq!(notice.kind, MessageKind::Interrupted);
    assert_eq!(notice.content, "@bob please finish this");
    assert_eq!(h.calls("bob"), 0, "a notice is never answered");
    let d: Vec<_> = h
        .system("debug")
        .into_iter()
        .filter(|v| v["messageId"] == notice.message_id.as_str() && v["agent"] == "bob")
        .collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0]["decision"], "ignore");
    assert_eq!(d[0]["reason"], "engine notices are never answered");
}

#[test]
fn rule7_turn_limit_wording_is_verbatim_plural_included_for_limit_one() {
    let h = harness_with(CreateWorld {
        name: "One".into(),
        turn_limit: Some(1.0),
        ..Default::default()
    });
    h.add("alice");
    h.llm.reply("alice", "one");
    h.send_as("@alice first", Some("bob"));
    h.send_as("@alice second", Some("bob"));
    assert_eq!(
        h.transcript().last().unwrap().content,
        "@human Turn limit reached (1 LLM calls). Please take control of the conversation."
    );
}

#[test]
fn section4_decision_and_increment_happen_at_publish_saving_m_when_the_call_leaves_the_queue() {
    use agent_world_wasm::core::llm::types::{ChatMessage, Role};
    let h = harness();
    h.add("alice");
    h.llm.reply("alice", "a1");
    h.llm.reply("alice", "a2");
    h.clock.advance(1000);
    block_on(h.world.send("@alice one", None)).unwrap();
    assert_eq!(
        h.count("alice"),
        1,
        "the turn is used when the message is published"
    );
    block_on(h.world.send("@alice two", None)).unwrap();
    assert!(
        h.memory("alice").is_empty(),
        "M is saved when the call leaves the queue, not when it is queued"
    );
    block_on(h.world.run_until_idle());
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].messages,
        vec![ChatMessage::new(Role::User, "@alice one")]
    );
    assert_eq!(
        calls[1].messages,
        vec![
            ChatMessage::new(Role::User, "@alice one"),
            ChatMessage::new(Role::Assistant, "a1"),
            ChatMessage::new(Role::User, "@alice two"),
        ],
        "the input holds everything published before the call left the queue"
    );
}

#[test]
fn section7_queue_defaults_are_100_pending_and_concurrency_one() {
    let h = harness();
    for a in ["a", "b"] {
        h.add(a);
    }
    // 50 public messages queue 100 calls: all accepted; the 101st is refused.
    h.clock.advance(1000);
    for i in 0..50 {
        block_on(h.world.send(&format!("m{i}"), None)).unwrap();
    }
    assert!(h.system("error").is_empty());
    block_on(h.world.send("one more", None)).unwrap();
    let full = h.system("error");
    assert_eq!(full.len(), 2);
    assert!(full.iter().all(|e| e["code"] == "queue_full"));
}

#[test]
fn rule8_the_reset_applies_to_every_agent_not_only_the_addressed_ones() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send_as("@alice @bob go", Some("carol"));
    assert_eq!((h.count("alice"), h.count("bob")), (1, 1));
    h.llm.reply("alice", "a2");
    h.send("@alice only you");
    assert_eq!(h.count("alice"), 1, "reset to 0, then this call");
    assert_eq!(h.count("bob"), 0, "bob was reset too, though not addressed");
}

/// Spec §8 `unanswered`: a human message nobody answers says why, always (debug off).
#[test]
fn unanswered_human_messages_say_why_without_debug() {
    let h = harness();
    h.send("Anyone there? @bob");
    let e = h.system("unanswered");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["reason"], "no-agents");
    assert_eq!(e[0]["mentions"], serde_json::json!(["bob"]));

    h.add("alice");
    h.add("bob");
    h.clear_events();
    let m = h.send("I think @bob knows, ask @Alice");
    let e = h.system("unanswered");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["messageId"], m.message_id.as_str());
    assert_eq!(e[0]["reason"], "mid-line-mention");
    assert_eq!(e[0]["mentions"], serde_json::json!(["bob", "alice"]));

    h.clear_events();
    let m = h.send("@carol @dave can you help?");
    let e = h.system("unanswered");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["messageId"], m.message_id.as_str());
    assert_eq!(e[0]["reason"], "unknown-mention");
    assert_eq!(e[0]["mentions"], serde_json::json!(["carol", "dave"]));
    assert_eq!(h.calls("alice") + h.calls("bob"), 0);
}

#[test]
fn answered_or_non_human_messages_are_not_unanswered() {
    let h = harness();
    h.add("alice");
    h.add("bob");
    h.llm.reply("alice", "a");
    h.llm.reply("bob", "b");
    h.send("@carol @bob hi"); // bob is named: answered
    h.send("Hello everyone"); // public: answered
    h.send_as("I think @bob knows", Some("system"));
    h.send_as("@carol hi", Some("alice")); // an agent's message: not the human's question
    assert!(
        h.system("unanswered").is_empty(),
        "{:?}",
        h.system("unanswered")
    );
}
