//! The builtin pool behind `reusable[]T`: one process-wide unchecked span pool.
//!
//! It is created on first use (or by [`init`]) with `TERN_POOL_BYTES` bytes of
//! arena (default [`DEFAULT_POOL_BYTES`], reserved and committed lazily). A mutex
//! keeps it sound if several threads touch it (Tern programs are single-threaded,
//! so the lock is never contended).

use std::sync::Mutex;

use crate::pool::SpanPool;
use crate::span_tree::{TreeResult, Unchecked};

/// Default arena size of the builtin pool: 4 GiB of address space.
pub const DEFAULT_POOL_BYTES: i64 = 4 << 30;

/// The builtin pool type.
pub type BuiltinPool = SpanPool<Unchecked>;

static POOL: Mutex<Option<BuiltinPool>> = Mutex::new(None);

/// The arena size from `TERN_POOL_BYTES` (decimal bytes), else the default.
/// A value that is not a positive integer is an error message.
pub fn configured_bytes() -> Result<i64, String> {
    match std::env::var("TERN_POOL_BYTES") {
        Err(_) => Ok(DEFAULT_POOL_BYTES),
        Ok(s) => match s.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "TERN_POOL_BYTES must be a positive number of bytes, got `{s}`"
            )),
        },
    }
}

/// Creates the builtin pool with `arena_bytes` of arena, replacing any existing
/// one (which is released). Errors are messages for the user.
pub fn init(arena_bytes: i64) -> Result<(), String> {
    let pool = BuiltinPool::new(arena_bytes).map_err(|e| {
        format!(
            "cannot reserve the builtin pool ({arena_bytes} bytes): {}",
            crate::span_tree::error::message(e)
        )
    })?;
    *POOL.lock().unwrap_or_else(|e| e.into_inner()) = Some(pool);
    Ok(())
}

/// Runs `f` on the builtin pool, creating it from the environment on first use.
pub fn with_pool<R>(f: impl FnOnce(&mut BuiltinPool) -> R) -> Result<R, String> {
    let mut g = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if g.is_none() {
        let bytes = configured_bytes()?;
        *g = Some(BuiltinPool::new(bytes).map_err(|e| {
            format!(
                "cannot reserve the builtin pool ({bytes} bytes): {}",
                crate::span_tree::error::message(e)
            )
        })?);
    }
    match g.as_mut() {
        Some(p) => Ok(f(p)),
        None => Err("builtin pool missing".into()),
    }
}

/// Allocates `bytes` zero-filled; returns the address (null for 0 bytes).
pub fn alloc(bytes: i64) -> Result<*mut u8, String> {
    if bytes == 0 {
        return Ok(std::ptr::null_mut());
    }
    with_pool(|p| -> TreeResult<*mut u8> {
        let off = p.alloc_zeroed(bytes)?;
        // SAFETY: offsets returned by the tree lie inside the arena.
        Ok(unsafe { p.base().add(off as usize) })
    })?
    .map_err(|e| crate::span_tree::error::message_with_size(e, bytes))
}

/// Converts an address to an offset in `p`'s arena (`-1` for null), or `OUTSIDE_ARENA`.
fn offset_in(p: &BuiltinPool, ptr: *const u8) -> TreeResult<i64> {
    if ptr.is_null() {
        return Ok(-1);
    }
    let (base, a) = (p.base() as usize, ptr as usize);
    if a < base || a - base > p.arena_bytes() as usize {
        return Err(crate::span_tree::error::OUTSIDE_ARENA);
    }
    Ok((a - base) as i64)
}

/// The resize contract on addresses (see `SpanPool::resize`).
pub fn resize(ptr: *mut u8, old: i64, new: i64) -> Result<*mut u8, String> {
    with_pool(|p| -> TreeResult<*mut u8> {
        let off = offset_in(p, ptr)?;
        let to = p.resize(if old == 0 { -1 } else { off }, old, new)?;
        // SAFETY: offsets returned by the tree lie inside the arena.
        Ok(if to < 0 {
            std::ptr::null_mut()
        } else {
            unsafe { p.base().add(to as usize) }
        })
    })?
    .map_err(|e| crate::span_tree::error::message_with_size(e, new))
}

/// Frees the span at `ptr` of `bytes` (no-op for null or 0 bytes).
pub fn free(ptr: *mut u8, bytes: i64) -> Result<(), String> {
    if ptr.is_null() || bytes == 0 {
        return Ok(());
    }
    with_pool(|p| -> TreeResult<()> {
        let off = offset_in(p, ptr)?;
        p.free(off, bytes)
    })?
    .map_err(crate::span_tree::error::message)
}

/// The byte offset of `ptr` in the arena; -1 for null.
pub fn offset(ptr: *const u8) -> Result<i64, String> {
    with_pool(|p| offset_in(p, ptr))?.map_err(crate::span_tree::error::message)
}
