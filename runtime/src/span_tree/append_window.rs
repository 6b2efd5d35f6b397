//! The append window of a checked pool (the library's `slice_pool`): a slice
//! appended to in a loop grows into the free span right after it, and each
//! of those appends, taken through the growth hint, still paid the whole
//! checked resize (the registry, the finger's header, validated reads, the
//! coverage map, the boundary record: about 260 instructions an append).
//!
//! When the hint has served the same slice [`super::finger::LIBRARY_GROWN_IN_A_ROW`]
//! times in a row, `tern_span_resize` leaves a window open in the pool's
//! runtime memory (beside its finger): the slice's address and end, the end
//! of the room it may grow into, and the node words a growth changes. The
//! room's granules are claimed in the coverage map when the window opens,
//! so no other allocation can be handed them and no scribbled tree can make
//! them overlap a live one. Each growth of that slice that fits the room is
//! then answered from the window: the new bytes zero-filled, the node words
//! and the header's free-byte count written as the tree's own edit would
//! write them, with values computed from the window's own record, after a
//! check that the program wrote none of the words that edit would check or
//! change (else the checked tree answers, as without a window). The pool's
//! next other operation settles first ([`AppendWindow::settle`]): the
//! growth goes into the boundary record and the high-water mark, the unused
//! room is given back in the coverage map, and the finger is left as the
//! tree's own growths would have left it.
//!
//! The program sees what it would without the window: the node array and
//! the header are the tree's after every append (the room is chosen so that
//! every word a growth changes moves by the same amount: the span keeps at
//! least a granule and stays the longest in each node whose parent entry it
//! sets), placements are the contract's, and a stale copy or any other
//! resize misses the window and takes the full path, which settles first.
//! (Of the program's own writes into a pool, one still tells: a length
//! written into another entry of a node whose maximum the window moves,
//! which the tree would recompute from the node; docs/runtime.md.) Windows
//! never open in a sanitized pool.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::extents::Extents;
use super::layout::{H_FREE_BYTES, H_HEIGHT, H_MAGIC, H_POOL_ID, H_ROOT, MAX_HEIGHT, Word};

/// How many of the header's first words a window keeps (the finger's own
/// check: the magic, the pool id, the root and the height); it compares all
/// but the pool id, which found it (`AppendWindow::header_written`).
const HEADER_CHECKED: usize = 4;
const _: () = assert!(
    H_MAGIC < HEADER_CHECKED
        && H_POOL_ID < HEADER_CHECKED
        && H_ROOT < HEADER_CHECKED
        && H_HEIGHT < HEADER_CHECKED
        && H_FREE_BYTES >= HEADER_CHECKED
);

/// The most granules one window claims (32 KiB): what the coverage map
/// claims at opening and gives back at settling is bounded by it.
pub const ROOM_MAX: i64 = 4096;
/// The fewest (one coverage map word), for a slice shorter than that: a
/// window's room is the slice's own length within these bounds, so short
/// bursts claim little and a long loop reopens rarely.
pub const ROOM_MIN: i64 = 64;

/// How many windows are open, in any pool: while none is, a resize goes
/// to the checked tree after one load and compare, without looking its
/// pool up twice. Only a hint (a window dropped with its pool's memory
/// leaves it high): the window itself decides.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// Whether any pool may have a window open (the count of open windows).
#[inline(always)]
pub fn any_open() -> bool {
    OPEN.load(Ordering::Relaxed) != 0
}

/// The node words a growth into the room changes, found when the window
/// opens (`Mem::window_words`): every one moves by the granules taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowWords {
    /// Word indices (into the node array) holding the span's key: its
    /// leaf slot, and each ancestor's entry while the entry below is its
    /// node's first.
    pub keys: [usize; MAX_HEIGHT],
    /// How many of `keys` are in use (at least 1).
    pub n_keys: usize,
    /// Word indices holding the span's length: its leaf slot, and each
    /// ancestor's entry while the span is the longest below it.
    pub lens: [usize; MAX_HEIGHT],
    /// How many of `lens` are in use (at least 1).
    pub n_lens: usize,
    /// The span's key (granules) when the window opened.
    pub key: i64,
    /// Its length (granules) then.
    pub len: i64,
    /// How many granules a growth may take while every word above moves
    /// by the same amount.
    pub room: i64,
}

impl WindowWords {
    /// Moves the words from their values after `from` granules were taken
    /// to their values after `to`: the keys to `key + to`, the lengths to
    /// `len - to`. False, with nothing written, when any word does not hold
    /// its value after `from` (the program wrote it: the tree decides).
    ///
    /// # Safety
    /// `nodes` is the node array these indices were found in.
    #[inline(always)]
    unsafe fn slide(&self, nodes: *mut Word, from: i64, to: i64) -> bool {
        if self.n_keys > 1 || self.n_lens > 1 {
            // SAFETY: the caller's contract.
            return unsafe { self.slide_chain(nodes, from, to) };
        }
        // SAFETY: the caller's contract; the first of each list is in use.
        unsafe {
            let (k, l) = (nodes.add(self.keys[0]), nodes.add(self.lens[0]));
            if k.read() != (self.key + from) as Word || l.read() != (self.len - from) as Word {
                return false;
            }
            k.write((self.key + to) as Word);
            l.write((self.len - to) as Word);
        }
        true
    }

