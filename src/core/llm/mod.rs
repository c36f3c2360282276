//! The LLM seam: provider-neutral request and stream types shared by the engine (which builds
//! the message list and consumes streamed events) and the provider codecs (which turn them into
//! wire formats and back).

pub mod types;
