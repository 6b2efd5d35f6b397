//! The runtime-side registry of library pools: the authoritative node-array
//! address, node capacity, arena address and arena size of every live library
//! pool, keyed by the pool id its header carries. The library externs trust no
//! bound that lives in program memory; they look the bounds up here.
//!
//! Lookups are lock-free (one acquire load plus relaxed loads); registration and
//! release take a lock.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicPtr, Ordering};

use super::error::{BAD_POOL, TOO_MANY_POOLS};

/// Maximum number of library pools alive at once.
pub const MAX_POOLS: usize = 4096;
/// Pool ids are `slot + generation * ID_GENERATION` with a generation of at
/// least 1, so every id is positive, its low bits name its slot, and a stale
/// id never matches a reused slot.
const ID_GENERATION: i64 = 1 << 16;
const _: () = assert!(MAX_POOLS.is_power_of_two() && MAX_POOLS as i64 <= ID_GENERATION);
const _: () = assert!(size_of::<Slot>() == 128);

/// Authoritative bounds of one registered pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolBounds {
    /// Address of the node array.
    pub nodes: i64,
    /// Node capacity of the node array.
    pub node_cap: i64,
    /// Address of the arena (0: the runtime never touches arena bytes).
    pub arena_base: i64,
    /// Arena size in bytes.
    pub arena_bytes: i64,
    /// The pool's boundary record ([`super::extents`]), which the runtime
    /// reserved for it: the addresses of its size map and large table (kept
    /// apart so a lookup computes nothing).
    pub record: [i64; 2],
    /// The sanitizer's region id of the arena, 0 when the pool is not
    /// sanitized (see `crate::sanitize`); the node array's is the next one.
    pub san: i64,
    /// The address of the pool's finger, a [`super::finger::Path`] (runtime
    /// memory, owned with the pool's registration; used by one thread at a
    /// time, as the pool is).
    pub finger: i64,
    /// The address of the runtime's copy of the pool's tree: its header
    /// (`HEADER_WORDS` words), then its node array at
    /// [`super::library::SHADOW_NODES_AT`] bytes (runtime memory, owned with
    /// the registration).
    pub shadow: i64,
    /// Whether the tree's node writes go to the program's node array as
    /// well (a pool over caller-provided memory, `super::Mirrored`), rather
    /// than reaching it through shared pages (`super::Shared`).
    pub mirrors_nodes: bool,
}

/// One registration, read in place by the library entry points (a copy of
/// its bounds per call cost more than the tree's fast path: see
/// [`slot`]). 128 bytes, so a slot's address is its index shifted (one
/// instruction a lookup less than for its 96 bytes of fields), and no slot
/// spans more than two cache lines; the registry is zeros, in `.bss`, and
/// the pages of slots never used are never touched.
#[repr(align(128))]
pub struct Slot {
    id: AtomicI64,
    nodes: AtomicI64,
    node_cap: AtomicI64,
    arena_base: AtomicI64,
    arena_bytes: AtomicI64,
    record: [AtomicI64; 2],
    san: AtomicI64,
    finger: AtomicI64,
    shadow: AtomicI64,
    mirrors_nodes: AtomicI64,
    /// The pool's id when it is plain (its operations take the library's
    /// hot path, [`find_plain`]), else 0: derived at registration, never a
    /// field the caller chooses; one word, so that one compare finds a
    /// plain pool.
    plain_id: AtomicI64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    id: AtomicI64::new(0),
    nodes: AtomicI64::new(0),
    node_cap: AtomicI64::new(0),
    arena_base: AtomicI64::new(0),
    arena_bytes: AtomicI64::new(0),
    record: [AtomicI64::new(0), AtomicI64::new(0)],
    san: AtomicI64::new(0),
    finger: AtomicI64::new(0),
    shadow: AtomicI64::new(0),
    mirrors_nodes: AtomicI64::new(0),
    plain_id: AtomicI64::new(0),
};

static SLOTS: [Slot; MAX_POOLS] = [EMPTY; MAX_POOLS];
/// Serialises registration and release; holds the next generation.
static WRITER: Mutex<i64> = Mutex::new(1);

