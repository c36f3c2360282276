//! Writers sharing a world (two tabs, a tab and a worker, two `World`s on one store): the write
//! lock, persisting a batch, and reloading the view when another writer moved the store's
//! revision of the world (see the `store` module docs for the protocol).
//!
//! Invariants:
//! - `seen_rev` is the store revision the RAM view mirrors. It is read under the store's world
//!   lock before a change is planned; if it moved, the view is reloaded first. A batch this
//!   world persists under the lock raises the store's revision by exactly one, so `seen_rev`
//!   follows without another read.
//! - A reload replaces settings, agents (keeping the RAM-only `lastActive` when newer), chat
//!   metadata and the current chat's counters and memory windows; queued and running calls are
//!   kept, except those of a chat that is no longer current (another writer switched chats),
//!   which are cancelled like on a chat switch. A call in flight finishes with the prompt it
//!   was given.

use crate::core::engine::{load_view, World};
use crate::core::error::WorldError;
use crate::core::events::{Event, WorldEvent};
use crate::core::lock::Guard;
use crate::core::store::{StoreOp, WorldLockGuard};

/// The write lock of one change: this world's local lock and the store's lock of the world.
pub(crate) struct WriteGuard<'a> {
    // Fields drop in order: the store's lock is released first, then the local one.
    _shared: WorldLockGuard,
    _local: Guard<'a>,
}

impl World {
    /// Takes the write lock and brings the view up to date with the store. A storage failure is
    /// reported as a `system` `error` event too.
    pub(crate) async fn write_lock(&self) -> Result<WriteGuard<'_>, WorldError> {
        self.lock_and_refresh(None).await.map(|(g, _)| g)
    }

    /// [`World::write_lock`] for work done on behalf of an agent (its name goes on the event).
    pub(crate) async fn write_lock_for(
        &self,
        agent: Option<&str>,
    ) -> Result<WriteGuard<'_>, WorldError> {
        self.lock_and_refresh(agent).await.map(|(g, _)| g)
    }

    async fn lock_and_refresh(
        &self,
        agent: Option<&str>,
    ) -> Result<(WriteGuard<'_>, bool), WorldError> {
        let local = self.inner.lock.lock().await;
        let id = self.id();
        let shared = match self.inner.store.lock_world(&id).await {
            Ok(g) => g,
            Err(e) => {
                drop(local);
                return Err(self.report_storage(e.into(), agent));
            }
        };
        let guard = WriteGuard {
            _shared: shared,
            _local: local,
        };
        match self.reload_if_moved().await {
            Ok(changed) => Ok((guard, changed)),
            Err(e) => {
                drop(guard);
                Err(self.report_storage(e, agent))
            }
        }
    }

    /// Reloads the view when another writer changed the world since it was loaded or last
    /// written (after any change in progress here finishes); `true` when it did, and then
    /// `world` `external-change` was emitted. Call it when told of a change (the JS binding
    /// does on a BroadcastChannel message); every change also does it first.
    pub async fn refresh(&self) -> Result<bool, WorldError> {
        self.lock_and_refresh(None)
            .await
            .map(|(_, changed)| changed)
    }

    /// Applies `ops` as one batch under the write lock the caller holds and keeps `seen_rev` in
    /// step. A failure is reported as a `system` `error` event (with its `reason`) and returned;
    /// nothing was written.
    pub(crate) async fn persist(&self, ops: Vec<StoreOp>) -> Result<(), WorldError> {
        self.persist_for(ops, None).await
    }

    /// [`World::persist`] for work done on behalf of an agent (its name goes on the event).
    pub(crate) async fn persist_for(
        &self,
        ops: Vec<StoreOp>,
        agent: Option<&str>,
    ) -> Result<(), WorldError> {
        if ops.is_empty() {
            return Ok(());
        }
        match self.inner.store.apply(ops).await {
            Ok(()) => {
                self.bump_seen_rev();
                Ok(())
            }
            Err(e) => Err(self.report_storage(e.into(), agent)),
        }
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
        let err = match self.inner.store.apply(all).await {
            Ok(()) => {
                self.bump_seen_rev();
                return Ok(());
            }
            Err(e) => e,
        };
        if err.reason() != "quota_exceeded" {
            return Err(self.report_storage(err.into(), None));
        }
        if !deletes.is_empty() {
            if let Err(e) = self.inner.store.apply(deletes).await {
                return Err(self.report_storage(e.into(), None));
            }
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
            match self.inner.store.apply(puts).await {
                Ok(()) => self.bump_seen_rev(),
                Err(e) => {
                    self.report_storage(e.into(), None);
                }
            }
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
    /// failure, which [`World::persist`] and the write lock reported already.
    pub(crate) fn report(&self, e: &WorldError) {
        if e.reason().is_none() {
            self.emit_all(vec![Event::world_error(e, None)]);
        }
    }

    /// Under the write lock: reloads the view if the store's revision moved.
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
            let unstored: Vec<_> = std::mem::take(&mut st.approvals)
                .into_iter()
                .filter(|a| st.unstored.contains(&a.approval_id))
                .collect();
            st.approvals = view.approvals;
            st.approvals.extend(unstored);
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
