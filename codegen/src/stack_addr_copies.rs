//! A stack slot's address remade where remaking it is free, not kept in a
//! register across calls.
//!
//! The e-graph pass makes one `stack_addr` for all the uses of a slot's
//! address and hoists it out of loops: the address of a local struct
//! passed by `ref` to every call in a loop (a `slice_pool::Pool`) is then
//! one value live across the whole loop and every call in it. Across a
//! call a value needs a callee-saved register or a spill slot, and
//! regalloc2 does not rematerialize: the address took one of the five
//! callee-saved registers, or was stored and reloaded every iteration,
//! and the loop's own values (its counter, a seed) went to the stack
//! instead.
//!
//! Two rewrites, after the e-graph pass (which would merge the copies
//! again; the rest of the pipeline runs at `opt_level=none`):
//!
//! * a field's address, `iadd` of a slot's address and a constant, becomes
//!   the slot's address at the field's offset (one `lea` either way, but
//!   off the stack pointer, not off a register holding the slot's address);
//! * a use of a slot's address gets a copy made just before it when the
//!   copy costs nothing: as the address of a load or a store (the backend
//!   folds the slot's offset into the access: `mov 0x50(%rsp)`) or as a call's
//!   argument (the copy is the `lea` into the argument's register, where the
//!   call needed a move anyway). A use in the defining block before any
//!   call keeps the original. Other uses (an address indexed by a
//!   variable, a value stored) keep it too: there a copy would be one more
//!   `lea` (measured: `fragmented/8`'s builtin loop two more instructions
//!   an iteration, the slots' array address it had kept in a register
//!   without a spill).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::immediates::Offset32;
use cranelift_codegen::ir::{
    Function, Inst, InstBuilder, InstructionData, Opcode, StackSlot, Value, types,
};

use crate::address;

/// Makes every field address a slot address and gives every free use of
/// a slot's address its own copy (see the module docs); returns how many
/// copies it made.
pub fn remake(func: &mut Function) -> usize {
    let slots = fields_as_slots(func);
    if slots.is_empty() {
        return 0;
    }
    let mut made = 0;
    // Slot addresses made in the cursor's block since its last call.
    let mut here: HashSet<Value> = HashSet::new();
    let mut cur = FuncCursor::new(func);
    while cur.next_block().is_some() {
        here.clear();
        while let Some(inst) = cur.next_inst() {
            for k in free_args(cur.func, inst) {
                let v = cur
                    .func
                    .dfg
                    .resolve_aliases(cur.func.dfg.inst_args(inst)[k]);
                let Some(&(slot, offset)) = slots.get(&v) else {
                    continue;
                };
                if here.contains(&v) {
                    continue;
                }
                // The cursor is at the use: the copy goes just before it.
                let copy = cur.ins().stack_addr(types::I64, slot, offset);
                cur.func.dfg.inst_args_mut(inst)[k] = copy;
                made += 1;
            }
            let op = cur.func.dfg.insts[inst].opcode();
            if op.is_call() {
                here.clear();
            } else if op == Opcode::StackAddr {
                here.insert(cur.func.dfg.first_result(inst));
            }
        }
    }
    made
}

/// Rewrites each `iadd` of a slot's address and a constant into the
/// slot's address at the sum's offset, in place (its value stays);
/// returns every 64-bit slot address of `func`, by value.
fn fields_as_slots(func: &mut Function) -> HashMap<Value, (StackSlot, Offset32)> {
    let mut slots: HashMap<Value, (StackSlot, Offset32)> = HashMap::new();
    let mut cur = FuncCursor::new(func);
    while cur.next_block().is_some() {
        while let Some(inst) = cur.next_inst() {
            let at = if let InstructionData::StackAddr {
                opcode: Opcode::StackAddr,
                stack_slot,
                offset,
            } = cur.func.dfg.insts[inst]
            {
                (stack_slot, offset)
            } else if let Some(at) =
                address::step(cur.func, inst).and_then(|(base, k)| field_of(&slots, base, k))
            {
                cur.func.dfg.insts[inst] = InstructionData::StackAddr {
                    opcode: Opcode::StackAddr,
                    stack_slot: at.0,
                    offset: at.1,
                };
                at
            } else {
                continue;
            };
            let v = cur.func.dfg.first_result(inst);
            if cur.func.dfg.value_type(v) == types::I64 {
                slots.insert(v, at);
            }
        }
    }
    slots
}

/// The slot and offset of `base + k` when `base` is a slot's address and
/// the sum stays within `0..=i32::MAX` (the backend takes a slot's offset
/// as unsigned: a sum below the slot stays a sum).
fn field_of(
    slots: &HashMap<Value, (StackSlot, Offset32)>,
    base: Value,
    k: i64,
) -> Option<(StackSlot, Offset32)> {
    let &(slot, offset) = slots.get(&base)?;
    let sum = i32::try_from(i64::from(i32::from(offset)).checked_add(k)?).ok()?;
    (sum >= 0).then(|| (slot, Offset32::new(sum)))
}

