//! The pure engine. Nothing in here may touch JavaScript, the web platform (fetch, IndexedDB),
//! a clock or randomness (the exact list is in `scripts/check-purity.sh`): the adapters inject
//! time and ids. `scripts/check-purity.sh` enforces this, and the whole module is tested
//! natively with `cargo test`.

pub mod approval;
pub mod clock;
pub mod engine;
pub mod error;
pub mod events;
pub mod ids;
pub mod json;
pub mod json_parse;
pub mod json_value;
pub mod json_write;
pub mod llm;
pub mod llm_client;
pub(crate) mod lock;
pub mod memory_store;
pub mod mentions;
pub mod model;
pub(crate) mod path;
pub mod reply;
pub mod sort;
pub mod store;
#[doc(hidden)]
pub mod store_contract;
pub mod store_rules;
#[doc(hidden)]
pub mod testing;
pub mod title;
pub mod tools;
pub mod vec_map;

/// The byte index of the first `needle` in `hay`: what `str::find` with a `&str` pattern
/// does, as a plain loop over the few short needles the crate searches for (std's two-way
/// searcher, behind every `&str` pattern of `find`, `contains`, `split_once`, `replace` and
/// `match_indices`, is about 2.5 KB of the wasm module).
pub(crate) fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return Some(0);
    };
    let mut i = 0;
    while i + n.len() <= h.len() {
        if h.get(i) == Some(&first) && h.get(i..i + n.len()) == Some(n) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether `hay` contains `needle` (see [`find`]).
pub(crate) fn contains(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// `parts` with `sep` between them: what `[S]::join` does, as a small loop (std's `join` is
/// about a kilobyte of the wasm module per instance, for error texts and titles).
pub(crate) fn join<S: AsRef<str>>(parts: &[S], sep: &str) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(p.as_ref());
    }
    out
}

/// `bytes` as text, each invalid sequence replaced by one U+FFFD (the maximal subparts of the
/// Unicode standard, as `Utf8Error::error_len` measures them): what `String::from_utf8_lossy`
/// returns, borrowed when the bytes are valid. Built on the plain validator, so std's
/// `Utf8Chunks` decoder (about 1.1 KB of the wasm module, for a few error and stream paths)
/// is not linked.
pub(crate) fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let mut rest = bytes;
    let mut out = String::new();
    loop {
        match std::str::from_utf8(rest) {
            // Nothing replaced yet (a replacement always leaves `out` non-empty).
            Ok(s) if out.is_empty() => return std::borrow::Cow::Borrowed(s),
            Ok(s) => {
                out.push_str(s);
                return std::borrow::Cow::Owned(out);
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push('\u{fffd}');
                match e.error_len() {
                    Some(n) => rest = after.get(n..).unwrap_or_default(),
                    // A sequence cut short by the end: one replacement for all of it.
                    None => return std::borrow::Cow::Owned(out),
                }
            }
        }
    }
}

/// The byte index of the last `sep` (an ASCII byte) in `s`: what `str::rfind` with a `char`
/// does for an ASCII one, without std's reverse char searcher (linked for a few `@` and `/`
/// splits of URLs and keys).
pub(crate) fn rfind(s: &str, sep: u8) -> Option<usize> {
    s.bytes().rposition(|b| b == sep)
}

/// `s` split at its last `sep` (an ASCII byte), like `str::rsplit_once` with that `char`.
pub(crate) fn rsplit_once(s: &str, sep: u8) -> Option<(&str, &str)> {
    let i = rfind(s, sep)?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// The parts of `s` between `sep`s (an ASCII byte), last first: what `str::rsplit` with that
/// `char` yields. Its users are the wasm adapters' key parsing (web/js_store), so native builds
/// compile it for its test only.
#[cfg(any(target_arch = "wasm32", test))]
pub(crate) fn rsplit(s: &str, sep: u8) -> RSplit<'_> {
    RSplit { rest: Some(s), sep }
}

/// The iterator of [`rsplit`].
#[cfg(any(target_arch = "wasm32", test))]
pub(crate) struct RSplit<'a> {
    rest: Option<&'a str>,
    sep: u8,
}

#[cfg(any(target_arch = "wasm32", test))]
impl<'a> Iterator for RSplit<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let s = self.rest?;
        match rsplit_once(s, self.sep) {
            Some((head, last)) => {
                self.rest = Some(head);
                Some(last)
            }
            None => {
                self.rest = None;
                Some(s)
            }
        }
    }
}

