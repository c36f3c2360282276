//! A custom LLM provider written in JavaScript: how in-page models (web-llm, Chrome's built-in
//! model), server proxies or test doubles plug into the engine.
//!
//! The duck interface (see the TypeScript `CustomProvider` below): an object with a
//! `stream(request, { signal })` method returning an async iterable (an async generator, a
//! `ReadableStream`, ...) of reply pieces, each either a string or `{ text?, reasoning?,
//! toolCalls? }` (tool calls as `{id?, name, args}`: spec §9). The request carries the tools
//! offered in this call, the tool entries of the reply so far (`role: "tool"` results,
//! `toolCalls` on assistant entries), `agentName` and `purpose` (`reply` / `title`).
//! Cancelling the call aborts `signal` and calls the iterator's `return()`, so the provider
//! can stop its work. A thrown error or a rejection fails the call with the error's message
//! (code `llm_error`); the engine does not retry custom providers (spec §7). The world's total
//! and stall timeouts apply as to any provider: `FetchLlm` runs this client under them and
//! cancels it (signal aborted, `return()` called) when one expires.

use std::cell::RefCell;
use std::future::Future;
use std::task::{Poll, Waker};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::core::json_write::{write_str, ToJson};
use crate::core::llm::types::{
    CallPurpose, CallSettings, ChatMessage, LlmError, LlmEvent, Role, ToolCallPart,
};
use crate::core::llm_client::{CancelToken, LlmClient};
use crate::core::store::LocalBoxFuture;
use crate::web::js_tools::to_json;
use crate::web::text_run;

#[wasm_bindgen(typescript_custom_section)]
const TS_CUSTOM_PROVIDER: &'static str = r#"
/**
 * One message of the LLM input, oldest first; the system prompt (if any) comes first. A reply
 * that used tools adds an `assistant` entry with its `toolCalls`, then one `tool` entry per
 * call (`content` is the result as JSON text).
 */
