//! The LLM transport: an [`LlmClient`] that calls providers with the global `fetch`, streams the
//! body through the provider's sans-IO decoder, and owns everything that needs a clock:
//!
//! - a **total timeout** (default 120 s) and a **stall timeout** (default 30 s without a byte),
//!   both of which abort the request for real through its `AbortController`;
//! - the engine's [`CancelToken`] (and through it a caller's `AbortSignal`), which aborts too;
//! - **retries** of transient failures (network error, 408, 429, 5xx, overload payloads)
//!   **before the first token only**, at most `MAX_ATTEMPTS`, with exponential backoff and
//!   jitter, honouring `Retry-After` (and OpenAI's `retry-after-ms`).
//!
//! One call is one turn for the engine however many attempts it takes. Provider settings
//! (including API keys) live only in this object's memory: never logged, never persisted.
//!
//! A `custom` (JavaScript) provider gets the same two timeouts (its signal is aborted and its
//! iterator's `return()` called when one expires), but no retries.
//!
//! The body is read only as long as it matters: once the decoder has the reply's end marker or
//! an error, the reader is cancelled and never read again (in Node 20's fetch a read after an
//! abort can stay pending forever once the body's end has arrived, which turned a server's
//! error event into a 30 s stall).

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use web_sys::AbortController;

use crate::core::llm::decode::decoder_for_response;
use crate::core::llm::types::{CallSettings, ChatMessage, LlmError, LlmEvent};
use crate::core::llm::{
    backoff_ms, decode_error_response, encode_request, network_error, should_retry, ProviderConfig,
    ProviderKind, StreamDecoder,
};
use crate::core::llm_client::{CancelToken, LlmClient};
use crate::core::store::LocalBoxFuture;
use crate::core::vec_map::VecMap;
use crate::web::clock::now_ms;
use crate::web::fetch::{fetch_streaming_until, FetchError, HttpCall, ReadOn, ResponseHead};
use crate::web::timer::{sleep, sleep_until};

/// How long a call may take; both abort the request when they expire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// No complete reply within this many milliseconds → `llm_timeout`.
    pub total_ms: u64,
    /// No byte for this many milliseconds → `llm_stalled`.
    pub stall_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            total_ms: 120_000,
            stall_ms: 30_000,
        }
    }
}

/// How much of an error body is kept (the error shows 200 characters; JSON needs the rest).
const ERROR_BODY_LIMIT: usize = 16 * 1024;

/// Calls LLM providers over `fetch`. `custom` calls go to the client registered with
/// [`FetchLlm::set_custom`] (a JavaScript provider), which the engine does not retry.
pub struct FetchLlm {
    providers: RefCell<VecMap<ProviderKind, ProviderConfig>>,
    custom: RefCell<Option<Rc<dyn LlmClient>>>,
    timeouts: Cell<Timeouts>,
    browser_like: bool,
}

impl FetchLlm {
    /// `browser_like`: the code runs where a page's origin is sent (a window or a worker), so
    /// providers that gate browser access (Anthropic) get their opt-in header.
    pub fn new(browser_like: bool) -> Self {
        Self {
            providers: RefCell::new(VecMap::new()),
            custom: RefCell::new(None),
            timeouts: Cell::new(Timeouts::default()),
            browser_like,
        }
    }

    /// Sets (replaces) the settings of one provider after validating them.
    pub fn configure(&self, kind: ProviderKind, config: ProviderConfig) -> Result<(), LlmError> {
        config.validate(kind)?;
        self.providers.borrow_mut().insert(kind, config);
        Ok(())
    }

    /// Registers the client that answers `custom` calls.
    pub fn set_custom(&self, client: Option<Rc<dyn LlmClient>>) {
        *self.custom.borrow_mut() = client;
    }

    pub fn set_timeouts(&self, timeouts: Timeouts) {
        self.timeouts.set(timeouts);
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts.get()
    }

