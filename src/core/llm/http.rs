//! A plain HTTP request value: what a codec wants sent, with no opinion on how.
//!
//! Codecs build an [`HttpRequest`]; the web transport turns it into a `fetch` call. The type
//! carries secrets (API keys in headers), so its `Debug` masks every credential-looking header:
//! a request may be logged, a key must never be.

use crate::core::contains;
use std::fmt;

/// One HTTP request to send. Header names are lowercase (fetch lowercases them anyway, and
/// overriding a header from the provider configuration compares names case-insensitively).
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `POST` for every provider today; a string so the transport passes it through unchanged.
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The JSON body, already serialised.
    pub body: String,
}

impl HttpRequest {
    /// The value of the first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets `name` to `value`, replacing every header of that name (case-insensitive), so that
    /// a configured header really overrides the codec's default instead of being sent twice.
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
    }
}

/// Whether a header may carry a credential and must be masked when printed.
pub(crate) fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "authorization"
        || n == "proxy-authorization"
        || n == "cookie"
        || contains(&n, "key")
        || contains(&n, "token")
        || contains(&n, "secret")
        || contains(&n, "auth")
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                let shown = if is_sensitive_header(n) {
                    "***"
                } else {
                    v.as_str()
                };
                (n.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &redact_userinfo(&self.url))
            .field("headers", &headers)
            .field("body", &self.body)
            .finish()
    }
}

/// `text` with the user-info of every URL in it masked: `http://user:KEY@host/v1` →
/// `http://***@host/v1`. A key put in a `baseUrl` must not come back in an error message, an
/// event or a debug print (fetch's own errors quote the URL). The authority of a URL ends at
/// `/`, `?`, `#` (as URL parsers read it), whitespace or a quote; its last `@` ends the
/// user-info.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = crate::core::find(rest, "://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = authority_end(tail);
        mask(&tail[..end], &mut out);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// One URL with its user-info masked, also when it has no scheme (`user:KEY@host:1234`, as a
/// schemeless `baseUrl` is quoted back to the user).
pub fn redact_url(url: &str) -> String {
    if contains(url, "://") {
        return redact_userinfo(url);
    }
    let mut out = String::with_capacity(url.len());
    let end = authority_end(url);
    mask(&url[..end], &mut out);
    out.push_str(&url[end..]);
    out
}

fn authority_end(s: &str) -> usize {
    s.find(|c: char| {
        matches!(
            c,
            '/' | '?' | '#' | '\\' | '\'' | '"' | '`' | '<' | '>' | '(' | ')'
        ) || c.is_whitespace()
    })
    .unwrap_or(s.len())
}

fn mask(authority: &str, out: &mut String) {
    match crate::core::rfind(authority, b'@') {
        Some(at) => {
            out.push_str("***");
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_masks_credentials_and_set_header_replaces() {
        let mut r = HttpRequest {
            method: "POST".into(),
            url: "https://x.test".into(),
            headers: vec![
                ("authorization".into(), "Bearer sk-secret".into()),
                ("x-goog-api-key".into(), "g-secret".into()),
                ("content-type".into(), "application/json".into()),
            ],
            body: "{}".into(),
        };
        let shown = format!("{r:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("application/json"));
        r.set_header("Content-Type", "text/plain");
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.headers.len(), 3);
    }
}