export interface CustomProviderMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** On assistant entries: the calls the model made in that step. */
  toolCalls?: CustomProviderToolCall[];
  /** On tool entries: the call this result answers. */
  toolCallId?: string;
  toolName?: string;
}
/** A tool call, as a provider yields it and as it comes back in `messages`. */
export interface CustomProviderToolCall {
  /** Left out: the engine makes one up. */
  id?: string;
  name: string;
  /** The arguments object (or the model's raw JSON text); absent = `{}`. */
  args?: JsonValue;
}
/** A tool offered to the model in this call. */
export interface CustomProviderTool {
  name: string;
  description: string;
  parameters: ToolParameters;
}
/** What a custom provider is asked to answer. */
export interface CustomProviderRequest {
  messages: CustomProviderMessage[];
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** The tools the model may call now (empty on a reply's last step and for titles). */
  tools: CustomProviderTool[];
  reasoning?: Reasoning;
  /** The agent the reply is for (absent for a chat-title call). */
  agentName?: string;
  /** A step of an agent's reply, or a chat title. */
  purpose: "reply" | "title";
}
/** A piece of a streamed reply: plain text, or text, reasoning and/or tool calls. */
export type CustomProviderChunk =
  | string
  | { text?: string; reasoning?: string; toolCalls?: CustomProviderToolCall[] };
/**
 * A provider written in JavaScript (an in-page model, a proxy, a test double). Agents use it
 * with `provider: "custom"`. `signal` aborts when the call is cancelled (world.stop(), a chat
 * switch, a timeout); the iterator's `return()` is called too.
 */
export interface CustomProvider {
  stream(
    request: CustomProviderRequest,
    options: { signal: AbortSignal },
  ): AsyncIterable<CustomProviderChunk>;
}
"#;

/// The message of what the provider threw or rejected with (`js_tools::message_of`).
fn message_of(error: &JsValue) -> String {
    crate::web::js_tools::message_of(error, "the custom provider failed")
}

fn custom_error(message: impl Into<String>) -> LlmError {
    LlmError::Custom {
        message: message.into(),
    }
}

/// A JS object implementing `CustomProvider`, validated when registered.
pub struct JsCustomProvider {
    object: JsValue,
    stream: js_sys::Function,
}

impl JsCustomProvider {
    /// Checks the duck interface now, so a wrong object fails at registration with a clear
    /// error instead of at the first call.
    pub fn new(object: JsValue) -> Result<Self, String> {
        if !object.is_object() {
            return Err("must be an object with a stream(request, { signal }) method".into());
        }
        let stream = js_sys::Reflect::get(&object, &key("stream"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or("has no stream(request, { signal }) method")?;
        Ok(Self { object, stream })
    }

    async fn run(
        &self,
        settings: &CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> Result<(), LlmError> {
        let aborted = || LlmError::Aborted {
            provider: "custom".into(),
        };
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let mut signal = LazySignal::new();
        let text = RequestText::of(settings, &messages);
        let request = match &text {
            Some(_) => None,
            None => Some(request_json(settings, &messages)),
        };
        let (ptr, len, layout, count) = match &text {
            Some(t) => (
                t.text.as_ptr() as usize,
                t.text.len(),
                t.layout.as_ptr() as usize,
                t.count,
            ),
            None => (0, 0, 0, 0),
        };
        // The stream is started and its first `next()` called in one call into the host.
        let (id, settle) = Settled::reserve();
        let mut step = Settled::awaiting(id);
        let pump = text_run::with_memory(|memory| {
            start(
                &self.object,
                &self.stream,
                request.as_deref(),
                &signal.getter,
                signal.id as f64,
                &settle,
                id as f64,
                memory,
                ptr,
                len,
                layout,
                count,
                settings.temperature,
                settings.max_tokens,
                settings.purpose == CallPurpose::Title,
            )
        })
        .map_err(start_error)?;
        drop(text);
        signal.started(&pump);
        loop {
            let value = match first_of(step, cancel.cancelled()).await {
                Some((STEP_DONE, _)) => {
                    on_event(LlmEvent::Done {
                        finish_reason: None,
                    });
                    return Ok(());
                }
                Some((STEP_REJECTED, e)) => return Err(custom_error(message_of(&e))),
                Some((_, value)) => value,
                None => {
                    signal.abort();
                    // The provider's cleanup (`return()`); its outcome does not change ours.
                    let _ = stop(&pump);
                    return Err(aborted());
                }
            };
            if let Some(text) = value.as_string() {
                if !text.is_empty() {
                    on_event(LlmEvent::Text(text));
                }
            } else {
                other_chunk(&value, on_event)?;
            }
            step = Settled::next(&pump).map_err(|e| custom_error(message_of(&e)))?;
        }
    }
}

/// A chunk that is not a string: `{ text?, reasoning?, toolCalls? }`, or nothing
/// (`undefined`/`null`), or an error. Kept out of the call's loop (not inlined): the loop is
/// polled for every step of every call, and V8 compiles (and recompiles optimised, once hot)
/// the whole of it; most providers yield strings.
#[inline(never)]
fn other_chunk(value: &JsValue, on_event: &mut dyn FnMut(LlmEvent)) -> Result<(), LlmError> {
    if !value.is_object() {
        if value.is_undefined() || value.is_null() {
            return Ok(());
        }
        return Err(custom_error(
            "custom provider: each chunk must be a string or { text?, reasoning?, toolCalls? }",
        ));
    }
    let calls = prop(value, "toolCalls");
    if !calls.is_undefined() && !calls.is_null() {
        for call in read_tool_calls(&calls)? {
            on_event(LlmEvent::ToolCall(call));
        }
    }
    for (name, make) in [
        ("reasoning", LlmEvent::Reasoning as fn(String) -> LlmEvent),
        ("text", LlmEvent::Text),
    ] {
        if let Some(piece) = prop(value, name).as_string().filter(|p| !p.is_empty()) {
            on_event(make(piece));
        }
    }
    Ok(())
}

/// `object[name]`, `undefined` when reading it throws.
fn prop(object: &JsValue, name: &'static str) -> JsValue {
    js_sys::Reflect::get(object, &key(name)).unwrap_or(JsValue::UNDEFINED)
}

impl LlmClient for JsCustomProvider {
    fn call<'a>(
        &'a self,
        settings: &'a CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &'a mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> LocalBoxFuture<'a, Result<(), LlmError>> {
        Box::pin(self.run(settings, messages, on_event, cancel))
    }
}

fn set(target: &js_sys::Object, name: &'static str, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(target, &key(name), value);
}

thread_local! {
    /// The JS strings of the property names and fixed values this adapter uses, made once:
    /// each `JsValue::from_str` is a call into the host that decodes the UTF-8 again, and a
    /// call reads and writes a few dozen of them (`role`, `content`, `done`, `value`, …).
    static KEYS: std::cell::RefCell<Vec<(&'static str, JsValue)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The JS string `name` (see `KEYS`).
fn key(name: &'static str) -> JsValue {
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        if let Some((_, v)) = keys.iter().find(|(k, _)| *k == name) {
            return v.clone();
        }
        let v = JsValue::from_str(name);
        keys.push((name, v.clone()));
        v
    })
}

// The host side of a call, in one small JS function per step: each of these was several
// calls into the host from wasm (a property read, a type check, a `call`, a `bind`, a
// `then`, some thirty per reply of one chunk), each a boundary crossing and a glue function
// V8 runs unoptimised in a fresh process. The rules are the ones the engine applied before:
// an iterable's `[Symbol.asyncIterator]()` or an object with `next` itself; a step that is
// not an object, or whose `done` cannot be read, ends the stream; a `value` that cannot be
// read is `undefined`; `return()` is called on cancellation, its outcome ignored.
//
// The snippet ships as it is written, so its notes are here, not in it:
// - `requestOf`: a request with no tools, no tool entries and no reasoning setting: its
//   strings are one run of UTF-8 in the instance's memory (`ptr`, `len`), decoded at once: the
//   model, the agent's name (if any), then the `count` messages' contents. `layout` points at
//   u32s: the model's and the name's lengths in UTF-16 units (0xffffffff: no name), then per
//   message its role and its content's length. The keys in the order of the JSON form
//   (`request_json`).
// - `hand`: hands step `id` to the engine; after a value, the following step is asked for
//   first, so that it has usually settled by the time the engine (woken by `settle`) asks for
//   it.
// - `awwStringify`: `JSON.stringify` for the tools (`js_tools::to_json`), or `[kind, key]` for
//   the first value JSON would drop or turn into null (kinds in `js_tools::NOT_JSON`).
// - `awwTimerHold`: `web::timer`'s (see [`hold_timer`]).
// - `awwFetch`, `awwRead`: `web::fetch`'s host side (see [`send`], [`read`] and
//   `fetch::failure`, which reads the `[kind, text]` they reject with).
#[wasm_bindgen(inline_js = r#"
const isObject = (x) => x !== null && (typeof x === 'object' || typeof x === 'function');
let bytes = null;
let words = null;
let utf8 = null;
const ROLES = ['system', 'user', 'assistant'];
function requestOf(memory, ptr, len, layout, count, temperature, maxTokens, title) {
  if (bytes === null || bytes.byteLength === 0) {
    bytes = new Uint8Array(memory.buffer);
    words = new Uint32Array(memory.buffer);
  }
  if (utf8 === null) utf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
  const text = utf8.decode(bytes.subarray(ptr, ptr + len));
  let w = layout >>> 2;
  let at = words[w];
  const model = text.slice(0, at);
  let agentName;
  if (words[w + 1] !== 0xffffffff) agentName = text.slice(at, (at += words[w + 1]));
  const messages = [];
  w += 2;
  for (let i = 0; i < count; i++, w += 2) {
    messages.push({ role: ROLES[words[w]], content: text.slice(at, (at += words[w + 1])) });
  }
  const request = { messages, model };
  if (temperature !== undefined) request.temperature = temperature;
  if (maxTokens !== undefined) request.maxTokens = maxTokens;
  request.tools = [];
  if (agentName !== undefined) request.agentName = agentName;
  request.purpose = title ? 'title' : 'reply';
  return request;
}
export function awwCustomStart(object, stream, request, getter, signalId, settle, awaitId, memory, ptr, len, layout, count, temperature, maxTokens, title) {
  let parsed;
  if (request === undefined) parsed = requestOf(memory, ptr, len, layout, count, temperature, maxTokens, title);
  else try { parsed = JSON.parse(request); } catch { throw { awwCustomShape: 3 }; }
  const options = { get signal() { return getter(signalId, options); } };
  const iterable = stream.call(object, parsed, options);
  let it = iterable;
  let f;
  try { f = isObject(iterable) ? iterable[Symbol.asyncIterator] : undefined; } catch { f = undefined; }
  if (typeof f === 'function') it = f.call(iterable);
  else {
    let hasNext = false;
    try { hasNext = isObject(iterable) && typeof iterable.next === 'function'; } catch { hasNext = false; }
    if (!hasNext) throw { awwCustomShape: 1 };
  }
  let next;
  try { next = isObject(it) ? it.next : undefined; } catch { next = undefined; }
  if (typeof next !== 'function') throw { awwCustomShape: 2 };
  const pump = { it, next, options, ahead: undefined };
  awwCustomNext(pump, settle, awaitId);
  return pump;
}
const onStep = (deliver) => [(step) => {
  let done = true;
  let value;
  if (isObject(step)) {
    try { done = !!step.done; } catch { done = true; }
    if (!done) try { value = step.value; } catch { value = undefined; }
  }
  deliver(done ? 0 : 1, value);
}, (error) => deliver(2, error)];
function hand(pump, settle, id, kind, value) {
  if (kind === 1) ahead(pump, settle);
  settle(id, kind, value);
}
function ahead(pump, settle) {
  const next = { id: undefined, kind: undefined, value: undefined };
  pump.ahead = next;
  const deliver = (kind, value) => {
    if (next.id === undefined) { next.kind = kind; next.value = value; }
    else hand(pump, settle, next.id, kind, value);
  };
  let p;
  try { p = pump.next.call(pump.it); } catch (error) { deliver(2, error); return; }
  Promise.resolve(p).then(...onStep(deliver));
}
export function awwCustomNext(pump, settle, id) {
  const next = pump.ahead;
  if (next === undefined) {
    Promise.resolve(pump.next.call(pump.it)).then(...onStep((kind, value) => hand(pump, settle, id, kind, value)));
    return;
  }
  pump.ahead = undefined;
  if (next.kind === undefined) next.id = id;
  else hand(pump, settle, id, next.kind, next.value);
}
export function awwCustomStop(pump) {
  try {
    const r = pump.it.return;
    if (typeof r === 'function') r.call(pump.it);
  } catch {}
}
export function awwStringify(value) {
  let first = true, problem, text;
  try {
    text = JSON.stringify(value, (key, v) => {
      const root = first, t = typeof v;
      first = false;
      if (problem) return;
      const kind = t === 'function' ? 0 : t === 'symbol' ? 1 : t === 'bigint' ? 2
        : v === undefined && (root || /^[0-9]+$/.test(key)) ? 3
        : t === 'number' && !isFinite(v) ? 4 : -1;
      if (kind < 0) return v;
      problem = [kind, root ? '' : key];
    });
  } catch (e) { if (!problem) throw e; }
  return problem || text;
}
const prop = (x, k) => { try { return x[k]; } catch { return undefined; } };
function failure(kind, e, signal) {
  if (kind > 2 && (prop(e, 'name') === 'AbortError' || (signal !== undefined && signal.aborted))) kind = 2;
  const m = prop(e, 'message');
  return [kind, typeof m === 'string' ? m : typeof e === 'string' ? e : 'unknown error'];
}
export function awwFetch(method, url, headers, body, signal) {
  return fetchHead(method, url, headers, body, signal);
}
async function fetchHead(method, url, headers, body, signal) {
  const init = { method, headers: new Headers(), body, signal };
  for (const [n, v] of JSON.parse(headers)) try { init.headers.set(n, v); } catch { throw [0, n]; }
  let r;
  try { r = new Request(url, init); } catch (e) { throw failure(1, e); }
  try { r = await fetch(r); } catch (e) { throw failure(3, e, signal); }
  if (!(r instanceof Response)) throw [3, 'fetch did not return a Response'];
  const h = (name) => r.headers.get(name);
  return [r.status, r.statusText, h('retry-after'), h('retry-after-ms'), h('content-type'), r.body ? r.body.getReader() : undefined];
}
export function awwTimerHold(handle, hold) {
  if (handle === null || typeof handle !== 'object' || typeof handle.unref !== 'function') return false;
  if (hold) handle.ref(); else handle.unref();
  return true;
}
export function awwRead(reader, signal) {
  return reader.read().then((r) => (r.done !== false ? undefined : r.value instanceof Uint8Array ? r.value : awwRead(reader, signal)),
    (e) => { throw failure(3, e, signal); });
}
"#)]
extern "C" {
    /// Calls `stream(request, options)`, where `options` is `{ get signal() }` (an own
    /// enumerable, configurable accessor that calls `getter(signalId, options)`, see
    /// [`LazySignal`]), then the iterator's first `next()` as [`next_step`] does with
    /// `settle` and `awaitId`; returns `{ it, next, options }` (the async iterator and its
    /// `next` method, read once, and the options). Throws what `stream()`,
    /// `[Symbol.asyncIterator]()` or `next()` throw, or `{ awwCustomShape }` (see
    /// [`start_error`]): thrown rather than returned, so that the usual answer is taken with
    /// no second call into the host to tell them apart. One call where a reply of one chunk
    /// used to make three (options, start, first `next()`).
    ///
    /// `catch` on every function of this snippet, though only `start` and `next_step` can
    /// throw: a function with no conversion to make is imported by wasm-bindgen straight from
    /// the snippet module (`import * as`), a form `scripts/package.mjs` does not inline.
    ///
    /// The request comes as JSON in `request`, or, when that is `None`, is built by the
    /// snippet from `temperature`, `maxTokens`, `title` and a [`RequestText`] read from the
    /// instance's `memory` (`ptr`, `len`, `layout`, `count`): no JSON text to write and parse
    /// on the usual call.
    #[wasm_bindgen(catch, js_name = awwCustomStart)]
    #[allow(clippy::too_many_arguments)]
    fn start(
        object: &JsValue,
        stream: &js_sys::Function,
        request: Option<&str>,
        getter: &JsValue,
        signal_id: f64,
        settle: &JsValue,
        await_id: f64,
        memory: &JsValue,
        ptr: usize,
        len: usize,
        layout: usize,
        count: u32,
        temperature: Option<f64>,
        max_tokens: Option<u32>,
        title: bool,
    ) -> Result<JsValue, JsValue>;
    /// Step `id`: calls `next()` and, once its promise settles, `settle(id, kind, value)`:
    /// kind [`STEP_DONE`], 1 (a value: the step's `value`) or [`STEP_REJECTED`] (with the
    /// reason). Throws what `next()` throws.
    ///
    /// One step ahead: once a value is handed over, the following `next()` is called at
    /// once (before `settle`), so when the engine, woken by that `settle`, asks for the step,
    /// it has usually settled already (an async generator's next piece, or its end) and is
    /// handed over synchronously, from within this call: a reply of one chunk wakes the
    /// engine once, not twice (each wakeup a microtask, in Node an `AsyncResource`, and a
    /// poll of the running calls). An early `next()` throwing is handed over as a rejection.
    #[wasm_bindgen(catch, js_name = awwCustomNext)]
    fn next_step(pump: &JsValue, settle: &JsValue, id: f64) -> Result<(), JsValue>;
    /// The iterator's `return()`, if it has one (errors ignored).
    #[wasm_bindgen(catch, js_name = awwCustomStop)]
    fn stop(pump: &JsValue) -> Result<(), JsValue>;
    /// `handle.ref()` (`hold`) or `handle.unref()`, where timers have them (Node, Bun: an
    /// unref'd timer does not keep the process alive); `false` where they do not (browsers,
    /// Deno and workerd hand out numbers). For `web::timer`, whose only host function it is:
    /// a snippet module of its own was one more file to fetch and one more import in the glue.
    #[wasm_bindgen(catch, js_name = awwTimerHold)]
    pub(crate) fn hold_timer(handle: &JsValue, hold: bool) -> Result<bool, JsValue>;
    /// `JSON.stringify(value)`, its replacer in JS (see `js_tools::to_json`): the text, or
    /// `[kind, key]` naming the first value JSON would drop or change. Throws what
    /// `JSON.stringify` throws (a cycle, a BigInt's `toJSON`, a `RangeError` on absurd nesting).
    #[wasm_bindgen(catch, js_name = awwStringify)]
    pub(crate) fn stringify(value: &JsValue) -> Result<JsValue, JsValue>;
    /// `fetch(new Request(url, { method, headers, body, signal }))` (`headers`: the JSON text
    /// of an array of `[name, value]` pairs; `body` and `signal` may be `undefined`), resolving to `[status, statusText,
    /// retry-after, retry-after-ms, content-type, reader]` (absent headers `null`, no body: no
    /// reader), rejecting with `[kind, text]` (see `web::fetch::failure`). One call where
    /// building the request, sending it and reading its head were some twenty.
    #[wasm_bindgen(catch, js_name = awwFetch)]
    pub(crate) fn send(
        method: &str,
        url: &str,
        headers: &str,
        body: Option<&str>,
        signal: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;
    /// The reader's next chunk of bytes (a chunk that is not a `Uint8Array` is skipped), or
    /// `undefined` at the end of the body; rejects with `[kind, text]` as [`send`] does. One call where a read and its result's three were four.
    #[wasm_bindgen(catch, js_name = awwRead)]
    pub(crate) fn read(reader: &JsValue, signal: &JsValue) -> Result<js_sys::Promise, JsValue>;
}

/// What `awwCustomStart` throws as `{ awwCustomShape }` instead of returning an iterator.
const NOT_ITERABLE: f64 = 1.0;
const NO_NEXT: f64 = 2.0;

/// The error of a call that could not start: the provider's own (thrown by `stream()` or
/// `[Symbol.asyncIterator]()`), or the shape of what it returned.
fn start_error(e: JsValue) -> LlmError {
    let shape = js_sys::Reflect::get(&e, &key("awwCustomShape"))
        .ok()
        .and_then(|c| c.as_f64());
    match shape {
        None => custom_error(message_of(&e)),
        Some(code) if code == NOT_ITERABLE => custom_error(
            "custom provider: stream() must return an async iterable (an async generator or a ReadableStream)",
        ),
        Some(code) if code == NO_NEXT => {
            custom_error("custom provider: the iterator has no next() method")
        }
        // 3: the request is not JSON (the engine's own text: never seen).
        Some(_) => custom_error("custom provider: the request could not be built"),
    }
}
/// The kinds of a settled `next()`.
const STEP_DONE: u32 = 0;
const STEP_REJECTED: u32 = 2;

/// The `{ signal }` options of one call, its `AbortSignal` made when first read.
///
/// Node builds an `AbortController` in JavaScript (an event target, its signal, their
/// internal state): 7–60 µs each in a fresh process (600 took 4–37 ms here), a large share
/// of a reply from a provider that answers at once, and most providers never read the
/// signal. So `signal` is an accessor until read: the first read (or a cancellation,
/// whichever comes first) makes the controller, aborted if the call was cancelled, and leaves
/// `signal` a plain data property holding it, as it always was. A read after the call ended
/// gets a signal that never aborts, as before.
struct LazySignal {
    id: u64,
    /// The thread's accessor getter, passed to `awwCustomStart`, which makes the options.
    getter: JsValue,
    /// `{ it, next, options }` once the stream started: the options are read from it only
    /// to abort a signal nobody read.
    pump: Option<JsValue>,
}

struct Signals {
    next_id: u64,
    /// The calls running now: their controller (once made).
    live: Vec<(u64, Option<web_sys::AbortController>)>,
    /// The accessor's `(id, options)` getter, made once per thread.
    getter: Option<Closure<dyn FnMut(f64, js_sys::Object) -> JsValue>>,
}

thread_local! {
    static SIGNALS: RefCell<Signals> = const {
        RefCell::new(Signals { next_id: 0, live: Vec::new(), getter: None })
    };
}

/// Makes the call's controller (aborted when `cancelled`) and turns `signal` into a data
/// property holding its signal. `None` where the runtime has no `AbortController`.
fn materialize(options: &js_sys::Object, cancelled: bool) -> Option<web_sys::AbortController> {
    let controller = web_sys::AbortController::new().ok()?;
    if cancelled {
        controller.abort();
    }
    let desc = js_sys::Object::new();
    set(&desc, "value", controller.signal().as_ref());
    for flag in ["writable", "enumerable", "configurable"] {
        set(&desc, flag, &JsValue::TRUE);
    }
    js_sys::Object::define_property(options, &key("signal"), &desc);
    Some(controller)
}

/// The accessor: the first read of `options.signal`.
fn read_signal(id: f64, options: js_sys::Object) -> JsValue {
    let controller = materialize(&options, false);
    if let Some(c) = &controller {
        SIGNALS.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if let Some(e) = s.live.iter_mut().find(|e| e.0 as f64 == id) {
                    e.1 = Some(c.clone());
                }
            }
        });
    }
    controller.map_or(JsValue::UNDEFINED, |c| c.signal().into())
}

impl LazySignal {
    /// A call's signal, live (readable through the getter) from now on: `stream()` may read
    /// it before it returns.
    fn new() -> Self {
        SIGNALS.with(|s| {
            let mut s = s.borrow_mut();
            let id = s.next_id;
            s.next_id += 1;
            let getter: JsValue = s
                .getter
                .get_or_insert_with(|| Closure::new(read_signal))
                .as_ref()
                .clone();
            s.live.push((id, None));
            Self {
                id,
                getter,
                pump: None,
            }
        })
    }

