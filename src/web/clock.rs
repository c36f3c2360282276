//! The JS clock and id source injected into the pure core.

/// Milliseconds since the Unix epoch from `Date.now()` (`std::time` panics on wasm32).
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// A random uuid v4 (uuid reads `crypto.getRandomValues`, present in every supported runtime).
pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
