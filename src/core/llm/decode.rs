//! Reply decoding: bytes of a provider's response in, [`LlmEvent`]s out, sans IO.
//!
//! A [`StreamDecoder`] is fed the response body in whatever slices the network delivers and
//! told when it ends. Framing (SSE, NDJSON, or one buffered JSON body for non-streamed calls)
//! is separated from meaning (each provider's frame handler in `openai.rs`, `anthropic.rs`,
//! `google.rs`, `ollama.rs`).
//!
//! Invariants every decoder keeps:
//! - the events do not depend on how the body was sliced;
//! - `Done` is emitted at most once and is always the last event; after `Done` or an error
//!   the decoder ignores further input (no events, no new error);
//! - events that precede an error are never dropped (see [`StreamDecoder`]);
//! - a stream that ends without its provider's terminator is an error, never a silent
//!   success (the rule per provider is documented on its handler);
//! - a frame that is not valid JSON is `LlmError::Decode` quoting at most 200 characters of it;
//! - nothing here panics on any input.

use super::codecs::codec;
use super::errors::status_text_or_reason;
use super::ndjson::NdjsonSplitter;
use super::provider::ProviderKind;
use super::sse::{FrameTooLarge, SseParser, MAX_FRAME_BYTES};
use super::types::{LlmError, LlmEvent};
use super::wire::{Ctx, FrameHandler, Wire};

/// A sans-IO decoder of one response body.
///
/// Two forms of the same thing. [`push`](Self::push)/[`close`](Self::close) return, for each
/// slice, the events it completed together with the error that ended the stream in it, if any:
/// nothing that arrived before an error is lost (the engine keeps it as partial content).
/// [`feed`](Self::feed)/[`finish`](Self::finish) are the `Result` form: when a slice holds
/// events and then an error, the events come back `Ok` and the error is returned by the next
/// call (`feed(&[])` is enough to collect it).
pub trait StreamDecoder {
    /// Decodes the next slice of the body.
    fn push(&mut self, bytes: &[u8]) -> (Vec<LlmEvent>, Option<LlmError>);
    /// The body ended (the transport saw EOF): the last events, normally ending with `Done`,
    /// or the error saying why the reply is incomplete.
    fn close(&mut self) -> (Vec<LlmEvent>, Option<LlmError>);
    /// Feeds the next slice of the body; returns the events it completed.
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<LlmEvent>, LlmError>;
    /// The body ended: returns the last events (normally ending with `Done`) or the error.
    fn finish(&mut self) -> Result<Vec<LlmEvent>, LlmError>;
}

/// Turns a lossless outcome into the `Result` form, keeping a late error for the next call.
fn as_result(
    (events, error): (Vec<LlmEvent>, Option<LlmError>),
    pending: &mut Option<LlmError>,
) -> Result<Vec<LlmEvent>, LlmError> {
    match error {
        None => Ok(events),
        Some(e) if events.is_empty() => Err(e),
        Some(e) => {
            *pending = Some(e);
            Ok(events)
        }
    }
}

/// A decoder for a `200 OK` response of `kind`. `streaming` must match the request's
/// `CallSettings::stream`: a non-streamed body is buffered and decoded on `finish`.
pub fn decoder_for(kind: ProviderKind, streaming: bool) -> Box<dyn StreamDecoder> {
    decoder_for_status(kind, streaming, 200, "OK")
}

/// Like [`decoder_for`], with the status of the response that carries the body: an error
/// payload inside the stream becomes `LlmError::Http` with this status (and the standard
/// reason phrase when `status_text` is empty, as it is for every HTTP/2 response).
pub fn decoder_for_status(
    kind: ProviderKind,
    streaming: bool,
    status: u16,
    status_text: &str,
) -> Box<dyn StreamDecoder> {
    let ctx = Ctx {
        provider: kind.as_str(),
        status,
        status_text: status_text_or_reason(status, status_text),
    };
    let Some(codec) = codec(kind) else {
        return Box::new(TextDecoder::default());
    };
    let framing = if !streaming {
        Framing::Buffered(Vec::new())
    } else if codec.wire == Wire::Sse {
        Framing::Sse(SseParser::new())
    } else {
        Framing::Ndjson(NdjsonSplitter::new())
    };
    Box::new(FramedDecoder::new(
        kind.as_str(),
        framing,
        (codec.decoder)(ctx),
    ))
}

