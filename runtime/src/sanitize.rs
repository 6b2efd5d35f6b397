//! The sanitizer behind `--sanitize`: use after free and use of a stale copy
//! after a moving resize, for slices of the pools, caught where they happen.
//!
//! **Tags.** While the sanitizer is on, every allocation in a sanitized pool
//! gets a 15-bit tag, carried in bits 48..62 of the slice's pointer (user-space
//! addresses fit in 47 bits, and the pointer stays positive, so a library that
//! reads negative words as error codes is not confused) and written into the
//! pool's **shadow**: one `u16` per 8-byte granule of the arena, the tag of the
//! live allocation covering it, 0 where the arena is free. Code compiled with
//! `--sanitize` checks, before every element access and subslice through a
//! tagged pointer, that the shadow of the first and last granule touched holds
//! the pointer's tag and that the bytes touched end within the allocation's
//! exact end, kept in the tag's record for the last granule's tail
//! ([`check`]), and strips the tag to access memory. A
//! freed span's shadow is cleared, a reallocated span gets a new tag, so a copy
//! of a slice kept after `free`, after a moving `resize`/`append`, or past the
//! new end of a shrunk slice (or of one grown through a shorter stale copy,
//! which lowers the end in place) no longer matches: `use of a freed slice (freed at
//! FILE:LINE:COL)`. Placement is untouched (no quarantine): a sanitized run
//! places every span where an unsanitized one does.
//!
//! **Records.** Each tag has a record: the region it belongs to, whether its
//! allocation is live, where it was freed and where it last shrank, so the
//! error names the `free`, `resize` or `append` that invalidated the slice.
//! Tags are handed out from a queue of free ones, a freed tag joining its
//! end, so a tag is reused only after every other free tag was (round robin
//! among the free) and is never one a live allocation holds: while 32,767
//! allocations are live, a new one is left untagged (unchecked) rather than
//! share a tag. A stale copy whose tag came round again onto the very same
//! granules goes unnoticed (the limit of 15 bits). (A bounded search for a
//! free tag once gave a live allocation's tag to a new one when 64 live
//! allocations in a row held the next tags: the older slice then failed its
//! checks though it was live.)
//!
//! **Regions.** The builtin pool's arena is region [`BUILTIN_REGION`]; each
//! `slice_pool` made while the sanitizer is on registers its arena and its node
//! array (the node array is one tagged allocation, so `p.nodes` is checked
//! too); `slice_pool_pure` registers its arena through an extern. Finishing a
//! pool ends its regions: their slices then fail with `use of a freed slice
//! (its pool was finished at FILE:LINE:COL)`.
//!
//! **Sites.** Library pools free and resize inside the runtime's checked
//! externs (or, for `slice_pool_pure`, in Tern), which know no source
//! location; code compiled with `--sanitize` records the location of every
//! call that crosses from one source file into another ([`set_site`]), and the
//! sanitizer names the latest one: the user's `slice_pool::free_slice(...)`
//! call, not a line of the library.
//!
//! Like the builtin pool, the state has no lock: Tern code runs on one thread
//! at a time (see `crate::builtin`).

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ffi::c_char;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::memory::{Reservation, zero_discarding};
use crate::span_tree::round8;

/// The first bit of a pointer's tag (the ABI's, `tern_abi`).
pub const TAG_SHIFT: u32 = tern_abi::SANITIZE_TAG_SHIFT;
/// The address bits of a (tagged) pointer.
pub const ADDR_MASK: i64 = tern_abi::SANITIZE_ADDR_MASK;
/// The tag bits, after the shift (15 bits: the pointer stays positive).
const TAG_BITS: i64 = 0x7fff;
/// Number of tags (tag 0 means "untagged": never checked).
const TAGS: usize = 1 << 15;
/// The region id of the builtin pool's arena.
pub const BUILTIN_REGION: i64 = tern_abi::SANITIZE_BUILTIN_REGION;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// A sanitized range of memory (a pool's arena or node array).
struct Region {
    base: i64,
    bytes: i64,
    /// One `u16` per granule; `None` for a whole region and once it ended.
    shadow: Option<Reservation>,
    /// A region that is one allocation (a `slice_pool`'s node array): its tag,
    /// and no shadow; 0 for others, and once it ended.
    whole: u16,
    /// Where the pool was finished, once it was.
    finished_at: Option<At>,
}

