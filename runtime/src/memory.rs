//! Virtual memory reservations: address space reserved up front and committed
//! lazily by the OS on first touch, so a pool's arena and node array never move.
//!
//! **Program memory is never unmapped.** Memory a Tern slice or a program-
//! writable field can point into (pool arenas, node arrays, the library
//! pools' records) is reserved with [`reserve_program`] and given back with
//! [`retire`]: its pages are returned to the OS (replaced by fresh zero pages)
//! but its address range stays mapped, and is reused only for later program
//! memory. So a slice kept past its pool's `finish`, or a stale copy of a
//! `Pool`, reads zeros or another pool's data — memory of the program's own,
//! as a stale `reusable[]` slice does, and what `--sanitize` reports — and
//! never an unmapped page, nor memory the runtime has since mapped for itself
//! (a pool's boundary record, the sanitizer's shadow), which comes from
//! [`reserve`] and is unmapped on release.

use crate::span_tree::error::{NOT_RESERVED, RESERVE_FAILED};

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

/// Address ranges of retired program memory, sorted by address, adjacent
/// ranges merged: mapped and free for [`reserve_program`].
#[derive(Debug, Default)]
struct Retired(Vec<(usize, usize)>);

impl Retired {
    /// Takes `len` bytes from the lowest range that holds them.
    fn take(&mut self, len: usize) -> Option<usize> {
        let i = self.0.iter().position(|&(_, l)| l >= len)?;
        let (base, have) = self.0[i];
        if have == len {
            self.0.remove(i);
        } else {
            self.0[i] = (base + len, have - len);
        }
        Some(base)
    }

    /// Gives `[base, base + len)` back, merged with its neighbours.
    fn give(&mut self, base: usize, len: usize) {
        let v = &mut self.0;
        let i = v.partition_point(|&(b, _)| b < base);
        v.insert(i, (base, len));
        if i + 1 < v.len() && base + len == v[i + 1].0 {
            v[i].1 += v[i + 1].1;
            v.remove(i + 1);
        }
        if i > 0 && v[i - 1].0 + v[i - 1].1 == base {
            v[i - 1].1 += v[i].1;
            v.remove(i);
        }
    }
}

static RETIRED: std::sync::Mutex<Retired> = std::sync::Mutex::new(Retired(Vec::new()));

fn retired() -> std::sync::MutexGuard<'static, Retired> {
    RETIRED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Program memory handed out and not yet retired: base address → its
/// length in bytes (page-rounded) and its [`reservation_id`]. [`retire`]
/// takes exactly one entry out, so the same range given back twice (a
/// library pool finished through two copies of its value) is refused rather
/// than handed to two later pools at once; and a release that names the id
/// ([`retire_reservation`]) is refused once the range serves a later
/// reservation, whose id is another.
static LIVE: std::sync::Mutex<std::collections::BTreeMap<usize, (usize, u64)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// The id the next reservation of program memory gets (ids start at 1 and
/// never repeat).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn live() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<usize, (usize, u64)>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The id of the live reservation of program memory that starts at `base`:
/// unique for the life of the process, so a value that kept the id of a
/// reservation since retired cannot pass for the one now at its address.
pub fn reservation_id(base: usize) -> Option<u64> {
    live().get(&base).map(|&(_, id)| id)
}

