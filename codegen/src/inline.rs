//! Inlining of Tern functions into their callers, with Cranelift's inliner
//! (`cranelift_codegen::inline`), bottom-up over the call graph.
//!
//! Every function is first translated to CLIF; then, callees before callers
//! (strongly connected components of the call graph in reverse topological
//! order), each function gets the already-inlined bodies of the calls the
//! policy picks, and is compiled. A call inside a cycle (recursion) is never
//! inlined, so inlining ends. Runtime-error locations survive inlining: they
//! are data (the `file:line:col` string each check passes), not source
//! locations, so an inlined check still names its own line; and the
//! inliner chains the call-site tags of `crate::debug`, so a backtrace still
//! shows the inlined frames.

use std::borrow::Cow;
use std::collections::HashMap;

use cranelift_codegen::inline::{Inline, InlineCommand};
use cranelift_codegen::ir::{
    self, ExternalName, Function, GlobalValueData, Opcode, UserExternalName, UserExternalNameRef,
};
use cranelift_module::FuncId;
use tern_compiler::tir::Program;

use crate::budget::InlineBudget;

/// Which calls are inlined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inlining {
    /// No call is inlined (the default below -O2).
    Off,
    /// Calls of small callees ([`NATURAL_LIMIT`] instructions on their
    /// non-cold paths, after their own inlining): the -O2 default.
    Natural,
    /// Every call that can be (not recursive, frame not too large).
    All,
}

/// Largest callee, in CLIF instructions outside cold blocks, that
/// [`Inlining::Natural`] inlines. Measured: see docs/backend.md, "Inlining".
pub const NATURAL_LIMIT: usize = 400;

/// Largest total of stack slots inlined into one caller: Cranelift gives
/// every slot of every inlined call site its own memory in the caller's
/// frame (a call's frame is gone when it returns), which the front end's
/// frame bound does not count. Per caller, not per callee (300 inlined
/// calls of a function with a 32 KiB array made a 9.6 MB frame, a stack
/// overflow at -O2 only in a program with no recursion), and small: a
/// caller holds its inlined slots across its own calls, so a chain of
/// callers adds them up (130 functions calling each other in turn, each
/// with 64 KiB inlined, overflowed at -O2 only); a helper whose arrays
/// are that large spends its time on them, not on the call.
const MAX_INLINED_SLOTS: u64 = 4 * 1024;

/// The order to compile functions in (callees first) and the component of
/// each function (calls within one component are recursive).
pub struct CallGraph {
    /// Function indices, callees before callers.
    pub order: Vec<usize>,
    /// Strongly connected component of each function.
    pub component: Vec<usize>,
    /// Whether each function is part of a recursion (its component has
    /// more than one function, or it calls itself).
    pub recursive: Vec<bool>,
    /// The functions each function calls.
    pub callees: Vec<Vec<usize>>,
}

impl CallGraph {
    /// The call graph of `program` (Tarjan's algorithm, iterative so deep
    /// call chains need no deep recursion).
    pub fn of(program: &Program) -> CallGraph {
        let n = program.functions.len();
        let edges: Vec<Vec<usize>> = program
            .functions
            .iter()
            .map(|f| {
                let mut calls = Vec::new();
                tern_compiler::tir::visit::callees(&f.body, &mut calls);
                let mut out: Vec<usize> = calls.iter().map(|c| c.0 as usize).collect();
                out.sort_unstable();
                out.dedup();
                out
            })
            .collect();
        const NONE: usize = usize::MAX;
        let mut index = vec![NONE; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut component = vec![NONE; n];
        let mut order = Vec::with_capacity(n);
        let mut next = 0;
        let mut components = 0;
        for root in 0..n {
            if index[root] != NONE {
                continue;
            }
            // (node, next edge to look at)
            let mut work = vec![(root, 0usize)];
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut e)) = work.last_mut() {
                if let Some(&w) = edges[v].get(*e) {
                    *e += 1;
                    if index[w] == NONE {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    // A component is complete: its members come after every
                    // component they call.
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = components;
                        order.push(w);
                        if w == v {
                            break;
                        }
                    }
                    components += 1;
                }
            }
        }
        let mut members = vec![0usize; components];
        for &c in &component {
            members[c] += 1;
        }
        let recursive = (0..n)
            .map(|v| members[component[v]] > 1 || edges[v].contains(&v))
            .collect();
        CallGraph {
            order,
            component,
            recursive,
            callees: edges,
        }
    }
}

/// Instructions outside cold blocks: what a call site pays when inlined.
pub fn hot_size(f: &Function) -> usize {
    f.layout
        .blocks()
        .filter(|b| !f.layout.is_cold(*b))
        .map(|b| f.layout.block_insts(b).count())
        .sum()
}

/// The bytes of `f`'s stack slots.
pub fn slot_bytes(f: &Function) -> u64 {
    f.sized_stack_slots
        .values()
        .map(|s| u64::from(s.size))
        .sum()
}

