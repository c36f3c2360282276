//! wasm-only adapters (fetch transport, IndexedDB store, JS-supplied store, clock, custom
//! provider): everything that touches JavaScript lives here or in `bindings`.
//! Every global (fetch, Date, crypto) is reached through `globalThis`, never `window()`, so the
//! same module runs in a page, a Web Worker, Node 20+, Deno and Cloudflare workerd.

pub mod clock;
pub mod custom_provider;
pub mod fetch;
mod idb_error;
mod idb_fast;
mod idb_request;
pub mod idb_schema;
pub mod idb_store;
mod idb_write;
pub mod js_store;
pub mod js_tools;
pub mod llm_fetch;
pub mod tabs;
pub(crate) mod text_run;
pub mod timer;
