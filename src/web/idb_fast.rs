//! The common write of [`IdbStore`](super::idb_store::IdbStore) in one burst: a batch whose
//! every read the connection already knows is issued as writes only, with no read at all.
//!
//! The [read round](super::idb_write) costs a round trip to the browser's database process
//! before the first write can be issued, and every request of a transaction costs the page
//! about what a bare single-put transaction does. A turn of the engine needs nothing from the
//! database that the connection did not see at its own last commit: the world's revision, that
//! the chats it writes into exist, and the next `seq` of the chat and of each memory it
//! appends to. [`Known`] keeps those per world, valid exactly while the world is at the
//! revision this connection last committed: every other writer's batch raises it (the
//! over-quota delete retry aside, see below), so the batch's [`StoreOp::ExpectRevision`] both
//! states the engine's view and vouches for what is known.
//!
//! The burst (database version 3, see [`idb_schema`](super::idb_schema)): for each named
//! world known at revision `R`, an `add` of the revision record `[worldId, R + 1]`, then every
//! write of the batch, then the commit, the only await. The `add` is the revision check: it
//! fails with `ConstraintError` when another writer already took `R + 1`, and a failed request
//! aborts the transaction, which rolls back every write of the batch. When it succeeds, nobody
//! wrote the world since `R`, so what the connection knew at `R` still holds: the chats exist
//! (no chat check is needed) and the `seq`s are the next ones. The world row is not written
//! unless the batch puts the world: it holds the world's settings, which a message or a reply
//! does not change. Nor is the chat row, when all the batch changes of the chat is its
//! `messageCount` and a later `updatedAt` (database version 4): the chat's last message of the
//! batch carries them as its stamp (see [`idb_schema`](super::idb_schema) and `chat_rows`), so
//! a send is two requests, the revision record and the message.
//!
//! A burst whose commit fails with `ConstraintError` (a revision another writer took, a
//! duplicate message id through the unique index, a stale `seq`) left nothing written and
//! sends the batch through the read round, which judges it with the memory store's rules and
//! error texts (`Conflict`, `Invalid`, …): the burst never decides those itself, at worst it
//! costs one aborted transaction. Any other failure (quota, an abort from elsewhere, a closed
//! connection) is one the read round would meet as well: it is the batch's error, reported as
//! the read round reports it, and the batch is not retried.
//!
//! What a connection knows survives only its own commits: a batch the burst cannot do (other
//! ops, a chat or memory whose next `seq` it has not seen, a chat it has not seen exist) goes
//! through the read round, which teaches it; a batch that deletes a world or a chat and any
//! failure make it forget the world, and so does another context's change notice (see
//! `IdbStore`). That notice closes most of one gap: over quota, a batch that only deletes is
//! retried without raising the revision (`IdbStore::apply`: adding the revision record is a
//! write the full origin refuses), so another connection's such retry can delete behind a
//! revision that did not move. The `seq`s known stay at or above the stored ones; a chat it
//! deleted would still be believed to exist, so an append to it made before the notice
//! arrives would be written (and its chat row put back) instead of refused.

use super::idb_schema::{
    ChatRow, MemoryRow, MessageRow, StateRow, WorldRow, AGENT_STATES, CHATS, MEMORY, MESSAGES,
    RECORD_VERSION, REVISIONS, WORLDS,
};
use super::idb_write::{Found, Stores, ADD, PUT};
use crate::core::model::Chat;
use crate::core::store::{StoreError, StoreOp};
use crate::core::store_rules;
use crate::core::vec_map::VecMap;

/// The key of a next `seq`: a chat's `(world, chat, "")`, a memory's `(world, chat, agent)`.
/// One key type for the messages' and the memories' maps (each its own map), so the map code
/// is one copy.
pub(super) type SeqKey = (String, String, String);

