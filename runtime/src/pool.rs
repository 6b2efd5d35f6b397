//! A span pool: an arena reservation that never moves, a node array reserved for
//! the worst case, a tree header and a boundary record, all owned by the pool.
//! `SpanPool<Unchecked>` is the builtin pool; `SpanPool<Shared>` and
//! `SpanPool<Mirrored>` register themselves and run every operation through
//! the same library entry points as the `tern_span_*` externs (registry
//! lookup and the registry's boundary record included): `Shared` with its
//! node array a view of the runtime's pages, as `slice_pool`'s pools are
//! (what `tern_span_new` makes), so it measures and tests exactly that path;
//! `Mirrored` with its node array its own, written beside the runtime's
//! copy, as for `tern_span_init`.
//!
//! Both track allocation boundaries ([`crate::span_tree::extents`]): `free` and
//! `resize` must name exactly one live allocation.

use std::marker::PhantomData;

use crate::memory::{Fill, Reservation, zero_fill};
use crate::span_tree::error::BAD_SIZE;
use crate::span_tree::extents::{Extents, Record};
use crate::span_tree::layout::{self, HEADER_WORDS, Word};
use crate::span_tree::registry::{self, PoolBounds};
use crate::span_tree::scan::{Portable, Simd};
use crate::span_tree::tree::MAX_ARENA_BYTES;
use crate::span_tree::{Tree, TreeResult, Validate, library, round8};

/// A pool of spans over an owned arena; offsets are byte offsets into the arena.
pub struct SpanPool<V: Validate> {
    arena: Reservation,
    nodes: Reservation,
    header: Box<[i64; HEADER_WORDS]>,
    /// A persistent view over `header` and `nodes` (both stay put when the pool moves).
    tree: Tree<V>,
    /// The boundary record of an unchecked pool (a library pool's is the
    /// registry's, reserved by `library::init`).
    _record: Option<Record>,
    /// The view of the boundary record in use.
    ext: Extents,
    arena_bytes: i64,
    node_cap: i64,
    _mode: PhantomData<V>,
}

// SAFETY: the pool exclusively owns its arena, node array and header.
unsafe impl<V: Validate> Send for SpanPool<V> {}

/// Whether a resize from `old` to `new` bytes grows a span inside its last
/// 8-byte granule (`SpanPool::grow_in_granule`): a test of the arguments
/// alone, `(old - 1) / 8 == (new - 1) / 8` with `new > old` in one compare.
/// A zero or negative `old` may pass; the pool refuses it.
#[inline(always)]
pub fn in_granule(old: i64, new: i64) -> bool {
    new > old && (old.wrapping_sub(1) ^ new.wrapping_sub(1)) as u64 <= 7
}

/// The address space an unchecked pool of `arena_bytes` (in range) reserves:
/// its arena, its worst-case node array and its boundary record. What a
/// limit such as `ulimit -v` is measured against (committed memory is what
/// is touched).
pub fn address_space(arena_bytes: i64) -> i64 {
    let arena_bytes = round8(arena_bytes);
    let nodes = layout::node_capacity(arena_bytes) * layout::NODE_WORDS as i64 * 4;
    arena_bytes + nodes + crate::span_tree::extents::record_bytes(arena_bytes) as i64
}

