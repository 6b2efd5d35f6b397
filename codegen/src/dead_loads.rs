//! Loads whose values nothing uses.
//!
//! A slice is two words, and reading one from memory loads both even when
//! the code uses one: `len(s.items)` needs the length, `unsafe::addr(p.nodes)`
//! (every `slice_pool` call passes its node array so) the pointer. The
//! e-graph pass drops an unused pure instruction, but a load is pure to it
//! only when it is `readonly` (Tern's memory is written), and the lowering
//! emits every load, used or not, since a load may trap. In a program
//! without `unsafe::` no load can: every address it computes lies in memory
//! it owns (docs/language.md, section 15). So an unused load goes, and so
//! does a load whose value only fed loads that went. With `unsafe::`, an
//! unused load of an address the program does not own no longer faults,
//! as a C compiler drops such a load too.
//!
//! Atomic loads stay (they order other accesses), and so does every other
//! instruction: a call's result unused is still a call.

use std::collections::HashMap;

use crate::clif_walk;
use cranelift_codegen::ir::{Function, Inst, Opcode, Value, ValueDef};

/// Whether `op` is a plain load: its only effect is its value.
pub(crate) fn plain_load(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Load
            | Opcode::Uload8
            | Opcode::Sload8
            | Opcode::Uload16
            | Opcode::Sload16
            | Opcode::Uload32
            | Opcode::Sload32
    )
}

/// Removes every plain load of `func` whose results nothing uses, and
/// then every load only those fed (see the module docs); returns how many
/// it removed. Linear in the function: uses are counted once, and a
/// removal uncounts the uses of its operands.
pub fn remove(func: &mut Function) -> usize {
    let insts: Vec<Inst> = clif_walk::insts(func).collect();
    let mut uses = clif_walk::use_counts(func);
    let unused = |func: &Function, uses: &HashMap<Value, usize>, inst: Inst| {
        plain_load(func.dfg.insts[inst].opcode())
            && func.dfg.inst_results(inst).iter().all(|r| {
                uses.get(&func.dfg.resolve_aliases(*r))
                    .is_none_or(|&n| n == 0)
            })
    };
    let mut dead: Vec<Inst> = insts
        .into_iter()
        .filter(|&i| unused(func, &uses, i))
        .collect();
    let mut removed = 0;
    while let Some(inst) = dead.pop() {
        let operands: Vec<Value> = func
            .dfg
            .inst_values(inst)
            .map(|v| func.dfg.resolve_aliases(v))
            .collect();
        func.layout.remove_inst(inst);
        removed += 1;
        for v in operands {
            let n = uses.get_mut(&v).expect("counted above");
            *n -= 1;
            if *n == 0
                && let ValueDef::Result(def, _) = func.dfg.value_def(v)
                && func.layout.inst_block(def).is_some()
                && unused(func, &uses, def)
            {
                dead.push(def);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Opcode, types};

    use super::*;
    use crate::test_ir::{count, function, verifies};

    #[test]
    fn an_unused_load_goes_and_a_used_one_stays() {
        let mut func = function(|b, [_], x| {
            let _unused = b.ins().load(types::I64, MemFlagsData::new(), x, 8);
            let used = b.ins().load(types::I64, MemFlagsData::new(), x, 0);
            b.ins().return_(&[used]);
        })
        .func;
        assert_eq!(remove(&mut func), 1);
        verifies(&func);
        assert_eq!(count(&func, Opcode::Load), 1);
    }

    /// A pointer loaded only to load through it goes with that load.
    #[test]
    fn a_chain_of_unused_loads_goes_whole() {
        let mut func = function(|b, [_], x| {
            let p = b.ins().load(types::I64, MemFlagsData::new(), x, 0);
            let _q = b.ins().uload8(types::I64, MemFlagsData::new(), p, 3);
            b.ins().return_(&[x]);
        })
        .func;
        assert_eq!(remove(&mut func), 2);
        verifies(&func);
        assert_eq!(count(&func, Opcode::Load) + count(&func, Opcode::Uload8), 0);
    }

    /// A value passed to another block, stored or returned is used there.
    #[test]
    fn loads_used_as_block_arguments_stored_or_returned_stay() {
        let mut func = function(|b, [_, join], x| {
            b.append_block_param(join, types::I64);
            let a = b.ins().load(types::I64, MemFlagsData::new(), x, 0);
            let s = b.ins().load(types::I64, MemFlagsData::new(), x, 8);
            b.ins().store(MemFlagsData::new(), s, x, 16);
            b.ins().jump(join, &[a.into()]);
            b.switch_to_block(join);
            let r = b.ins().load(types::I64, MemFlagsData::new(), x, 24);
            b.ins().return_(&[r]);
        })
        .func;
        assert_eq!(remove(&mut func), 0);
        assert_eq!(count(&func, Opcode::Load), 3);
    }

    #[test]
    fn an_unused_atomic_load_stays() {
        let mut func = function(|b, [_], x| {
            b.ins().atomic_load(types::I64, MemFlagsData::new(), x);
            b.ins().return_(&[x]);
        })
        .func;
        assert_eq!(remove(&mut func), 0);
        assert_eq!(count(&func, Opcode::AtomicLoad), 1);
    }
}
