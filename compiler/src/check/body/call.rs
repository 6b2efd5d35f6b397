//! Checking calls of functions and externs: arguments, `ref`, generic
//! inference and instantiation.

use super::*;

impl Checker<'_> {
    // ---- calls ----

    pub(super) fn call(
        &mut self,
        cx: &mut FnCx,
        callee: &ast::Path,
        targs: &[ast::TypeExpr],
        args: &[ast::Arg],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let segs: Vec<&str> = callee.segments.iter().map(|s| s.name.as_str()).collect();
        let builtin = match segs.as_slice() {
            [n] => tir::BuiltinSpec::named(n).is_some(),
            [ns, _] => tir::BUILTIN_NAMESPACES.contains(ns),
            _ => false,
        };
        if builtin {
            return self.builtin(cx, &segs.join("::"), callee, targs, args, expected, span);
        }
        if segs.len() == 1 && cx.lookup(segs[0]).is_some() {
            self.sink
                .error(ErrorKind::NotAFunction(callee.text()), callee.span);
            return self.failed_call(cx, args, span);
        }
        match self.resolve_path(callee, cx.module) {
            Some(ItemRef::Fn(f)) => self.call_fn(cx, f, callee, targs, args, expected, span),
            Some(ItemRef::Extern(e)) => {
                if !targs.is_empty() {
                    self.sink
                        .error(ErrorKind::NotGeneric(callee.text()), callee.span);
                }
                let sig = self.externs[e].sig.clone();
                let Some(targs_args) =
                    self.call_args(cx, &callee.text(), &sig, Vec::new(), args, None, span)
                else {
                    return self.error_expr(span);
                };
                let ret = sig.ret.clone();
                // Checking opaquely (output discarded but for the passes
                // over it), the id is the extern item's index, which
                // `stale_operands::may_free` names it by.
                let id = if cx.emit {
                    self.extern_id(e)
                } else {
                    tir::ExternId(e as u32)
                };
                (
                    self.mk(
                        tir::ExprKind::CallExtern {
                            func: id,
                            args: targs_args.0,
                        },
                        &ret,
                        span,
                    ),
                    ret,
                )
            }
            Some(_) => {
                self.sink
                    .error(ErrorKind::NotAFunction(callee.text()), callee.span);
                self.failed_call(cx, args, span)
            }
            None => {
                if let [one] = callee.segments.as_slice() {
                    let kind = ErrorKind::UnknownName(callee.text());
                    self.unknown_single(cx.module, &one.name, kind, callee.span);
                }
                self.failed_call(cx, args, span)
            }
        }
    }

    /// The result of a call that failed (reported): its arguments
    /// are still checked for their own errors.
    pub(super) fn failed_call(&mut self, cx: &mut FnCx, args: &[ast::Arg], span: Span) -> Typed {
        self.args_for_errors(cx, args);
        self.error_expr(span)
    }

    /// Check arguments of a call that already failed, for their own errors.
    pub(super) fn args_for_errors(&mut self, cx: &mut FnCx, args: &[ast::Arg]) {
        for a in args {
            if !matches!(a.expr.kind, ast::ExprKind::Str(_)) {
                self.expr(cx, &a.expr, None);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_fn(
        &mut self,
        cx: &mut FnCx,
        f: usize,
        callee: &ast::Path,
        targs: &[ast::TypeExpr],
        args: &[ast::Arg],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let sig = self.fns[f].sig.clone();
        let name = callee.text();
        let mut bindings: Vec<(String, Ty)> = Vec::new();
        if !targs.is_empty() {
            if let Some(kind) = type_arg_count_error(&name, sig.generics.len(), targs.len()) {
                self.sink.error(kind, callee.span);
                return self.failed_call(cx, args, span);
            }
            let generics = cx.generics.clone();
            for (g, t) in sig.generics.iter().zip(targs) {
                let ty = self.resolve_type(t, cx.module, &generics);
                bindings.push((g.clone(), ty));
            }
        }
        // Parameters only the result mentions come from the context too
        // (`let s: []i64 = alloc(...)`): `call_args` binds them.
        let Some((targs_out, bindings)) =
            self.call_args(cx, &name, &sig, bindings, args, expected, span)
        else {
            return self.error_expr(span);
        };
        let mut types = Vec::new();
        for g in &sig.generics {
            match bindings.iter().find(|(n, _)| n == g) {
                Some((_, t)) => types.push(t.clone()),
                None => {
                    if expected.is_some_and(Ty::has_error) {
                        return self.error_expr(span);
                    }
                    self.sink.error(
                        ErrorKind::CannotInfer {
                            name: name.clone(),
                            param: g.clone(),
                        },
                        callee.span,
                    );
                    return self.error_expr(span);
                }
            }
        }
        if types.iter().any(Ty::has_error) {
            return self.error_expr(span);
        }
        let ret = sig.ret.subst(&bindings);
        // Check mode names the function item (the escape pass reads it).
        let id = if cx.emit {
            self.instance(f, types, span)
        } else {
            tir::FuncId(f as u32)
        };
        (
            self.mk(
                tir::ExprKind::Call {
                    func: id,
                    args: targs_out,
                },
                &ret,
                span,
            ),
            ret,
        )
    }

    /// Check call arguments against `sig` (inferring generic parameters
    /// into `bindings`); `None` when the call is in error. `expected` is
    /// the type the call's context wants, if any.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_args(
        &mut self,
        cx: &mut FnCx,
        name: &str,
        sig: &crate::check::Sig,
        mut bindings: Vec<(String, Ty)>,
        args: &[ast::Arg],
        expected: Option<&Ty>,
        span: Span,
    ) -> Option<CheckedArgs> {
        if args.len() != sig.params.len() {
            self.sink.error(
                ErrorKind::ArgCount {
                    name: name.to_string(),
                    expected: sig.params.len(),
                    found: args.len(),
                },
                span,
            );
            self.args_for_errors(cx, args);
            return None;
        }
        let mut out: Vec<Option<tir::Arg>> = vec![None; args.len()];
        let mut bad = false;
        // `bindings` with what the context wants of the result, when the
        // result can meet it.
        let with_context = |bindings: &Vec<(String, Ty)>| {
            let want = expected.filter(|w| !w.has_error())?;
            let mut c = bindings.clone();
            unify(&sig.ret, want, &mut c).then_some(c)
        };
        // A hint for an argument whose parameter nothing else has bound yet
        // (`id(id(250))` or `arr([1, 2])` where a `u8` or `[2]u8` is
        // wanted). A hint only: the argument's own type still decides.
        let context = with_context(&bindings);
        // Arguments of their own type first, then calls of literals, then
        // literals (see `Typing`), so each can take its type from what the
        // ones before it bound.
        for typed in [Typing::Own, Typing::LiteralCall, Typing::Literal] {
            // Before the (calls of) literals, what the context wants binds the
            // parameters the others left open, as in Rust: `let y: u8 =
            // id(250)` makes `T` a `u8`, not the literal's default `i64`.
            // A context the result cannot meet binds nothing; the mismatch
            // is then reported where the result is used.
            if typed == Typing::LiteralCall
                && let Some(c) = with_context(&bindings)
            {
                bindings = c;
            }
            for (i, (a, p)) in args.iter().zip(&sig.params).enumerate() {
                if self.typing(cx, &a.expr) != typed {
                    continue;
                }
                // `p.ty` speaks of the callee's parameters; the caller's own
                // (opaque) parameters may share their names, so unify the
                // unsubstituted type and substitute only for display.
                let bound =
                    p.ty.params()
                        .iter()
                        .all(|g| bindings.iter().any(|(n, _)| n == g));
                // A string literal given for `[]T` with `T` not yet known
                // is text, as where a `[]u8` is expected (`count("abc")`).
                let text_for_param = matches!(a.expr.kind, ast::ExprKind::Str(_))
                    && matches!(&p.ty, Ty::Slice(e) if matches!(**e, Ty::Param(_)));
                let from_context = || {
                    let c = context.as_ref()?;
                    let all = p.ty.params().iter().all(|g| c.iter().any(|(n, _)| n == g));
                    all.then(|| p.ty.subst(c))
                };
                let hint = match bound {
                    true => Some(p.ty.subst(&bindings)),
                    false if text_for_param => Some(Ty::Slice(Box::new(Ty::U8))),
                    // The argument that would have bound the parameter
                    // failed: a literal here reports nothing more.
                    false if bad && typed == Typing::Literal => Some(Ty::Error),
                    false => from_context(),
                };
                // A `ref` argument is the place itself, never a view.
                let (te, ty) = if p.by_ref {
                    self.expr_as_written(cx, &a.expr, hint.as_ref())
                } else {
                    let typed = self.expr(cx, &a.expr, hint.as_ref());
                    self.view_for(&p.ty, &bindings, typed, a.expr.span)
                };
                if ty.has_error() {
                    bad = true;
                } else if ty == Ty::Unit {
                    // No parameter's type is unit, and a generic one must
                    // not become it (`size_of(print(1))`).
                    self.sink.error(ErrorKind::UnitValue, a.expr.span);
                    bad = true;
                } else if !unify(&p.ty, &ty, &mut bindings) {
                    let want = p.ty.subst(&bindings);
                    self.mismatch(&want, &ty, a.expr.span);
                    bad = true;
                }
                if p.by_ref && !a.by_ref {
                    self.sink
                        .error(ErrorKind::RefRequired(p.name.clone()), a.span);
                    bad = true;
                } else if !p.by_ref && a.by_ref {
                    self.sink
                        .error(ErrorKind::RefNotAllowed(p.name.clone()), a.span);
                    bad = true;
                } else if p.by_ref && !ty.has_error() {
                    match root(cx, &te) {
                        Root::Mutable => {}
                        Root::Immutable(id) => {
                            let n = cx.locals[id as usize].name.clone();
                            let d = self.immutable_diag(
                                ErrorKind::RefImmutable(n),
                                a.expr.span,
                                cx,
                                id,
                            );
                            self.sink.push(d);
                            bad = true;
                        }
                        Root::Temporary | Root::NotPlace => {
                            self.sink.error(ErrorKind::RefNotPlace, a.expr.span);
                            bad = true;
                        }
                    }
                }
                out[i] = Some(if p.by_ref {
                    tir::Arg::Ref(te)
                } else {
                    tir::Arg::Value(te)
                });
            }
        }
        if bad {
            return None;
        }
        Some((out.into_iter().flatten().collect(), bindings))
    }
}