/// Replaces `[base, base + len)` by fresh zero pages (the old pages go back to
/// the OS), keeping the range mapped.
///
/// # Safety
/// The range must be a whole-page part of a mapping of this module's.
unsafe fn refresh(base: usize, len: usize) -> Result<(), i64> {
    // SAFETY: MAP_FIXED over a range this module mapped: atomically replaces
    // its pages, touching no other mapping.
    let p = unsafe {
        libc::mmap(
            base as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(RESERVE_FAILED)
    } else {
        Ok(())
    }
}

/// Reserves `bytes` of program memory (see the module docs): part of a
/// retired range when one is large enough (the lowest, its pages refreshed to
/// zero, since stale slices may have written there), else a new [`reserve`].
pub fn reserve_program(bytes: usize) -> Result<*mut u8, i64> {
    let len = page_round(bytes.max(1)).ok_or(RESERVE_FAILED)?;
    let taken = retired().take(len);
    let base = match taken {
        Some(base) => {
            // SAFETY: a retired range is part of a mapping of this module's.
            if let Err(e) = unsafe { refresh(base, len) } {
                retired().give(base, len);
                return Err(e);
            }
            base as *mut u8
        }
        None => reserve(len)?,
    };
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    live().insert(base as usize, (len, id));
    Ok(base)
}

/// Gives back program memory reserved by [`reserve_program`] with the same
/// `bytes`: its pages go back to the OS, its range stays mapped for later
/// program memory. Anything but exactly one live reservation (one already
/// given back, a part of one, another size) is refused with [`NOT_RESERVED`]
/// and nothing changes.
///
/// # Safety
/// When `[base, base + bytes)` is a live reservation, nothing may use it any
/// more (slices into it stay harmless: it stays mapped).
pub unsafe fn retire(base: *mut u8, bytes: usize) -> Result<(), i64> {
    // SAFETY: the caller's contract.
    unsafe { retire_if(base, bytes, |_| true) }
}

/// [`retire`] of the reservation whose [`reservation_id`] is `id`: refused
/// with [`NOT_RESERVED`] when the range is live under another id (it was
/// given back and serves a later reservation).
///
/// # Safety
/// As [`retire`].
pub unsafe fn retire_reservation(base: *mut u8, bytes: usize, id: u64) -> Result<(), i64> {
    // SAFETY: the caller's contract.
    unsafe { retire_if(base, bytes, |live| live == id) }
}

/// [`retire`] when the live reservation's id passes `owns`.
///
/// # Safety
/// As [`retire`].
unsafe fn retire_if(base: *mut u8, bytes: usize, owns: impl Fn(u64) -> bool) -> Result<(), i64> {
    let len = page_round(bytes.max(1)).ok_or(RESERVE_FAILED)?;
    let base = base as usize;
    let entry = {
        let mut live = live();
        let entry = match live.get(&base) {
            Some(&entry) if entry.0 == len && owns(entry.1) => entry,
            _ => return Err(NOT_RESERVED),
        };
        live.remove(&base);
        entry
    };
    // SAFETY: a live reservation of this module's, whole pages.
    if let Err(e) = unsafe { refresh(base, len) } {
        live().insert(base, entry);
        return Err(e);
    }
    retired().give(base, len);
    Ok(())
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

/// Below this many bytes [`zero_discarding`] writes zeros: giving pages back
/// costs a system call and a fault on the next touch of each page.
const DISCARD_FROM: usize = 256 * 1024;

/// Zeroes `bytes` bytes at `p`, inside a private anonymous mapping this
/// module made ([`reserve`]), giving the whole pages of a long range back to
/// the OS (`MADV_DONTNEED`: they read as zeros again, and count as resident
/// only once touched) instead of writing them. The sanitizer's shadow clears
/// a freed slice's granules this way, so a large slice freed does not leave
/// its shadow resident (four 16 GiB pools, each allocated whole once and
/// freed, kept 16 GiB of shadow committed).
///
/// # Safety
/// `p` must be valid for writes of `bytes` bytes, all inside one mapping made
/// by [`reserve`].
pub unsafe fn zero_discarding(p: *mut u8, bytes: usize) {
    if bytes < DISCARD_FROM {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_bytes(p, 0, bytes) };
        return;
    }
    // SAFETY: the caller's contract.
    if let Some((start, end)) = unsafe { zero_partial_pages(p, bytes) } {
        // SAFETY: as for `discard`.
        unsafe { discard(start, end - start) };
    }
}

/// Zeroes the partial pages at the two ends of `[p, p + bytes)` and returns
/// the whole pages between, `[start, end)`; zeroes it all and returns `None`
/// when it holds no whole page.
///
/// # Safety
/// `p` must be valid for writes of `bytes` bytes.
unsafe fn zero_partial_pages(p: *mut u8, bytes: usize) -> Option<(usize, usize)> {
    let page = page_size();
    let start = (p as usize).next_multiple_of(page);
    let end = (p as usize + bytes) & !(page - 1);
    // SAFETY: the caller's contract; the ranges written lie in `[p, p + bytes)`.
    unsafe {
        if end <= start {
            std::ptr::write_bytes(p, 0, bytes);
            return None;
        }
        std::ptr::write_bytes(p, 0, start - p as usize);
        std::ptr::write_bytes(end as *mut u8, 0, p as usize + bytes - end);
    }
    Some((start, end))
}

/// Zeroes the whole pages `[at, at + bytes)` by giving them back to the OS
/// (`MADV_DONTNEED`: they read as zeros, and are committed again only when
/// touched); by writing if the OS refuses.
///
/// # Safety
/// The pages must be valid for writes and part of a private anonymous mapping.
unsafe fn discard(at: usize, bytes: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        if libc::madvise(at as *mut libc::c_void, bytes, libc::MADV_DONTNEED) != 0 {
            std::ptr::write_bytes(at as *mut u8, 0, bytes);
        }
    }
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
    // SAFETY: the caller's contract (every arm).
    unsafe {
        if bytes > 16 {
            zero_long(p, bytes);
        } else if bytes >= 8 {
            p.cast::<u64>().write_unaligned(0);
            p.add(bytes - 8).cast::<u64>().write_unaligned(0);
        } else {
            std::ptr::write_bytes(p, 0, bytes);
        }
    }
}