impl Region {
    /// Whether `t` still names the memory of granules `[g0, g0 + n)`.
    #[inline(always)]
    fn holds(&self, t: u16, g0: usize, n: usize) -> bool {
        let shadow = self.shadow();
        if shadow.is_null() {
            return self.whole != 0 && self.whole == t;
        }
        // SAFETY: `granules` placed `[g0, g0 + n)` inside the region, whose
        // shadow holds one u16 per granule.
        unsafe { *shadow.add(g0) == t && *shadow.add(g0 + n - 1) == t }
    }
}

/// A recorded location: the code's own `file:line:col` string (static data of
/// the running program, valid as long as it runs), or text a host's
/// [`LocationMap`] made of it (the REPL frees the code of finished inputs).
#[derive(Clone, Default)]
enum At {
    #[default]
    Nowhere,
    Code(*const c_char),
    Text(String),
}

impl At {
    fn is_some(&self) -> bool {
        !matches!(self, At::Nowhere)
    }

    fn text(&self) -> String {
        match self {
            At::Nowhere => String::new(),
            At::Code(loc) => crate::abi::fail::loc_str(*loc),
            At::Text(t) => t.clone(),
        }
    }
}

impl Region {
    #[inline(always)]
    fn shadow(&self) -> *mut u16 {
        self.shadow
            .as_ref()
            .map_or(std::ptr::null_mut(), |r| r.base().cast())
    }
}

/// What is known of the allocation a tag was given to.
#[derive(Clone, Default)]
struct TagRecord {
    live: bool,
    /// While live: its index in its region's list of live tags
    /// (`State::region_tags`).
    slot: u32,
    /// Region id.
    region: i64,
    /// Where it was freed (or moved away), once it was.
    freed_at: At,
    /// Where it last shrank (its tail was freed there).
    shrunk_at: At,
    /// The address (untagged) one past its last byte: the shadow holds
    /// whole 8-byte granules, so a `u8` slice's tail inside its last granule
    /// (after a shrink from 16 bytes to 13, say) is told apart by this.
    end: i64,
    /// Whether its pool's reset freed it (at `freed_at`).
    reset: Reset,
    /// Set by [`mark_arena_reset`]: the arena that carves from this
    /// allocation was reset there; the next same-size in-place
    /// [`retag`] gives the allocation a new tag and ends this one.
    renew: Option<At>,
}

/// What ended a tag's allocation all at once, for the message.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Reset {
    #[default]
    No,
    /// Its pool was reset (`slice_pool::reset`, `slice_pool_pure::reset`).
    Pool,
    /// The `arena` that carved it from a chunk that lives on was reset.
    Arena,
}

struct State {
    regions: Vec<Region>,
    /// Index in `regions` of the region the last check hit.
    last: usize,
    tags: Vec<TagRecord>,
    /// The tags no live allocation holds, the next to hand out first.
    free: VecDeque<u16>,
    /// Per region (by id - 1), its live tags: what a reset or a finish ends,
    /// in time proportional to them (a scan of every tag made a pool's
    /// finish and reset cost 33 µs whatever it held).
    region_tags: Vec<Vec<u16>>,
    /// The indices of the regions not finished: what a check that leaves
    /// the last region searches (finished ones stay in `regions` for their
    /// messages; searched too, a run that had made 20 000 pools spent 14 s).
    live_regions: Vec<usize>,
    /// Whether any tag was handed out.
    issued: bool,
    /// The latest call site crossing into another source file (see the module docs).
    site: *const c_char,
}

struct Slot(UnsafeCell<State>);

// SAFETY: accessed by one thread at a time (module docs).
unsafe impl Sync for Slot {}

