//! Several writers on one world (the native model of two tabs on one IndexedDB database): two
//! `World`s over one MemoryStore. Each batch carries the revision its view mirrors; a batch
//! planned from a view another writer moved is refused, the view reloaded and the change
//! planned again, so counts, counters, memory windows and chats stay right; storage
//! failures are typed, reported as `system` `error` events and leave the world usable.
#![cfg(not(target_arch = "wasm32"))] // native ring; the memory store's test hooks are native-only
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine_harness;

use std::cell::RefCell;
use std::rc::Rc;

use agent_world_wasm::core::approval::ApprovalRecord;
use agent_world_wasm::core::engine::World;
use agent_world_wasm::core::error::WorldError;
use agent_world_wasm::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use agent_world_wasm::core::store::{
    AgentChatState, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump,
};
use engine_harness::*;
use futures_executor::block_on;
use serde_json::Value;

/// A second writer: the same world opened again over the same store, with its own events.
struct Second {
    world: World,
    events: Rc<RefCell<Vec<(agent_world_wasm::core::events::Topic, Value)>>>,
    _subs: Vec<agent_world_wasm::core::events::Subscription>,
}

fn second(h: &H) -> Second {
    let world = h.reopen();
    let events = Rc::new(RefCell::new(Vec::new()));
    let subs = record(&world, &events);
    Second {
        world,
        events,
        _subs: subs,
    }
}

fn external_changes(
    events: &Rc<RefCell<Vec<(agent_world_wasm::core::events::Topic, Value)>>>,
) -> Vec<Value> {
    events
        .borrow()
        .iter()
        .filter(|(_, v)| v["type"] == "external-change")
        .map(|(_, v)| v.clone())
        .collect()
}

fn stored_chat(h: &H, chat_id: &str) -> agent_world_wasm::core::model::Chat {
    block_on(h.store.chats(&h.world.id()))
        .unwrap()
        .into_iter()
        .find(|c| c.id == chat_id)
        .unwrap()
}

#[test]
fn interleaved_writers_keep_message_count_counters_and_memory_right() {
    let h = harness();
    h.add("alice");
    let b = second(&h);
    let chat = h.world.current_chat().unwrap().id;
    h.llm.reply("alice", "hi from alice (1)");
    h.send("hello from A");
    // B's view was loaded before A wrote: its next change reloads first.
    h.llm.reply("alice", "hi from alice (2)");
    block_on(b.world.send("hello from B", None)).unwrap();
    block_on(b.world.run_until_idle());
    assert_eq!(
        external_changes(&b.events).len(),
        1,
        "B reloaded once before writing"
    );
    h.llm.reply("alice", "hi from alice (3)");
    h.send("again from A");

    let msgs = block_on(h.world.messages(&chat, None, 100)).unwrap();
    let contents: Vec<&str> = msgs.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        contents,
        [
            "hello from A",
            "hi from alice (1)",
            "hello from B",
            "hi from alice (2)",
            "again from A",
            "hi from alice (3)"
        ]
    );
    // The stored count is the number of stored messages (a stale view would have said 4).
    assert_eq!(stored_chat(&h, &chat).message_count, 6);
    assert_eq!(h.world.current_chat().unwrap().message_count, 6);
    // Alice's window in A holds B's exchange too (in append order).
    let mem: Vec<String> = h.memory("alice").into_iter().map(|(_, c)| c).collect();
    assert_eq!(
        mem,
        [
            "hello from A",
            "hi from alice (1)",
            "hello from B",
            "hi from alice (2)",
            "again from A",
            "hi from alice (3)"
        ]
    );
    // A human message resets the counter, the reply raises it: 1 in both views after a refresh.
    assert_eq!(h.count("alice"), 1);
    assert!(
        !block_on(h.world.refresh()).unwrap(),
        "A wrote last: nothing to reload"
    );
    assert!(block_on(b.world.refresh()).unwrap());
    assert_eq!(b.world.agent("alice").unwrap().llm_call_count, 1);
    assert_eq!(b.world.current_chat().unwrap().message_count, 6);
}

