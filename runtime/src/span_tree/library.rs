//! The library's entry points: the bodies of the `tern_span_*` externs. A
//! library pool's tree has two copies: the runtime's (header and node array
//! in runtime memory, found through the [`registry`]), which the tree code
//! reads and writes, and the program's (`Pool.tree`, `Pool.nodes`), word for
//! word the same after every call but where the program wrote into it. Each
//! call reads one word of program memory, the pool id in the header (at
//! any address but null), to find the pool, and runs the tree code over
//! the runtime's copy (the node array's address the externs take is not
//! read: the registered one is the pool's): the `Shared` instantiation
//! for a pool [`create`] made (`slice_pool`'s), whose program node array
//! is a copy-on-write view of the runtime's pages
//! (`crate::memory::shared_pages`), so that only the header is written
//! twice; the `Mirrored` one, out of line, for a pool [`init`]
//! registered over caller-provided memory, every word written twice. The
//! three tree operations serve a plain pool (a `Shared` one, not sanitized,
//! with an arena: [`registry::find_plain`]) on a hot path and every other
//! call on a general one, out of line, which looks the pool up in full. What
//! the program writes into its copy is never read back: it changes no
//! answer. Only `finish` and `reset` look at the program's header, and
//! refuse one that differs from the runtime's (`STALE_POOL`: a stale copy of
//! a `Pool`).
//!
//! Spans are named by **address** on this side: an address is turned into an
//! offset against the registered arena base (never a base the program could
//! write), and every address returned lies inside the registered arena.
//!
//! Every pool has a boundary record ([`super::extents`]) the runtime reserves
//! at [`init`] and finds through the registry: frees and resizes must name
//! exactly one live allocation (`STALE_FREE`, `STALE_RESIZE` otherwise).

use std::sync::atomic::{AtomicI64, Ordering};

use super::append_window::AppendWindow;
use super::error::{BAD_POOL, BAD_SIZE, LEAKED, OUTSIDE_ARENA, STALE_POOL};
use super::extents::{Extents, Record};
use super::finger::Path;
use super::layout::{self, H_MAGIC, H_POOL_ID, HEADER_WORDS, MAGIC, Word};
use super::registry::{self, PoolBounds, Slot};
use super::scan::Portable;
use super::scan::Simd;
use super::tree::{MAX_ARENA_BYTES, Mem, Outcome, Raw, TreeResult, refuse};
use super::validate::{Mirrored, Shared, Validate};

use crate::memory::{Fill, Reservation, zero_fill};
use crate::sanitize::{self, ADDR_MASK};

/// Where the node array of the runtime's copy of a pool's tree starts,
/// in bytes from its header: a page past it, so that the program's view of
/// a `slice_pool` node array can map the runtime's pages from a page
/// boundary of the file (`crate::memory::shared_pages`).
pub const SHADOW_NODES_AT: usize = 4096;
const _: () = assert!(HEADER_WORDS * 8 <= SHADOW_NODES_AT);

/// The boundary record of live pool `id` (for the library `SpanPool`s).
pub(crate) fn extents_of(id: i64) -> TreeResult<Extents> {
    Ok(extents(registry::slot(id)?))
}

/// The finger of a registered pool (`super::finger`).
///
/// # Safety
/// No other reference to it may be live: pools are used by one thread at a
/// time, and no caller holds the reference across another call.
#[inline(always)]
unsafe fn finger<'a>(b: &Slot) -> &'a mut Path {
    // SAFETY: `init` registered the address of a `Path` that lives until
    // the pool is unregistered; the caller's contract for exclusivity.
    unsafe { &mut *(b.finger() as *mut Path) }
}

/// Settles the pool's append window, if one is open (`super::append_window`):
/// every operation but the window's own appends then finds the tree and
/// the boundary record as the appends left them. One test of a word in the
/// finger's memory when none is.
#[inline(always)]
fn settle_window(b: &Slot, p: &mut Path) {
    if p.window.is_open() {
        p.settle_window(&extents(b));
    }
}

/// The boundary record of a registered pool.
#[inline(always)]
fn extents(b: &Slot) -> Extents {
    extents_in(b.record())
}

/// The boundary record whose parts a registration holds.
#[inline(always)]
fn extents_in(record: [i64; 2]) -> Extents {
    // SAFETY: `init` registered the parts of a record sized for the arena,
    // which lives until the pool is unregistered.
    unsafe { Extents::from_parts(record) }
}

