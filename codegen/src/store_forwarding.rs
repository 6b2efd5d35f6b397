//! Loads answered by the store or load before them at the same address,
//! when what lies between writes only other fields of the same object.
//!
//! Cranelift's own alias analysis (in the e-graph pass) reuses a stored or
//! loaded value for a later load of the same address, but any store in the
//! same alias region in between ends that: it cannot tell `[p + 4]` from
//! `[p]`. An inlined `bounce(ref ball)` stores `ball.x`, loads and stores
//! `ball.y`, then tests `ball.x`: the test reloaded `ball.x` from memory
//! right behind its store (a store-forwarding stall on the critical path),
//! and every `ref` struct updated field by field paid the same.
//!
//! This pass runs after the e-graph pass and tells addresses apart by base
//! and constant offset: an address is a base value plus a constant (the
//! chain of `iadd x, iconst` and the access's own offset), and two accesses
//! with the same base and disjoint byte ranges cannot overlap, whatever the
//! base holds. Across different bases it assumes nothing, except what the
//! alias regions of the `MemFlags` already promise Cranelift (accesses in
//! different regions never overlap; an access without a region may overlap
//! anything).
//!
//! The known contents of memory are followed through a block and into a
//! block whose only predecessor has been walked (an extended basic block:
//! the `if` side of a test sees what was stored before the test), and into
//! a merge of two walked predecessors (not a loop header): what both know
//! at the same address, the value itself when they agree, else a new block
//! parameter that each edge passes its own value to (bounce's `if ball.x >
//! 500 { ball.x = 500; ... }` and the `if ball.x < 0` after it). Any
//! instruction that may write memory other than a plain `store` (a call, a
//! narrow store, an atomic, a `sequence_point`, a stack store) forgets
//! everything. A load answered this way is removed and its result becomes
//! the known value: the same bits, read from the same bytes, which nothing
//! wrote since (a load that follows a store or load of the same address
//! cannot trap where the earlier access did not).

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    AliasRegion, Block, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef,
    immediates::Offset32,
};

use crate::address;

/// How many accesses are remembered at once: the oldest is forgotten past
/// this, which keeps every step a short scan.
const MAX_KNOWN: usize = 32;

/// The most predecessors a merge may have for what they all know to be
/// carried into it. Measured: 4 predecessors with 4 parameters took queens
/// 2.147 -> 2.165; 2 and 2 left it alone.
const MAX_MERGED: usize = 2;

/// The most block parameters a merge gains for values its predecessors know
/// differently: each holds a register across the edges. Without any,
/// bounce gained nothing from merges (1.042 -> 1.039; with 2, 0.976).
const MAX_MERGED_VALUES: usize = 2;

/// The bytes `[base + offset, base + offset + ty.bytes())`, accessed as `ty`
/// in `region`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Key {
    base: Value,
    offset: i64,
    ty: Type,
    region: Option<AliasRegion>,
}

impl Key {
    /// The key of the access `inst` of a value of type `ty` at `addr +
    /// offset`.
    fn of(func: &Function, inst: Inst, ty: Type, addr: Value, offset: Offset32) -> Key {
        let (base, offset) = address::split(func, addr, i64::from(i32::from(offset)));
        let region = func.dfg.insts[inst]
            .memflags_data(&func.dfg)
            .and_then(|f| f.alias_region());
        Key {
            base,
            offset,
            ty,
            region,
        }
    }

    fn end(&self) -> i64 {
        self.offset + i64::from(self.ty.bytes())
    }

    /// Whether a store to `self` may change the bytes of `other`.
    fn may_overlap(&self, other: &Key) -> bool {
        let regions_apart = matches!((self.region, other.region), (Some(a), Some(b)) if a != b);
        if regions_apart {
            return false;
        }
        self.base != other.base || (self.offset < other.end() && other.offset < self.end())
    }
}

/// One remembered access: `value` is what the bytes of `key` hold.
#[derive(Clone, Copy, Debug)]
struct Known {
    key: Key,
    value: Value,
    /// Whether a later load may be answered with `value`. Not for a stored
    /// `[p] op x` (`[p] += x`): x64 makes the update one read-modify-write
    /// instruction (`add %esi,(mem)`) when the store is the value's only
    /// use, and a second use would cost a load, the operation and a store,
    /// one instruction more than the fused update and the reload together.
    /// (Whether the store is the only use is not asked: counting uses cost
    /// 1.5 % of json's JIT total.)
    forwardable: bool,
}

