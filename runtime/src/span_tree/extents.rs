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
//! * `sizes`: one byte per granule: the size in granules (1..=[`SMALL`]) of the
//!   live allocation that starts at that granule, 0 when none of at most
//!   [`SMALL`] granules starts there. A span `[s, s + n)` with `n <= SMALL` is
//!   one live allocation exactly when `sizes[s] == n`: allocations are disjoint,
//!   so the one starting at `s` is the only one that can, and its size is known;
//! * `large`: one word per block of [`SMALL`] granules: `n << 7 | s % SMALL` for
//!   the allocation of `n > SMALL` granules that starts at granule `s` of the
//!   block, 0 for none. At most one such allocation can start in a block (it is
//!   longer than the block). A large span is live exactly when its block's word
//!   is its own.
//!
//! * `high_water`: one word before the size map, the highest end offset of
//!   any allocation the pool ever held (its arena's high-water mark, which
//!   `tern bench` reports beside peak resident memory; see `crate::stats`).
//!
//! Each check is one load and one compare, each update one store (and a
//! compare against the high-water mark): the record costs a few instructions
//! per operation. Address space: `1/8 + 1/128` of the
//! arena; what is touched is committed: the pages of `sizes` where allocations
//! start (one page per 32 KiB of arena), of `large` where large ones do.

use crate::memory::{Reservation, zero_anonymous};
use crate::span_tree::error::RESERVE_FAILED;

/// Spans of at most this many granules (1 KiB) are recorded in `sizes`; longer
/// ones in the large table, one word per block of this many granules.
pub const SMALL: u64 = 128;

/// `log2(SMALL)`.
const SMALL_SHIFT: u32 = 7;

/// Bytes of record an arena of `arena_bytes` needs (the high-water word, the
/// size map rounded up to words, then the large table).
pub const fn record_bytes(arena_bytes: i64) -> usize {
    let granules = arena_bytes as usize / 8;
    SIZES_AT + large_at(granules) + 8 * (granules / SMALL as usize + 1)
}

/// Where the size map starts in a record: after the high-water word (which
/// is found from `sizes` itself, so the view stays two pointers).
const SIZES_AT: usize = 8;

/// Where the large table starts in a record: after the size map, rounded up to
/// a word.
#[inline(always)]
const fn large_at(granules: usize) -> usize {
    (granules + 7) & !7
}

/// A view of one pool's record (raw pointers into runtime memory).
#[derive(Clone, Copy, Debug)]
pub struct Extents {
    sizes: *mut u8,
    large: *mut u64,
}

impl Extents {
    /// The view of a record of [`record_bytes`]`(arena_bytes)` bytes at `base`.
    ///
    /// # Safety
    /// `base` must be valid for reads and writes of `record_bytes(arena_bytes)`
    /// bytes (8-byte aligned, zero-initialised when the pool is fresh), inside
    /// one private anonymous mapping ([`Extents::clear`] may give its pages
    /// back), for as long as the view is used.
    #[inline(always)]
    pub unsafe fn from_raw(base: *mut u8, arena_bytes: i64) -> Extents {
        let granules = arena_bytes as usize / 8;
        // SAFETY: inside the record (the caller's contract), 8-byte aligned.
        let sizes = unsafe { base.add(SIZES_AT) };
        // SAFETY: as above.
        let large: *mut u64 = unsafe { sizes.add(large_at(granules)) }.cast();
        Extents { sizes, large }
    }

    /// The addresses of the view's size map and large table (what the
    /// registry keeps for a library pool).
    pub fn parts(&self) -> [i64; 2] {
        [self.sizes as i64, self.large as i64]
    }

    /// The view [`Extents::parts`] described.
    ///
    /// # Safety
    /// `parts` must come from [`Extents::parts`] of a view whose record is
    /// still alive.
    #[inline(always)]
    pub unsafe fn from_parts(parts: [i64; 2]) -> Extents {
        Extents {
            sizes: parts[0] as *mut u8,
            large: parts[1] as *mut u64,
        }
    }

    #[inline(always)]
    fn size_at(&self, granule: u64) -> *mut u8 {
        // SAFETY: callers pass a granule of the arena (a validated span).
        unsafe { self.sizes.add(granule as usize) }
    }

    #[inline(always)]
    fn large_at(&self, granule: u64) -> *mut u64 {
        // SAFETY: as in `size_at`: the block of a granule of the arena.
        unsafe { self.large.add((granule >> SMALL_SHIFT) as usize) }
    }

