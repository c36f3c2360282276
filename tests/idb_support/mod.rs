//! The IndexedDB store's cases, written once and run in a Chromium page (`wasm_idb.rs`) and a
//! Chromium dedicated worker (`wasm_idb_worker.rs`). Every case uses fresh randomly named
//! databases and deletes them at the end.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;

/// One `#[wasm_bindgen_test]` per case below, in the test binary that includes this module
/// with `#[macro_use]`; that binary chooses a page or a worker (`wasm_bindgen_test_configure!`).
/// The list of cases lives here once, so the page and the worker always run the same ones.
macro_rules! idb_cases {
    () => {
        idb_cases!(@async contract_passes, data_survives_closing_and_reopening,
            a_failing_batch_writes_nothing, paging_over_ten_thousand_messages_is_bounded,
            corrupted_records_give_errors, a_newer_version_elsewhere_closes_this_connection,
            a_foreign_database_is_refused, a_delete_elsewhere_closes_this_connection,
            ops_see_earlier_deletes_of_the_batch, two_connections_append_to_one_chat,
            the_world_lock_serialises_connections,
            a_format_1_world_record_gets_its_first_revision, a_blocked_upgrade_fails_with_blocked,
            a_version_1_database_gains_the_approvals_store,
            a_failing_upgrade_step_reports_its_error_and_keeps_the_old_version,
            a_write_in_one_burst_that_fails_a_check_writes_nothing,
            a_version_2_database_keeps_its_data_and_revisions,
            a_deleted_world_keeps_its_revision_rising,
            a_change_notice_makes_the_connection_read_before_writing,
            a_send_leaves_the_chat_record_and_every_reader_sees_its_count,
            a_version_3_database_keeps_its_chats, a_view_is_one_read_transaction,
            a_snapshot_of_indexeddb_reads_what_it_reads,
            the_last_records_read_alike_with_and_without_get_all_records,
            a_bad_field_of_a_record_is_an_error_naming_the_record_and_the_field);
        #[wasm_bindgen_test]
        fn dom_exceptions_map_to_typed_errors() {
            idb_support::dom_exceptions_map_to_typed_errors();
        }
    };
    (@async $($case:ident),* $(,)?) => {
        $(
            #[wasm_bindgen_test]
            async fn $case() {
                idb_support::$case().await;
            }
        )*
    };
}

use agent_world_wasm::core::model::{MemoryEntry, MemoryRole, Message, MessageKind, Timestamp};
use agent_world_wasm::core::store::{
    AgentChatState, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump,
};
use agent_world_wasm::core::store_contract::{self, agent, chat, world};
use agent_world_wasm::web::clock::new_id;
use agent_world_wasm::web::idb_store::{store_error_from_dom_exception, IdbStore, SCHEMA_VERSION};
use indexed_db_futures::database::Database;
use indexed_db_futures::prelude::*;
use indexed_db_futures::transaction::TransactionMode;
use wasm_bindgen::JsValue;

pub fn fresh_name() -> String {
    format!("aww-idb-test-{}", new_id())
}

async fn delete_db(name: &str) {
    IdbStore::delete_database(name)
        .await
        .unwrap_or_else(|e| panic!("deleting {name}: {e}"));
}

async fn open(name: &str) -> IdbStore {
    IdbStore::open(name)
        .await
        .unwrap_or_else(|e| panic!("opening {name}: {e}"))
}

/// A store that opens its (fresh, randomly named) database on first use: the contract's `make`
/// is synchronous and opening IndexedDB is not.
struct LazyIdb {
    name: String,
    inner: RefCell<Option<Rc<IdbStore>>>,
}

impl LazyIdb {
    async fn get(&self) -> Rc<IdbStore> {
        let existing = self.inner.borrow().clone();
        if let Some(s) = existing {
            return s;
        }
        let s = Rc::new(open(&self.name).await);
        *self.inner.borrow_mut() = Some(s.clone());
        s
    }
}

impl Store for LazyIdb {
    fn list_worlds(
        &self,
    ) -> LocalBoxFuture<'_, Result<Vec<agent_world_wasm::core::model::WorldData>, StoreError>> {
        Box::pin(async move { self.get().await.list_worlds().await })
    }
    fn load_world<'a>(
        &'a self,
        w: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<agent_world_wasm::core::model::WorldData>, StoreError>>
    {
        Box::pin(async move { self.get().await.load_world(w).await })
    }
    fn agents<'a>(
        &'a self,
        w: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<agent_world_wasm::core::model::Agent>, StoreError>> {
        Box::pin(async move { self.get().await.agents(w).await })
    }
    fn chats<'a>(
        &'a self,
        w: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<agent_world_wasm::core::model::Chat>, StoreError>> {
        Box::pin(async move { self.get().await.chats(w).await })
    }
    fn agent_states<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        Box::pin(async move { self.get().await.agent_states(w, c).await })
    }
    fn last_memory<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
        a: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        Box::pin(async move { self.get().await.last_memory(w, c, a, n).await })
    }
    fn messages<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        Box::pin(async move { self.get().await.messages(w, c, before, limit).await })
    }
    fn approvals<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<agent_world_wasm::core::approval::ApprovalRecord>, StoreError>>
    {
        Box::pin(async move { self.get().await.approvals(w, c).await })
    }
    fn dump<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        Box::pin(async move { self.get().await.dump(w).await })
    }
    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move { self.get().await.apply(ops).await })
    }
    // Forwarded so the contract's revision cases run against IndexedDB too.
    fn revision<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        Box::pin(async move { self.get().await.revision(w).await })
    }
}

/// The store contract, unchanged, with a fresh database per case.
pub async fn contract_passes() {
    let names: Rc<RefCell<Vec<String>>> = Rc::default();
    let make = {
        let names = names.clone();
        move || {
            let name = fresh_name();
            names.borrow_mut().push(name.clone());
            Rc::new(LazyIdb {
                name,
                inner: RefCell::new(None),
            }) as Rc<dyn Store>
        }
    };
    store_contract::run_store_contract(&make).await;
    // Each case dropped its store (closing its connection), so the deletes are not blocked.
    let names = names.borrow().clone();
    assert!(names.len() >= 10, "one database per contract case");
    for name in names {
        delete_db(&name).await;
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

/// The engine's revision check for world `w`: the batch commits only at revision `rev`.
fn expect_rev(rev: u64) -> StoreOp {
    StoreOp::ExpectRevision {
        world_id: "w".into(),
        rev,
    }
}

fn append(w: &str, c: &str, id: &str) -> StoreOp {
    StoreOp::AppendMessage {
        world_id: w.into(),
        chat_id: c.into(),
        message: msg(c, id),
    }
}

fn remember(w: &str, c: &str, a: &str, id: &str) -> StoreOp {
    StoreOp::AppendMemory {
        world_id: w.into(),
        chat_id: c.into(),
        agent_id: a.into(),
        entry: MemoryEntry {
            role: MemoryRole::User,
            content: format!("memory {id}"),
            sender: Some("HUMAN".into()),
            message_id: id.to_string(),
            chat_id: Some(c.to_string()),
            created_at: Timestamp(3),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        },
    }
}

fn put_state(w: &str, c: &str, a: &str, n: u32) -> StoreOp {
    StoreOp::PutAgentState {
        world_id: w.into(),
        chat_id: c.into(),
        state: AgentChatState {
            agent_id: a.into(),
            llm_call_count: n,
            last_llm_call: Some(Timestamp(7)),
        },
    }
}

fn ids(v: &[Message]) -> Vec<String> {
    v.iter().map(|m| m.message_id.clone()).collect()
}

fn seed() -> Vec<StoreOp> {
    vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: agent("a"),
        },
        StoreOp::PutChat(chat("w", "c")),
        append("w", "c", "m1"),
        append("w", "c", "m2"),
        remember("w", "c", "a", "e1"),
        put_state("w", "c", "a", 4),
    ]
}

