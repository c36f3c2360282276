//! The pure engine. Nothing in here may touch JavaScript, the web platform (fetch, IndexedDB),
//! a clock or randomness (the exact list is in `scripts/check-purity.sh`): the adapters inject
//! time and ids. `scripts/check-purity.sh` enforces this, and the whole module is tested
//! natively with `cargo test`.

pub mod ids;
pub mod llm;
pub mod mentions;
pub mod reply;
pub mod title;
