//! Loop headers marked for Cranelift's alias analysis.
//!
//! The alias analysis finds, for every block, the last store to each memory
//! region before it, by iterating to a fixed point; where two paths disagree
//! it names the merge block itself. In a loop that calls a function (a fence
//! for every region) the first pass around the loop sees the state from
//! before the loop and the second the call's, so every block of the body
//! ends up naming itself: no load in one block of the body could reuse a
//! load of another, and a slice header read through a `ref` was read again
//! after every element store in the same iteration.
//!
//! A `sequence_point` (a fence for the analysis that emits no machine code)
//! at the top of such a loop's header gives the body the same state on every
//! pass, so loads within one iteration are reused across blocks again.
//! Nothing is lost: after a call in the loop, nothing loaded before the loop
//! could be reused in it anyway. Loops without a call are left alone (their
//! body may reuse what was loaded before the loop).
//!
//! A merge that a call reaches on one side (`if c { f(); }` followed by
//! loads, as a partially inlined recursive call leaves behind) has the same
//! trouble: the analysis's worklist visits the call-free side first, so the
//! blocks after the merge start from that side's state, and when the call's
//! side arrives every one of them names itself. Such a merge gets a
//! `sequence_point` too; nothing is lost there either, since the call is a
//! fence for every region.

use std::collections::HashSet;

use cranelift_codegen::Context;
use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Block, Function, InstBuilder, Opcode};

/// Marks the header of every loop that makes a call on a path that goes
/// on (a call in a block ending in `trap`, an index check's failure, does
/// not count), and every merge with such a call on a path into it since
/// its immediate dominator; returns how many blocks were marked.
pub fn mark(ctx: &mut Context) -> usize {
    ctx.compute_cfg();
    ctx.compute_domtree();
    ctx.compute_loop_analysis();
    let func = &ctx.func;
    let loops = &ctx.loop_analysis;
    // Each calling block marks its loop and the loops around it, stopping
    // at one already marked (its outer loops are too): linear in the blocks.
    let mut marked = HashSet::new();
    let mut headers: Vec<Block> = Vec::new();
    for block in func.layout.blocks().filter(|&b| makes_call(func, b)) {
        let mut lp = loops.innermost_loop(block);
        while let Some(l) = lp
            && marked.insert(l)
        {
            headers.push(loops.loop_header(l));
            lp = loops.loop_parent(l);
        }
    }
    for block in func.layout.blocks() {
        if ctx.cfg.pred_iter(block).count() >= 2
            && !headers.contains(&block)
            && called_on_the_way(func, &ctx.cfg, &ctx.domtree, block)
        {
            headers.push(block);
        }
    }
    let mut cursor = FuncCursor::new(&mut ctx.func);
    for &header in &headers {
        let first = cursor
            .func
            .layout
            .first_inst(header)
            .expect("a block ends in a terminator");
        cursor.goto_inst(first);
        cursor.ins().sequence_point();
    }
    headers.len()
}

/// Whether a predecessor of `merge`, or a block of the chain of
/// single-predecessor blocks leading to one, below `merge`'s immediate
/// dominator, calls a function.
fn called_on_the_way(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    merge: Block,
) -> bool {
    let idom = domtree.idom(merge);
    cfg.pred_iter(merge).any(|pred| {
        let mut block = pred.block;
        // Bounded: a chain of unreachable blocks may be a cycle.
        for _ in 0..func.dfg.num_blocks() {
            if Some(block) == idom {
                return false;
            }
            if makes_call(func, block) {
                return true;
            }
            let mut preds = cfg.pred_iter(block);
            match (preds.next(), preds.next()) {
                (Some(p), None) => block = p.block,
                _ => return false,
            }
        }
        false
    })
}

/// Whether `block` calls a function and goes on afterwards.
fn makes_call(func: &Function, block: Block) -> bool {
    let ends_in_trap = func
        .layout
        .last_inst(block)
        .is_some_and(|i| func.dfg.insts[i].opcode() == Opcode::Trap);
    !ends_in_trap
        && func
            .layout
            .block_insts(block)
            .any(|i| func.dfg.insts[i].opcode().is_call())
}
