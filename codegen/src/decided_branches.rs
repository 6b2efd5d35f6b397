//! Branches a dominating branch has already decided, folded into jumps.
//!
//! Runs on a function after Cranelift's e-graph pass, which gives equal
//! computations one value: after it, two index checks of the same index
//! against the same length (the header kept in a register by the alias
//! regions of `lower::memory`) test one `icmp` value. When a block is entered
//! only by one edge of a `brif c`, every block it dominates knows `c`'s value
//! on that edge, so a later `brif c` there is a `jump` to the side it must
//! take; the failure blocks it no longer reaches are removed as unreachable
//! by Cranelift's next pass. `c` is an SSA value, so nothing between the two
//! branches can change it: the fold is sound for any condition, not only for
//! index checks.
//!
//! One fact more comes from the shape of a counted loop (a rotated `for`):
//! a block `b` entered from a guard with `i = s`, `s <cc e`, and from a latch
//! with `i = i + 1` when `i + 1 <cc e`, where `cc` is a less-than, `e` is
//! defined before the loop and, for a signed `cc`, `s` is a constant `>= 0`.
//! By induction on the entries into `b`, `i` lies in `[s, e)` there (the
//! increment cannot wrap, as `i < e`), so `i <u e` holds in every block `b`
//! dominates: the index check of `xs[i]` in `for i in 0..n` with `n` the
//! length `xs` is checked against (the same value, or equal constants).
//! The loop's `i` may reach the latch through parameters of merges in the
//! body that only ever pass it on (a loop body with an `if`): those are `i`.
//! When `s` and `e` are both constants, `s <= i < e` gives the check of an
//! offset index `i + k` against a constant length `n` too (`flags[i - 1]` for
//! `i` in `2..5001` over 5000 flags): decided when `s + k >= 0` and
//! `e - 1 + k < n`, with `i + k` computed without wrapping in that range.
//!
//! A loop variable stepped by other amounts (`while k <= n { ..; k += i }`)
//! gets bounds by induction on the entries into its loop's header: each
//! edge's argument is bounded by constants, by the bounds already known of
//! the values it adds (the variable itself at its bounds from an earlier
//! entry) and by the edge's own comparison with a constant. When the bounds
//! of the edges from outside the loop contain those of the edges that add
//! to the variable, every value it takes lies in them (`k` in `[4, 5000]`
//! for `k = i + i` with `i` in `[2, 5000]`, `k <= 5000` on both edges): a
//! `Within` fact like a counted loop's, for the same offset checks.
//!
//! The program's own tests are facts too: a test of a value against a
//! constant decides another test of that value against a constant (the
//! checks of `s[0]` and `s[n - 1]` under `if n > 0`, `decided_by_tests`);
//! `i <s n` with `i` never negative decides `i <u n` (the check of `xs[i]`
//! behind `if i >= len(xs) { .. }`, `decided_by_signed_test`); and a merge
//! knows the tests every edge into it knows (`merge_facts`). Copies of one
//! operation on the same operands, which the e-graph pass leaves in each
//! block that uses them, are one value (`same`).
//!
//! The same facts make a division exact: a signed `x / 2^k` in a block where
//! a dominating test showed `x`'s low `k` bits zero (`if n % 2 == 0 { n =
//! n / 2 }`, collatz's step) is a plain arithmetic shift, without the bias
//! that rounds a negative `x` toward zero ([`exact_halvings`]).

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::packed_option::ReservedValue as _;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::condcodes::{CondCode, IntCC};
use cranelift_codegen::ir::{
    Block, BlockCall, Function, Inst, InstructionData, Opcode, Value, ValueDef, types,
};

/// What is known in a block and in every block it dominates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fact {
    /// This condition value has this truth.
    Cond(Value, bool),
    /// `icmp ult i, e` holds (the first value, the second).
    Below(Value, Value),
    /// `lo <= i < hi` (the value, then the bounds as mathematical integers):
    /// a counted loop whose start and end are constants, or a loop variable
    /// bounded by induction over its header's entries. It holds for every
    /// value `i` takes, wherever `i` is read.
    Within(Value, i128, i128),
}

/// Folds every `brif` whose condition is decided on each path that reaches
/// it; returns how many were folded. `cfg` and `domtree` must be those of
/// `func` as it is (they are not updated: the caller recomputes them).
pub fn fold(func: &mut Function, cfg: &ControlFlowGraph, domtree: &DominatorTree) -> usize {
    let Some(entry) = func.layout.entry_block() else {
        return 0;
    };
    enum Step {
        Enter(Block),
        Leave(usize),
    }
    let mut known: Vec<Fact> = Vec::new();
    let mut steps = vec![Step::Enter(entry)];
    let mut folded = 0;
    while let Some(step) = steps.pop() {
        let block = match step {
            Step::Leave(mark) => {
                known.truncate(mark);
                continue;
            }
            Step::Enter(block) => block,
        };
        steps.push(Step::Leave(known.len()));
        known.extend(edge_fact(func, cfg, block));
        known.extend(merge_facts(func, cfg, domtree, block));
        known.extend(
            counted_loop_facts(func, cfg, domtree, block)
                .into_iter()
                .flatten(),
        );
        let ranges = induction_ranges(func, cfg, domtree, &known, block);
        known.extend(ranges);
        exact_halvings(func, &known, block);
        if let Some(term) = func.layout.last_inst(block)
            && let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[term]
            && let Some(value) = decided(func, cfg, &known, arg)
        {
            let destination = if value { blocks[0] } else { blocks[1] };
            func.dfg.insts[term] = InstructionData::Jump {
                opcode: Opcode::Jump,
                destination,
            };
            folded += 1;
        }
        steps.extend(domtree.children(block).map(Step::Enter));
    }
    folded
}

/// Rewrites each signed division by `2^k` in `block` whose dividend the
/// facts show to be a multiple of `2^k` into a plain arithmetic shift.
///
/// The e-graph pass lowers `x / 2^k` (signed, rounding toward zero) to
/// `sshr(x + b, k)` where the bias `b` is `2^k - 1` for a negative `x` and
/// 0 otherwise, computed as `ushr(..., w - k)` (so `0 <= b < 2^k`). When the
/// low `k` bits of `x` are zero, adding `b` only fills them, without a
/// carry into bit `k`, so the shift gives `x >> k`: collatz's `n / 2` under
/// `if n % 2 == 0` (three instructions fewer per step, as gcc does).
/// What shows the low bits zero: a dominating `x & m == 0` (or a branch on
/// `x & m` taken on its zero side) with the low `k` bits of `m` set.
fn exact_halvings(func: &mut Function, known: &[Fact], block: Block) {
    let insts: Vec<Inst> = func.layout.block_insts(block).collect();
    for inst in insts {
        let InstructionData::Binary {
            opcode: Opcode::Sshr,
            args: [sum, amount],
        } = func.dfg.insts[inst]
        else {
            continue;
        };
        // Below the width: a larger amount is taken modulo the width,
        // and the argument below would not hold.
        let width = i64::from(func.dfg.value_type(sum).bits());
        let Some(k) = constant(func, amount).filter(|k| (1..width).contains(k)) else {
            continue;
        };
        let Some(x) = biased_dividend(func, sum, k) else {
            continue;
        };
        let low = ((1u64 << k) - 1) as i64;
        let multiple = known.iter().any(|fact| match *fact {
            Fact::Cond(c, truth) => masked_zero(func, c, truth)
                .is_some_and(|(v, m)| func.dfg.resolve_aliases(v) == x && m & low == low),
            _ => false,
        });
        if multiple {
            func.dfg.insts[inst] = InstructionData::Binary {
                opcode: Opcode::Sshr,
                args: [x, amount],
            };
        }
    }
}

/// `x` when `sum` is `x + ushr(y, s)` (either order) with a constant
/// `s >= w - k`, `w` the width: a bias below `2^k`.
fn biased_dividend(func: &Function, sum: Value, k: i64) -> Option<Value> {
    let ValueDef::Result(inst, _) = func.dfg.value_def(sum) else {
        return None;
    };
    let InstructionData::Binary {
        opcode: Opcode::Iadd,
        args,
    } = func.dfg.insts[inst]
    else {
        return None;
    };
    let width = i64::from(func.dfg.value_type(sum).bits());
    let small_bias = |b: Value| {
        let ValueDef::Result(def, _) = func.dfg.value_def(b) else {
            return false;
        };
        matches!(func.dfg.insts[def], InstructionData::Binary {
            opcode: Opcode::Ushr,
            args: [_, s],
        } if constant(func, s).is_some_and(|s| s >= width - k && s < width))
    };
    match args {
        [x, b] if small_bias(b) => Some(func.dfg.resolve_aliases(x)),
        [b, x] if small_bias(b) => Some(func.dfg.resolve_aliases(x)),
        _ => None,
    }
}

