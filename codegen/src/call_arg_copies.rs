//! Calls get their own copy of a 64-bit argument that lives on elsewhere.
//!
//! A call argument is constrained to its ABI register (`rdi`, `rsi`, ...).
//! When the call is the value's last use, regalloc2 keeps that fixed-register
//! constraint on the value's whole live range; a range fixed to `rdi` that
//! crosses other uses of `rdi` is split, and after two splits
//! (`MAX_SPLITS_PER_SPILLSET`) the allocator gives up on it: the value sits
//! in one register and every use gets a short range of its own in another,
//! with a `mov` before it (`mov %r14,%rax; mov (%rax),%rax` where
//! `mov (%r14),%rax` would do). A recursive function that passes its `ref`
//! parameter on to itself, or a function that hands it to a callee in tail
//! position, paid a move for nearly every use of it.
//!
//! Passing `iadd v, 0` instead moves the constraint onto a value that lives
//! from just before the call to the call: `v`'s own range has no fixed
//! register and stays whole, and the copy takes the place of the move into
//! the argument register the call needed anyway (one `lea` or `mov`; the
//! allocator sometimes spends a second, see docs/benchmarks.md). It runs
//! after the e-graph pass, which would fold the copy away again; the rest of
//! the pipeline runs at `opt_level=none`.
//!
//! Only 64-bit values used somewhere besides this argument are copied: a
//! value used once gains nothing, and copying narrower integers too measured
//! worse (towers +2.4 %, measured before the one-use rule).
//!
//! A call in a cold block (a failed check's report) also gets its own
//! constants: the e-graph pass makes one constant for all its uses, often in
//! a block far above the call (a fixed array's length, made once for the hot
//! path's compare, where it is an immediate, and for the failure call's
//! argument), so the value was held in a register, often a callee-saved one,
//! all along the hot path down to the cold call: two moves per check, a save
//! and a restore per call. The figures are in docs/backend.md.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    Function, Inst, InstBuilder, InstructionData, Opcode, Value, ValueDef, types,
};

/// Replaces each call's 64-bit arguments that have other uses by a copy made
/// just before the call, and a cold call's constants made in other blocks
/// by constants made just before it; returns how many arguments it
/// replaced. Other constants are left alone (an immediate at the call).
pub fn isolate(func: &mut Function) -> usize {
    let uses = use_counts(func);
    let mut copied = 0;
    let mut cur = FuncCursor::new(func);
    while cur.next_block().is_some() {
        while let Some(inst) = cur.next_inst() {
            if !matches!(
                cur.func.dfg.insts[inst].opcode(),
                Opcode::Call | Opcode::CallIndirect
            ) {
                continue;
            }
            for k in 0..cur.func.dfg.inst_args(inst).len() {
                let arg = cur
                    .func
                    .dfg
                    .resolve_aliases(cur.func.dfg.inst_args(inst)[k]);
                if let Some(remade) = remade_constant(cur.func, arg, inst) {
                    // The cursor is at the call: the constant goes just before it.
                    let ty = cur.func.dfg.value_type(arg);
                    let c = cur.ins().iconst(ty, remade);
                    cur.func.dfg.inst_args_mut(inst)[k] = c;
                    copied += 1;
                    continue;
                }
                let dfg = &cur.func.dfg;
                let constant = matches!(dfg.value_def(arg), ValueDef::Result(def, _)
                    if dfg.insts[def].opcode() == Opcode::Iconst);
                if dfg.value_type(arg) != types::I64
                    || constant
                    || uses.get(&arg).copied().unwrap_or(0) <= 1
                {
                    continue;
                }
                // The cursor is at the call: these go just before it.
                let zero = cur.ins().iconst(types::I64, 0);
                let copy = cur.ins().iadd(arg, zero);
                cur.func.dfg.inst_args_mut(inst)[k] = copy;
                copied += 1;
            }
        }
    }
    copied
}

/// The immediate of `arg` when `call` is in a cold block and `arg` is a
/// constant made in another block (see the module's docs). Hot calls keep
/// theirs: remaking those too moved richards' scheduler loop to a spilled
/// pointer (+154 M instructions there).
fn remade_constant(func: &Function, arg: Value, call: Inst) -> Option<i64> {
    let dfg = &func.dfg;
    let ValueDef::Result(def, _) = dfg.value_def(arg) else {
        return None;
    };
    let InstructionData::UnaryImm {
        opcode: Opcode::Iconst,
        imm,
    } = dfg.insts[def]
    else {
        return None;
    };
    let block = func.layout.inst_block(call)?;
    (func.layout.is_cold(block) && func.layout.inst_block(def) != Some(block)).then_some(imm.bits())
}

