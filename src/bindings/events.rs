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
use crate::core::model::{Message, MessageKind};
use crate::web::text_run;

#[wasm_bindgen(typescript_custom_section)]
const TS_EVENTS: &'static str = r#"
/** One item of `world.events()`: the topic and its event, narrowed together. */
export type TopicEvent = { [T in Topic]: { topic: T; event: EventMap[T] } }[Topic];
export interface EventsOptions {
  /** Ends the iteration (and unsubscribes) when aborted. */
  signal?: AbortSignal;
}
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
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
        Event::Message(m) => message_value(m),
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

/// Builds a piece's event object and calls an `on()` listener with it, in one crossing of the
/// boundary (a piece is the one event per streamed token; building its object from Rust took
/// three crossings, calling the listener a fourth). The object is a fresh object literal with
/// the serde form's keys in its order (`{type, agentName, messageId, content}`), which the
/// listener may keep. `this` is `null`, as `Function.prototype.call(null, …)` gives the other
/// events. What the listener returns comes back (`undefined`/`null` as `None`, without a
/// second crossing); what it throws comes back as the `Err`.
///
/// The content is read from the instance's memory (`ptr`, `len`: UTF-8 that stays borrowed
/// for the call) before the listener runs: a short ASCII piece, the usual token, is made by
/// `String.fromCharCode` (the host's `TextDecoder.decode` costs a native call per piece, more
/// than the rest of the piece's delivery); anything else by a `TextDecoder` set as the glue's.
#[wasm_bindgen(inline_js = r#"
let bytes = null;
let utf8 = null;
export function awwCallPiece(listener, type, agentName, messageId, memory, ptr, len) {
  if (bytes === null || bytes.byteLength === 0) bytes = new Uint8Array(memory.buffer);
  let content = '';
  if (len <= 32) {
    for (let i = ptr, end = ptr + len; i < end; i++) {
      const b = bytes[i];
      if (b > 0x7f) { content = null; break; }
      content += String.fromCharCode(b);
    }
  } else content = null;
  if (content === null) {
    if (utf8 === null) utf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
    content = utf8.decode(bytes.subarray(ptr, ptr + len));
  }
  return listener.call(null, { type, agentName, messageId, content });
}
const NONE = 0xffffffff;
const KINDS = ['message', 'turn-limit', 'pass', 'interrupted'];
export function awwMessage(listener, memory, ptr, len, idUnits, chatUnits, senderUnits, contentUnits, createdUnits, replyUnits, kind) {
  if (bytes === null || bytes.byteLength === 0) bytes = new Uint8Array(memory.buffer);
  if (utf8 === null) utf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
  const text = utf8.decode(bytes.subarray(ptr, ptr + len));
  let at = 0;
  const messageId = text.slice(at, (at += idUnits));
  const chatId = chatUnits === NONE ? null : text.slice(at, (at += chatUnits));
  const sender = text.slice(at, (at += senderUnits));
  const content = text.slice(at, (at += contentUnits));
  const createdAt = text.slice(at, (at += createdUnits));
  const m = replyUnits === NONE
    ? { messageId, chatId, sender, content, createdAt, kind: KINDS[kind] }
    : { messageId, chatId, sender, content, createdAt, replyToMessageId: text.slice(at, at + replyUnits), kind: KINDS[kind] };
  return listener === null ? m : listener.call(null, m);
}
"#)]
extern "C" {
    #[wasm_bindgen(catch, js_name = awwCallPiece)]
    fn call_piece(
        listener: &js_sys::Function,
        kind: &JsValue,
        agent: &JsValue,
        message: &JsValue,
        memory: &JsValue,
        ptr: usize,
        len: usize,
    ) -> Result<Option<JsValue>, JsValue>;
    /// Builds a message's event object (`{messageId, chatId, sender, content, createdAt,
    /// replyToMessageId?, kind}`, the serde form's keys in its order) and, unless `listener` is
    /// `null`, calls the listener with it: one crossing per message. The JSON route it replaces
    /// (the writer's text, then `JSON.parse`) cost a tenth of the main thread per reply in the
    /// routing bench: the escaping writer, the text's decoding, the parser. Here the fields' UTF-8
    /// is one run in the instance's memory (`ptr`, `len`), decoded once; each field is a slice of
    /// it, `unitsN` long in UTF-16 code units (`NONE` for a `null` chatId or an absent
    /// replyToMessageId). `kind` indexes `KINDS`. The object is fresh per call (a listener may keep
    /// or change it). A message with tool calls takes the JSON route (see [`message_value`]).
    #[wasm_bindgen(catch, js_name = awwMessage)]
    #[allow(clippy::too_many_arguments)]
    fn call_message(
        listener: &JsValue,
        memory: &JsValue,
        ptr: usize,
        len: usize,
        id_units: u32,
        chat_units: u32,
        sender_units: u32,
        content_units: u32,
        created_units: u32,
        reply_units: u32,
        kind: u32,
    ) -> Result<Option<JsValue>, JsValue>;
}

