//! The library side (`stdlib/slice_pool.tern`): the span tree of each pool
//! kept by the runtime and shown to the program through the header and node
//! array it holds (`span_tree::library`), plus its setup calls.
//!
//! Every function returns a value >= 0 or a negative error code (see
//! `span_tree::error` and [`tern_span_error_message`]); none unwinds, reads out of
//! bounds or trusts a bound stored in program memory. Of the program's memory it
//! trusts only the `tree` pointer itself (the address of a `HEADER_WORDS`-word
//! header), and reads only its pool id.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::memory::{Fill, zero_fill};
use crate::span_tree::error::{self, INTERNAL};
use crate::span_tree::{append_window, layout, library};

/// A result as the externs return it: the value, or the (negative) error code.
#[inline(always)]
fn word(r: Result<i64, i64>) -> i64 {
    r.unwrap_or_else(|e| e)
}

/// Runs `f`, turning a (never expected) panic into `INTERNAL`.
#[inline(always)]
fn guard_word(f: impl FnOnce() -> i64) -> i64 {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(internal)
}

/// The panic's payload dropped out of line: the landing pad then keeps
/// nothing across a call, so the externs' frames save no registers.
#[cold]
#[inline(never)]
fn internal(_payload: Box<dyn std::any::Any + Send>) -> i64 {
    INTERNAL
}

/// [`guard_word`] of a result: the value or the error code.
#[inline(always)]
fn guard(f: impl FnOnce() -> Result<i64, i64>) -> i64 {
    guard_word(|| word(f()))
}

/// First-fit alloc of `bytes` (rounded up to 8) from the pool whose header
/// is at `tree` (any alignment). The span is zero-filled (in the
/// registered arena). Returns the span's address, or a negative error code
/// (`EXHAUSTED`, `BAD_SIZE` for `bytes <= 0`, `BAD_POOL`).
/// What the program wrote into its copy of the tree plays no part, and
/// neither does `nodes` (the three tree externs take the node array's
/// address and do not read it: the registry names the pool's).
///
/// # Safety
/// `tree` must be null or point to `HEADER_WORDS` writable words (any contents).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_alloc(tree: *mut i64, nodes: *mut i32, bytes: i64) -> i64 {
    // SAFETY: the caller's contract.
    guard_word(|| unsafe { entry::d_alloc(tree, nodes, bytes) })
}

/// Free of the span at address `addr` (`round8(bytes)` long) with
/// coalescing. Returns 0, or a negative error code (`DOUBLE_FREE`,
/// `OUTSIDE_ARENA` for an address outside the registered arena, `BAD_SIZE`,
/// `BAD_POOL`, `STALE_FREE` for a span that is not one live allocation).
///
/// # Safety
/// As for [`tern_span_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_free(
    tree: *mut i64,
    nodes: *mut i32,
    addr: i64,
    bytes: i64,
) -> i64 {
    // SAFETY: the caller's contract.
    guard_word(|| unsafe { entry::d_free(tree, nodes, addr, bytes) })
}

/// Resize of the span at address `addr` from `old` to `new` bytes (exact
/// byte counts): shrink in place, grow in place when the free span right after
/// it is long enough, otherwise place the move in this same call (first fit
/// while the old span is held, then free the old span, coalescing). Returns the
/// span's address after the call: `addr` in place, another address after a
/// move, in which case the caller copies its `min(old, new)` used bytes from
/// `addr` (freed bytes are never written by the runtime, and the spans do not
/// overlap). Bytes past `old` of the new extent are zero-filled. `new == 0`
/// frees the span. Negatives are errors (`EXHAUSTED`, `RESIZE_FREE_SPAN`,
/// `DOUBLE_FREE`, `OUTSIDE_ARENA`, `BAD_SIZE`, `BAD_POOL`, `STALE_RESIZE`).
/// A slice grown in place through the growth hint often enough in a row
/// gets its pool's append window, whose growths are answered here before
/// the library's tree, with the same answer and node words
/// (`span_tree::append_window`).
///
/// # Safety
/// As for [`tern_span_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_resize(
    tree: *mut i64,
    nodes: *mut i32,
    addr: i64,
    old: i64,
    new: i64,
) -> i64 {
    // One load and compare while no append window is open anywhere and the
    // AVX2 copies are selected; one more compare finds an open window.
    let route = append_window::route();
    #[cfg(target_arch = "x86_64")]
    if route.is_clear() {
        // SAFETY: the caller's contract; a clear route says the AVX2 copies
        // were selected, so the CPU has what they need.
        return guard_word(|| unsafe { entry::d_resize::avx2(tree, nodes, addr, old, new) });
    }
    if route.any_open() {
        // SAFETY: the caller's contract.
        return unsafe { resize_windowed(tree, nodes, addr, old, new) };
    }
    // SAFETY: the caller's contract.
    guard_word(|| unsafe { entry::d_resize(tree, nodes, addr, old, new) })
}

