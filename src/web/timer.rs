//! Timers over the global `setTimeout`/`clearTimeout` (never `window()`: they exist in pages,
//! workers, Node, Deno and workerd). A timer is cleared when its handle is dropped, so a
//! finished call leaves nothing scheduled behind it.

use wasm_bindgen::prelude::*;

use crate::web::custom_provider::hold_timer;

#[wasm_bindgen]
extern "C" {
    // The handle is a number in browsers and a Timeout object in Node: keep it opaque.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
}

/// Runs a callback once after `ms` milliseconds unless dropped first.
pub struct Timeout {
    handle: JsValue,
    // Kept alive until the timer fires or is cleared; dropping it earlier would make the JS
    // side call a freed closure.
    _callback: Closure<dyn FnMut()>,
}

impl Timeout {
    pub fn new(ms: u64, callback: impl FnMut() + 'static) -> Self {
        let callback = Closure::<dyn FnMut()>::new(callback);
        let handle = set_timeout(callback.as_ref().unchecked_ref(), ms as f64);
        Self {
            handle,
            _callback: callback,
        }
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        clear_timeout(&self.handle);
    }
}

/// Resolves after `ms` milliseconds. Dropping the future cancels it.
///
/// Every pending sleep of the thread shares one JS timer, armed for the earliest deadline and
/// released when no sleep is left, so that a finished call leaves nothing that keeps Node
/// alive: where the host can unref a timer (Node, Bun) it is unref'd at once and kept for
/// the next sleeps; elsewhere it is cleared at the next microtask, unless a sleep came
/// meanwhile (see `sweep`). A sleep used to be a `Promise`, a `setTimeout`, a `JsFuture`
/// and its two closures, and each LLM call raced two of them (four closures, two promises
/// and two timers per reply); now a sleep is an entry in a list, and the host sees a timer
/// only when the earliest deadline moves earlier.
pub fn sleep(ms: u64) -> Sleep {
    Sleep {
        when: When::After(ms),
        id: None,
    }
}

/// [`sleep`] until `deadline` (`Date.now()` milliseconds), for a caller that has just read
/// the clock: one call into the host fewer per sleep.
pub fn sleep_until(deadline: f64) -> Sleep {
    Sleep {
        when: When::At(deadline),
        id: None,
    }
}

#[derive(Clone, Copy)]
enum When {
    After(u64),
    At(f64),
}

/// The future of [`sleep`]: registered at its first poll.
pub struct Sleep {
    when: When,
    id: Option<u64>,
}

impl std::future::Future for Sleep {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let when = self.when;
        let id = self.id;
        let (id, done) = TIMERS.with(|t| t.borrow_mut().poll(id, when, cx.waker()));
        self.id = Some(id);
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            // `try_with`: a sleep dropped while the thread's storage is torn down has no timer
            // left to clear.
            let _ = TIMERS.try_with(|t| {
                if let Ok(mut t) = t.try_borrow_mut() {
                    t.remove(id);
                }
            });
        }
    }
}

struct Entry {
    id: u64,
    /// `Date.now()` milliseconds.
    deadline: f64,
    waker: std::task::Waker,
    fired: bool,
}

/// The armed JS timer: its handle and the deadline it was set for.
struct Armed {
    handle: JsValue,
    at: f64,
    /// Left armed, unref'd, while no sleep waits (see [`sweep`]).
    parked: bool,
}

#[derive(Default)]
struct Timers {
    next_id: u64,
    entries: Vec<Entry>,
    armed: Option<Armed>,
    /// The one callback every arming passes to `setTimeout` (made once per thread).
    callback: Option<Closure<dyn FnMut()>>,
    /// The microtask that clears the timer once no sleep is left (see `Timers::remove`).
    sweep: Option<Closure<dyn FnMut(JsValue)>>,
    sweep_queued: bool,
    /// Whether this host's timers can be unref'd: learned at the first [`sweep`].
    parkable: Option<bool>,
}

thread_local! {
    static TIMERS: std::cell::RefCell<Timers> = std::cell::RefCell::new(Timers::default());
}

impl Timers {
    /// Registers (first poll) or refreshes a sleep; returns its id and whether it is over.
    fn poll(&mut self, id: Option<u64>, when: When, waker: &std::task::Waker) -> (u64, bool) {
        if let Some(id) = id {
            return match self.entries.iter_mut().find(|e| e.id == id) {
                Some(e) if e.fired => (id, true),
                Some(e) => {
                    if !e.waker.will_wake(waker) {
                        e.waker = waker.clone();
                    }
                    (id, false)
                }
                // Removed (cannot happen while the future lives): over.
                None => (id, true),
            };
        }
        let id = self.next_id;
        self.next_id += 1;
        let deadline = match when {
            When::After(ms) => js_sys::Date::now() + ms as f64,
            When::At(deadline) => deadline,
        };
        self.entries.push(Entry {
            id,
            deadline,
            waker: waker.clone(),
            fired: false,
        });
        match &mut self.armed {
            Some(a) if deadline >= a.at => {
                if a.parked {
                    // A sleep waits again: the timer keeps the process alive again.
                    a.parked = false;
                    let _ = hold_timer(&a.handle, true);
                }
            }
            _ => self.arm(deadline),
        }
        (id, false)
    }

