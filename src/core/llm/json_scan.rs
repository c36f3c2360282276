//! A small validating JSON reader for the hot frames of a stream: it walks a frame in place,
//! hands the caller each key of an object and lets it either read the value (a string, an
//! object) or skip it, without building a JSON `Value` (a map and a string per key) or
//! running serde's derived visitors, which at the release build's size-first optimisation
//! level were the largest share of the engine's cost per streamed token.
//!
//! It is deliberately narrower than JSON: every answer is "this, exactly as the full parser
//! (`core::json_parse`, serde_json's rules) reads it" or `None`, and a caller treats `None`
//! as "read this frame the general way". So it says `None` for anything where it could
//! disagree with that parser: a number with an exponent or over 64 characters (out-of-range
//! numbers are refused), nesting deeper than [`MAX_DEPTH`], a lone surrogate escape, a raw
//! control character in a string, and anything that is not JSON at all. It never panics on any input.

use std::borrow::Cow;

use super::byte_search::string_stop;

/// Deeper nesting is left to the full parser (whose limit, serde_json's, is 128).
const MAX_DEPTH: usize = 64;

/// A cursor over one JSON text.
pub(crate) struct Scan<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scan<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    // Inlined: the release build optimises for size and would otherwise call these per byte.
    #[inline(always)]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    #[inline(always)]
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// `byte` after optional whitespace, consumed.
    #[inline(always)]
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.ws();
        // `matches!`, not `==` on the `Option`: the size-first build leaves that a call.
        matches!(self.peek(), Some(b) if b == byte).then(|| self.pos += 1)
    }

    /// Whether only whitespace is left.
    #[inline(always)]
    pub(crate) fn at_end(&mut self) -> bool {
        self.ws();
        self.pos == self.text.len()
    }

    /// Whether the next value is `null` (consumed if so).
    #[inline(always)]
    pub(crate) fn null(&mut self) -> bool {
        self.ws();
        if self.bytes()[self.pos..].starts_with(b"null") {
            self.pos += 4;
            true
        } else {
            false
        }
    }

    /// The next value if it is `null` (`Some(None)`) or a string (`Some(Some(text))`); `None`
    /// for any other value (left unread) or an invalid string.
    pub(crate) fn null_or_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.null() {
            return Some(None);
        }
        if self.peek() != Some(b'"') {
            return None;
        }
        self.string().map(Some)
    }

    /// `text` as exactly one JSON string token (its quotes first and last, nothing around
    /// them): its value, or `None` when it is anything else.
    pub(crate) fn string_token(text: &'a str) -> Option<Cow<'a, str>> {
        let mut s = Self::new(text);
        let value = s.string()?;
        (s.pos == text.len()).then_some(value)
    }

    /// Reads an object: `on_key` is called with each key and must read or skip its value.
    /// `None` when the value is not an object, is not valid JSON, or `on_key` says `None`.
    pub(crate) fn object(
        &mut self,
        depth: usize,
        mut on_key: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.eat(b':')?;
            on_key(self, key)?;
            if self.eat(b',').is_some() {
                continue;
            }
            return self.eat(b'}');
        }
    }

    /// Reads an array: `on_item` is called with each element's index and must read or skip it.
    pub(crate) fn array(
        &mut self,
        depth: usize,
        mut on_item: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        let mut index = 0;
        loop {
            on_item(self, index)?;
            index += 1;
            if self.eat(b',').is_some() {
                continue;
            }
            return self.eat(b']');
        }
    }

    /// Skips one value, checking that it is JSON serde_json reads the same way.
    pub(crate) fn skip(&mut self, depth: usize) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(depth + 1, |s, _| s.skip(depth + 1)),
            b'[' => self.array(depth + 1, |s, _| s.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Some(())
        } else {
            None
        }
    }

    /// A number without an exponent, at most 64 characters (see the module docs).
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        let b = self.bytes();
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = |i: &mut usize| {
            let from = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i - from
        };
        let first = b.get(i).copied();
        let int = digits(&mut i);
        if int == 0 || (first == Some(b'0') && int > 1) {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if digits(&mut i) == 0 {
                return None;
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) || i - start > 64 {
            return None;
        }
        self.pos = i;
        Some(())
    }

    /// A string at the cursor (which is on its opening quote): borrowed when it has no escape.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let text = self.text;
        let b = text.as_bytes();
        if b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        // The plain run: no escape, no control character.
        let mut i = start + string_stop(b.get(start..)?)?;
        match b.get(i)? {
            b'"' => {
                self.pos = i + 1;
                return text.get(start..i).map(Cow::Borrowed);
            }
            b'\\' => {}
            _ => return None,
        }
        let mut out = String::from(text.get(start..i)?);
        loop {
            match *b.get(i)? {
                b'"' => {
                    self.pos = i + 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    let escape = *b.get(i + 1)?;
                    i += 2;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let high = hex4(b, i)?;
                            i += 4;
                            let code = if (0xd800..0xdc00).contains(&high) {
                                // A surrogate pair: the low half must follow.
                                if b.get(i..i + 2) != Some(b"\\u") {
                                    return None;
                                }
                                let low = hex4(b, i + 2)?;
                                if !(0xdc00..0xe000).contains(&low) {
                                    return None;
                                }
                                i += 6;
                                0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
                            } else {
                                high
                            };
                            out.push(char::from_u32(code)?);
                        }
                        _ => return None,
                    }
                }
                0..=0x1f => return None,
                _ => {
                    // Copy the run up to the next quote or escape in one go.
                    let from = i;
                    i += string_stop(b.get(i..)?)?;
                    out.push_str(text.get(from..i)?);
                }
            }
        }
    }
}

fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skips a whole text as one value: `Some` exactly when serde_json would read it too
    /// (for the texts below, which avoid the module's documented refusals).
    fn skips(text: &str) -> bool {
        let mut s = Scan::new(text);
        s.skip(0).is_some() && s.at_end()
    }

    #[test]
    fn agrees_with_serde_json_on_what_is_json() {
        for text in [
            r#"{"a":[1,-2.5,0,true,false,null,"x\"y\\u00e9\ud83d\ude00"],"b":{}}"#,
            "  [ ]  ",
            r#""\/\b\f\n\r\t""#,
            "{\"a\" : 1 , \"b\":[ {} , [] ]}",
        ] {
            assert!(skips(text), "{text}");
            assert!(
                serde_json::from_str::<crate::core::json::Value>(text).is_ok(),
                "{text}"
            );
        }
        for text in [
            "{\"a\":1,}",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "-",
            "tru",
            "\"\\x\"",
            "\"a\u{1}b\"",
            r#""\ud83d""#,
            r#""\ud83dx""#,
            "{\"a\":1} x",
            "{'a':1}",
            "\"open",
        ] {
            assert!(!skips(text), "{text}");
            assert!(
                serde_json::from_str::<crate::core::json::Value>(text).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn strings_decode_as_serde_json_decodes_them() {
        for text in [
            r#""plain""#,
            r#""a\"b\n\u00e9\ud83d\ude00 \u0000 end""#,
            "\"h\u{e9}llo \u{1f30d}\"",
        ] {
            let mut s = Scan::new(text);
            let got = s.string().map(Cow::into_owned);
            let want: String = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(got, Some(want), "{text}");
        }
    }

    #[test]
    fn a_string_token_is_exactly_one_string() {
        for text in [r#""plain""#, r#""a\"b\u00e9""#, r#""""#] {
            let want: String = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(
                Scan::string_token(text).map(Cow::into_owned),
                Some(want),
                "{text}"
            );
        }
        for text in [
            r#" "a""#,
            r#""a" "#,
            r#""a""b""#,
            r#""a"#,
            "a",
            r#""a\""#,
            "",
            "\"\u{1}\"",
        ] {
            assert_eq!(Scan::string_token(text), None, "{text}");
        }
    }

    #[test]
    fn refuses_what_serde_json_might_read_differently() {
        // Exponents (out of range for serde_json past 1e308), overlong numbers, deep nesting.
        assert!(!skips("1e5"));
        assert!(!skips(&"1".repeat(65)));
        assert!(!skips(&format!("{}{}", "[".repeat(70), "]".repeat(70))));
        assert!(skips(&format!("{}{}", "[".repeat(20), "]".repeat(20))));
    }
}
