//! The span tree: free spans of an arena in an augmented B+ tree keyed by offset.
//!
//! * [`layout`] — the header and node layout (the one place it is defined);
//! * [`tree`] — the tree code, generic over [`validate::Validate`];
//! * [`append_window`] — a checked pool's append window (the library's appends);
//! * [`checked`] — the checked entry points over program memory (`tern_span_*`);
//! * [`registry`] — authoritative bounds of checked pools;
//! * [`extents`] — the boundary record: which spans are live allocations;
//! * [`model`] — the reference model of the placement contract;
//! * [`error`] — error codes and messages;
//! * [`mirrored`] — the constants the stdlib's Tern code mirrors;
//! * [`scan`] — the node scans (portable and AVX2).

pub mod append_window;
pub mod checked;
pub mod error;
pub mod extents;
pub mod finger;
pub mod layout;
pub mod mirrored;
pub mod model;
pub mod registry;
pub mod scan;
pub mod tree;
pub mod validate;

pub use extents::Extents;
pub use tree::{Tree, TreeResult, round8};
pub use validate::{Checked, Unchecked, Validate};
