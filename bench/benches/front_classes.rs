//! How many operations of a recorded trace a *small-span front* would serve
//! without the span tree: a design study for issue 27, not a measurement of
//! code that exists.
//!
//! The front studied keeps every free span of at most `K` granules out of the
//! tree, in an index of its own ordered by address (with boundary tags for
//! coalescing), and leaves longer spans in the tree. Placement stays the exact
//! lowest-address first fit: an allocation of `g <= K` granules takes the lower
//! of the first small span of length `g..=K` and the first long span (every
//! long span fits it, so that is the tree's leftmost span); an allocation of
//! more than `K` is the tree's first fit as today.
//!
//! ```text
//! cargo bench -p tern-bench --bench front_classes --no-run
//! target/release/deps/front_classes-<hash> bench/traces/python.trace.gz
//! ```
//!
//! The trace is replayed on the builtin pool (`SpanPool<Unchecked>`, which
//! gives the placements) while a map of the free spans follows it; each
//! operation is classed by the lengths it meets, for several `K`:
//!
//! * allocation: **small** (its first fit is a small span), **long, rest long**
//!   (carved from the first long span, which stays long: one tree edit),
//!   **long, rest small** (the first long span carved short: it leaves the tree
//!   for the front), **big** (`g > K`: the tree's first fit);
//! * free: **small** (the merged span is small and no neighbour was long),
//!   **long neighbour** (merges with a long span: a tree edit), **small to
//!   long** (small pieces merge into a long span: it enters the tree).
//!
//! Resizes are counted apart. At the end the map must hold exactly the pool's
//! free spans, else the run fails.
//!
//! The run also drives two prototypes of such a front for `K` = 64 granules
//! ([`Front`]: boundary tags, a bitmap per length over 64-granule blocks with
//! three summary levels, and each length's lowest offset; [`MaxFront`]: an
//! implicit tree of maxima over the address space), kept equal to the map's
//! small spans: every allocation whose first fit is a small span must get the
//! pool's answer from both, else the run fails. Their operations (insert,
//! remove, first fit, and `MaxFront`'s carve) are never inlined, so callgrind
//! gives their cost per call (the run prints the call counts; `MaxFront`'s
//! inserts include its carves, which replace a removal each):
//!
//! ```text
//! valgrind --tool=callgrind target/release/deps/front_classes-<hash> python.trace
//! callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep Front::
//! ```
//!
//! It needs AVX2 (as the runtime's fast paths do). Without arguments (as
//! `cargo bench` runs it) it does nothing.
//!
//! `MaxFront` was later built into the builtin pool and measured there: frees
//! became cheaper, allocations dearer than the tree's finger makes them, and
//! CPU time worse on three traces of four, so it was not kept
//! (docs/benchmarks.md, "Eleventh pass").

mod common;

use std::collections::BTreeMap;

use tern_runtime::{SpanPool, Unchecked};

/// The front's bound, in 8-byte granules, for each column of the report.
const BOUNDS: [i64; 5] = [8, 16, 32, 64, 128];

/// The prototypes' bound, in granules (512 bytes).
const K: usize = 64;

/// No span of that length: the largest key.
const NONE: u32 = u32::MAX;

/// A prototype of the small-span front (see the module docs): the free spans
/// of `1..=K` granules of an arena of at most 2^26 granules, by length and
/// address. Safe code with bounds checks: a runtime version would index raw
/// memory (and save about ten instructions a call).
struct Front {
    /// Per granule: the length of the small free span that starts there (0: none).
    head: Vec<u8>,
    /// Per granule: the length of the small free span that ends there.
    tail: Vec<u8>,
    /// Per length `l`, a bit per 64-granule block holding a span of length
    /// `l` (`levels[0]`), then a bit per nonzero word of the level below.
    levels: [Vec<u64>; 3],
    /// A bit per nonzero word of `levels[2]`, per length.
    top: [u64; K],
    /// Words per length in each level.
    words: [usize; 3],
    /// Per length `l` (index `l - 1`), `offset << 6 | (l - 1)` of its lowest
    /// span, [`NONE`] when it has none: the minimum over lengths `g..=K` is
    /// then the first fit for `g` among small spans, and names its length.
    lowest: [u32; K],
    /// Calls of `insert`, `remove`, `first_fit` (for costs per call).
    calls: [u64; 3],
}

