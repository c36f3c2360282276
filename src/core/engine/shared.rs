//! Writers sharing a world (two tabs, a tab and a worker, two `World`s on one store): the write
//! lock, persisting a batch, and reloading the view when another writer moved the store's
//! revision of the world (see the `store` module docs for the protocol).
//!
//! Optimistic: a change takes only this world's local lock, plans from the RAM view and sends
//! its batch with [`StoreOp::ExpectRevision`] carrying `seen_rev`. The store compares it with
//! the world's revision inside the batch's own transaction (IndexedDB serialises read-write
//! transactions on the same stores, so nobody writes between the check and the commit) and
//! refuses a stale batch with [`StoreError::Conflict`], writing nothing. The engine then
//! reloads its view and plans the change again ([`replanned!`]). So no Web Lock and no
//! separate revision read sit in front of every write, and a `PutChat` still never commits a
//! count computed from a stale view.
//!
//! Invariants:
//! - `seen_rev` is the store revision the RAM view mirrors. A batch this world persists raises
//!   the store's revision by exactly one, so `seen_rev` follows without another read; a
//!   conflict or [`World::refresh`] reloads the view and sets it to the store's.
//! - A change that can conflict runs inside [`World::change`] / [`World::change_reading`] or
//!   [`replanned!`] (publishing a message, on the reply path), and does nothing before its
//!   batch commits that a second attempt would repeat wrongly (it plans from the view,
//!   persists, then updates RAM and emits).
//! - A reload replaces settings, agents (keeping the RAM-only `lastActive` when newer), chat
//!   metadata and the current chat's counters and memory windows; queued and running calls are
//!   kept, except those of a chat that is no longer current (another writer switched chats),
//!   which are cancelled like on a chat switch. A call in flight finishes with the prompt it
//!   was given.

use crate::core::approval::ApprovalRecord;
use crate::core::engine::editing::gone;
use crate::core::engine::{load_chat_state, load_view, without_windows, AgentRt, World};
use crate::core::error::WorldError;
use crate::core::events::{Event, WorldEvent};
use crate::core::lock::{Acquire, Guard};
use crate::core::model::Message;
use crate::core::store::{StoreError, StoreOp};

/// `f` on the heap, awaited through its vtable: for an await off the common path inside a
/// hot async fn. The compiler inlines a callee's state machine into its caller's `poll`, so
/// every rare branch (tools, approvals, a chat left meanwhile) made the `poll` of a plain
/// reply larger; the engine's JS hosts compile a wasm function, and recompile it optimised
/// once it runs often, at a cost that grows with its size (the huge `poll`s of the reply path
/// took most of the compiling in a fresh Node process). Boxed, a rare branch is its own
/// function, compiled only if it runs; it costs one allocation when taken.
pub(crate) fn cold<'a, T>(
    f: impl std::future::Future<Output = T> + 'a,
) -> crate::core::store::LocalBoxFuture<'a, T> {
    Box::pin(f)
}

/// How many times a change is planned again after a conflict before its caller sees it (as
/// `storage_error` / `aborted`: nothing was written, retry). Each conflict means another
/// writer committed in between, so running out takes a writer that never pauses.
const MAX_REPLANS: u32 = 16;

/// `replanned!(world, world.change_once(args))`: runs one attempt of a change (take the write
/// lock, plan from the view, persist, update RAM) and runs it again when its batch met a
/// conflict: by then the view was reloaded, so the next attempt plans from what the other
/// writer left. After [`MAX_REPLANS`] conflicts the conflict is reported as a `system` `error`
/// event and returned. A macro, not a generic method over a closure: the one change left on it
/// (publishing, on the reply path) keeps its attempt's future inline, with no closure type
/// and glue of its own; every other change runs on [`World::change`].
macro_rules! replanned {
    ($world:expr, $attempt:expr) => {{
        let mut attempts = 0;
        loop {
            match $attempt.await {
                Err(e) if $world.replan_after(&e, &mut attempts) => {}
                other => break other,
            }
        }
    }};
}
pub(crate) use replanned;

/// One attempt's plan of a change run by [`World::change`]: the batch, and what the change does
/// to RAM once the batch is committed.
pub(crate) struct Planned<'a> {
    ops: Vec<StoreOp>,
    /// `Some(puts)`: a change that frees space; `ops` only delete, `puts` are the small records
    /// it also rewrites (see [`World::persist_freeing`]).
    puts: Option<Vec<StoreOp>>,
    /// Re-read the memory windows after the commit (a history limit changed).
    reload_windows: bool,
    /// The agent a failure's `error` event names (work done on its behalf).
    agent: Option<String>,
    /// Applies the committed change to RAM (under the lock) and returns the events to emit
    /// once the lock is released.
    commit: Box<Commit<'a>>,
}