/// What one connection knows of the worlds it committed to (see the module docs). Flat maps
/// of the key types the read round uses, and lists of worlds and chats (a connection has
/// few).
#[derive(Default)]
pub(super) struct Known {
    /// Each world with the revision this connection's last commit to it raised it to.
    worlds: Vec<(String, f64)>,
    /// The chats `(world, chat)` that exist at that revision (a list: a connection writes
    /// to few).
    chats: Vec<(String, String)>,
    /// The next message `seq` of each `(world, chat)`.
    message_seq: VecMap<SeqKey, f64>,
    /// The next memory `seq` of each `(world, chat, agent)`.
    memory_seq: VecMap<SeqKey, f64>,
    /// What is known of chats' records and stamps at that revision (see [`Seen`]).
    seen: Vec<Seen>,
}

/// What a connection knows of one chat's record (see [`chat_rows`]).
pub(super) struct Seen {
    world: String,
    chat: String,
    /// The chat as readers see it (its record with the stamp of its newest message), for a
    /// chat this connection put: what lets a burst leave the record unwritten.
    view: Option<Chat>,
    /// Whether the record is as readers see the chat (no stamp on its newest message is
    /// newer): an append to the chat that does not put it then needs no stamp.
    current: bool,
}

impl Known {
    fn rev(&self, w: &str) -> Option<f64> {
        self.worlds
            .iter()
            .find(|(x, _)| x == w)
            .map(|(_, rev)| *rev)
    }

    /// Forgets everything of world `w`.
    pub(super) fn forget(&mut self, w: &str) {
        self.worlds.retain(|(x, _)| x != w);
        self.chats.retain(|(x, _)| x != w);
        self.message_seq.retain(|(x, _, _), _| x != w);
        self.memory_seq.retain(|(x, _, _), _| x != w);
        self.seen.retain(|s| s.world != w);
    }

    fn seen(&self, w: &str, c: &str) -> Option<&Seen> {
        self.seen.iter().find(|s| s.world == w && s.chat == c)
    }

    /// Sets world `w` at `rev`, keeping what was known of it only when it was known at `from`
    /// (the revision the commit started from).
    fn set(&mut self, w: String, from: f64, rev: f64) {
        if self.rev(&w) != Some(from) {
            self.forget(&w);
        }
        self.worlds.retain(|(x, _)| *x != w);
        self.worlds.push((w, rev));
    }

    /// Adds chats and `seq`s of worlds that are known.
    fn extend(
        &mut self,
        chats: Vec<(String, String)>,
        message_seq: VecMap<SeqKey, f64>,
        memory_seq: VecMap<SeqKey, f64>,
        seen: Vec<Seen>,
    ) {
        for s in seen {
            if self.rev(&s.world).is_none() {
                continue;
            }
            match self
                .seen
                .iter_mut()
                .find(|x| x.world == s.world && x.chat == s.chat)
            {
                Some(x) => {
                    if s.view.is_some() {
                        x.view = s.view;
                    }
                    x.current = s.current;
                }
                None => self.seen.push(s),
            }
        }
        for k in chats {
            if self.rev(&k.0).is_some() && !self.chats.contains(&k) {
                self.chats.push(k);
            }
        }
        add_seqs(&self.worlds, &mut self.message_seq, message_seq);
        add_seqs(&self.worlds, &mut self.memory_seq, memory_seq);
    }
}

/// Adds the `seq`s of `new` whose world is one of `worlds` (the known ones) to `to`: one copy
/// for the messages' and the memories'.
fn add_seqs(worlds: &[(String, f64)], to: &mut VecMap<SeqKey, f64>, new: VecMap<SeqKey, f64>) {
    for (k, seq) in new {
        if worlds.iter().any(|(w, _)| *w == k.0) {
            to.insert(k, seq);
        }
    }
}

