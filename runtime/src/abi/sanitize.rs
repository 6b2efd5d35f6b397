//! The sanitizer's entry points (`--sanitize`; see [`crate::sanitize`]). Code
//! compiled with `--sanitize` calls them around every pool operation of the
//! builtin pool, before element accesses and subslices through tagged
//! pointers, and at calls that cross into another source file;
//! `slice_pool_pure` calls the region, tag, retag and release entry points for
//! its own pool. Unsanitized code calls none of them.
//!
//! `loc` arguments are NUL-terminated `file:line:col` strings; null means the
//! current call site ([`tern_sanitize_site`]). A failed check ends the run
//! through the single failure path: `error: LOC: use of a freed slice (freed
//! at FILE:LINE:COL)`.

use std::ffi::c_char;

use super::fail::report_at;
use crate::sanitize;

/// Turns the sanitizer on for the rest of the process (idempotent): the
/// builtin pool's arena becomes region 1 (`sanitize::BUILTIN_REGION`). The
/// entry of a program compiled with `--sanitize` calls it before `main`.
#[unsafe(no_mangle)]
pub extern "C" fn tern_sanitize_enable() {
    let enabled = crate::builtin::with_pool(|p| (p.base() as i64, p.arena_bytes()))
        .and_then(|(base, bytes)| sanitize::enable(base, bytes));
    if let Err(msg) = enabled {
        report_at("<runtime>", msg);
    }
}

/// Records `loc` as the current call site: the location sanitizer errors
/// found inside library code (which has no location of its own to give) name.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string that stays valid while it is
/// the current site.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_site(loc: *const c_char) {
    sanitize::set_site(loc);
}

/// Checks `bytes` at `addr` (a pointer that may carry a tag) against the
/// allocation its tag names and returns the untagged address; ends the run at
/// `loc` when the memory no longer belongs to it. An untagged pointer, or
/// `bytes <= 0`, is returned without its tag bits and not checked.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_check(addr: i64, bytes: i64, loc: *const c_char) -> i64 {
    sanitize::check(addr, bytes, loc)
}

/// A new allocation of `bytes` at `addr` (untagged) in region `region`: returns
/// it tagged (unchanged when null, 0 bytes, or the sanitizer is off).
#[unsafe(no_mangle)]
pub extern "C" fn tern_sanitize_tag(region: i64, addr: i64, bytes: i64) -> i64 {
    sanitize::tag(region, addr, bytes)
}

/// A view of `bytes` at `addr`, an untagged address of memory the program
/// already reaches (an array behind a `ref` parameter): returns it with the
/// tag of the live allocation that holds those bytes, so the view's later
/// uses are checked as a slice of that allocation would be; `addr` as it is
/// when no sanitized allocation holds them (a stack array), when it carries a
/// tag already, when `bytes <= 0`, or when the sanitizer is off.
#[unsafe(no_mangle)]
pub extern "C" fn tern_sanitize_tag_at(addr: i64, bytes: i64) -> i64 {
    sanitize::tag_at(addr, bytes)
}

/// The allocation of `bytes` at `addr` (untagged) in region `region` was freed
/// at `loc`.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_release(
    region: i64,
    addr: i64,
    bytes: i64,
    loc: *const c_char,
) {
    sanitize::release(region, addr, bytes, loc);
}

/// The allocation of `old` bytes at `addr` (untagged) in region `region` was
/// resized at `loc` to `new` bytes at `to` (in place when `to == addr`, else
/// moved; `addr` null or `old` 0: a new allocation; `to` null or `new` 0:
/// freed). Returns `to`, tagged.
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_retag(
    region: i64,
    addr: i64,
    old: i64,
    to: i64,
    new: i64,
    loc: *const c_char,
) -> i64 {
    sanitize::retag(region, addr, old, to, new, loc)
}

/// Registers the pool memory `[base, base + bytes)` as a sanitized region and
/// returns its id; 0 when the sanitizer is off (then the pool calls nothing
/// else here).
#[unsafe(no_mangle)]
pub extern "C" fn tern_sanitize_region(base: i64, bytes: i64) -> i64 {
    sanitize::region_new(base, bytes)
}

/// Ends region `region`: its pool was finished at `loc`; its slices fail from
/// now on (`use of a freed slice (its pool was finished at ...)`).
///
/// # Safety
/// `loc` must be null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_region_end(region: i64, loc: *const c_char) {
    sanitize::region_end(region, loc);
}

/// Every allocation of region `region` was freed at once at `loc` (null: the
/// current call site): its pool was reset in place (`slice_pool_pure::reset`;
/// the checked pools do it inside `tern_span_reset`). Its shadow is cleared up
/// to `high_water` bytes (the highest end of any allocation in it) and slices
/// taken before fail their next check with `use of a freed slice (its pool was
/// reset at ...)`; the region stays for new allocations.
///
/// # Safety
/// `loc` is null or a NUL-terminated location string that lives as long as
/// the program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_sanitize_region_reset(
    region: i64,
    high_water: i64,
    loc: *const c_char,
) {
    sanitize::region_reset(region, high_water, loc);
}

/// The `arena` carving slices from the builtin-pool allocation at `addr`
/// (tagged) is being reset at the current call site: its slices must fail
/// from now on while the allocation lives on. Returns 1 when the sanitizer
/// is on (the arena then resizes the allocation to its own length, which
/// gives it a new tag; slices carrying the old one fail with `use of a freed
/// slice (its arena was reset at ...)`), 0 when it is off.
#[unsafe(no_mangle)]
pub extern "C" fn tern_sanitize_arena_reset(addr: i64) -> i64 {
    i64::from(sanitize::mark_arena_reset(addr))
}
