//! Strings handed to the host as one run of UTF-8 in the instance's memory, read by a snippet
//! that decodes the run once and slices it by JS string lengths (a stream piece's content,
//! a message event's fields, a custom provider's request messages): the two things every such
//! crossing needs, in one place.

use wasm_bindgen::JsValue;

thread_local! {
    /// The instance's `WebAssembly.Memory` (the same object for the instance's life).
    static MEMORY: JsValue = wasm_bindgen::memory();
}

/// Calls `f` with the instance's `WebAssembly.Memory`, which the snippets view the run through.
pub(crate) fn with_memory<R>(f: impl FnOnce(&JsValue) -> R) -> R {
    MEMORY.with(f)
}

/// The length of `s` in UTF-16 code units (a JS string's `length`), which is what the
/// snippets slice the decoded run by: its byte length when ASCII, the usual case.
pub(crate) fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.encode_utf16().count()
    }
}
