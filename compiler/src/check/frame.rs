//! The stack frame bound: a function whose locals and temporaries could not
//! fit in a machine stack frame is a compile error here, at its name, rather
//! than a code-generation failure without a place.
//!
//! The bound is the frame plan's (`tir::frame`, the one place that decides
//! where every local and temporary lives, which the backend and the
//! interpreter read too): the temporaries and the aggregate locals that
//! own a slot. Scalars, slices and spills are small and covered by the
//! margin between [`MAX_FRAME_BYTES`] and Cranelift's 1 GiB frame limit.

use crate::tir::{Function, Program, frame};

/// Largest frame bound a function may have, in bytes (512 MiB; a frame this
/// large overflows any usual thread stack at run time anyway, which is
/// reported as a stack overflow).
pub(crate) const MAX_FRAME_BYTES: u64 = 1 << 29;

/// The frame bound of `f`, in bytes (saturating).
pub(crate) fn bound(program: &Program, f: &Function) -> u64 {
    frame::plan(program, f).bound
}
