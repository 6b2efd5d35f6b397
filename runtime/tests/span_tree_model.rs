//! Property tests: the tree against the reference model, for both instantiations
//! and both scan backends, on shallow and on deep (three-level and taller) trees. After every operation the tree must give exactly the
//! model's result (offset or error code) and hold all its invariants, with the same
//! free spans as the model, and the pool's boundary record must know every live
//! allocation of the model at its exact size.
//!
//! Besides valid operations and double frees, the sequences free and resize
//! stale spans built from live ones (part of a span, a span and some of its
//! neighbour, a range starting inside a span): every one must be refused, with
//! the model's code, and change nothing.
//!
//! Case count: `TERN_PROPTEST_CASES` (default 500 per property, keeping the debug
//! test run well under a minute).

mod child;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use tern_runtime::span_tree::model::Model;
use tern_runtime::span_tree::round8;
use tern_runtime::{Mirrored, Shared, SpanPool, Unchecked};

#[derive(Clone, Debug)]
enum Op {
    Alloc(i64),
    Free(usize),
    Resize(usize, i64),
    DoubleFree(usize),
    FreeOutside(i64),
    /// Free of a stale span made from live span `.0` (see [`stale_claim`]).
    StaleFree(usize, u8, i64),
    /// Resize of a stale span made from live span `.0` to `.3` bytes.
    StaleResize(usize, u8, i64, i64),
    /// Resize of the slice allocated or resized last, to its size plus `.0`
    /// (`append`-like runs: the front cache's growth in place).
    ResizeLast(i64),
    /// Free of the live span nearest above (`true`) or below (`false`) the one
    /// freed last (FIFO and LIFO runs: the front cache's extension of the span
    /// the previous free made).
    FreeNext(bool),
    /// Growth by `.1` bytes of a span freed earlier (`.0` picks it): refused
    /// unless the span was allocated again at that size, as the model says.
    ResizeDead(usize, i64),
}

/// A span that is certainly not one live allocation, made from the live
/// allocation `(o, b)` (`b` rounded): `kind` 0 is a shorter span at `o`, 1 a
/// longer one (reaching into whatever follows, inside the arena), 2 a span
/// starting inside it. `None` when the live span is too short for the kind.
fn stale_claim(arena: i64, (o, b): (i64, i64), kind: u8, k: i64) -> Option<(i64, i64)> {
    let g = b / 8;
    match kind % 3 {
        0 if g > 1 => Some((o, 8 * (1 + k.rem_euclid(g - 1)))),
        1 => {
            let room = (arena - o - b) / 8;
            (room > 0).then(|| (o, b + 8 * (1 + k.rem_euclid(room.min(8)))))
        }
        2 if g > 1 => {
            let at = 1 + k.rem_euclid(g - 1);
            Some((o + 8 * at, 8 * (1 + k.rem_euclid(4))))
        }
        _ => None,
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1i64..600).prop_map(Op::Alloc),
        1 => (1i64..4000).prop_map(Op::Alloc),
        5 => any::<usize>().prop_map(Op::Free),
        4 => (any::<usize>(), 0i64..1200).prop_map(|(i, n)| Op::Resize(i, n)),
        1 => any::<usize>().prop_map(Op::DoubleFree),
        1 => (-64i64..80_000).prop_map(Op::FreeOutside),
        1 => (any::<usize>(), any::<u8>(), 0i64..1000).prop_map(|(i, t, k)| Op::StaleFree(i, t, k)),
        1 => (any::<usize>(), any::<u8>(), 0i64..1000, 0i64..1200)
            .prop_map(|(i, t, k, n)| Op::StaleResize(i, t, k, n)),
    ]
}

/// Operations in runs on the same place: what the tree's front cache (the
/// hint its path keeps) serves without a descent.
fn run_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1i64..300).prop_map(Op::Alloc),
        4 => (-64i64..200).prop_map(Op::ResizeLast),
        4 => any::<bool>().prop_map(Op::FreeNext),
        1 => any::<usize>().prop_map(Op::Free),
        1 => any::<usize>().prop_map(Op::DoubleFree),
    ]
}

