//! Ring 2: the JS-supplied store ([`JsStore`]) in Node, over an in-memory `Map` adapter written
//! in JavaScript below: the store contract unchanged, failures of the adapter, malformed data,
//! bounded reads, and the `storage` option of the JS API.
#![cfg(target_arch = "wasm32")]
// A test that panics is a failing test; clippy does not see wasm_bindgen_test fns as tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::rc::Rc;

use agent_world_wasm::core::model::{Message, MessageKind, Timestamp};
use agent_world_wasm::core::store::{Store, StoreError, StoreOp};
use agent_world_wasm::core::store_contract::{self, chat, world};
use agent_world_wasm::web::js_store::JsStore;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen(inline_js = r#"
// A StoreAdapter over a Map. `ignoreOptions`: list() ignores start/end/reverse/limit (the
// store must filter itself). `stats` counts what list() returned; `failBatch` makes batch()
// reject; batch() applies all ops or none (it checks them first), and resolves to
// `batchResult`.
export function makeMapAdapter(ignoreOptions) {
  const map = new Map();
  const stats = { lists: 0, listed: 0, batches: 0, failBatch: false, throwGet: false,
    batchResult: undefined };
  return {
    map, stats,
    async get(key) {
      if (stats.throwGet) throw new Error('the disk is gone');
      return map.get(key);
    },
    async put(key, value) { map.set(key, value); },
    async delete(key) { map.delete(key); },
    async list(prefix, options = {}) {
      let keys = [...map.keys()].filter((k) => k.startsWith(prefix)).sort();
      if (!ignoreOptions) {
        if (options.start !== undefined) keys = keys.filter((k) => k >= options.start);
        if (options.end !== undefined) keys = keys.filter((k) => k < options.end);
        if (options.reverse) keys.reverse();
        if (options.limit !== undefined) keys = keys.slice(0, options.limit);
      }
      stats.lists += 1;
      stats.listed += keys.length;
      return keys.map((k) => [k, map.get(k)]);
    },
    async batch(ops) {
      stats.batches += 1;
      if (stats.failBatch) throw new Error('batch rejected: the disk is full');
      for (const op of ops) {
        if (typeof op.key !== 'string' || (op.type === 'put' && typeof op.value !== 'string')
            || (op.type !== 'put' && op.type !== 'delete')) {
          throw new Error(`bad op ${JSON.stringify(op)}`);
        }
      }
      for (const op of ops) {
        if (op.type === 'put') map.set(op.key, op.value); else map.delete(op.key);
      }
      return stats.batchResult;
    },
  };
}
export function stat(adapter, name) { return adapter.stats[name]; }
export function setStat(adapter, name, value) { adapter.stats[name] = value; }
export function rawPut(adapter, key, value) { adapter.map.set(key, value); }
export function rawGet(adapter, key) { return adapter.map.get(key); }
export function rawFirst(adapter, prefix) {
  const key = [...adapter.map.keys()].sort().find((k) => k.startsWith(prefix));
  return key === undefined ? undefined : adapter.map.get(key);
}
export function keyCount(adapter) { return adapter.map.size; }
export function withoutMethod(adapter, name) {
  const copy = { ...adapter };
  delete copy[name];
  return copy;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = makeMapAdapter)]
    fn make_map_adapter(ignore_options: bool) -> JsValue;
    fn stat(adapter: &JsValue, name: &str) -> JsValue;
    #[wasm_bindgen(js_name = setStat)]
    fn set_stat(adapter: &JsValue, name: &str, value: JsValue);
    #[wasm_bindgen(js_name = rawPut)]
    fn raw_put(adapter: &JsValue, key: &str, value: &str);
    #[wasm_bindgen(js_name = rawGet)]
    fn raw_get(adapter: &JsValue, key: &str) -> Option<String>;
    #[wasm_bindgen(js_name = rawFirst)]
    fn raw_first(adapter: &JsValue, prefix: &str) -> Option<String>;
    #[wasm_bindgen(js_name = keyCount)]
    fn key_count(adapter: &JsValue) -> u32;
    #[wasm_bindgen(js_name = withoutMethod)]
    fn without_method(adapter: &JsValue, name: &str) -> JsValue;
}

fn store_over(adapter: &JsValue) -> Rc<dyn Store> {
    Rc::new(JsStore::new(adapter.clone()).expect("a valid adapter"))
}