/// `(x, m)` when condition `c` having truth `truth` means `x & m == 0`:
/// `icmp eq (x & m), 0` true, `icmp ne (x & m), 0` false, or `x & m`
/// itself false (a `brif` on it taken on its zero side). `m` is a constant.
fn masked_zero(func: &Function, c: Value, truth: bool) -> Option<(Value, i64)> {
    let and = match compare(func, c) {
        Some((IntCC::Equal, a, z)) if truth && constant(func, z) == Some(0) => a,
        Some((IntCC::NotEqual, a, z)) if !truth && constant(func, z) == Some(0) => a,
        Some(_) => return None,
        None if !truth => c,
        None => return None,
    };
    let ValueDef::Result(inst, _) = func.dfg.value_def(func.dfg.resolve_aliases(and)) else {
        return None;
    };
    with_constant(func, inst, Opcode::Band)
}

/// `(x, c)` when `inst` is the binary `op` of `x` and a constant `c`, in
/// either order.
pub(crate) fn with_constant(func: &Function, inst: Inst, op: Opcode) -> Option<(Value, i64)> {
    let InstructionData::Binary { opcode, args } = func.dfg.insts[inst] else {
        return None;
    };
    if opcode != op {
        return None;
    }
    let [a, b] = args.map(|v| func.dfg.resolve_aliases(v));
    match (constant(func, a), constant(func, b)) {
        (_, Some(c)) => Some((a, c)),
        (Some(c), None) => Some((b, c)),
        (None, None) => None,
    }
}

/// The truth of condition `c` if the facts decide it.
fn decided(func: &Function, cfg: &ControlFlowGraph, known: &[Fact], c: Value) -> Option<bool> {
    if let Some(truth) = decided_by_tests(func, cfg, known, c) {
        return Some(truth);
    }
    if let Some(truth) = decided_by_signed_test(func, cfg, known, c) {
        return Some(truth);
    }
    let below = compare(func, c).and_then(|(cc, a, b)| match cc {
        IntCC::UnsignedLessThan => Some((a, b)),
        IntCC::UnsignedGreaterThan => Some((b, a)),
        _ => None,
    });
    // `i + k <u n` with constants `k` and `n`.
    let offset_below = below.and_then(|(a, b)| {
        let n = constant(func, b)? as u64;
        let (i, k) = offset_of(func, a);
        Some((i, k, n))
    });
    known
        .iter()
        .rev()
        .enumerate()
        .find_map(|(at, fact)| match *fact {
            Fact::Cond(v, truth) if v == c => Some(truth),
            Fact::Cond(v, truth) if at < TEST_WINDOW && same_test(func, cfg, v, c) => Some(truth),
            Fact::Below(i, e)
                if below.is_some_and(|(a, b)| same(func, a, i) && same(func, b, e)) =>
            {
                Some(true)
            }
            Fact::Within(i, lo, hi)
                if offset_below.is_some_and(|(a, k, n)| {
                    a == i && lo + k >= 0 && hi - 1 + k < i128::from(n)
                }) =>
            {
                Some(true)
            }
            _ => None,
        })
}

/// How many of the innermost tests known at a branch are read for what
/// they say of another condition (its operands, its bounds). A chain of
/// `else if`s knows one test per arm, and reading all of them at every arm
/// is quadratic: `tern build -O2` of a 2 000-arm chain (`benches/scale.py
/// gen elseif 2000`) took 3.9 G instructions that way, 0.29 G before these
/// reads and 0.33 G with this window (callgrind). The same condition value
/// is still looked for among all of them, as before.
const TEST_WINDOW: usize = 16;

/// The innermost [`TEST_WINDOW`] tests known here, innermost first, with
/// the truth each has.
fn recent_tests(known: &[Fact]) -> impl Iterator<Item = (Value, bool)> + '_ {
    known
        .iter()
        .rev()
        .filter_map(|fact| match *fact {
            Fact::Cond(t, truth) => Some((t, truth)),
            _ => None,
        })
        .take(TEST_WINDOW)
}

/// The truth of `x cc k` for every `x` in `bounds`, if it is the same for
/// all of them.
fn within_bounds(cc: IntCC, k: i64, (lo, hi): Bounds) -> Option<bool> {
    // Bounds are signed: an unsigned comparison (or an equality, compared
    // here as unsigned) needs them non-negative.
    let n = if cc.unsigned() == cc {
        if lo < 0 {
            return None;
        }
        i128::from(k as u64)
    } else {
        i128::from(k)
    };
    match cc.unsigned() {
        IntCC::UnsignedLessThan if hi < n => Some(true),
        IntCC::UnsignedLessThan if lo >= n => Some(false),
        IntCC::UnsignedLessThanOrEqual if hi <= n => Some(true),
        IntCC::UnsignedLessThanOrEqual if lo > n => Some(false),
        IntCC::UnsignedGreaterThan if hi <= n => Some(false),
        IntCC::UnsignedGreaterThan if lo > n => Some(true),
        IntCC::UnsignedGreaterThanOrEqual if hi < n => Some(false),
        IntCC::UnsignedGreaterThanOrEqual if lo >= n => Some(true),
        IntCC::Equal if n < lo || n > hi => Some(false),
        IntCC::NotEqual if n < lo || n > hi => Some(true),
        _ => None,
    }
}

/// The truth of a test of a 64-bit value against a constant that the
/// value's bounds ([`bounds_of`]: constants, sums, masks, assembled bytes
/// and the `Within` facts known here) or the tests of that value known here
/// decide. By bounds: a random slot `r % 512`, which the e-graph pass makes
/// `r & 511`, is below 512 slots; `1 + r % 32` never exceeds an
/// allocation's size limit, and is above 0 (a loop's guard). By tests: the
/// check of `s[0]`, which the e-graph pass makes `n != 0`, under `if n > 0`
/// or past `if n == 0 { return }`; and the check of `s[n - 1]`, `n - c <u
/// n`, which holds exactly when `n >=u c` (for `c = 1`: `n != 0`). A test
/// decides another when it is the same test or its complement, or through
/// the bounds it gives the value (`n >s 0`: `n` in `[1, 2^63)`).
fn decided_by_tests(
    func: &Function,
    cfg: &ControlFlowGraph,
    known: &[Fact],
    c: Value,
) -> Option<bool> {
    let (cc, x, k) = against_constant(func, c).or_else(|| below_itself(func, c))?;
    if func.dfg.value_type(x) != types::I64 {
        return None;
    }
    let (cc, k) = toward_zero(cc, k);
    let tests = recent_tests(known);
    let mut bounds = bounds_here(func, cfg, known, x)?;
    for (t, truth) in tests {
        if let Some((tcc, tx, tk)) = against_constant(func, t)
            && same(func, tx, x)
        {
            let (tcc, tk) = toward_zero(tcc, tk);
            let tcc = if truth { tcc } else { tcc.complement() };
            if tk == k && tcc == cc {
                return Some(true);
            }
            if tk == k && tcc == cc.complement() {
                return Some(false);
            }
        }
        // A test the value cannot pass: this block is never reached, and
        // the branch is left as it is.
        bounds = narrowed(func, bounds, x, Some((t, truth)))?;
    }
    within_bounds(cc, k, bounds)
}

/// The truth of `a <u b` (or its complement) when a dominating test showed
/// `a <s b` and `a` is never negative by its bounds: the index check of
/// `xs[i]` behind the program's own `if i >= n { panic(..) }`, `n` the
/// length of `xs` and `i` a masked field.
fn decided_by_signed_test(
    func: &Function,
    cfg: &ControlFlowGraph,
    known: &[Fact],
    c: Value,
) -> Option<bool> {
    let (cc, a, b) = compare(func, c)?;
    // `(a, b, truth)`: `c` is `a <u b` when `truth`, else its complement.
    let (a, b, truth) = match cc {
        IntCC::UnsignedLessThan => (a, b, true),
        IntCC::UnsignedGreaterThan => (b, a, true),
        IntCC::UnsignedGreaterThanOrEqual => (a, b, false),
        IntCC::UnsignedLessThanOrEqual => (b, a, false),
        _ => return None,
    };
    if func.dfg.value_type(a) != types::I64 {
        return None;
    }
    let signed_below = recent_tests(known).any(|(t, held)| {
        compare(func, t).is_some_and(|(tcc, ta, tb)| {
            let tcc = if held { tcc } else { tcc.complement() };
            match tcc {
                IntCC::SignedLessThan => same(func, ta, a) && same(func, tb, b),
                IntCC::SignedGreaterThan => same(func, ta, b) && same(func, tb, a),
                _ => false,
            }
        })
    });
    if !signed_below {
        return None;
    }
    let (lo, _) = bounds_here(func, cfg, known, a)?;
    // `0 <= a <s b`: both in `[0, 2^63)`, where the orders agree.
    (lo >= 0).then_some(truth)
}

