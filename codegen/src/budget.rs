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
//! * **Register allocation** ([`over_join_limit`]): regalloc2's backtracking
//!   allocator takes time that grows with the square of a function's joins
//!   (blocks of two or more predecessors) in the shapes found so far: an
//!   `else if` chain of N arms that all continue after it nests N joins
//!   (30 000 arms: 1.46 s at -O0, 0.19 s single-pass; arms that each
//!   return, no join: 0.15 s; arms that call inside a loop, 19 000: 2.5 s
//!   at -O2, 0.30 s single-pass). A
//!   function of more than [`JOIN_LIMIT`] joins is allocated by regalloc2's
//!   single-pass allocator (more spills and moves, linear time), at every
//!   level.

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::Function;

/// Instructions a caller may gain beyond doubling (a small function calling
/// many helpers).
pub const CALLER_SLACK: usize = 20_000;
/// Instructions the program may gain beyond doubling.
pub const PROGRAM_SLACK: usize = 200_000;
/// Largest [`egraph_work`] of a function compiled with the optimizer:
/// about 0.2 s of the e-graph's scope scans on the reference machine.
pub const EGRAPH_WORK_LIMIT: u64 = 100_000_000;

/// Most joins (blocks of two or more predecessors, [`joins`]) of a function
/// given the backtracking register allocator. The constant of the square
/// depends on the shape: the worst found, an `else if` chain inside a loop
/// whose arms each call and assign (`x = x + g(k)`), took 0.24 s of
/// Cranelift at 4 900 joins and 2.5 s at 19 000 (-O2, medians of three);
/// a plain chain of 20 000, 0.75 s.
pub const JOIN_LIMIT: usize = 5_000;

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

/// Whether `f` has more than [`JOIN_LIMIT`] joins: a function of fewer
/// blocks has not, and is not walked (a walk of every function cost 0.4-0.5 %
/// of a build's instructions).
pub fn over_join_limit(f: &Function) -> bool {
    f.dfg.num_blocks() > JOIN_LIMIT && joins(f) > JOIN_LIMIT
}

/// The joins of `f`: blocks of two or more predecessors (see the module
/// docs).
pub fn joins(f: &Function) -> usize {
    let cfg = ControlFlowGraph::with_function(f);
    f.layout
        .blocks()
        .filter(|&b| cfg.pred_iter(b).nth(1).is_some())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `else if` chain of `arms` arms that all continue after it (each
    /// arm a join's predecessor), as the translator builds one.
    fn chain(arms: usize) -> Function {
        use cranelift_codegen::ir::condcodes::IntCC;
        use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, types};
        use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
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
        b.seal_all_blocks();
        b.finalize(TargetFrontendConfig {
            default_call_conv: CallConv::SystemV,
            pointer_width: target_lexicon::PointerWidth::U64,
            page_size_align_log2: 12,
        });
        f
    }

    #[test]
    fn joins_count_blocks_of_two_or_more_predecessors() {
        assert_eq!(joins(&chain(0)), 0);
        assert_eq!(joins(&chain(3)), 3);
        assert!(!over_join_limit(&chain(3)));
        let large = chain(JOIN_LIMIT + 1);
        assert_eq!(joins(&large), JOIN_LIMIT + 1);
        assert!(over_join_limit(&large));
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
