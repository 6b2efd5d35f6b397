//! Byte loads of consecutive addresses, combined into one wider load.
//!
//! Reading a little-endian word from bytes, `b[at] as i64 | (b[at + 1] as
//! i64) << 8 | ...`, loads each byte, widens it, shifts it into place and
//! ors it in: four instructions a byte where the machine reads the word
//! with one. Once `merged_index_checks` has made the index checks between
//! those loads two tests before them, the loads follow each other straight,
//! and an `or` of 2, 4 or 8 such bytes (the byte at `a + j` shifted by `8 *
//! j`, every `j` once) becomes one zero-extending load of that many bytes
//! at `a` on a little-endian target.
//!
//! The wide load stands where the last byte load did: the `or` that ends
//! the expression is moved there and becomes the load, so every use of its
//! value sees it. Between the first byte load and the last only pure
//! arithmetic, other plain loads and branches may stand (no store, call or
//! trapping instruction), in the last one's block and, going back, in
//! blocks each entered only from the one before (by a `jump`, or a `brif`
//! whose other way leaves): one path leads through the byte loads. Every
//! byte the wide load reads was read on that path by a byte load (whose
//! index was checked), so it reads no memory the program did not: a program
//! without `unsafe::` still never reads outside what it owns. The byte
//! loads, their widenings, shifts and inner `or`s had no other use, and go.

use std::collections::HashSet;

use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    Endianness, Function, Inst, InstBuilder, InstructionData, MemFlagsData, Opcode, Value,
    ValueDef, types,
};

use crate::clif_walk::{insts, use_counts};
use crate::dead_loads::plain_load;
use crate::decided_branches::{constant, same};

/// How many instructions are walked back from an `or` to find its loads.
const MAX_WALK: usize = 64;

/// How many terms (besides a constant) an address may add up.
const MAX_TERMS: usize = 4;

/// One byte of the expression: `(load, widening, shift)` instructions and
/// the bits it is shifted by.
struct Byte {
    load: Inst,
    extend: Option<Inst>,
    shift: Option<Inst>,
    bits: i64,
}

/// Combines every such expression of `func` (see the module docs); returns
/// how many wide loads it made. `native` is the target's byte order: only a
/// little-endian one is combined. `cfg` must be current.
pub fn combine(func: &mut Function, cfg: &ControlFlowGraph, native: Endianness) -> usize {
    if native != Endianness::Little {
        return 0;
    }
    let uses = use_counts(func);
    let ors: Vec<Inst> = insts(func)
        .filter(|&i| func.dfg.insts[i].opcode() == Opcode::Bor)
        .collect();
    let single = |v: Value| uses.get(&v).copied() == Some(1);
    // An `or` used once by another `or` is tried as part of that one first.
    let inner: HashSet<Value> = ors
        .iter()
        .flat_map(|&i| func.dfg.inst_args(i).to_vec())
        .map(|v| func.dfg.resolve_aliases(v))
        .filter(|&v| single(v) && defined_by(func, v, Opcode::Bor))
        .collect();
    let mut combined = 0;
    let mut work: Vec<Inst> = ors
        .into_iter()
        .filter(|&i| !inner.contains(&func.dfg.first_result(i)))
        .rev()
        .collect();
    while let Some(root) = work.pop() {
        if func.layout.inst_block(root).is_none() {
            continue;
        }
        if combine_at(func, cfg, &single, root) {
            combined += 1;
            continue;
        }
        // Not as a whole: its inner `or`s may be on their own.
        for v in func.dfg.inst_args(root).to_vec() {
            let v = func.dfg.resolve_aliases(v);
            if single(v) && defined_by(func, v, Opcode::Bor) {
                work.extend(func.dfg.value_def(v).inst());
            }
        }
    }
    combined
}

/// Whether `v` is the result of an `op` instruction.
fn defined_by(func: &Function, v: Value, op: Opcode) -> bool {
    matches!(func.dfg.value_def(v), ValueDef::Result(i, 0) if func.dfg.insts[i].opcode() == op)
}

