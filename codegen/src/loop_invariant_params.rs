//! Block parameters that always hold one value, removed before the e-graph
//! pass, so that what is computed from them can leave the loops they
//! enter.
//!
//! cranelift-frontend gives a loop header a parameter for every variable
//! live across it, and the back edge passes it back unchanged when the loop
//! does not assign it: an inner loop's header receives the outer loop's
//! counter `i` as a parameter `p`, from the outer body as `i` and from its
//! own back edge as `p` itself. Cranelift's `remove_constant_phis` replaces
//! a parameter only by a value an instruction defines, so it keeps `p` (`i`
//! is itself a parameter, of the outer header), and to the e-graph's
//! loop-invariant code motion `p` is defined inside the inner loop: the row
//! address `base + i * 1024` of a matrix walk was recomputed at every
//! element.
//!
//! A parameter whose incoming arguments are, apart from itself, one value
//! `x` is `x` (Braun et al.'s trivial phi); removing it can make others
//! trivial, so the search repeats to a fixed point. Sound: the first edge
//! of any path into the block cannot pass the parameter itself (that use
//! would need the block to dominate the edge's source, which the path
//! reached without it), so it passes `x`, whose definition therefore
//! dominates the block; on every later arrival the parameter still holds
//! `x`.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{Block, BlockArg, BlockCall, Function, Inst, Value};

/// The most sweeps over the blocks (each finds every parameter made
/// trivial by the removals before it in layout order).
const MAX_SWEEPS: usize = 16;

/// One edge into a block that carries arguments.
struct Edge {
    /// The branch.
    inst: Inst,
    /// Which of the branch's destinations.
    index: usize,
    /// The destination.
    to: Block,
    /// Its arguments, aliases resolved.
    args: Vec<Value>,
}