/// What a committed change does to RAM; returns the events to emit.
type Commit<'a> = dyn FnOnce(&World) -> Vec<Event> + 'a;

impl<'a> Planned<'a> {
    /// A change persisted as the one batch `ops`.
    pub(crate) fn new(ops: Vec<StoreOp>, commit: impl FnOnce(&World) -> Vec<Event> + 'a) -> Self {
        Planned::boxed(ops, None, Box::new(commit))
    }

    /// The body of [`Planned::new`] and [`Planned::freeing`], compiled once: only the boxing of
    /// the commit is an instance per closure type.
    #[inline(never)]
    fn boxed(ops: Vec<StoreOp>, puts: Option<Vec<StoreOp>>, commit: Box<Commit<'a>>) -> Self {
        Planned {
            ops,
            puts,
            reload_windows: false,
            agent: None,
            commit,
        }
    }

    /// A change that frees space (see [`World::persist_freeing`]).
    pub(crate) fn freeing(
        deletes: Vec<StoreOp>,
        puts: Vec<StoreOp>,
        commit: impl FnOnce(&World) -> Vec<Event> + 'a,
    ) -> Self {
        Planned::boxed(deletes, Some(puts), Box::new(commit))
    }

    /// Work done on behalf of `agent`: a storage failure's `error` event names it.
    pub(crate) fn for_agent(self, agent: String) -> Self {
        Planned {
            agent: Some(agent),
            ..self
        }
    }

    /// Re-reads the memory windows after the commit when `yes` (see [`World::reload_windows`]).
    pub(crate) fn reloading_windows(self, yes: bool) -> Self {
        Planned {
            reload_windows: yes,
            ..self
        }
    }
}

/// The plan of a change from the view alone (see [`World::change`]).
pub(crate) type PlanView<'a> = dyn FnMut(&World) -> Result<Option<Planned<'a>>, WorldError> + 'a;

/// A store read a [`PlanReading`] asks for; [`World::change_reading`] does it under the write
/// lock and hands its result ([`Got`]) to the plan's next call.
pub(crate) enum Read {
    /// Each agent's counter and memory window in chat `.0` (see [`load_chat_state`]), then the
    /// chat's pending approvals; a failure is reported as a `system` `error` event.
    Chat(String),
    /// The pending approvals of chat `chat_id`; a failure is reported, and then returned, or
    /// when `lenient` given to the plan as `None`.
    Approvals {
        world_id: String,
        chat_id: String,
        lenient: bool,
    },
    /// Message `message_id` of a chat ([`World::locate`]); a failure is returned unreported, or
    /// when `answered` (the message a reply answers) as the input error [`gone`].
    Locate {
        world_id: String,
        chat_id: String,
        message_id: String,
        answered: bool,
    },
}

/// The result of a [`Read`].
pub(crate) enum Got {
    /// The agents (of the view, with the chat's counters and memory windows) and approvals.
    Chat(Vec<AgentRt>, Vec<ApprovalRecord>),
    Approvals(Option<Vec<ApprovalRecord>>),
    Located(Message),
}

/// What one call of a [`PlanReading`] decided: read the store first, or the change.
pub(crate) enum Step<'a> {
    Read(Read),
    Plan(Option<Planned<'a>>),
}

/// The error of a plan handed another read than the one it asked for (a bug, not a panic).
pub(crate) fn unasked() -> WorldError {
    WorldError::Storage(StoreError::Invalid(
        "a change was planned from a read it did not ask for".to_string(),
    ))
}

/// The plan of a change that reads the store first (see [`World::change_reading`]): called with
/// the results of the reads it asked for so far (none at first), it returns the next read or
/// the change. A plain function: the one state machine that awaits the reads is
/// [`World::read_for_plan`]'s, shared by every such change, instead of an async block each.
pub(crate) type PlanReading<'a> = dyn FnMut(&mut Vec<Got>) -> Result<Step<'a>, WorldError> + 'a;

enum Plan<'p, 'a> {
    View(&'p mut PlanView<'a>),
    Reading(&'p mut PlanReading<'a>),
}

/// The value the commit of a change left in `out`, for a change whose plan always returns a
/// batch: once [`World::change`] returned `Ok`, its commit ran and set it.
pub(crate) fn committed<T>(out: &std::cell::Cell<Option<T>>) -> Result<T, WorldError> {
    out.take().ok_or_else(uncommitted)
}