impl Front {
    fn new(granules: usize) -> Front {
        assert!(granules <= 1 << 26, "keys hold 26-bit offsets");
        let w0 = granules / 64 / 64 + 1;
        let words = [w0, w0 / 64 + 1, w0 / 64 / 64 + 1];
        Front {
            head: vec![0; granules + 64],
            tail: vec![0; granules + 64],
            levels: words.map(|w| vec![0; w * K]),
            top: [0; K],
            words,
            lowest: [NONE; K],
            calls: [0; 3],
        }
    }

    /// The starts of spans of length `l` in block `b`, as a bit mask.
    #[target_feature(enable = "avx2")]
    fn block(&self, b: usize, l: usize) -> u64 {
        use std::arch::x86_64::*;
        let h = &self.head[b * 64..b * 64 + 64];
        let v = _mm256_set1_epi8(l as i8);
        // SAFETY: `h` holds 64 bytes; unaligned loads.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(h.as_ptr().cast()),
                _mm256_loadu_si256(h.as_ptr().add(32).cast()),
            )
        };
        let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, v)) as u32 as u64;
        let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(y, v)) as u32 as u64;
        lo | hi << 32
    }

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn insert(&mut self, s: usize, l: usize) {
        self.calls[0] += 1;
        self.head[s] = l as u8;
        self.tail[s + l - 1] = l as u8;
        // Set the block's bit, and each summary bit whose word was empty.
        let mut bit = s >> 6;
        for level in 0..3 {
            let w = &mut self.levels[level][(l - 1) * self.words[level] + (bit >> 6)];
            let was = *w;
            *w |= 1 << (bit & 63);
            bit >>= 6;
            if was != 0 {
                break;
            }
            if level == 2 {
                self.top[l - 1] |= 1 << (bit & 63);
            }
        }
        let key = (s as u32) << 6 | (l - 1) as u32;
        self.lowest[l - 1] = self.lowest[l - 1].min(key);
    }

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn remove(&mut self, s: usize, l: usize) {
        self.calls[1] += 1;
        self.head[s] = 0;
        self.tail[s + l - 1] = 0;
        let mut bit = s >> 6;
        if self.block(bit, l) == 0 {
            // Clear the block's bit, and each summary bit whose word emptied.
            for level in 0..3 {
                let w = &mut self.levels[level][(l - 1) * self.words[level] + (bit >> 6)];
                *w &= !(1 << (bit & 63));
                bit >>= 6;
                if *w != 0 {
                    break;
                }
                if level == 2 {
                    self.top[l - 1] &= !(1 << (bit & 63));
                }
            }
        }
        if self.lowest[l - 1] >> 6 == s as u32 {
            self.lowest[l - 1] = self.next(l, s + 1);
        }
    }

    /// The key of the lowest span of length `l` at or after granule `from`.
    #[target_feature(enable = "avx2")]
    fn next(&self, l: usize, from: usize) -> u32 {
        let key = |s: usize| (s as u32) << 6 | (l - 1) as u32;
        let here = self.block(from >> 6, l) & (!0u64 << (from & 63));
        if here != 0 {
            return key((from & !63) + here.trailing_zeros() as usize);
        }
        // Climb while the rest of a word is empty, then go down the first
        // set bits.
        let mut bit = (from >> 6) + 1;
        let mut found = None;
        for level in 0..3 {
            let base = (l - 1) * self.words[level];
            if (bit >> 6) < self.words[level] {
                let w = self.levels[level][base + (bit >> 6)] & (!0u64 << (bit & 63));
                if w != 0 {
                    found = Some((level, (bit & !63) + w.trailing_zeros() as usize));
                    break;
                }
            }
            bit = (bit >> 6) + 1;
        }
        let (mut level, mut bit) = match found {
            Some(f) => f,
            None if bit < 64 && self.top[l - 1] & (!0u64 << bit) != 0 => (
                3,
                (self.top[l - 1] & (!0u64 << bit)).trailing_zeros() as usize,
            ),
            None => return NONE,
        };
        while level > 0 {
            level -= 1;
            let w = self.levels[level][(l - 1) * self.words[level] + bit];
            bit = bit * 64 + w.trailing_zeros() as usize;
        }
        key(bit * 64 + self.block(bit, l).trailing_zeros() as usize)
    }

    /// The lowest small span of at least `g` granules: `(start, length)`.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn first_fit(&mut self, g: usize) -> Option<(usize, usize)> {
        use std::arch::x86_64::*;
        self.calls[2] += 1;
        let limit = _mm256_set1_epi32(g as i32 - 1);
        let mut min = _mm256_set1_epi32(-1);
        let mut index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for chunk in self.lowest.chunks_exact(8) {
            // SAFETY: eight words; an unaligned load.
            let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
            // Lengths below `g` read as NONE.
            let below = _mm256_cmpgt_epi32(limit, index);
            min = _mm256_min_epu32(min, _mm256_or_si256(v, below));
            index = _mm256_add_epi32(index, _mm256_set1_epi32(8));
        }
        let m = _mm_min_epu32(
            _mm256_castsi256_si128(min),
            _mm256_extracti128_si256(min, 1),
        );
        let m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0b01_00_11_10));
        let m = _mm_min_epu32(m, _mm_shuffle_epi32(m, 0b10_11_00_01));
        let m = _mm_cvtsi128_si32(m) as u32;
        (m != NONE).then(|| ((m >> 6) as usize, (m & 63) as usize + 1))
    }
}

