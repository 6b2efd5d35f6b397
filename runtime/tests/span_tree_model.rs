//! Property tests: the tree against the reference model, for both instantiations
//! and several fanouts. After every operation the tree must give exactly the
//! model's result (offset or error code) and hold all its invariants, with the same
//! free spans as the model.
//!
//! Case count: `TERN_PROPTEST_CASES` (default 500 per property, keeping the debug
//! test run well under a minute).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use tern_runtime::span_tree::layout::FANOUT;
use tern_runtime::span_tree::model::Model;
use tern_runtime::{Checked, SpanPool, Unchecked};

#[derive(Clone, Debug)]
enum Op {
    Alloc(i64),
    Free(usize),
    Resize(usize, i64),
    DoubleFree(usize),
    FreeOutside(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1i64..600).prop_map(Op::Alloc),
        1 => (1i64..4000).prop_map(Op::Alloc),
        5 => any::<usize>().prop_map(Op::Free),
        4 => (any::<usize>(), 0i64..1200).prop_map(|(i, n)| Op::Resize(i, n)),
        1 => any::<usize>().prop_map(Op::DoubleFree),
        1 => (-64i64..80_000).prop_map(Op::FreeOutside),
    ]
}

fn cases() -> u32 {
    std::env::var("TERN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

/// Replays `ops` on a pool and the model; returns an error description on the first difference.
/// Returns the greatest tree height and the most free spans seen.
fn replay<V: tern_runtime::span_tree::Validate, const F: usize>(
    arena: i64,
    ops: &[Op],
) -> Result<(i64, usize), String> {
    let mut max_height = 0;
    let mut max_spans = 0;
    let mut pool = SpanPool::<V, F>::new(arena).map_err(|e| format!("new: {e}"))?;
    let mut model = Model::new(arena);
    // Live spans (offset, bytes) and spans freed earlier (for double frees).
    let mut live: Vec<(i64, i64)> = Vec::new();
    let mut dead: Vec<(i64, i64)> = Vec::new();
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
                (pool.free(o, b).map(|()| 0), model.free(o, b).map(|()| 0))
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
            Op::FreeOutside(o) => (pool.free(o, 16).map(|()| 0), model.free(o, 16).map(|()| 0)),
            _ => continue,
        };
        if got != want {
            return Err(format!("step {step} {op:?}: tree {got:?}, model {want:?}"));
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
        max_height = max_height.max(pool.header_mut()[tern_runtime::span_tree::layout::H_HEIGHT]);
        max_spans = max_spans.max(spans.len());
    }
    Ok((max_height, max_spans))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn unchecked_fanout16_matches_model(ops in prop::collection::vec(op(), 1..400)) {
        replay::<Unchecked, 16>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn checked_matches_model(ops in prop::collection::vec(op(), 1..400)) {
        replay::<Checked, FANOUT>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn unchecked_fanout8_deep_tree_matches_model(ops in prop::collection::vec(op(), 1..600)) {
        replay::<Unchecked, 8>(32 * 1024, &ops).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn unchecked_fanout32_matches_model(ops in prop::collection::vec(op(), 1..400)) {
        replay::<Unchecked, 32>(64 * 1024, &ops).map_err(TestCaseError::fail)?;
    }
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
    let (h8, spans) = replay::<Unchecked, 8>(1 << 20, &ops).unwrap();
    assert!(
        h8 >= 4 && spans >= 700,
        "fanout 8: height {h8}, {spans} spans"
    );
    let (h16, _) = replay::<Unchecked, 16>(1 << 20, &ops).unwrap();
    replay::<Checked, FANOUT>(1 << 20, &ops).unwrap();
    assert!(h16 >= 3, "fanout 16: height {h16}");
}

/// The random sequences reach multi-level trees (so splits, borrows and merges
/// are exercised), not just a root leaf.
#[test]
fn random_sequences_reach_multi_level_trees() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut tallest = 0;
    for _ in 0..20 {
        let ops = prop::collection::vec(op(), 600)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let (h, _) = replay::<Unchecked, 8>(32 * 1024, &ops).unwrap();
        tallest = tallest.max(h);
    }
    assert!(tallest >= 3, "tallest tree {tallest}");
}
