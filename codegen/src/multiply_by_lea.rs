//! Multiplications by 3, 5 and 9 as an add of a shift: one `lea`.
//!
//! Cranelift's x64 backend emits `imul r, x, 3` for `x * 3`, three cycles
//! on the critical path of whatever uses it, where `lea r, [x + x*2]` takes
//! one (and folds a following `+ c` into the same instruction). collatz's
//! odd step `n = 3 * n + 1` was `imul; lea` on its loop-carried chain;
//! gcc emits `lea rax, [rax + rax*2 + 1]`. The backend already lowers
//! `iadd x, (ishl x, k)` for `k <= 3` to one `lea` (the scaled index of an
//! address): this pass rewrites `imul x, c` for `c` in {3, 5, 9} into that
//! shape, after the e-graph pass (whose rules would not look at it again)
//! so that nothing turns it back. The product is the same modulo 2^n, as
//! Cranelift's `imul` wraps and so does the shift and add.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{Function, InstBuilder, InstructionData, Opcode, Value, types};

use crate::decided_branches::constant;

/// Rewrites every `imul` of a 32- or 64-bit value by 3, 5 or 9 (see the
/// module docs); returns how many.
pub fn rewrite(func: &mut Function) -> usize {
    let mut rewritten = 0;
    let mut cur = FuncCursor::new(func);
    while cur.next_block().is_some() {
        while let Some(inst) = cur.next_inst() {
            let InstructionData::Binary {
                opcode: Opcode::Imul,
                args: [a, b],
            } = cur.func.dfg.insts[inst]
            else {
                continue;
            };
            let ty = cur.func.dfg.value_type(cur.func.dfg.first_result(inst));
            if ty != types::I64 && ty != types::I32 {
                continue;
            }
            let Some((x, k)) = scaled(cur.func, a, b).or_else(|| scaled(cur.func, b, a)) else {
                continue;
            };
            // The cursor is at the multiply: the shift goes just before it,
            // and the multiply becomes the add, keeping its result value.
            let amount = cur.ins().iconst(types::I64, k);
            let shifted = cur.ins().ishl(x, amount);
            cur.func.dfg.insts[inst] = InstructionData::Binary {
                opcode: Opcode::Iadd,
                args: [x, shifted],
            };
            rewritten += 1;
        }
    }
    rewritten
}

/// `(x, k)` when `factor` is the constant `2^k + 1` with `1 <= k <= 3`.
fn scaled(func: &Function, x: Value, factor: Value) -> Option<(Value, i64)> {
    let k = match constant(func, func.dfg.resolve_aliases(factor))? {
        3 => 1,
        5 => 2,
        9 => 3,
        _ => return None,
    };
    Some((func.dfg.resolve_aliases(x), k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ir::{function, verifies};

    /// The function `fn(x) -> x * c`, rewritten.
    fn multiply(c: i64) -> (Function, usize) {
        let mut ctx = function(|b, [_], x| {
            let c = b.ins().iconst(types::I64, c);
            let y = b.ins().imul(c, x);
            b.ins().return_(&[y]);
        });
        let n = rewrite(&mut ctx.func);
        verifies(&ctx.func);
        (ctx.func, n)
    }

    #[test]
    fn three_five_and_nine_become_an_add_of_a_shift() {
        for (c, k) in [(3, 1), (5, 2), (9, 3)] {
            let (func, n) = multiply(c);
            assert_eq!(n, 1, "{func}");
            let text = func.display().to_string();
            assert!(!text.contains("imul"), "{text}");
            assert!(text.contains(&format!("iconst.i64 {k}")), "{text}");
            assert!(text.contains("ishl") && text.contains("iadd"), "{text}");
        }
    }

    #[test]
    fn other_factors_stay_multiplies() {
        for c in [2, 4, 6, 7, 56, -3] {
            let (func, n) = multiply(c);
            assert_eq!(n, 0, "{func}");
            assert!(func.display().to_string().contains("imul"));
        }
    }
}