/// Starts counting the transactions this context starts; the function returned stops and gives
/// their modes. (Patches `IDBDatabase.prototype.transaction`, which the store's calls reach.)
fn count_transactions() -> js_sys::Function {
    let start = js_sys::Function::new_no_args(
        "const p = IDBDatabase.prototype, orig = p.transaction, modes = [];
         p.transaction = function (stores, mode) {
           modes.push(mode ?? 'readonly');
           return orig.apply(this, arguments);
         };
         return () => { p.transaction = orig; return modes; };",
    );
    start.call0(&JsValue::NULL).unwrap().into()
}

/// Opening a world reads its whole view (revision, world, agents, chats, the current chat's
/// states, memory windows and approvals) in ONE read-only transaction, not one per read: the
/// reopen of a stored world pays one transaction's set-up, and sees one snapshot.
pub async fn a_view_is_one_read_transaction() {
    use agent_world_wasm::core::engine::{Services, World};
    let name = fresh_name();
    let store = Rc::new(open(&name).await);
    let mut w = world("w");
    w.current_chat_id = Some("c".into());
    let mut ops = seed();
    ops.push(StoreOp::PutWorld(w));
    ops.push(StoreOp::PutAgent {
        world_id: "w".into(),
        agent: agent("b"),
    });
    ops.push(remember("w", "c", "b", "e2"));
    store.apply(ops).await.unwrap();
    let svc = Services {
        store: store.clone(),
        llm: Rc::new(agent_world_wasm::web::llm_fetch::FetchLlm::new(true)),
        clock: Rc::new(agent_world_wasm::web::clock::JsClock),
        ids: Rc::new(agent_world_wasm::web::clock::UuidIds),
    };
    let stop = count_transactions();
    let opened = World::open(svc, "w").await;
    let modes: Vec<String> = js_sys::Array::from(&stop.call0(&JsValue::NULL).unwrap())
        .iter()
        .filter_map(|m| m.as_string())
        .collect();
    let opened = opened.unwrap();
    assert_eq!(
        modes,
        ["readonly"],
        "one read-only transaction for the view"
    );
    let memory: Vec<Vec<String>> = ["a", "b"]
        .iter()
        .map(|a| {
            opened
                .agent_memory(a)
                .unwrap()
                .iter()
                .map(|e| e.message_id.clone())
                .collect()
        })
        .collect();
    assert_eq!(memory, [vec!["e1".to_string()], vec!["e2".to_string()]]);
    assert_eq!(opened.agent("a").map(|a| a.llm_call_count), Some(4));
    drop(opened);
    drop(store);
    delete_db(&name).await;
}

/// The store contract's snapshot case on an IndexedDB store itself (the contract's own run
/// goes through `LazyIdb`, which has no snapshot: it opens its database on first use).
pub async fn a_snapshot_of_indexeddb_reads_what_it_reads() {
    let name = fresh_name();
    let store = Rc::new(open(&name).await);
    assert!(
        store.snapshot().unwrap().is_some(),
        "IndexedDB has a snapshot"
    );
    store_contract::a_snapshot_reads_what_the_store_reads(store).await;
    delete_db(&name).await;
}

/// Pages and memory windows (the last `n` records of a range) read the same with
/// `getAllRecords` (Chromium) and without it (the reverse cursor walk other browsers get):
/// oldest first, bounded by `n`, before a message, an empty range.
pub async fn the_last_records_read_alike_with_and_without_get_all_records() {
    let name = fresh_name();
    let store = open(&name).await;
    let mut ops = seed();
    for i in 3..=7 {
        ops.push(append("w", "c", &format!("m{i}")));
        ops.push(remember("w", "c", "a", &format!("e{i}")));
    }
    store.apply(ops).await.unwrap();
    let reads = || async {
        (
            ids(&store.messages("w", "c", None, 3).await.unwrap()),
            ids(&store.messages("w", "c", Some("m4"), 10).await.unwrap()),
            ids(&store.messages("w", "c", Some("m1"), 10).await.unwrap()),
            store
                .last_memory("w", "c", "a", 2)
                .await
                .unwrap()
                .iter()
                .map(|e| e.message_id.clone())
                .collect::<Vec<_>>(),
            store.last_memory("w", "nope", "a", 2).await.unwrap().len(),
        )
    };
    let expected = (
        vec!["m5".to_string(), "m6".into(), "m7".into()],
        vec!["m1".to_string(), "m2".into(), "m3".into()],
        Vec::<String>::new(),
        vec!["e6".to_string(), "e7".into()],
        0,
    );
    let has = js_sys::Function::new_no_args(
        "return typeof IDBObjectStore.prototype.getAllRecords === 'function'",
    );
    assert_eq!(
        has.call0(&JsValue::NULL).unwrap().as_bool(),
        Some(true),
        "this browser has getAllRecords"
    );
    assert_eq!(reads().await, expected, "with getAllRecords");
    let hide = js_sys::Function::new_no_args(
        "const p = IDBObjectStore.prototype, d = Object.getOwnPropertyDescriptor(p, 'getAllRecords');
         delete p.getAllRecords;
         return () => Object.defineProperty(p, 'getAllRecords', d);",
    );
    let restore: js_sys::Function = hide.call0(&JsValue::NULL).unwrap().into();
    let without = reads().await;
    restore.call0(&JsValue::NULL).unwrap();
    assert_eq!(without, expected, "without getAllRecords");
    drop(store);
    delete_db(&name).await;
}

