//! Virtual memory reservations: address space reserved up front and committed
//! lazily by the OS on first touch, so a pool's arena and node array never move.

use crate::span_tree::error::RESERVE_FAILED;

/// The OS page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 { p as usize } else { 4096 }
}

/// Rounds `bytes` up to whole pages; `None` on overflow.
fn page_round(bytes: usize) -> Option<usize> {
    let p = page_size();
    bytes.checked_add(p - 1).map(|b| b & !(p - 1))
}

/// Reserves `bytes` of zeroed, readable and writable address space
/// (`MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE`): pages are committed when first
/// touched. Returns the page-aligned base, or [`RESERVE_FAILED`].
pub fn reserve(bytes: usize) -> Result<*mut u8, i64> {
    let len = page_round(bytes.max(1)).ok_or(RESERVE_FAILED)?;
    // SAFETY: anonymous private mapping at an address of the kernel's choosing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(RESERVE_FAILED)
    } else {
        Ok(p as *mut u8)
    }
}

/// Releases a reservation made by [`reserve`] with the same `bytes`.
///
/// # Safety
/// `base` must come from `reserve(bytes)` and no longer be used.
pub unsafe fn release(base: *mut u8, bytes: usize) -> Result<(), i64> {
    let len = page_round(bytes.max(1)).ok_or(RESERVE_FAILED)?;
    // SAFETY: the caller's contract.
    if unsafe { libc::munmap(base as *mut libc::c_void, len) } == 0 {
        Ok(())
    } else {
        Err(RESERVE_FAILED)
    }
}

/// Bytes of `[base, base+bytes)` that are resident (committed and in RAM), by `mincore`.
pub fn resident_bytes(base: *const u8, bytes: usize) -> usize {
    let page = page_size();
    let Some(len) = page_round(bytes) else {
        return 0;
    };
    let mut vec = vec![0u8; len / page];
    // SAFETY: `vec` has one byte per page of the range; base is page aligned (from `reserve`).
    let rc = unsafe { libc::mincore(base as *mut libc::c_void, len, vec.as_mut_ptr()) };
    if rc != 0 {
        return 0;
    }
    vec.iter().filter(|&&b| b & 1 != 0).count() * page
}

/// Zero-fills `bytes` bytes at `p`. The most common fill, a slice grown by
/// one small element (8 to 16 bytes), is two possibly overlapping word
/// stores instead of a `memset` call (3 % of the instructions of `tern
/// bench`'s `append/8` on the builtin side).
///
/// # Safety
/// `p` must be valid for writes of `bytes` bytes.
#[inline(always)]
pub unsafe fn zero(p: *mut u8, bytes: usize) {
    // SAFETY (every arm): the caller's contract.
    unsafe {
        if (8..=16).contains(&bytes) {
            p.cast::<u64>().write_unaligned(0);
            p.add(bytes - 8).cast::<u64>().write_unaligned(0);
        } else {
            std::ptr::write_bytes(p, 0, bytes);
        }
    }
}

/// An owned reservation, released on drop.
#[derive(Debug)]
pub struct Reservation {
    base: *mut u8,
    bytes: usize,
}

// SAFETY: the reservation exclusively owns its mapping.
unsafe impl Send for Reservation {}

impl Reservation {
    /// Reserves `bytes` of address space (see [`reserve`]).
    pub fn new(bytes: usize) -> Result<Self, i64> {
        Ok(Reservation {
            base: reserve(bytes)?,
            bytes,
        })
    }

    /// The base address.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// The requested size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Resident bytes of the reservation (see [`resident_bytes`]).
    pub fn resident(&self) -> usize {
        resident_bytes(self.base, self.bytes)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: created by `reserve(self.bytes)`; dropped once.
        let _ = unsafe { release(self.base, self.bytes) };
    }
}
