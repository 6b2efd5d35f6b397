//! The augmented B+ tree of free spans: one generic source for both
//! instantiations and both scan backends.
//!
//! Leaves hold free spans `(offset, len)` in address order (in 8-byte granules);
//! an internal entry holds the smallest offset and the largest span length of its
//! child's subtree. Every operation is one descent, rarely two:
//! * `alloc` descends by the per-child maxima to the lowest-addressed span that
//!   fits and carves from its front (an in-place update unless it is an exact fit);
//! * `free` descends by key, noting on the way the key that follows the landing
//!   leaf, so the successor's key is known without visiting the next leaf; it
//!   merges in place where it can;
//! * `resize` shrinks by freeing the tail and grows by one descent to the free
//!   span that starts exactly at the end of the span.
//!
//! Summaries are propagated upwards only until they stop changing. Layout:
//! [`super::layout`]. The code reads only memory the program cannot write: the
//! builtin pool's tree (`V = Unchecked`) or the runtime's copy of a library
//! pool's (`V = Shared`, which also writes every changed header word to the
//! program's header, the program's node array showing the runtime's pages;
//! `V = Mirrored`, which writes every changed word to the caller's copy too;
//! neither reads the program's copy back), so it trusts every word.
//!
//! Each public operation runs the copy compiled for the CPU's scan backend
//! (`crate::simd_dispatch`; [`super::scan`]).

use std::marker::PhantomData;
use std::num::NonZeroI64;

use super::append_window::WindowWords;
use super::error::{
    self, BAD_SIZE, DOUBLE_FREE, EXHAUSTED, MUST_MOVE, NODES_EXHAUSTED, OUTSIDE_ARENA,
    RESIZE_FREE_SPAN, STALE_FREE, STALE_RESIZE,
};
use super::extents::{Extents, SMALL};
use super::finger::{
    FIT_UNKNOWN, HI_UNKNOWN, LEFTMOST_UNKNOWN, LIBRARY_GROWN_IN_A_ROW, LO_MAX_UNKNOWN,
    PMAX_UNKNOWN, Path,
};
use super::layout::{
    EMPTY_KEY, FANOUT, GRANULE_SHIFT, H_ARENA_BYTES, H_FREE_BYTES, H_FREE_HEAD, H_HEIGHT, H_MAGIC,
    H_NODE_CAP, H_NODES_USED, H_POOL_ID, H_ROOT, H_SPANS, HEADER_WORDS, MAGIC, MAX_HEIGHT,
    MIN_FILL, N_COUNT, N_KEYS, N_KIDS, N_LENS, N_LEVEL, N_NEXT_FREE, NODE_SHIFT, NODE_WORDS, NONE,
    SENTINELS, Word,
};
use super::scan::Simd;
use super::validate::Validate;

pub use super::layout::MAX_ARENA_BYTES;

/// Result of a tree operation: the value, or a negative error code.
pub type TreeResult<T> = Result<T, i64>;

/// Result of a free: done, or the (negative, never zero) error code, in one
/// word (0 is done). The library's free returns that word as it is, where
/// a `TreeResult<()>` (a flag beside the code) took a select at the exit
/// of every call.
pub type Outcome = Result<(), NonZeroI64>;

/// `code` (negative) as an [`Outcome`]'s error.
#[inline(always)]
pub fn refuse(code: i64) -> NonZeroI64 {
    const FALLBACK: NonZeroI64 = NonZeroI64::new(error::INTERNAL).unwrap();
    NonZeroI64::new(code).unwrap_or(FALLBACK)
}

/// Rounds `bytes` up to the span granule (8). `bytes` must be in `0..=MAX_ARENA_BYTES`.
#[inline(always)]
pub const fn round8(bytes: i64) -> i64 {
    (bytes + 7) & !7
}

/// A span tree over a header and a node array, with the scratch path its
/// operations use.
///
/// The tree does not own its memory: it is a view over raw words that either the
/// runtime (builtin pool) or the program (library pool) owns.
pub struct Tree<V: Validate> {
    mem: Raw<V>,
    path: Path,
}

/// The raw memory of a tree and its authoritative bounds.
#[derive(Clone, Copy)]
pub(crate) struct Raw<V: Validate> {
    hdr: *mut i64,
    nodes: *mut Word,
    /// Authoritative node capacity (never read from tree memory).
    node_cap: i64,
    /// Authoritative arena size in bytes (never read from tree memory).
    arena: i64,
    /// With `V::MIRRORED`: the program's copy of the header, which every
    /// header write also goes to (null otherwise).
    mirror_hdr: *mut i64,
    /// With `V::MIRROR_NODES`: the distance in bytes from `nodes` to the
    /// program's copy of the node array, which every node write also goes to.
    mirror_nodes: isize,
    _mode: PhantomData<V>,
}

impl<V: Validate> Raw<V> {
    /// See [`Tree::from_raw`].
    ///
    /// # Safety
    /// As for [`Tree::from_raw`].
    #[inline(always)]
    pub(crate) unsafe fn new(hdr: *mut i64, nodes: *mut Word, node_cap: i64, arena: i64) -> Self {
        Raw {
            hdr,
            nodes,
            node_cap,
            arena,
            // No second copy: a `Mirrored` view made here (`Tree::from_raw`,
            // `SpanPool<Mirrored>`'s view of the program's copy) writes each
            // word twice in the same place rather than through a null pointer.
            mirror_hdr: hdr,
            mirror_nodes: 0,
            _mode: PhantomData,
        }
    }

    /// A view over the runtime's copy of a tree (`hdr`, `nodes`) whose
    /// writes also go to the program's copy (`mirror_hdr`, `mirror_nodes`).
    ///
    /// # Safety
    /// As for [`Tree::from_raw`], for both copies; the program's node array
    /// must have room for `node_cap` nodes as well.
    #[inline(always)]
    pub(crate) unsafe fn mirrored(
        (hdr, nodes): (*mut i64, *mut Word),
        (mirror_hdr, mirror_nodes): (*mut i64, *mut Word),
        node_cap: i64,
        arena: i64,
    ) -> Self {
        Raw {
            hdr,
            nodes,
            node_cap,
            arena,
            mirror_hdr,
            // Unused without `V::MIRROR_NODES`: not computed, so that no
            // copy of the view carries it (the out-of-line rebalances take
            // the view by reference).
            mirror_nodes: if V::MIRROR_NODES {
                (mirror_nodes as isize).wrapping_sub(nodes as isize)
            } else {
                0
            },
            _mode: PhantomData,
        }
    }

    /// The code over this memory with scan backend `S`.
    #[inline(always)]
    pub(crate) fn with<S: Simd>(self) -> Mem<V, S> {
        Mem {
            raw: self,
            _simd: PhantomData,
        }
    }
}

impl<V: Validate> Tree<V> {
    /// A view over a tree header and node array.
    ///
    /// # Safety
    /// `hdr` must be valid for reads and writes of `HEADER_WORDS` words (8-byte
    /// aligned) and `nodes` of `node_cap * NODE_WORDS` words (4-byte aligned), for
    /// as long as the view is used, and no one else may access them meanwhile
    /// (the view uses raw reads and writes only, so the two may even overlap).
    /// `arena` must be a multiple of 8 in `0..=MAX_ARENA_BYTES` and
    /// `node_cap >= 1`. Both bounds must come from the runtime, not from the
    /// tree memory.
    #[inline(always)]
    pub unsafe fn from_raw(hdr: *mut i64, nodes: *mut Word, node_cap: i64, arena: i64) -> Self {
        Tree {
            // SAFETY: the caller's contract.
            mem: unsafe { Raw::new(hdr, nodes, node_cap, arena) },
            path: Path::new(),
        }
    }

    /// Writes a fresh tree: one free span covering the whole arena (none if the
    /// arena is empty), the root a leaf at node 0, the header's pool id `pool_id`.
    pub fn init(&mut self, pool_id: i64) {
        self.path.forget();
        self.mem.with::<super::scan::Portable>().init(pool_id)
    }

    /// The memory and the path scratch (for the pools' dispatched operations).
    #[inline(always)]
    pub(crate) fn parts(&mut self) -> (Raw<V>, &mut Path) {
        (self.mem, &mut self.path)
    }

    /// The arena size this view was created with.
    pub fn arena_bytes(&self) -> i64 {
        self.mem.arena
    }

    /// The authoritative node capacity.
    pub fn node_capacity(&self) -> i64 {
        self.mem.node_cap
    }

    /// A header word, unvalidated (for inspection); 0 past the header.
    pub fn header_word(&self, field: usize) -> i64 {
        if field < HEADER_WORDS {
            // SAFETY: field < HEADER_WORDS; `from_raw`'s contract.
            unsafe { self.mem.hdr.add(field).read() }
        } else {
            0
        }
    }