impl<V: Validate> SpanPool<V> {
    /// Reserves an arena of `arena_bytes` (rounded down to 8: a partial
    /// granule at the end could hold no span, and a span past the size
    /// asked for would be room nobody asked for) and its worst-case node
    /// array. Errors: `BAD_SIZE` (negative or above `MAX_ARENA_BYTES`), `RESERVE_FAILED`,
    /// `TOO_MANY_POOLS` (library pools only).
    pub fn new(arena_bytes: i64) -> TreeResult<Self> {
        if !(0..=MAX_ARENA_BYTES).contains(&arena_bytes) {
            return Err(BAD_SIZE);
        }
        let arena_bytes = arena_bytes & !(layout::GRANULE - 1);
        let node_cap = layout::node_capacity(arena_bytes);
        let node_words = node_cap * layout::NODE_WORDS as i64;
        // Slices point into the arena (program memory, never unmapped); the
        // node array is the runtime's own (the unchecked tree trusts it, so
        // it must never be memory a stale slice could reach).
        let arena = Reservation::program(arena_bytes as usize)?;
        // A `Shared` pool's node array shows the runtime's copy of the tree
        // (program memory: copy-on-write, the tree never reads it).
        let (nodes, shared) = if V::MIRRORED && !V::MIRROR_NODES {
            let (shadow, nodes) =
                crate::memory::shared_pages(library::SHADOW_NODES_AT, node_words as usize * 4)?;
            (nodes, Some(shadow))
        } else {
            (Reservation::new(node_words as usize * 4)?, None)
        };
        let mut header = Box::new([0i64; HEADER_WORDS]);
        let hdr = header.as_mut_ptr();
        let nptr = nodes.base() as *mut Word;
        // SAFETY: header and nodes are owned, sized as the view requires, and live
        // as long as the pool (the view is dropped with it).
        let mut tree: Tree<V> = unsafe { Tree::from_raw(hdr, nptr, node_cap, arena_bytes) };
        let (record, ext) = if V::MIRRORED {
            let arena_base = arena.base() as i64;
            // SAFETY: as above; `shared` and `nodes` are one pair of
            // `shared_pages`.
            let id = unsafe {
                match shared {
                    Some(shadow) => library::init_shared(
                        hdr,
                        nptr,
                        node_words,
                        arena_base,
                        arena_bytes,
                        shadow,
                    )?,
                    None => library::init(hdr, nptr, node_words, arena_base, arena_bytes)?,
                }
            };
            (None, library::extents_of(id)?)
        } else {
            tree.init(0);
            let record = Record::new(arena_bytes)?;
            let ext = record.view();
            (Some(record), ext)
        };
        Ok(SpanPool {
            arena,
            nodes,
            header,
            tree,
            _record: record,
            ext,
            arena_bytes,
            node_cap,
            _mode: PhantomData,
        })
    }

    /// The arena size in bytes.
    pub fn arena_bytes(&self) -> i64 {
        self.arena_bytes
    }

    /// The arena's base address.
    pub fn base(&self) -> *mut u8 {
        self.arena.base()
    }

    #[inline(always)]
    fn hdr(&mut self) -> *mut i64 {
        self.header.as_mut_ptr()
    }

    #[inline(always)]
    fn nodes_ptr(&self) -> *mut Word {
        self.nodes.base() as *mut Word
    }

    /// The view over the pool's own memory.
    fn view(&mut self) -> &mut Tree<V> {
        &mut self.tree
    }

    /// The arena address of offset `off` (what the library entry points take;
    /// they refuse any address outside the arena, so a wild offset may wrap).
    #[inline(always)]
    fn addr(&self, off: i64) -> i64 {
        (self.base() as i64).wrapping_add(off)
    }

    /// First-fit alloc of `bytes` (rounded up to 8); returns the offset. The bytes
    /// are not zeroed (see [`Self::alloc_zeroed`]).
    #[inline(always)]
    pub fn alloc(&mut self, bytes: i64) -> TreeResult<i64> {
        d_alloc(self, bytes)
    }

    /// First-fit alloc with the span zero-filled.
    #[inline(always)]
    pub fn alloc_zeroed(&mut self, bytes: i64) -> TreeResult<i64> {
        d_alloc_zeroed(self, bytes)
    }

    /// Frees `[off, off + round8(bytes))` with coalescing; it must be exactly one
    /// live allocation (see `Tree::free_tracked`).
    #[inline(always)]
    pub fn free(&mut self, off: i64, bytes: i64) -> TreeResult<()> {
        d_free(self, (off, bytes))
    }

