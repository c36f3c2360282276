//! Spec §9 "Approval" through the engine: a call of a tool that needs approval waits for the
//! application's answer (persisted with the reply's state, one store change), `approve` runs
//! it and resumes the reply, `deny` gives the model an error result and resumes, and `stop()`,
//! a chat switch, deleting the chat cancel it; pending approvals survive a reopen, and two
//! writers on one store never answer one twice.
#![cfg(not(target_arch = "wasm32"))] // native ring; the memory store's test hooks are native-only
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use std::rc::Rc;

use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::llm::types::{Role, ThinkingBlock};
use agent_world_wasm::core::model::{MessageKind, NewAgent};
use agent_world_wasm::core::store::{Store, StoreError};
use agent_world_wasm::core::testing::{AskWhen, ScriptedTools, Step, ToolReply};
use agent_world_wasm::core::tools::{NeedsApproval, ToolDefinition, ToolSpec};
use engine_harness::*;
use futures_executor::block_on;
use serde_json::{json, Value};

/// serde_json's `json!`, as the crate's own JSON value (what tool arguments, results and
/// schemas are).
macro_rules! cjson {
    ($($t:tt)+) => {
        serde_json::from_value::<agent_world_wasm::core::json::Value>(serde_json::json!($($t)+))
            .unwrap()
    };
}

fn def(name: &str, needs: NeedsApproval) -> ToolDefinition {
    ToolDefinition {
        spec: ToolSpec {
            name: name.into(),
            description: format!("the {name} tool"),
            parameters: cjson!({"type": "object", "properties": {"city": {"type": "string"}}}),
        },
        needs_approval: needs,
        timeout_ms: 30_000,
    }
}

/// Registers `pay` (always asks), `lookup` (never asks) and `fetch` (asks by its arguments) on
/// `world` over `exec`.
fn register(world: &World, exec: &Rc<ScriptedTools>) {
    world
        .register_tool(def("pay", NeedsApproval::Always), exec.clone())
        .unwrap();
    world
        .register_tool(def("lookup", NeedsApproval::Never), exec.clone())
        .unwrap();
    world
        .register_tool(def("fetch", NeedsApproval::ByArgs), exec.clone())
        .unwrap();
}

fn world_with_tools() -> (H, Rc<ScriptedTools>) {
    let h = harness();
    let exec = Rc::new(ScriptedTools::new());
    register(&h.world, &exec);
    exec.reply("pay", ToolReply::Value(cjson!({"paid": true})));
    exec.reply("lookup", ToolReply::Value(cjson!({"found": 1})));
    exec.reply("fetch", ToolReply::Value(cjson!({"body": "ok"})));
    h.add_with(NewAgent {
        name: "alice".into(),
        provider: "openai".into(),
        model: "alice".into(),
        tools: Some(vec!["pay".into(), "lookup".into(), "fetch".into()]),
        ..Default::default()
    });
    (h, exec)
}

/// Scripts step 1 of alice: text, then one call of `tool`.
fn script_call(h: &H, tool: &str, args: &str) {
    h.llm.script(
        "alice",
        vec![
            Step::Text("Let me do that.".into()),
            Step::call("call_1", tool, args),
        ],
    );
}

fn stored_approvals(h: &H) -> Vec<agent_world_wasm::core::approval::ApprovalRecord> {
    let chat = h.world.current_chat().unwrap().id;
    block_on(h.store.approvals(&h.world.id(), &chat)).unwrap()
}

fn approval_id(h: &H) -> String {
    let p = h.world.pending_approvals();
    assert_eq!(p.len(), 1, "{p:?}");
    p[0].approval_id.clone()
}

/// The result the model was given for `call_id` in the last call to alice.
fn result_given(h: &H, call_id: &str) -> Value {
    let calls = h.llm.calls_to("alice");
    let last = calls.last().unwrap();
    let m = last
        .messages
        .iter()
        .rev()
        .find(|m| {
            m.tool_result
                .as_ref()
                .is_some_and(|r| r.tool_call_id == call_id)
        })
        .unwrap_or_else(|| panic!("no result for {call_id} in {:?}", last.messages));
    serde_json::from_str(&m.content).unwrap()
}

