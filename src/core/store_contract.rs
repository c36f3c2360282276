//! The store contract: async checks every [`Store`] must pass unchanged (the memory store here,
//! IndexedDB and the JS adapter in the wasm test suites). It only uses the [`Store`] trait, never
//! an implementation's internals. Each case gets a fresh store from `make`.
//!
//! The checks panic on failure (they are test code compiled into the library so that the wasm
//! test crates can call them).

use std::rc::Rc;

use crate::core::approval::{ApprovalRecord, ReplyState};
use crate::core::model::{
    Agent, Chat, MemoryEntry, MemoryRole, Message, MessageKind, Reasoning, ReasoningEffort,
    Timestamp, TitleSource, ToolCallRecord, ToolCallRef, WorldData,
};
use crate::core::store::{AgentChatState, Store, StoreError, StoreOp};

fn ok<T>(r: Result<T, StoreError>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("store contract: {what} failed: {e}"),
    }
}

/// A world record for the contract.
pub fn world(id: &str) -> WorldData {
    WorldData {
        id: id.to_string(),
        name: id.to_string(),
        description: None,
        turn_limit: 5,
        history_limit: 10,
        current_chat_id: None,
        chat_llm_provider: None,
        chat_llm_model: None,
        created_at: Timestamp(1),
        last_updated: Timestamp(1),
    }
}

/// An agent record for the contract.
pub fn agent(id: &str) -> Agent {
    Agent {
        id: id.to_string(),
        name: id.to_string(),
        agent_type: "default".into(),
        provider: "openai".into(),
        model: "m".into(),
        system_prompt: None,
        temperature: None,
        max_tokens: None,
        history_limit: None,
        stream: true,
        tools: Vec::new(),
        max_steps: crate::core::model::DEFAULT_MAX_STEPS,
        reasoning: None,
        llm_call_count: 0,
        last_llm_call: None,
        created_at: Timestamp(1),
        last_active: Timestamp(1),
        status: "active".into(),
    }
}

/// A chat record for the contract.
pub fn chat(world_id: &str, id: &str) -> Chat {
    Chat {
        id: id.to_string(),
        world_id: world_id.to_string(),
        name: "New Chat".into(),
        description: None,
        message_count: 0,
        title_source: TitleSource::Default,
        created_at: Timestamp(1),
        updated_at: Timestamp(1),
    }
}

fn msg(chat_id: &str, id: &str) -> Message {
    Message {
        message_id: id.to_string(),
        chat_id: Some(chat_id.to_string()),
        sender: "HUMAN".into(),
        content: format!("content of {id}"),
        created_at: Timestamp(2),
        reply_to_message_id: None,
        kind: MessageKind::Message,
        tool_calls: Vec::new(),
    }
}

fn mem(chat_id: &str, id: &str, role: MemoryRole) -> MemoryEntry {
    MemoryEntry {
        role,
        content: format!("memory {id}"),
        sender: (role == MemoryRole::User).then(|| "HUMAN".to_string()),
        message_id: id.to_string(),
        chat_id: Some(chat_id.to_string()),
        created_at: Timestamp(3),
        tool_calls: Vec::new(),
        tool_call_id: None,
        tool_name: None,
    }
}

pub(crate) fn append(w: &str, c: &str, id: &str) -> StoreOp {
    StoreOp::AppendMessage {
        world_id: w.into(),
        chat_id: c.into(),
        message: msg(c, id),
    }
}

pub(crate) fn remember(w: &str, c: &str, a: &str, id: &str) -> StoreOp {
    StoreOp::AppendMemory {
        world_id: w.into(),
        chat_id: c.into(),
        agent_id: a.into(),
        entry: mem(c, id, MemoryRole::User),
    }
}

fn state(w: &str, c: &str, a: &str, n: u32) -> StoreOp {
    StoreOp::PutAgentState {
        world_id: w.into(),
        chat_id: c.into(),
        state: AgentChatState {
            agent_id: a.into(),
            llm_call_count: n,
            last_llm_call: Some(Timestamp(i64::from(n))),
        },
    }
}

fn ids(v: &[Message]) -> Vec<&str> {
    v.iter().map(|m| m.message_id.as_str()).collect()
}

/// Runs every case against fresh stores from `make`.
pub async fn run_store_contract(make: &dyn Fn() -> Rc<dyn Store>) {
    worlds_round_trip(make()).await;
    agents_keep_first_put_order(make()).await;
    chats_and_messages_round_trip(make()).await;
    message_paging(make()).await;
    last_n_memory(make()).await;
    agent_states_round_trip(make()).await;
    invalid_batches_change_nothing(make()).await;
    cascade_deletes(make()).await;
    worlds_and_chats_are_isolated(make()).await;
    dump_holds_everything(make()).await;
    a_batch_may_rewrite_a_chat_it_deleted(make()).await;
    revisions_count_committed_batches(make()).await;
    a_stale_expected_revision_writes_nothing(make()).await;
    the_order_key_and_a_pointer_to_a_deleted_chat_are_kept(make()).await;
    tool_data_round_trips(make()).await;
    approvals_round_trip_and_cascade(make()).await;
    editing_deletes_and_replaces_in_place(make()).await;
    a_snapshot_reads_what_the_store_reads(make()).await;
}

