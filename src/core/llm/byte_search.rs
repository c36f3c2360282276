//! Byte searches over a streamed reply, eight bytes at a time: the end of an SSE line, the end
//! of a JSON string's plain run. A streamed chunk is one `data:` line of about 200 bytes, read
//! byte by byte twice (once split, once scanned); at the release build's size-first
//! optimisation level those loops were a visible share of the engine's cost per chunk.
//!
//! Each search tests a word with the classic "has a zero byte" trick (`(x - 0x01…) & !x &
//! 0x80…`), whose lowest flagged byte is always a true match (a borrow only reaches bytes above
//! a match), so the first match is exact; the tail shorter than a word goes byte by byte.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every byte of `word` that is zero (exact for the lowest one).
#[inline(always)]
fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// The high bit of every byte of `word` below `n` (`n` ≤ 0x80; exact for the lowest one).
#[inline(always)]
fn bytes_below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// Runs `flags` over `bytes` word by word and `is_match` over the tail: the index of the first
/// byte matched. Written with a slice pattern and plain loops: at the size-first optimisation
/// level, `chunks_exact`, `copy_from_slice` and `position` stay calls (two per word).
#[inline(always)]
fn first(bytes: &[u8], flags: impl Fn(u64) -> u64, is_match: impl Fn(u8) -> bool) -> Option<usize> {
    let mut rest = bytes;
    let mut at = 0;
    while let [b0, b1, b2, b3, b4, b5, b6, b7, tail @ ..] = rest {
        let found = flags(u64::from_le_bytes([*b0, *b1, *b2, *b3, *b4, *b5, *b6, *b7]));
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        rest = tail;
        at += 8;
    }
    while let [byte, tail @ ..] = rest {
        if is_match(*byte) {
            return Some(at);
        }
        rest = tail;
        at += 1;
    }
    None
}

/// The index of the first `\n` or `\r` in `bytes`.
pub(crate) fn line_end(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| zero_bytes(w ^ (ONES * u64::from(b'\n'))) | zero_bytes(w ^ (ONES * u64::from(b'\r'))),
        |b| b == b'\n' || b == b'\r',
    )
}

/// The index of the first byte that ends a JSON string's plain run: a quote, a backslash or a
/// control character (below 0x20).
pub(crate) fn string_stop(bytes: &[u8]) -> Option<usize> {
    first(
        bytes,
        |w| {
            zero_bytes(w ^ (ONES * u64::from(b'"')))
                | zero_bytes(w ^ (ONES * u64::from(b'\\')))
                | bytes_below(w, 0x20)
        },
        |b| b == b'"' || b == b'\\' || b < 0x20,
    )
}

/// Whether `a` and `b` hold the same bytes, compared a word at a time (the size-first
/// build's `memcmp` goes byte by byte).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut a, mut b) = (a, b);
    while let (
        [a0, a1, a2, a3, a4, a5, a6, a7, a_tail @ ..],
        [b0, b1, b2, b3, b4, b5, b6, b7, b_tail @ ..],
    ) = (a, b)
    {
        if u64::from_le_bytes([*a0, *a1, *a2, *a3, *a4, *a5, *a6, *a7])
            != u64::from_le_bytes([*b0, *b1, *b2, *b3, *b4, *b5, *b6, *b7])
        {
            return false;
        }
        a = a_tail;
        b = b_tail;
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_is_byte_equality() {
        let base: Vec<u8> = (0..40u8).collect();
        for len in 0..40 {
            let a = &base[..len];
            assert!(same(a, a));
            assert!(!same(a, &base[..len + 1]));
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x80;
                assert!(!same(a, &b), "{len} {at}");
            }
        }
    }

    /// Every placement of every interesting byte, among bytes that come close to matching
    /// (neighbours of the targets, 0x20, 0x7f, 0x80.., 0xff), at every length up to 40.
    #[test]
    fn agrees_with_a_byte_by_byte_search() {
        let fillers = [
            b'a', 0x20, 0x21, 0x0b, 0x0e, b'[', b']', b'!', b'#', 0x7f, 0x80, 0x8a, 0xa0, 0xdc,
            0xff,
        ];
        let targets = [b'\n', b'\r', b'"', b'\\', 0x00, 0x01, 0x1f, 0x09];
        let naive_line = |s: &[u8]| s.iter().position(|&b| b == b'\n' || b == b'\r');
        let naive_stop = |s: &[u8]| s.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
        for len in 0..40 {
            for &fill in &fillers {
                let base = vec![fill; len];
                assert_eq!(line_end(&base), naive_line(&base));
                assert_eq!(string_stop(&base), naive_stop(&base));
                for at in 0..len {
                    for &t in &targets {
                        let mut s = base.clone();
                        s[at] = t;
                        // A second match later must not move the first.
                        if at + 3 < len {
                            s[at + 3] = b'\n';
                        }
                        assert_eq!(line_end(&s), naive_line(&s), "{s:?}");
                        assert_eq!(string_stop(&s), naive_stop(&s), "{s:?}");
                    }
                }
            }
        }
    }
}