    /// The stream started: `pump` holds the options (see `awwCustomStart`).
    fn started(&mut self, pump: &JsValue) {
        self.pump = Some(pump.clone());
    }

    /// Aborts the signal, making it (already aborted) if nobody read it yet.
    fn abort(&self) {
        let made = SIGNALS.with(|s| {
            let mut s = s.borrow_mut();
            let e = s.live.iter_mut().find(|e| e.0 == self.id)?;
            Some(e.1.clone())
        });
        match made {
            Some(Some(controller)) => controller.abort(),
            Some(None) => {
                let options = self
                    .pump
                    .as_ref()
                    .and_then(|p| js_sys::Reflect::get(p, &key("options")).ok())
                    .and_then(|o| o.dyn_into::<js_sys::Object>().ok());
                if let Some(c) = options.and_then(|o| materialize(&o, true)) {
                    SIGNALS.with(|s| {
                        if let Some(e) = s.borrow_mut().live.iter_mut().find(|e| e.0 == self.id) {
                            e.1 = Some(c);
                        }
                    });
                }
            }
            None => {}
        }
    }
}

impl Drop for LazySignal {
    fn drop(&mut self) {
        let id = self.id;
        let _ = SIGNALS.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                s.live.retain(|e| e.0 != id);
            }
        });
    }
}