/// Replaces every load whose value is known (see the module docs) by that
/// value; returns how many loads it removed.
pub fn forward(func: &mut Function, cfg: &ControlFlowGraph, domtree: &DominatorTree) -> usize {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    // What each walked block leaves known at its end, for its successors.
    let mut at_end: SecondaryMap<Block, Option<Vec<Known>>> = SecondaryMap::new();
    let mut removed = 0;
    for block in blocks {
        let mut known = on_entry(func, cfg, domtree, &at_end, block);
        let mut next = func.layout.first_inst(block);
        while let Some(inst) = next {
            next = func.layout.next_inst(inst);
            if step(func, inst, &mut known) {
                func.layout.remove_inst(inst);
                removed += 1;
            }
        }
        at_end[block] = Some(known);
    }
    removed
}

/// What is known on entry to `block`: what its only predecessor left
/// known; at a merge of up to [`MAX_MERGED`] predecessors, all walked and
/// none a back edge (each ends in a `jump` or `brif`), every access all of
/// them know, its value a new block parameter when they know different ones
/// (at most [`MAX_MERGED_VALUES`] of those); else nothing.
fn on_entry(
    func: &mut Function,
    cfg: &ControlFlowGraph,
    domtree: &DominatorTree,
    at_end: &SecondaryMap<Block, Option<Vec<Known>>>,
    block: Block,
) -> Vec<Known> {
    let mut preds: Vec<(Block, Inst)> = cfg.pred_iter(block).map(|p| (p.block, p.inst)).collect();
    preds.sort_unstable();
    preds.dedup();
    let Some(&(first, _)) = preds.first() else {
        return Vec::new();
    };
    if preds.iter().all(|&(p, _)| p == first) {
        return at_end[first].clone().unwrap_or_default();
    }
    let mergeable = preds.len() <= MAX_MERGED
        && preds.iter().all(|&(p, term)| {
            at_end[p].is_some()
                && !domtree.dominates(block, p, &func.layout)
                && matches!(
                    func.dfg.insts[term],
                    InstructionData::Jump { .. } | InstructionData::Brif { .. }
                )
        });
    if !mergeable {
        return Vec::new();
    }
    let mut known = Vec::new();
    let mut params = 0;
    let states: Vec<&Vec<Known>> = preds
        .iter()
        .map(|&(p, _)| at_end[p].as_ref().unwrap())
        .collect();
    for k in states[0].iter().filter(|k| k.forwardable) {
        let values: Option<Vec<Value>> = states
            .iter()
            .map(|state| {
                state
                    .iter()
                    .find(|o| o.forwardable && o.key == k.key)
                    .map(|o| o.value)
            })
            .collect();
        let Some(values) = values else {
            continue;
        };
        let value = if values.iter().all(|&v| v == values[0]) {
            values[0]
        } else if params < MAX_MERGED_VALUES {
            params += 1;
            let param = func.dfg.append_block_param(block, k.key.ty);
            for (&(_, term), &v) in preds.iter().zip(&values) {
                pass_on_edges(func, term, block, v);
            }
            param
        } else {
            continue;
        };
        known.push(Known { value, ..*k });
    }
    known
}

/// Appends `v` to the arguments of every edge of branch `term` into `to`.
fn pass_on_edges(func: &mut Function, term: Inst, to: Block, v: Value) {
    let dfg = &mut func.dfg;
    for call in
        dfg.insts[term].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
    {
        if call.block(&dfg.value_lists) == to {
            call.append_argument(v, &mut dfg.value_lists);
        }
    }
}

/// Updates `known` past `inst`; true when `inst` is a load whose result has
/// been made an alias of the known value (the caller removes it).
fn step(func: &mut Function, inst: Inst, known: &mut Vec<Known>) -> bool {
    let data = func.dfg.insts[inst];
    match data {
        InstructionData::Load {
            opcode: Opcode::Load,
            arg,
            offset,
            ..
        } => {
            let result = func.dfg.first_result(inst);
            let key = Key::of(func, inst, func.dfg.value_type(result), arg, offset);
            if let Some(k) = known.iter().find(|k| k.forwardable && k.key == key) {
                let value = k.value;
                func.dfg.clear_results(inst);
                func.dfg.change_to_alias(result, value);
                return true;
            }
            remember(
                known,
                Known {
                    key,
                    value: result,
                    forwardable: true,
                },
            );
            false
        }
        InstructionData::Store {
            opcode: Opcode::Store,
            args: [value, arg],
            offset,
            ..
        } => {
            let value = func.dfg.resolve_aliases(value);
            let key = Key::of(func, inst, func.dfg.value_type(value), arg, offset);
            known.retain(|k| !key.may_overlap(&k.key));
            let forwardable = !updates_itself(func, value, &key);
            remember(
                known,
                Known {
                    key,
                    value,
                    forwardable,
                },
            );
            false
        }
        _ => {
            let op = data.opcode();
            if op.can_store() || op.is_call() || op.other_side_effects() {
                known.clear();
            }
            false
        }
    }
}