    fn remove(&mut self, id: u64) {
        self.entries.retain(|e| e.id != id);
        if self.parkable == Some(true) && self.idle() {
            // Unref'd at once (one call, undone by the next sleep's `ref`), rather than by a
            // microtask queued per call.
            if let Some(a) = self.armed.as_mut().filter(|a| !a.parked) {
                a.parked = hold_timer(&a.handle, false).unwrap_or(false);
            }
            if self.armed.as_ref().is_none_or(|a| a.parked) {
                return;
            }
        }
        if self.armed.is_some() && self.idle() && !self.sweep_queued {
            // Cleared at the next microtask if no sleep came meanwhile: the engine's next call
            // usually starts in the same turn (the queue moves on synchronously), and its
            // sleep then reuses the armed timer (a deadline later than the armed one needs no
            // new timer) instead of a `clearTimeout` and a `setTimeout` per call.
            let sweep = self
                .sweep
                .get_or_insert_with(|| Closure::<dyn FnMut(JsValue)>::new(|_| sweep()));
            // A resolved promise's reaction, not `queueMicrotask`: Node wraps every
            // `queueMicrotask` callback in an async resource, several times the cost.
            let _ = js_sys::Promise::resolve(&JsValue::UNDEFINED).then(sweep);
            self.sweep_queued = true;
        }
    }

    /// No sleep waits (the entries left have fired and only wait to be dropped).
    fn idle(&self) -> bool {
        self.entries.iter().all(|e| e.fired)
    }

    /// (Re)arms the JS timer for `deadline`.
    fn arm(&mut self, deadline: f64) {
        if let Some(a) = self.armed.take() {
            clear_timeout(&a.handle);
        }
        let callback = self
            .callback
            .get_or_insert_with(|| Closure::<dyn FnMut()>::new(on_timer));
        let delay = (deadline - js_sys::Date::now()).max(0.0);
        let handle = set_timeout(callback.as_ref().unchecked_ref(), delay);
        self.armed = Some(Armed {
            handle,
            at: deadline,
            parked: false,
        });
    }
}

/// Once no sleep waits any more, a finished call leaves nothing scheduled that keeps the
/// process alive (Node can exit): where timers can be unref'd (Node, Bun) the armed one is
/// kept, unref'd, for the next call's sleeps to reuse (a reply to each message otherwise
/// cost a `clearTimeout` and a `setTimeout`: in a fresh Node process, with its timer lists
/// and `Timeout` objects, the largest host cost of a call from a provider that answers at
/// once); elsewhere it is cleared. A parked timer that fires finds no sleep due: nothing
/// happens. The first sweep learns whether the host can unref timers; after that, where it
/// can, a call's last sleep unrefs the timer itself (`Timers::remove`), with no sweep.
fn sweep() {
    TIMERS.with(|t| {
        let Ok(mut t) = t.try_borrow_mut() else {
            return;
        };
        t.sweep_queued = false;
        if t.idle() {
            let Some(a) = t.armed.as_mut() else {
                return;
            };
            if a.parked {
                return;
            }
            let parked = hold_timer(&a.handle, false).unwrap_or(false);
            a.parked = parked;
            t.parkable = Some(parked);
            if !parked {
                if let Some(a) = t.armed.take() {
                    clear_timeout(&a.handle);
                }
            }
        }
    });
}

/// The JS timer fired: every sleep due by the deadline it was armed for is over (the host
/// waited at least that long, whatever `Date.now()` says); the timer is armed again for the
/// earliest sleep left.
fn on_timer() {
    let wakers = TIMERS.with(|t| {
        let Ok(mut t) = t.try_borrow_mut() else {
            return Vec::new();
        };
        let due = t
            .armed
            .take()
            .map_or(js_sys::Date::now(), |a| a.at)
            .max(js_sys::Date::now());
        let mut wakers = Vec::new();
        // One plain loop: fires what is due and finds the next deadline of the rest.
        let mut next: Option<f64> = None;
        for e in t.entries.iter_mut() {
            if e.fired {
                continue;
            }
            if e.deadline <= due {
                e.fired = true;
                wakers.push(e.waker.clone());
            } else {
                next = Some(next.map_or(e.deadline, |n| n.min(e.deadline)));
            }
        }
        if let Some(next) = next {
            t.arm(next);
        }
        wakers
    });
    // Woken outside the borrow: a waker may poll (and so register or drop sleeps) at once.
    for w in wakers {
        w.wake();
    }
}
