//! The pure engine. Nothing in here may use wasm-bindgen, js-sys, web-sys, gloo,
//! indexed_db_futures, a clock (`Instant::now`, `SystemTime::now`) or randomness: the adapters
//! inject time and ids. `scripts/check-purity.sh` enforces this, and the whole module is tested
//! natively with `cargo test`.

pub mod clock;
pub mod engine;
pub mod error;
pub mod events;
pub mod ids;
pub mod llm;
pub mod llm_client;
pub mod memory_store;
pub mod mentions;
pub mod model;
pub mod reply;
pub mod store;
#[doc(hidden)]
pub mod store_contract;
#[doc(hidden)]
pub mod testing;
pub mod title;
