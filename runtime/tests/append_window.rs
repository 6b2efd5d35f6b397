//! The library's append window (`span_tree::append_window`), through the
//! externs `slice_pool` calls: a pool `tern_span_new` made, runs of appends
//! (growths by one element) between other operations.
//!
//! * Exactness: after every call, the pool's header and node words and every
//!   answer equal those of a `SpanPool<Mirrored>` (the same tree code,
//!   which never opens a window) given the same operations, and the window
//!   answered most growths of the runs.
//! * Scribbles: with header words overwritten inside runs (while a window
//!   is open), every call returns what `SpanPool<Mirrored>` returns given
//!   the same writes (neither reads them back); with any node or header
//!   word overwritten, every call returns an error code or an address whose
//!   span lies in the arena and overlaps no live allocation, and nothing
//!   panics. (The span's own words are
//!   tests/programs/slice_pool_append_window_scribbled.tern's.)
//!
//! Case count: `TERN_PROPTEST_CASES` (default 300).

mod child;

use proptest::prelude::*;
use tern_runtime::abi::span::*;
use tern_runtime::span_tree::error::INTERNAL;
use tern_runtime::span_tree::layout::{H_NODES_USED, H_POOL_ID, HEADER_WORDS, NODE_WORDS};
use tern_runtime::span_tree::library::PoolMemory;
use tern_runtime::{Mirrored, SpanPool};

const ARENA: i64 = 64 * 1024;

