//! The JS clock, id source and Unicode text operations injected into the pure core.

/// Milliseconds since the Unix epoch from `Date.now()` (`std::time` panics on wasm32).
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// A random uuid v4 (uuid reads `crypto.getRandomValues`, present in every supported runtime).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
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