#[test]
fn a_call_that_needs_approval_waits_persisted_and_the_world_is_idle() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", r#"{"city":"Oslo"}"#);
    let m = h.send("Pay the bill");

    assert!(exec.runs().is_empty(), "not executed before the answer");
    let req = h.system("approval-request");
    assert_eq!(req.len(), 1);
    let r = &req[0];
    assert_eq!(r["agentName"], "alice");
    assert_eq!(r["toolCallId"], "call_1");
    assert_eq!(r["toolName"], "pay");
    assert_eq!(r["args"], json!({"city": "Oslo"}));
    let reply_id = r["messageId"].as_str().unwrap().to_string();
    assert_eq!(h.sse("start")[0]["messageId"], reply_id.as_str());
    // The reply is open: no SSE end or error, nothing published, and the world is idle.
    assert!(h.sse("end").is_empty() && h.sse("error").is_empty());
    assert_eq!(h.transcript().len(), 1);
    assert!(!h.world.is_busy());
    let idle = h.of(agent_world_wasm::core::events::Topic::World);
    assert!(idle.iter().any(|e| e["type"] == "idle"), "idle is emitted");
    assert_eq!(
        h.count("alice"),
        1,
        "the turn was counted when the reply started"
    );

    // Listed, and stored with the reply's state so far.
    let p = h.world.pending_approvals();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].approval_id, r["approvalId"].as_str().unwrap());
    assert_eq!(
        (p[0].tool_name.as_str(), p[0].message_id.as_str()),
        ("pay", reply_id.as_str())
    );
    let stored = stored_approvals(&h);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].approval_id, p[0].approval_id);
    assert_eq!(stored[0].trigger.message_id, m.message_id);
    assert_eq!(stored[0].state.text, "Let me do that.");
    assert_eq!(stored[0].state.step, 1);
    assert_eq!(stored[0].state.messages[0].content, "Pay the bill");
}

#[test]
fn approve_runs_the_tool_and_resumes_the_reply_as_one_turn() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", r#"{"city":"Oslo"}"#);
    h.send("Pay the bill");
    let id = approval_id(&h);
    h.llm.reply("alice", "Paid.");
    block_on(h.world.approve(&id)).unwrap();
    block_on(h.world.run_until_idle());

    let resolved = h.system("approval-resolved");
    assert_eq!(
        resolved,
        vec![json!({"type": "approval-resolved", "approvalId": id, "outcome": "approved"})]
    );
    let runs = exec.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].args, cjson!({"city": "Oslo"}));
    assert_eq!(result_given(&h, "call_1"), json!({"paid": true}));
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].content, "Let me do that.\n\nPaid.");
    assert_eq!(t[1].tool_calls.len(), 1);
    assert_eq!(t[1].tool_calls[0].result, Some(cjson!({"paid": true})));
    assert_eq!(h.sse("end").len(), 1);
    assert_eq!(h.count("alice"), 1, "still one turn");
    assert!(h.world.pending_approvals().is_empty());
    assert!(stored_approvals(&h).is_empty(), "the record is gone");
    // Memory: M, the step's group, the reply.
    let roles: Vec<String> = h.memory("alice").into_iter().map(|(r, _)| r).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    // Settled: a second answer is approval_not_found.
    assert_eq!(
        block_on(h.world.approve(&id)).unwrap_err().code(),
        "approval_not_found"
    );
    assert_eq!(
        block_on(h.world.deny(&id, None)).unwrap_err().code(),
        "approval_not_found"
    );
    assert_eq!(
        block_on(h.world.approve("nope")).unwrap_err().code(),
        "approval_not_found"
    );
}