/// Makes the `or` at `root` one wide load when it is such an expression.
fn combine_at(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    single: &impl Fn(Value) -> bool,
    root: Inst,
) -> bool {
    let ty = func.dfg.value_type(func.dfg.first_result(root));
    let mut bytes = Vec::new();
    let mut inner = Vec::new();
    if !gather(func, single, root, &mut bytes, &mut inner) {
        return false;
    }
    let n = bytes.len();
    let wide = match (n, ty) {
        (2 | 4, types::I32) | (2 | 4 | 8, types::I64) => n,
        _ => return false,
    };
    bytes.sort_by_key(|b| b.bits);
    if bytes
        .iter()
        .enumerate()
        .any(|(j, b)| b.bits != 8 * j as i64)
    {
        return false;
    }
    let (first_addr, first_offset, flags) = load_parts(func, bytes[0].load);
    if flags.aligned() || flags.explicit_endianness() == Some(Endianness::Big) {
        return false;
    }
    let (terms, k0) = match sum(func, first_addr, first_offset) {
        Some(s) => s,
        None => return false,
    };
    for (j, b) in bytes.iter().enumerate().skip(1) {
        let (addr, offset, f) = load_parts(func, b.load);
        let Some((t, k)) = sum(func, addr, offset) else {
            return false;
        };
        if f != flags
            || k0.checked_add(j as i64) != Some(k)
            || t.len() != terms.len()
            || t.iter().zip(&terms).any(|(&x, &y)| !same(func, x, y))
        {
            return false;
        }
    }
    // The load the others lie behind, walking back (the last to run).
    let loads: Vec<Inst> = bytes.iter().map(|b| b.load).collect();
    let Some(&last) = loads.iter().find(|&&l| {
        let others = loads.iter().copied().filter(|&o| o != l).collect();
        straight(func, cfg, l, others)
    }) else {
        return false;
    };
    // The `or`'s instruction becomes the wide load, right after the last
    // byte load: its value is the `or`'s, and every use of it is dominated
    // by that load, whose value the `or` used.
    let after = func
        .layout
        .next_inst(last)
        .expect("a load is not a terminator");
    if after != root {
        func.layout.remove_inst(root);
        func.layout.insert_inst(root, after);
    }
    let pos = func.replace(root);
    let _ = match (wide, ty) {
        (2, t) => pos.uload16(t, flags, first_addr, first_offset),
        (4, types::I64) => pos.uload32(flags, first_addr, first_offset),
        (_, t) => pos.load(t, flags, first_addr, first_offset),
    };
    for b in &bytes {
        for inst in [b.shift, b.extend, Some(b.load)].into_iter().flatten() {
            func.layout.remove_inst(inst);
        }
    }
    for inst in inner {
        func.layout.remove_inst(inst);
    }
    true
}

/// The bytes `or`ed together by the `or` at `inst` (through inner `or`s
/// used only there, collected in `inner`), at most 8; false when a leaf is
/// not a byte load, widened and shifted by a constant, used only there.
fn gather(
    func: &Function,
    single: &impl Fn(Value) -> bool,
    inst: Inst,
    bytes: &mut Vec<Byte>,
    inner: &mut Vec<Inst>,
) -> bool {
    for v in func.dfg.inst_args(inst).to_vec() {
        let v = func.dfg.resolve_aliases(v);
        let ValueDef::Result(def, 0) = func.dfg.value_def(v) else {
            return false;
        };
        if !single(v) {
            return false;
        }
        if func.dfg.insts[def].opcode() == Opcode::Bor {
            inner.push(def);
            if !gather(func, single, def, bytes, inner) {
                return false;
            }
            continue;
        }
        let Some(byte) = byte(func, single, def) else {
            return false;
        };
        if bytes.len() == 8 {
            return false;
        }
        bytes.push(byte);
    }
    true
}

