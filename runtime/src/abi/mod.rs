//! The extern C ABI (`tern_*` symbols). Map: `docs/runtime-abi.md`.
//!
//! * [`span`] — the checked span tree for the library (`tern_span_*`);
//! * [`reusable`] — the builtin pool (`tern_reusable_*`);
//! * [`mem`] — memory reservation (`tern_mem_*`);
//! * [`fail`] — the single failure path.

pub mod fail;
pub mod mem;
pub mod reusable;
pub mod span;
