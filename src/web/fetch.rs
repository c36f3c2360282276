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

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortSignal, Headers, ReadableStreamDefaultReader, ReadableStreamReadResult, Request,
    RequestInit, Response,
};

use crate::core::llm::errors::redact_userinfo;
use crate::core::llm::retry::parse_retry_after_ms;

#[wasm_bindgen]
extern "C" {
    /// The global `fetch` (a window's, a worker's, Node's, Deno's, workerd's): bound as a
    /// global, never through `window()`, so the same code runs in every runtime. `catch`: a
    /// synchronous throw becomes an `Err`.
    #[wasm_bindgen(js_name = fetch, catch)]
    fn global_fetch(request: &Request) -> Result<Promise, JsValue>;
}

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

fn js_error_text(value: &JsValue) -> (String, String) {
    let name = js_sys::Reflect::get(value, &JsValue::from_str("name"))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    let message = js_sys::Reflect::get(value, &JsValue::from_str("message"))
        .ok()
        .and_then(|v| v.as_string())
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "unknown error".to_string());
    (name, redact_userinfo(&message))
}

fn classify(value: &JsValue, signal: Option<&AbortSignal>) -> FetchError {
    let (name, message) = js_error_text(value);
    if name == "AbortError" || signal.is_some_and(|s| s.aborted()) {
        FetchError::Aborted
    } else {
        FetchError::Network(message)
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

/// The `Request` for `call`, or why it cannot be made. A header that `Headers.set` refuses is
/// named, its value never quoted.
fn build_request(call: &HttpCall<'_>, signal: Option<&AbortSignal>) -> Result<Request, FetchError> {
    let headers = Headers::new().map_err(|e| FetchError::InvalidRequest(js_error_text(&e).1))?;
    for (name, value) in call.headers {
        if headers.set(name, value).is_err() {
            return Err(FetchError::InvalidRequest(format!(
                "header {name:?} has a name or value that fetch refuses (an HTTP header name is \
                 a token; a value has no line breaks, NUL or characters above U+00FF)"
            )));
        }
    }
    let init = RequestInit::new();
    init.set_method(call.method);
    init.set_headers(&headers);
    if let Some(body) = call.body {
        init.set_body(&JsValue::from_str(body));
    }
    if let Some(signal) = signal {
        init.set_signal(Some(signal));
    }
    Request::new_with_str_and_init(call.url, &init)
        .map_err(|e| FetchError::InvalidRequest(js_error_text(&e).1))
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
    let request = build_request(
        &HttpCall {
            method: &method,
            ..call.clone()
        },
        signal,
    )?;
    let promise = global_fetch(&request).map_err(|e| classify(&e, signal))?;
    let response: Response = JsFuture::from(promise)
        .await
        .map_err(|e| classify(&e, signal))?
        .dyn_into()
        .map_err(|_| FetchError::Network("fetch did not return a Response".into()))?;
    let header = |name: &str| response.headers().get(name).ok().flatten();
    let head = ResponseHead {
        status: response.status(),
        status_text: response.status_text(),
        retry_after: header("retry-after"),
        retry_after_ms: header("retry-after-ms").and_then(|v| parse_retry_after_ms(&v)),
        content_type: header("content-type"),
    };
    on_head(&head);

    let Some(body) = response.body() else {
        return Ok(head);
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    // One buffer for every read (a streamed reply is hundreds of reads of ~16 KB in Node).
    let mut bytes = Vec::new();
    loop {
        let result = JsFuture::from(reader.read())
            .await
            .map_err(|e| classify(&e, signal))?;
        let result: ReadableStreamReadResult = result.unchecked_into();
        if result.get_done().unwrap_or(true) {
            break;
        }
        let chunk = result.get_value();
        if let Some(array) = chunk.dyn_ref::<Uint8Array>() {
            bytes.resize(array.length() as usize, 0);
            array.copy_to(&mut bytes);
            if on_bytes(&bytes) == ReadOn::Stop {
                // Release the connection without waiting for the cancellation to settle; the
                // JsFuture handles a rejection, so none goes unhandled.
                drop(JsFuture::from(reader.cancel()));
                break;
            }
        }
    }
    Ok(head)
}