/// Whether `value`, stored at `key`, is an operation on a load of the same
/// bytes (`[p] = [p] + x`).
fn updates_itself(func: &Function, value: Value, key: &Key) -> bool {
    let dfg = &func.dfg;
    let ValueDef::Result(def, _) = dfg.value_def(value) else {
        return false;
    };
    let InstructionData::Binary { args, .. } = dfg.insts[def] else {
        return false;
    };
    args.iter().any(|&a| {
        let ValueDef::Result(load, _) = dfg.value_def(dfg.resolve_aliases(a)) else {
            return false;
        };
        match dfg.insts[load] {
            InstructionData::Load {
                opcode: Opcode::Load,
                arg,
                offset,
                ..
            } => address::split(func, arg, i64::from(i32::from(offset))) == (key.base, key.offset),
            _ => false,
        }
    })
}

/// Adds `k`, forgetting the oldest access when the list is full.
fn remember(known: &mut Vec<Known>, k: Known) {
    if known.len() == MAX_KNOWN {
        known.remove(0);
    }
    known.push(k);
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{MemFlagsData, types};
    use cranelift_codegen::{Context, ir::InstBuilder};

    use super::*;
    use crate::test_ir::{function, import, verifies};

    /// Runs the pass; returns how many loads it removed, having verified
    /// the result.
    fn run(mut ctx: Context) -> (usize, Function) {
        let removed = forward(&mut ctx.func, &ctx.cfg, &ctx.domtree);
        verifies(&ctx.func);
        (removed, ctx.func)
    }

    /// How many loads are left in `func`.
    fn loads(func: &Function) -> usize {
        crate::test_ir::count(func, Opcode::Load)
    }

    #[test]
    fn a_store_to_another_field_keeps_the_stored_value() {
        // [x] = 5; [x + 8] = 6; return [x]: the load is the 5.
        let mut five = None;
        let ctx = function(|b, [_]: [Block; 1], x| {
            let f = MemFlagsData::new();
            let v = b.ins().iconst(types::I64, 5);
            five = Some(v);
            b.ins().store(f, v, x, 0);
            let w = b.ins().iconst(types::I64, 6);
            let at = b.ins().iadd_imm_s(x, 8);
            b.ins().store(f, w, at, 0);
            let r = b.ins().load(types::I64, f, x, 0);
            b.ins().return_(&[r]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (1, 0));
        let ret = func
            .layout
            .last_inst(func.layout.entry_block().unwrap())
            .unwrap();
        let r = func.dfg.resolve_aliases(func.dfg.inst_args(ret)[0]);
        assert_eq!(Some(r), five);
    }

    #[test]
    fn a_store_that_may_overlap_is_seen() {
        // Through another base (`x + y` may be `x`), through a wider store
        // covering part of the field, and past a call: each load stays.
        let ctx = function(|b, [_]: [Block; 1], x| {
            let f = MemFlagsData::new();
            let callee = import(b, 0, 1, 0);
            let v = b.ins().iconst(types::I64, 5);
            b.ins().store(f, v, x, 0);
            let y = b.ins().load(types::I64, f, x, 16);
            let other = b.ins().iadd(x, y);
            b.ins().store(f, v, other, 0);
            let r1 = b.ins().load(types::I64, f, x, 0);
            b.ins().store(f, v, x, 8);
            let narrow = b.ins().iconst(types::I32, 1);
            b.ins().store(f, narrow, x, 12);
            let r2 = b.ins().load(types::I64, f, x, 8);
            b.ins().call(callee, &[x]);
            let r3 = b.ins().load(types::I64, f, x, 0);
            let s = b.ins().iadd(r1, r2);
            let s = b.ins().iadd(s, r3);
            b.ins().return_(&[s]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (0, 4));
    }

    #[test]
    fn a_block_with_one_predecessor_inherits_what_is_known() {
        // entry: [x] = 5; brif -> (then: load [x]), (merge: load [x]);
        // `then` has entry as its only predecessor; `merge` has two, which
        // both know [x] is the 5 (then's load answered, its store of the
        // same value to [x + 8] leaves [x] alone).
        let ctx = function(|b, [_, then, merge]: [Block; 3], x| {
            let f = MemFlagsData::new();
            let v = b.ins().iconst(types::I64, 5);
            b.ins().store(f, v, x, 0);
            let c = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, x, 0);
            b.ins().brif(c, then, &[], merge, &[]);
            b.switch_to_block(then);
            let r = b.ins().load(types::I64, f, x, 0);
            b.ins().store(f, r, x, 8);
            b.ins().jump(merge, &[]);
            b.switch_to_block(merge);
            let m = b.ins().load(types::I64, f, x, 0);
            b.ins().return_(&[m]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (2, 0));
    }

    #[test]
    fn a_merge_takes_what_both_sides_know() {
        // entry: [x] = 5; [x + 8] = 7; brif -> then ([x] = 6), merge;
        // merge: [x] and [x + 8] again. [x + 8] is 7 on both sides: the
        // load goes; [x] is 6 or 5: a new parameter of `merge` carries it.
        let ctx = function(|b, [_, then, merge]: [Block; 3], x| {
            let f = MemFlagsData::new();
            let five = b.ins().iconst(types::I64, 5);
            b.ins().store(f, five, x, 0);
            let seven = b.ins().iconst(types::I64, 7);
            b.ins().store(f, seven, x, 8);
            let c = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, x, 0);
            b.ins().brif(c, then, &[], merge, &[]);
            b.switch_to_block(then);
            let six = b.ins().iconst(types::I64, 6);
            b.ins().store(f, six, x, 0);
            b.ins().jump(merge, &[]);
            b.switch_to_block(merge);
            let r1 = b.ins().load(types::I64, f, x, 0);
            let r2 = b.ins().load(types::I64, f, x, 8);
            let s = b.ins().iadd(r1, r2);
            b.ins().return_(&[s]);
        });
        let merge = Block::from_u32(2);
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (2, 0));
        assert_eq!(func.dfg.block_params(merge).len(), 1);
    }

    #[test]
    fn a_loop_header_inherits_nothing() {
        // entry: [x] = 5; jump head; head: load [x]; [x] = 1; brif -> head.
        // The back edge's side is not walked before the header: it keeps
        // its load.
        let ctx = function(|b, [_, head, exit]: [Block; 3], x| {
            let f = MemFlagsData::new();
            let five = b.ins().iconst(types::I64, 5);
            b.ins().store(f, five, x, 0);
            b.ins().jump(head, &[]);
            b.switch_to_block(head);
            let r = b.ins().load(types::I64, f, x, 0);
            let one = b.ins().iconst(types::I64, 1);
            b.ins().store(f, one, x, 0);
            b.ins().brif(r, head, &[], exit, &[]);
            b.switch_to_block(exit);
            b.ins().return_(&[r]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (0, 1));
    }

    #[test]
    fn a_fused_update_is_not_forwarded() {
        // [x] = [x] + 1 (one use: x64's `add $1, (mem)`), then [x] again.
        let ctx = function(|b, [_]: [Block; 1], x| {
            let f = MemFlagsData::new();
            let old = b.ins().load(types::I64, f, x, 0);
            let new = b.ins().iadd_imm_s(old, 1);
            b.ins().store(f, new, x, 0);
            let r = b.ins().load(types::I64, f, x, 0);
            b.ins().return_(&[r]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (0, 2));
    }

    #[test]
    fn a_repeated_load_is_reused_and_regions_keep_apart() {
        // load [x] (region A); store [x] in region B (disjoint by the
        // regions' promise); load [x] (region A) again: reused.
        let ctx = function(|b, [_]: [Block; 1], x| {
            let mut regions = Vec::new();
            for id in [1, 2] {
                regions.push(b.func.dfg.alias_regions.insert(
                    cranelift_codegen::ir::AliasRegionData {
                        user_id: id,
                        description: "test".into(),
                    },
                ));
            }
            let fa = MemFlagsData::new().with_alias_region(Some(regions[0]));
            let fb = MemFlagsData::new().with_alias_region(Some(regions[1]));
            let r1 = b.ins().load(types::I64, fa, x, 0);
            b.ins().store(fb, r1, x, 0);
            let r2 = b.ins().load(types::I64, fa, x, 0);
            let s = b.ins().iadd(r1, r2);
            b.ins().return_(&[s]);
        });
        let (removed, func) = run(ctx);
        assert_eq!((removed, loads(&func)), (1, 1));
    }
}