/// `(cc, x, k)` when `c` compares `x` with a constant `k` (`x cc k`, the
/// constant moved to the right when it was on the left), or is a value `x`
/// that is no comparison: a `brif` on it tests `x != 0` (the e-graph pass
/// branches on `n` itself for `n != 0`).
fn against_constant(func: &Function, c: Value) -> Option<(IntCC, Value, i64)> {
    let Some((cc, a, b)) = compare(func, c) else {
        return Some((IntCC::NotEqual, c, 0));
    };
    match (constant(func, a), constant(func, b)) {
        (None, Some(k)) => Some((cc, a, k)),
        (Some(k), None) => Some((cc.swap_args(), b, k)),
        _ => None,
    }
}

/// `(uge, x, k)`, or its complement `(ult, x, k)`, when `c` compares
/// `x + -k` with `x` itself (`k > 0`): `x - k <u x` holds exactly when
/// the subtraction does not wrap, `x >=u k`.
fn below_itself(func: &Function, c: Value) -> Option<(IntCC, Value, i64)> {
    let (cc, a, b) = compare(func, c)?;
    let minus = |sum: Value, x: Value| {
        let (y, k) = offset_of(func, sum);
        (y == x && k < 0 && k > i128::from(i64::MIN)).then(|| -k as i64)
    };
    if let Some(k) = minus(a, b) {
        // `x - k cc x`.
        match cc {
            IntCC::UnsignedLessThan => Some((IntCC::UnsignedGreaterThanOrEqual, b, k)),
            IntCC::UnsignedGreaterThanOrEqual => Some((IntCC::UnsignedLessThan, b, k)),
            _ => None,
        }
    } else if let Some(k) = minus(b, a) {
        // `x cc x - k`.
        match cc {
            IntCC::UnsignedGreaterThan => Some((IntCC::UnsignedGreaterThanOrEqual, a, k)),
            IntCC::UnsignedLessThanOrEqual => Some((IntCC::UnsignedLessThan, a, k)),
            _ => None,
        }
    } else {
        None
    }
}

/// An unsigned test against 1 or 0 written as the equality with 0 it is
/// (`x >=u 1`, `x >u 0`: `x != 0`), as the e-graph pass writes it.
fn toward_zero(cc: IntCC, k: i64) -> (IntCC, i64) {
    match (cc, k) {
        (IntCC::UnsignedGreaterThanOrEqual, 1) | (IntCC::UnsignedGreaterThan, 0) => {
            (IntCC::NotEqual, 0)
        }
        (IntCC::UnsignedLessThan, 1) | (IntCC::UnsignedLessThanOrEqual, 0) => (IntCC::Equal, 0),
        other => other,
    }
}

/// `(i, k)` when `v` is `iadd i, k` with a constant `k` (either order), else
/// `(v, 0)`. Only 64-bit values: `i + k` then cannot wrap inside the range
/// a `Within` fact gives `i` (its bounds are below 2^64 in magnitude).
fn offset_of(func: &Function, v: Value) -> (Value, i128) {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return (v, 0);
    };
    if func.dfg.value_type(v) != types::I64 {
        return (v, 0);
    }
    match func.dfg.insts[inst] {
        InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [x, y],
        } => match (constant(func, x), constant(func, y)) {
            (_, Some(k)) => (x, i128::from(k)),
            (Some(k), _) => (y, i128::from(k)),
            _ => (v, 0),
        },
        _ => (v, 0),
    }
}

/// What the one edge into `block` says, if `block` has one predecessor and
/// it is a `brif` whose two targets differ: its condition, true on the
/// first target's edge.
fn edge_fact(func: &Function, cfg: &ControlFlowGraph, block: Block) -> Option<Fact> {
    let mut preds = cfg.pred_iter(block);
    let pred = preds.next()?;
    if preds.next().is_some() {
        return None;
    }
    let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[pred.inst] else {
        return None;
    };
    let pool = &func.dfg.value_lists;
    let (then_b, else_b) = (blocks[0].block(pool), blocks[1].block(pool));
    if then_b == else_b {
        return None;
    }
    Some(Fact::Cond(arg, block == then_b))
}

/// The conditions that hold on every edge into `block` when it is a merge
/// that no loop enters again (two or more predecessors, none of them
/// dominated by `block`): on each predecessor's side, its own branch into
/// `block` and the entry edges of the blocks that dominate it below
/// `block`'s immediate dominator (whose facts the walk has already). A
/// test all sides share (the same comparison of the same values) holds in
/// `block` as well: `xs[i]` stored on both sides of an `if` and read after
/// it is checked once on each side, not a third time. A loop header is
/// left out: its parameters take new values on the edges back into it.
fn merge_facts(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    block: Block,
) -> Vec<Fact> {
    // Bounds on the work per merge (sides times the facts of each): the
    // merges of `if`s and small `match`es fit; larger ones get no facts.
    const MAX_SIDES: usize = 8;
    const MAX_DEPTH: usize = 64;
    let sides = cfg.pred_iter(block).count();
    let Some(idom) = domtree.idom(block) else {
        return Vec::new();
    };
    if !(2..=MAX_SIDES).contains(&sides)
        || cfg
            .pred_iter(block)
            .any(|p| domtree.block_dominates(block, p.block))
    {
        return Vec::new();
    }
    let preds = cfg.pred_iter(block);
    let mut shared: Option<Vec<(Value, bool)>> = None;
    for pred in preds {
        let mut side = Vec::new();
        if let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[pred.inst] {
            let pool = &func.dfg.value_lists;
            let (then_b, else_b) = (blocks[0].block(pool), blocks[1].block(pool));
            if then_b != else_b {
                side.push((arg, block == then_b));
            }
        }
        let mut at = pred.block;
        for _ in 0..MAX_DEPTH {
            if at == idom {
                break;
            }
            if let Some(Fact::Cond(c, truth)) = edge_fact(func, cfg, at) {
                side.push((c, truth));
            }
            match domtree.idom(at) {
                Some(up) => at = up,
                None => break,
            }
        }
        if at != idom {
            // Too deep to follow to the merge's dominator: nothing shared.
            return Vec::new();
        }
        shared = Some(match shared {
            None => side,
            Some(so_far) => so_far
                .into_iter()
                .filter(|&(c, truth)| {
                    side.iter()
                        .any(|&(d, held)| held == truth && same_test(func, cfg, c, d))
                })
                .collect(),
        });
    }
    shared
        .unwrap_or_default()
        .into_iter()
        .map(|(c, truth)| Fact::Cond(c, truth))
        .collect()
}