/// The positions, among `inst`'s arguments, where a slot's address costs
/// nothing to remake: a load's or store's address, a call's arguments.
fn free_args(func: &Function, inst: Inst) -> Range<usize> {
    let n = func.dfg.inst_args(inst).len();
    match func.dfg.insts[inst] {
        InstructionData::Load { .. } => 0..1,
        InstructionData::Store { .. } => 1..2,
        InstructionData::Call { .. } => 0..n,
        // The callee is not an argument.
        InstructionData::CallIndirect { .. } => 1..n,
        _ => 0..0,
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{Block, MemFlagsData, StackSlotData, StackSlotKind, ValueDef};

    use super::*;
    use crate::test_ir::{count, function, import, verifies};

    /// The slot and offset of the `stack_addr` that defines `v`, if one does.
    fn slot_address(func: &Function, v: Value) -> Option<(StackSlot, i32)> {
        let ValueDef::Result(def, _) = func.dfg.value_def(v) else {
            return None;
        };
        match func.dfg.insts[def] {
            InstructionData::StackAddr {
                stack_slot, offset, ..
            } => Some((stack_slot, offset.into())),
            _ => None,
        }
    }

    /// The block of the instruction that defines `v`.
    fn def_block(func: &Function, v: Value) -> Option<Block> {
        let ValueDef::Result(def, _) = func.dfg.value_def(v) else {
            return None;
        };
        func.layout.inst_block(def)
    }

    /// `let p = &slot + 8; return *p`: the field's address becomes the
    /// slot's address at offset 8, and its load, in the defining block
    /// before any call, keeps it (no copy).
    #[test]
    fn a_field_address_becomes_the_slots_address_at_its_offset() {
        let mut field = None;
        let mut ctx = function(|b, [_], _| {
            let ss =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let a = b.ins().stack_addr(types::I64, ss, 0);
            let p = b.ins().iadd_imm_s(a, 8);
            field = Some((ss, p));
            let v = b.ins().load(types::I64, MemFlagsData::new(), p, 0);
            b.ins().return_(&[v]);
        });
        let (ss, p) = field.unwrap();
        assert_eq!(remake(&mut ctx.func), 0);
        assert_eq!(
            slot_address(&ctx.func, p),
            Some((ss, 8)),
            "{}",
            ctx.func.display()
        );
        verifies(&ctx.func);
    }

    /// `&slot + 8 - 16`: the first sum becomes the slot's address at 8;
    /// the second, below the slot, stays an `iadd` (the backend takes a
    /// slot's offset as unsigned).
    #[test]
    fn a_sum_below_the_slot_stays_a_sum() {
        let mut sums = None;
        let mut ctx = function(|b, [_], _| {
            let ss =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
            let a = b.ins().stack_addr(types::I64, ss, 0);
            let p = b.ins().iadd_imm_s(a, 8);
            let q = b.ins().iadd_imm_s(p, -16);
            sums = Some((ss, p, q));
            b.ins().return_(&[q]);
        });
        let (ss, p, q) = sums.unwrap();
        remake(&mut ctx.func);
        assert_eq!(
            slot_address(&ctx.func, p),
            Some((ss, 8)),
            "{}",
            ctx.func.display()
        );
        assert_eq!(slot_address(&ctx.func, q), None, "{}", ctx.func.display());
        verifies(&ctx.func);
    }

    /// A slot's address `a`, used in its block by a call, then by a load
    /// after that call; in a second block by a store's address, a call's
    /// argument, a stored value and a variable index. The load after the
    /// call, the store's address and the second call get copies made just
    /// before them, in their blocks; the stored value and the index keep `a`.
    #[test]
    fn loads_stores_and_calls_after_a_call_or_in_another_block_get_copies() {
        let mut made = None;
        let mut ctx = function(|b, [_, next], x| {
            let f = import(b, 0, 1, 0);
            let ss =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3));
            let a = b.ins().stack_addr(types::I64, ss, 16);
            b.ins().call(f, &[a]);
            let v = b.ins().load(types::I64, MemFlagsData::new(), a, 8);
            b.ins().jump(next, &[]);
            b.switch_to_block(next);
            b.ins().store(MemFlagsData::new(), v, a, 0);
            b.ins().call(f, &[a]);
            b.ins().store(MemFlagsData::new(), a, a, 24);
            let at = b.ins().iadd(a, x);
            let w = b.ins().load(types::I64, MemFlagsData::new(), at, 0);
            b.ins().return_(&[w]);
            made = Some((ss, a, next));
        });
        let (ss, a, next) = made.unwrap();
        assert_eq!(remake(&mut ctx.func), 4, "{}", ctx.func.display());
        let entry = ctx.func.layout.entry_block().unwrap();
        // The address each access or call of the two blocks reads (for a
        // store, its address; the third store's value is checked below).
        let mut read = Vec::new();
        for block in [entry, next] {
            for inst in ctx.func.layout.block_insts(block) {
                let args = ctx.func.dfg.inst_args(inst);
                match ctx.func.dfg.insts[inst].opcode() {
                    Opcode::Load | Opcode::Call => read.push((block, args[0])),
                    Opcode::Store => read.push((block, args[1])),
                    _ => {}
                }
            }
        }
        let copy = |v: Value, block: Block| {
            v != a
                && slot_address(&ctx.func, v) == Some((ss, 16))
                && def_block(&ctx.func, v) == Some(block)
        };
        assert_eq!(read.len(), 6, "{}", ctx.func.display());
        assert_eq!(read[0], (entry, a), "the first call");
        assert!(copy(read[1].1, entry), "the load after the call");
        assert!(copy(read[2].1, next), "the store's address");
        assert!(copy(read[3].1, next), "the second call");
        assert!(copy(read[4].1, next), "the third store's address");
        // The index's sum keeps `a`, and so does the value stored.
        let store = ctx
            .func
            .layout
            .block_insts(next)
            .filter(|&i| ctx.func.dfg.insts[i].opcode() == Opcode::Store)
            .nth(1)
            .unwrap();
        assert_eq!(ctx.func.dfg.inst_args(store)[0], a);
        assert_eq!(count(&ctx.func, Opcode::StackAddr), 5);
        verifies(&ctx.func);
    }
}