/// A second prototype of the front, over the same spans: an implicit tree
/// of maxima over the address space instead of sets per length. Level 0
/// holds, per 64-granule block, the longest small span starting in it;
/// each level above, the maximum of 64 entries below; a first fit goes down
/// from the lowest level whose entries in use fit one 64-entry group,
/// taking the first entry of at least `g` (one 64-byte compare a level),
/// and an update goes up while a maximum changes. Positions are fixed by
/// address: no keys, no child indices, no entries to shift. A carve that
/// leaves a small rest is one update ([`MaxFront::carve`]). Reads go
/// through raw pointers, as a runtime version's would.
struct MaxFront {
    /// Per granule: the length of the small free span that starts there (0: none).
    head: Vec<u8>,
    /// Per granule: the length of the small free span that ends there.
    tail: Vec<u8>,
    /// `levels[0][b]`: the longest span starting in block `b`; `levels[i +
    /// 1][j]`: the maximum of `levels[i][64 j..64 j + 64]`. Padded to 64.
    levels: [Vec<u8>; 4],
    /// The lowest level whose entries in use (below the highest span end
    /// seen) lie in its first 64: where a first fit starts.
    start: usize,
    /// The highest end of a span inserted so far (granules).
    high: usize,
    /// Calls of `insert` (and `carve`), `remove`, `first_fit`.
    calls: [u64; 3],
}

impl MaxFront {
    fn new(granules: usize) -> MaxFront {
        let mut n = granules;
        let levels = [0; 4].map(|_| {
            n = n.div_ceil(64);
            vec![0u8; n.next_multiple_of(64)]
        });
        assert!(levels[3].len() == 64, "four levels cover the arena");
        MaxFront {
            head: vec![0; granules + 64],
            tail: vec![0; granules + 64],
            levels,
            start: 0,
            high: 0,
            calls: [0; 3],
        }
    }

