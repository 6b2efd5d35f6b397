//! Partial inlining of recursive functions (what gcc's `ipa-split` does at
//! -O2): a self-recursive function whose entry tests for a cheap case is
//! split into a small *wrapper*, the entry and the cheap case, with a call
//! of the *slow part* (the rest) on the other side of the test, and the
//! slow part, which starts at that test's other target.
//!
//! The wrapper keeps the function's name and signature; it is small, so
//! callers inline it, and so does the slow part at its own recursive calls:
//! a recursion's leaves (permute's `n == 0`, towers' one-disk move, a tree
//! walk's empty child) then run inline in their caller instead of paying a
//! call, a frame and the saves of every callee-saved register the recursive
//! case needs (Cranelift saves them in the prologue, on every path).
//!
//! What may be split (`plan`): a `brif` (the *test*) whose two targets
//! start the *fast* side (the blocks reachable from one target) and the
//! *slow* side (those reachable from the other); the *header* is every
//! other block. The sides must not reach the test again (it is not in a
//! loop with them) and must be entered through the test only; the slow
//! side makes a recursive call, the fast side and the header make none
//! (the header may hold loops: an inlined `is_shorter_than` before the
//! test). The test must not be decided by constants (a counted loop's first
//! guard, where the wrapper would always call the slow part), and the
//! first test in reverse postorder that qualifies is taken. The slow
//! part's parameters are the values its blocks use that the header defines
//! (the function's own parameters among them) and the address of each
//! stack slot the header touches and the slow part uses (a struct local
//! the header loaded: the slow part uses the wrapper's slot, which outlives
//! the call, instead of its own, which nothing else can reach meanwhile: a
//! local's address never outlives the call it is passed to), at most
//! [`MAX_PARAMS`] in all, so they stay in registers.
//!
//! A slot the slow part only reads (`let node = tree[0]`, then
//! `node.left` and `node.right`) is passed by value instead, when the
//! parameters still fit: the wrapper loads each value the slow part reads
//! and passes it. Nothing can write the slot between the call and those
//! reads (the slow part does not write it, and the slot's address is used
//! nowhere in the function but as the address of a load or store:
//! `address::escapes`; an address kept in another local, `h.xs = arr[..]`,
//! could be loaded back and written through), so the values are the same; and the wrapper's loads, right
//! behind the stores that filled the slot, are forwarded from them
//! (`crate::store_forwarding`), which leaves the slot unread and its
//! stores dead (`crate::dead_slot_stores`). A tree walk then passes its
//! child's fields in registers instead of copying the node to its frame
//! and passing the copy's address.
//!
//! Backtraces do not change: the wrapper's call of the slow part carries
//! the [`SLOW_PART`] debug tag, which the debug recorder drops, so an
//! inlined wrapper adds no frame of its own and the slow part's frame is
//! recorded under the function's name (`crate::debug`).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, DebugTag, ExternalName, FuncRef, Function, Inst, InstBuilder,
    InstructionData, MemFlagsData, Opcode, StackSlot, Type, Value, ValueDef, types,
};

use crate::address::{self, into_slot};

/// The debug tag of the wrapper's call of the slow part: not a Tern call
/// site, so the recorder leaves it out of every chain.
pub const SLOW_PART: DebugTag = DebugTag::User(u32::MAX);

/// Largest wrapper, in instructions outside cold blocks (the header, the
/// fast side, the call and the return). Measured: docs/backend.md,
/// "Partial inlining".
pub const WRAPPER_LIMIT: usize = 150;

/// How many blocks, in reverse postorder from the entry, are tried as
/// the split's test (a bound on the work for large functions).
const MAX_CANDIDATES: usize = 64;

/// The type of an address (the translator's pointer type).
const ADDRESS: Type = types::I64;

/// Most parameters a slow part takes (the integer argument registers of
/// the System V ABI).
pub const MAX_PARAMS: usize = 6;