#[test]
fn deny_gives_the_model_an_error_result_with_the_reason_and_resumes() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    h.llm.reply("alice", "OK, I will not pay.");
    block_on(h.world.deny(&id, Some("too expensive".into()))).unwrap();
    block_on(h.world.run_until_idle());
    assert!(exec.runs().is_empty(), "a denied tool never runs");
    assert_eq!(
        result_given(&h, "call_1"),
        json!({"error": "denied by the user: too expensive"})
    );
    assert_eq!(h.system("approval-resolved")[0]["outcome"], "denied");
    let t = h.transcript();
    assert_eq!(
        t[1].tool_calls[0].error.as_deref(),
        Some("denied by the user: too expensive")
    );

    // Without a reason.
    script_call(&h, "pay", "{}");
    h.send("Pay again");
    let id = approval_id(&h);
    h.llm.reply("alice", "Fine.");
    block_on(h.world.deny(&id, None)).unwrap();
    block_on(h.world.run_until_idle());
    assert_eq!(
        result_given(&h, "call_1"),
        json!({"error": "denied by the user"})
    );
}

#[test]
fn a_function_of_the_args_decides_and_a_throwing_one_asks() {
    let (h, exec) = world_with_tools();
    exec.ask_when("fetch", AskWhen::ArgIs("city".into(), cjson!("Paris")));
    script_call(&h, "fetch", r#"{"city":"Oslo"}"#);
    h.llm.reply("alice", "Fetched.");
    h.send("Fetch Oslo");
    assert!(h.system("approval-request").is_empty());
    assert_eq!(exec.runs().len(), 1, "ran without asking");
    assert_eq!(
        exec.asked(),
        vec![("fetch".to_string(), cjson!({"city": "Oslo"}))]
    );

    script_call(&h, "fetch", r#"{"city":"Paris"}"#);
    h.send("Fetch Paris");
    assert_eq!(h.system("approval-request").len(), 1);
    assert_eq!(exec.runs().len(), 1, "waits");
    let id = approval_id(&h);
    h.llm.reply("alice", "Done.");
    block_on(h.world.approve(&id)).unwrap();
    block_on(h.world.run_until_idle());
    assert_eq!(exec.runs().len(), 2);
    assert_eq!(exec.asked().len(), 2, "not asked again when approved");

    exec.ask_when("fetch", AskWhen::Throws("boom".into()));
    script_call(&h, "fetch", r#"{"city":"Oslo"}"#);
    h.send("Fetch again");
    assert_eq!(
        h.system("approval-request").len(),
        2,
        "a throwing check asks"
    );
}

#[test]
fn calls_of_one_step_run_in_order_around_the_one_that_waits() {
    let (h, exec) = world_with_tools();
    h.llm.script(
        "alice",
        vec![
            Step::call("c1", "lookup", "{}"),
            Step::call("c2", "pay", "{}"),
            Step::call("c3", "lookup", r#"{"city":"x"}"#),
        ],
    );
    h.send("Do it all");
    assert_eq!(exec.runs().len(), 1, "the call before the waiting one ran");
    let results = h.sse("tool-result");
    assert_eq!(results.len(), 1);
    let id = approval_id(&h);
    h.llm.reply("alice", "All done.");
    block_on(h.world.approve(&id)).unwrap();
    block_on(h.world.run_until_idle());
    let names: Vec<String> = exec.runs().into_iter().map(|r| r.name).collect();
    assert_eq!(names, ["lookup", "pay", "lookup"]);
    // The next step got the three results in the model's order.
    let calls = h.llm.calls_to("alice");
    let ids: Vec<String> = calls[1]
        .messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref().map(|r| r.tool_call_id.clone()))
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    let t = h.transcript();
    assert_eq!(t[1].tool_calls.len(), 3);
    assert_eq!(
        h.system("step-finish").len(),
        2,
        "one per step, not one per resume"
    );
}

/// A step that waits for approval keeps its signed thinking (Anthropic blocks, Gemini call
/// signature) in the persisted state: the resumed step sends it back with the step's calls.
#[test]
fn a_resumed_step_sends_back_its_signed_thinking_after_a_reopen() {
    let (h, _exec) = world_with_tools();
    let block = ThinkingBlock::Thinking {
        thinking: "Pay it.".into(),
        signature: "sig-a".into(),
    };
    h.llm.script(
        "alice",
        vec![
            Step::Thinking(block.clone()),
            Step::signed_call("call_1", "pay", "{}", "sig-g"),
        ],
    );
    h.send("Pay the bill");
    let id = approval_id(&h);
    let w2 = h.reopen();
    // The pending approval's view does not show them.
    let view = format!("{:?}", w2.pending_approvals());
    assert!(view.contains("call_1") && !view.contains("sig-"), "{view}");
    let exec2 = Rc::new(ScriptedTools::new());
    exec2.reply("pay", ToolReply::Value(cjson!({"paid": true})));
    register(&w2, &exec2);
    h.llm.reply("alice", "Paid.");
    block_on(w2.approve(&id)).unwrap();
    block_on(w2.run_until_idle());
    let calls = h.llm.calls_to("alice");
    assert_eq!(calls.len(), 2);
    let step1 = &calls[1].messages[1];
    assert_eq!(step1.thinking, vec![block]);
    assert_eq!(step1.tool_calls[0].signature.as_deref(), Some("sig-g"));
}

#[test]
fn a_pending_approval_survives_a_reopen_and_resumes_from_its_persisted_state() {
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", r#"{"city":"Oslo"}"#);
    let m = h.send("Pay the bill");
    let id = approval_id(&h);
    let chat = h.world.current_chat().unwrap().id;

    // A fresh world over the same store (a reload): the tools are registered again.
    let w2 = h.reopen();
    let events = Rc::new(std::cell::RefCell::new(Vec::new()));
    let _subs = record(&w2, &events);
    let p = w2.pending_approvals();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].approval_id, id);
    assert_eq!(p[0].chat_id.as_deref(), Some(chat.as_str()));
    let exec2 = Rc::new(ScriptedTools::new());
    exec2.reply("pay", ToolReply::Value(cjson!({"paid": "after reload"})));
    register(&w2, &exec2);
    h.llm.reply("alice", "Paid after the reload.");
    block_on(w2.approve(&id)).unwrap();
    block_on(w2.run_until_idle());
    assert_eq!(exec2.runs().len(), 1);
    // The resumed step's input is the persisted context plus the group.
    let calls = h.llm.calls_to("alice");
    let last = &calls[1].messages;
    assert_eq!(last[0].content, "Pay the bill");
    assert_eq!(last[1].role, Role::Assistant);
    assert_eq!(last[1].content, "Let me do that.");
    assert_eq!(last[2].content, r#"{"paid":"after reload"}"#);
    let msgs = block_on(w2.messages(&chat, None, 10)).unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1].content, "Let me do that.\n\nPaid after the reload.");
    assert_eq!(
        msgs[1].reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    let ev = events.borrow();
    let starts = ev.iter().filter(|(_, v)| v["type"] == "start").count();
    assert_eq!(starts, 1, "the resumed reply starts its SSE stream again");
    assert!(stored_approvals(&h).is_empty());
    assert_eq!(w2.agent("alice").unwrap().llm_call_count, 1);
}

#[test]
fn stop_cancels_pending_approvals_and_keeps_the_partial_text() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    let m = h.send("Pay");
    let id = approval_id(&h);
    h.clear_events();
    h.world.stop();
    // At once: the answer, the call's result, the reply's end.
    assert_eq!(
        h.system("approval-resolved"),
        vec![json!({"type": "approval-resolved", "approvalId": id, "outcome": "cancelled"})]
    );
    assert_eq!(h.sse("tool-result")[0]["error"], "cancelled");
    let err = h.sse("error");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0]["partialContent"], "Let me do that.");
    assert_eq!(h.system("error")[0]["code"], "llm_aborted");
    assert!(h.world.pending_approvals().is_empty());
    // The store work runs with the queue.
    block_on(h.world.run_until_idle());
    assert!(stored_approvals(&h).is_empty());
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].kind, MessageKind::Interrupted);
    assert_eq!(t[1].content, "Let me do that.");
    assert_eq!(
        t[1].reply_to_message_id.as_deref(),
        Some(m.message_id.as_str())
    );
    assert_eq!(t[1].tool_calls[0].error.as_deref(), Some("cancelled"));
    assert_eq!(
        block_on(h.world.approve(&id)).unwrap_err().code(),
        "approval_not_found"
    );
    assert!(exec.runs().is_empty());
    // A second stop does not lose or repeat anything.
    h.world.stop();
    block_on(h.world.run_until_idle());
    assert_eq!(h.transcript().len(), 2);
    // After a reopen nothing is pending.
    assert!(h.reopen().pending_approvals().is_empty());
}

