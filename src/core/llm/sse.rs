//! A sans-IO Server-Sent Events parser (the WHATWG `text/event-stream` format).
//!
//! Fed arbitrary byte slices, it yields complete events. Invariants: the events produced do not
//! depend on how the stream was split into slices (a line, an event or a multi-byte UTF-8
//! character may be cut anywhere), because bytes are only decoded once a whole line is in; CRLF,
//! lone CR and LF all end a line (a CR at the end of one slice and an LF at the start of the
//! next are one line end); comments (`:`) and unknown fields are ignored; `data:` with or
//! without the space; several `data` lines are joined with `\n`. One deliberate leniency:
//! [`SseParser::finish`] dispatches a last event whose blank line never came, because some
//! servers close the connection right after the final `data:` line. A line longer than
//! [`MAX_FRAME_BYTES`] is an error rather than unbounded memory.

/// Largest line or event data accepted (16 MiB): far above any real LLM frame.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, empty when the server sent none (the spec's default `message`).
    pub event: String,
    /// The `data` lines joined with `\n`.
    pub data: String,
}

/// The stream is not SSE a decoder can hold in memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a single frame is larger than {limit} bytes")]
pub struct FrameTooLarge {
    pub limit: usize,
}

/// Splits a byte stream into lines, whatever the slicing and line-end style. Shared by the SSE
/// parser and the NDJSON splitter.
#[derive(Debug, Default, Clone)]
pub(crate) struct LineSplitter {
    line: Vec<u8>,
    /// The previous byte was a CR: an LF right after it belongs to the same line end.
    after_cr: bool,
    /// The first line has been produced (a UTF-8 BOM is only stripped from it).
    seen_first_line: bool,
}

impl LineSplitter {
    /// Feeds bytes; calls `on_line` with every completed line (decoded, BOM stripped).
    /// A line that lies whole in `bytes` is decoded in place; only a line cut between slices
    /// is copied, in one go per run of bytes (a byte-by-byte push regrew the buffer several
    /// times per frame: a measurable share of a streamed reply's cost).
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        mut on_line: impl FnMut(&str) -> Result<(), FrameTooLarge>,
    ) -> Result<(), FrameTooLarge> {
        let mut rest = bytes;
        while let Some((&first, tail)) = rest.split_first() {
            if self.after_cr {
                self.after_cr = false;
                if first == b'\n' {
                    rest = tail;
                    continue;
                }
            }
            match super::byte_search::line_end(rest) {
                Some(end) => {
                    self.after_cr = rest[end] == b'\r';
                    if self.line.is_empty() {
                        if end > MAX_FRAME_BYTES {
                            return Err(FrameTooLarge {
                                limit: MAX_FRAME_BYTES,
                            });
                        }
                        let first = !std::mem::replace(&mut self.seen_first_line, true);
                        on_line(&line_text(&rest[..end], first))?;
                    } else {
                        self.append(&rest[..end])?;
                        self.take_line(&mut on_line)?;
                    }
                    rest = &rest[end + 1..];
                }
                None => {
                    self.append(rest)?;
                    break;
                }
            }
        }
        Ok(())
    }

    /// Adds bytes to the current line; a line may hold at most [`MAX_FRAME_BYTES`].
    fn append(&mut self, part: &[u8]) -> Result<(), FrameTooLarge> {
        if self.line.len() + part.len() > MAX_FRAME_BYTES {
            return Err(FrameTooLarge {
                limit: MAX_FRAME_BYTES,
            });
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    /// The unterminated last line, if any bytes are pending.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if self.line.is_empty() {
            return None;
        }
        let mut last = None;
        let _ = self.take_line(&mut |line: &str| {
            last = Some(line.to_string());
            Ok(())
        });
        last
    }

    /// Hands the buffered line over, decoded; the buffer keeps its capacity for the next line.
    fn take_line(
        &mut self,
        on_line: &mut impl FnMut(&str) -> Result<(), FrameTooLarge>,
    ) -> Result<(), FrameTooLarge> {
        let first = !std::mem::replace(&mut self.seen_first_line, true);
        let result = on_line(&line_text(&self.line, first));
        self.line.clear();
        result
    }
}

/// A line's bytes as text (invalid UTF-8 replaced), without the BOM when it is the first line.
fn line_text(bytes: &[u8], first: bool) -> std::borrow::Cow<'_, str> {
    // Valid UTF-8 (every real stream) is one pass of the plain validator.
    let text = crate::core::lossy(bytes);
    match text {
        std::borrow::Cow::Borrowed(t) if first => {
            std::borrow::Cow::Borrowed(t.strip_prefix('\u{feff}').unwrap_or(t))
        }
        std::borrow::Cow::Owned(t) if first && t.starts_with('\u{feff}') => {
            std::borrow::Cow::Owned(t['\u{feff}'.len_utf8()..].to_string())
        }
        other => other,
    }
}