/// [`tern_span_resize`] while some pool has an append window open: a
/// growth of the slice the window of its pool is open on is answered here,
/// before any frame or dispatch (the window's work is loads, compares and a
/// few stores, and cannot panic); any other call on that pool settles the
/// window first, and then takes the library's tree.
///
/// # Safety
/// As for [`tern_span_alloc`].
#[inline(never)]
unsafe fn resize_windowed(tree: *mut i64, nodes: *mut i32, addr: i64, old: i64, new: i64) -> i64 {
    // SAFETY: the caller's contract.
    match unsafe { library::window_append(tree, addr, (old, new)) } {
        // SAFETY: `window_append` names bytes of the registered arena.
        Some((from, bytes)) if bytes > 0 => unsafe { zero_then(addr, from, bytes) },
        Some(_) => addr,
        // SAFETY: the caller's contract.
        None => unsafe { resize_missed(tree, nodes, addr, old, new) },
    }
}

/// A [`tern_span_resize`] call [`resize_windowed`] did not answer: the
/// pool's window, if it has one open, is settled, then the library's tree
/// answers. Out of line, so that the window's test saves no registers.
///
/// # Safety
/// As for [`tern_span_alloc`].
#[inline(never)]
unsafe fn resize_missed(tree: *mut i64, nodes: *mut i32, addr: i64, old: i64, new: i64) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { library::settle_window_of(tree) };
    // SAFETY: the caller's contract.
    unsafe { resize_checked(tree, nodes, addr, old, new) }
}

/// Zero-fills `bytes` bytes at `from` and returns `to`: the fill of a
/// growth [`tern_span_resize`] answered from a window, a call the window's
/// test makes last (then it needs no frame). The fill of a byte append
/// inside the slice's last granule (one to seven bytes, from the old
/// length to the granule's end) is two overlapping stores, not a `memset`
/// call.
///
/// # Safety
/// `[from, from + bytes)` must be writable.
#[inline(never)]
unsafe fn zero_then(to: i64, from: i64, bytes: i64) -> i64 {
    let p = from as *mut u8;
    let n = bytes as usize;
    // SAFETY: the caller's contract; every store lies in `[p, p + n)`.
    unsafe {
        match n {
            1 => p.write(0),
            2..=3 => {
                p.cast::<u16>().write_unaligned(0);
                p.add(n - 2).cast::<u16>().write_unaligned(0);
            }
            4..=7 => {
                p.cast::<u32>().write_unaligned(0);
                p.add(n - 4).cast::<u32>().write_unaligned(0);
            }
            _ => zero_fill(p, n, Fill::Growth),
        }
    }
    to
}

/// [`tern_span_resize`]'s tree under its panic guard, for the calls
/// [`resize_windowed`] does not answer: a frame of its own, so that the
/// window's test before it saves no registers.
///
/// # Safety
/// As for [`tern_span_alloc`].
#[inline(never)]
unsafe fn resize_checked(tree: *mut i64, nodes: *mut i32, addr: i64, old: i64, new: i64) -> i64 {
    // SAFETY: the caller's contract.
    guard_word(|| unsafe { entry::d_resize(tree, nodes, addr, old, new) })
}

/// The bodies of the three tree externs, one copy per scan backend: the
/// extern, under [`guard_word`], tests the backend and calls its copy, which
/// returns the answer word (an address, 0 or an error code) as it is. The
/// bodies take the extern's arguments as they came, the node array's
/// address included, which they do not read: every argument stays in the
/// register it arrived in.
mod entry {
    use super::word;
    use crate::span_tree::library;
    use crate::span_tree::scan::Simd;

    /// `tern_span_alloc` on backend `S`.
    ///
    /// # Safety
    /// As for `tern_span_alloc` (the same for every body here).
    #[inline(always)]
    pub(super) unsafe fn alloc<S: Simd>(tree: *mut i64, _nodes: *mut i32, bytes: i64) -> i64 {
        // SAFETY: the caller's contract.
        word(unsafe { library::alloc_in::<S>(tree, bytes, true) })
    }

    /// `tern_span_free` on backend `S`.
    #[inline(always)]
    pub(super) unsafe fn free<S: Simd>(
        tree: *mut i64,
        _nodes: *mut i32,
        addr: i64,
        bytes: i64,
    ) -> i64 {
        // SAFETY: the caller's contract.
        // One word already: 0, or the code (`Outcome`).
        match unsafe { library::free_in::<S>(tree, addr, bytes) } {
            Ok(()) => 0,
            Err(code) => code.get(),
        }
    }

