//! Edges taken straight past blocks that only pass a decided value on.
//!
//! An inlined `fn ... -> bool { return a && b; }` hands its result to the
//! caller's `if` through block parameters: the `brif a` inside jumps, on its
//! false edge, to a block `m(v)` that only forwards `v` (through more such
//! blocks, after the e-graph pass) to the caller's `brif v`. On that edge `v`
//! is `a`, known false: the edge can go straight to the caller's `else`
//! side, and the `&&` no longer materialises a boolean that is tested again
//! (`test; je` into another `test; je` on the same register).
//!
//! An edge is followed through blocks whose only instruction is their
//! terminator: a `jump` passes the values on, a `brif` whose condition is
//! decided on the edge (the condition of the branch the edge leaves, with the
//! side it leaves on, or a constant) picks its side. When at least one
//! `brif` was decided, the edge is retargeted to the block the walk ends at,
//! with the values it would have received. Sound because a forwarding block
//! computes nothing: the values it passes are its parameters (replaced by
//! what the edge gives them) or values whose definitions dominate it, and so
//! (the block defining nothing itself) dominate the edge's own branch. A
//! block's parameters may be read by the terminators of blocks further along
//! the walk (an inlined function's return block `r(v)` jumps to the caller's
//! `if`, a block of its own that branches on `v`): the walk knows what the
//! edge passes for every parameter of every block it went through. An edge
//! is retargeted only past blocks whose parameters nothing else reads, other
//! than those blocks' own terminators: a block the new edge bypasses may have
//! dominated a use of its parameter further on. Every other definition that
//! dominated the target still does (it lay on every path into the skipped
//! blocks, so before the edge's branch). Blocks no edge reaches any more are
//! removed by Cranelift's next pass.

use std::collections::HashMap;

use cranelift_codegen::ir::{
    Block, BlockArg, BlockCall, Function, Inst, InstructionData, Value, ValueDef,
};

use crate::decided_branches::{constant, destinations};

/// How many forwarding blocks one edge is followed through: the chains an
/// inlined `&&` of a few terms leaves are shorter; the bound also stops a
/// cycle of forwarding blocks.
const MAX_STEPS: usize = 8;

/// Retargets every edge of `func` that a decided forwarding chain allows
/// (see the module docs); returns how many were retargeted.
pub fn thread(func: &mut Function) -> usize {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut readers = param_readers(func);
    let mut threaded = 0;
    for block in blocks {
        let Some(term) = func.layout.last_inst(block) else {
            continue;
        };
        let (cond, edges) = match func.dfg.insts[term] {
            InstructionData::Brif { arg, .. } => (Some(func.dfg.resolve_aliases(arg)), 2),
            InstructionData::Jump { .. } => (None, 1),
            _ => continue,
        };
        for ix in 0..edges {
            let call = destinations(func, term)[ix];
            // The edge is taken exactly when the condition has this truth.
            let fact = cond.map(|c| (c, ix == 0));
            if let Some((target, args)) = follow(func, &readers, call, fact) {
                // The retargeted branch reads what it passes: a parameter of
                // another block among them now has this reader too, which a
                // later walk must not bypass.
                for &v in &args {
                    if let ValueDef::Param(owner, _) = func.dfg.value_def(v)
                        && owner != block
                    {
                        readers.entry(owner).or_default().push(term);
                    }
                }
                let dfg = &mut func.dfg;
                let args = args.into_iter().map(BlockArg::Value);
                let new = BlockCall::new(target, args, &mut dfg.value_lists);
                dfg.insts[term]
                    .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)[ix] =
                    new;
                threaded += 1;
            }
        }
    }
    threaded
}

/// For each block with parameters read elsewhere, the instructions other
/// than its own terminator that read them.
fn param_readers(func: &Function) -> HashMap<Block, Vec<Inst>> {
    let mut readers: HashMap<Block, Vec<Inst>> = HashMap::new();
    for block in func.layout.blocks() {
        let last = func.layout.last_inst(block);
        for inst in func.layout.block_insts(block) {
            let dests = destinations(func, inst).iter().flat_map(|call| {
                call.args(&func.dfg.value_lists).filter_map(|a| match a {
                    BlockArg::Value(v) => Some(v),
                    _ => None,
                })
            });
            for v in func.dfg.inst_args(inst).iter().copied().chain(dests) {
                if let ValueDef::Param(owner, _) = func.dfg.value_def(func.dfg.resolve_aliases(v))
                    && (owner != block || Some(inst) != last)
                {
                    readers.entry(owner).or_default().push(inst);
                }
            }
        }
    }
    readers
}

