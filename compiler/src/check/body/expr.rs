//! Checking expressions: literals, operators, paths, struct literals,
//! indexing, casts.

use super::*;

impl Checker<'_> {
    // ---- expressions ----

    /// Check `e`; `expected` guides literal typing and inference (the caller
    /// compares the result against what it needs). Where a `[]T` is expected,
    /// a `reusable[]T` becomes its view (the same two words) and a string
    /// literal a slice of its frame copy (`text`).
    pub(crate) fn expr(&mut self, cx: &mut FnCx, e: &ast::Expr, expected: Option<&Ty>) -> Typed {
        let (te, ty) = self.expr_as_written(cx, e, expected);
        match (expected, &ty) {
            (Some(Ty::Slice(want)), Ty::Reusable(elem)) if want == elem => {
                self.view(te, elem, e.span)
            }
            _ => (te, ty),
        }
    }

    /// The `[]T` view of a `reusable[]T` expression (`r[..]`).
    pub(super) fn view(&mut self, te: tir::Expr, elem: &Ty, span: Span) -> Typed {
        let view = Ty::Slice(Box::new(elem.clone()));
        let whole = tir::ExprKind::SliceRange {
            base: Box::new(te),
            lo: None,
            hi: None,
        };
        (self.mk(whole, &view, span), view)
    }

    /// `typed` as a value for `want`, a type that may name parameters
    /// `bindings` has not bound: a `reusable[]X` for a `[]T` is its view, as
    /// where a `[]X` is expected (a generic parameter or struct field:
    /// `sum(xs)` with `fn sum<T>(xs: []T)`); anything else as it is.
    pub(super) fn view_for(
        &mut self,
        want: &Ty,
        bindings: &[(String, Ty)],
        typed: Typed,
        span: Span,
    ) -> Typed {
        if let (Ty::Slice(_), Ty::Reusable(elem)) = (want, &typed.1)
            && unify(want, &Ty::Slice(elem.clone()), &mut bindings.to_vec())
        {
            let elem = (**elem).clone();
            return self.view(typed.0, &elem, span);
        }
        typed
    }

    /// [`Self::expr`] without turning a `reusable[]T` into its view (a `ref`
    /// argument is the place itself).
    pub(super) fn expr_as_written(
        &mut self,
        cx: &mut FnCx,
        e: &ast::Expr,
        expected: Option<&Ty>,
    ) -> Typed {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Error => self.error_expr(span),
            ast::ExprKind::Int(v) => self.int_literal(*v, false, expected, span),
            ast::ExprKind::Bool(b) => (self.mk(tir::ExprKind::Bool(*b), &Ty::Bool, span), Ty::Bool),
            ast::ExprKind::Byte(b) => {
                let ty = Ty::U8;
                (self.mk(tir::ExprKind::Int(i64::from(*b)), &ty, span), ty)
            }
            ast::ExprKind::Str(s) => self.text(cx, s, expected, span),
            ast::ExprKind::Paren(inner) => self.expr(cx, inner, expected),
            ast::ExprKind::Path(path, targs) => self.path_value(cx, path, targs, expected, span),
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            } => self.call(cx, callee, type_args, args, expected, span),
            ast::ExprKind::Field(base, field) => self.field_access(cx, base, field, span),
            ast::ExprKind::Index(base, index) => self.index(cx, base, index, span),
            ast::ExprKind::SliceRange { base, lo, hi } => {
                self.slice_range(cx, base, lo.as_deref(), hi.as_deref(), span)
            }
            ast::ExprKind::Unary(op, operand) => self.unary(cx, *op, operand, expected, span),
            ast::ExprKind::Binary(op, a, b) => self.binary(cx, *op, a, b, expected, span),
            ast::ExprKind::Cast(x, t) => self.cast(cx, x, t, span),
            ast::ExprKind::StructLit {
                name,
                type_args,
                fields,
            } => self.struct_lit(cx, name, type_args, fields, expected, span),
            ast::ExprKind::ArrayRepeat(value, count) => {
                self.array_repeat(cx, value, count, expected, span)
            }
            ast::ExprKind::ArrayLit(elems) => self.array_lit(cx, elems, expected, span),
        }
    }

    /// `base.field`: a struct's field, `priv` fields only in the struct's module.
    fn field_access(
        &mut self,
        cx: &mut FnCx,
        base: &ast::Expr,
        field: &ast::Ident,
        span: Span,
    ) -> Typed {
        let (tb, bty) = self.expr(cx, base, None);
        let found = match &bty {
            Ty::Struct(s, args) => self.field(*s as usize, args, &field.name),
            _ => Ok(None),
        };
        let Ok(found) = found else {
            return self.error_expr(span);
        };
        if let (Ty::Struct(st, _), Some((i, _))) = (&bty, &found)
            && let Some(f) = self.private_field(*st as usize, cx.module, Some(*i))
        {
            let ty = self.ty_name(&bty);
            self.sink
                .error(ErrorKind::PrivateField { ty, field: f }, field.span);
            return self.error_expr(span);
        }
        match (&bty, found) {
            (Ty::Error, _) => self.error_expr(span),
            (_, Some((i, fty))) => (
                self.mk(tir::ExprKind::Field(Box::new(tb), i as u32), &fty, span),
                fty,
            ),
            (other, None) => {
                let ty = self.ty_name(other);
                self.sink.error(
                    ErrorKind::NoField {
                        ty,
                        field: field.name.clone(),
                    },
                    field.span,
                );
                self.error_expr(span)
            }
        }
    }

    /// `base[index]`: an element of an array, slice or reusable slice.
    fn index(&mut self, cx: &mut FnCx, base: &ast::Expr, index: &ast::Expr, span: Span) -> Typed {
        let (tb, bty) = self.expr(cx, base, None);
        let ti = self.index_operand(cx, index);
        match bty.element() {
            _ if bty.is_error() => self.error_expr(span),
            Some(elem) => {
                let elem = elem.clone();
                (
                    self.mk(
                        tir::ExprKind::Index(Box::new(tb), Box::new(ti)),
                        &elem,
                        span,
                    ),
                    elem,
                )
            }
            None => {
                let n = self.ty_name(&bty);
                self.sink.error(ErrorKind::NotIndexable(n), base.span);
                self.error_expr(span)
            }
        }
    }

    /// `base[lo..hi]`: a slice of a slice, or of an array that is a place.
    fn slice_range(
        &mut self,
        cx: &mut FnCx,
        base: &ast::Expr,
        lo: Option<&ast::Expr>,
        hi: Option<&ast::Expr>,
        span: Span,
    ) -> Typed {
        let (tb, bty) = self.expr(cx, base, None);
        let lo = lo.map(|x| Box::new(self.index_operand(cx, x)));
        let hi = hi.map(|x| Box::new(self.index_operand(cx, x)));
        let elem = match &bty {
            Ty::Error => return self.error_expr(span),
            Ty::Slice(t) | Ty::Reusable(t) => (**t).clone(),
            Ty::Array(t, _) => {
                if matches!(root(cx, &tb), Root::NotPlace | Root::Temporary) {
                    self.sink.error(ErrorKind::SliceTemporaryArray, base.span);
                    return self.error_expr(span);
                }
                (**t).clone()
            }
            other => {
                let n = self.ty_name(other);
                self.sink.error(ErrorKind::NotSliceable(n), base.span);
                return self.error_expr(span);
            }
        };
        let ty = Ty::Slice(Box::new(elem));
        (
            self.mk(
                tir::ExprKind::SliceRange {
                    base: Box::new(tb),
                    lo,
                    hi,
                },
                &ty,
                span,
            ),
            ty,
        )
    }

    /// `-x` and `!x` (a negated integer literal is one literal).
    fn unary(
        &mut self,
        cx: &mut FnCx,
        op: ast::UnOp,
        operand: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        if op == ast::UnOp::Neg
            && let ast::ExprKind::Int(v) = operand.kind
        {
            return self.int_literal(v, true, expected, span);
        }
        let hint = expected.filter(|t| t.may_be_scalar());
        let (to, ty) = self.expr(cx, operand, hint);
        let ok = match op {
            ast::UnOp::Neg => ty.may_be_integer(),
            ast::UnOp::Not => ty.may_be_scalar(),
        };
        if ty.is_error() {
            return self.error_expr(span);
        }
        if !ok {
            let t = self.ty_name(&ty);
            let op = if op == ast::UnOp::Neg { "-" } else { "!" };
            self.sink.error(
                ErrorKind::UnaryOperand {
                    op: op.into(),
                    ty: t,
                },
                span,
            );
            return self.error_expr(span);
        }
        let top = if op == ast::UnOp::Neg {
            tir::UnOp::Neg
        } else {
            tir::UnOp::Not
        };
        (
            self.mk(tir::ExprKind::Unary(top, Box::new(to)), &ty, span),
            ty,
        )
    }

    /// `x as T`: between integer types, from `bool` to an integer type, or
    /// `bool` to itself (as Rust allows; the value as it is). A generic
    /// parameter on either side is admitted in the opaque check: each
    /// instance checks the cast with its own types.
    fn cast(&mut self, cx: &mut FnCx, x: &ast::Expr, t: &ast::TypeExpr, span: Span) -> Typed {
        let target = self.resolve_type(t, cx.module, &cx.generics.clone());
        let hint = literal_type_for_cast(x, &target);
        let (tx, xty) = self.expr(cx, x, hint.as_ref());
        if target.has_error() || xty.has_error() {
            return self.error_expr(span);
        }
        if xty == Ty::Bool && target == Ty::Bool {
            return (tx, xty);
        }
        if !target.may_be_integer() || !xty.may_be_scalar() {
            let (from, to) = (self.ty_name(&xty), self.ty_name(&target));
            self.sink.error(ErrorKind::InvalidCast { from, to }, span);
            return self.error_expr(span);
        }
        (
            self.mk(tir::ExprKind::Cast(Box::new(tx)), &target, span),
            target,
        )
    }

    /// `[value; count]`, `count` a non-negative constant.
    fn array_repeat(
        &mut self,
        cx: &mut FnCx,
        value: &ast::Expr,
        count: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let elem_hint = match expected {
            Some(Ty::Array(t, _)) => Some((**t).clone()),
            _ => None,
        };
        let (tv, vty) = self.expr(cx, value, elem_hint.as_ref());
        let (tc, cty) = self.expr(cx, count, None);
        if cty.has_error() {
            return self.error_expr(span);
        }
        let n = match fold::fold(&tc) {
            Ok(n) if cty.is_integer() && n >= 0 => n as u64,
            Ok(n) => {
                let shown = crate::check::consts::len_shown(&cty, n);
                self.sink.error(ErrorKind::ArrayLen(shown), count.span);
                return self.error_expr(span);
            }
            Err(FoldError::NotConst) => {
                self.sink.error(ErrorKind::NotConst, count.span);
                return self.error_expr(span);
            }
            Err(FoldError::DivZero) => {
                self.sink.error(ErrorKind::ConstDivZero, count.span);
                return self.error_expr(span);
            }
        };
        if vty.has_error() {
            return self.error_expr(span);
        }
        if vty == Ty::Unit {
            self.sink.error(ErrorKind::UnitValue, value.span);
            return self.error_expr(span);
        }
        let ty = Ty::Array(Box::new(vty), n);
        if expected.is_some_and(Ty::has_error) {
            // The declared type already failed (e.g. too large).
            return self.error_expr(span);
        }
        if !self.size_ok(&ty, span) {
            return self.error_expr(span);
        }
        (
            self.mk(
                tir::ExprKind::ArrayRepeat {
                    value: Box::new(tv),
                    count: n,
                },
                &ty,
                span,
            ),
            ty,
        )
    }

    /// `[a, b, ...]`: the element type is the expected one, else the first element's.
    fn array_lit(
        &mut self,
        cx: &mut FnCx,
        elems: &[ast::Expr],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let mut elem_ty = match expected {
            Some(Ty::Array(t, _)) => Some((**t).clone()),
            _ => None,
        };
        let mut out = Vec::new();
        let mut bad = false;
        for el in elems {
            let (te, ty) = self.expr(cx, el, elem_ty.as_ref());
            match &elem_ty {
                Some(want) => {
                    if !self.expect_ty(want, &ty, el.span) {
                        bad = true;
                    }
                }
                None => {
                    if ty == Ty::Unit {
                        self.sink.error(ErrorKind::UnitValue, el.span);
                        bad = true;
                    }
                    elem_ty = Some(ty.clone());
                }
            }
            bad |= ty.has_error();
            out.push(te);
        }
        let Some(elem) = elem_ty else {
            if !expected.is_some_and(Ty::has_error) {
                self.sink.error(ErrorKind::EmptyArrayInfer, span);
            }
            return self.error_expr(span);
        };
        if bad || elem.has_error() {
            return self.error_expr(span);
        }
        let ty = Ty::Array(Box::new(elem), out.len() as u64);
        (self.mk(tir::ExprKind::ArrayLit(out), &ty, span), ty)
    }

    pub(crate) fn size_ok(&mut self, ty: &Ty, span: Span) -> bool {
        match self.layout_of(ty, span) {
            Some(l) if l.size > crate::check::MAX_TYPE_SIZE => {
                self.sink.error(ErrorKind::TypeTooLarge, span);
                false
            }
            _ => true,
        }
    }

    /// An index or slice bound: `i64`.
    pub(super) fn index_operand(&mut self, cx: &mut FnCx, e: &ast::Expr) -> tir::Expr {
        let (te, ty) = self.expr(cx, e, Some(&Ty::I64));
        self.expect_ty(&Ty::I64, &ty, e.span);
        te
    }

    /// An integer literal (negated when `neg`), typed from `expected` or `i64`.
    pub(super) fn int_literal(
        &mut self,
        v: Option<u64>,
        neg: bool,
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let Some(v) = v else {
            // Too large for 64 bits: already reported by the lexer.
            return self.error_expr(span);
        };
        let ty = match expected {
            Some(t) if t.may_be_integer() => t.clone(),
            // What would have given it a type failed (reported there).
            Some(Ty::Error) => return self.error_expr(span),
            _ => Ty::I64,
        };
        let (min, max) = match ty {
            // At a generic `T` each instance checks the range for its type.
            Ty::Param(_) => (i64::MIN as i128, u64::MAX as i128),
            _ => int_range(&ty).unwrap_or((i64::MIN as i128, i64::MAX as i128)),
        };
        let value = if neg { -(v as i128) } else { v as i128 };
        if value < min || value > max {
            let literal = if neg { format!("-{v}") } else { v.to_string() };
            let t = self.ty_name(&ty);
            self.sink
                .error(ErrorKind::LiteralOutOfRange { literal, ty: t }, span);
            return self.error_expr(span);
        }
        // A `u64` above `i64::MAX` keeps its bits.
        (self.mk(tir::ExprKind::Int(value as i64), &ty, span), ty)
    }

    pub(super) fn binary(
        &mut self,
        cx: &mut FnCx,
        op: ast::BinOp,
        a: &ast::Expr,
        b: &ast::Expr,
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let logical = matches!(op, ast::BinOp::And | ast::BinOp::Or);
        let hint = if logical {
            Some(Ty::Bool)
        } else if op.is_comparison() {
            None
        } else {
            expected.filter(|t| t.may_be_integer()).cloned()
        };
        let ((ta, aty), (tb, bty)) = if logical {
            let ta = self.expr(cx, a, Some(&Ty::Bool));
            let tb = self.expr(cx, b, Some(&Ty::Bool));
            (ta, tb)
        } else {
            self.operand_pair(cx, a, b, hint.as_ref())
        };
        let result = if op.is_comparison() || logical {
            Ty::Bool
        } else {
            aty.clone()
        };
        if aty.has_error() || bty.has_error() {
            return self.error_expr(span);
        }
        let ok = aty == bty
            && if logical {
                aty == Ty::Bool
            } else if matches!(op, ast::BinOp::Eq | ast::BinOp::Ne) {
                aty.may_be_scalar()
            } else {
                aty.may_be_integer()
            };
        if !ok {
            let ints = aty.is_integer() && bty.is_integer();
            let (lhs, rhs) = (self.ty_name(&aty), self.ty_name(&bty));
            let mut d = Diagnostic::new(
                ErrorKind::BinaryOperands {
                    op: op.text().into(),
                    lhs: lhs.clone(),
                    rhs: rhs.clone(),
                },
                span,
            );
            if ints {
                d = d.note(NoteKind::CastHint(rhs, lhs));
            }
            self.sink.push(d);
            return self.error_expr(span);
        }
        (
            self.mk(
                tir::ExprKind::Binary(binop(op), Box::new(ta), Box::new(tb)),
                &result,
                span,
            ),
            result,
        )
    }

    /// A name used as a value: a local or a constant.
    pub(super) fn path_value(
        &mut self,
        cx: &mut FnCx,
        path: &ast::Path,
        targs: &[ast::TypeExpr],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        if path.segments.len() == 1 && targs.is_empty() {
            let name = &path.segments[0].name;
            if let Some(id) = cx.lookup(name) {
                let ty = cx.local_tys[id as usize].clone();
                return (
                    self.mk(tir::ExprKind::Local(tir::LocalId(id)), &ty, span),
                    ty,
                );
            }
        }
        let text = path.text();
        match self.resolve_path(path, cx.module) {
            Some(ItemRef::Const(k)) if let Some(t) = self.const_text(k) => {
                self.text(cx, t, expected, span)
            }
            Some(ItemRef::Const(k)) => match self.const_value(k) {
                Some(v) => {
                    let kind = if v.ty == Ty::Bool {
                        tir::ExprKind::Bool(v.value != 0)
                    } else {
                        tir::ExprKind::Int(v.value)
                    };
                    (self.mk(kind, &v.ty, span), v.ty)
                }
                None => self.error_expr(span),
            },
            Some(ItemRef::Fn(_)) | Some(ItemRef::Extern(_)) => {
                self.sink.error(ErrorKind::FunctionNotValue(text), span);
                self.error_expr(span)
            }
            Some(ItemRef::Struct(_)) => {
                self.sink.error(ErrorKind::NotAValue(text), span);
                self.error_expr(span)
            }
            None => {
                if let [one] = path.segments.as_slice() {
                    let kind = ErrorKind::UnknownName(text);
                    self.unknown_single(cx.module, &one.name, kind, span);
                }
                self.error_expr(span)
            }
        }
    }

    /// A string literal (or string constant): its bytes as a `[N]u8` value,
    /// or, where a `[]u8` is expected, a slice of a fresh copy of them in a
    /// hidden local array of the function's frame (`tir::ExprKind::Text`).
    pub(super) fn text(
        &mut self,
        cx: &mut FnCx,
        s: &str,
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let ty = Ty::Array(Box::new(Ty::U8), s.len() as u64);
        if !self.size_ok(&ty, span) {
            return self.error_expr(span);
        }
        let bytes = s.as_bytes().to_vec();
        if let Some(Ty::Slice(elem)) = expected
            && **elem == Ty::U8
        {
            let local = cx.hidden(tir::TEXT_LOCAL, ty, span);
            let slice = Ty::Slice(Box::new(Ty::U8));
            return (
                self.mk(tir::ExprKind::Text { local, bytes }, &slice, span),
                slice,
            );
        }
        (self.mk(tir::ExprKind::Bytes(bytes), &ty, span), ty)
    }

    /// `Name { f: e, ... }`. A generic struct's type arguments are the ones
    /// written (`Name::<T> { ... }`), else the expected type's, else inferred
    /// from the field values.
    pub(super) fn struct_lit(
        &mut self,
        cx: &mut FnCx,
        name: &ast::Path,
        type_args: &[ast::TypeExpr],
        fields: &[(ast::Ident, ast::Expr)],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        let fail = |this: &mut Self, cx: &mut FnCx| {
            for (_, e) in fields {
                this.expr(cx, e, None);
            }
            this.error_expr(span)
        };
        let s = match self.resolve_type_name(name, cx.module) {
            Some(ItemRef::Struct(s)) => s,
            other => {
                if other.is_some() {
                    self.sink.error(ErrorKind::NotAType(name.text()), name.span);
                }
                return fail(self, cx);
            }
        };
        let Some(decl) = self.struct_fields(s) else {
            return fail(self, cx);
        };
        let sname = self.structs[s].name.clone();
        if let Some(field) = self.private_field(s, cx.module, None) {
            self.sink.error(
                ErrorKind::PrivateFieldLiteral { ty: sname, field },
                name.span,
            );
            return fail(self, cx);
        }
        let generics = self.structs[s].generics.clone();
        let mut bindings: Vec<(String, Ty)> = Vec::new();
        if !type_args.is_empty() {
            if let Some(kind) = type_arg_count_error(&sname, generics.len(), type_args.len()) {
                self.sink.error(kind, name.span);
                return fail(self, cx);
            }
            let scope = cx.generics.clone();
            for (g, t) in generics.iter().zip(type_args) {
                let ty = self.resolve_type(t, cx.module, &scope);
                if ty.has_error() {
                    return fail(self, cx);
                }
                bindings.push((g.clone(), ty));
            }
        } else if let Some(Ty::Struct(es, eargs)) = expected
            && *es as usize == s
            && eargs.len() == generics.len()
        {
            bindings = generics
                .iter()
                .cloned()
                .zip(eargs.iter().cloned())
                .collect();
        }
        let mut values: Vec<Option<(tir::Expr, Ty, Span)>> = vec![None; decl.list.len()];
        let mut bad = false;
        // Values of their own type first, then calls of literals, then
        // literals, as a call's arguments are (`B { w: 1, v: 250 as u8 }`
        // binds `T` to `u8` whichever field is written first).
        let typings: Vec<Typing> = fields.iter().map(|(_, e)| self.typing(cx, e)).collect();
        let in_order = [Typing::Own, Typing::LiteralCall, Typing::Literal]
            .into_iter()
            .flat_map(|t| fields.iter().zip(&typings).filter(move |(_, k)| **k == t))
            .map(|(f, _)| f);
        for (fname, e) in in_order {
            match decl.position(&fname.name) {
                Some(i) => {
                    let template = &decl.list[i].1;
                    let fty = template.subst(&bindings);
                    // A field type naming an unbound parameter of the struct
                    // guides nothing; its value binds the parameter.
                    let unbound = template
                        .params()
                        .iter()
                        .any(|p| !bindings.iter().any(|(n, _)| n == p));
                    let hint = (!unbound).then_some(&fty);
                    let mut typed = self.expr(cx, e, hint);
                    if unbound {
                        typed = self.view_for(template, &bindings, typed, e.span);
                    }
                    let (te, ty) = typed;
                    if ty == Ty::Unit {
                        // No field's type is unit; a generic one must not
                        // become it.
                        self.sink.error(ErrorKind::UnitValue, e.span);
                        bad = true;
                    }
                    if unbound {
                        unify(template, &ty, &mut bindings);
                    }
                    if values[i].is_some() {
                        self.sink.error(
                            ErrorKind::StructLitDuplicate(fname.name.clone()),
                            fname.span,
                        );
                        bad = true;
                    }
                    values[i] = Some((te, ty, e.span));
                }
                None => {
                    self.expr(cx, e, None);
                    self.sink.error(
                        ErrorKind::StructLitUnknown {
                            name: sname.clone(),
                            field: fname.name.clone(),
                        },
                        fname.span,
                    );
                    bad = true;
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            if v.is_none() {
                self.sink.error(
                    ErrorKind::StructLitMissing {
                        name: sname.clone(),
                        field: decl.list[i].0.clone(),
                    },
                    name.span,
                );
                bad = true;
            }
        }
        if bad {
            return self.error_expr(span);
        }
        let mut args = Vec::with_capacity(generics.len());
        for g in &generics {
            match bindings.iter().find(|(n, _)| n == g) {
                Some((_, t)) => args.push(t.clone()),
                None => {
                    // A value in error binds nothing: already reported.
                    let value_error = values.iter().flatten().any(|(_, t, _)| t.has_error());
                    if value_error || expected.is_some_and(Ty::has_error) {
                        return self.error_expr(span);
                    }
                    self.sink.error(
                        ErrorKind::CannotInfer {
                            name: sname,
                            param: g.clone(),
                        },
                        name.span,
                    );
                    return self.error_expr(span);
                }
            }
        }
        // Every value against its field's type in this instance.
        let mut exprs = Vec::with_capacity(values.len());
        for (i, v) in values.into_iter().enumerate() {
            let (te, ty, at) = v.expect("every field has a value (checked above)");
            let fty = decl.list[i].1.subst(&bindings);
            bad |= !self.expect_ty(&fty, &ty, at) || ty.has_error();
            exprs.push(te);
        }
        if bad || args.iter().any(Ty::has_error) {
            return self.error_expr(span);
        }
        let ty = Ty::Struct(s as u32, args);
        // A literal of a literal's type doubles the type's tree each time.
        if ty.nests_too_deep() {
            self.sink
                .error(ErrorKind::InstantiationTooDeep(sname), name.span);
            return self.error_expr(span);
        }
        let id = match self.tir_ty(&ty) {
            tir::Type::Struct(id) => id,
            _ => unreachable!("a struct type lowers to a struct"),
        };
        let kind = tir::ExprKind::StructLit { id, fields: exprs };
        (self.mk(kind, &ty, span), ty)
    }
}

/// The type an integer literal operand of `as` takes (`x` a literal, maybe
/// negated or parenthesised): the target's when the value fits it, else the
/// first of `i64` and `u64` it fits, so that `0xcbf2_9ce4_8422_2325 as u64`
/// and `0xFFFF_FFFF_FFFF_FFFF as i64` (-1, its bits) mean what a C
/// programmer writes them for. `None` for any other operand.
fn literal_type_for_cast(x: &ast::Expr, target: &Ty) -> Option<Ty> {
    let mut neg = false;
    let mut e = x;
    let v = loop {
        match &e.kind {
            ast::ExprKind::Paren(inner) => e = inner,
            ast::ExprKind::Unary(ast::UnOp::Neg, inner) if !neg => {
                neg = true;
                e = inner;
            }
            ast::ExprKind::Int(Some(v)) => break *v,
            _ => return None,
        }
    };
    let value = if neg { -(v as i128) } else { v as i128 };
    let fits = |t: &Ty| int_range(t).is_some_and(|(min, max)| (min..=max).contains(&value));
    [target.clone(), Ty::I64, Ty::U64].into_iter().find(fits)
}

/// The values of an integer type.
fn int_range(t: &Ty) -> Option<(i128, i128)> {
    Some(match t {
        Ty::I32 => (i32::MIN as i128, i32::MAX as i128),
        Ty::U8 => (0, 255),
        Ty::U64 => (0, u64::MAX as i128),
        Ty::I64 => (i64::MIN as i128, i64::MAX as i128),
        _ => return None,
    })
}
