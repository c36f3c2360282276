//! Which providers exist, how each is configured, and what "configured enough to call" means.
//!
//! Invariants: a [`ProviderConfig`] that passed [`ProviderConfig::validate`] has every field
//! its provider needs (blank strings count as missing), so encoding a request cannot fail on
//! configuration; and no `Debug` output ever contains the API key or an extra header's value.

use crate::core::vec_map::VecMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::http::redact_url;
use super::types::LlmError;

/// Default base URL of the OpenAI API (`baseUrl` replaces it, `/v1` included).
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Default base URL of the xAI API (`baseUrl` replaces it, `/v1` included).
pub const XAI_BASE_URL: &str = "https://api.x.ai/v1";
/// Default base URL of the Anthropic API; the codec appends `/v1/messages`, as the official
/// SDKs do, so a `baseUrl` override does not include `/v1`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// Default base URL of the Gemini API; the codec appends `/v1beta/models/...`.
pub const GOOGLE_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// Default base URL of a local Ollama. `127.0.0.1` rather than `localhost`: Ollama listens on
/// IPv4 by default and `localhost` may resolve to `::1` first.
pub const OLLAMA_BASE_URL: &str = "http://127.0.0.1:11434";
/// Default Azure OpenAI `api-version`: the newest GA (non-preview) version that supports
/// streamed usage (`stream_options.include_usage`) and `max_completion_tokens`.
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// An LLM provider the engine can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProviderKind {
    OpenAi,
    Azure,
    Xai,
    OpenAiCompatible,
    Anthropic,
    Google,
    Ollama,
    /// A JavaScript function supplied by the application; no HTTP wire format.
    Custom,
}

impl ProviderKind {
    /// Every provider, in the order they are listed to a user.
    pub const ALL: [ProviderKind; 8] = [
        ProviderKind::OpenAi,
        ProviderKind::Azure,
        ProviderKind::Xai,
        ProviderKind::OpenAiCompatible,
        ProviderKind::Anthropic,
        ProviderKind::Google,
        ProviderKind::Ollama,
        ProviderKind::Custom,
    ];

    /// The provider's name as agents write it and as errors print it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Azure => "azure",
            ProviderKind::Xai => "xai",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Google => "google",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Custom => "custom",
        }
    }

    /// [`ProviderKind::as_str`] as an owned string, for an error's `provider`: one call where
    /// a copy of the name was inlined at every error.
    #[inline(never)]
    pub fn name(self) -> String {
        self.as_str().to_string()
    }

    /// Parses a provider name (surrounding whitespace and ASCII case are ignored). An unknown
    /// name is `LlmError::UnknownProvider`, whose message lists the valid names.
    pub fn parse(name: &str) -> Result<Self, LlmError> {
        let wanted = name.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| LlmError::UnknownProvider {
                provider: name.to_string(),
                valid: Self::valid_names(),
            })
    }

    /// `openai, azure, xai, ...`: the valid names for error messages.
    pub fn valid_names() -> String {
        crate::core::join(&Self::ALL.map(ProviderKind::as_str), ", ")
    }

    /// Whether the provider speaks the OpenAI chat-completions wire format.
    pub fn is_openai_style(self) -> bool {
        matches!(
            self,
            ProviderKind::OpenAi
                | ProviderKind::Azure
                | ProviderKind::Xai
                | ProviderKind::OpenAiCompatible
        )
    }

    /// The base URL used when the configuration gives none (`None`: the provider has no
    /// public default and must be configured).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some(OPENAI_BASE_URL),
            ProviderKind::Xai => Some(XAI_BASE_URL),
            ProviderKind::Anthropic => Some(ANTHROPIC_BASE_URL),
            ProviderKind::Google => Some(GOOGLE_BASE_URL),
            ProviderKind::Ollama => Some(OLLAMA_BASE_URL),
            ProviderKind::Azure | ProviderKind::OpenAiCompatible | ProviderKind::Custom => None,
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = LlmError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// How to reach one provider. Field names are camelCase in JSON; unknown fields are rejected so
/// that a typo (`apikey`) is an error instead of a silently missing key.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Replaces the provider's default base URL (a proxy, a local mock, a self-hosted server).
    /// For azure it replaces `endpoint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Azure only: the resource URL, `https://<resource>.openai.azure.com`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Azure only: the deployment name (Azure routes by deployment, not by model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment: Option<String>,
    /// Azure only: the `api-version` query parameter; default [`AZURE_API_VERSION`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Extra headers sent with every request, after the codec's own (so they may override).
    #[serde(skip_serializing_if = "VecMap::is_empty")]
    pub headers: VecMap<String, String>,
}

