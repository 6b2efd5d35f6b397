//! The augmented B+ tree of free spans: one generic source for both instantiations.
//!
//! Leaves hold free spans `(offset, len)` in address order; an internal entry holds
//! the smallest offset and the largest span length of its child's subtree. Every
//! operation is one descent plus, rarely, a step to the next leaf:
//! * `alloc` descends by the per-child maxima to the lowest-addressed span that
//!   fits and carves from its front (an in-place update unless it is an exact fit);
//! * `free` descends by key, checks the predecessor and successor for overlap
//!   (double free) and adjacency (coalescing) and updates in place where it can;
//! * `resize` shrinks by freeing the tail and grows by carving the free span that
//!   starts exactly at the end of the span.
//!
//! Summaries are propagated upwards only until they stop changing. Layout:
//! [`super::layout`]. With `V = Checked`, every word read from the header and the
//! nodes is validated before it is used as an index, a count or an offset, and
//! arithmetic on such words cannot overflow; corruption yields a negative error
//! code (see [`super::error`]), never an out-of-bounds access or a panic.

use std::marker::PhantomData;

use super::error::{
    self, BAD_SIZE, DOUBLE_FREE, EXHAUSTED, MUST_MOVE, NODES_EXHAUSTED, OUTSIDE_ARENA,
    RESIZE_FREE_SPAN, STALE_FREE, STALE_POOL, STALE_RESIZE,
};
use super::extents::Extents;
use super::layout::{
    self, H_ARENA_BYTES, H_FREE_BYTES, H_FREE_HEAD, H_HEIGHT, H_MAGIC, H_NODE_CAP, H_NODES_USED,
    H_POOL_ID, H_ROOT, H_SPANS, HEADER_WORDS, MAGIC, MAX_HEIGHT, N_COUNT, N_LEVEL, N_NEXT_FREE,
    N_RESERVED, NONE,
};
use super::scan;
use super::validate::Validate;

/// Result of a tree operation: the value, or a negative error code.
pub type TreeResult<T> = Result<T, i64>;

/// Largest arena a tree accepts (2^56 bytes): keeps every `offset + len` sum far
/// from overflow.
pub const MAX_ARENA_BYTES: i64 = 1 << 56;

/// Rounds `bytes` up to the span granule (8). `bytes` must be in `0..=MAX_ARENA_BYTES`.
#[inline(always)]
pub const fn round8(bytes: i64) -> i64 {
    (bytes + 7) & !7
}

/// The nodes visited by one descent: `node[l]` is the node at level `l` (0 = leaf),
/// `idx[l]` (for `l >= 1`) the entry of `node[l]` that leads to `node[l - 1]`.
///
/// Kept in the [`Tree`] (not rebuilt per operation): zeroing or copying it on
/// every call cost more than the operation itself.
pub struct Path {
    node: [i64; MAX_HEIGHT],
    idx: [u8; MAX_HEIGHT],
}

impl Default for Path {
    fn default() -> Self {
        Path::new()
    }
}

impl Path {
    /// A zeroed path.
    pub const fn new() -> Self {
        Path {
            node: [0; MAX_HEIGHT],
            idx: [0; MAX_HEIGHT],
        }
    }

    #[inline(always)]
    fn at(&self, l: usize) -> usize {
        self.idx[l] as usize
    }
}

/// Where a span `[off, end)` sits among the free spans, found by one descent by
/// key (the path ends in the predecessor's leaf).
struct Neighbours {
    height: usize,
    /// Index in the path's leaf where a span starting at `off` would be inserted.
    pos: usize,
    /// The predecessor `(offset, len)` at `pos - 1`, if any.
    pred: Option<(i64, i64)>,
    /// The successor `(offset, len)`: at `pos` in the same leaf, or first in the next leaf.
    succ: Option<(i64, i64)>,
    /// Whether the successor is in the next leaf (not on the path).
    succ_next: bool,
}

/// A span tree over a header and a node array, with the scratch path its
/// operations use.
///
/// The tree does not own its memory: it is a view over raw words that either the
/// runtime (builtin pool) or the program (library pool) owns.
pub struct Tree<V: Validate, const F: usize> {
    mem: Mem<V, F>,
    path: Path,
}

impl<V: Validate, const F: usize> Tree<V, F> {
    /// A view over a tree header and node array.
    ///
    /// # Safety
    /// `hdr` must be valid for reads and writes of `HEADER_WORDS` words and
    /// `nodes` of `node_cap * node_words(F)` words, 8-byte aligned, for as long as
    /// the view is used, and no one else may access them meanwhile (the view uses
    /// raw reads and writes only, so the two may even overlap). `arena` must be in
    /// `0..=MAX_ARENA_BYTES` and `node_cap >= 1`. Both bounds must come from the
    /// runtime, not from the tree memory.
    #[inline(always)]
    pub unsafe fn from_raw(hdr: *mut i64, nodes: *mut i64, node_cap: i64, arena: i64) -> Self {
        const {
            assert!(
                F == 8 || F == 16 || F == 32,
                "fanout must be 8, 16 or 32 (the AVX2 node scans read blocks of 4 slots)"
            )
        };
        Tree {
            mem: Mem {
                hdr,
                nodes,
                node_cap,
                arena,
                _mode: PhantomData,
            },
            path: Path::new(),
        }
    }