/// One `next()` of the iterator, awaited: `(kind, value)` (see [`STEP_DONE`]).
///
/// Not a `JsFuture`, which makes two closures per promise (each a call into the host to wrap
/// it, a finalizer registration, and two more calls to release it when the promise settles).
/// The settle handler is made once per thread; `awwCustomNext` calls it with the await's id,
/// so registering is one call into the host and settling one call back.
struct Settled {
    /// `None` once it returned its outcome.
    id: Option<u64>,
}

struct Awaited {
    id: u64,
    outcome: Option<(u32, JsValue)>,
    /// Set at a poll that finds no outcome yet (a step settled ahead is handed over before
    /// the first poll: see [`next_step`]).
    waker: Option<Waker>,
}

/// `(id, kind, value)`: a step of the await `id` settled.
type SettleFn = Closure<dyn FnMut(f64, u32, JsValue)>;

#[derive(Default)]
struct Awaits {
    next_id: u64,
    /// The steps awaited now (a few: one per running call).
    pending: Vec<Awaited>,
    /// The `(id, kind, value)` handler, made at the first await.
    handler: Option<SettleFn>,
}

thread_local! {
    static AWAITS: RefCell<Awaits> = RefCell::new(Awaits::default());
}

/// A step settled: its outcome is kept for the awaiting future, which is woken. An id no
/// longer pending belongs to a future dropped before its step settled: nothing waits.
fn on_settled(id: f64, kind: u32, value: JsValue) {
    let waker = AWAITS.with(|a| {
        let mut a = a.try_borrow_mut().ok()?;
        let e = a.pending.iter_mut().find(|e| e.id as f64 == id)?;
        e.outcome = Some((kind, value));
        e.waker.take()
    });
    if let Some(w) = waker {
        w.wake();
    }
}

