//! The checked entry points over a tree in program memory: the bodies of the
//! `tern_span_*` externs. Each call reads the pool id from the header, takes the
//! authoritative bounds from the [`registry`], checks that the node array passed in
//! is the registered one, and runs the checked instantiation of the tree code.

use super::error::{BAD_POOL, BAD_SIZE};
use super::layout::{self, FANOUT, H_MAGIC, H_POOL_ID, HEADER_WORDS, MAGIC};
use super::registry::{self, PoolBounds};
use super::tree::{MAX_ARENA_BYTES, Mem, Path, Tree, TreeResult};
use super::validate::Checked;

/// The checked tree at the pool's fanout.
pub type CheckedTree = Tree<Checked, FANOUT>;

/// Runs `f` with a fresh path scratch for one call.
#[inline(always)]
fn with_scratch<R>(f: impl FnOnce(&mut Path) -> R) -> R {
    f(&mut Path::new())
}

/// Looks up the pool `tree` belongs to and returns a checked view and its bounds.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words.
#[inline(always)]
unsafe fn open(tree: *mut i64, nodes: *mut i64) -> TreeResult<(Mem<Checked, FANOUT>, PoolBounds)> {
    if tree.is_null() || !(tree as usize).is_multiple_of(8) {
        return Err(BAD_POOL);
    }
    // SAFETY: the caller's contract; the word index is a constant below HEADER_WORDS.
    let id = unsafe { tree.add(H_POOL_ID).read() };
    let b = registry::lookup(id)?;
    if b.nodes != nodes as i64 {
        return Err(BAD_POOL);
    }
    // SAFETY: the node array's address and capacity come from the registry, which
    // `init` filled from a reservation of `node_cap * node_words` words.
    Ok((
        unsafe { Mem::from_raw(tree, nodes, b.node_cap, b.arena_bytes) },
        b,
    ))
}

/// Zero-fills `[off, off+bytes)` of the arena when the pool registered its base.
#[inline(always)]
fn zero(b: &PoolBounds, off: i64, bytes: i64) {
    if b.arena_base != 0 && bytes > 0 {
        // SAFETY: the tree returns only spans inside the registered arena
        // (validated against the authoritative arena size).
        unsafe { std::ptr::write_bytes((b.arena_base + off) as *mut u8, 0, bytes as usize) };
    }
}

/// Words a header needs.
pub const fn header_words() -> i64 {
    HEADER_WORDS as i64
}

/// Words of node array an arena of `arena_bytes` needs (worst case).
pub const fn node_array_words(arena_bytes: i64) -> i64 {
    layout::node_array_words(arena_bytes, FANOUT)
}

/// Initialises a checked pool: writes a fresh header and root into `tree` and
/// `nodes` and registers the bounds. `arena_base` may be 0 (the runtime then never
/// writes arena bytes, so `alloc` does not zero-fill). Returns the pool id.
///
/// # Safety
/// `tree` must be valid for `HEADER_WORDS` words and `nodes` for `node_words`
/// words (8-byte aligned), `arena_base` (if not 0) for `arena_bytes` bytes, for as
/// long as the pool is registered.
pub unsafe fn init(
    tree: *mut i64,
    nodes: *mut i64,
    node_words: i64,
    arena_base: i64,
    arena_bytes: i64,
) -> TreeResult<i64> {
    if tree.is_null()
        || nodes.is_null()
        || !(tree as usize).is_multiple_of(8)
        || !(nodes as usize).is_multiple_of(8)
    {
        return Err(BAD_POOL);
    }
    if !(0..=MAX_ARENA_BYTES).contains(&arena_bytes) || arena_bytes % 8 != 0 {
        return Err(BAD_SIZE);
    }
    let node_cap = node_words / layout::node_words(FANOUT) as i64;
    if node_cap < layout::node_capacity(arena_bytes, FANOUT) {
        return Err(BAD_SIZE);
    }
    let id = registry::register(PoolBounds {
        nodes: nodes as i64,
        node_cap,
        arena_base,
        arena_bytes,
    })?;
    // SAFETY: the caller's contract.
    let mut t: CheckedTree = unsafe { Tree::from_raw(tree, nodes, node_cap, arena_bytes) };
    t.init(id);
    Ok(id)
}

/// Unregisters the pool `tree` belongs to and clears its magic. Returns its bounds.
///
/// # Safety
/// As for [`alloc`].
pub unsafe fn release(tree: *mut i64, nodes: *mut i64) -> TreeResult<PoolBounds> {
    // SAFETY: the caller's contract.
    let _ = unsafe { open(tree, nodes)? };
    // SAFETY: `open` checked the pointer; H_POOL_ID/H_MAGIC < HEADER_WORDS.
    let id = unsafe { tree.add(H_POOL_ID).read() };
    let b = registry::unregister(id)?;
    unsafe { tree.add(H_MAGIC).write(!MAGIC) };
    Ok(b)
}

/// Checked first-fit alloc; zero-fills the span if `zero_fill` and the pool registered its arena.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words
/// (any contents); `nodes` is only used if it is the registered node array.
#[inline]
pub unsafe fn alloc(
    tree: *mut i64,
    nodes: *mut i64,
    bytes: i64,
    zero_fill: bool,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let (t, b) = unsafe { open(tree, nodes)? };
    let off = with_scratch(|p| t.alloc(p, bytes))?;
    if zero_fill {
        zero(&b, off, super::tree::round8(bytes));
    }
    Ok(off)
}

/// Checked free.
///
/// # Safety
/// As for [`alloc`].
#[inline]
pub unsafe fn free(tree: *mut i64, nodes: *mut i64, off: i64, bytes: i64) -> TreeResult<()> {
    // SAFETY: the caller's contract.
    let (t, _) = unsafe { open(tree, nodes)? };
    with_scratch(|p| t.free_span(p, off, bytes))
}

/// Checked in-place resize (see `Tree::resize`); zero-fills growth if `zero_fill`.
///
/// # Safety
/// As for [`alloc`].
#[inline]
pub unsafe fn resize(
    tree: *mut i64,
    nodes: *mut i64,
    off: i64,
    old: i64,
    new: i64,
    zero_fill: bool,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let (t, b) = unsafe { open(tree, nodes)? };
    let r = with_scratch(|p| t.resize(p, off, old, new))?;
    if zero_fill && new > old {
        let (o, n) = (super::tree::round8(old), super::tree::round8(new));
        zero(&b, off + o, n - o);
    }
    Ok(r)
}