/// Where the edge `call` ends up past forwarding blocks, if a `brif` on
/// the way was decided: the block and the values it receives.
fn follow(
    func: &Function,
    readers: &HashMap<Block, Vec<Inst>>,
    call: BlockCall,
    fact: Option<(Value, bool)>,
) -> Option<(Block, Vec<Value>)> {
    let pool = &func.dfg.value_lists;
    let mut block = call.block(pool);
    // What the edge passes for each parameter of the blocks walked through.
    let mut env: Vec<(Value, Value)> = Vec::new();
    let mut args = plain_args(func, call, &env)?;
    let mut walked: Vec<Block> = Vec::new();
    let mut decided = false;
    let mut reached = None;
    for _ in 0..MAX_STEPS {
        let term = func.layout.first_inst(block)?;
        if func.layout.last_inst(block) != Some(term) {
            break;
        }
        env.extend(func.dfg.block_params(block).iter().copied().zip(args));
        walked.push(block);
        let next = match func.dfg.insts[term] {
            InstructionData::Jump { destination, .. } => destination,
            InstructionData::Brif { arg, blocks, .. } => {
                let c = forwarded(func, arg, &env);
                let Some(truth) = truth(func, c, fact) else {
                    break;
                };
                decided = true;
                if truth { blocks[0] } else { blocks[1] }
            }
            _ => break,
        };
        let Some(next_args) = plain_args(func, next, &env) else {
            break;
        };
        block = next.block(pool);
        args = next_args;
        // The walked blocks' parameters may not be read past them.
        let inside = walked.iter().all(|b| {
            readers.get(b).is_none_or(|insts| {
                insts.iter().all(|&i| {
                    func.layout
                        .inst_block(i)
                        .is_some_and(|r| walked.contains(&r))
                })
            })
        });
        if decided && inside {
            reached = Some((block, args.clone()));
        }
    }
    reached
}

/// The values `call` passes, as the edge being followed sees them (see
/// [`forwarded`]); `None` if one is not a plain value.
fn plain_args(func: &Function, call: BlockCall, env: &[(Value, Value)]) -> Option<Vec<Value>> {
    call.args(&func.dfg.value_lists)
        .map(|a| match a {
            BlockArg::Value(v) => Some(forwarded(func, v, env)),
            _ => None,
        })
        .collect()
}

/// `v` as the edge being followed sees it: a parameter of a block walked
/// through is the value the edge passed for it.
fn forwarded(func: &Function, v: Value, env: &[(Value, Value)]) -> Value {
    let v = func.dfg.resolve_aliases(v);
    env.iter()
        .rev()
        .find(|&&(p, _)| p == v)
        .map_or(v, |&(_, a)| a)
}