fn cases() -> u32 {
    std::env::var("TERN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(i64),
    Free(usize),
    Resize(usize, i64),
    /// `count` growths of slot `k` by `step` bytes each, nothing between.
    Run {
        k: usize,
        step: i64,
        count: usize,
    },
    /// A node word (index modulo the words in use) overwritten after the
    /// first `at` growths of the next run.
    Scribble {
        word: usize,
        value: i32,
        at: usize,
    },
    /// The same for a header word.
    ScribbleHeader {
        word: usize,
        value: i64,
        at: usize,
    },
}

/// Which writes of the program's own a case makes inside runs.
#[derive(Clone, Copy)]
enum Scribbles {
    None,
    /// Header words only (the window checks the ones the tree's growth
    /// checks; the pool id, which found the window, is left alone).
    Header,
    /// Any node or header word.
    Any,
}

fn op(scribbles: Scribbles) -> impl Strategy<Value = Op> {
    let run = (
        0usize..256,
        prop_oneof![Just(1i64), Just(3), Just(8), Just(24)],
        1usize..60,
    )
        .prop_map(|(k, step, count)| Op::Run { k, step, count });
    let base = prop_oneof![
        3 => (1i64..300).prop_map(Op::Alloc),
        2 => (0usize..256).prop_map(Op::Free),
        2 => (0usize..256, 0i64..400).prop_map(|(k, n)| Op::Resize(k, n)),
        4 => run,
    ];
    let header = (0usize..HEADER_WORDS, any::<i64>(), 0usize..20)
        .prop_map(|(word, value, at)| Op::ScribbleHeader { word, value, at });
    match scribbles {
        Scribbles::None => base.boxed(),
        Scribbles::Header => prop_oneof![8 => base, 1 => header].boxed(),
        Scribbles::Any => prop_oneof![
            8 => base,
            1 => (any::<usize>(), any::<i32>(), 0usize..20)
                .prop_map(|(word, value, at)| Op::Scribble { word, value, at }),
            1 => header,
        ]
        .boxed(),
    }
}

/// A pool made by `tern_span_new`, reached through the externs.
struct ExternPool {
    hdr: Box<[i64; HEADER_WORDS]>,
    mem: PoolMemory,
    /// Whether `finish` released it (else dropping it does).
    finished: bool,
}

/// A pool a case did not finish (its words scribbled, slices left, a
/// failed assertion) is released by its node array: cases must not fill
/// the registry.
impl Drop for ExternPool {
    fn drop(&mut self) {
        if !self.finished && self.finish() != 0 {
            tern_runtime::span_tree::library::release_by_nodes(self.n());
        }
    }
}

impl ExternPool {
    fn new() -> ExternPool {
        let mut p = ExternPool {
            hdr: Box::new([0; HEADER_WORDS]),
            mem: PoolMemory::default(),
            finished: false,
        };
        // SAFETY: a live header of HEADER_WORDS words.
        assert!(unsafe { tern_span_new(p.hdr.as_mut_ptr(), ARENA, &mut p.mem) } > 0);
        p
    }
    fn h(&mut self) -> *mut i64 {
        self.hdr.as_mut_ptr()
    }
    /// `tern_span_finish`; the pool is gone when it answers 0.
    fn finish(&mut self) -> i64 {
        // SAFETY: the pool's own header and node array.
        let r = unsafe { tern_span_finish(self.h(), self.n()) };
        self.finished |= r == 0;
        r
    }
    fn n(&self) -> *mut i32 {
        self.mem.nodes as *mut i32
    }
    /// The node words in use (by the header's count, bounded by the array).
    fn nodes(&mut self) -> &mut [i32] {
        let used = self.hdr[H_NODES_USED].clamp(0, self.mem.node_words / NODE_WORDS as i64);
        // SAFETY: the node array `tern_span_new` reserved, `node_words` long.
        unsafe { std::slice::from_raw_parts_mut(self.n(), used as usize * NODE_WORDS) }
    }
    fn alloc(&mut self, bytes: i64) -> i64 {
        // SAFETY: the pool's own header and node array.
        unsafe { tern_span_alloc(self.h(), self.n(), bytes) }
    }
    fn free(&mut self, addr: i64, bytes: i64) -> i64 {
        // SAFETY: as above.
        unsafe { tern_span_free(self.h(), self.n(), addr, bytes) }
    }
    fn resize(&mut self, addr: i64, old: i64, new: i64) -> i64 {
        // SAFETY: as above.
        unsafe { tern_span_resize(self.h(), self.n(), addr, old, new) }
    }
}

/// Slot `k` (modulo the slots' count) and its span, when it holds one.
fn live(slots: &[(i64, i64)], k: usize) -> Option<(usize, i64, i64)> {
    let k = k % slots.len();
    let (o, b) = slots[k];
    (o >= 0).then_some((k, o, b))
}

/// An answer as an offset (`SpanPool`'s form), or the error code.
fn offset(r: i64, arena: i64) -> Result<i64, i64> {
    if r < 0 { Err(r) } else { Ok(r - arena) }
}

/// Spans of `Fill` live between free spans: about 80 free spans before
/// the slots' (a tree of two levels), so a growth's span may be a leaf's
/// first (its key its parent's too) or the tree's longest (every level's
/// maximum).
const FILL: usize = 160;

/// Drives an extern pool and a `SpanPool<Mirrored>` (the same tree code,
/// no window) with `ops`, scribbles included (into both), and requires
/// the same answers and the same header and node words after every call.
fn exact(ops: &[Op]) -> Result<(), TestCaseError> {
    let scribbled = ops
        .iter()
        .any(|op| matches!(op, Op::Scribble { .. } | Op::ScribbleHeader { .. }));
    let mut pending: Vec<(usize, Op)> = Vec::new();
    let mut e = ExternPool::new();
    let mut s = SpanPool::<Mirrored>::new(ARENA).unwrap();
    let base = e.mem.arena;
    let mut fill = Vec::new();
    for i in 0..FILL as i64 {
        let b = 8 + 8 * (i % 5);
        let r = offset(e.alloc(b), base);
        prop_assert_eq!(r, s.alloc(b));
        fill.push((r.unwrap(), b));
    }
    // Slots: twelve empty ones, then the filling spans left live (each
    // followed by a free span).
    let mut slots: Vec<(i64, i64)> = vec![(-1, 0); 12];
    for (k, (o, b)) in fill.into_iter().enumerate() {
        if k % 2 == 0 {
            prop_assert_eq!(e.free(base + o, b), 0);
            s.free(o, b).unwrap();
        } else {
            slots.push((o, b));
        }
    }
    prop_assert_eq!(e.hdr[tern_runtime::span_tree::layout::H_HEIGHT], 2);
    let same = |e: &mut ExternPool, s: &mut SpanPool<Mirrored>| -> Result<(), TestCaseError> {
        let (mut eh, mut sh) = (*e.hdr, *s.header_mut());
        (eh[H_POOL_ID], sh[H_POOL_ID]) = (0, 0);
        prop_assert_eq!(eh, sh);
        prop_assert!(e.nodes() == s.used_node_words_mut());
        Ok(())
    };
    for op in ops {
        match *op {
            Op::Alloc(b) => {
                let k = slots.iter().position(|x| x.0 < 0).unwrap_or(0);
                if slots[k].0 >= 0 {
                    continue;
                }
                let r = offset(e.alloc(b), base);
                prop_assert_eq!(r, s.alloc(b));
                if let Ok(o) = r {
                    slots[k] = (o, b);
                }
            }
            Op::Free(k) => {
                let Some((k, o, b)) = live(&slots, k) else {
                    continue;
                };
                let r = e.free(base + o, b);
                prop_assert_eq!(r.min(0), s.free(o, b).map_or_else(|c| c, |()| 0));
                if r == 0 {
                    slots[k] = (-1, 0);
                }
            }
            Op::Resize(k, n) => {
                let Some((k, o, b)) = live(&slots, k).filter(|_| n != 0) else {
                    continue;
                };
                let r = offset(e.resize(base + o, b, n), base);
                prop_assert_eq!(r, s.resize(o, b, n));
                if let Ok(to) = r {
                    slots[k] = (to, n);
                }
            }
            Op::Run { k, step, count } => {
                let k = k % slots.len();
                if slots[k].0 < 0 {
                    continue;
                }
                for i in 0..count {
                    // The scribbles due at this growth, into both pools.
                    for (_, sc) in pending.iter().filter(|(at, _)| *at == i) {
                        match *sc {
                            Op::Scribble { word, value, .. } => {
                                let (w, v) = (e.nodes(), s.used_node_words_mut());
                                if !w.is_empty() {
                                    let len = w.len();
                                    (w[word % len], v[word % len]) = (value, value);
                                }
                            }
                            // Not the pool id: each pool has its own.
                            Op::ScribbleHeader { word, value, .. } if word != H_POOL_ID => {
                                (e.hdr[word], s.header_mut()[word]) = (value, value);
                            }
                            _ => {}
                        }
                    }
                    let (o, b) = slots[k];
                    let r = offset(e.resize(base + o, b, b + step), base);
                    prop_assert_eq!(r, s.resize(o, b, b + step));
                    match r {
                        Ok(to) => slots[k] = (to, b + step),
                        Err(_) => break,
                    }
                    same(&mut e, &mut s)?;
                }
                pending.clear();
            }
            Op::Scribble { at, .. } | Op::ScribbleHeader { at, .. } => {
                pending.push((at, op.clone()))
            }
        }
        same(&mut e, &mut s)?;
    }
    let mut freed = true;
    for &(o, b) in &slots {
        if o >= 0 {
            let r = e.free(base + o, b);
            prop_assert_eq!(r.min(0), s.free(o, b).map_or_else(|c| c, |()| 0));
            freed &= r == 0;
        }
    }
    if freed && !scribbled {
        prop_assert_eq!(e.finish(), 0);
    }
    Ok(())
}

/// Whether `[o, o + b)` (rounded to granules) overlaps a live slot other
/// than `except`.
fn overlaps(slots: &[(i64, i64)], except: usize, o: i64, b: i64) -> bool {
    let end = o + ((b + 7) & !7);
    slots
        .iter()
        .enumerate()
        .any(|(j, &(p, q))| j != except && p >= 0 && p < end && o < p + ((q + 7) & !7))
}

fn scribbled(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut e = ExternPool::new();
    let base = e.mem.arena;
    let mut slots: Vec<(i64, i64)> = vec![(-1, 0); 12];
    // The filling spans stay live: slots past the first twelve.
    let fill: Vec<(i64, i64)> = (0..FILL as i64)
        .map(|i| (e.alloc(8 + 8 * (i % 5)) - base, 8 + 8 * (i % 5)))
        .collect();
    for (k, &(o, b)) in fill.iter().enumerate() {
        if k % 2 == 0 {
            prop_assert_eq!(e.free(base + o, b), 0);
        } else {
            slots.push((o, b));
        }
    }
    let mut pending: Vec<(usize, Op)> = Vec::new();
    // Checks an answer for slot `k` of `b` bytes: an error code, or a span
    // inside the arena that overlaps no other live slot.
    let valid = |slots: &[(i64, i64)], k: usize, r: i64, b: i64| -> Result<bool, TestCaseError> {
        prop_assert!(r != INTERNAL);
        if r < 0 {
            return Ok(false);
        }
        let o = r - base;
        prop_assert!(o >= 0 && o % 8 == 0 && o + b <= ARENA, "{} {}", o, b);
        prop_assert!(
            !overlaps(slots, k, o, b),
            "{} {} overlaps {:?}",
            o,
            b,
            slots
        );
        Ok(true)
    };
    for op in ops {
        match *op {
            Op::Alloc(b) => {
                let Some(k) = slots.iter().position(|x| x.0 < 0) else {
                    continue;
                };
                let r = e.alloc(b);
                if valid(&slots, k, r, b)? {
                    slots[k] = (r - base, b);
                }
            }
            Op::Free(k) => {
                if let Some((k, o, b)) = live(&slots, k)
                    && e.free(base + o, b) == 0
                {
                    slots[k] = (-1, 0);
                }
            }
            Op::Resize(k, n) => {
                let Some((k, o, b)) = live(&slots, k).filter(|_| n != 0) else {
                    continue;
                };
                let r = e.resize(base + o, b, n);
                if valid(&slots, k, r, n)? {
                    slots[k] = (r - base, n);
                }
            }
            Op::Run { k, step, count } => {
                let k = k % slots.len();
                for i in 0..count {
                    for (_, s) in pending.iter().filter(|(at, _)| *at == i) {
                        match *s {
                            Op::Scribble { word, value, .. } => {
                                let w = e.nodes();
                                if !w.is_empty() {
                                    let len = w.len();
                                    w[word % len] = value;
                                }
                            }
                            Op::ScribbleHeader { word, value, .. } => e.hdr[word] = value,
                            _ => {}
                        }
                    }
                    let (o, b) = slots[k];
                    if o < 0 {
                        break;
                    }
                    let r = e.resize(base + o, b, b + step);
                    if !valid(&slots, k, r, b + step)? {
                        break;
                    }
                    slots[k] = (r - base, b + step);
                }
                pending.clear();
            }
            Op::Scribble { at, .. } | Op::ScribbleHeader { at, .. } => {
                pending.push((at, op.clone()))
            }
        }
    }
    // The pool may be unusable now (a scribbled header): dropping it
    // releases it by its node array.
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn windows_leave_the_words_and_answers_of_the_checked_tree(
        ops in prop::collection::vec(op(Scribbles::None), 1..80)
    ) {
        exact(&ops)?;
    }

    #[test]
    fn scribbled_header_words_get_the_answers_of_the_tree_without_a_window(
        ops in prop::collection::vec(op(Scribbles::Header), 1..80)
    ) {
        exact(&ops)?;
    }

    #[test]
    fn scribbles_inside_windows_give_errors_or_safe_spans(
        ops in prop::collection::vec(op(Scribbles::Any), 1..80)
    ) {
        scribbled(&ops)?;
    }
}

/// A long run opens a window: one slice grown by 8 bytes 2 000 times, the
/// words checked against the checked tree's after each growth, and a
/// window open at the end (some pool's: the count is process-wide, and
/// other tests run beside this one, but none closes this pool's).
#[test]
fn a_long_run_of_appends_matches_the_checked_tree_and_opens_a_window() {
    let run = |count| Op::Run {
        k: 0,
        step: 8,
        count,
    };
    exact(&[Op::Alloc(8), run(2000)]).unwrap();
    let mut e = ExternPool::new();
    let a = e.alloc(8);
    let mut b = 8;
    for _ in 0..20 {
        assert_eq!(e.resize(a, b, b + 8), a);
        b += 8;
    }
    assert!(tern_runtime::span_tree::append_window::route().any_open());
    // Settled by the next call: the record knows the slice's whole length.
    // SAFETY: the pool's own header and node array.
    assert_eq!(unsafe { tern_span_live_bytes(e.h(), e.n(), a) }, b);
    assert_eq!(e.free(a, b), 0);
    assert_eq!(e.finish(), 0);
    exact(&[
        Op::Alloc(8),
        run(300),
        Op::Alloc(16),
        Op::Run {
            k: 0,
            step: 3,
            count: 500,
        },
        Op::Free(1),
        Op::Run {
            k: 0,
            step: 24,
            count: 300,
        },
    ])
    .unwrap();
}

/// Where no memory file can be made (a sandbox that refuses
/// `memfd_create`; here a limit on open files), a pool `tern_span_new`
/// makes falls back to a node array of the program's own, which the tree
/// writes beside its copy (`Mirrored`), and opens no append window: after
/// every call its words and answers are still the checked tree's.
#[test]
fn a_pool_without_a_memory_file_keeps_the_words_of_the_checked_tree() {
    let (status, err) = child::run_child("child_pool_without_a_memory_file", &[]);
    assert_eq!(status, Some(0), "{err}");
}

/// Child fixture: [`a_pool_without_a_memory_file_keeps_the_words_of_the_checked_tree`]
/// (the limit is process-wide).
#[test]
#[ignore = "child fixture: run by a_pool_without_a_memory_file_keeps_the_words_of_the_checked_tree with --ignored --exact"]
fn child_pool_without_a_memory_file() {
    child::require_child();
    // No descriptor can be opened past the three standard ones.
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reads, then lowers, this process's own soft limit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = 3;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    let e = ExternPool::new();
    let bounds = tern_runtime::span_tree::registry::lookup(e.hdr[H_POOL_ID]).unwrap();
    assert!(
        bounds.mirrors_nodes,
        "the pool shares pages without a memory file"
    );
    drop(e);
    let run = |count| Op::Run {
        k: 0,
        step: 8,
        count,
    };
    exact(&[
        Op::Alloc(8),
        run(300),
        Op::Alloc(16),
        run(200),
        Op::Free(1),
        run(100),
    ])
    .unwrap();
    assert!(!tern_runtime::span_tree::append_window::route().any_open());
    proptest!(
        ProptestConfig { cases: cases() / 4, ..ProptestConfig::default() },
        |(ops in prop::collection::vec(op(Scribbles::Header), 1..80))| {
            exact(&ops)?;
        }
    );
}

/// A `slice_pool` pool's node array shows the runtime's pages: the
/// registration says the tree writes its node words once.
#[test]
fn a_pool_tern_span_new_makes_shares_its_node_pages() {
    let e = ExternPool::new();
    let bounds = tern_runtime::span_tree::registry::lookup(e.hdr[H_POOL_ID]).unwrap();
    assert!(!bounds.mirrors_nodes);
}

/// The length word of the span a window would open over, scribbled to the
/// largest length before the run's growths make it due: the window's room
/// stays inside the arena (a claim past it would read past the coverage
/// map), and every growth is still the contract's or refused.
#[test]
fn a_scribbled_length_keeps_the_window_inside_the_arena() {
    for value in [i32::MAX, (ARENA / 8) as i32, (ARENA / 8 + 1) as i32] {
        let mut e = ExternPool::new();
        let a = e.alloc(8);
        let mut b = 8;
        assert_eq!(e.resize(a, b, 16), a);
        b = 16;
        // The root is a leaf: the free span after `a` is its first slot.
        let end = (a - e.mem.arena + b) / 8;
        let w = e.nodes();
        assert_eq!(i64::from(w[8]), end);
        w[48] = value;
        for _ in 0..((ARENA - 16) / 8 + 4) {
            let r = e.resize(a, b, b + 8);
            assert_ne!(r, INTERNAL);
            if r < 0 {
                break;
            }
            assert_eq!(r, a);
            assert!(b + 8 <= ARENA);
            b += 8;
        }
        assert!(b <= ARENA);
    }
}

/// Byte growths answered from a window: each new byte reads 0 (the fill
/// from the old length, one to seven bytes at a time inside a granule)
/// and no byte written before is touched, with the granule's tail left
/// dirty by a shrink before the run.
#[test]
fn byte_growths_zero_only_their_new_bytes() {
    let mut e = ExternPool::new();
    let a = e.alloc(13);
    // SAFETY: `a` is a live span of 16 bytes (13 rounded up).
    unsafe { std::ptr::write_bytes(a as *mut u8, 0xEE, 16) };
    assert_eq!(e.resize(a, 13, 5), a);
    let mut n = 5;
    for _ in 0..3000 {
        assert_eq!(e.resize(a, n, n + 1), a);
        // SAFETY: `[a, a + n + 1)` is the live span.
        unsafe {
            let p = a as *mut u8;
            assert_eq!(*p.add(n as usize), 0, "byte {n}");
            *p.add(n as usize) = (n % 251) as u8;
        }
        n += 1;
    }
    assert!(tern_runtime::span_tree::append_window::route().any_open());
    for i in 5..n {
        // SAFETY: as above.
        let byte = unsafe { *(a as *const u8).add(i as usize) };
        assert_eq!(byte, (i % 251) as u8);
    }
    // Growths named with shorter lengths inside the last granule (stale
    // lengths, as the full path accepts them): the fill runs from the
    // length given to the granule's end, one, three and six bytes, and
    // nothing before it.
    assert_eq!(n % 8, 5);
    let g = n + 3;
    for old in [g - 1, g - 3, g - 6] {
        // SAFETY: `[a, a + g)` is the live span (its granules).
        unsafe { std::ptr::write_bytes((a + g - 8) as *mut u8, 0xCC, 8) };
        assert_eq!(e.resize(a, old, old + 1), a);
        for i in g - 8..g {
            // SAFETY: as above.
            let byte = unsafe { *(a as *const u8).add(i as usize) };
            assert_eq!(
                byte,
                if i >= old { 0 } else { 0xCC },
                "byte {i} after {old}"
            );
        }
    }
    assert_eq!(e.free(a, n), 0);
    assert_eq!(e.finish(), 0);
}
