//! The two instantiations of the tree code, one source: [`Unchecked`] is
//! the builtin pool's tree, in runtime memory; [`Mirrored`] is a library
//! pool's, the runtime's own copy of it, each change also written to the
//! program's copy. Neither validates what it reads: both read only memory
//! the program cannot write. The choice is a compile-time constant, so the
//! builtin's copy carries no trace of the mirror.

/// Selects whether the tree code writes a second copy of the tree.
pub trait Validate: Copy + Default + 'static {
    /// True when every word written is also written to the program's copy
    /// of the tree (`Raw::mirrored`).
    const MIRRORED: bool;
}

/// The builtin pool's tree: runtime memory only.
#[derive(Clone, Copy, Default, Debug)]
pub struct Unchecked;

/// A library pool's tree: the runtime's copy, which it reads and writes,
/// and the program's, which it only writes (the program may read it, and
/// what it writes there is never read back).
#[derive(Clone, Copy, Default, Debug)]
pub struct Mirrored;

impl Validate for Unchecked {
    const MIRRORED: bool = false;
}

impl Validate for Mirrored {
    const MIRRORED: bool = true;
}
