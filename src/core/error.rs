//! The engine's error type. Every variant has a stable snake_case [`WorldError::code`] that the
//! JS binding exposes as `error.code`; messages are lowercase, name the offending value and say
//! how to fix it.

use crate::core::ids::IdError;
use crate::core::llm::types::LlmError;
use crate::core::store::StoreError;

/// Everything a world operation can fail with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorldError {
    #[error("a world with id {0:?} already exists; choose another name or open it")]
    WorldExists(String),
    #[error("no world with id {0:?}; check the id or create the world first")]
    WorldNotFound(String),
    #[error("an agent with id {0:?} already exists in this world; choose another name")]
    AgentExists(String),
    #[error("no agent with id {0:?} in this world; check the id with agents()")]
    AgentNotFound(String),
    /// `invalid_name` / `reserved_name`.
    #[error(transparent)]
    Id(#[from] IdError),
    #[error("turnLimit {0} is invalid; use an integer of at least 1 (0 or none means 5)")]
    InvalidTurnLimit(String),
    /// A field of an input is out of range or malformed.
    #[error("invalid {field}: {problem}")]
    InvalidInput { field: String, problem: String },
    #[error("sender {0:?} is blank; pass a sender name, or none for the human")]
    InvalidSender(String),
    #[error("the message is empty; write some text to send")]
    EmptyMessage,
    #[error("the message has {0} characters, more than the limit of {1}; shorten it")]
    MessageTooLong(usize, usize),
    #[error("no chat with id {0:?} in this world; check the id with listChats()")]
    ChatNotFound(String),
    /// Editing (spec §10): no message with this id in the current chat.
    #[error("no message {0:?} in the current chat; pick one from messages()")]
    MessageNotFound(String),
    #[error("the call queue is full ({0} pending); wait for the world to become idle")]
    QueueFull(usize),
    #[error("no pending approval with id {0:?}: it was answered, cancelled or never existed; check pendingApprovals()")]
    ApprovalNotFound(String),
    #[error(transparent)]
    Storage(#[from] StoreError),
    /// An export document that cannot be imported; `path` is the JSON path of the bad field.
    #[error("invalid import document at {path}: {problem}")]
    ImportInvalid { path: String, problem: String },
    #[error(transparent)]
    Llm(#[from] LlmError),
}

impl WorldError {
    /// The stable code (spec §8 and the binding's TS union of codes).
    pub fn code(&self) -> &'static str {
        match self {
            WorldError::WorldExists(_) => "world_exists",
            WorldError::WorldNotFound(_) => "world_not_found",
            WorldError::AgentExists(_) => "agent_exists",
            WorldError::AgentNotFound(_) => "agent_not_found",
            WorldError::Id(e) => e.code(),
            WorldError::InvalidTurnLimit(_) => "invalid_turn_limit",
            WorldError::InvalidInput { .. } => "invalid_input",
            WorldError::InvalidSender(_) => "invalid_sender",
            WorldError::EmptyMessage => "empty_message",
            WorldError::MessageTooLong(..) => "message_too_long",
            WorldError::ChatNotFound(_) => "chat_not_found",
            WorldError::MessageNotFound(_) => "message_not_found",
            WorldError::QueueFull(_) => "queue_full",
            WorldError::ApprovalNotFound(_) => "approval_not_found",
            WorldError::Storage(e) => e.code(),
            WorldError::ImportInvalid { .. } => "import_invalid",
            WorldError::Llm(e) => e.code(),
        }
    }

    /// The finer reason of a storage failure ([`StoreError::reason`]); `None` otherwise.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            WorldError::Storage(e) => Some(e.reason()),
            _ => None,
        }
    }

    /// What the storage backend threw, when its adapter attached it ([`StoreError::Caused`]).
    pub fn cause(&self) -> Option<&crate::core::store::Cause> {
        match self {
            WorldError::Storage(e) => e.cause(),
            _ => None,
        }
    }

    pub(crate) fn input(field: &str, problem: impl Into<String>) -> Self {
        WorldError::InvalidInput {
            field: field.to_string(),
            problem: problem.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_keeps_the_code_reason_and_message_of_the_error_it_is_attached_to() {
        use crate::core::store::Cause;
        let plain = StoreError::QuotaExceeded("writing a message".into());
        let thrown = Cause::new(String::from("the adapter's own error"));
        let caused = plain.clone().with_cause(thrown.clone());
        let e = WorldError::from(caused.clone());
        assert_eq!(
            (e.code(), e.reason()),
            ("storage_error", Some("quota_exceeded"))
        );
        assert_eq!(e.to_string(), WorldError::from(plain.clone()).to_string());
        let got = e.cause().and_then(|c| c.get::<String>());
        assert_eq!(got.map(String::as_str), Some("the adapter's own error"));
        assert_eq!(
            e.cause(),
            Some(&thrown),
            "the same caught value, not a copy"
        );
        // Attaching again replaces the cause rather than nesting; stripping gives the kind back.
        let other = Cause::new(7u8);
        let twice = caused.with_cause(other.clone());
        assert_eq!(twice.cause(), Some(&other));
        assert_eq!(twice.without_cause(), plain);
        assert_eq!(WorldError::from(plain).cause(), None);
    }

    #[test]
    fn codes_are_stable() {
        assert_eq!(
            WorldError::ImportInvalid {
                path: "agents[1].turnLimit".into(),
                problem: "x".into()
            }
            .code(),
            "import_invalid"
        );
        assert_eq!(
            WorldError::Id(IdError::ReservedName("Human".into())).code(),
            "reserved_name"
        );
        assert_eq!(
            WorldError::Storage(StoreError::Backend("x".into())).code(),
            "storage_error"
        );
        assert_eq!(
            WorldError::Storage(StoreError::QuotaExceeded("x".into())).reason(),
            Some("quota_exceeded")
        );
        assert_eq!(WorldError::EmptyMessage.reason(), None);
        assert_eq!(
            WorldError::Llm(LlmError::Aborted {
                provider: "openai".into()
            })
            .code(),
            "llm_aborted"
        );
        assert_eq!(
            WorldError::input("temperature", "x").code(),
            "invalid_input"
        );
    }
}
