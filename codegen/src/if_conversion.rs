//! Small `if`s whose sides only pick a value, turned into `select`s.
//!
//! An inlined `fn min<T>(a: T, b: T) -> T { if a < b { return a; } return b; }`,
//! or `var cost = 1; if x == y { cost = 0; }`, leaves a diamond: a block
//! ending `brif c, t, f` whose sides compute at most a constant or two and
//! jump to one merge block `m(v)` with different values. Taken as branches,
//! a comparison of data (an edit distance's cells, a knapsack's maxima)
//! mispredicts about half the time; gcc turns such diamonds into
//! conditional moves (if-conversion), and so does this pass: the sides'
//! instructions move into the branching block, each of `m`'s parameters that
//! the two edges pass differently gets `select c, from_t, from_f`, and the
//! `brif` becomes `jump m(...)`. A side may also be the edge to `m` itself
//! (a triangle: `if c { cost = 0; }`).
//!
//! A side qualifies when `c`'s block is its only predecessor, it has no
//! parameters, is not cold, holds at most [`MAX_INSTS`] instructions that
//! only compute (no memory, no call, no trap: `tail_duplication`'s
//! `computes_only`), and ends with `jump m(...)`. Sound because both sides'
//! instructions then compute from values that dominate the branch (the
//! branching block is their only way in), so they can run before it on
//! either path, unobservably; `m` receives on the one remaining edge what
//! the edge taken would have passed. The sides no edge reaches any more
//! are removed here.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, BlockCall, Function, Inst, InstBuilder, InstructionData, Opcode, Value,
};

use crate::decided_branches::destinations;
use crate::tail_duplication::computes_only;

/// The most instructions (besides its `jump`) a side may have: enough for
/// the constants and the `+ 1` of the cases above, few enough that running
/// both sides always costs less than a mispredicted branch.
const MAX_INSTS: usize = 3;

/// The most blocks a side may go through.
const MAX_CHAIN: usize = 4;

/// One side of a diamond: the blocks it goes through, in order (none: the
/// edge to the merge itself), and the values it passes the merge.
struct Side {
    blocks: Vec<Block>,
    args: Vec<Value>,
}

/// Converts every qualifying diamond of `func` (see the module docs);
/// returns how many (when not 0, the caller recomputes the control-flow
/// graph).
pub fn convert(func: &mut Function) -> usize {
    let cfg = ControlFlowGraph::with_function(func);
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut converted = 0;
    for block in blocks {
        let Some(term) = func.layout.last_inst(block) else {
            continue;
        };
        let InstructionData::Brif { arg: cond, .. } = func.dfg.insts[term] else {
            continue;
        };
        let Some((merge, sides)) = diamond(func, &cfg, block, term) else {
            continue;
        };
        // The sides' instructions, in order, before the branch.
        for side in &sides {
            for &b in &side.blocks {
                let insts: Vec<Inst> = func.layout.block_insts(b).collect();
                for &i in &insts[..insts.len() - 1] {
                    func.layout.remove_inst(i);
                    func.layout.insert_inst(i, term);
                }
            }
        }
        let mut pos = FuncCursor::new(func).at_inst(term);
        let args: Vec<BlockArg> = sides[0]
            .args
            .iter()
            .zip(&sides[1].args)
            .map(|(&t, &f)| {
                BlockArg::Value(if t == f {
                    t
                } else {
                    pos.ins().select(cond, t, f)
                })
            })
            .collect();
        let destination = BlockCall::new(merge, args, &mut func.dfg.value_lists);
        func.dfg.insts[term] = InstructionData::Jump {
            opcode: Opcode::Jump,
            destination,
        };
        for side in &sides {
            for &b in &side.blocks {
                let jump = func.layout.last_inst(b).expect("a side ends with its jump");
                func.layout.remove_inst(jump);
                func.layout.remove_block(b);
            }
        }
        converted += 1;
    }
    converted
}

/// The merge block and the two sides (taken, not taken) of `block`'s
/// `brif` `term`, when both qualify and meet at one block.
fn diamond(
    func: &Function,
    cfg: &ControlFlowGraph,
    block: Block,
    term: Inst,
) -> Option<(Block, [Side; 2])> {
    let calls = destinations(func, term);
    let mut sides = Vec::with_capacity(2);
    let mut merge = None;
    for call in calls {
        let target = call.block(&func.dfg.value_lists);
        let args = values(func, call.args(&func.dfg.value_lists))?;
        let side = match through(func, cfg, block, target) {
            Some((m, side)) if args.is_empty() => {
                sides.push(side);
                m
            }
            _ => {
                sides.push(Side {
                    blocks: Vec::new(),
                    args,
                });
                target
            }
        };
        if *merge.get_or_insert(side) != side {
            return None;
        }
    }
    let merge = merge?;
    // Two direct edges to one block are no diamond, and a side that
    // loops back would leave its instructions where they were needed.
    if sides.iter().all(|s| s.blocks.is_empty()) || merge == block {
        return None;
    }
    let [t, f]: [Side; 2] = sides.try_into().ok()?;
    Some((merge, [t, f]))
}