/// The view of registered pool `b`'s tree that the operations use: the
/// runtime's copy, shown to the program through `tree` and the registered
/// node array as `V` says (the instantiation `b.mirrors_nodes()` names).
/// Made apart from the lookup, so that the operations make their `Mem` straight from it:
/// built inside the lookup's result and then turned into one, the view
/// was stored on the stack and copied to another place there (four vector
/// moves and a reload a call: about a tenth of the library's time on the
/// recorded traces, most likely because its 16-byte loads waited for the
/// narrower stores just made; docs/benchmarks.md, "Thirty-fourth pass").
///
/// # Safety
/// `b` is the registration of the pool whose header is at `tree`
/// (`registration`).
#[inline(always)]
unsafe fn view<V: Validate>(b: &Slot, tree: *mut i64) -> Raw<V> {
    // Read only where the tree writes it: a load of an atomic is never
    // dropped, even unused (one instruction a call).
    let nodes = if V::MIRROR_NODES {
        b.nodes() as *mut Word
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: the node array's address and capacity come from the registry,
    // which `init` filled from a reservation of `node_cap * node_words`
    // words, and so does the runtime's copy (`shadow_of`).
    unsafe { Raw::mirrored(shadow_of(b), (tree, nodes), b.node_cap(), b.arena_bytes()) }
}

/// The runtime's copy of a registered pool's tree: its header and node array.
#[inline(always)]
fn shadow_of(b: &Slot) -> (*mut i64, *mut Word) {
    shadow_at(b.shadow() as *mut u8)
}

/// The header and node array of the runtime's copy of a tree whose
/// reservation starts at `base`.
#[inline(always)]
fn shadow_at(base: *mut u8) -> (*mut i64, *mut Word) {
    (base.cast(), base.wrapping_add(SHADOW_NODES_AT).cast())
}

/// Whether the program's header at `tree` says what the runtime's copy
/// says, word for word: what `finish` and `reset` ask of a header before
/// they act (a stale copy of a `Pool` is not the pool).
///
/// # Safety
/// `tree` must be valid for reads of `HEADER_WORDS` words (`registration`
/// checked it).
unsafe fn header_is_current(tree: *mut i64, b: &Slot) -> bool {
    let (shadow, _) = shadow_of(b);
    // SAFETY: the caller's contract; the shadow's header is HEADER_WORDS long.
    (0..HEADER_WORDS).all(|i| unsafe { header_word(tree, i) == shadow.add(i).read() })
}

/// Word `i` of the program's header at `tree`. A header may lie at any
/// address but null (the externs take the address the caller passes; a
/// Tern program's is always aligned), so its words are read and written
/// unaligned: on x86-64 the same instructions, and no test of the address.
///
/// # Safety
/// `tree` must be valid for reads of `HEADER_WORDS` words; `i < HEADER_WORDS`.
#[inline(always)]
unsafe fn header_word(tree: *mut i64, i: usize) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { tree.add(i).read_unaligned() }
}

/// The registration of the pool whose id the header at `tree` carries:
/// what every operation looks up but on its hot path ([`plain_pool`]).
/// The node array the caller passes plays no part: the registered one is
/// the one the tree's writes go to, and none of the program's is read.
///
/// # Safety
/// `tree` must be null or valid for reads of `HEADER_WORDS` words (any
/// contents, any alignment).
#[inline(always)]
unsafe fn registration(tree: *mut i64) -> TreeResult<&'static Slot> {
    if tree.is_null() {
        return Err(BAD_POOL);
    }
    // SAFETY: the caller's contract; the word index is a constant below HEADER_WORDS.
    registry::slot(unsafe { header_word(tree, H_POOL_ID) })
}

/// The registration of the pool `tree` belongs to when a call takes the
/// hot path: the pool is plain ([`registry::find_plain`]). `None` for any
/// other call, which the general path (`*_general`) then looks up again
/// with [`registration`] and answers, refused or not. A null test, the
/// id's load and the registry's compares (docs/benchmarks.md,
/// "Thirty-ninth pass" and "Forty-second pass").
///
/// # Safety
/// As for [`registration`].
#[inline(always)]
unsafe fn plain_pool(tree: *mut i64) -> Option<&'static Slot> {
    if tree.is_null() {
        return None;
    }
    // SAFETY: the caller's contract; the word index is a constant below HEADER_WORDS.
    registry::find_plain(unsafe { header_word(tree, H_POOL_ID) })
}

/// Zero-fills `[off, end)` of the arena, when the pool registered its base,
/// except what lies at or past `fresh`, the pool's high-water mark before the
/// call: no allocation ever reached there, so it is still the zero pages the
/// OS gave the reservation (see `SpanPool::zero_new`; the runtime writes no
/// other arena bytes, and the program only those of its live slices).
/// `PLAIN`: `b` is plain ([`registry::find_plain`]), so it has an arena.
#[inline(always)]
fn zero_new<const PLAIN: bool>(b: &Slot, off: i64, end: i64, fresh: i64, fill: Fill) {
    let bytes = end.min(fresh) - off;
    if (PLAIN || b.arena_base() != 0) && bytes > 0 {
        // SAFETY: the tree returns only spans inside the registered arena
        // (it reads only the runtime's copy, made for the registered size).
        unsafe { zero_fill((b.arena_base() + off) as *mut u8, bytes as usize, fill) };
    }
}

