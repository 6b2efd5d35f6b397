//! Which by-value arguments must be copied although `expr::may_share` would
//! pass the place itself: those of parameters the callee writes through a
//! slice, and those holding a pointer for a callee that writes through one.
//!
//! A by-value aggregate argument that is a place may be passed by the
//! place's own address instead of a copy (`expr::may_share`), because a value
//! parameter is immutable. One thing writes it all the same: a slice of an
//! array inside it (`a[..]` of an immutable binding is a writable view, on
//! purpose, docs/language.md section 8), so `fn f(a: [3]i64) { let s = a[..];
//! s[0] = 65; }` would write the caller's array through the shared address.
//! A parameter is written when the body slices an array rooted in it, or
//! passes a place rooted in it by value to a function that writes that
//! parameter (which may share it in turn): a least fixpoint over the
//! program. Such a parameter's arguments are always copied, and so is every
//! argument that holds a pointer ([`holds_pointers`]), through which the
//! callee could reach the place whatever it does with the parameter itself.

use tern_compiler::tir::visit::{Part, each_expr, stmt_parts};
use tern_compiler::tir::{Arg, Block, Builtin, Expr, ExprKind, Program, Stmt, Type};

/// Whether a value of `ty` holds a pointer (a slice or a reusable slice,
/// in it or in a field or element). Such an argument is shared only with a
/// callee that writes and frees nothing through pointers ([`writes_memory`]):
/// the pointer may lead back into the place itself (`s.v = s.arr[..]`, a
/// node whose `reusable[]` field holds the span it lives in), and a write or
/// free through it would reach the caller's place while the callee's
/// parameter must keep the value it had at the call.
pub(crate) fn holds_pointers(program: &Program, ty: &Type) -> bool {
    match ty {
        Type::Slice(_) | Type::Reusable(_) => true,
        Type::Array(e, _) => holds_pointers(program, e),
        Type::Struct(id) => program.structs[id.0 as usize]
            .fields
            .iter()
            .any(|f| holds_pointers(program, &f.ty)),
        _ => false,
    }
}

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
                each_expr(&f.body, &mut |e| {
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

/// Per function: whether it may write or free memory through a pointer (an
/// element of a slice or reusable slice, `reusable::free`/`resize`/`append`,
/// `unsafe::copy`, an extern), itself or through a function it calls: a
/// least fixpoint over the program.
pub(crate) fn writes_memory(program: &Program) -> Vec<bool> {
    let mut writes = vec![false; program.functions.len()];
    loop {
        let mut changed = false;
        for (fi, f) in program.functions.iter().enumerate() {
            if !writes[fi] && (stores_through_pointer(&f.body) || calls_writer(&f.body, &writes)) {
                writes[fi] = true;
                changed = true;
            }
        }
        if !changed {
            return writes;
        }
    }
}

/// Whether a statement of `b` (nested blocks included) assigns to a place
/// that lies behind a pointer, or hands such a place to a call by `ref`
/// (the callee writes its `ref` parameter as a local: `inc(ref p.v[0])`).
fn stores_through_pointer(b: &Block) -> bool {
    let mut by_ref = false;
    each_expr(b, &mut |e| {
        if let ExprKind::Call { args, .. } = &e.kind {
            by_ref |= args
                .iter()
                .any(|a| matches!(a, Arg::Ref(x) if behind_pointer(x)));
        }
    });
    by_ref
        || b.stmts.iter().any(|s| {
            let here = match s {
                Stmt::Assign { place, .. } | Stmt::CompoundAssign { place, .. } => {
                    behind_pointer(place)
                }
                _ => false,
            };
            let mut inner = false;
            stmt_parts(s, &mut |p| {
                if let Part::Block(nested) = p {
                    inner |= stores_through_pointer(nested);
                }
            });
            here || inner
        })
}

/// Whether place `e` lies where a slice or reusable slice points.
fn behind_pointer(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Index(b, _) => match b.ty {
            Type::Array(..) => behind_pointer(b),
            _ => true,
        },
        ExprKind::Field(b, _) => behind_pointer(b),
        _ => false,
    }
}

/// Whether an expression of `b` frees, resizes or copies memory, calls an
/// extern, or calls a function that writes memory.
fn calls_writer(b: &Block, writes: &[bool]) -> bool {
    let mut hit = false;
    each_expr(b, &mut |e| {
        hit |= match &e.kind {
            ExprKind::Call { func, .. } => writes.get(func.0 as usize).copied().unwrap_or(true),
            ExprKind::CallExtern { .. } => true,
            ExprKind::Builtin(op, _) => matches!(
                op,
                Builtin::ReusableFree
                    | Builtin::ReusableResize
                    | Builtin::ReusableAppend
                    | Builtin::UnsafeCopy
            ),
            _ => false,
        };
    });
    hit
}
