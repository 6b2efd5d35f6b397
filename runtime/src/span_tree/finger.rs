//! The finger: where the last operation landed in the tree, so that the
//! next one can skip the descent from the root.
//!
//! Real programs put one allocator call after another in the same leaf: on
//! the recorded traces (bench/traces) 50-98 % of the operations land in the
//! leaf of the one before. A descent therefore leaves its [`Path`] behind,
//! with what decides, without the levels above, whether another operation
//! belongs to the same leaf:
//!
//! * a lookup by key `s` (free, resize) belongs to the leaf when
//!   `first key <= s < hi` (or `s < hi` for the leftmost leaf), `hi` being the
//!   smallest key after the leaf;
//! * a first fit for `g` granules lies in the leaf when no leaf before it
//!   holds a span of `g` or more and the leaf does (its parent's entry says
//!   whether). A first fit's descent for `g'` knows every span before its
//!   leaf is shorter than `g'` (`lo_max = g' - 1`), so the next allocations
//!   of `g'` or more granules take the leaf while it has room.
//!
//! A descent pays nothing for the finger beyond recording its path: `hi` is
//! worked out from the path (the next entry's key at the lowest level that
//! has one) when a lookup first needs it. Both bounds stay true while
//! operations change only that leaf: an edit of a leaf moves no other leaf's
//! spans. Every operation that changes another leaf or
//! the tree's shape (a split, merge or borrow, a new root, a free that
//! extends the next leaf's first span) forgets the finger, and the next
//! operation descends again, leaving a new one.
//!
//! The finger is runtime memory: the builtin pool keeps it in the tree view,
//! a library pool in its registration, beside the runtime's copy of its
//! tree (the only copy the tree code reads).

use super::append_window::AppendWindow;
use super::extents::Extents;
use super::layout::MAX_HEIGHT;

/// The nodes visited by one descent, and the finger it leaves (see the
/// module docs): `node[l]` is the node at level `l` (0 = leaf), `idx[l]` (for
/// `l >= 1`) the entry of `node[l]` that leads to `node[l - 1]`. Kept with the
/// pool, not rebuilt per operation.
pub struct Path {
    pub(super) node: [i64; MAX_HEIGHT],
    pub(super) idx: [u8; MAX_HEIGHT],
    /// The tree's height when the path was recorded; 0: no finger.
    pub(super) height: usize,
    /// A bound on the span lengths (granules) in the leaves before
    /// `node[0]`: a first fit's descent for `g` knows them all below `g`;
    /// [`LO_MAX_UNKNOWN`] after a descent by key (then a first fit descends).
    pub(super) lo_max: i64,
    /// The smallest key after `node[0]`'s subtree ([`i64::MAX`] when none),
    /// [`HI_UNKNOWN`] until a lookup by key works it out from the path.
    pub(super) hi: i64,
    /// Whether `node[0]` is the leftmost leaf: [`LEFTMOST_UNKNOWN`] until a
    /// lookup below the leaf's first key needs it ([`Path::leftmost`]).
    pub(super) leftmost: u8,
    /// The slot of `node[0]` the last allocation carved from (or the slot
    /// after it, if it took the whole span), when the operation before
    /// this one was that allocation: see [`Path::fit_below`].
    pub(super) fit_slot: usize,
    /// A bound on the lengths (granules) of the slots before `fit_slot`:
    /// the allocation of `g` that carved there found them all below `g`.
    /// So the next allocation of more than this takes `fit_slot` when that
    /// span is long enough, with one scalar read instead of a scan of the
    /// leaf (whose vector load, right behind the carve's 4-byte store into
    /// the same bytes, waits for the store to reach the cache: the CPU
    /// cannot forward a narrow store to a wider load). [`FIT_UNKNOWN`]
    /// after any other operation, which may have lengthened, inserted or
    /// removed slots before it (keeping the pair true through frees
    /// instead cost 5 instructions a free and measured no faster on the
    /// traces), and when a descent records a new finger.
    pub(super) fit_below: i64,
    /// The length the leaf's entry in its parent holds (the leaf's longest
    /// span as the parent records it), once an update has read or written
    /// it; [`PMAX_UNKNOWN`] after a descent. Only the maxima upkeep of this
    /// path writes that entry while the finger lives (every other change of
    /// the parent forgets the finger), so the upkeep's first level can test
    /// against it without reading the path and the parent.
    pub(super) pmax: i64,
    /// The slot of `node[0]` that the last growth in place shortened: the
    /// free span right after the allocation it grew, where that
    /// allocation's next growth (an append) looks first
    /// (`Mem::grow_hinted`). Only a hint, never trusted: it is taken while
    /// the finger is valid and the slot's key is the allocation's end.
    /// (Allocations leave none: the two stores cost binary-trees, which
    /// allocates and never grows, 1.9 % of its instructions.)
    pub(super) grow_slot: u8,
    /// The key (granules) that slot was left with: where the allocation
    /// the hint serves ends. Compared first, without a read of the tree.
    pub(super) grow_key: i64,
    /// How many growths in a row the hint itself served (saturating): 0
    /// when the full path left it. The builtin pool's append window opens
    /// at [`GROWN_IN_A_ROW`] (`builtin::ReusableFast`), a library pool's at
    /// [`LIBRARY_GROWN_IN_A_ROW`].
    pub(super) grow_again: u8,
    /// The library pool's append window (`super::append_window`), in the
    /// pool's runtime memory beside the finger; the builtin pool keeps its
    /// own (`builtin::ReusableFast`) and never opens this one.
    pub(super) window: AppendWindow,
}