/// Where a function splits.
#[derive(Debug)]
pub struct Plan {
    /// The test: a `brif` at the end of the header.
    test: Inst,
    /// Which of the test's two destinations is the slow side.
    slow_edge: usize,
    /// The blocks reachable from the slow side's target.
    slow: Vec<Block>,
    /// The slow part's parameters: values defined in the header that it
    /// uses, in value order.
    params: Vec<Value>,
    /// Stack slots the header touches and the slow part uses: the slow
    /// part gets their addresses (in the wrapper's frame, which outlives
    /// the call) as further parameters, and uses them instead of its own.
    slots: Vec<StackSlot>,
    /// What the slow part reads from the slots it only reads: the wrapper
    /// loads each and passes the values as the last parameters.
    reads: Vec<SlotRead>,
}

/// One value the slow part reads from a slot of the header's.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SlotRead {
    slot: StackSlot,
    /// Bytes from the slot's start (the address's offset and the load's).
    offset: i32,
    ty: Type,
    flags: MemFlagsData,
}

/// Where `func`, the body of the function with module id `self_id`, splits
/// with a wrapper of at most `limit` instructions outside cold blocks, if
/// it does (see the module docs).
pub fn plan(func: &Function, self_id: u32, limit: usize) -> Option<Plan> {
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let calls_itself = |b: &Block| {
        func.layout
            .block_insts(*b)
            .any(|i| calls_self(func, i, self_id))
    };
    if !blocks.iter().any(calls_itself) {
        return None;
    }
    let cfg = ControlFlowGraph::with_function(func);
    let domtree = DominatorTree::with_function(func, &cfg);
    let entry = func.layout.entry_block()?;
    let everything: HashSet<Block> = reachable(&cfg, entry).into_iter().collect();
    // Candidates in reverse postorder: the first that qualifies has the
    // smallest header.
    for &block in domtree.cfg_rpo().take(MAX_CANDIDATES) {
        let Some((test, targets)) = candidate(func, block) else {
            continue;
        };
        let sides = targets.map(|t| reachable(&cfg, t));
        let union: HashSet<Block> = sides.iter().flatten().copied().collect();
        if union.contains(&block) {
            continue;
        }
        let header: Vec<Block> = blocks
            .iter()
            .copied()
            .filter(|b| everything.contains(b) && !union.contains(b))
            .collect();
        // The sides are entered through the test only.
        let entered_elsewhere = header
            .iter()
            .any(|&h| h != block && cfg.succ_iter(h).any(|s| union.contains(&s)));
        if entered_elsewhere
            || header.iter().any(calls_itself)
            || header
                .iter()
                .flat_map(|&h| func.layout.block_insts(h))
                .any(|i| func.dfg.insts[i].opcode() == Opcode::DynamicStackAddr)
        {
            continue;
        }
        let recursive = sides.clone().map(|s| s.iter().any(calls_itself));
        let slow_edge = match recursive {
            [true, false] => 0,
            [false, true] => 1,
            _ => continue,
        };
        return finish(func, test, slow_edge, &header, &sides, limit);
    }
    None
}

/// The `brif` ending `block`, with its two targets, if it may be a split's
/// test: both targets distinct and not a failure's cold block, the
/// condition not made of constants only (a counted loop's first guard,
/// where the wrapper would always call the slow part).
fn candidate(func: &Function, block: Block) -> Option<(Inst, [Block; 2])> {
    if func.layout.is_cold(block) {
        return None;
    }
    let term = func.layout.last_inst(block)?;
    let InstructionData::Brif {
        arg: condition,
        blocks,
        ..
    } = func.dfg.insts[term]
    else {
        return None;
    };
    let targets = blocks.map(|c| c.block(&func.dfg.value_lists));
    if targets[0] == targets[1]
        || targets.iter().any(|&t| func.layout.is_cold(t))
        || of_constants(func, condition, 8)
    {
        return None;
    }
    Some((term, targets))
}