/// Words a header needs.
pub const fn header_words() -> i64 {
    HEADER_WORDS as i64
}

/// Words (32-bit) of node array an arena of `arena_bytes` needs (worst case).
pub const fn node_array_words(arena_bytes: i64) -> i64 {
    layout::node_array_words(arena_bytes)
}

/// Initialises a library pool: writes a fresh header and root into `tree` and
/// `nodes` and registers the bounds. `arena_base` may be 0 (the runtime then never
/// writes arena bytes, so `alloc` does not zero-fill). Returns the pool id.
///
/// # Safety
/// `tree` must be valid for `HEADER_WORDS` words (8-byte aligned) and `nodes`
/// for `node_words` 32-bit words (4-byte aligned), `arena_base` (if not 0) for `arena_bytes` bytes, for as
/// long as the pool is registered.
pub unsafe fn init(
    tree: *mut i64,
    nodes: *mut Word,
    node_words: i64,
    arena_base: i64,
    arena_bytes: i64,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    unsafe { init_sanitized(tree, nodes, node_words, arena_base, arena_bytes, 0, None) }
}

/// [`init`] of a pool whose node array at `nodes` shows the pages of
/// `shared` from [`SHADOW_NODES_AT`] on (`crate::memory::shared_pages`):
/// the runtime's copy of the tree, which the tree code then writes once
/// (`SpanPool<Shared>`; [`create`] makes such pools for `slice_pool`).
///
/// # Safety
/// As for [`init`]; `shared` and `nodes` are such a pair.
pub unsafe fn init_shared(
    tree: *mut i64,
    nodes: *mut Word,
    node_words: i64,
    arena_base: i64,
    arena_bytes: i64,
    shared: Reservation,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    unsafe {
        init_sanitized(
            tree,
            nodes,
            node_words,
            arena_base,
            arena_bytes,
            0,
            Some(shared),
        )
    }
}

/// [`init`] with the sanitizer's region of the arena (the node array's is the
/// next one; see [`registry::PoolBounds::san`]) and, for a pool [`create`]
/// makes, the runtime's copy of the tree in pages `nodes` shows
/// (`shared`: the tree then writes no node word twice).
///
/// # Safety
/// As for [`init`]; `shared` maps its pages from [`SHADOW_NODES_AT`] on
/// into `nodes`.
unsafe fn init_sanitized(
    tree: *mut i64,
    nodes: *mut Word,
    node_words: i64,
    arena_base: i64,
    arena_bytes: i64,
    san: i64,
    shared: Option<Reservation>,
) -> TreeResult<i64> {
    if tree.is_null()
        || nodes.is_null()
        || !(tree as usize).is_multiple_of(8)
        || !(nodes as usize).is_multiple_of(4)
    {
        return Err(BAD_POOL);
    }
    if !(0..=MAX_ARENA_BYTES).contains(&arena_bytes) || arena_bytes % 8 != 0 {
        return Err(BAD_SIZE);
    }
    let need = layout::node_capacity(arena_bytes);
    if node_words / (layout::NODE_WORDS as i64) < need {
        return Err(BAD_SIZE);
    }
    // The tree never uses more nodes than the arena's worst case, whatever
    // the caller's array holds: the runtime's copy is sized for that many.
    let node_cap = need;
    let record = Record::new(arena_bytes)?;
    let mut finger = Box::new(Path::new());
    let mirrors_nodes = shared.is_none();
    let shadow_bytes = SHADOW_NODES_AT + node_cap as usize * layout::NODE_WORDS * 4;
    let shadow = match shared {
        Some(pages) if pages.bytes() < shadow_bytes => return Err(BAD_SIZE),
        Some(pages) => pages,
        None => Reservation::new(shadow_bytes)?,
    };
    let id = registry::register(PoolBounds {
        nodes: nodes as i64,
        node_cap,
        arena_base,
        arena_bytes,
        record: record.view().parts(),
        san,
        finger: &mut *finger as *mut Path as i64,
        shadow: shadow.base() as i64,
        mirrors_nodes,
    })?;
    let copy = shadow_at(shadow.base());
    owned().push(Owned {
        id,
        _record: record,
        finger,
        _shadow: shadow,
        memory: None,
    });
    // SAFETY: the caller's contract for the program's copy; the runtime's is
    // a reservation sized for `node_cap` nodes after its header.
    unsafe {
        if mirrors_nodes {
            Raw::<Mirrored>::mirrored(copy, (tree, nodes), node_cap, arena_bytes)
                .with::<Portable>()
                .init(id);
        } else {
            Raw::<Shared>::mirrored(copy, (tree, nodes), node_cap, arena_bytes)
                .with::<Portable>()
                .init(id);
        }
    }
    Ok(id)
}