    /// In-place resize of one live allocation: `off`, or `MUST_MOVE` (see
    /// `Tree::resize_tracked`). Does not zero.
    #[inline(always)]
    pub fn resize_in_place(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        d_resize_in_place(self, (off, old, new))
    }

    /// The whole resize contract on bytes: `off == -1` (or `old == 0`) is an empty
    /// slice, growing it allocates; resizing to 0 frees and returns -1; otherwise
    /// resize in place, or allocate `new` while the old span is held, copy
    /// `min(old, new)` bytes and free the old span. New bytes are zero-filled.
    #[inline(always)]
    pub fn resize(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        d_resize(self, (off, old, new))
    }

    // ---- the operations on scan backend `S` (dispatched above) ----

    #[inline(always)]
    fn alloc_in<S: Simd>(&mut self, bytes: i64) -> TreeResult<i64> {
        if V::MIRRORED {
            let h = self.hdr();
            // SAFETY: the header is owned and HEADER_WORDS long.
            let addr = unsafe { library::alloc_in::<S>(h, bytes, false)? };
            Ok(addr - self.addr(0))
        } else {
            let ext = self.ext;
            let (raw, path) = self.tree.parts();
            raw.with::<S>().alloc_tracked(path, &ext, bytes)
        }
    }

    #[inline(always)]
    pub(crate) fn alloc_zeroed_in<S: Simd>(&mut self, bytes: i64) -> TreeResult<i64> {
        let fresh = self.ext.high_water();
        let off = self.alloc_in::<S>(bytes)?;
        // Not through `zero_new` with a `Fill`: that shared form cost the
        // growth fills (append/8 82.3 -> 83.6 M, binary-trees +0.3 %).
        let to = (off + round8(bytes)).min(fresh);
        if to > off {
            // SAFETY: the tree only returns spans inside the arena.
            unsafe {
                zero_fill(
                    self.base().add(off as usize),
                    (to - off) as usize,
                    Fill::Allocation,
                )
            };
        }
        Ok(off)
    }

    #[inline(always)]
    pub(crate) fn free_in<S: Simd>(&mut self, off: i64, bytes: i64) -> TreeResult<()> {
        if V::MIRRORED {
            let h = self.hdr();
            // SAFETY: as in `alloc_in`.
            Ok(unsafe { library::free_in::<S>(h, self.addr(off), bytes) }?)
        } else {
            let ext = self.ext;
            let (raw, path) = self.tree.parts();
            Ok(raw.with::<S>().free_tracked(path, &ext, off, bytes)?)
        }
    }

    #[inline(always)]
    fn resize_in_place_in<S: Simd>(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        if V::MIRRORED {
            let (h, at) = (self.hdr(), self.addr(off));
            // SAFETY: as in `alloc_in`.
            let addr = unsafe { library::resize_in::<S>(h, at, (old, new), false, false)? };
            Ok(addr - self.addr(0))
        } else {
            let ext = self.ext;
            let (raw, path) = self.tree.parts();
            raw.with::<S>().resize_tracked(path, &ext, off, old, new)
        }
    }

    /// The size in bytes of the live allocation starting at `off` (0 when none
    /// does): what messages about stale spans name.
    pub fn live_bytes_at(&self, off: i64) -> i64 {
        if off < 0 || off % 8 != 0 || off >= self.arena_bytes {
            return 0;
        }
        self.ext.live_bytes_at(off)
    }

    #[inline(always)]
    fn zero(&mut self, off: i64, bytes: i64) {
        if bytes > 0 {
            // SAFETY: the tree only returns spans inside the arena.
            unsafe { crate::memory::zero(self.base().add(off as usize), bytes as usize) };
        }
    }