/// Mostly appends (the last slice grows by a few bytes: the growth hint's
/// case), between allocations that may land right behind it, frees and
/// shrinks that move the span after it, and stale copies.
fn append_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (1i64..24).prop_map(Op::ResizeLast),
        2 => (1i64..200).prop_map(Op::Alloc),
        2 => any::<bool>().prop_map(Op::FreeNext),
        1 => (-24i64..0).prop_map(Op::ResizeLast),
        1 => (any::<usize>(), 0i64..400).prop_map(|(i, n)| Op::Resize(i, n)),
        1 => (any::<usize>(), any::<u8>(), 0i64..100, 0i64..400)
            .prop_map(|(i, t, k, n)| Op::StaleResize(i, t, k, n)),
        1 => (any::<usize>(), 1i64..24).prop_map(|(i, d)| Op::ResizeDead(i, d)),
    ]
}

/// A span grown in place (which leaves the growth hint on its end), freed,
/// then grown again inside its last granule and past it through the stale
/// size: refused both times, on both trees, as the model refuses them.
#[test]
fn a_freed_span_is_not_grown_through_the_growth_hint() {
    let ops = [
        Op::Alloc(8),
        Op::ResizeLast(1),
        Op::Free(0),
        Op::ResizeDead(0, 1),
        Op::ResizeDead(0, 8),
    ];
    replay::<Unchecked>(4096, &ops).unwrap();
    replay::<Mirrored>(4096, &ops).unwrap();
    replay::<Shared>(4096, &ops).unwrap();
    let mut pool = SpanPool::<Unchecked>::new(4096).unwrap();
    let a = pool.alloc(8).unwrap();
    assert_eq!(pool.resize(a, 8, 9), Ok(a));
    pool.free(a, 9).unwrap();
    assert!(pool.resize(a, 9, 10).is_err());
}

/// A fill of small allocations, then mostly frees: the holes make trees of
/// hundreds of free spans (three levels), where internal nodes split, borrow
/// and merge, and the later frees coalesce them away again.
fn deep_ops() -> impl Strategy<Value = Vec<Op>> {
    let fill = prop::collection::vec((1i64..40).prop_map(Op::Alloc), 4000..4500);
    let rest = prop::collection::vec(
        prop_oneof![
            2 => (1i64..64).prop_map(Op::Alloc),
            8 => any::<usize>().prop_map(Op::Free),
            1 => (any::<usize>(), 0i64..200).prop_map(|(i, n)| Op::Resize(i, n)),
            1 => any::<usize>().prop_map(Op::DoubleFree),
            1 => (any::<usize>(), any::<u8>(), 0i64..1000)
                .prop_map(|(i, t, k)| Op::StaleFree(i, t, k)),
        ],
        2500..3500,
    );
    (fill, rest).prop_map(|(mut f, r)| {
        f.extend(r);
        f
    })
}

/// The arena of the deep properties.
const DEEP_ARENA: i64 = 256 * 1024;

/// Cases of the deep properties (each a few thousand operations).
fn deep_cases() -> u32 {
    (cases() / 25).max(4)
}