    /// A call to a provider over `fetch` (any kind but `custom`).
    async fn call_inner(
        &self,
        kind: ProviderKind,
        settings: &CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> Result<(), LlmError> {
        // Read in place (no copy of the settings), the borrow released before any await.
        let (request, base_url) = {
            let providers = self.providers.borrow();
            let unset = ProviderConfig::default();
            let config = providers.get(&kind).unwrap_or(&unset);
            let request = encode_request(kind, config, settings, &messages, self.browser_like)?;
            (request, config.resolved_base_url(kind).unwrap_or_default())
        };
        let timeouts = self.timeouts.get();
        let started = now_ms();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let remaining = timeouts
                .total_ms
                .saturating_sub((now_ms() - started).max(0) as u64);
            let mut output_started = false;
            let attempt = Attempt {
                kind,
                base_url: &base_url,
                stream: settings.stream,
                unsendable: Cell::new(false),
            };
            let result = attempt
                .run(
                    &request,
                    on_event,
                    &cancel,
                    remaining,
                    timeouts,
                    &mut output_started,
                )
                .await;
            let Err(error) = result else { return Ok(()) };
            if attempt.unsendable.get() || !should_retry(&error, attempts, output_started) {
                return Err(error);
            }
            let retry_after = match &error {
                LlmError::Http { retry_after_ms, .. } => *retry_after_ms,
                _ => None,
            };
            let delay = backoff_ms(attempts, jitter_unit(), retry_after);
            let left = timeouts
                .total_ms
                .saturating_sub((now_ms() - started).max(0) as u64);
            if delay >= left {
                // Waiting would outlive the call's budget: the last error is the honest answer.
                return Err(error);
            }
            match race2(sleep(delay), cancel.cancelled()).await {
                Either::First(()) => {}
                Either::Second(()) => {
                    return Err(LlmError::Aborted {
                        provider: kind.name(),
                    })
                }
            }
        }
    }
}

impl FetchLlm {
    /// Runs a custom provider under the total and stall timeouts. When one expires (or the
    /// caller cancels), the provider's own cancellation is triggered and its call is awaited
    /// to the end, so that it aborts its signal and calls its iterator's `return()`; then the
    /// timeout is the answer.
    async fn call_custom(
        &self,
        client: Rc<dyn LlmClient>,
        settings: &CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> Result<(), LlmError> {
        let timeouts = self.timeouts.get();
        let provider = || ProviderKind::Custom.name();
        // One clock read for both: making the call's future runs none of it.
        let started = now_ms();
        let last_event = Cell::new(started);
        let mut on_piece = |event: LlmEvent| {
            // After `Done` the call returns: nobody reads the time of its last event.
            if !matches!(event, LlmEvent::Done { .. }) {
                last_event.set(now_ms());
            }
            on_event(event);
        };
        let stop = CancelToken::new();
        let mut call = client.call(settings, messages, &mut on_piece, stop.clone());
        let watch = watchdog(
            ProviderKind::Custom,
            timeouts,
            started,
            timeouts.total_ms,
            &last_event,
        );
        let outcome = race3(&mut call, cancel.cancelled(), watch).await;
        let expired = match outcome {
            Race3::First(result) => return result,
            Race3::Second(()) => None,
            Race3::Third(error) => Some(error),
        };
        stop.cancel();
        // The provider sees the cancellation at its next await and cleans up.
        let result = call.await;
        match expired {
            Some(error) => Err(error),
            None => result.and(Err(LlmError::Aborted {
                provider: provider(),
            })),
        }
    }
}

impl LlmClient for FetchLlm {
    fn call<'a>(
        &'a self,
        settings: &'a CallSettings,
        messages: Vec<ChatMessage>,
        on_event: &'a mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> LocalBoxFuture<'a, Result<(), LlmError>> {
        // A custom provider's call is a future of its own: the fetch path's state machine
        // (the retry loop, the codecs, some 7 KB of wasm) is then never polled for it, so a
        // host running custom calls does not compile it, nor recompile it optimised once hot
        // (15 ms of V8's optimising compiler in a fresh process, on the 2 cores it shares
        // with the main thread).
        match ProviderKind::parse(&settings.provider) {
            Ok(ProviderKind::Custom) => {
                // The registered client is looked up here, when the call is made (the engine
                // polls it at once), so that the call under the timeouts is the only async
                // body of a custom call: an async wrapper that looked it up at the first poll
                // was a state machine of its own around it (0.35 KB gzip).
                let custom = self.custom.borrow().clone();
                match custom {
                    Some(client) => {
                        Box::pin(self.call_custom(client, settings, messages, on_event, cancel))
                    }
                    None => Box::pin(std::future::ready(Err(LlmError::NotConfigured {
                        provider: "custom".to_string(),
                        missing: "a registered custom provider".to_string(),
                    }))),
                }
            }
            Ok(kind) => Box::pin(self.call_inner(kind, settings, messages, on_event, cancel)),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

/// A random number in [0, 1) for backoff jitter, from `crypto.getRandomValues`.
fn jitter_unit() -> f64 {
    let mut bytes = [0u8; 4];
    match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0),
        // No randomness source: no jitter, still a correct (deterministic) backoff.
        Err(_) => 0.0,
    }
}

struct Attempt<'a> {
    kind: ProviderKind,
    base_url: &'a str,
    stream: bool,
    /// Set when fetch refused to build the request (a header or URL it rejects): another
    /// attempt would fail the same way, so there is none.
    unsendable: Cell<bool>,
}

impl Attempt<'_> {
    fn provider(&self) -> String {
        self.kind.name()
    }

