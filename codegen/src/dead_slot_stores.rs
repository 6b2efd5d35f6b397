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

use cranelift_codegen::ir::{Function, Inst, InstructionData, StackSlot};

use crate::address::{self, into_slot};
use crate::clif_walk;

/// Removes every store into a write-only slot of `func` (see the module
/// docs); returns how many it removed.
pub fn remove(func: &mut Function) -> usize {
    let insts: Vec<Inst> = clif_walk::insts(func).collect();
    let mut stores: Vec<(Inst, StackSlot)> = Vec::new();
    let mut read: HashSet<StackSlot> = HashSet::new();
    for &inst in &insts {
        // An offset added to an address is judged where the sum is used,
        // when the sum is still recognised as an address into the slot;
        // else adding it is a use of the address (the slot is read).
        if address::step(func, inst).is_some()
            && func
                .dfg
                .inst_results(inst)
                .first()
                .is_some_and(|&r| into_slot(func, r).is_some())
        {
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

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{
        InstBuilder, MemFlagsData, Opcode, StackSlotData, StackSlotKind, Value, types,
    };

    use super::*;
    use crate::test_ir::{count, function, verifies};

    fn stores(func: &Function) -> usize {
        count(func, Opcode::Store)
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

    /// An address five constant steps from the slot is past what
    /// `address::split` follows: the step that made it counts as a read.
    #[test]
    fn a_load_through_a_long_chain_keeps_the_stores() {
        let mut func = written(|b, at| {
            let mut p = at;
            for _ in 0..5 {
                let one = b.ins().iconst(types::I64, 1);
                p = b.ins().iadd(p, one);
            }
            b.ins().load(types::I8, MemFlagsData::new(), p, 0);
        });
        assert_eq!(remove(&mut func), 0);
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
