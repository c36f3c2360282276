//! Timers over the global `setTimeout`/`clearTimeout` (never `window()`: they exist in pages,
//! workers, Node, Deno and workerd). A timer is cleared when its handle is dropped, so a
//! finished call leaves nothing scheduled behind it.

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

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

/// Resolves after `ms` milliseconds. Dropping the future clears the timer.
pub async fn sleep(ms: u64) {
    let mut handle = JsValue::UNDEFINED;
    let mut resolve = None;
    let promise = js_sys::Promise::new(&mut |res, _reject| {
        handle = set_timeout(&res, ms as f64);
        resolve = Some(res);
    });
    // Clears the timer if the future is dropped before it fires, and settles the promise then:
    // a `JsFuture` keeps its two callbacks in a reference cycle that only settling breaks, so
    // a promise left pending for ever would leak them (two closures per timer: a call racing
    // its timeouts would leak four per reply).
    let _guard = ClearOnDrop { handle, resolve };
    // A timer promise never rejects; ignoring the Result is correct.
    let _ = JsFuture::from(promise).await;
}

struct ClearOnDrop {
    handle: JsValue,
    resolve: Option<js_sys::Function>,
}

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        clear_timeout(&self.handle);
        // Settling an already settled promise does nothing.
        if let Some(resolve) = &self.resolve {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }
}
