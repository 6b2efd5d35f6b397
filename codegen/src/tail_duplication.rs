//! A loop's short test block copied into the blocks that jump to it.
//!
//! An `if`/`else` at the end of a loop body leaves both sides jumping to one
//! block that finishes the iteration and tests the loop's condition
//! (collatz's `terms += 1` and `while n != 1`): one side falls into it, the
//! other pays an unconditional `jmp` on every pass to reach it. gcc copies
//! such a block into the side (tail duplication), so each side ends with
//! the loop's own conditional branch. Here, after the e-graph pass (and
//! after chains of blocks that only jump on are merged, so a side is seen
//! jumping to the test itself), a block `j` that ends in a `brif` and holds
//! at most [`MAX_INSTS`] other instructions besides constants, all of which
//! only compute (no memory, no call, no trap), is copied into each block
//! that ends with `jump j(args)`: the copy reads `args` where `j` read its
//! parameters, and ends with `j`'s `brif`.
//!
//! The values `j` defines must be read nowhere but in `j`, or only below one
//! successor `s` that `j` alone enters (the loop's exit returning the count
//! the test just made): those are first handed to `s` as new parameters,
//! passed by `j`'s `brif`, and their readers read the parameters. Sound
//! because then nothing outside `j` names a value of `j` (the copies need no
//! merge of their own), the copied instructions compute the same values
//! from the same operands, and every successor of `j` receives what `j`
//! would have passed it. A `j` no jump reaches any more is removed by
//! Cranelift's next pass.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Block, BlockArg, BlockCall, Function, Inst, InstructionData, Opcode, Value, ValueDef,
};

use crate::decided_branches::destinations;

/// The largest number of instructions (besides its `brif` and constants) a
/// block may have to be copied.
const MAX_INSTS: usize = 3;

/// Copies every qualifying block into the blocks that jump to it (see the
/// module docs); returns how many blocks it merged and copies it made (when
/// not 0, the caller recomputes the control-flow graph).
pub fn duplicate(func: &mut Function) -> usize {
    // The e-graph pass leaves chains of blocks that only jump on (the
    // sides of an `if` jump to a merge that jumps to the loop's test):
    // joined first, the sides are seen jumping to the test itself.
    let mut cfg = ControlFlowGraph::with_function(func);
    let merged = merge_chains(func, &cfg);
    if merged > 0 {
        // The merged blocks' parameters became aliases: read through, so
        // the renamings below see every use.
        func.dfg.resolve_all_aliases();
        cfg = ControlFlowGraph::with_function(func);
    }
    // Needed only for a test block whose values are read after it.
    let domtree = OnceCell::new();
    let escaped = read_elsewhere(func);
    let plans: Vec<(Block, Option<Exit>)> = func
        .layout
        .blocks()
        .filter_map(|j| qualifies(func, &cfg, &domtree, j, &escaped).map(|exit| (j, exit)))
        .collect();
    if plans.is_empty() {
        return merged;
    }
    let mut candidates = HashSet::new();
    for (j, exit) in plans {
        if let Some(exit) = exit {
            pass_through(func, j, exit, &escaped);
        }
        candidates.insert(j);
    }
    let mut copies = 0;
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for p in blocks {
        let Some(jump) = func.layout.last_inst(p) else {
            continue;
        };
        let InstructionData::Jump { destination, .. } = func.dfg.insts[jump] else {
            continue;
        };
        let j = destination.block(&func.dfg.value_lists);
        if j == p || !candidates.contains(&j) || func.layout.is_cold(p) {
            continue;
        }
        let mut map: HashMap<Value, Value> = HashMap::new();
        for (k, arg) in destination.args(&func.dfg.value_lists).enumerate() {
            let BlockArg::Value(v) = arg else {
                unreachable!("a jump passes values")
            };
            map.insert(func.dfg.block_params(j)[k], v);
        }
        func.layout.remove_inst(jump);
        let body: Vec<Inst> = func.layout.block_insts(j).collect();
        for inst in body {
            let copy = func.dfg.clone_inst(inst);
            func.dfg
                .map_inst_values(copy, |v| map.get(&v).copied().unwrap_or(v));
            for (old, new) in func
                .dfg
                .inst_results(inst)
                .iter()
                .zip(func.dfg.inst_results(copy))
            {
                map.insert(*old, *new);
            }
            func.layout.append_inst(copy, p);
        }
        copies += 1;
    }
    merged + copies
}