/// A pending approval record (spec §9) with a reply state that uses every field.
pub fn approval(w: &str, c: &str, id: &str, agent: &str, at: i64) -> ApprovalRecord {
    use crate::core::llm::types::{ChatMessage, Role, ThinkingBlock, ToolCallPart, Usage};
    let call = |id: &str, name: &str, args: &str| ToolCallPart {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
        signature: None,
    };
    ApprovalRecord {
        approval_id: id.into(),
        world_id: w.into(),
        chat_id: Some(c.into()),
        agent_id: agent.into(),
        reply_id: format!("{id}-reply"),
        trigger: msg(c, &format!("{id}-m")),
        created_at: Timestamp(at),
        state: ReplyState {
            step: 2,
            messages: vec![
                ChatMessage::new(Role::System, "be careful"),
                ChatMessage::new(Role::User, "pay the bill ✓"),
                ChatMessage::tool_calls("Checking.", vec![call("c0", "lookup", "{}")]),
                ChatMessage::tool_result("c0", "lookup", r#"{"due":12.5}"#),
            ],
            text: "Checking.\n\nPaying now.".into(),
            usage: Some(Usage {
                input_tokens: Some(10),
                output_tokens: Some(4),
            }),
            tool_calls: vec![ToolCallRecord {
                tool_call_id: "c0".into(),
                tool_name: "lookup".into(),
                args: crate::core::json_write::json_value!({}),
                result: Some(crate::core::json_write::json_value!({"due": 12.5})),
                error: None,
            }],
            step_text: "Paying now.".into(),
            step_finish: Some("tool_calls".into()),
            step_usage: Some(Usage {
                input_tokens: Some(6),
                output_tokens: None,
            }),
            step_calls: vec![
                call("c1", "lookup", r#"{"x":1}"#),
                call("c2", "pay", r#"{"amount":12.5}"#),
            ],
            // Signed thinking goes back with the step's calls on resume: it must survive.
            step_thinking: vec![
                ThinkingBlock::Thinking {
                    thinking: "Look it up, then pay.".into(),
                    signature: "sig-1".into(),
                },
                ThinkingBlock::Redacted {
                    data: "opaque".into(),
                },
            ],
            step_records: vec![ToolCallRecord {
                tool_call_id: "c1".into(),
                tool_name: "lookup".into(),
                args: crate::core::json_write::json_value!({"x": 1}),
                result: None,
                error: Some("boom".into()),
            }],
            used_ids: vec!["c0".into(), "c1".into(), "c2".into()],
        },
    }
}

/// Pending approvals (spec §9): put with other records in one batch, listed per chat oldest
/// first, replaced by id, deleted (a missing one is no error), refused in a missing chat or
/// without a chat id (nothing of the batch written), and gone with their chat, agent or world.
/// They are not part of an export dump.
pub async fn approvals_round_trip_and_cascade(s: Rc<dyn Store>) {
    let put = |a: ApprovalRecord| StoreOp::PutApproval(Box::new(a));
    let a1 = approval("w", "c1", "ap1", "alice", 20);
    let a2 = approval("w", "c1", "ap2", "bob", 10);
    let a3 = approval("w", "c2", "ap3", "alice", 5);
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("alice"),
            },
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("bob"),
            },
            StoreOp::PutChat(chat("w", "c1")),
            StoreOp::PutChat(chat("w", "c2")),
            put(a1.clone()),
            put(a2.clone()),
            put(a3.clone()),
        ])
        .await,
        "approvals",
    );
    assert_eq!(
        ok(s.approvals("w", "c1").await, "approvals"),
        vec![a2.clone(), a1.clone()],
        "per chat, oldest first"
    );
    assert_eq!(ok(s.approvals("w", "c2").await, "approvals"), vec![a3]);
    assert_eq!(ok(s.approvals("w", "none").await, "approvals"), vec![]);
    assert_eq!(ok(s.approvals("x", "c1").await, "approvals"), vec![]);
    let dump = ok(s.dump("w").await, "dump");
    assert_eq!(dump.chats.len(), 2, "a dump has no approvals to carry");

    // Replace by id.
    let mut a1b = a1.clone();
    a1b.state.text = "changed".into();
    ok(s.apply(vec![put(a1b.clone())]).await, "replace");
    assert_eq!(
        ok(s.approvals("w", "c1").await, "approvals"),
        vec![a2.clone(), a1b.clone()]
    );

    // Refused: a missing chat, or no chat id; the batch changes nothing.
    let before = ok(s.approvals("w", "c1").await, "approvals");
    let r = s
        .apply(vec![
            StoreOp::DeleteApproval {
                world_id: "w".into(),
                chat_id: "c1".into(),
                approval_id: "ap1".into(),
            },
            put(approval("w", "nope", "ap9", "alice", 1)),
        ])
        .await;
    assert_eq!(r.map_err(|e| e.reason()), Err("invalid"), "missing chat");
    let mut no_chat = approval("w", "c1", "ap8", "alice", 1);
    no_chat.chat_id = None;
    let r = s.apply(vec![put(no_chat)]).await;
    assert_eq!(r.map_err(|e| e.reason()), Err("invalid"), "no chat id");
    assert_eq!(ok(s.approvals("w", "c1").await, "approvals"), before);

    // Delete; deleting again, or in a missing chat, is no error.
    for c in ["c1", "c1", "gone"] {
        ok(
            s.apply(vec![StoreOp::DeleteApproval {
                world_id: "w".into(),
                chat_id: c.into(),
                approval_id: "ap1".into(),
            }])
            .await,
            "delete approval",
        );
    }
    assert_eq!(ok(s.approvals("w", "c1").await, "approvals"), vec![a2]);

    // Cascades: the agent's, the chat's, the world's.
    ok(
        s.apply(vec![StoreOp::DeleteAgent {
            world_id: "w".into(),
            agent_id: "bob".into(),
        }])
        .await,
        "delete agent",
    );
    assert_eq!(ok(s.approvals("w", "c1").await, "approvals"), vec![]);
    assert_eq!(ok(s.approvals("w", "c2").await, "approvals").len(), 1);
    ok(
        s.apply(vec![
            put(approval("w", "c1", "ap4", "alice", 30)),
            StoreOp::DeleteChat {
                world_id: "w".into(),
                chat_id: "c2".into(),
            },
        ])
        .await,
        "delete chat",
    );
    assert_eq!(ok(s.approvals("w", "c2").await, "approvals"), vec![]);
    ok(
        s.apply(vec![StoreOp::PutChat(chat("w", "c2"))]).await,
        "chat again",
    );
    assert_eq!(
        ok(s.approvals("w", "c2").await, "approvals"),
        vec![],
        "a chat made again has none"
    );
    assert_eq!(ok(s.approvals("w", "c1").await, "approvals").len(), 1);
    ok(
        s.apply(vec![StoreOp::DeleteWorld {
            world_id: "w".into(),
        }])
        .await,
        "delete world",
    );
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c1")),
        ])
        .await,
        "world again",
    );
    assert_eq!(ok(s.approvals("w", "c1").await, "approvals"), vec![]);
}