/// The plan for a split at `test`, if the wrapper (`header` and the fast
/// side) is within `limit` and the slow part's parameters fit.
fn finish(
    func: &Function,
    test: Inst,
    slow_edge: usize,
    header: &[Block],
    sides: &[Vec<Block>; 2],
    limit: usize,
) -> Option<Plan> {
    let size: usize = header
        .iter()
        .filter(|&&b| !func.layout.is_cold(b))
        .map(|&b| func.layout.block_insts(b).count())
        .sum();
    let header_slots: Vec<StackSlot> = header
        .iter()
        .flat_map(|&b| func.layout.block_insts(b))
        .filter_map(|i| slot_address(func, i))
        .map(|(slot, _)| slot)
        .collect();
    let fast_size: usize = sides[1 - slow_edge]
        .iter()
        .filter(|&&b| !func.layout.is_cold(b))
        .map(|&b| func.layout.block_insts(b).count())
        .sum();
    // The wrapper's own call and return come on top.
    if size + fast_size + 2 > limit {
        return None;
    }
    let slow = sides[slow_edge].clone();
    let defined: HashSet<Value> = slow
        .iter()
        .flat_map(|&b| {
            func.dfg.block_params(b).iter().copied().chain(
                func.layout
                    .block_insts(b)
                    .flat_map(|i| func.dfg.inst_results(i).iter().copied()),
            )
        })
        .collect();
    let mut params: Vec<Value> = slow
        .iter()
        .flat_map(|&b| func.layout.block_insts(b))
        .flat_map(|i| func.dfg.inst_values(i))
        .chain(edge_args(func, test, slow_edge))
        .map(|v| func.dfg.resolve_aliases(v))
        .filter(|v| !defined.contains(v))
        .collect();
    params.sort_unstable();
    params.dedup();
    let mut slots: Vec<StackSlot> = slow
        .iter()
        .flat_map(|&b| func.layout.block_insts(b))
        .filter_map(|i| slot_address(func, i))
        .map(|(slot, _)| slot)
        .filter(|slot| header_slots.contains(slot))
        .collect();
    slots.sort_unstable();
    slots.dedup();
    if params.len() + slots.len() > MAX_PARAMS {
        return None;
    }
    // Slots passed by value where the parameters still fit, one at a time.
    let mut reads = Vec::new();
    let mut by_address = Vec::new();
    for (i, &slot) in slots.iter().enumerate() {
        let later = slots.len() - i - 1;
        match only_reads(func, &slow, slot) {
            Some(r)
                if params.len() + by_address.len() + reads.len() + r.len() + later
                    <= MAX_PARAMS
                    && !params.iter().any(|&p| may_point_into(func, p, slot, 4))
                    && !address::escapes(func, slot) =>
            {
                reads.extend(r);
            }
            _ => by_address.push(slot),
        }
    }
    Some(Plan {
        test,
        slow_edge,
        slow,
        params,
        slots: by_address,
        reads,
    })
}

/// What the slow side reads from `slot`, if reading whole values with
/// `load` is all it does with addresses into the slot.
fn only_reads(func: &Function, slow: &[Block], slot: StackSlot) -> Option<Vec<SlotRead>> {
    let mut reads = Vec::new();
    for inst in slow.iter().flat_map(|&b| func.layout.block_insts(b)) {
        if let Some(read) = slot_read(func, inst) {
            if read.slot == slot && !reads.contains(&read) {
                reads.push(read);
            }
            continue;
        }
        // Any other use of an address into the slot, but adding an
        // offset to it (judged where the sum is used).
        let uses = func
            .dfg
            .inst_values(inst)
            .any(|v| into_slot(func, v).is_some_and(|(s, _)| s == slot));
        let derives = func
            .dfg
            .inst_results(inst)
            .first()
            .is_some_and(|&r| into_slot(func, r).is_some_and(|(s, _)| s == slot));
        if uses && !derives {
            return None;
        }
    }
    Some(reads)
}

/// Whether `v` may be an address into `slot` (looking `depth` definitions
/// down; deeper, and any block parameter but the function's own, may).
fn may_point_into(func: &Function, v: Value, slot: StackSlot, depth: u32) -> bool {
    let v = func.dfg.resolve_aliases(v);
    match func.dfg.value_def(v) {
        ValueDef::Result(inst, _) => {
            matches!(slot_address(func, inst), Some((s, _)) if s == slot)
                || func
                    .dfg
                    .inst_args(inst)
                    .iter()
                    .any(|&a| depth == 0 || may_point_into(func, a, slot, depth - 1))
        }
        ValueDef::Param(block, _) => func.layout.entry_block() != Some(block),
        ValueDef::Union(..) => true,
    }
}

