//! # agent-world-wasm
//!
//! A multi-agent "world" engine: agents (LLM personas) live in a world, talk to a human and to
//! each other through `@mentions` under turn limits, stream replies from LLM APIs over `fetch`,
//! and keep chats and memories in IndexedDB. The crate compiles to WebAssembly and ships as an
//! npm package that runs entirely client-side.
//!
//! The one architectural rule (see ARCHITECTURE.md): [`core`] is pure Rust and knows nothing of
//! JavaScript, `fetch`, IndexedDB, clocks or randomness; time and ids are injected. The
//! wasm-only adapters live in `web`, and the JS API in `bindings`, both compiled for wasm32 only.

pub mod core;

#[cfg(target_arch = "wasm32")]
pub mod web;

#[cfg(target_arch = "wasm32")]
pub mod bindings;