fn mem_ids(v: &[MemoryEntry]) -> Vec<&str> {
    v.iter().map(|e| e.message_id.as_str()).collect()
}

/// Spec §10: `DeleteMessages` removes messages and every memory entry that came from them (all
/// agents, tool entries included) and keeps the order of the rest; `ReplaceMessage` puts the
/// new message in the old one's place (paging sees it there); invalid edits change nothing.
pub async fn editing_deletes_and_replaces_in_place(s: Rc<dyn Store>) {
    let mut ops = vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
        StoreOp::PutChat(chat("w", "other")),
    ];
    for id in ["m1", "m2", "m3", "m4"] {
        ops.push(append("w", "c", id));
    }
    ops.push(append("w", "other", "m2"));
    for (a, id) in [
        ("a", "m1"),
        ("a", "m2"),
        ("a", "m2"),
        ("a", "m3"),
        ("b", "m2"),
    ] {
        ops.push(remember("w", "c", a, id));
    }
    ops.push(remember("w", "c", "b", "m4"));
    ops.push(remember("w", "other", "a", "m2"));
    ok(s.apply(ops).await, "a chat to edit");
    ok(
        s.apply(vec![StoreOp::DeleteMessages {
            world_id: "w".into(),
            chat_id: "c".into(),
            message_ids: vec!["m2".into(), "m4".into(), "not-there".into()],
        }])
        .await,
        "delete two messages",
    );
    let all = ok(s.messages("w", "c", None, 100).await, "messages");
    assert_eq!(ids(&all), vec!["m1", "m3"]);
    let a = ok(s.last_memory("w", "c", "a", 100).await, "a");
    assert_eq!(mem_ids(&a), vec!["m1", "m3"], "both entries of m2 left");
    assert!(ok(s.last_memory("w", "c", "b", 100).await, "b").is_empty());
    let other = ok(s.messages("w", "other", None, 100).await, "other chat");
    assert_eq!(ids(&other), vec!["m2"], "another chat is untouched");
    assert_eq!(ok(s.last_memory("w", "other", "a", 9).await, "o").len(), 1);

    let mut r1 = msg("c", "r1");
    r1.content = "the new reply".into();
    ok(
        s.apply(vec![
            StoreOp::ReplaceMessage {
                world_id: "w".into(),
                chat_id: "c".into(),
                old_message_id: "m1".into(),
                message: r1.clone(),
            },
            append("w", "c", "m5"),
        ])
        .await,
        "replace m1 by r1",
    );
    let all = ok(s.messages("w", "c", None, 100).await, "messages");
    assert_eq!(ids(&all), vec!["r1", "m3", "m5"], "r1 takes m1's place");
    assert_eq!(all.first(), Some(&r1));
    assert_eq!(
        ids(&ok(s.messages("w", "c", Some("m3"), 10).await, "page")),
        vec!["r1"]
    );
    assert!(
        ok(s.messages("w", "c", Some("m1"), 10).await, "old id").is_empty(),
        "the old id is gone"
    );
    // An id freed by a delete may be appended again (at the end).
    ok(s.apply(vec![append("w", "c", "m2")]).await, "reuse m2");
    let all = ok(s.messages("w", "c", None, 100).await, "messages");
    assert_eq!(ids(&all), vec!["r1", "m3", "m5", "m2"]);

    let replace = |old: &str, new: &str| StoreOp::ReplaceMessage {
        world_id: "w".into(),
        chat_id: "c".into(),
        old_message_id: old.into(),
        message: msg("c", new),
    };
    for (bad, what) in [
        (vec![replace("m1", "x")], "an old id that is gone"),
        (vec![replace("r1", "m3")], "a new id already in the chat"),
        (
            vec![
                StoreOp::DeleteMessages {
                    world_id: "w".into(),
                    chat_id: "c".into(),
                    message_ids: vec!["m3".into()],
                },
                replace("m3", "y"),
            ],
            "an old id deleted earlier in the batch",
        ),
        (
            vec![
                append("w", "c", "z"),
                StoreOp::DeleteMessages {
                    world_id: "w".into(),
                    chat_id: "nope".into(),
                    message_ids: vec!["m3".into()],
                },
            ],
            "a chat that does not exist",
        ),
    ] {
        let r = s.apply(bad).await;
        assert!(matches!(r, Err(StoreError::Invalid(_))), "{what}: {r:?}");
        let all = ok(s.messages("w", "c", None, 100).await, "messages");
        assert_eq!(ids(&all), vec!["r1", "m3", "m5", "m2"], "{what}: unchanged");
    }
    // Within one batch: a message appended, then replaced.
    ok(
        s.apply(vec![append("w", "c", "t1"), replace("t1", "t2")])
            .await,
        "append then replace",
    );
    let all = ok(s.messages("w", "c", None, 100).await, "messages");
    assert_eq!(ids(&all), vec!["r1", "m3", "m5", "m2", "t2"]);
}

