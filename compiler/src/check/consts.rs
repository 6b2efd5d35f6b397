//! Constants: lazy evaluation of `const` items and folding of constant
//! expressions (array lengths) outside function bodies.

use super::{Checker, ConstVal, Lazy, MAX_ITEM_DEPTH, Ty, body, fold};
use crate::diagnostics::ErrorKind;
use crate::source::Span;
use crate::syntax::ast;
use crate::tir;

/// A refused array length as the program wrote it, for
/// [`ErrorKind::ArrayLen`]: a `u64` past `i64::MAX` shown unsigned (it was
/// `-1` for `u64`'s largest), a `bool` as `true` or `false`.
pub(super) fn len_shown(ty: &Ty, value: i64) -> String {
    match ty {
        Ty::Bool => (value != 0).to_string(),
        Ty::U64 => (value as u64).to_string(),
        _ => value.to_string(),
    }
}

impl<'a> Checker<'a> {
    /// A constant array length: a non-negative integer constant expression.
    pub(super) fn const_usize(
        &mut self,
        e: &ast::Expr,
        module: usize,
        generics: &[(String, Ty)],
    ) -> Option<u64> {
        let v = self.const_expr(e, module, generics, None)?;
        if !v.ty.is_integer() || v.value < 0 {
            self.sink
                .error(ErrorKind::ArrayLen(len_shown(&v.ty, v.value)), e.span);
            return None;
        }
        Some(v.value as u64)
    }

    /// Check and fold a constant expression outside any function body.
    fn const_expr(
        &mut self,
        e: &ast::Expr,
        module: usize,
        generics: &[(String, Ty)],
        expected: Option<&Ty>,
    ) -> Option<ConstVal> {
        let mut cx = body::FnCx::new(module, generics.to_vec(), Ty::Unit, false);
        let (te, ty) = self.expr(&mut cx, e, expected);
        if ty.has_error() {
            return None;
        }
        self.fold_or_report(&te, &ty, e.span)
    }

    fn fold_or_report(&mut self, te: &tir::Expr, ty: &Ty, span: Span) -> Option<ConstVal> {
        match fold::fold(te) {
            Ok(value) => Some(ConstVal {
                ty: ty.clone(),
                value,
            }),
            Err(fold::FoldError::NotConst) => {
                self.sink.error(ErrorKind::NotConst, span);
                None
            }
            Err(fold::FoldError::DivZero) => {
                self.sink.error(ErrorKind::ConstDivZero, span);
                None
            }
        }
    }

    /// The text of constant `k` when it is a string constant
    /// (`const NAME = "text";`).
    pub(super) fn const_text(&self, k: usize) -> Option<&'a str> {
        let ast = self.consts[k].ast;
        match (&ast.ty, &ast.value.kind) {
            (None, ast::ExprKind::Str(s)) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The value of constant `k`, evaluating it on first use.
    pub(super) fn const_value(&mut self, k: usize) -> Option<ConstVal> {
        match &self.consts[k].state {
            Lazy::Done(v) => return v.clone(),
            Lazy::Busy => {
                let name = &self.consts[k].ast.name;
                self.sink
                    .error(ErrorKind::ConstCycle(name.name.clone()), name.span);
                return None;
            }
            Lazy::Todo => {}
        }
        if self.item_depth >= MAX_ITEM_DEPTH {
            let span = self.consts[k].ast.name.span;
            self.sink.error(ErrorKind::ConstTooDeep, span);
            return None;
        }
        self.consts[k].state = Lazy::Busy;
        self.item_depth += 1;
        let ast = self.consts[k].ast;
        let module = self.consts[k].module;
        let Some(ty_expr) = &ast.ty else {
            // A string constant has no number value (its uses are literals,
            // `path_value`); any other constant needs its type written.
            if !matches!(ast.value.kind, ast::ExprKind::Str(_)) {
                self.sink.error(
                    ErrorKind::ConstNeedsType(ast.name.name.clone()),
                    ast.name.span,
                );
            }
            self.item_depth -= 1;
            self.consts[k].state = Lazy::Done(None);
            return None;
        };
        let ty = self.resolve_type(ty_expr, module, &[]);
        let value = if ty.has_error() {
            None
        } else if !ty.is_scalar() {
            let name = self.ty_name(&ty);
            self.sink.error(ErrorKind::ConstType(name), ty_expr.span);
            None
        } else {
            let v = self.const_expr(&ast.value, module, &[], Some(&ty));
            match v {
                Some(v) if !v.ty.compatible(&ty) => {
                    let (expected, found) = (self.ty_name(&ty), self.ty_name(&v.ty));
                    self.sink
                        .error(ErrorKind::Mismatch { expected, found }, ast.value.span);
                    None
                }
                v => v,
            }
        };
        self.item_depth -= 1;
        self.consts[k].state = Lazy::Done(value.clone());
        value
    }
}
