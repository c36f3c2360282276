//! `AgentWorld.approve / deny / pendingApprovals` (spec §9 "Approval"): a separate
//! `#[wasm_bindgen] impl AgentWorld` block over the core's approvals (`core/engine/approvals.rs`).
//! Answering queues the resumed reply; the world's queue is then driven like after `send`.

use wasm_bindgen::prelude::*;

use crate::bindings::convert::to_js;
use crate::bindings::error::invalid_argument;
use crate::bindings::world::{Call, Handle};

#[wasm_bindgen(typescript_custom_section)]
const TS_APPROVALS: &'static str = r#"
/**
 * A tool call waiting for the application's answer (`world.pendingApprovals()`; the
 * `system` `approval-request` event carries the same fields but `chatId` and `createdAt`).
 * Answer it with `world.approve(approvalId)` or `world.deny(approvalId, reason?)`.
 */
export interface PendingApproval {
  approvalId: string;
  agentName: string;
  /** The reply's id: its SSE `messageId` and the id it will be published with. */
  messageId: string;
  toolCallId: string;
  toolName: string;
  /** The call's arguments (they passed the tool's schema). */
  args: unknown;
  /** `null` with session mode off (the approval then lives in memory only). */
  chatId: string | null;
  createdAt: Timestamp;
}
"#;

pub(crate) fn approval_id(value: &JsValue) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| {
        invalid_argument(
            "approvalId",
            "must be a string (from pendingApprovals() or the approval-request event)",
        )
    })
}

// The async methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__call` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_CALL: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __call.
  /**
   * Approves a pending tool call: the tool runs and the agent's reply resumes (await
   * `idle()` for it to finish). Rejects with `approval_not_found` when the id is unknown or
   * was already answered or cancelled (also in another tab).
   *
   * @example
   * ```js
   * world.on("system", async (e) => {
   *   if (e.type === "approval-request" && confirm(`Run ${e.toolName}?`)) {
   *     await world.approve(e.approvalId);
   *   }
   * });
   * ```
   */
  approve(approvalId: string): Promise<void>;
  /**
   * Denies a pending tool call: the tool does not run, the model is told
   * `{"error": "denied by the user: <reason>"}` and the reply resumes. Rejects with
   * `approval_not_found` when the id is unknown or was already answered or cancelled.
   *
   * @example
   * ```js
   * const [first] = world.pendingApprovals();
   * if (first) await world.deny(first.approvalId, "not on a weekend");
   * ```
   */
  deny(approvalId: string, reason?: string | null): Promise<void>;
}
"#;

// The synchronous methods of this file, declared here with their docs: the glue step defines them
// on the class, each calling the shared export `__get` (see world.rs).
#[wasm_bindgen(typescript_custom_section)]
const TS_GET: &'static str = r#"
export interface AgentWorld {
  // Defined by the glue step from this list (scripts/glue-step.mjs): each calls __get.
  /**
   * The tool calls waiting for your answer in the current chat, oldest first. They survive
   * a reload: after `open`, register the tools again and answer them.
   *
   * @example
   * ```js
   * for (const p of world.pendingApprovals()) {
   *   console.log(`${p.agentName} wants to run ${p.toolName}`, p.args);
   * }
   * ```
   */
  pendingApprovals(): PendingApproval[];
}
"#;

impl Handle {
    /// `pendingApprovals()` (declared with its docs in this file's `TS_GET`; see [`AgentWorld::get`]).
    pub(crate) fn pending_approvals(&self) -> Result<JsValue, JsValue> {
        to_js(&self.world.pending_approvals())
    }
}

/// `deny(approvalId, reason?)`'s arguments.
pub(crate) fn deny(id: &JsValue, reason: &JsValue) -> Result<Call, JsValue> {
    let id = approval_id(id)?;
    let reason = if reason.is_undefined() || reason.is_null() {
        None
    } else {
        Some(
            reason
                .as_string()
                .ok_or_else(|| invalid_argument("reason", "must be a string or left out"))?,
        )
    };
    Ok(Call::Deny(id, reason))
}
