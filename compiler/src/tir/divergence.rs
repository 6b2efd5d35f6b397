//! Which functions never return: those whose every run ends in a panic.
//! The backend lays a call of one out as it lays out a `panic`: in a cold
//! block, out of the hot path's way, with nothing after it (a caller's
//! `if r < 0 { fail(r); }` then joins nothing, and the hot path keeps its
//! registers). The standard library's failure reports (`fail_alloc` and
//! the like, which build a message and panic) are such functions.
//!
//! The rule is deliberately simple and conservative: a function diverges
//! when a statement of its body's top level diverges, and no statement
//! before it, or it itself, holds a `return` anywhere. A statement
//! diverges when it is a `panic(...)` or a call of a diverging function, as
//! an expression statement or a `let`'s initialiser, or a nested block
//! that diverges by the same rule. Loops and branches count as returning
//! (a `while true {}` is not taken for divergence, nor an `if` both of
//! whose arms panic): missing one only costs the layout.

use super::visit::{Part, stmt_parts};
use super::{Block, Builtin, ExprKind, FuncId, Program, Stmt};

/// The functions of a program that never return.
#[derive(Clone, Debug, Default)]
pub struct Divergence {
    /// By function id.
    never_returns: Vec<bool>,
}

impl Divergence {
    /// The diverging functions of `program`, in time linear in its size:
    /// one walk of each body finds whether it panics itself and which
    /// calls would make it diverge, then divergence spreads from callee to
    /// caller along those calls alone.
    pub fn of(program: &Program) -> Divergence {
        let n = program.functions.len();
        let mut never_returns = vec![false; n];
        let mut todo = Vec::new();
        // For each function, the callers that diverge when it does.
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, f) in program.functions.iter().enumerate() {
            let mut calls = Vec::new();
            if prefix_panics(&f.body, &mut calls) {
                never_returns[i] = true;
                todo.push(i);
            } else {
                for callee in calls {
                    if let Some(c) = callers.get_mut(callee.0 as usize) {
                        c.push(i);
                    }
                }
            }
        }
        while let Some(g) = todo.pop() {
            for &f in &callers[g] {
                if !never_returns[f] {
                    never_returns[f] = true;
                    todo.push(f);
                }
            }
        }
        Divergence { never_returns }
    }

    /// Whether every run of `f` ends in a panic.
    pub fn never_returns(&self, f: FuncId) -> bool {
        self.never_returns
            .get(f.0 as usize)
            .copied()
            .unwrap_or(false)
    }
}

/// Walks `b`'s top level up to its first statement that is or holds a
/// `return`: whether a `panic` stands there (then `b` diverges), else
/// the functions called there as a statement, whose divergence would make
/// `b` diverge, into `calls`. A nested block's statements are part of the
/// walk (it holds no `return`, or the walk stopped before it).
fn prefix_panics(b: &Block, calls: &mut Vec<FuncId>) -> bool {
    for s in &b.stmts {
        if holds_return(s) {
            return false;
        }
        match s {
            Stmt::Expr(e) | Stmt::Let { init: e, .. } => match &e.kind {
                ExprKind::Builtin(Builtin::Panic, _) => return true,
                ExprKind::Call { func, .. } => calls.push(*func),
                _ => {}
            },
            Stmt::Block(b) if prefix_panics(b, calls) => return true,
            _ => {}
        }
    }
    false
}

/// Whether `s` is or holds a `return` (expressions hold no statements).
/// With its own stack, as `visit::each_expr` walks.
fn holds_return(s: &Stmt) -> bool {
    let mut todo = vec![s];
    while let Some(s) = todo.pop() {
        if matches!(s, Stmt::Return(_)) {
            return true;
        }
        stmt_parts(s, &mut |p| {
            if let Part::Block(b) = p {
                todo.extend(&b.stmts);
            }
        });
    }
    false
}