    /// First fit: carves `bytes` (rounded up to 8) from the front of the
    /// lowest-addressed free span that is long enough; returns its offset.
    /// Errors: [`BAD_SIZE`] for `bytes <= 0`, [`EXHAUSTED`], corruption codes.
    pub fn alloc(&mut self, bytes: i64) -> TreeResult<i64> {
        d_alloc(self, bytes)
    }

    /// Frees `[off, off + round8(bytes))`, merging with adjacent free spans.
    /// Errors: [`BAD_SIZE`], [`OUTSIDE_ARENA`], [`DOUBLE_FREE`] (the span overlaps
    /// free space), corruption codes.
    pub fn free(&mut self, off: i64, bytes: i64) -> TreeResult<()> {
        d_free(self, off, bytes)
    }

    /// Resizes the span `[off, off+old)` in place (sizes rounded up to 8):
    /// * `new == old`: nothing; `new == 0`: frees the span;
    /// * `new < old`: frees the tail;
    /// * `new > old`: carves `new - old` from the free span starting exactly at
    ///   `off + old` if it is long enough, else returns [`MUST_MOVE`] (nothing changed).
    ///
    /// Returns `off`. Errors: [`BAD_SIZE`] (`old <= 0` or `new < 0`),
    /// [`OUTSIDE_ARENA`], [`DOUBLE_FREE`] (freed tail overlaps free space),
    /// [`RESIZE_FREE_SPAN`] (the span overlaps free space), corruption codes.
    pub fn resize(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        d_resize(self, (off, old, new))
    }

    /// Checks every structural invariant and returns the free spans in address
    /// order (bytes), or a description of the first violation. For tests; O(n).
    ///
    /// Checked: levels, counts (minimum fill below the root), keys strictly
    /// increasing, empty slots and sentinels, internal keys/maxima equal to the
    /// child's summary, spans inside the arena, disjoint and never adjacent
    /// (fully coalesced), the header's span count and free bytes, and the
    /// free-node stack disjoint from the tree.
    pub fn check_invariants(&self) -> Result<Vec<(i64, i64)>, String> {
        self.mem.with::<super::scan::Portable>().check_invariants()
    }

    /// [`Tree::alloc`], recording the span in `ext` as a live allocation.
    #[inline(always)]
    pub fn alloc_tracked(&mut self, ext: &Extents, bytes: i64) -> TreeResult<i64> {
        d_alloc_tracked(self, ext, bytes)
    }

    /// [`Tree::free`] of exactly one live allocation of `ext`. A span that is
    /// not one is refused before anything changes: [`DOUBLE_FREE`] when it
    /// overlaps free space, else [`STALE_FREE`].
    #[inline(always)]
    pub fn free_tracked(&mut self, ext: &Extents, off: i64, bytes: i64) -> TreeResult<()> {
        d_free_tracked(self, ext, (off, bytes))
    }

    /// [`Tree::resize`] of exactly one live allocation of `ext`, which follows
    /// the span's new extent. A span that is not one is refused before anything
    /// changes: when it overlaps free space [`DOUBLE_FREE`] (a shrink, or
    /// `new == 0`) or [`RESIZE_FREE_SPAN`] (same size or growth), else
    /// [`STALE_RESIZE`].
    #[inline(always)]
    pub fn resize_tracked(
        &mut self,
        ext: &Extents,
        off: i64,
        old: i64,
        new: i64,
    ) -> TreeResult<i64> {
        d_resize_tracked(self, ext, (off, old, new))
    }

    /// The whole resize of one live allocation: in place when the contract
    /// allows, else the move placed in the same call (first fit for `new` while
    /// the old span is held, then the old span freed); the caller copies the
    /// bytes. Returns the new offset.
    #[inline(always)]
    pub fn resize_or_move(
        &mut self,
        ext: &Extents,
        off: i64,
        old: i64,
        new: i64,
    ) -> TreeResult<i64> {
        d_resize_or_move(self, ext, (off, old, new))
    }
}

/// The tree's public operations on backend `S` (what [`Tree`]'s methods
/// dispatch to, one copy per backend: `crate::simd_dispatch`).
mod ops {
    use super::{Extents, Tree, TreeResult, Validate};
    use crate::span_tree::scan::Simd;

    #[inline(always)]
    pub(super) fn alloc<S: Simd, V: Validate>(t: &mut Tree<V>, bytes: i64) -> TreeResult<i64> {
        t.mem.with::<S>().alloc(&mut t.path, bytes)
    }
    #[inline(always)]
    pub(super) fn free<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        off: i64,
        bytes: i64,
    ) -> TreeResult<()> {
        t.mem.with::<S>().free(&mut t.path, off, bytes)
    }
    #[inline(always)]
    pub(super) fn resize<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        (off, old, new): (i64, i64, i64),
    ) -> TreeResult<i64> {
        t.mem.with::<S>().resize(&mut t.path, off, old, new)
    }
    #[inline(always)]
    pub(super) fn alloc_tracked<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        ext: &Extents,
        bytes: i64,
    ) -> TreeResult<i64> {
        t.mem.with::<S>().alloc_tracked(&mut t.path, ext, bytes)
    }
    #[inline(always)]
    pub(super) fn free_tracked<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        ext: &Extents,
        (off, bytes): (i64, i64),
    ) -> TreeResult<()> {
        Ok(t.mem
            .with::<S>()
            .free_tracked(&mut t.path, ext, off, bytes)?)
    }
    #[inline(always)]
    pub(super) fn resize_tracked<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        ext: &Extents,
        (off, old, new): (i64, i64, i64),
    ) -> TreeResult<i64> {
        t.mem
            .with::<S>()
            .resize_tracked(&mut t.path, ext, off, old, new)
    }
    #[inline(always)]
    pub(super) fn resize_or_move<S: Simd, V: Validate>(
        t: &mut Tree<V>,
        ext: &Extents,
        (off, old, new): (i64, i64, i64),
    ) -> TreeResult<i64> {
        t.mem
            .with::<S>()
            .resize_or_move(&mut t.path, ext, off, old, new)
    }
}

crate::simd_dispatch! { fn d_alloc<V: Validate>(t: &mut Tree<V>, bytes: i64) -> TreeResult<i64> => ops::alloc; }
crate::simd_dispatch! { fn d_free<V: Validate>(t: &mut Tree<V>, off: i64, bytes: i64) -> TreeResult<()> => ops::free; }
crate::simd_dispatch! { fn d_resize<V: Validate>(t: &mut Tree<V>, a: (i64, i64, i64)) -> TreeResult<i64> => ops::resize; }
crate::simd_dispatch! { fn d_alloc_tracked<V: Validate>(t: &mut Tree<V>, ext: &Extents, bytes: i64) -> TreeResult<i64> => ops::alloc_tracked; }
crate::simd_dispatch! { fn d_free_tracked<V: Validate>(t: &mut Tree<V>, ext: &Extents, a: (i64, i64)) -> TreeResult<()> => ops::free_tracked; }
crate::simd_dispatch! { fn d_resize_tracked<V: Validate>(t: &mut Tree<V>, ext: &Extents, a: (i64, i64, i64)) -> TreeResult<i64> => ops::resize_tracked; }
crate::simd_dispatch! { fn d_resize_or_move<V: Validate>(t: &mut Tree<V>, ext: &Extents, a: (i64, i64, i64)) -> TreeResult<i64> => ops::resize_or_move; }

/// The tree code over one tree's memory with scan backend `S`.
pub(crate) struct Mem<V: Validate, S: Simd> {
    raw: Raw<V>,
    _simd: PhantomData<S>,
}

/// A span a descent by key found around `[s, e)` (granules).
struct Around {
    height: usize,
    /// Index in the path's leaf where a span starting at `s` would be inserted.
    pos: usize,
    /// The predecessor `(offset, len)` at `pos - 1`, if any.
    pred: Option<(i64, i64)>,
    /// The successor's key: at `pos` in the same leaf, else the first key of
    /// the next leaf ([`i64::MAX`] when there is none).
    succ_key: i64,
    /// Whether the successor is in the next leaf (not on the path).
    succ_next: bool,
}

impl<V: Validate, S: Simd> Mem<V, S> {
    // ---- raw word access (callers validate indices) ----

    #[inline(always)]
    fn h(&self, field: usize) -> i64 {
        // SAFETY: field < HEADER_WORDS at every call site (constants); `from_raw`'s contract.
        unsafe { self.raw.hdr.add(field).read() }
    }

    #[inline(always)]
    fn set_h(&self, field: usize, v: i64) {
        // SAFETY: as in `h`; the mirror's header is as long (`Raw::mirrored`).
        // The program's header may lie at any address (see
        // `library::header_word`).
        unsafe {
            self.raw.hdr.add(field).write(v);
            if V::MIRRORED {
                self.raw.mirror_hdr.add(field).write_unaligned(v);
            }
        }
    }

