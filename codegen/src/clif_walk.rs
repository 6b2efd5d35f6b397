//! Walks over a function's CLIF that the passes share: every instruction
//! in layout order, and how many times each value is used.

use std::collections::HashMap;

use cranelift_codegen::ir::{Function, Inst, Value};

/// Every instruction of `func`, block by block in layout order.
pub(crate) fn insts(func: &Function) -> impl Iterator<Item = Inst> + '_ {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
}

/// How many times each value of `func` is used (by its aliases' resolved
/// value): by instructions' operands, block arguments included.
pub(crate) fn use_counts(func: &Function) -> HashMap<Value, usize> {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    for inst in insts(func) {
        for v in func.dfg.inst_values(inst) {
            *uses.entry(func.dfg.resolve_aliases(v)).or_default() += 1;
        }
    }
    uses
}
