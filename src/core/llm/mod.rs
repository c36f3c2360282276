//! The LLM seam: provider-neutral request and stream types shared by the engine (which builds
//! the message list and consumes streamed events) and the provider codecs (which turn them into
//! wire formats and back).
//!
//! Everything here is sans IO: the codecs take values and byte slices and return values; the
//! web transport (`src/web`) moves the bytes. A call goes:
//! [`ProviderKind::parse`] → [`ProviderConfig::validate`] (inside [`encode_request`]) →
//! `fetch` → on a 2xx, [`decoder_for_status`] fed every body chunk then `finish()`; on any
//! other status, [`decode_error_response`]; on no response, [`network_error`]; and
//! between attempts, [`should_retry`] / [`backoff_ms`].

pub mod decode;
pub mod encode;
pub mod errors;
pub mod http;
pub mod ndjson;
pub mod provider;
pub mod retry;
pub mod sse;
pub mod types;

mod anthropic;
pub(crate) mod byte_search;
mod codecs;
mod google;
mod json_scan;
mod ollama;
mod openai;
mod tool_codec;
mod wire;

pub use anthropic::{ANTHROPIC_VERSION, DEFAULT_MAX_TOKENS as ANTHROPIC_DEFAULT_MAX_TOKENS};
pub use decode::{decoder_for, decoder_for_status, StreamDecoder};
pub use encode::encode_request;
pub use errors::{decode_error_response, explain_network_error, network_error};
pub use http::HttpRequest;
pub use provider::{ProviderConfig, ProviderKind};
pub use retry::{backoff_ms, is_retryable, parse_retry_after, should_retry, MAX_ATTEMPTS};