/// [`zero`] of more than 16 bytes: by `memset`, or by residency from a MiB
/// on. Its callers reach it through a size test they make anyway, so the
/// megabyte's test adds one compare to a `memset` path (the traces' builtin
/// replays moved by −0.3 to +0.1 % of their instructions).
///
/// # Safety
/// As for [`zero`].
#[inline(always)]
unsafe fn zero_long(p: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        if bytes < BY_RESIDENCY_FROM {
            std::ptr::write_bytes(p, 0, bytes);
        } else {
            zero_large(p, bytes);
        }
    }
}

/// From this many bytes [`zero`] asks the OS which pages of program memory
/// it holds before clearing ([`zero_by_residency`]): the question costs a
/// system call or two, a few microseconds against the 40 or so a MiB's
/// `memset` takes.
const BY_RESIDENCY_FROM: usize = 1 << 20;

/// Zeroes `bytes` bytes at `p`, inside a private anonymous mapping (one
/// this module made, of either kind): a MiB or more by residency
/// ([`zero_by_residency`]), less by writing. A pool's reset clears its
/// boundary record this way: the record of an arena whose high-water mark is
/// gigabytes is mostly pages never touched, which writing would commit.
///
/// # Safety
/// `p` must be valid for writes of `bytes` bytes, all inside one private
/// anonymous mapping.
pub unsafe fn zero_anonymous(p: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        if bytes < BY_RESIDENCY_FROM {
            std::ptr::write_bytes(p, 0, bytes);
        } else {
            zero_by_residency(p, bytes);
        }
    }
}

/// [`zero`] of a megabyte or more: inside program memory (every pool arena
/// the runtime reserved, [`reserve_program`]), by residency; elsewhere (an
/// arena a caller of `tern_span_init` mapped itself, perhaps from a file,
/// where a discarded page need not read as zeros) by writing.
///
/// # Safety
/// As for [`zero`].
#[cold]
#[inline(never)]
unsafe fn zero_large(p: *mut u8, bytes: usize) {
    let (from, to) = (p as usize, p as usize + bytes);
    let in_program_memory = live()
        .range(..=from)
        .next_back()
        .is_some_and(|(&base, &(len, _))| to <= base + len);
    // SAFETY: the caller's contract; program memory is a private anonymous
    // mapping of this module's.
    unsafe {
        if in_program_memory {
            zero_by_residency(p, bytes);
        } else {
            std::ptr::write_bytes(p, 0, bytes);
        }
    }
}