pub use super::types::STREAM_CUT;

/// Like [`decoder_for_status`], with the response's `content-type`: a streaming request
/// answered with one JSON document (`application/json` or `…+json`, which some proxies send
/// instead of a stream) is decoded as the whole non-streamed reply it is. SSE, NDJSON
/// (`application/x-ndjson`) and a missing type are read as a stream.
pub fn decoder_for_response(
    kind: ProviderKind,
    streaming: bool,
    status: u16,
    status_text: &str,
    content_type: Option<&str>,
) -> Box<dyn StreamDecoder> {
    let whole_json = content_type.is_some_and(|t| {
        let mime = t
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
    });
    decoder_for_status(kind, streaming && !whole_json, status, status_text)
}

enum Framing {
    Sse(SseParser),
    Ndjson(NdjsonSplitter),
    Buffered(Vec<u8>),
}

struct FramedDecoder {
    provider: &'static str,
    framing: Framing,
    handler: Box<dyn FrameHandler>,
    /// `Done` or an error was produced; the rest of the body is ignored.
    finished: bool,
    /// An error that followed events in the same slice, for the `Result` form's next call.
    pending: Option<LlmError>,
}

impl FramedDecoder {
    fn new(provider: &'static str, framing: Framing, handler: Box<dyn FrameHandler>) -> Self {
        Self {
            provider,
            framing,
            handler,
            finished: false,
            pending: None,
        }
    }

    /// Decodes `bytes` into `out`; events pushed before an error stay in `out`.
    fn run(&mut self, bytes: &[u8], at_end: bool, out: &mut Vec<LlmEvent>) -> Result<(), LlmError> {
        let provider = self.provider;
        let too_large = |e: FrameTooLarge| LlmError::Decode {
            provider: provider.to_string(),
            message: e.to_string(),
        };
        let handler = self.handler.as_mut();
        let lines: Vec<String> = match &mut self.framing {
            Framing::Sse(p) => {
                // Each frame goes to the handler as the parser completes it, from the parser's
                // reused buffers. After `Done` or an error the rest of the slice is ignored.
                let mut outcome = Ok(());
                let mut on_frame = |event: &str, data: &str| {
                    if outcome.is_ok() && !ended(out) {
                        outcome = handler.frame(event, data, out);
                    }
                };
                p.feed_each(bytes, &mut on_frame).map_err(too_large)?;
                if at_end {
                    p.finish_each(&mut on_frame).map_err(too_large)?;
                }
                outcome?;
                if at_end && !ended(out) {
                    handler.end(out)?;
                }
                return Ok(());
            }
            Framing::Ndjson(s) => {
                let mut lines = s.feed(bytes).map_err(too_large)?;
                if at_end {
                    lines.extend(s.finish());
                }
                lines
            }
            Framing::Buffered(buf) => {
                if buf.len() + bytes.len() > MAX_FRAME_BYTES {
                    return Err(too_large(FrameTooLarge {
                        limit: MAX_FRAME_BYTES,
                    }));
                }
                buf.extend_from_slice(bytes);
                if at_end {
                    let body = crate::core::lossy(buf).into_owned();
                    let body = body.trim_start_matches('\u{feff}');
                    handler.body(body, out)?;
                }
                return Ok(());
            }
        };
        for data in lines {
            handler.frame("", &data, out)?;
            if ended(out) {
                return Ok(());
            }
        }
        if at_end {
            handler.end(out)?;
        }
        Ok(())
    }