/// `def` as one byte of the expression: `ishl x, c` with `c` a constant or
/// `x` alone, `x` a byte load zero-extended (`uload8`, or `uextend` of a
/// `load.i8`), each used only by the next.
fn byte(func: &Function, single: &impl Fn(Value) -> bool, def: Inst) -> Option<Byte> {
    let (shift, bits, x) = match func.dfg.insts[def] {
        InstructionData::Binary {
            opcode: Opcode::Ishl,
            args: [x, c],
        } => (Some(def), constant(func, c)?, func.dfg.resolve_aliases(x)),
        _ => (None, 0, func.dfg.first_result(def)),
    };
    if shift.is_some() && !single(x) {
        return None;
    }
    let inst = func.dfg.value_def(x).inst()?;
    match func.dfg.insts[inst] {
        InstructionData::Load {
            opcode: Opcode::Uload8,
            ..
        } => Some(Byte {
            load: inst,
            extend: None,
            shift,
            bits,
        }),
        InstructionData::Unary {
            opcode: Opcode::Uextend,
            arg,
        } => {
            let arg = func.dfg.resolve_aliases(arg);
            let load = func.dfg.value_def(arg).inst()?;
            let is_byte = matches!(
                func.dfg.insts[load],
                InstructionData::Load {
                    opcode: Opcode::Load,
                    ..
                }
            ) && func.dfg.value_type(arg) == types::I8;
            (is_byte && single(arg)).then_some(Byte {
                load,
                extend: Some(inst),
                shift,
                bits,
            })
        }
        _ => None,
    }
}

/// A load's address operand, offset and flags.
fn load_parts(func: &Function, load: Inst) -> (Value, i32, MemFlagsData) {
    match func.dfg.insts[load] {
        InstructionData::Load {
            arg, offset, flags, ..
        } => (
            func.dfg.resolve_aliases(arg),
            offset.into(),
            func.dfg.mem_flags[flags],
        ),
        _ => unreachable!("`byte` accepts loads only"),
    }
}

/// `addr + offset` as the values it adds up (through `iadd`s, left to
/// right, at most [`MAX_TERMS`]) and a constant.
fn sum(func: &Function, addr: Value, offset: i32) -> Option<(Vec<Value>, i64)> {
    let mut terms = Vec::new();
    let mut k = i64::from(offset);
    let mut todo = vec![addr];
    while let Some(v) = todo.pop() {
        let v = func.dfg.resolve_aliases(v);
        if let Some(c) = constant(func, v) {
            k = k.checked_add(c)?;
        } else if let ValueDef::Result(i, 0) = func.dfg.value_def(v)
            && let InstructionData::Binary {
                opcode: Opcode::Iadd,
                args: [a, b],
            } = func.dfg.insts[i]
            && terms.len() + todo.len() < MAX_TERMS
        {
            todo.push(b);
            todo.push(a);
        } else {
            terms.push(v);
        }
        if terms.len() > MAX_TERMS {
            return None;
        }
    }
    Some((terms, k))
}

