//! `world.events({ signal })`: every event of every topic as an async iterator, for code that
//! prefers `for await` to callbacks.
//!
//! Events are buffered from the moment `events()` is called until they are read, so nothing is
//! missed between two `next()` calls; the buffer is unbounded, so a consumer must keep reading
//! or stop the iteration (`break`, `return()`, or the `signal`), which unsubscribes.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::engine::World;
use crate::core::events::{Event, SseEvent, SseType, SubscriptionId, Topic};

#[wasm_bindgen(typescript_custom_section)]
const TS_EVENTS: &'static str = r#"
/** One item of `world.events()`: the topic and its event, narrowed together. */
export type TopicEvent = { [T in Topic]: { topic: T; event: EventMap[T] } }[Topic];
export interface EventsOptions {
  /** Ends the iteration (and unsubscribes) when aborted. */
  signal?: AbortSignal;
}
export interface AgentWorld {
  /**
   * Every event of every topic, in order, as an async iterator. Events are buffered from this
   * call until read; `break`, `return()` or aborting `signal` ends it and unsubscribes.
   *
   * @example
   * ```js
   * const stop = new AbortController();
   * for await (const { topic, event } of world.events({ signal: stop.signal })) {
   *   if (topic === "world" && event.type === "idle") stop.abort();
   * }
   * ```
   */
  events(options?: EventsOptions): AsyncIterableIterator<TopicEvent>;
}
"#;

/// The JS object a callback gets for `event`: a fresh plain object per call (a listener may keep
/// it: `events()` buffers them), shaped exactly as the serde form (spec §8).
pub(crate) fn event_payload(event: &Event) -> Result<JsValue, JsValue> {
    use crate::bindings::convert::to_js;
    match event {
        Event::Sse(e) => match stream_piece(e) {
            Some((kind, content)) => Ok(piece_object(kind, &e.agent_name, &e.message_id, content)),
            None => to_js(e),
        },
        Event::Message(m) => to_js(m),
        Event::System(e) => to_js(e),
        Event::World(e) => to_js(e),
    }
}

/// A `chunk` or `reasoning` event with `content` and nothing else: the events of a streamed
/// reply, one per token, the only ones frequent enough to deserve their own path.
fn stream_piece(e: &SseEvent) -> Option<(SseType, &str)> {
    let only_content = e.error.is_none()
        && e.partial_content.is_none()
        && e.usage.is_none()
        && e.tool_call_id.is_none()
        && e.tool_name.is_none()
        && e.args.is_none()
        && e.result.is_none();
    match (e.kind, &e.content) {
        (SseType::Chunk | SseType::Reasoning, Some(content)) if only_content => {
            Some((e.kind, content))
        }
        _ => None,
    }
}

#[wasm_bindgen]
extern "C" {
    /// A plain object being filled in.
    type Fields;
    /// `this[key] = value` (what serde_wasm_bindgen's objects are built with), without the
    /// `catch` wrapper of `Reflect.set`: setting a data property on a fresh plain object
    /// cannot throw.
    #[wasm_bindgen(method, indexing_setter)]
    fn set(this: &Fields, key: &JsValue, value: &JsValue);
    /// `this[key] = value` for a string handed over as UTF-8 bytes: the glue decodes it in the
    /// same call (one crossing, where `JsValue::from_str` then `set` took two).
    #[wasm_bindgen(method, indexing_setter)]
    fn set_str(this: &Fields, key: &JsValue, value: &str);
}

/// What every piece of the reply being streamed repeats: `{type, agentName, messageId}` as a
/// JS object each piece's object is copied from (rebuilt when the reply or the type changes),
/// and the `content` key.
struct PieceTemplate {
    content_key: JsValue,
    current: RefCell<Option<(SseType, String, String, js_sys::Object)>>,
}

thread_local! {
    static PIECE: PieceTemplate = PieceTemplate {
        content_key: JsValue::from_str("content"),
        current: RefCell::new(None),
    };
}