/// Removes every block parameter that always holds one value (see the
/// module docs); returns how many were removed.
pub fn remove(func: &mut Function) -> usize {
    let Some(entry) = func.layout.entry_block() else {
        return 0;
    };
    let mut edges = Vec::new();
    // Blocks some edge passes anything but plain values (a call's results
    // to an exception handler): left alone.
    let mut untouchable = HashSet::new();
    for block in func.layout.blocks() {
        let Some(inst) = func.layout.last_inst(block) else {
            continue;
        };
        let dfg = &func.dfg;
        for (index, call) in dfg.insts[inst]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .enumerate()
        {
            let to = call.block(&dfg.value_lists);
            let mut args = Vec::new();
            for a in call.args(&dfg.value_lists) {
                match a {
                    BlockArg::Value(v) => args.push(dfg.resolve_aliases(v)),
                    _ => {
                        untouchable.insert(to);
                    }
                }
            }
            edges.push(Edge {
                inst,
                index,
                to,
                args,
            });
        }
    }
    let mut into: HashMap<Block, Vec<usize>> = HashMap::new();
    for (k, e) in edges.iter().enumerate() {
        into.entry(e.to).or_default().push(k);
    }
    // Each removed parameter and the value it always holds (perhaps a
    // parameter removed later: `resolve` follows the chain).
    let mut same: HashMap<Value, Value> = HashMap::new();
    let resolve = |same: &HashMap<Value, Value>, mut v: Value| {
        while let Some(&w) = same.get(&v) {
            v = w;
        }
        v
    };
    // Each block's parameters as they were, for the blocks that may lose some.
    let params: HashMap<Block, Vec<Value>> = func
        .layout
        .blocks()
        .filter(|b| *b != entry && !untouchable.contains(b) && into.contains_key(b))
        .map(|b| (b, func.dfg.block_params(b).to_vec()))
        .filter(|(_, ps)| !ps.is_empty())
        .collect();
    // In layout order, where a parameter's definers mostly come first, so a
    // few sweeps reach the fixed point; each removal is sound on its own, so
    // stopping early only leaves some.
    let order: Vec<Block> = func
        .layout
        .blocks()
        .filter(|b| params.contains_key(b))
        .collect();
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for block in &order {
            for (i, &p) in params[block].iter().enumerate() {
                if same.contains_key(&p) {
                    continue;
                }
                let mut only = None;
                let mut many = false;
                for &k in &into[block] {
                    let a = resolve(&same, edges[k].args[i]);
                    if a == p {
                        continue;
                    }
                    match only {
                        None => only = Some(a),
                        Some(x) if x == a => {}
                        Some(_) => many = true,
                    }
                }
                if let (false, Some(x)) = (many, only) {
                    same.insert(p, x);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    if same.is_empty() {
        return 0;
    }
    // The parameters, rightmost first (removal slides the later ones back),
    // each an alias of the value it always holds.
    for ps in params.values() {
        for &p in ps.iter().rev() {
            if same.contains_key(&p) {
                func.dfg.remove_block_param(p);
                let x = resolve(&same, p);
                func.dfg.change_to_alias(p, x);
            }
        }
    }
    // Their arguments on every edge.
    for e in &edges {
        let Some(ps) = params.get(&e.to) else {
            continue;
        };
        if !ps.iter().any(|p| same.contains_key(p)) {
            continue;
        }
        let kept: Vec<BlockArg> = e
            .args
            .iter()
            .zip(ps)
            .filter(|(_, p)| !same.contains_key(p))
            .map(|(&a, _)| BlockArg::Value(a))
            .collect();
        let dfg = &mut func.dfg;
        let dests = dfg.insts[e.inst]
            .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables);
        dests[e.index] = BlockCall::new(e.to, kept, &mut dfg.value_lists);
    }
    same.len()
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{InstBuilder, types};

    use super::*;
    use crate::test_ir::{function, verifies};

    /// Three nested loops counting to `x`, as cranelift-frontend builds
    /// them: `mid` receives the outer counter `i` as `p`, `inner` receives
    /// `p` as `q` and `mid`'s counter `k` as `r`, each passed back unchanged
    /// by its own back edge; `inner` sums `p * 640 + r + j`.
    fn nested() -> Function {
        function(
            |b, [entry, outer, mid, inner, mid_latch, outer_latch, exit], x| {
                let i = b.append_block_param(outer, types::I64);
                let (p, k) = (
                    b.append_block_param(mid, types::I64),
                    b.append_block_param(mid, types::I64),
                );
                let q = b.append_block_param(inner, types::I64);
                let r = b.append_block_param(inner, types::I64);
                let j = b.append_block_param(inner, types::I64);
                let acc = b.append_block_param(inner, types::I64);
                let sum = b.append_block_param(exit, types::I64);
                let zero = b.ins().iconst(types::I64, 0);
                b.ins().jump(outer, &[zero.into()]);
                let _ = entry;
                b.switch_to_block(outer);
                let zero = b.ins().iconst(types::I64, 0);
                b.ins().jump(mid, &[i.into(), zero.into()]);
                b.switch_to_block(mid);
                let zero = b.ins().iconst(types::I64, 0);
                b.ins()
                    .jump(inner, &[p.into(), k.into(), zero.into(), zero.into()]);
                b.switch_to_block(inner);
                let row = b.ins().imul_imm_s(q, 640);
                let at = b.ins().iadd(row, r);
                let at = b.ins().iadd(at, j);
                let acc2 = b.ins().iadd(acc, at);
                let j2 = b.ins().iadd_imm_s(j, 1);
                let more = b.ins().icmp(IntCC::SignedLessThan, j2, x);
                b.ins().brif(
                    more,
                    inner,
                    &[q.into(), r.into(), j2.into(), acc2.into()],
                    mid_latch,
                    &[],
                );
                b.switch_to_block(mid_latch);
                let k2 = b.ins().iadd_imm_s(r, 1);
                let more = b.ins().icmp(IntCC::SignedLessThan, k2, x);
                b.ins()
                    .brif(more, mid, &[q.into(), k2.into()], outer_latch, &[]);
                b.switch_to_block(outer_latch);
                let i2 = b.ins().iadd_imm_s(p, 1);
                let more = b.ins().icmp(IntCC::SignedLessThan, i2, x);
                b.ins()
                    .brif(more, outer, &[i2.into()], exit, &[acc2.into()]);
                b.switch_to_block(exit);
                b.ins().return_(&[sum]);
            },
        )
        .func
    }

    #[test]
    fn an_outer_counter_passed_through_inner_headers_is_the_counter() {
        let mut func = nested();
        verifies(&func);
        let blocks: Vec<Block> = func.layout.blocks().collect();
        // `p` (the outer `i`), then `q` (`p`, so `i`) and `r` (`k`), and
        // the exit's `sum`, which one edge gives the inner sum.
        assert_eq!(remove(&mut func), 4);
        verifies(&func);
        let params = |b: Block| func.dfg.block_params(b).len();
        // outer keeps `i`, mid its `k`, inner its `j` and the sum.
        assert_eq!(
            [blocks[1], blocks[2], blocks[3], blocks[6]].map(params),
            [1, 1, 2, 0]
        );
        // The row address is computed from the outer counter itself.
        let inner = blocks[3];
        let row = func
            .layout
            .block_insts(inner)
            .find(|&n| func.dfg.insts[n].opcode() == cranelift_codegen::ir::Opcode::Imul)
            .unwrap();
        let i = func.dfg.block_params(blocks[1])[0];
        assert_eq!(func.dfg.resolve_aliases(func.dfg.inst_args(row)[0]), i);
        // Nothing left to remove.
        assert_eq!(remove(&mut func), 0);
    }

    #[test]
    fn a_parameter_given_two_values_stays() {
        let mut func = function(|b, [_, left, right, join], x| {
            let v = b.append_block_param(join, types::I64);
            b.ins().brif(x, left, &[], right, &[]);
            b.switch_to_block(left);
            let one = b.ins().iconst(types::I64, 1);
            b.ins().jump(join, &[one.into()]);
            b.switch_to_block(right);
            b.ins().jump(join, &[x.into()]);
            b.switch_to_block(join);
            b.ins().return_(&[v]);
        })
        .func;
        assert_eq!(remove(&mut func), 0);
        verifies(&func);
    }
}