/// Committed batches are on disk: a second connection sees them while the first is open, and
/// a connection opened after closing both sees everything, appends continuing in order.
pub async fn data_survives_closing_and_reopening() {
    let name = fresh_name();
    let first = open(&name).await;
    first.apply(seed()).await.unwrap();
    let second = open(&name).await;
    assert_eq!(
        ids(&second.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2"]
    );
    first.close();
    second.close();
    assert!(matches!(
        first.load_world("w").await,
        Err(StoreError::Closed(ref m)) if m.contains("closed")
    ));
    drop((first, second));

    let third = open(&name).await;
    assert_eq!(third.load_world("w").await.unwrap(), Some(world("w")));
    assert_eq!(third.agents("w").await.unwrap(), vec![agent("a")]);
    assert_eq!(third.chats("w").await.unwrap(), vec![chat("w", "c")]);
    let mem = third.last_memory("w", "c", "a", 10).await.unwrap();
    assert_eq!(mem.len(), 1);
    let states = third.agent_states("w", "c").await.unwrap();
    assert_eq!(states.first().map(|s| s.llm_call_count), Some(4));
    // Appending after a reopen continues the sequence (no collision with stored seqs).
    third.apply(vec![append("w", "c", "m3")]).await.unwrap();
    assert_eq!(
        ids(&third.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2", "m3"]
    );
    let dump = third.dump("w").await.unwrap();
    assert_eq!(dump.chats.first().map(|c| c.messages.len()), Some(3));
    drop(third);
    delete_db(&name).await;
}

/// A duplicate message id in the middle of a batch fails it with `Invalid`, and a fresh
/// connection sees nothing of the batch (not the writes before the duplicate, nor after).
pub async fn a_failing_batch_writes_nothing() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    let batch = vec![
        StoreOp::PutWorld(world("w2")),
        StoreOp::PutChat(chat("w", "c2")),
        append("w", "c2", "x1"),
        append("w", "c", "m3"),
        StoreOp::PutAgent {
            world_id: "w".into(),
            agent: agent("b"),
        },
        remember("w", "c", "a", "e2"),
        put_state("w", "c", "a", 9),
        StoreOp::DeleteAgent {
            world_id: "w".into(),
            agent_id: "a".into(),
        },
        append("w", "c", "m1"), // duplicate of a stored message
        append("w", "c", "m4"),
    ];
    let err = s.apply(batch).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m.contains("\"m1\"")),
        "unexpected error {err:?}"
    );
    // A duplicate of a message appended earlier in the same batch fails too.
    let err = s
        .apply(vec![append("w", "c", "m9"), append("w", "c", "m9")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    s.close();
    drop(s);

    let fresh = open(&name).await;
    assert_eq!(fresh.load_world("w2").await.unwrap(), None);
    assert_eq!(fresh.chats("w").await.unwrap(), vec![chat("w", "c")]);
    assert_eq!(
        ids(&fresh.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2"]
    );
    assert!(fresh
        .messages("w", "c2", None, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(fresh.agents("w").await.unwrap(), vec![agent("a")]);
    assert_eq!(fresh.last_memory("w", "c", "a", 10).await.unwrap().len(), 1);
    let states = fresh.agent_states("w", "c").await.unwrap();
    assert_eq!(states.first().map(|s| s.llm_call_count), Some(4));
    drop(fresh);
    delete_db(&name).await;
}

/// Puts `value` (a JSON text) into `store` with a raw connection, bypassing `IdbStore`.
async fn raw_put(name: &str, store: &str, value: &str) {
    let db = Database::open(name).await.expect("raw open");
    let tx = db
        .transaction(store)
        .with_mode(TransactionMode::Readwrite)
        .build()
        .expect("raw tx");
    let value: JsValue = js_sys::JSON::parse(value).expect("json");
    tx.object_store(store)
        .expect("raw store")
        .put(value)
        .primitive()
        .expect("raw put")
        .await
        .expect("raw put done");
    tx.commit().await.expect("raw commit");
    db.close();
}

/// 10,000 messages: pages at both ends and in the middle are right, and paging never reads
/// the rest of the chat. Proven without timing: message #10 is overwritten with garbage, and
/// every page that does not include it still reads fine (a full load would hit the garbage),
/// while the page that includes it reports an error naming the store.
pub async fn paging_over_ten_thousand_messages_is_bounded() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(vec![
        StoreOp::PutWorld(world("w")),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    for block in 0..5 {
        let ops = (1..=2000)
            .map(|i| append("w", "c", &format!("m{}", block * 2000 + i)))
            .collect();
        s.apply(ops).await.unwrap();
    }
    let page = |before: Option<&'static str>, limit: usize| {
        let s = &s;
        async move { ids(&s.messages("w", "c", before, limit).await.unwrap()) }
    };
    let want =
        |from: usize, to: usize| -> Vec<String> { (from..=to).map(|i| format!("m{i}")).collect() };
    assert_eq!(page(None, 50).await, want(9951, 10000));
    assert_eq!(page(Some("m9951"), 50).await, want(9901, 9950));
    assert_eq!(page(Some("m5001"), 3).await, want(4998, 5000));
    assert_eq!(page(Some("m2001"), 1).await, want(2000, 2000));
    assert_eq!(page(Some("m51"), 100).await, want(1, 50));
    assert_eq!(page(Some("m1"), 100).await, Vec::<String>::new());
    assert_eq!(page(Some("m10001"), 5).await, Vec::<String>::new());

    // seq 10 holds m10 (seqs start at 1 and follow append order).
    raw_put(
        &name,
        "messages",
        r#"{"worldId":"w","chatId":"c","seq":10,"garbage":true}"#,
    )
    .await;
    assert_eq!(page(None, 50).await, want(9951, 10000));
    assert_eq!(page(Some("m5001"), 3).await, want(4998, 5000));
    assert_eq!(page(Some("m9"), 8).await, want(1, 8));
    // The garbage has no messageId, so the index no longer finds "m10": an unknown cursor.
    assert_eq!(page(Some("m10"), 5).await, Vec::<String>::new());
    assert_eq!(page(Some("m31"), 20).await, want(11, 30));
    let err = s.messages("w", "c", Some("m12"), 5).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Corrupted(ref m) if m.contains("unreadable messages record")),
        "{err:?}"
    );
    drop(s);
    delete_db(&name).await;
}

/// Records corrupted with raw IndexedDB give errors, not panics: a record without a format
/// version, one with the right version but the wrong shape, and one from a newer format.
pub async fn corrupted_records_give_errors() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();

    raw_put(&name, "worlds", r#"{"worldId":"junk","hello":1}"#).await;
    let err = s.list_worlds().await.unwrap_err();
    assert!(
        matches!(err, StoreError::Corrupted(ref m) if m.contains("unreadable worlds record")),
        "{err:?}"
    );
    assert!(s.load_world("junk").await.is_err());
    assert_eq!(s.load_world("w").await.unwrap(), Some(world("w")));

    raw_put(
        &name,
        "agents",
        r#"{"v":1,"worldId":"w","agentId":"z","order":5,"agent":{"id":3}}"#,
    )
    .await;
    let err = s.agents("w").await.unwrap_err();
    assert!(
        matches!(err, StoreError::Corrupted(ref m) if m.contains("unreadable agents record")),
        "{err:?}"
    );
    // A batch that must read the corrupted record fails as a whole and writes nothing.
    let err = s
        .apply(vec![
            append("w", "c", "m3"),
            StoreOp::PutAgent {
                world_id: "w".into(),
                agent: agent("y"),
            },
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Corrupted(_)), "{err:?}");
    assert_eq!(
        ids(&s.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2"]
    );

    raw_put(
        &name,
        "memory",
        r#"{"v":99,"worldId":"w","chatId":"c","agentId":"a","seq":100,"entry":{}}"#,
    )
    .await;
    let err = s.last_memory("w", "c", "a", 5).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Version(ref m) if m.contains("memory")),
        "{err:?}"
    );

    raw_put(
        &name,
        "agent_states",
        r#"{"worldId":"w","chatId":"c","agentId":"q","state":"nonsense"}"#,
    )
    .await;
    assert!(s.agent_states("w", "c").await.is_err());
    assert!(s.dump("w").await.is_err());
    drop(s);
    delete_db(&name).await;
}

/// Another tab opening the database at a higher version: this connection closes at once (the
/// upgrade is not blocked) and reports a clear `Closed` error afterwards; reopening the newer
/// database with this code fails with `Version`.
pub async fn a_newer_version_elsewhere_closes_this_connection() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    let newer = SCHEMA_VERSION + 1;
    let other = Database::open(name.as_str())
        .with_version(newer)
        .with_on_upgrade_needed(|_, _| Ok(()))
        .await
        .expect("the upgrade must not be blocked by the old connection");
    let err = s.load_world("w").await.unwrap_err();
    assert!(
        matches!(err, StoreError::Closed(ref m) if m.contains("upgraded") && m.contains("reload")),
        "{err:?}"
    );
    assert!(matches!(
        s.apply(vec![append("w", "c", "m3")]).await,
        Err(StoreError::Closed(_))
    ));
    other.close();
    let err = IdbStore::open(&name).await.unwrap_err().without_cause();
    assert!(matches!(err, StoreError::Version(_)), "{err:?}");
    drop(s);
    delete_db(&name).await;
}

/// A database of the right version that this store did not create is refused with a clear
/// error instead of failing later.
pub async fn a_foreign_database_is_refused() {
    let name = fresh_name();
    let db = Database::open(name.as_str())
        .with_version(SCHEMA_VERSION)
        .with_on_upgrade_needed(|_, db| {
            db.create_object_store("kv").build()?;
            Ok(())
        })
        .await
        .expect("raw open");
    db.close();
    let err = IdbStore::open(&name).await.unwrap_err();
    assert!(
        matches!(err, StoreError::Backend(ref m) if m.contains("not created by this app")),
        "{err:?}"
    );
    delete_db(&name).await;
}

