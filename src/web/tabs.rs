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

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

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

fn lock_manager() -> Option<JsValue> {
    let navigator = Reflect::get(&js_sys::global(), &JsValue::from_str("navigator")).ok()?;
    if !navigator.is_object() {
        return None;
    }
    let locks = Reflect::get(&navigator, &JsValue::from_str("locks")).ok()?;
    locks.is_object().then_some(locks)
}

fn describe(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        return format!(
            "{}: {}",
            String::from(err.name()),
            String::from(err.message())
        );
    }
    // Not `{e:?}`: JsValue's Debug pulls wasm-bindgen's `debugString` into the JS glue.
    e.as_string()
        .or_else(|| js_sys::JSON::stringify(e).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| "a value that is not JSON".to_string())
}

/// A promise and its `resolve` function.
fn deferred() -> Result<(Promise, Function), String> {
    let mut resolve = None;
    let promise = Promise::new(&mut |res, _rej| resolve = Some(res));
    resolve
        .map(|r| (promise, r))
        .ok_or_else(|| "the Promise constructor did not call its executor".to_string())
}

/// Waits for the exclusive Web Lock `name`. `Ok(None)` where Web Locks do not exist.
pub async fn acquire(name: &str) -> Result<Option<WebLock>, String> {
    let Some(locks) = lock_manager() else {
        return Ok(None);
    };
    let Some(request) = Reflect::get(&locks, &JsValue::from_str("request"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
    else {
        return Ok(None);
    };
    // The lock is held until `held` settles: the guard resolves it on drop.
    let (held, release) = deferred()?;
    let guard = WebLock { release };
    let (granted, on_granted) = deferred()?;
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
        // `true`: what tells the grant from `done` settling first (see below).
        let _ = on_granted.call1(&JsValue::UNDEFINED, &JsValue::TRUE);
        held.into()
    });
    let done = request
        .call2(&locks, &JsValue::from_str(name), &callback)
        .map_err(|e| format!("navigator.locks.request({name:?}) threw {}", describe(&e)))?;
    let done: Promise = done
        .dyn_into()
        .map_err(|_| format!("navigator.locks.request({name:?}) did not return a promise"))?;
    // `done` settles after the lock is released (with `held`'s value, never `true`), or at
    // once when the request fails: the race is the grant's `true` or that failure. One
    // promise race, not two Rust futures raced (whose loser, a dropped `JsFuture`, would keep
    // its callbacks until its promise settles). `callback` (a once-closure) is freed only when
    // called: when the request failed the browser never calls it, so it is called here.
    let ended = match JsFuture::from(Promise::race(&js_sys::Array::of2(&granted, &done))).await {
        Ok(v) if v == JsValue::TRUE => return Ok(Some(guard)),
        ended => ended,
    };
    if let Some(f) = callback.dyn_ref::<Function>() {
        let _ = f.call1(&JsValue::UNDEFINED, &JsValue::UNDEFINED);
    }
    Err(match ended {
        Err(e) => format!("the Web Lock {name:?} could not be taken: {}", describe(&e)),
        Ok(_) => format!("the Web Lock {name:?} ended before it was granted"),
    })
}

type Listener = Rc<dyn Fn(&str)>;

/// Whether another context has shown itself on the channel, and the worlds this context
/// changed before one did (see [`ChangeChannel`]).
#[derive(Default)]
struct Peers {
    seen: Cell<bool>,
    untold: RefCell<Vec<String>>,
}

/// The change notifications of one database: posts after this context's commits and calls the
/// subscribed listeners with the world id of every other context's commit.
///
/// A notice is posted only once another context is known to listen: posting costs the page
/// about a tenth of a bare IndexedDB write, paid after every commit, and a single tab has
/// nobody to tell. Every context posts `{hello}` when it opens its channel (before it reads
/// anything) and answers another's `{hello}` with `{here}`; any message from another context
/// makes this one post from then on. The worlds it changed before are told at that moment (a
/// newcomer may have read one of them before the write; it reads the revision again and
/// reloads only if it moved), so no change goes untold to a context that opened since.
pub struct ChangeChannel {
    channel: Option<web_sys::BroadcastChannel>,
    listeners: Rc<RefCell<Vec<(u64, Listener)>>>,
    peers: Rc<Peers>,
    next: Cell<u64>,
    _on_message: Option<Closure<dyn FnMut(web_sys::MessageEvent)>>,
}