    /// Where `p`, a word of the runtime's node array, sits in the program's
    /// copy (`V::MIRROR_NODES`).
    #[inline(always)]
    fn mirror(&self, p: *mut Word) -> *mut Word {
        p.wrapping_byte_offset(self.raw.mirror_nodes)
    }

    /// Adds `delta` to a header counter (informational words: wrapping, never trusted).
    #[inline(always)]
    fn bump_h(&self, field: usize, delta: i64) {
        self.set_h(field, self.h(field).wrapping_add(delta));
    }

    /// The first word of `node`.
    #[inline(always)]
    fn at(&self, node: i64) -> *mut Word {
        // SAFETY: `node` is an index the tree code wrote, below
        // `node_cap`; `from_raw`'s contract.
        unsafe { self.raw.nodes.add((node as usize) << NODE_SHIFT) }
    }

    #[inline(always)]
    fn w(&self, node: i64, field: usize) -> i64 {
        // SAFETY: field < NODE_WORDS; see `at`.
        unsafe { self.at(node).add(field).read() as i64 }
    }

    #[inline(always)]
    fn set_w(&self, node: i64, field: usize, v: i64) {
        // SAFETY: as in `w`, for both copies (`Raw::mirrored`). Values are
        // offsets, lengths, counts or node indices, all below 2^31 (or NONE).
        unsafe {
            let p = self.at(node).add(field);
            p.write(v as Word);
            if V::MIRROR_NODES {
                self.mirror(p).write(v as Word);
            }
        }
    }

    #[inline(always)]
    fn key(&self, node: i64, i: usize) -> i64 {
        self.w(node, N_KEYS + i)
    }

    #[inline(always)]
    fn len(&self, node: i64, i: usize) -> i64 {
        self.w(node, N_LENS + i)
    }

    #[inline(always)]
    fn kid(&self, node: i64, i: usize) -> i64 {
        self.w(node, N_KIDS + i)
    }

    #[inline(always)]
    fn keys(&self, node: i64) -> *mut Word {
        // SAFETY: inside the node.
        unsafe { self.at(node).add(N_KEYS) }
    }

    #[inline(always)]
    fn lens(&self, node: i64) -> *mut Word {
        // SAFETY: inside the node.
        unsafe { self.at(node).add(N_LENS) }
    }

    #[inline(always)]
    fn kids(&self, node: i64) -> *mut Word {
        // SAFETY: inside the node.
        unsafe { self.at(node).add(N_KIDS) }
    }

    /// The arena in granules.
    #[inline(always)]
    fn arena_g(&self) -> i64 {
        self.raw.arena >> GRANULE_SHIFT
    }

    /// The same code with the portable scans (what the rare, out-of-line
    /// paths run: one copy, whatever the CPU).
    #[inline(always)]
    fn portable(&self) -> Mem<V, super::scan::Portable> {
        self.raw.with::<super::scan::Portable>()
    }

    // ---- scans ----

    /// The first slot of `node` whose length is `>= g` (`g >= 1`), or 32.
    #[inline(always)]
    fn fit(&self, node: i64, g: i64) -> usize {
        // SAFETY: 32 length slots; g - 1 fits a word (g <= arena granules).
        unsafe { S::first_gt(self.lens(node), (g - 1) as Word) }
    }

    /// How many slots of `node` hold keys `<= s` (keys increase; empty slots
    /// hold `EMPTY_KEY`, above every offset).
    #[inline(always)]
    fn count_le(&self, node: i64, s: i64) -> usize {
        // SAFETY: 32 key slots; s < arena granules fits a word.
        unsafe { S::first_gt(self.keys(node), s as Word) }
    }

    /// The largest length in `node` (empty slots hold 0).
    #[inline(always)]
    fn max_len(&self, node: i64) -> i64 {
        // SAFETY: 32 length slots.
        unsafe { S::max(self.lens(node)) as i64 }
    }

    // ---- reads ----
    //
    // Both instantiations read only memory the program cannot write (the
    // builtin's tree, a library pool's runtime copy), so words are trusted;
    // these keep `TreeResult` for the consistency checks the edits below
    // still make (a node emptied below its minimum, a missing separator).

    /// Reads the header: returns `(root, height)`.
    #[inline(always)]
    fn begin(&self) -> TreeResult<(i64, usize)> {
        Ok((self.h(H_ROOT), self.h(H_HEIGHT) as usize))
    }

    /// The entry count of `node`.
    #[inline(always)]
    fn count(&self, node: i64) -> TreeResult<usize> {
        Ok(self.w(node, N_COUNT) as usize)
    }

    /// Child `i` of `parent`.
    #[inline(always)]
    fn child(&self, parent: i64, i: usize) -> TreeResult<i64> {
        Ok(self.kid(parent, i))
    }

    /// Leaf entry `i` of `leaf` (granules).
    #[inline(always)]
    fn span(&self, leaf: i64, i: usize) -> TreeResult<(i64, i64)> {
        Ok((self.key(leaf, i), self.len(leaf, i)))
    }

    /// Validates a span argument (bytes): `off` a multiple of 8 and
    /// `[off, off+bytes)` inside the arena. Returns `(offset, length)` in granules.
    #[inline(always)]
    fn check_span(&self, off: i64, bytes: i64) -> TreeResult<(i64, i64)> {
        if bytes <= 0 {
            return Err(BAD_SIZE);
        }
        let a = self.raw.arena;
        if off < 0 || off & 7 != 0 || bytes > a || off > a - round8(bytes) {
            return Err(OUTSIDE_ARENA);
        }
        Ok((off >> GRANULE_SHIFT, (bytes + 7) >> GRANULE_SHIFT))
    }

    // ---- fresh nodes ----

    /// Writes the image of an empty node at `level` over `node`.
    #[inline(always)]
    fn clear_node(&self, node: i64, level: i64) {
        for f in 0..NODE_WORDS {
            self.set_w(node, f, 0);
        }
        self.set_w(node, N_LEVEL, level);
        self.set_w(node, N_NEXT_FREE, NONE);
        for i in 0..FANOUT + SENTINELS {
            self.set_w(node, N_KEYS + i, EMPTY_KEY as i64);
        }
    }

    /// Writes a fresh tree: one free span covering the whole arena (none if the
    /// arena is empty), the root a leaf at node 0.
    pub(crate) fn init(&self, pool_id: i64) {
        self.set_h(H_MAGIC, MAGIC);
        self.set_h(H_POOL_ID, pool_id);
        self.set_h(H_ROOT, 0);
        self.set_h(H_HEIGHT, 1);
        self.set_h(H_FREE_HEAD, NONE);
        self.set_h(H_NODES_USED, 1);
        self.set_h(H_ARENA_BYTES, self.raw.arena);
        self.set_h(H_NODE_CAP, self.raw.node_cap);
        self.clear_node(0, 0);
        if self.raw.arena > 0 {
            self.set_w(0, N_COUNT, 1);
            self.set_w(0, N_KEYS, 0);
            self.set_w(0, N_LENS, self.arena_g());
            self.set_h(H_SPANS, 1);
        } else {
            self.set_h(H_SPANS, 0);
        }
        self.set_h(H_FREE_BYTES, self.raw.arena);
    }

    /// Takes a node from the free stack, else from the never-used tail.
    #[inline(always)]
    fn alloc_node(&self, level: usize) -> TreeResult<i64> {
        let head = self.h(H_FREE_HEAD);
        let node = if head != NONE {
            self.set_h(H_FREE_HEAD, self.w(head, N_NEXT_FREE));
            head
        } else {
            let used = self.h(H_NODES_USED);
            if used >= self.raw.node_cap {
                return Err(NODES_EXHAUSTED);
            }
            self.set_h(H_NODES_USED, used + 1);
            used
        };
        self.clear_node(node, level as i64);
        Ok(node)
    }

    /// Pushes `node` on the free stack.
    #[inline(always)]
    fn free_node(&self, node: i64) {
        self.set_w(node, N_COUNT, 0);
        self.set_w(node, N_LEVEL, -1);
        self.set_w(node, N_NEXT_FREE, self.h(H_FREE_HEAD));
        self.set_h(H_FREE_HEAD, node);
    }

    /// Empties slots `from..32` of `node`: key [`EMPTY_KEY`], length 0, child 0.
    #[inline(always)]
    fn clear_slots(&self, node: i64, from: usize) {
        for i in from..FANOUT {
            self.set_w(node, N_KEYS + i, EMPTY_KEY as i64);
            self.set_w(node, N_LENS + i, 0);
            self.set_w(node, N_KIDS + i, 0);
        }
    }

    // ---- node edits ----
    //
    // Everything an operation calls is `#[inline(always)]`: a function left
    // out of line is compiled without AVX2 even when the operation's AVX2
    // copy calls it, and its scans would become calls.

    /// `(smallest key, largest len)` of a node with at least one entry.
    #[inline(always)]
    fn summary(&self, node: i64) -> (i64, i64) {
        (self.key(node, 0), self.max_len(node))
    }