impl Settled {
    /// Calls the iterator's `next()` (or takes the step asked for ahead); its error if it
    /// throws.
    fn next(pump: &JsValue) -> Result<Self, JsValue> {
        let (id, handler) = Self::reserve();
        // Awaited before the host call, which hands a step settled ahead over synchronously
        // (`on_settled` from within it: no borrow is held across it). Dropped, with its
        // entry, if `next()` throws.
        let step = Self::awaiting(id);
        next_step(pump, &handler, id as f64)?;
        Ok(step)
    }

    /// The id of the next await and the thread's settle handler, for the host call that
    /// calls `next()` ([`next_step`], or `awwCustomStart` for a stream's first step).
    fn reserve() -> (u64, JsValue) {
        AWAITS.with(|a| {
            let mut a = a.borrow_mut();
            let id = a.next_id;
            a.next_id += 1;
            let handler: JsValue = a
                .handler
                .get_or_insert_with(|| Closure::new(on_settled))
                .as_ref()
                .clone();
            (id, handler)
        })
    }

    /// The await `id` (see [`Settled::reserve`]), registered before its host call: its
    /// outcome may come from within that call.
    fn awaiting(id: u64) -> Self {
        AWAITS.with(|a| {
            a.borrow_mut().pending.push(Awaited {
                id,
                outcome: None,
                waker: None,
            })
        });
        Self { id: Some(id) }
    }
}

