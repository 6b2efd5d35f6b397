//! Checking of function bodies (both modes; see `check`): the per-function
//! state and shared helpers here; `stmt`, `expr`, `call` and `builtin` check
//! those constructs.

use super::fold::{self, FoldError};
use super::ty::{Ty, unify};
use super::{Checker, ItemRef, type_arg_count_error};
use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind};
use crate::source::Span;
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;

mod builtin;
mod call;
mod expr;
mod stmt;

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
    /// How each local was bound (what to suggest when one is assigned).
    bindings: Vec<Binding>,
    /// The names each open scope declared, innermost last.
    scopes: Vec<Vec<String>>,
    /// Every name in scope: the locals it denotes, the visible one last
    /// (a function may have many locals: lookups must not scan).
    visible: HashMap<String, Vec<u32>>,
    /// `typing` answers by binary or call node address (this body's tree).
    typing: HashMap<usize, Typing>,
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
            bindings: Vec::new(),
            scopes: Vec::new(),
            visible: HashMap::new(),
            typing: HashMap::new(),
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
        binding: Binding,
        span: Span,
    ) -> tir::LocalId {
        let id = self.locals.len() as u32;
        self.locals.push(tir::Local {
            name: name.to_string(),
            // The backend's type is filled in with the body (`fn_body`),
            // where struct instances get their ids.
            ty: tir::Type::Unit,
            mutable: binding.is_mutable(),
        });
        self.local_tys.push(ty);
        self.local_spans.push(span);
        self.bindings.push(binding);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_string());
            self.visible.entry(name.to_string()).or_default().push(id);
        }
        tir::LocalId(id)
    }
    /// A local no name reaches (generated: a string literal's frame copy,
    /// a sequence a `for` holds).
    pub(crate) fn hidden(&mut self, name: &str, ty: Ty, span: Span) -> tir::LocalId {
        let id = self.locals.len() as u32;
        self.locals.push(tir::Local {
            name: name.to_string(),
            ty: tir::Type::Unit,
            mutable: false,
        });
        self.local_tys.push(ty);
        self.local_spans.push(span);
        self.bindings.push(Binding::Hidden);
        tir::LocalId(id)
    }
    fn lookup(&self, name: &str) -> Option<u32> {
        self.visible.get(name).and_then(|ids| ids.last()).copied()
    }
}

/// How a local came to be: whether it is mutable, and, when it is not, what
/// the program would write to change it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    Let,
    Var,
    ValueParam,
    RefParam,
    /// A `for` loop's variable (or index).
    ForVar,
    /// Generated: no name reaches it.
    Hidden,
}

impl Binding {
    pub(crate) fn is_mutable(self) -> bool {
        matches!(self, Binding::Var | Binding::RefParam)
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

/// How an operand or argument takes its type, in the order they are
/// checked: [`Typing::Own`] first, then [`Typing::LiteralCall`], then
/// [`Typing::Literal`], each able to take its type from those before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Typing {
    /// Made only of integer literals (and `-`, `!`, parentheses,
    /// arithmetic): a literal takes the type of the other operand or the
    /// parameter.
    Literal,
    /// Like [`Typing::Literal`], with a call of a generic function (without
    /// type arguments) of such expressions in it, which the context types
    /// (`id(200) == w`). A plain function's call has its own type, so the
    /// literals beside it can take it (`5 & f(1)`).
    LiteralCall,
    /// Anything else: its type is its own.
    Own,
}

impl Checker<'_> {
    /// How `e` takes its type (see [`Typing`]). `cx.typing` holds the
    /// answer for each binary or call node already asked about, so a chain
    /// of `n` operators or nested calls costs `O(n)` in all, not per node.
    fn typing(&self, cx: &mut FnCx, e: &ast::Expr) -> Typing {
        let key = e as *const ast::Expr as usize;
        match &e.kind {
            ast::ExprKind::Int(_) => Typing::Literal,
            // `!` of an integer literal is bitwise and takes its type as the
            // literal does; of anything else (`!flag`) it is the operand's.
            ast::ExprKind::Unary(ast::UnOp::Neg | ast::UnOp::Not, x) | ast::ExprKind::Paren(x) => {
                self.typing(cx, x)
            }
            ast::ExprKind::Binary(op, a, b) => {
                if let Some(&v) = cx.typing.get(&key) {
                    return v;
                }
                let v = if op.is_comparison() || matches!(op, ast::BinOp::And | ast::BinOp::Or) {
                    Typing::Own
                } else {
                    self.typing(cx, a).max(self.typing(cx, b))
                };
                cx.typing.insert(key, v);
                v
            }
            ast::ExprKind::Call {
                callee,
                type_args,
                args,
            } if type_args.is_empty() && !args.is_empty() && self.is_generic_fn(callee, cx) => {
                if let Some(&v) = cx.typing.get(&key) {
                    return v;
                }
                let literal = args
                    .iter()
                    .all(|a| !a.by_ref && self.typing(cx, &a.expr) != Typing::Own);
                let v = if literal {
                    Typing::LiteralCall
                } else {
                    Typing::Own
                };
                cx.typing.insert(key, v);
                v
            }
            _ => Typing::Own,
        }
    }

    /// Whether `callee` names a generic function (looked up without
    /// reporting anything: the call's own check does that).
    fn is_generic_fn(&self, callee: &ast::Path, cx: &FnCx) -> bool {
        let item = match callee.segments.as_slice() {
            [one] if cx.lookup(&one.name).is_none() => self.mods[cx.module].items.get(&one.name),
            [m, item] => self.mods[cx.module]
                .uses
                .get(&m.name)
                .and_then(|&target| self.mods[target].items.get(&item.name)),
            _ => None,
        };
        matches!(item, Some((ItemRef::Fn(f), _)) if !self.fns[*f].sig.generics.is_empty())
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
            ty: self.tir_ty(ty),
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
        let note = match cx.bindings[id as usize] {
            Binding::ValueParam => NoteKind::ValueParam(name.clone()),
            Binding::ForVar => NoteKind::ForVar(name.clone()),
            _ => NoteKind::UseVar(name.clone()),
        };
        Diagnostic::new(kind, span)
            .label(
                cx.local_spans[id as usize],
                LabelKind::DeclaredImmutable(name),
            )
            .note(note)
    }
}