/// Zeroes `bytes` bytes at `p`, inside a private anonymous mapping, writing
/// only the pages the OS holds in memory (`mincore`) and discarding the
/// others (`MADV_DONTNEED`: pages never touched, or given back, or swapped
/// out, then read as zeros without being committed). A large slice
/// allocated again where a freed one lay costs what the program had
/// touched of it, not its whole length: a gigabyte allocated, freed and
/// allocated again was a gigabyte written and committed. Resident pages are
/// still written, not discarded: on this machine a discarded page written
/// whole again cost 2.2 to 7.7 times its `memset` (docs/benchmarks.md,
/// "Thirty-second pass").
///
/// # Safety
/// `p` must be valid for writes of `bytes` bytes, all inside one private
/// anonymous mapping.
unsafe fn zero_by_residency(p: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract.
    let Some((start, end)) = (unsafe { zero_partial_pages(p, bytes) }) else {
        return;
    };
    let page = page_size();
    // One byte a page: 16 MiB of 4 KiB pages a call.
    let mut vec = [0u8; 4096];
    let mut at = start;
    while at < end {
        let pages = ((end - at) / page).min(vec.len());
        let chunk = &mut vec[..pages];
        // SAFETY: `chunk` holds a byte for each of the `pages` pages, which
        // are mapped (the caller's contract).
        if unsafe { libc::mincore(at as *mut libc::c_void, pages * page, chunk.as_mut_ptr()) } != 0
        {
            chunk.fill(1);
        }
        let mut i = 0;
        while i < pages {
            let resident = chunk[i] & 1 != 0;
            let run = chunk[i..]
                .iter()
                .take_while(|&&v| (v & 1 != 0) == resident)
                .count();
            let (run_at, run_bytes) = (at + i * page, run * page);
            // SAFETY: whole pages inside `[p, p + bytes)`, of a private
            // anonymous mapping (the caller's contract).
            unsafe {
                if resident {
                    std::ptr::write_bytes(run_at as *mut u8, 0, run_bytes);
                } else {
                    discard(run_at, run_bytes);
                }
            }
            i += run;
        }
        at += pages * page;
    }
}

/// What a pool's zero-fill clears (see [`zero_fill`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fill {
    /// The bytes a growth in place or a move adds to a slice.
    Growth,
    /// A whole new allocation.
    Allocation,
}

/// Zero-fills `bytes` bytes at `p`, cleared for `fill`: the one zero-fill of
/// both pools (builtin and checked), so that neither side of the
/// `slice_pool` vs `reusable[]` comparison clears faster than the other.
///
/// # Safety
/// As for [`zero`].
#[inline(always)]
pub unsafe fn zero_fill(p: *mut u8, bytes: usize, fill: Fill) {
    // SAFETY: the caller's contract.
    unsafe {
        match fill {
            Fill::Growth => zero(p, bytes),
            Fill::Allocation => zero_allocation(p, bytes),
        }
    }
}

