//! What became of a message (issue 15, "failures are not silent"): `world.sendAndWait()`, which
//! resolves with the replies and the errors of the work a message started, and the console
//! warning for an LLM error no `system` listener receives (`warnUnhandledErrors`).
//!
//! Why a method of its own rather than `send(text, {wait: true})`: one return type per method
//! keeps the TypeScript exact (`send` resolves with the message once it is persisted, which a
//! UI wants at once; `sendAndWait` with the outcome), and it reads like the AI SDK's
//! `await result.text`: `const { replies, errors } = await world.sendAndWait("@alice hi")`.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::bindings::convert::{promise, to_js};
use crate::bindings::types::SendOptionsArg;
use crate::bindings::world::AgentWorld;
use crate::core::engine::World;
use crate::core::events::{Event, SystemEvent, Topic};
use crate::core::json_write::{Obj, ToJson};
use crate::core::model::Message;

#[wasm_bindgen(typescript_custom_section)]
const TS_OUTCOME: &'static str = r#"
/** The `system` `error` event. */
export type SystemErrorEvent = Extract<SystemEvent, { type: "error" }>;
/** What `world.sendAndWait()` resolves with. */
export interface SendResult {
  /** The message you sent, as published. */
  message: Message;
  /** Every message published in answer to it, in order: the replies, the replies to those
   * (hand-overs), and notices (`turn-limit`, `pass`, `interrupted`). */
  replies: Message[];
  /** The failed replies among that work (`system` `error` events with `replyToMessageId`). */
  errors: SystemErrorEvent[];
}
"#;

// `sendAndWait`, declared here with its docs: the glue step defines it on the class, calling
// the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Sends a message like `send()` and resolves when the work it started is done (its
   * replies, and the hand-overs they set off), with what came of it: `{message, replies,
   * errors}`. Other work of the world is not waited for. A failed reply does not reject:
   * it is in `errors` (what `regenerate(e.replyToMessageId, {agent: e.agentName})` retries).
   *
   * @example
   * ```js
   * const { replies, errors } = await world.sendAndWait("@alice, a haiku about rain?");
   * for (const r of replies) console.log(`${r.sender}: ${r.content}`);
   * for (const e of errors) console.error(`${e.agentName}: ${e.message}`);
   * ```
   */
  sendAndWait(content: string, options?: SendOptions | null): Promise<SendResult>;
}
"#;

/// The codes of a failed LLM call worth a console warning when nobody listens (a cancel the
/// application asked for, `llm_aborted`, is not).
fn is_llm_failure(code: &str) -> bool {
    (code.starts_with("llm_") && code != "llm_aborted")
        || code == "provider_not_configured"
        || code == "tool_not_registered"
}

/// Warns on the console, once per error, about every failed LLM call while the application has
/// no `system` listener (`world.on("system", …)` or `world.events()`): without it a wrong
/// `baseUrl` would fail silently.
pub(crate) fn warn_unhandled_errors(world: &World) {
    let weak = world.downgrade();
    world
        .on_internal(
            Topic::System,
            Rc::new(move |e: &Event| {
                let Event::System(SystemEvent::Error {
                    message,
                    code,
                    agent_name,
                    agent_display_name,
                    ..
                }) = e
                else {
                    return Ok(());
                };
                let Some(world) = weak.upgrade() else {
                    return Ok(());
                };
                if is_llm_failure(code) && !world.has_listeners(Topic::System) {
                    let who = agent_display_name
                        .as_deref()
                        .or(agent_name.as_deref())
                        .unwrap_or("an agent");
                    let text = format!(
                        "agent-world-wasm: {who} could not answer: {} ({code}). Listen with \
                         world.on(\"system\", …) to handle errors, or pass warnUnhandledErrors: \
                         false to AgentWorld.create/open.",
                        message
                    );
                    web_sys::console::warn_1(&JsValue::from_str(&text));
                }
                Ok(())
            }),
        )
        .forget();
}

