//! Turning a failed HTTP response or a failed `fetch` into an [`LlmError`] a person can act on.
//!
//! Invariants: the `Display` of an HTTP failure is exactly the spec's
//! `<provider>: HTTP <status> <statusText>: <first 200 characters of the body>` (§5); when the
//! body is the provider's JSON error shape, "the body" is its error message (prefixed by the
//! provider's error type or code), which is what a person needs, else the raw text. Whitespace
//! runs are collapsed so the excerpt is one line. Advice (check the key, the model, CORS)
//! never goes into the message: it is returned by [`LlmError::hint`].

use crate::core::json::Value;

pub use super::http::{redact_url, redact_userinfo};
use super::provider::ProviderKind;
use super::retry::parse_retry_after;
use super::types::LlmError;

/// How many characters of a body an error keeps (spec §5).
pub const EXCERPT_CHARS: usize = 200;

/// The first 200 characters of `text`, whitespace runs collapsed to one space, trimmed.
pub fn excerpt(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for w in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if let Some((i, _)) = out.char_indices().nth(EXCERPT_CHARS) {
        out.truncate(i);
    }
    out
}

/// The standard reason phrase of a status, used when `statusText` is empty (fetch gives an
/// empty one for every HTTP/2 response, and every provider API is HTTP/2).
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "",
    }
}

/// `status_text` trimmed, or the status's reason phrase when it is empty.
pub(crate) fn status_text_or_reason(status: u16, status_text: &str) -> String {
    match status_text.trim() {
        "" => reason_phrase(status).to_string(),
        given => given.to_string(),
    }
}

/// The error message inside a provider's JSON error body, with its type/code as a prefix:
/// - openai, azure, xai, compatible: `{"error": {"message", "type", "code"}}`
/// - anthropic: `{"type": "error", "error": {"type": "overloaded_error", "message"}}`
/// - google: `{"error": {"code": 429, "message", "status": "RESOURCE_EXHAUSTED"}}`, also
///   wrapped in a one-element array by the non-SSE streaming endpoint
/// - ollama and many proxies: `{"error": "message"}`; some servers: `{"message": "..."}`
pub(crate) fn json_error_message(v: &Value) -> Option<String> {
    let v = match v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    match v.get("error") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Object(e)) => {
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            // The most specific label first: google's status, azure/openai's string code,
            // anthropic/openai's type.
            let mut label = None;
            for k in ["status", "code", "type"] {
                let l = e.get(k).and_then(Value::as_str).map(str::trim);
                if let Some(l) = l.filter(|l| !l.is_empty() && !crate::core::contains(message, l)) {
                    label = Some(l);
                    break;
                }
            }
            match (label, message.is_empty()) {
                (Some(l), false) => Some(format!("{l}: {message}")),
                (None, false) => Some(message.to_string()),
                (Some(l), true) => Some(l.to_string()),
                (None, true) => None,
            }
        }
        _ => v
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.trim().is_empty())
            .map(str::to_string),
    }
}

/// Builds the error for a non-2xx response of `kind`.
///
/// `retry_after` is the raw `Retry-After` header (seconds or an HTTP-date); `now_ms` is the
/// current time in Unix milliseconds, needed only for the date form.
pub fn decode_error_response(
    kind: ProviderKind,
    status: u16,
    status_text: &str,
    body: &str,
    retry_after: Option<&str>,
    now_ms: u64,
) -> LlmError {
    let message = crate::core::json::from_str(body.trim())
        .ok()
        .and_then(|v| json_error_message(&v))
        .unwrap_or_else(|| body.to_string());
    LlmError::Http {
        provider: kind.name(),
        status,
        status_text: status_text_or_reason(status, status_text),
        body_excerpt: excerpt(&message),
        retry_after_ms: retry_after.and_then(|v| parse_retry_after(v, now_ms)),
    }
}