/// The tool fields (spec §9) are kept: an agent's `tools`, `maxSteps` and `reasoning`, a
/// message's `toolCalls` (a result and an error, arguments of any JSON shape), and the tool
/// shapes of memory entries (`assistant` with `toolCalls`, `tool` with `toolCallId`/`toolName`).
pub async fn tool_data_round_trips(s: Rc<dyn Store>) {
    let mut a = agent("alice");
    a.tools = vec!["get_weather".into(), "calc".into()];
    a.max_steps = 12;
    a.reasoning = Some(Reasoning {
        effort: Some(ReasoningEffort::High),
        budget_tokens: Some(2048),
    });
    let mut m = msg("c1", "r1");
    m.tool_calls = vec![
        ToolCallRecord {
            tool_call_id: "call_1".into(),
            tool_name: "get_weather".into(),
            args: crate::core::json_write::json_value!({"city": "Oslo", "days": [1, 2.5], "deep": {"x": null}}),
            result: Some(crate::core::json_write::json_value!({"temp": -3.5, "sky": "snow"})),
            error: None,
        },
        ToolCallRecord {
            tool_call_id: "call_2".into(),
            tool_name: "calc".into(),
            args: crate::core::json_write::json_value!("{not json"),
            result: None,
            error: Some("invalid arguments: not valid JSON".into()),
        },
    ];
    let mut calls = mem("c1", "r1", MemoryRole::Assistant);
    calls.content = String::new();
    calls.tool_calls = vec![ToolCallRef {
        tool_call_id: "call_1".into(),
        tool_name: "get_weather".into(),
        args: crate::core::json_write::json_value!({"city": "Oslo"}),
    }];
    let mut result = mem("c1", "r1", MemoryRole::Tool);
    result.content = r#"{"temp":-3.5}"#.into();
    result.tool_call_id = Some("call_1".into());
    result.tool_name = Some("get_weather".into());
    let entries = vec![mem("c1", "m1", MemoryRole::User), calls, result];
    let mut ops = vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: a.clone(),
        },
        StoreOp::PutChat(chat("w", "c1")),
        StoreOp::AppendMessage {
            world_id: "w".into(),
            chat_id: "c1".into(),
            message: m.clone(),
        },
    ];
    for e in &entries {
        ops.push(StoreOp::AppendMemory {
            world_id: "w".into(),
            chat_id: "c1".into(),
            agent_id: "alice".into(),
            entry: e.clone(),
        });
    }
    ok(s.apply(ops).await, "tool data");
    assert_eq!(ok(s.agents("w").await, "agents"), vec![a]);
    assert_eq!(
        ok(s.messages("w", "c1", None, 10).await, "messages"),
        vec![m]
    );
    assert_eq!(
        ok(s.last_memory("w", "c1", "alice", 10).await, "last_memory"),
        entries
    );
}

/// Put, replace, list and load worlds; a missing world loads as `None`.
pub async fn worlds_round_trip(s: Rc<dyn Store>) {
    assert_eq!(ok(s.load_world("w").await, "load_world"), None);
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutWorld(world("v")),
        ])
        .await,
        "put worlds",
    );
    let mut w2 = world("w");
    w2.current_chat_id = Some("c1".into());
    w2.chat_llm_model = Some("m".into());
    ok(
        s.apply(vec![StoreOp::PutWorld(w2.clone())]).await,
        "replace world",
    );
    assert_eq!(ok(s.load_world("w").await, "load_world"), Some(w2));
    let mut listed: Vec<String> = ok(s.list_worlds().await, "list_worlds")
        .into_iter()
        .map(|w| w.id)
        .collect();
    listed.sort();
    assert_eq!(listed, vec!["v".to_string(), "w".to_string()]);
}

/// Agents come back in the order they were first put; a replace keeps the position.
pub async fn agents_keep_first_put_order(s: Rc<dyn Store>) {
    let put = |a: Agent| StoreOp::PutAgent {
        world_id: "w".into(),
        agent: a,
    };
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            put(agent("zed")),
            put(agent("alice")),
            put(agent("mid")),
        ])
        .await,
        "put agents",
    );
    let mut a = agent("zed");
    a.model = "other".into();
    ok(s.apply(vec![put(a)]).await, "replace agent");
    let got = ok(s.agents("w").await, "agents");
    let names: Vec<&str> = got.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(names, vec!["zed", "alice", "mid"]);
    assert_eq!(got.first().map(|a| a.model.as_str()), Some("other"));
}

/// Chats and messages round-trip; messages keep append order.
pub async fn chats_and_messages_round_trip(s: Rc<dyn Store>) {
    let mut c = chat("w", "c1");
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(c.clone()),
            append("w", "c1", "m1"),
            append("w", "c1", "m2"),
        ])
        .await,
        "new chat with messages",
    );
    c.message_count = 2;
    c.name = "Renamed".into();
    c.title_source = TitleSource::Manual;
    ok(
        s.apply(vec![StoreOp::PutChat(c.clone())]).await,
        "replace chat",
    );
    assert_eq!(ok(s.chats("w").await, "chats"), vec![c]);
    let all = ok(s.messages("w", "c1", None, 100).await, "messages");
    assert_eq!(ids(&all), vec!["m1", "m2"]);
    assert_eq!(all.first(), Some(&msg("c1", "m1")));
}

