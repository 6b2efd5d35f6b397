//! Corruption tests for the checked tree: random words written into the header and
//! the nodes of a populated pool, then random operations. Every call must return a
//! valid result (an offset whose span lies inside the arena and overlaps no live
//! allocation) or a negative error code; nothing may crash, panic or read out of
//! bounds (run this binary under valgrind to check the last: see docs/runtime.md).
//!
//! Case count: `TERN_PROPTEST_CASES` (default 500).

use proptest::prelude::*;
use tern_runtime::span_tree::error;
use tern_runtime::span_tree::layout::{self, HEADER_WORDS, NODE_WORDS};
use tern_runtime::{Checked, SpanPool};

const ARENA: i64 = 256 * 1024;

fn cases() -> u32 {
    std::env::var("TERN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// A checked pool with a few hundred free spans (a two-level tree).
fn populated(seed: u64) -> (SpanPool<Checked>, Vec<(i64, i64)>) {
    let mut pool = SpanPool::<Checked>::new(ARENA).unwrap();
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

fn run(seed: u64, writes: &[Write], ops: &[Op]) -> Result<(), String> {
    let (mut pool, mut live) = populated(seed);
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
fn resize_in_place(
    pool: &mut SpanPool<Checked>,
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
        run(seed, &writes, &ops).map_err(TestCaseError::fail)?;
    }
}

/// Specific corruptions name the node and field in the error code and message.
#[test]
fn corrupt_root_child_index_is_reported_with_node_and_field() {
    let (mut pool, _) = populated(7);
    let height = pool.header_mut()[tern_runtime::span_tree::layout::H_HEIGHT];
    assert!(height >= 2);
    let root = pool.header_mut()[tern_runtime::span_tree::layout::H_ROOT];
    let child0 = root as usize * NODE_WORDS + layout::N_KIDS;
    pool.used_node_words_mut()[child0] = 1 << 30;
    let code = pool.alloc(8).unwrap_err();
    assert_eq!(code, error::corrupt_node(root, layout::N_KIDS));
    assert_eq!(
        error::message(code),
        format!("corrupt tree: node {root}, field child[0] (word 88)")
    );
}

#[test]
fn corrupt_magic_and_height_are_reported() {
    let (mut pool, _) = populated(9);
    pool.header_mut()[tern_runtime::span_tree::layout::H_HEIGHT] = 99;
    let code = pool.alloc(8).unwrap_err();
    assert_eq!(
        error::message(code),
        "corrupt tree: header field height (word 3)"
    );
    pool.header_mut()[tern_runtime::span_tree::layout::H_HEIGHT] = 2;
    pool.header_mut()[0] = 5;
    assert_eq!(
        error::message(pool.alloc(8).unwrap_err()),
        "corrupt tree: header field magic (word 0)"
    );
    pool.header_mut()[1] = 12345;
    assert_eq!(pool.alloc(8), Err(error::BAD_POOL));
}

#[test]
fn corrupt_leaf_span_length_is_reported() {
    let mut pool = SpanPool::<Checked>::new(4096).unwrap();
    let a = pool.alloc(64).unwrap();
    pool.alloc(64).unwrap();
    pool.free(a, 64).unwrap();
    // The root is a leaf with spans [0, 64) and [128, 4096): make len[0] run past the arena.
    let lens = layout::N_LENS;
    pool.used_node_words_mut()[lens] = 1 << 20;
    let code = pool.alloc(8).unwrap_err();
    assert_eq!(code, error::corrupt_node(0, lens));
    assert_eq!(
        error::message(code),
        "corrupt tree: node 0, field len[0] (word 48)"
    );
}

/// A leaf scribbled to claim that live memory is free: the span it offers is
/// refused by the boundary record (the coverage map), never handed out.
#[test]
fn a_free_span_claimed_over_live_memory_is_refused() {
    let mut pool = SpanPool::<Checked>::new(4096).unwrap();
    let a = pool.alloc(64).unwrap();
    let b = pool.alloc(64).unwrap();
    assert_eq!((a, b), (0, 64));
    // The root leaf holds one span, [128, 4096); make it claim [0, 4096).
    pool.used_node_words_mut()[layout::N_KEYS] = 0;
    pool.used_node_words_mut()[layout::N_LENS] = 512;
    let code = pool.alloc(8).unwrap_err();
    assert_eq!(code, error::CORRUPT_OVERLAP);
    assert_eq!(
        error::message(code),
        "corrupt tree: a free span it holds overlaps a live allocation"
    );
    // Freeing a live span the tree claims is free is the same corruption,
    // and the span stays live.
    assert_eq!(pool.free(a, 64), Err(error::CORRUPT_OVERLAP));
    assert_eq!(pool.live_bytes_at(a), 64);
}