    /// Zero-fills `[from, to)` of the arena except what lies at or past
    /// `fresh`, the pool's high-water mark before the operation: no allocation
    /// ever reached past it, so those bytes are still the zero pages the OS
    /// gave the reservation (calloc's economy: a large zeroed allocation at the
    /// frontier writes, and commits, nothing). The caller passes a `fresh` no
    /// lower than the end of anything it wrote in this operation.
    #[inline(always)]
    fn zero_new(&mut self, from: i64, to: i64, fresh: i64) {
        self.zero(from, to.min(fresh) - from);
    }

    /// A growth that stays inside the span's last 8-byte granule
    /// (`round8(new) == round8(old)`: `reusable::append` of a byte, seven
    /// times in eight): by the contract nothing in the tree changes, so this
    /// is the record's check that `[off, off + round8(old))` is one live
    /// allocation and the zero fill of the new bytes (stale after a shrink).
    /// False, with nothing done, for every other case and for a span the
    /// record does not know, which the full path then handles or reports.
    #[inline(always)]
    pub(crate) fn grow_in_granule(&mut self, off: i64, old: i64, new: i64) -> bool {
        // The span inside the arena, starting at a granule, as the tree's
        // own check of a span asks (`old <= arena` keeps the rounding below
        // from overflowing).
        if old <= 0
            || !in_granule(old, new)
            || off < 0
            || off & 7 != 0
            || old > self.arena_bytes - off
        {
            return false;
        }
        if !self.ext.is_live(off, round8(old)) {
            return false;
        }
        // The new bytes and the rest of the granule past `old` (no slice's
        // bytes: growing clears them again) in one word; `old % 8` is 1..=7
        // here. Aligned: the arena is page-aligned, the granule a multiple of 8.
        // (A table, not a shift by `8 * (old % 8)`: x86's variable shift
        // takes its count in `cl`; in this path's first form, inline in the
        // entry point, that cost saving `rcx` around it.)
        const KEEP: [u64; 8] = {
            let mut t = [0u64; 8];
            let mut k = 1;
            while k < 8 {
                t[k] = (1u64 << (8 * k)) - 1;
                k += 1;
            }
            t
        };
        let keep = KEEP[(old & 7) as usize];
        // SAFETY: the granule is the last of a live span inside the arena.
        unsafe {
            let w = self
                .base()
                .add((round8(old) - 8 + off) as usize)
                .cast::<u64>();
            w.write(w.read() & keep);
        }
        true
    }

    /// The bytes of free space that start right at `end` (a granule offset)
    /// and that the tree's finger names without a search (`Mem::room_at`);
    /// 0 when it names none.
    pub(crate) fn room_at(&mut self, end: i64) -> i64 {
        let (raw, path) = self.tree.parts();
        raw.with::<Portable>().room_at(path, end >> 3) << 3
    }

    /// Whether the last growth in place through the growth hint made its
    /// allocation's run long enough for an append window: the first half
    /// of `Path::window_due`, one compare, which `room_at` completes.
    #[inline(always)]
    pub(crate) fn window_may_be_due(&mut self) -> bool {
        self.tree.parts().1.window_may_be_due()
    }

    /// Records in the tree and the boundary record that the live allocation
    /// `[off, off + old)` grew in place to `new` bytes (`old < new`, both
    /// multiples of 8) into the free span after it, whose bytes the program
    /// has already written: no zero fill. The builtin pool's append window
    /// settles its appends so (`builtin::settle`). The window opened with
    /// the growth hint on that span (`Mem::room_at`) and no operation ran
    /// since, so the hint's edit answers; false (nothing changed) means the
    /// window was wrong, which the caller reports.
    pub(crate) fn grow_written(&mut self, off: i64, old: i64, new: i64) -> bool {
        d_grow_written(self, (off, old, new))
    }