// Decoding (see `crate::core::json`): unknown fields are refused, so a typo (`apikey`) is an
// error naming it.
crate::core::json::from_json_struct!(ProviderConfig, deny, {
    api_key: "apiKey" opt,
    base_url: "baseUrl" opt,
    endpoint: "endpoint" opt,
    deployment: "deployment" opt,
    api_version: "apiVersion" opt,
    headers: "headers" opt,
});

crate::core::json::deserialize_via_json!(ProviderConfig);

/// `Some(trimmed)` when the option holds a non-blank string.
fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl ProviderConfig {
    /// The API key, when one is set and not blank.
    pub fn api_key(&self) -> Option<&str> {
        present(&self.api_key)
    }

    /// Checks that every value can be sent, then that every field `kind` needs is present.
    ///
    /// Values first ([`ProviderConfig::check_values`], code `invalid_input`): a key or header
    /// that fetch would refuse must fail here, with its field and position, not at the first
    /// call. Then presence: the error names the first missing field as it is spelled in JSON:
    /// `provider 'azure' is not configured: missing deployment`.
    ///
    /// openai, xai, anthropic, google: `apiKey`. azure: `apiKey`, `endpoint` (or `baseUrl`) and
    /// `deployment`. openai-compatible: `baseUrl`. ollama and custom: nothing.
    pub fn validate(&self, kind: ProviderKind) -> Result<(), LlmError> {
        self.check_values(kind)?;
        let missing = |field: &str| {
            Err(LlmError::NotConfigured {
                provider: kind.name(),
                missing: field.to_string(),
            })
        };
        match kind {
            ProviderKind::OpenAi
            | ProviderKind::Xai
            | ProviderKind::Anthropic
            | ProviderKind::Google => {
                if self.api_key().is_none() {
                    return missing("apiKey");
                }
            }
            ProviderKind::Azure => {
                if self.api_key().is_none() {
                    return missing("apiKey");
                }
                if present(&self.endpoint).is_none() && present(&self.base_url).is_none() {
                    return missing("endpoint");
                }
                if present(&self.deployment).is_none() {
                    return missing("deployment");
                }
            }
            ProviderKind::OpenAiCompatible => {
                if present(&self.base_url).is_none() {
                    return missing("baseUrl");
                }
            }
            ProviderKind::Ollama | ProviderKind::Custom => {}
        }
        Ok(())
    }

    /// Checks that every value that goes into a request can be sent by `fetch`, which throws
    /// on an illegal header and would otherwise fail every call of the provider:
    ///
    /// - `apiKey`: printable ASCII only (U+0020 to U+007E). Keys are ASCII; anything else is a
    ///   paste accident (a zero-width space, a smart quote, a line break) and would either be
    ///   refused by fetch or sent as a different key.
    /// - `headers`: each name an HTTP token (letters, digits and ``!#$%&'*+-.^_`|~``), each
    ///   value free of CR, LF and NUL and of characters above U+00FF (header values are bytes).
    /// - `baseUrl`, `endpoint`: `http://` or `https://`, a host, no whitespace or control
    ///   characters.
    ///
    /// The error (code `invalid_input`) names the field and the offending character's position
    /// (1-based, in characters) and code point; it never quotes a key or a header value, and a
    /// quoted URL has its user-info masked.
    pub fn check_values(&self, kind: ProviderKind) -> Result<(), LlmError> {
        let invalid = |field: String, problem: String| {
            Err(LlmError::InvalidConfig {
                provider: kind.name(),
                field,
                problem,
            })
        };
        if let Some(key) = self.api_key() {
            if let Some((pos, c)) = first_bad_char(key, |c| (' '..='~').contains(&c)) {
                return invalid(
                    "apiKey".into(),
                    format!(
                        "has {} at position {pos}, which an API key cannot contain (only printable ASCII can be sent in an HTTP header): copy the key again without it",
                        describe_char(c)
                    ),
                );
            }
        }
        for (name, value) in &self.headers {
            let trimmed = name.trim();
            if trimmed.is_empty() {
                continue; // an empty row of a settings form: not sent (see encode_request)
            }
            let field = format!("headers[{name:?}]");
            if let Some((pos, c)) = first_bad_char(trimmed, is_token_char) {
                return invalid(
                    field,
                    format!(
                        "is not a valid HTTP header name: {} at position {pos}; a name may hold only letters, digits and !#$%&'*+-.^_`|~",
                        describe_char(c)
                    ),
                );
            }
            // fetch strips leading and trailing HTTP whitespace before checking a value.
            let value = value.trim_matches([' ', '\t', '\r', '\n']);
            if let Some((pos, c)) =
                first_bad_char(value, |c| c <= '\u{ff}' && !matches!(c, '\0' | '\r' | '\n'))
            {
                return invalid(
                    field,
                    format!(
                        "has {} at position {pos} of its value, which an HTTP header cannot carry (no line breaks or NUL, nothing above U+00FF)",
                        describe_char(c)
                    ),
                );
            }
        }
        for (field, value) in [("baseUrl", &self.base_url), ("endpoint", &self.endpoint)] {
            let Some(url) = present(value) else { continue };
            let lower = url.to_ascii_lowercase();
            let rest = ["http://", "https://"]
                .iter()
                .find_map(|scheme| lower.strip_prefix(scheme));
            let Some(rest) = rest else {
                // `localhost:1234/v1` would fail inside fetch with an opaque error.
                return invalid(
                    field.into(),
                    format!(
                        "must start with http:// or https:// (got '{}')",
                        redact_url(url)
                    ),
                );
            };
            if let Some((pos, c)) = first_bad_char(url, |c| !is_invisible(c)) {
                return invalid(
                    field.into(),
                    format!(
                        "has {} at position {pos}, which a URL cannot contain: remove it",
                        describe_char(c)
                    ),
                );
            }
            let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
            if authority.as_bytes().contains(&b'@') {
                // fetch refuses a URL with credentials in every runtime, so it could never
                // work; and the key would sit in every copy of the URL.
                return invalid(
                    field.into(),
                    format!(
                        "must not contain user-info (user:password@), which fetch refuses: send \
                         credentials with apiKey or headers instead (got '{}')",
                        redact_url(url)
                    ),
                );
            }
            if authority.is_empty() || authority.starts_with(':') {
                return invalid(
                    field.into(),
                    format!("has no host (got '{}')", redact_url(url)),
                );
            }
        }
        Ok(())
    }

    /// The base URL requests go to, without a trailing `/`: `baseUrl` when set, else (azure)
    /// `endpoint`, else the provider's default. `None` only when the config would not validate.
    pub fn resolved_base_url(&self, kind: ProviderKind) -> Option<String> {
        let chosen = present(&self.base_url)
            .or_else(|| {
                if kind == ProviderKind::Azure {
                    present(&self.endpoint)
                } else {
                    None
                }
            })
            .or_else(|| kind.default_base_url())?;
        Some(chosen.trim_end_matches('/').to_string())
    }

    /// The Azure deployment, trimmed.
    pub fn deployment(&self) -> Option<&str> {
        present(&self.deployment)
    }

    /// The Azure `api-version`: the configured one or [`AZURE_API_VERSION`].
    pub fn api_version(&self) -> &str {
        present(&self.api_version).unwrap_or(AZURE_API_VERSION)
    }
}