/// Runtime memory of one registered pool, released when it is unregistered.
struct Owned {
    id: i64,
    /// The boundary record ([`init`] reserves one for every pool; the registry
    /// keeps its address).
    _record: Record,
    /// The pool's finger (the registry keeps its address).
    finger: Box<Path>,
    /// The runtime's copy of the pool's tree (the registry keeps its address).
    _shadow: Reservation,
    /// The arena and node array, when the runtime reserved them ([`create`]).
    memory: Option<(Reservation, Reservation)>,
}

/// The runtime memory of every registered pool, by pool id: released by
/// [`release`], never by the program.
static OWNED: std::sync::Mutex<Vec<Owned>> = std::sync::Mutex::new(Vec::new());

fn owned() -> std::sync::MutexGuard<'static, Vec<Owned>> {
    OWNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Releases the runtime memory of pool `id` (dropping a reservation unmaps it).
fn drop_owned(id: i64) {
    let mut owned = owned();
    if let Some(i) = owned.iter().position(|o| o.id == id) {
        // A pool released without its header (`release_by_nodes`) may
        // still have its window open: its record goes with it.
        owned[i].finger.window.forget();
        owned.swap_remove(i);
    }
}

/// Unregisters the pool whose node array is at `nodes` without reading its
/// header (which may be corrupt) and releases its runtime memory. Returns
/// whether one was registered.
pub fn release_by_nodes(nodes: *mut Word) -> bool {
    match registry::unregister_nodes(nodes as i64) {
        Some(id) => {
            drop_owned(id);
            true
        }
        None => false,
    }
}

/// Where [`create`] put a pool's memory (written to the caller's record).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolMemory {
    /// Address of the node array.
    pub nodes: i64,
    /// Its length in (32-bit) words.
    pub node_words: i64,
    /// Address of the arena.
    pub arena: i64,
}

/// Creates a library pool whose arena (`arena_bytes`, rounded down to 8, as
/// `SpanPool::new` does) and
/// worst-case node array the runtime reserves and owns: writes a fresh header
/// at `tree`, registers the bounds and returns the pool id and where the memory
/// is. [`release`] gives the memory back, so no address the program can
/// overwrite ever decides what is unmapped.
///
/// # Safety
/// `tree` must be valid for `HEADER_WORDS` writable words (8-byte aligned) for
/// as long as the pool is registered.
pub unsafe fn create(tree: *mut i64, arena_bytes: i64) -> TreeResult<(i64, PoolMemory)> {
    if !(1..=MAX_ARENA_BYTES).contains(&arena_bytes) {
        return Err(BAD_SIZE);
    }
    let arena_bytes = arena_bytes & !(layout::GRANULE - 1);
    let node_words = node_array_words(arena_bytes);
    // Both are program memory (the program holds slices of the arena and
    // `Pool.nodes`, and the library's tree trusts neither): retired, never
    // unmapped, when the pool is finished (`crate::memory`).
    let arena = Reservation::program(arena_bytes as usize)?;
    // The program's node array shows the pages of the runtime's copy of
    // the tree (`Shared`): copy-on-write, so what the program writes there
    // stays in its own copy of that page and never reaches the tree. Where
    // no memory file can be made (a sandbox that refuses `memfd_create`),
    // the node array is the program's own and every node write is made
    // twice (`Mirrored`), without append windows, whose node writes go to
    // the runtime's copy only.
    let node_bytes = node_words as usize * 4;
    let (shadow, nodes) = match crate::memory::shared_pages(SHADOW_NODES_AT, node_bytes) {
        Ok((shadow, nodes)) => (Some(shadow), nodes),
        Err(_) => (None, Reservation::program(node_bytes)?),
    };
    let shared = shadow.is_some();
    let mut memory = PoolMemory {
        nodes: nodes.base() as i64,
        node_words,
        arena: arena.base() as i64,
    };
    // Under the sanitizer the arena and the node array are regions, and the
    // program gets the node array as one tagged allocation.
    let san = if sanitize::enabled() {
        let san = sanitize::region_new(memory.arena, arena_bytes);
        let (nodes_region, tagged) = sanitize::region_whole(memory.nodes, node_words * 4);
        if san != 0 && nodes_region == san + 1 {
            memory.nodes = tagged;
            san
        } else {
            sanitize::region_end(san, std::ptr::null());
            sanitize::region_end(nodes_region, std::ptr::null());
            0
        }
    } else {
        0
    };
    // SAFETY: the caller's contract for `tree`; both reservations are sized as
    // `init` requires and live until `release` drops them.
    let id = unsafe {
        init_sanitized(
            tree,
            nodes.base().cast(),
            node_words,
            memory.arena,
            arena_bytes,
            san,
            shadow,
        )
    };
    let id = id.inspect_err(|_| {
        if san != 0 {
            sanitize::region_end(san, std::ptr::null());
            sanitize::region_end(san + 1, std::ptr::null());
        }
    })?;
    if let Some(o) = owned().iter_mut().find(|o| o.id == id) {
        o.memory = Some((arena, nodes));
        // Appends to the pool's slices may open append windows: the
        // program reaches this pool only through the externs.
        if san == 0 && shared {
            o.finger.window = AppendWindow::closed(memory.arena);
        }
    }
    Ok((id, memory))
}