/// `{type, agentName, messageId, content}` (the serde path's object, same key order): a copy
/// of the reply's template (`Object.assign`) plus its `content`, so a piece crosses the JS
/// boundary three times (new object, copy, content stored as it is decoded) and decodes one
/// string. Built
/// through serde it crossed ten times and decoded four strings; through a JSON text and the
/// host's `JSON.parse` it decoded and parsed the whole text, several times slower in Node.
fn piece_object(kind: SseType, agent: &str, message: &str, content: &str) -> JsValue {
    PIECE.with(|p| {
        let mut current = p.current.borrow_mut();
        let fresh = match current.as_ref() {
            Some((k, a, m, _)) => *k != kind || a != agent || m != message,
            None => true,
        };
        if fresh {
            let template = js_sys::Object::new();
            let fields: &Fields = template.unchecked_ref();
            let kind_name = if kind == SseType::Chunk {
                "chunk"
            } else {
                "reasoning"
            };
            for (key, value) in [
                ("type", kind_name),
                ("agentName", agent),
                ("messageId", message),
            ] {
                fields.set(&JsValue::from_str(key), &JsValue::from_str(value));
            }
            *current = Some((kind, agent.to_string(), message.to_string(), template));
        }
        let out = js_sys::Object::new();
        if let Some((_, _, _, template)) = current.as_ref() {
            js_sys::Object::assign(&out, template);
        }
        let fields: &Fields = out.unchecked_ref();
        fields.set_str(&p.content_key, content);
        out.into()
    })
}

#[derive(Default)]
struct State {
    buffer: VecDeque<JsValue>,
    waiting: Option<js_sys::Function>,
    done: bool,
    subscriptions: Vec<SubscriptionId>,
    // The abort listener, kept alive while the iteration runs and removed when it ends.
    abort: Option<(web_sys::AbortSignal, Closure<dyn FnMut()>)>,
}

fn result(value: &JsValue, done: bool) -> JsValue {
    let out = js_sys::Object::new();
    // Setting data properties on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(&out, &JsValue::from_str("value"), value);
    let _ = js_sys::Reflect::set(&out, &JsValue::from_str("done"), &JsValue::from_bool(done));
    out.into()
}

fn finish(world: &World, state: &Rc<RefCell<State>>) {
    let (subscriptions, waiting, abort) = {
        let mut s = state.borrow_mut();
        if s.done {
            return;
        }
        s.done = true;
        s.buffer.clear();
        (
            std::mem::take(&mut s.subscriptions),
            s.waiting.take(),
            s.abort.take(),
        )
    };
    for id in subscriptions {
        world.off(id);
    }
    if let Some(resolve) = waiting {
        let _ = resolve.call1(&JsValue::NULL, &result(&JsValue::UNDEFINED, true));
    }
    if let Some((signal, listener)) = abort {
        let _ =
            signal.remove_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
    }
}

/// A weak handle on the function that ends one `events()` iteration.
pub type EndIteration = std::rc::Weak<dyn Fn()>;

