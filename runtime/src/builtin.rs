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

/// The builtin pool's fast-path record (`tern_abi::reusable_fast`): what
/// generated code reads to answer two kinds of append itself, without a
/// call:
/// * a byte append inside a span's last 8-byte granule, the first case of
///   `tern_reusable_resize_packed`, with the same check of the boundary
///   record (`base` to `large`) and the same zero fill;
/// * an append of the slice the *append window* follows (`win_*`): after
///   `tern_reusable_append` grew a slice in place through the growth hint
///   often enough in a row (`span_tree::finger::GROWN_IN_A_ROW`) with free
///   space left right after it, the record names the slice and that free
///   span, and generated code answers the slice's next appends by moving
///   `win_end` while they fit. The tree and the boundary record still hold
///   the slice where it ended when the window opened ([`Slot::committed`]);
///   every entry point of the pool first settles the window ([`settle`]:
///   one growth in place in the tree, then the window closes), so nothing
///   else ever sees them behind.
///
/// All zero while no builtin pool exists: an arena of 0 bytes holds no
/// span and a closed window no slice, so every append goes to the call,
/// which creates the pool.
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
    /// The window's slice: its address; 0 when no window is open.
    pub win_base: i64,
    /// Where the window's slice ends now (its length rounded up to 8, as an
    /// address): the word generated code moves.
    pub win_end: i64,
    /// Where the free span the window's slice may grow into ends (an
    /// address); 0 when no window is open.
    pub win_limit: i64,
}

const _: () = assert!(
    std::mem::offset_of!(ReusableFast, base) == tern_abi::reusable_fast::BASE as usize
        && std::mem::offset_of!(ReusableFast, arena_bytes)
            == tern_abi::reusable_fast::ARENA_BYTES as usize
        && std::mem::offset_of!(ReusableFast, sizes) == tern_abi::reusable_fast::SIZES as usize
        && std::mem::offset_of!(ReusableFast, large) == tern_abi::reusable_fast::LARGE as usize
        && std::mem::offset_of!(ReusableFast, win_base)
            == tern_abi::reusable_fast::WIN_BASE as usize
        && std::mem::offset_of!(ReusableFast, win_end) == tern_abi::reusable_fast::WIN_END as usize
        && std::mem::offset_of!(ReusableFast, win_limit)
            == tern_abi::reusable_fast::WIN_LIMIT as usize
        && tern_abi::reusable_fast::SMALL_GRANULES as u64 == crate::span_tree::extents::SMALL
);

/// [`ReusableFast`] behind the cell that lets the runtime and generated
/// code rewrite it.
pub struct FastCell(UnsafeCell<ReusableFast>);

// SAFETY: read and written only on the thread that runs Tern code (module
// docs): by the runtime inside a pool operation or the pool's creation, by
// generated code between them.
unsafe impl Sync for FastCell {}

impl FastCell {
    /// The record. Callers keep the reference only for one step of an
    /// operation (no generated code runs meanwhile).
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn get(&self) -> &mut ReusableFast {
        // SAFETY: see the `Sync` impl.
        unsafe { &mut *self.0.get() }
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
    win_base: 0,
    win_end: 0,
    win_limit: 0,
}));

/// The process-wide pool slot (see the module docs for why it has no
/// lock), with the runtime's own words about the append window: the pool
/// first, so that an entry point reaches it and `slow` from one address.
#[repr(C)]
struct Slot {
    /// The pool, once created.
    pool: Option<BuiltinPool>,
    /// Non-zero when an entry point must first create the pool or settle
    /// the append window: one test on every entry point's path (the
    /// `Option`'s own test before the window).
    slow: i64,
    /// Where the window's slice ended when the window opened: where the
    /// tree and the boundary record still hold it.
    committed: i64,
}

/// [`Slot`] behind its cell.
struct PoolSlot(UnsafeCell<Slot>);

// SAFETY: accessed by one thread at a time (module docs); every access goes
// through `state`, whose callers never hold the reference across another
// access.
unsafe impl Sync for PoolSlot {}