/// What a committed batch through the read round taught (see [`learn`]).
#[derive(Default)]
pub(super) struct Learned {
    /// Each named world: its revision before the batch and whether it exists after it.
    pub(super) worlds: Vec<(String, f64, bool)>,
    /// The chats the batch found or put (they exist after it, unless it deleted them).
    pub(super) chats: Vec<(String, String)>,
    /// The next `seq` of each chat the batch appended to or looked up.
    pub(super) message_seq: VecMap<SeqKey, f64>,
    /// The next `seq` of each memory the batch appended to or looked up.
    pub(super) memory_seq: VecMap<SeqKey, f64>,
    /// The chats whose record is as readers see them after the batch (see [`Known`]).
    pub(super) current: Vec<(String, String)>,
}

/// Records what a batch committed through the read round with its revision raised taught.
/// A batch that deleted a world or a chat teaches nothing about that world (a chat's `seq`s
/// restart once it is gone). Knowledge of an older revision is dropped, not merged.
pub(super) fn learn(known: &mut Known, ops: &[StoreOp], learned: Learned) {
    let Learned {
        worlds,
        chats,
        message_seq,
        memory_seq,
        current,
    } = learned;
    for (w, rev_before, exists) in worlds {
        let wipes = ops.iter().any(|op| {
            matches!(op, StoreOp::DeleteWorld { world_id } | StoreOp::DeleteChat { world_id, .. }
                if *world_id == w)
        });
        if exists && !wipes {
            // What was known at the revision this batch started from still holds.
            known.set(w, rev_before, rev_before + 1.0);
        } else {
            known.forget(&w);
        }
    }
    // Each chat the batch put, as it put it (the record is newer than any stamp): the last
    // put of each wins. (The connection forgot the batch's worlds before the read round, so
    // nothing older of them is kept.)
    let mut seen: Vec<Seen> = Vec::new();
    for op in ops.iter().rev() {
        if let StoreOp::PutChat(c) = op {
            if !seen.iter().any(|s| s.world == c.world_id && s.chat == c.id) {
                seen.push(Seen {
                    world: c.world_id.clone(),
                    chat: c.id.clone(),
                    view: Some(c.clone()),
                    current: true,
                });
            }
        }
    }
    for (w, c) in current {
        if !seen.iter().any(|s| s.world == w && s.chat == c) {
            seen.push(Seen {
                world: w,
                chat: c,
                view: None,
                current: true,
            });
        }
    }
    known.extend(chats, message_seq, memory_seq, seen);
}

/// Records a committed burst: `after` (from [`write`]) over what was known, which still
/// holds for the chats and memories the burst did not touch (the revision moved by our own
/// commit only).
pub(super) fn committed(known: &mut Known, after: Known) {
    for (w, rev) in after.worlds {
        known.set(w, rev - 1.0, rev);
    }
    known.extend(after.chats, after.message_seq, after.memory_seq, after.seen);
}

/// A batch the burst can do: everything it needs to know, taken from [`Known`].
pub(super) struct Plan {
    /// Each named world with the revision the batch expects (and the connection knows).
    worlds: Vec<(String, f64)>,
    /// The chats the batch puts (they exist after it).
    chats: Vec<(String, String)>,
    /// The `seq` of each append of the batch, in op order.
    seqs: Vec<f64>,
    /// By op index: the `PutChat`s not written, and the stamp each carries instead, on the
    /// chat's last `AppendMessage` of the batch (see [`plan`]).
    unwritten: Vec<usize>,
    stamps: Vec<(usize, (f64, f64))>,
    /// Each chat the batch puts, as readers will see it, and whether its record will be.
    seen: Vec<Seen>,
    /// The next `seq`s after the batch.
    message_seq: VecMap<SeqKey, f64>,
    memory_seq: VecMap<SeqKey, f64>,
    /// The object stores the burst writes, `revisions` first.
    scope: Vec<&'static str>,
}