/// The reply being streamed: what every piece of it repeats, as JS strings made once per
/// reply (and again when the type changes): its type, agent name and message id.
struct PieceFields {
    kind: SseType,
    agent: String,
    message: String,
    js: Rc<[JsValue; 3]>,
}

/// The fields of the current reply's pieces, and what `events()` copies its objects from.
/// Never borrowed across a call into JavaScript (a listener may do anything).
struct PieceTemplate {
    content_key: JsValue,
    current: RefCell<Option<PieceFields>>,
    /// `{type, agentName, messageId}` for [`piece_object`], with the fields it was made of.
    object: RefCell<Option<(Rc<[JsValue; 3]>, js_sys::Object)>>,
}

thread_local! {
    static PIECE: PieceTemplate = PieceTemplate {
        content_key: JsValue::from_str("content"),
        current: RefCell::new(None),
        object: RefCell::new(None),
    };
}

/// The JS strings of a piece's type, agent name and message id: the last piece's when it
/// belongs to the same reply and has the same type, else made anew.
fn piece_fields(kind: SseType, agent: &str, message: &str) -> Rc<[JsValue; 3]> {
    PIECE.with(|p| {
        let mut current = p.current.borrow_mut();
        if let Some(c) = current.as_ref() {
            if c.kind == kind && c.agent == agent && c.message == message {
                return c.js.clone();
            }
        }
        let kind_name = if kind == SseType::Chunk {
            "chunk"
        } else {
            "reasoning"
        };
        let js = Rc::new([
            JsValue::from_str(kind_name),
            JsValue::from_str(agent),
            JsValue::from_str(message),
        ]);
        *current = Some(PieceFields {
            kind,
            agent: agent.to_string(),
            message: message.to_string(),
            js: js.clone(),
        });
        js
    })
}

/// Calls an `on()` listener with `event` when it is a piece (a `chunk` or `reasoning` event
/// with only `content`): built and called in one crossing (see [`call_piece`]). `None` for
/// every other event, which the caller delivers through [`event_payload`].
pub(crate) fn call_with_piece(
    listener: &js_sys::Function,
    event: &Event,
) -> Option<Result<Option<JsValue>, JsValue>> {
    let Event::Sse(e) = event else { return None };
    let (kind, content) = stream_piece(e)?;
    let [kind, agent, message] = &*piece_fields(kind, &e.agent_name, &e.message_id);
    text_run::with_memory(|memory| {
        Some(call_piece(
            listener,
            kind,
            agent,
            message,
            memory,
            content.as_ptr() as usize,
            content.len(),
        ))
    })
}

/// `{type, agentName, messageId, content}` (the serde path's object, same key order), for
/// `events()`: a copy of the reply's template (`Object.assign`) plus its `content`.
fn piece_object(kind: SseType, agent: &str, message: &str, content: &str) -> JsValue {
    let fields = piece_fields(kind, agent, message);
    PIECE.with(|p| {
        let mut object = p.object.borrow_mut();
        let stale = !matches!(object.as_ref(), Some((made_of, _)) if Rc::ptr_eq(made_of, &fields));
        if stale {
            let template = js_sys::Object::new();
            let set: &Fields = template.unchecked_ref();
            for (key, value) in ["type", "agentName", "messageId"].iter().zip(fields.iter()) {
                set.set(&JsValue::from_str(key), value);
            }
            *object = Some((fields, template));
        }
        let out = js_sys::Object::new();
        if let Some((_, template)) = object.as_ref() {
            js_sys::Object::assign(&out, template);
        }
        let set: &Fields = out.unchecked_ref();
        set.set_str(&p.content_key, content);
        out.into()
    })
}