/// [`zero`] for a new allocation: objects of 17 to 64 bytes (a tree node of
/// a few words) are two or four possibly overlapping 16-byte stores
/// instead of a `memset` call, whose call and dispatch were 17 of the 133
/// instructions binary-trees spent on an allocation of its 32-byte nodes.
/// Only allocations test for it: a growth's fill is rarely of that size, and
/// the test cost `append/8` 1 % of its instructions.
///
/// # Safety
/// As for [`zero`].
#[inline(always)]
unsafe fn zero_allocation(p: *mut u8, bytes: usize) {
    // SAFETY: the caller's contract (every arm): each store lies in
    // `[p, p + bytes)`.
    unsafe {
        if bytes > 64 {
            zero_long(p, bytes);
        } else if bytes >= 17 {
            p.cast::<u128>().write_unaligned(0);
            p.add(bytes - 16).cast::<u128>().write_unaligned(0);
            if bytes > 32 {
                p.add(16).cast::<u128>().write_unaligned(0);
                p.add(bytes - 32).cast::<u128>().write_unaligned(0);
            }
        } else {
            zero(p, bytes);
        }
    }
}

/// An owned reservation, released on drop: unmapped if it is the runtime's
/// own memory ([`Reservation::new`]), retired if it is program memory
/// ([`Reservation::program`]).
#[derive(Debug)]
pub struct Reservation {
    base: *mut u8,
    bytes: usize,
    program: bool,
}

// SAFETY: the reservation exclusively owns its mapping.
unsafe impl Send for Reservation {}

impl Reservation {
    /// Reserves `bytes` of address space for the runtime's own use (see
    /// [`reserve`]): no slice may ever point into it.
    pub fn new(bytes: usize) -> Result<Self, i64> {
        Ok(Reservation {
            base: reserve(bytes)?,
            bytes,
            program: false,
        })
    }