/// `i <u e` for the counted-loop shape of the module docs, if `block` has
/// it, and `s <= i < e` as well when both are constants.
fn counted_loop_facts(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    block: Block,
) -> [Option<Fact>; 2] {
    let preds: Vec<_> = cfg.pred_iter(block).map(|p| p.inst).collect();
    let [a, b] = preds[..] else {
        return [None, None];
    };
    let pool = &func.dfg.value_lists;
    let params = func.dfg.block_params(block);
    for (guard, latch) in [(a, b), (b, a)] {
        // The latch: `brif (next <cc e), block(.., next, ..), exit`.
        let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[latch] else {
            continue;
        };
        if blocks[0].block(pool) != block || blocks[1].block(pool) == block {
            continue;
        }
        let Some((cc, next, e)) = compare(func, arg) else {
            continue;
        };
        if !matches!(cc, IntCC::SignedLessThan | IntCC::UnsignedLessThan) {
            continue;
        }
        // `next = i + 1`, `i` the parameter the latch passes `next` to (or
        // a parameter of a merge inside the loop that only ever carries it).
        let Some(i) = increment_of(func, next) else {
            continue;
        };
        let i = carried(func, cfg, i);
        let Some(k) = params.iter().position(|&p| p == i) else {
            continue;
        };
        if arg_at(func, blocks[0], k) != Some(next) {
            continue;
        }
        // `e` is the same value on every entry: defined before the loop.
        if !defined_before(func, domtree, e, block) {
            continue;
        }
        // The guard: `i = s` with `s <cc e` on its edge, `s >= 0` if signed.
        let Some((call, test)) = edge_into(func, guard, block) else {
            continue;
        };
        let Some(s) = arg_at(func, call, k) else {
            continue;
        };
        let start = constant(func, s);
        if cc == IntCC::SignedLessThan && start.is_none_or(|c| c < 0) {
            continue;
        }
        let guarded = match test {
            // `s < e`, or `e > s` as the e-graph may have turned it.
            Some(c) => compare(func, c).is_some_and(|(gcc, x, y)| {
                (gcc == cc && x == s && same(func, y, e))
                    || (gcc == cc.swap_args() && y == s && same(func, x, e))
            }),
            None => match (start, constant(func, e)) {
                (Some(s), Some(e)) if cc == IntCC::SignedLessThan => s < e,
                (Some(s), Some(e)) => (s as u64) < (e as u64),
                _ => false,
            },
        };
        if guarded {
            let within = match (start, constant(func, e), func.dfg.value_type(i)) {
                (Some(s), Some(e), types::I64) if cc == IntCC::SignedLessThan => {
                    Some(Fact::Within(i, s.into(), e.into()))
                }
                // Bounds are signed (`Bounds`): an unsigned loop's values are
                // bounded so only while they stay below 2^63, where the two
                // orders agree (past it `i as i64` is negative).
                (Some(s), Some(e), types::I64) if (e as u64) <= 1 << 63 => {
                    Some(Fact::Within(i, (s as u64).into(), (e as u64).into()))
                }
                _ => None,
            };
            return [Some(Fact::Below(i, e)), within];
        }
    }
    [None, None]
}

/// Inclusive bounds of a 64-bit value, as mathematical integers.
type Bounds = (i128, i128);

/// Every value of type `i64` lies in these.
const I64_BOUNDS: Bounds = (i64::MIN as i128, i64::MAX as i128);

/// How many times the bounds of a loop header's parameter are widened (see
/// [`widen`]) to take in its back edges before the induction is given up.
const WIDENINGS: usize = 3;

/// `Within` facts for the 64-bit parameters of a loop header `block` (one of
/// its predecessors is a block it dominates), by the induction of the module
/// docs: the union of the bounds of the arguments of its entry edges that do
/// not depend on the parameter, widened by those of the edges that do until
/// they add nothing new. `known` holds where `block`'s predecessors are.
fn induction_ranges(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    known: &[Fact],
    block: Block,
) -> Vec<Fact> {
    let pool = &func.dfg.value_lists;
    let mut edges = Vec::new();
    let mut is_header = false;
    for pred in cfg.pred_iter(block) {
        is_header |= domtree.block_dominates(block, pred.block);
        match func.dfg.insts[pred.inst] {
            InstructionData::Jump { destination, .. } => edges.push((destination, None)),
            InstructionData::Brif { arg, blocks, .. } => {
                for (call, truth) in [(blocks[0], true), (blocks[1], false)] {
                    if call.block(pool) == block {
                        edges.push((call, Some((arg, truth))));
                    }
                }
            }
            // A `br_table` or an exceptional edge: no bounds here.
            _ => return Vec::new(),
        }
    }
    if !is_header {
        return Vec::new();
    }
    let mut facts = Vec::new();
    for (j, &param) in func.dfg.block_params(block).iter().enumerate() {
        if func.dfg.value_type(param) != types::I64 {
            continue;
        }
        // Each edge's argument for the parameter (a branch that passes
        // something other than a value: no bounds).
        let Some(args): Option<Vec<_>> = edges
            .iter()
            .map(|&(call, test)| Some((arg_at(func, call, j)?, test)))
            .collect()
        else {
            continue;
        };
        // The union of the bounds of every edge's argument, given those of
        // the parameter from an earlier entry (`None`: the edges that
        // depend on it are left out); `None` if no edge can be taken.
        let entries = |assumed: Option<Bounds>| {
            args.iter()
                .filter_map(|&(arg, test)| {
                    let b = bounds_of(func, cfg, known, (param, assumed), arg, 4)?;
                    narrowed(func, b, arg, test)
                })
                .reduce(union)
        };
        // The bounds the edges' tests set: where a growing bound stops.
        let limits: Vec<i128> = args
            .iter()
            .filter_map(|&(arg, test)| narrowed(func, I64_BOUNDS, arg, test))
            .flat_map(|(lo, hi)| [lo, hi])
            .filter(|&l| l != I64_BOUNDS.0 && l != I64_BOUNDS.1)
            .collect();
        let Some(mut bounds) = entries(None) else {
            continue;
        };
        for _ in 0..WIDENINGS {
            let widened = entries(Some(bounds)).map_or(bounds, |n| widen(bounds, n, &limits));
            if widened == bounds {
                if bounds != I64_BOUNDS {
                    facts.push(Fact::Within(param, bounds.0, bounds.1 + 1));
                }
                break;
            }
            bounds = widened;
        }
    }
    facts
}

/// `current` grown to hold `next`: a bound that moves goes on to the nearest
/// of `limits` past it, or to the type's end, so that a loop stepping by a
/// constant reaches its test's bound in one step rather than one per
/// iteration.
fn widen(current: Bounds, next: Bounds, limits: &[i128]) -> Bounds {
    let lo = if next.0 < current.0 {
        let below = limits.iter().filter(|&&l| l <= next.0);
        below.copied().max().unwrap_or(I64_BOUNDS.0)
    } else {
        current.0
    };
    let hi = if next.1 > current.1 {
        let above = limits.iter().filter(|&&l| l >= next.1);
        above.copied().min().unwrap_or(I64_BOUNDS.1)
    } else {
        current.1
    };
    (lo, hi)
}

/// The smallest bounds holding both.
fn union(a: Bounds, b: Bounds) -> Bounds {
    (a.0.min(b.0), a.1.max(b.1))
}

/// Bounds of the 64-bit value `v` from constants, sums, masks and the `Within`
/// facts in `known` (each holds wherever its value is defined: it was proven
/// for every value the parameter takes). `hypothesis` assumes bounds for one
/// loop parameter (`None`: unknown yet, and then so is every value computed
/// from it: the result is `None`). A value nothing bounds gets the bounds of
/// its type; so does a sum that could wrap. At most `depth` sums deep.
fn bounds_of(
    func: &Function,
    cfg: &ControlFlowGraph,
    known: &[Fact],
    hypothesis: (Value, Option<Bounds>),
    v: Value,
    depth: u32,
) -> Option<Bounds> {
    let v = carried(func, cfg, v);
    if v == hypothesis.0 {
        return hypothesis.1;
    }
    if let Some(k) = constant(func, v) {
        return Some((k.into(), k.into()));
    }
    if let Some((lo, hi)) = known.iter().rev().find_map(|fact| match *fact {
        Fact::Within(i, lo, hi) if i == v => Some((lo, hi - 1)),
        _ => None,
    }) {
        return Some((lo, hi));
    }
    // `x & m` with a constant `m >= 0` lies in `[0, m]`.
    if let ValueDef::Result(inst, _) = func.dfg.value_def(v)
        && let InstructionData::Binary {
            opcode: Opcode::Band,
            args: [x, y],
        } = func.dfg.insts[inst]
        && let Some(m) = constant(func, y).or_else(|| constant(func, x))
        && m >= 0
    {
        return Some((0, m.into()));
    }
    if let ValueDef::Result(inst, _) = func.dfg.value_def(v)
        && let InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [x, y],
        } = func.dfg.insts[inst]
        && depth > 0
    {
        let x = bounds_of(func, cfg, known, hypothesis, x, depth - 1)?;
        let y = bounds_of(func, cfg, known, hypothesis, y, depth - 1)?;
        let sum = (x.0 + y.0, x.1 + y.1);
        // A sum outside the type's range may wrap to anything.
        return Some(if sum.0 < I64_BOUNDS.0 || sum.1 > I64_BOUNDS.1 {
            I64_BOUNDS
        } else {
            sum
        });
    }
    if let ValueDef::Result(inst, _) = func.dfg.value_def(v) {
        match func.dfg.insts[inst] {
            // A zero extension from fewer bits: a byte read is in `[0, 255]`.
            InstructionData::Unary {
                opcode: Opcode::Uextend,
                arg,
            } => {
                let bits = func.dfg.value_type(arg).bits();
                if bits < 64 {
                    return Some((0, (1i128 << bits) - 1));
                }
            }
            // Bytes assembled into a word (`b0 | b1 << 8 | ..`): shifts by
            // constants and ors of values that are never negative.
            InstructionData::Binary {
                opcode: op @ (Opcode::Ishl | Opcode::Ushr | Opcode::Bor),
                args: [x, y],
            } if depth > 0 => {
                let bx = bounds_of(func, cfg, known, hypothesis, x, depth - 1)?;
                if op == Opcode::Bor {
                    let by = bounds_of(func, cfg, known, hypothesis, y, depth - 1)?;
                    if bx.0 >= 0 && by.0 >= 0 {
                        // No bit above the larger value's highest one.
                        let top = bx.1.max(by.1) as u64;
                        let ceiling = u64::MAX.checked_shr(top.leading_zeros()).unwrap_or(0);
                        return Some((bx.0.max(by.0), i128::from(ceiling)));
                    }
                } else if let Some(k) = constant(func, y) {
                    let k = (k & 63) as u32;
                    if op == Opcode::Ishl && bx.0 >= 0 && bx.1 << k <= I64_BOUNDS.1 {
                        return Some((bx.0 << k, bx.1 << k));
                    }
                    if op == Opcode::Ushr && bx.0 >= 0 {
                        return Some((bx.0 >> k, bx.1 >> k));
                    }
                    if op == Opcode::Ushr && k > 0 {
                        return Some((0, i128::from(u64::MAX >> k)));
                    }
                }
            }
            _ => {}
        }
    }
    Some(I64_BOUNDS)
}