/// How many times each value is read: by instructions and by branch
/// arguments (`inst_values` covers both).
fn use_counts(func: &Function) -> HashMap<Value, u32> {
    let mut uses = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                *uses.entry(func.dfg.resolve_aliases(v)).or_insert(0) += 1;
            }
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{Block, FuncRef};
    use cranelift_frontend::FunctionBuilder;

    use super::*;
    use crate::test_ir::{function, import, verifies};

    /// Declares `f(i64, i64, i64)` in the function being built.
    fn callee(b: &mut FunctionBuilder) -> FuncRef {
        import(b, 0, 3, 0)
    }

    /// The arguments of the first call in `block`.
    fn call_args(func: &Function, block: Block) -> Vec<Value> {
        let call = func
            .layout
            .block_insts(block)
            .find(|&i| func.dfg.insts[i].opcode() == Opcode::Call)
            .expect("a call");
        func.dfg.inst_args(call).to_vec()
    }

    /// `fn(x) { let y = x + 1; f(x, y, 7); return x }`: `x` lives on after
    /// the call, `y` is read only by it, `7` is a constant.
    #[test]
    fn only_an_argument_that_lives_on_elsewhere_is_copied() {
        let mut passed = Vec::new();
        let mut ctx = function(|b, [_], x| {
            let f = callee(b);
            let y = b.ins().iadd_imm_s(x, 1);
            let seven = b.ins().iconst(types::I64, 7);
            b.ins().call(f, &[x, y, seven]);
            passed = vec![y, seven];
            b.ins().return_(&[x]);
        });
        let entry = ctx.func.layout.entry_block().unwrap();
        let x = ctx.func.dfg.block_params(entry)[0];
        assert_eq!(isolate(&mut ctx.func), 1);
        let args = call_args(&ctx.func, entry);
        // The first argument is now `iadd x, 0`; the others are unchanged.
        let ValueDef::Result(def, _) = ctx.func.dfg.value_def(args[0]) else {
            panic!("not copied: {}", ctx.func.display());
        };
        assert_eq!(ctx.func.dfg.insts[def].opcode(), Opcode::Iadd);
        assert_eq!(ctx.func.dfg.inst_args(def)[0], x);
        assert_eq!(args[1..], passed[..], "{}", ctx.func.display());
        verifies(&ctx.func);
    }

    /// `let n = 6; if x < n { f(x, x, n) /* cold */ } else { f(x, x, n) }`:
    /// the cold call gets a constant 6 of its own, made in its block; the
    /// hot call keeps `n` (made again there, it measured worse: see the
    /// function's comment).
    #[test]
    fn a_cold_call_remakes_a_constant_made_in_another_block() {
        let mut n = None;
        let mut ctx = function(|b, [_, cold, hot], x| {
            let f = callee(b);
            let six = b.ins().iconst(types::I64, 6);
            n = Some(six);
            let lt = b.ins().icmp(IntCC::UnsignedLessThan, x, six);
            b.ins().brif(lt, cold, &[], hot, &[]);
            b.set_cold_block(cold);
            for block in [cold, hot] {
                b.switch_to_block(block);
                b.ins().call(f, &[x, x, six]);
                b.ins().return_(&[x]);
            }
        });
        let six = n.unwrap();
        let blocks: Vec<Block> = ctx.func.layout.blocks().collect();
        let (cold, hot) = (blocks[1], blocks[2]);
        // Per call: `x`, read by both argument slots and the return, is
        // copied twice; the cold call's constant is made again.
        assert_eq!(isolate(&mut ctx.func), 5);
        let remade = call_args(&ctx.func, cold)[2];
        assert_ne!(remade, six, "{}", ctx.func.display());
        let ValueDef::Result(def, _) = ctx.func.dfg.value_def(remade) else {
            panic!("not an instruction's result: {}", ctx.func.display());
        };
        assert_eq!(ctx.func.layout.inst_block(def), Some(cold));
        assert_eq!(
            ctx.func.dfg.insts[def],
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm: 6.into()
            }
        );
        assert_eq!(call_args(&ctx.func, hot)[2], six, "{}", ctx.func.display());
        verifies(&ctx.func);
    }
}