/// Registers a pool and returns its id (> 0), or [`TOO_MANY_POOLS`].
pub fn register(b: PoolBounds) -> Result<i64, i64> {
    let mut gen_guard = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    for (i, s) in SLOTS.iter().enumerate() {
        if s.id.load(Ordering::Relaxed) == 0 {
            let generation = 1 + (*gen_guard - 1) % (1 << 40);
            let id = i as i64 + generation * ID_GENERATION;
            *gen_guard += 1;
            s.nodes.store(b.nodes, Ordering::Relaxed);
            s.node_cap.store(b.node_cap, Ordering::Relaxed);
            s.arena_base.store(b.arena_base, Ordering::Relaxed);
            s.arena_bytes.store(b.arena_bytes, Ordering::Relaxed);
            for (w, v) in s.record.iter().zip(b.record) {
                w.store(v, Ordering::Relaxed);
            }
            s.san.store(b.san, Ordering::Relaxed);
            s.finger.store(b.finger, Ordering::Relaxed);
            s.shadow.store(b.shadow, Ordering::Relaxed);
            s.mirrors_nodes
                .store(i64::from(b.mirrors_nodes), Ordering::Relaxed);
            s.id.store(id, Ordering::Release);
            // Last, as `find_plain`'s reader expects: finding it, the
            // reader sees every field above.
            let plain = !b.mirrors_nodes && b.san == 0 && b.arena_base != 0;
            s.plain_id
                .store(if plain { id } else { 0 }, Ordering::Release);
            return Ok(id);
        }
    }
    Err(TOO_MANY_POOLS)
}

/// Forgets pool `id`; [`BAD_POOL`] if it is not live.
pub fn unregister(id: i64) -> Result<PoolBounds, i64> {
    let _g = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    let b = lookup(id)?;
    SLOTS[slot_of(id).ok_or(BAD_POOL)?].empty();
    Ok(b)
}

/// The slot an id names: its low bits (any id then names a slot, and the
/// slot's own id says whether it is that pool's).
#[inline(always)]
fn slot_of(id: i64) -> Option<usize> {
    (id > 0).then_some(id as usize & (MAX_POOLS - 1))
}

/// The registration of live pool `id`, or [`BAD_POOL`]: its fields are read
/// when used (a library operation reads three or four of them).
#[inline(always)]
pub fn slot(id: i64) -> Result<&'static Slot, i64> {
    let s = &SLOTS[slot_of(id).ok_or(BAD_POOL)?];
    if s.id.load(Ordering::Acquire) != id {
        return Err(BAD_POOL);
    }
    Ok(s)
}

/// The registration of live pool `id` when the pool is plain (the
/// library's hot paths; see [`Slot`]'s `plain_id`), else `None`: an
/// `Option`, one register, so that the hot path carries no error code
/// beside the slot's address. A plain pool is one whose node array shares
/// the runtime's pages (not [`PoolBounds::mirrors_nodes`]), that is not
/// sanitized ([`PoolBounds::san`] is 0) and has an arena
/// ([`PoolBounds::arena_base`] is not 0): every `slice_pool` pool outside
/// `--sanitize`.
///
/// The slot the last such lookup found ([`LAST_PLAIN`]) is tried first:
/// its address is a load (two instructions), where the id's slot takes
/// four to compute. Either way the answer is the slot whose `plain_id` is `id`,
/// and `id` is positive, so no id finds an empty slot (whose `plain_id`
/// is 0).
#[inline(always)]
pub fn find_plain(id: i64) -> Option<&'static Slot> {
    if id <= 0 {
        return None;
    }
    // SAFETY: LAST_PLAIN holds the address of an element of SLOTS, always.
    let last = unsafe { &*LAST_PLAIN.load(Ordering::Relaxed) };
    if last.plain_id.load(Ordering::Acquire) == id {
        return Some(last);
    }
    let s = &SLOTS[id as usize & (MAX_POOLS - 1)];
    if s.plain_id.load(Ordering::Acquire) != id {
        return None;
    }
    LAST_PLAIN.store(std::ptr::from_ref(s).cast_mut(), Ordering::Relaxed);
    Some(s)
}