fn owned(event: &str, data: &str) -> SseEvent {
    SseEvent {
        event: event.to_string(),
        data: data.to_string(),
    }
}

/// The SSE state machine: lines in, events out.
#[derive(Debug, Default, Clone)]
pub struct SseParser {
    lines: LineSplitter,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next slice of the stream; returns the events it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, FrameTooLarge> {
        let mut out = Vec::new();
        self.feed_each(bytes, |event, data| out.push(owned(event, data)))?;
        Ok(out)
    }

    /// The stream ended: returns the last event if its blank line never came (see module docs).
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, FrameTooLarge> {
        let mut out = Vec::new();
        self.finish_each(|event, data| out.push(owned(event, data)))?;
        Ok(out)
    }

    /// [`SseParser::feed`] handing each event (`event`, `data`) to `on_event` as it completes,
    /// from buffers reused for the next event: nothing is allocated per event.
    pub(crate) fn feed_each(
        &mut self,
        bytes: &[u8],
        mut on_event: impl FnMut(&str, &str),
    ) -> Result<(), FrameTooLarge> {
        let Self {
            lines,
            event,
            data,
            has_data,
        } = self;
        lines.feed(bytes, |line| {
            Self::process_line(event, data, has_data, line, &mut on_event)
        })
    }

    /// [`SseParser::finish`] in the form of [`SseParser::feed_each`].
    pub(crate) fn finish_each(
        &mut self,
        mut on_event: impl FnMut(&str, &str),
    ) -> Result<(), FrameTooLarge> {
        if let Some(line) = self.lines.finish() {
            Self::process_line(
                &mut self.event,
                &mut self.data,
                &mut self.has_data,
                &line,
                &mut on_event,
            )?;
        }
        Self::process_line(
            &mut self.event,
            &mut self.data,
            &mut self.has_data,
            "",
            &mut on_event,
        )
    }

    fn process_line(
        event: &mut String,
        data: &mut String,
        has_data: &mut bool,
        line: &str,
        on_event: &mut impl FnMut(&str, &str),
    ) -> Result<(), FrameTooLarge> {
        if line.is_empty() {
            if *has_data {
                on_event(event, data);
            }
            event.clear();
            data.clear();
            *has_data = false;
            return Ok(());
        }
        // Byte searches, not `char` patterns: a `char` pattern is encoded to UTF-8 at every call
        // (a visible cost once per streamed chunk at the size-first optimisation level).
        let colon = line.bytes().position(|b| b == b':');
        if colon == Some(0) {
            return Ok(()); // a comment: keep-alives such as `: ping` or `: OPENROUTER PROCESSING`
        }
        let (field, value) = match colon {
            // ':' is ASCII, so both sides are whole characters.
            Some(at) => {
                let (field, rest) = line.split_at(at);
                let value = rest.get(1..).unwrap_or("");
                (field, value.strip_prefix(" ").unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if data.len() + value.len() + 1 > MAX_FRAME_BYTES {
                    return Err(FrameTooLarge {
                        limit: MAX_FRAME_BYTES,
                    });
                }
                if *has_data {
                    data.push('\n');
                }
                data.push_str(value);
                *has_data = true;
            }
            "event" => {
                event.clear();
                event.push_str(value);
            }
            _ => {} // `id`, `retry` and unknown fields do not matter to a one-shot reply stream
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c).unwrap_or_default());
        }
        out.extend(p.finish().unwrap_or_default());
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn fields_comments_and_multiline_data() {
        let s = b"\xEF\xBB\xBF: hello\r\nevent: a\r\ndata:x\r\ndata: y\r\nid: 3\r\n\r\n\
                  data: 1\r\rdata: 2\n\n: keep-alive\n\ndata\n\nevent: lonely\n\n";
        assert_eq!(
            parse_chunks(&[s]),
            vec![ev("a", "x\ny"), ev("", "1"), ev("", "2"), ev("", "")]
        );
    }

    #[test]
    fn any_split_gives_the_same_events() {
        let s =
            "data: h\u{e9}llo \u{4e16}\u{754c} \u{1f30d}\r\n\r\nevent: e\rdata: b\r\r".as_bytes();
        let whole = parse_chunks(&[s]);
        assert_eq!(whole.len(), 2);
        for i in 0..=s.len() {
            assert_eq!(parse_chunks(&[&s[..i], &s[i..]]), whole, "split at {i}");
        }
        let bytes: Vec<&[u8]> = s.chunks(1).collect();
        assert_eq!(parse_chunks(&bytes), whole);
    }

    #[test]
    fn finish_dispatches_an_unterminated_last_event() {
        assert_eq!(parse_chunks(&[b"data: [DONE]"]), vec![ev("", "[DONE]")]);
    }

    #[test]
    fn a_huge_line_is_an_error_not_a_crash() {
        let mut p = SseParser::new();
        let big = vec![b'a'; MAX_FRAME_BYTES + 1];
        assert!(p.feed(&big).is_err());
    }
}
