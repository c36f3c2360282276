//! The batch rules of [`Store::apply`](crate::core::store::Store::apply) (see the module docs
//! of `store`), written once: [`validate`] checks a whole batch against the stored data, taking
//! the earlier ops of the batch into account, before anything is written. It is synchronous and
//! asks the store only three questions ([`Stored`]): does this world, this chat, this message
//! exist. `MemoryStore` answers from its maps; the JS adapter store (`web/js_store`) answers from
//! keys it read beforehand: it runs [`validate`] once with a recording [`Stored`] that answers
//! what lets the batch go on ([`Stored::exists`]'s `hoped`), reads the keys that pass asked for,
//! and runs it again on the real answers. The IndexedDB store (`web/idb_write`) does the same
//! with its one read round, and its one-burst path checks the chats a hoped pass asked about.
//!
//! One copy of the rules instead of one per store: the stores' batch code was the largest part
//! of the crate's own wasm code (each copy applied the same rules with its own sets and awaits).

use crate::core::vec_map::VecSet;

use crate::core::store::{StoreError, StoreOp};

/// A record whose existence a batch depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rec<'a> {
    World(&'a str),
    /// `(world, chat)`.
    Chat(&'a str, &'a str),
    /// `(world, chat, message id)`.
    Message(&'a str, &'a str, &'a str),
}

/// What [`validate`] needs to know of the data as stored before the batch.
pub trait Stored {
    /// Whether `rec` exists in the stored data. `hoped` is the answer that lets the batch go on
    /// (`true` for a world or chat an op needs, `false` for a message id an append must not
    /// reuse): a store that has not read `rec` yet answers it, notes `rec`, and validates
    /// again once it has read what it noted.
    fn exists(&self, rec: Rec<'_>, hoped: bool) -> bool;

    /// The world's revision (see `Store::revision`); `None` when the store does not track
    /// revisions, and then [`StoreOp::ExpectRevision`] always passes.
    fn revision(&self, world_id: &str) -> Option<u64>;
}

/// The batch's own changes so far, by record key ([`rec_key`]).
#[derive(Default)]
struct Overlay {
    /// Records an earlier op of the batch wrote or removed: the stored data no longer answers
    /// for them.
    known: VecSet<String>,
    /// Of `known`, those that exist after the earlier ops.
    live: VecSet<String>,
    /// Worlds and chats the batch deleted: what was stored under them is gone (a batch may
    /// delete a chat and write it anew).
    wiped: VecSet<String>,
    /// Whether `known` holds a world or chat, and whether it holds a message: a question about
    /// a kind the batch has not touched (nor deleted anything) goes straight to the stored
    /// data, with no key built. A reply's batch appends one message and asks about its chat
    /// a few times (one per memory entry); building and looking up keys for those was most
    /// of the memory store's validation in a fresh process.
    parents_known: bool,
    messages_known: bool,
}

impl Overlay {
    fn set(&mut self, rec: Rec<'_>, exists: bool) {
        match rec {
            Rec::Message(..) => self.messages_known = true,
            Rec::World(_) | Rec::Chat(..) => self.parents_known = true,
        }
        let key = rec_key(rec);
        if exists {
            self.live.insert(key.clone());
        } else {
            self.live.remove(&key);
        }
        self.known.insert(key);
    }

    /// Deletes a world or chat: it and every record under it.
    fn wipe(&mut self, key: String) {
        self.known.retain(|k| !k.starts_with(&key));
        self.live.retain(|k| !k.starts_with(&key));
        self.wiped.insert(key.clone());
        self.known.insert(key);
        self.parents_known = true;
    }

    fn exists(&self, stored: &dyn Stored, rec: Rec<'_>, hoped: bool) -> bool {
        let touched = match rec {
            Rec::Message(..) => self.messages_known,
            Rec::World(_) | Rec::Chat(..) => self.parents_known,
        };
        if !touched && self.wiped.is_empty() {
            return stored.exists(rec, hoped);
        }
        let key = rec_key(rec);
        if self.known.contains(&key) {
            return self.live.contains(&key);
        }
        // A record under a world or chat the batch deleted is gone, whatever is stored.
        let parents = match rec {
            Rec::World(_) => [None, None],
            Rec::Chat(w, _) => [Some(rec_key(Rec::World(w))), None],
            Rec::Message(w, c, _) => [Some(rec_key(Rec::World(w))), Some(rec_key(Rec::Chat(w, c)))],
        };
        if parents.iter().flatten().any(|p| self.wiped.contains(p)) {
            return false;
        }
        stored.exists(rec, hoped)
    }
}

/// A record's key: each part as `{len}:{part}`, world first, so a world's or chat's key is a
/// prefix of exactly the keys of the records under it, whatever characters the ids hold.
fn rec_key(rec: Rec<'_>) -> String {
    let parts: &[&str] = match rec {
        Rec::World(w) => &[w],
        Rec::Chat(w, c) => &[w, c],
        Rec::Message(w, c, m) => &[w, c, m],
    };
    let mut key = String::new();
    for p in parts {
        // The length's decimal digits, written without the formatting machinery.
        let mut digits = [0u8; 20];
        let (mut n, mut at) = (p.len(), digits.len());
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || at == 0 {
                break;
            }
        }
        for d in digits.get(at..).unwrap_or_default() {
            key.push(char::from(*d));
        }
        key.push(':');
        key.push_str(p);
    }
    key
}

fn world_missing(w: &str) -> StoreError {
    StoreError::Invalid(format!("world {w:?} does not exist"))
}

fn chat_missing(w: &str, c: &str) -> StoreError {
    StoreError::Invalid(format!("chat {c:?} does not exist in world {w:?}"))
}

fn duplicate(id: &str, c: &str) -> StoreError {
    StoreError::Invalid(format!("message {id:?} already exists in chat {c:?}"))
}

/// Checks the whole batch against `stored` and the batch's earlier ops, changing nothing: the
/// store writes the batch only when this returns `Ok`. An op that needs a world or chat that
/// does not exist by then, an append of a message id the chat already holds, a replacement of
/// a message it does not hold, or an approval without a chat id → [`StoreError::Invalid`]; a
/// stale [`StoreOp::ExpectRevision`] → [`StoreError::Conflict`].
pub fn validate<'a>(ops: &'a [StoreOp], stored: &dyn Stored) -> Result<(), StoreError> {
    let mut o = Overlay::default();
    // The last chat found to exist, until an op that can change that (a world or chat put or
    // deleted): a reply's batch asks about its chat once per memory entry.
    let mut chat_seen: Option<(&str, &str)> = None;
    for op in ops {
        if matches!(
            op,
            StoreOp::PutWorld(_)
                | StoreOp::DeleteWorld { .. }
                | StoreOp::PutChat(_)
                | StoreOp::DeleteChat { .. }
        ) {
            chat_seen = None;
        }
        let mut need_chat = |o: &Overlay, w: &'a str, c: &'a str| {
            if chat_seen == Some((w, c)) {
                return Ok(());
            }
            if o.exists(stored, Rec::Chat(w, c), true) {
                chat_seen = Some((w, c));
                Ok(())
            } else {
                Err(chat_missing(w, c))
            }
        };
        match op {
            StoreOp::ExpectRevision { world_id, rev } => {
                if let Some(now) = stored.revision(world_id) {
                    if now != *rev {
                        return Err(StoreError::Conflict(format!(
                            "world {world_id:?} is at revision {now}, the batch expected {rev}"
                        )));
                    }
                }
            }
            StoreOp::PutWorld(w) => o.set(Rec::World(&w.id), true),
            StoreOp::DeleteWorld { world_id } => o.wipe(rec_key(Rec::World(world_id))),
            StoreOp::PutAgent { world_id, .. } | StoreOp::DeleteAgent { world_id, .. } => {
                if !o.exists(stored, Rec::World(world_id), true) {
                    return Err(world_missing(world_id));
                }
            }
            StoreOp::PutChat(c) => {
                if !o.exists(stored, Rec::World(&c.world_id), true) {
                    return Err(world_missing(&c.world_id));
                }
                o.set(Rec::Chat(&c.world_id, &c.id), true);
            }
            StoreOp::DeleteChat { world_id, chat_id } => {
                o.wipe(rec_key(Rec::Chat(world_id, chat_id)));
            }
            StoreOp::ClearMemory { .. } | StoreOp::DeleteApproval { .. } => {}
            StoreOp::PutApproval(a) => {
                let Some(chat_id) = &a.chat_id else {
                    return Err(StoreError::Invalid(format!(
                        "approval {:?} has no chat id",
                        a.approval_id
                    )));
                };
                need_chat(&o, &a.world_id, chat_id)?;
            }
            StoreOp::AppendMemory {
                world_id, chat_id, ..
            }
            | StoreOp::PutAgentState {
                world_id, chat_id, ..
            } => need_chat(&o, world_id, chat_id)?,
            StoreOp::DeleteMessages {
                world_id,
                chat_id,
                message_ids,
            } => {
                need_chat(&o, world_id, chat_id)?;
                for id in message_ids {
                    o.set(Rec::Message(world_id, chat_id, id), false);
                }
            }
            StoreOp::ReplaceMessage {
                world_id,
                chat_id,
                old_message_id,
                message,
            } => {
                need_chat(&o, world_id, chat_id)?;
                let (w, c) = (world_id.as_str(), chat_id.as_str());
                if !o.exists(stored, Rec::Message(w, c, old_message_id), true) {
                    return Err(StoreError::Invalid(format!(
                        "message {old_message_id:?} does not exist in chat {chat_id:?}"
                    )));
                }
                let new_id = message.message_id.as_str();
                if new_id != old_message_id && o.exists(stored, Rec::Message(w, c, new_id), false) {
                    return Err(duplicate(new_id, c));
                }
                o.set(Rec::Message(w, c, old_message_id), false);
                o.set(Rec::Message(w, c, new_id), true);
            }
            StoreOp::AppendMessage {
                world_id,
                chat_id,
                message,
            } => {
                need_chat(&o, world_id, chat_id)?;
                let rec = Rec::Message(world_id, chat_id, &message.message_id);
                if o.exists(stored, rec, false) {
                    return Err(duplicate(&message.message_id, chat_id));
                }
                o.set(rec, true);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_prefix_only_of_the_records_under_it() {
        let world = rec_key(Rec::World("a"));
        let chat = rec_key(Rec::Chat("a", "b"));
        assert!(chat.starts_with(&world));
        assert!(rec_key(Rec::Message("a", "b", "m")).starts_with(&chat));
        // Ids holding the separator or digits cannot reach into another world's records.
        assert!(!rec_key(Rec::World("a1:b")).starts_with(&world));
        assert!(!rec_key(Rec::Chat("ab", "c")).starts_with(&world));
        // Lengths of several digits, and an empty part.
        let long = "x".repeat(123);
        assert_eq!(rec_key(Rec::Chat("abcdefghij", "")), "10:abcdefghij0:");
        assert_eq!(rec_key(Rec::World(&long)), format!("123:{long}"));
    }

    /// Stored data of one world `w` with chat `c` holding message `old`.
    struct Fixed;

    impl Stored for Fixed {
        fn exists(&self, rec: Rec<'_>, _hoped: bool) -> bool {
            match rec {
                Rec::World(w) => w == "w",
                Rec::Chat(w, c) => (w, c) == ("w", "c"),
                Rec::Message(w, c, m) => (w, c, m) == ("w", "c", "old"),
            }
        }

        fn revision(&self, _world_id: &str) -> Option<u64> {
            None
        }
    }

    #[test]
    fn a_batch_sees_its_own_earlier_ops() {
        use crate::core::store_contract::{append, chat, remember};
        let delete_chat = |c: &str| StoreOp::DeleteChat {
            world_id: "w".into(),
            chat_id: c.into(),
        };
        let ok = |ops: Vec<StoreOp>| validate(&ops, &Fixed).is_ok();
        // A reply's batch: its message, then the agents' memory of it.
        assert!(ok(vec![
            append("w", "c", "m"),
            remember("w", "c", "a", "m"),
            remember("w", "c", "b", "m"),
        ]));
        // A message id the batch itself appended, or one stored, cannot be appended again.
        assert!(!ok(vec![append("w", "c", "m"), append("w", "c", "m")]));
        assert!(!ok(vec![append("w", "c", "old")]));
        // Removed by an earlier op: free again.
        assert!(ok(vec![
            StoreOp::DeleteMessages {
                world_id: "w".into(),
                chat_id: "c".into(),
                message_ids: vec!["old".into()],
            },
            append("w", "c", "old"),
        ]));
        // A chat the batch made exists for its later ops; one it deleted does not.
        assert!(!ok(vec![remember("w", "n", "a", "m")]));
        assert!(ok(vec![
            StoreOp::PutChat(chat("w", "n")),
            remember("w", "n", "a", "m"),
            append("w", "n", "m"),
        ]));
        assert!(!ok(vec![delete_chat("c"), remember("w", "c", "a", "m")]));
        // Found once, then deleted: the later op sees it gone.
        assert!(!ok(vec![
            remember("w", "c", "a", "m"),
            delete_chat("c"),
            remember("w", "c", "a", "m2"),
        ]));
        assert!(!ok(vec![delete_chat("c"), append("w", "c", "m")]));
        // Deleted and written anew: its stored messages are gone with it.
        assert!(ok(vec![
            delete_chat("c"),
            StoreOp::PutChat(chat("w", "c")),
            append("w", "c", "old"),
        ]));
    }
}