fn stat_n(adapter: &JsValue, name: &str) -> f64 {
    stat(adapter, name).as_f64().unwrap()
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

/// The ids of chat `c` of world `w`, oldest first (at most 10).
async fn message_ids(s: &Rc<dyn Store>) -> Vec<String> {
    let mut ids = Vec::new();
    for m in s.messages("w", "c", None, 10).await.unwrap() {
        ids.push(m.message_id);
    }
    ids
}

fn append(w: &str, c: &str, id: &str) -> StoreOp {
    StoreOp::AppendMessage {
        world_id: w.into(),
        chat_id: c.into(),
        message: msg(c, id),
    }
}

#[wasm_bindgen_test]
async fn the_store_contract_passes_over_a_map_adapter() {
    store_contract::run_store_contract(&|| store_over(&make_map_adapter(false))).await;
}

#[wasm_bindgen_test]
async fn the_store_contract_passes_over_an_adapter_that_ignores_list_options() {
    store_contract::run_store_contract(&|| store_over(&make_map_adapter(true))).await;
}

#[wasm_bindgen_test]
async fn a_rejected_batch_writes_nothing_and_is_a_backend_error() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
        append("w", "c", "m1"),
    ])
    .await
    .unwrap();
    let keys_before = key_count(&adapter);
    set_stat(&adapter, "failBatch", JsValue::TRUE);
    let r = s
        .apply(vec![append("w", "c", "m2"), append("w", "c", "m3")])
        .await;
    let err = r.expect_err("the batch was rejected");
    assert_eq!(
        adapter_error_message(&err),
        "batch rejected: the disk is full"
    );
    match err.without_cause() {
        StoreError::Backend(m) => assert!(m.contains("the disk is full"), "{m}"),
        other => panic!("expected a Backend error, got {other:?}"),
    }
    set_stat(&adapter, "failBatch", JsValue::FALSE);
    assert_eq!(key_count(&adapter), keys_before);
    let all = s.messages("w", "c", None, 10).await.unwrap();
    assert_eq!(all.len(), 1);
    // The store still works, and the counter did not move: m2 is appended after m1.
    s.apply(vec![append("w", "c", "m2")]).await.unwrap();
    assert_eq!(message_ids(&s).await, vec!["m1", "m2"]);
}

/// What `batch()` resolves to is not read: a backend that answers with a result (Deno KV's
/// `{ ok: true }`, a row count) has still written.
#[wasm_bindgen_test]
async fn what_a_batch_resolves_to_is_ignored() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    let results = [
        js_sys::JSON::parse("{\"ok\":true}").unwrap(),
        JsValue::from_f64(3.0),
        JsValue::TRUE,
    ];
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    for (i, result) in results.into_iter().enumerate() {
        set_stat(&adapter, "batchResult", result);
        let id = format!("m{i}");
        s.apply(vec![append("w", "c", &id)]).await.unwrap();
    }
    assert_eq!(message_ids(&s).await, vec!["m0", "m1", "m2"]);
}

#[wasm_bindgen_test]
async fn an_invalid_batch_never_calls_the_adapters_batch() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![StoreOp::PutWorld(world("w"))]).await.unwrap();
    let batches = stat_n(&adapter, "batches");
    let r = s
        .apply(vec![
            StoreOp::PutChat(chat("w", "c")),
            append("w", "missing", "m1"),
        ])
        .await;
    assert!(matches!(r, Err(StoreError::Invalid(_))), "{r:?}");
    assert_eq!(stat_n(&adapter, "batches"), batches);
}

#[wasm_bindgen_test]
async fn a_throwing_read_is_a_backend_error_with_the_adapters_message() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    set_stat(&adapter, "throwGet", JsValue::TRUE);
    let err = s.load_world("w").await.expect_err("get threw");
    assert_eq!(adapter_error_message(&err), "the disk is gone");
    match err.without_cause() {
        StoreError::Backend(m) => assert!(m.contains("the disk is gone"), "{m}"),
        other => panic!("expected a Backend error, got {other:?}"),
    }
}

/// The message of the JS `Error` the adapter threw, attached to `err` as its cause (the very
/// object: JS sees it as `error.cause`).
fn adapter_error_message(err: &StoreError) -> String {
    let cause = err.cause().and_then(|c| c.get::<JsValue>());
    let error = cause
        .and_then(|c| c.dyn_ref::<js_sys::Error>())
        .unwrap_or_else(|| panic!("no JS Error attached to {err:?}"));
    String::from(error.message())
}

