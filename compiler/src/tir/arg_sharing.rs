//! Which by-value aggregate arguments are passed as the place itself and
//! which as a copy: the one rule the backend's calls follow and the
//! interpreter's estimate of a compiled frame charges by.
//!
//! A by-value aggregate argument that is a place (a local, a field, an
//! element) is copied into a fresh temporary by the caller, so that the
//! callee sees the value of the call even if something changes the place
//! while it runs. When every other argument of the call is a scalar computed
//! without a call ([`Blockers`]), nothing can: the callee reaches the
//! caller's memory only through its arguments, a scalar cannot point without
//! `unsafe::`, and an expression without calls writes nothing. Then the
//! place itself is passed, as a value parameter is immutable.
//!
//! One thing writes such a parameter all the same: a slice of an array
//! inside it (`a[..]` of an immutable binding is a writable view, on
//! purpose, docs/language.md section 8), so `fn f(a: [3]i64) { let s = a[..];
//! s[0] = 65; }` would write the caller's array through the shared address.
//! A parameter is written when the body slices an array rooted in it, or
//! passes a place rooted in it by value to a function that writes that
//! parameter (which may share it in turn). Such a parameter's arguments are
//! always copied, and so is every argument that holds a pointer
//! ([`holds_pointers`]) for a callee that writes or frees through one,
//! through which it could reach the place whatever it does with the
//! parameter itself.

use std::collections::HashMap;

use super::visit::{Part, each_expr, stmt_parts};
use super::{Arg, Block, Builtin, Expr, ExprKind, FuncId, Program, Stmt, Type};

/// Whether a value of `ty` holds a pointer (a slice or a reusable slice,
/// in it or in a field or element). Such an argument is shared only with a
/// callee that writes and frees nothing through pointers ([`writes_memory`]):
/// the pointer may lead back into the place itself (`s.v = s.arr[..]`, a
/// node whose `reusable[]` field holds the span it lives in), and a write or
/// free through it would reach the caller's place while the callee's
/// parameter must keep the value it had at the call.
pub fn holds_pointers(program: &Program, ty: &Type) -> bool {
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

/// What decides, for every call of the program, whether a by-value
/// aggregate argument is shared or copied (see the module docs).
#[derive(Debug)]
pub struct ArgSharing {
    /// Per function and parameter: the function may write that value
    /// parameter through a slice, so its argument is always a copy.
    written: Vec<Vec<bool>>,
    /// Per function: it may write or free memory through a pointer, so an
    /// argument holding a pointer is copied for it.
    writes_memory: Vec<bool>,
}

/// A by-value aggregate argument that is a place, as the frame plan records
/// it: what [`ArgSharing::shares_place_arg`] needs to know of its call, and the bytes
/// of the temporary a copy takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaceArg {
    /// The function called.
    pub callee: FuncId,
    /// The argument's position.
    pub index: usize,
    /// [`Blockers::may_share`] of the argument.
    pub may_share: bool,
    /// [`holds_pointers`] of the argument's type.
    pub holds_pointers: bool,
    /// The temporary's bytes in the compiled frame (rounded up to 8).
    pub bytes: u64,
}

impl ArgSharing {
    /// The analysis of `program`: one walk of each body, then worklists
    /// (linear in the program however long its call chains are).
    pub fn of(program: &Program) -> ArgSharing {
        ArgSharing {
            written: written_params(program),
            writes_memory: writes_memory(program),
        }
    }

    /// Whether argument `index` of the call of `callee` with `args` (a
    /// by-value aggregate place) is passed as the place itself; `blockers`
    /// are the call's ([`Blockers::of`]).
    pub fn shares_arg(
        &self,
        program: &Program,
        (callee, args, blockers): (FuncId, &[Arg], Blockers),
        index: usize,
    ) -> bool {
        let holds = matches!(&args[index], Arg::Value(e) if holds_pointers(program, &e.ty));
        self.shares(callee, index, blockers.may_share(index), holds)
    }

    /// [`Self::shares_arg`] of an argument the frame plan recorded.
    pub fn shares_place_arg(&self, a: &PlaceArg) -> bool {
        self.shares(a.callee, a.index, a.may_share, a.holds_pointers)
    }

    /// The rule: the call allows it, the callee does not write the
    /// parameter, and it writes nothing through a pointer the argument holds.
    fn shares(&self, callee: FuncId, index: usize, may_share: bool, holds_pointers: bool) -> bool {
        let f = callee.0 as usize;
        let written = self
            .written
            .get(f)
            .and_then(|w| w.get(index))
            .copied()
            .unwrap_or(true);
        let reached = self.writes_memory.get(f).copied().unwrap_or(true) && holds_pointers;
        may_share && !written && !reached
    }
}

/// The arguments of one call that keep the others from being shared: those
/// that are not a scalar computed without a call (counted up to two: more
/// decide nothing more). Worked out once per call, so that asking for each
/// of its arguments stays linear in the call's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blockers {
    /// How many (0, 1, or 2 for two or more).
    count: u8,
    /// The first one's position.
    first: usize,
}