#[inline(never)]
fn uncommitted() -> WorldError {
    WorldError::Storage(StoreError::Invalid(
        "the change returned before its commit".to_string(),
    ))
}

/// The write lock of one change: this world's local lock (other writers of the store are kept
/// right by the revision check of the batch, see the module docs).
pub(crate) struct WriteGuard<'a> {
    _local: Guard<'a>,
}

/// The future of [`World::write_lock`]: the local lock's, its guard wrapped. A plain future,
/// not an `async fn`: each change awaits it, and an `async` layer is a state machine of its
/// own (with its drop glue) in every caller.
pub(crate) struct TakeWrite<'a>(Acquire<'a>);

impl<'a> std::future::Future for TakeWrite<'a> {
    type Output = Result<WriteGuard<'a>, WorldError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0)
            .poll(cx)
            .map(|g| Ok(WriteGuard { _local: g }))
    }
}

impl World {
    /// Takes this world's write lock. Never fails today; a `Result` so the call sites keep
    /// their shape should a store ever need a shared lock again.
    pub(crate) fn write_lock(&self) -> TakeWrite<'_> {
        TakeWrite(self.inner.lock.lock())
    }

    /// [`World::write_lock`] for work done on behalf of an agent.
    pub(crate) fn write_lock_for(&self, _agent: Option<&str>) -> TakeWrite<'_> {
        self.write_lock()
    }

    /// Runs a change of the common shape: under the write lock, `plan` reads the view and
    /// returns the batch and its commit (`None`: nothing to change, `Ok(false)`); the batch is
    /// persisted; on a conflict (the view was reloaded) the change is planned again, as
    /// [`replanned!`] does; then the commit updates RAM, and its events are emitted after the
    /// lock is released. One state machine for every change of this shape: the bodies are
    /// plain closures, not an async fn each with its own copy of the lock, persist and replan
    /// states (about 1 KB of wasm per change). The commit is boxed: one allocation per change,
    /// so publishing, which runs per reply, keeps its own loop ([`replanned!`]).
    pub(crate) fn change<'s, 'a: 's>(
        &'s self,
        plan: &'s mut PlanView<'a>,
    ) -> impl std::future::Future<Output = Result<bool, WorldError>> + use<'s, 'a> {
        self.run_change(Plan::View(plan))
    }

    /// [`World::change`] for a change that reads the store while it plans (a chat's memory, a
    /// message's place): `plan` asks for each read ([`Step::Read`]), done under the write lock,
    /// and is called again with the results until it returns the change.
    pub(crate) fn change_reading<'s, 'a: 's>(
        &'s self,
        plan: &'s mut PlanReading<'a>,
    ) -> impl std::future::Future<Output = Result<bool, WorldError>> + use<'s, 'a> {
        self.run_change(Plan::Reading(plan))
    }

    async fn run_change(&self, mut plan: Plan<'_, '_>) -> Result<bool, WorldError> {
        let mut attempts = 0;
        loop {
            let guard = self.write_lock().await?;
            let planned = match &mut plan {
                Plan::View(f) => f(self)?,
                Plan::Reading(f) => {
                    let mut got = Vec::new();
                    loop {
                        match f(&mut got)? {
                            Step::Plan(p) => break p,
                            Step::Read(r) => got.push(self.read_for_plan(r).await?),
                        }
                    }
                }
            };
            let Some(p) = planned else {
                return Ok(false);
            };
            let persisted = match p.puts {
                None => self.persist_for(p.ops, p.agent.as_deref()).await,
                Some(puts) => self.persist_freeing(p.ops, puts).await,
            };
            match persisted {
                Err(e) if self.replan_after(&e, &mut attempts) => continue,
                r => r?,
            }
            let events = (p.commit)(self);
            // The change is committed: its events go out even if the windows cannot be read
            // again (that failure is reported and returned, as any failed read of a live world).
            let reloaded = match p.reload_windows {
                true => self
                    .reload_windows()
                    .await
                    .map_err(|e| self.report_storage(e, p.agent.as_deref())),
                false => Ok(()),
            };
            drop(guard);
            self.emit_all(events);
            return reloaded.map(|()| true);
        }
    }

    /// Does a read a [`PlanReading`] asked for.
    async fn read_for_plan(&self, read: Read) -> Result<Got, WorldError> {
        let store = &*self.inner.store;
        Ok(match read {
            Read::Chat(chat_id) => {
                let (world, mut agents) = {
                    let st = self.st();
                    (st.world.clone(), without_windows(&st.agents))
                };
                load_chat_state(store, &world, &chat_id, &mut agents)
                    .await
                    .map_err(|e| self.report_storage(e, None))?;
                let approvals = store
                    .approvals(&world.id, &chat_id)
                    .await
                    .map_err(|e| self.report_storage(e.into(), None))?;
                Got::Chat(agents, approvals)
            }
            Read::Approvals {
                world_id,
                chat_id,
                lenient,
            } => match store.approvals(&world_id, &chat_id).await {
                Ok(v) => Got::Approvals(Some(v)),
                Err(e) => {
                    let e = self.report_storage(e.into(), None);
                    match lenient {
                        true => Got::Approvals(None),
                        false => return Err(e),
                    }
                }
            },
            Read::Locate {
                world_id,
                chat_id,
                message_id,
                answered,
            } => match self.locate(&world_id, &chat_id, &message_id).await {
                Ok((m, _)) => Got::Located(m),
                Err(_) if answered => return Err(gone(&message_id)),
                Err(e) => return Err(e),
            },
        })
    }

    /// Whether a change that failed with `e` is to be planned again: `e` is a conflict (the
    /// view was reloaded) and fewer than [`MAX_REPLANS`] attempts were made. A conflict that
    /// ends the attempts is reported as a `system` `error` event.
    pub(crate) fn replan_after(&self, e: &WorldError, attempts: &mut u32) -> bool {
        if !matches!(e, WorldError::Storage(StoreError::Conflict(_))) {
            return false;
        }
        if *attempts < MAX_REPLANS {
            *attempts += 1;
            return true;
        }
        self.report_storage(e.clone(), None);
        false
    }

    /// Reloads the view when another writer changed the world since it was loaded or last
    /// written (after any change in progress here finishes); `true` when it did, and then
    /// `world` `external-change` was emitted. Call it when told of a change (the JS binding
    /// does on a BroadcastChannel message).
    pub async fn refresh(&self) -> Result<bool, WorldError> {
        let _g = self.write_lock().await?;
        self.reload_if_moved()
            .await
            .map_err(|e| self.report_storage(e, None))
    }

    /// Applies `ops` with the revision check of the module docs. A conflict reloads the view
    /// and is returned unreported (the change is planned again); any other failure is
    /// reported as a `system` `error` event and returned. Nothing was written either way. No
    /// ops: nothing is sent.
    async fn apply_checked(
        &self,
        mut ops: Vec<StoreOp>,
        agent: Option<&str>,
    ) -> Result<(), WorldError> {
        if ops.is_empty() {
            return Ok(());
        }
        if let Some(rev) = self.inner.seen_rev.get() {
            ops.insert(
                0,
                StoreOp::ExpectRevision {
                    world_id: self.id(),
                    rev,
                },
            );
        }
        match self.inner.store.apply(ops).await {
            Ok(()) => {
                self.bump_seen_rev();
                Ok(())
            }
            Err(e) if matches!(e, StoreError::Conflict(_)) => {
                if let Err(r) = self.reload_if_moved().await {
                    return Err(self.report_storage(r, agent));
                }
                Err(e.into())
            }
            Err(e) => Err(self.report_storage(e.into(), agent)),
        }
    }

    /// Applies `ops` as one batch under the write lock the caller holds and keeps `seen_rev` in
    /// step. A failure is reported as a `system` `error` event (with its `reason`) and returned;
    /// nothing was written.
    /// Plain functions handing out [`World::apply_checked`]'s future: an `async` layer is a
    /// state machine of its own, with its drop glue, in every caller.
    pub(crate) fn persist(
        &self,
        ops: Vec<StoreOp>,
    ) -> impl std::future::Future<Output = Result<(), WorldError>> + use<'_> {
        self.apply_checked(ops, None)
    }

    /// [`World::persist`] for work done on behalf of an agent (its name goes on the event).
    pub(crate) fn persist_for<'s, 'a: 's>(
        &'s self,
        ops: Vec<StoreOp>,
        agent: Option<&'a str>,
    ) -> impl std::future::Future<Output = Result<(), WorldError>> + use<'s, 'a> {
        self.apply_checked(ops, agent)
    }

    /// Persists a change that frees space (deleting a chat, an agent or a memory; turning
    /// session mode off): `deletes` (ops that only remove records) and `puts` (the small
    /// records the change also rewrites: the current-chat pointer, a reset counter).
    ///
    /// Normally one atomic batch. When the store is over its quota, every batch that writes a
    /// record fails, even one that shrinks the database, so the README's advice ("delete old
    /// chats") could never be followed; then the deletes are committed on their own first, and
    /// the puts are tried after them. If there is still no room, their failure is reported as
    /// a `system` `error` event (`quota_exceeded`) but the change succeeds: RAM keeps the new
    /// values and a later write stores them (the next turn writes the counter, the next world
    /// write the pointer). A reload in between reads what the deletes left, which gives the
    /// same result for a deleted current chat (`load_view` resolves the pointer to a deleted
    /// chat exactly as `deleteChat` did) and the stored counter for a cleared memory; a
    /// session mode turned off over quota is on again after a reload.
    ///
    /// Why two transactions and not one that cannot grow: browsers count every record a
    /// transaction puts against the quota, whatever it deletes (Chromium refuses a
    /// delete-plus-small-put transaction over quota), so the deletes must commit without puts.
    pub(crate) async fn persist_freeing(
        &self,
        deletes: Vec<StoreOp>,
        puts: Vec<StoreOp>,
    ) -> Result<(), WorldError> {
        let mut all = deletes.clone();
        all.extend(puts.iter().cloned());
        if all.is_empty() {
            return Ok(());
        }
        let err = match self.apply_checked(all, None).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if err.reason() != Some("quota_exceeded") {
            return Err(err);
        }
        if !deletes.is_empty() {
            self.apply_checked(deletes, None).await?;
            // Over quota a store may commit deletes without raising the revision (IndexedDB's
            // revision is a put): follow what it says rather than assuming one step.
            if self.inner.seen_rev.get().is_some() {
                match self.inner.store.revision(&self.id()).await {
                    Ok(rev) => self.inner.seen_rev.set(rev),
                    Err(e) => {
                        self.report_storage(e.into(), None);
                    }
                }
            }
        }
        if !puts.is_empty() {
            // A failure was reported (a conflict reloaded the view: a later write stores the
            // values, as over quota).
            let _ = self.apply_checked(puts, None).await;
        }
        Ok(())
    }

    fn bump_seen_rev(&self) {
        if let Some(r) = self.inner.seen_rev.get() {
            self.inner.seen_rev.set(Some(r + 1));
        }
    }

    /// Emits the `system` `error` event of a storage failure (reads of a live world included);
    /// returns the error.
    pub(crate) fn report_storage(&self, e: WorldError, agent: Option<&str>) -> WorldError {
        if e.reason().is_some() {
            self.emit_all(vec![Event::world_error(&e, agent)]);
        }
        e
    }

    /// Reports an error of background work as a `system` `error` event, unless it is a storage
    /// failure, which [`World::persist`] and [`replanned!`] reported already.
    pub(crate) fn report(&self, e: &WorldError) {
        if e.reason().is_none() {
            self.emit_all(vec![Event::world_error(e, None)]);
        }
    }

    /// Under the write lock: reads the store's revision and reloads the view if it moved.
    async fn reload_if_moved(&self) -> Result<bool, WorldError> {
        let id = self.id();
        let rev = self.inner.store.revision(&id).await?;
        if rev.is_none() || rev == self.inner.seen_rev.get() {
            return Ok(false);
        }
        let mut view = load_view(&*self.inner.store, &id).await?;
        let (before, after) = {
            let mut st = self.st_mut();
            for a in &mut view.agents {
                if let Some(old) = st.agents.iter().find(|o| o.agent.id == a.agent.id) {
                    a.agent.last_active = a.agent.last_active.max(old.agent.last_active);
                }
            }
            let before = st.world.current_chat_id.clone();
            let after = view.world.current_chat_id.clone();
            st.world = view.world;
            st.agents = view.agents;
            st.chats = view.chats;
            st.no_chat_left = view.no_chat_left;
            let old = std::mem::replace(&mut st.approvals, view.approvals);
            for a in old {
                if st.unstored.contains(&a.approval_id) {
                    st.approvals.push(a);
                }
            }
            if st
                .title
                .as_ref()
                .is_some_and(|t| Some(&t.chat_id) != after.as_ref())
            {
                st.title = None;
            }
            (before, after)
        };
        self.inner.seen_rev.set(rev);
        if before != after {
            // Another writer switched chats: the calls of the left chat end as on a switch.
            self.cancel_jobs(&|c| c.chat_id != after.as_deref());
        }
        self.emit_all(vec![Event::World(WorldEvent::ExternalChange {
            world_id: id,
            current_chat_id: after,
        })]);
        Ok(true)
    }
}
