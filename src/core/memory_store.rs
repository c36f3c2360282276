//! [`MemoryStore`]: a [`Store`] in RAM (sorted maps in a `RefCell`), for tests, for Node without
//! IndexedDB, and as the reference implementation of the store contract. Every method borrows,
//! copies out and returns a ready future, so no borrow is ever held across an await.
//!
//! Two `World`s over one `MemoryStore` are two writers of a world: the store keeps a revision
//! per world (raised once per successful batch naming it, never reset, so a world deleted and
//! made again never repeats a revision) and a per-world async writer lock (see `store`).

use std::cell::RefCell;

use crate::core::vec_map::{VecMap, VecSet};
use std::future::ready;
use std::rc::Rc;

use crate::core::approval::ApprovalRecord;
use crate::core::lock::WriteLock;

use crate::core::model::{Agent, Chat, MemoryEntry, Message, WorldData};
use crate::core::sort::sort_by;
use crate::core::store::{
    AgentChatState, ChatDump, LocalBoxFuture, Store, StoreError, StoreOp, WorldDump, WorldLockGuard,
};
use crate::core::store_rules::{self, Rec, Stored};

#[derive(Debug, Default, Clone)]
struct ChatData {
    chat: Option<Chat>,
    messages: Vec<Message>,
    /// Where each message of `messages` is, by id (see [`MessageIds`]).
    ids: MessageIds,
    memories: VecMap<String, Vec<MemoryEntry>>,
    states: VecMap<String, AgentChatState>,
    /// Pending approvals by id (spec §9).
    approvals: VecMap<String, ApprovalRecord>,
}

/// Where each of a chat's messages is, by id: an open-addressing table of positions in its
/// `messages` (plus one: 0 is a free slot), probed linearly from the id's FNV-1a hash and kept
/// at most half full, so a probe always ends. The duplicate-id check of every append is a
/// lookup, not a scan of the chat (a scan per append made a long chat quadratic; a sorted
/// `Vec` of ids would move half of them on every append, ids being uuids in random order),
/// and the table holds positions, not a second copy of every id. Not std's `HashSet`: its
/// generic table code and SipHash were 2.8 KB gzip of the package for this one use (FNV is
/// enough: a lookup compares the id itself, so colliding hashes cost a probe, never a wrong
/// answer). Deleting messages moves the later ones and replacing one changes its id, so
/// those rare edits rebuild the table; an append adds one slot.
#[derive(Debug, Default, Clone)]
struct MessageIds {
    slots: Vec<u32>,
}

impl MessageIds {
    fn start(&self, id: &str) -> usize {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in id.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        // Only the low bits pick the slot (the table's length is a power of two).
        h as usize & (self.slots.len().wrapping_sub(1))
    }

    /// The position of the message `id` in `messages`, the chat this table indexes.
    fn find(&self, messages: &[Message], id: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut i = self.start(id);
        loop {
            let at = (*self.slots.get(i)? as usize).checked_sub(1)?;
            if messages.get(at).is_some_and(|m| m.message_id == id) {
                return Some(at);
            }
            i = (i + 1) % self.slots.len();
        }
    }

    fn contains(&self, messages: &[Message], id: &str) -> bool {
        self.find(messages, id).is_some()
    }

    /// Records the last message of `messages`, just appended.
    fn add_last(&mut self, messages: &[Message]) {
        if messages.len() * 2 > self.slots.len() {
            return self.rebuild(messages);
        }
        if let Some(m) = messages.last() {
            self.place(&m.message_id, messages.len());
        }
    }

    /// Indexes `messages` anew, in a table of at least twice their number of slots.
    fn rebuild(&mut self, messages: &[Message]) {
        self.slots = vec![0; (messages.len() * 2).next_power_of_two().max(16)];
        for (at, m) in messages.iter().enumerate() {
            self.place(&m.message_id, at + 1);
        }
    }

    /// Puts position `slot` (plus one) in the first free slot from `id`'s.
    fn place(&mut self, id: &str, slot: usize) {
        let mut i = self.start(id);
        while let Some(s) = self.slots.get_mut(i) {
            if *s == 0 {
                *s = slot as u32;
                return;
            }
            i = (i + 1) % self.slots.len();
        }
    }
}

#[derive(Debug, Default, Clone)]
struct WorldRec {
    world: Option<WorldData>,
    /// Insertion order = routing order.
    agents: Vec<Agent>,
    chats: VecMap<String, ChatData>,
}