/// Whether every one of `loads` is met walking back from `from` before
/// anything but pure arithmetic and plain loads, in `from`'s block and in
/// blocks each entered only from the one before (by a `jump` or `brif`),
/// so that one path leads from the loads to `from`.
fn straight(func: &Function, cfg: &ControlFlowGraph, from: Inst, mut loads: Vec<Inst>) -> bool {
    let mut at = func.layout.prev_inst(from);
    let mut block = func.layout.inst_block(from).expect("in the layout");
    for _ in 0..MAX_WALK {
        let inst = match at {
            Some(i) => i,
            None => {
                // The block's start: go on into its only predecessor (one
                // path leads from there to here) when it ends in a plain
                // branch.
                let mut preds = cfg.pred_iter(block);
                let (Some(p), None) = (preds.next(), preds.next()) else {
                    return false;
                };
                if !matches!(func.dfg.insts[p.inst].opcode(), Opcode::Jump | Opcode::Brif) {
                    return false;
                }
                block = p.block;
                at = func.layout.prev_inst(p.inst);
                continue;
            }
        };
        loads.retain(|&l| l != inst);
        if loads.is_empty() {
            return true;
        }
        let op = func.dfg.insts[inst].opcode();
        let pure = !(op.can_store()
            || op.is_call()
            || op.other_side_effects()
            || op.can_trap()
            || op.is_branch()
            || op.is_terminator());
        if !(pure || plain_load(op)) {
            return false;
        }
        at = func.layout.prev_inst(inst);
    }
    false
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::Context;
    use cranelift_codegen::ir::{Block, MemFlagsData, types};
    use cranelift_frontend::FunctionBuilder;

    use super::*;
    use crate::test_ir::{count, function, verifies};

    /// `b[x + k] << 8 * j` for each `(k, j)`, or'ed in order.
    fn bytes(b: &mut FunctionBuilder, x: Value, at: &[(i64, i64)]) -> Value {
        let mut acc = None;
        for &(k, j) in at {
            let kv = b.ins().iconst(types::I64, k);
            let a = b.ins().iadd(x, kv);
            let l = b.ins().load(types::I8, MemFlagsData::new(), a, 0);
            let w = b.ins().uextend(types::I64, l);
            let v = if j == 0 {
                w
            } else {
                let s = b.ins().iconst(types::I64, 8 * j);
                b.ins().ishl(w, s)
            };
            acc = Some(acc.map_or(v, |a| b.ins().bor(a, v)));
        }
        acc.expect("at least one byte")
    }

    /// `ctx`'s function combined for byte order `order` and verified, with
    /// how many wide loads were made.
    fn combined_in(ctx: Context, order: Endianness) -> (Function, usize) {
        let mut func = ctx.func;
        let n = combine(&mut func, &ctx.cfg, order);
        verifies(&func);
        (func, n)
    }

    /// A function returning what `body` computes, combined.
    fn combined(body: impl FnOnce(&mut FunctionBuilder, Value) -> Value) -> (Function, usize) {
        let ctx = function(|b, [_], x| {
            let v = body(b, x);
            b.ins().return_(&[v]);
        });
        combined_in(ctx, Endianness::Little)
    }

    #[test]
    fn four_bytes_in_order_become_one_32_bit_load() {
        let (func, n) = combined(|b, x| bytes(b, x, &[(0, 0), (1, 1), (2, 2), (3, 3)]));
        assert_eq!(n, 1);
        assert_eq!(count(&func, Opcode::Uload32), 1);
        assert_eq!(count(&func, Opcode::Load), 0);
        assert_eq!(count(&func, Opcode::Bor), 0);
    }

    #[test]
    fn eight_bytes_at_an_offset_out_of_order_become_one_64_bit_load() {
        let at: Vec<(i64, i64)> = [5, 2, 7, 0, 1, 3, 6, 4]
            .iter()
            .map(|&j| (10 + j, j))
            .collect();
        let (func, n) = combined(|b, x| bytes(b, x, &at));
        assert_eq!(n, 1);
        assert_eq!(count(&func, Opcode::Load), 1);
        assert_eq!(count(&func, Opcode::Bor), 0);
    }

    /// Big-endian order and a gap stay; of three bytes the inner `or` of
    /// the first two combines; a load used elsewhere stays.
    #[test]
    fn other_shapes_stay() {
        for at in [vec![(0, 1), (1, 0)], vec![(0, 0), (2, 1)]] {
            let (func, n) = combined(|b, x| bytes(b, x, &at));
            assert_eq!(n, 0, "{at:?}");
            assert_eq!(count(&func, Opcode::Load), at.len());
        }
        let (func, n) = combined(|b, x| bytes(b, x, &[(0, 0), (1, 1), (2, 2)]));
        assert_eq!(n, 1);
        assert_eq!(count(&func, Opcode::Uload16), 1);
        assert_eq!(count(&func, Opcode::Load), 1);
        let (func, n) = combined(|b, x| {
            let v = bytes(b, x, &[(0, 0), (1, 1)]);
            let one = b.ins().iconst(types::I64, 1);
            let a = b.ins().iadd(x, one);
            let again = b.ins().uload8(types::I64, MemFlagsData::new(), a, 0);
            b.ins().iadd(v, again)
        });
        assert_eq!(n, 1, "the separate load is not part of the `or`");
        assert_eq!(count(&func, Opcode::Uload16), 1);
        assert_eq!(count(&func, Opcode::Uload8), 1);
    }

    /// A store between the byte loads keeps them apart; one after them,
    /// before the `or`, does not (the wide load is read where they were).
    #[test]
    fn a_store_between_the_loads_keeps_the_bytes() {
        let store = |b: &mut FunctionBuilder, x: Value| {
            let zero = b.ins().iconst(types::I8, 0);
            b.ins().store(MemFlagsData::new(), zero, x, 1);
        };
        let (func, n) = combined(|b, x| {
            let lo = bytes(b, x, &[(0, 0)]);
            store(b, x);
            let hi = bytes(b, x, &[(1, 1)]);
            b.ins().bor(lo, hi)
        });
        assert_eq!(n, 0);
        assert_eq!(count(&func, Opcode::Load), 2);
        let (func, n) = combined(|b, x| {
            let lo = bytes(b, x, &[(0, 0)]);
            let hi = bytes(b, x, &[(1, 1)]);
            store(b, x);
            b.ins().bor(lo, hi)
        });
        assert_eq!(n, 1);
        let block = func.layout.entry_block().unwrap();
        let ops: Vec<Opcode> = func
            .layout
            .block_insts(block)
            .map(|i| func.dfg.insts[i].opcode())
            .filter(|&op| matches!(op, Opcode::Uload16 | Opcode::Store))
            .collect();
        assert_eq!(ops, [Opcode::Uload16, Opcode::Store]);
    }

    /// A function that loads byte 0 in its entry block, leaves it by
    /// `leave` (to `blocks[1]`, among others), loads byte 1 there and ors
    /// the two: combined, with how many wide loads were made.
    fn across<const N: usize>(
        leave: impl FnOnce(&mut FunctionBuilder, [Block; N], Value),
    ) -> (Function, usize) {
        let ctx = function(|b, blocks: [Block; N], x| {
            let lo = bytes(b, x, &[(0, 0)]);
            leave(b, blocks, x);
            b.switch_to_block(blocks[1]);
            let hi = bytes(b, x, &[(1, 1)]);
            let v = b.ins().bor(lo, hi);
            b.ins().return_(&[v]);
        });
        combined_in(ctx, Endianness::Little)
    }

    /// The loads may stand in blocks entered only from the one before (by
    /// a jump, or a branch whose other way leaves), not before a merge.
    #[test]
    fn bytes_across_jumps_and_branches_combine_and_across_a_merge_do_not() {
        let (func, n) = across(|b, [_, next], _| {
            b.ins().jump(next, &[]);
        });
        assert_eq!((n, count(&func, Opcode::Uload16)), (1, 1));
        let (func, n) = across(|b, [_, next, other], x| {
            b.ins().brif(x, next, &[], other, &[]);
            b.switch_to_block(other);
            b.ins().return_(&[x]);
        });
        assert_eq!((n, count(&func, Opcode::Uload16)), (1, 1));
        let (func, n) = across(|b, [_, next, other], x| {
            b.ins().brif(x, next, &[], other, &[]);
            b.switch_to_block(other);
            b.ins().jump(next, &[]);
        });
        assert_eq!((n, count(&func, Opcode::Load)), (0, 2));
    }

    #[test]
    fn a_big_endian_target_combines_nothing() {
        let ctx = function(|b, [_], x| {
            let v = bytes(b, x, &[(0, 0), (1, 1)]);
            b.ins().return_(&[v]);
        });
        let (func, n) = combined_in(ctx, Endianness::Big);
        assert_eq!((n, count(&func, Opcode::Load)), (0, 2));
    }
}