/// The first character of `s` that `ok` refuses, with its 1-based position in characters.
fn first_bad_char(s: &str, ok: impl Fn(char) -> bool) -> Option<(usize, char)> {
    s.chars()
        .enumerate()
        .find(|(_, c)| !ok(*c))
        .map(|(i, c)| (i + 1, c))
}

/// `U+200B (zero-width space)`: a character shown by its code point, since the offending ones
/// are mostly invisible; named when it is one of the usual paste accidents.
fn describe_char(c: char) -> String {
    let name = match c {
        '\u{200b}' => Some("zero-width space"),
        '\u{200c}' => Some("zero-width non-joiner"),
        '\u{200d}' => Some("zero-width joiner"),
        '\u{feff}' => Some("byte order mark"),
        '\u{a0}' => Some("no-break space"),
        '\u{2018}' | '\u{2019}' => Some("curly single quote"),
        '\u{201c}' | '\u{201d}' => Some("curly double quote"),
        '\u{2013}' | '\u{2014}' => Some("dash"),
        '\u{2026}' => Some("ellipsis"),
        '\r' => Some("carriage return"),
        '\n' => Some("line feed"),
        '\t' => Some("tab"),
        '\0' => Some("NUL"),
        ' ' => Some("space"),
        _ => None,
    };
    let code = format!("U+{:04X}", u32::from(c));
    match name {
        Some(n) => format!("{code} ({n})"),
        None if c.is_control() || !c.is_ascii() => code,
        None => format!("{code} '{c}'"),
    }
}