/// [`bounds_of`] `v` with the facts known here and no loop hypothesis (no
/// value is the reserved one, so it never applies).
fn bounds_here(
    func: &Function,
    cfg: &ControlFlowGraph,
    known: &[Fact],
    v: Value,
) -> Option<Bounds> {
    bounds_of(func, cfg, known, (Value::reserved_value(), None), v, 4)
}

/// `bounds` of `arg` cut by what the edge's test (`(condition, truth)`)
/// says when the condition compares `arg` with a constant; `None` when no
/// value is left (the edge is never taken).
fn narrowed(
    func: &Function,
    bounds: Bounds,
    arg: Value,
    test: Option<(Value, bool)>,
) -> Option<Bounds> {
    let (mut lo, mut hi) = bounds;
    if let Some((c, truth)) = test
        && let Some((cc, a, b)) = compare(func, c)
    {
        let cc = if truth { cc } else { cc.complement() };
        let known = match (constant(func, a), constant(func, b)) {
            (None, Some(k)) if a == arg => Some((cc, k)),
            (Some(k), None) if b == arg => Some((cc.swap_args(), k)),
            _ => None,
        };
        if let Some((cc, k)) = known {
            let k = i128::from(k);
            match cc {
                IntCC::Equal => (lo, hi) = (lo.max(k), hi.min(k)),
                IntCC::NotEqual if k == lo => lo += 1,
                IntCC::NotEqual if k == hi => hi -= 1,
                IntCC::SignedLessThan => hi = hi.min(k - 1),
                IntCC::SignedLessThanOrEqual => hi = hi.min(k),
                IntCC::SignedGreaterThan => lo = lo.max(k + 1),
                IntCC::SignedGreaterThanOrEqual => lo = lo.max(k),
                // Below an unsigned constant under 2^63: a non-negative value.
                IntCC::UnsignedLessThan if k >= 0 => (lo, hi) = (lo.max(0), hi.min(k - 1)),
                IntCC::UnsignedLessThanOrEqual if k >= 0 => (lo, hi) = (lo.max(0), hi.min(k)),
                _ => {}
            }
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// The value a block parameter always carries when every edge into its block
/// passes either that value (or a parameter that carries it, looked up the
/// same way) or the parameter itself: a variable of the loop passed on
/// unchanged through merges in its body. Else `v`. In SSA form such a
/// parameter is that value (the trivial phi of Braun et al., removed
/// transitively).
fn carried(func: &Function, cfg: &ControlFlowGraph, v: Value) -> Value {
    carried_within(func, cfg, v, &mut 64)
}

/// [`carried`], visiting at most `budget` parameters (the bound keeps a
/// merge of many edges cheap and stops a cycle of parameters: past it a
/// value stands for itself).
fn carried_within(func: &Function, cfg: &ControlFlowGraph, v: Value, budget: &mut u32) -> Value {
    let ValueDef::Param(block, j) = func.dfg.value_def(v) else {
        return v;
    };
    if *budget == 0 {
        return v;
    }
    *budget -= 1;
    // One value on every edge (the common case) is looked through once: the
    // budget then goes to that value's own parameters, not to each edge's.
    let mut args = cfg.pred_iter(block).flat_map(|pred| {
        destinations(func, pred.inst)
            .iter()
            .filter(|c| c.block(&func.dfg.value_lists) == block)
            .map(move |c| arg_at(func, *c, j).map(|a| func.dfg.resolve_aliases(a)))
    });
    let first = args.find(|&a| a != Some(v));
    if let Some(Some(w)) = first
        && args.all(|a| a == Some(w) || a == Some(v))
    {
        return carried_within(func, cfg, w, budget);
    }
    let mut only = None;
    for pred in cfg.pred_iter(block) {
        for call in destinations(func, pred.inst)
            .iter()
            .filter(|c| c.block(&func.dfg.value_lists) == block)
        {
            let Some(arg) = arg_at(func, *call, j) else {
                return v;
            };
            let arg = func.dfg.resolve_aliases(arg);
            if arg == v {
                continue;
            }
            let arg = carried_within(func, cfg, arg, budget);
            match only {
                None => only = Some(arg),
                Some(w) if w == arg => {}
                Some(_) => return v,
            }
        }
    }
    only.unwrap_or(v)
}

/// The branch of `inst` into `block` and the condition that holds on it
/// (`None`: an unconditional jump).
fn edge_into(func: &Function, inst: Inst, block: Block) -> Option<(BlockCall, Option<Value>)> {
    let pool = &func.dfg.value_lists;
    match func.dfg.insts[inst] {
        InstructionData::Jump { destination, .. } => Some((destination, None)),
        InstructionData::Brif { arg, blocks, .. }
            if blocks[0].block(pool) == block && blocks[1].block(pool) != block =>
        {
            Some((blocks[0], Some(arg)))
        }
        _ => None,
    }
}

/// The destinations of the branch `inst` (none for other instructions).
pub(crate) fn destinations(func: &Function, inst: Inst) -> &[BlockCall] {
    func.dfg.insts[inst].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
}

/// The `k`th argument of a branch to a block.
fn arg_at(func: &Function, call: BlockCall, k: usize) -> Option<Value> {
    call.args(&func.dfg.value_lists).nth(k)?.as_value()
}

/// `(cc, a, b)` when `v` is `icmp cc a, b`.
pub(crate) fn compare(func: &Function, v: Value) -> Option<(IntCC, Value, Value)> {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.insts[inst] {
        InstructionData::IntCompare { cond, args, .. } => Some((cond, args[0], args[1])),
        _ => None,
    }
}

/// `i` when `v` is `iadd i, 1` (either order).
fn increment_of(func: &Function, v: Value) -> Option<Value> {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.insts[inst] {
        InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [x, y],
        } => match (constant(func, x), constant(func, y)) {
            (_, Some(1)) => Some(x),
            (Some(1), _) => Some(y),
            _ => None,
        },
        _ => None,
    }
}

/// The value of an `iconst`, sign-extended from its type's width (which
/// keeps the unsigned order of two constants of one type too).
pub(crate) fn constant(func: &Function, v: Value) -> Option<i64> {
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return None;
    };
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => {
            let unused = 64 - func.dfg.value_type(v).bits().min(64);
            Some((imm.bits() << unused) >> unused)
        }
        _ => None,
    }
}

/// The same value, two constants of one type and value, or two copies of
/// one arithmetic operation on the same operands (Cranelift rematerializes
/// constants, and operations of a value with a constant, in each block that
/// uses them: `id & 0x3fff_ffff` is a new value in every block).
pub(crate) fn same(func: &Function, a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    if func.dfg.value_type(a) != func.dfg.value_type(b) {
        return false;
    }
    match constant(func, a) {
        Some(k) => constant(func, b) == Some(k),
        None => copies(func, a, b),
    }
}