/// Unregisters the pool `tree` belongs to and clears its magic; releases its
/// runtime memory (the boundary record, and the arena and node array if the
/// runtime reserved them, [`create`]). Returns its bounds.
///
/// The header must describe the tree (span count and free bytes of a valid
/// walk of it), else `STALE_POOL` and nothing changes: a stale copy of a
/// pool's header (the pool was used through another copy since) is not the
/// pool, and finishing through it would unmap memory the live copy still uses.
/// A pool whose boundary record still holds a live allocation is `LEAKED`
/// and nothing changes either: its slices stay valid, and their memory goes
/// to no later pool (a REPL session lives on after the leak is reported).
/// The record decides, not the header's totals, which the program may write.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words
/// (any contents, any alignment).
pub unsafe fn release(tree: *mut i64) -> TreeResult<PoolBounds> {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree)? };
    // SAFETY: one operation on the pool at a time.
    settle_window(b, unsafe { finger(b) });
    // SAFETY: `registration` checked the pointer.
    if !unsafe { header_is_current(tree, b) } {
        return Err(STALE_POOL);
    }
    if extents(b).any_live() {
        return Err(LEAKED);
    }
    // SAFETY: `registration` checked the pointer; H_POOL_ID/H_MAGIC < HEADER_WORDS.
    let id = unsafe { header_word(tree, H_POOL_ID) };
    let b = registry::unregister(id)?;
    FINISHED_HIGH_WATER.fetch_max(extents_in(b.record).high_water(), Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { tree.add(H_MAGIC).write_unaligned(!MAGIC) };
    if b.san != 0 {
        sanitize::region_end(b.san, std::ptr::null());
        sanitize::region_end(b.san + 1, std::ptr::null());
    }
    drop_owned(id);
    Ok(b)
}

/// Frees every span of the pool `tree` belongs to at once, in place: the
/// tree becomes one free span over the whole arena again, the boundary
/// record forgets every allocation, and the pool keeps its id, its
/// registration and its memory (the arena's pages stay resident; every later
/// allocation is zero-filled as always). Under the sanitizer every
/// allocation of the pool ends here: a slice taken before fails its next
/// check with `its pool was reset at` the current site.
///
/// As for [`release`], the header must describe the tree, else `STALE_POOL`
/// and nothing changes. Time: a walk of the free spans (that check) and
/// clearing the record up to the arena's high-water mark; independent of how
/// many slices are live.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words
/// (any contents, any alignment).
pub unsafe fn reset(tree: *mut i64) -> TreeResult<()> {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree)? };
    if b.mirrors_nodes() {
        // SAFETY: as above.
        unsafe { reset_with::<Mirrored>(b, tree) }
    } else {
        // SAFETY: as above.
        unsafe { reset_with::<Shared>(b, tree) }
    }
}

/// [`reset`] of pool `b` through the instantiation its registration names.
///
/// # Safety
/// As for [`reset`]; `b` is the registration `registration` found for
/// `tree`.
unsafe fn reset_with<V: Validate>(b: &Slot, tree: *mut i64) -> TreeResult<()> {
    // SAFETY: the caller's contract.
    let t = unsafe { view::<V>(b, tree) }.with::<Portable>();
    // SAFETY: one operation on the pool at a time.
    settle_window(b, unsafe { finger(b) });
    // SAFETY: `registration` checked the pointer.
    if !unsafe { header_is_current(tree, b) } {
        return Err(STALE_POOL);
    }
    let ext = extents(b);
    if b.san() != 0 {
        sanitize::region_reset(b.san(), ext.high_water(), std::ptr::null());
    }
    ext.clear();
    // SAFETY: one operation on the pool at a time.
    unsafe { finger(b) }.forget();
    // SAFETY: `open` checked the pointer; H_POOL_ID < HEADER_WORDS.
    t.init(unsafe { header_word(tree, H_POOL_ID) });
    Ok(())
}

/// The largest arena high-water mark of the library pools finished so far;
/// -1 while none was.
static FINISHED_HIGH_WATER: AtomicI64 = AtomicI64::new(-1);