    /// Whether `[off, off + bytes)` is exactly one live allocation. `off` and
    /// `bytes` must describe a span inside the arena: `off` a multiple of 8,
    /// `bytes` a positive multiple of 8.
    #[inline(always)]
    pub fn is_live(&self, off: i64, bytes: i64) -> bool {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        if n <= SMALL {
            // SAFETY: see `size_at`.
            u64::from(unsafe { *self.size_at(s) }) == n
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s) == (n << SMALL_SHIFT) | (s & (SMALL - 1)) }
        }
    }

    /// Whether a live allocation starts at `off` (a multiple of 8 inside the
    /// arena). A growth of the allocation that ends there cannot happen in
    /// place, and is known to move without a look at the tree.
    #[inline(always)]
    pub fn starts_live(&self, off: i64) -> bool {
        let s = off as u64 >> 3;
        // SAFETY: see `size_at` and `large_at`.
        let (small, large) = unsafe { (*self.size_at(s), *self.large_at(s)) };
        (small != 0) | ((large != 0) & (large & (SMALL - 1) == s & (SMALL - 1)))
    }

    /// [`Extents::is_live`], and if so [`Extents::forget`] in the same step.
    #[inline(always)]
    pub fn take(&self, off: i64, bytes: i64) -> bool {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        let at = if n <= SMALL {
            let at = self.size_at(s);
            // SAFETY: `size_at` points into the size table (see there).
            if u64::from(unsafe { *at }) != n {
                return false;
            }
            // SAFETY: as above.
            unsafe { *at = 0 };
            return true;
        } else {
            self.large_at(s)
        };
        // SAFETY: see `large_at`.
        unsafe {
            if *at != (n << SMALL_SHIFT) | (s & (SMALL - 1)) {
                return false;
            }
            *at = 0;
        }
        true
    }

    /// Records `[off, off + bytes)` as a live allocation (same preconditions as
    /// [`Extents::is_live`]; the range holds no live allocation).
    #[inline(always)]
    pub fn record(&self, off: i64, bytes: i64) {
        self.put(off, bytes);
        self.reach(off + bytes);
    }

    /// [`Extents::record`] without the high-water mark.
    #[inline(always)]
    fn put(&self, off: i64, bytes: i64) {
        let s = off as u64 >> 3;
        let n = bytes as u64 >> 3;
        if n <= SMALL {
            // SAFETY: see `size_at`.
            unsafe { *self.size_at(s) = n as u8 };
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s) = (n << SMALL_SHIFT) | (s & (SMALL - 1)) };
        }
    }

    /// Forgets the live allocation `[off, off + bytes)` (it was recorded).
    #[inline(always)]
    pub fn forget(&self, off: i64, bytes: i64) {
        let s = off as u64 >> 3;
        if bytes as u64 >> 3 <= SMALL {
            // SAFETY: see `size_at`.
            unsafe { *self.size_at(s) = 0 };
        } else {
            // SAFETY: see `large_at`.
            unsafe { *self.large_at(s) = 0 };
        }
    }

    /// The live allocation `[off, off + old)` now ends at `off + new` (`new > 0`).
    #[inline(always)]
    pub fn resize(&self, off: i64, old: i64, new: i64) {
        self.reach(off + new);
        let s = off as u64 >> 3;
        let (o, n) = (old as u64 >> 3, new as u64 >> 3);
        if o.max(n) <= SMALL {
            // SAFETY: see `size_at`.
            unsafe { *self.size_at(s) = n as u8 };
        } else if o.min(n) > SMALL {
            // One word of the large table holds both (an append to a long
            // slice): rewritten once.
            self.put(off, new);
        } else {
            self.forget(off, old);
            self.put(off, new);
        }
    }

    /// Raises the high-water mark to `end` (the end offset of a live
    /// allocation) if it is higher.
    #[inline(always)]
    fn reach(&self, end: i64) {
        let high = self.high();
        // SAFETY: the record's first word (`from_raw`).
        if end > unsafe { *high } {
            raise(high, end);
        }
    }

    /// The high-water word, just before the size map.
    #[inline(always)]
    fn high(&self) -> *mut i64 {
        // SAFETY: `from_raw` placed `sizes` one word into the record.
        unsafe { self.sizes.sub(SIZES_AT) }.cast()
    }

    /// The highest end offset of any allocation recorded since the record
    /// was created (0 when none was): the arena's high-water mark in bytes.
    pub fn high_water(&self) -> i64 {
        // SAFETY: as in `reach`.
        unsafe { *self.high() }
    }

    /// Forgets every live allocation at once (a pool's reset): clears the
    /// record up to the high-water mark, past which nothing was ever
    /// recorded, writing only the pages that are resident
    /// (`memory::zero_anonymous`: the size map of a mark of gigabytes is
    /// mostly pages never touched). The mark itself stays: it is the
    /// arena's, over its life.
    pub fn clear(&self) {
        let granules = (self.high_water() as usize).div_ceil(8);
        // SAFETY: the mark is the end of a span of the arena, so the first
        // `granules` bytes of `sizes` and the blocks up to the one holding its
        // last granule lie in the record, a private anonymous mapping (the
        // contract of `from_raw`).
        unsafe {
            zero_anonymous(self.sizes, granules);
            zero_anonymous(self.large.cast(), 8 * granules.div_ceil(SMALL as usize));
        }
    }

    /// Whether any allocation is live: a scan of the size map and the large
    /// table up to the high-water mark, past which nothing was ever
    /// recorded, a word at a time. What a pool's finish reports as slices
    /// still allocated, from memory the program cannot write.
    pub fn any_live(&self) -> bool {
        let granules = (self.high_water() as usize).div_ceil(8);
        // SAFETY: as in `clear`: the mark is the end of a span of the arena,
        // so these bytes and words lie in the record; the size map is
        // 8-byte aligned and padded to whole words (`large_at`).
        unsafe {
            any_nonzero(std::slice::from_raw_parts(
                self.sizes.cast::<u64>(),
                granules.div_ceil(8),
            )) || any_nonzero(std::slice::from_raw_parts(
                self.large,
                granules.div_ceil(SMALL as usize),
            ))
        }
    }

    /// The size in bytes of the live allocation starting at `off` (a multiple
    /// of 8 inside the arena), or 0 when none starts there. For messages.
    #[cold]
    pub fn live_bytes_at(&self, off: i64) -> i64 {
        let s = off as u64 >> 3;
        // SAFETY: see `size_at` and `large_at`.
        let (small, large) = unsafe { (*self.size_at(s), *self.large_at(s)) };
        if small != 0 {
            i64::from(small) * 8
        } else if large != 0 && large & (SMALL - 1) == s & (SMALL - 1) {
            ((large >> SMALL_SHIFT) * 8) as i64
        } else {
            0
        }
    }
}