#[test]
fn concurrent_sends_from_two_writers_lose_nothing() {
    let h = harness();
    let b = second(&h);
    // Every write yields a few times, so the two writers' changes really interleave.
    h.store.set_apply_delay(3);
    let chat = h.world.current_chat().unwrap().id;
    block_on(async {
        for i in 0..10 {
            let (x, y) = futures_util::future::join(
                h.world.send(&format!("A{i}"), None),
                b.world.send(&format!("B{i}"), None),
            )
            .await;
            x.unwrap();
            y.unwrap();
        }
    });
    let msgs = block_on(h.world.messages(&chat, None, 100)).unwrap();
    assert_eq!(msgs.len(), 20);
    for i in 0..10 {
        for who in ["A", "B"] {
            let n = msgs
                .iter()
                .filter(|m| m.content == format!("{who}{i}"))
                .count();
            assert_eq!(n, 1, "{who}{i} stored exactly once");
        }
    }
    assert_eq!(stored_chat(&h, &chat).message_count, 20);
    block_on(h.world.refresh()).unwrap();
    block_on(b.world.refresh()).unwrap();
    assert_eq!(h.world.current_chat().unwrap().message_count, 20);
    assert_eq!(b.world.current_chat().unwrap().message_count, 20);
}

#[test]
fn refresh_sees_agents_chats_and_a_chat_switch_made_by_another_writer() {
    let h = harness();
    h.send("first chat message");
    let first = h.world.current_chat().unwrap().id;
    let b = second(&h);
    block_on(b.world.add_agent(agent_world_wasm::core::model::NewAgent {
        name: "Bob".into(),
        provider: "openai".into(),
        model: "bob".into(),
        ..Default::default()
    }))
    .unwrap();
    let new_chat = block_on(b.world.new_chat()).unwrap();
    assert_ne!(new_chat.id, first);

    h.clear_events();
    assert!(block_on(h.world.refresh()).unwrap());
    assert!(h.world.agent("bob").is_some(), "A sees B's agent");
    assert_eq!(
        h.world.current_chat().unwrap().id,
        new_chat.id,
        "A follows B's switch"
    );
    assert_eq!(h.world.list_chats().len(), 2);
    let changes = external_changes(&h.events);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["worldId"], h.world.id());
    assert_eq!(changes[0]["currentChatId"], new_chat.id.as_str());
    // Nothing moved since: no reload, no event.
    assert!(!block_on(h.world.refresh()).unwrap());
    assert_eq!(external_changes(&h.events).len(), 1);
}

#[test]
fn a_world_deleted_by_another_writer_is_reported_as_not_found() {
    let h = harness();
    let b = second(&h);
    assert!(block_on(World::delete(&*h.store, &h.world.id())).unwrap());
    let err = block_on(b.world.send("anyone?", None)).unwrap_err();
    assert_eq!(err.code(), "world_not_found");
}

#[test]
fn every_storage_failure_rejects_with_its_reason_reports_an_event_and_keeps_the_world_usable() {
    let cases = [
        (
            StoreError::QuotaExceeded("disk full".into()),
            "quota_exceeded",
        ),
        (StoreError::Aborted("aborted".into()), "aborted"),
        (StoreError::Closed("closed".into()), "closed"),
        (StoreError::Corrupted("bad record".into()), "corrupted"),
        (StoreError::Version("newer".into()), "version"),
        (StoreError::Blocked("blocked".into()), "blocked"),
        (StoreError::Backend("boom".into()), "backend"),
        (StoreError::Invalid("dup".into()), "invalid"),
    ];
    let h = harness();
    h.send("kept");
    let chat = h.world.current_chat().unwrap().id;
    for (i, (err, reason)) in cases.into_iter().enumerate() {
        h.clear_events();
        h.store.fail_next_apply(err);
        let e: WorldError = block_on(h.world.send("lost", None)).unwrap_err();
        assert_eq!((e.code(), e.reason()), ("storage_error", Some(reason)));
        let sys = h.system("error");
        assert_eq!(sys.len(), 1, "{reason}: one system error event");
        assert_eq!(sys[0]["code"], "storage_error");
        assert_eq!(sys[0]["reason"], reason);
        assert_eq!(sys[0]["message"], e.to_string());
        assert!(h
            .of(agent_world_wasm::core::events::Topic::Message)
            .is_empty());
        // Nothing of the failed change was kept; the world keeps working.
        h.send(&format!("after {reason}"));
        let msgs = block_on(h.world.messages(&chat, None, 100)).unwrap();
        assert_eq!(msgs.len(), i + 2);
        assert_eq!(msgs[0].content, "kept");
        assert!(msgs.iter().all(|m| m.content != "lost"));
        assert_eq!(
            h.world.current_chat().unwrap().message_count,
            (i + 2) as u64
        );
    }
}