/// Validation takes earlier ops of the batch into account both ways: a chat deleted and written
/// anew in one batch may get messages whose ids it had before the delete (they are gone).
pub async fn a_batch_may_rewrite_a_chat_it_deleted(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c")),
            append("w", "c", "m1"),
            append("w", "c", "m2"),
        ])
        .await,
        "chat with two messages",
    );
    ok(
        s.apply(vec![
            StoreOp::DeleteChat {
                world_id: "w".into(),
                chat_id: "c".into(),
            },
            StoreOp::PutChat(chat("w", "c")),
            append("w", "c", "m1"),
        ])
        .await,
        "delete the chat, write it anew and reuse an old message id",
    );
    let all = ok(s.messages("w", "c", None, 100).await, "messages");
    assert_eq!(
        ids(&all),
        vec!["m1"],
        "only the rewritten chat's message is left"
    );
    // Within one batch a duplicate is still a duplicate.
    let dup = s
        .apply(vec![append("w", "c", "m3"), append("w", "c", "m3")])
        .await;
    assert!(matches!(dup, Err(StoreError::Invalid(_))), "{dup:?}");
}

/// `messages(before, limit)`: oldest first, the `limit` messages before the cursor.
pub async fn message_paging(s: Rc<dyn Store>) {
    let mut ops = vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ];
    for i in 1..=5 {
        ops.push(append("w", "c", &format!("m{i}")));
    }
    ok(s.apply(ops).await, "append five");
    let page = |before: Option<&'static str>, limit: usize| {
        let s = s.clone();
        async move { ok(s.messages("w", "c", before, limit).await, "messages") }
    };
    assert_eq!(ids(&page(None, 2).await), vec!["m4", "m5"]);
    assert_eq!(ids(&page(Some("m4"), 2).await), vec!["m2", "m3"]);
    assert_eq!(ids(&page(Some("m2"), 2).await), vec!["m1"]);
    assert_eq!(ids(&page(Some("m1"), 2).await), Vec::<&str>::new());
    assert_eq!(ids(&page(None, 0).await), Vec::<&str>::new());
    assert_eq!(ids(&page(None, 10).await).len(), 5);
    assert_eq!(ids(&page(Some("nope"), 2).await), Vec::<&str>::new());
    assert!(ok(s.messages("w", "missing", None, 5).await, "messages").is_empty());
}

/// `last_memory(n)`: the last n entries, oldest first, per agent and chat.
pub async fn last_n_memory(s: Rc<dyn Store>) {
    let mut ops = vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ];
    for i in 1..=4 {
        ops.push(remember("w", "c", "a", &format!("e{i}")));
    }
    ops.push(StoreOp::AppendMemory {
        world_id: "w".into(),
        chat_id: "c".into(),
        agent_id: "a".into(),
        entry: mem("c", "e5", MemoryRole::Assistant),
    });
    ops.push(remember("w", "c", "b", "other"));
    ok(s.apply(ops).await, "append memory");
    let got = ok(s.last_memory("w", "c", "a", 3).await, "last_memory");
    let got_ids: Vec<&str> = got.iter().map(|e| e.message_id.as_str()).collect();
    assert_eq!(got_ids, vec!["e3", "e4", "e5"]);
    assert_eq!(got.last(), Some(&mem("c", "e5", MemoryRole::Assistant)));
    assert_eq!(ok(s.last_memory("w", "c", "a", 100).await, "all").len(), 5);
    assert!(ok(s.last_memory("w", "c", "a", 0).await, "none").is_empty());
    assert!(ok(s.last_memory("w", "c", "nobody", 3).await, "nobody").is_empty());
    ok(
        s.apply(vec![StoreOp::ClearMemory {
            world_id: "w".into(),
            chat_id: "c".into(),
            agent_id: "a".into(),
        }])
        .await,
        "clear memory",
    );
    assert!(ok(s.last_memory("w", "c", "a", 3).await, "cleared").is_empty());
    assert_eq!(ok(s.last_memory("w", "c", "b", 3).await, "b kept").len(), 1);
}

/// Agent states round-trip and are replaced per agent.
pub async fn agent_states_round_trip(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c")),
            state("w", "c", "a", 1),
            state("w", "c", "b", 2),
            state("w", "c", "a", 3),
        ])
        .await,
        "states",
    );
    let mut got = ok(s.agent_states("w", "c").await, "agent_states");
    got.sort_by(|x, y| x.agent_id.cmp(&y.agent_id));
    let counts: Vec<(String, u32)> = got
        .iter()
        .map(|s| (s.agent_id.clone(), s.llm_call_count))
        .collect();
    assert_eq!(counts, vec![("a".to_string(), 3), ("b".to_string(), 2)]);
    assert_eq!(
        got.first().and_then(|s| s.last_llm_call),
        Some(Timestamp(3))
    );
}

/// A batch with one invalid op changes nothing: appending to a missing chat, a chat in a
/// missing world, or a duplicate message id.
pub async fn invalid_batches_change_nothing(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c")),
            append("w", "c", "m1"),
        ])
        .await,
        "setup",
    );
    let bad_batches = vec![
        vec![append("w", "c", "m2"), append("w", "missing", "m3")],
        vec![append("w", "c", "m2"), remember("w", "missing", "a", "e")],
        vec![append("w", "c", "m2"), state("w", "missing", "a", 1)],
        vec![
            append("w", "c", "m2"),
            StoreOp::PutChat(chat("nowhere", "c2")),
        ],
        vec![
            append("w", "c", "m2"),
            StoreOp::PutAgent {
                world_id: "nowhere".into(),
                agent: agent("a"),
            },
        ],
        vec![append("w", "c", "m2"), append("w", "c", "m1")],
        vec![append("w", "c", "m2"), append("w", "c", "m2")],
        vec![
            StoreOp::DeleteChat {
                world_id: "w".into(),
                chat_id: "c".into(),
            },
            append("w", "c", "m2"),
        ],
    ];
    for (i, batch) in bad_batches.into_iter().enumerate() {
        assert!(s.apply(batch).await.is_err(), "bad batch {i} must fail");
        let all = ok(s.messages("w", "c", None, 100).await, "messages");
        assert_eq!(ids(&all), vec!["m1"], "bad batch {i} changed something");
    }
    assert!(ok(s.load_world("nowhere").await, "load").is_none());
    assert_eq!(ok(s.chats("w").await, "chats").len(), 1);
    // Ops may depend on earlier ops of the same batch.
    ok(
        s.apply(vec![
            StoreOp::PutChat(chat("w", "c2")),
            append("w", "c2", "m1"),
        ])
        .await,
        "chat created in the same batch",
    );
}

