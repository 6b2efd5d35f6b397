//! Which by-value parameters a function may write through a slice.
//!
//! A by-value aggregate argument that is a place may be passed by the
//! place's own address instead of a copy (`expr::may_share`), because a value
//! parameter is immutable. One thing writes it all the same: a slice of an
//! array inside it (`a[..]` of an immutable binding is a writable view, on
//! purpose, docs/language.md section 7), so `fn f(a: [3]i64) { let s = a[..];
//! s[0] = 65; }` would write the caller's array through the shared address.
//! A parameter is written when the body slices an array rooted in it, or
//! passes a place rooted in it by value to a function that writes that
//! parameter (which may share it in turn): a least fixpoint over the
//! program. Such a parameter's arguments are always copied.

use tern_compiler::tir::{Arg, Expr, ExprKind, Program, Type};

/// Per function, per parameter: whether the function may write the value
/// parameter through a slice (`false` for `ref` parameters, which share by
/// definition).
pub(crate) fn written_params(program: &Program) -> Vec<Vec<bool>> {
    let mut written: Vec<Vec<bool>> = program
        .functions
        .iter()
        .map(|f| vec![false; f.params.len()])
        .collect();
    loop {
        let mut changed = false;
        for (fi, f) in program.functions.iter().enumerate() {
            for (k, p) in f.params.iter().enumerate() {
                if p.by_ref || written[fi][k] {
                    continue;
                }
                let local = p.local.0;
                let mut hit = false;
                tern_compiler::tir::visit::each_expr(&f.body, &mut |e| {
                    hit |= match &e.kind {
                        ExprKind::SliceRange { base, .. } => {
                            matches!(base.ty, Type::Array(..)) && rooted_in(base, local)
                        }
                        ExprKind::Call { func, args } => args.iter().enumerate().any(|(j, a)| {
                            matches!(a, Arg::Value(x) if rooted_in(x, local))
                                && written
                                    .get(func.0 as usize)
                                    .and_then(|w| w.get(j))
                                    .copied()
                                    .unwrap_or(true)
                        }),
                        _ => false,
                    };
                });
                if hit {
                    written[fi][k] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return written;
        }
    }
}

/// Whether place `e` lies in the memory of local `local`: the local itself,
/// or a field or array element of a place that does (an element of a slice
/// lies where the slice points, not in the local).
fn rooted_in(e: &Expr, local: u32) -> bool {
    match &e.kind {
        ExprKind::Local(id) => id.0 == local,
        ExprKind::Field(b, _) => rooted_in(b, local),
        ExprKind::Index(b, _) => matches!(b.ty, Type::Array(..)) && rooted_in(b, local),
        _ => false,
    }
}
