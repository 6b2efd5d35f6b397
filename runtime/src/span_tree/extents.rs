//! The boundary record of a pool: exactly which spans are live allocations.
//!
//! The tree knows only the free spans, so a `free` or `resize` that names a
//! range lying wholly in allocated memory looks legal to it even when the range
//! is not *one* allocation: a stale copy of a slice that has since shrunk
//! (`[0, 32)` when only `[0, 8)` is still its span and `[8, 32)` now belongs to
//! another slice), half of a span, or a span freed and reallocated at another
//! size. The runtime keeps this record beside every pool, in memory it reserves
//! itself (never in program memory), so that every `free` and `resize` can check
//! in O(1) that `(offset, rounded size)` is exactly one live allocation.
//!
//! Layout, for an arena of `G` 8-byte granules (one reservation, committed
//! lazily by the OS like the arena):
//!
//! * `marks`: two bits per granule, [`SMALL`] granules per word: bit `2g` is set
//!   when an allocation of at most [`SMALL`] granules starts at granule `g`, bit
//!   `2g + 1` when one ends at `g` (its last granule). Such a span `[s, s + n)`
//!   is live exactly when, of the `2n` bits from bit `2s`, only its own start
//!   and end bits are set: any other bit would be a boundary inside it. The
//!   check reads two adjacent words (`G / 32 + 2` words, so the second exists);
//! * `large`: one word per block of [`SMALL`] granules, `n << 5 | s % 32` for the
//!   allocation of `n > SMALL` granules that starts at granule `s` of the block,
//!   0 for none. At most one such allocation can start in a block (it is longer
//!   than the block). Large allocations set no marks: a small claim on one
//!   finds no start bit (or no end bit), a large claim on a small one finds
//!   another word.
//!
//! Address space: `1/16` of the arena (`1/32` each); what is touched is
//! committed: `marks` where small allocations start, `large` where large ones do.

use crate::memory::Reservation;
use crate::span_tree::error::RESERVE_FAILED;

/// Spans of at most this many granules are recorded in the marks; longer ones
/// in the large table, one word per block of this many granules.
pub const SMALL: u64 = 32;

/// Words of record an arena of `arena_bytes` needs (marks, padding, large table).
pub const fn record_words(arena_bytes: i64) -> usize {
    let blocks = (arena_bytes as u64 / 8 / SMALL) as usize;
    (blocks + 2) + (blocks + 1)
}

/// A view of one pool's record (raw pointers into runtime memory).
#[derive(Clone, Copy, Debug)]
pub struct Extents {
    marks: *mut u64,
    large: *mut u64,
}

impl Extents {
    /// The view of a record of [`record_words`]`(arena_bytes)` words at `base`.
    ///
    /// # Safety
    /// `base` must be valid for reads and writes of `record_words(arena_bytes)`
    /// words (8-byte aligned, zero-initialised when the pool is fresh) for as long
    /// as the view is used.
    #[inline(always)]
    pub unsafe fn from_raw(base: *mut u64, arena_bytes: i64) -> Extents {
        let blocks = (arena_bytes as u64 / 8 / SMALL) as usize;
        Extents {
            marks: base,
            // SAFETY: inside the record (the caller's contract).
            large: unsafe { base.add(blocks + 2) },
        }
    }

    #[inline(always)]
    fn mark(&self, word: u64) -> *mut u64 {
        // SAFETY: callers pass a granule of the arena (validated span), so the
        // word index is at most `G / 32 + 1` (the padding word).
        unsafe { self.marks.add(word as usize) }
    }

    #[inline(always)]
    fn large_at(&self, block: u64) -> *mut u64 {
        // SAFETY: as in `mark`: a granule of the arena, block `<= G / 32`.
        unsafe { self.large.add(block as usize) }
    }

