#![warn(missing_docs)]
//! Tern's memory runtime: the span tree pool (checked and unchecked from one
//! source) and the extern C ABI. See `docs/runtime.md` and
//! `docs/runtime-abi.md`.
//!
//! * [`span_tree`] — the augmented B+ tree of free spans, its layout, error codes,
//!   checked entry points, registry and reference model;
//! * [`pool`] — [`pool::SpanPool`], a pool owning its arena and node array;
//! * [`builtin`] — the process-wide builtin pool behind `reusable[]T`;
//! * [`sanitize`] — the sanitizer behind `--sanitize` (tags and shadow);
//! * [`memory`] — virtual memory reservations;
//! * [`io`] — files, the standard streams, arguments and environment for
//!   programs (the stdlib's `io`);
//! * [`stats`] — pool statistics written at exit for measurements;
//! * [`output_names`] — which standard stream a user's output name reaches,
//!   and whether a link at it may be followed;
//! * [`stdout`] — the program's output buffer and its flushing policy;
//! * [`abi`] — the `tern_*` externs;
//! * [`exit_status`] — the statuses a program ends with (a leaf module).

pub mod abi;
pub mod backtrace;
pub mod builtin;
pub mod exit_status;
pub mod io;
pub mod memory;
pub mod output_names;
pub mod pool;
pub mod sanitize;
pub mod span_tree;
pub mod stats;
pub mod stdout;

pub use pool::SpanPool;
pub use span_tree::{Mirrored, Shared, Unchecked};