/// Deleting a chat, an agent or a world removes what hangs off it.
pub async fn cascade_deletes(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("a"),
            },
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("b"),
            },
            StoreOp::PutChat(chat("w", "c1")),
            StoreOp::PutChat(chat("w", "c2")),
            append("w", "c1", "m1"),
            append("w", "c2", "m2"),
            remember("w", "c1", "a", "e1"),
            remember("w", "c2", "a", "e2"),
            remember("w", "c2", "b", "e3"),
            state("w", "c1", "a", 1),
            state("w", "c2", "a", 1),
            state("w", "c2", "b", 1),
        ])
        .await,
        "setup",
    );
    ok(
        s.apply(vec![StoreOp::DeleteChat {
            world_id: "w".into(),
            chat_id: "c1".into(),
        }])
        .await,
        "delete chat",
    );
    let chats: Vec<String> = ok(s.chats("w").await, "chats")
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(chats, vec!["c2".to_string()]);
    assert!(ok(s.messages("w", "c1", None, 10).await, "m").is_empty());
    assert!(ok(s.last_memory("w", "c1", "a", 10).await, "mem").is_empty());
    assert!(ok(s.agent_states("w", "c1").await, "states").is_empty());
    // A re-created chat with the same id starts empty.
    ok(
        s.apply(vec![StoreOp::PutChat(chat("w", "c1"))]).await,
        "recreate",
    );
    assert!(ok(s.messages("w", "c1", None, 10).await, "m").is_empty());

    ok(
        s.apply(vec![StoreOp::DeleteAgent {
            world_id: "w".into(),
            agent_id: "a".into(),
        }])
        .await,
        "delete agent",
    );
    assert_eq!(ok(s.agents("w").await, "agents").len(), 1);
    assert!(ok(s.last_memory("w", "c2", "a", 10).await, "mem").is_empty());
    assert_eq!(
        ok(s.last_memory("w", "c2", "b", 10).await, "mem b").len(),
        1
    );
    let st = ok(s.agent_states("w", "c2").await, "states");
    assert!(st.iter().all(|s| s.agent_id != "a"));

    ok(
        s.apply(vec![StoreOp::DeleteWorld {
            world_id: "w".into(),
        }])
        .await,
        "delete world",
    );
    assert!(ok(s.load_world("w").await, "load").is_none());
    assert!(ok(s.agents("w").await, "agents").is_empty());
    assert!(ok(s.chats("w").await, "chats").is_empty());
    assert!(ok(s.messages("w", "c2", None, 10).await, "m").is_empty());
    assert!(ok(s.last_memory("w", "c2", "b", 10).await, "mem").is_empty());
    // Re-creating the world gives an empty world.
    ok(
        s.apply(vec![StoreOp::PutWorld(world("w"))]).await,
        "recreate",
    );
    assert!(ok(s.chats("w").await, "chats").is_empty());
    // Deleting something missing is not an error.
    ok(
        s.apply(vec![
            StoreOp::DeleteWorld {
                world_id: "ghost".into(),
            },
            StoreOp::DeleteChat {
                world_id: "w".into(),
                chat_id: "ghost".into(),
            },
        ])
        .await,
        "delete missing",
    );
}

/// The same chat id or agent id in two worlds, or two chats of one world, never mix.
pub async fn worlds_and_chats_are_isolated(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w1")),
            StoreOp::PutWorld(world("w2")),
            StoreOp::PutAgent {
                world_id: "w1".into(),
                agent: agent("a"),
            },
            StoreOp::PutChat(chat("w1", "c")),
            StoreOp::PutChat(chat("w2", "c")),
            StoreOp::PutChat(chat("w1", "d")),
            append("w1", "c", "m1"),
            append("w2", "c", "m1"),
            append("w1", "d", "m9"),
            remember("w1", "c", "a", "e1"),
            remember("w1", "d", "a", "e9"),
        ])
        .await,
        "setup",
    );
    assert!(ok(s.agents("w2").await, "agents").is_empty());
    assert_eq!(
        ids(&ok(s.messages("w1", "c", None, 10).await, "m")),
        vec!["m1"]
    );
    assert_eq!(
        ids(&ok(s.messages("w1", "d", None, 10).await, "m")),
        vec!["m9"]
    );
    let e = ok(s.last_memory("w1", "d", "a", 10).await, "mem");
    assert_eq!(e.len(), 1);
    assert!(ok(s.last_memory("w2", "c", "a", 10).await, "mem").is_empty());
    ok(
        s.apply(vec![StoreOp::DeleteWorld {
            world_id: "w1".into(),
        }])
        .await,
        "delete w1",
    );
    assert_eq!(
        ids(&ok(s.messages("w2", "c", None, 10).await, "m")),
        vec!["m1"]
    );
}

/// `dump` returns the world, agents, chats, messages, memories and states.
pub async fn dump_holds_everything(s: Rc<dyn Store>) {
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("a"),
            },
            StoreOp::PutChat(chat("w", "c")),
            append("w", "c", "m1"),
            append("w", "c", "m2"),
            remember("w", "c", "a", "e1"),
            state("w", "c", "a", 2),
        ])
        .await,
        "setup",
    );
    let d = ok(s.dump("w").await, "dump");
    assert_eq!(d.world, Some(world("w")));
    assert_eq!(d.agents.len(), 1);
    assert_eq!(d.chats.len(), 1);
    let c = d.chats.first();
    assert_eq!(c.and_then(|c| c.chat.clone()), Some(chat("w", "c")));
    assert_eq!(c.map(|c| ids(&c.messages).len()), Some(2));
    assert_eq!(
        c.map(|c| c.memories.iter().map(|(_, e)| e.len()).sum::<usize>()),
        Some(1)
    );
    assert_eq!(c.map(|c| c.states.len()), Some(1));
    let empty = ok(s.dump("ghost").await, "dump ghost");
    assert!(empty.world.is_none() && empty.chats.is_empty());
}