    /// Whether `[off, off + bytes)` is exactly one live allocation. `off` and
    /// `bytes` must describe a span inside the arena: `off` a multiple of 8,
    /// `bytes` a positive multiple of 8.
    #[inline(always)]
    pub fn is_live(&self, off: i64, bytes: i64) -> bool {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        if n <= SMALL {
            let w = s >> 5;
            let sh = ((s & 31) << 1) as u32;
            // SAFETY: see `mark`; `w + 1` is at most the padding word.
            let (a, b) = unsafe { (*self.mark(w), *self.mark(w + 1)) };
            // The 64 bits from bit `2s` (`b << 1 << (63 - sh)` is `b << (64 - sh)`,
            // 0 when `sh` is 0).
            let window = (a >> sh) | ((b << 1) << (63 - sh));
            let mask = u64::MAX >> (64 - 2 * n);
            let own = 1 | (1 << (2 * n - 1));
            window & mask == own
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s >> 5) == (n << 5) | (s & 31) }
        }
    }

    /// Records `[off, off + bytes)` as a live allocation (same preconditions as
    /// [`Extents::is_live`]; the range must hold no live allocation).
    #[inline(always)]
    pub fn record(&self, off: i64, bytes: i64) {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        if n <= SMALL {
            let e = s + n - 1;
            // SAFETY: see `mark`.
            unsafe {
                *self.mark(s >> 5) |= 1 << ((s & 31) << 1);
                *self.mark(e >> 5) |= 2 << ((e & 31) << 1);
            }
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s >> 5) = (n << 5) | (s & 31) };
        }
    }

    /// Forgets the live allocation `[off, off + bytes)` (it was recorded).
    #[inline(always)]
    pub fn forget(&self, off: i64, bytes: i64) {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        if n <= SMALL {
            let e = s + n - 1;
            // SAFETY: see `mark`.
            unsafe {
                *self.mark(s >> 5) &= !(1 << ((s & 31) << 1));
                *self.mark(e >> 5) &= !(2 << ((e & 31) << 1));
            }
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s >> 5) = 0 };
        }
    }

    /// The live allocation `[off, off + old)` now ends at `off + new` (`new > 0`).
    #[inline(always)]
    pub fn resize(&self, off: i64, old: i64, new: i64) {
        let small = SMALL as i64 * 8;
        if old <= small && new <= small {
            // Only the end moves.
            let s = off as u64 >> 3;
            let (e0, e1) = (s + (old as u64 >> 3) - 1, s + (new as u64 >> 3) - 1);
            // SAFETY: see `mark`.
            unsafe {
                *self.mark(e0 >> 5) &= !(2 << ((e0 & 31) << 1));
                *self.mark(e1 >> 5) |= 2 << ((e1 & 31) << 1);
            }
        } else {
            self.forget(off, old);
            self.record(off, new);
        }
    }

    /// The size in bytes of the live allocation starting at `off` (a multiple
    /// of 8 inside the arena), or 0 when none starts there. For messages.
    #[cold]
    pub fn live_bytes_at(&self, off: i64) -> i64 {
        let s = off as u64 >> 3;
        // SAFETY: see `large_at` and `mark`.
        let l = unsafe { *self.large_at(s >> 5) };
        if l != 0 && l & 31 == s & 31 {
            return ((l >> 5) * 8) as i64;
        }
        let bit = |g: u64, which: u64| {
            // SAFETY: `g` is at most `s + SMALL - 1`, in the word after `s`'s at most.
            let w = unsafe { *self.mark(g >> 5) };
            w >> (((g & 31) << 1) + which) & 1 == 1
        };
        if !bit(s, 0) {
            return 0;
        }
        (s..s + SMALL)
            .find(|&g| bit(g, 1))
            .map_or(0, |e| ((e - s + 1) * 8) as i64)
    }
}

/// A record the runtime owns: reserved with the pool, released with it.
#[derive(Debug)]
pub struct Record {
    memory: Reservation,
    view: Extents,
}

// SAFETY: the record exclusively owns its reservation; the view points into it.
unsafe impl Send for Record {}

impl Record {
    /// Reserves a zeroed record for an arena of `arena_bytes` (committed lazily).
    pub fn new(arena_bytes: i64) -> Result<Record, i64> {
        let words = record_words(arena_bytes);
        let memory = Reservation::new(words * 8).map_err(|_| RESERVE_FAILED)?;
        // SAFETY: the reservation holds `words` zeroed words and lives as long
        // as the view (both are owned by the record).
        let view = unsafe { Extents::from_raw(memory.base().cast(), arena_bytes) };
        Ok(Record { memory, view })
    }

    /// The view (valid while the record lives).
    #[inline(always)]
    pub fn view(&self) -> Extents {
        self.view
    }

    /// The record's address (what the registry keeps for checked pools).
    pub fn base(&self) -> i64 {
        self.memory.base() as i64
    }

    /// Resident bytes of the record (by `mincore`).
    pub fn resident(&self) -> usize {
        self.memory.resident()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_live_allocation() {
        let r = Record::new(1 << 16).unwrap();
        let x = r.view();
        // Small spans, including ones whose bits straddle two words.
        x.record(0, 32);
        x.record(32, 8);
        x.record(248, 24); // granules 31..34
        assert!(x.is_live(0, 32));
        assert!(x.is_live(32, 8));
        assert!(x.is_live(248, 24));
        assert!(!x.is_live(0, 8), "part of a span");
        assert!(!x.is_live(0, 40), "two spans");
        assert!(!x.is_live(8, 24), "no start there");
        assert!(!x.is_live(248, 16));
        assert!(!x.is_live(256, 16));
        assert_eq!(x.live_bytes_at(0), 32);
        assert_eq!(x.live_bytes_at(248), 24);
        assert_eq!(x.live_bytes_at(8), 0);
        // Large spans.
        x.record(1024, 8 * 40);
        assert!(x.is_live(1024, 320));
        assert!(!x.is_live(1024, 312));
        assert!(!x.is_live(1024, 8), "a small claim on a large span");
        assert!(!x.is_live(1032, 312));
        assert_eq!(x.live_bytes_at(1024), 320);
        // Resizes move the end; across the threshold too.
        x.resize(0, 32, 16);
        assert!(x.is_live(0, 16) && !x.is_live(0, 32));
        x.resize(0, 16, 512);
        assert!(x.is_live(0, 512) && !x.is_live(0, 16));
        x.resize(0, 512, 8);
        assert!(x.is_live(0, 8) && !x.is_live(0, 512));
        x.forget(0, 8);
        x.forget(1024, 320);
        assert!(!x.is_live(0, 8) && !x.is_live(1024, 320));
        assert_eq!(x.live_bytes_at(0), 0);
        // The last granules of the arena (the padding word exists).
        let end = (1 << 16) - 8;
        x.record(end, 8);
        assert!(x.is_live(end, 8));
        assert_eq!(x.live_bytes_at(end), 8);
    }
}