#[test]
fn a_chat_switch_cancels_and_keeps_the_text_in_the_left_chat() {
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    let old = h.world.current_chat().unwrap().id;
    block_on(h.world.new_chat()).unwrap();
    block_on(h.world.run_until_idle());
    assert_eq!(h.system("approval-resolved")[0]["outcome"], "cancelled");
    assert!(h.world.pending_approvals().is_empty());
    assert!(block_on(h.store.approvals(&h.world.id(), &old))
        .unwrap()
        .is_empty());
    let msgs = block_on(h.world.messages(&old, None, 10)).unwrap();
    assert_eq!(msgs.last().unwrap().kind, MessageKind::Interrupted);
    assert!(h.transcript().is_empty(), "nothing lands in the new chat");
    // Loading the old chat back does not bring the approval back.
    block_on(h.world.load_chat(&old)).unwrap();
    assert!(h.world.pending_approvals().is_empty());
    assert_eq!(
        block_on(h.world.approve(&id)).unwrap_err().code(),
        "approval_not_found"
    );
}

#[test]
fn deleting_the_chat_cancels_and_keeps_nothing() {
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let old = h.world.current_chat().unwrap().id;
    assert!(block_on(h.world.delete_chat(&old)).unwrap());
    block_on(h.world.run_until_idle());
    assert_eq!(h.system("approval-resolved")[0]["outcome"], "cancelled");
    assert!(h.world.pending_approvals().is_empty());
    assert!(block_on(h.store.approvals(&h.world.id(), &old))
        .unwrap()
        .is_empty());
    assert!(
        h.system("error")
            .iter()
            .all(|e| e["code"] != "storage_error"),
        "{:?}",
        h.system("error")
    );
}