    fn aborted(&self) -> LlmError {
        LlmError::Aborted {
            provider: self.provider(),
        }
    }

    async fn run(
        &self,
        request: &crate::core::llm::HttpRequest,
        on_event: &mut dyn FnMut(LlmEvent),
        cancel: &CancelToken,
        total_ms: u64,
        timeouts: Timeouts,
        output_started: &mut bool,
    ) -> Result<(), LlmError> {
        if cancel.is_cancelled() {
            return Err(self.aborted());
        }
        let controller = AbortController::new().map_err(|_| LlmError::Network {
            provider: self.provider(),
            message: "AbortController is not available in this runtime".into(),
        })?;
        let signal = controller.signal();
        let attempt_start = now_ms();
        let last_byte = Cell::new(attempt_start);
        let decoder: RefCell<Option<Box<dyn StreamDecoder>>> = RefCell::new(None);
        let head_seen: RefCell<Option<ResponseHead>> = RefCell::new(None);
        let error_body = RefCell::new(Vec::<u8>::new());
        let stream_error: RefCell<Option<LlmError>> = RefCell::new(None);
        let started = Cell::new(false);
        let done = Cell::new(false);
        let received = Cell::new(0usize);

        let call = HttpCall {
            method: &request.method,
            url: &request.url,
            headers: &request.headers,
            body: Some(&request.body),
        };
        let mut emit = |events: Vec<LlmEvent>| {
            for event in events {
                // A tool call is output too: a retry after it would deliver (and run) it twice.
                if matches!(
                    event,
                    LlmEvent::Text(_)
                        | LlmEvent::Reasoning(_)
                        | LlmEvent::Thinking(_)
                        | LlmEvent::ToolCall(_)
                ) {
                    started.set(true);
                }
                if matches!(event, LlmEvent::Done { .. }) {
                    done.set(true);
                }
                on_event(event);
            }
        };
        let fetch = async {
            let mut on_head = |head: &ResponseHead| {
                if head.ok() {
                    *decoder.borrow_mut() = Some(decoder_for_response(
                        self.kind,
                        self.stream,
                        head.status,
                        &head.status_text,
                        head.content_type.as_deref(),
                    ));
                }
                *head_seen.borrow_mut() = Some(head.clone());
            };
            let mut on_bytes = |bytes: &[u8]| {
                last_byte.set(now_ms());
                received.set(received.get() + bytes.len());
                if stream_error.borrow().is_some() || done.get() {
                    return ReadOn::Stop;
                }
                let mut guard = decoder.borrow_mut();
                match guard.as_mut() {
                    Some(d) => {
                        let (events, error) = d.push(bytes);
                        drop(guard);
                        emit(events);
                        if let Some(e) = error {
                            // The decode error is the answer: stop reading (the request is
                            // aborted below, after the reader is cancelled).
                            *stream_error.borrow_mut() = Some(e);
                            return ReadOn::Stop;
                        }
                        if done.get() {
                            // The reply's end marker: nothing after it matters.
                            return ReadOn::Stop;
                        }
                        ReadOn::More
                    }
                    None => {
                        let mut body = error_body.borrow_mut();
                        let room = ERROR_BODY_LIMIT.saturating_sub(body.len());
                        body.extend_from_slice(&bytes[..bytes.len().min(room)]);
                        ReadOn::More
                    }
                }
            };
            fetch_streaming_until(&call, Some(&signal), &mut on_head, &mut on_bytes).await
        };
        let watch = watchdog(self.kind, timeouts, attempt_start, total_ms, &last_byte);
        let outcome = race3(fetch, cancel.cancelled(), watch).await;
        // Recorded before any early return: a failure after output started is never retried.
        *output_started = started.get();
        let aborted = match outcome {
            Race3::First(result) => {
                if let Some(error) = stream_error.borrow_mut().take() {
                    Some(error)
                } else {
                    match result {
                        Ok(_) => None,
                        Err(FetchError::Aborted) => Some(self.aborted()),
                        // A response had begun: the connection broke mid-reply. Saying the
                        // request never got a response (and suggesting CORS) would mislead.
                        Err(FetchError::Network(message)) if head_seen.borrow().is_some() => {
                            return Err(LlmError::Network {
                                provider: self.provider(),
                                message: format!(
                                    "the connection closed in the middle of the reply ({} bytes received): {message}",
                                    received.get()
                                ),
                            });
                        }
                        Err(FetchError::Network(_)) => {
                            return Err(network_error(self.kind, self.base_url));
                        }
                        Err(FetchError::InvalidRequest(message)) => {
                            self.unsendable.set(true);
                            return Err(LlmError::Network {
                                provider: self.provider(),
                                message: format!("the request could not be sent: {message}"),
                            });
                        }
                    }
                }
            }
            Race3::Second(()) => Some(self.aborted()),
            // A timeout: the total budget, or no byte for the stall limit.
            Race3::Third(error) => Some(error),
        };
        if let Some(error) = aborted {
            // Abort for real: the server sees the connection close.
            controller.abort();
            return Err(error);
        }
        let head = head_seen.borrow_mut().take();
        let Some(head) = head else {
            return Err(network_error(self.kind, self.base_url));
        };
        if !head.ok() {
            let body = crate::core::lossy(&error_body.borrow()).into_owned();
            let mut error = decode_error_response(
                self.kind,
                head.status,
                &head.status_text,
                &body,
                head.retry_after.as_deref(),
                now_ms().max(0) as u64,
            );
            if let (LlmError::Http { retry_after_ms, .. }, Some(ms)) =
                (&mut error, head.retry_after_ms)
            {
                *retry_after_ms = Some(ms);
            }
            return Err(error);
        }
        let decoder = decoder.borrow_mut().take();
        let Some(mut decoder) = decoder else {
            return Err(network_error(self.kind, self.base_url));
        };
        let (events, error) = decoder.close();
        emit(events);
        *output_started = started.get();
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// One timer for both timeouts of a call (a custom provider's) or of an attempt (a fetch): it
/// is set for whichever expires first, the budget of `budget_ms` from `started` or
/// `timeouts.stall_ms` without activity since `last`, and answers with that timeout's error
/// (the total's seconds are the call's, `timeouts.total_ms`, as the user configured them).
async fn watchdog(
    kind: ProviderKind,
    timeouts: Timeouts,
    started: i64,
    budget_ms: u64,
    last: &Cell<i64>,
) -> LlmError {
    // The first check is at `started`, read by the caller just before (a reply from a provider
    // that answers at once is over before the first sleep ends: that check is the only one,
    // and a clock read of its own was one of the few per reply). A time that has moved on
    // since only makes the first sleep end early (its end is reckoned from `started`), and the
    // next check reads the clock: no timeout fires late.
    let mut now = started;
    loop {
        let elapsed = (now - started).max(0) as u64;
        if elapsed >= budget_ms {
            return LlmError::Timeout {
                provider: kind.name(),
                seconds: timeouts.total_ms.div_ceil(1000),
            };
        }
        let idle = (now - last.get()).max(0) as u64;
        if idle >= timeouts.stall_ms {
            return LlmError::Stalled {
                provider: kind.name(),
                seconds: timeouts.stall_ms.div_ceil(1000),
            };
        }
        let wait = (budget_ms - elapsed).min(timeouts.stall_ms - idle);
        sleep_until(now as f64 + wait as f64).await;
        now = now_ms();
    }
}

enum Either<A, B> {
    First(A),
    Second(B),
}

enum Race3<A, B, C> {
    First(A),
    Second(B),
    Third(C),
}

/// The first of two futures to finish; the other is dropped (which cancels its timers).
fn race2<A: Future, B: Future>(a: A, b: B) -> impl Future<Output = Either<A::Output, B::Output>> {
    let (mut a, mut b) = (Box::pin(a), Box::pin(b));
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::First(v));
        }
        if let Poll::Ready(v) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Second(v));
        }
        Poll::Pending
    })
}

/// The first of three futures to finish, polled in order (the call first, so a reply that
/// completes in the same tick as a timer wins). It was a race of four whose fourth was a
/// future that never finished, polled on every wake-up.
fn race3<A: Future, B: Future, C: Future>(
    a: A,
    b: B,
    c: C,
) -> impl Future<Output = Race3<A::Output, B::Output, C::Output>> {
    let mut a: Pin<Box<A>> = Box::pin(a);
    let mut b: Pin<Box<B>> = Box::pin(b);
    let mut c: Pin<Box<C>> = Box::pin(c);
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(v) = a.as_mut().poll(cx) {
            return Poll::Ready(Race3::First(v));
        }
        if let Poll::Ready(v) = b.as_mut().poll(cx) {
            return Poll::Ready(Race3::Second(v));
        }
        if let Poll::Ready(v) = c.as_mut().poll(cx) {
            return Poll::Ready(Race3::Third(v));
        }
        Poll::Pending
    })
}