/// Deleting the database elsewhere (another tab's "delete all data") is not blocked by this
/// connection either, and later calls say what happened.
pub async fn a_delete_elsewhere_closes_this_connection() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    delete_db(&name).await;
    let err = s.list_worlds().await.unwrap_err();
    assert!(
        matches!(err, StoreError::Closed(ref m) if m.contains("deleted")),
        "{err:?}"
    );
    // A new connection starts from an empty database.
    let fresh = open(&name).await;
    assert!(fresh.list_worlds().await.unwrap().is_empty());
    drop((s, fresh));
    delete_db(&name).await;
}

/// DOMException names map to typed errors (a quota error cannot be provoked reliably in a
/// test browser, so the mapping is checked on constructed exceptions), and the exception
/// itself is attached as the cause.
pub fn dom_exceptions_map_to_typed_errors() {
    let quota =
        web_sys::DomException::new_with_message_and_name("boom", "QuotaExceededError").unwrap();
    let err = store_error_from_dom_exception("committing the batch", &quota);
    let cause = err
        .cause()
        .and_then(|c| c.get::<wasm_bindgen::JsValue>())
        .cloned();
    assert_eq!(
        cause,
        Some(wasm_bindgen::JsValue::from(quota)),
        "the very exception"
    );
    assert_eq!(err.reason(), "quota_exceeded");
    let map = |name: &str| {
        let e = web_sys::DomException::new_with_message_and_name("boom", name).unwrap();
        store_error_from_dom_exception("committing the batch", &e).without_cause()
    };
    assert!(
        matches!(map("QuotaExceededError"), StoreError::QuotaExceeded(m) if m.contains("boom"))
    );
    assert!(matches!(map("VersionError"), StoreError::Version(_)));
    assert!(matches!(map("ConstraintError"), StoreError::Invalid(_)));
    assert!(matches!(map("AbortError"), StoreError::Aborted(m) if m.contains("aborted")));
    assert!(matches!(map("InvalidStateError"), StoreError::Closed(m) if m.contains("closed")));
    assert!(matches!(map("UnknownError"), StoreError::Backend(m) if m.contains("UnknownError")));
}

/// Ops see the effects of earlier ops of the same batch: a chat deleted and re-created in one
/// batch starts empty, so re-appending an id it used to hold is not a duplicate; a chat of a
/// world deleted earlier in the batch no longer exists.
pub async fn ops_see_earlier_deletes_of_the_batch() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    s.apply(vec![
        StoreOp::DeleteChat {
            world_id: "w".into(),
            chat_id: "c".into(),
        },
        StoreOp::PutChat(chat("w", "c")),
        append("w", "c", "m1"),
    ])
    .await
    .unwrap();
    assert_eq!(ids(&s.messages("w", "c", None, 10).await.unwrap()), ["m1"]);
    assert!(s.last_memory("w", "c", "a", 10).await.unwrap().is_empty());
    let err = s
        .apply(vec![
            StoreOp::DeleteWorld {
                world_id: "w".into(),
            },
            StoreOp::PutWorld(world("w")),
            append("w", "c", "m2"),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m.contains("chat")),
        "{err:?}"
    );
    assert_eq!(ids(&s.messages("w", "c", None, 10).await.unwrap()), ["m1"]);
    drop(s);
    delete_db(&name).await;
}

/// Two connections (two tabs) appending to one chat at the same time: every message lands once
/// (the `seq` is found inside each transaction, never cached per connection, so no
/// `ConstraintError`), in the order the transactions were started, and every batch raises the
/// world's revision by exactly one whichever connection committed it.
pub async fn two_connections_append_to_one_chat() {
    let name = fresh_name();
    let a = open(&name).await;
    let b = open(&name).await;
    a.apply(seed()).await.unwrap();
    let r0 = b.revision("w").await.unwrap().unwrap();
    for i in 0..5 {
        let (x, y) = futures_util::future::join(
            a.apply(vec![
                append("w", "c", &format!("a{i}")),
                remember("w", "c", "a", &format!("a{i}")),
            ]),
            b.apply(vec![
                append("w", "c", &format!("b{i}")),
                remember("w", "c", "a", &format!("b{i}")),
            ]),
        )
        .await;
        x.unwrap();
        y.unwrap();
    }
    let mut want = vec!["m1".to_string(), "m2".to_string()];
    for i in 0..5 {
        want.push(format!("a{i}"));
        want.push(format!("b{i}"));
    }
    assert_eq!(ids(&a.messages("w", "c", None, 100).await.unwrap()), want);
    assert_eq!(ids(&b.messages("w", "c", None, 100).await.unwrap()), want);
    let mem: Vec<String> = a
        .last_memory("w", "c", "a", 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.message_id)
        .collect();
    assert_eq!(mem.len(), 11, "{mem:?}");
    assert_eq!(a.revision("w").await.unwrap(), Some(r0 + 10));
    drop((a, b));
    delete_db(&name).await;
}

/// The world lock is a Web Lock: a second connection (another tab) waits while the first holds
/// it, another world's lock is independent, and a request given up while waiting never leaves
/// the world locked.
pub async fn the_world_lock_serialises_connections() {
    use futures_util::future::{select, Either};
    use std::cell::Cell;
    let name = fresh_name();
    let a = open(&name).await;
    let b = open(&name).await;
    let held = a.lock_world("w").await.unwrap();
    // Another world is not held up.
    drop(b.lock_world("x").await.unwrap());
    let granted = Rc::new(Cell::new(false));
    let flag = granted.clone();
    let waiter = Box::pin(async {
        let g = b.lock_world("w").await.unwrap();
        flag.set(true);
        g
    });
    let waiter = match select(waiter, Box::pin(agent_world_wasm::web::timer::sleep(100))).await {
        Either::Left(_) => panic!("the lock was granted while another connection held it"),
        Either::Right((_, waiter)) => waiter,
    };
    assert!(!granted.get());
    drop(held);
    let second = waiter.await;
    assert!(granted.get());
    // Given up while waiting: dropped before it is granted, then the holder lets go.
    let abandoned = Box::pin(a.lock_world("w"));
    let abandoned = match select(abandoned, Box::pin(agent_world_wasm::web::timer::sleep(50))).await
    {
        Either::Left(_) => panic!("granted while held"),
        Either::Right((_, f)) => f,
    };
    drop(abandoned);
    drop(second);
    // The abandoned request is released as soon as it is granted: the world is free again.
    drop(b.lock_world("w").await.unwrap());
    drop((a, b));
    delete_db(&name).await;
}

