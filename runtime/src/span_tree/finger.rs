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
//!   holds a span of `g` or more (`g > lo_max`, the largest span before the
//!   leaf, computed on the first allocation that needs it) and the leaf does
//!   (its parent's entry says whether).
//!
//! Both stay exact while operations change only that leaf: an edit of a leaf
//! moves no other leaf's spans. Every operation that changes another leaf or
//! the tree's shape (a split, merge or borrow, a new root, a free that
//! extends the next leaf's first span) forgets the finger, and the next
//! operation descends again, leaving a new one.
//!
//! The finger is runtime memory: the builtin pool keeps it in the tree view,
//! a checked pool in its registration. In a checked tree it only says where
//! to look: every word read through it is validated as on a descent, and the
//! header must still name the root and height it was recorded under.

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
    /// The root the path starts from (a checked tree compares the header's).
    pub(super) root: i64,
    /// The largest span length (granules) in the leaves before `node[0]`;
    /// [`LO_MAX_UNKNOWN`] until an allocation needs it.
    pub(super) lo_max: i64,
    /// The smallest key after `node[0]`'s subtree ([`i64::MAX`] when none).
    pub(super) hi: i64,
    /// Whether `node[0]` is the leftmost leaf.
    pub(super) leftmost: bool,
}

/// [`Path::lo_max`] not computed yet (a descent does not pay for it: the
/// next operation may be a free, which does not need it).
pub(super) const LO_MAX_UNKNOWN: i64 = -1;

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
            root: 0,
            lo_max: 0,
            hi: i64::MAX,
            leftmost: false,
        }
    }

    /// The entry index at level `l`.
    #[inline(always)]
    pub(super) fn at(&self, l: usize) -> usize {
        self.idx[l] as usize
    }

    /// Forgets the finger: the next operation descends from the root.
    #[inline(always)]
    pub fn forget(&mut self) {
        self.height = 0;
    }
}