    /// Reserves `bytes` of program memory (see [`reserve_program`]): an
    /// arena or node array slices point into.
    pub fn program(bytes: usize) -> Result<Self, i64> {
        Ok(Reservation {
            base: reserve_program(bytes)?,
            bytes,
            program: true,
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

/// Pages the runtime writes and the program reads: `head + bytes` bytes of
/// a fresh memory file mapped shared for the runtime (the returned
/// reservation, runtime memory), and its pages from `head` on (a whole
/// number of pages) mapped copy-on-write into `bytes` of program memory
/// (the program reservation, as [`Reservation::program`] gives it). The
/// program's view shows every word the runtime writes, until the program
/// writes into one of its pages: that page becomes the program's own, and
/// neither side sees the other's writes in it again. A library pool's node
/// array is such a pair (`span_tree::library::create`): the runtime's copy
/// of the tree is written once, not once for each copy. Errors:
/// [`RESERVE_FAILED`] (no memory file, no address space, `head` not whole
/// pages).
pub fn shared_pages(head: usize, bytes: usize) -> Result<(Reservation, Reservation), i64> {
    let len = page_round(bytes.max(1)).ok_or(RESERVE_FAILED)?;
    if !head.is_multiple_of(page_size()) {
        return Err(RESERVE_FAILED);
    }
    let total = head.checked_add(len).ok_or(RESERVE_FAILED)?;
    // SAFETY: a new memory file this function owns; closed below (the
    // mappings keep it).
    let fd = unsafe { libc::memfd_create(c"tern-pool-nodes".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(RESERVE_FAILED);
    }
    let map = |at: *mut u8, len: usize, flags: libc::c_int, offset: usize| {
        // SAFETY: a mapping of the file this function owns, at an address
        // of the kernel's choosing or (MAP_FIXED) over program memory just
        // reserved here.
        let p = unsafe {
            libc::mmap(
                at.cast(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags | libc::MAP_NORESERVE,
                fd,
                offset as libc::off_t,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as *mut u8)
    };
    let made = (|| {
        // SAFETY: sizes the file this function owns.
        if unsafe { libc::ftruncate(fd, total as libc::off_t) } != 0 {
            return Err(RESERVE_FAILED);
        }
        let shared = map(std::ptr::null_mut(), total, libc::MAP_SHARED, 0).ok_or(RESERVE_FAILED)?;
        let runtime = Reservation {
            base: shared,
            bytes: total,
            program: false,
        };
        let program = Reservation::program(len)?;
        map(
            program.base(),
            len,
            libc::MAP_PRIVATE | libc::MAP_FIXED,
            head,
        )
        .ok_or(RESERVE_FAILED)?;
        Ok((runtime, program))
    })();
    // SAFETY: the descriptor opened above, used by nothing else.
    unsafe { libc::close(fd) };
    made
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: created by `reserve(self.bytes)` or (program)
        // `reserve_program(self.bytes)`; dropped once.
        let _ = unsafe {
            if self.program {
                retire(self.base, self.bytes)
            } else {
                release(self.base, self.bytes)
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The program's view of shared pages shows what the runtime writes,
    /// a page it read as a hole first included; a page the program writes
    /// becomes its own (the runtime's later writes there do not show, and
    /// its own write never reaches the runtime), while its other pages
    /// still follow the runtime's.
    #[test]
    fn shared_pages_show_the_runtime_until_the_program_writes_a_page() {
        let page = page_size();
        let (runtime, program) = shared_pages(page, 3 * page).unwrap();
        let words = |base: *mut u8, at: usize| base.wrapping_add(at).cast::<u64>();
        let (w, r) = (
            |at| words(runtime.base(), page + at),
            |at| words(program.base(), at),
        );
        // SAFETY: every offset below is inside both mappings (the runtime's
        // nodes start a page into its mapping).
        unsafe {
            assert_eq!(r(8).read_volatile(), 0);
            w(8).write_volatile(7);
            w(page).write_volatile(9);
            assert_eq!((r(8).read_volatile(), r(page).read_volatile()), (7, 9));
            r(16).write_volatile(5);
            w(8).write_volatile(8);
            w(24).write_volatile(3);
            w(page).write_volatile(10);
            assert_eq!(
                w(16).read_volatile(),
                0,
                "the program's write reached the runtime"
            );
            assert_eq!(
                (
                    r(8).read_volatile(),
                    r(16).read_volatile(),
                    r(24).read_volatile()
                ),
                (7, 5, 0)
            );
            assert_eq!(r(page).read_volatile(), 10);
            assert_eq!(r(2 * page).read_volatile(), 0);
        }
    }

    #[test]
    fn a_large_zeroing_writes_only_resident_pages() {
        let page = page_size();
        let len = 512 * page;
        let a = reserve_program(len).unwrap();
        // SAFETY: `a` is `len` bytes of fresh, writable program memory; the
        // zeroed range starts and ends inside a page.
        unsafe {
            for i in (0..len).step_by(4 * page) {
                a.add(i).write(0xAA);
                a.add(i + page - 1).write(0xBB);
            }
            a.add(len - 1).write(0xCC);
            assert_eq!(resident_bytes(a, len), 129 * page);
            let (from, bytes) = (page - 3, len - page + 2);
            assert!(bytes >= BY_RESIDENCY_FROM);
            zero(a.add(from), bytes);
            // The written pages are still resident (written again, not
            // discarded), and no page beyond them was committed (asked
            // before the reads below, which map the untouched pages).
            assert_eq!(resident_bytes(a, len), 129 * page);
            let s = std::slice::from_raw_parts(a, len);
            assert_eq!(s[0], 0xAA, "before the range");
            assert_eq!(s[page - 4], 0, "never written");
            assert!(s[from..from + bytes].iter().all(|&b| b == 0));
            assert_eq!(s[len - 1], 0xCC, "past the range");
            retire(a, len).unwrap();
        }
    }

    #[test]
    fn a_large_zeroing_outside_program_memory_writes() {
        let len = BY_RESIDENCY_FROM + 4096;
        let mut v = vec![0x5Au8; len];
        // SAFETY: `v` is `len` writable bytes (heap memory: not program
        // memory, so it is written, never discarded).
        unsafe { zero(v.as_mut_ptr().add(1), len - 2) };
        assert_eq!((v[0], v[len - 1]), (0x5A, 0x5A));
        assert!(v[1..len - 1].iter().all(|&b| b == 0));
    }

    #[test]
    fn retired_program_memory_stays_mapped() {
        let page = page_size();
        let a = reserve_program(3 * page).unwrap();
        // SAFETY: `a` is 3 pages of fresh, writable memory.
        unsafe { a.add(page).write(7) };
        // SAFETY: `a` came from reserve_program(3 pages).
        unsafe { retire(a, 3 * page).unwrap() };
        // A stale pointer still reads and writes without a fault (what it
        // reads is not asserted: a test running beside may reuse the range).
        // SAFETY: retired program memory stays mapped.
        unsafe {
            std::hint::black_box(a.add(page).read_volatile());
            a.add(2 * page).write_volatile(9);
        }
    }

    #[test]
    fn program_memory_is_given_back_exactly_once() {
        let page = page_size();
        let a = reserve_program(3 * page).unwrap();
        // SAFETY: a live reservation of three pages, given back whole once.
        unsafe {
            assert_eq!(retire(a.add(page), page), Err(NOT_RESERVED));
            assert_eq!(retire(a, page), Err(NOT_RESERVED));
            assert_eq!(retire(a, 3 * page), Ok(()));
            assert_eq!(retire(a, 3 * page), Err(NOT_RESERVED));
        }
        // Given back once, the range serves one later reservation, not two.
        let b = reserve_program(3 * page).unwrap();
        let c = reserve_program(3 * page).unwrap();
        assert_ne!(b, c);
        // SAFETY: both live, given back once each.
        unsafe {
            assert_eq!(retire(b, 3 * page), Ok(()));
            assert_eq!(retire(c, 3 * page), Ok(()));
        }
    }

    #[test]
    fn a_long_zeroing_gives_whole_pages_back() {
        let page = page_size();
        let len = 256 * page;
        let r = Reservation::new(len).unwrap();
        let a = r.base();
        let bytes_of = |from: usize, to: usize| {
            // SAFETY: `[from, to)` lies in the reservation, and no write
            // happens while the slice is alive.
            unsafe { std::slice::from_raw_parts(a.add(from), to - from) }.to_vec()
        };
        // From mid first page to mid last page but one: the partial pages
        // are written, the whole ones between given back.
        let (from, bytes) = (page / 2, len - 2 * page);
        // SAFETY: every range written lies in the reservation's `len` bytes.
        unsafe {
            std::ptr::write_bytes(a, 0xab, len);
            assert_eq!(r.resident(), len);
            zero_discarding(a.add(from), bytes);
        }
        assert_eq!(r.resident(), len - (bytes / page - 1) * page);
        assert!(bytes_of(0, from).iter().all(|&b| b == 0xab));
        assert!(bytes_of(from, from + bytes).iter().all(|&b| b == 0));
        assert!(bytes_of(from + bytes, len).iter().all(|&b| b == 0xab));
        // A short range is written, not given back.
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(a, 0xab, 4 * page) };
        let before = r.resident();
        // SAFETY: as above.
        unsafe { zero_discarding(a, 4 * page) };
        assert_eq!(r.resident(), before);
        assert!(bytes_of(0, 4 * page).iter().all(|&b| b == 0));
    }

    #[test]
    fn retired_ranges_are_reused_lowest_first_and_merge() {
        let mut r = Retired::default();
        r.give(0x5000, 0x1000);
        r.give(0x1000, 0x2000);
        r.give(0x3000, 0x1000);
        assert_eq!(r.0, [(0x1000, 0x3000), (0x5000, 0x1000)]);
        assert_eq!(r.take(0x2000), Some(0x1000));
        assert_eq!(r.0, [(0x3000, 0x1000), (0x5000, 0x1000)]);
        assert_eq!(r.take(0x2000), None);
        r.give(0x4000, 0x1000);
        assert_eq!(r.0, [(0x3000, 0x3000)]);
        assert_eq!(r.take(0x3000), Some(0x3000));
        assert!(r.0.is_empty());
    }
}