static STATE: Slot = Slot(UnsafeCell::new(State {
    regions: Vec::new(),
    last: 0,
    tags: Vec::new(),
    free: VecDeque::new(),
    region_tags: Vec::new(),
    live_regions: Vec::new(),
    issued: false,
    site: std::ptr::null(),
}));

#[allow(clippy::mut_from_ref)]
fn state() -> &'static mut State {
    // SAFETY: single-threaded use (module docs); no caller keeps the
    // reference across another call into this module.
    unsafe { &mut *STATE.0.get() }
}

/// Whether the sanitizer is on.
#[inline(always)]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether any allocation was ever tagged (the REPL then keeps the sanitizer on:
/// unsanitized code cannot use tagged slices).
pub fn tags_issued() -> bool {
    enabled() && state().issued
}

/// Turns the sanitizer on (idempotent) and registers the builtin pool's arena
/// (`base`, `bytes`) as [`BUILTIN_REGION`]. Errors are messages for the user.
pub fn enable(base: i64, bytes: i64) -> Result<(), String> {
    if enabled() {
        return Ok(());
    }
    let st = state();
    st.tags = vec![TagRecord::default(); TAGS];
    st.regions.clear();
    st.last = 0;
    st.free = (1..TAGS as u16).collect();
    st.region_tags.clear();
    st.live_regions.clear();
    st.issued = false;
    ENABLED.store(true, Ordering::Relaxed);
    match region_new(base, bytes) {
        BUILTIN_REGION => Ok(()),
        _ => {
            ENABLED.store(false, Ordering::Relaxed);
            Err(format!(
                "cannot reserve the sanitizer's shadow of the builtin pool ({bytes} bytes)"
            ))
        }
    }
}

/// The builtin pool was replaced (`builtin::init`): its region follows it.
pub(crate) fn rebind_builtin(base: i64, bytes: i64) {
    if !enabled() {
        return;
    }
    let st = state();
    if let Some(r) = st.regions.first_mut()
        && let Ok(shadow) = Reservation::new(shadow_bytes(bytes))
    {
        *r = Region {
            base,
            bytes,
            shadow: Some(shadow),
            whole: 0,
            finished_at: None,
        };
    }
}

fn shadow_bytes(bytes: i64) -> usize {
    (round8(bytes) as usize / 8).max(1) * 2
}

/// Registers `[base, base + bytes)` as a sanitized region and returns its id
/// (> 0); 0 when the sanitizer is off or the shadow cannot be reserved.
pub fn region_new(base: i64, bytes: i64) -> i64 {
    // An empty region is one: a pool of under 8 bytes (`TERN_POOL_BYTES=7`)
    // has an arena of 0, and a sanitized run of it must start as any other.
    if !enabled() || base <= 0 || !(0..=crate::span_tree::tree::MAX_ARENA_BYTES).contains(&bytes) {
        return 0;
    }
    let Ok(shadow) = Reservation::new(shadow_bytes(bytes)) else {
        return 0;
    };
    let st = state();
    st.live_regions.push(st.regions.len());
    st.regions.push(Region {
        base,
        bytes,
        shadow: Some(shadow),
        whole: 0,
        finished_at: None,
    });
    st.regions.len() as i64
}

/// Registers `[base, base + bytes)` as a region that is one allocation for its
/// whole life (a `slice_pool`'s node array: checked against one tag, with no
/// shadow to fill). Returns its id and the tagged base; `(0, base)` when the
/// sanitizer is off.
pub fn region_whole(base: i64, bytes: i64) -> (i64, i64) {
    if !enabled() || base <= 0 || bytes <= 0 {
        return (0, base);
    }
    let st = state();
    let id = st.regions.len() as i64 + 1;
    let t = new_tag(st, id, base + bytes);
    st.live_regions.push(st.regions.len());
    st.regions.push(Region {
        base,
        bytes,
        shadow: None,
        whole: t,
        finished_at: None,
    });
    (id, with_tag(base, t))
}