/// What the inliner knows of the whole program.
pub struct Callees<'a> {
    pub policy: &'a Inlining,
    /// Tern function index of each module function id.
    pub index_of: &'a HashMap<FuncId, usize>,
    pub graph: &'a CallGraph,
    /// Tern display names never inlined (a benchmark's call boundary).
    pub keep_calls: &'a [String],
    pub names: &'a [String],
    /// Whether each function returns an aggregate through memory: inlining
    /// one does not remove the copy into the caller's slot (Cranelift does
    /// no copy elision) and costs registers in the caller, so `Natural`
    /// leaves them (measured: docs/backend.md, "Inlining").
    pub returns_memory: &'a [bool],
}

impl Callees<'_> {
    /// Whether calls of function `j` may be inlined at all (size and
    /// recursion aside).
    pub fn inlines(&self, j: usize) -> bool {
        *self.policy != Inlining::Off
            && !self.keep_calls.iter().any(|k| *k == self.names[j])
            && (*self.policy == Inlining::All || !self.returns_memory[j])
    }
}

/// Largest total of inlined stack slots along any chain of calls outside
/// recursions: a caller holds its inlined slots across its own calls, so
/// the per-caller limit alone let 2 000 distinct functions calling each
/// other in turn, each with a 4 KiB helper inlined, overflow the stack at
/// -O2 only.
const MAX_CHAIN_SLOTS: u64 = 64 * 1024;

/// Inlined stack slots a function that is part of a recursion may take
/// beyond its own: a struct temporary or two (binary-trees' `new_node`
/// builds a 16-byte node inside its recursion: kept as a call, the program
/// ran 8 % more instructions).
const RECURSIVE_EXTRA_SLOTS: u64 = 64;

/// The most stack-slot bytes that may be inlined into function `caller`,
/// whose own slots (before inlining) are `own`: [`MAX_INLINED_SLOTS`], and
/// for a function that is part of a recursion, whose frame every level
/// holds, its own and [`RECURSIVE_EXTRA_SLOTS`] (a helper with a 4 KiB
/// array inlined into a scalar recursion cut its depth from about 260 000
/// levels to 1 000 at -O2, and a 256-byte one to 15 000). The slow part of
/// a split recursion inlines only its own wrapper, whose unused slots take
/// no memory (`crate::partial_inline`).
/// Along a chain of calls, what `caller`'s callees already hold (`chain`,
/// see [`chain_slots`]) is taken off [`MAX_CHAIN_SLOTS`].
pub fn slot_limit(graph: &CallGraph, chain: &[u64], caller: usize, own: u64) -> u64 {
    let limit = match graph.recursive[caller] {
        true => (own + RECURSIVE_EXTRA_SLOTS).min(MAX_INLINED_SLOTS),
        false => MAX_INLINED_SLOTS,
    };
    limit.min(MAX_CHAIN_SLOTS.saturating_sub(chain_below(graph, chain, caller)))
}

/// The most inlined stack slots a chain of calls from one of `caller`'s
/// callees outside its recursion holds (`chain`: per function compiled so
/// far, see [`chain_slots`]; callees come first).
fn chain_below(graph: &CallGraph, chain: &[u64], caller: usize) -> u64 {
    graph.callees[caller]
        .iter()
        .filter(|&&g| graph.component[g] != graph.component[caller])
        .map(|&g| chain[g])
        .max()
        .unwrap_or(0)
}

/// What a chain of calls from `caller` holds of inlined stack slots: its
/// own (`inlined`) and the most any callee's chain holds.
pub fn chain_slots(graph: &CallGraph, chain: &[u64], caller: usize, inlined: u64) -> u64 {
    inlined + chain_below(graph, chain, caller)
}

/// The inliner for one caller: decides per call, and hands Cranelift the
/// callee's (already inlined) body.
pub struct Inliner<'a> {
    pub callees: &'a Callees<'a>,
    /// Every function's current body, by Tern function index.
    pub bodies: &'a [Function],
    /// [`hot_size`] of every body in `bodies`.
    pub sizes: &'a [usize],
    /// The program's budget (every mode: `crate::budget`).
    pub budget: &'a mut InlineBudget,
    /// The caller's size so far (its own, plus what it inlined) and the
    /// largest it may reach.
    pub size: usize,
    pub limit: usize,
    /// The caller's Tern function index.
    pub caller: usize,
    /// Stack-slot bytes inlined into the caller so far, and the most it may
    /// take ([`slot_limit`]).
    pub slots: u64,
    pub slot_limit: u64,
    /// Set when the caller is the slow part of its function
    /// (`crate::partial_inline`): then only calls of the function itself
    /// are inlined (its wrapper, although the call is recursive); the
    /// caller's other calls were decided with the whole function.
    pub slow_part: bool,
}

