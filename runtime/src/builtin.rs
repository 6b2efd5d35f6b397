//! The builtin pool behind `reusable[]T`: one process-wide unchecked span pool.
//!
//! It is created on first use (or by [`init`]) with `TERN_POOL_BYTES` bytes of
//! arena (default [`DEFAULT_POOL_BYTES`], reserved and committed lazily).
//!
//! No lock: Tern code runs on one thread at a time (a program on its main
//! thread; the REPL evaluates one input at a time on one worker thread, and a
//! runtime error jumps out of a pool operation only once it holds nothing).
//! An uncontended mutex would still cost two atomic operations on every
//! `reusable` operation, a measurable share of the tree's fast path and a
//! bias in the `slice_pool` vs `reusable[]` comparison.

use std::cell::UnsafeCell;

use crate::pool::SpanPool;
use crate::span_tree::{TreeResult, Unchecked, round8};

/// Default arena size of the builtin pool: 4 GiB of address space.
pub const DEFAULT_POOL_BYTES: i64 = 4 << 30;

/// The builtin pool type.
pub type BuiltinPool = SpanPool<Unchecked>;

/// The process-wide pool slot (see the module docs for why it has no lock).
struct PoolSlot(UnsafeCell<Option<BuiltinPool>>);

// SAFETY: accessed by one thread at a time (module docs); every access goes
// through `slot`, whose callers never hold the reference across another access.
unsafe impl Sync for PoolSlot {}

static POOL: PoolSlot = PoolSlot(UnsafeCell::new(None));

/// The pool slot. Callers keep the reference only for one operation.
#[allow(clippy::mut_from_ref)]
fn slot() -> &'static mut Option<BuiltinPool> {
    // SAFETY: single-threaded use (module docs); no caller nests accesses.
    unsafe { &mut *POOL.0.get() }
}

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
    let (base, bytes) = (pool.base() as i64, pool.arena_bytes());
    *slot() = Some(pool);
    crate::sanitize::rebind_builtin(base, bytes);
    Ok(())
}

/// Runs `f` on the builtin pool, creating it from the environment on first use.
pub fn with_pool<R>(f: impl FnOnce(&mut BuiltinPool) -> R) -> Result<R, String> {
    Ok(f(pool()?))
}

/// The builtin pool, created from the environment on first use.
#[inline(always)]
fn pool() -> Result<&'static mut BuiltinPool, String> {
    match slot() {
        Some(p) => Ok(p),
        None => create(),
    }
}

/// Creates the pool from the environment: out of line, so that the entry
/// points keep a small frame (inlined, this path's error formatting cost
/// every `reusable` operation register saves and stack set-up).
#[cold]
#[inline(never)]
fn create() -> Result<&'static mut BuiltinPool, String> {
    let bytes = configured_bytes()?;
    let pool = BuiltinPool::new(bytes).map_err(|e| {
        format!(
            "cannot reserve the builtin pool ({bytes} bytes): {}",
            crate::span_tree::error::message(e)
        )
    })?;
    Ok(slot().insert(pool))
}

/// Runs `f` on the builtin pool if it exists (`None` when no pool was made).
pub fn with_existing<R>(f: impl FnOnce(&mut BuiltinPool) -> R) -> Option<R> {
    slot().as_mut().map(f)
}

/// Allocates `bytes` zero-filled; returns the address (null for 0 bytes).
#[inline]
pub fn alloc(bytes: i64) -> Result<*mut u8, String> {
    if bytes == 0 {
        return Ok(std::ptr::null_mut());
    }
    let p = pool()?;
    match p.alloc_zeroed(bytes) {
        // SAFETY: offsets returned by the tree lie inside the arena.
        Ok(off) => Ok(unsafe { p.base().add(off as usize) }),
        Err(e) => Err(crate::span_tree::error::message_with_size(e, bytes)),
    }
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

/// The message for error `code` of a call on the span `[off, off + bytes)`:
/// stale-span errors name the live allocation at `off` (see
/// [`crate::span_tree::error::stale_message`]), exhaustion the size `want`.
#[cold]
fn describe(p: &BuiltinPool, code: i64, off: i64, bytes: i64, want: i64) -> String {
    use crate::span_tree::error::{self, STALE_FREE, STALE_RESIZE};
    match code {
        STALE_FREE | STALE_RESIZE => {
            error::stale_message(code, off, round8(bytes), p.live_bytes_at(off))
        }
        _ => error::message_with_size(code, want),
    }
}

/// The resize contract on addresses (see `SpanPool::resize`).
#[inline]
pub fn resize(ptr: *mut u8, old: i64, new: i64) -> Result<*mut u8, String> {
    let p = pool()?;
    let off = offset_in(p, ptr).map_err(crate::span_tree::error::message)?;
    match p.resize(if old == 0 { -1 } else { off }, old, new) {
        Ok(to) if to < 0 => Ok(std::ptr::null_mut()),
        // SAFETY: offsets returned by the tree lie inside the arena.
        Ok(to) => Ok(unsafe { p.base().add(to as usize) }),
        Err(e) => Err(describe(p, e, off, old, new)),
    }
}

/// Frees the span at `ptr` of `bytes` (no-op for null or 0 bytes).
#[inline]
pub fn free(ptr: *mut u8, bytes: i64) -> Result<(), String> {
    if ptr.is_null() || bytes == 0 {
        return Ok(());
    }
    let p = pool()?;
    let off = offset_in(p, ptr).map_err(crate::span_tree::error::message)?;
    p.free(off, bytes)
        .map_err(|e| describe(p, e, off, bytes, bytes))
}

/// The byte offset of `ptr` in the arena; -1 for null.
pub fn offset(ptr: *const u8) -> Result<i64, String> {
    offset_in(pool()?, ptr).map_err(crate::span_tree::error::message)
}

/// [`offset`] when the pool exists and `ptr` is null or inside its arena, in
/// registers; `None` sends the caller to [`offset`] for the rest (creating the
/// pool, the message). `reusable::offset` is a per-element call in some
/// programs, and the message's stack frame was half its cost.
#[inline(always)]
pub fn offset_quick(ptr: *const u8) -> Option<i64> {
    slot().as_ref().and_then(|p| offset_in(p, ptr).ok())
}