impl Future for Settled {
    type Output = (u32, JsValue);

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Self::Output> {
        let Some(id) = self.id else {
            // Polled after it finished (futures are not polled again once ready).
            return Poll::Pending;
        };
        let ready = AWAITS.with(|a| {
            let mut a = a.borrow_mut();
            let i = a.pending.iter().position(|e| e.id == id)?;
            let e = &mut a.pending[i];
            if e.outcome.is_none() {
                if !e.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    e.waker = Some(cx.waker().clone());
                }
                return None;
            }
            a.pending.swap_remove(i).outcome
        });
        match ready {
            Some(outcome) => {
                self.id = None;
                Poll::Ready(outcome)
            }
            None => Poll::Pending,
        }
    }
}

impl Drop for Settled {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            // `try_with`: a future dropped while the thread's storage is torn down.
            let _ = AWAITS.try_with(|a| {
                if let Ok(mut a) = a.try_borrow_mut() {
                    a.pending.retain(|e| e.id != id);
                }
            });
        }
    }
}

/// `Some(output of a)` if `a` finishes first, `None` if `b` (the cancellation) does. Both
/// are small `Unpin` futures, held by value in the `poll_fn`: not boxed (two allocations
/// fewer per step), and no async state machine around it.
fn first_of<A: Future + Unpin, B: Future<Output = ()> + Unpin>(
    mut a: A,
    mut b: B,
) -> impl Future<Output = Option<A::Output>> {
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(v) = std::pin::Pin::new(&mut a).poll(cx) {
            return Poll::Ready(Some(v));
        }
        if let Poll::Ready(()) = std::pin::Pin::new(&mut b).poll(cx) {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
}

/// `,"name":` (or without the comma for the first property).
fn push_key(out: &mut String, first: bool, name: &str) {
    if !first {
        out.push(',');
    }
    write_str(out, name);
    out.push(':');
}

/// A request as the snippet reads it when it has no tools, no tool entries and no reasoning
/// setting (every call of an agent without tools): its strings one after the other (UTF-8:
/// the model, the agent's name, the messages' contents), and their lengths in UTF-16 code
/// units (a JS string's `length`, what the snippet slices by): the model's, the name's
/// (`u32::MAX` for none), then per message its role (0 system, 1 user, 2 assistant) and its
/// content's. Its JSON text cost a reply the escaping writer over the whole input window and
/// `JSON.parse` over it in the host, the largest part of starting a call in the routing
/// bench; the strings are now copied as they are and decoded in one call, and the numbers
/// cross as numbers.
struct RequestText {
    text: String,
    layout: Vec<u32>,
    count: u32,
}

impl RequestText {
    /// `None` when the request has tools or a reasoning setting, or a message has tool calls
    /// or is a tool result (those go as JSON).
    fn of(settings: &CallSettings, messages: &[ChatMessage]) -> Option<RequestText> {
        if !settings.tools.is_empty()
            || settings.reasoning.is_some()
            || messages
                .iter()
                .any(|m| m.tool_result.is_some() || !m.tool_calls.is_empty())
        {
            return None;
        }
        let count = u32::try_from(messages.len()).ok()?;
        let name = settings.agent_name.as_deref();
        let mut len = settings.model.len() + name.map_or(0, str::len);
        for m in messages {
            len += m.content.len();
        }
        let mut text = String::with_capacity(len);
        let mut layout = Vec::with_capacity(2 + 2 * messages.len());
        let push = |text: &mut String, s: &str| -> Option<u32> {
            text.push_str(s);
            u32::try_from(text_run::utf16_len(s))
                .ok()
                .filter(|n| *n != u32::MAX)
        };
        layout.push(push(&mut text, &settings.model)?);
        layout.push(match name {
            Some(name) => push(&mut text, name)?,
            None => u32::MAX,
        });
        for m in messages {
            layout.push(match m.role {
                Role::System => 0,
                Role::User => 1,
                Role::Assistant => 2,
            });
            layout.push(push(&mut text, &m.content)?);
        }
        Some(RequestText {
            text,
            layout,
            count,
        })
    }
}

/// The JSON text of the request (see `CustomProviderRequest`), parsed by the host in the call
/// that starts the stream: a property set from wasm is a call into the host each, and a
/// request holds the whole input window (a few calls and a string per message, some fifty per
/// reply before). Holds messages (role, content, and the tool fields), model, temperature?,
/// maxTokens?, tools, reasoning?, agentName?, purpose. Used when the request cannot go as a
/// [`RequestText`].
fn request_json(settings: &CallSettings, messages: &[ChatMessage]) -> String {
    let mut len = 256;
    for m in messages {
        len += m.content.len() + 40;
    }
    let mut out = String::with_capacity(len);
    out.push_str("{\"messages\":[");
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        let role = match (m.role, &m.tool_result) {
            // A tool result (the core gives it the `User` side): its own role here, as in the
            // OpenAI-style wire formats, with the call it answers.
            (_, Some(result)) => {
                push_key(&mut out, true, "toolCallId");
                write_str(&mut out, &result.tool_call_id);
                push_key(&mut out, false, "toolName");
                write_str(&mut out, &result.tool_name);
                out.push(',');
                "tool"
            }
            (Role::System, None) => "system",
            (Role::User, None) => "user",
            (Role::Assistant, None) => "assistant",
        };
        push_key(&mut out, true, "role");
        write_str(&mut out, role);
        push_key(&mut out, false, "content");
        write_str(&mut out, &m.content);
        if !m.tool_calls.is_empty() {
            push_key(&mut out, false, "toolCalls");
            out.push('[');
            for (j, c) in m.tool_calls.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                push_call(&mut out, &c.id, &c.name, &c.arguments);
            }
            out.push(']');
        }
        out.push('}');
    }
    out.push(']');
    push_key(&mut out, false, "model");
    write_str(&mut out, &settings.model);
    if let Some(t) = settings.temperature {
        push_key(&mut out, false, "temperature");
        // Non-finite values never pass validation; `null` would be what JSON can say of them.
        t.write_json(&mut out);
    }
    if let Some(m) = settings.max_tokens {
        push_key(&mut out, false, "maxTokens");
        out.push_str(&m.to_string());
    }
    push_key(&mut out, false, "tools");
    out.push('[');
    for (i, t) in settings.tools.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        push_key(&mut out, true, "name");
        write_str(&mut out, &t.name);
        push_key(&mut out, false, "description");
        write_str(&mut out, &t.description);
        push_key(&mut out, false, "parameters");
        t.parameters.write_json(&mut out);
        out.push('}');
    }
    out.push(']');
    if let Some(r) = &settings.reasoning {
        push_key(&mut out, false, "reasoning");
        r.write_json(&mut out);
    }
    if let Some(name) = &settings.agent_name {
        push_key(&mut out, false, "agentName");
        write_str(&mut out, name);
    }
    push_key(&mut out, false, "purpose");
    write_str(
        &mut out,
        match settings.purpose {
            CallPurpose::Reply => "reply",
            CallPurpose::Title => "title",
        },
    );
    out.push('}');
    out
}

