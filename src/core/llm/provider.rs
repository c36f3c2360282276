//! Which providers exist, how each is configured, and what "configured enough to call" means.
//!
//! Invariants: a [`ProviderConfig`] that passed [`ProviderConfig::validate`] has every field
//! its provider needs (blank strings count as missing), so encoding a request cannot fail on
//! configuration; and no `Debug` output ever contains the API key or an extra header's value.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
        Self::ALL.map(ProviderKind::as_str).join(", ")
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
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Replaces the provider's default base URL (a proxy, a local mock, a self-hosted server).
    /// For azure it replaces `endpoint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Azure only: the resource URL, `https://<resource>.openai.azure.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Azure only: the deployment name (Azure routes by deployment, not by model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<String>,
    /// Azure only: the `api-version` query parameter; default [`AZURE_API_VERSION`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Extra headers sent with every request, after the codec's own (so they may override).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// `Some(trimmed)` when the option holds a non-blank string.
fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

impl ProviderConfig {
    /// The API key, when one is set and not blank.
    pub fn api_key(&self) -> Option<&str> {
        present(&self.api_key)
    }

    /// Checks that every field `kind` needs is present. The error names the first missing field
    /// as it is spelled in JSON: `provider 'azure' is not configured: missing deployment`.
    ///
    /// openai, xai, anthropic, google: `apiKey`. azure: `apiKey`, `endpoint` (or `baseUrl`) and
    /// `deployment`. openai-compatible: `baseUrl`. ollama and custom: nothing.
    pub fn validate(&self, kind: ProviderKind) -> Result<(), LlmError> {
        let missing = |field: &str| {
            Err(LlmError::NotConfigured {
                provider: kind.as_str().to_string(),
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
        // A URL without its scheme (`localhost:1234/v1`) would fail later inside fetch with an
        // opaque error; say what is wrong now.
        for (field, value) in [("baseUrl", &self.base_url), ("endpoint", &self.endpoint)] {
            if let Some(url) = present(value) {
                let lower = url.to_ascii_lowercase();
                if !lower.starts_with("http://") && !lower.starts_with("https://") {
                    return missing(&format!(
                        "a {field} starting with http:// or https:// (got '{url}')"
                    ));
                }
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

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Extra headers often carry credentials too (a proxy token), so only their names show.
        let headers: BTreeMap<&str, &str> =
            self.headers.keys().map(|k| (k.as_str(), "***")).collect();
        f.debug_struct("ProviderConfig")
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("base_url", &self.base_url)
            .field("endpoint", &self.endpoint)
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
        assert_eq!(
            not_configured(ProviderKind::OpenAiCompatible, &schemeless),
            "provider 'openai-compatible' is not configured: missing a baseUrl starting with \
             http:// or https:// (got 'localhost:1234/v1')"
        );
        assert_eq!(not_configured(ProviderKind::Custom, &empty), "ok");
        assert_eq!(
            empty.resolved_base_url(ProviderKind::Ollama).as_deref(),
            Some(OLLAMA_BASE_URL)
        );
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
            headers: BTreeMap::from([("x-proxy-token".to_string(), "tok-secret".to_string())]),
            ..Default::default()
        };
        let shown = format!("{cfg:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("***"));
        assert!(shown.contains("x-proxy-token"));
    }
}