    /// Copies `node`'s key and length arrays (and child array, `kids`) to the
    /// program's copy (`V::MIRROR_NODES`): after an entry shift, stores only,
    /// from lines the shift has just brought in (shifting the program's copy
    /// in place read its lines too: up to 4 % more time on the traces,
    /// docs/benchmarks.md, "Thirtieth pass").
    #[inline(always)]
    fn mirror_arrays(&self, node: i64, kids: bool) {
        // SAFETY: each array is FANOUT words inside the node, in both copies
        // (`Raw::mirrored`); `copy`, which allows overlap: a view with no
        // second copy mirrors into itself (`Raw::new`).
        unsafe {
            std::ptr::copy(self.keys(node), self.mirror(self.keys(node)), FANOUT);
            std::ptr::copy(self.lens(node), self.mirror(self.lens(node)), FANOUT);
            if kids {
                std::ptr::copy(self.kids(node), self.mirror(self.kids(node)), FANOUT);
            }
        }
    }

    /// Inserts entry `e = (key, len, child)` at slot `i <= n` of `node`, which has
    /// `n < 32` entries (`kids`: whether the node is internal).
    #[inline(always)]
    fn insert_entry(&self, node: i64, n: usize, i: usize, e: (i64, i64, i64), kids: bool) {
        // SAFETY: the arrays lie inside the node with a word before each (see
        // the layout); i < 32.
        unsafe {
            S::shift_right(self.keys(node), i);
            S::shift_right(self.lens(node), i);
            if kids {
                S::shift_right(self.kids(node), i);
            }
            if V::MIRROR_NODES {
                self.mirror_arrays(node, kids);
            }
        }
        self.set_w(node, N_KEYS + i, e.0);
        self.set_w(node, N_LENS + i, e.1);
        if kids {
            self.set_w(node, N_KIDS + i, e.2);
        }
        self.set_w(node, N_COUNT, n as i64 + 1);
    }

    /// Removes entry `i < n` from `node`, which has `n` entries; the vacated
    /// last slot takes the sentinel words (empty).
    #[inline(always)]
    fn remove_entry(&self, node: i64, n: usize, i: usize, kids: bool) {
        // SAFETY: the arrays lie inside the node with a word after each; i < 32.
        unsafe {
            S::shift_left(self.keys(node), i);
            S::shift_left(self.lens(node), i);
            if kids {
                S::shift_left(self.kids(node), i);
            }
            if V::MIRROR_NODES {
                self.mirror_arrays(node, kids);
            }
        }
        self.set_w(node, N_COUNT, n as i64 - 1);
    }

    /// Copies entries `from..from+k` of `src` to `at..at+k` of `dst`.
    #[inline(always)]
    fn copy_entries(&self, src: i64, from: usize, dst: i64, at: usize, k: usize, kids: bool) {
        for j in 0..k {
            self.set_w(dst, N_KEYS + at + j, self.key(src, from + j));
            self.set_w(dst, N_LENS + at + j, self.len(src, from + j));
            if kids {
                self.set_w(dst, N_KIDS + at + j, self.kid(src, from + j));
            }
        }
    }

    /// Writes `node`'s summary into its parent's entry, upwards from `level`, until
    /// an entry does not change.
    #[inline(always)]
    fn fix_up(&self, path: &Path, from: usize, height: usize) -> TreeResult<()> {
        let mut l = from;
        while l + 1 < height {
            let child = path.node[l];
            if self.count(child)? == 0 {
                return Err(error::corrupt_node(child, N_COUNT));
            }
            let (min, max) = self.summary(child);
            let (parent, i) = (path.node[l + 1], path.at(l + 1));
            if self.key(parent, i) == min && self.len(parent, i) == max {
                break;
            }
            self.set_w(parent, N_KEYS + i, min);
            self.set_w(parent, N_LENS + i, max);
            l += 1;
        }
        Ok(())
    }

    /// After entry `i` of `path.node[level]` changed its length from `old` to
    /// `new` (and, for `i == 0`, possibly its key), updates the ancestors' entries,
    /// stopping as soon as one does not change. The new maximum is known without a
    /// scan unless the entry was the maximum and shrank.
    #[inline(always)]
    fn fix_up_entry(
        &self,
        path: &mut Path,
        height: usize,
        mut level: usize,
        mut i: usize,
        mut old: i64,
        mut new: i64,
    ) {
        // A path is at most MAX_HEIGHT long: bounded here, the loop reads the
        // path's arrays without a bounds test per level.
        let height = height.min(MAX_HEIGHT);
        while level + 1 < height {
            let node = path.node[level];
            let (parent, pi) = (path.node[level + 1], path.at(level + 1));
            // The first level tests against the finger's copy of the
            // leaf's entry (`Path::pmax`) when it has one: the path and the
            // parent are then read only when the entry must change.
            let pmax = if level == 0 && path.pmax != PMAX_UNKNOWN {
                // A checked tree's parent may have been scribbled since;
                // the unchecked tree's copy is always the entry itself.
                debug_assert!(path.pmax == self.len(parent, pi));
                path.pmax
            } else {
                self.len(parent, pi)
            };
            let max = if new >= pmax {
                new
            } else if old < pmax {
                pmax
            } else {
                self.max_len(node)
            };
            // Only a change of entry 0 changes the node's key (and then the
            // parent's entry for it).
            let key_changed = i == 0 && self.key(parent, pi) != self.key(node, 0);
            if level == 0 {
                path.pmax = max;
            }
            if max == pmax && !key_changed {
                return;
            }
            if key_changed {
                self.set_w(parent, N_KEYS + pi, self.key(node, 0));
            }
            self.set_w(parent, N_LENS + pi, max);
            (old, new, i) = (pmax, max, pi);
            level += 1;
        }
    }

    /// Inserts a span at index `i` of the leaf `path.node[0]`, splitting full nodes
    /// upwards (a new root when the root splits).
    #[inline(always)]
    fn insert_at(
        &self,
        path: &mut Path,
        height: usize,
        i: usize,
        s: i64,
        g: i64,
    ) -> TreeResult<()> {
        let node = path.node[0];
        let n = self.count(node)?;
        if n < FANOUT {
            self.insert_entry(node, n, i, (s, g, 0), false);
            self.fix_up_entry(path, height, 0, i, i64::MIN, g);
            return Ok(());
        }
        // A full leaf: rare (about one insertion in 200 on the recorded
        // traces), so out of line, with the portable scans.
        path.forget();
        self.portable().insert_split(path, height, i, (s, g, 0))
    }

    /// [`Self::insert_at`] into the full node `path.node[0]`: splits it and
    /// inserts upwards.
    #[cold]
    #[inline(never)]
    fn insert_split(
        &self,
        path: &Path,
        height: usize,
        mut i: usize,
        mut e: (i64, i64, i64),
    ) -> TreeResult<()> {
        let mut level = 0;
        loop {
            let node = path.node[level];
            let kids = level > 0;
            let n = self.count(node)?;
            if n < FANOUT {
                self.insert_entry(node, n, i, e, kids);
                // After a split below, entry `i - 1` changed too: recompute in full.
                return self.fix_up(path, level, height);
            }
            // Split the full node: the upper half moves to a new right sibling.
            let right = self.alloc_node(level)?;
            let half = FANOUT / 2;
            self.copy_entries(node, half, right, 0, FANOUT - half, kids);
            self.clear_slots(node, half);
            self.set_w(node, N_COUNT, half as i64);
            self.set_w(right, N_COUNT, (FANOUT - half) as i64);
            if i <= half {
                self.insert_entry(node, half, i, e, kids);
            } else {
                self.insert_entry(right, FANOUT - half, i - half, e, kids);
            }
            let (lmin, lmax) = self.summary(node);
            let (rmin, rmax) = self.summary(right);
            if level + 1 == height {
                if height >= MAX_HEIGHT {
                    return Err(error::corrupt_header(H_HEIGHT));
                }
                let root = self.alloc_node(level + 1)?;
                self.insert_entry(root, 0, 0, (lmin, lmax, node), true);
                self.insert_entry(root, 1, 1, (rmin, rmax, right), true);
                self.set_h(H_ROOT, root);
                self.set_h(H_HEIGHT, height as i64 + 1);
                return Ok(());
            }
            let (parent, pi) = (path.node[level + 1], path.at(level + 1));
            self.set_w(parent, N_KEYS + pi, lmin);
            self.set_w(parent, N_LENS + pi, lmax);
            e = (rmin, rmax, right);
            i = pi + 1;
            level += 1;
        }
    }