    /// Writes a fresh tree: one free span covering the whole arena (none if the
    /// arena is empty), the root a leaf at node 0, the header's pool id `pool_id`.
    pub fn init(&mut self, pool_id: i64) {
        self.mem.init(pool_id)
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
            self.mem.h(field)
        } else {
            0
        }
    }

    /// First fit: carves `bytes` (rounded up to 8) from the front of the
    /// lowest-addressed free span that is long enough; returns its offset.
    /// Errors: [`BAD_SIZE`] for `bytes <= 0`, [`EXHAUSTED`], corruption codes.
    #[inline]
    pub fn alloc(&mut self, bytes: i64) -> TreeResult<i64> {
        self.mem.alloc(&mut self.path, bytes)
    }

    /// Frees `[off, off + round8(bytes))`, merging with adjacent free spans.
    /// Errors: [`BAD_SIZE`], [`OUTSIDE_ARENA`], [`DOUBLE_FREE`] (the span overlaps
    /// free space), corruption codes.
    #[inline]
    pub fn free(&mut self, off: i64, bytes: i64) -> TreeResult<()> {
        self.mem.free(&mut self.path, off, bytes)
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
    #[inline]
    pub fn resize(&mut self, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        self.mem.resize(&mut self.path, off, old, new)
    }

    /// Checks every structural invariant and returns the free spans in address
    /// order, or a description of the first violation. For tests; O(n).
    ///
    /// Checked: levels, counts (minimum fill below the root), keys strictly
    /// increasing, internal keys/maxima equal to the child's summary, spans inside
    /// the arena, disjoint and never adjacent (fully coalesced), the header's span
    /// count and free bytes, and the free-node stack disjoint from the tree.
    pub fn check_invariants(&self) -> Result<Vec<(i64, i64)>, String> {
        self.mem.check_invariants()
    }

    /// [`Tree::alloc`], recording the span in `ext` as a live allocation.
    #[inline(always)]
    pub fn alloc_tracked(&mut self, ext: &Extents, bytes: i64) -> TreeResult<i64> {
        self.mem.alloc_tracked(ext, &mut self.path, bytes)
    }

    /// [`Tree::free`] of exactly one live allocation of `ext`. A span that is
    /// not one is refused before anything changes: [`DOUBLE_FREE`] when it
    /// overlaps free space, else [`STALE_FREE`].
    #[inline(always)]
    pub fn free_tracked(&mut self, ext: &Extents, off: i64, bytes: i64) -> TreeResult<()> {
        self.mem.free_tracked(ext, &mut self.path, off, bytes)
    }

    /// Frees `[off, off + round8(bytes))`, which [`Tree::resize_tracked`] has just
    /// found to be one live allocation and answered `MUST_MOVE` for: the end of
    /// a move, once the new span is allocated.
    #[inline]
    pub fn free_moved(&mut self, ext: &Extents, off: i64, bytes: i64) -> TreeResult<()> {
        self.mem.free_live(ext, &mut self.path, off, round8(bytes))
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
        self.mem.resize_tracked(ext, &mut self.path, off, old, new)
    }
}

/// Raw access to a tree's header and node array plus the algorithms; [`Tree`]
/// pairs it with the path scratch.
pub(crate) struct Mem<V: Validate, const F: usize> {
    hdr: *mut i64,
    nodes: *mut i64,
    /// Authoritative node capacity (never read from tree memory).
    node_cap: i64,
    /// Authoritative arena size in bytes (never read from tree memory).
    arena: i64,
    _mode: PhantomData<V>,
}

impl<V: Validate, const F: usize> Mem<V, F> {
    /// See [`Tree::from_raw`]; the caller supplies the path scratch per call.
    ///
    /// # Safety
    /// As for [`Tree::from_raw`].
    #[inline(always)]
    pub(crate) unsafe fn from_raw(
        hdr: *mut i64,
        nodes: *mut i64,
        node_cap: i64,
        arena: i64,
    ) -> Self {
        Mem {
            hdr,
            nodes,
            node_cap,
            arena,
            _mode: PhantomData,
        }
    }

    const KEYS: usize = layout::keys_at(F);
    const LENS: usize = layout::lens_at(F);
    const KIDS: usize = layout::children_at(F);
    const NODE_WORDS: usize = layout::node_words(F);
    const MIN: usize = layout::min_fill(F);

    /// Writes a fresh tree: one free span covering the whole arena (none if the
    /// arena is empty), the root a leaf at node 0.
    pub(crate) fn init(&self, pool_id: i64) {
        self.set_h(H_MAGIC, MAGIC);
        self.set_h(H_POOL_ID, pool_id);
        self.set_h(H_ROOT, 0);
        self.set_h(H_HEIGHT, 1);
        self.set_h(H_FREE_HEAD, NONE);
        self.set_h(H_NODES_USED, 1);
        self.set_h(H_ARENA_BYTES, self.arena);
        self.set_h(H_NODE_CAP, self.node_cap);
        self.set_w(0, N_LEVEL, 0);
        self.set_w(0, N_NEXT_FREE, NONE);
        self.set_w(0, N_RESERVED, 0);
        self.clear_slots(0, 0);
        if self.arena > 0 {
            self.set_w(0, N_COUNT, 1);
            self.set_w(0, Self::KEYS, 0);
            self.set_w(0, Self::LENS, self.arena);
            self.set_h(H_SPANS, 1);
        } else {
            self.set_w(0, N_COUNT, 0);
            self.set_h(H_SPANS, 0);
        }
        self.set_h(H_FREE_BYTES, self.arena);
    }

    // ---- raw word access (callers validate indices) ----

    #[inline(always)]
    fn h(&self, field: usize) -> i64 {
        // SAFETY: field < HEADER_WORDS at every call site (constants); `from_raw`'s contract.
        unsafe { self.hdr.add(field).read() }
    }

    #[inline(always)]
    fn set_h(&self, field: usize, v: i64) {
        // SAFETY: as in `h`.
        unsafe { self.hdr.add(field).write(v) }
    }

    #[inline(always)]
    fn w(&self, node: i64, field: usize) -> i64 {
        // SAFETY: `node` was validated against `node_cap` (or the tree is trusted) and
        // field < NODE_WORDS; `from_raw`'s contract.
        unsafe {
            self.nodes
                .add(node as usize * Self::NODE_WORDS + field)
                .read()
        }
    }