/// The events seen while one message's work runs.
#[derive(Default)]
struct Track {
    root: Option<String>,
    messages: Vec<Message>,
    errors: Vec<SystemEvent>,
    resolve: Option<js_sys::Function>,
}

impl Track {
    /// The message and every message published in answer to one in the chain, in order.
    fn chain(&self) -> Vec<String> {
        let Some(root) = &self.root else {
            return Vec::new();
        };
        let mut chain = vec![root.clone()];
        for m in &self.messages {
            if m.reply_to_message_id
                .as_ref()
                .is_some_and(|r| chain.contains(r))
            {
                chain.push(m.message_id.clone());
            }
        }
        chain
    }

    fn check(&mut self, world: &World) {
        if self.root.is_none() || self.resolve.is_none() {
            return;
        }
        if world.chain_done(&self.chain()) {
            if let Some(resolve) = self.resolve.take() {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        }
    }
}

struct SendResult<'a> {
    message: JsonValue,
    replies: Vec<&'a Message>,
    errors: Vec<&'a SystemEvent>,
}

impl ToJson for SendResult<'_> {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("message", &self.message)
            .field("replies", &self.replies)
            .field("errors", &self.errors)
            .end();
    }
}

type JsonValue = crate::core::json::Value;

#[wasm_bindgen]
impl AgentWorld {
    /// `sendAndWait()` (declared with its docs in this file's `TS_CALL`; see
    /// [`AgentWorld::call_method`]).
    pub(crate) fn send_and_wait(&self, content: &JsValue, options: &JsValue) -> js_sys::Promise {
        // Only the synchronous start borrows `self` (so `free()` succeeds while it waits).
        let world = match self.world() {
            Ok(w) => w,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let track = Rc::new(RefCell::new(Track::default()));
        let mut resolve = None;
        let done = js_sys::Promise::new(&mut |res, _| resolve = Some(res));
        track.borrow_mut().resolve = resolve;
        // Subscribed before sending: notices the routing publishes come before `send` returns.
        // Plain loops here and below: an iterator chain instantiates its own adapters.
        let mut subs = Vec::with_capacity(4);
        for topic in [Topic::Message, Topic::System, Topic::Sse, Topic::World] {
            let (t, w) = (track.clone(), world.downgrade());
            subs.push(world.on(
                topic,
                Rc::new(move |e: &Event| {
                    let Some(w) = w.upgrade() else {
                        return Ok(());
                    };
                    let mut t = t.borrow_mut();
                    match e {
                        Event::Message(m) => t.messages.push(m.clone()),
                        Event::System(err @ SystemEvent::Error { .. }) => {
                            t.errors.push(err.clone())
                        }
                        _ => {}
                    }
                    t.check(&w);
                    Ok(())
                }),
            ));
        }
        let options = match options.is_undefined() || options.is_null() {
            true => None,
            false => Some(options.clone().unchecked_into::<SendOptionsArg>()),
        };
        let sent = self.send(content.clone(), options);
        promise(async move {
            let message = wasm_bindgen_futures::JsFuture::from(sent).await?;
            let root = js_sys::Reflect::get(&message, &JsValue::from_str("messageId"))
                .ok()
                .and_then(|v| v.as_string());
            {
                let mut t = track.borrow_mut();
                t.root = root;
                t.check(&world);
            }
            wasm_bindgen_futures::JsFuture::from(done).await?;
            drop(subs);
            let t = track.borrow();
            let chain = t.chain();
            let root = t.root.clone().unwrap_or_default();
            let mut replies = Vec::new();
            for m in &t.messages {
                if m.message_id != root && chain.contains(&m.message_id) {
                    replies.push(m);
                }
            }
            let mut errors = Vec::new();
            for e in &t.errors {
                if matches!(e, SystemEvent::Error { reply_to_message_id: Some(r), .. } if chain.contains(r))
                {
                    errors.push(e);
                }
            }
            let result = SendResult {
                message: crate::web::js_tools::to_json(&message).unwrap_or(JsonValue::Null),
                replies,
                errors,
            };
            to_js(&result)
        })
    }
}