#[test]
fn two_writers_never_answer_one_approval_twice() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    // A second writer that already knew the approval (loaded after the request).
    let b = h.reopen();
    let exec_b = Rc::new(ScriptedTools::new());
    exec_b.reply("pay", ToolReply::Value(cjson!({"paid": "by B"})));
    register(&b, &exec_b);
    assert_eq!(b.pending_approvals().len(), 1);
    h.llm.reply("alice", "Paid.");
    block_on(h.world.approve(&id)).unwrap();
    block_on(h.world.run_until_idle());
    // B's view is stale, but the answer checks the store under the world's lock.
    let e = block_on(b.deny(&id, None)).unwrap_err();
    assert_eq!(e.code(), "approval_not_found");
    assert!(
        b.pending_approvals().is_empty(),
        "B's view was brought up to date"
    );
    block_on(b.run_until_idle());
    assert_eq!(
        exec.runs().len() + exec_b.runs().len(),
        1,
        "the tool ran once"
    );
    let chat = h.world.current_chat().unwrap().id;
    let msgs = block_on(h.world.messages(&chat, None, 10)).unwrap();
    assert_eq!(msgs.len(), 2, "one reply");
}

#[test]
fn the_settling_write_checks_the_store_even_without_revisions_moving() {
    // The record vanished from the store behind this world's back (another writer without
    // revision tracking): the answer is refused, not run.
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    let rec = stored_approvals(&h).remove(0);
    block_on(h.store.apply(vec![
        agent_world_wasm::core::store::StoreOp::DeleteApproval {
            world_id: rec.world_id.clone(),
            chat_id: rec.chat_id.clone().unwrap(),
            approval_id: id.clone(),
        },
    ]))
    .unwrap();
    // The revision moved too, so this is also the reload path; either way: not found.
    assert_eq!(
        block_on(h.world.approve(&id)).unwrap_err().code(),
        "approval_not_found"
    );
    block_on(h.world.run_until_idle());
    assert!(exec.runs().is_empty());
}