/// When `side` starts a chain of blocks that only `from` (then the block
/// before) enters, without parameters or a cold mark, that compute at most
/// [`MAX_INSTS`] values in all and jump on (the e-graph pass leaves an
/// inlined `return` as such a chain): the block the chain ends at, and the
/// side.
fn through(
    func: &Function,
    cfg: &ControlFlowGraph,
    from: Block,
    side: Block,
) -> Option<(Block, Side)> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut insts = 0;
    let mut at = side;
    loop {
        let prev = blocks.last().copied().unwrap_or(from);
        let enters = at != from
            && !blocks.contains(&at)
            && !func.layout.is_cold(at)
            && func.dfg.block_params(at).is_empty()
            && cfg.pred_iter(at).count() == 1
            && cfg.pred_iter(at).all(|p| p.block == prev);
        if !enters {
            // Past the first block, one the chain may not enter ends it.
            return (!blocks.is_empty()).then(|| {
                let args = Vec::new();
                (at, Side { blocks, args })
            });
        }
        let body: Vec<Inst> = func.layout.block_insts(at).collect();
        let (&jump, body) = body.split_last()?;
        insts += body.len();
        if insts > MAX_INSTS
            || blocks.len() == MAX_CHAIN
            || !body.iter().all(|&i| computes_only(func, i))
        {
            return None;
        }
        let InstructionData::Jump { destination, .. } = func.dfg.insts[jump] else {
            return None;
        };
        blocks.push(at);
        let next = destination.block(&func.dfg.value_lists);
        let args = values(func, destination.args(&func.dfg.value_lists))?;
        if !args.is_empty() || cfg.pred_iter(next).count() != 1 {
            return Some((next, Side { blocks, args }));
        }
        at = next;
    }
}

/// The values of block arguments (none of ours are anything else).
fn values(func: &Function, args: impl Iterator<Item = BlockArg>) -> Option<Vec<Value>> {
    args.map(|a| a.as_value().map(|v| func.dfg.resolve_aliases(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::types;

    use super::*;
    use crate::test_ir::{count, function, verifies};

    /// `min(x, 7) + (x == 3 ? 0 : 1)`: a diamond whose sides pass the
    /// operands, then a triangle whose one side makes a constant.
    #[test]
    fn a_diamond_and_a_triangle_become_selects() {
        let mut ctx = function(|b, [_, lt, ge, m, t, m2], x| {
            let v = b.append_block_param(m, types::I64);
            let w = b.append_block_param(m2, types::I64);
            let seven = b.ins().iconst(types::I64, 7);
            let c = b.ins().icmp(IntCC::SignedLessThan, x, seven);
            b.ins().brif(c, lt, &[], ge, &[]);
            b.switch_to_block(lt);
            b.ins().jump(m, &[x.into()]);
            b.switch_to_block(ge);
            b.ins().jump(m, &[seven.into()]);
            b.switch_to_block(m);
            let one = b.ins().iconst(types::I64, 1);
            let three = b.ins().iconst(types::I64, 3);
            let c = b.ins().icmp(IntCC::Equal, v, three);
            b.ins().brif(c, t, &[], m2, &[one.into()]);
            b.switch_to_block(t);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().jump(m2, &[zero.into()]);
            b.switch_to_block(m2);
            let r = b.ins().iadd(v, w);
            b.ins().return_(&[r]);
        });
        assert_eq!(convert(&mut ctx.func), 2);
        verifies(&ctx.func);
        assert_eq!(count(&ctx.func, Opcode::Select), 2);
        assert_eq!(count(&ctx.func, Opcode::Brif), 0);
        assert_eq!(ctx.func.layout.blocks().count(), 3);
    }

    /// A side that loads, or that another block also enters, or with more
    /// than `MAX_INSTS` instructions, stays a branch.
    #[test]
    fn sides_that_load_are_shared_or_long_stay() {
        let mut ctx = function(|b, [_, load, other, m, long, m2], x| {
            let v = b.append_block_param(m, types::I64);
            let w = b.append_block_param(m2, types::I64);
            let c = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 7);
            b.ins().brif(c, load, &[], other, &[]);
            b.switch_to_block(load);
            let flags = cranelift_codegen::ir::MemFlagsData::new();
            let y = b.ins().load(types::I64, flags, x, 0);
            b.ins().jump(m, &[y.into()]);
            b.switch_to_block(other);
            b.ins().jump(m, &[x.into()]);
            b.switch_to_block(m);
            let c = b.ins().icmp_imm_s(IntCC::Equal, v, 3);
            b.ins().brif(c, long, &[], m2, &[v.into()]);
            b.switch_to_block(long);
            let mut y = v;
            for _ in 0..=MAX_INSTS {
                y = b.ins().iadd(y, v);
            }
            b.ins().jump(m2, &[y.into()]);
            b.switch_to_block(m2);
            b.ins().return_(&[w]);
        });
        assert_eq!(convert(&mut ctx.func), 0);
        verifies(&ctx.func);
        assert_eq!(count(&ctx.func, Opcode::Brif), 2);
    }
}
