//! Checking statements: blocks and scopes, `let`, assignment, `if` chains,
//! loops, `return`.

use super::*;

impl Checker<'_> {
    // ---- statements ----

    pub(crate) fn block(&mut self, cx: &mut FnCx, b: &ast::Block) -> tir::Block {
        cx.push_scope();
        let mut stmts = Vec::new();
        for s in &b.stmts {
            if let Some(s) = self.stmt(cx, s) {
                stmts.push(s);
            }
        }
        cx.pop_scope();
        tir::Block { stmts }
    }

    pub(super) fn stmt(&mut self, cx: &mut FnCx, s: &ast::Stmt) -> Option<tir::Stmt> {
        Some(match &s.kind {
            ast::StmtKind::Let {
                mutable,
                name,
                ty,
                init,
            } => {
                // An erroneous declared type still goes down as the
                // expectation: it silences inference errors below it.
                let declared = ty
                    .as_ref()
                    .map(|t| self.resolve_type(t, cx.module, &cx.generics.clone()));
                let (te, ity) = self.expr(cx, init, declared.as_ref());
                let ty = match declared {
                    Some(d) => {
                        self.expect_ty(&d, &ity, init.span);
                        d
                    }
                    None => {
                        if ity == Ty::Unit {
                            self.sink.error(ErrorKind::UnitValue, init.span);
                            Ty::Error
                        } else {
                            ity
                        }
                    }
                };
                let binding = if *mutable { Binding::Var } else { Binding::Let };
                let local = cx.declare(&name.name, ty, binding, name.span);
                tir::Stmt::Let { local, init: te }
            }
            ast::StmtKind::Assign { place, value } => {
                let (tp, pty) = self.expr(cx, place, None);
                self.check_assignable(cx, &tp, &pty, place.span);
                let (tv, vty) = self.expr(cx, value, Some(&pty));
                if !pty.has_error() {
                    self.expect_ty(&pty, &vty, value.span);
                }
                tir::Stmt::Assign {
                    place: tp,
                    value: tv,
                }
            }
            ast::StmtKind::CompoundAssign { place, op, value } => {
                let (tp, pty) = self.expr(cx, place, None);
                self.check_assignable(cx, &tp, &pty, place.span);
                let (tv, vty) = self.expr(cx, value, Some(&pty));
                if !pty.has_error() && !vty.has_error() && (!pty.may_be_integer() || pty != vty) {
                    let (lhs, rhs) = (self.ty_name(&pty), self.ty_name(&vty));
                    self.sink.error(
                        ErrorKind::BinaryOperands {
                            op: format!("{}=", op.text()),
                            lhs,
                            rhs,
                        },
                        s.span,
                    );
                }
                tir::Stmt::CompoundAssign {
                    place: tp,
                    op: binop(*op),
                    value: tv,
                }
            }
            ast::StmtKind::Expr(e) => tir::Stmt::Expr(self.expr(cx, e, None).0),
            ast::StmtKind::If { cond, then, else_ } => self.if_chain(cx, cond, then, else_),
            ast::StmtKind::While { cond, body } => {
                let tc = self.cond(cx, cond);
                cx.loops += 1;
                let body = self.block(cx, body);
                cx.loops -= 1;
                tir::Stmt::While { cond: tc, body }
            }
            ast::StmtKind::For {
                var,
                start,
                end,
                body,
            } => {
                let ((ts, sty), (te, ety)) = self.operand_pair(cx, start, end, None);
                let ty = if sty.has_error() || ety.has_error() {
                    Ty::Error
                } else if !sty.may_be_integer() {
                    let n = self.ty_name(&sty);
                    self.sink.error(ErrorKind::ForRangeType(n), start.span);
                    Ty::Error
                } else if !ety.may_be_integer() {
                    let n = self.ty_name(&ety);
                    self.sink.error(ErrorKind::ForRangeType(n), end.span);
                    Ty::Error
                } else {
                    self.expect_ty(&sty, &ety, end.span);
                    sty
                };
                cx.push_scope();
                let local = cx.declare(&var.name, ty, Binding::ForVar, var.span);
                cx.loops += 1;
                let body = self.block(cx, body);
                cx.loops -= 1;
                cx.pop_scope();
                tir::Stmt::For {
                    var: local,
                    start: ts,
                    end: te,
                    body,
                }
            }
            ast::StmtKind::ForEach {
                index,
                var,
                seq,
                body,
            } => return self.for_each(cx, index.as_ref(), var, seq, body),
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let is_break = matches!(s.kind, ast::StmtKind::Break);
                if cx.loops == 0 {
                    let kw = if is_break { "break" } else { "continue" };
                    self.sink.error(ErrorKind::OutsideLoop(kw.into()), s.span);
                    return None;
                }
                if is_break {
                    tir::Stmt::Break
                } else {
                    tir::Stmt::Continue
                }
            }
            ast::StmtKind::Return(value) => {
                let ret = cx.ret.clone();
                match value {
                    None => {
                        if ret != Ty::Unit && !ret.has_error() {
                            let n = self.ty_name(&ret);
                            self.sink.error(ErrorKind::ReturnMissingValue(n), s.span);
                        }
                        tir::Stmt::Return(None)
                    }
                    Some(v) => {
                        if ret == Ty::Unit {
                            let (te, _) = self.expr(cx, v, None);
                            // An error value stands for code already reported.
                            if !matches!(v.kind, ast::ExprKind::Error) {
                                self.sink.error(ErrorKind::ReturnValueInUnit, v.span);
                            }
                            tir::Stmt::Return(Some(te))
                        } else {
                            let (te, vty) = self.expr(cx, v, Some(&ret));
                            self.expect_ty(&ret, &vty, v.span);
                            tir::Stmt::Return(Some(te))
                        }
                    }
                }
            }
        })
    }

    /// `for x in seq` and `for i, x in seq`. A vector (a struct with fields
    /// `items`, a slice or reusable slice, and `len: i64`, as `vec::Vec`)
    /// is bound to a hidden local first and iterated as `items[0..len]`
    /// (one checked subslice: a `len` past the storage is a located error).
    pub(super) fn for_each(
        &mut self,
        cx: &mut FnCx,
        index: Option<&ast::Ident>,
        var: &ast::Ident,
        seq: &ast::Expr,
        body: &ast::Block,
    ) -> Option<tir::Stmt> {
        let (ts, sty) = self.expr(cx, seq, None);
        let (before, seq_e, elem) = match &sty {
            Ty::Error => (None, ts, Ty::Error),
            Ty::Array(e, _) | Ty::Slice(e) | Ty::Reusable(e) => (None, ts, (**e).clone()),
            Ty::Struct(st, targs) => match self.vector_fields(*st as usize, targs) {
                Some((items, items_ty, len)) => {
                    let elem = items_ty.element().cloned().unwrap_or(Ty::Error);
                    let held = cx.hidden("$seq", sty.clone(), seq.span);
                    let local = || self.mk(tir::ExprKind::Local(held), &sty, seq.span);
                    let field = |this: &Self, i: usize, ty: &Ty| {
                        this.mk(
                            tir::ExprKind::Field(Box::new(local()), i as u32),
                            ty,
                            seq.span,
                        )
                    };
                    let view = Ty::Slice(Box::new(elem.clone()));
                    let slice = tir::ExprKind::SliceRange {
                        base: Box::new(field(self, items, &items_ty)),
                        lo: None,
                        hi: Some(Box::new(field(self, len, &Ty::I64))),
                    };
                    let bind = tir::Stmt::Let {
                        local: held,
                        init: ts,
                    };
                    (Some(bind), self.mk(slice, &view, seq.span), elem)
                }
                None => {
                    let n = self.ty_name(&sty);
                    self.sink.error(ErrorKind::ForEachSeq(n), seq.span);
                    (None, ts, Ty::Error)
                }
            },
            other => {
                let n = self.ty_name(other);
                self.sink.error(ErrorKind::ForEachSeq(n), seq.span);
                (None, ts, Ty::Error)
            }
        };
        cx.push_scope();
        let index = index.map(|i| cx.declare(&i.name, Ty::I64, Binding::ForVar, i.span));
        let var = cx.declare(&var.name, elem, Binding::ForVar, var.span);
        cx.loops += 1;
        let body = self.block(cx, body);
        cx.loops -= 1;
        cx.pop_scope();
        let each = tir::Stmt::ForEach {
            index,
            var,
            seq: seq_e,
            body,
        };
        Some(match before {
            Some(bind) => tir::Stmt::Block(tir::Block {
                stmts: vec![bind, each],
            }),
            None => each,
        })
    }

    /// The fields `(items, its type, len)` of a vector struct: `items` a
    /// slice or reusable slice, `len` an `i64`, both readable here.
    fn vector_fields(&mut self, s: usize, args: &[Ty]) -> Option<(usize, Ty, usize)> {
        let (items, items_ty) = self.field(s, args, "items").ok()??;
        let (len, len_ty) = self.field(s, args, "len").ok()??;
        let ok = matches!(items_ty, Ty::Slice(_) | Ty::Reusable(_)) && len_ty == Ty::I64;
        (ok).then_some((items, items_ty, len))
    }

    /// `if ... else if ... else ...`: the arms in a loop (a chain is as
    /// deep as it is long; see `syntax::parser::MAX_CHAIN_LINKS`).
    pub(super) fn if_chain<'b>(
        &mut self,
        cx: &mut FnCx,
        mut cond: &'b ast::Expr,
        mut then: &'b ast::Block,
        mut else_: &'b Option<ast::Block>,
    ) -> tir::Stmt {
        let mut arms = Vec::new();
        let last = loop {
            let tc = self.cond(cx, cond);
            let tt = self.block(cx, then);
            arms.push((tc, tt));
            match else_ {
                Some(b)
                    if b.stmts.len() == 1
                        && let ast::StmtKind::If {
                            cond: c,
                            then: t,
                            else_: e,
                        } = &b.stmts[0].kind =>
                {
                    (cond, then, else_) = (c, t, e);
                }
                other => break other.as_ref().map(|b| self.block(cx, b)),
            }
        };
        let mut else_block = last;
        let mut stmt = None;
        while let Some((cond, then)) = arms.pop() {
            if let Some(inner) = stmt.take() {
                else_block = Some(tir::Block { stmts: vec![inner] });
            }
            stmt = Some(tir::Stmt::If {
                cond,
                then,
                else_: else_block.take(),
            });
        }
        stmt.expect("an if has one arm at least")
    }

    pub(super) fn cond(&mut self, cx: &mut FnCx, e: &ast::Expr) -> tir::Expr {
        let (te, ty) = self.expr(cx, e, Some(&Ty::Bool));
        self.expect_ty(&Ty::Bool, &ty, e.span);
        te
    }

    pub(super) fn check_assignable(&mut self, cx: &FnCx, tp: &tir::Expr, pty: &Ty, span: Span) {
        if pty.has_error() {
            return;
        }
        match root(cx, tp) {
            Root::Mutable => {}
            Root::Immutable(id) => {
                let name = cx.locals[id as usize].name.clone();
                let d = self.immutable_diag(ErrorKind::AssignImmutable(name), span, cx, id);
                self.sink.push(d);
            }
            Root::Temporary => self.sink.error(ErrorKind::AssignTemporary, span),
            Root::NotPlace => self.sink.error(ErrorKind::AssignNotPlace, span),
        }
    }

    /// Check two operands of one type: a literal-only side takes its type
    /// from the other side.
    pub(super) fn operand_pair(
        &mut self,
        cx: &mut FnCx,
        a: &ast::Expr,
        b: &ast::Expr,
        expected: Option<&Ty>,
    ) -> (Typed, Typed) {
        let int_hint = |t: &Ty| -> Option<Ty> { t.may_be_integer().then(|| t.clone()) };
        if self.typing(cx, a) < self.typing(cx, b) {
            let tb = self.expr(cx, b, expected);
            let hint = int_hint(&tb.1);
            let ta = self.expr(cx, a, hint.as_ref().or(expected));
            (ta, tb)
        } else {
            let ta = self.expr(cx, a, expected);
            let hint = int_hint(&ta.1);
            let tb = self.expr(cx, b, hint.as_ref().or(expected));
            (ta, tb)
        }
    }
}
