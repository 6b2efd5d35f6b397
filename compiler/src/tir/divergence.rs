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
use super::{Block, Builtin, Expr, ExprKind, FuncId, Program, Stmt};

/// The functions of a program that never return.
#[derive(Clone, Debug, Default)]
pub struct Divergence {
    /// By function id.
    never_returns: Vec<bool>,
}

impl Divergence {
    /// The diverging functions of `program`: a fixed point, since a
    /// function diverges by calling one that does.
    pub fn of(program: &Program) -> Divergence {
        let mut never_returns = vec![false; program.functions.len()];
        loop {
            let mut changed = false;
            for (i, f) in program.functions.iter().enumerate() {
                if !never_returns[i] && block_diverges(&f.body, &never_returns) {
                    never_returns[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return Divergence { never_returns };
            }
        }
    }

    /// Whether every run of `f` ends in a panic.
    pub fn never_returns(&self, f: FuncId) -> bool {
        self.never_returns
            .get(f.0 as usize)
            .copied()
            .unwrap_or(false)
    }
}

/// Whether a statement of `b`'s top level diverges before any `return`.
fn block_diverges(b: &Block, never_returns: &[bool]) -> bool {
    for s in &b.stmts {
        if holds_return(s) {
            return false;
        }
        if stmt_diverges(s, never_returns) {
            return true;
        }
    }
    false
}

fn stmt_diverges(s: &Stmt, never_returns: &[bool]) -> bool {
    match s {
        Stmt::Expr(e) | Stmt::Let { init: e, .. } => expr_diverges(e, never_returns),
        Stmt::Block(b) => block_diverges(b, never_returns),
        _ => false,
    }
}

/// Whether `e` itself is a panic or a call of a diverging function (its
/// arguments run first, and return or diverge: either way `e` diverges).
fn expr_diverges(e: &Expr, never_returns: &[bool]) -> bool {
    match &e.kind {
        ExprKind::Builtin(Builtin::Panic, _) => true,
        ExprKind::Call { func, .. } => never_returns.get(func.0 as usize) == Some(&true),
        _ => false,
    }
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