/// Whether a URL points at this machine (browsers exempt it from mixed-content blocking).
fn is_loopback(url: &str) -> bool {
    let rest = match crate::core::find(url, "://") {
        Some(i) => url.get(i + 3..).unwrap_or(url),
        None => url,
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = crate::core::rsplit_once(host, b'@').map_or(host, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split(']').next().map_or(host, |h| &h[1..])
    } else {
        host.split(':').next().unwrap_or(host)
    };
    host == "localhost" || host.ends_with(".localhost") || host.starts_with("127.") || host == "::1"
}

/// Explains a request that got no response at all (a browser's opaque `TypeError: Failed to
/// fetch`): it names where the request went and the likely causes for this provider, CORS
/// first, since that is what fails most often in a page. The text does not start with the
/// provider's name: `LlmError::Network` prefixes it.
pub fn explain_network_error(kind: ProviderKind, base_url: &str) -> String {
    let shown = redact_userinfo(base_url);
    let mut text = format!("could not reach {shown}: the request failed before any response");
    let advice = match kind {
        ProviderKind::Ollama => {
            "; is Ollama running there (`ollama serve`)? A web page may call it only if Ollama \
             allows the page's origin: set OLLAMA_ORIGINS to that origin (or *) in Ollama's \
             environment and restart it"
        }
        ProviderKind::OpenAiCompatible => {
            "; is the server running at this baseUrl (usually ending in /v1)? A web page may call \
             it only if the server allows cross-origin requests: enable CORS in its settings \
             (LM Studio: \"Enable CORS\"; vLLM: --allowed-origins; other servers: their CORS \
             option) or put a proxy in front that adds the CORS headers"
        }
        ProviderKind::Azure => {
            "; check the endpoint (https://<resource>.openai.azure.com) and the network; if the \
             page's origin is blocked by CORS, call Azure through a proxy you control and set \
             baseUrl to it"
        }
        ProviderKind::Anthropic => {
            "; check the network and, if set, the baseUrl; a proxy in between must allow \
             cross-origin requests (CORS)"
        }
        ProviderKind::OpenAi | ProviderKind::Xai | ProviderKind::Google => {
            "; check the network connection and, if set, the baseUrl; a proxy in between must \
             allow cross-origin requests (CORS) from this page"
        }
        ProviderKind::Custom => "; the custom provider's function made the failing request",
    };
    text.push_str(advice);
    if base_url.starts_with("http://") && !is_loopback(base_url) {
        text.push_str(
            "; note that a page served over https cannot call an http:// URL (mixed content): \
             use https for the server",
        );
    }
    text
}

/// The `Network` error for a request to `base_url` that got no response, with the
/// explanation of [`explain_network_error`].
pub fn network_error(kind: ProviderKind, base_url: &str) -> LlmError {
    LlmError::Network {
        provider: kind.name(),
        message: explain_network_error(kind, base_url),
    }
}

impl LlmError {
    /// Advice for a person, kept out of the message so the message keeps the spec's format.
    /// `None` when there is nothing useful to add.
    pub fn hint(&self) -> Option<String> {
        match self {
            LlmError::Http {
                provider, status, ..
            } => {
                let kind = ProviderKind::parse(provider).ok();
                match status {
                    401 | 403 => Some(match kind {
                        Some(ProviderKind::Azure) => format!(
                            "check the apiKey for provider '{provider}' (a key of this Azure \
                             resource, from \"Keys and Endpoint\")"
                        ),
                        _ => format!(
                            "check the apiKey for provider '{provider}': it is missing, wrong, \
                             revoked or lacks access"
                        ),
                    }),
                    404 => Some(match kind {
                        Some(ProviderKind::Azure) => format!(
                            "check the deployment name and endpoint for provider '{provider}', \
                             and that its apiVersion exists"
                        ),
                        Some(ProviderKind::OpenAiCompatible) => format!(
                            "check the model name and the baseUrl for provider '{provider}' \
                             (OpenAI-style servers usually expect it to end in /v1)"
                        ),
                        _ => format!(
                            "check the model name (it may not exist or not be available to this \
                             key) and, if set, the baseUrl for provider '{provider}'"
                        ),
                    }),
                    429 => Some(format!(
                        "provider '{provider}' is rate limiting this key or its quota is used up: \
                         wait, lower the concurrency, or check the plan and billing"
                    )),
                    _ => None,
                }
            }
            LlmError::NotConfigured { provider, missing } => Some(format!(
                "set {missing} in the configuration of provider '{provider}'"
            )),
            LlmError::UnknownProvider { valid, .. } => {
                Some(format!("set the agent's provider to one of {valid}"))
            }
            LlmError::Blocked { .. } => Some(
                "the provider's safety filters stopped the reply: rephrase the message or adjust \
                 the provider's safety settings"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_is_200_chars_on_one_line() {
        let long = "é".repeat(300);
        assert_eq!(excerpt(&long).chars().count(), 200);
        assert_eq!(excerpt("  a\n\n b\tc  "), "a b c");
    }

    #[test]
    fn user_info_is_masked_in_urls_and_text() {
        assert_eq!(
            redact_userinfo("http://user:sk-KEY@host:8080/v1"),
            "http://***@host:8080/v1"
        );
        assert_eq!(
            redact_userinfo(
                "Failed to parse URL from https://sk-KEY@a.test/x?y=z@w and ftp://me@b"
            ),
            "Failed to parse URL from https://***@a.test/x?y=z@w and ftp://***@b"
        );
        // A quoted URL and a schemeless one (as validation quotes a bad baseUrl).
        assert_eq!(
            redact_userinfo("got 'http://u:p@h/v1'"),
            "got 'http://***@h/v1'"
        );
        assert_eq!(
            redact_url("u:sk-KEY@localhost:1234/v1"),
            "***@localhost:1234/v1"
        );
        assert_eq!(redact_url("http://k@h"), "http://***@h");
        // Nothing to mask: unchanged, an `@` in a path included.
        for plain in [
            "https://api.openai.com/v1",
            "https://h/users/a@b",
            "no url here",
            "",
        ] {
            assert_eq!(redact_userinfo(plain), plain);
        }
        assert!(!explain_network_error(
            ProviderKind::OpenAiCompatible,
            "http://u:sk-KEY@10.0.0.2/v1"
        )
        .contains("KEY"));
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("http://127.0.0.1:11434"));
        assert!(is_loopback("http://localhost:1234/v1"));
        assert!(is_loopback("http://[::1]:8080"));
        assert!(!is_loopback("http://192.168.1.5:11434"));
    }
}
