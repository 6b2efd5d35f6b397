//! Addresses as a base value plus a constant, as the passes over CLIF that
//! reason about memory see them (`store_forwarding`, `dead_slot_stores`,
//! `partial_inline`): the chain of `iadd x, iconst` that the translator
//! and the e-graph pass leave in front of an access is followed back to
//! the value it starts from.

use cranelift_codegen::ir::{Function, Inst, InstructionData, Opcode, StackSlot, Value};

use crate::clif_walk;
use crate::decided_branches::with_constant;

/// How many `iadd x, iconst` steps an address is followed through.
const MAX_STEPS: usize = 4;

/// The largest offset from a base followed: far below the range where two
/// offsets' byte ranges could meet by wrapping around the address space.
const MAX_OFFSET: u64 = 1 << 40;

/// `addr + offset` as a base value and a constant: `iadd x, iconst c`
/// (either order) is followed to `x` with `c` added, a few steps deep,
/// while the sum stays within [`MAX_OFFSET`].
pub(crate) fn split(func: &Function, addr: Value, offset: i64) -> (Value, i64) {
    let (mut base, mut off) = (func.dfg.resolve_aliases(addr), offset);
    for _ in 0..MAX_STEPS {
        let Some((next, c)) = func.dfg.value_def(base).inst().and_then(|d| step(func, d)) else {
            break;
        };
        let Some(sum) = off
            .checked_add(c)
            .filter(|s| s.unsigned_abs() <= MAX_OFFSET)
        else {
            break;
        };
        (base, off) = (next, sum);
    }
    (base, off)
}

/// `(x, c)` when `inst` is `iadd x, c` or `iadd c, x` with `c` a constant.
pub(crate) fn step(func: &Function, inst: Inst) -> Option<(Value, i64)> {
    with_constant(func, inst, Opcode::Iadd)
}

/// The slot `v` points into and the offset from its start, if [`split`]
/// takes `v` back to a `stack_addr`. An address it does not follow that
/// far (a longer chain, a larger offset) is not recognised: passes that
/// must see every address into a slot treat the step that made it as a
/// use of the address before it.
pub(crate) fn into_slot(func: &Function, v: Value) -> Option<(StackSlot, i64)> {
    let (base, off) = split(func, v, 0);
    let inst = func.dfg.value_def(base).inst()?;
    let InstructionData::StackAddr {
        stack_slot, offset, ..
    } = func.dfg.insts[inst]
    else {
        return None;
    };
    Some((stack_slot, off.checked_add(i64::from(i32::from(offset)))?))
}

/// Whether the address of `slot` may reach code that is not a plain access:
/// some use of an address into it, anywhere in `func`, is other than the
/// address of a `load` or of a `store` (an offset added to it is judged
/// where the sum is used, while the sum is still recognised as an address
/// into the slot). Stored as a value, passed to a call or a block, compared
/// or otherwise computed with, the address may be loaded back and the slot
/// written through it where no instruction names the slot.
pub(crate) fn escapes(func: &Function, slot: StackSlot) -> bool {
    clif_walk::insts(func).any(|inst| {
        let derives = step(func, inst).is_some()
            && func
                .dfg
                .inst_results(inst)
                .first()
                .is_some_and(|&r| into_slot(func, r).is_some_and(|(s, _)| s == slot));
        !derives
            && func.dfg.inst_values(inst).any(|v| {
                let v = func.dfg.resolve_aliases(v);
                into_slot(func, v).is_some_and(|(s, _)| s == slot)
                    && !is_access_address(func, inst, v)
            })
    })
}

/// Whether `inst` uses `v` only as the address it loads from or stores at.
fn is_access_address(func: &Function, inst: Inst, v: Value) -> bool {
    let resolve = |x: Value| func.dfg.resolve_aliases(x);
    match func.dfg.insts[inst] {
        InstructionData::Load { arg, .. } => resolve(arg) == v,
        InstructionData::Store {
            args: [value, at], ..
        } => resolve(at) == v && resolve(value) != v,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{InstBuilder, types};

    use super::*;
    use crate::test_ir::function;

    /// `x + c` for each `c`, then the split of that sum.
    fn split_of(c: i64) -> (bool, i64) {
        let mut out = None;
        let ctx = function(|b, [_], x| {
            let k = b.ins().iconst(types::I64, c);
            let sum = b.ins().iadd(x, k);
            b.ins().return_(&[sum]);
            out = Some((x, sum));
        });
        let (x, sum) = out.unwrap();
        let (base, off) = split(&ctx.func, sum, 0);
        (base == x, off)
    }

    #[test]
    fn a_constant_step_is_followed() {
        assert_eq!(split_of(-24), (true, -24));
        assert_eq!(split_of(1 << 40), (true, 1 << 40));
    }

    /// An offset past 2^40 either way is not followed (`i64::MIN`, whose
    /// absolute value does not fit an `i64`, included).
    #[test]
    fn a_huge_offset_is_not_followed() {
        assert_eq!(split_of((1 << 40) + 1), (false, 0));
        assert_eq!(split_of(i64::MIN), (false, 0));
        assert_eq!(split_of(i64::MAX), (false, 0));
    }
}
