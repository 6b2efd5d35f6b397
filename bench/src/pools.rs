//! The pool sizes a generated program reserves, and the runtime's limits
//! they must respect (mirrored here: the harness does not link the
//! runtime; a test compares them).

/// Bytes of arena the library sides reserve (virtual; committed lazily):
/// far more than any workload keeps live, so exhaustion is never measured.
/// A trace replay reserves more when its trace needs it
/// ([`crate::traces::Footprint`]).
pub const LIBRARY_ARENA_BYTES: i64 = 1 << 30;

/// The largest arena a pool can have: 2^31 - 1 granules of 8 bytes (the
/// runtime's `span_tree::layout::MAX_ARENA_BYTES`).
pub const MAX_ARENA_BYTES: i64 = i32::MAX as i64 * 8;

/// The builtin pool's arena when `TERN_POOL_BYTES` is unset (the runtime's
/// `builtin::DEFAULT_POOL_BYTES`).
pub const BUILTIN_POOL_BYTES: i64 = 4 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_limits_are_the_runtimes() {
        use tern_runtime::{builtin::DEFAULT_POOL_BYTES, span_tree::layout};
        assert_eq!(MAX_ARENA_BYTES, layout::MAX_ARENA_BYTES);
        assert_eq!(BUILTIN_POOL_BYTES, DEFAULT_POOL_BYTES);
    }
}
