//! Streaming HTTP over the global `fetch`: the response body is read incrementally from
//! `Response.body` and handed over chunk by chunk, so a streamed LLM reply reaches the engine
//! as it arrives. The request is bound to an optional `AbortSignal`: aborting it cancels the
//! request for real (the server sees the connection close).
//!
//! Nothing here throws into JavaScript: building the request (`Headers.set`, `new Request`)
//! and `fetch` itself report their failures as [`FetchError`]s, so a bad header or URL ends
//! one call with an error instead of killing the world (gloo-net's builder, used before,
//! `unwrap_throw`s on an illegal header). Error texts are JavaScript's own, except that a
//! header value is never quoted (it may be a key) and URLs have their user-info masked.
//!
//! The host side is two functions of the custom provider's snippet (`awwFetch`, `awwRead`):
//! building the request, sending it and reading its head is one call into the host, and a
//! read of the body one more per chunk, where each header, each `RequestInit` field and each
//! read result's field was a call (and a glue function) of its own.

use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader};

use crate::core::json_write::write_str;
use crate::core::llm::errors::redact_userinfo;
use crate::core::llm::retry::parse_retry_after_ms;
use crate::web::custom_provider::{read, send};

/// What a request needs; the provider codecs build these.
#[derive(Debug, Clone)]
pub struct HttpCall<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub body: Option<&'a str>,
}

/// The response line and the headers the engine cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub status_text: String,
    pub retry_after: Option<String>,
    /// OpenAI's `retry-after-ms`: a more precise Retry-After, in milliseconds.
    pub retry_after_ms: Option<u64>,
    pub content_type: Option<String>,
}

impl ResponseHead {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Why a fetch failed before or while reading the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// No response: refused connection, DNS, CORS (browsers hide which), or a cut connection.
    #[error("network error: {0}")]
    Network(String),
    /// The signal was aborted.
    #[error("aborted")]
    Aborted,
    /// The request could not be built (bad URL, bad header value).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

/// The error of a `[kind, text]` the snippet's fetch functions reject with (see `awwFetch`):
/// a header `Headers.set` refuses (named, its value never quoted), a request `new Request`
/// refuses, an abort, or no response (JavaScript's message, with URLs' user-info masked).
fn failure(e: &JsValue) -> FetchError {
    let parts: &js_sys::Array = e.unchecked_ref();
    let text = parts.get(1).as_string().unwrap_or_default();
    match parts.get(0).as_f64() {
        Some(0.0) => FetchError::InvalidRequest(format!(
            "header {text:?} has a name or value that fetch refuses (an HTTP header name is a \
             token; a value has no line breaks, NUL or characters above U+00FF)"
        )),
        Some(1.0) => FetchError::InvalidRequest(redact_userinfo(&text)),
        Some(2.0) => FetchError::Aborted,
        _ => FetchError::Network(redact_userinfo(&text)),
    }
}

/// Whether the body reader should go on after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOn {
    /// Read the next chunk.
    More,
    /// The consumer has what it needs (the reply's end marker, or an error): stop reading and
    /// cancel the body. Reading again after an abort can hang for good in Node 20's fetch when
    /// the body's end has already arrived, so the reader is never read again.
    Stop,
}

/// Sends `call` and streams the body into `on_bytes`, returning the response head once the body
/// is fully read. For a non-2xx status the body is still streamed to `on_bytes` (callers keep an
/// excerpt for the error). `on_head` sees the head before the first body byte.
pub async fn fetch_streaming(
    call: &HttpCall<'_>,
    signal: Option<&AbortSignal>,
    on_head: &mut dyn FnMut(&ResponseHead),
    on_bytes: &mut dyn FnMut(&[u8]),
) -> Result<ResponseHead, FetchError> {
    fetch_streaming_until(call, signal, on_head, &mut |bytes| {
        on_bytes(bytes);
        ReadOn::More
    })
    .await
}

/// [`fetch_streaming`] whose consumer can stop the reading: after [`ReadOn::Stop`] the body is
/// cancelled (the connection released) and the head is returned at once.
pub async fn fetch_streaming_until(
    call: &HttpCall<'_>,
    signal: Option<&AbortSignal>,
    on_head: &mut dyn FnMut(&ResponseHead),
    on_bytes: &mut dyn FnMut(&[u8]) -> ReadOn,
) -> Result<ResponseHead, FetchError> {
    let method = call.method.to_ascii_uppercase();
    if !matches!(method.as_str(), "GET" | "POST" | "PUT" | "DELETE") {
        return Err(FetchError::InvalidRequest(format!(
            "unsupported method {method}"
        )));
    }
    let mut headers = String::from("[");
    for (i, (name, value)) in call.headers.iter().enumerate() {
        headers.push_str(if i > 0 { ",[" } else { "[" });
        write_str(&mut headers, name);
        headers.push(',');
        write_str(&mut headers, value);
        headers.push(']');
    }
    headers.push(']');
    let undefined = JsValue::UNDEFINED;
    let signal_js: &JsValue = signal.map_or(&undefined, |s| s.as_ref());
    let sent = send(&method, call.url, &headers, call.body, signal_js).map_err(|e| failure(&e))?;
    let head = JsFuture::from(sent).await.map_err(|e| failure(&e))?;
    let head: js_sys::Array = head.unchecked_into();
    let text = |i: u32| head.get(i).as_string();
    let status = head.get(0).as_f64().unwrap_or_default() as u16;
    let reader = head.get(5);
    let head = ResponseHead {
        status,
        status_text: text(1).unwrap_or_default(),
        retry_after: text(2),
        retry_after_ms: text(3).and_then(|v| parse_retry_after_ms(&v)),
        content_type: text(4),
    };
    on_head(&head);

    if reader.is_undefined() {
        return Ok(head);
    }
    // One buffer for every read (a streamed reply is hundreds of reads of ~16 KB in Node).
    let mut bytes = Vec::new();
    loop {
        let chunk = read(&reader, signal_js).map_err(|e| failure(&e))?;
        let chunk = JsFuture::from(chunk).await.map_err(|e| failure(&e))?;
        if chunk.is_undefined() {
            break;
        }
        let array: Uint8Array = chunk.unchecked_into();
        bytes.resize(array.length() as usize, 0);
        array.copy_to(&mut bytes);
        if on_bytes(&bytes) == ReadOn::Stop {
            // Release the connection without waiting for the cancellation to settle; the
            // JsFuture handles a rejection, so none goes unhandled.
            let reader: &ReadableStreamDefaultReader = reader.unchecked_ref();
            drop(JsFuture::from(reader.cancel()));
            break;
        }
    }
    Ok(head)
}