/// Ends region `id` (its pool was finished at `loc`, or at the current site):
/// its shadow is released; slices into it fail from now on.
pub fn region_end(id: i64, loc: *const c_char) {
    if !enabled() {
        return;
    }
    let st = state();
    let at = recorded(st, loc);
    if let Some(r) = region_mut(st, id) {
        r.shadow = None;
        r.whole = 0;
        r.finished_at = Some(at);
        st.live_regions.retain(|&i| i as i64 != id - 1);
    }
    // Its allocations' tags go back to the queue (a finished pool's slices
    // fail by their region, whose end the message names): kept, a run that
    // made and finished 32,767 pools had no tag left.
    end_region_tags(st, id);
}

/// Ends every live tag of region `id`; returns them.
fn end_region_tags(st: &mut State, id: i64) -> Vec<u16> {
    let tags = usize::try_from(id - 1)
        .ok()
        .and_then(|i| st.region_tags.get_mut(i))
        .map(std::mem::take)
        .unwrap_or_default();
    for &t in &tags {
        st.tags[t as usize].live = false;
        st.free.push_back(t);
    }
    tags
}

/// Every allocation of region `id` was freed at once at `loc` (null: the
/// current site): its pool was reset. The shadow is cleared up to
/// `high_water` bytes into the region (nothing past it was ever tagged) and
/// every live tag of the region is released, so a slice taken before fails
/// with `its pool was reset at ...`. The region stays, for the pool's new
/// allocations.
pub fn region_reset(id: i64, high_water: i64, loc: *const c_char) {
    if !enabled() {
        return;
    }
    let st = state();
    let at = recorded(st, loc);
    let Some(r) = region_mut(st, id) else {
        return;
    };
    let shadow = r.shadow();
    if !shadow.is_null() {
        let granules = (high_water.clamp(0, r.bytes) as usize).div_ceil(8);
        // SAFETY: the shadow holds one u16 per granule of the region, in
        // a reservation of its own.
        unsafe { zero_discarding(shadow.cast(), granules * 2) };
    }
    for t in end_region_tags(st, id) {
        let rec = &mut st.tags[t as usize];
        rec.reset = Reset::Pool;
        rec.freed_at = at.clone();
    }
}

/// The `arena` carving from the live allocation at `addr` (tagged) was
/// reset at the current site: every slice carved from it must fail from now
/// on, though the allocation itself (the arena's first chunk) lives on. Marks
/// the allocation's tag; the arena then resizes the chunk to its own length,
/// and that [`retag`] gives the chunk a new tag, ending the old one with `its
/// arena was reset at ...`. Returns whether the sanitizer is on (when it is
/// off the arena skips the resize).
pub fn mark_arena_reset(addr: i64) -> bool {
    if !enabled() {
        return false;
    }
    let st = state();
    let t = ((addr >> TAG_SHIFT) & TAG_BITS) as usize;
    if t != 0 && st.tags[t].live {
        let at = recorded(st, std::ptr::null());
        st.tags[t].renew = Some(at);
    }
    true
}

fn region_mut(st: &mut State, id: i64) -> Option<&mut Region> {
    usize::try_from(id - 1)
        .ok()
        .and_then(|i| st.regions.get_mut(i))
}

/// How a host turns a `file:line:col` of the code it runs into what its user
/// wrote (the REPL's generated programs), for the locations the sanitizer
/// records (where a slice was freed, shrunk, or its pool finished): those are
/// shown later, when the code that recorded them may be gone.
pub type LocationMap = Box<dyn Fn(&str) -> String + Send>;

static LOCATION_MAP: Mutex<Option<LocationMap>> = Mutex::new(None);
/// Whether a [`LocationMap`] is installed (checked without the lock).
static HAS_LOCATION_MAP: AtomicBool = AtomicBool::new(false);

/// Installs (`Some`) or removes the host's [`LocationMap`].
pub fn set_location_map(map: Option<LocationMap>) {
    let mut slot = LOCATION_MAP.lock().unwrap_or_else(|e| e.into_inner());
    HAS_LOCATION_MAP.store(map.is_some(), Ordering::Relaxed);
    *slot = map;
}

