//! The JS clock, id source and Unicode text operations injected into the pure core.

use std::cell::RefCell;

/// Milliseconds since the Unix epoch from `Date.now()` (`std::time` panics on wasm32).
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// Ids drawn per refill of the random pool. Every id used to be one `crypto.getRandomValues`
/// call (a trip to the host and, in Node, a `randomFillSync`): a busy world makes several ids
/// per reply (the message, the call's reply, the notices), so they are drawn in blocks.
const IDS_PER_DRAW: usize = 64;

struct Pool {
    bytes: [u8; 16 * IDS_PER_DRAW],
    /// Bytes of `bytes` already handed out (all of them: refill first).
    used: usize,
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool {
            bytes: [0; 16 * IDS_PER_DRAW],
            used: 16 * IDS_PER_DRAW,
        })
    };
}

/// 16 random bytes from the pool, refilled from `crypto.getRandomValues` (present in every
/// supported runtime) when empty; a host without it gets `Math.random` bytes, still unique
/// enough for ids (nothing here is a secret) and never a panic in the middle of a change.
fn random_16() -> [u8; 16] {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.used + 16 > p.bytes.len() {
            if getrandom::fill(&mut p.bytes).is_err() {
                for b in p.bytes.iter_mut() {
                    *b = (js_sys::Math::random() * 256.0) as u8;
                }
            }
            p.used = 0;
        }
        let start = p.used;
        p.used += 16;
        let mut out = [0u8; 16];
        if let Some(chunk) = p.bytes.get(start..start + 16) {
            out.copy_from_slice(chunk);
        }
        out
    })
}

/// A random uuid v4 (RFC 9562: version 4, variant `10`), lower-case hex with hyphens.
pub fn new_id() -> String {
    format_v4(random_16())
}

/// Formats 16 random bytes as a uuid v4: the version and variant bits are set, the rest kept.
pub fn format_v4(mut b: [u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut out = [b'-'; 36];
    let mut at = 0;
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1; // the hyphen already there
        }
        if let Some(pair) = out.get_mut(at..at + 2) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0x0f)];
        }
        at += 2;
    }
    // Only ASCII hex digits and hyphens: always valid UTF-8.
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

/// The engine's clock: `Date.now()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsClock;

impl crate::core::clock::Clock for JsClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// The engine's id source: random uuid v4.
#[derive(Debug, Clone, Copy, Default)]
pub struct UuidIds;

impl crate::core::clock::IdSource for UuidIds {
    fn new_id(&self) -> String {
        new_id()
    }
}

/// NFC through the host's `String.prototype.normalize` (the id rule, src/core/ids.rs).
pub fn host_nfc(s: &str) -> String {
    js_sys::JsString::from(s).normalize("NFC").into()
}

/// The host's `toLowerCase` then NFC (the id rule, src/core/ids.rs).
pub fn host_lower_nfc(s: &str) -> String {
    js_sys::JsString::from(s)
        .to_lower_case()
        .normalize("NFC")
        .into()
}

/// Makes the core's id rule normalise with the host's Unicode tables (the `.wasm` carries none).
/// Called before every world is created or opened; only the first call takes effect.
pub fn inject_text_ops() {
    crate::core::ids::set_text_ops(crate::core::ids::TextOps {
        nfc: host_nfc,
        lower_nfc: host_lower_nfc,
    });
}
