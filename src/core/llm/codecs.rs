//! The table of provider codecs: which module speaks each [`ProviderKind`]'s wire format.
//! Each provider module exports its encoder and decoder as one [`Codec`]; `encode.rs` and
//! `decode.rs` ask this table and know no provider themselves, so the imports go one way:
//! table → providers → shared helpers (`wire.rs`).

use super::provider::ProviderKind;
use super::wire::Codec;
use super::{anthropic, google, ollama, openai};

/// The codec of `kind`; `None` for `custom`, which has no wire format (a JavaScript function
/// answers it).
pub(crate) fn codec(kind: ProviderKind) -> Option<Codec> {
    Some(match kind {
        ProviderKind::OpenAi
        | ProviderKind::Azure
        | ProviderKind::Xai
        | ProviderKind::OpenAiCompatible => openai::CODEC,
        ProviderKind::Anthropic => anthropic::CODEC,
        ProviderKind::Google => google::CODEC,
        ProviderKind::Ollama => ollama::CODEC,
        ProviderKind::Custom => return None,
    })
}
