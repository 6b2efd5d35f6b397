//! Checking of statements and expressions (both modes; see `check`).

use super::fold::{self, FoldError};
use super::ty::{Ty, unify};
use super::{Checker, ItemRef};
use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind};
use crate::source::Span;
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;

/// A `FuncId` no instance has: marks `size_of::<T>()` of an opaque `T`
/// (not a constant) in check-mode output, which is discarded.
const OPAQUE: tir::FuncId = tir::FuncId(u32::MAX);

/// Per-function state: locals, scopes, loop nesting, return type.
pub(crate) struct FnCx {
    module: usize,
    generics: Vec<(String, Ty)>,
    pub(crate) locals: Vec<tir::Local>,
    pub(crate) local_tys: Vec<Ty>,
    pub(crate) local_spans: Vec<Span>,
    /// The names each open scope declared, innermost last.
    scopes: Vec<Vec<String>>,
    /// Every name in scope: the locals it denotes, the visible one last
    /// (a function may have many locals: lookups must not scan).
    visible: HashMap<String, Vec<u32>>,
    /// `literal_like` answers by binary node address (this body's tree).
    literal_like: HashMap<usize, bool>,
    ret: Ty,
    loops: u32,
    emit: bool,
}

impl FnCx {
    pub(crate) fn new(module: usize, generics: Vec<(String, Ty)>, ret: Ty, emit: bool) -> FnCx {
        FnCx {
            module,
            generics,
            locals: Vec::new(),
            local_tys: Vec::new(),
            local_spans: Vec::new(),
            scopes: Vec::new(),
            visible: HashMap::new(),
            literal_like: HashMap::new(),
            ret,
            loops: 0,
            emit,
        }
    }
    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }
    pub(crate) fn pop_scope(&mut self) {
        for name in self.scopes.pop().unwrap_or_default() {
            if let Some(ids) = self.visible.get_mut(&name) {
                ids.pop();
                if ids.is_empty() {
                    self.visible.remove(&name);
                }
            }
        }
    }
    /// A fresh local in the innermost scope (shadowing any earlier one).
    pub(crate) fn declare(
        &mut self,
        name: &str,
        ty: Ty,
        mutable: bool,
        span: Span,
    ) -> tir::LocalId {
        let id = self.locals.len() as u32;
        self.locals.push(tir::Local {
            name: name.to_string(),
            ty: ty.to_tir(),
            mutable,
        });
        self.local_tys.push(ty);
        self.local_spans.push(span);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_string());
            self.visible.entry(name.to_string()).or_default().push(id);
        }
        tir::LocalId(id)
    }
    fn lookup(&self, name: &str) -> Option<u32> {
        self.visible.get(name).and_then(|ids| ids.last()).copied()
    }
}

/// Where a place expression is rooted, for assignment and `ref`.
enum Root {
    Mutable,
    Immutable(u32),
    /// Part of a temporary value (`f().x`).
    Temporary,
    /// Not a place at all (`1 + 2`).
    NotPlace,
}

fn root(cx: &FnCx, e: &tir::Expr) -> Root {
    match &e.kind {
        tir::ExprKind::Local(id) => {
            if cx.locals[id.0 as usize].mutable {
                Root::Mutable
            } else {
                Root::Immutable(id.0)
            }
        }
        tir::ExprKind::Field(b, _) => match root(cx, b) {
            Root::NotPlace => Root::Temporary,
            r => r,
        },
        tir::ExprKind::Index(b, _) => match &b.ty {
            // Slices are views: their elements are always writable.
            tir::Type::Slice(_) | tir::Type::Reusable(_) => Root::Mutable,
            _ => match root(cx, b) {
                Root::NotPlace => Root::Temporary,
                r => r,
            },
        },
        _ => Root::NotPlace,
    }
}