/// `s` with every `from` replaced by `to`: what `str::replace` with a `char` pattern does, over
/// the `split` searcher the crate links anyway (std's `replace` is an instance of its own).
pub(crate) fn replace_char(s: &str, from: char, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split(from).enumerate() {
        if i > 0 {
            out.push_str(to);
        }
        out.push_str(part);
    }
    out
}

/// Reverses `v` in place, like `slice::reverse`: the loop is compiled once, and each element
/// type adds only a swap (std's `reverse` is an instance of its own per type, about 210 B of
/// the wasm module each, for a few lists read newest first).
pub(crate) fn reverse<T>(v: &mut [T]) {
    reverse_by_swaps(v.len(), &mut |a, b| v.swap(a, b));
}

/// Takes the first element of `v`, for the engine's queues (calls, events, notices to
/// publish): they hold a few elements at a time, so shifting the rest costs less than a
/// `VecDeque`, whose ring-buffer code is an instance of its own per element type.
pub(crate) fn pop_front<T>(v: &mut Vec<T>) -> Option<T> {
    match v.is_empty() {
        true => None,
        false => Some(v.remove(0)),
    }
}

/// The swaps that reverse `n` elements.
#[inline(never)]
fn reverse_by_swaps(n: usize, swap: &mut dyn FnMut(usize, usize)) {
    for i in 0..n / 2 {
        swap(i, n - 1 - i);
    }
}

/// What `u64::from_str` accepts: an optional `+`, then one or more ASCII digits, in range.
/// One loop for the crate's few integer fields (dates, retry times, key orders); std's
/// `from_str` is an instance per integer type (300 to 600 B of the wasm module each).
pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// What `u32::from_str` accepts (see [`parse_u64`]).
pub(crate) fn parse_u32(s: &str) -> Option<u32> {
    u32::try_from(parse_u64(s)?).ok()
}

/// What `usize::from_str` accepts (see [`parse_u64`]).
pub(crate) fn parse_usize(s: &str) -> Option<usize> {
    usize::try_from(parse_u64(s)?).ok()
}

/// What `i64::from_str` accepts: one optional sign, then one or more ASCII digits, in range.
pub(crate) fn parse_i64(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(digits) if !digits.starts_with('+') => 0i64.checked_sub_unsigned(parse_u64(digits)?),
        _ => i64::try_from(parse_u64(s)?).ok(),
    }
}

#[cfg(test)]
mod tests {
    /// [`super::find`] and [`super::contains`] answer as `str::find` / `str::contains` do,
    /// multi-byte text, repeated prefixes and empty needles included.
    #[test]
    fn find_is_str_find() {
        let hays = [
            "",
            "a",
            "abc",
            "aab",
            "ababac",
            "x://y://z",
            "héllo wörld",
            "日本語の本",
            "~~1~0",
        ];
        let needles = [
            "", "a", "ab", "abac", "://", "ö", "wörld", "本", "の本", "~1", "~0", "zz",
        ];
        for h in hays {
            for n in needles {
                assert_eq!(super::find(h, n), h.find(n), "find({h:?}, {n:?})");
                assert_eq!(
                    super::contains(h, n),
                    h.contains(n),
                    "contains({h:?}, {n:?})"
                );
            }
        }
    }

    /// [`super::lossy`] gives what `String::from_utf8_lossy` gives, borrowed or not: every
    /// sequence of up to two bytes, and three- and four-byte ones over the bytes where UTF-8
    /// changes meaning (lead bytes, continuation bounds, surrogates, overlongs, past U+10FFFF).
    #[test]
    fn lossy_is_from_utf8_lossy() {
        use std::borrow::Cow;
        let check = |b: &[u8]| {
            let ours = super::lossy(b);
            let theirs = String::from_utf8_lossy(b);
            assert_eq!(ours, theirs, "lossy({b:?})");
            assert_eq!(
                matches!(ours, Cow::Borrowed(_)),
                matches!(theirs, Cow::Borrowed(_)),
                "borrowed({b:?})"
            );
        };
        check(b"");
        for a in 0..=255u8 {
            check(&[a]);
            for b in 0..=255u8 {
                check(&[a, b]);
            }
        }
        let edges: [u8; 22] = [
            0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0,
            0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xe2, 0xf1,
        ];
        for &a in &edges {
            for &b in &edges {
                for &c in &edges {
                    check(&[a, b, c]);
                    for &d in &edges {
                        check(&[a, b, c, d]);
                        check(&[b'x', a, b, c, d, b'y']);
                    }
                }
            }
        }
        check("héllo wörld 日本語".as_bytes());
        check(b"ok \xe2\x82 mid \xff\xfe end \xf0\x9f\x98");
    }