/// The slow part of `func` under `plan`: its parameters are the plan's,
/// its first block jumps to the slow side's target, and it keeps only the
/// blocks reachable from there.
pub fn slow_part(func: &Function, plan: &Plan) -> Function {
    let mut slow = func.clone();
    let start = slow.dfg.make_block();
    let mut renamed = HashMap::new();
    slow.signature.params.clear();
    for &v in &plan.params {
        let ty = slow.dfg.value_type(v);
        renamed.insert(v, slow.dfg.append_block_param(start, ty));
        slow.signature.params.push(AbiParam::new(ty));
    }
    let mut slot_params = HashMap::new();
    for &slot in &plan.slots {
        slot_params.insert(slot, slow.dfg.append_block_param(start, ADDRESS));
        slow.signature.params.push(AbiParam::new(ADDRESS));
    }
    let mut read_params = Vec::new();
    for read in &plan.reads {
        read_params.push((*read, slow.dfg.append_block_param(start, read.ty)));
        slow.signature.params.push(AbiParam::new(read.ty));
    }
    let rename = |dfg: &cranelift_codegen::ir::DataFlowGraph, v: Value| {
        renamed.get(&dfg.resolve_aliases(v)).copied().unwrap_or(v)
    };
    for &b in &plan.slow {
        let insts: Vec<Inst> = slow.layout.block_insts(b).collect();
        for inst in insts {
            let values: Vec<Value> = slow
                .dfg
                .inst_values(inst)
                .map(|v| rename(&slow.dfg, v))
                .collect();
            slow.dfg.overwrite_inst_values(inst, values.into_iter());
            if let Some((slot, offset)) = slot_address(&slow, inst)
                && let Some(&base) = slot_params.get(&slot)
            {
                slow.replace(inst).iadd_imm_s(base, offset);
            }
            if let Some(read) = slot_read(&slow, inst)
                && let Some(&(_, value)) = read_params.iter().find(|(r, _)| *r == read)
            {
                let result = slow.dfg.first_result(inst);
                slow.dfg.clear_results(inst);
                slow.dfg.change_to_alias(result, value);
                slow.layout.remove_inst(inst);
            }
        }
    }
    let target = destination(func, plan.test, plan.slow_edge);
    let args: Vec<Value> = edge_args(func, plan.test, plan.slow_edge)
        .map(|v| rename(&slow.dfg, v))
        .collect();
    let old_entry = slow.layout.entry_block().expect("a function has an entry");
    slow.layout.insert_block(start, old_entry);
    let mut cur = FuncCursor::new(&mut slow).at_bottom(start);
    cur.set_srcloc(func.srcloc(plan.test));
    let args: Vec<BlockArg> = args.into_iter().map(BlockArg::Value).collect();
    cur.ins().jump(target, &args);
    let keep: HashSet<Block> = plan.slow.iter().copied().chain([start]).collect();
    remove_blocks_outside(&mut slow, &keep);
    slow
}

/// Turns `func` (a copy of the body `plan` was made for) into the wrapper:
/// the test's slow side calls `slow` (the slow part, imported into `func`)
/// with the plan's parameters and returns what it returns.
pub fn make_wrapper(func: &mut Function, plan: &Plan, slow: FuncRef) {
    let call_block = func.dfg.make_block();
    func.layout.append_block(call_block);
    let srcloc = func.srcloc(plan.test);
    let mut cur = FuncCursor::new(func).at_bottom(call_block);
    cur.set_srcloc(srcloc);
    let mut args = plan.params.clone();
    for &slot in &plan.slots {
        args.push(cur.ins().stack_addr(ADDRESS, slot, 0));
    }
    for read in &plan.reads {
        let at = cur.ins().stack_addr(ADDRESS, read.slot, 0);
        args.push(cur.ins().load(read.ty, read.flags, at, read.offset));
    }
    let call = cur.ins().call(slow, &args);
    let results = cur.func.dfg.inst_results(call).to_vec();
    cur.ins().return_(&results);
    func.debug_tags.set(call, [SLOW_PART]);
    let dfg = &mut func.dfg;
    let edge = dfg.block_call(call_block, &[]);
    dfg.insts[plan.test].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        [plan.slow_edge] = edge;
    let cfg = ControlFlowGraph::with_function(func);
    let entry = func.layout.entry_block().expect("a function has an entry");
    let keep = reachable(&cfg, entry).into_iter().collect();
    remove_blocks_outside(func, &keep);
}