    /// `tern_span_resize` on backend `S`.
    #[inline(always)]
    pub(super) unsafe fn resize<S: Simd>(
        tree: *mut i64,
        _nodes: *mut i32,
        addr: i64,
        old: i64,
        new: i64,
    ) -> i64 {
        // SAFETY: the caller's contract.
        word(unsafe { library::resize_in::<S>(tree, addr, (old, new), true, true) })
    }

    crate::simd_dispatch! {
        /// `tern_span_alloc`'s body on the CPU's backend.
        ///
        /// # Safety
        /// As for `tern_span_alloc` (the same for the two below).
        pub(super) unsafe extern "C-unwind" fn d_alloc(tree: *mut i64, nodes: *mut i32, bytes: i64) -> i64 => alloc;
    }
    crate::simd_dispatch! {
        /// `tern_span_free`'s body on the CPU's backend.
        ///
        /// # Safety
        /// As for `tern_span_alloc`.
        pub(super) unsafe extern "C-unwind" fn d_free(tree: *mut i64, nodes: *mut i32, addr: i64, bytes: i64) -> i64 => free;
    }
    crate::simd_dispatch! {
        /// `tern_span_resize`'s body on the CPU's backend.
        ///
        /// # Safety
        /// As for `tern_span_alloc`.
        pub(super) unsafe extern "C-unwind" fn d_resize(tree: *mut i64, nodes: *mut i32, addr: i64, old: i64, new: i64) -> i64 => resize;
    }
}

/// Number of `i64` words of a tree header (`HEADER_WORDS`).
#[unsafe(no_mangle)]
pub extern "C" fn tern_span_header_words() -> i64 {
    layout::HEADER_WORDS as i64
}

/// Number of 32-bit words of node array a pool with an arena of `arena_bytes` needs
/// (the worst case, so it never grows); a negative error code for a bad size.
#[unsafe(no_mangle)]
pub extern "C" fn tern_span_node_words(arena_bytes: i64) -> i64 {
    if !(0..=crate::span_tree::tree::MAX_ARENA_BYTES).contains(&arena_bytes) {
        return error::BAD_SIZE;
    }
    library::node_array_words(crate::span_tree::round8(arena_bytes))
}

/// Creates a library pool: writes a fresh header at `tree` and root into `nodes`
/// (`node_words` words, at least `tern_span_node_words(arena_bytes)`) and registers
/// the authoritative bounds. `arena` is the arena's address (0: the runtime never
/// touches arena bytes and does not zero-fill), `arena_bytes` a multiple of 8.
/// Returns the pool id (> 0), or `BAD_POOL`/`BAD_SIZE`/`TOO_MANY_POOLS`.
///
/// # Safety
/// `tree` must point to `HEADER_WORDS` words, `nodes` to `node_words` words,
/// `arena` (if not 0) to `arena_bytes` bytes, all writable and 8-byte aligned, for
/// as long as the pool is registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_init(
    tree: *mut i64,
    nodes: *mut i32,
    node_words: i64,
    arena: *mut u8,
    arena_bytes: i64,
) -> i64 {
    // SAFETY: the caller's contract.
    guard(|| unsafe { library::init(tree, nodes, node_words, arena as i64, arena_bytes) })
}

/// Creates a pool for the library: the runtime reserves (and owns) an arena of
/// `arena_bytes` (1..=`MAX_ARENA_BYTES` (16 GiB less 8 bytes), rounded down to 8: a pool of 4 100
/// bytes holds spans up to offset 4 096) and its worst-case node array,
/// writes a fresh header at `tree`, registers the pool and writes where the
/// memory is into `memory` (node array address, its length in words, arena
/// address). Returns the pool id (> 0), or `BAD_SIZE`, `RESERVE_FAILED`,
/// `TOO_MANY_POOLS`. [`tern_span_finish`] releases the memory.
///
/// # Safety
/// `tree` must point to `HEADER_WORDS` writable words and `memory` to three,
/// both 8-byte aligned; `tree` must stay valid while the pool is registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_new(
    tree: *mut i64,
    arena_bytes: i64,
    memory: *mut library::PoolMemory,
) -> i64 {
    if memory.is_null() || !(memory as usize).is_multiple_of(8) {
        return error::BAD_POOL;
    }
    // SAFETY: the caller's contract.
    guard(|| unsafe {
        let (id, m) = library::create(tree, arena_bytes)?;
        memory.write(m);
        Ok(id)
    })
}

/// Unregisters the pool at `tree`/`nodes`; a pool made by [`tern_span_new`] also
/// gets its arena and node array released (by the registered addresses, never
/// by anything in program memory). Returns 0, or a negative error code, and
/// then nothing changes: `LEAKED` when the runtime's record of the pool still
/// holds a live allocation (its slices stay valid), `STALE_POOL` when the
/// header does not describe the tree, `BAD_POOL` if it is not a live pool.
///
/// # Safety
/// As for [`tern_span_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_finish(tree: *mut i64, _nodes: *mut i32) -> i64 {
    // SAFETY: the caller's contract.
    guard(|| unsafe { library::release(tree).map(|_| 0) })
}

