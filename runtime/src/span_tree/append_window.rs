//! The append window of a library pool (`slice_pool`): a slice appended to
//! in a loop grows into the free span right after it, and each of those
//! appends, taken through the growth hint, still paid the whole resize
//! behind the extern (the registry, the boundary record's checks and
//! update, the high-water mark, the copy's edit: about 250 instructions an
//! append).
//!
//! When the hint has served the same slice [`super::finger::LIBRARY_GROWN_IN_A_ROW`]
//! times in a row, `tern_span_resize` leaves a window open in the pool's
//! runtime memory (beside its finger): the slice's address and end, the end
//! of the room it may grow into, and the node words a growth changes. Each
//! growth of that slice that fits the room is then answered from the
//! window: the new bytes zero-filled, the node words and the header's
//! free-byte count written as the tree's own edit would write them, into
//! the runtime's copy of the tree and the program's alike (values computed
//! from the window's own record: the runtime's copy is never written by the
//! program, so nothing needs checking). The pool's next other operation
//! settles first ([`AppendWindow::settle`]): the growth goes into the
//! boundary record and the high-water mark, and the finger is left as the
//! tree's own growths would have left it. No other operation can place a
//! span in the room meanwhile: every operation on the pool settles first,
//! and no other pool's reaches its arena.
//!
//! The program sees what it would without the window: the node array and
//! the header are the tree's after every append (the room is chosen so that
//! every word a growth changes moves by the same amount: the span keeps at
//! least a granule and stays the longest in each node whose parent entry it
//! sets), placements are the contract's, and another header (a copy of the
//! `Pool` elsewhere) or any other resize misses the window and takes the
//! full path, which settles first. Windows never open in a sanitized pool.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::extents::Extents;
use super::layout::{H_FREE_BYTES, MAX_HEIGHT, Word};

/// The most granules one window offers (32 KiB): a window's room is the
/// slice's own length within these bounds, so short bursts take a little
/// of the span after them and a long loop reopens rarely.
pub const ROOM_MAX: i64 = 4096;
/// The fewest granules a window offers.
pub const ROOM_MIN: i64 = 64;

/// The route a `tern_span_resize` call takes, one word: twice the number
/// of windows open in any pool, plus 1 until the tree's AVX2 copies are
/// known to be the ones to run (`super::scan`, [`note_backend`]). At 0 —
/// no window open anywhere, AVX2 selected — the extern calls the tree's
/// AVX2 copy after one load and compare ([`Route::is_clear`]), where the
/// test of the windows and the backend's took two of each. The count is
/// only a hint (a window dropped with its pool's memory leaves it high):
/// the window itself decides. One atomic word, changed by read-modify-
/// writes, so that no interleaving of a window's opening and the
/// backend's choice reads as clear while a window is open.
static ROUTE: AtomicUsize = AtomicUsize::new(1);

/// The route of a `tern_span_resize` call, read once ([`ROUTE`]).
#[derive(Clone, Copy, Debug)]
pub struct Route(usize);

impl Route {
    /// Whether no window is open in any pool and the AVX2 copies are
    /// selected.
    #[inline(always)]
    pub fn is_clear(self) -> bool {
        self.0 == 0
    }
    /// Whether any pool may have a window open (the count of open windows).
    #[inline(always)]
    pub fn any_open(self) -> bool {
        self.0 > 1
    }
}

/// The route a `tern_span_resize` call takes now.
#[inline(always)]
pub fn route() -> Route {
    Route(ROUTE.load(Ordering::Relaxed))
}

