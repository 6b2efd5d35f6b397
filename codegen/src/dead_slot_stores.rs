//! Stores into stack slots that nothing reads.
//!
//! A struct built to be stored (`n[0] = Node { left: l, right: r }`) is a
//! temporary in a stack slot, copied to its destination; once the copy's
//! loads are answered by the stores before them (`crate::store_forwarding`)
//! nothing reads the temporary any more, but its stores stay: Cranelift
//! removes pure instructions without uses, never a store. The same holds
//! for a struct local whose fields the slow part of a split function now
//! takes by value (`crate::partial_inline`).
//!
//! A slot is *write-only* when every use of every address into it (a
//! `stack_addr` of the slot, and an `iadd` of such an address and a
//! constant) is the address of a store: no load, no call, no other
//! arithmetic, no block argument, and no store of the address itself. The
//! bytes of a write-only slot are never observed, so its stores go. (In
//! this Cranelift, `stack_load` and `stack_store` are built as a
//! `stack_addr` and a load or store, so they are seen as such.)

use std::collections::HashSet;

use cranelift_codegen::ir::{Function, Inst, InstructionData, Opcode, StackSlot, Value};

use crate::decided_branches::constant;

/// Removes every store into a write-only slot of `func` (see the module
/// docs); returns how many it removed.
pub fn remove(func: &mut Function) -> usize {
    let insts: Vec<Inst> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .collect();
    let mut stores: Vec<(Inst, StackSlot)> = Vec::new();
    let mut read: HashSet<StackSlot> = HashSet::new();
    for &inst in &insts {
        // An offset added to an address is judged where the sum is used.
        if offset_address(func, inst).is_some_and(|(base, _)| into_slot(func, base).is_some()) {
            continue;
        }
        for v in func.dfg.inst_values(inst) {
            let v = func.dfg.resolve_aliases(v);
            let Some((slot, _)) = into_slot(func, v) else {
                continue;
            };
            match func.dfg.insts[inst] {
                // Stored *at* the address, not the address itself.
                InstructionData::Store {
                    args: [value, at], ..
                } if func.dfg.resolve_aliases(at) == v && func.dfg.resolve_aliases(value) != v => {
                    stores.push((inst, slot));
                }
                _ => {
                    read.insert(slot);
                }
            }
        }
    }
    let mut removed = 0;
    for (inst, slot) in stores {
        if !read.contains(&slot) {
            func.layout.remove_inst(inst);
            removed += 1;
        }
    }
    removed
}

/// How many `iadd x, iconst` steps an address is followed through.
const MAX_ADDRESS_STEPS: usize = 4;

/// The slot `v` points into and the offset from its start, if `v` is a
/// `stack_addr` plus constants (a few `iadd`s deep).
pub(crate) fn into_slot(func: &Function, v: Value) -> Option<(StackSlot, i64)> {
    let mut v = func.dfg.resolve_aliases(v);
    let mut sum = 0i64;
    for _ in 0..=MAX_ADDRESS_STEPS {
        let inst = func.dfg.value_def(v).inst()?;
        if let InstructionData::StackAddr {
            stack_slot, offset, ..
        } = func.dfg.insts[inst]
        {
            return Some((stack_slot, sum.checked_add(i64::from(i32::from(offset)))?));
        }
        let (base, c) = offset_address(func, inst)?;
        sum = sum.checked_add(c)?;
        v = base;
    }
    None
}

/// `(x, c)` when `inst` is `iadd x, c` or `iadd c, x` with `c` a constant
/// (an address and an offset).
fn offset_address(func: &Function, inst: Inst) -> Option<(Value, i64)> {
    let InstructionData::Binary {
        opcode: Opcode::Iadd,
        args: [a, b],
    } = func.dfg.insts[inst]
    else {
        return None;
    };
    let (a, b) = (func.dfg.resolve_aliases(a), func.dfg.resolve_aliases(b));
    match (constant(func, a), constant(func, b)) {
        (_, Some(c)) => Some((a, c)),
        (Some(c), None) => Some((b, c)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, types};

    use super::*;
    use crate::test_ir::{function, verifies};

    fn stores(func: &Function) -> usize {
        func.layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .filter(|&i| func.dfg.insts[i].opcode() == Opcode::Store)
            .count()
    }

    /// A slot written twice (once through `stack_addr + 8`) and read by
    /// `read`: its stores stay unless nothing reads it.
    fn written(read: impl FnOnce(&mut cranelift_frontend::FunctionBuilder, Value)) -> Function {
        function(|b, [_, next, _], x| {
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(MemFlagsData::new(), x, at, 0);
            let eight = b.ins().iconst(types::I64, 8);
            let second = b.ins().iadd(at, eight);
            b.ins().store(MemFlagsData::new(), x, second, 0);
            b.ins().jump(next, &[]);
            b.switch_to_block(next);
            let at = b.ins().stack_addr(types::I64, slot, 0);
            read(b, at);
            b.ins().return_(&[x]);
        })
        .func
    }

    #[test]
    fn stores_nothing_reads_go() {
        let mut func = written(|_, _| {});
        assert_eq!(remove(&mut func), 2);
        verifies(&func);
        assert_eq!(stores(&func), 0);
    }

    #[test]
    fn a_load_keeps_the_stores() {
        let mut func = written(|b, at| {
            b.ins().load(types::I64, MemFlagsData::new(), at, 8);
        });
        assert_eq!(remove(&mut func), 0);
        assert_eq!(stores(&func), 2);
    }

    #[test]
    fn an_address_stored_elsewhere_keeps_the_stores() {
        let mut func = written(|b, at| {
            let other =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
            let there = b.ins().stack_addr(types::I64, other, 0);
            b.ins().store(MemFlagsData::new(), at, there, 0);
        });
        // The other slot is write-only; the first one escaped.
        assert_eq!(remove(&mut func), 1);
        assert_eq!(stores(&func), 2);
    }

    #[test]
    fn a_stack_load_keeps_the_stores() {
        let mut func = written(|b, _| {
            let slot = StackSlot::from_u32(0);
            b.ins().stack_load(types::I64, types::I64, slot, 0);
        });
        assert_eq!(remove(&mut func), 0);
    }

    #[test]
    fn an_address_passed_to_a_block_keeps_the_stores() {
        let mut func = written(|b, at| {
            let join = b.create_block();
            b.append_block_param(join, types::I64);
            b.ins().jump(join, &[at.into()]);
            b.switch_to_block(join);
        });
        assert_eq!(remove(&mut func), 0);
    }
}
