//! wasm-only adapters: fetch transport, IndexedDB store, JS clock and ids.