    /// Removes entry `i` of the leaf `path.node[0]`, rebalancing upwards: an
    /// underfull node borrows one entry from a sibling or merges with it; a root
    /// with one child is replaced by that child.
    #[inline(always)]
    fn remove_at(&self, path: &mut Path, height: usize, i: usize) -> TreeResult<()> {
        let node = path.node[0];
        let n = self.count(node)?;
        if i >= n {
            return Err(error::corrupt_node(node, N_COUNT));
        }
        if height == 1 || n > MIN_FILL {
            let removed_len = self.len(node, i);
            self.remove_entry(node, n, i, false);
            self.fix_up_entry(path, height, 0, i, removed_len, i64::MIN);
            return Ok(());
        }
        // An underfull leaf borrows from or merges with a sibling: rare, so
        // out of line, with the portable scans.
        path.forget();
        self.portable().remove_rebalance(path, height, i)
    }

    /// [`Self::remove_at`] when the leaf will be underfull.
    #[cold]
    #[inline(never)]
    fn remove_rebalance(&self, path: &Path, height: usize, mut i: usize) -> TreeResult<()> {
        let mut level = 0;
        loop {
            let node = path.node[level];
            let kids = level > 0;
            let n = self.count(node)?;
            if i >= n {
                return Err(error::corrupt_node(node, N_COUNT));
            }
            self.remove_entry(node, n, i, kids);
            let n = n - 1;
            if level + 1 == height {
                if level > 0 && n == 1 {
                    let only = self.child(node, 0)?;
                    self.set_h(H_ROOT, only);
                    self.set_h(H_HEIGHT, height as i64 - 1);
                    self.free_node(node);
                }
                return Ok(());
            }
            if n >= MIN_FILL {
                // After a merge below, entry `i - 1` changed too: recompute in full.
                return self.fix_up(path, level, height);
            }
            let (parent, pi) = (path.node[level + 1], path.at(level + 1));
            let pn = self.count(parent)?;
            debug_assert!(pn >= 2 && pi < pn);
            let li = pi.saturating_sub(1);
            let (left, right) = if pi > 0 {
                (self.child(parent, li)?, node)
            } else {
                (node, self.child(parent, 1)?)
            };
            let ln = self.count(left)?;
            let rn = self.count(right)?;
            let sibling_n = if pi > 0 { ln } else { rn };
            if sibling_n > MIN_FILL {
                // Borrow one entry from the sibling.
                if pi > 0 {
                    let e = (
                        self.key(left, ln - 1),
                        self.len(left, ln - 1),
                        self.kid(left, ln - 1),
                    );
                    self.remove_entry(left, ln, ln - 1, kids);
                    self.insert_entry(right, rn, 0, e, kids);
                } else {
                    let e = (self.key(right, 0), self.len(right, 0), self.kid(right, 0));
                    self.remove_entry(right, rn, 0, kids);
                    self.insert_entry(left, ln, ln, e, kids);
                }
                let (lmin, lmax) = self.summary(left);
                let (rmin, rmax) = self.summary(right);
                self.set_w(parent, N_KEYS + li, lmin);
                self.set_w(parent, N_LENS + li, lmax);
                self.set_w(parent, N_KEYS + li + 1, rmin);
                self.set_w(parent, N_LENS + li + 1, rmax);
                return self.fix_up(path, level + 1, height);
            }
            // Merge right into left and remove right's entry from the parent.
            if ln + rn > FANOUT {
                return Err(error::corrupt_node(right, N_COUNT));
            }
            self.copy_entries(right, 0, left, ln, rn, kids);
            self.set_w(left, N_COUNT, (ln + rn) as i64);
            self.free_node(right);
            if ln + rn > 0 {
                let (lmin, lmax) = self.summary(left);
                self.set_w(parent, N_KEYS + li, lmin);
                self.set_w(parent, N_LENS + li, lmax);
            }
            i = li + 1;
            level += 1;
        }
    }

    // ---- descents ----

    /// Whether the path's finger may be used: one was recorded since the
    /// tree's shape last changed.
    #[inline(always)]
    fn finger_ok(&self, path: &Path) -> bool {
        path.height != 0
    }

    /// Records the finger of a descent that has just filled `path.node` and
    /// `path.idx` from `root` down (see [`Path`]); a descent pays nothing
    /// more: `hi` (and whether the leaf is the leftmost) is worked out from
    /// the path when a lookup first needs it.
    #[inline(always)]
    fn record_finger(&self, path: &mut Path, height: usize, lo_max: i64) {
        path.height = height;
        path.lo_max = lo_max;
        path.hi = HI_UNKNOWN;
        path.leftmost = LEFTMOST_UNKNOWN;
        path.fit_below = FIT_UNKNOWN;
        path.pmax = PMAX_UNKNOWN;
    }

    /// The smallest key after the path's leaf ([`i64::MAX`] when none): at
    /// the lowest level whose entry is not its node's last, the next entry's
    /// key (an empty slot, or the sentinel after a full node, holds
    /// `EMPTY_KEY`).
    #[inline(always)]
    fn next_key(&self, path: &Path) -> i64 {
        for level in 1..path.height {
            let k = self.key(path.node[level], path.at(level) + 1);
            if k != EMPTY_KEY as i64 {
                return k;
            }
        }
        i64::MAX
    }

    /// Whether a descent by key `s` would land in the finger's leaf (the
    /// finger is valid): `first key <= s < hi`, or `s < hi` in the leftmost
    /// leaf.
    #[inline(always)]
    fn covers(&self, path: &mut Path, s: i64) -> bool {
        if path.hi == HI_UNKNOWN {
            path.hi = self.next_key(path);
        }
        s < path.hi && (self.key(path.node[0], 0) <= s || path.leftmost())
    }

    /// Descends by key to the leaf holding the last span that starts at or before
    /// `s` (the leftmost leaf if there is none), recording the path; returns the
    /// height and the smallest key right of the leaf's subtree
    /// ([`i64::MAX`] when none): each level's next slot, whose empty key is
    /// `EMPTY_KEY`, the slot after a full node's last being a sentinel. The
    /// finger's leaf, when it is that leaf, is taken without a descent.
    #[inline(always)]
    fn descend_by_key(&self, path: &mut Path, s: i64) -> TreeResult<usize> {
        if self.finger_ok(path) && self.covers(path, s) {
            return Ok(path.height);
        }
        let (root, height) = self.begin()?;
        let (mut node, mut level) = (root, height - 1);
        while level > 0 {
            let i = self.count_le(node, s).max(1) - 1;
            path.node[level] = node;
            path.idx[level] = i as u8;
            node = self.child(node, i)?;
            level -= 1;
        }
        path.node[0] = node;
        self.record_finger(path, height, LO_MAX_UNKNOWN);
        Ok(height)
    }

    /// The index and length of the span starting exactly at `s` in the leaf a
    /// descent by key `s` lands in (a span known to exist: its key was seen).
    #[inline(always)]
    fn find_exact(&self, path: &mut Path, s: i64) -> TreeResult<(usize, usize, i64)> {
        let height = self.descend_by_key(path, s)?;
        let leaf = path.node[0];
        let c = self.count_le(leaf, s);
        if c == 0 || self.key(leaf, c - 1) != s {
            return Err(error::corrupt_node(leaf, N_KEYS + c.min(FANOUT - 1)));
        }
        Ok((height, c - 1, self.len(leaf, c - 1)))
    }

    /// The free neighbours of `[s, e)` (granules) by one descent by key; with
    /// `strict`, `overlap` when the range overlaps free space (callers that
    /// know the range is one live allocation of a trusted tree skip the test).
    /// Leaves `path` at the predecessor's leaf.
    #[inline(always)]
    fn around(
        &self,
        path: &mut Path,
        s: i64,
        e: i64,
        strict: bool,
        overlap: i64,
    ) -> TreeResult<Around> {
        let height = self.descend_by_key(path, s)?;
        let leaf = path.node[0];
        let pos = self.count_le(leaf, s);
        let pred = if pos > 0 {
            let (po, pl) = self.span(leaf, pos - 1)?;
            if strict && po + pl > s {
                return Err(overlap);
            }
            Some((po, pl))
        } else {
            None
        };
        let k = self.key(leaf, pos);
        let succ_next = k == EMPTY_KEY as i64;
        // The successor is the next leaf's first span, whose key the path
        // knows.
        let succ_key = if succ_next { self.next_key(path) } else { k };
        if strict && succ_key < e {
            return Err(overlap);
        }
        Ok(Around {
            height,
            pos,
            pred,
            succ_key,
            succ_next,
        })
    }

    // ---- operations (granules inside, bytes at the edges) ----

