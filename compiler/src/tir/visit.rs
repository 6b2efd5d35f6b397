//! Walking a typed program: what a statement or an expression holds
//! directly, every expression of a block, and the functions a block calls.
//! The passes over `tir` (the checker's escape and frame passes, the
//! backend's facts and inliner, the interpreter's frame layout) walk it with
//! these, so a new construct is taught to one place.

use super::{Arg, Block, Expr, ExprKind, FuncId, Stmt};

/// One part a statement holds directly.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    Expr(&'a Expr),
    Block(&'a Block),
}

/// The parts of `s`, in evaluation order (an `else if` chain's arms in order:
/// `Stmt::if_arms`, so a long chain is not recursed into).
pub fn stmt_parts<'a>(s: &'a Stmt, f: &mut impl FnMut(Part<'a>)) {
    match s {
        Stmt::Let { init: e, .. } | Stmt::Expr(e) | Stmt::Return(Some(e)) => f(Part::Expr(e)),
        Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
            f(Part::Expr(place));
            f(Part::Expr(value));
        }
        Stmt::If { .. } => {
            let chain = s.if_arms().expect("an if");
            for (cond, then) in chain.arms {
                f(Part::Expr(cond));
                f(Part::Block(then));
            }
            if let Some(e) = chain.last {
                f(Part::Block(e));
            }
        }
        Stmt::While { cond, body } => {
            f(Part::Expr(cond));
            f(Part::Block(body));
        }
        Stmt::For {
            start, end, body, ..
        } => {
            f(Part::Expr(start));
            f(Part::Expr(end));
            f(Part::Block(body));
        }
        Stmt::ForEach { seq, body, .. } => {
            f(Part::Expr(seq));
            f(Part::Block(body));
        }
        Stmt::Block(b) => f(Part::Block(b)),
        Stmt::Break | Stmt::Continue | Stmt::Return(None) => {}
    }
}

/// The expressions `e` holds directly, in evaluation order (call arguments,
/// `ref` places included).
pub fn expr_children<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Bytes(_)
        | ExprKind::Text { .. }
        | ExprKind::Local(_) => {}
        ExprKind::Field(x, _)
        | ExprKind::Unary(_, x)
        | ExprKind::Cast(x)
        | ExprKind::Len(x)
        | ExprKind::ArrayRepeat { value: x, .. } => f(x),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            f(a);
            f(b);
        }
        ExprKind::SliceRange { base, lo, hi } => {
            f(base);
            for x in [lo, hi].into_iter().flatten() {
                f(x);
            }
        }
        ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
            for a in args {
                match a {
                    Arg::Value(x) | Arg::Ref(x) => f(x),
                }
            }
        }
        ExprKind::StructLit { fields: xs, .. }
        | ExprKind::ArrayLit(xs)
        | ExprKind::Builtin(_, xs) => xs.iter().for_each(f),
    }
}

/// Every expression of `b`, outermost first, in evaluation order. The walk
/// keeps its own stack, so an expression of any nesting depth is walked on
/// any thread (the interpreter lays out its frames on the caller's).
pub fn each_expr<'a>(b: &'a Block, f: &mut impl FnMut(&'a Expr)) {
    let mut todo = vec![Part::Block(b)];
    let mut next = Vec::new();
    while let Some(part) = todo.pop() {
        match part {
            Part::Block(block) => {
                for s in &block.stmts {
                    stmt_parts(s, &mut |p| next.push(p));
                }
            }
            Part::Expr(e) => {
                f(e);
                expr_children(e, &mut |x| next.push(Part::Expr(x)));
            }
        }
        todo.extend(next.drain(..).rev());
    }
}

/// The functions `b` calls, in order of appearance (with repeats).
pub fn callees(b: &Block, out: &mut Vec<FuncId>) {
    each_expr(b, &mut |e| {
        if let ExprKind::Call { func, .. } = e.kind {
            out.push(func);
        }
    });
}