/// Frees every slice of the pool at `tree`/`nodes` at once and keeps the pool:
/// its tree becomes one free span over the whole arena, the runtime's record of
/// live allocations is cleared, the memory stays reserved and resident (see
/// `span_tree::library::reset`). Under the sanitizer every slice taken before
/// fails its next use. Returns 0, or a negative error code (`STALE_POOL` when
/// the header does not describe the tree: nothing changes; `BAD_POOL`).
///
/// # Safety
/// As for [`tern_span_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_reset(tree: *mut i64, _nodes: *mut i32) -> i64 {
    // SAFETY: the caller's contract.
    guard(|| unsafe { library::reset(tree).map(|()| 0) })
}

/// The size in bytes of the live allocation that starts at address `addr` of the
/// pool at `tree`/`nodes` (0 when none starts there), from the boundary record
/// the runtime keeps for the pool; a negative error code (`BAD_POOL`,
/// `OUTSIDE_ARENA`). Failure paths only: what a stale-span message names (see
/// [`tern_span_stale_message`]).
///
/// # Safety
/// As for [`tern_span_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_live_bytes(tree: *mut i64, _nodes: *mut i32, addr: i64) -> i64 {
    // SAFETY: the caller's contract.
    guard(|| unsafe { library::live_bytes(tree, addr) })
}

/// Writes the message for error `code` of the call on the pool at
/// `tree`/`nodes` that has just failed on this thread into `buf`, as
/// [`tern_span_error_message`] does, and returns its length. For
/// `STALE_FREE` and `STALE_RESIZE` it names the span that call named and
/// the live allocation the runtime's record has at its offset (as
/// [`tern_span_stale_message`] does); for any other code it is
/// [`tern_span_error_message`]'s. What `slice_pool`'s failure paths print:
/// they need not keep a copy of the span they passed.
///
/// # Safety
/// As for [`tern_span_alloc`]; `buf` must be null or writable for `cap`
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_failure_message(
    tree: *mut i64,
    _nodes: *mut i32,
    code: i64,
    buf: *mut u8,
    cap: i64,
) -> i64 {
    // SAFETY: the caller's contract.
    guard_word(|| unsafe { write_message(&library::failure_message(tree, code), buf, cap) })
}

/// Writes the message for error `code` of a call on the span at byte `offset`
/// of `claimed` bytes (rounded up to 8), where a live allocation of `actual`
/// bytes starts (0: none), into `buf` as [`tern_span_error_message`] does, and
/// returns its length. For `STALE_FREE` and `STALE_RESIZE` the message names
/// the sizes (`free of a stale slice: the span at offset 0 is 8 bytes, not
/// 32`); for any other code it is [`tern_span_error_message`]'s.
///
/// # Safety
/// `buf` must be null or writable for `cap` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_stale_message(
    code: i64,
    offset: i64,
    claimed: i64,
    actual: i64,
    buf: *mut u8,
    cap: i64,
) -> i64 {
    let claimed = if (0..=crate::span_tree::tree::MAX_ARENA_BYTES).contains(&claimed) {
        crate::span_tree::round8(claimed)
    } else {
        claimed
    };
    // SAFETY: the caller's contract.
    unsafe {
        write_message(
            &error::stale_message(code, offset, claimed, actual),
            buf,
            cap,
        )
    }
}

/// Writes the message for error `code` (UTF-8, truncated to `cap` bytes at a
/// character boundary, no NUL) into `buf` and returns its length in bytes; with a
/// null `buf` or `cap <= 0` just returns the full length.
///
/// # Safety
/// `buf` must be null or writable for `cap` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_span_error_message(code: i64, buf: *mut u8, cap: i64) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { write_message(&error::message(code), buf, cap) }
}

/// Writes `msg` into `buf` (see [`tern_span_error_message`]); returns its length.
///
/// # Safety
/// `buf` must be null or writable for `cap` bytes.
unsafe fn write_message(msg: &str, buf: *mut u8, cap: i64) -> i64 {
    if buf.is_null() || cap <= 0 {
        return msg.len() as i64;
    }
    let mut n = msg.len().min(cap as usize);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the caller's contract; n <= cap.
    unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), buf, n) };
    n as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last line of defence holds: a panic inside an extern's body
    /// becomes `INTERNAL`, and a body that returns passes its value through.
    #[test]
    fn a_panic_inside_an_extern_becomes_the_internal_code() {
        assert_eq!(guard_word(|| panic!("a bug in the tree code")), INTERNAL);
        assert_eq!(guard(|| Err(error::EXHAUSTED)), error::EXHAUSTED);
        assert_eq!(guard(|| Ok(42)), 42);
    }
}