/// Records whether the AVX2 copies are the ones to run (`false` while
/// unknown, or when the portable copies are forced): what
/// [`Route::is_clear`] needs besides the windows.
pub(crate) fn note_backend(avx2: bool) {
    if avx2 {
        ROUTE.fetch_and(!1, Ordering::Relaxed);
    } else {
        ROUTE.fetch_or(1, Ordering::Relaxed);
    }
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
    /// `len - to`, in the runtime's copy of the node array (which the
    /// program's shows: windows open only in pools `library::create`
    /// made, whose node arrays share the runtime's pages).
    ///
    /// # Safety
    /// `nodes` is the node array these indices were found in.
    #[inline(always)]
    unsafe fn slide(&self, nodes: *mut Word, to: i64) {
        if self.n_keys > 1 || self.n_lens > 1 {
            // SAFETY: the caller's contract.
            return unsafe { self.slide_chain(nodes, to) };
        }
        let (k, l) = ((self.key + to) as Word, (self.len - to) as Word);
        // SAFETY: the caller's contract; `Mem::window_words` found the
        // indices inside the node array.
        unsafe {
            let (kp, lp) = (nodes.add(self.keys[0]), nodes.add(self.lens[0]));
            kp.write(k);
            lp.write(l);
        }
    }

    /// [`Self::slide`] with ancestors' entries too: out of line, so that
    /// the common window (its span's words in one leaf) keeps its answer's
    /// registers. (No bounds tests: this runs inside an `extern "C"` entry
    /// point, where a test's panic would abort.)
    ///
    /// # Safety
    /// As for [`Self::slide`].
    #[inline(never)]
    unsafe fn slide_chain(&self, nodes: *mut Word, to: i64) {
        let lists = [
            (&self.keys, self.n_keys, (self.key + to) as Word),
            (&self.lens, self.n_lens, (self.len - to) as Word),
        ];
        for &(idx, n, v) in &lists {
            for j in 0..n.min(MAX_HEIGHT) {
                // SAFETY: as in `slide`; j < MAX_HEIGHT.
                unsafe {
                    let at = nodes.add(*idx.get_unchecked(j));
                    at.write(v);
                }
            }
        }
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
    /// The program's header the window was opened through: another copy
    /// of it is not the one the tree's edits are mirrored into (its totals
    /// would go stale) and takes the full path.
    tree: i64,
    /// The runtime's copy of the tree: its header's address, and where its
    /// node array starts.
    shadow: (i64, i64),
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
        shadow: (0, 0),
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

    /// Answers a resize of `[addr, addr + old)` to `new` bytes through the
    /// program's header at `tree`, when it is the window's slice growing
    /// within the room through the header the window was opened through:
    /// writes the node words (into the runtime's copy, which the program's
    /// node array shows) and the header's free-byte count (both headers),
    /// and returns the bytes the caller must zero-fill (as the
    /// full path does, from `old`; the count may be 0), left to it so that
    /// this runs without a call. `None`, with nothing changed, for every
    /// other resize, which the tree then answers as it would have without
    /// a window. Any arguments: the compares are exact, so a wrong `old`
    /// or `new` only misses.
    ///
    /// # Safety
    /// The window is open on the pool `tree` is the header of, whose arena
    /// is registered with a base, and `tree` is valid for `HEADER_WORDS` words.
    #[inline(always)]
    pub unsafe fn append(
        &mut self,
        tree: *mut i64,
        addr: i64,
        (old, new): (i64, i64),
    ) -> Option<(i64, i64)> {
        // `new <= limit - addr` cannot overflow: both are addresses of the
        // arena; the slice must end where the window's does.
        if addr != self.base
            || tree as i64 != self.tree
            || addr.wrapping_add(old.wrapping_add(7) & !7) != self.end
            || new <= old
            || new > self.limit - addr
        {
            return None;
        }
        let new_end = addr + ((new + 7) & !7);
        // Bytes past both the window's end and the high-water mark at its
        // opening were never handed out: still the OS's zeros.
        let zero = (
            addr + old,
            new_end.min(self.fresh.max(self.end)) - (addr + old),
        );
        if new_end != self.end {
            let (hdr, shadow_nodes) = (self.shadow.0 as *mut i64, self.shadow.1 as *mut Word);
            // SAFETY: the window's words were found in the runtime's copy
            // (the caller's contract); both headers are HEADER_WORDS long.
            unsafe {
                self.words.slide(shadow_nodes, (new_end - self.end0) >> 3);
                let free = hdr
                    .add(H_FREE_BYTES)
                    .read()
                    .wrapping_sub(new_end - self.end);
                hdr.add(H_FREE_BYTES).write(free);
                tree.add(H_FREE_BYTES).write_unaligned(free);
            }
            self.end = new_end;
        }
        Some(zero)
    }

    /// Opens the window on the allocation `[off, end)` (offsets), right
    /// after a growth through the growth hint left it ending at `end`, when
    /// `words` describe the span after it in the runtime's copy of the tree
    /// (`shadow`: its header and node array), reached through the program's
    /// header at `tree`. The pool must be one whose window may open.
    pub fn open(
        &mut self,
        ext: &Extents,
        (tree, shadow): (*mut i64, (i64, i64)),
        (off, end): (i64, i64),
        words: WindowWords,
    ) {
        let room = words.room.min(((end - off) >> 3).clamp(ROOM_MIN, ROOM_MAX));
        if room <= 0 {
            return;
        }
        ROUTE.fetch_add(2, Ordering::Relaxed);
        let arena = self.arena;
        *self = AppendWindow {
            base: arena + off,
            end: arena + end,
            end0: arena + end,
            limit: arena + end + (room << 3),
            fresh: arena + ext.high_water(),
            tree: tree as i64,
            shadow,
            words,
            arena,
        };
    }

    /// Closes the window, if open, without recording anything: its pool's
    /// record is being released with it.
    pub fn forget(&mut self) {
        if self.is_open() {
            *self = AppendWindow::closed(self.arena);
            ROUTE.fetch_sub(2, Ordering::Relaxed);
        }
    }

    /// Closes the open window: the slice's growth goes into the boundary
    /// record (and the high-water mark); the tree's words are already the
    /// growth's (the window wrote them). Returns, for the finger
    /// (`Path::settle_window`), the offset where the slice now ends and,
    /// when the span's length is its leaf's entry in the parent too, that
    /// entry's value now.
    pub fn settle(&mut self, ext: &Extents) -> (i64, Option<i64>) {
        let w = *self;
        *self = AppendWindow::closed(w.arena);
        ROUTE.fetch_sub(2, Ordering::Relaxed);
        if w.end > w.end0 {
            ext.resize(w.base - w.arena, w.end0 - w.base, w.end - w.base);
        }
        let len = w.words.len - ((w.end - w.end0) >> 3);
        (w.end - w.arena, (w.words.n_lens > 1).then_some(len))
    }
}
