//! Checking the builtins (`print`, `len`, `append`, `reusable::*`,
//! `unsafe::*`, `size_of`, ...).

use super::*;
use crate::tir::Builtin;
use crate::tir::BuiltinFn::{Len, Op, SizeOf};

impl Checker<'_> {
    /// One value of `print(a, b, ...)` and its kin: a scalar or text (a string
    /// literal stays a `Str`); `None` after an error (reported).
    fn print_arg(&mut self, cx: &mut FnCx, name: &str, a: &ast::Expr) -> Option<tir::Expr> {
        if let ast::ExprKind::Str(s) = &a.kind {
            return Some(self.mk(tir::ExprKind::Str(s.clone()), &Ty::Str, a.span));
        }
        let (te, ty) = self.expr(cx, a, None);
        if ty.has_error() {
            return None;
        }
        // Scalars, and bytes as text.
        let text = matches!(&ty, Ty::Slice(e) | Ty::Array(e, _) | Ty::Reusable(e) if **e == Ty::U8);
        if !ty.may_be_scalar() && !text {
            let kind = ErrorKind::PrintArg {
                name: name.into(),
                ty: self.ty_name(&ty),
            };
            self.sink.error(kind, a.span);
            return None;
        }
        Some(te)
    }

    /// Each argument checked as an `i64`; whether any was wrong (reported).
    fn i64_args(&mut self, cx: &mut FnCx, args: &[ast::Arg]) -> (Vec<tir::Expr>, bool) {
        let mut bad = false;
        let out = args
            .iter()
            .map(|a| {
                let (te, ty) = self.expr(cx, &a.expr, Some(&Ty::I64));
                bad |= ty.has_error() || !self.expect_ty(&Ty::I64, &ty, a.expr.span);
                te
            })
            .collect();
        (out, bad)
    }

    /// `print`, `len`, `reusable::append`, ...
    #[allow(clippy::too_many_arguments)]
    pub(super) fn builtin(
        &mut self,
        cx: &mut FnCx,
        name: &str,
        callee: &ast::Path,
        targs: &[ast::TypeExpr],
        args: &[ast::Arg],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let Some(spec) = tir::BuiltinSpec::named(name) else {
            self.sink
                .error(ErrorKind::UnknownBuiltin(name.to_string()), callee.span);
            return self.failed_call(cx, args, span);
        };
        let generic = spec.type_arg;
        // `panic(msg, detail)` is the two-argument form (see below).
        let arity = if spec.func == Op(Builtin::Panic) && args.len() == 2 {
            2
        } else {
            spec.args
        };
        if !generic && !targs.is_empty() {
            self.sink
                .error(ErrorKind::NotGeneric(name.into()), callee.span);
            return self.failed_call(cx, args, span);
        }
        if generic && targs.len() > 1 {
            self.sink.error(
                ErrorKind::TypeArgCount {
                    name: name.into(),
                    expected: 1,
                    found: targs.len(),
                },
                callee.span,
            );
            return self.failed_call(cx, args, span);
        }
        // The print family takes one value or more.
        let variadic = matches!(
            spec.func,
            Op(Builtin::Print | Builtin::Write | Builtin::Eprint | Builtin::Ewrite)
        );
        if (variadic && args.is_empty()) || (!variadic && args.len() != arity) {
            let (expected, found) = (arity, args.len());
            let name = name.to_string();
            let kind = if variadic {
                ErrorKind::ArgCountAtLeast {
                    name,
                    expected,
                    found,
                }
            } else {
                ErrorKind::ArgCount {
                    name,
                    expected,
                    found,
                }
            };
            self.sink.error(kind, span);
            return self.failed_call(cx, args, span);
        }
        if let Some(a) = args.iter().find(|a| a.by_ref) {
            self.sink.error(ErrorKind::BuiltinRef(name.into()), a.span);
            return self.failed_call(cx, args, span);
        }
        let generics = cx.generics.clone();
        let targ = targs
            .first()
            .map(|t| self.resolve_type(t, cx.module, &generics));
        if targ.as_ref().is_some_and(Ty::has_error) {
            return self.failed_call(cx, args, span);
        }
        let unit = Ty::Unit;
        let builtin = |c: &Self, b: tir::Builtin, a: Vec<tir::Expr>, ty: &Ty| -> Typed {
            (c.mk(tir::ExprKind::Builtin(b, a), ty, span), ty.clone())
        };
        match spec.func {
            Len => {
                let (te, ty) = self.expr(cx, &args[0].expr, None);
                if ty.has_error() {
                    return self.error_expr(span);
                }
                if ty.element().is_none() {
                    let n = self.ty_name(&ty);
                    self.sink.error(ErrorKind::LenArg(n), args[0].expr.span);
                    return self.error_expr(span);
                }
                (
                    self.mk(tir::ExprKind::Len(Box::new(te)), &Ty::I64, span),
                    Ty::I64,
                )
            }
            Op(op @ (Builtin::Print | Builtin::Write | Builtin::Eprint | Builtin::Ewrite)) => {
                let mut values = Vec::with_capacity(args.len());
                let mut ok = true;
                for a in args {
                    match self.print_arg(cx, name, &a.expr) {
                        Some(te) => values.push(te),
                        None => ok = false,
                    }
                }
                if !ok {
                    return self.error_expr(span);
                }
                builtin(self, op, values, &unit)
            }
            Op(Builtin::Panic) => {
                let lit = self.str_arg(cx, &args[0].expr, "panic");
                // The optional detail: message bytes computed at run time
                // (a `[]u8`), appended to the literal.
                let detail = args.get(1).map(|a| {
                    let want = Ty::Slice(Box::new(Ty::U8));
                    let (te, ty) = self.expr(cx, &a.expr, Some(&want));
                    let ok = !ty.has_error() && self.expect_ty(&want, &ty, a.expr.span);
                    ok.then_some(te)
                });
                match (lit, detail) {
                    (Some(lit), None) => builtin(self, Builtin::Panic, vec![lit], &unit),
                    (Some(lit), Some(Some(d))) => {
                        builtin(self, Builtin::Panic, vec![lit, d], &unit)
                    }
                    _ => self.error_expr(span),
                }
            }
            Op(Builtin::Assert) => {
                let (tc, cty) = self.expr(cx, &args[0].expr, Some(&Ty::Bool));
                let ok = self.expect_ty(&Ty::Bool, &cty, args[0].expr.span);
                let msg = self.str_arg(cx, &args[1].expr, "assert");
                match msg {
                    Some(m) if ok && !cty.has_error() => {
                        builtin(self, Builtin::Assert, vec![tc, m], &unit)
                    }
                    _ => self.error_expr(span),
                }
            }
            SizeOf => {
                let Some(t) = targ else {
                    self.sink.error(
                        ErrorKind::TypeArgCount {
                            name: name.into(),
                            expected: 1,
                            found: 0,
                        },
                        callee.span,
                    );
                    return self.error_expr(span);
                };
                if t.has_param() {
                    // Known only per instance; in check mode not a constant.
                    let kind = tir::ExprKind::Call {
                        func: OPAQUE,
                        args: Vec::new(),
                    };
                    return (self.mk(kind, &Ty::I64, span), Ty::I64);
                }
                match self.layout_of(&t, span) {
                    Some(l) => (
                        self.mk(tir::ExprKind::Int(l.size as i64), &Ty::I64, span),
                        Ty::I64,
                    ),
                    None => self.error_expr(span),
                }
            }
            Op(op @ (Builtin::ReusableAlloc | Builtin::UnsafeSlice)) => {
                let is_alloc = op == Builtin::ReusableAlloc;
                let elem = targ.or_else(|| match expected {
                    Some(Ty::Reusable(t)) if is_alloc => Some((**t).clone()),
                    Some(Ty::Slice(t)) if !is_alloc => Some((**t).clone()),
                    _ => None,
                });
                let (out, bad) = self.i64_args(cx, args);
                let Some(elem) = elem else {
                    if expected.is_some_and(Ty::has_error) {
                        return self.error_expr(span);
                    }
                    self.sink.error(
                        ErrorKind::CannotInfer {
                            name: name.into(),
                            param: "T".into(),
                        },
                        callee.span,
                    );
                    return self.error_expr(span);
                };
                if bad {
                    return self.error_expr(span);
                }
                let ty = if is_alloc {
                    Ty::Reusable(Box::new(elem))
                } else {
                    Ty::Slice(Box::new(elem))
                };
                builtin(self, op, out, &ty)
            }
            Op(
                op @ (Builtin::ReusableAppend
                | Builtin::ReusableResize
                | Builtin::ReusableFree
                | Builtin::ReusableOffset),
            ) => {
                let hint = expected.filter(|t| matches!(t, Ty::Reusable(_)));
                let (ts, sty) = self.expr(cx, &args[0].expr, hint);
                let elem = match &sty {
                    Ty::Reusable(t) => Some((**t).clone()),
                    Ty::Error => None,
                    other => {
                        let (expected, found) = ("reusable[]T".to_string(), self.ty_name(other));
                        self.sink
                            .error(ErrorKind::Mismatch { expected, found }, args[0].expr.span);
                        None
                    }
                };
                let mut out = vec![ts];
                let mut bad = elem.is_none();
                if args.len() == 2 {
                    let want = if op == Builtin::ReusableAppend {
                        elem.clone().unwrap_or(Ty::Error)
                    } else {
                        Ty::I64
                    };
                    let hint = (!want.is_error()).then(|| want.clone());
                    let (tv, vty) = self.expr(cx, &args[1].expr, hint.as_ref());
                    bad |= vty.has_error() || !self.expect_ty(&want, &vty, args[1].expr.span);
                    out.push(tv);
                }
                if bad {
                    return self.error_expr(span);
                }
                let ty = match op {
                    Builtin::ReusableAppend | Builtin::ReusableResize => sty,
                    Builtin::ReusableFree => Ty::Unit,
                    _ => Ty::I64,
                };
                builtin(self, op, out, &ty)
            }
            Op(Builtin::UnsafeAddr) => {
                let (te, ty) = self.expr(cx, &args[0].expr, None);
                if ty.has_error() {
                    return self.error_expr(span);
                }
                let ok = matches!(ty, Ty::Slice(_) | Ty::Reusable(_))
                    || !matches!(root(cx, &te), Root::NotPlace | Root::Temporary);
                if !ok {
                    self.sink.error(ErrorKind::AddrNotPlace, args[0].expr.span);
                    return self.error_expr(span);
                }
                builtin(self, Builtin::UnsafeAddr, vec![te], &Ty::I64)
            }
            Op(Builtin::UnsafeCopy) => {
                // unsafe::copy(dst, src, bytes)
                let (out, bad) = self.i64_args(cx, args);
                if bad {
                    return self.error_expr(span);
                }
                builtin(self, Builtin::UnsafeCopy, out, &unit)
            }
        }
    }

    /// A string literal argument of `panic`/`assert`, or a string constant
    /// (`const MSG = "text";`: every use of one is that literal).
    pub(super) fn str_arg(
        &mut self,
        cx: &mut FnCx,
        e: &ast::Expr,
        builtin: &str,
    ) -> Option<tir::Expr> {
        let constant = match &e.kind {
            // A local of the name hides the constant, as anywhere else.
            ast::ExprKind::Path(path, targs)
                if targs.is_empty()
                    && !(path.segments.len() == 1
                        && cx.lookup(&path.segments[0].name).is_some()) =>
            {
                match self.resolve_path(path, cx.module) {
                    Some(ItemRef::Const(k)) => match self.const_text(k) {
                        Some(t) => Some(t),
                        // A constant whose declaration failed (reported).
                        None if self.const_value(k).is_none() => return None,
                        None => None,
                    },
                    Some(_) => None,
                    // Reported by the lookup (a module's item), or here.
                    None => {
                        if let [one] = path.segments.as_slice() {
                            let kind = ErrorKind::UnknownName(path.text());
                            self.unknown_single(cx.module, &one.name, kind, e.span);
                        }
                        return None;
                    }
                }
            }
            _ => None,
        };
        match (&e.kind, constant) {
            (ast::ExprKind::Str(s), _) => {
                Some(self.mk(tir::ExprKind::Str(s.clone()), &Ty::Str, e.span))
            }
            (_, Some(s)) => Some(self.mk(tir::ExprKind::Str(s.to_string()), &Ty::Str, e.span)),
            _ => {
                self.sink
                    .error(ErrorKind::NeedsStrLit(builtin.into()), e.span);
                None
            }
        }
    }
}