/// The largest arena high-water mark of any library pool, finished or live
/// (for `crate::stats`); `None` when no library pool was made.
pub fn high_water() -> Option<i64> {
    let live = registry::live()
        .iter()
        .map(|b| {
            // SAFETY: the registration's finger lives while it is registered;
            // read at exit, when no operation runs.
            let w = unsafe { &*(b.finger as *const Path) }.window;
            let high = extents_in(b.record).high_water();
            if w.is_open() {
                high.max(w.end() - b.arena_base)
            } else {
                high
            }
        })
        .max();
    let finished = FINISHED_HIGH_WATER.load(Ordering::Relaxed);
    live.max((finished >= 0).then_some(finished))
}

/// The offset of `addr` in pool `b`'s arena, or `OUTSIDE_ARENA`. (The tree
/// validates the span itself: alignment, extent, overlap.)
#[inline(always)]
fn offset_in(b: &Slot, addr: i64) -> TreeResult<i64> {
    match addr.checked_sub(b.arena_base()) {
        Some(off) if (0..=b.arena_bytes()).contains(&off) => Ok(off),
        _ => Err(OUTSIDE_ARENA),
    }
}

/// First-fit alloc; returns the span's address. Zero-fills the span if
/// `zero_fill` and the pool registered its arena.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words
/// (any contents, any alignment).
#[inline(always)]
pub(crate) unsafe fn alloc_in<S: Simd>(
    tree: *mut i64,
    bytes: i64,
    zero_fill: bool,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let Some(b) = (unsafe { plain_pool(tree) }) else {
        // SAFETY: as above.
        return unsafe { alloc_general(tree, bytes, zero_fill) };
    };
    // SAFETY: as above.
    unsafe { alloc_with::<S, Shared, true>(b, tree, bytes, zero_fill) }
}

/// [`alloc_in`] when [`plain_pool`] finds no pool: a pool over
/// caller-provided memory (`tern_span_init`: tests and
/// `SpanPool<Mirrored>`), a sanitized one, or a call the lookup refuses,
/// out of the extern's way, with the portable scans (their AVX2 copies
/// made each executable 170 KB larger for 4 % fewer instructions under
/// `--sanitize`: docs/benchmarks.md, "Thirty-ninth pass"). (The three
/// operations' dispatches are written out: one generic dispatch over an
/// operation trait, or one cold function taking a closure for the three,
/// cost the matrix 1.6 % more instructions, docs/benchmarks.md,
/// "Thirty-eighth pass".)
///
/// # Safety
/// As for [`alloc_with`].
#[cold]
#[inline(never)]
unsafe fn alloc_general(tree: *mut i64, bytes: i64, zero_fill: bool) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree)? };
    // SAFETY: as above.
    unsafe {
        if b.mirrors_nodes() {
            alloc_with::<Portable, Mirrored, false>(b, tree, bytes, zero_fill)
        } else {
            alloc_with::<Portable, Shared, false>(b, tree, bytes, zero_fill)
        }
    }
}

/// [`alloc_in`] on pool `b` through instantiation `V`; `PLAIN` when `b`
/// is plain ([`registry::find_plain`]: its tests of the sanitizer and
/// the arena are then constants).
///
/// # Safety
/// As for [`alloc_in`]; `b` is the registration `registration` found for
/// `tree`, and `V` the instantiation it names.
#[inline(always)]
unsafe fn alloc_with<S: Simd, V: Validate, const PLAIN: bool>(
    b: &Slot,
    tree: *mut i64,
    bytes: i64,
    zero_fill: bool,
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let t = unsafe { view::<V>(b, tree) }.with::<S>();
    // SAFETY: one operation on the pool at a time.
    let f = unsafe { finger(b) };
    settle_window(b, f);
    let ext = extents(b);
    let fresh = ext.high_water();
    let off = t.alloc_tracked(f, &ext, bytes)?;
    if zero_fill {
        zero_new::<PLAIN>(
            b,
            off,
            off + super::tree::round8(bytes),
            fresh,
            Fill::Allocation,
        );
    }
    if !PLAIN && b.san() != 0 {
        return Ok(sanitize::tag(b.san(), b.arena_base() + off, bytes));
    }
    Ok(b.arena_base() + off)
}

/// Free of the span at address `addr`.
///
/// # Safety
/// As for [`alloc_in`].
#[inline(always)]
pub(crate) unsafe fn free_in<S: Simd>(tree: *mut i64, addr: i64, bytes: i64) -> Outcome {
    // SAFETY: the caller's contract.
    let Some(b) = (unsafe { plain_pool(tree) }) else {
        // SAFETY: as above.
        return unsafe { free_general(tree, addr, bytes) };
    };
    // SAFETY: as above.
    unsafe { free_with::<S, Shared, true>(b, tree, addr, bytes) }
}

