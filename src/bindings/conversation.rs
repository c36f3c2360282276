//! `AgentWorld`'s conversation: `send` (with an `AbortSignal` that cancels the work the
//! message started), `idle`, and the events as callbacks (`on`) or an async iterator
//! (`events`).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::bindings::convert::{options_object, promise, read_signal, string_arg};
use crate::bindings::error::{agent_world_error, from_world_error, invalid_argument};
use crate::bindings::events::{call_with_message, call_with_piece, event_payload, message_value};
use crate::bindings::input::get;
use crate::bindings::types::{or_undefined, SendOptionsArg};
use crate::bindings::world::{AgentWorld, Handle};
use crate::core::engine::{WeakWorld, World};
use crate::core::events::{Callback, Event, SystemEvent, Topic, WorldEvent};
use crate::web::js_tools::message_of;

#[wasm_bindgen]
impl AgentWorld {
    /// Publishes a message (from the human unless `sender` says otherwise) and starts the
    /// agents that answer it. Resolves with the published message once it is persisted.
    ///
    /// @example
    /// ```js
    /// await world.send("@alice, what do you think?");
    /// await world.idle();
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Promise<Message>")]
    pub fn send(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        options: Option<SendOptionsArg>,
    ) -> js_sys::Promise {
        let args = self.handle().and_then(|h| {
            let options = or_undefined(options);
            let content = content
                .as_string()
                .ok_or_else(|| invalid_argument("content", "must be a string"))?;
            let sender = read_sender(&options)?;
            let signal = read_signal(&options)?;
            if let Some(signal) = &signal {
                if get(signal, "aborted", "options.signal")?.is_truthy() {
                    return Err(agent_world_error(
                        "llm_aborted",
                        "send() was aborted before the message was published (options.signal)",
                        None,
                    ));
                }
            }
            Ok((h, content, sender, signal))
        });
        promise(async move {
            let (h, content, sender, signal) = args?;
            let message = h
                .world
                .send(&content, sender.as_deref())
                .await
                .map_err(from_world_error)?;
            if let Some(signal) = signal {
                cancel_chain_on_abort(&h.world, &message.message_id, signal);
            }
            h.drive();
            message_value(&message)
        })
    }

    /// `idle()` (declared with its docs in this file's `TS_CALL`; see
    /// [`AgentWorld::call_method`]).
    pub(crate) fn idle(&self) -> js_sys::Promise {
        let h = self.handle();
        promise(async move {
            let h = h?;
            if !h.world.is_busy() {
                return Ok(JsValue::UNDEFINED);
            }
            let (tx, rx) = futures_channel_oneshot();
            let tx = RefCell::new(Some(tx));
            let _sub = h.world.on(
                Topic::World,
                Rc::new(move |e: &Event| {
                    if matches!(e, Event::World(WorldEvent::Idle)) {
                        if let Some(tx) = tx.borrow_mut().take() {
                            tx.resolve();
                        }
                    }
                    Ok(())
                }),
            );
            // A running runner picks up whatever is queued: no task to spawn (it would
            // return at once, after a microtask of the executor).
            if !h.world.is_running() {
                h.drive();
            }
            rx.await;
            Ok(JsValue::UNDEFINED)
        })
    }
}

impl Handle {
    /// Calls `callback` with every event of `topic` (`message`, `sse`, `system`, `world`).
    /// Returns the function that unsubscribes.
    ///
    /// @example
    /// ```js
    /// const off = world.on("sse", (e) => e.type === "chunk" && process.stdout.write(e.content));
    /// off();
    /// ```
    // Typed generically in TS_ON below (interface merging): the callback's event type follows
    // the topic.
    pub(crate) fn on(
        &self,
        topic: &JsValue,
        callback: &JsValue,
    ) -> Result<js_sys::Function, JsValue> {
        let topic = string_arg(topic, "topic")?;
        let topic = parse_topic(&topic)?;
        let callback: js_sys::Function = callback
            .clone()
            .dyn_into()
            .map_err(|_| invalid_argument("callback", "must be a function"))?;
        Ok(subscribe(&self.world, topic, callback))
    }

    /// Every event of every topic as an async iterator (declared in events.rs' `TS_EVENTS`; see
    /// [`AgentWorld::get`]). Its listeners are `on()` callbacks.
    pub(crate) fn events(&self, options: &JsValue) -> Result<JsValue, JsValue> {
        let signal = read_signal(options)?;
        // Read through Reflect: a Proxy passes the `instanceof` check, and its `aborted` may
        // throw.
        let aborted = match &signal {
            Some(s) => get(s, "aborted", "options.signal")?.is_truthy(),
            None => false,
        };
        crate::bindings::events::events(&self.iterations, signal, aborted, |topic, listener| {
            subscribe(&self.world, topic, listener)
        })
    }
}

