//! The builtin pool's entry points, called by generated code for `reusable[]T`.
//! Sizes are in bytes; the runtime rounds them up to 8. Pool errors (exhausted
//! arena, double/overlapping free, free outside the arena) end the run through
//! [`super::fail::report`] with the error table's message.

use std::ffi::c_char;

use super::fail::report;
use crate::builtin;

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

/// [`tern_reusable_resize`] for `reusable::append` (of any element size;
/// `new_bytes > old_bytes`), which generated code calls when it cannot
/// answer the append itself: the same contract and answer, after which the
/// slice's *append window* is left open when free space follows it. While
/// it is open, generated code answers the slice's next appends that fit in
/// that free span by moving the window's end in `tern_reusable_fast`, and
/// the next call of any builtin pool entry point records that growth in the
/// tree first (`builtin::ReusableFast`).
///
/// # Safety
/// As for [`tern_reusable_resize`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_reusable_append(
    ptr: *mut u8,
    old_bytes: i64,
    new_bytes: i64,
    loc: *const c_char,
) -> *mut u8 {
    // SAFETY: the caller's contract.
    unsafe { builtin::append(ptr, old_bytes, new_bytes, loc) }
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
