//! JavaScript tools and dynamic instructions: the web side of the core's [`ToolExecutor`] and
//! [`InstructionsProvider`] seams (spec §9).
//!
//! A [`JsTool`] runs the application's `execute(args, {signal, agentName, messageId,
//! toolCallId})`. The core has no timer, so the tool's `timeoutMs` is applied here with the
//! global `setTimeout`; the tool's `signal` aborts when the reply is cancelled (the engine drops
//! the call's future at once: dropping aborts the signal), or when the timeout wins. Nothing the
//! function does reaches Rust as a throw: a throw or rejection is [`ToolError::Failed`] with the
//! error's message, and a result JSON cannot represent (a function, a symbol, `undefined`, a
//! BigInt, `NaN`/`Infinity`, a cycle, absurd nesting) is [`ToolError::NotJson`], so the model
//! gets `{"error": …}` and the reply goes on.
//!
//! Values cross as JSON text through `JSON.stringify` (with a replacer that notes the first
//! value JSON would silently drop or change), never by walking the object in Rust: a cycle or
//! a 100,000-level nesting then ends as a catchable JS error, not as a Rust stack overflow that
//! would trap the whole wasm instance.

use std::future::Future;
use std::task::Poll;

use crate::core::json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::core::engine::{InstructionsProvider, InstructionsRequest};
use crate::core::json_write::ToJson;
use crate::core::store::LocalBoxFuture;
use crate::core::tools::{ToolContext, ToolError, ToolExecutor};
use crate::web::timer::sleep;

/// The message of a thrown JS value: `error.message`, a thrown string, or a generic text.
pub fn message_of(error: &JsValue, fallback: &str) -> String {
    js_sys::Reflect::get(error, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| fallback.to_string())
}

/// The values JSON would drop or turn into `null`, by the kind `awwStringify` reports.
const NOT_JSON: [&str; 5] = [
    "a function",
    "a symbol",
    "a BigInt",
    "undefined",
    "a non-finite number (NaN or Infinity)",
];

/// `value` as JSON, or what makes it not JSON (`a function at "a.b"`, `a cycle`, …).
///
/// `JSON.stringify` does the walking (it throws on cycles and BigInts, and a stack overflow on
/// absurd nesting is a catchable `RangeError`); its replacer sees every value (after `toJSON`)
/// and notes the first one JSON would drop or turn into `null`. `undefined` is refused at the
/// top and in arrays; an object property that is `undefined` is left out, as JavaScript does
/// for optional fields. The replacer is JavaScript (`awwStringify`): a Rust closure cost a
/// call from JS into wasm for every value of the document, and a closure adapter of its own
/// in the module and the glue. It lives in the custom provider's snippet module, not one of
/// its own: every snippet module is one more file the glue imports (and a fifth one once
/// hung the test page).
pub fn to_json(value: &JsValue) -> Result<Value, String> {
    let text = crate::web::custom_provider::stringify(value);
    let text = text.map_err(|e| {
        let m = message_of(&e, "JSON.stringify failed");
        let lower = m.to_ascii_lowercase();
        if crate::core::contains(&lower, "circular") || crate::core::contains(&lower, "cyclic") {
            format!("a cycle ({m})")
        } else {
            m
        }
    })?;
    let Some(text) = text.as_string() else {
        // `[kind, key]`: the first value JSON would drop or change.
        let problem = js_sys::Array::from(&text);
        let kind = problem.get(0).as_f64().unwrap_or_default() as usize;
        let what = NOT_JSON.get(kind).copied().unwrap_or("undefined");
        return Err(match problem.get(1).as_string().filter(|k| !k.is_empty()) {
            Some(k) => format!("{what} (at key {k:?})"),
            None => what.to_string(),
        });
    };
    crate::core::json::from_str(&text).map_err(|e| format!("it cannot be read back as JSON ({e})"))
}

/// A JSON value as a plain JS value (objects as objects), via `JSON.parse`.
pub fn from_json(value: &Value) -> JsValue {
    // A Value's JSON text always parses.
    js_sys::JSON::parse(&value.to_json()).unwrap_or(JsValue::NULL)
}

fn set(target: &js_sys::Object, key: &str, value: &JsValue) {
    // Setting a data property on a fresh plain object cannot fail.
    let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), value);
}

/// Aborts the tool's controller when the call ends any other way than by settling: the engine
/// drops the future when the reply is cancelled.
struct AbortOnDrop {
    controller: web_sys::AbortController,
    settled: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.settled {
            self.controller.abort();
        }
    }
}

/// One registered JS tool: its `execute` function and, for `needsApproval: fn`, its check.
pub struct JsTool {
    execute: js_sys::Function,
    needs_approval: Option<js_sys::Function>,
}

impl JsTool {
    pub fn new(execute: js_sys::Function, needs_approval: Option<js_sys::Function>) -> Self {
        Self {
            execute,
            needs_approval,
        }
    }

