//! Facts about a function found before it is translated.

use std::collections::HashSet;

use tern_compiler::tir::{self, Arg, Builtin, Expr, ExprKind, LocalId, Stmt, Type};

/// Locals whose address is taken (`ref x`, `unsafe::addr(x)` of a scalar or
/// slice variable) anywhere in `body`.
pub(super) fn addressed_locals(body: &tir::Block) -> HashSet<LocalId> {
    let mut out = HashSet::new();
    collect_addressed_block(body, &mut out);
    out
}

/// Whether evaluating `e` yields an aggregate in a temporary nobody else
/// refers to (as opposed to a place: a local, field or element).
pub(super) fn is_fresh_aggregate(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Call { .. }
            | ExprKind::StructLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayLit(_)
            | ExprKind::Bytes(_)
    )
}

/// Locals whose address is taken (`ref x`, `unsafe::addr(x)` of a scalar or
/// slice variable): they live in a stack slot instead of SSA variables.
fn collect_addressed_block(block: &tir::Block, out: &mut HashSet<LocalId>) {
    for stmt in &block.stmts {
        match stmt {
            Stmt::Let { init, .. } => collect_addressed(init, out),
            Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                collect_addressed(place, out);
                collect_addressed(value, out);
            }
            Stmt::Expr(e) => collect_addressed(e, out),
            Stmt::If { cond, then, else_ } => {
                collect_addressed(cond, out);
                collect_addressed_block(then, out);
                if let Some(e) = else_ {
                    collect_addressed_block(e, out);
                }
            }
            Stmt::While { cond, body } => {
                collect_addressed(cond, out);
                collect_addressed_block(body, out);
            }
            Stmt::For {
                start, end, body, ..
            } => {
                collect_addressed(start, out);
                collect_addressed(end, out);
                collect_addressed_block(body, out);
            }
            Stmt::Return(Some(e)) => collect_addressed(e, out),
            Stmt::Return(None) | Stmt::Break | Stmt::Continue => {}
        }
    }
}

fn collect_addressed(e: &Expr, out: &mut HashSet<LocalId>) {
    let mark_root = |place: &Expr, out: &mut HashSet<LocalId>| {
        if let ExprKind::Local(id) = place.kind {
            out.insert(id);
        }
    };
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Bytes(_)
        | ExprKind::Local(_) => {}
        ExprKind::Field(b, _) => collect_addressed(b, out),
        ExprKind::Index(b, i) => {
            collect_addressed(b, out);
            collect_addressed(i, out);
        }
        ExprKind::SliceRange { base, lo, hi } => {
            collect_addressed(base, out);
            for x in [lo, hi].into_iter().flatten() {
                collect_addressed(x, out);
            }
        }
        ExprKind::Unary(_, x) | ExprKind::Cast(x) | ExprKind::Len(x) => collect_addressed(x, out),
        ExprKind::Binary(_, l, r) => {
            collect_addressed(l, out);
            collect_addressed(r, out);
        }
        ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
            for a in args {
                match a {
                    Arg::Value(x) => collect_addressed(x, out),
                    Arg::Ref(x) => {
                        mark_root(x, out);
                        collect_addressed(x, out);
                    }
                }
            }
        }
        ExprKind::StructLit { fields, .. } => fields.iter().for_each(|x| collect_addressed(x, out)),
        ExprKind::ArrayRepeat { value, .. } => collect_addressed(value, out),
        ExprKind::ArrayLit(items) => items.iter().for_each(|x| collect_addressed(x, out)),
        ExprKind::Builtin(b, args) => {
            if *b == Builtin::UnsafeAddr
                && let Some(x) = args.first()
                && !matches!(x.ty, Type::Slice(_) | Type::Reusable(_))
            {
                mark_root(x, out);
            }
            args.iter().for_each(|x| collect_addressed(x, out));
        }
    }
}
