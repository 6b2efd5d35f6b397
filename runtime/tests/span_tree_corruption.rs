//! Corruption tests for the library's pool: random words written into the
//! program's copy of the header and nodes of a populated pool, then random
//! operations. Every call must return a
//! valid result (an offset whose span lies inside the arena and overlaps no live
//! allocation) or a negative error code; nothing may crash, panic or read out of
//! bounds (run this binary under valgrind to check the last: see docs/runtime.md).
//!
//! Case count: `TERN_PROPTEST_CASES` (default 500).

use proptest::prelude::*;
use tern_runtime::span_tree::Validate;
use tern_runtime::span_tree::error;
use tern_runtime::span_tree::layout::{self, HEADER_WORDS, NODE_WORDS};
use tern_runtime::{Mirrored, Shared, SpanPool};

const ARENA: i64 = 256 * 1024;

fn cases() -> u32 {
    std::env::var("TERN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// A checked pool with a few hundred free spans (a two-level tree).
fn populated<V: Validate>(seed: u64) -> (SpanPool<V>, Vec<(i64, i64)>) {
    let mut pool = SpanPool::<V>::new(ARENA).unwrap();
    let mut live = Vec::new();
    let mut x = seed | 1;
    for _ in 0..900 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = 8 + (x % 200) as i64;
        live.push((pool.alloc(b).unwrap(), b));
    }
    let mut kept = Vec::new();
    for (k, s) in live.into_iter().enumerate() {
        if k % 3 == 0 {
            pool.free(s.0, s.1).unwrap();
        } else {
            kept.push(s);
        }
    }
    assert!(pool.check_invariants().unwrap().len() > 250);
    (pool, kept)
}

/// Interesting values for a corrupted header word: small indices, boundaries, garbage.
fn word() -> impl Strategy<Value = i64> {
    prop_oneof![
        -3i64..40,
        Just(i64::MIN),
        Just(i64::MAX),
        Just(ARENA),
        Just(ARENA - 8),
        Just(ARENA + 8),
        any::<i64>(),
        (0i64..ARENA / 8).prop_map(|w| w * 8),
    ]
}

/// Interesting values for a corrupted node word (granules): small indices and
/// lengths, the arena's bounds, the empty key, garbage.
fn node_word() -> impl Strategy<Value = i32> {
    const G: i32 = (ARENA / 8) as i32;
    prop_oneof![
        -3i32..40,
        Just(i32::MIN),
        Just(i32::MAX),
        Just(G),
        Just(G - 1),
        Just(G + 1),
        any::<i32>(),
        0i32..G,
    ]
}

#[derive(Clone, Debug)]
enum Write {
    Header(usize, i64),
    Node(usize, i32),
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        1 => (0..HEADER_WORDS, word()).prop_map(|(f, v)| Write::Header(f, v)),
        6 => (any::<usize>(), node_word()).prop_map(|(f, v)| Write::Node(f, v)),
    ]
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(i64),
    Free(usize),
    FreeAt(i64, i64),
    Resize(usize, i64),
    /// An append: the last allocation (or the last one grown) grows by a
    /// few bytes, what the finger's growth hint serves.
    Grow(i64),
    /// A node word scribbled between two operations, under a finger.
    Scribble(usize, i32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (-8i64..3000).prop_map(Op::Alloc),
        any::<usize>().prop_map(Op::Free),
        (word(), word()).prop_map(|(o, b)| Op::FreeAt(o, b)),
        (any::<usize>(), -8i64..3000).prop_map(|(i, n)| Op::Resize(i, n)),
        (1i64..64).prop_map(Op::Grow),
        (any::<usize>(), node_word()).prop_map(|(f, v)| Op::Scribble(f, v)),
    ]
}

/// Whether `r` is an acceptable result for a call that returns an offset of a
/// span of `bytes`: inside the arena and overlapping none of the `live` spans.
fn valid_offset(r: Result<i64, i64>, bytes: i64, live: &[(i64, i64)]) -> bool {
    match r {
        Ok(o) => {
            let end = o + ((bytes.max(0) + 7) & !7);
            o >= 0 && o % 8 == 0 && end <= ARENA && !overlaps(live, o, end)
        }
        Err(e) => e < 0,
    }
}

/// Whether `[o, end)` overlaps any of the `live` spans (bytes rounded up to 8;
/// a slice resized to 0 bytes owns none).
fn overlaps(live: &[(i64, i64)], o: i64, end: i64) -> bool {
    live.iter().any(|&(lo, lb)| {
        let lend = lo + ((lb.max(0) + 7) & !7);
        lo < lend && lo < end && o < lend
    })
}

fn run<V: Validate>(seed: u64, writes: &[Write], ops: &[Op]) -> Result<(), String> {
    let (mut pool, mut live) = populated::<V>(seed);
    // Node words first: a corrupt `nodes used` header word would hide the nodes.
    let node_words_used = pool.used_node_words_mut().len();
    for w in writes {
        match *w {
            Write::Node(f, v) => pool.used_node_words_mut()[f % node_words_used] = v,
            Write::Header(..) => {}
        }
    }
    for w in writes {
        if let Write::Header(f, v) = *w {
            pool.header_mut()[f] = v;
        }
    }
    for (step, op) in ops.iter().enumerate() {
        let ok = match *op {
            Op::Alloc(b) => {
                let r = pool.alloc(b);
                let ok = valid_offset(r, b, &live);
                if let Ok(o) = r {
                    live.push((o, b));
                }
                ok
            }
            Op::Free(i) if !live.is_empty() => {
                let (o, b) = live.swap_remove(i % live.len());
                matches!(pool.free(o, b), Ok(()) | Err(..=-1))
            }
            Op::FreeAt(o, b) => {
                let r = pool.free(o, b);
                if r.is_ok() {
                    // It named one live allocation exactly: no longer live.
                    let r8 = |x: i64| (x.max(0) + 7) & !7;
                    live.retain(|&(lo, lb)| (lo, r8(lb)) != (o, r8(b)));
                }
                matches!(r, Ok(()) | Err(..=-1))
            }
            Op::Resize(i, n) if !live.is_empty() => {
                let k = i % live.len();
                resize_in_place(&mut pool, &mut live, k, n)
            }
            Op::Grow(d) if !live.is_empty() => {
                let k = live.len() - 1;
                let n = live[k].1 + d;
                resize_in_place(&mut pool, &mut live, k, n)
            }
            Op::Scribble(f, v) => {
                // The words the header says are in use (none once its
                // count is scribbled to 0).
                let words = pool.used_node_words_mut();
                if !words.is_empty() {
                    let n = words.len();
                    words[f % n] = v;
                }
                true
            }
            _ => true,
        };
        if !ok {
            return Err(format!("step {step}: {op:?} returned an invalid result"));
        }
    }
    Ok(())
}