/// [`free_in`] off the hot path (see [`alloc_general`]).
///
/// # Safety
/// As for [`free_with`].
#[cold]
#[inline(never)]
unsafe fn free_general(tree: *mut i64, addr: i64, bytes: i64) -> Outcome {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree).map_err(refuse)? };
    // SAFETY: as above.
    unsafe {
        if b.mirrors_nodes() {
            free_with::<Portable, Mirrored, false>(b, tree, addr, bytes)
        } else {
            free_with::<Portable, Shared, false>(b, tree, addr, bytes)
        }
    }
}

/// [`free_in`] on pool `b` through instantiation `V` (`PLAIN` as for
/// [`alloc_with`]).
///
/// # Safety
/// As for [`alloc_with`].
#[inline(always)]
unsafe fn free_with<S: Simd, V: Validate, const PLAIN: bool>(
    b: &Slot,
    tree: *mut i64,
    addr: i64,
    bytes: i64,
) -> Outcome {
    // SAFETY: the caller's contract.
    let t = unsafe { view::<V>(b, tree) }.with::<S>();
    if !PLAIN && b.san() != 0 {
        // SAFETY: as above. (A sanitized pool opens no append window.)
        return unsafe { free_sanitized::<S, V>(t, b, addr, bytes) };
    }
    // SAFETY: one operation on the pool at a time.
    let f = unsafe { finger(b) };
    settle_window(b, f);
    let off = offset_in(b, addr).map_err(refuse)?;
    let ext = extents(b);
    t.free_tracked(f, &ext, off, bytes)
}

/// [`free_in`] of a sanitized pool: the address may carry a tag, which must still
/// name the span's allocation (else the run ends); the freed span's shadow is
/// cleared.
///
/// # Safety
/// As for [`alloc_in`].
#[cold]
unsafe fn free_sanitized<S: Simd, V: Validate>(
    t: Mem<V, S>,
    b: &Slot,
    addr: i64,
    bytes: i64,
) -> Outcome {
    let addr = sanitize::check(addr, bytes, std::ptr::null());
    let off = offset_in(b, addr).map_err(refuse)?;
    let ext = extents(b);
    // SAFETY: one operation on the pool at a time.
    t.free_tracked(unsafe { finger(b) }, &ext, off, bytes)?;
    sanitize::release(b.san(), addr, bytes, std::ptr::null());
    Ok(())
}

/// Resize of the span at `addr` from `old` to `new` bytes (both exact
/// byte counts; the tree rounds them): shrink or grow in place when the
/// placement contract allows, otherwise place the move in the same call (first
/// fit for `new` while the old span is held, then free the old span). Returns
/// the span's address: `addr` in place, another one after a move, in which case
/// the caller copies its `min(old, new)` used bytes from `addr` (the runtime
/// never writes freed bytes, and the new span does not overlap the old).
/// With `zero_fill`, the bytes past `old` of the span's new extent are zeroed.
/// Without `place_move`, a span that must move is `MUST_MOVE` and nothing
/// changes (the in-place half alone, for tests of the contract). A growth
/// through the growth hint may open the pool's append window
/// (`Mem::grow_hinted`, in the pools [`create`] made), whose growths the
/// extern answers before calling this ([`window_append`]).
///
/// # Safety
/// As for [`alloc_in`].
#[inline(always)]
pub(crate) unsafe fn resize_in<S: Simd>(
    tree: *mut i64,
    addr: i64,
    sizes: (i64, i64),
    zero_fill: bool,
    place_move: bool,
) -> TreeResult<i64> {
    let how = (zero_fill, place_move);
    // SAFETY: the caller's contract.
    let Some(b) = (unsafe { plain_pool(tree) }) else {
        // SAFETY: as above.
        return unsafe { resize_general(tree, addr, sizes, how) };
    };
    // SAFETY: as above.
    unsafe { resize_with::<S, Shared, true>(b, tree, addr, sizes, how) }
}

/// [`resize_in`] off the hot path (see [`alloc_general`]).
///
/// # Safety
/// As for [`alloc_with`].
#[cold]
#[inline(never)]
unsafe fn resize_general(
    tree: *mut i64,
    addr: i64,
    sizes: (i64, i64),
    how: (bool, bool),
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree)? };
    // SAFETY: as above.
    unsafe {
        if b.mirrors_nodes() {
            resize_with::<Portable, Mirrored, false>(b, tree, addr, sizes, how)
        } else {
            resize_with::<Portable, Shared, false>(b, tree, addr, sizes, how)
        }
    }
}