/// Subscribes `callback` to `topic` (an `on()` callback); returns the function that
/// unsubscribes.
fn subscribe(world: &World, topic: Topic, callback: js_sys::Function) -> js_sys::Function {
    let weak = world.downgrade();
    let cb: Callback = Rc::new(move |event: &Event| {
        // A streamed piece (one per token) is built and delivered in one crossing.
        // So is a message (one per reply): one crossing, no JSON text.
        let returned = match call_with_piece(&callback, event)
            .or_else(|| call_with_message(&callback, event))
        {
            Some(returned) => returned,
            None => {
                let payload =
                    event_payload(event).map_err(|_| "could not convert the event".to_string())?;
                let listener: &Listener = callback.unchecked_ref();
                listener.call_returning(&JsValue::NULL, &payload)
            }
        }
        .map_err(|e| message_of(&e, "the callback threw"))?;
        // An async callback's rejection is reported like a throw (never left unhandled),
        // except for a callback handling a report itself, which would loop. A callback
        // returning nothing (the common case, once per streamed chunk) costs no check.
        if let Some(returned) = returned.filter(JsValue::is_object) {
            report_rejection(&returned, weak.clone(), topic, !is_callback_error(event));
        }
        Ok(())
    });
    // The subscription lives as long as the world, not as long as the returned function:
    // callers often ignore it (`world.on(...)` as a statement), and a subscription tied to
    // a closure JS may garbage-collect would silently stop delivering events.
    let id = world.on(topic, cb).forget();
    // Weak: a kept `off` function must not keep a closed world alive.
    let world = world.downgrade();
    let off = Closure::<dyn FnMut()>::new(move || {
        if let Some(world) = world.upgrade() {
            world.off(id);
        }
    });
    off.into_js_value().unchecked_into()
}

// The generic `on`, merged into the class's declaration: the callback's event type follows the
// topic. The glue step defines it on the class, calling the shared export `__get` (world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_ON: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * Calls `callback` with every event of `topic`; returns the function that unsubscribes.
   * A callback that throws is reported as a `system` `error` event (`callback_error`).
   *
   * @example
   * ```js
   * const off = world.on("sse", (e) => { if (e.type === "chunk") out.append(e.content ?? ""); });
   * off();
   * ```
   */
  on<T extends Topic>(topic: T, callback: (event: EventMap[T]) => void): () => void;
}
"#;

// `idle`, declared here with its docs: the glue step defines it on the class, calling the
// shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Resolves when no agent work is pending (the `world` `idle` event).
   *
   * @example
   * ```js
   * await world.send("Hello, everyone!");
   * await world.idle(); // every reply (and hand-over) has been published
   * ```
   */
  idle(): Promise<void>;
}
"#;

fn parse_topic(topic: &str) -> Result<Topic, JsValue> {
    Ok(match topic {
        "message" => Topic::Message,
        "sse" => Topic::Sse,
        "system" => Topic::System,
        "world" => Topic::World,
        other => {
            return Err(invalid_argument(
                "topic",
                &format!(
                    "unknown topic {other:?}; use \"message\", \"sse\", \"system\" or \"world\""
                ),
            ))
        }
    })
}

fn read_sender(options: &JsValue) -> Result<Option<String>, JsValue> {
    if !options_object(options)? {
        return Ok(None);
    }
    let sender = get(options, "sender", "options")?;
    if sender.is_undefined() || sender.is_null() {
        return Ok(None);
    }
    sender
        .as_string()
        .map(Some)
        .ok_or_else(|| invalid_argument("options.sender", "must be a string"))
}

fn is_callback_error(event: &Event) -> bool {
    matches!(event, Event::System(SystemEvent::Error { code, .. }) if code == "callback_error")
}

#[wasm_bindgen]
extern "C" {
    /// An `on()` callback.
    type Listener;
    /// `Function.prototype.call`, its result `None` for `undefined` or `null`: what most
    /// callbacks return, so the usual call crosses the boundary once instead of twice (the
    /// `is_object` check of `call1`'s result was a second crossing per event).
    #[wasm_bindgen(method, catch, js_name = call)]
    fn call_returning(
        this: &Listener,
        context: &JsValue,
        event: &JsValue,
    ) -> Result<Option<JsValue>, JsValue>;
}