/// The growths in place in a row through the growth hint after which an
/// append leaves the builtin pool's append window open: a slice appended to
/// in a loop gets there at its fifth append, while short bursts of appends
/// to many slices and appends taking turns with other operations (each
/// window closed unused costs its opening and settling) do not.
pub const GROWN_IN_A_ROW: u8 = 3;

/// The growths in place in a row through the growth hint after which a
/// library append (`tern_span_resize`) opens its pool's append window
/// (`super::append_window`). Higher than the builtin's: opening one works
/// out the node words it writes (about 350 instructions when the room was
/// claimed in a coverage map too, and settling about 100), against about 160 a
/// growth it answers saves, and short bursts of appends must not pay for
/// windows they close at once (at the builtin's count, `tern bench`'s
/// library append/8, bursts of one to four appends, opened 2 472 windows:
/// +7.3 % of its instructions).
pub const LIBRARY_GROWN_IN_A_ROW: u8 = 8;

/// [`Path::lo_max`] not known: no allocation of any size takes the finger
/// (computing the exact bound costs a scan per level, on a descent or after
/// it, which the descents that miss then waste: measured on the churn
/// workload, up to +100 instructions per step).
pub(super) const LO_MAX_UNKNOWN: i64 = i64::MAX;

/// [`Path::hi`] not worked out yet.
pub(super) const HI_UNKNOWN: i64 = -1;

/// [`Path::leftmost`] not worked out yet (else 0 or 1).
pub(super) const LEFTMOST_UNKNOWN: u8 = 2;

/// [`Path::fit_below`] not known: no allocation takes [`Path::fit_slot`].
pub(super) const FIT_UNKNOWN: i64 = i64::MAX;

/// [`Path::pmax`] not known: read from the parent.
pub(super) const PMAX_UNKNOWN: i64 = i64::MIN;

impl Default for Path {
    fn default() -> Self {
        Path::new()
    }
}

impl Path {
    /// A path with no finger.
    pub const fn new() -> Self {
        Path {
            node: [0; MAX_HEIGHT],
            idx: [0; MAX_HEIGHT],
            height: 0,
            lo_max: LO_MAX_UNKNOWN,
            hi: HI_UNKNOWN,
            leftmost: LEFTMOST_UNKNOWN,
            fit_slot: 0,
            fit_below: FIT_UNKNOWN,
            pmax: PMAX_UNKNOWN,
            grow_slot: 0,
            grow_key: -1,
            grow_again: 0,
            window: AppendWindow::NEVER,
        }
    }

    /// The entry index at level `l`.
    #[inline(always)]
    pub(super) fn at(&self, l: usize) -> usize {
        self.idx[l] as usize
    }

    /// Whether `node[0]` is the leftmost leaf (every entry on the path is its
    /// node's first), worked out once per path and only when a lookup falls
    /// below the leaf's first key: a lookup that needs `hi` rarely needs this
    /// too, and working both out on every first lookup cost the matrix's
    /// resizes and frees 1-4 % of their instructions.
    #[inline(always)]
    pub(super) fn leftmost(&mut self) -> bool {
        if self.leftmost == LEFTMOST_UNKNOWN {
            self.leftmost = self.idx[1..self.height].iter().all(|&i| i == 0) as u8;
        }
        self.leftmost == 1
    }

    /// Whether the growth hint may serve a growth of `[off, off + old)`
    /// (bytes): the allocation ends where the slot the hint names began
    /// when the hint was left. A resize's one test for it, without a read
    /// of the tree, before `Mem::grow_hinted` checks everything; any
    /// arguments (wrapping arithmetic: a wrong answer only costs time).
    #[inline(always)]
    pub(crate) fn hint_matches(&self, off: i64, old: i64) -> bool {
        off.wrapping_add(old.wrapping_add(7) & !7) >> 3 == self.grow_key
    }

    /// Whether an allocation ending at granule `e` has just grown through
    /// the hint [`GROWN_IN_A_ROW`] times in a row (`Mem::room_at`). One
    /// test of two fields, inline in the append's entry point before any
    /// call.
    #[inline(always)]
    pub(crate) fn window_due(&self, e: i64) -> bool {
        self.window_may_be_due() && self.grow_key == e
    }

    /// [`Self::window_due`]'s first test.
    #[inline(always)]
    pub(crate) fn window_may_be_due(&self) -> bool {
        self.grow_again >= GROWN_IN_A_ROW
    }

    /// Settles the pool's open append window (`AppendWindow::settle`) and
    /// leaves the finger as the tree's own growths would have
    /// (`Mem::grow_hinted`): the bound before the last carve forgotten, the
    /// copy of the leaf's entry in its parent (`pmax`) the value the
    /// window wrote there when it wrote one (else the growths left it as it
    /// was), and the growth hint at the slice's end. (Forgetting `pmax`
    /// instead made a scribbled parent entry matter where the tree's own
    /// growths would have used the copy.)
    #[cold]
    #[inline(never)]
    pub(crate) fn settle_window(&mut self, ext: &Extents) {
        let (end, parent_entry) = self.window.settle(ext);
        self.fit_below = FIT_UNKNOWN;
        if let Some(len) = parent_entry {
            self.pmax = len;
        }
        self.grow_key = end >> 3;
    }

    /// Forgets the finger: the next operation descends from the root.
    #[inline(always)]
    pub fn forget(&mut self) {
        self.height = 0;
    }
}
