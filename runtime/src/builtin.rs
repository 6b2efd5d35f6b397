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
use std::ffi::c_char;

use crate::abi::fail::report;

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

/// The builtin pool's fast-path record (`tern_abi::reusable_fast`): what
/// generated code reads to answer a byte append inside a span's last 8-byte
/// granule itself, the first case of `tern_reusable_resize_packed`, with
/// the same check of the boundary record and the same zero fill, and no
/// call. All zero while no builtin pool exists (an arena of 0 bytes holds no
/// span, so every append goes to the call, which creates the pool).
#[repr(C)]
pub struct ReusableFast {
    /// The arena's base address.
    pub base: i64,
    /// The arena's size in bytes.
    pub arena_bytes: i64,
    /// The boundary record's size map (`span_tree::extents`).
    pub sizes: i64,
    /// The boundary record's large table.
    pub large: i64,
}

const _: () = assert!(
    std::mem::offset_of!(ReusableFast, base) == tern_abi::reusable_fast::BASE as usize
        && std::mem::offset_of!(ReusableFast, arena_bytes)
            == tern_abi::reusable_fast::ARENA_BYTES as usize
        && std::mem::offset_of!(ReusableFast, sizes) == tern_abi::reusable_fast::SIZES as usize
        && std::mem::offset_of!(ReusableFast, large) == tern_abi::reusable_fast::LARGE as usize
        && tern_abi::reusable_fast::SMALL_GRANULES as u64 == crate::span_tree::extents::SMALL
);

/// [`ReusableFast`] behind the cell that lets the runtime rewrite it.
pub struct FastCell(UnsafeCell<ReusableFast>);

// SAFETY: written by the builtin pool's creation only, on the thread that
// runs Tern code (`builtin`'s module docs), never while generated code
// reads it.
unsafe impl Sync for FastCell {}

impl FastCell {
    /// Publishes the builtin pool's arena and record (`[sizes, large]`).
    pub(crate) fn publish(&self, base: i64, arena_bytes: i64, record: [i64; 2]) {
        // SAFETY: see the `Sync` impl.
        unsafe {
            *self.0.get() = ReusableFast {
                base,
                arena_bytes,
                sizes: record[0],
                large: record[1],
            }
        };
    }
}

/// The record generated code reads (see [`ReusableFast`]).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static tern_reusable_fast: FastCell = FastCell(UnsafeCell::new(ReusableFast {
    base: 0,
    arena_bytes: 0,
    sizes: 0,
    large: 0,
}));

/// The pool slot. Callers keep the reference only for one operation.
#[allow(clippy::mut_from_ref)]
fn slot() -> &'static mut Option<BuiltinPool> {
    // SAFETY: single-threaded use (module docs); no caller nests accesses.
    unsafe { &mut *POOL.0.get() }
}

/// The arena size from `TERN_POOL_BYTES` (decimal bytes), else the default.
/// A value that is not an integer from 1 to the largest arena is an error
/// message that says which bound it misses.
pub fn configured_bytes() -> Result<i64, String> {
    use crate::span_tree::tree::MAX_ARENA_BYTES;
    let Ok(s) = std::env::var("TERN_POOL_BYTES") else {
        return Ok(DEFAULT_POOL_BYTES);
    };
    let t = s.trim();
    let digits = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match t.parse::<i64>() {
        Ok(n) if (1..=MAX_ARENA_BYTES).contains(&n) => Ok(n),
        // All digits but not in range: too large (or 0).
        _ if digits && t.bytes().any(|b| b != b'0') => Err(format!(
            "TERN_POOL_BYTES is `{s}`, more than the largest pool, {MAX_ARENA_BYTES} bytes (16 GiB less 8)"
        )),
        _ => Err(format!(
            "TERN_POOL_BYTES must be a positive number of bytes, got `{s}`"
        )),
    }
}