impl Plan {
    /// The scope of the burst's transaction: the stores it writes. Creating a transaction
    /// costs the page more the more stores it spans (in Chromium about 0.1 ms for all eight,
    /// 0.04 for three: a fifth of a bare put). It serialises with every other write as
    /// before: each one's scope holds `revisions`, and a reader of a store the burst does not
    /// write has nothing to wait for.
    pub(super) fn scope(&self) -> &[&'static str] {
        &self.scope
    }
}

/// The burst's plan for `ops`, or `None` when the batch needs the read round: a named world
/// not known or not expected at its known revision, an op other than the engine's common
/// ones, a chat not known to exist, an append whose next `seq` is not known.
pub(super) fn plan(
    known: &Known,
    ops: &[StoreOp],
    named: &[(String, &'static str)],
) -> Option<Plan> {
    let mut worlds = Vec::with_capacity(named.len());
    for (w, _) in named {
        let rev = known.rev(w)?;
        let expects_known = ops.iter().any(|op| {
            matches!(op, StoreOp::ExpectRevision { world_id, rev: r } if world_id == w
                && *r as f64 == rev)
        });
        if !expects_known {
            return None;
        }
        worlds.push((w.clone(), rev));
    }
    // The rules on hoped answers: a batch they refuse whatever is stored goes through the read
    // round, which reports it; the chats they ask about must be known to exist at the known
    // revision (the revision record's `add` proves it still is). The named worlds are known
    // (a known world exists) and message ids are checked by the unique index (see the module
    // docs).
    let hoped = Found::default();
    store_rules::validate(ops, &hoped).ok()?;
    for parts in hoped.noted.into_inner() {
        if let [w, c] = &parts[..] {
            if !known.chats.iter().any(|(x, y)| x == w && y == c) {
                return None;
            }
        }
    }
    let mut chats = Vec::new();
    let mut seqs = Vec::new();
    let mut message_seq: VecMap<SeqKey, f64> = VecMap::new();
    let mut memory_seq: VecMap<SeqKey, f64> = VecMap::new();
    for op in ops {
        match op {
            // Every named world's is checked above; a second one for it must agree.
            StoreOp::ExpectRevision { world_id, rev } => {
                if known.rev(world_id) != Some(*rev as f64) {
                    return None;
                }
            }
            StoreOp::PutChat(chat) => chats.push((chat.world_id.clone(), chat.id.clone())),
            StoreOp::PutWorld(_) | StoreOp::PutAgentState { .. } => {}
            StoreOp::AppendMessage {
                world_id, chat_id, ..
            } => {
                let k = (world_id.clone(), chat_id.clone(), String::new());
                let next = match message_seq.get(&k) {
                    Some(seq) => *seq,
                    None => *known.message_seq.get(&k)?,
                };
                seqs.push(next);
                message_seq.insert(k, next + 1.0);
            }
            StoreOp::AppendMemory {
                world_id,
                chat_id,
                agent_id,
                ..
            } => {
                let k = (world_id.clone(), chat_id.clone(), agent_id.clone());
                let next = match memory_seq.get(&k) {
                    Some(seq) => *seq,
                    None => *known.memory_seq.get(&k)?,
                };
                seqs.push(next);
                memory_seq.insert(k, next + 1.0);
            }
            _ => return None,
        }
    }
    let ChatPlan {
        unwritten,
        stamps,
        seen,
    } = chat_rows(known, ops)?;
    // The stores written: a `PutChat` left unwritten needs no `chats` in the scope.
    let mut scope = vec![REVISIONS];
    for (i, op) in ops.iter().enumerate() {
        let store = match op {
            StoreOp::PutWorld(_) => WORLDS,
            StoreOp::PutChat(_) if unwritten.contains(&i) => continue,
            StoreOp::PutChat(_) => CHATS,
            StoreOp::AppendMessage { .. } => MESSAGES,
            StoreOp::AppendMemory { .. } => MEMORY,
            StoreOp::PutAgentState { .. } => AGENT_STATES,
            _ => continue,
        };
        if !scope.contains(&store) {
            scope.push(store);
        }
    }
    Some(Plan {
        worlds,
        chats,
        seqs,
        unwritten,
        stamps,
        seen,
        message_seq,
        memory_seq,
        scope,
    })
}

/// What the burst writes of the chats of a batch (see [`chat_rows`]).
#[derive(Default)]
struct ChatPlan {
    unwritten: Vec<usize>,
    stamps: Vec<(usize, (f64, f64))>,
    seen: Vec<Seen>,
}

/// What the burst writes of the chats of `ops`, by op index: the `PutChat`s it leaves
/// unwritten, the stamps it writes on messages instead, and each chat put as readers will
/// see it and whether its record will be; `None` when it cannot know (the batch then goes
/// through the read round).
///
/// A chat's record need not be written when the batch appends a message to the chat and
/// changes nothing of it but `messageCount` and a later `updatedAt` (every message and
/// reply of the engine): the chat's last appended message carries them as its stamp, which
/// readers take over the record's older ones (`idb_schema::with_stamp`). That needs the chat
/// as readers see it now, known from this connection's own writes. A batch that appends to a
/// chat it does not put keeps the chat reading the same: nothing to do when the chat's record
/// is as readers see it, else its message, the chat's newest, carries what they see now.
fn chat_rows(known: &Known, ops: &[StoreOp]) -> Option<ChatPlan> {
    let last = |k| ops.iter().rposition(|op| chat_key(op) == Some(k));
    let stamp = |c: &Chat| (c.message_count as f64, c.updated_at.0 as f64);
    let mut plan = ChatPlan::default();
    for (i, op) in ops.iter().enumerate() {
        match op {
            // The last put of a chat is what it is after the batch.
            StoreOp::PutChat(chat) if last((&chat.world_id, &chat.id, true)) == Some(i) => {
                let (w, c) = (chat.world_id.as_str(), chat.id.as_str());
                let mut puts = 0;
                for op in ops {
                    if chat_key(op) == Some((w, c, true)) {
                        puts += 1;
                    }
                }
                let view = known.seen(w, c).and_then(|s| s.view.as_ref());
                let mut current = true;
                if let (1, Some(j), Some(now)) = (puts, last((w, c, false)), view) {
                    let mut same = chat.clone();
                    same.message_count = now.message_count;
                    same.updated_at = now.updated_at;
                    if same == *now && chat.updated_at > now.updated_at {
                        plan.unwritten.push(i);
                        plan.stamps.push((j, stamp(chat)));
                        current = false;
                    }
                }
                plan.seen.push(Seen {
                    world: w.to_string(),
                    chat: c.to_string(),
                    view: Some(chat.clone()),
                    current,
                });
            }
            StoreOp::AppendMessage {
                world_id, chat_id, ..
            } => {
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                if last((w, c, false)) != Some(i) || last((w, c, true)).is_some() {
                    continue;
                }
                let seen = known.seen(w, c)?;
                if !seen.current {
                    plan.stamps.push((i, stamp(seen.view.as_ref()?)));
                }
            }
            _ => {}
        }
    }
    Some(plan)
}

/// `(world, chat, is a put)` of an op that appends a message to or puts a chat.
fn chat_key(op: &StoreOp) -> Option<(&str, &str, bool)> {
    match op {
        StoreOp::AppendMessage {
            world_id, chat_id, ..
        } => Some((world_id.as_str(), chat_id.as_str(), false)),
        StoreOp::PutChat(c) => Some((c.world_id.as_str(), c.id.as_str(), true)),
        _ => None,
    }
}

/// Issues the burst: each named world's next revision record (the check), then every write in
/// op order, all in one call ([`Stores::flush`]). Nothing is awaited: the caller commits at
/// once. Returns what the commit will
/// leave known, to store on success.
pub(super) fn write(s: &Stores<'_>, ops: &[StoreOp], plan: Plan) -> Result<Known, StoreError> {
    let mut after = Known {
        worlds: Vec::with_capacity(plan.worlds.len()),
        chats: plan.chats,
        message_seq: plan.message_seq,
        memory_seq: plan.memory_seq,
        seen: plan.seen,
    };
    for (w, rev) in plan.worlds {
        s.add_revision(&w, rev + 1.0);
        after.worlds.push((w, rev + 1.0));
    }
    let mut seqs = plan.seqs.into_iter();
    for (i, op) in ops.iter().enumerate() {
        match op {
            StoreOp::ExpectRevision { .. } => {}
            StoreOp::PutWorld(world) => put_world(s, world),
            StoreOp::PutChat(_) if plan.unwritten.contains(&i) => {}
            StoreOp::AppendMessage { .. } | StoreOp::AppendMemory { .. } => {
                let seq = seqs.next().unwrap_or_default();
                let stamp = plan.stamps.iter().find(|(j, _)| *j == i).map(|(_, t)| *t);
                write_op(s, op, seq, stamp);
            }
            StoreOp::PutChat(_) | StoreOp::PutAgentState { .. } => write_common(s, op, 0.0),
            // `plan` accepts no other op.
            _ => {
                return Err(StoreError::Backend(
                    "internal: an op the one-burst write does not do".to_string(),
                ))
            }
        }
    }
    s.flush()?;
    Ok(after)
}

/// Queues the put of a world row (its revision is in the `revisions` store).
pub(super) fn put_world(s: &Stores<'_>, world: &crate::core::model::WorldData) {
    let row = WorldRow {
        v: RECORD_VERSION,
        world_id: world.id.as_str(),
        world,
        rev: 0.0,
    };
    s.put(WORLDS, PUT, &row, "writing a world");
}

/// Queues the write of one of the common ops (a chat, a message or memory entry at `seq`, an
/// agent's counters), as the burst and the read round both write it. Other ops: nothing.
pub(super) fn write_common(s: &Stores<'_>, op: &StoreOp, seq: f64) {
    write_op(s, op, seq, None)
}

/// [`write_common`], a message with the chat's stamp `(messageCount, updatedAt)` if given.
fn write_op(s: &Stores<'_>, op: &StoreOp, seq: f64, stamp: Option<(f64, f64)>) {
    match op {
        StoreOp::PutChat(chat) => {
            let row = ChatRow {
                v: RECORD_VERSION,
                world_id: chat.world_id.as_str(),
                chat_id: chat.id.as_str(),
                chat,
            };
            s.put(CHATS, PUT, &row, "writing a chat");
        }
        StoreOp::AppendMessage {
            world_id,
            chat_id,
            message,
        } => {
            let row = MessageRow {
                v: RECORD_VERSION,
                world_id: world_id.as_str(),
                chat_id: chat_id.as_str(),
                seq,
                message_id: message.message_id.as_str(),
                message,
                chat_count: stamp.map(|(n, _)| n),
                chat_updated_at: stamp.map(|(_, t)| t),
            };
            s.put(MESSAGES, ADD, &row, "appending a message");
        }
        StoreOp::AppendMemory {
            world_id,
            chat_id,
            agent_id,
            entry,
        } => {
            let row = MemoryRow {
                v: RECORD_VERSION,
                world_id: world_id.as_str(),
                chat_id: chat_id.as_str(),
                agent_id: agent_id.as_str(),
                seq,
                entry,
            };
            s.put(MEMORY, ADD, &row, "appending a memory entry");
        }
        StoreOp::PutAgentState {
            world_id,
            chat_id,
            state,
        } => {
            let row = StateRow {
                v: RECORD_VERSION,
                world_id: world_id.as_str(),
                chat_id: chat_id.as_str(),
                agent_id: state.agent_id.as_str(),
                state,
            };
            s.put(AGENT_STATES, PUT, &row, "writing an agent state");
        }
        _ => {}
    }
}