/// `loc` (or the current site) to record: the pointer itself, or, when the host
/// installed a map, the text it makes of it.
fn recorded(st: &State, loc: *const c_char) -> At {
    let loc = if loc.is_null() { st.site } else { loc };
    if loc.is_null() {
        return At::Nowhere;
    }
    if !HAS_LOCATION_MAP.load(Ordering::Relaxed) {
        return At::Code(loc);
    }
    let text = crate::abi::fail::loc_str(loc);
    match LOCATION_MAP
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        Some(map) => At::Text(map(&text)),
        None => At::Text(text),
    }
}

/// Records `loc` as the current call site (see the module docs).
#[inline(always)]
pub fn set_site(loc: *const c_char) {
    state().site = loc;
}

/// `loc`, or the current call site when `loc` is null, as text.
fn site_text(st: &State, loc: *const c_char) -> String {
    crate::abi::fail::loc_str(if loc.is_null() { st.site } else { loc })
}

/// The granule range `[g0, g0 + n)` of `[a, a + bytes)` in region `r`, if the
/// span lies inside it.
#[inline(always)]
fn granules(r: &Region, a: i64, bytes: i64) -> Option<(usize, usize)> {
    let off = a.wrapping_sub(r.base);
    if off < 0 || bytes <= 0 || off > r.bytes || bytes > r.bytes - off {
        return None;
    }
    Some((
        (off >> 3) as usize,
        (round8(bytes + (off & 7)) >> 3) as usize,
    ))
}

/// Fills the shadow of granules `[g0, g0 + n)` of region `id` with `tag`.
fn fill(st: &mut State, id: i64, g0: usize, n: usize, tag: u16) {
    if let Some(r) = region_mut(st, id) {
        let shadow = r.shadow();
        if !shadow.is_null() {
            // SAFETY: `granules` placed `[g0, g0 + n)` inside the region, whose
            // shadow holds one u16 per granule, in a reservation of its own.
            unsafe {
                if tag == 0 {
                    zero_discarding(shadow.add(g0).cast(), n * 2);
                } else {
                    std::slice::from_raw_parts_mut(shadow.add(g0), n).fill(tag);
                }
            }
        }
    }
}

/// The shadow of granule `g` of region `id` (0 when unknown).
fn shadow_at(st: &State, id: i64, g: usize) -> u16 {
    match usize::try_from(id - 1).ok().and_then(|i| st.regions.get(i)) {
        Some(r) if !r.shadow().is_null() && (g as i64) < r.bytes / 8 + 1 => {
            // SAFETY: `g` is a granule of the region.
            unsafe { *r.shadow().add(g) }
        }
        _ => 0,
    }
}

/// A fresh tag for an allocation in region `id` ending at `end`.
fn new_tag(st: &mut State, id: i64, end: i64) -> u16 {
    let Ok(r) = usize::try_from(id - 1) else {
        return 0;
    };
    let Some(t) = st.free.pop_front() else {
        return 0;
    };
    st.issued = true;
    if st.region_tags.len() <= r {
        st.region_tags.resize_with(r + 1, Vec::new);
    }
    let slot = st.region_tags[r].len() as u32;
    st.region_tags[r].push(t);
    let rec = &mut st.tags[t as usize];
    rec.live = true;
    rec.slot = slot;
    rec.region = id;
    rec.freed_at = At::Nowhere;
    rec.shrunk_at = At::Nowhere;
    rec.reset = Reset::No;
    rec.renew = None;
    rec.end = end;
    t
}

/// Ends tag `t`'s allocation (its tag joins the free queue) and returns its
/// record, for the caller to say how it ended.
fn end_tag(st: &mut State, t: u16) -> &mut TagRecord {
    let rec = &st.tags[t as usize];
    if rec.live {
        st.free.push_back(t);
        let (region, slot) = (rec.region, rec.slot as usize);
        if let Some(list) = usize::try_from(region - 1)
            .ok()
            .and_then(|i| st.region_tags.get_mut(i))
            && list.get(slot) == Some(&t)
        {
            list.swap_remove(slot);
            if let Some(&moved) = list.get(slot) {
                st.tags[moved as usize].slot = slot as u32;
            }
        }
    }
    let rec = &mut st.tags[t as usize];
    rec.live = false;
    rec
}