/// A world record of format 1 (before revisions) reads as revision 0; the first batch naming
/// the world makes it revision 1 (a record of the `revisions` store: the row itself is left
/// as it was), and the world still reads the same.
pub async fn a_format_1_world_record_gets_its_first_revision() {
    let name = fresh_name();
    let s = open(&name).await;
    let w = serde_json::to_string(&world("old")).unwrap();
    raw_put(
        &name,
        "worlds",
        &format!(r#"{{"v":1,"worldId":"old","world":{w}}}"#),
    )
    .await;
    assert_eq!(s.revision("old").await.unwrap(), Some(0));
    assert_eq!(s.load_world("old").await.unwrap(), Some(world("old")));
    s.apply(vec![StoreOp::PutAgent {
        world_id: "old".into(),
        agent: agent("a"),
    }])
    .await
    .unwrap();
    assert_eq!(s.revision("old").await.unwrap(), Some(1));
    assert_eq!(s.load_world("old").await.unwrap(), Some(world("old")));
    assert_eq!(
        raw_world(&name, "old").await,
        (1.0, None),
        "(v, rev) of the record, not rewritten"
    );
    drop(s);
    delete_db(&name).await;
}

/// `(v, rev)` of a raw world record.
async fn raw_world(name: &str, id: &str) -> (f64, Option<f64>) {
    let db = Database::open(name).await.expect("raw open");
    let tx = db.transaction("worlds").build().expect("raw tx");
    let row: Option<JsValue> = tx
        .object_store("worlds")
        .expect("raw store")
        .get::<JsValue, JsValue, _>(indexed_db_futures::KeyRange::Only(JsValue::from_str(id)))
        .primitive()
        .expect("raw get")
        .await
        .expect("raw get done");
    let row = row.expect("the record");
    let num = |k: &str| {
        js_sys::Reflect::get(&row, &JsValue::from_str(k))
            .unwrap()
            .as_f64()
    };
    let out = (num("v").unwrap(), num("rev"));
    drop(tx);
    db.close();
    out
}

/// An upgrade blocked by a connection (another tab) to the older version that does not give way
/// fails at once with `Blocked` instead of hanging; once that connection closes, the database is
/// at the newer version, which this code's version then refuses with `Version`.
pub async fn a_blocked_upgrade_fails_with_blocked() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    drop(s);
    // Another tab's connection with no versionchange handler: it never closes by itself.
    let stubborn = Database::open(name.as_str())
        .with_version(SCHEMA_VERSION)
        .await
        .expect("raw open");
    let err = IdbStore::open_version(&name, SCHEMA_VERSION + 1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Blocked(ref m) if m.contains("does not close")),
        "{err:?}"
    );
    assert_eq!(err.reason(), "blocked");
    // The blocked request stays queued and upgrades once the connection closes; opens are
    // served in order, so this code's version then finds the newer database. Data is intact.
    stubborn.close();
    let err = IdbStore::open(&name).await.unwrap_err().without_cause();
    assert!(matches!(err, StoreError::Version(_)), "{err:?}");
    let newer = IdbStore::open_version(&name, SCHEMA_VERSION + 1)
        .await
        .unwrap();
    assert_eq!(
        ids(&newer.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2"]
    );
    drop(newer);
    delete_db(&name).await;
}