#[test]
fn a_refused_record_leaves_the_approval_pending_in_ram() {
    let (h, exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.clock.advance(1000);
    block_on(h.world.send("Pay", None)).unwrap();
    // The first write of the reply (M to memory) succeeds; fail the approval's record.
    h.store.set_apply_delay(0);
    let store = h.store.clone();
    // Fail the batch that writes the record: arm it after M was saved, before the request.
    let armed = Rc::new(std::cell::Cell::new(false));
    let a2 = armed.clone();
    let _sub = h.world.on(
        agent_world_wasm::core::events::Topic::Sse,
        Rc::new(move |e: &agent_world_wasm::core::events::Event| {
            let v = serde_json::to_value(e).unwrap();
            if v["type"] == "tool-call" && !a2.get() {
                a2.set(true);
                store.fail_next_apply(StoreError::QuotaExceeded("full".into()));
            }
            Ok(())
        }),
    );
    block_on(h.world.run_until_idle());
    assert!(armed.get());
    assert_eq!(h.system("approval-request").len(), 1);
    assert!(stored_approvals(&h).is_empty(), "not stored");
    let id = approval_id(&h);
    h.llm.reply("alice", "Paid.");
    block_on(h.world.approve(&id)).unwrap();
    block_on(h.world.run_until_idle());
    assert_eq!(exec.runs().len(), 1);
    assert_eq!(h.transcript().len(), 2);
}

#[test]
fn with_session_mode_off_approvals_live_in_ram() {
    let (h, exec) = world_with_tools();
    block_on(h.world.set_session_mode(false)).unwrap();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let p = h.world.pending_approvals();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].chat_id, None);
    h.llm.reply("alice", "Paid.");
    block_on(h.world.approve(&p[0].approval_id)).unwrap();
    block_on(h.world.run_until_idle());
    assert_eq!(exec.runs().len(), 1);
    assert_eq!(h.sse("end").len(), 1);
}

#[test]
fn removing_the_agent_cancels_its_approvals() {
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    assert!(block_on(h.world.remove_agent("alice")).unwrap());
    block_on(h.world.run_until_idle());
    assert_eq!(h.system("approval-resolved")[0]["outcome"], "cancelled");
    assert!(stored_approvals(&h).is_empty());
    assert_eq!(
        block_on(h.world.approve(&id)).unwrap_err().code(),
        "approval_not_found"
    );
}

#[test]
fn a_cancellation_that_reaches_the_store_after_another_tab_approved_keeps_nothing() {
    // Tab A stops (its store work is queued), tab B approves first and resumes the reply; A's
    // queued cancellation then finds the approval settled and keeps no `interrupted` copy
    // under the reply's id.
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    let id = approval_id(&h);
    let b = h.reopen();
    let exec_b = Rc::new(ScriptedTools::new());
    exec_b.reply("pay", ToolReply::Value(cjson!({"paid": "by B"})));
    register(&b, &exec_b);
    h.world.stop();
    h.llm.reply("alice", "Paid by B.");
    block_on(b.approve(&id)).unwrap();
    block_on(b.run_until_idle());
    block_on(h.world.run_until_idle());
    assert_eq!(exec_b.runs().len(), 1);
    let chat = h.world.current_chat().unwrap().id;
    let msgs = block_on(b.messages(&chat, None, 10)).unwrap();
    let kinds: Vec<MessageKind> = msgs.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [MessageKind::Message, MessageKind::Message],
        "{msgs:?}"
    );
    assert!(
        h.system("error")
            .iter()
            .all(|e| e["code"] != "storage_error"),
        "{:?}",
        h.system("error")
    );
}

#[test]
fn a_cancellation_whose_store_check_fails_still_deletes_the_record_and_keeps_the_text() {
    // The queued store work of a stop first reads whether the approval is still pending; when
    // that read fails (reported), the record is deleted anyway rather than left to resurrect
    // the approval after a reopen, and the partial text is kept.
    let (h, _exec) = world_with_tools();
    script_call(&h, "pay", "{}");
    h.send("Pay");
    h.world.stop();
    h.clear_events();
    h.store.fail_next_read(StoreError::Backend("disk".into()));
    block_on(h.world.run_until_idle());
    let errors = h.system("error");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["code"], "storage_error");
    assert!(stored_approvals(&h).is_empty());
    let t = h.transcript();
    assert_eq!(t.len(), 2);
    assert_eq!(t[1].kind, MessageKind::Interrupted);
    assert!(h.reopen().pending_approvals().is_empty());
}