#[test]
fn a_failed_read_of_an_open_world_rejects_with_its_reason_and_reports_an_event() {
    let h = harness();
    h.send("kept");
    let first = h.world.current_chat().unwrap().id;
    block_on(h.world.new_chat()).unwrap();
    h.send("second chat");
    type Read<'a> = Box<dyn Fn() -> Result<(), WorldError> + 'a>;
    let reads: Vec<(&str, Read)> = vec![
        (
            "messages",
            Box::new(|| block_on(h.world.messages(&first, None, 10)).map(drop)),
        ),
        ("export", Box::new(|| block_on(h.world.export()).map(drop))),
        (
            "loadChat",
            Box::new(|| block_on(h.world.load_chat(&first)).map(drop)),
        ),
    ];
    for (what, read) in reads {
        h.clear_events();
        h.store
            .fail_next_read(StoreError::Corrupted("record messages/7".into()));
        let e = read().unwrap_err();
        assert_eq!(
            (e.code(), e.reason()),
            ("storage_error", Some("corrupted")),
            "{what}"
        );
        let sys = h.system("error");
        assert_eq!(sys.len(), 1, "{what}: one system error event");
        assert_eq!(sys[0]["reason"], "corrupted", "{what}");
        assert_eq!(sys[0]["message"], e.to_string(), "{what}");
        // Nothing changed, and the same call works once the store reads again.
        read().unwrap_or_else(|e| panic!("{what} after the failure: {e}"));
    }
    assert_eq!(h.world.current_chat().unwrap().id, first);
    let msgs = block_on(h.world.messages(&first, None, 10)).unwrap();
    assert_eq!(msgs[0].content, "kept");
}

#[test]
fn two_writers_creating_the_same_world_at_once_give_one_world_and_one_world_exists() {
    let h = harness();
    h.store.set_apply_delay(3);
    let input = || agent_world_wasm::core::model::CreateWorld {
        name: "Twice".into(),
        ..Default::default()
    };
    let (x, y) = block_on(futures_util::future::join(
        World::create(h.svc(), input()),
        World::create(h.svc(), input()),
    ));
    let codes: Vec<&str> = [&x, &y]
        .iter()
        .map(|r| r.as_ref().map(|_| "ok").unwrap_or_else(|e| e.code()))
        .collect();
    assert_eq!(codes, ["ok", "world_exists"]);
    let w = x.unwrap();
    assert_eq!(block_on(h.store.chats("twice")).unwrap().len(), 1);
    assert_eq!(w.list_chats().len(), 1);
}

/// What the other writer commits before a batch of this one, given that batch.
type Theirs = dyn Fn(&[StoreOp]) -> Vec<StoreOp>;

/// A store shared with another writer that takes no lock (another tab): before each of the
/// next `times` batches of this writer, that writer commits `theirs(batch)` first. Counts this
/// writer's batches and world locks.
struct OtherWriter {
    inner: Rc<agent_world_wasm::core::memory_store::MemoryStore>,
    theirs: Box<Theirs>,
    times: std::cell::Cell<u32>,
    batches: std::cell::Cell<u32>,
    locks: std::cell::Cell<u32>,
}

