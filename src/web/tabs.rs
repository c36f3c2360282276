//! Writers in several tabs and workers of one origin: a per-world Web Lock
//! (`navigator.locks`, in pages and workers of Chromium, Firefox and Safari) that serialises
//! the writers of a world, and a BroadcastChannel per database on which each context posts
//! `{worldId, what}` after a committed write so the others refresh their view (once another
//! context has shown itself there: see [`ChangeChannel`]).
//!
//! Where `navigator.locks` is missing (Node, Deno, workerd: one context, no IndexedDB shared
//! with another) no lock is needed and none is taken; where `BroadcastChannel` is missing,
//! nothing is posted (the engine still reloads under the lock before its next write, see the
//! `store` module docs, so only the notification is lost, never data).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

// The lock's request and the channel's protocol run in JS (`awwLock`, `awwChannel`, in the
// IndexedDB adapter's snippet, the one this module serves): the host does them in a few lines
// each, where Rust needed a web-sys or `Reflect` call (an import and its glue) per step.
use super::idb_request::{open_channel, web_lock};

/// A held Web Lock. Dropping it releases the lock; dropped while the request still waits, the
/// lock is released as soon as it is granted, so a cancelled change never keeps a world locked.
pub struct WebLock {
    release: Function,
}

impl Drop for WebLock {
    fn drop(&mut self) {
        // Resolving a promise cannot meaningfully fail.
        let _ = self.release.call0(&JsValue::UNDEFINED);
    }
}

/// Waits for the exclusive Web Lock `name`. `Ok(None)` where Web Locks do not exist.
pub async fn acquire(name: &str) -> Result<Option<WebLock>, String> {
    let pair = match web_lock(name) {
        Ok(pair) if pair.length() == 0 => return Ok(None),
        Ok(pair) => pair,
        Err(_) => return Err(format!("the Web Lock {name:?} could not be taken")),
    };
    // Held from here: dropped before the grant (this future too), it releases the lock as
    // soon as it is granted.
    let guard = WebLock {
        release: pair.get(0).unchecked_into(),
    };
    // The failure's message is made by the snippet (`awwLock`).
    match JsFuture::from(Promise::from(pair.get(1))).await {
        Ok(_) => Ok(Some(guard)),
        Err(why) => Err(why.as_string().unwrap_or_default()),
    }
}

type Listener = Rc<dyn Fn(&str)>;

/// The change notifications of one database: posts after this context's commits and calls the
/// subscribed listeners with the world id of every other context's commit.
///
/// A notice is posted only once another context is known to listen: posting costs the page
/// about a tenth of a bare IndexedDB write, paid after every commit, and a single tab has
/// nobody to tell. Every context posts `{hello}` when it opens its channel (before it reads
/// anything) and answers another's `{hello}` with `{here}`; any message from another context
/// makes this one post from then on. The worlds it changed before are told at that moment (a
/// newcomer may have read one of them before the write; it reads the revision again and
/// reloads only if it moved), so no change goes untold to a context that opened since. The
/// protocol runs in JS (`awwChannel`); notices are `{worldId, what}`.
pub struct ChangeChannel {
    /// `awwChannel`'s function: `(worldId, what)` posts, `()` closes. `None`: no channel.
    channel: Option<Function>,
    listeners: Rc<RefCell<Vec<(u64, Listener)>>>,
    next: Cell<u64>,
    /// Takes a `JsValue`, not a `String`: the signature the crate's other closures share (one
    /// set of closure glue).
    _on_world: Closure<dyn FnMut(JsValue)>,
}

impl ChangeChannel {
    /// Opens the channel `name` (a silent no-op channel where BroadcastChannel is missing).
    pub fn open(name: &str) -> ChangeChannel {
        let listeners: Rc<RefCell<Vec<(u64, Listener)>>> = Rc::default();
        let called = listeners.clone();
        let on_world = Closure::<dyn FnMut(JsValue)>::new(move |world: JsValue| {
            let Some(world) = world.as_string() else {
                return;
            };
            // Copied out: a listener may subscribe or unsubscribe.
            let mut list: Vec<Listener> = Vec::new();
            for (_, l) in called.borrow().iter() {
                list.push(l.clone());
            }
            for l in list {
                l(&world);
            }
        });
        ChangeChannel {
            channel: open_channel(name, &on_world).ok().flatten(),
            listeners,
            next: Cell::new(1),
            _on_world: on_world,
        }
    }

    /// Tells the other contexts that `world_id` changed (`what`: `"write"` or `"delete"`), or,
    /// while no other context has shown itself, keeps it to tell when one does.
    pub fn post(&self, world_id: &str, what: &str) {
        if let Some(post) = &self.channel {
            let _ = post.call2(
                &JsValue::UNDEFINED,
                &JsValue::from_str(world_id),
                &JsValue::from_str(what),
            );
        }
    }

    /// Calls `listener` with the world id of every change another context posts.
    pub fn subscribe(&self, listener: Listener) -> u64 {
        let id = self.next.get();
        self.next.set(id + 1);
        self.listeners.borrow_mut().push((id, listener));
        id
    }

    pub fn unsubscribe(&self, id: u64) {
        self.listeners.borrow_mut().retain(|(i, _)| *i != id);
    }
}

impl Drop for ChangeChannel {
    fn drop(&mut self) {
        if let Some(close) = &self.channel {
            let _ = close.call0(&JsValue::UNDEFINED);
        }
    }
}