/// The slot [`find_plain`] found last: a hint, never an authority. It only
/// ever holds the address of an element of [`SLOTS`] (the first one until
/// a plain pool is found), so a hint another thread replaced, or whose
/// pool is gone, costs a miss and nothing else: the slot's own `plain_id`
/// decides, as it does for the slot an id names.
static LAST_PLAIN: AtomicPtr<Slot> = AtomicPtr::new((&raw const SLOTS).cast::<Slot>().cast_mut());

impl Slot {
    /// Makes the slot empty: no id finds it.
    fn empty(&self) {
        self.plain_id.store(0, Ordering::Relaxed);
        self.id.store(0, Ordering::Release);
    }
    /// See [`PoolBounds::nodes`].
    #[inline(always)]
    pub fn nodes(&self) -> i64 {
        self.nodes.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::node_cap`].
    #[inline(always)]
    pub fn node_cap(&self) -> i64 {
        self.node_cap.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::arena_base`].
    #[inline(always)]
    pub fn arena_base(&self) -> i64 {
        self.arena_base.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::arena_bytes`].
    #[inline(always)]
    pub fn arena_bytes(&self) -> i64 {
        self.arena_bytes.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::record`].
    #[inline(always)]
    pub fn record(&self) -> [i64; 2] {
        [
            self.record[0].load(Ordering::Relaxed),
            self.record[1].load(Ordering::Relaxed),
        ]
    }
    /// See [`PoolBounds::san`].
    #[inline(always)]
    pub fn san(&self) -> i64 {
        self.san.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::finger`].
    #[inline(always)]
    pub fn finger(&self) -> i64 {
        self.finger.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::shadow`].
    #[inline(always)]
    pub fn shadow(&self) -> i64 {
        self.shadow.load(Ordering::Relaxed)
    }
    /// See [`PoolBounds::mirrors_nodes`].
    #[inline(always)]
    pub fn mirrors_nodes(&self) -> bool {
        self.mirrors_nodes.load(Ordering::Relaxed) != 0
    }
}

/// The bounds of live pool `id`, or [`BAD_POOL`].
#[inline(always)]
pub fn lookup(id: i64) -> Result<PoolBounds, i64> {
    let s = slot(id)?;
    Ok(PoolBounds {
        nodes: s.nodes.load(Ordering::Relaxed),
        node_cap: s.node_cap.load(Ordering::Relaxed),
        arena_base: s.arena_base.load(Ordering::Relaxed),
        arena_bytes: s.arena_bytes.load(Ordering::Relaxed),
        record: s.record(),
        san: s.san.load(Ordering::Relaxed),
        finger: s.finger.load(Ordering::Relaxed),
        shadow: s.shadow.load(Ordering::Relaxed),
        mirrors_nodes: s.mirrors_nodes(),
    })
}

/// The bounds of every live pool (for reports at exit).
pub fn live() -> Vec<PoolBounds> {
    SLOTS
        .iter()
        .filter_map(|s| lookup(s.id.load(Ordering::Acquire)).ok())
        .collect()
}