/// Creates the builtin pool with `arena_bytes` of arena, replacing any existing
/// one (which is released). Errors are messages for the user.
pub fn init(arena_bytes: i64) -> Result<(), String> {
    let pool = BuiltinPool::new(arena_bytes).map_err(|e| reserve_failed(arena_bytes, e))?;
    let (base, bytes) = (pool.base() as i64, pool.arena_bytes());
    publish(&pool);
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
    let pool = BuiltinPool::new(bytes).map_err(|e| reserve_failed(bytes, e))?;
    publish(&pool);
    Ok(slot().insert(pool))
}

/// Hands `pool`'s arena and boundary record to generated code's fast path
/// ([`ReusableFast`]). Both are reservations that stay put
/// while the pool lives, wherever the pool value moves; the next pool made
/// (`init`) publishes its own before this one is dropped.
fn publish(pool: &BuiltinPool) {
    tern_reusable_fast.publish(pool.base() as i64, pool.arena_bytes(), pool.record_maps());
}

/// The message for a pool of `bytes` of arena that could not be reserved
/// (error code `e`). The address space it needs is several times the
/// arena (the node array is reserved for the worst case): a limit such as
/// `ulimit -v` refuses it long before memory runs out, so the message says
/// how much, and what to lower.
#[cold]
fn reserve_failed(bytes: i64, e: i64) -> String {
    let why = crate::span_tree::error::message(e);
    if !(0..=crate::span_tree::tree::MAX_ARENA_BYTES).contains(&bytes) {
        return format!("cannot reserve the builtin pool ({bytes} bytes): {why}");
    }
    format!(
        "cannot reserve the builtin pool ({bytes} bytes): {why} (with its node array and record it reserves {} bytes of address space; under a limit such as `ulimit -v`, set a smaller TERN_POOL_BYTES)",
        crate::pool::address_space(bytes)
    )
}

/// Runs `f` on the builtin pool if it exists (`None` when no pool was made).
pub fn with_existing<R>(f: impl FnOnce(&mut BuiltinPool) -> R) -> Option<R> {
    slot().as_mut().map(f)
}

/// The builtin pool when it exists; on first use, creates it from the
/// environment or ends the run at `loc` with the reason. The creation is out
/// of line (see [`create`]).
#[inline(always)]
fn pool_or_fail(loc: *const c_char) -> &'static mut BuiltinPool {
    match slot() {
        Some(p) => p,
        None => first_use(loc),
    }
}

/// [`pool_or_fail`]'s first use: creates the pool or ends the run.
#[cold]
#[inline(never)]
fn first_use(loc: *const c_char) -> &'static mut BuiltinPool {
    match create() {
        Ok(p) => p,
        Err(msg) => report(loc, msg),
    }
}

/// Ends the run at `loc` with error `code` of a call on the pool's span
/// `[off, off + bytes)` asking for `want` bytes (see [`describe`]). Out of
/// line: the message's formatting stays off the entry points' fast paths,
/// and their frames hold nothing to drop when the run ends (`fail::report`).
/// The callers have made the pool, so it is looked up again here rather
/// than passed: held for this call, it stayed in a register through the
/// whole operation (2.5 instructions more per free on binary-trees).
#[cold]
#[inline(never)]
fn fail(loc: *const c_char, code: i64, off: i64, bytes: i64, want: i64) -> ! {
    report(loc, describe(pool_or_fail(loc), code, off, bytes, want))
}

/// The bodies of the `tern_reusable_*` entry points, one copy per scan
/// backend (`S`): each returns its answer or ends the run at `loc`, so an
/// entry point is one test of the backend and a jump to its copy, with no
/// frame of its own (`crate::abi::reusable`).
mod entry {
    use std::ffi::c_char;

    use super::{fail, offset_in, pool_or_fail};
    use crate::span_tree::error::OUTSIDE_ARENA;
    use crate::span_tree::scan::Simd;