    #[inline(always)]
    pub(crate) fn alloc(&self, path: &mut Path, bytes: i64) -> TreeResult<i64> {
        // `1 <= bytes <= arena` in one unsigned compare; which end failed
        // is sorted out off the fast path.
        if (bytes as u64).wrapping_sub(1) >= self.raw.arena as u64 {
            return Err(if bytes <= 0 { BAD_SIZE } else { EXHAUSTED });
        }
        let g = (bytes + 7) >> GRANULE_SHIFT;
        // The finger's leaf holds the first fit when no leaf before it has a
        // span that long and it has one (its parent's entry says whether).
        if self.finger_ok(path) && g > path.lo_max {
            let height = path.height;
            // Right behind an allocation in this leaf, the slot it carved
            // from is the first fit when long enough (see `Path::fit_below`).
            if g > path.fit_below && self.len(path.node[0], path.fit_slot) >= g {
                return self.carve(path, height, path.fit_slot, g);
            }
            if height == 1 || self.len(path.node[1], path.at(1)) >= g {
                let i = self.fit(path.node[0], g);
                if i < FANOUT {
                    return self.carve(path, height, i, g);
                }
            }
        }
        let (height, i) = self.descend_fit(path, g)?;
        self.carve(path, height, i, g)
    }

    /// Descends to the leaf holding the first fit for `g` granules, recording
    /// the path and its finger; returns the height and the slot.
    #[inline(always)]
    fn descend_fit(&self, path: &mut Path, g: i64) -> TreeResult<(usize, usize)> {
        let (root, height) = self.begin()?;
        let (mut node, mut level) = (root, height - 1);
        while level > 0 {
            let i = self.fit(node, g);
            if i == FANOUT {
                return Err(if level + 1 == height {
                    EXHAUSTED
                } else {
                    error::corrupt_node(path.node[level + 1], N_LENS + path.at(level + 1))
                });
            }
            path.node[level] = node;
            path.idx[level] = i as u8;
            node = self.child(node, i)?;
            level -= 1;
        }
        path.node[0] = node;
        let i = self.fit(node, g);
        if i == FANOUT {
            return Err(if height == 1 {
                EXHAUSTED
            } else {
                error::corrupt_node(path.node[1], N_LENS + path.at(1))
            });
        }
        // Every child before the path's entry at each level has a maximum
        // below `g`: so has every span before the leaf.
        self.record_finger(path, height, g - 1);
        Ok((height, i))
    }

    /// Carves `g` granules from the front of span `i` of the path's leaf (the
    /// first fit); returns its offset in bytes.
    #[inline(always)]
    fn carve(&self, path: &mut Path, height: usize, i: usize, g: i64) -> TreeResult<i64> {
        let node = path.node[0];
        let (s, l) = self.span(node, i)?;
        // Every slot before `i` is shorter than `g`: `i` is the first fit.
        // (When the whole span goes, `i` names the one after it.)
        path.fit_slot = i;
        path.fit_below = g - 1;
        self.take_front(path, height, i, (s, l), g)?;
        Ok(s << GRANULE_SHIFT)
    }

    /// Takes `g <= l` granules from the front of span `i`, `(s, l)`, of the
    /// path's leaf (an allocation's carve, a growth into the span): the span
    /// goes when nothing is left of it, else it shrinks in place.
    #[inline(always)]
    fn take_front(
        &self,
        path: &mut Path,
        height: usize,
        i: usize,
        (s, l): (i64, i64),
        g: i64,
    ) -> TreeResult<()> {
        if l == g {
            self.remove_at(path, height, i)?;
            self.bump_h(H_SPANS, -1);
        } else {
            // The common case: an in-place update.
            let leaf = path.node[0];
            self.set_w(leaf, N_KEYS + i, s + g);
            self.set_w(leaf, N_LENS + i, l - g);
            self.fix_up_entry(path, height, 0, i, l, l - g);
        }
        self.bump_h(H_FREE_BYTES, -(g << GRANULE_SHIFT));
        Ok(())
    }

    /// Inserts the free range `[s, s + g)` (granules), merging with its free
    /// neighbours. `strict`: see [`Self::around`].
    #[inline(always)]
    fn free_range(&self, path: &mut Path, s: i64, g: i64, strict: bool) -> Outcome {
        // It may lengthen, insert or remove slots before `Path::fit_slot`.
        path.fit_below = FIT_UNKNOWN;
        let e = s + g;
        let a = self
            .around(path, s, e, strict, DOUBLE_FREE)
            .map_err(refuse)?;
        let leaf = path.node[0];
        let pred_adj = matches!(a.pred, Some((po, pl)) if po + pl == s);
        let succ_adj = a.succ_key == e;
        match (pred_adj, succ_adj) {
            (false, false) => {
                self.insert_at(path, a.height, a.pos, s, g)
                    .map_err(refuse)?;
                self.bump_h(H_SPANS, 1);
            }
            (true, false) => {
                let pl = self.len(leaf, a.pos - 1);
                self.set_w(leaf, N_LENS + a.pos - 1, pl + g);
                self.fix_up_entry(path, a.height, 0, a.pos - 1, pl, pl + g);
            }
            (false, true) => {
                // Extend the successor down to `s`.
                let (height, i, sl) = if a.succ_next {
                    self.find_exact(path, e).map_err(refuse)?
                } else {
                    (a.height, a.pos, self.len(leaf, a.pos))
                };
                let leaf = path.node[0];
                self.set_w(leaf, N_KEYS + i, s);
                self.set_w(leaf, N_LENS + i, sl + g);
                self.fix_up_entry(path, height, 0, i, sl, sl + g);
            }
            (true, true) => {
                // Merge all three into the predecessor and delete the successor
                // (in the next leaf: found by a second descent on a path of its
                // own, which the predecessor's update leaves valid).
                let pl = self.len(leaf, a.pos - 1);
                if a.succ_next {
                    let mut p2 = Path::new();
                    let (h2, i2, sl) = self.find_exact(&mut p2, e).map_err(refuse)?;
                    self.set_w(leaf, N_LENS + a.pos - 1, pl + g + sl);
                    self.fix_up_entry(path, a.height, 0, a.pos - 1, pl, pl + g + sl);
                    self.remove_at(&mut p2, h2, i2).map_err(refuse)?;
                    // The successor's leaf is not the finger's.
                    path.forget();
                } else {
                    let sl = self.len(leaf, a.pos);
                    self.set_w(leaf, N_LENS + a.pos - 1, pl + g + sl);
                    self.fix_up_entry(path, a.height, 0, a.pos - 1, pl, pl + g + sl);
                    self.remove_at(path, a.height, a.pos).map_err(refuse)?;
                }
                self.bump_h(H_SPANS, -1);
            }
        }
        self.bump_h(H_FREE_BYTES, g << GRANULE_SHIFT);
        Ok(())
    }

    /// `free` of a span argument: validated, then [`Self::free_range`].
    #[inline(always)]
    pub(crate) fn free(&self, path: &mut Path, off: i64, bytes: i64) -> TreeResult<()> {
        let (s, g) = self.check_span(off, bytes)?;
        Ok(self.free_range(path, s, g, true)?)
    }

    #[inline(always)]
    pub(crate) fn resize(&self, path: &mut Path, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        if new < 0 {
            return Err(BAD_SIZE);
        }
        let (s, og) = self.check_span(off, old)?;
        self.resize_span(path, s, og, new, true)
    }

    /// `resize` of the validated span `[s, s + og)` (granules) to `new >= 0`
    /// bytes; returns the offset (bytes). `untracked`: no boundary record has
    /// found the span live, so a growth first checks that it overlaps no free
    /// space ([`RESIZE_FREE_SPAN`]) and a shrink's freed tail is checked too
    /// (as a checked tree's always is).
    #[inline(always)]
    fn resize_span(
        &self,
        path: &mut Path,
        s: i64,
        og: i64,
        new: i64,
        untracked: bool,
    ) -> TreeResult<i64> {
        // A growth may remove a slot before `Path::fit_slot`.
        path.fit_below = FIT_UNKNOWN;
        let strict = untracked;
        let off = s << GRANULE_SHIFT;
        if new == 0 {
            self.free_range(path, s, og, strict)?;
            return Ok(off);
        }
        if new > self.raw.arena - off {
            return Err(MUST_MOVE);
        }
        let ng = (new + 7) >> GRANULE_SHIFT;
        if ng == og {
            return Ok(off);
        }
        if ng < og {
            self.free_range(path, s + ng, og - ng, strict)?;
            return Ok(off);
        }
        let e = s + og;
        let need = ng - og;
        if untracked {
            self.around(path, s, e, true, RESIZE_FREE_SPAN)?;
        }
        // One descent by key to the span that starts at `e`, if any.
        let height = self.descend_by_key(path, e)?;
        let leaf = path.node[0];
        let c = self.count_le(leaf, e);
        if c == 0 || self.key(leaf, c - 1) != e {
            return Err(MUST_MOVE);
        }
        let i = c - 1;
        let sl = self.len(leaf, i);
        if sl < need {
            return Err(MUST_MOVE);
        }
        self.take_front(path, height, i, (e, sl), need)?;
        if sl > need {
            // The span stays in its slot: the next append's (`grow_hinted`).
            path.grow_slot = i as u8;
            path.grow_key = e + need;
            path.grow_again = 0;
        }
        Ok(off)
    }

