//! The syntax tree, as parsed: names are still strings, types still written
//! forms. Every node carries its span.

use crate::source::Span;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// `a`, `m::a`: one or two segments (modules do not nest).
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    pub segments: Vec<Ident>,
    pub span: Span,
}

impl Path {
    /// The path as written, `m::a`.
    pub fn text(&self) -> String {
        self.segments
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join("::")
    }
}

/// One parsed file.
/// One parsed file: its items in source order.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub items: Vec<Item>,
    /// The names of items whose declaration failed to parse (reported):
    /// uses of them are not reported again as unknown names.
    pub broken: Vec<String>,
}

/// A top-level declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Use(Ident),
    Const(ConstItem),
    Struct(StructItem),
    Extern(ExternItem),
    Fn(FnItem),
}

/// `const NAME: T = value;`, or `const NAME = "text";` (a string constant:
/// no type).
#[derive(Clone, Debug, PartialEq)]
pub struct ConstItem {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
}

/// `struct Name<generics> { field: T, priv field: T, ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct StructItem {
    pub name: Ident,
    pub generics: Vec<Ident>,
    pub fields: Vec<FieldDecl>,
}

/// One declared field: `name: T`, or `priv name: T` (readable and writable
/// only by code of the module that declares the struct).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDecl {
    pub private: bool,
    pub name: Ident,
    pub ty: TypeExpr,
}

/// A function parameter, `name: T` or `ref name: T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub by_ref: bool,
    pub name: Ident,
    pub ty: TypeExpr,
}

/// `extern fn symbol(params) -> T;`
#[derive(Clone, Debug, PartialEq)]
pub struct ExternItem {
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
}

/// `fn name<generics>(params) -> T { body }`, or `priv fn ...` (callable
/// only by code of the module that declares it).
#[derive(Clone, Debug, PartialEq)]
pub struct FnItem {
    pub private: bool,
    pub name: Ident,
    pub generics: Vec<Ident>,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
}

/// A type as written.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `i64`, `Pair`, `T`, `m::Pair`; with type arguments, `Vec<i64>`.
    Path(Path, Vec<TypeExpr>),
    Slice(Box<TypeExpr>),
    /// `[N]T`; `N` is a constant expression.
    Array(Box<Expr>, Box<TypeExpr>),
    Reusable(Box<TypeExpr>),
    /// Stands in for a type that failed to parse (already reported).
    Error,
}

/// A written type with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
}

/// `{ statements }`
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// The statement forms.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    Assign {
        place: Expr,
        value: Expr,
    },
    CompoundAssign {
        place: Expr,
        op: BinOp,
        value: Expr,
    },
    Expr(Expr),
    If {
        cond: Expr,
        then: Block,
        else_: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        body: Block,
    },
    /// `for var in seq` / `for index, var in seq`.
    ForEach {
        index: Option<Ident>,
        var: Ident,
        seq: Expr,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
}

/// A statement with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// Binary operators as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as written.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
    /// Comparisons produce `bool` from two operands of one type.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// Prefix operators: `-` and `!`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// A call argument: `e` or `ref e`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub by_ref: bool,
    pub expr: Expr,
    pub span: Span,
}

/// The expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(Option<u64>),
    /// `b'a'`: a `u8`.
    Byte(u8),
    Bool(bool),
    Str(String),
    /// A name or module path, with optional `::<T, ...>`.
    Path(Path, Vec<TypeExpr>),
    Call {
        callee: Path,
        type_args: Vec<TypeExpr>,
        args: Vec<Arg>,
    },
    Field(Box<Expr>, Ident),
    Index(Box<Expr>, Box<Expr>),
    SliceRange {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, TypeExpr),
    /// `Name { f: e }`, `Name::<T> { f: e }`.
    StructLit {
        name: Path,
        type_args: Vec<TypeExpr>,
        fields: Vec<(Ident, Expr)>,
    },
    ArrayRepeat(Box<Expr>, Box<Expr>),
    ArrayLit(Vec<Expr>),
    Paren(Box<Expr>),
    /// Stands in for an expression that failed to parse (already reported).
    Error,
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

// Chains (`a + b + ...`, `else if`) make the tree as deep as they are long,
// and a derived drop recurses once per level: these move the children out
// to a list first, so dropping never needs more stack than the nesting.

impl Drop for Expr {
    fn drop(&mut self) {
        let mut pending: Vec<Box<Expr>> = Vec::new();
        take_children(&mut self.kind, &mut pending);
        while let Some(mut e) = pending.pop() {
            take_children(&mut e.kind, &mut pending);
        }
    }
}

// The boxes are kept: moving a node out of its box would copy it.
#[allow(clippy::vec_box)]
fn take_children(kind: &mut ExprKind, out: &mut Vec<Box<Expr>>) {
    match std::mem::replace(kind, ExprKind::Error) {
        ExprKind::Field(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::Paren(a)
        | ExprKind::Cast(a, _) => out.push(a),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) | ExprKind::ArrayRepeat(a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::SliceRange { base, lo, hi } => {
            out.push(base);
            out.extend(lo);
            out.extend(hi);
        }
        // Lists of expressions: each element drops through this impl.
        _ => {}
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let mut pending: Vec<Stmt> = std::mem::take(&mut self.stmts);
        while let Some(s) = pending.pop() {
            match s.kind {
                StmtKind::If {
                    mut then, else_, ..
                } => {
                    pending.append(&mut then.stmts);
                    if let Some(mut e) = else_ {
                        pending.append(&mut e.stmts);
                    }
                }
                StmtKind::While { mut body, .. }
                | StmtKind::For { mut body, .. }
                | StmtKind::ForEach { mut body, .. } => {
                    pending.append(&mut body.stmts);
                }
                _ => {}
            }
        }
    }
}