    /// [`Self::slide`] with ancestors' entries too: out of line, so that
    /// the common window (its span's words in one leaf) keeps its answer's
    /// registers. (No bounds tests: this runs inside an `extern "C"` entry
    /// point, where a test's panic would abort.)
    ///
    /// # Safety
    /// As for [`Self::slide`].
    #[inline(never)]
    unsafe fn slide_chain(&self, nodes: *mut Word, from: i64, to: i64) -> bool {
        let lists = [
            (&self.keys, self.n_keys, self.key, 1),
            (&self.lens, self.n_lens, self.len, -1),
        ];
        for write in [false, true] {
            for &(idx, n, v, sign) in &lists {
                for j in 0..n.min(MAX_HEIGHT) {
                    // SAFETY: the caller's contract; `j < MAX_HEIGHT`.
                    let at = unsafe { nodes.add(*idx.get_unchecked(j)) };
                    if write {
                        // SAFETY: as above.
                        unsafe { at.write((v + sign * to) as Word) };
                    // SAFETY: as above.
                    } else if unsafe { at.read() } != (v + sign * from) as Word {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// No words (a closed window's).
    pub const NONE: WindowWords = WindowWords {
        keys: [0; MAX_HEIGHT],
        n_keys: 0,
        lens: [0; MAX_HEIGHT],
        n_lens: 0,
        key: 0,
        len: 0,
        room: 0,
    };
}

/// One pool's append window (kept in its finger, `super::finger::Path`);
/// addresses are the arena's, as the program holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppendWindow {
    /// The slice's address; 0 when no window is open.
    base: i64,
    /// Where its granules end now.
    end: i64,
    /// Where they ended when the window opened (the room began there).
    end0: i64,
    /// Where the room ends.
    limit: i64,
    /// The pool's high-water mark (an address) when the window opened:
    /// the bytes past it and past `end` were never handed out, so they are
    /// still zero.
    fresh: i64,
    /// The header the window was opened through: another copy of it is
    /// not this pool's (its totals would go stale) and takes the full path.
    tree: i64,
    /// That header's first four words (magic, pool id, root, height) when
    /// the window opened, which the tree's own growth checks through its
    /// finger: a program that wrote one gets the full path's answer.
    header: [i64; HEADER_CHECKED],
    /// The node words a growth writes.
    words: WindowWords,
    /// The arena's address when windows may open in this pool; 0 when they
    /// never do: a pool the runtime did not create for `slice_pool` (the
    /// Rust-side `SpanPool`, whose own reads of the record a window would
    /// leave behind), or a sanitized one (its addresses carry tags the
    /// window does not check).
    arena: i64,
}

impl AppendWindow {
    /// A pool's window that never opens.
    pub const NEVER: AppendWindow = AppendWindow {
        base: 0,
        end: 0,
        end0: 0,
        limit: 0,
        fresh: 0,
        tree: 0,
        header: [0; HEADER_CHECKED],
        words: WindowWords::NONE,
        arena: 0,
    };

    /// A closed window that may open, over the arena at `arena`.
    pub fn closed(arena: i64) -> AppendWindow {
        AppendWindow {
            arena,
            ..AppendWindow::NEVER
        }
    }

    /// Whether a window may open in this pool.
    #[inline(always)]
    pub fn may_open(&self) -> bool {
        self.arena != 0
    }

    /// Whether a window is open (then the pool's operations settle first).
    #[inline(always)]
    pub fn is_open(&self) -> bool {
        self.base != 0
    }

    /// Where the open window's slice ends now (an address).
    pub fn end(&self) -> i64 {
        self.end
    }

    /// Whether the program wrote one of the header words the window checks
    /// since it opened (compares in a row, no loop). The pool id is not
    /// compared: the window was found through it (`checked::window_append`),
    /// so another id names another pool, whose window is not this slice's.
    ///
    /// # Safety
    /// `tree` is valid for `HEADER_WORDS` words.
    #[inline(always)]
    unsafe fn header_written(&self, tree: *mut i64) -> bool {
        let h = &self.header;
        // SAFETY: the caller's contract; `HEADER_CHECKED <= HEADER_WORDS`.
        unsafe {
            tree.add(H_MAGIC).read() != h[H_MAGIC]
                || tree.add(H_ROOT).read() != h[H_ROOT]
                || tree.add(H_HEIGHT).read() != h[H_HEIGHT]
        }
    }

    /// Answers a resize of `[addr, addr + old)` to `new` bytes through the
    /// header at `tree`, when it is the window's slice growing within the
    /// room and the program has written none of the words the tree's own
    /// growth would check or change (the header's first four, the span's
    /// key and length words, which must hold what the window last wrote):
    /// writes the node words and the header's free-byte count, and
    /// returns the bytes the caller must zero-fill (as the full path does,
    /// from `old`; the count may be 0), left to it so that this runs
    /// without a call. `None`, with nothing changed, for every other
    /// resize, which the checked tree then answers as it would have without
    /// a window, scribbles included. `nodes` is the pool's registered node
    /// array. Any arguments: the compares are exact, so a wrong `old` or
    /// `new` only misses.
    ///
    /// # Safety
    /// The window is open on the pool `nodes` belongs to, whose arena is
    /// registered with a base, and `tree` is valid for `HEADER_WORDS` words.
    #[inline(always)]
    pub unsafe fn append(
        &mut self,
        tree: *mut i64,
        nodes: *mut Word,
        addr: i64,
        (old, new): (i64, i64),
    ) -> Option<(i64, i64)> {
        if addr != self.base
            || tree as i64 != self.tree
            || addr.wrapping_add(old.wrapping_add(7) & !7) != self.end
            || new <= old
            || new > self.limit - addr
            // SAFETY: the caller's contract.
            || unsafe { self.header_written(tree) }
        {
            return None;
        }
        // `0 < old < new <= limit - addr`: nothing below overflows.
        let new_end = addr + ((new + 7) & !7);
        // The full path zero-fills below its high-water mark, which the
        // window's growths would have raised to `end`.
        let zero = (
            addr + old,
            new_end.min(self.fresh.max(self.end)) - (addr + old),
        );
        if new_end != self.end {
            let (done, taken) = ((self.end - self.end0) >> 3, (new_end - self.end0) >> 3);
            // SAFETY: `Mem::window_words` found the words' indices in the
            // registered node array.
            if !unsafe { self.words.slide(nodes, done, taken) } {
                return None;
            }
            // SAFETY: the caller's contract; the header's informational
            // count, wrapping, as the tree's own edit bumps it.
            unsafe {
                let free = tree.add(H_FREE_BYTES);
                free.write(free.read().wrapping_sub(new_end - self.end));
            }
            self.end = new_end;
        }
        Some(zero)
    }

    /// Opens the window on the allocation `[off, end)` (offsets), right
    /// after a growth through the growth hint left it ending at `end`, when
    /// `words` describe the span after it, reached through the header at
    /// `tree`. The room is claimed in the coverage map first; if any of it
    /// is live (a scribbled tree), no window opens. The pool must be one
    /// whose window may open.
    ///
    /// # Safety
    /// `tree` is valid for `HEADER_WORDS` words (the call's header).
    pub unsafe fn open(
        &mut self,
        ext: &Extents,
        tree: *mut i64,
        (off, end): (i64, i64),
        words: WindowWords,
    ) {
        let room = words.room.min(((end - off) >> 3).clamp(ROOM_MIN, ROOM_MAX));
        if room <= 0 || !ext.claim(end, room << 3) {
            return;
        }
        OPEN.fetch_add(1, Ordering::Relaxed);
        let arena = self.arena;
        *self = AppendWindow {
            base: arena + off,
            end: arena + end,
            end0: arena + end,
            limit: arena + end + (room << 3),
            fresh: arena + ext.high_water(),
            tree: tree as i64,
            // SAFETY: the caller's contract.
            header: unsafe { tree.cast::<[i64; HEADER_CHECKED]>().read() },
            words,
            arena,
        };
    }

    /// Closes the window, if open, without recording anything: its pool's
    /// record is being released with it.
    pub fn forget(&mut self) {
        if self.is_open() {
            *self = AppendWindow::closed(self.arena);
            OPEN.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Closes the open window: the slice's growth goes into the boundary
    /// record (and the high-water mark), and the room it did not take is
    /// given back in the coverage map (the tree's words are already the
    /// growth's: the window wrote them). Returns, for the finger
    /// (`Path::settle_window`), the offset where the slice now ends and,
    /// when the span's length is its leaf's entry in the parent too, that
    /// entry's value now.
    pub fn settle(&mut self, ext: &Extents) -> (i64, Option<i64>) {
        let w = *self;
        *self = AppendWindow::closed(w.arena);
        OPEN.fetch_sub(1, Ordering::Relaxed);
        if w.limit > w.end {
            ext.unclaim(w.end - w.arena, w.limit - w.end);
        }
        if w.end > w.end0 {
            ext.resize(w.base - w.arena, w.end0 - w.base, w.end - w.base);
        }
        let len = w.words.len - ((w.end - w.end0) >> 3);
        (w.end - w.arena, (w.words.n_lens > 1).then_some(len))
    }
}