/// `awwMessage`'s marker of a `null` or absent field.
const NONE: u32 = u32::MAX;

thread_local! {
    /// The buffer the fields of a message are written into for [`call_message`], kept for the
    /// next message (taken while in use: a listener may publish another).
    static MESSAGE_TEXT: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// The length of `s` in UTF-16 code units (a JS string's `length`), which is what the host
/// slices by: its byte length when ASCII, the usual case.
fn utf16_units(s: &str) -> u32 {
    let units = text_run::utf16_len(s);
    // A string in a 32-bit instance's memory is shorter than 4 GiB, so never `NONE`.
    u32::try_from(units).unwrap_or(NONE - 1)
}

/// Builds `m`'s event object in one crossing (see [`call_message`]) and calls `listener` with
/// it, or returns it when `listener` is `null`. `None` for a message with tool calls, which
/// the caller converts through the JSON route.
fn message_crossing(listener: &JsValue, m: &Message) -> Option<Result<Option<JsValue>, JsValue>> {
    if !m.tool_calls.is_empty() {
        return None;
    }
    let created = m.created_at.to_iso();
    let mut text = MESSAGE_TEXT.with(|t| t.take());
    text.clear();
    let chat = m.chat_id.as_deref();
    let reply = m.reply_to_message_id.as_deref();
    for field in [
        Some(m.message_id.as_str()),
        chat,
        Some(m.sender.as_str()),
        Some(m.content.as_str()),
        Some(created.as_str()),
        reply,
    ]
    .into_iter()
    .flatten()
    {
        text.push_str(field);
    }
    let kind = match m.kind {
        MessageKind::Message => 0,
        MessageKind::TurnLimit => 1,
        MessageKind::Pass => 2,
        MessageKind::Interrupted => 3,
    };
    let returned = text_run::with_memory(|memory| {
        call_message(
            listener,
            memory,
            text.as_ptr() as usize,
            text.len(),
            utf16_units(&m.message_id),
            chat.map_or(NONE, utf16_units),
            utf16_units(&m.sender),
            utf16_units(&m.content),
            utf16_units(&created),
            reply.map_or(NONE, utf16_units),
            kind,
        )
    });
    MESSAGE_TEXT.with(|t| t.set(text));
    Some(returned)
}

/// Calls an `on()` listener with `event` when it is a message without tool calls (built and
/// called in one crossing, see [`call_message`]). `None` for every other event.
pub(crate) fn call_with_message(
    listener: &js_sys::Function,
    event: &Event,
) -> Option<Result<Option<JsValue>, JsValue>> {
    let Event::Message(m) = event else {
        return None;
    };
    message_crossing(listener, m)
}

/// A message as the plain JS object of its serde form (what `send()` resolves with and
/// `events()` yields): built in one crossing, or through JSON when it has tool calls.
pub(crate) fn message_value(m: &Message) -> Result<JsValue, JsValue> {
    match message_crossing(&JsValue::NULL, m) {
        Some(made) => made.map(|m| m.unwrap_or(JsValue::UNDEFINED)),
        None => crate::bindings::convert::to_js(m),
    }
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
    // Typed `-> JsValue` like `fresh` below (a promise either way): one closure type, one
    // wasm-bindgen cast and invoke shim fewer.
    let next = Closure::<dyn FnMut() -> JsValue>::new(move || {
        let mut s = st.borrow_mut();
        if let Some(item) = s.buffer.pop_front() {
            return js_sys::Promise::resolve(&result(&item, false)).into();
        }
        if s.done {
            return js_sys::Promise::resolve(&result(&JsValue::UNDEFINED, true)).into();
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
        promise.into()
    });
    let (w, st) = (world.clone(), state.clone());
    // Owned by `return()` (so it lives as long as the iterator); the caller gets a weak handle.
    let end: Rc<dyn Fn()> = Rc::new(move || finish(&w, &st));
    let weak_end = Rc::downgrade(&end);
    let ret = Closure::<dyn FnMut() -> JsValue>::new(move || {
        end();
        js_sys::Promise::resolve(&result(&JsValue::UNDEFINED, true)).into()
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
