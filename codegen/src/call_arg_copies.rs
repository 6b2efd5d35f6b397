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
//! worse (towers +2.4 %, measured before the one-use rule). The figures are
//! in docs/backend.md.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, Opcode, Value, ValueDef, types};

/// Replaces each call's 64-bit arguments that have other uses by a copy made
/// just before the call; returns how many were copied. Constants are not
/// copied (they are materialized at the call already).
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
    use cranelift_codegen::ir::{AbiParam, ExtFuncData, ExternalName, Signature, UserExternalName};
    use cranelift_codegen::isa::CallConv;

    use super::*;
    use crate::test_ir::function;

    /// `fn(x) { let y = x + 1; f(x, y, 7); return x }`: `x` lives on after
    /// the call, `y` is read only by it, `7` is a constant.
    #[test]
    fn only_an_argument_that_lives_on_elsewhere_is_copied() {
        let mut passed = Vec::new();
        let mut ctx = function(|b, [_], x| {
            let mut sig = Signature::new(CallConv::SystemV);
            sig.params.extend([AbiParam::new(types::I64); 3]);
            let sig = b.import_signature(sig);
            let name = b
                .func
                .declare_imported_user_function(UserExternalName::new(0, 0));
            let callee = b.import_function(ExtFuncData {
                name: ExternalName::user(name),
                signature: sig,
                colocated: false,
                patchable: false,
            });
            let y = b.ins().iadd_imm_s(x, 1);
            let seven = b.ins().iconst(types::I64, 7);
            b.ins().call(callee, &[x, y, seven]);
            passed = vec![y, seven];
            b.ins().return_(&[x]);
        });
        let x = ctx
            .func
            .dfg
            .block_params(ctx.func.layout.entry_block().unwrap())[0];
        assert_eq!(isolate(&mut ctx.func), 1);
        let call = ctx
            .func
            .layout
            .block_insts(ctx.func.layout.entry_block().unwrap())
            .find(|&i| ctx.func.dfg.insts[i].opcode() == Opcode::Call)
            .unwrap();
        let args = ctx.func.dfg.inst_args(call).to_vec();
        // The first argument is now `iadd x, 0`; the others are unchanged.
        let ValueDef::Result(def, _) = ctx.func.dfg.value_def(args[0]) else {
            panic!("not copied: {}", ctx.func.display());
        };
        assert_eq!(ctx.func.dfg.insts[def].opcode(), Opcode::Iadd);
        assert_eq!(ctx.func.dfg.inst_args(def)[0], x);
        assert_eq!(args[1..], passed[..], "{}", ctx.func.display());
        cranelift_codegen::verify_function(
            &ctx.func,
            &cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder()),
        )
        .expect("the function with copies verifies");
    }
}