/// When `returned` (what an `on` callback returned) is a promise or thenable that rejects,
/// handles the rejection and, when `report`, reports it as a `system` `error` event with code
/// `callback_error`, as a throw is.
fn report_rejection(returned: &JsValue, world: WeakWorld, topic: Topic, report: bool) {
    // Promise.resolve adopts thenables and never throws (a throwing `then` rejects).
    let settled = js_sys::Promise::resolve(returned);
    let on_rejected = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        if let Some(world) = world.upgrade().filter(|_| report) {
            let message = message_of(&e, "the callback's promise rejected");
            world.emit_all(vec![Event::error(
                format!("a '{}' event callback failed: {message}", topic.as_str()),
                "callback_error",
                None,
            )]);
        }
    });
    let _ = settled.catch(&on_rejected);
    // Owned by the JS function from now on: freed when the promise is collected.
    let _ = on_rejected.into_js_value();
}

/// While the agent work started by `root` runs, aborting `signal` cancels it: the calls
/// answering `root` and, transitively, the replies it produced (an agent hand-over chain).
/// Other work goes on. The tracking ends when the world is next idle.
fn cancel_chain_on_abort(world: &World, root: &str, signal: web_sys::AbortSignal) {
    struct Tracker {
        chain: Vec<String>,
        subscriptions: Vec<crate::core::events::SubscriptionId>,
        listener: Option<Closure<dyn FnMut()>>,
        done: bool,
    }
    let tracker = Rc::new(RefCell::new(Tracker {
        chain: vec![root.to_string()],
        subscriptions: Vec::new(),
        listener: None,
        done: false,
    }));
    let finish = {
        let (world, tracker, signal) = (world.clone(), tracker.clone(), signal.clone());
        move || {
            let (subscriptions, listener) = {
                let mut t = tracker.borrow_mut();
                if t.done {
                    return;
                }
                t.done = true;
                (std::mem::take(&mut t.subscriptions), t.listener.take())
            };
            for id in subscriptions {
                world.off(id);
            }
            if let Some(listener) = listener {
                let _ = signal.remove_event_listener_with_callback(
                    "abort",
                    listener.as_ref().unchecked_ref(),
                );
            }
        }
    };
    let t = tracker.clone();
    let on_message = world
        .on(
            Topic::Message,
            Rc::new(move |event: &Event| {
                if let Event::Message(m) = event {
                    let mut t = t.borrow_mut();
                    let in_chain = m
                        .reply_to_message_id
                        .as_ref()
                        .is_some_and(|r| t.chain.contains(r));
                    if in_chain {
                        t.chain.push(m.message_id.clone());
                    }
                }
                Ok(())
            }),
        )
        .forget();
    let idle_finish = finish.clone();
    let on_idle = world
        .on(
            Topic::World,
            Rc::new(move |event: &Event| {
                if matches!(event, Event::World(WorldEvent::Idle)) {
                    idle_finish();
                }
                Ok(())
            }),
        )
        .forget();
    let (w, t) = (world.clone(), tracker.clone());
    let listener = Closure::<dyn FnMut()>::new(move || {
        let chain = t.borrow().chain.clone();
        w.cancel_replies_to(&chain);
        // Cancelled approvals of the chain queue their store work.
        let runner = w.clone();
        wasm_bindgen_futures::spawn_local(async move { runner.run_until_idle().await });
        finish();
    });
    let added = signal.add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
    let mut t = tracker.borrow_mut();
    t.subscriptions = vec![on_message, on_idle];
    if added.is_ok() {
        t.listener = Some(listener);
    }
}

/// A tiny one-shot signal (resolve once, await once) without another dependency.
fn futures_channel_oneshot() -> (OneshotTx, OneshotRx) {
    let shared = Rc::new(RefCell::new((false, None::<std::task::Waker>)));
    (OneshotTx(shared.clone()), OneshotRx(shared))
}

struct OneshotTx(Rc<RefCell<(bool, Option<std::task::Waker>)>>);
struct OneshotRx(Rc<RefCell<(bool, Option<std::task::Waker>)>>);

impl OneshotTx {
    fn resolve(self) {
        let waker = {
            let mut s = self.0.borrow_mut();
            s.0 = true;
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl std::future::Future for OneshotRx {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let mut s = self.0.borrow_mut();
        if s.0 {
            std::task::Poll::Ready(())
        } else {
            s.1 = Some(cx.waker().clone());
            std::task::Poll::Pending
        }
    }
}