/// An in-memory store. In native builds, `fail_next_apply`, `fail_next_read`,
/// `set_over_quota` and `set_apply_delay` let tests simulate a failing, full or slow backend.
#[derive(Debug, Default)]
pub struct MemoryStore {
    worlds: RefCell<VecMap<String, WorldRec>>,
    #[cfg(not(target_arch = "wasm32"))]
    hooks: Hooks,
    /// Per world: raised by every successful batch that names it.
    revisions: RefCell<VecMap<String, u64>>,
    /// Per world: the writers' lock.
    locks: RefCell<VecMap<String, Rc<WriteLock>>>,
}

/// The test hooks of a [`MemoryStore`]. Native builds only, where the engine's test suites
/// drive them: the wasm package's memory store (`storage: 'memory'`) offers no way to reach
/// them, so it ships without their state and checks (a check on every read and write).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default)]
struct Hooks {
    fail_next: RefCell<Option<StoreError>>,
    fail_next_read: RefCell<Option<StoreError>>,
    /// How many times `apply` returns `Pending` before writing.
    apply_delay: std::cell::Cell<u32>,
    /// Over quota, see [`MemoryStore::set_over_quota`].
    over_quota: std::cell::Cell<bool>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The test hooks (see `Hooks`, private to this module), in native builds only: nothing in
/// the wasm API reaches them.
#[cfg(not(target_arch = "wasm32"))]
impl MemoryStore {
    /// Makes the next `apply` fail with `err` (and change nothing).
    pub fn fail_next_apply(&self, err: StoreError) {
        *self.hooks.fail_next.borrow_mut() = Some(err);
    }

    /// Simulates an origin over its storage quota as browsers enforce it: while on, every batch
    /// that writes a record (anything but `DeleteWorld`, `DeleteAgent`, `DeleteChat` and
    /// `ClearMemory`, `DeleteMessages`) fails with [`StoreError::QuotaExceeded`], even one that also deletes more
    /// than it writes; batches that only delete succeed.
    pub fn set_over_quota(&self, on: bool) {
        self.hooks.over_quota.set(on);
    }

    /// Makes the next read (any method but `apply`, `revision` and `lock_world`) fail with `err`.
    pub fn fail_next_read(&self, err: StoreError) {
        *self.hooks.fail_next_read.borrow_mut() = Some(err);
    }

    /// The failure `fail_next_read` armed, once.
    fn read_failure(&self) -> Option<StoreError> {
        self.hooks.fail_next_read.borrow_mut().take()
    }

    /// Makes every `apply` yield `polls` times before writing, like a real asynchronous store
    /// (lets tests interleave other work with a write in progress).
    pub fn set_apply_delay(&self, polls: u32) {
        self.hooks.apply_delay.set(polls);
    }

    /// The failure the hooks make of a batch (`writes`: it writes a record), if any.
    fn refusal(&self, writes: bool) -> Option<StoreError> {
        if self.hooks.over_quota.get() && writes {
            return Some(StoreError::QuotaExceeded(
                "the batch writes records and the store is over its quota".into(),
            ));
        }
        self.hooks.fail_next.borrow_mut().take()
    }
}

/// Without the test hooks (see [`Hooks`]): reads and batches never fail by them.
#[cfg(target_arch = "wasm32")]
impl MemoryStore {
    fn read_failure(&self) -> Option<StoreError> {
        None
    }

    fn refusal(&self, _writes: bool) -> Option<StoreError> {
        None
    }
}

impl MemoryStore {
    /// Checks the batch against the current data (and the earlier ops of the batch) without
    /// changing anything: the rules of [`store_rules::validate`].
    // Not inlined (nor `apply_valid`): a JS host compiles each wasm function, and recompiles it
    // optimised once hot, at a cost that grows with its size; kept apart, the batch's two
    // passes are not one huge function (see the wasm-opt flags in Cargo.toml).
    #[inline(never)]
    fn validate(&self, ops: &[StoreOp]) -> Result<(), StoreError> {
        let view = View {
            worlds: &self.worlds.borrow(),
            revisions: &self.revisions.borrow(),
        };
        store_rules::validate(ops, &view)
    }

