//! Limits that keep compile time and memory close to linear in the program,
//! whatever its shape (docs/backend.md, "Compile-time budgets").
//!
//! * **Inlining** ([`InlineBudget`]): a caller grows by inlining to at most
//!   `max(2 × its own size, its size + CALLER_SLACK)` instructions, and the
//!   whole program to at most `max(2 × its size, its size + PROGRAM_SLACK)`;
//!   past either bound calls are kept (a chain of functions each calling the
//!   next twice would otherwise double per level under `--inline all`).
//!   (Cranelift's inliner splits the caller's block after every call it
//!   inlines, moving the rest of the block: a block of many calls would cost
//!   the square of its length, so the translator ends a block after every
//!   call it may inline, `lower/expr.rs`.)
//! * **The optimizer** ([`egraph_work`]): Cranelift's e-graph pass looks up
//!   every pure instruction's scope by scanning the dominator-tree path from
//!   the top, so its work is the sum over instructions of their block's depth
//!   in the dominator tree: quadratic for a long `else if` chain, whose tests
//!   each dominate the next. A function whose sum exceeds
//!   [`EGRAPH_WORK_LIMIT`] is compiled without the mid-end optimizer (as at
//!   -O0); register allocation and instruction selection are unchanged.
//! * **Register allocation** ([`over_regalloc_budget`]): regalloc2's
//!   backtracking allocator takes time that grows with the square of the
//!   program in two shapes found so far. Many joins: an `else if` chain of
//!   N arms that all continue after it, inside a loop whose arms each make
//!   a call (19 000 arms: 2.5 s at -O2, 0.30 s single-pass; 30 000 arms
//!   outside a loop, 1.46 s at -O0, 0.19 s). Many values live across many
//!   calls: `x = x + g(k)` written N times, whose additions the e-graph
//!   pass places at their first use, the last one, so that every call's
//!   result is live across every later call (20 000 lines: 4.3 s at -O1,
//!   0.10 s single-pass). A function of more than [`JOIN_LIMIT`] join
//!   edges ([`join_edges`]) or a [`pressure_across_calls`] over
//!   [`PRESSURE_LIMIT`] is allocated by regalloc2's single-pass allocator
//!   (more spills and moves, linear time but for values live across many
//!   blocks: docs/backend.md), at every level.

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{Function, Value};

/// Instructions a caller may gain beyond doubling (a small function calling
/// many helpers).
pub const CALLER_SLACK: usize = 20_000;
/// Instructions the program may gain beyond doubling.
pub const PROGRAM_SLACK: usize = 200_000;
/// Largest [`egraph_work`] of a function compiled with the optimizer:
/// about 0.2 s of the e-graph's scope scans on the reference machine.
pub const EGRAPH_WORK_LIMIT: u64 = 100_000_000;

/// Most join edges ([`join_edges`]) of a function given the backtracking
/// register allocator. The constant of the square depends on the shape: the
/// worst found, an `else if` chain inside a loop whose arms each call and
/// assign (`x = x + g(k)`), takes 0.17 s of Cranelift at 4 900 arms (-O2,
/// medians of three), and took 2.5 s at 19 000 with this allocator.
pub const JOIN_LIMIT: usize = 5_000;

/// Largest [`pressure_across_calls`] of a function given the backtracking
/// register allocator: 5 000 lines `x = x + g(k)` (1.25 × 10^7) took about
/// 0.25 s of Cranelift at -O1.
pub const PRESSURE_LIMIT: u64 = 10_000_000;

/// The inlining budget of one compilation.
#[derive(Debug)]
pub struct InlineBudget {
    /// Instructions (outside cold blocks) the program may still gain.
    program_left: usize,
    /// Callers where a bound stopped inlining, and which bound.
    pub stopped: Vec<(String, Bound)>,
}

/// Which bound stopped inlining into a caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Caller,
    Program,
}

impl InlineBudget {
    /// The budget of a program whose functions have `total` hot instructions
    /// before inlining.
    pub fn new(total: usize) -> InlineBudget {
        InlineBudget {
            program_left: total.max(PROGRAM_SLACK),
            stopped: Vec::new(),
        }
    }

    /// The largest size a caller of `own` instructions may grow to.
    pub fn caller_limit(own: usize) -> usize {
        own.saturating_mul(2).max(own.saturating_add(CALLER_SLACK))
    }

    /// Whether a caller now of `size` instructions (limit `limit`) may take a
    /// callee of `callee` instructions; takes it from the program's budget.
    pub fn admit(&mut self, caller: &str, size: usize, limit: usize, callee: usize) -> bool {
        let bound = if size.saturating_add(callee) > limit {
            Bound::Caller
        } else if callee > self.program_left {
            Bound::Program
        } else {
            self.program_left -= callee;
            return true;
        };
        if self.stopped.last().is_none_or(|(c, _)| c != caller) {
            self.stopped.push((caller.to_string(), bound));
        }
        false
    }