impl Blockers {
    /// The blockers among `args`.
    pub fn of(args: &[Arg]) -> Blockers {
        let mut b = Blockers { count: 0, first: 0 };
        for (j, a) in args.iter().enumerate() {
            let pure = matches!(a, Arg::Value(e)
                if matches!(e.ty, Type::I64 | Type::I32 | Type::U8 | Type::U64 | Type::Bool)
                    && calls_nothing(e));
            if !pure {
                if b.count == 0 {
                    b.first = j;
                }
                b.count += 1;
                if b.count == 2 {
                    break;
                }
            }
        }
        b
    }

    /// Whether argument `i` may be the caller's place rather than a copy
    /// as far as the call goes: every other argument is a scalar computed
    /// without a call.
    pub fn may_share(self, i: usize) -> bool {
        self.count == 0 || (self.count == 1 && self.first == i)
    }
}

/// Whether evaluating `e` calls nothing (so writes nothing). Its own stack:
/// an argument may nest as deep as the front end allows.
fn calls_nothing(e: &Expr) -> bool {
    let mut todo = vec![e];
    while let Some(x) = todo.pop() {
        if matches!(
            x.kind,
            ExprKind::Call { .. } | ExprKind::CallExtern { .. } | ExprKind::Builtin(..)
        ) {
            return false;
        }
        super::visit::expr_children(x, &mut |c| todo.push(c));
    }
    true
}

/// Per function, per parameter: whether the function may write the value
/// parameter through a slice (`false` for `ref` parameters, which share by
/// definition). One walk of each body, then a worklist from each written
/// parameter to the callers' parameters they were passed from, so the work
/// stays linear in the program however long its call chains are.
fn written_params(program: &Program) -> Vec<Vec<bool>> {
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
fn root_local(mut e: &Expr) -> Option<u32> {
    loop {
        match &e.kind {
            ExprKind::Local(id) => return Some(id.0),
            ExprKind::Field(b, _) => e = b,
            ExprKind::Index(b, _) if matches!(b.ty, Type::Array(..)) => e = b,
            _ => return None,
        }
    }
}

/// Per function: whether it may write or free memory through a pointer (an
/// element of a slice or reusable slice, a `ref` to one handed to a call,
/// `reusable::free`/`resize`/`append`, `unsafe::copy`, an extern), itself or
/// through a function it calls. One walk of each body, then a worklist from
/// each writer to its callers.
fn writes_memory(program: &Program) -> Vec<bool> {
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
fn behind_pointer(mut e: &Expr) -> bool {
    loop {
        match &e.kind {
            ExprKind::Index(b, _) => match b.ty {
                Type::Array(..) => e = b,
                _ => return true,
            },
            ExprKind::Field(b, _) => e = b,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tir::{BinOp, Loc, LocalId, StructId};

    fn expr(kind: ExprKind, ty: Type) -> Expr {
        Expr {
            kind,
            ty,
            loc: Loc::default(),
            span: Default::default(),
        }
    }

    fn place() -> Arg {
        Arg::Value(expr(ExprKind::Local(LocalId(0)), Type::Struct(StructId(0))))
    }

    fn int(v: i64) -> Arg {
        Arg::Value(expr(ExprKind::Int(v), Type::I64))
    }

    fn call() -> Arg {
        let call = ExprKind::Call {
            func: FuncId(0),
            args: Vec::new(),
        };
        Arg::Value(expr(call, Type::I64))
    }

    /// A place shares when every other argument is a scalar computed
    /// without a call, however deep; a second aggregate, a call or a `ref`
    /// keeps every argument a copy.
    #[test]
    fn only_scalars_computed_without_a_call_let_a_place_be_shared() {
        let mut sum = expr(ExprKind::Int(1), Type::I64);
        for _ in 0..100_000 {
            let one = expr(ExprKind::Int(1), Type::I64);
            sum = expr(
                ExprKind::Binary(BinOp::Add, Box::new(one), Box::new(sum)),
                Type::I64,
            );
        }
        let args = [place(), int(3), Arg::Value(sum)];
        let deep = Blockers::of(&args);
        // Dropping a 100 000-deep expression recurses; the test's stack
        // need not survive it.
        std::mem::forget(args);
        assert!(deep.may_share(0));
        assert!(!deep.may_share(1));
        let all_pure = Blockers::of(&[int(1), int(2)]);
        assert!(all_pure.may_share(0) && all_pure.may_share(1));
        for args in [
            vec![place(), place()],
            vec![place(), call()],
            vec![
                place(),
                Arg::Ref(expr(ExprKind::Local(LocalId(1)), Type::I64)),
            ],
        ] {
            let b = Blockers::of(&args);
            assert!((0..args.len()).all(|i| !b.may_share(i)), "{args:?}");
        }
    }
}
