//! `world.events({ signal })`: every event of every topic as an async iterator, for code that
//! prefers `for await` to callbacks; and the one-crossing builders of the frequent events'
//! objects (a streamed piece, a message) that `on()` callbacks get.
//!
//! Events are buffered from the moment `events()` is called until they are read, so nothing is
//! missed between two `next()` calls; the buffer is unbounded, so a consumer must keep reading
//! or stop the iteration (`break`, `return()`, or the `signal`), which unsubscribes. The
//! iterator is JavaScript (`awwEvents` below): its buffer, promises and `{value, done}` objects
//! are the host's own, and it listens through the same subscriptions as `on()` callbacks.
//! The bindings' other JavaScript (the storage manager's calls, the host's globals) shares this
//! module's snippet.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use wasm_bindgen::JsCast;

use crate::core::events::{Event, SseEvent, SseType, Topic};
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

/// The JS object a callback gets for `event` when it is neither a piece nor a message without
/// tool calls (those are built in one crossing: [`call_with_piece`], [`call_with_message`]): a
/// fresh plain object per call (a listener may keep it: `events()` buffers them), shaped
/// exactly as the serde form (spec §8).
pub(crate) fn event_payload(event: &Event) -> Result<JsValue, JsValue> {
    crate::bindings::convert::to_js(event)
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
export function awwEvents(live, signal, aborted) {
  const buffer = [];
  const offs = [];
  let waiting = null;
  let done = false;
  const result = (value, done) => ({ value, done });
  const end = () => {
    if (done) return;
    done = true;
    buffer.length = 0;
    const at = live.indexOf(end);
    if (at >= 0) live.splice(at, 1);
    for (const off of offs) off();
    if (waiting !== null) {
      const resolve = waiting;
      waiting = null;
      resolve(result(undefined, true));
    }
    if (signal !== null) try { signal.removeEventListener('abort', end); } catch {}
  };
  if (aborted) end();
  else if (signal !== null) signal.addEventListener('abort', end);
  if (!done) live.push(end);
  const listen = (topic) => (event) => {
    if (done) return;
    const item = { topic, event };
    if (waiting === null) buffer.push(item);
    else {
      const resolve = waiting;
      waiting = null;
      resolve(result(item, false));
    }
  };
  const iterator = {
    next() {
      if (buffer.length) return Promise.resolve(result(buffer.shift(), false));
      if (done) return Promise.resolve(result(undefined, true));
      // A second next() before the first settles ends the first with done (one reader).
      if (waiting !== null) waiting(result(undefined, true));
      return new Promise((resolve) => { waiting = resolve; });
    },
    return() {
      end();
      return Promise.resolve(result(undefined, true));
    },
    [Symbol.asyncIterator]() { return this; },
  };
  const add = (off) => { if (done) off(); else offs.push(off); };
  return [iterator, add, listen('message'), listen('sse'), listen('system'), listen('world')];
}
export function awwEndEvents(live) {
  for (const end of live.slice()) end();
}
export function awwHas(what) {
  try {
    if (what === 0) return typeof globalThis.indexedDB === 'object' && globalThis.indexedDB !== null;
    return globalThis.window !== undefined || globalThis.WorkerGlobalScope !== undefined;
  } catch {
    return false;
  }
}
export async function awwStorage(method) {
  let manager;
  let f;
  try {
    manager = globalThis.navigator.storage;
    if (typeof manager === 'object' && manager !== null) f = manager[method];
  } catch {}
  if (typeof f !== 'function') return method === 'persist' ? false : null;
  let value;
  try {
    value = await f.call(manager);
  } catch (cause) {
    const e = new Error(`navigator.storage.${method}() failed`);
    e.name = 'AgentWorldError';
    e.code = 'storage_error';
    e.cause = cause;
    throw e;
  }
  if (method === 'persist') return !!value;
  const number = (key) => {
    try {
      const n = value[key];
      return typeof n === 'number' ? n : 0;
    } catch {
      return 0;
    }
  };
  return { usage: number('usage'), quota: number('quota') };
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
    /// A new `events()` iteration (see the module docs): `[iterator, add, listener × 4]`. The
    /// caller subscribes each listener to its topic (`message`, `sse`, `system`, `world`, in
    /// this order, as `on()` callbacks) and hands `add` the function that unsubscribes it,
    /// which the iteration calls when it ends (at once when it has ended already). `signal`
    /// (`null` when none) ends it when aborted, or at once when `aborted`; its
    /// `addEventListener` throwing (a Proxy) is the `Err`. While it runs, its end function is
    /// in `live` (the world's, see [`end_events`]).
    #[wasm_bindgen(catch, js_name = awwEvents)]
    fn new_iteration(
        live: &js_sys::Array,
        signal: &JsValue,
        aborted: bool,
    ) -> Result<js_sys::Array, JsValue>;
    /// Ends every iteration whose end function is in `live`. (`catch` also keeps it an import
    /// of the glue: a snippet function imported by the .wasm directly would be loaded from the
    /// snippet's file, which the package writes into the glue.)
    #[wasm_bindgen(catch, js_name = awwEndEvents)]
    pub(crate) fn end_events(live: &js_sys::Array) -> Result<(), JsValue>;
    /// `navigator.storage[method]()` where the runtime has that method (pages and workers): what
    /// `requestPersistentStorage()` (`"persist"`) and `storageEstimate()` (`"estimate"`) resolve
    /// with (storage.rs); a throw or a rejection rejects with `storage_error` and it as the
    /// `cause`. JavaScript, the host's own API with nothing for Rust to add, and in this block
    /// because each snippet is a file of its own to fetch and compress.
    /// What the host has, asked of its global object (a throwing getter counts as absent):
    /// `0`, IndexedDB (pages and workers; see storage.rs); `1`, a window or a worker's scope,
    /// where requests carry an Origin header (see world.rs).
    #[wasm_bindgen(js_name = awwHas)]
    pub(crate) fn host_has(what: u32) -> bool;
    #[wasm_bindgen(js_name = awwStorage)]
    pub(crate) fn storage_call(method: &str) -> js_sys::Promise;
}

/// The reply being streamed: what every piece of it repeats, as JS strings made once per
/// reply (and again when the type changes): its type, agent name and message id.
struct PieceFields {
    kind: SseType,
    agent: String,
    message: String,
    js: Rc<[JsValue; 3]>,
}

thread_local! {
    /// The fields of the current reply's pieces. Never borrowed across a call into JavaScript
    /// (a listener may do anything).
    static PIECE: RefCell<Option<PieceFields>> = const { RefCell::new(None) };
}

/// The JS strings of a piece's type, agent name and message id: the last piece's when it
/// belongs to the same reply and has the same type, else made anew.
fn piece_fields(kind: SseType, agent: &str, message: &str) -> Rc<[JsValue; 3]> {
    PIECE.with(|current| {
        let mut current = current.borrow_mut();
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

/// Starts an `events()` iteration over the world whose live iterations are `live`: the
/// iterator, and the listeners `subscribe(topic, listener)` subscribes (it returns the
/// function that unsubscribes). `signal` is checked already (`read_signal`) and its `aborted`
/// read through `Reflect` before this: a Proxy passes the `instanceof` check, and its
/// `aborted` may throw.
pub(crate) fn events(
    live: &js_sys::Array,
    signal: Option<web_sys::AbortSignal>,
    aborted: bool,
    subscribe: impl Fn(Topic, js_sys::Function) -> js_sys::Function,
) -> Result<JsValue, JsValue> {
    let signal = signal.map_or(JsValue::NULL, JsValue::from);
    let parts = new_iteration(live, &signal, aborted).map_err(|e| {
        crate::bindings::error::agent_world_error(
            "invalid_input",
            "options.signal must be an AbortSignal",
            Some(e),
        )
    })?;
    let add: js_sys::Function = parts.get(1).unchecked_into();
    for (at, topic) in [
        (2, Topic::Message),
        (3, Topic::Sse),
        (4, Topic::System),
        (5, Topic::World),
    ] {
        let off = subscribe(topic, parts.get(at).unchecked_into());
        let _ = add.call1(&JsValue::NULL, &off);
    }
    Ok(parts.get(0))
}