    // ---- tracked operations: the tree and the pool's boundary record ----

    /// `alloc`, recording the span as a live allocation.
    #[inline(always)]
    pub(crate) fn alloc_tracked(
        &self,
        path: &mut Path,
        ext: &Extents,
        bytes: i64,
    ) -> TreeResult<i64> {
        let off = self.alloc(path, bytes)?;
        ext.record(off, round8(bytes));
        Ok(off)
    }

    /// `free` of exactly one live allocation (see [`Tree::free_tracked`]).
    #[inline(always)]
    pub(crate) fn free_tracked(
        &self,
        path: &mut Path,
        ext: &Extents,
        off: i64,
        bytes: i64,
    ) -> Outcome {
        // The common case in four tests: a small span at a granule of the
        // arena that the record holds live with exactly this size. Only an
        // allocation inside the arena can be that, so `check_span`'s tests
        // hold; anything else (a failed `take` changes nothing) takes the
        // whole path below, which finds the same answer or names the error.
        // (Two calls of `free_live`, not one after both paths: with one,
        // the library's trace replays ran 1.9-2.6 % more instructions.)
        let small = (bytes as u64).wrapping_sub(1) < SMALL << GRANULE_SHIFT;
        if small && (off as u64) < self.raw.arena as u64 && off & 7 == 0 {
            let g = (bytes + 7) >> GRANULE_SHIFT;
            if ext.take(off, g << GRANULE_SHIFT) {
                return self.free_live(ext, path, off >> GRANULE_SHIFT, g);
            }
        }
        let (s, g) = self.check_span(off, bytes).map_err(refuse)?;
        let b = g << GRANULE_SHIFT;
        if !ext.take(off, b) {
            return Err(refuse(self.not_live(path, s, g, DOUBLE_FREE, STALE_FREE)));
        }
        self.free_live(ext, path, s, g)
    }

    /// Frees `[s, s + g)` (granules), which the record has just found (and
    /// forgotten) as one live allocation. Only a node array out of room can
    /// fail here (a split needs a node): the record keeps the span then.
    #[inline(always)]
    fn free_live(&self, ext: &Extents, path: &mut Path, s: i64, g: i64) -> Outcome {
        // A `match`: `Result::inspect_err` stayed an out-of-line call.
        match self.free_range(path, s, g, false) {
            Ok(()) => Ok(()),
            Err(e) => {
                ext.record(s << GRANULE_SHIFT, g << GRANULE_SHIFT);
                Err(e)
            }
        }
    }

    /// `resize` of exactly one live allocation (see [`Tree::resize_tracked`]).
    #[inline(always)]
    pub(crate) fn resize_tracked(
        &self,
        path: &mut Path,
        ext: &Extents,
        off: i64,
        old: i64,
        new: i64,
    ) -> TreeResult<i64> {
        // An append into the span the growth hint names: one compare
        // for every other resize.
        if path.hint_matches(off, old)
            && let Some(r) = self.grow_hinted(path, ext, (off, old, new), false)
        {
            return Ok(r);
        }
        if new < 0 {
            return Err(BAD_SIZE);
        }
        let (s, og) = self.check_span(off, old)?;
        let ob = og << GRANULE_SHIFT;
        if !ext.is_live(off, ob) {
            // `new <= ob - 8`: the rounded new size is smaller (`new` may be
            // past the arena, so it is not rounded here).
            let overlap = if new <= ob - 8 {
                DOUBLE_FREE
            } else {
                RESIZE_FREE_SPAN
            };
            return Err(self.not_live(path, s, og, overlap, STALE_RESIZE));
        }
        // A growth whose span another live allocation follows cannot happen
        // in place: that answer needs no descent. `off + ob` lies inside the
        // arena: `ob < new <= arena - off`.
        if new > ob && new <= self.raw.arena - off && ext.starts_live(off + ob) {
            return Err(MUST_MOVE);
        }
        let r = self.resize_span(path, s, og, new, false)?;
        // Past `resize_span`, `new <= arena - off`: rounding it cannot overflow.
        let nb = round8(new);
        if new == 0 {
            ext.forget(off, ob);
        } else {
            ext.resize(off, ob, nb);
        }
        Ok(r)
    }

    /// A growth in place of the live allocation `[off, off + old)` into the
    /// free span right after it, when that span is the one at the finger's
    /// [`Path::grow_slot`] and outlasts the growth: an append right after
    /// the slice's last append. It checks and does what
    /// [`Self::resize_tracked`] would, without its lookups: the slot's key
    /// names the span (keys are unique), the record the allocation, and no
    /// live allocation can start where a free span does. `None`, with
    /// nothing changed, for every other case (the full path then answers,
    /// and reports the errors). `whole`: a growth that takes the span whole
    /// (removing its entry) is answered too; an append takes that case to
    /// the full path, whose descent it then shares, but settling an append
    /// window that its appends filled (`builtin::settle`) is always that
    /// case.
    #[inline(always)]
    pub(crate) fn grow_hinted(
        &self,
        path: &mut Path,
        ext: &Extents,
        (off, old, new): (i64, i64, i64),
        whole: bool,
    ) -> Option<i64> {
        // `off` a granule of the arena and `0 < old < new <= arena - off`:
        // what `check_span` and `resize_span` ask of a growth in place.
        if !self.finger_ok(path)
            || off & 7 != 0
            || (off as u64) >= self.raw.arena as u64
            || old <= 0
            || new <= old
            || new > self.raw.arena - off
        {
            return None;
        }
        let (ob, nb) = (round8(old), round8(new));
        let need = (nb - ob) >> GRANULE_SHIFT;
        if need == 0 {
            // Inside the last granule (a byte append to the slice the
            // hint follows): nothing in the tree or the record changes;
            // the caller zero-fills.
            return ext.is_live(off, ob).then_some(off);
        }
        let (leaf, i) = (path.node[0], path.grow_slot as usize % FANOUT);
        let e = (off + ob) >> GRANULE_SHIFT;
        if self.key(leaf, i) != e {
            return None;
        }
        // A span the growth takes whole leaves the leaf: the full path's,
        // unless `whole`.
        let l = self.len(leaf, i);
        if l < need || (l == need && !whole) || !ext.is_live(off, ob) {
            return None;
        }
        path.fit_below = FIT_UNKNOWN;
        // The span shrinks in its slot, which cannot fail, or (`whole`)
        // leaves the leaf, which only a corrupt (checked) tree fails.
        self.take_front(path, path.height, i, (e, l), need).ok()?;
        path.grow_key = e + need;
        path.grow_again = path.grow_again.saturating_add(1);
        ext.resize(off, ob, nb);
        // A library slice appended to in a loop: its next growths may be
        // answered from an append window (one compare for the others).
        if V::MIRRORED && path.grow_again >= LIBRARY_GROWN_IN_A_ROW && path.window.may_open() {
            self.open_window(path, ext, (off, off + nb));
        }
        Some(off)
    }

    /// Opens the append window of a library pool on the allocation
    /// `[off, end)` (offsets), which a growth through the hint has just
    /// left ending at `end`, when the tree's words allow
    /// ([`Self::window_words`]); see `super::append_window`.
    #[cold]
    #[inline(never)]
    fn open_window(&self, path: &mut Path, ext: &Extents, (off, end): (i64, i64)) {
        if let Some(words) = self.window_words(path, end >> GRANULE_SHIFT) {
            let shadow = (self.raw.hdr as i64, self.raw.nodes as i64);
            path.window
                .open(ext, (self.raw.mirror_hdr, shadow), (off, end), words);
        }
    }

    /// The length (granules) of the free span that starts at granule `e`,
    /// when the growth hint names it and the allocation has grown through
    /// the hint `GROWN_IN_A_ROW` times in a row, as a slice appended to in
    /// a loop does ([`Path::window_due`]); 0 otherwise (nothing is
    /// searched). Right after an append the tree answered, that span is
    /// the room the builtin pool's append window offers the slice
    /// (`builtin::ReusableFast`), and the hint on it makes settling the
    /// window's appends later [`Self::grow_hinted`]'s edit, not a descent.
    #[inline(always)]
    pub(crate) fn room_at(&self, path: &Path, e: i64) -> i64 {
        self.window_span(path, e).map_or(0, |(_, _, l)| l)
    }

    /// The leaf, slot and length of the free span starting at granule `e`
    /// that an append window would follow: the one the growth hint names,
    /// when it has served [`Path::window_due`]'s growths in a row and the
    /// finger holds. Slots past a leaf's count hold `EMPTY_KEY`, which is
    /// no offset.
    #[inline(always)]
    fn window_span(&self, path: &Path, e: i64) -> Option<(i64, usize, i64)> {
        if !path.window_due(e) || !self.finger_ok(path) {
            return None;
        }
        let (leaf, i) = (path.node[0], path.grow_slot as usize % FANOUT);
        (self.key(leaf, i) == e).then(|| (leaf, i, self.len(leaf, i)))
    }