    /// `tern_reusable_alloc` on backend `S`.
    ///
    /// # Safety
    /// `loc` must be null or a NUL-terminated string (as for every body here).
    #[inline(always)]
    pub(super) unsafe fn alloc<S: Simd>(bytes: i64, loc: *const c_char) -> *mut u8 {
        if bytes == 0 {
            return std::ptr::null_mut();
        }
        let p = pool_or_fail(loc);
        match p.alloc_zeroed_in::<S>(bytes) {
            // SAFETY: offsets returned by the tree lie inside the arena.
            Ok(off) => unsafe { p.base().add(off as usize) },
            Err(e) => fail(loc, e, 0, bytes, bytes),
        }
    }

    /// `tern_reusable_free` on backend `S`.
    #[inline(always)]
    pub(super) unsafe fn free<S: Simd>(ptr: *mut u8, bytes: i64, loc: *const c_char) {
        if ptr.is_null() || bytes == 0 {
            return;
        }
        let p = pool_or_fail(loc);
        let Ok(off) = offset_in(p, ptr) else {
            fail(loc, OUTSIDE_ARENA, 0, bytes, bytes)
        };
        if let Err(e) = p.free_in::<S>(off, bytes) {
            fail(loc, e, off, bytes, bytes)
        }
    }

    /// `tern_reusable_resize` on backend `S` (see `SpanPool::resize`).
    #[inline(always)]
    pub(super) unsafe fn resize<S: Simd>(
        ptr: *mut u8,
        old: i64,
        new: i64,
        loc: *const c_char,
    ) -> *mut u8 {
        let p = pool_or_fail(loc);
        let Ok(off) = offset_in(p, ptr) else {
            fail(loc, OUTSIDE_ARENA, 0, old, new)
        };
        match p.resize_in::<S>(if old == 0 { -1 } else { off }, old, new) {
            Ok(to) if to < 0 => std::ptr::null_mut(),
            // SAFETY: offsets returned by the tree lie inside the arena.
            Ok(to) => unsafe { p.base().add(to as usize) },
            Err(e) => fail(loc, e, off, old, new),
        }
    }
}

crate::simd_dispatch! {
    /// Allocates `bytes` zero-filled and returns the address (null for 0
    /// bytes), or ends the run at `loc` (exhausted pool, negative size).
    ///
    /// # Safety
    /// `loc` must be null or a NUL-terminated string (as for the two below).
    pub unsafe extern "C" fn alloc(bytes: i64, loc: *const c_char) -> *mut u8 => entry::alloc;
}
crate::simd_dispatch! {
    /// Frees the span at `ptr` of `bytes` (nothing for null or 0 bytes), or
    /// ends the run at `loc` (a double, stale or foreign free).
    ///
    /// # Safety
    /// As for [`alloc`].
    pub unsafe extern "C" fn free(ptr: *mut u8, bytes: i64, loc: *const c_char) -> () => entry::free;
}
crate::simd_dispatch! {
    /// The resize contract on addresses (see `SpanPool::resize`); a run-ending
    /// error is reported at `loc`.
    ///
    /// # Safety
    /// As for [`alloc`].
    pub unsafe extern "C" fn resize(ptr: *mut u8, old: i64, new: i64, loc: *const c_char) -> *mut u8 => entry::resize;
}

/// Converts an address to an offset in `p`'s arena (`-1` for null), or `OUTSIDE_ARENA`.
#[inline(always)]
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

pub use crate::pool::in_granule;

/// [`resize`] of a growth inside the span's last granule
/// (`SpanPool::grow_in_granule`: the record's check and a one-word zero
/// fill; appending a byte is that growth seven times in eight), apart from
/// the full entry, whose frame was most of its cost. Anything else it finds
/// (no pool yet, a span the record does not know) goes on to [`resize`].
///
/// # Safety
/// As for [`resize`].
#[inline(never)]
pub unsafe extern "C" fn resize_in_granule(
    ptr: *mut u8,
    old: i64,
    new: i64,
    loc: *const c_char,
) -> *mut u8 {
    let done = slot().as_mut().is_some_and(|p| {
        let off = (ptr as i64).wrapping_sub(p.base() as i64);
        p.grow_in_granule(off, old, new)
    });
    if done {
        return ptr;
    }
    // SAFETY: the caller's contract.
    unsafe { resize(ptr, old, new, loc) }
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
