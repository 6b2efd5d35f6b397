//! The span tree: free spans of an arena in an augmented B+ tree keyed by offset.
//!
//! * [`layout`] — the header and node layout (the one place it is defined);
//! * [`tree`] — the tree code, generic over [`validate::Validate`];
//! * [`append_window`] — a library pool's append window (its appends in a loop);
//! * [`library`] — the library's entry points (`tern_span_*`): the runtime's
//!   copy of each pool's tree, shown to the program through its header and
//!   node array;
//! * [`registry`] — authoritative bounds of library pools;
//! * [`extents`] — the boundary record: which spans are live allocations;
//! * [`model`] — the reference model of the placement contract;
//! * [`error`] — error codes and messages;
//! * [`mirrored`] — the constants the stdlib's Tern code mirrors;
//! * [`scan`] — the node scans (portable and AVX2).

pub mod append_window;
pub mod error;
pub mod extents;
pub mod finger;
pub mod layout;
pub mod library;
pub mod mirrored;
pub mod model;
pub mod registry;
pub mod scan;
pub mod tree;
pub mod validate;

pub use extents::Extents;
pub use tree::{Tree, TreeResult, round8};
pub use validate::{Mirrored, Shared, Unchecked, Validate};
