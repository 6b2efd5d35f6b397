//! Facts about a function found before it is translated.

use std::collections::HashSet;

use tern_compiler::tir::{self, Arg, Builtin, Expr, ExprKind, LocalId, Type};

/// Locals whose address is taken (`ref x`, `unsafe::addr(x)` of a scalar or
/// slice variable) anywhere in `body`.
pub(super) fn addressed_locals(body: &tir::Block) -> HashSet<LocalId> {
    let mut out = HashSet::new();
    let mut mark_root = |place: &Expr| {
        if let ExprKind::Local(id) = place.kind {
            out.insert(id);
        }
    };
    tir::visit::each_expr(body, &mut |e| match &e.kind {
        ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
            for a in args {
                if let Arg::Ref(x) = a {
                    mark_root(x);
                }
            }
        }
        ExprKind::Builtin(Builtin::UnsafeAddr, args) => {
            if let Some(x) = args.first()
                && !matches!(x.ty, Type::Slice(_) | Type::Reusable(_))
            {
                mark_root(x);
            }
        }
        _ => {}
    });
    out
}