/// Whether `j` may be copied (see the module docs).
fn qualifies(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &OnceCell<DominatorTree>,
    j: Block,
    escaped: &HashMap<Value, Vec<Block>>,
) -> Option<Option<Exit>> {
    if func.layout.entry_block() == Some(j) || func.layout.is_cold(j) {
        return None;
    }
    let term = func.layout.last_inst(j)?;
    if func.dfg.insts[term].opcode() != Opcode::Brif {
        return None;
    }
    let body: Vec<Inst> = func.layout.block_insts(j).filter(|&i| i != term).collect();
    // Constants cost nothing (they become immediates or are hoisted).
    let work = body
        .iter()
        .filter(|&&i| func.dfg.insts[i].opcode() != Opcode::Iconst)
        .count();
    if work > MAX_INSTS || !body.iter().all(|&i| computes_only(func, i)) {
        return None;
    }
    let targets: Vec<Block> = destinations(func, term)
        .iter()
        .map(|c| c.block(&func.dfg.value_lists))
        .collect();
    // A block that branches to itself (a one-block loop) is left alone, and
    // so is a `brif` whose two edges lead to one block.
    if targets.contains(&j) || targets[0] == targets[1] {
        return None;
    }
    // The values `j` defines that blocks after it read.
    let params = func.dfg.block_params(j).iter();
    let results = body.iter().flat_map(|&i| func.dfg.inst_results(i).iter());
    let values: Vec<Value> = params
        .chain(results)
        .copied()
        .filter(|v| escaped.contains_key(v))
        .collect();
    if values.is_empty() {
        return Some(None);
    }
    // They may be handed over as parameters of a successor entered only
    // from `j`, when every block reading them lies below that successor
    // (the loop's exit reading the count the test block just made).
    let (edge, &target) = targets
        .iter()
        .enumerate()
        .find(|&(_, &t)| cfg.pred_iter(t).count() == 1)?;
    let domtree = domtree.get_or_init(|| DominatorTree::with_function(func, cfg));
    let all_below = values
        .iter()
        .flat_map(|v| &escaped[v])
        .all(|&b| b == j || domtree.dominates(target, b, &func.layout));
    all_below.then_some(Some(Exit {
        edge,
        target,
        values,
    }))
}

/// How the values a test block defines reach the blocks after it.
#[derive(Debug)]
struct Exit {
    /// Which edge of the block's `brif` (0: taken when nonzero).
    edge: usize,
    /// The successor entered only from the block.
    target: Block,
    /// The values read after the block.
    values: Vec<Value>,
}

/// Makes `exit.values` parameters of `exit.target`, passed by `j`'s
/// `brif` on that edge, and has every reader outside `j` read the parameter.
fn pass_through(func: &mut Function, j: Block, exit: Exit, readers: &HashMap<Value, Vec<Block>>) {
    let mut renamed = HashMap::new();
    for &v in &exit.values {
        let ty = func.dfg.value_type(v);
        renamed.insert(v, func.dfg.append_block_param(exit.target, ty));
    }
    let mut blocks: Vec<Block> = exit
        .values
        .iter()
        .flat_map(|v| readers[v].iter().copied())
        .filter(|&b| b != j)
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    for b in blocks {
        let insts: Vec<Inst> = func.layout.block_insts(b).collect();
        for inst in insts {
            func.dfg
                .map_inst_values(inst, |v| renamed.get(&v).copied().unwrap_or(v));
        }
    }
    let term = func.layout.last_inst(j).expect("a brif");
    let dfg = &mut func.dfg;
    let call =
        dfg.insts[term].branch_destination(&dfg.jump_tables, &dfg.exception_tables)[exit.edge];
    let mut args: Vec<BlockArg> = call.args(&dfg.value_lists).collect();
    args.extend(exit.values.iter().map(|&v| BlockArg::Value(v)));
    let new = BlockCall::new(exit.target, args, &mut dfg.value_lists);
    dfg.insts[term].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        [exit.edge] = new;
}

/// Merges every block entered only by a `jump` from one block into that
/// block.
fn merge_chains(func: &mut Function, cfg: &ControlFlowGraph) -> usize {
    let mut merged = 0;
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for p in blocks {
        // `p` may have been merged into an earlier block already.
        if !func.layout.is_block_inserted(p) {
            continue;
        }
        // A merge moves the next block's edges to `p` (their targets keep
        // their counts in `cfg`): follow the chain from `p`.
        while let Some(jump) = func.layout.last_inst(p)
            && let InstructionData::Jump { destination, .. } = func.dfg.insts[jump]
        {
            let b = destination.block(&func.dfg.value_lists);
            if b == p
                || cfg.pred_iter(b).count() != 1
                || func.layout.entry_block() == Some(b)
                || func.layout.is_cold(b) != func.layout.is_cold(p)
            {
                break;
            }
            let args: Vec<BlockArg> = destination.args(&func.dfg.value_lists).collect();
            func.layout.remove_inst(jump);
            let params = func.dfg.detach_block_params(b);
            for (k, arg) in args.iter().enumerate() {
                let param = params.get(k, &func.dfg.value_lists).expect("one per arg");
                let value = arg.as_value().expect("a jump passes values");
                func.dfg.change_to_alias(param, value);
            }
            let insts: Vec<Inst> = func.layout.block_insts(b).collect();
            for inst in insts {
                func.layout.remove_inst(inst);
                func.layout.append_inst(inst, p);
            }
            func.layout.remove_block(b);
            merged += 1;
        }
    }
    merged
}