    /// The note for the user when a bound stopped inlining, else `None`.
    pub fn note(&self) -> Option<String> {
        let (first, bound) = self.stopped.first()?;
        let why = match bound {
            Bound::Caller => {
                format!("`{first}` would grow past twice its size plus {CALLER_SLACK} instructions")
            }
            Bound::Program => format!(
                "the program would grow past twice its size plus {PROGRAM_SLACK} instructions"
            ),
        };
        let others = match self.stopped.len() {
            1 => String::new(),
            n => format!(
                " (and in {} other function{})",
                n - 1,
                if n == 2 { "" } else { "s" }
            ),
        };
        Some(format!(
            "note: inlining stopped at its budget: {why}{others}; the remaining calls are kept"
        ))
    }
}

/// Work of Cranelift's e-graph pass on `f`: the sum over instructions of
/// the depth of their block in the dominator tree (see the module docs).
pub fn egraph_work(f: &Function) -> u64 {
    let cfg = ControlFlowGraph::with_function(f);
    let domtree = DominatorTree::with_function(f, &cfg);
    let mut depth: SecondaryMap<cranelift_codegen::ir::Block, u64> = SecondaryMap::new();
    let mut work = 0u64;
    for &block in domtree.cfg_rpo() {
        let d = domtree.idom(block).map_or(0, |parent| depth[parent] + 1);
        depth[block] = d;
        work = work.saturating_add(d.saturating_mul(f.layout.block_insts(block).count() as u64));
    }
    work
}

/// Whether `f` is allocated by regalloc2's single-pass allocator: more
/// than [`JOIN_LIMIT`] join edges or a [`pressure_across_calls`] over
/// [`PRESSURE_LIMIT`] (see the module docs). Functions too small to pass
/// either bound are not walked (a walk of every function cost 0.4-0.5 % of
/// a build's instructions).
pub fn over_regalloc_budget(f: &Function) -> bool {
    // A block ends in at most two branches (no jump tables), so join
    // edges are fewer than twice the blocks; the pressure, calls times
    // values at most, is below instructions times values.
    let (insts, values) = (f.dfg.num_insts() as u64, f.dfg.num_values() as u64);
    (f.dfg.num_blocks() * 2 > JOIN_LIMIT && join_edges(f) > JOIN_LIMIT)
        || (insts.saturating_mul(values) > PRESSURE_LIMIT
            && pressure_across_calls(f) > PRESSURE_LIMIT)
}

/// The join edges of `f`: over the blocks of two or more predecessors, the
/// predecessors but one. A chain of N nested joins has N, as has one block
/// that N + 1 arms jump to.
pub fn join_edges(f: &Function) -> usize {
    let cfg = ControlFlowGraph::with_function(f);
    f.layout
        .blocks()
        .map(|b| cfg.pred_iter(b).count().saturating_sub(1))
        .sum()
}

