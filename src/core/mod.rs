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
