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
//! parameter (which may share it in turn). Such a parameter's arguments are always copied, and so is every
//! argument that holds a pointer ([`holds_pointers`]), through which the
//! callee could reach the place whatever it does with the parameter itself.

use std::collections::HashMap;

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
/// definition). One walk of each body, then a worklist from each written
/// parameter to the callers' parameters they were passed from, so the work
/// stays linear in the program however long its call chains are.
pub(crate) fn written_params(program: &Program) -> Vec<Vec<bool>> {
    let mut written: Vec<Vec<bool>> = program
        .functions
        .iter()
        .map(|f| vec![false; f.params.len()])
        .collect();
    // (callee, its parameter) -> the (function, parameter) passed there by value.
    let mut passed_from: HashMap<(usize, usize), Vec<(usize, usize)>> = HashMap::new();
    let mut work = Vec::new();
    for (fi, f) in program.functions.iter().enumerate() {
        let param_of = |e: &Expr| {
            let local = root_local(e)?;
            f.params
                .iter()
                .position(|p| !p.by_ref && p.local.0 == local)
        };
        each_expr(&f.body, &mut |e| match &e.kind {
            ExprKind::SliceRange { base, .. } if matches!(base.ty, Type::Array(..)) => {
                if let Some(k) = param_of(base) {
                    work.push((fi, k));
                }
            }
            ExprKind::Call { func, args } => {
                for (j, a) in args.iter().enumerate() {
                    if let Arg::Value(x) = a
                        && let Some(k) = param_of(x)
                    {
                        let g = func.0 as usize;
                        if g < program.functions.len() {
                            passed_from.entry((g, j)).or_default().push((fi, k));
                        } else {
                            work.push((fi, k));
                        }
                    }
                }
            }
            _ => {}
        });
    }
    while let Some((fi, k)) = work.pop() {
        if std::mem::replace(&mut written[fi][k], true) {
            continue;
        }
        if let Some(from) = passed_from.get(&(fi, k)) {
            work.extend(from.iter().copied());
        }
    }
    written
}

/// The local whose memory place `e` lies in: the local itself, or a field or
/// array element of a place that does (an element of a slice lies where the
/// slice points, not in the local).
fn root_local(e: &Expr) -> Option<u32> {
    match &e.kind {
        ExprKind::Local(id) => Some(id.0),
        ExprKind::Field(b, _) => root_local(b),
        ExprKind::Index(b, _) if matches!(b.ty, Type::Array(..)) => root_local(b),
        _ => None,
    }
}

/// Per function: whether it may write or free memory through a pointer (an
/// element of a slice or reusable slice, a `ref` to one handed to a call,
/// `reusable::free`/`resize`/`append`, `unsafe::copy`, an extern), itself or
/// through a function it calls. One walk of each body, then a worklist from
/// each writer to its callers.
pub(crate) fn writes_memory(program: &Program) -> Vec<bool> {
    let n = program.functions.len();
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut work = Vec::new();
    for (fi, f) in program.functions.iter().enumerate() {
        let mut direct = assigns_behind_pointer(&f.body);
        each_expr(&f.body, &mut |e| match &e.kind {
            ExprKind::Call { func, args } => {
                direct |= args
                    .iter()
                    .any(|a| matches!(a, Arg::Ref(x) if behind_pointer(x)));
                match callers.get_mut(func.0 as usize) {
                    Some(c) => c.push(fi),
                    None => direct = true,
                }
            }
            ExprKind::CallExtern { .. } => direct = true,
            ExprKind::Builtin(op, _) => {
                direct |= matches!(
                    op,
                    Builtin::ReusableFree
                        | Builtin::ReusableResize
                        | Builtin::ReusableAppend
                        | Builtin::UnsafeCopy
                );
            }
            _ => {}
        });
        if direct {
            work.push(fi);
        }
    }
    let mut writes = vec![false; n];
    while let Some(fi) = work.pop() {
        if std::mem::replace(&mut writes[fi], true) {
            continue;
        }
        work.extend(callers[fi].iter().copied());
    }
    writes
}

/// Whether a statement of `b` (nested blocks included) assigns to a place
/// that lies behind a pointer.
fn assigns_behind_pointer(b: &Block) -> bool {
    b.stmts.iter().any(|s| {
        let mut hit = matches!(s, Stmt::Assign { place, .. } | Stmt::CompoundAssign { place, .. }
            if behind_pointer(place));
        stmt_parts(s, &mut |p| {
            if let Part::Block(nested) = p {
                hit = hit || assigns_behind_pointer(nested);
            }
        });
        hit
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