/// An expression made only of integer literals (and `-`, parentheses,
/// arithmetic): it takes its type from the other operand. `cache` holds the
/// answer for each binary node already asked about, so a chain of `n`
/// operators costs `O(n)` in all, not per operator.
fn literal_like(e: &ast::Expr, cache: &mut HashMap<usize, bool>) -> bool {
    match &e.kind {
        ast::ExprKind::Int(_) => true,
        ast::ExprKind::Unary(ast::UnOp::Neg, x) | ast::ExprKind::Paren(x) => literal_like(x, cache),
        ast::ExprKind::Binary(op, a, b) => {
            let key = e as *const ast::Expr as usize;
            if let Some(&v) = cache.get(&key) {
                return v;
            }
            let v = !op.is_comparison()
                && !matches!(op, ast::BinOp::And | ast::BinOp::Or)
                && literal_like(a, cache)
                && literal_like(b, cache);
            cache.insert(key, v);
            v
        }
        _ => false,
    }
}

/// The "returns on every path" rule: the last statement is `return`, a
/// `panic(...)` call, an `if`/`else` whose branches both return, or a
/// `while true` loop with no `break` of its own.
pub(crate) fn block_returns(mut b: &ast::Block) -> bool {
    // An `else if` chain is followed in a loop (it can be long).
    while let Some(ast::StmtKind::If {
        then,
        else_: Some(else_),
        ..
    }) = b.stmts.last().map(|s| &s.kind)
    {
        if !block_returns(then) {
            return false;
        }
        b = else_;
    }
    match b.stmts.last().map(|s| &s.kind) {
        Some(ast::StmtKind::Return(_)) => true,
        Some(ast::StmtKind::Expr(e)) => matches!(&e.kind,
            ast::ExprKind::Call { callee, .. } if callee.segments.len() == 1 && callee.segments[0].name == "panic"),
        Some(ast::StmtKind::While { cond, body }) => {
            matches!(cond.kind, ast::ExprKind::Bool(true)) && !breaks(body)
        }
        _ => false,
    }
}

/// Does this loop body contain a `break` for its own loop?
fn breaks(b: &ast::Block) -> bool {
    b.stmts.iter().any(|s| match &s.kind {
        ast::StmtKind::Break => true,
        ast::StmtKind::If { then, else_, .. } => breaks(then) || else_.as_ref().is_some_and(breaks),
        // Breaks in nested loops leave those loops.
        _ => false,
    })
}

fn binop(op: ast::BinOp) -> tir::BinOp {
    match op {
        ast::BinOp::Add => tir::BinOp::Add,
        ast::BinOp::Sub => tir::BinOp::Sub,
        ast::BinOp::Mul => tir::BinOp::Mul,
        ast::BinOp::Div => tir::BinOp::Div,
        ast::BinOp::Rem => tir::BinOp::Rem,
        ast::BinOp::BitAnd => tir::BinOp::BitAnd,
        ast::BinOp::BitOr => tir::BinOp::BitOr,
        ast::BinOp::BitXor => tir::BinOp::BitXor,
        ast::BinOp::Shl => tir::BinOp::Shl,
        ast::BinOp::Shr => tir::BinOp::Shr,
        ast::BinOp::Eq => tir::BinOp::Eq,
        ast::BinOp::Ne => tir::BinOp::Ne,
        ast::BinOp::Lt => tir::BinOp::Lt,
        ast::BinOp::Le => tir::BinOp::Le,
        ast::BinOp::Gt => tir::BinOp::Gt,
        ast::BinOp::Ge => tir::BinOp::Ge,
        ast::BinOp::And => tir::BinOp::And,
        ast::BinOp::Or => tir::BinOp::Or,
    }
}

type Typed = (tir::Expr, Ty);
/// Checked arguments and the generic bindings they determined.
type CheckedArgs = (Vec<tir::Arg>, Vec<(String, Ty)>);

