//! The builtin pool's entry points, called by generated code for `reusable[]T`.
//! Sizes are in bytes; the runtime rounds them up to 8. Pool errors (exhausted
//! arena, double/overlapping free, free outside the arena) end the run through
//! [`super::fail::report`] with the error table's message.

use std::cell::UnsafeCell;
use std::ffi::c_char;

use super::fail::report;
use crate::builtin;
use tern_abi::reusable_fast as fast;

/// The builtin pool's fast-path record (`tern_abi::reusable_fast`): what
/// generated code reads to answer a byte append inside a span's last 8-byte
/// granule itself, the first case of [`tern_reusable_resize_packed`], with
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
    std::mem::offset_of!(ReusableFast, base) == fast::BASE as usize
        && std::mem::offset_of!(ReusableFast, arena_bytes) == fast::ARENA_BYTES as usize
        && std::mem::offset_of!(ReusableFast, sizes) == fast::SIZES as usize
        && std::mem::offset_of!(ReusableFast, large) == fast::LARGE as usize
        && fast::SMALL_GRANULES as u64 == crate::span_tree::extents::SMALL
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

/// Allocates a zero-filled span of `bytes` from the builtin pool (first fit) and
/// returns its address; null for 0 bytes. Fails the run (at `loc`) when the pool
/// is exhausted or `bytes` is negative.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_alloc(bytes: i64, loc: *const c_char) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { builtin::alloc(bytes, loc) }
}

/// Resizes the span at `ptr` from `old_bytes` to `new_bytes` by the placement
/// contract: shrink in place, grow in place when the free span right after it is
/// long enough, else allocate, copy `min(old, new)` bytes and free the old span.
/// Growth is zero-filled. Returns the (possibly new) address; null for 0 bytes.
/// `ptr` null with `old_bytes` 0 allocates.
///
/// # Safety
/// `ptr` must be null or a span of `old_bytes` from `tern_reusable_alloc`/`_resize`
/// (a bad one is reported, not trusted); `loc` null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_resize(
    ptr: *mut u8,
    old_bytes: i64,
    new_bytes: i64,
    loc: *const c_char,
) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { builtin::resize(ptr, old_bytes, new_bytes, loc) }
}

/// [`tern_reusable_resize`] for a slice whose element size is not a multiple
/// of 8 (generated code picks it by the element type): the same contract and
/// answer, with a growth that stays inside the span's last 8-byte granule
/// (appending a byte, seven times in eight) answered by the boundary
/// record's check and a one-word zero fill, without the tree. Apart so that
/// the resizes of other slices, which never grow that way, do not pay the
/// test.
///
/// # Safety
/// As for [`tern_reusable_resize`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_resize_packed(
    ptr: *mut u8,
    old_bytes: i64,
    new_bytes: i64,
    loc: *const c_char,
) -> *mut u8 {
    if builtin::in_granule(old_bytes, new_bytes) {
        // SAFETY: the caller's contract.
        return unsafe { builtin::resize_in_granule(ptr, old_bytes, new_bytes, loc) };
    }
    // SAFETY: the caller's contract.
    unsafe { builtin::resize(ptr, old_bytes, new_bytes, loc) }
}

/// Frees the span at `ptr` of `bytes` (no-op for null or 0 bytes). A double or
/// overlapping free, or a span outside the pool, fails the run at `loc`.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_free(ptr: *mut u8, bytes: i64, loc: *const c_char) {
    // SAFETY: the caller's contract.
    unsafe { builtin::free(ptr, bytes, loc) }
}

/// The byte offset of `ptr` in the builtin pool's arena; -1 for null. An address
/// outside the pool (only `unsafe` code can make one) fails the run at `loc`.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_offset(ptr: *const u8, loc: *const c_char) -> i64 {
    #[cold]
    #[inline(never)]
    fn slow(ptr: *const u8, loc: *const c_char) -> i64 {
        match builtin::offset(ptr) {
            Ok(o) => o,
            Err(msg) => report(loc, msg),
        }
    }
    builtin::offset_quick(ptr).unwrap_or_else(|| slow(ptr, loc))
}