/// Over the calls of `f`, the values live across each, with every value's
/// live range taken as the stretch of the layout from its definition to its
/// last use, as a linear-scan allocator sees it (a value used in a loop
/// before its definition's position is not extended to the loop's end, so
/// this errs low). Two walks of the layout and a difference array: linear.
pub fn pressure_across_calls(f: &Function) -> u64 {
    // Positions in layout order: a block's parameters are defined at its
    // own position, each instruction at the next.
    let mut def: SecondaryMap<Value, u32> = SecondaryMap::new();
    let mut last_use: SecondaryMap<Value, u32> = SecondaryMap::new();
    let mut calls = Vec::new();
    let mut pos = 0u32;
    for block in f.layout.blocks() {
        pos += 1;
        for &p in f.dfg.block_params(block) {
            def[p] = pos;
        }
        for inst in f.layout.block_insts(block) {
            pos += 1;
            for v in f.dfg.inst_values(inst) {
                let v = f.dfg.resolve_aliases(v);
                last_use[v] = last_use[v].max(pos);
            }
            for &r in f.dfg.inst_results(inst) {
                def[r] = pos;
            }
            if f.dfg.insts[inst].opcode().is_call() {
                calls.push(pos);
            }
        }
    }
    if calls.is_empty() {
        return 0;
    }
    // +1 just after a value's definition, -1 at its last use: the prefix sum
    // at a call counts the values defined before it and used after it. A
    // use before the definition's position (a loop's back edge) counts
    // nothing.
    let mut delta = vec![0i64; pos as usize + 2];
    for (v, &d) in def.iter() {
        let u = last_use[v];
        // `d` is 0 for a value nothing in the layout defines.
        if d > 0 && u > d + 1 {
            delta[d as usize + 1] += 1;
            delta[u as usize] -= 1;
        }
    }
    let (mut live, mut total, mut next) = (0i64, 0u64, 0usize);
    for (at, change) in delta.iter().enumerate() {
        live += change;
        if calls.get(next) == Some(&(at as u32)) {
            total = total.saturating_add(live as u64);
            next += 1;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seals and finalizes a test function built for x86-64.
    fn finish(mut b: cranelift_frontend::FunctionBuilder) {
        use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
        b.seal_all_blocks();
        b.finalize(TargetFrontendConfig {
            default_call_conv: CallConv::SystemV,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
    }

    /// An `else if` chain of `arms` arms that all continue after it (each
    /// arm a join's predecessor), as the translator builds one.
    fn chain(arms: usize) -> Function {
        use cranelift_codegen::ir::condcodes::IntCC;
        use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, types};
        use cranelift_codegen::isa::CallConv;
        use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I64));
        let mut f = Function::with_name_signature(Default::default(), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut ctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let x = b.block_params(entry)[0];
        let mut joins = Vec::new();
        for i in 0..arms {
            let (arm, next, join) = (b.create_block(), b.create_block(), b.create_block());
            let hit = b.ins().icmp_imm_s(IntCC::Equal, x, i as i64);
            b.ins().brif(hit, arm, &[], next, &[]);
            b.switch_to_block(arm);
            b.ins().jump(join, &[]);
            b.switch_to_block(next);
            joins.push(join);
        }
        for join in joins.into_iter().rev() {
            b.ins().jump(join, &[]);
            b.switch_to_block(join);
        }
        b.ins().return_(&[]);
        finish(b);
        f
    }

    #[test]
    fn join_edges_count_the_predecessors_of_joins_but_one() {
        assert_eq!(join_edges(&chain(0)), 0);
        assert_eq!(join_edges(&chain(3)), 3);
        assert!(!over_regalloc_budget(&chain(3)));
        let large = chain(JOIN_LIMIT + 1);
        assert_eq!(join_edges(&large), JOIN_LIMIT + 1);
        assert!(over_regalloc_budget(&large));
    }

    /// `x = x + g(k)` written `calls` times as the e-graph pass leaves it:
    /// the calls first, then the additions, so that the result of call `k`
    /// is live across the `calls - 1 - k` calls after it. With `blocks`,
    /// each call ends its block (as the translator ends one after a call it
    /// may inline).
    fn sums_after_calls(calls: usize, blocks: bool) -> Function {
        use cranelift_codegen::ir::{AbiParam, ExtFuncData, ExternalName, InstBuilder, Signature};
        use cranelift_codegen::ir::{UserExternalName, types};
        use cranelift_codegen::isa::CallConv;
        use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I64));
        let mut f = Function::with_name_signature(Default::default(), sig.clone());
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut ctx);
        let sig = b.import_signature(sig);
        let name = b
            .func
            .declare_imported_user_function(UserExternalName::new(0, 0));
        let g = b.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature: sig,
            colocated: true,
            patchable: false,
        });
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let mut results = Vec::new();
        for k in 0..calls {
            let arg = b.ins().iconst(types::I64, k as i64);
            let call = b.ins().call(g, &[arg]);
            results.push(b.inst_results(call)[0]);
            if blocks {
                let next = b.create_block();
                b.ins().jump(next, &[]);
                b.switch_to_block(next);
            }
        }
        let mut sum = b.ins().iconst(types::I64, 0);
        for r in results {
            sum = b.ins().iadd(sum, r);
        }
        b.ins().return_(&[sum]);
        finish(b);
        f
    }

    #[test]
    fn pressure_counts_each_value_once_for_every_call_it_outlives() {
        for blocks in [false, true] {
            // Results 0, 1, 2, 3 outlive 3, 2, 1, 0 later calls.
            assert_eq!(pressure_across_calls(&sums_after_calls(4, blocks)), 6);
            assert!(!over_regalloc_budget(&sums_after_calls(100, blocks)));
            // 4 500 calls: 4 500 × 4 499 / 2 ≈ 1.01 × 10^7.
            let n = 4_500u64;
            let many = sums_after_calls(n as usize, blocks);
            assert_eq!(pressure_across_calls(&many), n * (n - 1) / 2);
            assert!(over_regalloc_budget(&many));
        }
    }

    #[test]
    fn callers_double_or_gain_the_slack() {
        assert_eq!(InlineBudget::caller_limit(100), 100 + CALLER_SLACK);
        assert_eq!(InlineBudget::caller_limit(20_000), 40_000);
    }

    #[test]
    fn the_program_budget_runs_out_once_and_is_reported() {
        let mut b = InlineBudget::new(1_000);
        assert!(b.admit("f", 10, 100, 50));
        assert!(!b.admit("f", 80, 100, 50), "the caller's bound");
        assert!(!b.admit("f", 10, 20, 50), "reported once");
        assert!(b.admit("g", 0, usize::MAX, PROGRAM_SLACK - 50));
        assert!(!b.admit("h", 0, usize::MAX, 1), "the program's bound");
        assert_eq!(
            b.stopped,
            [
                ("f".to_string(), Bound::Caller),
                ("h".to_string(), Bound::Program)
            ]
        );
        assert_eq!(
            b.note().unwrap(),
            format!(
                "note: inlining stopped at its budget: `f` would grow past twice its size plus {CALLER_SLACK} instructions (and in 1 other function); the remaining calls are kept"
            )
        );
    }
}