    /// `apply` once its test delay has passed: all of it is synchronous, so the future only
    /// holds the batch while it waits.
    fn apply_now(&self, ops: Vec<StoreOp>) -> Result<(), StoreError> {
        if let Some(e) = self.refusal(ops.iter().any(|op| !op.only_removes())) {
            return Err(e);
        }
        self.validate(&ops)?;
        // The worlds the batch names, each once: nearly always one (a B-tree set built per
        // batch, an allocation per op, was a visible part of a reply's write).
        let mut named: Vec<String> = Vec::new();
        for op in &ops {
            let w = op.world_id();
            if !named.iter().any(|n| n == w) {
                named.push(w.to_string());
            }
        }
        self.apply_valid(ops);
        let mut revs = self.revisions.borrow_mut();
        for w in named {
            *revs.get_or_default(&w) += 1;
        }
        Ok(())
    }

    #[inline(never)]
    fn apply_valid(&self, ops: Vec<StoreOp>) {
        let mut worlds = self.worlds.borrow_mut();
        for op in ops {
            // The ops of a message and a reply here; the rest out of line (see `validate`).
            match op {
                StoreOp::ExpectRevision { .. } => {}
                StoreOp::PutChat(c) => {
                    let chat = chat_mut(&mut worlds, &c.world_id, &c.id);
                    chat.chat = Some(c);
                }
                StoreOp::AppendMessage {
                    world_id,
                    chat_id,
                    message,
                } => {
                    let chat = chat_mut(&mut worlds, &world_id, &chat_id);
                    chat.messages.push(message);
                    chat.ids.add_last(&chat.messages);
                }
                StoreOp::AppendMemory {
                    world_id,
                    chat_id,
                    agent_id,
                    entry,
                } => {
                    let chat = chat_mut(&mut worlds, &world_id, &chat_id);
                    chat.memories.get_or_default(&agent_id).push(entry);
                }
                StoreOp::PutAgentState {
                    world_id,
                    chat_id,
                    state,
                } => {
                    let chat = chat_mut(&mut worlds, &world_id, &chat_id);
                    chat.states.insert(state.agent_id.clone(), state);
                }
                op => apply_rare(&mut worlds, op),
            }
        }
    }
}

/// [`MemoryStore::apply_valid`] for the ops other than a message's and a reply's.
#[cold]
#[inline(never)]
fn apply_rare(worlds: &mut VecMap<String, WorldRec>, op: StoreOp) {
    match op {
        StoreOp::PutWorld(w) => {
            let rec = worlds.get_or_default(&w.id);
            rec.world = Some(w);
        }
        StoreOp::DeleteWorld { world_id } => {
            worlds.remove(&world_id);
        }
        StoreOp::PutAgent { world_id, agent } => {
            let rec = worlds.get_or_default(&world_id);
            match rec.agents.iter_mut().find(|a| a.id == agent.id) {
                Some(a) => *a = agent,
                None => rec.agents.push(agent),
            }
        }
        StoreOp::DeleteAgent { world_id, agent_id } => {
            if let Some(rec) = worlds.get_mut(&world_id) {
                rec.agents.retain(|a| a.id != agent_id);
                for c in rec.chats.values_mut() {
                    if let Some(m) = c.memories.get_mut(&agent_id) {
                        m.clear();
                    }
                    c.states.remove(&agent_id);
                    c.approvals.retain(|_, a| a.agent_id != agent_id);
                }
            }
        }
        StoreOp::DeleteChat { world_id, chat_id } => {
            if let Some(rec) = worlds.get_mut(&world_id) {
                rec.chats.remove(&chat_id);
            }
        }
        StoreOp::DeleteMessages {
            world_id,
            chat_id,
            message_ids,
        } => {
            let doomed: VecSet<String> = message_ids.into_iter().collect();
            let chat = chat_mut(worlds, &world_id, &chat_id);
            chat.messages.retain(|m| !doomed.contains(&m.message_id));
            chat.ids.rebuild(&chat.messages);
            for entries in chat.memories.values_mut() {
                entries.retain(|e| !doomed.contains(&e.message_id));
            }
        }
        StoreOp::ReplaceMessage {
            world_id,
            chat_id,
            old_message_id,
            message,
        } => {
            let chat = chat_mut(worlds, &world_id, &chat_id);
            let at = chat.ids.find(&chat.messages, &old_message_id);
            if let Some(m) = at.and_then(|at| chat.messages.get_mut(at)) {
                *m = message;
                chat.ids.rebuild(&chat.messages);
            }
        }
        StoreOp::ClearMemory {
            world_id,
            chat_id,
            agent_id,
        } => {
            if let Some(c) = stored_chat_mut(worlds, &world_id, &chat_id) {
                if let Some(m) = c.memories.get_mut(&agent_id) {
                    m.clear();
                }
            }
        }
        StoreOp::PutApproval(a) => {
            let chat_id = a.chat_id.clone().unwrap_or_default();
            let chat = chat_mut(worlds, &a.world_id, &chat_id);
            chat.approvals.insert(a.approval_id.clone(), *a);
        }
        StoreOp::DeleteApproval {
            world_id,
            chat_id,
            approval_id,
        } => {
            if let Some(c) = stored_chat_mut(worlds, &world_id, &chat_id) {
                c.approvals.remove(&approval_id);
            }
        }
        StoreOp::PutChat(_)
        | StoreOp::AppendMessage { .. }
        | StoreOp::AppendMemory { .. }
        | StoreOp::PutAgentState { .. }
        | StoreOp::ExpectRevision { .. } => {}
    }
}

/// Returns `Pending` once (waking itself), then `Ready`.
#[cfg(not(target_arch = "wasm32"))]
struct YieldOnce(bool);

#[cfg(not(target_arch = "wasm32"))]
impl std::future::Future for YieldOnce {
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

/// The stored data as [`store_rules::validate`] asks for it.
struct View<'a> {
    worlds: &'a VecMap<String, WorldRec>,
    revisions: &'a VecMap<String, u64>,
}

impl Stored for View<'_> {
    fn exists(&self, rec: Rec<'_>, _hoped: bool) -> bool {
        match rec {
            Rec::World(w) => self.worlds.get(w).is_some_and(|w| w.world.is_some()),
            Rec::Chat(w, c) => stored_chat(self.worlds, w, c).is_some_and(|c| c.chat.is_some()),
            Rec::Message(w, c, m) => {
                stored_chat(self.worlds, w, c).is_some_and(|c| c.ids.contains(&c.messages, m))
            }
        }
    }

