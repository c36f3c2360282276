//! Streaming HTTP over the global `fetch`: the response body is read incrementally from
//! `Response.body` and handed over chunk by chunk, so a streamed LLM reply reaches the engine
//! as it arrives. The request is bound to an optional `AbortSignal`: aborting it cancels the
//! request for real (the server sees the connection close).

use gloo_net::http::{Method, RequestBuilder};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, ReadableStreamReadResult};

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
    (name, message)
}

fn classify(value: &JsValue, signal: Option<&AbortSignal>) -> FetchError {
    let (name, message) = js_error_text(value);
    if name == "AbortError" || signal.is_some_and(|s| s.aborted()) {
        FetchError::Aborted
    } else {
        FetchError::Network(message)
    }
}

fn method(m: &str) -> Result<Method, FetchError> {
    Ok(match m.to_ascii_uppercase().as_str() {
        "GET" => Method::GET,
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "DELETE" => Method::DELETE,
        other => {
            return Err(FetchError::InvalidRequest(format!(
                "unsupported method {other}"
            )))
        }
    })
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
    let mut builder = RequestBuilder::new(call.url).method(method(call.method)?);
    for (name, value) in call.headers {
        builder = builder.header(name, value);
    }
    builder = builder.abort_signal(signal);
    let request = match call.body {
        Some(body) => builder.body(body.to_string()),
        None => builder.build(),
    }
    .map_err(|e| FetchError::InvalidRequest(e.to_string()))?;

    let response = request.send().await.map_err(|e| match e {
        gloo_net::Error::JsError(js) if js.name == "AbortError" => FetchError::Aborted,
        _ if signal.is_some_and(|s| s.aborted()) => FetchError::Aborted,
        gloo_net::Error::JsError(js) => FetchError::Network(js.message),
        other => FetchError::Network(other.to_string()),
    })?;
    let head = ResponseHead {
        status: response.status(),
        status_text: response.status_text(),
        retry_after: response.headers().get("retry-after"),
        retry_after_ms: response
            .headers()
            .get("retry-after-ms")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v as u64),
        content_type: response.headers().get("content-type"),
    };
    on_head(&head);

    let Some(body) = response.body() else {
        return Ok(head);
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
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
            on_bytes(&array.to_vec());
        }
    }
    Ok(head)
}
