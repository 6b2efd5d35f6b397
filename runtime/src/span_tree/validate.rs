//! The three instantiations of the tree code, one source: [`Unchecked`] is
//! the builtin pool's tree, in runtime memory; [`Shared`] is a `slice_pool`
//! pool's, the runtime's own copy of it, whose node array the program sees
//! through a copy-on-write view of the same pages (`crate::memory::
//! shared_pages`), so only header words are written twice; [`Mirrored`] is
//! a pool registered over caller-provided memory (`tern_span_init`), each
//! change also written to the caller's copy. None validates what it reads:
//! all read only memory the program cannot write. The choice is a
//! compile-time constant, so the builtin's copy carries no trace of the
//! mirror.

/// Selects whether the tree code writes a second copy of the tree.
pub trait Validate: Copy + Default + 'static {
    /// True when every header word written is also written to the
    /// program's copy of the header (`Raw::mirrored`).
    const MIRRORED: bool;
    /// True when every node word written is also written to the program's
    /// copy of the node array (`Raw::mirrored`).
    const MIRROR_NODES: bool;
}

/// The builtin pool's tree: runtime memory only.
#[derive(Clone, Copy, Default, Debug)]
pub struct Unchecked;

/// A library pool's tree over caller-provided memory (`tern_span_init`):
/// the runtime's copy, which it reads and writes, and the caller's, which
/// it only writes (the caller may read it, and what it writes there is
/// never read back).
#[derive(Clone, Copy, Default, Debug)]
pub struct Mirrored;

/// A `slice_pool` pool's tree (`tern_span_new`): the runtime's copy, which
/// it reads and writes; the program's node array is a copy-on-write view
/// of the same pages, so node words are written once, and only the
/// program's header (in its `Pool`) is written beside the runtime's.
#[derive(Clone, Copy, Default, Debug)]
pub struct Shared;

impl Validate for Unchecked {
    const MIRRORED: bool = false;
    const MIRROR_NODES: bool = false;
}

impl Validate for Mirrored {
    const MIRRORED: bool = true;
    const MIRROR_NODES: bool = true;
}

impl Validate for Shared {
    const MIRRORED: bool = true;
    const MIRROR_NODES: bool = false;
}