    fn step(&mut self, bytes: &[u8], at_end: bool) -> (Vec<LlmEvent>, Option<LlmError>) {
        let mut out = Vec::new();
        if self.finished {
            return (out, None);
        }
        let result = self.run(bytes, at_end, &mut out);
        if let Some(i) = out.iter().position(is_done) {
            out.truncate(i + 1);
            self.finished = true;
        }
        if at_end || result.is_err() {
            self.finished = true;
        }
        (out, result.err())
    }
}

fn is_done(e: &LlmEvent) -> bool {
    matches!(e, LlmEvent::Done { .. })
}

/// Whether `out` ends with `Done`: a handler emits nothing after it, so the last event says.
fn ended(out: &[LlmEvent]) -> bool {
    out.last().is_some_and(is_done)
}

impl StreamDecoder for FramedDecoder {
    fn push(&mut self, bytes: &[u8]) -> (Vec<LlmEvent>, Option<LlmError>) {
        self.step(bytes, false)
    }
    fn close(&mut self) -> (Vec<LlmEvent>, Option<LlmError>) {
        self.step(&[], true)
    }
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<LlmEvent>, LlmError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let outcome = self.push(bytes);
        as_result(outcome, &mut self.pending)
    }
    fn finish(&mut self) -> Result<Vec<LlmEvent>, LlmError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let outcome = self.close();
        as_result(outcome, &mut self.pending)
    }
}

/// The `custom` provider has no wire format; if a transport ever hands its output over as
/// bytes, they are plain UTF-8 text. A character cut between slices is held back until whole;
/// invalid bytes become U+FFFD. The end of the bytes is the end of the reply.
#[derive(Debug, Default)]
struct TextDecoder {
    pending: Vec<u8>,
    finished: bool,
}

impl StreamDecoder for TextDecoder {
    fn push(&mut self, bytes: &[u8]) -> (Vec<LlmEvent>, Option<LlmError>) {
        (self.text(bytes), None)
    }
    fn close(&mut self) -> (Vec<LlmEvent>, Option<LlmError>) {
        (self.end(), None)
    }
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<LlmEvent>, LlmError> {
        Ok(self.text(bytes))
    }
    fn finish(&mut self) -> Result<Vec<LlmEvent>, LlmError> {
        Ok(self.end())
    }
}

impl TextDecoder {
    fn text(&mut self, bytes: &[u8]) -> Vec<LlmEvent> {
        if self.finished {
            return Vec::new();
        }
        self.pending.extend_from_slice(bytes);
        let mut text = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    text.push_str(s);
                    self.pending.clear();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    text.push_str(std::str::from_utf8(&self.pending[..valid]).unwrap_or_default());
                    match e.error_len() {
                        // Invalid bytes in the middle: replace them and go on.
                        Some(bad) => {
                            text.push('\u{fffd}');
                            self.pending.drain(..valid + bad);
                        }
                        // An incomplete character at the end: wait for the rest.
                        None => {
                            self.pending.drain(..valid);
                            break;
                        }
                    }
                }
            }
        }
        if text.is_empty() {
            Vec::new()
        } else {
            vec![LlmEvent::Text(text)]
        }
    }

    fn end(&mut self) -> Vec<LlmEvent> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            out.push(LlmEvent::Text(
                crate::core::lossy(&std::mem::take(&mut self.pending)).into_owned(),
            ));
        }
        out.push(LlmEvent::Done {
            finish_reason: None,
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_decoder_holds_back_cut_characters() {
        let s = "h\u{e9}llo \u{1f30d}".as_bytes();
        for i in 0..=s.len() {
            let mut d = decoder_for(ProviderKind::Custom, true);
            let mut text = String::new();
            for part in [&s[..i], &s[i..]] {
                for e in d.feed(part).unwrap_or_default() {
                    if let LlmEvent::Text(t) = e {
                        text.push_str(&t);
                    }
                }
            }
            let end = d.finish().unwrap_or_default();
            assert_eq!(text, "h\u{e9}llo \u{1f30d}");
            assert_eq!(
                end.last(),
                Some(&LlmEvent::Done {
                    finish_reason: None
                })
            );
        }
    }
}