/// The text stored for each record kind, byte for byte: an application's own code reads these
/// values, so the writer (hand-written since serde's derived serializer left the module) must
/// give exactly the derived form's text (field order, skipped fields, number forms).
#[wasm_bindgen_test]
async fn stored_values_keep_the_derived_forms_exact_text() {
    use agent_world_wasm::core::model::{MemoryEntry, MemoryRole, ToolCallRecord};
    use agent_world_wasm::core::store::AgentChatState;
    use agent_world_wasm::core::store_contract::{agent, approval};
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    let mut m = msg("c", "m1");
    m.content = "quote \" backslash \\ newline \n tab \t \u{1} é".into();
    m.tool_calls = vec![ToolCallRecord {
        tool_call_id: "call-1".into(),
        tool_name: "get_weather".into(),
        args: serde_json::from_value(
            serde_json::json!({"city": "Paris", "days": [1, 2.5, 1e21], "z": null}),
        )
        .unwrap(),
        result: Some(serde_json::from_value(serde_json::json!({"temp": -0.5})).unwrap()),
        error: None,
    }];
    let entry = MemoryEntry {
        role: MemoryRole::User,
        content: "hi".into(),
        sender: Some("HUMAN".into()),
        message_id: "m1".into(),
        chat_id: Some("c".into()),
        created_at: Timestamp(1_764_000_000_123),
        tool_calls: Vec::new(),
        tool_call_id: None,
        tool_name: None,
    };
    let state = AgentChatState {
        agent_id: "a".into(),
        llm_call_count: 3,
        last_llm_call: None,
    };
    let record = approval("w", "c", "ap1", "a", 5);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: agent("a"),
        },
        StoreOp::PutChat(chat("w", "c")),
        StoreOp::AppendMessage {
            world_id: "w".into(),
            chat_id: "c".into(),
            message: m.clone(),
        },
        StoreOp::AppendMemory {
            world_id: "w".into(),
            chat_id: "c".into(),
            agent_id: "a".into(),
            entry: entry.clone(),
        },
        StoreOp::PutAgentState {
            world_id: "w".into(),
            chat_id: "c".into(),
            state: state.clone(),
        },
        StoreOp::PutApproval(Box::new(record.clone())),
    ])
    .await
    .unwrap();
    let cases = [
        (
            "aww/w/w",
            format!(r#"{{"v":2,"world":{}}}"#, text(&world("w"))),
        ),
        (
            "aww/a/",
            format!(r#"{{"v":2,"order":0,"agent":{}}}"#, text(&agent("a"))),
        ),
        (
            "aww/c/w/",
            format!(r#"{{"v":2,"chat":{}}}"#, text(&chat("w", "c"))),
        ),
        (
            "aww/m/w/c/",
            format!(r#"{{"v":2,"seq":1,"message":{}}}"#, text(&m)),
        ),
        (
            "aww/mem/w/c/a/",
            format!(
                r#"{{"v":2,"agentId":"a","seq":1,"entry":{}}}"#,
                text(&entry)
            ),
        ),
        (
            "aww/s/w/c/",
            format!(r#"{{"v":2,"state":{}}}"#, text(&state)),
        ),
        (
            "aww/ap/w/c/",
            format!(r#"{{"v":2,"approval":{}}}"#, text(&record)),
        ),
    ];
    for (prefix, want) in cases {
        assert_eq!(
            raw_first(&adapter, prefix).as_deref(),
            Some(want.as_str()),
            "{prefix}"
        );
    }
}

/// serde_json's text of the derived `Serialize` (the reference form of the stored payloads).
fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

/// Format 2 (the tool fields): values are written with `v: 2`, so an app of format 1 reports a
/// record using `toolCalls` as newer rather than corrupted; format 1 values still read.
#[wasm_bindgen_test]
async fn values_are_written_in_format_2_and_format_1_values_still_read() {
    use agent_world_wasm::core::model::ToolCallRecord;
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    let mut m = msg("c", "m1");
    m.tool_calls = vec![ToolCallRecord {
        tool_call_id: "call-1".into(),
        tool_name: "get_weather".into(),
        args: serde_json::from_value(serde_json::json!({"city": "Paris"})).unwrap(),
        result: Some(serde_json::from_value(serde_json::json!({"temp": 21})).unwrap()),
        error: None,
    }];
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
        StoreOp::AppendMessage {
            world_id: "w".into(),
            chat_id: "c".into(),
            message: m.clone(),
        },
    ])
    .await
    .unwrap();
    let raw: serde_json::Value =
        serde_json::from_str(&raw_first(&adapter, "aww/m/w/c/").unwrap()).unwrap();
    assert_eq!(raw["v"], 2, "{raw}");
    assert_eq!(raw["message"]["toolCalls"][0]["toolName"], "get_weather");
    let raw: serde_json::Value =
        serde_json::from_str(&raw_get(&adapter, "aww/w/w").unwrap()).unwrap();
    assert_eq!(raw["v"], 2, "{raw}");

    // A value of format 1 (no tool fields) reads as before.
    let old = msg("c", "m0");
    raw_put(
        &adapter,
        "aww/c/w/old",
        &format!(
            r#"{{"v":1,"chat":{}}}"#,
            serde_json::to_string(&chat("w", "old")).unwrap()
        ),
    );
    raw_put(
        &adapter,
        "aww/m/w/old/000000000000",
        &format!(
            r#"{{"v":1,"seq":0,"message":{}}}"#,
            serde_json::to_string(&Message {
                chat_id: Some("old".into()),
                ..old.clone()
            })
            .unwrap()
        ),
    );
    let page = s.messages("w", "old", None, 10).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].message_id, "m0");
    assert!(page[0].tool_calls.is_empty());
    // A value of a format after this one is "newer", not corrupted.
    raw_put(
        &adapter,
        "aww/m/w/old/000000000000",
        r#"{"v":3,"seq":0,"message":{}}"#,
    );
    assert!(matches!(
        s.messages("w", "old", None, 10).await,
        Err(StoreError::Version(_))
    ));
}

#[wasm_bindgen_test]
async fn malformed_values_are_corrupted_errors_naming_the_key_not_panics() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    raw_put(&adapter, "aww/w/w", "not json at all");
    match s.load_world("w").await {
        Err(StoreError::Corrupted(m)) => assert!(m.contains("aww/w/w"), "{m}"),
        other => panic!("expected a Corrupted error, got {other:?}"),
    }
    assert!(matches!(
        s.list_worlds().await,
        Err(StoreError::Corrupted(_))
    ));
    raw_put(&adapter, "aww/w/v", r#"{"world":{}}"#);
    raw_put(&adapter, "aww/w/w", r#"{"v":1,"world":{"id":7}}"#);
    match s.load_world("w").await {
        Err(StoreError::Corrupted(m)) => assert!(m.contains("aww/w/w"), "{m}"),
        other => panic!("expected a Corrupted error, got {other:?}"),
    }
    raw_put(&adapter, "aww/w/w", r#"{"v":99,"world":{}}"#);
    assert!(matches!(
        s.load_world("w").await,
        Err(StoreError::Version(_))
    ));
    // A malformed counter makes the append fail (nothing written), not panic.
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    raw_put(&adapter, "aww/n/w/c", "{");
    let r = s.apply(vec![append("w", "c", "m1")]).await;
    assert!(
        matches!(r, Err(StoreError::Corrupted(ref m)) if m.contains("aww/n/w/c")),
        "{r:?}"
    );
}

/// What a stored record with a bad field reads as: which error, naming the key and the field
/// (the first bad one in the record's field order), for every kind of record the store reads.
#[wasm_bindgen_test]
async fn a_bad_field_of_a_record_is_an_error_naming_the_key_and_the_field() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    let mut seen = Vec::new();
    let mut note = |what: &str, e: Option<StoreError>| seen.push(format!("{what}: {e:?}"));
    // A message: its seq is read before the message, so a bad seq is the error named.
    raw_put(
        &adapter,
        "aww/m/w/c/000000000001",
        r#"{"v":2,"seq":"1","message":{"x":1}}"#,
    );
    note("page", s.messages("w", "c", None, 10).await.err());
    raw_put(&adapter, "aww/m/w/c/000000000001", r#"{"v":2,"seq":1}"#);
    note("page", s.messages("w", "c", None, 10).await.err());
    raw_put(
        &adapter,
        "aww/m/w/c/000000000001",
        r#"{"v":2,"seq":1,"message":{"chatId":3}}"#,
    );
    note("dump", s.dump("w").await.err());
    // A message id's seq (a page before it) and the chat's counter (an append).
    raw_put(&adapter, "aww/mi/w/c/m1", r#"{"v":2,"seq":-1}"#);
    note("before", s.messages("w", "c", Some("m1"), 10).await.err());
    raw_put(&adapter, "aww/n/w/c", r#"{"v":2,"nxt":2}"#);
    note("append", s.apply(vec![append("w", "c", "m2")]).await.err());
    // A world, an agent (its order before the agent), a chat, a state, a memory entry.
    raw_put(&adapter, "aww/w/x", r#"{"v":1,"world":[]}"#);
    note("world", s.load_world("x").await.err());
    note("worlds", s.list_worlds().await.err());
    raw_put(&adapter, "aww/a/x/0000000000/a", r#"{"v":2,"order":1.5}"#);
    note("agents", s.agents("x").await.err());
    raw_put(&adapter, "aww/c/x/c", r#"{"v":2,"chat":{"id":"c"}}"#);
    note("chats", s.chats("x").await.err());
    raw_put(&adapter, "aww/s/x/c/a", r#"{"v":2,"state":null}"#);
    note("states", s.agent_states("x", "c").await.err());
    raw_put(
        &adapter,
        "aww/mem/x/c/a/000000000001",
        r#"{"v":2,"agentId":"a","seq":1}"#,
    );
    note("memory", s.last_memory("x", "c", "a", 5).await.err());
    raw_put(&adapter, "aww/ap/x/c/p", r#"{"v":2,"approval":{}}"#);
    note("approvals", s.approvals("x", "c").await.err());
    let expected = [
        (
            "page",
            "aww/m/w/c/000000000001",
            "seq must be an integer from 0 to 18446744073709551615 (got a string)",
        ),
        ("page", "aww/m/w/c/000000000001", "message is missing"),
        (
            "dump",
            "aww/m/w/c/000000000001",
            "message.messageId is missing",
        ),
        (
            "before",
            "aww/mi/w/c/m1",
            "seq must be an integer from 0 to 18446744073709551615 (got an integer)",
        ),
        ("append", "aww/n/w/c", "next is missing"),
        ("world", "aww/w/x", "world must be an object (got an array)"),
        (
            "worlds",
            "aww/w/x",
            "world must be an object (got an array)",
        ),
        (
            "agents",
            "aww/a/x/0000000000/a",
            "order must be an integer from 0 to 18446744073709551615 (got a fractional number)",
        ),
        ("chats", "aww/c/x/c", "chat.worldId is missing"),
        (
            "states",
            "aww/s/x/c/a",
            "state must be an object (got null)",
        ),
        ("memory", "aww/mem/x/c/a/000000000001", "entry is missing"),
        (
            "approvals",
            "aww/ap/x/c/p",
            "approval.approvalId is missing",
        ),
    ];
    let expected: Vec<String> = expected
        .iter()
        .map(|(what, key, why)| {
            let m = format!("unreadable record at key {key:?}: {why}{}", BACKUP);
            format!("{what}: {:?}", Some(StoreError::Corrupted(m)))
        })
        .collect();
    assert_eq!(seen, expected);
}

const BACKUP: &str = "; delete the key or restore it from a backup";

#[wasm_bindgen_test]
async fn ids_with_slashes_stay_in_their_own_range() {
    let s = store_over(&make_map_adapter(false));
    s.apply(vec![
        StoreOp::PutWorld(world("a")),
        StoreOp::PutWorld(world("a/c")),
        StoreOp::PutChat(chat("a", "c")),
        StoreOp::PutChat(chat("a/c", "x")),
        append("a", "c", "m1"),
        append("a/c", "x", "m2"),
    ])
    .await
    .unwrap();
    assert_eq!(s.chats("a").await.unwrap().len(), 1);
    s.apply(vec![StoreOp::DeleteWorld {
        world_id: "a".into(),
    }])
    .await
    .unwrap();
    let left = s.messages("a/c", "x", None, 10).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(s.list_worlds().await.unwrap().len(), 1);
}

#[wasm_bindgen_test]
async fn ten_thousand_messages_page_with_bounded_lists() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    const N: usize = 10_000;
    for chunk in 0..N / 1000 {
        let ops = (0..1000)
            .map(|i| append("w", "c", &format!("m{}", chunk * 1000 + i)))
            .collect();
        s.apply(ops).await.unwrap();
    }
    let (lists0, listed0) = (stat_n(&adapter, "lists"), stat_n(&adapter, "listed"));
    assert_eq!(lists0, 0.0, "appending never lists");
    let limit = 64;
    let mut before: Option<String> = None;
    let mut seen = Vec::new();
    loop {
        let listed = stat_n(&adapter, "listed");
        let page = s
            .messages("w", "c", before.as_deref(), limit)
            .await
            .unwrap();
        assert!(
            stat_n(&adapter, "listed") - listed <= limit as f64,
            "one page listed more than {limit} keys"
        );
        if page.is_empty() {
            break;
        }
        before = Some(page[0].message_id.clone());
        for m in page.into_iter().rev() {
            seen.push(m.message_id);
        }
    }
    seen.reverse();
    let expected: Vec<String> = (0..N).map(|i| format!("m{i}")).collect();
    assert_eq!(seen, expected);
    let pages = N.div_ceil(limit) as f64 + 1.0;
    assert_eq!(stat_n(&adapter, "lists") - lists0, pages);
    assert_eq!(stat_n(&adapter, "listed") - listed0, N as f64);
    // A duplicate id among 10,000 is still found (through the id key, not a scan).
    let r = s.apply(vec![append("w", "c", "m5000")]).await;
    assert!(matches!(r, Err(StoreError::Invalid(_))), "{r:?}");
}

#[wasm_bindgen_test]
async fn the_storage_option_takes_an_adapter_and_names_a_missing_method() {
    use agent_world_wasm::bindings::world::AgentWorld;
    let adapter = make_map_adapter(false);
    let options = |storage: &JsValue| {
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"name".into(), &"Team".into()).unwrap();
        js_sys::Reflect::set(&o, &"storage".into(), storage).unwrap();
        JsValue::from(o)
    };
    let bad = without_method(&adapter, "batch");
    let err = AgentWorld::create(options(&bad)).await.err().unwrap();
    let message = js_sys::Reflect::get(&err, &"message".into())
        .unwrap()
        .as_string()
        .unwrap();
    let code = js_sys::Reflect::get(&err, &"code".into()).unwrap();
    assert_eq!(code.as_string().as_deref(), Some("invalid_input"));
    assert!(message.contains("batch(ops)"), "{message}");

    let world = AgentWorld::create(options(&adapter)).await.unwrap();
    drop(world);
    assert!(key_count(&adapter) > 0, "the world went to the adapter");
    let only_storage = js_sys::Object::new();
    js_sys::Reflect::set(&only_storage, &"storage".into(), &adapter).unwrap();
    let listed = AgentWorld::list(Some(only_storage.clone().unchecked_into()))
        .await
        .unwrap();
    assert_eq!(js_sys::Array::from(&listed).length(), 1);
    let reopened = AgentWorld::open("team".into(), Some(only_storage.unchecked_into())).await;
    assert!(reopened.is_ok());
}

#[wasm_bindgen_test]
async fn concurrent_applies_do_not_take_the_same_sequence_number() {
    let adapter = make_map_adapter(false);
    let s = store_over(&adapter);
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    // Each apply awaits the adapter several times; without the write lock both would read the
    // same counter and the second batch would overwrite the first message.
    let (a, b) = futures_util::future::join(
        s.apply(vec![append("w", "c", "m1"), append("w", "c", "m2")]),
        s.apply(vec![append("w", "c", "m3")]),
    )
    .await;
    a.unwrap();
    b.unwrap();
    assert_eq!(message_ids(&s).await, vec!["m1", "m2", "m3"]);
}

/// `dump` reads each chat's messages into that chat (it steps through the chats' lists by
/// index), for several chats in key order.
#[wasm_bindgen_test]
async fn a_dump_puts_each_chats_messages_in_that_chat() {
    let s = store_over(&make_map_adapter(false));
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c1")),
        StoreOp::PutChat(chat("w", "c2")),
        StoreOp::PutChat(chat("w", "c3")),
        append("w", "c1", "m1"),
        append("w", "c2", "m2"),
        append("w", "c2", "m3"),
        append("w", "c3", "m4"),
    ])
    .await
    .unwrap();
    let dump = s.dump("w").await.unwrap();
    let mut seen = Vec::new();
    for c in &dump.chats {
        let ids: Vec<&str> = c.messages.iter().map(|m| m.message_id.as_str()).collect();
        seen.push((c.chat.as_ref().unwrap().id.clone(), ids.join(",")));
    }
    let want = [("c1", "m1"), ("c2", "m2,m3"), ("c3", "m4")];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(c, m)| (c.to_string(), m.to_string()))
        .collect();
    assert_eq!(seen, want);
}