    #[inline(always)]
    fn set_w(&self, node: i64, field: usize, v: i64) {
        // SAFETY: as in `w`.
        unsafe {
            self.nodes
                .add(node as usize * Self::NODE_WORDS + field)
                .write(v)
        }
    }

    #[inline(always)]
    fn key(&self, node: i64, i: usize) -> i64 {
        self.w(node, Self::KEYS + i)
    }

    #[inline(always)]
    fn len(&self, node: i64, i: usize) -> i64 {
        self.w(node, Self::LENS + i)
    }

    #[inline(always)]
    fn kid(&self, node: i64, i: usize) -> i64 {
        self.w(node, Self::KIDS + i)
    }

    // ---- validated reads ----

    /// Reads and validates the header: returns `(root, height)`.
    #[inline(always)]
    fn begin(&self) -> TreeResult<(i64, usize)> {
        let root = self.h(H_ROOT);
        let height = self.h(H_HEIGHT);
        if V::CHECKED {
            // One branch on the fast path (the root must be in range before
            // its level is read); the cold path names the word.
            let bad = (self.h(H_MAGIC) != MAGIC)
                | ((height as u64).wrapping_sub(1) >= MAX_HEIGHT as u64)
                | (root as u64 >= self.node_cap as u64);
            if bad || self.w(root, N_LEVEL) != height - 1 {
                return Err(self.bad_header(root, height));
            }
        }
        Ok((root, height as usize))
    }

    /// The entry count of `node`, validated to `0..=F` (at least 1 for internal nodes).
    #[inline(always)]
    fn count(&self, node: i64, level: usize) -> TreeResult<usize> {
        let n = self.w(node, N_COUNT);
        if V::CHECKED && (n < (level > 0) as i64 || n > F as i64) {
            return Err(error::corrupt_node(node, N_COUNT));
        }
        Ok(n as usize)
    }

    /// Child `i` of `parent`, validated to be a node index at `level`.
    #[inline(always)]
    fn child(&self, parent: i64, i: usize, level: usize) -> TreeResult<i64> {
        let c = self.kid(parent, i);
        if V::CHECKED {
            if c < 0 || c >= self.node_cap {
                return Err(error::corrupt_node(parent, Self::KIDS + i));
            }
            if self.w(c, N_LEVEL) != level as i64 {
                return Err(error::corrupt_node(c, N_LEVEL));
            }
        }
        Ok(c)
    }

    /// Leaf entry `i` of `leaf`, validated to be a span inside the arena.
    #[inline(always)]
    fn span(&self, leaf: i64, i: usize) -> TreeResult<(i64, i64)> {
        let off = self.key(leaf, i);
        let len = self.len(leaf, i);
        // One branch on the fast path: aligned, `0 <= off <= arena` and
        // `0 < len <= arena - off`, as unsigned compares combined without
        // short-circuit (a wrapped difference only matters when `off` is
        // already out of range); the cold path names the word.
        if V::CHECKED {
            let misaligned = (off | len) & 7 != 0;
            let off_out = off as u64 > self.arena as u64;
            let len_out = (len as u64).wrapping_sub(1) >= self.arena.wrapping_sub(off) as u64;
            if misaligned | off_out | len_out {
                return Err(self.bad_span(leaf, i, off));
            }
        }
        Ok((off, len))
    }

    #[cold]
    fn bad_header(&self, root: i64, height: i64) -> i64 {
        if self.h(H_MAGIC) != MAGIC {
            error::corrupt_header(H_MAGIC)
        } else if height < 1 || height > MAX_HEIGHT as i64 {
            error::corrupt_header(H_HEIGHT)
        } else if root < 0 || root >= self.node_cap {
            error::corrupt_header(H_ROOT)
        } else {
            error::corrupt_node(root, N_LEVEL)
        }
    }

    #[cold]
    fn bad_span(&self, leaf: i64, i: usize, off: i64) -> i64 {
        if off < 0 || off & 7 != 0 || off > self.arena {
            error::corrupt_node(leaf, Self::KEYS + i)
        } else {
            error::corrupt_node(leaf, Self::LENS + i)
        }
    }

    /// Adds `delta` to a header counter (informational words: wrapping, never trusted).
    #[inline(always)]
    fn bump_h(&self, field: usize, delta: i64) {
        self.set_h(field, self.h(field).wrapping_add(delta));
    }

    // ---- node allocation ----

    /// Takes a node from the free stack, else from the never-used tail.
    fn alloc_node(&self, level: usize) -> TreeResult<i64> {
        let head = self.h(H_FREE_HEAD);
        let node = if head != NONE {
            if V::CHECKED && (head < 0 || head >= self.node_cap) {
                return Err(error::corrupt_header(H_FREE_HEAD));
            }
            self.set_h(H_FREE_HEAD, self.w(head, N_NEXT_FREE));
            head
        } else {
            let used = self.h(H_NODES_USED);
            if V::CHECKED && (used < 0 || used > self.node_cap) {
                return Err(error::corrupt_header(H_NODES_USED));
            }
            if used >= self.node_cap {
                return Err(NODES_EXHAUSTED);
            }
            self.set_h(H_NODES_USED, used + 1);
            used
        };
        self.set_w(node, N_COUNT, 0);
        self.set_w(node, N_LEVEL, level as i64);
        self.set_w(node, N_NEXT_FREE, NONE);
        self.set_w(node, N_RESERVED, 0);
        self.clear_slots(node, 0);
        Ok(node)
    }

    /// Empties slots `from..F` of `node`: key +inf ([`i64::MAX`]), length 0.
    /// The invariant lets searches read a fixed block of slots without masking
    /// by the count: a node's maximum and first fit ([`super::scan`]) and the
    /// key search (`count_le`). Every edit that lowers a node's count keeps it.
    #[inline(always)]
    fn clear_slots(&self, node: i64, from: usize) {
        for i in from..F {
            self.clear_slot(node, i);
        }
    }