    /// The 64 bytes at `p` as a mask of those `>= g`.
    ///
    /// # Safety
    /// `p` must be valid for reading 64 bytes.
    #[target_feature(enable = "avx2")]
    unsafe fn at_least(p: *const u8, g: u8) -> u64 {
        use std::arch::x86_64::*;
        let v = _mm256_set1_epi8(g as i8);
        // SAFETY: the caller's contract; unaligned loads.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(32).cast()),
            )
        };
        let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(x, v), x)) as u32;
        let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(y, v), y)) as u32;
        lo as u64 | (hi as u64) << 32
    }

    /// The maximum of the 64 bytes at `p`.
    ///
    /// # Safety
    /// As for [`Self::at_least`].
    #[target_feature(enable = "avx2")]
    unsafe fn max64(p: *const u8) -> u8 {
        use std::arch::x86_64::*;
        // SAFETY: the caller's contract; unaligned loads.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(32).cast()),
            )
        };
        let m = _mm256_max_epu8(x, y);
        let m = _mm_max_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
        let m = _mm_max_epu8(m, _mm_srli_si128(m, 8));
        let m = _mm_max_epu8(m, _mm_srli_si128(m, 4));
        let m = _mm_max_epu8(m, _mm_srli_si128(m, 2));
        let m = _mm_max_epu8(m, _mm_srli_si128(m, 1));
        _mm_cvtsi128_si32(m) as u8
    }

    /// Raises the maxima above granule `s` to at least `l`.
    #[target_feature(enable = "avx2")]
    fn raise(&mut self, s: usize, l: u8) {
        let mut i = s;
        for level in self.levels.iter_mut() {
            i >>= 6;
            // SAFETY: `i` is the entry of a granule of the arena at this level.
            let e = unsafe { level.get_unchecked_mut(i) };
            if *e >= l {
                break;
            }
            *e = l;
        }
    }

    /// Recomputes the maxima above granule `s`, which held a span of `l`
    /// (now shorter or gone), while they change.
    #[target_feature(enable = "avx2")]
    fn lower(&mut self, s: usize, l: u8) {
        let mut i = s >> 6;
        // SAFETY: entries of granules of the arena; groups of 64 are padded.
        unsafe {
            if *self.levels[0].get_unchecked(i) != l {
                return;
            }
            let mut below = self.head.as_ptr();
            for k in 0..4 {
                let m = Self::max64(below.add(i * 64));
                let e = self.levels[k].get_unchecked_mut(i);
                if *e == m {
                    return;
                }
                *e = m;
                below = self.levels[k].as_ptr();
                i >>= 6;
            }
        }
    }

    /// Writes `tag` at both ends of the span `[s, s + l)`.
    #[inline(always)]
    fn tag(&mut self, s: usize, l: usize, tag: u8) {
        // SAFETY: `s + l` is at most the arena's granules.
        unsafe {
            *self.head.get_unchecked_mut(s) = tag;
            *self.tail.get_unchecked_mut(s + l - 1) = tag;
        }
    }

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn insert(&mut self, s: usize, l: usize) {
        self.calls[0] += 1;
        self.tag(s, l, l as u8);
        self.raise(s, l as u8);
        if s + l > self.high {
            self.high = s + l;
            while self.start < 3 && self.high > 64usize.pow(self.start as u32 + 2) {
                self.start += 1;
            }
        }
    }

    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn remove(&mut self, s: usize, l: usize) {
        self.calls[1] += 1;
        self.tag(s, l, 0);
        self.lower(s, l as u8);
    }

    /// Carves `g` from the front of the span `[s, s + l)`, the rest staying
    /// small: one update when both starts share a block.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn carve(&mut self, s: usize, l: usize, g: usize) {
        self.calls[0] += 1;
        let rest = (l - g) as u8;
        // SAFETY: as in `tag`.
        unsafe { *self.head.get_unchecked_mut(s) = 0 };
        self.tag(s + g, l - g, rest);
        if (s + g) >> 6 != s >> 6 {
            self.raise(s + g, rest);
        }
        self.lower(s, l as u8);
    }

    /// The lowest small span of at least `g` granules: `(start, length)`.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn first_fit(&mut self, g: usize) -> Option<(usize, usize)> {
        self.calls[2] += 1;
        let g = g as u8;
        let mut i = 0;
        // SAFETY: every group read is of entries of the arena, padded to 64.
        unsafe {
            for k in (0..=self.start).rev() {
                let m = Self::at_least(self.levels[k].as_ptr().add(i * 64), g);
                if m == 0 {
                    return None;
                }
                i = i * 64 + m.trailing_zeros() as usize;
            }
            let m = Self::at_least(self.head.as_ptr().add(i * 64), g);
            let s = i * 64 + m.trailing_zeros() as usize;
            Some((s, *self.head.get_unchecked(s) as usize))
        }
    }
}

