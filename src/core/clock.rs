//! Injected time and ids. The core never reads a clock or a random source itself (that panics
//! on wasm32 and makes tests flaky); the adapters pass a [`Clock`] and an [`IdSource`], and the
//! tests pass the deterministic [`ManualClock`] and [`SequentialIds`].

use std::cell::Cell;

/// Wall-clock time in epoch milliseconds.
pub trait Clock {
    fn now_ms(&self) -> i64;
}

/// Fresh, never reused ids for chats and messages (spec §1: uuid v4 or similar).
pub trait IdSource {
    fn new_id(&self) -> String;
}

/// A clock that only moves when told to. Starts at the given instant.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: Cell<i64>,
}

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        Self {
            now: Cell::new(start_ms),
        }
    }

    pub fn set(&self, ms: i64) {
        self.now.set(ms);
    }

    pub fn advance(&self, ms: i64) {
        self.now.set(self.now.get().saturating_add(ms));
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now.get()
    }
}

/// Ids `<prefix>-1`, `<prefix>-2`, … in call order.
#[derive(Debug)]
pub struct SequentialIds {
    prefix: String,
    next: Cell<u64>,
}

impl SequentialIds {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_string(),
            next: Cell::new(1),
        }
    }
}

impl Default for SequentialIds {
    fn default() -> Self {
        Self::new("id")
    }
}

impl IdSource for SequentialIds {
    fn new_id(&self) -> String {
        let n = self.next.get();
        self.next.set(n + 1);
        format!("{}-{n}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(10);
        assert_eq!(c.now_ms(), 10);
        c.advance(5);
        assert_eq!(c.now_ms(), 15);
        c.set(1);
        assert_eq!(c.now_ms(), 1);
    }

    #[test]
    fn sequential_ids_never_repeat() {
        let ids = SequentialIds::new("m");
        assert_eq!(ids.new_id(), "m-1");
        assert_eq!(ids.new_id(), "m-2");
    }
}