/// Whether two conditions are one: the same value, or the same comparison
/// of the same values (its operands rematerialized in another block, or
/// passed on unchanged through a merge's parameter: [`carried`]).
fn same_test(func: &Function, cfg: &ControlFlowGraph, a: Value, b: Value) -> bool {
    // Parameters are looked through only when the values differ and one of
    // them is a parameter (anything else carries itself).
    let param = |v: Value| matches!(func.dfg.value_def(v), ValueDef::Param(..));
    let operand = |x: Value, y: Value| {
        same(func, x, y)
            || ((param(x) || param(y)) && same(func, carried(func, cfg, x), carried(func, cfg, y)))
    };
    a == b
        || matches!((compare(func, a), compare(func, b)),
            (Some((ca, a0, a1)), Some((cb, b0, b1)))
                if ca == cb && operand(a0, b0) && operand(a1, b1))
}

/// Whether `a` and `b` are results of one pure binary operation on operands
/// that are the same values or equal constants (one level deep).
fn copies(func: &Function, a: Value, b: Value) -> bool {
    let (ValueDef::Result(ia, 0), ValueDef::Result(ib, 0)) =
        (func.dfg.value_def(a), func.dfg.value_def(b))
    else {
        return false;
    };
    let (
        InstructionData::Binary {
            opcode: oa,
            args: [a0, a1],
        },
        InstructionData::Binary {
            opcode: ob,
            args: [b0, b1],
        },
    ) = (func.dfg.insts[ia], func.dfg.insts[ib])
    else {
        return false;
    };
    let operand = |x: Value, y: Value| {
        x == y || constant(func, x).is_some_and(|k| constant(func, y) == Some(k))
    };
    oa == ob && pure_binary(oa) && operand(a0, b0) && operand(a1, b1)
}

/// Whether `op` is integer arithmetic on two operands that cannot trap:
/// computed anew, moved or compared as a copy, it gives the same value.
pub(crate) fn pure_binary(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Iadd
            | Opcode::Isub
            | Opcode::Imul
            | Opcode::Band
            | Opcode::Bor
            | Opcode::Bxor
            | Opcode::Ishl
            | Opcode::Ushr
            | Opcode::Sshr
    )
}