/// Stores a new high-water mark: out of line, since a pool in a steady state
/// rarely reaches past its mark and the store would only lengthen the hot path.
#[cold]
#[inline(never)]
fn raise(high: *mut i64, end: i64) {
    // SAFETY: `Extents::reach` passes the record's high-water word.
    unsafe { *high = end };
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
    /// Reserves a zeroed record for an arena of `arena_bytes` (committed
    /// lazily).
    pub fn new(arena_bytes: i64) -> Result<Record, i64> {
        let memory = Reservation::new(record_bytes(arena_bytes)).map_err(|_| RESERVE_FAILED)?;
        // SAFETY: the reservation holds `record_bytes` zeroed, page-aligned
        // bytes and lives as long as the view (both are owned by the record).
        let view = unsafe { Extents::from_raw(memory.base(), arena_bytes) };
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

/// Whether any of `words` is not zero: eight at a time, or-ed together
/// (vector ors, one test a block), where a test of each word took five
/// instructions (a finish of a pool of 12 MiB high-water mark scanned its
/// record in a million).
fn any_nonzero(words: &[u64]) -> bool {
    let blocks = words.chunks_exact(8);
    let rest = blocks.remainder();
    blocks
        .map(|b| b.iter().fold(0, |a, &w| a | w))
        .any(|w| w != 0)
        || rest.iter().any(|&w| w != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_live_allocation() {
        let r = Record::new(1 << 16).unwrap();
        let x = r.view();
        x.record(0, 32);
        x.record(32, 8);
        x.record(1016, 24);
        assert!(x.is_live(0, 32));
        assert!(x.is_live(32, 8));
        assert!(x.is_live(1016, 24));
        assert!(!x.is_live(0, 8), "part of a span");
        assert!(!x.is_live(0, 40), "two spans");
        assert!(!x.is_live(8, 24), "no start there");
        assert_eq!(x.live_bytes_at(0), 32);
        assert_eq!(x.live_bytes_at(1016), 24);
        assert_eq!(x.live_bytes_at(8), 0);
        // Large spans: one per block of SMALL granules.
        x.record(2048, 8 * 200);
        assert!(x.is_live(2048, 1600));
        assert!(!x.is_live(2048, 1592));
        assert!(!x.is_live(2048, 8), "a small claim on a large span");
        assert!(!x.is_live(2056, 1592));
        assert_eq!(x.live_bytes_at(2048), 1600);
        assert_eq!(x.live_bytes_at(2056), 0);
        // Resizes, across the threshold too.
        x.resize(0, 32, 16);
        assert!(x.is_live(0, 16) && !x.is_live(0, 32));
        x.resize(0, 16, 4096);
        assert!(x.is_live(0, 4096) && !x.is_live(0, 16));
        x.resize(0, 4096, 8);
        assert!(x.is_live(0, 8) && !x.is_live(0, 4096));
        x.forget(0, 8);
        x.forget(2048, 1600);
        assert!(!x.is_live(0, 8) && !x.is_live(2048, 1600));
        assert_eq!(x.live_bytes_at(0), 0);
        // The last granule of the arena.
        let end = (1 << 16) - 8;
        x.record(end, 8);
        assert!(x.is_live(end, 8));
        assert_eq!(x.live_bytes_at(end), 8);
        assert_eq!(x.high_water(), 1 << 16);
    }

    #[test]
    fn starts_live_names_exactly_the_starts_of_live_allocations() {
        let r = Record::new(1 << 16).unwrap();
        let x = r.view();
        x.record(0, 32);
        x.record(2048, 8 * 200);
        assert!(x.starts_live(0) && x.starts_live(2048));
        for off in [8, 24, 32, 1024, 2056, 2048 + 1600] {
            assert!(!x.starts_live(off), "{off}");
        }
        // A large allocation's block word names its start only.
        x.record(2048 + 1600, 8);
        assert!(x.starts_live(2048 + 1600));
        x.forget(2048, 8 * 200);
        x.forget(0, 32);
        assert!(!x.starts_live(0) && !x.starts_live(2048));
    }

    #[test]
    fn any_live_sees_every_granule_up_to_the_high_water_mark() {
        let r = Record::new(1 << 16).unwrap();
        let x = r.view();
        assert!(!x.any_live());
        // Each small allocation alone, at the first, a middle and the last
        // byte of a size-map word, and the last granule of the arena (first,
        // so that the scans after it read every block of eight words: the
        // first, the second and a later one).
        for off in [(1 << 16) - 8, 0, 8, 56, 64 + 24, 8 * 8 * 9, 8 * 8 * 8 * 100] {
            x.record(off, 8);
            assert!(x.any_live(), "{off}");
            x.forget(off, 8);
            assert!(!x.any_live(), "{off}");
        }
        // A large one (the large table's word).
        x.record(4096, 8 * 200);
        assert!(x.any_live());
        x.forget(4096, 8 * 200);
        assert!(!x.any_live());
        x.record(16, 24);
        x.clear();
        assert!(!x.any_live(), "a reset forgets every allocation");
    }

    /// A size map of nine words: one block of eight and one word after it,
    /// where the scan's remainder finds the last granule's allocation.
    #[test]
    fn any_live_sees_the_words_after_the_last_block() {
        let r = Record::new(8 * 8 * 9).unwrap();
        let x = r.view();
        for off in [8 * 8 * 9 - 8, 8 * 8 * 8, 8 * 8 * 7] {
            x.record(off, 8);
            assert!(x.any_live(), "{off}");
            x.forget(off, 8);
            assert!(!x.any_live(), "{off}");
        }
    }

    #[test]
    fn high_water_is_the_highest_end_ever_recorded() {
        let r = Record::new(1 << 16).unwrap();
        let x = r.view();
        assert_eq!(x.high_water(), 0);
        x.record(0, 32);
        x.record(64, 8);
        assert_eq!(x.high_water(), 72);
        x.forget(64, 8);
        x.resize(0, 32, 16);
        assert_eq!(x.high_water(), 72, "frees and shrinks keep the mark");
        x.resize(0, 16, 128);
        assert_eq!(x.high_water(), 128, "growth in place raises it");
        x.record(8192, 8 * 200);
        assert_eq!(x.high_water(), 8192 + 1600);
        x.clear();
        assert!(!x.is_live(0, 128) && !x.is_live(8192, 1600));
        assert_eq!(x.live_bytes_at(0), 0);
        assert_eq!(x.high_water(), 8192 + 1600, "a reset keeps the mark");
        x.record(0, 8);
        assert!(x.is_live(0, 8));
    }

    /// A reset after a gigabyte allocation clears the record's entries
    /// without committing the size map's 128 MiB, nearly all of it pages
    /// never touched (it wrote them all).
    #[test]
    fn a_reset_commits_no_page_of_the_record_it_did_not_touch() {
        let r = Record::new(1 << 30).unwrap();
        let x = r.view();
        x.record(0, 1 << 29);
        x.record((1 << 29) + 8, 16);
        x.record((1 << 30) - 8, 8);
        let touched = r.resident();
        assert!(touched < 1 << 20, "{touched}");
        x.clear();
        // At most the partial pages at the ends of the two ranges cleared
        // are written whether they were touched or not.
        let written_ends = 4 * crate::memory::page_size();
        assert!(
            r.resident() <= touched + written_ends,
            "{} > {touched}",
            r.resident()
        );
        assert!(!x.any_live());
        assert_eq!(x.live_bytes_at(0), 0);
        assert_eq!(x.live_bytes_at((1 << 29) + 8), 0);
        assert_eq!(x.live_bytes_at((1 << 30) - 8), 0);
        assert_eq!(x.high_water(), 1 << 30);
    }
}