/// A store that tracks revisions (`revision` is `Some`) raises a world's revision by exactly one
/// per committed batch naming it (however many ops name it), never for a failed batch or a
/// batch naming only another world. This is what lets the engine tell that another writer moved
/// the world since its view was loaded. Stores that return `None` are not checked.
pub async fn revisions_count_committed_batches(s: Rc<dyn Store>) {
    let rev = |w: &'static str| {
        let s = s.clone();
        async move { ok(s.revision(w).await, "revision") }
    };
    let Some(r0) = rev("w").await else {
        return;
    };
    let x0 = rev("x").await;
    let step = |n: u64| Some(r0 + n);
    ok(
        s.apply(vec![
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c")),
        ])
        .await,
        "create",
    );
    assert_eq!(rev("w").await, step(1), "one batch, one step");
    ok(
        s.apply(vec![
            append("w", "c", "m1"),
            append("w", "c", "m2"),
            remember("w", "c", "a", "m1"),
            state("w", "c", "a", 1),
            StoreOp::PutChat(chat("w", "c")),
        ])
        .await,
        "a turn",
    );
    assert_eq!(
        rev("w").await,
        step(2),
        "many ops naming the world: one step"
    );
    let invalid = s.apply(vec![append("w", "missing", "m3")]).await;
    assert!(matches!(invalid, Err(StoreError::Invalid(_))));
    assert_eq!(rev("w").await, step(2), "a failed batch does not count");
    ok(
        s.apply(vec![StoreOp::PutWorld(world("x"))]).await,
        "other world",
    );
    assert_eq!(
        rev("w").await,
        step(2),
        "another world's batch does not count"
    );
    assert_ne!(rev("x").await, x0, "the other world moved");
    ok(
        s.apply(vec![StoreOp::PutWorld(world("w"))]).await,
        "settings",
    );
    assert_eq!(
        rev("w").await,
        step(3),
        "rewriting the world record keeps counting"
    );
}

/// [`StoreOp::ExpectRevision`], the check of the engine's optimistic writes: a batch that
/// expects the world's current revision commits (and raises it as usual); one that expects any
/// other revision fails with [`StoreError::Conflict`] before anything is written, its other ops
/// included, and leaves the revision where it was. A store that does not track revisions
/// (`revision` is `None`) has one writer and accepts the op as is.
pub async fn a_stale_expected_revision_writes_nothing(s: Rc<dyn Store>) {
    let expect = |rev: u64| StoreOp::ExpectRevision {
        world_id: "w".into(),
        rev,
    };
    let r0 = ok(s.revision("w").await, "revision");
    ok(
        s.apply(vec![
            expect(r0.unwrap_or(0)),
            StoreOp::PutWorld(world("w")),
            StoreOp::PutChat(chat("w", "c")),
        ])
        .await,
        "create, expecting the revision of a world that does not exist",
    );
    let Some(r1) = ok(s.revision("w").await, "revision") else {
        ok(
            s.apply(vec![expect(12345), append("w", "c", "m1")]).await,
            "a store without revisions ignores the check",
        );
        return;
    };
    ok(
        s.apply(vec![expect(r1), append("w", "c", "m1")]).await,
        "the current revision",
    );
    let r2 = ok(s.revision("w").await, "revision");
    assert_eq!(
        r2,
        Some(r1 + 1),
        "a checked batch raises the revision by one"
    );
    let mut renamed = chat("w", "c");
    renamed.name = "renamed".into();
    for stale in [r1, r2.unwrap_or(0) + 1] {
        let refused = s
            .apply(vec![
                expect(stale),
                append("w", "c", "m2"),
                StoreOp::PutChat(renamed.clone()),
            ])
            .await;
        assert!(
            matches!(
                refused.clone().map_err(StoreError::without_cause),
                Err(StoreError::Conflict(_))
            ),
            "expected revision {stale} while the world is at {r2:?}: a conflict, got {refused:?}"
        );
        assert_eq!(refused.clone().err().map(|e| e.reason()), Some("aborted"));
        if let Err(StoreError::Conflict(text)) = refused.map_err(StoreError::without_cause) {
            // Revisions are integers, and written as such by every store.
            assert_eq!(
                text,
                format!(
                    "world \"w\" is at revision {}, the batch expected {stale}",
                    r2.unwrap_or(0)
                )
            );
        }
        assert_eq!(ok(s.revision("w").await, "revision"), r2, "nothing counted");
        let msgs = ok(s.messages("w", "c", None, 10).await, "messages");
        let ids: Vec<&str> = msgs.iter().map(|m| m.message_id.as_str()).collect();
        assert_eq!(ids, ["m1"], "a refused batch writes nothing");
        let chats = ok(s.chats("w").await, "chats");
        assert_eq!(chats.len(), 1);
        assert_eq!(
            chats[0].name,
            chat("w", "c").name,
            "the chat was not rewritten"
        );
    }
    ok(
        s.apply(vec![expect(r1 + 1), append("w", "c", "m2")]).await,
        "after a conflict, the current revision commits",
    );
}