impl Checker<'_> {
    fn mk(&self, kind: tir::ExprKind, ty: &Ty, span: Span) -> tir::Expr {
        tir::Expr {
            kind,
            ty: ty.to_tir(),
            loc: self.loc(span),
            span,
        }
    }
    fn error_expr(&self, span: Span) -> Typed {
        (self.mk(tir::ExprKind::Int(0), &Ty::Error, span), Ty::Error)
    }
    fn mismatch(&mut self, expected: &Ty, found: &Ty, span: Span) {
        let ints = expected.is_integer() && found.is_integer();
        let (expected, found) = (self.ty_name(expected), self.ty_name(found));
        let mut d = Diagnostic::new(
            ErrorKind::Mismatch {
                expected: expected.clone(),
                found: found.clone(),
            },
            span,
        );
        if ints {
            d = d.note(NoteKind::CastHint(found, expected));
        }
        self.sink.push(d);
    }
    /// Report unless `found` agrees with `expected`.
    fn expect_ty(&mut self, expected: &Ty, found: &Ty, span: Span) -> bool {
        if expected.compatible(found) {
            true
        } else {
            self.mismatch(expected, found, span);
            false
        }
    }
    fn immutable_diag(&self, kind: ErrorKind, span: Span, cx: &FnCx, id: u32) -> Diagnostic {
        let name = cx.locals[id as usize].name.clone();
        Diagnostic::new(kind, span)
            .label(
                cx.local_spans[id as usize],
                LabelKind::DeclaredImmutable(name.clone()),
            )
            .note(NoteKind::UseVar(name))
    }

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

    fn stmt(&mut self, cx: &mut FnCx, s: &ast::Stmt) -> Option<tir::Stmt> {
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
                let local = cx.declare(&name.name, ty, *mutable, name.span);
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
                if !pty.has_error() && !vty.has_error() && (!pty.is_integer() || pty != vty) {
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
                } else if !sty.is_integer() {
                    let n = self.ty_name(&sty);
                    self.sink.error(ErrorKind::ForRangeType(n), start.span);
                    Ty::Error
                } else if !ety.is_integer() {
                    let n = self.ty_name(&ety);
                    self.sink.error(ErrorKind::ForRangeType(n), end.span);
                    Ty::Error
                } else {
                    self.expect_ty(&sty, &ety, end.span);
                    sty
                };
                cx.push_scope();
                let local = cx.declare(&var.name, ty, false, var.span);
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

    /// `if ... else if ... else ...`: the arms in a loop (a chain is as
    /// deep as it is long; see `syntax::parser::MAX_CHAIN_LINKS`).
    fn if_chain<'b>(
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

    fn cond(&mut self, cx: &mut FnCx, e: &ast::Expr) -> tir::Expr {
        let (te, ty) = self.expr(cx, e, Some(&Ty::Bool));
        self.expect_ty(&Ty::Bool, &ty, e.span);
        te
    }

    fn check_assignable(&mut self, cx: &FnCx, tp: &tir::Expr, pty: &Ty, span: Span) {
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
    fn operand_pair(
        &mut self,
        cx: &mut FnCx,
        a: &ast::Expr,
        b: &ast::Expr,
        expected: Option<&Ty>,
    ) -> (Typed, Typed) {
        let int_hint = |t: &Ty| -> Option<Ty> { t.is_integer().then(|| t.clone()) };
        if literal_like(a, &mut cx.literal_like) && !literal_like(b, &mut cx.literal_like) {
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

    // ---- expressions ----

    /// Check `e`; `expected` only guides literal typing and inference (the
    /// caller compares the result against what it needs).
    pub(crate) fn expr(&mut self, cx: &mut FnCx, e: &ast::Expr, expected: Option<&Ty>) -> Typed {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Error => self.error_expr(span),
            ast::ExprKind::Int(v) => self.int_literal(*v, false, expected, span),
            ast::ExprKind::Bool(b) => (self.mk(tir::ExprKind::Bool(*b), &Ty::Bool, span), Ty::Bool),
            ast::ExprKind::Str(_) => {
                self.sink.error(ErrorKind::StrNotAllowed, span);
                self.error_expr(span)
            }
            ast::ExprKind::Paren(inner) => self.expr(cx, inner, expected),
            ast::ExprKind::Path(path, targs) => self.path_value(cx, path, targs, span),
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            } => self.call(cx, callee, type_args, args, expected, span),
            ast::ExprKind::Field(base, field) => {
                let (tb, bty) = self.expr(cx, base, None);
                let found = match &bty {
                    Ty::Struct(s) => self.field(*s as usize, &field.name),
                    _ => Ok(None),
                };
                let Ok(found) = found else {
                    return self.error_expr(span);
                };
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
            ast::ExprKind::Index(base, index) => {
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
            ast::ExprKind::SliceRange { base, lo, hi } => {
                let (tb, bty) = self.expr(cx, base, None);
                let lo = lo.as_ref().map(|x| Box::new(self.index_operand(cx, x)));
                let hi = hi.as_ref().map(|x| Box::new(self.index_operand(cx, x)));
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
            ast::ExprKind::Unary(op, operand) => {
                if *op == ast::UnOp::Neg
                    && let ast::ExprKind::Int(v) = operand.kind
                {
                    return self.int_literal(v, true, expected, span);
                }
                let hint = expected.filter(|t| t.is_integer() || **t == Ty::Bool);
                let (to, ty) = self.expr(cx, operand, hint);
                let ok = match op {
                    ast::UnOp::Neg => ty.is_integer(),
                    ast::UnOp::Not => ty.is_integer() || ty == Ty::Bool,
                };
                if ty.is_error() {
                    return self.error_expr(span);
                }
                if !ok {
                    let t = self.ty_name(&ty);
                    let op = if *op == ast::UnOp::Neg { "-" } else { "!" };
                    self.sink.error(
                        ErrorKind::UnaryOperand {
                            op: op.into(),
                            ty: t,
                        },
                        span,
                    );
                    return self.error_expr(span);
                }
                let top = if *op == ast::UnOp::Neg {
                    tir::UnOp::Neg
                } else {
                    tir::UnOp::Not
                };
                (
                    self.mk(tir::ExprKind::Unary(top, Box::new(to)), &ty, span),
                    ty,
                )
            }
            ast::ExprKind::Binary(op, a, b) => self.binary(cx, *op, a, b, expected, span),
            ast::ExprKind::Cast(x, t) => {
                let target = self.resolve_type(t, cx.module, &cx.generics.clone());
                let (tx, xty) = self.expr(cx, x, None);
                if target.has_error() || xty.has_error() {
                    return self.error_expr(span);
                }
                if !target.is_integer() || !(xty.is_integer() || xty == Ty::Bool) {
                    let (from, to) = (self.ty_name(&xty), self.ty_name(&target));
                    self.sink.error(ErrorKind::InvalidCast { from, to }, span);
                    return self.error_expr(span);
                }
                (
                    self.mk(tir::ExprKind::Cast(Box::new(tx)), &target, span),
                    target,
                )
            }
            ast::ExprKind::StructLit { name, fields } => self.struct_lit(cx, name, fields, span),
            ast::ExprKind::ArrayRepeat(value, count) => {
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
                        let shown = if cty == Ty::Bool {
                            (n != 0).to_string()
                        } else {
                            n.to_string()
                        };
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
            ast::ExprKind::ArrayLit(elems) => {
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
        }
    }

    pub(crate) fn size_ok(&mut self, ty: &Ty, span: Span) -> bool {
        match self.layout_of(ty, span) {
            Some(l) if l.size > super::MAX_TYPE_SIZE => {
                self.sink.error(ErrorKind::TypeTooLarge, span);
                false
            }
            _ => true,
        }
    }

    /// An index or slice bound: `i64`.
    fn index_operand(&mut self, cx: &mut FnCx, e: &ast::Expr) -> tir::Expr {
        let (te, ty) = self.expr(cx, e, Some(&Ty::I64));
        self.expect_ty(&Ty::I64, &ty, e.span);
        te
    }

    /// An integer literal (negated when `neg`), typed from `expected` or `i64`.
    fn int_literal(
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
            Some(t) if t.is_integer() => t.clone(),
            _ => Ty::I64,
        };
        let (min, max): (i128, i128) = match ty {
            Ty::I32 => (i32::MIN as i128, i32::MAX as i128),
            Ty::U8 => (0, 255),
            _ => (i64::MIN as i128, i64::MAX as i128),
        };
        let value = if neg { -(v as i128) } else { v as i128 };
        if value < min || value > max {
            let literal = if neg { format!("-{v}") } else { v.to_string() };
            let t = self.ty_name(&ty);
            self.sink
                .error(ErrorKind::LiteralOutOfRange { literal, ty: t }, span);
            return self.error_expr(span);
        }
        (self.mk(tir::ExprKind::Int(value as i64), &ty, span), ty)
    }

    fn binary(
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
            expected.filter(|t| t.is_integer()).cloned()
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
                aty.is_scalar()
            } else {
                aty.is_integer()
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
    fn path_value(
        &mut self,
        cx: &mut FnCx,
        path: &ast::Path,
        targs: &[ast::TypeExpr],
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
                if path.segments.len() == 1 {
                    self.sink.error(ErrorKind::UnknownName(text), span);
                }
                self.error_expr(span)
            }
        }
    }

    fn struct_lit(
        &mut self,
        cx: &mut FnCx,
        name: &ast::Path,
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Typed {
        let s = match self.resolve_path(name, cx.module) {
            Some(ItemRef::Struct(s)) => s,
            other => {
                if other.is_some() {
                    self.sink.error(ErrorKind::NotAType(name.text()), name.span);
                } else if name.segments.len() == 1 {
                    self.sink
                        .error(ErrorKind::UnknownType(name.text()), name.span);
                }
                for (_, e) in fields {
                    self.expr(cx, e, None);
                }
                return self.error_expr(span);
            }
        };
        let Some(decl) = self.struct_fields(s) else {
            for (_, e) in fields {
                self.expr(cx, e, None);
            }
            return self.error_expr(span);
        };
        let sname = self.structs[s].name.clone();
        let mut values: Vec<Option<tir::Expr>> = vec![None; decl.list.len()];
        let mut bad = false;
        for (fname, e) in fields {
            match decl.position(&fname.name) {
                Some(i) => {
                    let fty = decl.list[i].1.clone();
                    let (te, ty) = self.expr(cx, e, Some(&fty));
                    bad |= !self.expect_ty(&fty, &ty, e.span) || ty.has_error();
                    if values[i].is_some() {
                        self.sink.error(
                            ErrorKind::StructLitDuplicate(fname.name.clone()),
                            fname.span,
                        );
                        bad = true;
                    }
                    values[i] = Some(te);
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
        let ty = Ty::Struct(s as u32);
        let kind = tir::ExprKind::StructLit {
            id: tir::StructId(s as u32),
            fields: values.into_iter().flatten().collect(),
        };
        (self.mk(kind, &ty, span), ty)
    }

    // ---- calls ----

    fn call(
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
            [n] if super::BUILTIN_NAMES.contains(n) => true,
            ["reusable" | "unsafe", _] => true,
            _ => false,
        };
        if builtin {
            return self.builtin(cx, &segs.join("::"), callee, targs, args, expected, span);
        }
        if segs.len() == 1 && cx.lookup(segs[0]).is_some() {
            self.sink
                .error(ErrorKind::NotAFunction(callee.text()), callee.span);
            self.args_for_errors(cx, args);
            return self.error_expr(span);
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
                    self.call_args(cx, &callee.text(), &sig, Vec::new(), args, span)
                else {
                    return self.error_expr(span);
                };
                let ret = sig.ret.clone();
                let id = if cx.emit {
                    self.extern_id(e)
                } else {
                    tir::ExternId(0)
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
                self.args_for_errors(cx, args);
                self.error_expr(span)
            }
            None => {
                if callee.segments.len() == 1 {
                    self.sink
                        .error(ErrorKind::UnknownName(callee.text()), callee.span);
                }
                self.args_for_errors(cx, args);
                self.error_expr(span)
            }
        }
    }

    /// Check arguments of a call that already failed, for their own errors.
    fn args_for_errors(&mut self, cx: &mut FnCx, args: &[ast::Arg]) {
        for a in args {
            if !matches!(a.expr.kind, ast::ExprKind::Str(_)) {
                self.expr(cx, &a.expr, None);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call_fn(
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
            if sig.generics.is_empty() {
                self.sink.error(ErrorKind::NotGeneric(name), callee.span);
                self.args_for_errors(cx, args);
                return self.error_expr(span);
            }
            if targs.len() != sig.generics.len() {
                self.sink.error(
                    ErrorKind::TypeArgCount {
                        name,
                        expected: sig.generics.len(),
                        found: targs.len(),
                    },
                    callee.span,
                );
                self.args_for_errors(cx, args);
                return self.error_expr(span);
            }
            let generics = cx.generics.clone();
            for (g, t) in sig.generics.iter().zip(targs) {
                let ty = self.resolve_type(t, cx.module, &generics);
                bindings.push((g.clone(), ty));
            }
        }
        let Some((targs_out, mut bindings)) = self.call_args(cx, &name, &sig, bindings, args, span)
        else {
            return self.error_expr(span);
        };
        // Parameters only the result mentions come from the context
        // (`let s: []i64 = alloc(...)`).
        if let Some(want) = expected
            && sig
                .generics
                .iter()
                .any(|g| !bindings.iter().any(|(n, _)| n == g))
        {
            let mut extra = bindings.clone();
            if unify(&sig.ret, want, &mut extra) {
                bindings = extra;
            }
        }
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
    /// into `bindings`); `None` when the call is in error.
    fn call_args(
        &mut self,
        cx: &mut FnCx,
        name: &str,
        sig: &super::Sig,
        mut bindings: Vec<(String, Ty)>,
        args: &[ast::Arg],
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
        // Non-literal arguments first, so literals can take their type from
        // what the others bound.
        for pass in 0..2 {
            for (i, (a, p)) in args.iter().zip(&sig.params).enumerate() {
                if (pass == 0) == literal_like(&a.expr, &mut cx.literal_like) {
                    continue;
                }
                // `p.ty` speaks of the callee's parameters; the caller's own
                // (opaque) parameters may share their names, so unify the
                // unsubstituted type and substitute only for display.
                let bound =
                    p.ty.params()
                        .iter()
                        .all(|g| bindings.iter().any(|(n, _)| n == g));
                let hint = bound.then(|| p.ty.subst(&bindings));
                let (te, ty) = self.expr(cx, &a.expr, hint.as_ref());
                if ty.has_error() {
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

    /// `print`, `len`, `reusable::append`, ...
    #[allow(clippy::too_many_arguments)]
    fn builtin(
        &mut self,
        cx: &mut FnCx,
        name: &str,
        callee: &ast::Path,
        targs: &[ast::TypeExpr],
        args: &[ast::Arg],
        expected: Option<&Ty>,
        span: Span,
    ) -> Typed {
        // (argument count, takes a type argument)
        let (arity, generic) = match name {
            // `panic(msg, detail)` is the two-argument form (see below).
            "panic" if args.len() == 2 => (2, false),
            "len" | "print" | "panic" => (1, false),
            "assert" => (2, false),
            "size_of" => (0, true),
            "reusable::alloc" => (1, true),
            "reusable::append" | "reusable::resize" => (2, false),
            "reusable::free" | "reusable::offset" => (1, false),
            "unsafe::slice" => (2, true),
            "unsafe::addr" => (1, false),
            "unsafe::copy" => (3, false),
            _ => {
                self.sink
                    .error(ErrorKind::UnknownBuiltin(name.to_string()), callee.span);
                self.args_for_errors(cx, args);
                return self.error_expr(span);
            }
        };
        if !generic && !targs.is_empty() {
            self.sink
                .error(ErrorKind::NotGeneric(name.into()), callee.span);
            self.args_for_errors(cx, args);
            return self.error_expr(span);
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
            self.args_for_errors(cx, args);
            return self.error_expr(span);
        }
        if args.len() != arity {
            self.sink.error(
                ErrorKind::ArgCount {
                    name: name.into(),
                    expected: arity,
                    found: args.len(),
                },
                span,
            );
            self.args_for_errors(cx, args);
            return self.error_expr(span);
        }
        if let Some(a) = args.iter().find(|a| a.by_ref) {
            self.sink.error(ErrorKind::BuiltinRef(name.into()), a.span);
            self.args_for_errors(cx, args);
            return self.error_expr(span);
        }
        let generics = cx.generics.clone();
        let targ = targs
            .first()
            .map(|t| self.resolve_type(t, cx.module, &generics));
        if targ.as_ref().is_some_and(Ty::has_error) {
            self.args_for_errors(cx, args);
            return self.error_expr(span);
        }
        let unit = Ty::Unit;
        let builtin = |c: &Self, b: tir::Builtin, a: Vec<tir::Expr>, ty: &Ty| -> Typed {
            (c.mk(tir::ExprKind::Builtin(b, a), ty, span), ty.clone())
        };
        match name {
            "len" => {
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
            "print" => {
                let a = &args[0].expr;
                if let ast::ExprKind::Str(s) = &a.kind {
                    let lit = self.mk(tir::ExprKind::Str(s.clone()), &Ty::Str, a.span);
                    return builtin(self, tir::Builtin::Print, vec![lit], &unit);
                }
                let (te, ty) = self.expr(cx, a, None);
                if ty.has_error() {
                    return self.error_expr(span);
                }
                if !ty.is_scalar() {
                    let n = self.ty_name(&ty);
                    self.sink.error(ErrorKind::PrintArg(n), a.span);
                    return self.error_expr(span);
                }
                builtin(self, tir::Builtin::Print, vec![te], &unit)
            }
            "panic" => {
                let lit = self.str_arg(&args[0].expr, "panic");
                // The optional detail: message bytes computed at run time
                // (a `[]u8`), appended to the literal.
                let detail = args.get(1).map(|a| {
                    let want = Ty::Slice(Box::new(Ty::U8));
                    let (te, ty) = self.expr(cx, &a.expr, Some(&want));
                    let ok = !ty.has_error() && self.expect_ty(&want, &ty, a.expr.span);
                    ok.then_some(te)
                });
                match (lit, detail) {
                    (Some(lit), None) => builtin(self, tir::Builtin::Panic, vec![lit], &unit),
                    (Some(lit), Some(Some(d))) => {
                        builtin(self, tir::Builtin::Panic, vec![lit, d], &unit)
                    }
                    _ => self.error_expr(span),
                }
            }
            "assert" => {
                let (tc, cty) = self.expr(cx, &args[0].expr, Some(&Ty::Bool));
                let ok = self.expect_ty(&Ty::Bool, &cty, args[0].expr.span);
                let msg = self.str_arg(&args[1].expr, "assert");
                match msg {
                    Some(m) if ok && !cty.has_error() => {
                        builtin(self, tir::Builtin::Assert, vec![tc, m], &unit)
                    }
                    _ => self.error_expr(span),
                }
            }
            "size_of" => {
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
            "reusable::alloc" | "unsafe::slice" => {
                let is_alloc = name == "reusable::alloc";
                let elem = targ.or_else(|| match expected {
                    Some(Ty::Reusable(t)) if is_alloc => Some((**t).clone()),
                    Some(Ty::Slice(t)) if !is_alloc => Some((**t).clone()),
                    _ => None,
                });
                let mut out = Vec::new();
                let mut bad = false;
                for a in args {
                    let (te, ty) = self.expr(cx, &a.expr, Some(&Ty::I64));
                    bad |= ty.has_error() || !self.expect_ty(&Ty::I64, &ty, a.expr.span);
                    out.push(te);
                }
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
                let (b, ty) = if is_alloc {
                    (tir::Builtin::ReusableAlloc, Ty::Reusable(Box::new(elem)))
                } else {
                    (tir::Builtin::UnsafeSlice, Ty::Slice(Box::new(elem)))
                };
                builtin(self, b, out, &ty)
            }
            "reusable::append" | "reusable::resize" | "reusable::free" | "reusable::offset" => {
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
                    let want = if name == "reusable::append" {
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
                let (b, ty) = match name {
                    "reusable::append" => (tir::Builtin::ReusableAppend, sty),
                    "reusable::resize" => (tir::Builtin::ReusableResize, sty),
                    "reusable::free" => (tir::Builtin::ReusableFree, Ty::Unit),
                    _ => (tir::Builtin::ReusableOffset, Ty::I64),
                };
                builtin(self, b, out, &ty)
            }
            "unsafe::addr" => {
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
                builtin(self, tir::Builtin::UnsafeAddr, vec![te], &Ty::I64)
            }
            _ => {
                // unsafe::copy(dst, src, bytes)
                let mut out = Vec::new();
                let mut bad = false;
                for a in args {
                    let (te, ty) = self.expr(cx, &a.expr, Some(&Ty::I64));
                    bad |= ty.has_error() || !self.expect_ty(&Ty::I64, &ty, a.expr.span);
                    out.push(te);
                }
                if bad {
                    return self.error_expr(span);
                }
                builtin(self, tir::Builtin::UnsafeCopy, out, &unit)
            }
        }
    }

    /// A string literal argument of `panic`/`assert`.
    fn str_arg(&mut self, e: &ast::Expr, builtin: &str) -> Option<tir::Expr> {
        match &e.kind {
            ast::ExprKind::Str(s) => Some(self.mk(tir::ExprKind::Str(s.clone()), &Ty::Str, e.span)),
            _ => {
                self.sink
                    .error(ErrorKind::NeedsStrLit(builtin.into()), e.span);
                None
            }
        }
    }
}