/// The values read in a block other than the one defining them, with the
/// blocks that read them.
fn read_elsewhere(func: &Function) -> HashMap<Value, Vec<Block>> {
    let mut escaped: HashMap<Value, Vec<Block>> = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                let v = func.dfg.resolve_aliases(v);
                let home = match func.dfg.value_def(v) {
                    ValueDef::Result(def, _) => func.layout.inst_block(def),
                    ValueDef::Param(b, _) => Some(b),
                    _ => None,
                };
                if home != Some(block) {
                    escaped.entry(v).or_default().push(block);
                }
            }
        }
    }
    escaped
}

/// An instruction that computes from its operands only and cannot trap.
pub(crate) fn computes_only(func: &Function, inst: Inst) -> bool {
    use Opcode::*;
    matches!(
        func.dfg.insts[inst].opcode(),
        Iconst
            | Iadd
            | Isub
            | Imul
            | Ineg
            | Band
            | Bor
            | Bxor
            | Bnot
            | Ishl
            | Ushr
            | Sshr
            | Icmp
            | Select
            | Uextend
            | Sextend
            | Ireduce
    )
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{InstBuilder, types};

    use super::*;
    use crate::test_ir::{function, verifies};

    /// `n = x; c = 0; loop { if n & 1 { n = 3n + 1 } else { n = n >> 1 }
    /// c += 1; if n == 1 { return c or n } }`: blocks `[entry, head, odd,
    /// even, test, exit]`; the exit returns the count `test` made when
    /// `count_after` (read past `test`), else a constant.
    fn collatz(count_after: bool) -> Function {
        let ctx = function(|b, [_, head, odd, even, test, exit], x| {
            let zero = b.ins().iconst(types::I64, 0);
            b.append_block_param(head, types::I64);
            b.append_block_param(head, types::I64);
            b.ins().jump(head, &[x.into(), zero.into()]);
            b.switch_to_block(head);
            let (n, c) = (b.block_params(head)[0], b.block_params(head)[1]);
            let bit = b.ins().band_imm_s(n, 1);
            b.ins().brif(bit, odd, &[], even, &[]);
            b.append_block_param(test, types::I64);
            b.switch_to_block(odd);
            let three = b.ins().imul_imm_s(n, 3);
            let next = b.ins().iadd_imm_s(three, 1);
            b.ins().jump(test, &[next.into()]);
            b.switch_to_block(even);
            let half = b.ins().sshr_imm_s(n, 1);
            b.ins().jump(test, &[half.into()]);
            b.switch_to_block(test);
            let m = b.block_params(test)[0];
            let c1 = b.ins().iadd_imm_s(c, 1);
            let done = b.ins().icmp_imm_s(IntCC::Equal, m, 1);
            b.ins().brif(done, exit, &[], head, &[m.into(), c1.into()]);
            b.switch_to_block(exit);
            let r = if count_after {
                c1
            } else {
                b.ins().iconst(types::I64, 7)
            };
            b.ins().return_(&[r]);
        });
        ctx.func
    }

    /// How many `brif`s the function has.
    fn brifs(func: &Function) -> usize {
        crate::test_ir::count(func, Opcode::Brif)
    }

    #[test]
    fn both_sides_of_the_loop_body_end_with_the_loop_test() {
        for count_after in [false, true] {
            let mut func = collatz(count_after);
            assert_eq!(duplicate(&mut func), 2, "{func}");
            verifies(&func);
            // The head's and one for each side; the test block is no
            // longer reached.
            assert_eq!(brifs(&func), 4, "{func}");
        }
    }

    #[test]
    fn a_value_read_where_no_single_successor_leads_keeps_its_block() {
        // `test` makes `m + 1`; both of its successors jump to `r`, which
        // reads it: neither dominates `r`, so copies of `test` would need a
        // merge there, and nothing is copied.
        let mut ctx = function(|b, [_, odd, even, test, a, c, r], x| {
            let bit = b.ins().band_imm_s(x, 1);
            b.ins().brif(bit, odd, &[], even, &[]);
            b.append_block_param(test, types::I64);
            b.switch_to_block(odd);
            let three = b.ins().imul_imm_s(x, 3);
            b.ins().jump(test, &[three.into()]);
            b.switch_to_block(even);
            let half = b.ins().sshr_imm_s(x, 1);
            b.ins().jump(test, &[half.into()]);
            b.switch_to_block(test);
            let m = b.block_params(test)[0];
            let m1 = b.ins().iadd_imm_s(m, 1);
            let one = b.ins().icmp_imm_s(IntCC::Equal, m, 1);
            b.ins().brif(one, a, &[], c, &[]);
            for side in [a, c] {
                b.switch_to_block(side);
                b.ins().jump(r, &[]);
            }
            b.switch_to_block(r);
            b.ins().return_(&[m1]);
        });
        assert_eq!(duplicate(&mut ctx.func), 0, "{}", ctx.func.display());
        verifies(&ctx.func);
    }
}