impl Inline for Inliner<'_> {
    fn inline(
        &mut self,
        caller: &ir::Function,
        inst: ir::Inst,
        opcode: Opcode,
        callee: ir::FuncRef,
        _args: &[ir::Value],
    ) -> InlineCommand<'_> {
        let cx = self.callees;
        // A call in a cold block (one that never returns, such as a
        // library's failure report: `tern_compiler::tir::divergence`) stays
        // a call: inlined, its body's blocks would be laid out in the hot
        // path's way, and its frame's slots added to the caller's.
        let cold = caller
            .layout
            .inst_block(inst)
            .is_some_and(|b| caller.layout.is_cold(b));
        if opcode != Opcode::Call || cold {
            return InlineCommand::KeepCall;
        }
        let ExternalName::User(name) = &caller.dfg.ext_funcs[callee].name else {
            return InlineCommand::KeepCall;
        };
        let name = &caller.params.user_named_funcs()[*name];
        let Some(&j) = cx.index_of.get(&FuncId::from_u32(name.index)) else {
            // A runtime function or an `extern fn`.
            return InlineCommand::KeepCall;
        };
        let recursive = match self.slow_part {
            true if j == self.caller => false,
            true => return InlineCommand::KeepCall,
            false => cx.graph.component[j] == cx.graph.component[self.caller],
        };
        let body = &self.bodies[j];
        let size = self.sizes[j];
        let slots = slot_bytes(body);
        if recursive
            || !cx.inlines(j)
            || (*cx.policy == Inlining::Natural && size > NATURAL_LIMIT)
            || self.slots + slots > self.slot_limit
            || !self
                .budget
                .admit(&cx.names[self.caller], self.size, self.limit, size)
        {
            return InlineCommand::KeepCall;
        }
        self.size += size;
        self.slots += slots;
        let mut body = body.clone();
        rename_symbols_for(caller, &mut body);
        InlineCommand::Inline {
            callee: Cow::Owned(body),
            // Bottom-up: the body already has its own calls inlined.
            visit_callee: false,
        }
    }
}

/// Cranelift's inliner copies the callee's `symbol` global values (our
/// strings and location texts) verbatim, name references included, although
/// those index the *callee's* table of external names; it then merges that
/// table into the caller's (existing names keep their index, new ones are
/// appended in the callee's order). So rewrite the copy's symbol names to the
/// indices the caller's table will have after that merge.
fn rename_symbols_for(caller: &Function, callee: &mut Function) {
    let mut index: HashMap<UserExternalName, u32> = caller
        .params
        .user_named_funcs()
        .iter()
        .map(|(r, name)| (name.clone(), r.as_u32()))
        .collect();
    let mut next = caller.params.user_named_funcs().len() as u32;
    let merged: Vec<u32> = callee
        .params
        .user_named_funcs()
        .values()
        .map(|name| {
            *index.entry(name.clone()).or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    for gv in callee.global_values.values_mut() {
        if let GlobalValueData::Symbol {
            name: ExternalName::User(r),
            ..
        } = gv
        {
            *r = UserExternalNameRef::from_u32(merged[r.as_u32() as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f0 -> f1 -> ... -> f(n - 1)`, no recursion, callees first.
    fn chain(n: usize) -> CallGraph {
        CallGraph {
            order: (0..n).rev().collect(),
            component: (0..n).collect(),
            recursive: vec![false; n],
            callees: (0..n).map(|i| (i + 1..n).take(1).collect()).collect(),
        }
    }

    /// Inlined slots along a chain of calls add up to at most
    /// `MAX_CHAIN_SLOTS`: each link takes what its callees' chains leave.
    #[test]
    fn a_chain_of_callers_shares_one_bound() {
        let n = 40;
        let graph = chain(n);
        let mut held = vec![0u64; n];
        let mut total = 0;
        for &f in &graph.order {
            let limit = slot_limit(&graph, &held, f, 0);
            assert!(limit <= MAX_INLINED_SLOTS);
            held[f] = chain_slots(&graph, &held, f, limit);
            total += limit;
        }
        assert_eq!(total, MAX_CHAIN_SLOTS);
        assert_eq!(held[0], MAX_CHAIN_SLOTS);
    }

    /// A function that is part of a recursion takes its own slots and
    /// `RECURSIVE_EXTRA_SLOTS`, whatever else it could.
    #[test]
    fn a_recursion_takes_its_own_frame_and_a_little() {
        let mut graph = chain(2);
        graph.recursive[1] = true;
        graph.callees[1].push(1);
        let held = vec![0u64; 2];
        assert_eq!(slot_limit(&graph, &held, 1, 0), RECURSIVE_EXTRA_SLOTS);
        assert_eq!(
            slot_limit(&graph, &held, 1, 100),
            100 + RECURSIVE_EXTRA_SLOTS
        );
        assert_eq!(slot_limit(&graph, &held, 1, 1 << 20), MAX_INLINED_SLOTS);
        assert_eq!(slot_limit(&graph, &held, 0, 0), MAX_INLINED_SLOTS);
    }
}