/// Resizes live allocation `k` in place to `n` bytes; whether the result is
/// acceptable (the same offset, its span overlapping no other live one, or an
/// error code).
fn resize_in_place<V: Validate>(
    pool: &mut SpanPool<V>,
    live: &mut [(i64, i64)],
    k: usize,
    n: i64,
) -> bool {
    let (o, b) = live[k];
    let r = pool.resize_in_place(o, b, n);
    let others: Vec<_> = (0..live.len())
        .filter(|&j| j != k)
        .map(|j| live[j])
        .collect();
    let ok = match r {
        Ok(x) => x == o && valid_offset(Ok(o), n, &others),
        Err(e) => e < 0,
    };
    if r.is_ok() {
        live[k] = (o, n);
    }
    ok
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn corrupt_words_give_results_or_error_codes(
        seed in any::<u64>(),
        writes in prop::collection::vec(write(), 1..12),
        ops in prop::collection::vec(op(), 1..300),
    ) {
        run::<Mirrored>(seed, &writes, &ops).map_err(TestCaseError::fail)?;
        run::<Shared>(seed, &writes, &ops).map_err(TestCaseError::fail)?;
    }
}

/// The library's pool reads only the runtime's copy of its tree: words
/// scribbled into the program's copy (a root's child index, the height, the
/// magic number, a leaf span claiming live memory) change no answer. The
/// pool id is the one word that still decides: it names the pool. For both
/// kinds of library pool: a node array of the caller's own, which the tree
/// writes beside its copy (`Mirrored`, `tern_span_init`), and one that
/// shows the runtime's pages (`Shared`, `slice_pool`'s).
#[test]
fn scribbled_words_change_no_answer() {
    scribbled_words_change_no_answer_in::<Mirrored>();
    scribbled_words_change_no_answer_in::<Shared>();
}

fn scribbled_words_change_no_answer_in<V: Validate>() {
    let (mut pool, live) = populated::<V>(7);
    let (mut twin, _) = populated::<V>(7);
    let h = pool.header_mut();
    assert!(h[layout::H_HEIGHT] >= 2);
    let root = h[layout::H_ROOT] as usize;
    h[layout::H_HEIGHT] = 99;
    h[layout::H_MAGIC] = 5;
    h[layout::H_ROOT] = 1 << 30;
    let words = pool.used_node_words_mut();
    words[root * NODE_WORDS + layout::N_KIDS] = 1 << 30;
    for w in &mut words[NODE_WORDS..2 * NODE_WORDS] {
        *w = 0;
    }
    for b in [8, 64, 200, 4000, ARENA] {
        assert_eq!(pool.alloc(b), twin.alloc(b), "alloc({b})");
    }
    for &(o, b) in live.iter().step_by(7) {
        assert_eq!(pool.free(o, b), twin.free(o, b), "free({o}, {b})");
    }
    for &(o, b) in live.iter().skip(1).step_by(11) {
        assert_eq!(pool.free(o, b), twin.free(o, b), "free({o}, {b})");
        assert!(pool.free(o, b).is_err());
    }
    pool.header_mut()[layout::H_POOL_ID] = 12345;
    assert_eq!(pool.alloc(8), Err(error::BAD_POOL));
}

/// A leaf scribbled to claim that live memory is free offers nothing: the
/// span handed out is the one the runtime's copy holds, and a free of the
/// live span it names frees it. What the program reads back differs by the
/// kind of pool: the tree's next write of a word of a `Mirrored` pool puts
/// its value back; a `Shared` pool's page the program wrote is the
/// program's own from then on (copy-on-write), while its other pages go on
/// showing the tree.
#[test]
fn a_free_span_claimed_over_live_memory_is_not_offered() {
    a_free_span_claimed_over_live_memory_is_not_offered_in::<Mirrored>(17);
    a_free_span_claimed_over_live_memory_is_not_offered_in::<Shared>(0);
}

fn a_free_span_claimed_over_live_memory_is_not_offered_in<V: Validate>(key_read_back: i32) {
    let mut pool = SpanPool::<V>::new(4096).unwrap();
    let a = pool.alloc(64).unwrap();
    let b = pool.alloc(64).unwrap();
    assert_eq!((a, b), (0, 64));
    // The root leaf holds one span, [128, 4096); make it claim [0, 4096).
    pool.used_node_words_mut()[layout::N_KEYS] = 0;
    pool.used_node_words_mut()[layout::N_LENS] = 512;
    assert_eq!(pool.alloc(8), Ok(128));
    assert_eq!(pool.used_node_words_mut()[layout::N_KEYS], key_read_back);
    assert_eq!(pool.free(a, 64), Ok(()));
    assert_eq!(pool.live_bytes_at(a), 0);
}