    /// [`super::rfind`], [`super::rsplit_once`] and [`super::rsplit`] answer as `str::rfind`,
    /// `str::rsplit_once` and `str::rsplit` do with the same ASCII `char`, around multi-byte
    /// text, empty parts and separators at either end.
    #[test]
    fn rsplit_is_str_rsplit() {
        let hays = [
            "",
            "/",
            "//",
            "a",
            "a/b",
            "/a/b/",
            "aww/a/w1/000001/agent-1",
            "u:p@h@x.test:8",
            "@",
            "é/ü@日本/",
            "no separator",
        ];
        for h in hays {
            for (b, c) in [(b'/', '/'), (b'@', '@')] {
                assert_eq!(super::rfind(h, b), h.rfind(c), "rfind({h:?}, {c:?})");
                assert_eq!(
                    super::rsplit_once(h, b),
                    h.rsplit_once(c),
                    "rsplit_once({h:?})"
                );
                let ours: Vec<&str> = super::rsplit(h, b).collect();
                let theirs: Vec<&str> = h.rsplit(c).collect();
                assert_eq!(ours, theirs, "rsplit({h:?}, {c:?})");
                assert_eq!(super::rsplit(h, b).nth(1), h.rsplit(c).nth(1));
            }
        }
    }

    /// [`super::replace_char`] gives what `str::replace` with a `char` gives: ASCII and
    /// multi-byte patterns, at the ends, repeated, absent, replaced by nothing or by more.
    #[test]
    fn replace_char_is_str_replace() {
        let hays = [
            "",
            "`",
            "``a``",
            "a`b`c",
            "it\u{2019}s",
            "\u{2019}\u{2019}x\u{2019}",
            "plain",
            "日`本",
        ];
        for h in hays {
            for (from, to) in [('`', ""), ('\u{2019}', "'"), ('a', "xyz"), ('本', "`")] {
                assert_eq!(
                    super::replace_char(h, from, to),
                    h.replace(from, to),
                    "replace({h:?}, {from:?}, {to:?})"
                );
            }
        }
    }

    /// [`super::reverse`] leaves what `slice::reverse` leaves, for every length up to 9.
    #[test]
    fn reverse_is_slice_reverse() {
        for n in 0..10 {
            let mut ours: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
            let mut theirs = ours.clone();
            super::reverse(&mut ours);
            theirs.reverse();
            assert_eq!(ours, theirs, "n = {n}");
        }
    }

    /// [`super::pop_front`] takes elements in the order they were pushed, then `None`.
    #[test]
    fn pop_front_is_fifo() {
        let mut q = vec!["a", "b"];
        q.push("c");
        assert_eq!(super::pop_front(&mut q), Some("a"));
        q.push("d");
        let mut rest = Vec::new();
        while let Some(x) = super::pop_front(&mut q) {
            rest.push(x);
        }
        assert_eq!(rest, ["b", "c", "d"]);
        assert_eq!(super::pop_front(&mut q), None);
    }

    /// [`super::parse_u64`], [`super::parse_u32`], [`super::parse_usize`] and
    /// [`super::parse_i64`] accept and refuse what std's `from_str` of each type does: signs,
    /// empty text, non-digits, leading zeros, whitespace and both ends of each range.
    #[test]
    fn parse_ints_are_from_str() {
        let texts = [
            "",
            "+",
            "-",
            "0",
            "00",
            "+0",
            "-0",
            "7",
            "+7",
            "-7",
            "+-7",
            "-+7",
            "--7",
            "++7",
            "12a",
            " 1",
            "1 ",
            "٣",
            "1994",
            "06",
            "4294967295",
            "4294967296",
            "-4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "000000000000000000000000000042",
        ];
        for t in texts {
            assert_eq!(super::parse_u64(t), t.parse::<u64>().ok(), "u64 {t:?}");
            assert_eq!(super::parse_u32(t), t.parse::<u32>().ok(), "u32 {t:?}");
            assert_eq!(
                super::parse_usize(t),
                t.parse::<usize>().ok(),
                "usize {t:?}"
            );
            assert_eq!(super::parse_i64(t), t.parse::<i64>().ok(), "i64 {t:?}");
        }
    }
}