    /// The node words an append window over the free span that starts at
    /// granule `e` would write (`super::append_window`), when the growth
    /// hint names that span and has served [`Path::window_due`]'s growths
    /// in a row; `None` otherwise, or when the path's words disagree with
    /// each other (a scribbled tree: the full path then answers). What a
    /// growth of `d` granules does through [`Self::take_front`] and
    /// [`Self::fix_up_entry`] is then: the key words become `key + d`, the
    /// length words `len - d`, for every `d <= room`.
    pub(crate) fn window_words(&self, path: &Path, e: i64) -> Option<WindowWords> {
        let (leaf, i, l) = self.window_span(path, e)?;
        if l <= 1 {
            return None;
        }
        let height = path.height.min(MAX_HEIGHT);
        let word = |node: i64, field: usize| ((node as usize) << NODE_SHIFT) + field;
        let mut w = WindowWords::NONE;
        (w.key, w.len) = (e, l);
        w.keys[0] = word(leaf, N_KEYS + i);
        w.lens[0] = word(leaf, N_LENS + i);
        (w.n_keys, w.n_lens) = (1, 1);
        // The span must keep a granule (a growth taking it whole removes
        // its entry) and stay longer than every other entry of each node
        // whose parent entry it sets.
        let mut floor = 1;
        let (mut keys_up, mut lens_up) = (i == 0, true);
        let (mut node, mut slot) = (leaf, i);
        for level in 1..height {
            let (parent, pi) = (path.node[level], path.at(level));
            if lens_up {
                let n = self.count(node).ok()?;
                let others = (0..n)
                    .filter(|&j| j != slot)
                    .map(|j| self.len(node, j))
                    .max()
                    .unwrap_or(0);
                if others >= l {
                    lens_up = false;
                } else if self.len(parent, pi) != l {
                    return None;
                } else {
                    floor = floor.max(others);
                    w.lens[w.n_lens] = word(parent, N_LENS + pi);
                    w.n_lens += 1;
                }
            }
            if keys_up {
                if self.key(parent, pi) != e {
                    return None;
                }
                w.keys[w.n_keys] = word(parent, N_KEYS + pi);
                w.n_keys += 1;
                keys_up = pi == 0;
            }
            if !lens_up && !keys_up {
                break;
            }
            (node, slot) = (parent, pi);
        }
        // A checked tree's lengths are the program's: the room stays
        // inside the arena whatever the span's length word says.
        w.room = (l - floor).min((self.raw.arena >> GRANULE_SHIFT) - e);
        Some(w)
    }

    /// [`Self::resize_tracked`], placing a move when the span must move:
    /// `alloc(new)` while the old span is held, then the old span freed.
    #[inline(always)]
    pub(crate) fn resize_or_move(
        &self,
        path: &mut Path,
        ext: &Extents,
        off: i64,
        old: i64,
        new: i64,
    ) -> TreeResult<i64> {
        match self.resize_tracked(path, ext, off, old, new) {
            Err(MUST_MOVE) => {
                let to = self.alloc_tracked(path, ext, new)?;
                // `resize_tracked` found `[off, off + old)` live.
                let g = (old + 7) >> GRANULE_SHIFT;
                ext.forget(off, g << GRANULE_SHIFT);
                self.free_live(ext, path, off >> GRANULE_SHIFT, g)?;
                Ok(to)
            }
            r => r,
        }
    }

    /// Why `[s, s + g)` (granules, inside the arena) is not one live
    /// allocation: `overlap` when it overlaps free space, else `stale` (or a
    /// corruption code met on the way). Reads the tree only.
    #[cold]
    #[inline(never)]
    fn not_live(&self, path: &mut Path, s: i64, g: i64, overlap: i64, stale: i64) -> i64 {
        error::note_refused(s << GRANULE_SHIFT, g << GRANULE_SHIFT);
        match self.around(path, s, s + g, true, overlap) {
            Err(e) => e,
            Ok(_) => stale,
        }
    }

    // ---- whole-tree walks ----

    fn check_invariants(&self) -> Result<Vec<(i64, i64)>, String> {
        let (root, height) = self.begin().map_err(error::message)?;
        let mut spans = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.walk(root, height - 1, true, &mut spans, &mut seen)?;
        for w in spans.windows(2) {
            let ((a, al), (b, _)) = (w[0], w[1]);
            if a + al > b {
                return Err(format!(
                    "spans [{a}, +{al}) and {b} overlap or are out of order"
                ));
            }
            if a + al == b {
                return Err(format!(
                    "spans [{a}, +{al}) and {b} are adjacent (not coalesced)"
                ));
            }
        }
        for &(o, l) in &spans {
            if o < 0 || l <= 0 || o + l > self.raw.arena {
                return Err(format!(
                    "span [{o}, +{l}) invalid for arena {}",
                    self.raw.arena
                ));
            }
        }
        if self.h(H_SPANS) != spans.len() as i64 {
            return Err(format!(
                "header span count {} != {}",
                self.h(H_SPANS),
                spans.len()
            ));
        }
        let free: i64 = spans.iter().map(|s| s.1).sum();
        if self.h(H_FREE_BYTES) != free {
            return Err(format!(
                "header free bytes {} != {free}",
                self.h(H_FREE_BYTES)
            ));
        }
        let mut f = self.h(H_FREE_HEAD);
        let mut steps = 0;
        while f != NONE {
            if f < 0 || f >= self.h(H_NODES_USED) || !seen.insert(f) {
                return Err(format!("free-node stack entry {f} invalid or in the tree"));
            }
            f = self.w(f, N_NEXT_FREE);
            steps += 1;
            if steps > self.raw.node_cap {
                return Err("free-node stack cycles".into());
            }
        }
        Ok(spans)
    }

    /// Checks the subtree at `node` and appends its spans (bytes); returns its
    /// summary `(min key, max len)` in granules.
    fn walk(
        &self,
        node: i64,
        level: usize,
        is_root: bool,
        spans: &mut Vec<(i64, i64)>,
        seen: &mut std::collections::HashSet<i64>,
    ) -> Result<(i64, i64), String> {
        if node < 0 || node >= self.raw.node_cap || !seen.insert(node) {
            return Err(format!("node {node} out of range or reached twice"));
        }
        if self.w(node, N_LEVEL) != level as i64 {
            return Err(format!(
                "node {node} has level {} != {level}",
                self.w(node, N_LEVEL)
            ));
        }
        let n = self.w(node, N_COUNT);
        let min = if is_root {
            if level > 0 { 2 } else { 0 }
        } else {
            MIN_FILL.max(1) as i64
        };
        if n < min || n > FANOUT as i64 {
            return Err(format!("node {node} (level {level}) has count {n}"));
        }
        let n = n as usize;
        let empty = |i: usize| {
            (self.key(node, i), self.len(node, i), self.kid(node, i)) == (EMPTY_KEY as i64, 0, 0)
        };
        if let Some(i) = (n..FANOUT).find(|&i| !empty(i)) {
            return Err(format!("node {node} slot {i} past its count is not empty"));
        }
        if level == 0
            && let Some(i) = (0..n).find(|&i| self.kid(node, i) != 0)
        {
            return Err(format!("leaf {node} slot {i} has a child"));
        }
        for j in 0..SENTINELS {
            let words = [
                (N_KEYS + FANOUT + j, EMPTY_KEY as i64),
                (N_LENS + FANOUT + j, 0),
                (N_KIDS + FANOUT + j, 0),
            ];
            if let Some((f, _)) = words.iter().find(|(f, v)| self.w(node, *f) != *v) {
                return Err(format!("node {node} sentinel word {f} changed"));
            }
        }
        for f in N_LEVEL + 2..N_KEYS {
            if self.w(node, f) != 0 {
                return Err(format!("node {node} reserved word {f} is not 0"));
            }
        }
        for i in 1..n {
            if self.key(node, i - 1) >= self.key(node, i) {
                return Err(format!("node {node} keys not increasing at {i}"));
            }
        }
        if level == 0 {
            for i in 0..n {
                spans.push((
                    self.key(node, i) << GRANULE_SHIFT,
                    self.len(node, i) << GRANULE_SHIFT,
                ));
            }
        } else {
            for i in 0..n {
                let (cmin, cmax) = self.walk(self.kid(node, i), level - 1, false, spans, seen)?;
                if (cmin, cmax) != (self.key(node, i), self.len(node, i)) {
                    return Err(format!(
                        "node {node} entry {i} summary ({}, {}) != child's ({cmin}, {cmax})",
                        self.key(node, i),
                        self.len(node, i)
                    ));
                }
            }
        }
        if n == 0 {
            Ok((EMPTY_KEY as i64, 0))
        } else {
            Ok(self.summary(node))
        }
    }
}