static POOL: PoolSlot = PoolSlot(UnsafeCell::new(Slot {
    pool: None,
    slow: 1,
    committed: 0,
}));

/// The slot. Callers keep the reference only for one step of an operation.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
fn state() -> &'static mut Slot {
    // SAFETY: single-threaded use (module docs); no caller nests accesses.
    unsafe { &mut *POOL.0.get() }
}

/// Publishes the builtin pool's arena and record (`[sizes, large]`) to
/// generated code, with no window open.
fn publish_record(base: i64, arena_bytes: i64, record: [i64; 2]) {
    *tern_reusable_fast.get() = ReusableFast {
        base,
        arena_bytes,
        sizes: record[0],
        large: record[1],
        win_base: 0,
        win_end: 0,
        win_limit: 0,
    };
    let st = state();
    st.slow = 0;
    st.committed = 0;
}

/// The pool slot as it is, window or not: for the creation, [`settle`]
/// and the reads that need only the arena's bounds. Callers keep the
/// reference only for one operation.
#[allow(clippy::mut_from_ref)]
fn raw_slot() -> &'static mut Option<BuiltinPool> {
    &mut state().pool
}

/// The pool slot, any append window settled first (so the tree and the
/// record hold every slice as generated code sees it).
#[allow(clippy::mut_from_ref)]
fn slot() -> &'static mut Option<BuiltinPool> {
    if state().slow != 0 {
        settle();
    }
    raw_slot()
}

/// Settles the append window, if one is open: the growth generated code
/// made by appends (`Slot::committed` to `win_end`) becomes one growth in
/// place in the tree and the record, without a zero fill (the appends
/// wrote those bytes), and the window closes. Then `slow` says only
/// whether the pool is still to be created. The window's span was free
/// and nothing else has run since it opened, so the growth through the
/// hint cannot fail; if it does, the run ends with an internal error
/// rather than go on with a tree that disagrees with the program.
#[cold]
#[inline(never)]
fn settle() {
    let f = tern_reusable_fast.get();
    let (at, end, open) = (f.win_base, f.win_end, f.win_limit != 0);
    f.win_base = 0;
    f.win_end = 0;
    f.win_limit = 0;
    let st = state();
    st.slow = st.pool.is_none() as i64;
    let Some(p) = st.pool.as_mut().filter(|_| open && end != st.committed) else {
        return;
    };
    let off = at - p.base() as i64;
    if !p.grow_written(off, st.committed - at, end - at) {
        report(
            std::ptr::null(),
            "internal error: the builtin pool's append window could not be settled".into(),
        );
    }
}

/// Opens the append window on the slice at `ptr` of `bytes`, which has just
/// grown in place, when the tree's growth hint names free space right after
/// it (`SpanPool::room_at`): what `tern_reusable_append` leaves for the
/// slice's next appends.
#[inline(never)]
fn open_window(ptr: *mut u8, bytes: i64) {
    let st = state();
    let Some(p) = st.pool.as_mut() else { return };
    let at = ptr as i64;
    let end = at + round8(bytes);
    let room = p.room_at(end - p.base() as i64);
    if room > 0 {
        *tern_reusable_fast.get() = ReusableFast {
            win_base: at,
            win_end: end,
            win_limit: end + room,
            ..*tern_reusable_fast.get()
        };
        st.committed = end;
        st.slow = 1;
    }
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
    *raw_slot() = Some(pool);
    crate::sanitize::rebind_builtin(base, bytes);
    Ok(())
}

/// Runs `f` on the builtin pool, creating it from the environment on first
/// use: for its creation and its arena's bounds. An open append window is
/// not settled (`f` must not read the tree or the boundary record): that
/// keeps the tree code out of executables that never use the pool.
pub fn with_pool<R>(f: impl FnOnce(&BuiltinPool) -> R) -> Result<R, String> {
    Ok(f(pool()?))
}

