//! Index checks of one index at constant offsets, merged into two tests.
//!
//! Reading a little-endian word from bytes (`b[at] | b[at + 1] << 8 | ...`)
//! checks `at`, `at + 1`, ... against the length one by one, each check a
//! compare and a branch to its own failure, between the loads. When such
//! checks follow each other straight (each next one in the only block the
//! previous one continues to, with nothing between them but arithmetic and
//! loads), two tests at the first decide them all: with `lo` and `hi` the
//! smallest and largest offsets of the index, `base + lo <= base + hi`
//! (no wrap between them) and `base + hi < len` (unsigned) put every
//! `base + k` in between below `len`. The first check's branch becomes
//! those two tests and the others become jumps.
//!
//! When the tests fail, one of the checks fails, or none: the wrap test can
//! fail for indices that are all in bounds of a length above `i64::MAX`,
//! which only `unsafe::slice` makes. A cold path then makes the original
//! checks in their order, each branching to its own failure block (the
//! same message and location), and when all pass it continues to where the
//! first check did. The first failing check is the one the program would
//! have failed at: what ran between the checks computed values and read
//! memory, which nothing observes once the program fails (a load cannot
//! fault in a program without `unsafe::`, see `crate::dead_loads`).
//!
//! A failure block may use values computed between the checks (the index
//! `at + 3`, a constant); they no longer dominate it once the cold path
//! reaches it, so such values, when they are constants or arithmetic on
//! values that do, are recomputed inside the block. Otherwise the chain
//! stops before that check.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    Block, Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef,
};

use crate::address;
use crate::dead_loads::plain_load;
use crate::decided_branches::{compare, constant, pure_binary, same};

/// How deep a value a failure block uses is recomputed inside it.
const MAX_RECOMPUTE_DEPTH: usize = 4;

/// The fewest checks a chain merges. Two checks take as many instructions
/// as the merged test's two, and merging pairs cost `slice_pool_pure`'s
/// tree code instructions (docs/benchmarks.md, "Thirty-fifth pass").
const MIN_CHAIN: usize = 3;

/// The most checks one chain takes: a longer run is merged in pieces this
/// long, so that a run that is not merged is not walked again from each of
/// its checks (the pass stays linear in the function).
const MAX_CHAIN: usize = 64;

/// One index check: `term` ends `block` with `brif (base + k) <u len,
/// cont, fail`.
#[derive(Clone, Copy)]
struct Check {
    block: Block,
    term: Inst,
    /// The index, `base + k`.
    index: Value,
    base: Value,
    k: i64,
    len: Value,
    cont: Block,
    fail: Block,
}

/// Merges every straight chain of `MIN_CHAIN` or more checks of one index
/// at constant offsets against one length (see the module docs); returns how
/// many chains it merged. `cfg` and `domtree` must be those of `func` as it
/// is (they are not updated: the caller recomputes them).
pub fn merge(func: &mut Function, cfg: &ControlFlowGraph, domtree: &DominatorTree) -> usize {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut merged = 0;
    for block in blocks {
        let Some(first) = check_at(func, cfg, block) else {
            continue;
        };
        let mut chain = vec![first];
        let mut next = first.cont;
        while chain.len() < MAX_CHAIN
            && let Some(c) = continued_by(func, cfg, next)
                .filter(|c| same(func, c.base, first.base) && same(func, c.len, first.len))
        {
            chain.push(c);
            next = c.cont;
        }
        // Each failure block must be able to compute what it reports once
        // only the cold path reaches it.
        let usable = chain
            .iter()
            .take_while(|c| recomputable(func, domtree, first.block, c.fail))
            .count();
        chain.truncate(usable);
        if chain.len() < MIN_CHAIN {
            continue;
        }
        rewrite(func, domtree, &chain);
        merged += 1;
    }
    merged
}