/// A database made by the version-1 app (six stores, no `approvals`) is upgraded in place when
/// this app opens it: its data stay, and pending approvals can be written and read.
pub async fn a_version_1_database_gains_the_approvals_store() {
    let name = fresh_name();
    let db = Database::open(name.as_str())
        .with_version(1u32)
        .with_on_upgrade_needed(|_, db| version_1_schema(&db))
        .await
        .expect("version 1 open");
    db.close();
    let w = serde_json::to_string(&world("w")).unwrap();
    raw_put(
        &name,
        "worlds",
        &format!(r#"{{"v":2,"worldId":"w","world":{w},"rev":3}}"#),
    )
    .await;
    let c = serde_json::to_string(&chat("w", "c")).unwrap();
    raw_put(
        &name,
        "chats",
        &format!(r#"{{"v":2,"worldId":"w","chatId":"c","chat":{c}}}"#),
    )
    .await;

    let s = open(&name).await;
    assert_eq!(
        s.load_world("w").await.unwrap(),
        Some(world("w")),
        "data kept"
    );
    assert_eq!(s.revision("w").await.unwrap(), Some(3));
    assert_eq!(s.approvals("w", "c").await.unwrap(), vec![]);
    let a = store_contract::approval("w", "c", "ap1", "alice", 1);
    s.apply(vec![StoreOp::PutApproval(Box::new(a.clone()))])
        .await
        .unwrap();
    assert_eq!(s.approvals("w", "c").await.unwrap(), vec![a]);
    drop(s);
    delete_db(&name).await;
}

/// An upgrade step that fails (here version 2's, whose `approvals` store another program
/// already made in a version-1 database) fails the open with the step's own error, not the
/// browser's abort of the upgrade it causes, and leaves the database at its old version.
pub async fn a_failing_upgrade_step_reports_its_error_and_keeps_the_old_version() {
    let name = fresh_name();
    let db = Database::open(name.as_str())
        .with_version(1u32)
        .with_on_upgrade_needed(|_, db| {
            version_1_schema(&db)?;
            db.create_object_store("approvals").build()?;
            Ok(())
        })
        .await
        .expect("version 1 open");
    db.close();

    let err = IdbStore::open(&name).await.unwrap_err();
    // The step's ConstraintError (the abort would be `aborted`: "the transaction was aborted").
    assert_eq!(err.reason(), "invalid", "got {err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&format!("opening database {name:?}: ")) && text.contains("exists"),
        "{text}"
    );
    let old = Database::open(name.as_str())
        .await
        .expect("the database still opens");
    assert_eq!(old.version(), 1.0, "the upgrade was rolled back");
    assert!(
        !old.object_store_names().any(|s| s == "revisions"),
        "no store of the failed upgrade is kept"
    );
    old.close();
    drop(err);
    delete_db(&name).await;
}

/// The engine's common batches (a message, a reply) go in one burst once the connection knows
/// the world (`src/web/idb_fast.rs`): checks and writes issued together, a failed check
/// aborting the transaction. Each way the burst can fail leaves nothing of the batch written
/// and gives the error the read round gives (the memory store's rules and texts).
pub async fn a_write_in_one_burst_that_fails_a_check_writes_nothing() {
    let name = fresh_name();
    let a = open(&name).await;
    a.apply(seed()).await.unwrap();
    let rev = a.revision("w").await.unwrap().unwrap();
    let mut renamed = chat("w", "c");
    renamed.name = "Renamed".into();
    // A turn the connection knows everything of: written.
    a.apply(vec![
        expect_rev(rev),
        append("w", "c", "m3"),
        remember("w", "c", "a", "m3"),
        put_state("w", "c", "a", 5),
        StoreOp::PutChat(chat("w", "c")),
    ])
    .await
    .unwrap();
    let rev = rev + 1;
    assert_eq!(a.revision("w").await.unwrap(), Some(rev));

    // A chat that does not exist (the connection does not know it: the read round reports it).
    let err = a
        .apply(vec![
            expect_rev(rev),
            append("w", "c", "m4"),
            StoreOp::PutChat(renamed.clone()),
            put_state("w", "gone", "a", 1),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m == "chat \"gone\" does not exist in world \"w\""),
        "{err:?}"
    );
    // A message id that is stored already (the unique index refuses the add).
    let err = a
        .apply(vec![
            expect_rev(rev),
            append("w", "c", "m4"),
            StoreOp::PutChat(renamed.clone()),
            append("w", "c", "m1"),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m == "message \"m1\" already exists in chat \"c\""),
        "{err:?}"
    );
    // A failed burst forgets what the connection knew; the next write (through the read round)
    // teaches it again.
    a.apply(vec![expect_rev(rev), append("w", "c", "m4")])
        .await
        .unwrap();
    // Another connection moved the world: the burst's revision check fails, nothing is written.
    let b = open(&name).await;
    b.apply(vec![expect_rev(rev + 1), append("w", "c", "b1")])
        .await
        .unwrap();
    let err = a
        .apply(vec![
            expect_rev(rev + 1),
            StoreOp::PutChat(renamed.clone()),
            put_state("w", "c", "a", 6),
        ])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");

    let fresh = open(&name).await;
    assert_eq!(
        ids(&fresh.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2", "m3", "m4", "b1"]
    );
    assert_eq!(fresh.chats("w").await.unwrap(), vec![chat("w", "c")]);
    let states = fresh.agent_states("w", "c").await.unwrap();
    assert_eq!(
        states.iter().map(|s| s.llm_call_count).collect::<Vec<_>>(),
        [5]
    );
    assert_eq!(fresh.revision("w").await.unwrap(), Some(rev + 2));
    // Once the engine has reloaded (the revision read again), the same connection writes on:
    // what it knew of the chat's `seq`s is not used past another writer.
    a.apply(vec![
        expect_rev(rev + 2),
        append("w", "c", "m5"),
        remember("w", "c", "a", "m5"),
    ])
    .await
    .unwrap();
    a.apply(vec![expect_rev(rev + 3), append("w", "c", "m6")])
        .await
        .unwrap();
    assert_eq!(
        ids(&fresh.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2", "m3", "m4", "b1", "m5", "m6"]
    );
    let mem = fresh.last_memory("w", "c", "a", 10).await.unwrap();
    let mem: Vec<&str> = mem.iter().map(|e| e.message_id.as_str()).collect();
    assert_eq!(mem, ["e1", "m3", "m5"]);
    drop((a, b, fresh));
    delete_db(&name).await;
}

/// What database version 1 created (idb_schema's `v1`), as a released app left it.
fn version_1_schema(db: &Database) -> Result<(), indexed_db_futures::error::Error> {
    use indexed_db_futures::KeyPath;
    db.create_object_store("worlds")
        .with_key_path(KeyPath::from("worldId"))
        .build()?;
    db.create_object_store("agents")
        .with_key_path(KeyPath::from(["worldId", "agentId"]))
        .build()?;
    db.create_object_store("chats")
        .with_key_path(KeyPath::from(["worldId", "chatId"]))
        .build()?;
    let messages = db
        .create_object_store("messages")
        .with_key_path(KeyPath::from(["worldId", "chatId", "seq"]))
        .build()?;
    messages
        .create_index(
            "byMessageId",
            KeyPath::from(["worldId", "chatId", "messageId"]),
        )
        .with_unique(true)
        .build()?;
    db.create_object_store("memory")
        .with_key_path(KeyPath::from(["worldId", "chatId", "agentId", "seq"]))
        .build()?;
    db.create_object_store("agent_states")
        .with_key_path(KeyPath::from(["worldId", "chatId", "agentId"]))
        .build()?;
    Ok(())
}

/// What database version 2 created (idb_schema's `v1` and `v2`), as a released app left it.
fn version_2_schema(db: &Database) -> Result<(), indexed_db_futures::error::Error> {
    use indexed_db_futures::KeyPath;
    version_1_schema(db)?;
    db.create_object_store("approvals")
        .with_key_path(KeyPath::from(["worldId", "chatId", "approvalId"]))
        .build()?;
    Ok(())
}

/// A database made by the version-2 app (revisions in the world rows) is upgraded in place
/// when this app opens it: its data stay, each world goes on from the revision its row held
/// (a world without one from 0), a batch planned at an older revision still conflicts, and
/// two connections keep raising it by one per batch.
pub async fn a_version_2_database_keeps_its_data_and_revisions() {
    let name = fresh_name();
    let db = Database::open(name.as_str())
        .with_version(2u32)
        .with_on_upgrade_needed(|_, db| version_2_schema(&db))
        .await
        .expect("version 2 open");
    db.close();
    let w = serde_json::to_string(&world("w")).unwrap();
    raw_put(
        &name,
        "worlds",
        &format!(r#"{{"v":3,"worldId":"w","world":{w},"rev":5}}"#),
    )
    .await;
    let old = serde_json::to_string(&world("old")).unwrap();
    raw_put(
        &name,
        "worlds",
        &format!(r#"{{"v":1,"worldId":"old","world":{old}}}"#),
    )
    .await;
    let c = serde_json::to_string(&chat("w", "c")).unwrap();
    raw_put(
        &name,
        "chats",
        &format!(r#"{{"v":3,"worldId":"w","chatId":"c","chat":{c}}}"#),
    )
    .await;
    let m = serde_json::to_string(&msg("c", "m1")).unwrap();
    raw_put(
        &name,
        "messages",
        &format!(r#"{{"v":3,"worldId":"w","chatId":"c","seq":1,"messageId":"m1","message":{m}}}"#),
    )
    .await;

    let a = open(&name).await;
    let raw = Database::open(name.as_str()).await.expect("raw open");
    assert_eq!(raw.version(), f64::from(SCHEMA_VERSION));
    assert!(raw.object_store_names().any(|n| n == "revisions"));
    raw.close();
    assert_eq!(
        a.load_world("w").await.unwrap(),
        Some(world("w")),
        "data kept"
    );
    assert_eq!(a.chats("w").await.unwrap(), vec![chat("w", "c")]);
    assert_eq!(ids(&a.messages("w", "c", None, 10).await.unwrap()), ["m1"]);
    assert_eq!(a.revision("w").await.unwrap(), Some(5));
    assert_eq!(a.revision("old").await.unwrap(), Some(0));
    let err = a
        .apply(vec![expect_rev(4), append("w", "c", "stale")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    // The first write reads, the next ones go in one burst.
    for (i, id) in ["m2", "m3"].iter().enumerate() {
        a.apply(vec![expect_rev(5 + i as u64), append("w", "c", id)])
            .await
            .unwrap();
    }
    let b = open(&name).await;
    assert_eq!(b.revision("w").await.unwrap(), Some(7));
    b.apply(vec![expect_rev(7), append("w", "c", "b1")])
        .await
        .unwrap();
    let err = a
        .apply(vec![expect_rev(7), append("w", "c", "a-stale")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    a.apply(vec![expect_rev(8), append("w", "c", "m4")])
        .await
        .unwrap();
    assert_eq!(
        ids(&b.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2", "m3", "b1", "m4"]
    );
    assert_eq!(b.revision("w").await.unwrap(), Some(9));
    s_apply_old(&a).await;
    assert_eq!(a.revision("old").await.unwrap(), Some(1));
    drop((a, b));
    delete_db(&name).await;
}

/// Writes to the world of format 1 that `a_version_2_database_keeps_its_data_and_revisions`
/// stored (its first revision).
async fn s_apply_old(s: &IdbStore) {
    s.apply(vec![StoreOp::PutAgent {
        world_id: "old".into(),
        agent: agent("a"),
    }])
    .await
    .unwrap();
}

/// Deleting a world does not reset its revision: it goes on rising, so a connection that knew
/// the world before another tab deleted and re-created it (same id) conflicts instead of
/// writing into the new world with what it knew of the old one.
pub async fn a_deleted_world_keeps_its_revision_rising() {
    let name = fresh_name();
    let a = open(&name).await;
    a.apply(seed()).await.unwrap();
    // `a` knows the world at this revision (it wrote it twice: the second write in one burst).
    let r = a.revision("w").await.unwrap().unwrap();
    a.apply(vec![expect_rev(r), append("w", "c", "m3")])
        .await
        .unwrap();
    let known = r + 1;
    // Another tab deletes the world, creates it again and changes a counter.
    let b = open(&name).await;
    let delete = StoreOp::DeleteWorld {
        world_id: "w".into(),
    };
    b.apply(vec![expect_rev(known), delete]).await.unwrap();
    let after_delete = b.revision("w").await.unwrap().unwrap();
    let mut again = vec![expect_rev(after_delete)];
    again.extend(seed());
    b.apply(again).await.unwrap();
    let rev = b.revision("w").await.unwrap().unwrap();
    b.apply(vec![expect_rev(rev), put_state("w", "c", "a", 7)])
        .await
        .unwrap();
    // `a` still believes the world is the one it knew.
    let err = a
        .apply(vec![expect_rev(known), append("w", "c", "m4")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(
        ids(&b.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2"]
    );
    assert_eq!(after_delete, known + 1, "the delete raised the revision");
    assert_eq!(b.revision("w").await.unwrap(), Some(known + 3));
    drop((a, b));
    delete_db(&name).await;
}

/// Over quota, a batch that only deletes is retried without raising the revision (adding the
/// revision record is a write the full origin refuses), so another tab can delete a chat
/// behind a revision that did not move. Its change notice makes this connection forget what
/// it knew of the world: the next write reads first, and an append to the deleted chat is
/// refused instead of written (with the chat's row put back).
pub async fn a_change_notice_makes_the_connection_read_before_writing() {
    let name = fresh_name();
    let a = open(&name).await;
    a.apply(seed()).await.unwrap();
    let rev = a.revision("w").await.unwrap().unwrap();
    // `a` knows the world now (this write went in one burst after the seed taught it).
    a.apply(vec![expect_rev(rev), append("w", "c", "m3")])
        .await
        .unwrap();
    // What the other tab's over-quota retry leaves: the chat gone, the revision unmoved, and
    // its notice on the database's channel.
    let db = Database::open(name.as_str()).await.expect("raw open");
    let tx = db
        .transaction("chats")
        .with_mode(TransactionMode::Readwrite)
        .build()
        .expect("raw tx");
    let chat_key: JsValue = js_sys::Array::of2(&"w".into(), &"c".into()).into();
    tx.object_store("chats")
        .expect("raw store")
        .delete::<JsValue, _>(indexed_db_futures::KeyRange::Only(chat_key))
        .primitive()
        .expect("raw delete")
        .await
        .expect("raw delete done");
    tx.commit().await.expect("raw commit");
    db.close();
    let other = web_sys::BroadcastChannel::new(&format!("agent-world-wasm:{name}")).unwrap();
    let notice = js_sys::JSON::parse(r#"{"worldId":"w","what":"write"}"#).unwrap();
    other.post_message(&notice).unwrap();
    agent_world_wasm::web::timer::sleep(100).await;
    assert_eq!(a.revision("w").await.unwrap(), Some(rev + 1));
    let err = a
        .apply(vec![
            expect_rev(rev + 1),
            append("w", "c", "m4"),
            StoreOp::PutChat(chat("w", "c")),
        ])
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Invalid(ref m) if m == "chat \"c\" does not exist in world \"w\""),
        "{err:?}"
    );
    assert_eq!(a.chats("w").await.unwrap(), vec![]);
    other.close();
    drop(a);
    delete_db(&name).await;
}

/// `chat.messageCount` of the raw `chats` record `[w, c]`, as stored.
async fn raw_chat_count(name: &str, w: &str, c: &str) -> f64 {
    let db = Database::open(name).await.expect("raw open");
    let tx = db.transaction("chats").build().expect("raw tx");
    let k: JsValue = js_sys::Array::of2(&JsValue::from_str(w), &JsValue::from_str(c)).into();
    let row: Option<JsValue> = tx
        .object_store("chats")
        .expect("raw store")
        .get::<JsValue, JsValue, _>(indexed_db_futures::KeyRange::Only(k))
        .primitive()
        .expect("raw get")
        .await
        .expect("raw get done");
    let row = row.expect("the record");
    let chat = js_sys::Reflect::get(&row, &JsValue::from_str("chat")).unwrap();
    let n = js_sys::Reflect::get(&chat, &JsValue::from_str("messageCount"))
        .unwrap()
        .as_f64()
        .unwrap();
    drop(tx);
    db.close();
    n
}

/// Chat `c` of world `w` as every reader of the store sees it: `chats`, `dump` (export), a
/// second connection (another tab) and, after closing, a reopened one.
async fn chat_everywhere(name: &str, s: &IdbStore, want: &agent_world_wasm::core::model::Chat) {
    assert_eq!(s.chats("w").await.unwrap(), vec![want.clone()], "chats");
    let dump = s.dump("w").await.unwrap();
    assert_eq!(
        dump.chats.first().and_then(|c| c.chat.clone()),
        Some(want.clone()),
        "dump"
    );
    let other = open(name).await;
    assert_eq!(other.chats("w").await.unwrap(), vec![want.clone()], "other");
    other.close();
}

/// World `w`'s revision as `s` reads it.
async fn rev(s: &IdbStore) -> u64 {
    s.revision("w").await.unwrap().unwrap()
}

/// The engine's message: the chat's count one up and its `updatedAt` later, with the revision
/// the connection committed last (what a send and a reply do).
fn sent(rev: u64, c: &mut agent_world_wasm::core::model::Chat, id: &str) -> Vec<StoreOp> {
    c.message_count += 1;
    c.updated_at = Timestamp(c.updated_at.0 + 10);
    vec![
        expect_rev(rev),
        append("w", "c", id),
        remember("w", "c", "a", id),
        StoreOp::PutChat(c.clone()),
    ]
}

/// A message or a reply appends to the chat without rewriting its record (database version
/// 4): the count and `updatedAt` ride on the message. Every reader sees the chat as it was
/// put, through sends, a rename, an edit that deletes, deletes and replaces that do not put
/// the chat, appends by another connection, and a reopen.
pub async fn a_send_leaves_the_chat_record_and_every_reader_sees_its_count() {
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    // The seed taught the connection the chat: every send is one burst.
    let mut c = chat("w", "c");
    for id in ["s1", "s2", "s3"] {
        s.apply(sent(rev(&s).await, &mut c, id)).await.unwrap();
    }
    assert_eq!(c.message_count, 3);
    assert_eq!(
        raw_chat_count(&name, "w", "c").await,
        0.0,
        "the sends left the record"
    );
    chat_everywhere(&name, &s, &c).await;

    // A rename is written (and counts go on from it).
    c.name = "Renamed".into();
    c.updated_at = Timestamp(c.updated_at.0 + 10);
    let r = rev(&s).await;
    s.apply(vec![expect_rev(r), StoreOp::PutChat(c.clone())])
        .await
        .unwrap();
    assert_eq!(raw_chat_count(&name, "w", "c").await, 3.0);
    s.apply(sent(rev(&s).await, &mut c, "s4")).await.unwrap();
    chat_everywhere(&name, &s, &c).await;

    // The engine's delete of the newest message puts the chat.
    c.message_count -= 1;
    c.updated_at = Timestamp(c.updated_at.0 + 10);
    s.apply(vec![
        StoreOp::DeleteMessages {
            world_id: "w".into(),
            chat_id: "c".into(),
            message_ids: vec!["s4".into()],
        },
        StoreOp::PutChat(c.clone()),
    ])
    .await
    .unwrap();
    chat_everywhere(&name, &s, &c).await;

    // Batches that change the newest message without putting the chat leave it as it was:
    // a delete of the newest (stamped) message, a replace of it, appends (in one burst and
    // through the read round of another connection).
    s.apply(sent(rev(&s).await, &mut c, "s5")).await.unwrap();
    s.apply(sent(rev(&s).await, &mut c, "s6")).await.unwrap();
    s.apply(vec![StoreOp::DeleteMessages {
        world_id: "w".into(),
        chat_id: "c".into(),
        message_ids: vec!["s6".into()],
    }])
    .await
    .unwrap();
    chat_everywhere(&name, &s, &c).await;
    s.apply(sent(rev(&s).await, &mut c, "s7")).await.unwrap();
    s.apply(vec![StoreOp::ReplaceMessage {
        world_id: "w".into(),
        chat_id: "c".into(),
        old_message_id: "s7".into(),
        message: msg("c", "s7b"),
    }])
    .await
    .unwrap();
    chat_everywhere(&name, &s, &c).await;
    s.apply(sent(rev(&s).await, &mut c, "s8")).await.unwrap();
    let r = rev(&s).await;
    s.apply(vec![expect_rev(r), append("w", "c", "s9")])
        .await
        .unwrap();
    chat_everywhere(&name, &s, &c).await;
    let other = open(&name).await;
    s.apply(sent(rev(&s).await, &mut c, "s10")).await.unwrap();
    other.apply(vec![append("w", "c", "o1")]).await.unwrap();
    chat_everywhere(&name, &s, &c).await;
    // The other connection's send (read round, then a burst) and this one's after it.
    other
        .apply(sent(rev(&other).await, &mut c, "o2"))
        .await
        .unwrap();
    other
        .apply(sent(rev(&other).await, &mut c, "o3"))
        .await
        .unwrap();
    s.apply(sent(rev(&s).await, &mut c, "s11")).await.unwrap();
    chat_everywhere(&name, &other, &c).await;
    assert_eq!(
        ids(&s.messages("w", "c", None, 100).await.unwrap()),
        ["m1", "m2", "s1", "s2", "s3", "s5", "s7b", "s8", "s9", "s10", "o1", "o2", "o3", "s11"]
    );

    // Closed and reopened: the same chat; deleted: gone.
    s.close();
    other.close();
    drop((s, other));
    let reopened = open(&name).await;
    chat_everywhere(&name, &reopened, &c).await;
    reopened
        .apply(vec![StoreOp::DeleteChat {
            world_id: "w".into(),
            chat_id: "c".into(),
        }])
        .await
        .unwrap();
    assert_eq!(reopened.chats("w").await.unwrap(), vec![]);
    drop(reopened);
    delete_db(&name).await;
}

/// A database of version 3 (chat records hold their counts, no message has a stamp) opens at
/// version 4 with its data and revisions, and the chat reads as it did; sends go on from it.
pub async fn a_version_3_database_keeps_its_chats() {
    let name = fresh_name();
    let old = IdbStore::open_version(&name, 3).await.unwrap();
    // No `ExpectRevision`: written through the read round, as version 3 wrote every batch.
    old.apply(seed()).await.unwrap();
    let mut c = chat("w", "c");
    c.message_count = 3;
    c.updated_at = Timestamp(5);
    old.apply(vec![append("w", "c", "m3"), StoreOp::PutChat(c.clone())])
        .await
        .unwrap();
    old.close();
    drop(old);

    let s = open(&name).await;
    let raw = Database::open(name.as_str()).await.expect("raw open");
    assert_eq!(raw.version(), 4.0);
    raw.close();
    assert_eq!(rev(&s).await, 2);
    chat_everywhere(&name, &s, &c).await;
    for id in ["s1", "s2"] {
        s.apply(sent(rev(&s).await, &mut c, id)).await.unwrap();
    }
    chat_everywhere(&name, &s, &c).await;
    assert_eq!(
        ids(&s.messages("w", "c", None, 10).await.unwrap()),
        ["m1", "m2", "m3", "s1", "s2"]
    );
    drop(s);
    delete_db(&name).await;
}

/// A record with a bad field is an error naming the store, the record and the first bad field
/// in the order the fields are read, word for word, for every kind of record the store reads
/// (a world's `rev` is read before its `world`; a message's chat stamp after its `message`);
/// `null` is a missing chat stamp.
pub async fn a_bad_field_of_a_record_is_an_error_naming_the_record_and_the_field() {
    use agent_world_wasm::core::json_write::ToJson;
    let name = fresh_name();
    let s = open(&name).await;
    s.apply(seed()).await.unwrap();
    let message = msg("c", "m9").to_json();
    let text = |r: Result<String, StoreError>| match r {
        Ok(v) => format!("ok {v}"),
        Err(e) => format!("{:?}: {e}", e.code()),
    };
    let mut got = Vec::new();

    let w = |rest: &str| format!(r#"{{"v":3,"worldId":"w2",{rest}}}"#);
    raw_put(&name, "worlds", &w(r#""world":{"id":3},"rev":"x""#)).await;
    got.push(text(s.load_world("w2").await.map(|w| format!("{w:?}"))));
    raw_put(&name, "worlds", &w(r#""world":{"id":3},"more":1"#)).await;
    got.push(text(s.load_world("w2").await.map(|w| format!("{w:?}"))));
    raw_put(&name, "worlds", r#"{"v":1.5,"worldId":"w2","world":{}}"#).await;
    got.push(text(s.list_worlds().await.map(|w| format!("{}", w.len()))));
    raw_put(&name, "worlds", &w(r#""world":{"id":3}"#)).await;
    got.push(text(
        s.load_world("w2").await.map(|w| format!("{}", w.is_some())),
    ));

    let a = r#"{"v":3,"worldId":"w2","agentId":"z","order":"5","agent":{"id":3}}"#;
    raw_put(&name, "agents", a).await;
    got.push(text(s.agents("w2").await.map(|a| format!("{}", a.len()))));
    raw_put(
        &name,
        "chats",
        r#"{"v":3,"worldId":"w2","chatId":7,"chat":{"id":1}}"#,
    )
    .await;
    got.push(text(s.chats("w2").await.map(|c| format!("{}", c.len()))));

    let m = |rest: &str| format!(r#"{{"v":3,"worldId":"w3","chatId":"c","seq":1,{rest}}}"#);
    raw_put(
        &name,
        "messages",
        &m(r#""messageId":"m9","message":{"id":2},"chatCount":"x""#),
    )
    .await;
    let page = || async {
        s.messages("w3", "c", None, 5)
            .await
            .map(|m| format!("{}", m.len()))
    };
    got.push(text(page().await));
    let stamp = r#""chatCount":"x","chatUpdatedAt":5"#;
    raw_put(
        &name,
        "messages",
        &m(&format!(r#""messageId":"m9","message":{message},{stamp}"#)),
    )
    .await;
    got.push(text(page().await));
    let stamp = r#""chatCount":null,"chatUpdatedAt":null"#;
    raw_put(
        &name,
        "messages",
        &m(&format!(r#""messageId":"m9","message":{message},{stamp}"#)),
    )
    .await;
    got.push(text(page().await));
    raw_put(&name, "messages", &m(r#""message":{"id":2}"#)).await;
    got.push(text(page().await));

    let memory = r#"{"v":3,"worldId":"w3","chatId":"c","agentId":"a","seq":"1","entry":{}}"#;
    raw_put(&name, "memory", memory).await;
    got.push(text(
        s.last_memory("w3", "c", "a", 5)
            .await
            .map(|m| format!("{}", m.len())),
    ));
    let st = r#"{"v":3,"worldId":"w3","chatId":"c","agentId":"q","state":"nonsense"}"#;
    raw_put(&name, "agent_states", st).await;
    got.push(text(
        s.agent_states("w3", "c")
            .await
            .map(|m| format!("{}", m.len())),
    ));
    let ap = r#"{"v":3,"worldId":"w3","chatId":"c","approvalId":5,"approval":{}}"#;
    raw_put(&name, "approvals", ap).await;
    got.push(text(
        s.approvals("w3", "c").await.map(|m| format!("{}", m.len())),
    ));
    got.push(text(s.dump("w2").await.map(|_| "dump".to_string())));

    let bad = |store: &str, at: &str, why: &str| {
        format!(
            "\"storage_error\": stored data is corrupted: unreadable {store} record {at}: {why}; \
             delete it or clear this site's data"
        )
    };
    let (w2, c) = (r#""w2""#, r#"in chat "c" of world "w3""#);
    let want = [
        bad("worlds", w2, "rev must be a number (got a string)"),
        bad(
            "worlds",
            w2,
            "more is not a known field; the fields are v, worldId, world, rev",
        ),
        bad(
            "worlds",
            "(listing worlds)",
            "v must be an integer from 0 to 4294967295 (got a fractional number)",
        ),
        bad("worlds", w2, "world.id must be a string (got an integer)"),
        bad(
            "agents",
            r#"in world "w2""#,
            "order must be a number (got a string)",
        ),
        bad(
            "chats",
            r#"in world "w2""#,
            "chatId must be a string (got an integer)",
        ),
        bad(
            "messages",
            c,
            "message.id is not a known field; the fields are messageId, chatId, sender, \
             content, createdAt, replyToMessageId, kind, toolCalls",
        ),
        bad("messages", c, "chatCount must be a number (got a string)"),
        "ok 1".to_string(),
        bad("messages", c, "messageId is missing"),
        bad(
            "memory",
            &format!(r#"of agent "a" {c}"#),
            "seq must be a number (got a string)",
        ),
        bad("agent_states", c, "state must be an object (got a string)"),
        bad(
            "approvals",
            c,
            "approvalId must be a string (got an integer)",
        ),
        bad("worlds", w2, "world.id must be a string (got an integer)"),
    ];
    assert_eq!(got, want);
    drop(s);
    delete_db(&name).await;
}