    /// Empties slot `i` of `node` (see [`Self::clear_slots`]).
    #[inline(always)]
    fn clear_slot(&self, node: i64, i: usize) {
        self.set_w(node, Self::KEYS + i, i64::MAX);
        self.set_w(node, Self::LENS + i, 0);
    }

    /// Pushes `node` on the free stack.
    fn free_node(&self, node: i64) {
        self.set_w(node, N_COUNT, 0);
        self.set_w(node, N_LEVEL, -1);
        self.set_w(node, N_NEXT_FREE, self.h(H_FREE_HEAD));
        self.set_h(H_FREE_HEAD, node);
    }

    // ---- node edits ----

    /// `(smallest key, largest len)` of a node with `n >= 1` entries (slots
    /// past `n` hold length 0: see `clear_slots`).
    #[inline(always)]
    fn summary(&self, node: i64, n: usize) -> (i64, i64) {
        debug_assert!((1..=F).contains(&n));
        let lens = self.lens_ptr(node);
        // SAFETY: the node has F length slots.
        let max = unsafe { scan::max::<F>(lens) };
        (self.key(node, 0), max)
    }

    /// The first `i < n` with `lens[i] >= b`, or `n`.
    ///
    /// Tiny nodes (the hot path: one or two spans) take a plain loop, whose
    /// predictable branches keep the next operation off the critical path;
    /// larger nodes take a branch-free scan of all F slots ([`scan::fit_index`];
    /// a scan that stops at the hit mispredicts on random sizes).
    #[inline(always)]
    fn first_fit(&self, node: i64, n: usize, b: i64) -> usize {
        if n <= 2 {
            let mut i = 0;
            while i < n && self.len(node, i) < b {
                i += 1;
            }
            return i;
        }
        let lens = self.lens_ptr(node);
        // SAFETY: the node has F length slots; n <= F.
        unsafe { scan::fit_index::<F>(lens, n, b) }
    }

    /// The address of `keys[0]` of `node`.
    #[inline(always)]
    fn keys_ptr(&self, node: i64) -> *const i64 {
        // SAFETY: as in `w`.
        unsafe {
            self.nodes
                .add(node as usize * Self::NODE_WORDS + Self::KEYS)
        }
    }

    /// The address of `lens[0]` of `node`.
    #[inline(always)]
    fn lens_ptr(&self, node: i64) -> *const i64 {
        // SAFETY: as in `w`.
        unsafe {
            self.nodes
                .add(node as usize * Self::NODE_WORDS + Self::LENS)
        }
    }

    /// How many of the first `n` keys are `<= off` (keys are increasing). Tiny
    /// nodes take a plain loop (see `first_fit`); larger ones a branch-free binary
    /// search over all F slots ([`scan::count_le`]; slots past `n` hold +inf: see
    /// `clear_slots`; a checked tree clamps the answer to `n` instead of trusting
    /// them).
    #[inline(always)]
    fn count_le(&self, node: i64, n: usize, off: i64) -> usize {
        if n <= 2 {
            let mut c = 0;
            while c < n && self.key(node, c) <= off {
                c += 1;
            }
            return c;
        }
        let keys = self.keys_ptr(node);
        // SAFETY: the node has F key slots.
        let c = unsafe { scan::count_le::<F>(keys, off) };
        if V::CHECKED { c.min(n) } else { c }
    }

    /// Inserts an entry at `i` into `node`, which has `n < F` entries.
    /// (`kids`: whether the node is internal, so children move too.)
    fn insert_entry(&self, node: i64, n: usize, i: usize, e: (i64, i64, i64), kids: bool) {
        let mut j = n;
        while j > i {
            self.set_w(node, Self::KEYS + j, self.key(node, j - 1));
            self.set_w(node, Self::LENS + j, self.len(node, j - 1));
            if kids {
                self.set_w(node, Self::KIDS + j, self.kid(node, j - 1));
            }
            j -= 1;
        }
        self.set_w(node, Self::KEYS + i, e.0);
        self.set_w(node, Self::LENS + i, e.1);
        if kids {
            self.set_w(node, Self::KIDS + i, e.2);
        }
        self.set_w(node, N_COUNT, n as i64 + 1);
    }

    /// Removes entry `i < n` from `node`, which has `n` entries.
    fn remove_entry(&self, node: i64, n: usize, i: usize, kids: bool) {
        for j in i..n - 1 {
            self.set_w(node, Self::KEYS + j, self.key(node, j + 1));
            self.set_w(node, Self::LENS + j, self.len(node, j + 1));
            if kids {
                self.set_w(node, Self::KIDS + j, self.kid(node, j + 1));
            }
        }
        self.clear_slot(node, n - 1);
        self.set_w(node, N_COUNT, n as i64 - 1);
    }

    /// Copies entries `from..from+k` of `src` to `at..at+k` of `dst`.
    fn copy_entries(&self, src: i64, from: usize, dst: i64, at: usize, k: usize, kids: bool) {
        for j in 0..k {
            self.set_w(dst, Self::KEYS + at + j, self.key(src, from + j));
            self.set_w(dst, Self::LENS + at + j, self.len(src, from + j));
            if kids {
                self.set_w(dst, Self::KIDS + at + j, self.kid(src, from + j));
            }
        }
    }