/// The check ending `block`, if its terminator is one: a `brif` without
/// block arguments on `icmp ult index, len`, whose failure side is a block
/// entered only from here, without parameters, that ends in a `trap`.
fn check_at(func: &Function, cfg: &ControlFlowGraph, block: Block) -> Option<Check> {
    let term = func.layout.last_inst(block)?;
    let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[term] else {
        return None;
    };
    let pool = &func.dfg.value_lists;
    if blocks.iter().any(|c| c.len(pool) != 0) {
        return None;
    }
    let (cont, fail) = (blocks[0].block(pool), blocks[1].block(pool));
    let (cc, index, len) = compare(func, func.dfg.resolve_aliases(arg))?;
    if cc != IntCC::UnsignedLessThan || cont == fail {
        return None;
    }
    let ends_in_trap = func
        .layout
        .last_inst(fail)
        .is_some_and(|i| func.dfg.insts[i].opcode() == Opcode::Trap);
    if !ends_in_trap || cfg.pred_iter(fail).count() != 1 || !func.dfg.block_params(fail).is_empty()
    {
        return None;
    }
    let index = func.dfg.resolve_aliases(index);
    let (base, k) = address::split(func, index, 0);
    Some(Check {
        block,
        term,
        index,
        base,
        k,
        len,
        cont,
        fail,
    })
}

/// The check ending `block` when the chain may go on through it: `block`
/// is entered only from the previous check, has no parameters, and does
/// nothing before its check but compute and load.
fn continued_by(func: &Function, cfg: &ControlFlowGraph, block: Block) -> Option<Check> {
    if cfg.pred_iter(block).count() != 1 || !func.dfg.block_params(block).is_empty() {
        return None;
    }
    let term = func.layout.last_inst(block)?;
    let only_computes = func
        .layout
        .block_insts(block)
        .filter(|&i| i != term)
        .all(|i| skippable(func.dfg.insts[i].opcode()));
    if !only_computes {
        return None;
    }
    check_at(func, cfg, block)
}

/// Whether an instruction between two checks may be left unexecuted when
/// a later check fails: it computes a value or loads one, nothing else.
fn skippable(op: Opcode) -> bool {
    if plain_load(op) {
        return true;
    }
    !(op.is_call()
        || op.is_branch()
        || op.is_terminator()
        || op.is_return()
        || op.can_store()
        || op.can_load()
        || op.can_trap()
        || op.other_side_effects())
}

/// Whether `v` is available at the end of `first` (where the cold path
/// starts): a parameter or result of a block that dominates it, or of
/// `first` itself.
fn available(func: &Function, domtree: &DominatorTree, first: Block, v: Value) -> bool {
    let def_block = match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => func.layout.inst_block(inst),
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    };
    def_block.is_some_and(|d| d == first || domtree.block_dominates(d, first))
}

/// The pure instruction defining `v` that a failure block may recompute
/// (a constant, or arithmetic on recomputable values), if any.
fn pure_def(func: &Function, v: Value) -> Option<Inst> {
    let ValueDef::Result(inst, 0) = func.dfg.value_def(v) else {
        return None;
    };
    let pure = constant(func, v).is_some()
        || matches!(func.dfg.insts[inst], InstructionData::Binary { opcode, .. } if pure_binary(opcode));
    pure.then_some(inst)
}