#[inline(always)]
fn with_tag(a: i64, tag: u16) -> i64 {
    a | (i64::from(tag) << TAG_SHIFT)
}

/// A new allocation `[addr, addr + bytes)` of region `id`: tags it and returns
/// the tagged address (`addr` itself when it is null, `bytes` is 0, or the
/// sanitizer is off).
pub fn tag(id: i64, addr: i64, bytes: i64) -> i64 {
    if !enabled() || addr == 0 || bytes <= 0 {
        return addr;
    }
    let st = state();
    let Some((g0, n)) = region_of(st, id).and_then(|r| granules(r, addr, bytes)) else {
        return addr;
    };
    let t = new_tag(st, id, addr + bytes);
    fill(st, id, g0, n, t);
    with_tag(addr, t)
}

/// `[addr, addr + bytes)` (an untagged address) with the tag of the live
/// allocation holding all of it, found by address: the view a callee makes
/// of a `ref` array parameter, which may lie in a pool element. `addr` as it
/// is when the sanitizer is off, it carries a tag, `bytes <= 0`, or no live
/// allocation of a region holds the bytes (a stack or static array).
pub fn tag_at(addr: i64, bytes: i64) -> i64 {
    if !enabled() || addr & !ADDR_MASK != 0 || bytes <= 0 {
        return addr;
    }
    let st = state();
    for &i in &st.live_regions {
        let r = &st.regions[i];
        let Some((g0, n)) = granules(r, addr, bytes) else {
            continue;
        };
        let shadow = r.shadow();
        let t = if shadow.is_null() {
            r.whole
        } else {
            // SAFETY: `granules` placed `g0` inside the region's shadow.
            unsafe { *shadow.add(g0) }
        };
        if t != 0 && r.holds(t, g0, n) && addr + bytes <= st.tags[t as usize].end {
            return with_tag(addr, t);
        }
        return addr;
    }
    addr
}

fn region_of(st: &State, id: i64) -> Option<&Region> {
    usize::try_from(id - 1).ok().and_then(|i| st.regions.get(i))
}

/// The allocation `[addr, addr + bytes)` (untagged) of region `id` was freed at
/// `loc` (null: the current site): its shadow is cleared, its tag record says so.
pub fn release(id: i64, addr: i64, bytes: i64, loc: *const c_char) {
    if !enabled() || addr == 0 || bytes <= 0 {
        return;
    }
    let st = state();
    let Some((g0, n)) = region_of(st, id).and_then(|r| granules(r, addr, bytes)) else {
        return;
    };
    let t = shadow_at(st, id, g0);
    fill(st, id, g0, n, 0);
    if t != 0 {
        let at = recorded(st, loc);
        end_tag(st, t).freed_at = at;
    }
}

