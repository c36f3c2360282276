//! The JavaScript API: one file per JS class; converts, validates, delegates to the core.

pub mod agents;
pub mod approvals;
pub mod chats;
pub mod conversation;
pub mod convert;
pub mod editing;
pub mod error;
pub mod events;
pub mod input;
pub mod outcome;
pub mod storage;
pub mod tools;
pub mod types;
pub mod version;
pub mod world;
