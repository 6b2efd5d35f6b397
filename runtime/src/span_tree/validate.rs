//! The two instantiations of the tree code: [`Unchecked`] trusts every word it
//! reads (the builtin pool owns its tree memory); [`Checked`] validates every word
//! it reads (the library's tree lives in program memory, which the program can
//! write). The choice is a compile-time constant, so the unchecked copy carries no
//! trace of the checks.

/// Selects whether the tree code validates what it reads.
pub trait Validate: Copy + Default + 'static {
    /// True when every word read from the header and nodes is validated.
    const CHECKED: bool;
}

/// Trusts the tree memory: for trees only the runtime writes (builtin pool).
#[derive(Clone, Copy, Default, Debug)]
pub struct Unchecked;

/// Validates every word read: for trees in program memory (library pools).
#[derive(Clone, Copy, Default, Debug)]
pub struct Checked;

impl Validate for Unchecked {
    const CHECKED: bool = false;
}

impl Validate for Checked {
    const CHECKED: bool = true;
}
