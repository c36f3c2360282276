//! Pending tool approvals (spec §9 "Approval"): the record a store keeps for a reply that waits
//! for the application's answer, and the view `pendingApprovals()` lists.
//!
//! A record holds everything needed to resume the reply in another process (a reload, another
//! tab): the message it answers, the state of its step loop between two tool calls (the LLM
//! context before the current step's group, the text and usage so far, the calls of earlier
//! steps with their results, the current step's calls and the results of those that already
//! ran) and the call waiting for approval, which is `state.step_calls[state.step_records.len()]`.
//! It is written in one store batch (`StoreOp::PutApproval`), so the pending approval and the
//! state it resumes from never disagree. Records are keyed `[worldId, chatId, approvalId]` and
//! go with their chat, world or agent when that is deleted.
//!
//! Pending approvals are not exported: an export is a transcript, and a reply can only resume
//! in the world that holds the registered tool and is waiting for it.

use serde::Serialize;

use crate::core::json::{deserialize_via_json, from_json_struct};
use crate::core::json_write::{Obj, ToJson};

use crate::core::llm::types::{ChatMessage, ThinkingBlock, ToolCallPart, Usage};
use crate::core::model::{Message, Timestamp, ToolCallRecord};

/// The state of one reply's step loop at a pending approval.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ReplyState {
    /// The step whose calls are running (1 for the first).
    pub step: u32,
    /// The LLM context of this step's call (before its own calls and results are appended).
    pub messages: Vec<ChatMessage>,
    /// The reply's text so far, this step's text included (steps joined by a blank line).
    pub text: String,
    /// Usage summed over the steps so far, this one included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The calls of the earlier steps, with their results.
    pub tool_calls: Vec<ToolCallRecord>,
    /// This step's own text, finish reason and usage (for its memory entry and `step-finish`).
    pub step_text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_finish: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_usage: Option<Usage>,
    /// This step's calls in the model's order.
    pub step_calls: Vec<ToolCallPart>,
    /// This step's thinking blocks (Anthropic), sent back with its calls. Absent in records
    /// written before they were kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub step_thinking: Vec<ThinkingBlock>,
    /// The results of this step's calls that ran before the pending one.
    pub step_records: Vec<ToolCallRecord>,
    /// Every call id used in the reply so far (a repeated id is replaced).
    pub used_ids: Vec<String>,
}

impl ReplyState {
    /// The call waiting for approval.
    pub fn pending_call(&self) -> Option<&ToolCallPart> {
        self.step_calls.get(self.step_records.len())
    }
}

/// A reply waiting for the application's answer to one tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    pub approval_id: String,
    pub world_id: String,
    /// `None` in session mode off (then the record lives in RAM only).
    pub chat_id: Option<String>,
    pub agent_id: String,
    /// The reply's id (its SSE `messageId`, and the id it is published with).
    pub reply_id: String,
    /// The message the reply answers (M).
    pub trigger: Message,
    pub created_at: Timestamp,
    pub state: ReplyState,
}

/// What `pendingApprovals()` lists (and `approval-request` carries, with `chatId` and
/// `createdAt` added).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    pub approval_id: String,
    pub agent_name: String,
    /// The reply's id.
    pub message_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    /// The parsed arguments (the call passed the schema check before it was asked about).
    pub args: crate::core::json::Value,
    pub chat_id: Option<String>,
    pub created_at: Timestamp,
}

// Writing (see `crate::core::json_write`: the derived form's field order and skip rules).
impl ToJson for ReplyState {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .field("step", &self.step)
            .field("messages", &self.messages)
            .str("text", &self.text)
            .opt("usage", &self.usage)
            .field("toolCalls", &self.tool_calls)
            .str("stepText", &self.step_text)
            .opt("stepFinish", &self.step_finish)
            .opt("stepUsage", &self.step_usage)
            .field("stepCalls", &self.step_calls)
            .list("stepThinking", &self.step_thinking)
            .field("stepRecords", &self.step_records)
            .field("usedIds", &self.used_ids)
            .end();
    }
}

impl ToJson for ApprovalRecord {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("approvalId", &self.approval_id)
            .str("worldId", &self.world_id)
            .field("chatId", &self.chat_id)
            .str("agentId", &self.agent_id)
            .str("replyId", &self.reply_id)
            .field("trigger", &self.trigger)
            .field("createdAt", &self.created_at)
            .field("state", &self.state)
            .end();
    }
}

impl ToJson for PendingApproval {
    fn write_json(&self, out: &mut String) {
        Obj::new(out)
            .str("approvalId", &self.approval_id)
            .str("agentName", &self.agent_name)
            .str("messageId", &self.message_id)
            .str("toolCallId", &self.tool_call_id)
            .str("toolName", &self.tool_name)
            .field("args", &self.args)
            .field("chatId", &self.chat_id)
            .field("createdAt", &self.created_at)
            .end();
    }
}

// Decoding (see `crate::core::json`). Unknown fields are ignored, as they always were here.
from_json_struct!(ReplyState, allow, {
    step: "step" req,
    messages: "messages" req,
    text: "text" req,
    usage: "usage" opt,
    tool_calls: "toolCalls" opt,
    step_text: "stepText" opt,
    step_finish: "stepFinish" opt,
    step_usage: "stepUsage" opt,
    step_calls: "stepCalls" req,
    step_thinking: "stepThinking" opt,
    step_records: "stepRecords" opt,
    used_ids: "usedIds" opt,
});

from_json_struct!(ApprovalRecord, allow, {
    approval_id: "approvalId" req,
    world_id: "worldId" req,
    chat_id: "chatId" opt,
    agent_id: "agentId" req,
    reply_id: "replyId" req,
    trigger: "trigger" req,
    created_at: "createdAt" req,
    state: "state" req,
});

deserialize_via_json!(ReplyState, ApprovalRecord);

impl ApprovalRecord {
    pub fn view(&self) -> PendingApproval {
        let call = self.state.pending_call();
        PendingApproval {
            approval_id: self.approval_id.clone(),
            agent_name: self.agent_id.clone(),
            message_id: self.reply_id.clone(),
            tool_call_id: call.map(|c| c.id.clone()).unwrap_or_default(),
            tool_name: call.map(|c| c.name.clone()).unwrap_or_default(),
            args: call
                .and_then(|c| crate::core::json::from_str(&c.arguments).ok())
                .unwrap_or_else(|| crate::core::json::Value::Object(Default::default())),
            chat_id: self.chat_id.clone(),
            created_at: self.created_at,
        }
    }
}