/// The truth of condition `c` on the edge: from the branch the edge leaves,
/// or a constant.
fn truth(func: &Function, c: Value, fact: Option<(Value, bool)>) -> Option<bool> {
    if let Some((v, t)) = fact
        && v == c
    {
        return Some(t);
    }
    constant(func, c).map(|k| k != 0)
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{InstBuilder, types};
    use cranelift_frontend::FunctionBuilder;

    use super::*;
    use crate::test_ir::{function, returning, verifies};

    /// The blocks each edge of `block`'s terminator goes to.
    fn targets(func: &Function, block: Block) -> Vec<Block> {
        let term = func.layout.last_inst(block).unwrap();
        destinations(func, term)
            .iter()
            .map(|c| c.block(&func.dfg.value_lists))
            .collect()
    }

    /// `yes` returns 1 (or `read`, widened, when given: a use of a merged
    /// boolean past its test), `no` returns 2.
    fn return_from(b: &mut FunctionBuilder, (yes, no): (Block, Block), read: Option<Value>) {
        let Some(w) = read else {
            return returning(b, [(yes, 1), (no, 2)]);
        };
        b.switch_to_block(yes);
        let r = b.ins().uextend(types::I64, w);
        b.ins().return_(&[r]);
        b.switch_to_block(no);
        let k = b.ins().iconst(types::I64, 2);
        b.ins().return_(&[k]);
    }

    /// `fn(x) { return if x < 10 && x != 3 { 1 } else { 2 } }` as an inlined
    /// `&&` leaves it: both tests' false edges pass their condition to
    /// `forward(v)`, which jumps to `merge(w)`, which branches on `w`; when
    /// `merge_uses` is set, the `1` side also reads `w` (so `merge` may not
    /// be skipped).
    fn and_chain(merge_uses: bool) -> (Function, [Block; 6]) {
        let mut shown = [Block::from_u32(0); 6];
        let ctx = function(|b, blocks: [Block; 6], x| {
            let [_, second, forward, merge, yes, no] = blocks;
            shown = blocks;
            let v = b.append_block_param(forward, types::I8);
            let w = b.append_block_param(merge, types::I8);
            let c = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, x, 10);
            b.ins().brif(c, second, &[], forward, &[c.into()]);
            b.switch_to_block(second);
            let d = b.ins().icmp_imm_s(IntCC::NotEqual, x, 3);
            b.ins().brif(d, merge, &[d.into()], forward, &[d.into()]);
            b.switch_to_block(forward);
            b.ins().jump(merge, &[v.into()]);
            b.switch_to_block(merge);
            b.ins().brif(w, yes, &[], no, &[]);
            return_from(b, (yes, no), merge_uses.then_some(w));
        });
        (ctx.func, shown)
    }

    #[test]
    fn a_decided_merge_is_skipped_on_both_sides() {
        let (mut func, [entry, second, forward, merge, yes, no]) = and_chain(false);
        // entry's false edge and second's both go to `no`; second's true
        // edge passes `d`, true there, to `merge`, so it goes to `yes`.
        assert_eq!(thread(&mut func), 3);
        assert_eq!(targets(&func, entry), vec![second, no]);
        assert_eq!(targets(&func, second), vec![yes, no]);
        // The forwarding blocks are untouched (now unreachable).
        assert_eq!(targets(&func, forward), vec![merge]);
        verifies(&func);
    }

    #[test]
    fn a_block_whose_parameter_is_used_further_on_is_not_skipped() {
        let (mut func, [entry, second, forward, merge, _, _]) = and_chain(true);
        // `merge`'s parameter is read past its terminator: no edge may skip
        // `merge`; `forward` passes its parameter on only, but skipping it
        // alone decides nothing.
        assert_eq!(thread(&mut func), 0);
        assert_eq!(targets(&func, entry), vec![second, forward]);
        assert_eq!(targets(&func, second), vec![merge, forward]);
    }

    /// `fn(x) { return if x < 10 && x != 3 { 1 } else { 2 } }` with the
    /// `&&` in an inlined function: its return block `ret(w)` only jumps to
    /// the caller's `if`, a block of its own that branches on `w`; when
    /// `yes_reads` is set, the `1` side also reads `w`.
    fn return_then_test(yes_reads: bool) -> (Function, [Block; 6]) {
        let mut shown = [Block::from_u32(0); 6];
        let ctx = function(|b, blocks: [Block; 6], x| {
            let [_, second, ret, test, yes, no] = blocks;
            shown = blocks;
            let w = b.append_block_param(ret, types::I8);
            let c = b.ins().icmp_imm_u(IntCC::UnsignedLessThan, x, 10);
            b.ins().brif(c, second, &[], ret, &[c.into()]);
            b.switch_to_block(second);
            let d = b.ins().icmp_imm_s(IntCC::NotEqual, x, 3);
            b.ins().jump(ret, &[d.into()]);
            b.switch_to_block(ret);
            b.ins().jump(test, &[]);
            b.switch_to_block(test);
            b.ins().brif(w, yes, &[], no, &[]);
            return_from(b, (yes, no), yes_reads.then_some(w));
        });
        (ctx.func, shown)
    }

    #[test]
    fn a_parameter_tested_by_a_later_block_of_the_walk_is_decided() {
        let (mut func, [entry, second, ret, _, _, no]) = return_then_test(false);
        // entry's false edge passes `c`, false there, through `ret` to
        // `test`, which branches on it: straight to `no`. second's edge
        // passes `d`, unknown: unchanged.
        assert_eq!(thread(&mut func), 1);
        assert_eq!(targets(&func, entry), vec![second, no]);
        assert_eq!(targets(&func, second), vec![ret]);
        verifies(&func);
    }

    #[test]
    fn a_parameter_read_past_the_walk_keeps_its_block() {
        let (mut func, [entry, second, ret, ..]) = return_then_test(true);
        // `yes` reads `w` too: bypassing `ret` could leave that read
        // without its definition.
        assert_eq!(thread(&mut func), 0);
        assert_eq!(targets(&func, entry), vec![second, ret]);
    }

    #[test]
    fn a_constant_decides_a_jump_into_a_merge() {
        let ctx = function(|b, blocks: [Block; 4], _| {
            let [_, merge, yes, no] = blocks;
            let w = b.append_block_param(merge, types::I8);
            let one = b.ins().iconst(types::I8, 1);
            b.ins().jump(merge, &[one.into()]);
            b.switch_to_block(merge);
            b.ins().brif(w, yes, &[], no, &[]);
            returning(b, [(yes, 1), (no, 2)]);
        });
        let mut func = ctx.func;
        let entry = func.layout.entry_block().unwrap();
        assert_eq!(thread(&mut func), 1);
        let yes = func.layout.blocks().nth(2).unwrap();
        assert_eq!(targets(&func, entry), vec![yes]);
    }
}
