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

/// The `TERN_POOL_BYTES` a run that needs a builtin pool of `need` bytes
/// must be given, when `env` (the environment's `TERN_POOL_BYTES`, if set)
/// or, without a number there, the default is smaller; `None` when the
/// pool it would get anyway is large enough.
pub fn builtin_pool_override(need: i64, env: Option<&str>) -> Option<i64> {
    let asked = env
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(BUILTIN_POOL_BYTES);
    (need > asked).then_some(need)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_limits_are_the_runtimes() {
        use tern_runtime::{builtin::DEFAULT_POOL_BYTES, span_tree::layout};
        assert_eq!(MAX_ARENA_BYTES, layout::MAX_ARENA_BYTES);
        assert_eq!(BUILTIN_POOL_BYTES, DEFAULT_POOL_BYTES);
    }

    #[test]
    fn the_builtin_pool_is_raised_only_past_what_the_run_gets() {
        let need = 6 << 30;
        assert_eq!(builtin_pool_override(need, None), Some(need));
        assert_eq!(builtin_pool_override(need, Some("x")), Some(need));
        assert_eq!(builtin_pool_override(need, Some("1024")), Some(need));
        assert_eq!(builtin_pool_override(need, Some("8589934592")), None);
        assert_eq!(builtin_pool_override(BUILTIN_POOL_BYTES, None), None);
        // A smaller pool the environment asks for is kept when it suffices.
        assert_eq!(builtin_pool_override(1 << 20, Some("2097152")), None);
    }
}