    /// Writes `node`'s summary into its parent's entry, upwards from `level`, until
    /// an entry does not change.
    fn fix_up(&self, path: &Path, from: usize, height: usize) -> TreeResult<()> {
        let mut l = from;
        while l + 1 < height {
            let child = path.node[l];
            let n = self.count(child, l)?;
            if n == 0 {
                return Err(error::corrupt_node(child, N_COUNT));
            }
            let (min, max) = self.summary(child, n);
            let (parent, i) = (path.node[l + 1], path.at(l + 1));
            if self.key(parent, i) == min && self.len(parent, i) == max {
                break;
            }
            self.set_w(parent, Self::KEYS + i, min);
            self.set_w(parent, Self::LENS + i, max);
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
        path: &Path,
        height: usize,
        mut level: usize,
        mut i: usize,
        mut old: i64,
        mut new: i64,
    ) -> TreeResult<()> {
        while level + 1 < height {
            let node = path.node[level];
            let (parent, pi) = (path.node[level + 1], path.at(level + 1));
            let pmax = self.len(parent, pi);
            let max = if new >= pmax {
                new
            } else if old < pmax {
                pmax
            } else {
                let n = self.count(node, level)?;
                if n == 0 {
                    return Err(error::corrupt_node(node, N_COUNT));
                }
                self.summary(node, n).1
            };
            let key = self.key(node, 0);
            let key_changed = i == 0 && self.key(parent, pi) != key;
            if max == pmax && !key_changed {
                return Ok(());
            }
            self.set_w(parent, Self::KEYS + pi, key);
            self.set_w(parent, Self::LENS + pi, max);
            (old, new, i) = (pmax, max, pi);
            level += 1;
        }
        Ok(())
    }

    /// Inserts a span at index `i` of the leaf `path.node[0]`, splitting full nodes
    /// upwards (a new root when the root splits).
    fn insert_at(
        &self,
        path: &Path,
        height: usize,
        mut i: usize,
        off: i64,
        len: i64,
    ) -> TreeResult<()> {
        let mut e = (off, len, 0);
        let mut level = 0;
        loop {
            let node = path.node[level];
            let n = self.count(node, level)?;
            if V::CHECKED && i > n {
                return Err(error::corrupt_node(node, N_COUNT));
            }
            if n < F {
                self.insert_entry(node, n, i, e, level > 0);
                // After a split below, entry `i - 1` changed too: recompute in full.
                return if level == 0 {
                    self.fix_up_entry(path, height, level, i, i64::MIN, e.1)
                } else {
                    self.fix_up(path, level, height)
                };
            }
            // Split the full node: the upper half moves to a new right sibling.
            let right = self.alloc_node(level)?;
            let half = F / 2;
            self.copy_entries(node, half, right, 0, F - half, level > 0);
            self.clear_slots(node, half);
            self.set_w(node, N_COUNT, half as i64);
            self.set_w(right, N_COUNT, (F - half) as i64);
            if i <= half {
                self.insert_entry(node, half, i, e, level > 0);
            } else {
                self.insert_entry(right, F - half, i - half, e, level > 0);
            }
            let ln = self.w(node, N_COUNT) as usize;
            let rn = self.w(right, N_COUNT) as usize;
            let (lmin, lmax) = self.summary(node, ln);
            let (rmin, rmax) = self.summary(right, rn);
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
            self.set_w(parent, Self::KEYS + pi, lmin);
            self.set_w(parent, Self::LENS + pi, lmax);
            e = (rmin, rmax, right);
            i = pi + 1;
            level += 1;
        }
    }

    /// Removes entry `i` of the leaf `path.node[0]`, rebalancing upwards: an
    /// underfull node borrows one entry from a sibling or merges with it; a root
    /// with one child is replaced by that child.
    fn remove_at(&self, path: &Path, height: usize, mut i: usize) -> TreeResult<()> {
        let mut level = 0;
        loop {
            let node = path.node[level];
            let n = self.count(node, level)?;
            if i >= n {
                return Err(error::corrupt_node(node, N_COUNT));
            }
            let removed_len = self.len(node, i);
            self.remove_entry(node, n, i, level > 0);
            let n = n - 1;
            if level + 1 == height {
                if level > 0 && n == 1 {
                    let only = self.child(node, 0, level - 1)?;
                    self.set_h(H_ROOT, only);
                    self.set_h(H_HEIGHT, height as i64 - 1);
                    self.free_node(node);
                }
                return Ok(());
            }
            if n >= Self::MIN.max(1) {
                // After a merge below, entry `i - 1` changed too: recompute in full.
                return if level == 0 {
                    self.fix_up_entry(path, height, level, i, removed_len, i64::MIN)
                } else {
                    self.fix_up(path, level, height)
                };
            }
            let (parent, pi) = (path.node[level + 1], path.at(level + 1));
            let pn = self.count(parent, level + 1)?;
            if V::CHECKED && (pn < 2 || pi >= pn) {
                return Err(error::corrupt_node(parent, N_COUNT));
            }
            let li = if pi > 0 { pi - 1 } else { 0 };
            let left = if pi > 0 {
                self.child(parent, li, level)?
            } else {
                node
            };
            let right = if pi > 0 {
                node
            } else {
                self.child(parent, 1, level)?
            };
            if V::CHECKED && left == right {
                return Err(error::corrupt_node(parent, Self::KIDS + li + 1));
            }
            let ln = self.count(left, level)?;
            let rn = self.count(right, level)?;
            let sibling_n = if pi > 0 { ln } else { rn };
            if sibling_n > Self::MIN {
                // Borrow one entry from the sibling.
                if pi > 0 {
                    let e = (
                        self.key(left, ln - 1),
                        self.len(left, ln - 1),
                        self.kid(left, ln - 1),
                    );
                    self.clear_slot(left, ln - 1);
                    self.set_w(left, N_COUNT, ln as i64 - 1);
                    self.insert_entry(right, rn, 0, e, level > 0);
                } else {
                    let e = (self.key(right, 0), self.len(right, 0), self.kid(right, 0));
                    self.remove_entry(right, rn, 0, level > 0);
                    self.insert_entry(left, ln, ln, e, level > 0);
                }
                let (ln, rn) = (
                    self.w(left, N_COUNT) as usize,
                    self.w(right, N_COUNT) as usize,
                );
                let (lmin, lmax) = self.summary(left, ln);
                let (rmin, rmax) = self.summary(right, rn);
                self.set_w(parent, Self::KEYS + li, lmin);
                self.set_w(parent, Self::LENS + li, lmax);
                self.set_w(parent, Self::KEYS + li + 1, rmin);
                self.set_w(parent, Self::LENS + li + 1, rmax);
                return self.fix_up(path, level + 1, height);
            }
            // Merge right into left and remove right's entry from the parent.
            if ln + rn > F {
                return Err(error::corrupt_node(right, N_COUNT));
            }
            self.copy_entries(right, 0, left, ln, rn, level > 0);
            self.set_w(left, N_COUNT, (ln + rn) as i64);
            self.free_node(right);
            if ln + rn > 0 {
                let (lmin, lmax) = self.summary(left, ln + rn);
                self.set_w(parent, Self::KEYS + li, lmin);
                self.set_w(parent, Self::LENS + li, lmax);
            }
            i = li + 1;
            level += 1;
        }
    }

    // ---- descents ----

    /// Descends by key to the leaf holding the last span that starts at or before
    /// `off` (the leftmost leaf if there is none), recording the path; returns the height.
    #[inline(always)]
    fn descend_by_key(&self, path: &mut Path, off: i64) -> TreeResult<usize> {
        let (root, height) = self.begin()?;
        let mut node = root;
        let mut level = height - 1;
        while level > 0 {
            let n = self.count(node, level)?;
            let i = self.count_le(node, n, off).max(1) - 1;
            path.node[level] = node;
            path.idx[level] = i as u8;
            node = self.child(node, i, level - 1)?;
            level -= 1;
        }
        path.node[0] = node;
        Ok(height)
    }

    /// The first leaf after `path`'s leaf, if any (read-only: the path is kept).
    fn next_leaf(&self, path: &Path, height: usize) -> TreeResult<Option<i64>> {
        let mut l = 1;
        let mut i;
        loop {
            if l >= height {
                return Ok(None);
            }
            let n = self.count(path.node[l], l)?;
            i = path.at(l) + 1;
            if i < n {
                break;
            }
            l += 1;
        }
        let mut node = path.node[l];
        while l > 0 {
            node = self.child(node, i, l - 1)?;
            i = 0;
            l -= 1;
        }
        Ok(Some(node))
    }

    /// The index of the span starting exactly at `off` in the leaf a descent by
    /// key `off` lands in (a span known to exist: found it in a neighbouring leaf).
    fn find_exact(&self, path: &mut Path, off: i64) -> TreeResult<(usize, usize, i64)> {
        let height = self.descend_by_key(path, off)?;
        let leaf = path.node[0];
        let n = self.count(leaf, 0)?;
        let mut i = 0;
        while i < n && self.key(leaf, i) < off {
            i += 1;
        }
        if i == n || self.key(leaf, i) != off {
            return Err(error::corrupt_node(leaf, N_COUNT));
        }
        let (_, len) = self.span(leaf, i)?;
        Ok((height, i, len))
    }

    /// Finds the free neighbours of `[off, end)` and reports `overlap` if the range
    /// overlaps free space. Leaves `path` at the predecessor's leaf.
    #[inline(always)]
    fn neighbours(
        &self,
        path: &mut Path,
        off: i64,
        end: i64,
        overlap: i64,
    ) -> TreeResult<Neighbours> {
        let height = self.descend_by_key(path, off)?;
        let leaf = path.node[0];
        let n = self.count(leaf, 0)?;
        let pos = self.count_le(leaf, n, off);
        let pred = if pos > 0 {
            let (po, pl) = self.span(leaf, pos - 1)?;
            if po + pl > off {
                return Err(overlap);
            }
            Some((po, pl))
        } else {
            // Descending by key lands right of child 0 only when that child's key
            // is <= off, so the leaf's first key must be too.
            if V::CHECKED && (1..height).any(|l| path.idx[l] != 0) {
                return Err(error::corrupt_node(leaf, Self::KEYS));
            }
            None
        };
        let (succ, succ_next) = if pos < n {
            (Some(self.span(leaf, pos)?), false)
        } else {
            match self.next_leaf(path, height)? {
                Some(leaf2) => {
                    if self.count(leaf2, 0)? == 0 {
                        return Err(error::corrupt_node(leaf2, N_COUNT));
                    }
                    (Some(self.span(leaf2, 0)?), true)
                }
                None => (None, false),
            }
        };
        if let Some((so, _)) = succ {
            if so < end {
                return Err(overlap);
            }
            if V::CHECKED && so <= off {
                return Err(error::corrupt_node(leaf, Self::KEYS + pos));
            }
        }
        Ok(Neighbours {
            height,
            pos,
            pred,
            succ,
            succ_next,
        })
    }

    // ---- operations ----

    #[inline(always)]
    pub(crate) fn alloc(&self, path: &mut Path, bytes: i64) -> TreeResult<i64> {
        if bytes <= 0 {
            return Err(BAD_SIZE);
        }
        if bytes > self.arena {
            return Err(EXHAUSTED);
        }
        let b = round8(bytes);
        let (root, height) = self.begin()?;
        let mut node = root;
        let mut level = height - 1;
        while level > 0 {
            let n = self.count(node, level)?;
            let i = self.first_fit(node, n, b);
            if i == n {
                return Err(if level + 1 == height {
                    EXHAUSTED
                } else {
                    error::corrupt_node(path.node[level + 1], Self::LENS + path.at(level + 1))
                });
            }
            path.node[level] = node;
            path.idx[level] = i as u8;
            node = self.child(node, i, level - 1)?;
            level -= 1;
        }
        path.node[0] = node;
        let n = self.count(node, 0)?;
        let i = self.first_fit(node, n, b);
        if i == n {
            return Err(if height == 1 {
                EXHAUSTED
            } else {
                error::corrupt_node(path.node[1], Self::LENS + path.at(1))
            });
        }
        let (off, len) = self.span(node, i)?;
        if len == b {
            self.remove_at(path, height, i)?;
            self.bump_h(H_SPANS, -1);
        } else {
            // The common case: carve from the front, an in-place update.
            self.set_w(node, Self::KEYS + i, off + b);
            self.set_w(node, Self::LENS + i, len - b);
            self.fix_up_entry(path, height, 0, i, len, len - b)?;
        }
        self.bump_h(H_FREE_BYTES, -b);
        Ok(off)
    }

    /// Validates a span argument: `off` a multiple of 8 and `[off, off+bytes)`
    /// inside the arena. Returns the rounded size.
    #[inline(always)]
    fn check_span(&self, off: i64, bytes: i64) -> TreeResult<i64> {
        if bytes <= 0 {
            return Err(BAD_SIZE);
        }
        if off < 0 || off & 7 != 0 || bytes > self.arena || off > self.arena - round8(bytes) {
            return Err(OUTSIDE_ARENA);
        }
        Ok(round8(bytes))
    }

    #[inline(always)]
    fn free_range(&self, path: &mut Path, off: i64, b: i64) -> TreeResult<()> {
        let end = off + b;
        let nb = self.neighbours(path, off, end, DOUBLE_FREE)?;
        let height = nb.height;
        let leaf = path.node[0];
        let pred_adj = matches!(nb.pred, Some((po, pl)) if po + pl == off);
        let succ_adj = matches!(nb.succ, Some((so, _)) if so == end);
        let (_, pl) = nb.pred.unwrap_or_default();
        let (so, sl) = nb.succ.unwrap_or_default();
        match (pred_adj, succ_adj) {
            (true, true) => {
                // Merge all three into the predecessor and delete the successor.
                self.set_w(leaf, Self::LENS + nb.pos - 1, pl + b + sl);
                self.fix_up_entry(path, height, 0, nb.pos - 1, pl, pl + b + sl)?;
                if nb.succ_next {
                    let (height, i, _) = self.find_exact(path, so)?;
                    self.remove_at(path, height, i)?;
                } else {
                    self.remove_at(path, height, nb.pos)?;
                }
                self.bump_h(H_SPANS, -1);
            }
            (true, false) => {
                self.set_w(leaf, Self::LENS + nb.pos - 1, pl + b);
                self.fix_up_entry(path, height, 0, nb.pos - 1, pl, pl + b)?;
            }
            (false, true) => {
                // Extend the successor down to `off`.
                let (height, i) = if nb.succ_next {
                    let (h, i, _) = self.find_exact(path, so)?;
                    (h, i)
                } else {
                    (height, nb.pos)
                };
                let leaf = path.node[0];
                self.set_w(leaf, Self::KEYS + i, off);
                self.set_w(leaf, Self::LENS + i, sl + b);
                self.fix_up_entry(path, height, 0, i, sl, sl + b)?;
            }
            (false, false) => {
                self.insert_at(path, height, nb.pos, off, b)?;
                self.bump_h(H_SPANS, 1);
            }
        }
        self.bump_h(H_FREE_BYTES, b);
        Ok(())
    }

    /// `free` of a span argument: validated, then [`Self::free_range`].
    #[inline(always)]
    pub(crate) fn free(&self, path: &mut Path, off: i64, bytes: i64) -> TreeResult<()> {
        let b = self.check_span(off, bytes)?;
        self.free_range(path, off, b)
    }

    #[inline(always)]
    pub(crate) fn resize(&self, path: &mut Path, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        if new < 0 {
            return Err(BAD_SIZE);
        }
        let old = self.check_span(off, old)?;
        self.resize_span(path, off, old, new)
    }

    /// `resize` of the validated span `[off, off + old)` (`old` rounded) to
    /// `new >= 0` bytes.
    #[inline(always)]
    fn resize_span(&self, path: &mut Path, off: i64, old: i64, new: i64) -> TreeResult<i64> {
        if new == 0 {
            self.free_range(path, off, old)?;
            return Ok(off);
        }
        if new > self.arena - off {
            return Err(MUST_MOVE);
        }
        let new = round8(new);
        if new == old {
            return Ok(off);
        }
        if new < old {
            self.free_range(path, off + new, old - new)?;
            return Ok(off);
        }
        let end = off + old;
        let need = new - old;
        let nb = self.neighbours(path, off, end, RESIZE_FREE_SPAN)?;
        match nb.succ {
            Some((so, sl)) if so == end && sl >= need => {
                let (height, i) = if nb.succ_next {
                    let (h, i, _) = self.find_exact(path, so)?;
                    (h, i)
                } else {
                    (nb.height, nb.pos)
                };
                if sl == need {
                    self.remove_at(path, height, i)?;
                    self.bump_h(H_SPANS, -1);
                } else {
                    let leaf = path.node[0];
                    self.set_w(leaf, Self::KEYS + i, so + need);
                    self.set_w(leaf, Self::LENS + i, sl - need);
                    self.fix_up_entry(path, height, 0, i, sl, sl - need)?;
                }
                self.bump_h(H_FREE_BYTES, -need);
                Ok(off)
            }
            _ => Err(MUST_MOVE),
        }
    }

    // ---- tracked operations: the tree and the pool's boundary record ----

    /// `alloc`, recording the span as a live allocation.
    #[inline(always)]
    pub(crate) fn alloc_tracked(
        &self,
        ext: &Extents,
        path: &mut Path,
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
        ext: &Extents,
        path: &mut Path,
        off: i64,
        bytes: i64,
    ) -> TreeResult<()> {
        let b = self.check_span(off, bytes)?;
        if !ext.take(off, b) {
            return Err(self.not_live(path, off, b, DOUBLE_FREE, STALE_FREE));
        }
        // Only a corrupt (checked) tree can fail here: keep the record as it
        // was. (A `match`: `Result::inspect_err` stayed an out-of-line call,
        // 6 instructions on every free.)
        match self.free_range(path, off, b) {
            Ok(()) => Ok(()),
            Err(e) => {
                ext.record(off, b);
                Err(e)
            }
        }
    }

    /// `resize` of exactly one live allocation (see [`Tree::resize_tracked`]).
    #[inline(always)]
    pub(crate) fn resize_tracked(
        &self,
        ext: &Extents,
        path: &mut Path,
        off: i64,
        old: i64,
        new: i64,
    ) -> TreeResult<i64> {
        if new < 0 {
            return Err(BAD_SIZE);
        }
        let ob = self.check_span(off, old)?;
        if !ext.is_live(off, ob) {
            // `new <= ob - 8`: the rounded new size is smaller (`new` may be
            // past the arena, so it is not rounded here).
            let overlap = if new <= ob - 8 {
                DOUBLE_FREE
            } else {
                RESIZE_FREE_SPAN
            };
            return Err(self.not_live(path, off, ob, overlap, STALE_RESIZE));
        }
        // A growth whose span another live allocation follows cannot happen
        // in place: that answer needs no descent (a third of the appends of
        // `tern bench`'s `append` move). `off + ob` lies inside the arena:
        // `ob < new <= arena - off`.
        if new > ob && new <= self.arena - off && ext.starts_live(off + ob) {
            return Err(MUST_MOVE);
        }
        let r = self.resize_span(path, off, ob, new)?;
        // Past the `resize`, `new <= arena - off`: rounding it cannot overflow.
        if new == 0 {
            ext.forget(off, ob);
        } else {
            ext.resize(off, ob, round8(new));
        }
        Ok(r)
    }

    /// Frees `[off, off + b)` (validated, rounded), which the caller has just
    /// checked is one live allocation: the second half of a move.
    #[inline(always)]
    pub(crate) fn free_live(
        &self,
        ext: &Extents,
        path: &mut Path,
        off: i64,
        b: i64,
    ) -> TreeResult<()> {
        self.free_range(path, off, b)?;
        ext.forget(off, b);
        Ok(())
    }

    /// Why `[off, off + b)`, inside the arena, is not one live allocation:
    /// `overlap` when it overlaps free space, else `stale` (or a corruption
    /// code met on the way). Reads the tree only.
    #[cold]
    #[inline(never)]
    fn not_live(&self, path: &mut Path, off: i64, b: i64, overlap: i64, stale: i64) -> i64 {
        match self.neighbours(path, off, off + b, overlap) {
            Err(e) => e,
            Ok(_) => stale,
        }
    }

    /// Whether the header's span count and free bytes are those of the tree it
    /// describes (validated reads, at most `node_cap` nodes visited): what
    /// `finish` asks of a header before it releases the pool. [`STALE_POOL`]
    /// when not, or when the walk meets anything invalid.
    pub(crate) fn check_totals(&self) -> TreeResult<()> {
        let (root, height) = self.begin().map_err(|_| STALE_POOL)?;
        let mut budget = self.node_cap;
        let (spans, free) = self
            .totals(root, height - 1, &mut budget)
            .map_err(|_| STALE_POOL)?;
        if spans != self.h(H_SPANS) || free != self.h(H_FREE_BYTES) {
            return Err(STALE_POOL);
        }
        Ok(())
    }

    /// `(spans, free bytes)` below `node` at `level`, visiting at most `budget` nodes.
    fn totals(&self, node: i64, level: usize, budget: &mut i64) -> TreeResult<(i64, i64)> {
        *budget -= 1;
        if *budget < 0 {
            return Err(NODES_EXHAUSTED);
        }
        let n = self.count(node, level)?;
        if level == 0 {
            let mut free: i64 = 0;
            for i in 0..n {
                let (_, len) = self.span(node, i)?;
                free = free.checked_add(len).ok_or(STALE_POOL)?;
            }
            return Ok((n as i64, free));
        }
        let (mut spans, mut free) = (0i64, 0i64);
        for i in 0..n {
            let c = self.child(node, i, level - 1)?;
            let (s, f) = self.totals(c, level - 1, budget)?;
            spans += s;
            free = free.checked_add(f).ok_or(STALE_POOL)?;
        }
        Ok((spans, free))
    }

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
            if o < 0 || l <= 0 || o % 8 != 0 || l % 8 != 0 || o + l > self.arena {
                return Err(format!("span [{o}, +{l}) invalid for arena {}", self.arena));
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
            if steps > self.node_cap {
                return Err("free-node stack cycles".into());
            }
        }
        Ok(spans)
    }

    fn walk(
        &self,
        node: i64,
        level: usize,
        is_root: bool,
        spans: &mut Vec<(i64, i64)>,
        seen: &mut std::collections::HashSet<i64>,
    ) -> Result<(i64, i64), String> {
        if node < 0 || node >= self.node_cap || !seen.insert(node) {
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
            Self::MIN.max(1) as i64
        };
        if n < min || n > F as i64 {
            return Err(format!("node {node} (level {level}) has count {n}"));
        }
        let n = n as usize;
        if let Some(i) = (n..F).find(|&i| (self.key(node, i), self.len(node, i)) != (i64::MAX, 0)) {
            return Err(format!("node {node} slot {i} past its count is not empty"));
        }
        for i in 1..n {
            if self.key(node, i - 1) >= self.key(node, i) {
                return Err(format!("node {node} keys not increasing at {i}"));
            }
        }
        if level == 0 {
            for i in 0..n {
                spans.push((self.key(node, i), self.len(node, i)));
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
            Ok((i64::MAX, 0))
        } else {
            Ok(self.summary(node, n))
        }
    }
}