    /// [`Self::grow_written`] on backend `S`.
    #[inline(always)]
    fn grow_written_in<S: Simd>(&mut self, off: i64, old: i64, new: i64) -> bool {
        let ext = self.ext;
        let (raw, path) = self.tree.parts();
        path.hint_matches(off, old)
            && raw
                .with::<S>()
                .grow_hinted(path, &ext, (off, old, new), true)
                .is_some()
    }

    /// [`Self::resize`] on backend `S`.
    #[inline(always)]
    pub(crate) fn resize_in<S: Simd>(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        if new < 0 || old < 0 {
            return Err(BAD_SIZE);
        }
        if old == 0 || off == -1 {
            return if new == 0 {
                Ok(-1)
            } else {
                self.alloc_zeroed_in::<S>(new)
            };
        }
        if new == 0 {
            self.resize_in_place_in::<S>(off, old, 0)?;
            return Ok(-1);
        }
        if V::MIRRORED {
            return self.resize_checked::<S>(off, old, new);
        }
        let (old_r, new_r) = (round8(old), round8(new));
        let fresh = self.ext.high_water();
        let ext = self.ext;
        let (raw, path) = self.tree.parts();
        let to = raw.with::<S>().resize_or_move(path, &ext, off, old, new)?;
        if to != off {
            // SAFETY: both spans are inside the arena and disjoint (both were
            // held when the new one was placed); the runtime wrote neither.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.base().add(off as usize),
                    self.base().add(to as usize),
                    old_r.min(new_r) as usize,
                )
            };
            // Moving only ever grows (`new > old`); clear the copied slack
            // too (the copy wrote up to `to + old_r`, whatever `fresh` says).
            self.zero_new(to + old, to + new_r, fresh.max(to + old_r));
        } else if new > old {
            // From `old`, not `old_r`: a shrink inside the last 8-byte
            // granule left stale bytes that growing must clear again (they
            // lie below `fresh`: the span reached `to + old_r`).
            self.zero_new(to + old, to + new_r, fresh);
        }
        Ok(to)
    }

    /// The library's resize: one library call places the move (and zero-fills),
    /// then the used bytes are copied from the freed, untouched old span,
    /// exactly as `slice_pool` does after `tern_span_resize`.
    #[inline(always)]
    fn resize_checked<S: Simd>(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        let (h, at) = (self.hdr(), self.addr(off));
        // SAFETY: as in `alloc_in`.
        let to = unsafe { library::resize_in::<S>(h, at, (old, new), true, true)? } - self.addr(0);
        if to != off {
            // SAFETY: both spans lie inside the arena and do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.base().add(off as usize),
                    self.base().add(to as usize),
                    old.min(new) as usize,
                )
            };
        }
        Ok(to)
    }

    /// The addresses of the boundary record's size map and large table
    /// (what generated code's fast path reads, `builtin::ReusableFast`).
    pub(crate) fn record_maps(&self) -> [i64; 2] {
        let [sizes, large] = self.ext.parts();
        [sizes, large]
    }

    /// Checks the tree's invariants and returns its free spans (tests).
    pub fn check_invariants(&mut self) -> Result<Vec<(i64, i64)>, String> {
        self.view().check_invariants()
    }

    /// The header words (tests and corruption experiments may write them).
    pub fn header_mut(&mut self) -> &mut [i64; HEADER_WORDS] {
        &mut self.header
    }

    /// The words of the nodes handed out so far (tests may write them).
    pub fn used_node_words_mut(&mut self) -> &mut [Word] {
        let used = self.header[layout::H_NODES_USED].clamp(0, self.node_cap) as usize;
        // SAFETY: the node reservation holds node_cap * NODE_WORDS words, zero-initialised.
        unsafe { std::slice::from_raw_parts_mut(self.nodes_ptr(), used * layout::NODE_WORDS) }
    }

    /// Resident bytes of the arena and of the node array (by `mincore`).
    pub fn resident_bytes(&self) -> (usize, usize) {
        (self.arena.resident(), self.nodes.resident())
    }

    /// The arena's high-water mark: the highest end offset of any allocation
    /// the pool has held (see [`crate::stats`]).
    pub fn high_water(&self) -> i64 {
        self.ext.high_water()
    }

    /// The node capacity reserved.
    pub fn node_capacity(&self) -> i64 {
        self.node_cap
    }

    /// The registry bounds of a library pool (None for unchecked pools).
    pub fn bounds(&self) -> Option<PoolBounds> {
        if V::MIRRORED {
            registry::lookup(self.header[layout::H_POOL_ID]).ok()
        } else {
            None
        }
    }
}

