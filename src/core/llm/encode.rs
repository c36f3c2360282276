//! Request encoding: (provider, config, settings, messages) → one [`HttpRequest`], sans IO.
//!
//! The per-provider body shapes live in `openai.rs`, `anthropic.rs`, `google.rs` and
//! `ollama.rs`; this module dispatches and holds what they share. Invariants: the config is
//! validated first, so a request is never built for an unconfigured provider; headers from the
//! config are applied last and replace a codec header of the same name (case-insensitive);
//! bodies are JSON `Value`s written by `json_write`, so every string is escaped correctly; a temperature that is
//! not a finite number is left out rather than sent as `null`.

use super::codecs::codec;
use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::types::{CallSettings, ChatMessage, LlmError};

/// Builds the HTTP request for one LLM call.
///
/// `browser_like` is true when the transport runs in a browser or worker (where CORS applies);
/// Anthropic then needs its opt-in header for direct browser access.
///
/// Errors: `NotConfigured` when the config misses a field (or the call has no model, except
/// for azure, which routes by deployment); `Custom` for the `custom` provider, which is called
/// through its JavaScript function, never over HTTP.
pub fn encode_request(
    kind: ProviderKind,
    config: &ProviderConfig,
    settings: &CallSettings,
    messages: &[ChatMessage],
    browser_like: bool,
) -> Result<HttpRequest, LlmError> {
    config.validate(kind)?;
    if kind != ProviderKind::Azure
        && kind != ProviderKind::Custom
        && settings.model.trim().is_empty()
    {
        return Err(LlmError::NotConfigured {
            provider: kind.name(),
            missing: "model".to_string(),
        });
    }
    let base = config.resolved_base_url(kind).unwrap_or_default();
    let Some(codec) = codec(kind) else {
        return Err(LlmError::Custom {
            message: "custom: this provider is a JavaScript function registered by the \
                      application and has no HTTP request to encode"
                .to_string(),
        });
    };
    let mut request = (codec.encode)(kind, &base, config, settings, messages, browser_like);
    for (name, value) in &config.headers {
        if !name.trim().is_empty() {
            request.set_header(name.trim(), value);
        }
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::super::types::Role;
    use super::super::wire::encode_component;
    use super::*;

    /// The request body of `kind` for `msgs` (no tools, no settings but the model).
    fn body(kind: ProviderKind, msgs: &[ChatMessage]) -> String {
        let config = ProviderConfig {
            api_key: Some("k".into()),
            ..ProviderConfig::default()
        };
        let settings = CallSettings {
            model: "m".into(),
            ..CallSettings::default()
        };
        encode_request(kind, &config, &settings, msgs, false)
            .map(|r| r.body)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Without tool entries, the alternating providers merge same-role entries into one text
    /// (blank line between), drop blank entries (blank system ones too), join the system
    /// entries, and open with a user turn.
    #[test]
    fn alternate_merges_and_opens_with_user() {
        let msgs = [
            ChatMessage::new(Role::System, "be brief"),
            ChatMessage::new(Role::Assistant, "earlier reply"),
            ChatMessage::new(Role::System, " "),
            ChatMessage::new(Role::User, "a"),
            ChatMessage::new(Role::User, "   "),
            ChatMessage::new(Role::User, "b"),
            ChatMessage::new(Role::System, "and kind"),
            ChatMessage::new(Role::Assistant, "c"),
            ChatMessage::new(Role::User, "d"),
        ];
        assert_eq!(
            body(ProviderKind::Anthropic, &msgs),
            r#"{"max_tokens":4096,"messages":[{"content":"(conversation continues)","role":"user"},{"content":"earlier reply","role":"assistant"},{"content":"a\n\nb","role":"user"},{"content":"c","role":"assistant"},{"content":"d","role":"user"}],"model":"m","stream":false,"system":"be brief\n\nand kind"}"#
        );
        assert_eq!(
            body(ProviderKind::Google, &msgs),
            r#"{"contents":[{"parts":[{"text":"(conversation continues)"}],"role":"user"},{"parts":[{"text":"earlier reply"}],"role":"model"},{"parts":[{"text":"a\n\nb"}],"role":"user"},{"parts":[{"text":"c"}],"role":"model"},{"parts":[{"text":"d"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"be brief\n\nand kind"}]}}"#
        );
    }

    #[test]
    fn encode_component_escapes_reserved() {
        assert_eq!(encode_component("gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(encode_component("a/b c:d"), "a%2Fb%20c%3Ad");
    }
}