/// The allocation `[addr, addr + old)` (untagged) of region `id` was resized at
/// `loc` (null: the current site) to `[to, to + new)`: in place, the shadow
/// follows its new end (a shrink records where); after a move the old span is
/// released and the new one tagged. Returns the tagged result (`to` as is when
/// it is null).
pub fn retag(id: i64, addr: i64, old: i64, to: i64, new: i64, loc: *const c_char) -> i64 {
    if !enabled() {
        return to;
    }
    if addr == 0 || old <= 0 {
        return tag(id, to, new);
    }
    if to == 0 || new <= 0 {
        release(id, addr, old, loc);
        return to;
    }
    if to != addr {
        release(id, addr, old, loc);
        return tag(id, to, new);
    }
    let st = state();
    let Some((g0, old_n)) = region_of(st, id).and_then(|r| granules(r, addr, old)) else {
        return to;
    };
    let Some((_, new_n)) = region_of(st, id).and_then(|r| granules(r, addr, new)) else {
        return to;
    };
    let t = shadow_at(st, id, g0);
    if new_n == old_n
        && t != 0
        && let Some(at) = st.tags[t as usize].renew.take()
    {
        // An arena reset (`mark_arena_reset`): the same memory, a new tag
        // (taken first: with no other tag free, the old one must not come
        // back; the memory is then untagged).
        let fresh = new_tag(st, id, to + new);
        let rec = end_tag(st, t);
        rec.reset = Reset::Arena;
        rec.freed_at = at;
        fill(st, id, g0, old_n, fresh);
        return with_tag(to, fresh);
    }
    if new_n < old_n {
        fill(st, id, g0 + new_n, old_n - new_n, 0);
    } else if new_n > old_n {
        fill(st, id, g0 + old_n, new_n - old_n, t);
    }
    if t != 0 {
        // Compared with the allocation's end, not with `old`: a growth
        // through a shorter stale copy (inside the last granule, so in
        // place) lowers the end a longer live copy still reaches past,
        // and that copy's next check must name this site.
        if to + new < st.tags[t as usize].end {
            let at = recorded(st, loc);
            st.tags[t as usize].shrunk_at = at;
        }
        st.tags[t as usize].end = to + new;
    }
    with_tag(to, t)
}

/// Checks that `[addr, addr + bytes)` (a tagged pointer) lies in memory that
/// still belongs to the allocation its tag names, and returns the untagged
/// address; an untagged pointer (or `bytes <= 0`) only loses its tag bits. A
/// failed check ends the run at `loc` (null: the current site): `use of a
/// freed slice (freed at FILE:LINE:COL)`.
#[inline]
pub fn check(addr: i64, bytes: i64, loc: *const c_char) -> i64 {
    let t = ((addr >> TAG_SHIFT) & TAG_BITS) as u16;
    let a = addr & ADDR_MASK;
    if t == 0 || bytes <= 0 || !enabled() {
        return a;
    }
    let st = state();
    if let Some(r) = st.regions.get(st.last)
        && let Some((g0, n)) = granules(r, a, bytes)
        && r.holds(t, g0, n)
        && a + bytes <= st.tags[t as usize].end
    {
        return a;
    }
    check_slow(st, a, t, bytes, loc)
}

#[cold]
#[inline(never)]
fn check_slow(st: &mut State, a: i64, t: u16, bytes: i64, loc: *const c_char) -> i64 {
    for &i in &st.live_regions {
        let r = &st.regions[i];
        if let Some((g0, n)) = granules(r, a, bytes) {
            st.last = i;
            if r.holds(t, g0, n) && a + bytes <= st.tags[t as usize].end {
                return a;
            }
            break;
        }
    }
    let msg = freed_message(st, t);
    let at = site_text(st, loc);
    crate::abi::fail::report_at(at, msg)
}

/// The message for a slice with tag `t` that failed its check.
fn freed_message(st: &State, t: u16) -> String {
    let rec = &st.tags[t as usize];
    let reset = match rec.reset {
        Reset::No => None,
        Reset::Pool => Some("pool"),
        Reset::Arena => Some("arena"),
    };
    if let (false, Some(what)) = (rec.live, reset) {
        if rec.freed_at.is_some() {
            return format!(
                "use of a freed slice (its {what} was reset at {})",
                rec.freed_at.text()
            );
        }
        return format!("use of a freed slice (its {what} was reset)");
    }
    if !rec.live && rec.freed_at.is_some() {
        return format!("use of a freed slice (freed at {})", rec.freed_at.text());
    }
    if let Some(at) = region_of(st, rec.region).and_then(|r| r.finished_at.as_ref()) {
        return format!(
            "use of a freed slice (its pool was finished at {})",
            at.text()
        );
    }
    let at = if rec.live {
        &rec.shrunk_at
    } else {
        &rec.freed_at
    };
    if at.is_some() {
        format!("use of a freed slice (freed at {})", at.text())
    } else {
        "use of a freed slice".into()
    }
}
