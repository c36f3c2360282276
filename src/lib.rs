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

/// The heap of the wasm build: talc (MIT) in place of std's dlmalloc. It is the smaller of the
/// two by 2.8 KB gzip of the package (the size budget is the issue this serves), and was
/// measured as fast: routing in the original's scenario 0.99x per main-thread CPU second and
/// streaming within noise, 40 and 6 A/B rounds against dlmalloc. Freed memory is reused: with
/// session off, the wasm memory at 10,000 messages is what dlmalloc's is (3.0 MiB, flat); with
/// session on, where every message stays, it holds 5 % more (12.0 against 11.5 MiB). The
/// dynamic variant grows the wasm memory as the heap needs it, as dlmalloc does. Single
/// threaded wasm only (the crate is built without `atomics`); native builds keep the system
/// allocator.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static HEAP: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(target_arch = "wasm32")]
pub mod web;

#[cfg(target_arch = "wasm32")]
pub mod bindings;