impl OtherWriter {
    fn new(
        inner: Rc<agent_world_wasm::core::memory_store::MemoryStore>,
        theirs: impl Fn(&[StoreOp]) -> Vec<StoreOp> + 'static,
    ) -> Rc<Self> {
        Rc::new(OtherWriter {
            inner,
            theirs: Box::new(theirs),
            times: std::cell::Cell::new(0),
            batches: std::cell::Cell::new(0),
            locks: std::cell::Cell::new(0),
        })
    }

    /// `h`'s world opened again through this store (the harness's other services kept).
    fn open(self: &Rc<Self>, h: &H) -> World {
        let svc = agent_world_wasm::core::engine::Services {
            store: self.clone(),
            ..h.svc()
        };
        block_on(World::open(svc, &h.world.id())).unwrap()
    }
}

impl Store for OtherWriter {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        self.inner.list_worlds()
    }
    fn load_world<'a>(
        &'a self,
        w: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        self.inner.load_world(w)
    }
    fn agents<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        self.inner.agents(w)
    }
    fn chats<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        self.inner.chats(w)
    }
    fn agent_states<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        self.inner.agent_states(w, c)
    }
    fn last_memory<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
        a: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        self.inner.last_memory(w, c, a, n)
    }
    fn messages<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        self.inner.messages(w, c, before, limit)
    }
    fn approvals<'a>(
        &'a self,
        w: &'a str,
        c: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        self.inner.approvals(w, c)
    }
    fn dump<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        self.inner.dump(w)
    }
    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            self.batches.set(self.batches.get() + 1);
            if self.times.get() > 0 {
                self.times.set(self.times.get() - 1);
                self.inner.apply((self.theirs)(&ops)).await?;
            }
            self.inner.apply(ops).await
        })
    }
    fn revision<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        self.inner.revision(w)
    }
    fn lock_world<'a>(
        &'a self,
        w: &'a str,
    ) -> LocalBoxFuture<'a, Result<agent_world_wasm::core::store::WorldLockGuard, StoreError>> {
        self.locks.set(self.locks.get() + 1);
        self.inner.lock_world(w)
    }
}

#[test]
fn a_batch_that_meets_another_writers_commit_is_planned_again_and_gives_up_only_if_it_never_ends() {
    let h = harness();
    // The other writer rewrites the world row as it is: enough to raise its revision.
    let world = block_on(h.store.load_world(&h.world.id()))
        .unwrap()
        .unwrap();
    let meddler = OtherWriter::new(h.store.clone(), move |_| {
        vec![StoreOp::PutWorld(world.clone())]
    });
    let w = meddler.open(&h);
    let events = Rc::new(RefCell::new(Vec::new()));
    let _subs = record(&w, &events);
    let chat = w.current_chat().unwrap().id;
    let stored = || -> Vec<String> {
        block_on(h.store.messages(&h.world.id(), &chat, None, 100))
            .unwrap()
            .into_iter()
            .map(|m| m.content)
            .collect()
    };

    // Another writer commits right before the batch: refused, reloaded, planned again.
    meddler.times.set(1);
    block_on(w.send("first", None)).unwrap();
    assert_eq!(
        meddler.batches.get(),
        2,
        "the refused batch, then the re-planned one"
    );
    assert_eq!(stored(), ["first"]);
    assert_eq!(stored_chat(&h, &chat).message_count, 1);
    assert_eq!(
        external_changes(&events).len(),
        1,
        "the conflict reloaded the view"
    );

    // A writer that never pauses: after 16 re-plans the change fails, nothing written.
    meddler.times.set(u32::MAX);
    meddler.batches.set(0);
    let err = block_on(w.send("second", None)).unwrap_err();
    assert_eq!(meddler.batches.get(), 17);
    assert_eq!(
        (err.code(), err.reason()),
        ("storage_error", Some("aborted"))
    );
    assert_eq!(stored(), ["first"]);
    let reported: Vec<Value> = events
        .borrow()
        .iter()
        .filter(|(_, v)| v["type"] == "error" && v["reason"] == "aborted")
        .map(|(_, v)| v.clone())
        .collect();
    assert_eq!(
        reported.len(),
        1,
        "reported once as a system error: {reported:?}"
    );

    // Once the other writer stops, the world works on.
    meddler.times.set(0);
    block_on(w.send("third", None)).unwrap();
    assert_eq!(stored(), ["first", "third"]);
    assert_eq!(stored_chat(&h, &chat).message_count, 2);
}