/// Free spans `offset -> length`, in granules, following the pool; its
/// small spans also in a [`Front`] and a [`MaxFront`].
struct FreeMap(BTreeMap<i64, i64>, Front, MaxFront);

impl FreeMap {
    fn insert(&mut self, s: i64, l: i64) {
        self.0.insert(s, l);
        if l as usize <= K {
            // SAFETY: `main` checked that the CPU has AVX2 (the target feature).
            unsafe {
                self.1.insert(s as usize, l as usize);
                self.2.insert(s as usize, l as usize);
            }
        }
    }

    fn remove(&mut self, s: i64) -> Option<i64> {
        let l = self.0.remove(&s)?;
        if l as usize <= K {
            // SAFETY: as in `insert`.
            unsafe {
                self.1.remove(s as usize, l as usize);
                self.2.remove(s as usize, l as usize);
            }
        }
        Some(l)
    }

    /// Carves `g` from the front of the free span at `o` (a first fit or a
    /// growth in place); returns the span's length before.
    fn carve(&mut self, o: i64, g: i64) -> i64 {
        let l = self.0[&o];
        if l > g && l as usize <= K {
            // The rest stays small: `MaxFront` updates in one go.
            self.0.remove(&o);
            self.0.insert(o + g, l - g);
            // SAFETY: as in `insert`.
            unsafe {
                self.1.remove(o as usize, l as usize);
                self.1.insert((o + g) as usize, (l - g) as usize);
                self.2.carve(o as usize, l as usize, g as usize);
            }
            return l;
        }
        self.remove(o).expect("a carve starts at a free span");
        if l > g {
            self.insert(o + g, l - g);
        }
        l
    }

    /// Frees `[s, s + g)`, merging with free neighbours; returns the
    /// predecessor's and successor's lengths (0 when not merged) and the
    /// merged length.
    fn free(&mut self, s: i64, g: i64) -> (i64, i64, i64) {
        let (mut start, mut len, mut pred, mut succ) = (s, g, 0, 0);
        if let Some((&po, &pl)) = self.0.range(..s).next_back()
            && po + pl == s
        {
            self.remove(po);
            (start, len, pred) = (po, len + pl, pl);
        }
        if let Some(sl) = self.remove(s + g) {
            (len, succ) = (len + sl, sl);
        }
        self.insert(start, len);
        (pred, succ, len)
    }
}

/// Counts per class (see the module docs), one row per bound.
#[derive(Default, Clone, Copy)]
struct Classes {
    alloc: [u64; 4],
    free: [u64; 3],
}

fn granules(bytes: i64) -> i64 {
    (bytes + 7) >> 3
}

/// Classes an allocation of `g` granules carved from a span of `l`.
fn class_alloc(rows: &mut [Classes], g: i64, l: i64) {
    for (k, row) in BOUNDS.iter().zip(rows) {
        let class = if g > *k {
            3
        } else if l <= *k {
            0
        } else if l - g > *k {
            1
        } else {
            2
        };
        row.alloc[class] += 1;
    }
}

/// Classes a free that met neighbours of `pred` and `succ` granules (0:
/// none) and left a span of `merged`.
fn class_free(rows: &mut [Classes], (pred, succ, merged): (i64, i64, i64)) {
    for (k, row) in BOUNDS.iter().zip(rows) {
        let class = if pred > *k || succ > *k {
            1
        } else if merged > *k {
            2
        } else {
            0
        };
        row.free[class] += 1;
    }
}

