//! A sans-IO newline-delimited JSON splitter (Ollama streams one JSON object per line).
//!
//! Invariants: the lines produced do not depend on how the byte stream was sliced (bytes are
//! decoded only once a whole line is in, so a UTF-8 character may be cut anywhere); LF, CRLF and
//! lone CR end a line; blank lines are skipped; a last line without its newline is returned by
//! [`NdjsonSplitter::finish`]. Parsing the JSON is the provider decoder's job.

use super::sse::{FrameTooLarge, LineSplitter};

/// Lines in, non-blank lines out.
#[derive(Debug, Default, Clone)]
pub struct NdjsonSplitter {
    lines: LineSplitter,
}

impl NdjsonSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next slice; returns the complete non-blank lines it finished.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, FrameTooLarge> {
        let mut out = Vec::new();
        self.lines.feed(bytes, |line| {
            if !line.trim().is_empty() {
                out.push(line.to_string());
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The stream ended: the last line if it had no newline and is not blank.
    pub fn finish(&mut self) -> Option<String> {
        self.lines.finish().filter(|l| !l.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_any_line_end_and_any_slicing() {
        let s = "{\"a\":\"\u{1f30d}\"}\n\n{\"b\":1}\r\n  \r{\"c\":2}".as_bytes();
        let run = |chunks: &[&[u8]]| {
            let mut sp = NdjsonSplitter::new();
            let mut out = Vec::new();
            for c in chunks {
                out.extend(sp.feed(c).unwrap_or_default());
            }
            out.extend(sp.finish());
            out
        };
        let whole = run(&[s]);
        assert_eq!(
            whole,
            vec!["{\"a\":\"\u{1f30d}\"}", "{\"b\":1}", "{\"c\":2}"]
        );
        for i in 0..=s.len() {
            assert_eq!(run(&[&s[..i], &s[i..]]), whole, "split at {i}");
        }
    }
}