/// Whether `v` is computed from constants only (looking `depth` levels
/// down; deeper is taken as not).
fn of_constants(func: &Function, v: Value, depth: u32) -> bool {
    let v = func.dfg.resolve_aliases(v);
    let Some(inst) = func.dfg.value_def(v).inst() else {
        return false;
    };
    let opcode = func.dfg.insts[inst].opcode();
    let args = func.dfg.inst_args(inst);
    opcode == Opcode::Iconst
        || (depth > 0
            && !args.is_empty()
            && !opcode.can_load()
            && !opcode.is_call()
            && args.iter().all(|&a| of_constants(func, a, depth - 1)))
}

/// Whether `inst` calls the function with module id `self_id`.
fn calls_self(func: &Function, inst: Inst, self_id: u32) -> bool {
    let InstructionData::Call { func_ref, .. } = func.dfg.insts[inst] else {
        return false;
    };
    let ExternalName::User(name) = &func.dfg.ext_funcs[func_ref].name else {
        return false;
    };
    func.params.user_named_funcs()[*name].index == self_id
}

/// The slot and offset `inst` takes the address of, if it is a
/// `stack_addr` (the translator's only way to read or write a slot).
fn slot_address(func: &Function, inst: Inst) -> Option<(StackSlot, i64)> {
    match func.dfg.insts[inst] {
        InstructionData::StackAddr {
            opcode: Opcode::StackAddr,
            stack_slot,
            offset,
        } => Some((stack_slot, offset.into())),
        _ => None,
    }
}

/// The read `inst` makes, if it is a `load` from an address into a slot.
fn slot_read(func: &Function, inst: Inst) -> Option<SlotRead> {
    let InstructionData::Load {
        opcode: Opcode::Load,
        arg,
        flags,
        offset,
    } = func.dfg.insts[inst]
    else {
        return None;
    };
    let (slot, base) = into_slot(func, arg)?;
    Some(SlotRead {
        slot,
        offset: i32::try_from(base.checked_add(i64::from(i32::from(offset)))?).ok()?,
        ty: func.dfg.value_type(func.dfg.first_result(inst)),
        flags: func.dfg.mem_flags[flags],
    })
}

/// Blocks reachable from `from` (itself included), in the order found.
fn reachable(cfg: &ControlFlowGraph, from: Block) -> Vec<Block> {
    let mut seen = HashSet::from([from]);
    let mut found = vec![from];
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        for s in cfg.succ_iter(b) {
            if seen.insert(s) {
                found.push(s);
                work.push(s);
            }
        }
    }
    found
}

fn destination(func: &Function, test: Inst, edge: usize) -> Block {
    func.dfg.insts[test].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)[edge]
        .block(&func.dfg.value_lists)
}

/// The values the test passes along `edge`.
fn edge_args(func: &Function, test: Inst, edge: usize) -> impl Iterator<Item = Value> + '_ {
    func.dfg.insts[test].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)[edge]
        .args(&func.dfg.value_lists)
        .filter_map(|a| a.as_value())
}