fn cases() -> u32 {
    std::env::var("TERN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// What a replay reached.
#[derive(Default)]
struct Reached {
    /// The greatest tree height.
    height: i64,
    /// The most free spans at once.
    spans: usize,
    /// The error codes the stale frees and resizes got.
    stale_codes: std::collections::BTreeSet<i64>,
}

/// Replays `ops` on a pool and the model; returns an error description on the first difference.
fn replay<V: tern_runtime::span_tree::Validate>(arena: i64, ops: &[Op]) -> Result<Reached, String> {
    replay_checking::<V>(arena, ops, 1)
}

/// [`replay`], comparing results at every step but the tree's invariants,
/// spans and record with the model only every `every` steps and at the end
/// (deep trees: a full check per step would dominate the run).
fn replay_checking<V: tern_runtime::span_tree::Validate>(
    arena: i64,
    ops: &[Op],
    every: usize,
) -> Result<Reached, String> {
    let mut reached = Reached::default();
    let mut pool = SpanPool::<V>::new(arena).map_err(|e| format!("new: {e}"))?;
    let mut model = Model::new(arena);
    // Live spans (offset, bytes) and spans freed earlier (for double frees).
    let mut live: Vec<(i64, i64)> = Vec::new();
    let mut dead: Vec<(i64, i64)> = Vec::new();
    // The offset freed last (for `FreeNext`).
    let mut last_freed = 0i64;
    for (step, op) in ops.iter().enumerate() {
        let (got, want) = match *op {
            Op::Alloc(b) => {
                let (g, w) = (pool.alloc(b), model.alloc(b));
                if let Ok(o) = g {
                    live.push((o, b));
                }
                (g, w)
            }
            Op::Free(i) if !live.is_empty() => {
                let (o, b) = live.swap_remove(i % live.len());
                dead.push((o, b));
                last_freed = o;
                (pool.free(o, b).map(|()| 0), model.free(o, b).map(|()| 0))
            }
            Op::FreeNext(up) if !live.is_empty() => {
                // The nearest live span past the last freed offset, else any.
                let near = |&(_, &(o, _)): &(usize, &(i64, i64))| {
                    if up { o > last_freed } else { o < last_freed }
                };
                let dist = |&(_, &(o, _)): &(usize, &(i64, i64))| (o - last_freed).abs();
                let k = live
                    .iter()
                    .enumerate()
                    .filter(near)
                    .min_by_key(dist)
                    .map_or(0, |(k, _)| k);
                let (o, b) = live.swap_remove(k);
                dead.push((o, b));
                last_freed = o;
                (pool.free(o, b).map(|()| 0), model.free(o, b).map(|()| 0))
            }
            Op::ResizeLast(d) if !live.is_empty() => {
                let (o, b) = live.pop().unwrap_or_default();
                let n = (b + d).max(0);
                let (g, w) = (pool.resize(o, b, n), model.resize(o, b, n));
                match g {
                    Ok(-1) => {}
                    Ok(to) => live.push((to, n)),
                    Err(_) => live.push((o, b)),
                }
                (g, w)
            }
            Op::Resize(i, n) if !live.is_empty() => {
                let k = i % live.len();
                let (o, b) = live[k];
                let (g, w) = (pool.resize(o, b, n), model.resize(o, b, n));
                match g {
                    Ok(-1) => {
                        live.swap_remove(k);
                    }
                    Ok(to) => live[k] = (to, n),
                    Err(_) => {}
                }
                (g, w)
            }
            Op::DoubleFree(i) if !dead.is_empty() => {
                let (o, b) = dead[i % dead.len()];
                (pool.free(o, b).map(|()| 0), model.free(o, b).map(|()| 0))
            }
            Op::ResizeDead(i, d) if !dead.is_empty() => {
                let (o, b) = dead[i % dead.len()];
                let (g, w) = (pool.resize(o, b, b + d), model.resize(o, b, b + d));
                // Allocated again at this size since: a live slice, resized.
                if let (Ok(to), Some(k)) = (g, live.iter().position(|&x| x == (o, b))) {
                    live[k] = (to, b + d);
                }
                (g, w)
            }
            Op::FreeOutside(o) => (pool.free(o, 16).map(|()| 0), model.free(o, 16).map(|()| 0)),
            Op::StaleFree(i, kind, k) if !live.is_empty() => {
                let (o, b) = live[i % live.len()];
                // The slot list can trail the pool (a double free that hit a
                // reallocated span): skip claims the model holds live.
                let Some((so, sb)) = stale_claim(arena, (o, round8(b)), kind, k)
                    .filter(|&(so, sb)| model.live_bytes_at(so) != sb)
                else {
                    continue;
                };
                let r = (
                    pool.free(so, sb).map(|()| 0),
                    model.free(so, sb).map(|()| 0),
                );
                match r.0 {
                    Ok(_) => {
                        return Err(format!(
                            "step {step} {op:?}: stale free ({so}, {sb}) accepted"
                        ));
                    }
                    Err(e) => reached.stale_codes.insert(e),
                };
                r
            }
            Op::StaleResize(i, kind, k, n) if !live.is_empty() => {
                let (o, b) = live[i % live.len()];
                // The slot list can trail the pool (a double free that hit a
                // reallocated span): skip claims the model holds live.
                let Some((so, sb)) = stale_claim(arena, (o, round8(b)), kind, k)
                    .filter(|&(so, sb)| model.live_bytes_at(so) != sb)
                else {
                    continue;
                };
                let r = (pool.resize(so, sb, n), model.resize(so, sb, n));
                match r.0 {
                    Ok(_) => {
                        return Err(format!(
                            "step {step} {op:?}: stale resize ({so}, {sb}) accepted"
                        ));
                    }
                    Err(e) => reached.stale_codes.insert(e),
                };
                r
            }
            _ => continue,
        };
        if got != want {
            return Err(format!("step {step} {op:?}: tree {got:?}, model {want:?}"));
        }
        reached.height = reached
            .height
            .max(pool.header_mut()[tern_runtime::span_tree::layout::H_HEIGHT]);
        if step % every != 0 && step + 1 != ops.len() {
            continue;
        }
        for (o, b) in model.live() {
            if pool.live_bytes_at(o) != b {
                return Err(format!(
                    "step {step} {op:?}: the record has {} bytes live at {o}, the model {b}",
                    pool.live_bytes_at(o)
                ));
            }
        }
        let spans = pool
            .check_invariants()
            .map_err(|e| format!("step {step} {op:?}: invariant: {e}"))?;
        if spans != model.spans() {
            return Err(format!(
                "step {step} {op:?}: spans differ:\n tree  {spans:?}\n model {:?}",
                model.spans()
            ));
        }
        reached.spans = reached.spans.max(spans.len());
    }
    Ok(reached)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn unchecked_matches_model(ops in prop::collection::vec(op(), 1..400)) {
        replay::<Unchecked>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn checked_matches_model(ops in prop::collection::vec(op(), 1..400)) {
        replay::<Mirrored>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
        replay::<Shared>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn unchecked_runs_on_one_place_match_model(ops in prop::collection::vec(run_op(), 1..600)) {
        replay::<Unchecked>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn appends_match_model(ops in prop::collection::vec(append_op(), 1..600)) {
        replay::<Unchecked>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
        replay::<Mirrored>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
        replay::<Shared>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: deep_cases(), ..ProptestConfig::default() })]

    #[test]
    fn deep_trees_match_model(ops in deep_ops()) {
        replay_checking::<Unchecked>(DEEP_ARENA, &ops, 16).map_err(TestCaseError::fail)?;
        replay_checking::<Mirrored>(DEEP_ARENA, &ops, 16).map_err(TestCaseError::fail)?;
        replay_checking::<Shared>(DEEP_ARENA, &ops, 16).map_err(TestCaseError::fail)?;
    }
}

/// Child fixture: the portable node scans against the model. Only in a
/// process of its own (`portable_scans_in_a_child_process`): the switch is
/// process-wide.
#[test]
#[ignore = "child fixture: run by portable_scans_in_a_child_process with --ignored --exact"]
fn portable_scans_match_model() {
    child::require_child();
    tern_runtime::span_tree::scan::set_portable_only(true);
    proptest!(
        ProptestConfig { cases: cases(), ..ProptestConfig::default() },
        |(ops in prop::collection::vec(op(), 1..400))| {
            replay::<Unchecked>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
            replay::<Mirrored>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
            replay::<Shared>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
        }
    );
}

/// Child fixture: [`portable_scans_match_model`] on deep trees.
#[test]
#[ignore = "child fixture: run by portable_scans_in_a_child_process with --ignored --exact"]
fn portable_scans_match_model_on_deep_trees() {
    child::require_child();
    tern_runtime::span_tree::scan::set_portable_only(true);
    proptest!(
        ProptestConfig { cases: deep_cases(), ..ProptestConfig::default() },
        |(ops in deep_ops())| {
            replay_checking::<Unchecked>(DEEP_ARENA, &ops, 16).map_err(TestCaseError::fail)?;
        }
    );
}

/// A long deterministic run that builds a multi-level tree (hundreds of spans) and
/// tears it down again, checking against the model at every step.
#[test]
fn deep_tree_build_and_teardown_matches_model() {
    let mut ops = Vec::new();
    // Allocate 3000 small spans, free every other one (1500 free spans: height 3 at
    // fanout 8), then free the rest in a scrambled order so everything coalesces.
    for k in 0..3000 {
        ops.push(Op::Alloc(8 + (k % 5) * 8));
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..6000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ops.push(Op::Free(x as usize));
        if x.is_multiple_of(3) {
            ops.push(Op::Alloc(8 + (x % 40) as i64 * 8));
        }
    }
    let r = replay::<Unchecked>(1 << 20, &ops).unwrap();
    let (height, spans) = (r.height, r.spans);
    assert!(
        height >= 3 && spans >= 700,
        "height {height}, {spans} spans"
    );
    replay::<Mirrored>(1 << 20, &ops).unwrap();
    replay::<Shared>(1 << 20, &ops).unwrap();
}

/// Bursts of allocations (each after the first may take the slot the one
/// before carved from, with one read: `Path::fit_slot`) broken by frees
/// before, at and after that slot, by shrinks and by growths, after which
/// the slot must not be trusted: every placement is the model's.
#[test]
fn allocation_bursts_between_frees_match_model() {
    let mut ops = Vec::new();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..600i64 {
        for k in 0..1 + round % 7 {
            ops.push(Op::Alloc(8 * (1 + (k + round) % 5)));
        }
        for _ in 0..1 + round % 3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ops.push(match x % 5 {
                0 | 1 => Op::Free(x as usize),
                2 => Op::FreeNext(x.is_multiple_of(2)),
                3 => Op::Resize(x as usize, 8 * (x % 6) as i64),
                _ => Op::ResizeLast(8),
            });
        }
    }
    replay::<Unchecked>(1 << 16, &ops).unwrap();
    replay::<Mirrored>(1 << 16, &ops).unwrap();
    replay::<Shared>(1 << 16, &ops).unwrap();
}

/// The random sequences reach multi-level trees (so splits, borrows and merges
/// are exercised), not just a root leaf, and their stale frees and resizes meet
/// every way of being refused: overlapping free space and stale.
#[test]
fn random_sequences_reach_multi_level_trees_and_every_refusal() {
    use tern_runtime::span_tree::error::{DOUBLE_FREE, RESIZE_FREE_SPAN, STALE_FREE, STALE_RESIZE};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut tallest = 0;
    let mut codes = std::collections::BTreeSet::new();
    for _ in 0..20 {
        let ops = prop::collection::vec(op(), 800)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        codes.extend(replay::<Unchecked>(32 * 1024, &ops).unwrap().stale_codes);
    }
    for _ in 0..3 {
        let ops = deep_ops().new_tree(&mut runner).unwrap().current();
        tallest = tallest.max(
            replay_checking::<Unchecked>(DEEP_ARENA, &ops, 64)
                .unwrap()
                .height,
        );
    }
    assert!(tallest >= 3, "tallest tree {tallest}");
    for code in [DOUBLE_FREE, RESIZE_FREE_SPAN, STALE_FREE, STALE_RESIZE] {
        assert!(
            codes.contains(&code),
            "no stale span refused with {code}: {codes:?}"
        );
    }
}

/// The portable node scans (what a CPU without AVX2 runs) against the model, in
/// a process of their own: `portable_scans_match_model` there.
#[test]
fn portable_scans_in_a_child_process() {
    for test in [
        "portable_scans_match_model",
        "portable_scans_match_model_on_deep_trees",
    ] {
        let (status, err) = child::run_child(test, &[]);
        assert_eq!((status, err.as_str()), (Some(0), ""), "{test}");
    }
}
