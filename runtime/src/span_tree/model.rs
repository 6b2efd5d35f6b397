//! The reference model of the placement contract: free spans in a `BTreeMap`,
//! written for obviousness, not speed. Property tests (here and in the stdlib's
//! differential tests) replay operation sequences against it; the tree must give
//! exactly the same offsets and the same error codes.
//!
//! It also keeps the live allocations, so that it defines which frees and
//! resizes the pools must refuse: a span that is not exactly one live
//! allocation is a double free (`DOUBLE_FREE`; `RESIZE_FREE_SPAN` for a resize
//! that does not shrink) when it overlaps free space, else a stale span
//! (`STALE_FREE`, `STALE_RESIZE`); nothing changes in either case.

use std::collections::BTreeMap;

use super::error::{
    BAD_SIZE, DOUBLE_FREE, EXHAUSTED, MUST_MOVE, OUTSIDE_ARENA, RESIZE_FREE_SPAN, STALE_FREE,
    STALE_RESIZE,
};
use super::tree::round8;

/// Free spans of an arena, keyed by offset, always fully coalesced; and the
/// live allocations.
#[derive(Clone, Debug)]
pub struct Model {
    arena: i64,
    free: BTreeMap<i64, i64>,
    /// Live allocations: offset -> rounded size.
    live: BTreeMap<i64, i64>,
}

impl Model {
    /// A fresh pool: the whole arena is one free span.
    pub fn new(arena_bytes: i64) -> Self {
        let mut free = BTreeMap::new();
        if arena_bytes > 0 {
            free.insert(0, arena_bytes);
        }
        Model {
            arena: arena_bytes,
            free,
            live: BTreeMap::new(),
        }
    }

    /// The live allocations `(offset, rounded size)` in address order.
    pub fn live(&self) -> Vec<(i64, i64)> {
        self.live.iter().map(|(&o, &l)| (o, l)).collect()
    }

    /// The size of the live allocation starting at `off`, or 0.
    pub fn live_bytes_at(&self, off: i64) -> i64 {
        self.live.get(&off).copied().unwrap_or(0)
    }

    /// The free spans `(offset, len)` in address order.
    pub fn spans(&self) -> Vec<(i64, i64)> {
        self.free.iter().map(|(&o, &l)| (o, l)).collect()
    }

    /// Total free bytes.
    pub fn free_bytes(&self) -> i64 {
        self.free.values().sum()
    }

    /// `alloc(b)`: the lowest-addressed free span with `len >= round8(b)`; carve
    /// from its start. Same errors as the tree.
    pub fn alloc(&mut self, bytes: i64) -> Result<i64, i64> {
        if bytes <= 0 {
            return Err(BAD_SIZE);
        }
        if bytes > self.arena {
            return Err(EXHAUSTED);
        }
        let b = round8(bytes);
        let (&off, &len) = self.free.iter().find(|(_, l)| **l >= b).ok_or(EXHAUSTED)?;
        self.free.remove(&off);
        if len > b {
            self.free.insert(off + b, len - b);
        }
        self.live.insert(off, b);
        Ok(off)
    }

    fn check_span(&self, off: i64, bytes: i64) -> Result<i64, i64> {
        if bytes <= 0 {
            return Err(BAD_SIZE);
        }
        if off < 0 || off % 8 != 0 || bytes > self.arena || off > self.arena - round8(bytes) {
            return Err(OUTSIDE_ARENA);
        }
        Ok(round8(bytes))
    }

    /// True if `[off, end)` overlaps a free span.
    fn overlaps_free(&self, off: i64, end: i64) -> bool {
        self.free.iter().any(|(&o, &l)| o < end && off < o + l)
    }

    /// Why `[off, off + b)` may not be freed or resized, if it is not exactly
    /// one live allocation: `overlap` when it overlaps free space, else `stale`.
    fn not_live(&self, off: i64, b: i64, overlap: i64, stale: i64) -> Result<(), i64> {
        if self.live.get(&off) == Some(&b) {
            Ok(())
        } else if self.overlaps_free(off, off + b) {
            Err(overlap)
        } else {
            Err(stale)
        }
    }

    /// `free(off, b)`: insert and coalesce with both neighbours.
    pub fn free(&mut self, off: i64, bytes: i64) -> Result<(), i64> {
        let b = self.check_span(off, bytes)?;
        self.not_live(off, b, DOUBLE_FREE, STALE_FREE)?;
        self.live.remove(&off);
        self.insert_free(off, b)
    }

    fn insert_free(&mut self, off: i64, b: i64) -> Result<(), i64> {
        if self.overlaps_free(off, off + b) {
            return Err(DOUBLE_FREE);
        }
        let (mut start, mut len) = (off, b);
        if let Some((&po, &pl)) = self.free.range(..off).next_back()
            && po + pl == off
        {
            self.free.remove(&po);
            start = po;
            len += pl;
        }
        if let Some(&sl) = self.free.get(&(off + b)) {
            self.free.remove(&(off + b));
            len += sl;
        }
        self.free.insert(start, len);
        Ok(())
    }

    /// The in-place resize of `tern_span_resize` (see `Tree::resize`): returns
    /// `off`, or `MUST_MOVE` with nothing changed.
    pub fn resize_in_place(&mut self, off: i64, old: i64, new: i64) -> Result<i64, i64> {
        if new < 0 {
            return Err(BAD_SIZE);
        }
        let old = self.check_span(off, old)?;
        let overlap = if new <= old - 8 {
            DOUBLE_FREE
        } else {
            RESIZE_FREE_SPAN
        };
        self.not_live(off, old, overlap, STALE_RESIZE)?;
        if new == 0 {
            self.live.remove(&off);
            self.insert_free(off, old)?;
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
            self.live.insert(off, new);
            self.insert_free(off + new, old - new)?;
            return Ok(off);
        }
        let need = new - old;
        match self.free.get(&(off + old)) {
            Some(&sl) if sl >= need => {
                self.free.remove(&(off + old));
                if sl > need {
                    self.free.insert(off + new, sl - need);
                }
                self.live.insert(off, new);
                Ok(off)
            }
            _ => Err(MUST_MOVE),
        }
    }

    /// The whole resize contract as the builtin pool applies it (offsets only):
    /// `off == -1` is a zero-size slice; growing it allocates, resizing to 0 frees
    /// and returns -1; otherwise resize in place, or allocate `new` while the old
    /// span is held and then free the old span.
    pub fn resize(&mut self, off: i64, old: i64, new: i64) -> Result<i64, i64> {
        if old == 0 || off == -1 {
            return if new == 0 { Ok(-1) } else { self.alloc(new) };
        }
        if new == 0 {
            self.resize_in_place(off, old, 0)?;
            return Ok(-1);
        }
        match self.resize_in_place(off, old, new) {
            Err(MUST_MOVE) => {
                let to = self.alloc(new)?;
                self.free(off, old)?;
                Ok(to)
            }
            r => r,
        }
    }
}