/// Forgets the pool whose node array is at `nodes` (used when a pool's header was
/// overwritten and its id can no longer be read). Returns its id, if one was found.
pub fn unregister_nodes(nodes: i64) -> Option<i64> {
    let _g = WRITER.lock().unwrap_or_else(|e| e.into_inner());
    for s in SLOTS.iter() {
        let id = s.id.load(Ordering::Relaxed);
        if id != 0 && s.nodes.load(Ordering::Relaxed) == nodes {
            s.empty();
            return Some(id);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(nodes: i64) -> PoolBounds {
        PoolBounds {
            nodes,
            node_cap: 1,
            arena_base: 0,
            arena_bytes: 8,
            record: [0, 0],
            san: 0,
            finger: 0,
            shadow: 0,
            mirrors_nodes: true,
        }
    }

    /// No id a program could write into a header finds an empty slot: not 0,
    /// not a negative, not a slot's index, not a pool's id once the pool is
    /// gone.
    #[test]
    fn only_a_live_pools_id_finds_its_slot() {
        let id = register(bounds(0x1000)).unwrap();
        assert!(id > 0);
        assert_eq!(slot(id).map(Slot::nodes), Ok(0x1000));
        for other in [0, -1, i64::MIN, i64::MAX, id - 1, id + 1, id ^ 1] {
            assert_eq!(slot(other).err(), Some(BAD_POOL), "{other}");
        }
        for i in 0..MAX_POOLS as i64 {
            // Slots other tests hold may be live; none holds these ids.
            assert_eq!(slot(i).err(), Some(BAD_POOL), "{i}");
        }
        assert_eq!(unregister(id).map(|b| b.nodes), Ok(0x1000));
        assert_eq!(slot(id).err(), Some(BAD_POOL));
        assert_eq!(unregister(id).err(), Some(BAD_POOL));
        // The slot is found empty again and reused under a new id.
        let again = register(bounds(0x2000)).unwrap();
        assert_ne!(again, id);
        assert_eq!(unregister_nodes(0x2000), Some(again));
        assert_eq!(slot(again).err(), Some(BAD_POOL));
    }

    /// The hot path's lookup finds a live plain pool by its own id alone:
    /// not a pool that mirrors its nodes, is sanitized or has no arena
    /// (those take the general path), no other id, 0 and the slot's index
    /// included, and not the pool's id once the pool is gone, though its
    /// slot keeps the node array's address.
    #[test]
    fn only_a_live_plain_pools_id_finds_it_on_the_hot_path() {
        let plain = PoolBounds {
            mirrors_nodes: false,
            arena_base: 0x10_0000,
            ..bounds(0x3000)
        };
        let id = register(plain).unwrap();
        assert_eq!(find_plain(id).map(Slot::nodes), Some(0x3000));
        let index = id & (MAX_POOLS as i64 - 1);
        for other in [0, -1, i64::MIN, i64::MAX, id - 1, id + 1, id ^ 1, index] {
            assert!(find_plain(other).is_none(), "{other}");
        }
        for kind in [
            bounds(0x4000),
            PoolBounds { san: 7, ..plain },
            PoolBounds {
                arena_base: 0,
                ..plain
            },
        ] {
            let other = register(kind).unwrap();
            assert!(slot(other).is_ok());
            assert!(find_plain(other).is_none(), "{kind:?}");
            unregister(other).unwrap();
        }
        unregister(id).unwrap();
        assert!(find_plain(id).is_none());
        assert!(find_plain(0).is_none());
        // An id whose slot is empty: the slot's own index and generation 0.
        assert!(find_plain(index).is_none());
    }

    /// The slot found last is a hint only: two plain pools looked up in
    /// turn are each found, and once the one found last is gone, neither
    /// its id nor 0 (what its empty slot's `plain_id` holds) finds it.
    #[test]
    fn the_last_plain_slot_found_is_a_hint_only() {
        let plain = |nodes| PoolBounds {
            mirrors_nodes: false,
            arena_base: 0x10_0000,
            ..bounds(nodes)
        };
        let (a, b) = (
            register(plain(0x5000)).unwrap(),
            register(plain(0x6000)).unwrap(),
        );
        for _ in 0..2 {
            assert_eq!(find_plain(a).map(Slot::nodes), Some(0x5000));
            assert_eq!(find_plain(b).map(Slot::nodes), Some(0x6000));
        }
        unregister(b).unwrap();
        for gone in [b, 0, b & (MAX_POOLS as i64 - 1)] {
            // The hint on the gone pool's slot (tests in parallel move it).
            LAST_PLAIN.store(
                std::ptr::from_ref(&SLOTS[slot_of(b).unwrap()]).cast_mut(),
                Ordering::Relaxed,
            );
            assert!(find_plain(gone).is_none(), "{gone}");
        }
        assert_eq!(find_plain(a).map(Slot::nodes), Some(0x5000));
        unregister(a).unwrap();
    }
}