#[test]
fn a_create_is_one_checked_write_and_another_tabs_create_in_between_makes_it_world_exists() {
    let h = harness();
    // The other tab creates the world this batch names, with a chat of its own.
    let racer = OtherWriter::new(h.store.clone(), |ops| {
        ops.iter()
            .filter_map(|op| match op {
                StoreOp::PutWorld(w) => Some(StoreOp::PutWorld(WorldData {
                    description: Some("theirs".into()),
                    ..w.clone()
                })),
                StoreOp::PutChat(c) => Some(StoreOp::PutChat(Chat {
                    id: "their-chat".into(),
                    ..c.clone()
                })),
                _ => None,
            })
            .collect()
    });
    let svc = || agent_world_wasm::core::engine::Services {
        store: racer.clone(),
        ..h.svc()
    };
    let input = |name: &str| agent_world_wasm::core::model::CreateWorld {
        name: name.into(),
        ..Default::default()
    };

    // Alone: one write, no world lock (a cold start pays for every round trip), and the
    // revision the world starts at is the stored one: its first change is not refused.
    let w = block_on(World::create(svc(), input("Alone"))).unwrap();
    assert_eq!((racer.batches.get(), racer.locks.get()), (1, 0));
    let chat = w.current_chat().unwrap().id;
    block_on(w.send("hello", None)).unwrap();
    assert_eq!(
        racer.batches.get(),
        2,
        "the send was not refused and re-planned"
    );
    assert_eq!(stored_chat_of(&h, "alone", &chat).message_count, 1);

    // Another tab creates the same world between this create's check and its write: the
    // write is refused inside its own transaction, and the other tab's world stays as it made it.
    racer.times.set(1);
    let result = block_on(World::create(svc(), input("Raced")));
    assert_eq!(result.err().map(|e| e.code()), Some("world_exists"));
    let world = block_on(h.store.load_world("raced")).unwrap().unwrap();
    assert_eq!(world.description.as_deref(), Some("theirs"));
    let chats: Vec<String> = block_on(h.store.chats("raced"))
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(chats, ["their-chat"]);
}

fn stored_chat_of(h: &H, world: &str, chat: &str) -> Chat {
    block_on(h.store.chats(world))
        .unwrap()
        .into_iter()
        .find(|c| c.id == chat)
        .unwrap()
}