/// Whether `v` is a constant or defined in a block that strictly dominates
/// `block` (so, for a loop headed by `block`, outside the loop).
fn defined_before(func: &Function, domtree: &DominatorTree, v: Value, block: Block) -> bool {
    if constant(func, v).is_some() {
        return true;
    }
    let def_block = match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    };
    def_block.is_some_and(|d| d != block && domtree.block_dominates(d, block))
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::Context;
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{InstBuilder, types};

    use super::*;
    use crate::test_ir::{function, returning, verifies};

    /// `fn(x) { if x < 10 { A } else { B } }` where A tests `x < 10` again
    /// (decided: true) and, after a merge, tests it a third time (not
    /// decided: the merge is entered from both sides).
    fn sample() -> (Context, [Block; 3]) {
        let mut shown = [Block::from_u32(0); 3];
        let ctx = function(|b, blocks: [Block; 8], x| {
            let [_, then_b, else_b, again_t, again_f, merge, last_t, last_f] = blocks;
            shown = [then_b, again_t, merge];
            let c = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, x, 10);
            b.ins().brif(c, then_b, &[], else_b, &[]);
            b.switch_to_block(then_b);
            b.ins().brif(c, again_t, &[], again_f, &[]);
            for block in [again_t, again_f, else_b] {
                b.switch_to_block(block);
                b.ins().jump(merge, &[]);
            }
            b.switch_to_block(merge);
            b.ins().brif(c, last_t, &[], last_f, &[]);
            returning(b, [(last_t, 3), (last_f, 4)]);
        });
        (ctx, shown)
    }

    fn opcode_at_end(ctx: &Context, block: Block) -> Opcode {
        let last = ctx.func.layout.last_inst(block).unwrap();
        ctx.func.dfg.insts[last].opcode()
    }

    /// Runs the fold (the result still verifies) and tells whether `block`
    /// now ends in a `jump`.
    fn folds_to_a_jump(ctx: &mut Context, block: Block) -> bool {
        fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
        verifies(&ctx.func);
        opcode_at_end(ctx, block) == Opcode::Jump
    }

    #[test]
    fn a_branch_decided_by_its_only_entry_edge_becomes_a_jump() {
        let (mut ctx, [then_b, again_t, merge]) = sample();
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        let last = ctx.func.layout.last_inst(then_b).unwrap();
        let InstructionData::Jump { destination, .. } = ctx.func.dfg.insts[last] else {
            panic!("not folded: {}", ctx.func.display());
        };
        // The true side: `then_b` is only entered when `x < 10` held.
        assert_eq!(destination.block(&ctx.func.dfg.value_lists), again_t);
        // The merge is entered from both sides of the first test: kept.
        assert_eq!(opcode_at_end(&ctx, merge), Opcode::Brif);
        ctx.compute_cfg();
        ctx.compute_domtree();
        verifies(&ctx.func);
    }

    /// `if (x & mask) <u 512 { 1 } else { 2 }`: decided when `mask < 512`.
    fn masked_check(mask: i64) -> Context {
        function(|b, [_, yes, no], x| {
            // A `band` of two values, as the e-graph pass leaves `r % 512`.
            let k = b.ins().iconst(types::I64, mask);
            let m = b.ins().band(x, k);
            let c = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, m, 512);
            b.ins().brif(c, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2)]);
        })
    }

    #[test]
    fn a_masked_index_below_a_larger_constant_is_decided() {
        let mut ctx = masked_check(511);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        let entry = ctx.func.layout.entry_block().unwrap();
        assert_eq!(opcode_at_end(&ctx, entry), Opcode::Jump);
        // A mask that lets the value reach the bound decides nothing.
        let mut ctx = masked_check(512);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 0);
    }

    /// `if 1 + (x & 31) >u limit { fail } else { ok }`: the sum lies in
    /// `[1, 32]`, so the test fails for every `limit >= 32`.
    #[test]
    fn a_size_limit_above_a_masked_sum_is_never_exceeded() {
        let check = |limit: i64| {
            let mut ctx = function(|b, [_, fail, ok], x| {
                let k = b.ins().iconst(types::I64, 31);
                let m = b.ins().band(x, k);
                let n = b.ins().iadd_imm_s(m, 1);
                let c = b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, n, limit);
                b.ins().brif(c, fail, &[], ok, &[]);
                returning(b, [(fail, 1), (ok, 2)]);
            });
            let folded = fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
            let entry = ctx.func.layout.entry_block().unwrap();
            (folded, opcode_at_end(&ctx, entry))
        };
        assert_eq!(check(32), (1, Opcode::Jump));
        assert_eq!(check(31), (0, Opcode::Brif));
    }

    /// `for b in 0..1 + (x & 3)`: the guard `n >s 0` holds for a count in
    /// `[1, 4]`; `n == 5` never does, `n != 4` may or may not.
    #[test]
    fn a_signed_guard_and_an_equality_are_decided_by_bounds() {
        let check = |cc: IntCC, k: i64| {
            let mut ctx = function(|b, [_, yes, no], x| {
                let three = b.ins().iconst(types::I64, 3);
                let m = b.ins().band(x, three);
                let n = b.ins().iadd_imm_s(m, 1);
                let c = b.ins().icmp_imm_s(cc, n, k);
                b.ins().brif(c, yes, &[], no, &[]);
                returning(b, [(yes, 1), (no, 2)]);
            });
            let folded = fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
            let entry = ctx.func.layout.entry_block().unwrap();
            let last = ctx.func.layout.last_inst(entry).unwrap();
            match ctx.func.dfg.insts[last] {
                InstructionData::Jump { destination, .. } => {
                    let taken = destination.block(&ctx.func.dfg.value_lists);
                    Some(Some(taken) == ctx.func.layout.blocks().nth(1))
                }
                _ => {
                    assert_eq!(folded, 0);
                    None
                }
            }
        };
        assert_eq!(check(IntCC::SignedGreaterThan, 0), Some(true));
        assert_eq!(check(IntCC::SignedGreaterThan, 1), None);
        assert_eq!(check(IntCC::SignedLessThan, 5), Some(true));
        assert_eq!(check(IntCC::Equal, 5), Some(false));
        assert_eq!(check(IntCC::NotEqual, 0), Some(true));
        assert_eq!(check(IntCC::NotEqual, 4), None);
    }

    /// `if n GUARD { if n CHECK { 1 } else { 2 } } else { 3 }`, where the
    /// check is `0 <u n` (`s[0]`; `Some(0)`: a `brif` on `n` itself) or
    /// `n - k <u n` (`s[n - k]`): whether the check is folded, and to which
    /// side.
    fn guarded_check(guard: (IntCC, i64), check: Option<i64>) -> Option<bool> {
        let mut decided_in = Block::from_u32(0);
        let mut ctx = function(|b, [_, inside, yes, no, outside], n| {
            decided_in = inside;
            let g = b.ins().icmp_imm_s(guard.0, n, guard.1);
            b.ins().brif(g, inside, &[], outside, &[]);
            b.switch_to_block(inside);
            let c = match check {
                // The e-graph pass's form of `0 <u n`.
                Some(0) => n,
                None => {
                    let zero = b.ins().iconst(types::I64, 0);
                    b.ins().icmp(IntCC::UnsignedLessThan, zero, n)
                }
                Some(k) => {
                    let at = b.ins().iadd_imm_s(n, -k);
                    b.ins().icmp(IntCC::UnsignedLessThan, at, n)
                }
            };
            b.ins().brif(c, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2), (outside, 3)]);
        });
        fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
        verifies(&ctx.func);
        let last = ctx.func.layout.last_inst(decided_in).unwrap();
        match ctx.func.dfg.insts[last] {
            InstructionData::Jump { destination, .. } => {
                let taken = destination.block(&ctx.func.dfg.value_lists);
                Some(Some(taken) == ctx.func.layout.blocks().nth(2))
            }
            _ => None,
        }
    }

    #[test]
    fn the_first_and_last_index_checks_under_a_length_test_are_decided() {
        // `if n > 0 { s[0]; s[n - 1] }` (touch's shape).
        assert_eq!(
            guarded_check((IntCC::SignedGreaterThan, 0), None),
            Some(true)
        );
        assert_eq!(
            guarded_check((IntCC::SignedGreaterThan, 0), Some(1)),
            Some(true)
        );
        assert_eq!(
            guarded_check((IntCC::SignedGreaterThan, 0), Some(0)),
            Some(true)
        );
        assert_eq!(guarded_check((IntCC::Equal, 0), Some(0)), Some(false));
        assert_eq!(guarded_check((IntCC::SignedLessThan, 5), Some(0)), None);
        // `if n != 0` (fold's `if n == 0 { return }`, its other side).
        assert_eq!(guarded_check((IntCC::NotEqual, 0), None), Some(true));
        assert_eq!(guarded_check((IntCC::NotEqual, 0), Some(1)), Some(true));
        // `n >= 2` makes `s[n - 2]` safe; `n != 0` does not.
        assert_eq!(
            guarded_check((IntCC::SignedGreaterThan, 1), Some(2)),
            Some(true)
        );
        assert_eq!(guarded_check((IntCC::NotEqual, 0), Some(2)), None);
        // A guard that says nothing of `n`'s sign, or lets it be 0.
        assert_eq!(guarded_check((IntCC::SignedLessThan, 5), None), None);
        assert_eq!(guarded_check((IntCC::SignedGreaterThan, -1), Some(1)), None);
        // Under `n == 0` both checks fail: decided, to the failing side.
        assert_eq!(guarded_check((IntCC::Equal, 0), None), Some(false));
        assert_eq!(guarded_check((IntCC::Equal, 0), Some(1)), Some(false));
    }

    /// `let i = x OP k; if i <s x { if (x OP k) <u x { 1 } else { 2 } }`,
    /// the inner `x OP k` a copy of `i` (as the e-graph pass leaves it in
    /// another block): whether the inner check is folded.
    fn signed_then_unsigned(op: Opcode, k: i64) -> bool {
        let mut inner = Block::from_u32(0);
        let mut ctx = function(|b, [_, inside, yes, no, outside], x| {
            inner = inside;
            let kv = b.ins().iconst(types::I64, k);
            let apply = |b: &mut cranelift_frontend::FunctionBuilder, kv| match op {
                Opcode::Band => b.ins().band(x, kv),
                Opcode::Bor => b.ins().bor(x, kv),
                _ => b.ins().iadd(x, kv),
            };
            let i = apply(b, kv);
            let g = b.ins().icmp(IntCC::SignedLessThan, i, x);
            b.ins().brif(g, inside, &[], outside, &[]);
            b.switch_to_block(inside);
            let kv = b.ins().iconst(types::I64, k);
            let copy = apply(b, kv);
            let c = b.ins().icmp(IntCC::UnsignedLessThan, copy, x);
            b.ins().brif(c, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2), (outside, 3)]);
        });
        folds_to_a_jump(&mut ctx, inner)
    }

    #[test]
    fn an_index_below_a_length_signed_and_never_negative_is_below_it_unsigned() {
        // `id = w & 0x3fff_ffff; if id >= ids { panic }; lens[id]`.
        assert!(signed_then_unsigned(Opcode::Band, 0x3fff_ffff));
        // `x + 5` may be negative: `-1 <s x` but not `<u`.
        assert!(!signed_then_unsigned(Opcode::Iadd, 5));
        // `x | 0xff` is never below `x`, but may be negative.
        assert!(!signed_then_unsigned(Opcode::Bor, 0xff));
    }

    /// `if x <s 0 { check(x) } else { CHECKED_TOO }; if check(x) { 1 } else
    /// { 2 }`, each `check(x)` its own `x <u 100` (constants and compares
    /// made in each block, as the e-graph pass leaves them): whether the
    /// merge's test is folded.
    fn checked_on_both_sides(checked_too: bool) -> bool {
        let mut merged = Block::from_u32(0);
        let mut ctx = function(|b, [_, left, lok, right, rok, merge, yes, no, fail], x| {
            merged = merge;
            let check = |b: &mut cranelift_frontend::FunctionBuilder| {
                let limit = b.ins().iconst(types::I64, 100);
                b.ins().icmp(IntCC::UnsignedLessThan, x, limit)
            };
            let g = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
            b.ins().brif(g, left, &[], right, &[]);
            b.switch_to_block(left);
            let c = check(b);
            b.ins().brif(c, lok, &[], fail, &[]);
            b.switch_to_block(right);
            if checked_too {
                let c = check(b);
                b.ins().brif(c, rok, &[], fail, &[]);
            } else {
                b.ins().jump(rok, &[]);
            }
            for side in [lok, rok] {
                b.switch_to_block(side);
                b.ins().jump(merge, &[]);
            }
            b.switch_to_block(merge);
            let c = check(b);
            b.ins().brif(c, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2), (fail, 9)]);
        });
        folds_to_a_jump(&mut ctx, merged)
    }

    #[test]
    fn a_check_made_on_every_side_of_a_merge_is_decided_after_it() {
        assert!(checked_on_both_sides(true));
        assert!(!checked_on_both_sides(false));
    }

    /// `if (b0 | b1 << 8) <u limit` for two bytes `b0`, `b1` of `x` (zero
    /// extended): the word is in `[0, 65535]`, decided for `limit > 65535`.
    fn assembled_bytes_below(limit: i64) -> bool {
        let mut ctx = function(|b, [_, yes, no], x| {
            let byte = |b: &mut cranelift_frontend::FunctionBuilder, x| {
                let narrow = b.ins().ireduce(types::I8, x);
                b.ins().uextend(types::I64, narrow)
            };
            let b0 = byte(b, x);
            let shifted = b.ins().ushr_imm_u(x, 8);
            let b1 = byte(b, shifted);
            let eight = b.ins().iconst(types::I64, 8);
            let high = b.ins().ishl(b1, eight);
            let word = b.ins().bor(b0, high);
            let c = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, word, limit);
            b.ins().brif(c, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2)]);
        });
        let entry = ctx.func.layout.entry_block().unwrap();
        folds_to_a_jump(&mut ctx, entry)
    }

    #[test]
    fn bytes_assembled_into_a_word_are_bounded_by_its_width() {
        assert!(assembled_bytes_below(65536));
        assert!(!assembled_bytes_below(65535));
    }

    /// `for i in start..n { if i <u n { .. } else { .. } }`, rotated as the
    /// lowering rotates it: the check in the body is decided only when the
    /// start is a constant `>= 0`.
    fn counted_loop(start: i64) -> (Context, Block) {
        counted_loop_guarded(start, false)
    }

    /// [`counted_loop`], its guard written `n > start` when `swapped` (the
    /// form Cranelift's e-graph gives `start < n`: constants to the right).
    fn counted_loop_guarded(start: i64, swapped: bool) -> (Context, Block) {
        let mut shown = Block::from_u32(0);
        let ctx = function(|b, [_, body, cont, fail, exit], n| {
            shown = body;
            let i = b.append_block_param(body, types::I64);
            let s = b.ins().iconst(types::I64, start);
            let go = if swapped {
                b.ins().icmp(IntCC::SignedGreaterThan, n, s)
            } else {
                b.ins().icmp(IntCC::SignedLessThan, s, n)
            };
            b.ins().brif(go, body, &[s.into()], exit, &[]);
            b.switch_to_block(body);
            let ok = b.ins().icmp(IntCC::UnsignedLessThan, i, n);
            b.ins().brif(ok, cont, &[], fail, &[]);
            b.switch_to_block(cont);
            let next = b.ins().iadd_imm_s(i, 1);
            let more = b.ins().icmp(IntCC::SignedLessThan, next, n);
            b.ins().brif(more, body, &[next.into()], exit, &[]);
            returning(b, [(fail, 99), (exit, 0)]);
        });
        (ctx, shown)
    }

    #[test]
    fn the_index_of_a_counted_loop_from_a_non_negative_start_is_below_its_end() {
        let (mut ctx, body) = counted_loop(0);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        assert_eq!(opcode_at_end(&ctx, body), Opcode::Jump);
        // From -1 the first `i` is not below `n` unsigned: kept.
        let (mut ctx, body) = counted_loop(-1);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 0);
        assert_eq!(opcode_at_end(&ctx, body), Opcode::Brif);
        // The guard as the e-graph leaves it, `n > 0`: the same loop.
        let (mut ctx, body) = counted_loop_guarded(0, true);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        assert_eq!(opcode_at_end(&ctx, body), Opcode::Jump);
        let (mut ctx, body) = counted_loop_guarded(-1, true);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 0);
        assert_eq!(opcode_at_end(&ctx, body), Opcode::Brif);
    }

    /// `for i in start..11 { if i - 1 <u len { .. } }` with constant bounds,
    /// rotated, the latch incrementing `i` as passed on through a merge
    /// block's parameter (as a loop body with an `if` leaves it).
    fn offset_loop(start: i64, len: i64) -> (Context, Block) {
        let mut shown = Block::from_u32(0);
        let ctx = function(|b, [_, body, cont, merge, fail, exit], _| {
            shown = body;
            let i = b.append_block_param(body, types::I64);
            let m = b.append_block_param(merge, types::I64);
            let s = b.ins().iconst(types::I64, start);
            b.ins().jump(body, &[s.into()]);
            b.switch_to_block(body);
            let before = b.ins().iadd_imm_s(i, -1);
            let ok = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, before, len);
            b.ins().brif(ok, cont, &[], fail, &[]);
            b.switch_to_block(cont);
            b.ins().jump(merge, &[i.into()]);
            b.switch_to_block(merge);
            let next = b.ins().iadd_imm_s(m, 1);
            let more = b.ins().icmp_imm_s(IntCC::SignedLessThan, next, 11);
            b.ins().brif(more, body, &[next.into()], exit, &[]);
            returning(b, [(fail, 99), (exit, 0)]);
        });
        (ctx, shown)
    }

    /// `k = start; while .. { if k - 1 <u len { .. }; k += step; if k <= 10
    /// { continue } }`: a loop variable stepped by `step` (a constant, or the
    /// function's parameter when `None`), bounded on every entry.
    fn stepped_loop(start: i64, step: Option<i64>, len: i64) -> (Context, Block) {
        let mut shown = Block::from_u32(0);
        let ctx = function(|b, [_, head, cont, fail, exit], x| {
            shown = head;
            let k = b.append_block_param(head, types::I64);
            let s = b.ins().iconst(types::I64, start);
            b.ins().jump(head, &[s.into()]);
            b.switch_to_block(head);
            let before = b.ins().iadd_imm_s(k, -1);
            let ok = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, before, len);
            b.ins().brif(ok, cont, &[], fail, &[]);
            b.switch_to_block(cont);
            let step = match step {
                Some(n) => b.ins().iconst(types::I64, n),
                None => x,
            };
            let next = b.ins().iadd(k, step);
            let more = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, next, 10);
            b.ins().brif(more, head, &[next.into()], exit, &[]);
            returning(b, [(fail, 99), (exit, 0)]);
        });
        (ctx, shown)
    }

    #[test]
    fn a_stepped_loop_variable_is_bounded_by_induction_over_its_entries() {
        // From 1 by 3 while `<= 10`: `k` in [1, 10], `k - 1` below 10.
        let (mut ctx, head) = stepped_loop(1, Some(3), 10);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        assert_eq!(opcode_at_end(&ctx, head), Opcode::Jump);
        // From 0 (`k - 1` is -1), against 9 (`k` reaches 10), by a negative
        // step (no lower bound) or an unknown one: kept.
        for (start, step, len) in [
            (0, Some(3), 10),
            (1, Some(3), 9),
            (1, Some(-1), 10),
            (1, None, 10),
        ] {
            let (mut ctx, head) = stepped_loop(start, step, len);
            assert_eq!(
                fold(&mut ctx.func, &ctx.cfg, &ctx.domtree),
                0,
                "{start} {step:?} {len}"
            );
            assert_eq!(opcode_at_end(&ctx, head), Opcode::Brif);
        }
    }

    #[test]
    fn an_offset_index_of_a_constant_counted_loop_is_checked_by_its_bounds() {
        // `i` in 1..11: `i - 1` in 0..10, below 10.
        let (mut ctx, body) = offset_loop(1, 10);
        assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 1);
        assert_eq!(opcode_at_end(&ctx, body), Opcode::Jump);
        // From 0, `i - 1` is -1 at first; below 9, `i - 1` reaches 9: kept.
        for (start, len) in [(0, 10), (1, 9)] {
            let (mut ctx, body) = offset_loop(start, len);
            assert_eq!(fold(&mut ctx.func, &ctx.cfg, &ctx.domtree), 0);
            assert_eq!(opcode_at_end(&ctx, body), Opcode::Brif);
        }
    }

    /// `if (x & mask) == 0 { (x + (x >>u bias)) >>s k }`, `x` of type `ty`
    /// (a narrowing of the parameter); the first argument of the shift
    /// after the fold, and `x` and the sum for comparison.
    fn halving(ty: types::Type, mask: i64, bias: i64, k: i64) -> (Value, Value, Value) {
        let mut shown = None;
        let mut ctx = function(|b, [_, even, odd], p| {
            let x = if ty == types::I64 {
                p
            } else {
                b.ins().ireduce(ty, p)
            };
            let m = b.ins().band_imm_s(x, mask);
            let c = b.ins().icmp_imm_s(IntCC::Equal, m, 0);
            b.ins().brif(c, even, &[], odd, &[]);
            b.switch_to_block(even);
            let bias = b.ins().ushr_imm_u(x, bias);
            let sum = b.ins().iadd(x, bias);
            let q = b.ins().sshr_imm_u(sum, k);
            let wide = if ty == types::I64 {
                q
            } else {
                b.ins().sextend(types::I64, q)
            };
            b.ins().return_(&[wide]);
            b.switch_to_block(odd);
            b.ins().return_(&[p]);
            shown = Some((b.func.dfg.value_def(q).unwrap_inst(), x, sum));
        });
        let (shift, x, sum) = shown.unwrap();
        fold(&mut ctx.func, &ctx.cfg, &ctx.domtree);
        verifies(&ctx.func);
        (ctx.func.dfg.inst_args(shift)[0], x, sum)
    }

    #[test]
    fn a_halving_of_a_tested_even_value_is_a_plain_shift() {
        // `n / 2` under `n % 2 == 0`.
        let (arg, x, _) = halving(types::I64, 1, 63, 1);
        assert_eq!(arg, x);
        // `n / 4` under `n % 4 == 0`, with the bias of `sshr` then `ushr`
        // given here as one `ushr` of 62.
        let (arg, x, _) = halving(types::I64, 3, 62, 2);
        assert_eq!(arg, x);
        // The widest amount below the width (`x == 0` shown; its mask of
        // 63 low bits must not overflow).
        let (arg, x, _) = halving(types::I64, -1, 1, 63);
        assert_eq!(arg, x);
    }

    #[test]
    fn a_halving_the_test_does_not_cover_keeps_its_bias() {
        // `n / 4` under `n % 2 == 0`: -6 / 4 is -1, -6 >> 2 is -2.
        let (arg, _, sum) = halving(types::I64, 1, 62, 2);
        assert_eq!(arg, sum);
        // A bias that may reach `2^k`.
        let (arg, _, sum) = halving(types::I64, 3, 61, 2);
        assert_eq!(arg, sum);
        // An amount not below the width (an `i32` shifted by 40 shifts by 8).
        let (arg, _, sum) = halving(types::I32, -1, 0, 40);
        assert_eq!(arg, sum);
    }
}
