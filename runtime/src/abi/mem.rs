//! Memory reservation for library pools: address space reserved up front and
//! committed lazily, so arenas and node arrays never move. It is program
//! memory (`crate::memory`): released, it is retired, never unmapped.

use crate::memory;
use crate::span_tree::error::{BAD_SIZE, NOT_RESERVED};

/// Reserves `bytes` of zeroed, writable address space (committed on first touch)
/// and returns its page-aligned address, or a negative error code (`BAD_SIZE` for
/// `bytes <= 0`, `RESERVE_FAILED`).
#[unsafe(no_mangle)]
pub extern "C" fn tern_mem_reserve(bytes: i64) -> i64 {
    if bytes <= 0 {
        return BAD_SIZE;
    }
    match memory::reserve_program(bytes as usize) {
        Ok(p) => p as i64,
        Err(e) => e,
    }
}

/// The id of the live reservation that starts at `addr` (a positive number,
/// never given to another reservation), or `NOT_RESERVED`. A library pool
/// keeps it to give its memory back with [`tern_mem_release`].
#[unsafe(no_mangle)]
pub extern "C" fn tern_mem_reservation(addr: i64) -> i64 {
    usize::try_from(addr)
        .ok()
        .and_then(memory::reservation_id)
        .and_then(|id| i64::try_from(id).ok())
        .unwrap_or(NOT_RESERVED)
}

/// Releases the reservation made by `tern_mem_reserve(bytes)` at `addr`
/// whose id ([`tern_mem_reservation`]) is `id`: its pages go back to the OS,
/// its addresses stay mapped (zero) and are reused only by later program
/// memory, so a slice kept past it faults nothing. Returns 0 or a negative
/// error code: `NOT_RESERVED` for anything but exactly that live
/// reservation (given back already, or given back and reserved again since:
/// another id), which is what a stale copy of a pool gives back.
///
/// # Safety
/// When `addr`, `bytes` and `id` are exactly a live reservation's, nothing
/// may use it any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_mem_release(addr: i64, bytes: i64, id: i64) -> i64 {
    if bytes <= 0 || addr <= 0 {
        return BAD_SIZE;
    }
    let Ok(id) = u64::try_from(id) else {
        return NOT_RESERVED;
    };
    // SAFETY: the caller's contract.
    match unsafe { memory::retire_reservation(addr as *mut u8, bytes as usize, id) } {
        Ok(()) => 0,
        Err(e) => e,
    }
}
