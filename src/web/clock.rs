//! The JS clock and id source injected into the pure core.

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