/// The values `fail`'s instructions use that are defined outside it.
fn used_from_outside(func: &Function, fail: Block) -> Vec<Value> {
    let mut out = Vec::new();
    for inst in func.layout.block_insts(fail) {
        for v in func.dfg.inst_values(inst) {
            let v = func.dfg.resolve_aliases(v);
            let inside = match func.dfg.value_def(v) {
                ValueDef::Result(d, _) => func.layout.inst_block(d) == Some(fail),
                _ => false,
            };
            if !inside && !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Whether every value `fail` uses is available where the cold path
/// starts or can be recomputed inside `fail` from such values.
fn recomputable(func: &Function, domtree: &DominatorTree, first: Block, fail: Block) -> bool {
    fn ok(func: &Function, domtree: &DominatorTree, first: Block, v: Value, depth: usize) -> bool {
        if available(func, domtree, first, v) {
            return true;
        }
        depth < MAX_RECOMPUTE_DEPTH
            && pure_def(func, v).is_some_and(|inst| {
                func.dfg
                    .inst_values(inst)
                    .all(|a| ok(func, domtree, first, func.dfg.resolve_aliases(a), depth + 1))
            })
    }
    used_from_outside(func, fail)
        .into_iter()
        .all(|v| ok(func, domtree, first, v, 0))
}

/// Recomputes inside `fail`, at its top, every value it uses that is not
/// available where the cold path starts (`recomputable` said it can be).
fn recompute_in(func: &mut Function, domtree: &DominatorTree, first: Block, fail: Block) {
    fn copy(
        func: &mut Function,
        domtree: &DominatorTree,
        first: Block,
        at: Inst,
        v: Value,
        copies: &mut Vec<(Value, Value)>,
    ) -> Value {
        if available(func, domtree, first, v) {
            return v;
        }
        if let Some(&(_, c)) = copies.iter().find(|(o, _)| *o == v) {
            return c;
        }
        // `recomputable` followed this same path (and moving the bounds up
        // since only made more values available).
        let inst = pure_def(func, v).expect("recomputable said so");
        let args: Vec<Value> = func.dfg.inst_values(inst).collect();
        let new_args: Vec<Value> = args
            .into_iter()
            .map(|a| {
                let a = func.dfg.resolve_aliases(a);
                copy(func, domtree, first, at, a, copies)
            })
            .collect();
        let clone = func.dfg.clone_inst(inst);
        func.dfg.overwrite_inst_values(clone, new_args.into_iter());
        func.layout.insert_inst(clone, at);
        let c = func.dfg.first_result(clone);
        copies.push((v, c));
        c
    }
    let Some(top) = func.layout.first_inst(fail) else {
        return;
    };
    let mut copies = Vec::new();
    for v in used_from_outside(func, fail) {
        copy(func, domtree, first, top, v, &mut copies);
    }
    if copies.is_empty() {
        return;
    }
    let insts: Vec<Inst> = func.layout.block_insts(fail).collect();
    for inst in insts {
        func.dfg.map_inst_values(inst, |v| {
            copies.iter().find(|(o, _)| *o == v).map_or(v, |&(_, c)| c)
        });
    }
}

/// Makes `v` available at the end of the first check's block: it is, or
/// its pure definition (and theirs, a few deep) moves there, before the
/// branch. Moving is sound: the definition was in a block the first one
/// dominates, so every use of `v` still comes after it.
fn hoist(
    func: &mut Function,
    domtree: &DominatorTree,
    first: Check,
    v: Value,
    depth: usize,
) -> bool {
    if available(func, domtree, first.block, v) {
        return true;
    }
    let Some(inst) = pure_def(func, v).filter(|_| depth < MAX_RECOMPUTE_DEPTH) else {
        return false;
    };
    let args: Vec<Value> = func
        .dfg
        .inst_values(inst)
        .map(|a| func.dfg.resolve_aliases(a))
        .collect();
    if !args
        .into_iter()
        .all(|a| hoist(func, domtree, first, a, depth + 1))
    {
        return false;
    }
    func.layout.remove_inst(inst);
    func.layout.insert_inst(inst, first.term);
    true
}

/// `base + k` at the cursor (`base` itself for 0).
fn offset(pos: &mut FuncCursor, base: Value, k: i64) -> Value {
    if k == 0 {
        return base;
    }
    let ty = pos.func.dfg.value_type(base);
    let c = pos.ins().iconst(ty, k);
    pos.ins().iadd(base, c)
}

/// Rewrites a chain of `MIN_CHAIN` or more checks (see the module docs).
fn rewrite(func: &mut Function, domtree: &DominatorTree, chain: &[Check]) {
    let first = chain[0];
    let lowest = *chain.iter().min_by_key(|c| c.k).expect("a chain");
    let highest = *chain.iter().max_by_key(|c| c.k).expect("a chain");
    // The lowest and highest indices, computed in the first block: moved
    // there from their checks' blocks (the loads behind use them too), or
    // computed anew.
    let mut bound = |c: Check| {
        if hoist(func, domtree, first, c.index, 0) {
            c.index
        } else {
            let mut pos = FuncCursor::new(func).at_inst(first.term);
            offset(&mut pos, first.base, c.k)
        }
    };
    let low = bound(lowest);
    let high = bound(highest);
    // What each failure block reports, where only the cold path reaches it.
    for c in chain {
        recompute_in(func, domtree, first.block, c.fail);
    }
    let inside = func.dfg.make_block();
    func.layout.insert_block_after(inside, first.block);
    let cold: Vec<Block> = chain
        .iter()
        .map(|_| {
            let b = func.dfg.make_block();
            func.layout.append_block(b);
            func.layout.set_cold(b);
            b
        })
        .collect();
    // The first check's block: no wrap between the lowest and the highest
    // index, then (in `inside`) the highest below the length.
    let mut pos = FuncCursor::new(func).at_inst(first.term);
    let no_wrap = pos.ins().icmp(IntCC::UnsignedLessThanOrEqual, low, high);
    pos.func
        .replace(first.term)
        .brif(no_wrap, inside, &[], cold[0], &[]);
    let mut pos = FuncCursor::new(func).at_bottom(inside);
    let below = pos.ins().icmp(IntCC::UnsignedLessThan, high, first.len);
    pos.ins().brif(below, first.cont, &[], cold[0], &[]);
    // The other checks are decided.
    for c in &chain[1..] {
        func.replace(c.term).jump(c.cont, &[]);
    }
    // The cold path: every check in its order.
    for (j, c) in chain.iter().enumerate() {
        let mut pos = FuncCursor::new(func).at_bottom(cold[j]);
        let index = offset(&mut pos, first.base, c.k);
        let ok = pos.ins().icmp(IntCC::UnsignedLessThan, index, first.len);
        let next = cold.get(j + 1).copied().unwrap_or(first.cont);
        pos.ins().brif(ok, next, &[], c.fail, &[]);
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{MemFlagsData, TrapCode, types};
    use cranelift_frontend::FunctionBuilder;

    use super::*;
    use crate::test_ir::{count, function, import, verifies};

    /// A check of `x + k` against 8 ending the current block, whose
    /// failure block calls function 0 with `reported` (the index when
    /// `None`), and whose next block is switched to.
    fn check_reporting(b: &mut FunctionBuilder, x: Value, k: i64, reported: Option<Value>) {
        let index = b.ins().iadd_imm_s(x, k);
        let eight = b.ins().iconst(types::I64, 8);
        let ok = b.ins().icmp(IntCC::UnsignedLessThan, index, eight);
        let (cont, fail) = (b.create_block(), b.create_block());
        b.ins().brif(ok, cont, &[], fail, &[]);
        b.switch_to_block(fail);
        let report = import(b, 0, 1, 0);
        b.ins().call(report, &[reported.unwrap_or(index)]);
        b.ins().trap(TrapCode::unwrap_user(2));
        b.switch_to_block(cont);
    }

    /// A check reporting its index, then the load it guards.
    fn check(b: &mut FunctionBuilder, x: Value, k: i64) {
        check_reporting(b, x, k, None);
        b.ins().load(types::I8, MemFlagsData::new(), x, 0);
    }

    fn checks(offsets: &[i64], between: impl Fn(&mut FunctionBuilder, Value)) -> Context {
        function(|b, [_], x| {
            for &k in offsets {
                check(b, x, k);
                between(b, x);
            }
            b.ins().return_(&[x]);
        })
    }

    use cranelift_codegen::Context;

    fn merged(ctx: &mut Context) -> usize {
        merge(&mut ctx.func, &ctx.cfg, &ctx.domtree)
    }

    /// Four checks of `x .. x + 3`: one chain; the function still verifies
    /// (each failure block's index recomputed where the cold path reaches
    /// it), with the two tests of the first block, one cold test per check
    /// and no other branch on a compare.
    #[test]
    fn four_checks_of_one_index_are_one_test() {
        let mut ctx = checks(&[0, 1, 2, 3], |_, _| {});
        assert_eq!(merged(&mut ctx), 1);
        verifies(&ctx.func);
        assert_eq!(count(&ctx.func, Opcode::Brif), 2 + 4);
        assert_eq!(count(&ctx.func, Opcode::Jump), 3);
    }

    /// A run longer than `MAX_CHAIN` is merged in pieces: each piece's
    /// first check becomes two tests, every other check a jump.
    #[test]
    fn a_long_run_is_merged_in_pieces() {
        let offsets: Vec<i64> = (0..MAX_CHAIN as i64 + 10).collect();
        let mut ctx = checks(&offsets, |_, _| {});
        assert_eq!(merged(&mut ctx), 2);
        verifies(&ctx.func);
        assert_eq!(count(&ctx.func, Opcode::Jump), offsets.len() - 2);
    }

    /// Offsets on both sides of the index, in any order.
    #[test]
    fn offsets_below_and_out_of_order_merge() {
        let mut ctx = checks(&[1, -1, 0], |_, _| {});
        assert_eq!(merged(&mut ctx), 1);
        verifies(&ctx.func);
    }

    /// Two checks stay two (`MIN_CHAIN`).
    #[test]
    fn two_checks_stay_apart() {
        let mut ctx = checks(&[0, 1], |_, _| {});
        assert_eq!(merged(&mut ctx), 0);
        assert_eq!(count(&ctx.func, Opcode::Brif), 2);
    }

    /// A store between checks would be skipped when a later one fails: no
    /// chain.
    #[test]
    fn a_store_between_keeps_the_checks() {
        let mut ctx = checks(&[0, 1, 2], |b, x| {
            b.ins().store(MemFlagsData::new(), x, x, 8);
        });
        assert_eq!(merged(&mut ctx), 0);
        assert_eq!(count(&ctx.func, Opcode::Brif), 3);
    }

    /// A call between checks: no chain either.
    #[test]
    fn a_call_between_keeps_the_checks() {
        let mut ctx = checks(&[0, 1, 2], |b, x| {
            let f = import(b, 1, 1, 0);
            b.ins().call(f, &[x]);
        });
        assert_eq!(merged(&mut ctx), 0);
    }

    /// Checks of two different indices are not one chain.
    #[test]
    fn different_indices_stay_apart() {
        let mut ctx = function(|b, [_], x| {
            check(b, x, 0);
            let y = b.ins().load(types::I64, MemFlagsData::new(), x, 16);
            check(b, y, 1);
            check(b, x, 2);
            b.ins().return_(&[x]);
        });
        assert_eq!(merged(&mut ctx), 0);
    }

    /// A failure block that uses a loaded value from between the checks
    /// cannot recompute it: the chain stops before that check.
    #[test]
    fn a_failure_that_needs_a_loaded_value_ends_the_chain() {
        let mut ctx = function(|b, [_], x| {
            check(b, x, 0);
            check(b, x, 1);
            check(b, x, 2);
            // A fourth check whose failure reports a loaded value.
            let loaded = b.ins().load(types::I64, MemFlagsData::new(), x, 24);
            check_reporting(b, x, 3, Some(loaded));
            b.ins().return_(&[x]);
        });
        assert_eq!(merged(&mut ctx), 1);
        verifies(&ctx.func);
        // Three merged (two tests and three cold ones), the fourth as it was.
        assert_eq!(count(&ctx.func, Opcode::Brif), 2 + 3 + 1);
    }
}
