//! Request encoding: (provider, config, settings, messages) → one [`HttpRequest`], sans IO.
//!
//! The per-provider body shapes live in `openai.rs`, `anthropic.rs`, `google.rs` and
//! `ollama.rs`; this module dispatches and holds what they share. Invariants: the config is
//! validated first, so a request is never built for an unconfigured provider; headers from the
//! config are applied last and replace a codec header of the same name (case-insensitive);
//! bodies are `serde_json` values, so every string is escaped correctly; a temperature that is
//! not a finite number is left out rather than sent as `null`.

use serde_json::{Map, Value};

use super::http::HttpRequest;
use super::provider::{ProviderConfig, ProviderKind};
use super::types::{CallSettings, ChatMessage, LlmError, Role};
use super::{anthropic, google, ollama, openai};

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
            provider: kind.as_str().to_string(),
            missing: "model".to_string(),
        });
    }
    let base = config.resolved_base_url(kind).unwrap_or_default();
    let mut request = match kind {
        ProviderKind::OpenAi
        | ProviderKind::Azure
        | ProviderKind::Xai
        | ProviderKind::OpenAiCompatible => openai::encode(kind, &base, config, settings, messages),
        ProviderKind::Anthropic => {
            anthropic::encode(&base, config, settings, messages, browser_like)
        }
        ProviderKind::Google => google::encode(&base, config, settings, messages),
        ProviderKind::Ollama => ollama::encode(&base, config, settings, messages),
        ProviderKind::Custom => {
            return Err(LlmError::Custom {
                message: "custom: this provider is a JavaScript function registered by the \
                          application and has no HTTP request to encode"
                    .to_string(),
            })
        }
    };
    for (name, value) in &config.headers {
        if !name.trim().is_empty() {
            request.set_header(name.trim(), value);
        }
    }
    Ok(request)
}

/// A JSON POST to `url` with the given headers (after `content-type`).
pub(crate) fn json_post(url: String, headers: Vec<(&str, String)>, body: &Value) -> HttpRequest {
    let mut all = vec![("content-type".to_string(), "application/json".to_string())];
    all.extend(headers.into_iter().map(|(n, v)| (n.to_string(), v)));
    HttpRequest {
        method: "POST".to_string(),
        url,
        headers: all,
        body: body.to_string(),
    }
}

/// Inserts `key: value` when the value is present.
pub(crate) fn put<T: Into<Value>>(obj: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(v) = value {
        obj.insert(key.to_string(), v.into());
    }
}

/// The call's temperature, when it is a finite number.
pub(crate) fn temperature(settings: &CallSettings) -> Option<f64> {
    settings.temperature.filter(|t| t.is_finite())
}

/// Percent-encodes one URL path segment or query value (model and deployment names may hold
/// characters such as `/` or `:` that would change the URL's meaning).
pub(crate) fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What providers with strict alternation (Anthropic, Gemini) need: every system entry joined
/// into one system prompt, and the rest as user/assistant turns with consecutive same-role
/// entries merged (joined by a blank line), blank entries dropped (both APIs reject empty
/// text), and a first turn that is `user`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Alternating {
    pub(crate) system: Option<String>,
    pub(crate) turns: Vec<(Role, String)>,
}

/// Stands in for the missing opening user turn when the conversation would start with the
/// assistant (or hold no turn at all): both APIs reject that, and dropping the assistant's
/// words would lose context.
pub(crate) const OPENING_USER_TURN: &str = "(conversation continues)";

pub(crate) fn alternate(messages: &[ChatMessage]) -> Alternating {
    let mut system: Vec<&str> = Vec::new();
    let mut turns: Vec<(Role, String)> = Vec::new();
    for m in messages {
        if m.content.trim().is_empty() {
            continue;
        }
        match m.role {
            Role::System => system.push(&m.content),
            role => match turns.last_mut() {
                Some((last, text)) if *last == role => {
                    text.push_str("\n\n");
                    text.push_str(&m.content);
                }
                _ => turns.push((role, m.content.clone())),
            },
        }
    }
    if turns.first().map(|(r, _)| *r) != Some(Role::User) {
        turns.insert(0, (Role::User, OPENING_USER_TURN.to_string()));
    }
    Alternating {
        system: if system.is_empty() {
            None
        } else {
            Some(system.join("\n\n"))
        },
        turns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternate_merges_and_opens_with_user() {
        let msgs = [
            ChatMessage::new(Role::System, "be brief"),
            ChatMessage::new(Role::Assistant, "earlier reply"),
            ChatMessage::new(Role::User, "a"),
            ChatMessage::new(Role::User, "   "),
            ChatMessage::new(Role::User, "b"),
            ChatMessage::new(Role::System, "and kind"),
            ChatMessage::new(Role::Assistant, "c"),
            ChatMessage::new(Role::User, "d"),
        ];
        let a = alternate(&msgs);
        assert_eq!(a.system.as_deref(), Some("be brief\n\nand kind"));
        assert_eq!(
            a.turns,
            vec![
                (Role::User, OPENING_USER_TURN.to_string()),
                (Role::Assistant, "earlier reply".to_string()),
                (Role::User, "a\n\nb".to_string()),
                (Role::Assistant, "c".to_string()),
                (Role::User, "d".to_string()),
            ]
        );
    }

    #[test]
    fn encode_component_escapes_reserved() {
        assert_eq!(encode_component("gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(encode_component("a/b c:d"), "a%2Fb%20c%3Ad");
    }
}
