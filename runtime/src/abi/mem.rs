//! Memory reservation for library pools: address space reserved up front and
//! committed lazily, so arenas and node arrays never move. It is program
//! memory (`crate::memory`): released, it is retired, never unmapped.

use crate::memory;
use crate::span_tree::error::BAD_SIZE;

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

/// Releases a reservation made by `tern_mem_reserve(bytes)`: its pages go
/// back to the OS, its addresses stay mapped (zero) and are reused only by
/// later program memory, so a slice kept past it faults nothing. Returns 0
/// or a negative error code.
///
/// # Safety
/// `addr` and `bytes` must be exactly a live reservation's, no longer used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tern_mem_release(addr: i64, bytes: i64) -> i64 {
    if bytes <= 0 || addr <= 0 {
        return BAD_SIZE;
    }
    // SAFETY: the caller's contract.
    match unsafe { memory::retire(addr as *mut u8, bytes as usize) } {
        Ok(()) => 0,
        Err(e) => e,
    }
}