/// The builtin pool as it is (see [`with_pool`]), created from the
/// environment on first use.
#[inline(always)]
fn pool() -> Result<&'static mut BuiltinPool, String> {
    match raw_slot() {
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
    Ok(raw_slot().insert(pool))
}

/// Hands `pool`'s arena and boundary record to generated code's fast path
/// ([`ReusableFast`]). Both are reservations that stay put
/// while the pool lives, wherever the pool value moves; the next pool made
/// (`init`) publishes its own before this one is dropped.
fn publish(pool: &BuiltinPool) {
    publish_record(pool.base() as i64, pool.arena_bytes(), pool.record_maps());
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

/// The builtin pool's arena high-water mark (`SpanPool::high_water`),
/// counting the appends an open append window holds, which the tree has
/// not seen yet (`None` when no pool was made). Read without settling the
/// window, so that the statistics at exit do not bring the tree code into
/// every executable.
pub fn high_water() -> Option<i64> {
    let p = raw_slot().as_ref()?;
    let f = tern_reusable_fast.get();
    let window = if f.win_limit != 0 {
        f.win_end - p.base() as i64
    } else {
        0
    };
    Some(p.high_water().max(window))
}

/// The builtin pool when it exists; on first use, creates it from the
/// environment or ends the run at `loc` with the reason. The creation is out
/// of line (see [`create`]).
#[inline(always)]
fn pool_or_fail(loc: *const c_char) -> &'static mut BuiltinPool {
    if state().slow == 0 {
        // SAFETY: `slow` is 0 only once the pool exists (`publish`).
        return unsafe { raw_slot().as_mut().unwrap_unchecked() };
    }
    first_use(loc)
}

/// [`pool_or_fail`]'s slow case: settles the append window, or creates the
/// pool, or ends the run.
#[cold]
#[inline(never)]
fn first_use(loc: *const c_char) -> &'static mut BuiltinPool {
    match slot() {
        Some(p) => p,
        None => match create() {
            Ok(p) => p,
            Err(msg) => report(loc, msg),
        },
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

    /// `tern_reusable_resize` (`append` false) and `tern_reusable_append`
    /// (true) on backend `S`: [`resize`], then, for an append, the append
    /// window opened when the slice grew in place. One body for both: a
    /// copy of its own for appends made every executable 50 KiB larger
    /// per scan backend.
    #[inline(always)]
    pub(super) unsafe fn resize_or_append<S: Simd>(
        ptr: *mut u8,
        old: i64,
        new: i64,
        loc: *const c_char,
        append: bool,
    ) -> *mut u8 {
        // SAFETY: the caller's contract.
        let to = unsafe { resize::<S>(ptr, old, new, loc) };
        // Three tests for every resize the window does not serve; the
        // rest is `open_window`'s, out of line.
        if append && to == ptr && pool_or_fail(loc).window_may_be_due() {
            super::open_window(to, new);
        }
        to
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
    /// error is reported at `loc`. `append`: the resize is an append, which
    /// leaves the append window open on the slice when it grew in place and
    /// free space follows it (see [`ReusableFast`]).
    ///
    /// # Safety
    /// As for [`alloc`].
    pub unsafe extern "C" fn resize_or_append(ptr: *mut u8, old: i64, new: i64, loc: *const c_char, append: bool) -> *mut u8 => entry::resize_or_append;
}

/// [`resize_or_append`] of a resize.
///
/// # Safety
/// As for [`alloc`].
#[inline(always)]
pub unsafe fn resize(ptr: *mut u8, old: i64, new: i64, loc: *const c_char) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { resize_or_append(ptr, old, new, loc, false) }
}

/// [`resize_or_append`] of an append.
///
/// # Safety
/// As for [`alloc`].
#[inline(always)]
pub unsafe fn append(ptr: *mut u8, old: i64, new: i64, loc: *const c_char) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { resize_or_append(ptr, old, new, loc, true) }
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
    // The arena's bounds only: no window to settle.
    raw_slot().as_ref().and_then(|p| offset_in(p, ptr).ok())
}