/// Builds the async iterator over `world`'s events (see the module docs), and a weak handle on
/// the function that ends it (as `return()` does), for closing the world: a `for await` over a
/// closed world ends instead of waiting forever.
pub fn events(
    world: &World,
    signal: Option<web_sys::AbortSignal>,
    to_payload: fn(&Event) -> Result<JsValue, JsValue>,
) -> Result<(JsValue, EndIteration), JsValue> {
    // Read through Reflect before subscribing: a Proxy passes the `instanceof` check, and its
    // `aborted` may throw.
    let aborted = match &signal {
        Some(s) => crate::bindings::input::get(s, "aborted", "options.signal")?.is_truthy(),
        None => false,
    };
    let state = Rc::new(RefCell::new(State::default()));
    for (topic, name) in [
        (Topic::Message, "message"),
        (Topic::Sse, "sse"),
        (Topic::System, "system"),
        (Topic::World, "world"),
    ] {
        let st = state.clone();
        let id = world
            .on(
                topic,
                Rc::new(move |event: &Event| {
                    let item = js_sys::Object::new();
                    let payload = to_payload(event).map_err(|_| "could not convert the event")?;
                    let _ = js_sys::Reflect::set(&item, &"topic".into(), &JsValue::from_str(name));
                    let _ = js_sys::Reflect::set(&item, &"event".into(), &payload);
                    let waiting = {
                        let mut s = st.borrow_mut();
                        if s.done {
                            return Ok(());
                        }
                        match s.waiting.take() {
                            Some(resolve) => Some(resolve),
                            None => {
                                s.buffer.push_back(item.clone().into());
                                None
                            }
                        }
                    };
                    if let Some(resolve) = waiting {
                        let _ = resolve.call1(&JsValue::NULL, &result(&item, false));
                    }
                    Ok(())
                }),
            )
            .forget();
        state.borrow_mut().subscriptions.push(id);
    }
    if let Some(signal) = signal {
        if aborted {
            finish(world, &state);
        } else {
            let (w, st) = (world.clone(), state.clone());
            let listener = Closure::<dyn FnMut()>::new(move || finish(&w, &st));
            signal
                .add_event_listener_with_callback("abort", listener.as_ref().unchecked_ref())
                .map_err(|e| {
                    crate::bindings::error::agent_world_error(
                        "invalid_input",
                        "options.signal must be an AbortSignal",
                        Some(e),
                    )
                })?;
            state.borrow_mut().abort = Some((signal, listener));
        }
    }

    let iterator = js_sys::Object::new();
    let st = state.clone();
    let next = Closure::<dyn FnMut() -> js_sys::Promise>::new(move || {
        let mut s = st.borrow_mut();
        if let Some(item) = s.buffer.pop_front() {
            return js_sys::Promise::resolve(&result(&item, false));
        }
        if s.done {
            return js_sys::Promise::resolve(&result(&JsValue::UNDEFINED, true));
        }
        let mut resolver = None;
        let promise = js_sys::Promise::new(&mut |resolve, _| resolver = Some(resolve));
        // A second next() before the first settles ends the first with done (one reader).
        if let Some(previous) = s
            .waiting
            .replace(resolver.unwrap_or_else(js_sys::Function::default))
        {
            let _ = previous.call1(&JsValue::NULL, &result(&JsValue::UNDEFINED, true));
        }
        promise
    });
    let (w, st) = (world.clone(), state.clone());
    // Owned by `return()` (so it lives as long as the iterator); the caller gets a weak handle.
    let end: Rc<dyn Fn()> = Rc::new(move || finish(&w, &st));
    let weak_end = Rc::downgrade(&end);
    let ret = Closure::<dyn FnMut() -> js_sys::Promise>::new(move || {
        end();
        js_sys::Promise::resolve(&result(&JsValue::UNDEFINED, true))
    });
    let (next, ret) = (next.into_js_value(), ret.into_js_value());
    let _ = js_sys::Reflect::set(&iterator, &"next".into(), &next);
    let _ = js_sys::Reflect::set(&iterator, &"return".into(), &ret);
    // `[Symbol.asyncIterator]()` must return an iterator; a closure cannot see `this`, and
    // capturing `iterator` itself would make a cycle through wasm-bindgen's heap (a leak), so it
    // returns a fresh object over the same `next` and `return`.
    let fresh = Closure::<dyn FnMut() -> JsValue>::new(move || {
        let it = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&it, &"next".into(), &next);
        let _ = js_sys::Reflect::set(&it, &"return".into(), &ret);
        it.into()
    });
    let _ = js_sys::Reflect::set(
        &iterator,
        &js_sys::Symbol::async_iterator(),
        &fresh.into_js_value(),
    );
    Ok((iterator.into(), weak_end))
}