    fn revision(&self, world_id: &str) -> Option<u64> {
        Some(self.revisions.get(world_id).copied().unwrap_or(0))
    }
}

/// The stored chat `chat_id` of world `world_id`, if both exist.
fn stored_chat<'a>(
    worlds: &'a VecMap<String, WorldRec>,
    world_id: &str,
    chat_id: &str,
) -> Option<&'a ChatData> {
    worlds.get(world_id)?.chats.get(chat_id)
}

/// [`stored_chat`], to change it.
fn stored_chat_mut<'a>(
    worlds: &'a mut VecMap<String, WorldRec>,
    world_id: &str,
    chat_id: &str,
) -> Option<&'a mut ChatData> {
    worlds.get_mut(world_id)?.chats.get_mut(chat_id)
}

/// The chat `chat_id` of world `world_id`, created empty if missing (writes of a valid batch).
fn chat_mut<'a>(
    worlds: &'a mut VecMap<String, WorldRec>,
    world_id: &str,
    chat_id: &str,
) -> &'a mut ChatData {
    worlds
        .get_or_default(world_id)
        .chats
        .get_or_default(chat_id)
}

impl Store for MemoryStore {
    fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        // Plain loops here and below: an iterator chain instantiates its own adapters.
        let mut v = Vec::new();
        for w in self.worlds.borrow().values() {
            if let Some(world) = &w.world {
                v.push(world.clone());
            }
        }
        Box::pin(ready(Ok(v)))
    }

    fn load_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let v = self
            .worlds
            .borrow()
            .get(world_id)
            .and_then(|w| w.world.clone());
        Box::pin(ready(Ok(v)))
    }

    fn agents<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let v = self
            .worlds
            .borrow()
            .get(world_id)
            .map(|w| w.agents.clone())
            .unwrap_or_default();
        Box::pin(ready(Ok(v)))
    }

    fn chats<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let mut v = Vec::new();
        if let Some(w) = self.worlds.borrow().get(world_id) {
            for c in w.chats.values() {
                if let Some(chat) = &c.chat {
                    v.push(chat.clone());
                }
            }
        }
        Box::pin(ready(Ok(v)))
    }

    fn agent_states<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let mut v = Vec::new();
        if let Some(c) = stored_chat(&self.worlds.borrow(), world_id, chat_id) {
            for s in c.states.values() {
                v.push(s.clone());
            }
        }
        Box::pin(ready(Ok(v)))
    }

    fn last_memory<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        agent_id: &'a str,
        n: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let v = stored_chat(&self.worlds.borrow(), world_id, chat_id)
            .and_then(|c| c.memories.get(agent_id))
            .map(|m| m[m.len().saturating_sub(n)..].to_vec())
            .unwrap_or_default();
        Box::pin(ready(Ok(v)))
    }

    fn messages<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
        before: Option<&'a str>,
        limit: usize,
    ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let worlds = self.worlds.borrow();
        let chat = stored_chat(&worlds, world_id, chat_id);
        let msgs = chat.map(|c| c.messages.as_slice()).unwrap_or_default();
        let end = match before {
            None => Some(msgs.len()),
            // Pages walk back from the newest message, so the cursor is searched from the end.
            Some(id) => chat.and_then(|c| c.ids.find(&c.messages, id)),
        };
        let v = match end {
            Some(end) => msgs
                .get(end.saturating_sub(limit)..end)
                .map(<[Message]>::to_vec)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        drop(worlds);
        Box::pin(ready(Ok(v)))
    }

    fn approvals<'a>(
        &'a self,
        world_id: &'a str,
        chat_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let mut v: Vec<ApprovalRecord> = Vec::new();
        if let Some(c) = stored_chat(&self.worlds.borrow(), world_id, chat_id) {
            for a in c.approvals.values() {
                v.push(a.clone());
            }
        }
        sort_by(&mut v, &|a, b| {
            (a.created_at, &a.approval_id).cmp(&(b.created_at, &b.approval_id))
        });
        Box::pin(ready(Ok(v)))
    }

    fn dump<'a>(&'a self, world_id: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
        if let Some(e) = self.read_failure() {
            return Box::pin(ready(Err(e)));
        }
        let worlds = self.worlds.borrow();
        let Some(w) = worlds.get(world_id) else {
            return Box::pin(ready(Ok(WorldDump::default())));
        };
        let mut chats = Vec::with_capacity(w.chats.len());
        for c in w.chats.values() {
            if c.chat.is_none() {
                continue;
            }
            let mut memories = Vec::new();
            for (k, v) in c.memories.iter() {
                if !v.is_empty() {
                    memories.push((k.clone(), v.clone()));
                }
            }
            let mut states = Vec::with_capacity(c.states.len());
            for s in c.states.values() {
                states.push(s.clone());
            }
            chats.push(ChatDump {
                chat: c.chat.clone(),
                messages: c.messages.clone(),
                memories,
                states,
            });
        }
        let v = WorldDump {
            world: w.world.clone(),
            agents: w.agents.clone(),
            chats,
        };
        Box::pin(ready(Ok(v)))
    }

    fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
        #[cfg(not(target_arch = "wasm32"))]
        let delay = self.hooks.apply_delay.get();
        Box::pin(async move {
            #[cfg(not(target_arch = "wasm32"))]
            for _ in 0..delay {
                YieldOnce(false).await;
            }
            self.apply_now(ops)
        })
    }

    fn revision<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<Option<u64>, StoreError>> {
        let rev = self.revisions.borrow().get(world_id).copied().unwrap_or(0);
        Box::pin(ready(Ok(Some(rev))))
    }

    fn lock_world<'a>(
        &'a self,
        world_id: &'a str,
    ) -> LocalBoxFuture<'a, Result<WorldLockGuard, StoreError>> {
        let lock = self.locks.borrow_mut().get_or_default(world_id).clone();
        Box::pin(async move { Ok(Box::new(lock.lock_owned().await) as WorldLockGuard) })
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    /// A store that applies a batch op by op: not atomic. The contract must catch it.
    struct OpByOp(MemoryStore);

    impl Store for OpByOp {
        fn list_worlds(&self) -> LocalBoxFuture<'_, Result<Vec<WorldData>, StoreError>> {
            self.0.list_worlds()
        }
        fn load_world<'a>(
            &'a self,
            w: &'a str,
        ) -> LocalBoxFuture<'a, Result<Option<WorldData>, StoreError>> {
            self.0.load_world(w)
        }
        fn agents<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Vec<Agent>, StoreError>> {
            self.0.agents(w)
        }
        fn chats<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<Vec<Chat>, StoreError>> {
            self.0.chats(w)
        }
        fn agent_states<'a>(
            &'a self,
            w: &'a str,
            c: &'a str,
        ) -> LocalBoxFuture<'a, Result<Vec<AgentChatState>, StoreError>> {
            self.0.agent_states(w, c)
        }
        fn last_memory<'a>(
            &'a self,
            w: &'a str,
            c: &'a str,
            a: &'a str,
            n: usize,
        ) -> LocalBoxFuture<'a, Result<Vec<MemoryEntry>, StoreError>> {
            self.0.last_memory(w, c, a, n)
        }
        fn messages<'a>(
            &'a self,
            w: &'a str,
            c: &'a str,
            before: Option<&'a str>,
            limit: usize,
        ) -> LocalBoxFuture<'a, Result<Vec<Message>, StoreError>> {
            self.0.messages(w, c, before, limit)
        }
        fn approvals<'a>(
            &'a self,
            w: &'a str,
            c: &'a str,
        ) -> LocalBoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
            self.0.approvals(w, c)
        }
        fn dump<'a>(&'a self, w: &'a str) -> LocalBoxFuture<'a, Result<WorldDump, StoreError>> {
            self.0.dump(w)
        }
        fn apply(&self, ops: Vec<StoreOp>) -> LocalBoxFuture<'_, Result<(), StoreError>> {
            let mut r = Ok(());
            for op in ops {
                if let Err(e) = self.0.validate(std::slice::from_ref(&op)) {
                    r = Err(e);
                    break;
                }
                self.0.apply_valid(vec![op]);
            }
            Box::pin(ready(r))
        }
    }

    #[test]
    fn the_contract_catches_a_non_atomic_store() {
        let store: Rc<dyn Store> = Rc::new(OpByOp(MemoryStore::new()));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            futures_executor::block_on(crate::core::store_contract::invalid_batches_change_nothing(
                store,
            ))
        }));
        assert!(r.is_err());
    }

    fn message(id: &str) -> Message {
        Message {
            message_id: id.to_string(),
            chat_id: Some("c".into()),
            sender: "HUMAN".into(),
            content: String::new(),
            created_at: crate::core::model::Timestamp(1),
            reply_to_message_id: None,
            kind: crate::core::model::MessageKind::Message,
            tool_calls: Vec::new(),
        }
    }

    /// The id table finds every message of a long chat where it is, across its growths, and
    /// nothing else; after a delete or a replaced id (rebuilt), the same.
    #[test]
    fn message_ids_find_every_message_of_a_long_chat_and_nothing_else() {
        let mut messages = Vec::new();
        let mut ids = MessageIds::default();
        for i in 0..3000 {
            messages.push(message(&format!("m-{i}")));
            ids.add_last(&messages);
        }
        let check = |messages: &[Message], ids: &MessageIds| {
            for (at, m) in messages.iter().enumerate() {
                assert_eq!(
                    ids.find(messages, &m.message_id),
                    Some(at),
                    "{}",
                    m.message_id
                );
            }
            for absent in ["m-3000", "", "m-", "M-1"] {
                assert!(!ids.contains(messages, absent), "{absent}");
            }
            assert!(
                ids.slots.len() >= 2 * messages.len(),
                "the table stays half free"
            );
        };
        check(&messages, &ids);
        messages.retain(|m| !m.message_id.ends_with('7'));
        ids.rebuild(&messages);
        check(&messages, &ids);
        assert!(!ids.contains(&messages, "m-17"));
        if let Some(m) = messages.get_mut(10) {
            m.message_id = "renamed".into();
        }
        ids.rebuild(&messages);
        check(&messages, &ids);
        assert_eq!(ids.find(&messages, "renamed"), Some(10));
        assert!(
            !MessageIds::default().contains(&messages, "m-0"),
            "an empty table finds nothing"
        );
    }

    #[test]
    fn memory_store_passes_the_store_contract() {
        futures_executor::block_on(crate::core::store_contract::run_store_contract(&|| {
            Rc::new(MemoryStore::new()) as Rc<dyn Store>
        }));
    }

    #[test]
    #[cfg(not(target_arch = "wasm32"))]
    fn a_memory_store_with_asynchronous_writes_passes_the_store_contract() {
        futures_executor::block_on(crate::core::store_contract::run_store_contract(&|| {
            let s = MemoryStore::new();
            s.set_apply_delay(2);
            Rc::new(s) as Rc<dyn Store>
        }));
    }
}