/// `{id, name, args}` of a call in a request: `args` parsed when the model's text is JSON, the
/// raw text otherwise (what the model sent, verbatim).
fn push_call(out: &mut String, id: &str, name: &str, arguments: &str) {
    out.push('{');
    push_key(out, true, "id");
    write_str(out, id);
    push_key(out, false, "name");
    write_str(out, name);
    push_key(out, false, "args");
    match crate::core::json::from_str(arguments) {
        Ok(v) => v.write_json(out),
        Err(_) => write_str(out, arguments),
    }
    out.push('}');
}

/// A yielded `toolCalls: [{id?, name, args?}]`. `args` is an object (or the model's JSON text
/// as a string; absent = `{}`); a missing `id` is made up by the engine.
fn read_tool_calls(calls: &JsValue) -> Result<Vec<ToolCallPart>, LlmError> {
    const SHAPE: &str = "custom provider: toolCalls must be an array of { id?, name, args? }";
    if !js_sys::Array::is_array(calls) {
        return Err(custom_error(SHAPE));
    }
    let mut out = Vec::new();
    for (i, call) in js_sys::Array::from(calls).iter().enumerate() {
        let get = |name: &'static str| prop(&call, name);
        if !call.is_object() {
            return Err(custom_error(SHAPE));
        }
        let name = get("name").as_string().ok_or_else(|| {
            custom_error(format!(
                "custom provider: toolCalls[{i}].name must be a string"
            ))
        })?;
        let id = get("id").as_string().unwrap_or_default();
        let args = get("args");
        let arguments = if args.is_undefined() || args.is_null() {
            "{}".to_string()
        } else if let Some(text) = args.as_string() {
            text
        } else {
            to_json(&args)
                .map_err(|p| {
                    custom_error(format!(
                        "custom provider: toolCalls[{i}].args is not JSON: {p}"
                    ))
                })?
                .to_json()
        };
        out.push(ToolCallPart {
            id,
            name,
            arguments,
            signature: None,
        });
    }
    Ok(out)
}