/// Posts `{worldId, what}` (a closed channel throws; notifications are best effort, see the
/// module docs).
fn post_change(ch: &web_sys::BroadcastChannel, world_id: &str, what: &str) {
    let msg = js_sys::Object::new();
    let _ = Reflect::set(
        &msg,
        &JsValue::from_str("worldId"),
        &JsValue::from_str(world_id),
    );
    let _ = Reflect::set(&msg, &JsValue::from_str("what"), &JsValue::from_str(what));
    let _ = ch.post_message(&msg);
}

/// Posts `{<key>: 1}` (`hello`, `here`).
fn post_flag(ch: &web_sys::BroadcastChannel, key: &str) {
    let msg = js_sys::Object::new();
    let _ = Reflect::set(&msg, &JsValue::from_str(key), &JsValue::from_f64(1.0));
    let _ = ch.post_message(&msg);
}

impl ChangeChannel {
    /// Opens the channel `name` (a silent no-op channel where BroadcastChannel is missing).
    pub fn open(name: &str) -> ChangeChannel {
        let listeners: Rc<RefCell<Vec<(u64, Listener)>>> = Rc::default();
        let peers: Rc<Peers> = Rc::default();
        let has_channel = Reflect::get(&js_sys::global(), &JsValue::from_str("BroadcastChannel"))
            .is_ok_and(|c| c.is_function());
        let channel = if has_channel {
            web_sys::BroadcastChannel::new(name).ok()
        } else {
            None
        };
        let on_message = channel.as_ref().map(|ch| {
            let listeners = listeners.clone();
            let peers = peers.clone();
            let reply = ch.clone();
            let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |event: web_sys::MessageEvent| {
                    let data = event.data();
                    let has = |k: &str| {
                        Reflect::get(&data, &JsValue::from_str(k)).is_ok_and(|v| v.is_truthy())
                    };
                    if has("hello") {
                        post_flag(&reply, "here");
                    }
                    if !peers.seen.replace(true) {
                        for w in peers.untold.take() {
                            post_change(&reply, &w, "write");
                        }
                    }
                    let world = Reflect::get(&data, &JsValue::from_str("worldId"))
                        .ok()
                        .and_then(|w| w.as_string());
                    let Some(world) = world else {
                        return;
                    };
                    // Copied out: a listener may subscribe or unsubscribe.
                    let mut list: Vec<Listener> = Vec::new();
                    for (_, l) in listeners.borrow().iter() {
                        list.push(l.clone());
                    }
                    for l in list {
                        l(&world);
                    }
                },
            );
            ch.set_onmessage(Some(cb.as_ref().unchecked_ref()));
            post_flag(ch, "hello");
            cb
        });
        ChangeChannel {
            channel,
            listeners,
            peers,
            next: Cell::new(1),
            _on_message: on_message,
        }
    }

    /// Tells the other contexts that `world_id` changed (`what`: `"write"` or `"delete"`), or,
    /// while no other context has shown itself, keeps it to tell when one does.
    pub fn post(&self, world_id: &str, what: &str) {
        let Some(ch) = &self.channel else {
            return;
        };
        if !self.peers.seen.get() {
            let mut untold = self.peers.untold.borrow_mut();
            if !untold.iter().any(|w| w == world_id) {
                untold.push(world_id.to_string());
            }
            return;
        }
        post_change(ch, world_id, what);
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
        if let Some(ch) = &self.channel {
            ch.set_onmessage(None);
            ch.close();
        }
    }
}