/// What the engine relies on, and no store may "repair": a chat's `updatedAt` comes back to
/// the millisecond (it is the order of same-millisecond updates, spec §4), and the world's
/// `currentChatId` keeps naming a chat after that chat is deleted (with no chat left, that is
/// how a world says "session mode on, the next message starts a new chat").
pub async fn the_order_key_and_a_pointer_to_a_deleted_chat_are_kept(s: Rc<dyn Store>) {
    let mut w = world("w");
    w.current_chat_id = Some("c1".into());
    let mut c1 = chat("w", "c1");
    c1.updated_at = Timestamp(1_795_000_000_000);
    let mut c2 = chat("w", "c2");
    c2.updated_at = Timestamp(1_795_000_000_001);
    ok(
        s.apply(vec![
            StoreOp::PutWorld(w.clone()),
            StoreOp::PutChat(c1),
            StoreOp::PutChat(c2.clone()),
        ])
        .await,
        "two chats a millisecond apart",
    );
    ok(
        s.apply(vec![StoreOp::DeleteChat {
            world_id: "w".into(),
            chat_id: "c1".into(),
        }])
        .await,
        "delete the current chat alone",
    );
    assert_eq!(ok(s.load_world("w").await, "world"), Some(w));
    assert_eq!(ok(s.chats("w").await, "chats"), vec![c2]);
}

/// What opening a world reads, read through [`Store::snapshot`] (one after another, nothing
/// else awaited in between, as the engine does), is what the store's own reads give: the
/// revision, a world and a missing one, agents in first-put order, chats with their stamps,
/// one chat's states, memory windows and approvals, and nothing of another world.
pub async fn a_snapshot_reads_what_the_store_reads(s: Rc<dyn Store>) {
    let mut w = world("w");
    w.current_chat_id = Some("c2".into());
    let (mut a, mut b) = (agent("a"), agent("b"));
    a.history_limit = Some(2);
    b.llm_call_count = 7;
    let mut c2 = chat("w", "c2");
    c2.created_at = Timestamp(5);
    let mut ops = vec![
        StoreOp::PutWorld(w.clone()),
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: b.clone(),
        },
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: a.clone(),
        },
        StoreOp::PutChat(chat("w", "c1")),
        StoreOp::PutChat(c2),
        append("w", "c1", "m1"),
        append("w", "c2", "m2"),
        append("w", "c2", "m3"),
        state("w", "c2", "a", 4),
        state("w", "c1", "b", 9),
        StoreOp::PutApproval(Box::new(approval("w", "c2", "p2", "a", 8))),
        StoreOp::PutApproval(Box::new(approval("w", "c2", "p1", "b", 6))),
        StoreOp::PutApproval(Box::new(approval("w", "c1", "p3", "a", 1))),
    ];
    for i in 1..=4 {
        ops.push(remember("w", "c2", "a", &format!("a{i}")));
        ops.push(remember("w", "c2", "b", &format!("b{i}")));
        ops.push(remember("w", "c1", "a", &format!("x{i}")));
    }
    // Another world, which the reads must not see.
    ops.push(StoreOp::PutWorld(world("w2")));
    ops.push(StoreOp::PutAgent {
        world_id: "w2".into(),
        agent: agent("z"),
    });
    ops.push(StoreOp::PutChat(chat("w2", "c2")));
    ops.push(state("w2", "c2", "a", 1));
    ok(s.apply(ops).await, "a world to read");

    let snapshot = ok(s.snapshot(), "snapshot");
    let through = snapshot.as_deref().unwrap_or(&*s);
    let got = view_reads(through).await;
    drop(snapshot);
    let expected = view_reads(&*s).await;
    assert_eq!(got, expected, "the snapshot reads what the store reads");
    let (_, world_read, missing, agents, chats, _, windows, approvals) = &got;
    assert_eq!(world_read.as_ref(), Some(&w));
    assert_eq!(*missing, None);
    assert_eq!(ids_of_agents(agents), vec!["b", "a"], "first-put order");
    assert_eq!(chats.len(), 2, "w's two chats");
    let windows: Vec<Vec<&str>> = windows.iter().map(|m| mem_ids(m)).collect();
    assert_eq!(
        windows,
        vec![vec!["b2", "b3", "b4"], vec!["a3", "a4"], vec![]]
    );
    let approvals: Vec<&str> = approvals.iter().map(|p| p.approval_id.as_str()).collect();
    assert_eq!(approvals, vec!["p1", "p2"], "oldest first");
}

type ViewReads = (
    Option<u64>,
    Option<crate::core::model::WorldData>,
    Option<crate::core::model::WorldData>,
    Vec<Agent>,
    Vec<Chat>,
    Vec<AgentChatState>,
    Vec<Vec<MemoryEntry>>,
    Vec<ApprovalRecord>,
);

/// The reads of opening world `w` with `c2` current, one after another (chats and states in
/// id order, as their order is free).
async fn view_reads(r: &dyn Store) -> ViewReads {
    let revision = ok(r.revision("w").await, "revision");
    let world = ok(r.load_world("w").await, "world");
    let missing = ok(r.load_world("nope").await, "no world");
    let agents = ok(r.agents("w").await, "agents");
    let mut chats = ok(r.chats("w").await, "chats");
    chats.sort_by(|x, y| x.id.cmp(&y.id));
    let mut states = ok(r.agent_states("w", "c2").await, "states");
    states.sort_by(|x, y| x.agent_id.cmp(&y.agent_id));
    let mut windows = Vec::new();
    for (agent, n) in [("b", 3), ("a", 2), ("nobody", 5)] {
        windows.push(ok(r.last_memory("w", "c2", agent, n).await, "window"));
    }
    let approvals = ok(r.approvals("w", "c2").await, "approvals");
    (
        revision, world, missing, agents, chats, states, windows, approvals,
    )
}

fn ids_of_agents(v: &[Agent]) -> Vec<&str> {
    v.iter().map(|a| a.id.as_str()).collect()
}