/// Removes every block of `func` not in `keep`, and gives the stack slots
/// no remaining instruction names no memory: left with their full size, the
/// wrapper carried the whole frame, and the slow part, which inlines the
/// wrapper at each of its recursive calls, a copy of it per call site (a
/// recursion with two call sites and a 64-byte array reached a seventh of
/// its depth at -O1).
fn remove_blocks_outside(func: &mut Function, keep: &HashSet<Block>) {
    let gone: Vec<Block> = func.layout.blocks().filter(|b| !keep.contains(b)).collect();
    for b in gone {
        func.layout.remove_block_and_insts(b);
    }
    let mut named = HashSet::new();
    for b in func.layout.blocks() {
        for inst in func.layout.block_insts(b) {
            if let Some((slot, _)) = slot_address(func, inst) {
                named.insert(slot);
            }
        }
    }
    for (slot, data) in func.sized_stack_slots.iter_mut() {
        if !named.contains(&slot) {
            data.size = 0;
            data.align_shift = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::condcodes::IntCC;
    use cranelift_codegen::ir::{MemFlagsData, StackSlotData, StackSlotKind};
    use cranelift_frontend::FunctionBuilder;

    use super::*;
    use crate::test_ir::{function, import, verifies};

    /// The module id the functions below call themselves by.
    const SELF: u32 = 5;

    /// `fn f(x) { if x == 0 { return 1 } return f(x - 1) + x }`, the test
    /// made of `test(b, x)`.
    fn countdown(test: impl FnOnce(&mut FunctionBuilder, Value) -> Value) -> Function {
        function(|b, [_, cheap, slow], x| {
            let f = import(b, SELF, 1, 1);
            let c = test(b, x);
            b.ins().brif(c, cheap, &[], slow, &[]);
            b.switch_to_block(cheap);
            let one = b.ins().iconst(types::I64, 1);
            b.ins().return_(&[one]);
            b.switch_to_block(slow);
            let down = b.ins().iadd_imm_s(x, -1);
            let call = b.ins().call(f, &[down]);
            let r = b.inst_results(call)[0];
            let sum = b.ins().iadd(r, x);
            b.ins().return_(&[sum]);
        })
        .func
    }

    fn is_zero(b: &mut FunctionBuilder, x: Value) -> Value {
        b.ins().icmp_imm_u(IntCC::Equal, x, 0)
    }

    fn calls(func: &Function, index: u32) -> usize {
        crate::clif_walk::insts(func)
            .filter(|&i| calls_self(func, i, index))
            .count()
    }

    #[test]
    fn a_recursion_with_a_cheap_case_splits() {
        let func = countdown(is_zero);
        let plan = plan(&func, SELF, WRAPPER_LIMIT).expect("splits");
        let x = func.dfg.block_params(func.layout.entry_block().unwrap())[0];
        assert_eq!(plan.params, [x]);
        let slow = slow_part(&func, &plan);
        verifies(&slow);
        // The slow part takes `x`, starts at the recursive side and keeps
        // its call; the entry's test and the cheap case are gone.
        assert_eq!(slow.signature.params.len(), 1);
        assert_eq!(slow.layout.blocks().count(), 2);
        assert_eq!(calls(&slow, SELF), 1);
        let mut wrapper = func.clone();
        let slow_ref = import_into(&mut wrapper, 9, 1);
        make_wrapper(&mut wrapper, &plan, slow_ref);
        verifies(&wrapper);
        // The wrapper: the test, the cheap case, and a call of the slow
        // part with `x`, tagged as no call site.
        assert_eq!(calls(&wrapper, SELF), 0);
        assert_eq!(calls(&wrapper, 9), 1);
        let call = wrapper
            .layout
            .blocks()
            .flat_map(|b| wrapper.layout.block_insts(b))
            .find(|&i| calls_self(&wrapper, i, 9))
            .unwrap();
        assert_eq!(wrapper.dfg.inst_args(call), [x]);
        assert_eq!(wrapper.debug_tags.get(call), [SLOW_PART]);
    }

    /// A slot only the slow side uses takes no memory in the wrapper, which
    /// the slow part inlines at each of its recursive calls; the slow part
    /// keeps it.
    #[test]
    fn the_wrapper_keeps_no_memory_for_the_slow_sides_slots() {
        let func = function(|b, [_, cheap, slow], x| {
            let f = import(b, SELF, 1, 1);
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 64, 3));
            let c = b.ins().icmp_imm_u(IntCC::Equal, x, 0);
            b.ins().brif(c, cheap, &[], slow, &[]);
            b.switch_to_block(cheap);
            b.ins().return_(&[x]);
            b.switch_to_block(slow);
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(MemFlagsData::new(), x, at, 8);
            let v = b.ins().load(types::I64, MemFlagsData::new(), at, 8);
            let down = b.ins().iadd_imm_s(v, -1);
            let call = b.ins().call(f, &[down]);
            let r = b.inst_results(call)[0];
            b.ins().return_(&[r]);
        })
        .func;
        let bytes = |f: &Function| f.sized_stack_slots.values().map(|s| s.size).sum::<u32>();
        assert_eq!(bytes(&func), 64);
        let plan = plan(&func, SELF, WRAPPER_LIMIT).expect("splits");
        let slow = slow_part(&func, &plan);
        verifies(&slow);
        assert_eq!(bytes(&slow), 64);
        let mut wrapper = func.clone();
        let slow_ref = import_into(&mut wrapper, 9, 1);
        make_wrapper(&mut wrapper, &plan, slow_ref);
        verifies(&wrapper);
        assert_eq!(bytes(&wrapper), 0);
    }

    /// `fn(x) { let k = 0; if k == 0 ...`: a test of constants (a counted
    /// loop's first guard) is not worth a split.
    #[test]
    fn a_test_of_constants_does_not_split() {
        let func = countdown(|b, _| {
            let k = b.ins().iconst(types::I64, 0);
            b.ins().icmp_imm_u(IntCC::Equal, k, 0)
        });
        assert!(plan(&func, SELF, WRAPPER_LIMIT).is_none());
    }

    #[test]
    fn a_wrapper_over_the_limit_does_not_split() {
        let func = countdown(is_zero);
        // The entry (the compare and the branch), the cheap case (two), and
        // the wrapper's call and return.
        let entry = func.layout.entry_block().unwrap();
        let size = func.layout.block_insts(entry).count() + 2 + 2;
        assert!(plan(&func, SELF, size).is_some());
        assert!(plan(&func, SELF, size - 1).is_none());
    }

    #[test]
    fn a_function_that_does_not_call_itself_does_not_split() {
        let func = countdown(is_zero);
        assert!(plan(&func, SELF + 1, WRAPPER_LIMIT).is_none());
    }

    /// `fn f(x) { let s = x; if x == 0 { return x } return f(s - 1) }`
    /// with `s` a struct local in a slot, and `write` run on the slow side
    /// before the read of `s`.
    fn slot_local(write: impl FnOnce(&mut FunctionBuilder, StackSlot, Value)) -> Function {
        function(|b, [_, cheap, slow], x| {
            let f = import(b, SELF, 1, 1);
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(MemFlagsData::new(), x, at, 0);
            let c = b.ins().icmp_imm_u(IntCC::Equal, x, 0);
            b.ins().brif(c, cheap, &[], slow, &[]);
            b.switch_to_block(cheap);
            b.ins().return_(&[x]);
            b.switch_to_block(slow);
            write(b, slot, x);
            let at = b.ins().stack_addr(types::I64, slot, 0);
            let v = b.ins().load(types::I64, MemFlagsData::new(), at, 0);
            let down = b.ins().iadd_imm_s(v, -1);
            let call = b.ins().call(f, &[down]);
            let r = b.inst_results(call)[0];
            b.ins().return_(&[r]);
        })
        .func
    }

    fn slot_addresses(func: &Function) -> usize {
        crate::clif_walk::insts(func)
            .filter(|&i| slot_address(func, i).is_some())
            .count()
    }

    /// A struct local written before the test and only read on the slow
    /// side: the wrapper reads it and passes the value.
    #[test]
    fn a_slot_the_slow_part_only_reads_is_passed_by_value() {
        let func = slot_local(|_, _, _| {});
        let plan = plan(&func, SELF, WRAPPER_LIMIT).expect("splits");
        assert_eq!(plan.params, []);
        assert_eq!(plan.slots, []);
        assert_eq!(plan.reads.len(), 1);
        assert_eq!((plan.reads[0].offset, plan.reads[0].ty), (0, types::I64));
        let slow = slow_part(&func, &plan);
        verifies(&slow);
        // The slow part takes the value: no load is left.
        assert_eq!(slow.signature.params, [AbiParam::new(types::I64)]);
        let loads = crate::test_ir::count(&slow, Opcode::Load);
        assert_eq!(loads, 0, "{}", slow.display());
        let mut wrapper = func.clone();
        let slow_ref = import_into(&mut wrapper, 9, 1);
        make_wrapper(&mut wrapper, &plan, slow_ref);
        verifies(&wrapper);
    }

    /// A struct local whose address is kept elsewhere (`h.xs = arr[..]`):
    /// code that loads the address back may write the slot, so it is
    /// passed by address, not read early by the wrapper.
    #[test]
    fn a_slot_whose_address_is_stored_is_passed_by_address() {
        // The header keeps the address in another slot; the slow part only
        // reads the slot (the call it makes could write it).
        let func = function(|b, [_, cheap, slow], x| {
            let f = import(b, SELF, 1, 1);
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
            let other =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(MemFlagsData::new(), x, at, 0);
            let keep = b.ins().stack_addr(types::I64, other, 0);
            b.ins().store(MemFlagsData::new(), at, keep, 0);
            let c = b.ins().icmp_imm_u(IntCC::Equal, x, 0);
            b.ins().brif(c, cheap, &[], slow, &[]);
            b.switch_to_block(cheap);
            b.ins().return_(&[x]);
            b.switch_to_block(slow);
            let down = b.ins().iadd_imm_s(x, -1);
            let call = b.ins().call(f, &[down]);
            let r = b.inst_results(call)[0];
            let at = b.ins().stack_addr(types::I64, slot, 0);
            let v = b.ins().load(types::I64, MemFlagsData::new(), at, 0);
            let sum = b.ins().iadd(v, r);
            b.ins().return_(&[sum]);
        })
        .func;
        let plan = plan(&func, SELF, WRAPPER_LIMIT).expect("splits");
        assert_eq!(plan.reads, []);
        assert_eq!(plan.slots.len(), 1);
        verifies(&slow_part(&func, &plan));
    }

    /// A struct local the slow part also writes: the slow part uses the
    /// wrapper's slot through a parameter.
    #[test]
    fn a_slot_the_slow_part_writes_is_passed_by_address() {
        let func = slot_local(|b, slot, x| {
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(MemFlagsData::new(), x, at, 0);
        });
        let plan = plan(&func, SELF, WRAPPER_LIMIT).expect("splits");
        let x = func.dfg.block_params(func.layout.entry_block().unwrap())[0];
        assert_eq!(plan.params, [x]);
        assert_eq!(plan.slots.len(), 1);
        assert_eq!(plan.reads, []);
        let slow = slow_part(&func, &plan);
        verifies(&slow);
        // `x`, then the slot's address.
        assert_eq!(slow.signature.params.len(), 2);
        assert_eq!(slot_addresses(&slow), 0, "{}", slow.display());
        let mut wrapper = func.clone();
        let slow_ref = import_into(&mut wrapper, 9, 2);
        make_wrapper(&mut wrapper, &plan, slow_ref);
        verifies(&wrapper);
    }

    /// Declares the function with module id `index`, taking `params`
    /// `i64`s and returning one, in `func`.
    fn import_into(func: &mut Function, index: u32, params: usize) -> FuncRef {
        let mut sig = cranelift_codegen::ir::Signature::new(func.signature.call_conv);
        sig.params.extend(vec![AbiParam::new(types::I64); params]);
        sig.returns.push(AbiParam::new(types::I64));
        let signature = func.import_signature(sig);
        let name = func
            .declare_imported_user_function(cranelift_codegen::ir::UserExternalName::new(0, index));
        func.import_function(cranelift_codegen::ir::ExtFuncData {
            name: ExternalName::user(name),
            signature,
            colocated: true,
            patchable: false,
        })
    }
}