/// Whitespace, control and invisible formatting characters (zero-width, bidi controls, BOM):
/// a URL cannot hold them, and they are what a copy and paste adds unseen.
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// An HTTP token character (RFC 9110 `tchar`): what a header name is made of.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || (c.is_ascii() && b"!#$%&'*+-.^_`|~".contains(&(c as u8)))
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Extra headers often carry credentials too (a proxy token), so only their names show.
        let headers: VecMap<&str, &str> =
            self.headers.keys().map(|k| (k.as_str(), "***")).collect();
        f.debug_struct("ProviderConfig")
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("base_url", &self.base_url.as_deref().map(redact_url))
            .field("endpoint", &self.endpoint.as_deref().map(redact_url))
            .field("deployment", &self.deployment)
            .field("api_version", &self.api_version)
            .field("headers", &headers)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_configured(kind: ProviderKind, cfg: &ProviderConfig) -> String {
        match cfg.validate(kind) {
            Err(e) => {
                assert_eq!(e.code(), "provider_not_configured");
                e.to_string()
            }
            Ok(()) => String::from("ok"),
        }
    }

    #[test]
    fn parse_names_and_unknown_lists_valid_ones() {
        for k in ProviderKind::ALL {
            assert_eq!(ProviderKind::parse(k.as_str()), Ok(k));
        }
        assert_eq!(
            ProviderKind::parse(" Anthropic "),
            Ok(ProviderKind::Anthropic)
        );
        let err = ProviderKind::parse("opnai").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "unknown provider 'opnai': use one of openai, azure, xai, openai-compatible, \
                 anthropic, google, ollama, custom"
            )
        );
    }

    #[test]
    fn validation_names_the_missing_field() {
        let empty = ProviderConfig::default();
        assert_eq!(
            not_configured(ProviderKind::Anthropic, &empty),
            "provider 'anthropic' is not configured: missing apiKey"
        );
        let blank_key = ProviderConfig {
            api_key: Some("  ".into()),
            ..Default::default()
        };
        assert_eq!(
            not_configured(ProviderKind::OpenAi, &blank_key),
            "provider 'openai' is not configured: missing apiKey"
        );
        let mut azure = ProviderConfig {
            api_key: Some("k".into()),
            ..Default::default()
        };
        assert_eq!(
            not_configured(ProviderKind::Azure, &azure),
            "provider 'azure' is not configured: missing endpoint"
        );
        azure.endpoint = Some("https://r.openai.azure.com/".into());
        assert_eq!(
            not_configured(ProviderKind::Azure, &azure),
            "provider 'azure' is not configured: missing deployment"
        );
        azure.deployment = Some("gpt4o".into());
        assert_eq!(not_configured(ProviderKind::Azure, &azure), "ok");
        assert_eq!(
            azure.resolved_base_url(ProviderKind::Azure).as_deref(),
            Some("https://r.openai.azure.com")
        );
        assert_eq!(azure.api_version(), AZURE_API_VERSION);
        assert_eq!(
            not_configured(ProviderKind::OpenAiCompatible, &empty),
            "provider 'openai-compatible' is not configured: missing baseUrl"
        );
        assert_eq!(not_configured(ProviderKind::Ollama, &empty), "ok");
        let schemeless = ProviderConfig {
            base_url: Some("localhost:1234/v1".into()),
            ..Default::default()
        };
        let err = schemeless.validate(ProviderKind::OpenAiCompatible).err();
        assert_eq!(err.as_ref().map(LlmError::code), Some("invalid_input"));
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "invalid settings for provider 'openai-compatible': baseUrl must start with \
                 http:// or https:// (got 'localhost:1234/v1')"
            )
        );
        assert_eq!(not_configured(ProviderKind::Custom, &empty), "ok");
        assert_eq!(
            empty.resolved_base_url(ProviderKind::Ollama).as_deref(),
            Some(OLLAMA_BASE_URL)
        );
    }

    /// The message of `cfg.validate(kind)` when it is an `invalid_input` error.
    fn invalid(kind: ProviderKind, cfg: &ProviderConfig) -> Option<String> {
        match cfg.validate(kind) {
            Err(e) if e.code() == "invalid_input" => Some(e.to_string()),
            _ => None,
        }
    }

    fn with_key(key: &str) -> ProviderConfig {
        ProviderConfig {
            api_key: Some(key.into()),
            ..Default::default()
        }
    }

    fn with_header(name: &str, value: &str) -> ProviderConfig {
        ProviderConfig {
            headers: VecMap::from([(name.to_string(), value.to_string())]),
            ..Default::default()
        }
    }

    #[test]
    fn a_key_fetch_would_refuse_is_invalid_input_naming_the_position_not_the_key() {
        let secret = "sk-proj-SECRET";
        for (bad, pos, shown) in [
            (format!("{secret}\u{200b}"), 15, "U+200B (zero-width space)"),
            (
                format!("\u{201c}{secret}\u{201d}"),
                1,
                "U+201C (curly double quote)",
            ),
            (format!("sk-\u{e9}{secret}"), 4, "U+00E9"),
            (format!("sk-{secret}\u{1f511}x"), 18, "U+1F511"),
            (
                format!("sk-a\r\nX-Injected: 1{secret}"),
                5,
                "U+000D (carriage return)",
            ),
            (format!("sk-a\0{secret}"), 5, "U+0000 (NUL)"),
            (format!("sk-a\t{secret}"), 5, "U+0009 (tab)"),
        ] {
            let msg = invalid(ProviderKind::OpenAi, &with_key(&bad)).unwrap_or_default();
            assert_eq!(
                msg,
                format!(
                    "invalid settings for provider 'openai': apiKey has {shown} at position \
                     {pos}, which an API key cannot contain (only printable ASCII can be sent in \
                     an HTTP header): copy the key again without it"
                )
            );
            assert!(!msg.contains("SECRET"), "{msg}");
        }
        // Surrounding whitespace (a trailing newline from a paste) is trimmed, not refused.
        assert_eq!(with_key(" sk-ok\n").validate(ProviderKind::OpenAi), Ok(()));
        // Checked whatever the provider, also where the key is optional.
        assert!(invalid(ProviderKind::Ollama, &with_key("k\u{2019}")).is_some());
    }

    #[test]
    fn header_names_must_be_tokens_and_values_header_safe() {
        let msg = invalid(ProviderKind::Ollama, &with_header("X Foo", "1"));
        assert_eq!(
            msg.as_deref(),
            Some(
                "invalid settings for provider 'ollama': headers[\"X Foo\"] is not a valid HTTP \
                 header name: U+0020 (space) at position 2; a name may hold only letters, digits \
                 and !#$%&'*+-.^_`|~"
            )
        );
        for name in ["X:Foo", "X-\u{e9}", "a\nb", "(x)", "x@y"] {
            assert!(
                invalid(ProviderKind::Ollama, &with_header(name, "1")).is_some(),
                "{name:?}"
            );
        }
        let msg = invalid(
            ProviderKind::Ollama,
            &with_header("X-Token", "tok-SECRET\u{2026}"),
        );
        assert_eq!(
            msg.as_deref(),
            Some(
                "invalid settings for provider 'ollama': headers[\"X-Token\"] has U+2026 \
                 (ellipsis) at position 11 of its value, which an HTTP header cannot carry (no \
                 line breaks or NUL, nothing above U+00FF)"
            )
        );
        for value in ["a\r\nb", "a\nb", "a\0b", "\u{100}"] {
            assert!(
                invalid(ProviderKind::Ollama, &with_header("X-A", value)).is_some(),
                "{value:?}"
            );
        }
        // What fetch accepts is accepted: Latin-1, inner spaces, tabs, surrounding whitespace,
        // every token character; a blank name is an empty form row and is skipped.
        for (name, value) in [
            ("X-Title", "Caf\u{e9} d\u{e9}mo"),
            ("HTTP-Referer", " https://x.test\t\n"),
            ("!#$%&'*+-.^_`|~09azAZ", "v"),
            ("  ", "\u{200b}"),
        ] {
            assert_eq!(
                with_header(name, value).validate(ProviderKind::Ollama),
                Ok(()),
                "{name:?}"
            );
        }
    }

    #[test]
    fn urls_must_be_http_with_a_host_and_never_echo_user_info() {
        let url = |u: &str| ProviderConfig {
            base_url: Some(u.into()),
            ..Default::default()
        };
        let kind = ProviderKind::OpenAiCompatible;
        assert_eq!(
            invalid(kind, &url("http://127.0.0.1:1234/v1 x")).as_deref(),
            Some(
                "invalid settings for provider 'openai-compatible': baseUrl has U+0020 (space) \
                 at position 25, which a URL cannot contain: remove it"
            )
        );
        assert_eq!(
            invalid(kind, &url("https:///v1")).as_deref(),
            Some("invalid settings for provider 'openai-compatible': baseUrl has no host (got 'https:///v1')")
        );
        let msg = invalid(kind, &url("ftp://user:sk-SECRET@host/v1")).unwrap_or_default();
        assert!(msg.contains("(got 'ftp://***@host/v1')"), "{msg}");
        assert_eq!(
            invalid(kind, &url("http://user:sk-SECRET@10.0.0.2/v1")).as_deref(),
            Some(
                "invalid settings for provider 'openai-compatible': baseUrl must not contain \
                 user-info (user:password@), which fetch refuses: send credentials with apiKey \
                 or headers instead (got 'http://***@10.0.0.2/v1')"
            )
        );
        let msg = invalid(kind, &url("user:sk-SECRET@host:1234/v1")).unwrap_or_default();
        assert!(msg.contains("(got '***@host:1234/v1')"), "{msg}");
        let endpoint = ProviderConfig {
            api_key: Some("k".into()),
            endpoint: Some("https://r.openai.azure.com/\u{200b}".into()),
            deployment: Some("d".into()),
            ..Default::default()
        };
        assert!(invalid(ProviderKind::Azure, &endpoint)
            .unwrap_or_default()
            .starts_with("invalid settings for provider 'azure': endpoint has U+200B"));
        assert_eq!(url("HTTPS://Host.test:8443/v1").validate(kind), Ok(()));
        assert_eq!(url("http://10.0.0.2/v1/@scope").validate(kind), Ok(()));
    }

    #[test]
    fn serde_is_camel_case_and_rejects_unknown_fields() {
        let cfg: Result<ProviderConfig, _> = serde_json::from_str(
            r#"{"apiKey":"k","baseUrl":"http://127.0.0.1:9/v1","apiVersion":"2025-01-01",
                "headers":{"X-Title":"demo"}}"#,
        );
        let cfg = cfg.ok();
        assert_eq!(cfg.as_ref().and_then(|c| c.api_key()), Some("k"));
        assert_eq!(
            cfg.as_ref().map(|c| c.api_version().to_string()).as_deref(),
            Some("2025-01-01")
        );
        let typo: Result<ProviderConfig, _> = serde_json::from_str(r#"{"apikey":"k"}"#);
        assert!(typo
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .contains("apikey"));
    }

    #[test]
    fn debug_never_prints_the_key() {
        let cfg = ProviderConfig {
            api_key: Some("sk-very-secret".into()),
            base_url: Some("https://me:also-secret@proxy.test/v1".into()),
            headers: VecMap::from([("x-proxy-token".to_string(), "tok-secret".to_string())]),
            ..Default::default()
        };
        let shown = format!("{cfg:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("***"));
        assert!(shown.contains("x-proxy-token"));
    }
}