    async fn run(&self, args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        let controller = web_sys::AbortController::new()
            .map_err(|_| ToolError::Failed("AbortController is not available here".into()))?;
        let mut guard = AbortOnDrop {
            controller: controller.clone(),
            settled: false,
        };
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Failed("cancelled".into()));
        }
        let context = js_sys::Object::new();
        set(&context, "signal", controller.signal().as_ref());
        set(&context, "agentName", &JsValue::from_str(&ctx.agent_name));
        set(&context, "messageId", &JsValue::from_str(&ctx.message_id));
        set(
            &context,
            "toolCallId",
            &JsValue::from_str(&ctx.tool_call_id),
        );
        let returned = self
            .execute
            .call2(&JsValue::NULL, &from_json(&args), &context)
            .map_err(|e| ToolError::Failed(message_of(&e, "the tool threw")))?;
        // A thenable is awaited; anything else is the result itself.
        let settled = JsFuture::from(js_sys::Promise::resolve(&returned));
        let outcome = race(
            settled,
            sleep(u64::from(ctx.timeout_ms)),
            ctx.cancel.cancelled(),
        )
        .await;
        match outcome {
            Race::Settled(Ok(value)) => {
                guard.settled = true;
                to_json(&value).map_err(ToolError::NotJson)
            }
            Race::Settled(Err(e)) => {
                guard.settled = true;
                Err(ToolError::Failed(message_of(&e, "the tool rejected")))
            }
            // The guard aborts the signal: the tool can stop its work.
            Race::TimedOut => Err(ToolError::TimedOut),
            Race::Cancelled => Err(ToolError::Failed("cancelled".into())),
        }
    }

    async fn check_approval(&self, args: &Value) -> Result<bool, String> {
        let Some(check) = &self.needs_approval else {
            return Ok(false);
        };
        let returned = check
            .call1(&JsValue::NULL, &from_json(args))
            .map_err(|e| message_of(&e, "needsApproval threw"))?;
        let value = JsFuture::from(js_sys::Promise::resolve(&returned))
            .await
            .map_err(|e| message_of(&e, "needsApproval rejected"))?;
        Ok(value.is_truthy())
    }
}

impl ToolExecutor for JsTool {
    fn execute<'a>(
        &'a self,
        _name: &'a str,
        args: Value,
        ctx: ToolContext,
    ) -> LocalBoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(self.run(args, ctx))
    }

    fn needs_approval<'a>(
        &'a self,
        _name: &'a str,
        args: &'a Value,
    ) -> LocalBoxFuture<'a, Result<bool, String>> {
        Box::pin(self.check_approval(args))
    }
}

enum Race<T> {
    Settled(T),
    TimedOut,
    Cancelled,
}

/// The first of: the tool settles, the timer fires, the reply is cancelled.
fn race<A: Future, B: Future<Output = ()>, C: Future<Output = ()>>(
    a: A,
    b: B,
    c: C,
) -> impl Future<Output = Race<A::Output>> {
    let (mut a, mut b, mut c) = (Box::pin(a), Box::pin(b), Box::pin(c));
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(()) = c.as_mut().poll(cx) {
            return Poll::Ready(Race::Cancelled);
        }
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Race::Settled(v));
        }
        if let Poll::Ready(()) = b.as_mut().poll(cx) {
            return Poll::Ready(Race::TimedOut);
        }
        Poll::Pending
    })
}

/// An agent's dynamic instructions: `fn({agentName, chatId, message})` → string or Promise.
pub struct JsInstructions {
    function: js_sys::Function,
}

impl JsInstructions {
    pub fn new(function: js_sys::Function) -> Self {
        Self { function }
    }

    async fn run(&self, req: InstructionsRequest) -> Result<String, String> {
        let input = js_sys::Object::new();
        set(&input, "agentName", &JsValue::from_str(&req.agent_name));
        set(
            &input,
            "chatId",
            &req.chat_id
                .as_deref()
                .map_or(JsValue::NULL, JsValue::from_str),
        );
        // A message's JSON text always parses.
        let message = js_sys::JSON::parse(&req.message.to_json()).unwrap_or(JsValue::NULL);
        set(&input, "message", &message);
        let returned = self
            .function
            .call1(&JsValue::NULL, &input)
            .map_err(|e| message_of(&e, "the instructions function threw"))?;
        let value = JsFuture::from(js_sys::Promise::resolve(&returned))
            .await
            .map_err(|e| message_of(&e, "the instructions function rejected"))?;
        value.as_string().ok_or_else(|| {
            "the instructions function must return a string (or a Promise of one)".to_string()
        })
    }
}

impl InstructionsProvider for JsInstructions {
    fn instructions(&self, req: InstructionsRequest) -> LocalBoxFuture<'_, Result<String, String>> {
        Box::pin(self.run(req))
    }
}