fn main() {
    // `cargo bench` passes `--bench`.
    let Some(path) = std::env::args().skip(1).find(|a| !a.starts_with("--")) else {
        return;
    };
    let trace = common::trace::Trace::load(&path).unwrap_or_else(|e| {
        eprintln!("front_classes: {e}");
        std::process::exit(2);
    });
    assert!(
        std::arch::is_x86_feature_detected!("avx2"),
        "front_classes needs AVX2"
    );
    let arena: i64 = 1 << 29;
    let mut pool = SpanPool::<Unchecked>::new(arena).expect("a pool");
    let mut map = FreeMap(
        BTreeMap::new(),
        Front::new((arena >> 3) as usize),
        MaxFront::new((arena >> 3) as usize),
    );
    map.insert(0, arena >> 3);
    let mut answers = 0u64;
    let mut rows = [Classes::default(); BOUNDS.len()];
    let mut resizes = 0u64;
    let mut objs = vec![(0i64, 0i64); trace.ids];
    for &(op, id, size) in &trace.ops {
        let (o, old) = objs[id as usize];
        let size = size as i64;
        let now = if op == 1 || size == 0 {
            if old > 0 {
                pool.free(o, old).expect("a trace frees what it holds");
                class_free(&mut rows, map.free(o >> 3, granules(old)));
            }
            (0, 0)
        } else if op == 0 || old == 0 {
            let at = pool.alloc(size).expect("the arena holds the trace");
            let g = granules(size);
            let l = map.0[&(at >> 3)];
            if l as usize <= K {
                let want = Some(((at >> 3) as usize, l as usize));
                // SAFETY: as in `FreeMap::insert`.
                let got = unsafe { map.1.first_fit(g as usize) };
                assert_eq!(got, want, "the front's first fit");
                // SAFETY: as above.
                let got = unsafe { map.2.first_fit(g as usize) };
                assert_eq!(got, want, "the maxima front's first fit");
                answers += 1;
            }
            class_alloc(&mut rows, g, map.carve(at >> 3, g));
            (at, size)
        } else {
            resizes += 1;
            let at = pool
                .resize(o, old, size)
                .expect("the arena holds the trace");
            let (og, ng) = (granules(old), granules(size));
            if at != o {
                map.carve(at >> 3, ng);
                map.free(o >> 3, og);
            } else if ng < og {
                map.free((o >> 3) + ng, og - ng);
            } else if ng > og {
                map.carve((o >> 3) + og, ng - og);
            }
            (at, size)
        };
        objs[id as usize] = now;
    }
    let spans = pool.check_invariants().expect("a valid tree");
    let mirrored: Vec<(i64, i64)> = map.0.iter().map(|(&o, &l)| (o << 3, l << 3)).collect();
    assert_eq!(spans, mirrored, "the map of free spans left the pool's");
    let (allocs, frees) = (
        rows[0].alloc.iter().sum::<u64>(),
        rows[0].free.iter().sum::<u64>(),
    );
    println!("{path}: {allocs} allocations, {frees} frees, {resizes} resizes (not classed)");
    for (name, [inserts, removes, fits]) in [("Front", map.1.calls), ("MaxFront", map.2.calls)] {
        println!(
            "{name} (K = {} B): {answers} first fits answered as the pool did; calls: insert {inserts}, remove {removes}, first_fit {fits}",
            K * 8
        );
    }
    println!(
        "{:>6} | {:>7} {:>10} {:>11} {:>6} | {:>7} {:>10} {:>13}",
        "K", "small", "long,long", "long,small", "big", "small", "long nbr", "small->long"
    );
    let pct = |n: u64, of: u64| 100.0 * n as f64 / of as f64;
    for (k, row) in BOUNDS.iter().zip(rows.iter()) {
        let [a0, a1, a2, a3] = row.alloc.map(|n| pct(n, allocs));
        let [f0, f1, f2] = row.free.map(|n| pct(n, frees));
        println!(
            "{:>5}B | {a0:>6.1}% {a1:>9.1}% {a2:>10.1}% {a3:>5.1}% | {f0:>6.1}% {f1:>9.1}% {f2:>12.1}%",
            k * 8
        );
    }
}