/// [`resize_in`] on pool `b` through instantiation `V`
/// (`how`: `zero_fill`, `place_move`; `PLAIN` as for [`alloc_with`]).
///
/// # Safety
/// As for [`alloc_with`].
#[inline(always)]
unsafe fn resize_with<S: Simd, V: Validate, const PLAIN: bool>(
    b: &Slot,
    tree: *mut i64,
    addr: i64,
    (old, new): (i64, i64),
    (zero_fill, place_move): (bool, bool),
) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let t = unsafe { view::<V>(b, tree) }.with::<S>();
    let addr = if !PLAIN && b.san() != 0 {
        sanitize::check(addr, old, std::ptr::null())
    } else {
        addr
    };
    let off = offset_in(b, addr)?;
    let ext = extents(b);
    let fresh = ext.high_water();
    // SAFETY: one operation on the pool at a time.
    let p = unsafe { finger(b) };
    // No window is open on this pool: the extern's `window_append`
    // answered or settled it, and no other caller opens one.
    debug_assert!(!p.window.is_open());
    let to = if place_move {
        t.resize_or_move(p, &ext, off, old, new)
    } else {
        t.resize_tracked(p, &ext, off, old, new)
    }?;
    // From `old`, not its rounding: a shrink inside the last 8-byte granule
    // left stale bytes that growing must clear again. A move only grows.
    if zero_fill && new > old {
        zero_new::<PLAIN>(
            b,
            to + old,
            to + super::tree::round8(new),
            fresh,
            Fill::Growth,
        );
    }
    if !PLAIN && b.san() != 0 {
        let at = b.arena_base() + to;
        return Ok(sanitize::retag(
            b.san(),
            addr,
            old,
            at,
            new,
            std::ptr::null(),
        ));
    }
    Ok(b.arena_base() + to)
}

/// A growth of the slice at `addr` answered from its pool's open append
/// window (`super::append_window`), the `tern_span_resize` extern's first test:
/// the pool looked up as the hot paths do ([`plain_pool`]), then the
/// window's compares. Returns the bytes to
/// zero-fill (`AppendWindow::append`; the answer is `addr`). `None` for any
/// other call, which then takes the library's tree after
/// [`settle_window_of`].
///
/// # Safety
/// As for `alloc_in`.
#[inline(always)]
pub unsafe fn window_append(tree: *mut i64, addr: i64, sizes: (i64, i64)) -> Option<(i64, i64)> {
    // Only a plain pool opens a window.
    // SAFETY: the caller's contract.
    let b = unsafe { plain_pool(tree) }?;
    // SAFETY: one operation on the pool at a time.
    let p = unsafe { finger(b) };
    if !p.window.is_open() {
        return None;
    }
    // SAFETY: the window is open on this pool, which `create` made with an
    // arena (`AppendWindow::may_open`), its node array sharing the
    // runtime's pages; `registration` checked `tree`.
    unsafe { p.window.append(tree, addr, sizes) }
}

/// Settles the append window of the pool `tree` names, if it has one
/// open: what a `tern_span_resize` call the window does not answer does
/// before the library's tree (whose own lookup then refuses a bad pool).
///
/// # Safety
/// As for `alloc_in`.
pub unsafe fn settle_window_of(tree: *mut i64) {
    // SAFETY: the caller's contract.
    if let Ok(b) = unsafe { registration(tree) } {
        // SAFETY: one operation on the pool at a time.
        settle_window(b, unsafe { finger(b) });
    }
}

/// The size in bytes of the live allocation that starts at address `addr` of
/// the pool (0 when none starts there), from the pool's boundary record: what
/// the library's message for a stale-span error names.
///
/// # Safety
/// `tree` must be null or valid for reads and writes of `HEADER_WORDS` words
/// (any contents, any alignment).
pub unsafe fn live_bytes(tree: *mut i64, addr: i64) -> TreeResult<i64> {
    // SAFETY: the caller's contract.
    let b = unsafe { registration(tree)? };
    Ok(live_at(b, offset_in(b, addr & ADDR_MASK)?))
}

/// The size in bytes of the live allocation that starts at byte `off` of
/// registered pool `b`'s arena (0 when none does, or `off` is no granule of
/// the arena).
fn live_at(b: &Slot, off: i64) -> i64 {
    // SAFETY: one operation on the pool at a time.
    settle_window(b, unsafe { finger(b) });
    if off < 0 || off % 8 != 0 || off >= b.arena_bytes() {
        return 0;
    }
    extents(b).live_bytes_at(off)
}

/// The message for error `code` of the call on the pool at `tree`
/// that has just failed on this thread: for a stale span
/// ([`super::error::STALE_FREE`], `STALE_RESIZE`) it names the span the
/// call named, as the tree noted it when it refused it
/// ([`super::error::last_refused`]), and the live allocation the record has
/// at its offset ([`super::error::stale_message`]); any other code gets
/// its plain message.
///
/// # Safety
/// As for [`live_bytes`].
pub unsafe fn failure_message(tree: *mut i64, code: i64) -> String {
    let (off, claimed) = super::error::last_refused();
    // SAFETY: the caller's contract.
    let actual = match unsafe { registration(tree) } {
        Ok(b) => live_at(b, off),
        Err(_) => 0,
    };
    super::error::stale_message(code, off, claimed, actual)
}