#[test]
fn a_settings_or_chat_change_that_meets_another_writers_commit_is_planned_again_from_their_view() {
    let h = harness();
    block_on(h.world.add_agent(agent_world_wasm::core::model::NewAgent {
        name: "Alice".into(),
        provider: "openai".into(),
        model: "ours".into(),
        ..Default::default()
    }))
    .unwrap();
    // The other writer changes Alice's model right before our batch.
    let mut theirs = h.world.agent("alice").unwrap();
    theirs.model = "theirs".into();
    let world_id = h.world.id();
    let meddler = OtherWriter::new(h.store.clone(), move |_| {
        vec![StoreOp::PutAgent {
            world_id: world_id.clone(),
            agent: theirs.clone(),
        }]
    });
    let w = meddler.open(&h);
    let events = Rc::new(RefCell::new(Vec::new()));
    let _subs = record(&w, &events);

    meddler.times.set(1);
    let patch = agent_world_wasm::core::model::AgentPatch {
        temperature: Some(Some(0.5)),
        ..Default::default()
    };
    let updated = block_on(w.update_agent("alice", patch)).unwrap();
    assert_eq!(
        meddler.batches.get(),
        2,
        "the refused batch, then the re-planned one"
    );
    assert_eq!(
        (updated.model.as_str(), updated.temperature),
        ("theirs", Some(0.5)),
        "planned again from the reloaded view: their model kept, our temperature applied"
    );
    let stored = block_on(h.store.agents(&h.world.id())).unwrap();
    assert_eq!(stored[0].model, "theirs");
    assert_eq!(stored[0].temperature, Some(0.5));
    assert_eq!(external_changes(&events).len(), 1);
    let updates = events
        .borrow()
        .iter()
        .filter(|(_, v)| v["type"] == "agent-updated")
        .count();
    assert_eq!(
        updates, 1,
        "one agent-updated event, for the committed attempt"
    );

    // A writer that never pauses: after 16 re-plans the rename fails and nothing is written.
    let chat = w.current_chat().unwrap();
    meddler.times.set(u32::MAX);
    meddler.batches.set(0);
    let err = block_on(w.rename_chat(&chat.id, "Trip plans")).unwrap_err();
    assert_eq!(meddler.batches.get(), 17);
    assert_eq!(
        (err.code(), err.reason()),
        ("storage_error", Some("aborted"))
    );
    assert_eq!(stored_chat(&h, &chat.id).name, chat.name);

    meddler.times.set(0);
    let renamed = block_on(w.rename_chat(&chat.id, "Trip plans")).unwrap();
    assert_eq!(renamed.name, "Trip plans");
    assert_eq!(stored_chat(&h, &chat.id).name, "Trip plans");
}

#[test]
fn a_change_that_reads_the_store_while_it_plans_is_planned_again_after_a_conflict() {
    let h = harness();
    h.send("in the first chat");
    let first = h.world.current_chat().unwrap().id;
    block_on(h.world.new_chat()).unwrap();
    // The other writer renames the first chat right before our batch.
    let mut theirs = stored_chat(&h, &first);
    theirs.name = "Their name".into();
    let meddler = OtherWriter::new(h.store.clone(), move |_| {
        vec![StoreOp::PutChat(theirs.clone())]
    });
    let w = meddler.open(&h);
    meddler.times.set(1);
    let loaded = block_on(w.load_chat(&first)).unwrap();
    assert_eq!(
        meddler.batches.get(),
        2,
        "the refused batch, then the re-planned one"
    );
    assert_eq!(
        loaded.name, "Their name",
        "planned again from the reloaded view"
    );
    assert_eq!(w.current_chat().unwrap().id, first);
    let stored_world = block_on(h.store.load_world(&h.world.id()))
        .unwrap()
        .unwrap();
    assert_eq!(
        stored_world.current_chat_id.as_deref(),
        Some(first.as_str())
    );
}

#[test]
fn a_committed_change_whose_windows_cannot_be_read_again_still_announces_itself() {
    let h = harness();
    h.send("kept");
    h.clear_events();
    h.store
        .fail_next_read(StoreError::Corrupted("record memory/1".into()));
    let patch = agent_world_wasm::core::model::WorldPatch {
        history_limit: Some(3),
        ..Default::default()
    };
    let e = block_on(h.world.update(patch)).unwrap_err();
    assert_eq!((e.code(), e.reason()), ("storage_error", Some("corrupted")));
    // The change was committed (stored and in RAM), so it is announced.
    assert_eq!(h.world.info().history_limit, 3);
    let stored = block_on(h.store.load_world(&h.world.id()))
        .unwrap()
        .unwrap();
    assert_eq!(stored.history_limit, 3);
    let updated: Vec<Value> = h
        .of(agent_world_wasm::core::events::Topic::World)
        .into_iter()
        .filter(|v| v["type"] == "world-updated")
        .collect();
    assert_eq!(updated.len(), 1, "world-updated for the committed change");
    assert_eq!(updated[0]["world"]["historyLimit"], 3);
    let errors = h.system("error");
    assert_eq!(
        errors.len(),
        1,
        "the failed read is reported too: {errors:?}"
    );
    assert_eq!(errors[0]["reason"], "corrupted");
}