/// The dispatched operations (one copy per scan backend: `crate::simd_dispatch`).
mod ops {
    use super::{SpanPool, TreeResult, Validate};
    use crate::span_tree::scan::Simd;

    #[inline(always)]
    pub(super) fn alloc<S: Simd, V: Validate>(p: &mut SpanPool<V>, b: i64) -> TreeResult<i64> {
        p.alloc_in::<S>(b)
    }
    #[inline(always)]
    pub(super) fn alloc_zeroed<S: Simd, V: Validate>(
        p: &mut SpanPool<V>,
        b: i64,
    ) -> TreeResult<i64> {
        p.alloc_zeroed_in::<S>(b)
    }
    #[inline(always)]
    pub(super) fn free<S: Simd, V: Validate>(
        p: &mut SpanPool<V>,
        (off, b): (i64, i64),
    ) -> TreeResult<()> {
        p.free_in::<S>(off, b)
    }
    #[inline(always)]
    pub(super) fn resize_in_place<S: Simd, V: Validate>(
        p: &mut SpanPool<V>,
        (off, old, new): (i64, i64, i64),
    ) -> TreeResult<i64> {
        p.resize_in_place_in::<S>(off, old, new)
    }
    #[inline(always)]
    pub(super) fn resize<S: Simd, V: Validate>(
        p: &mut SpanPool<V>,
        (off, old, new): (i64, i64, i64),
    ) -> TreeResult<i64> {
        p.resize_in::<S>(off, old, new)
    }
    #[inline(always)]
    pub(super) fn grow_written<S: Simd, V: Validate>(
        p: &mut SpanPool<V>,
        (off, old, new): (i64, i64, i64),
    ) -> bool {
        p.grow_written_in::<S>(off, old, new)
    }
}

crate::simd_dispatch! { fn d_alloc<V: Validate>(p: &mut SpanPool<V>, b: i64) -> TreeResult<i64> => ops::alloc; }
crate::simd_dispatch! { fn d_alloc_zeroed<V: Validate>(p: &mut SpanPool<V>, b: i64) -> TreeResult<i64> => ops::alloc_zeroed; }
crate::simd_dispatch! { fn d_free<V: Validate>(p: &mut SpanPool<V>, a: (i64, i64)) -> TreeResult<()> => ops::free; }
crate::simd_dispatch! { fn d_resize_in_place<V: Validate>(p: &mut SpanPool<V>, a: (i64, i64, i64)) -> TreeResult<i64> => ops::resize_in_place; }
crate::simd_dispatch! { fn d_resize<V: Validate>(p: &mut SpanPool<V>, a: (i64, i64, i64)) -> TreeResult<i64> => ops::resize; }
crate::simd_dispatch! { fn d_grow_written<V: Validate>(p: &mut SpanPool<V>, a: (i64, i64, i64)) -> bool => ops::grow_written; }

impl<V: Validate> Drop for SpanPool<V> {
    fn drop(&mut self) {
        if V::MIRRORED {
            let (h, n) = (self.hdr(), self.nodes_ptr());
            // The header may be corrupt (tests write it): fall back to a scan-free
            // unregister by the id we can still trust from the registry.
            // SAFETY: owned header.
            if unsafe { library::release(h) }.is_err() {
                library::release_by_nodes(n);
            }
        }
    }
}
