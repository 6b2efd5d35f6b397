//! The typed, monomorphized program: the contract between the front end
//! (this crate) and the backend (`tern-codegen`).
//!
//! Everything here is plain data. By the time a `Program` exists:
//! * names are resolved to indices (`FuncId`, `StructId`, `ExternId`, `LocalId`);
//! * every expression carries its concrete type (no generic parameters remain:
//!   each instantiation of a generic function is its own `Function`);
//! * `const` items and `size_of::<T>()` are folded to `ExprKind::Int`;
//! * integer literals carry the type the checker gave them;
//! * `op=` is kept as `Stmt::CompoundAssign` so the place is evaluated once;
//! * every rule of the language has been checked: the backend may assume a
//!   well-typed program and never reports a user error itself.
//!
//! Layout of values in memory is fixed here too (`Program::layout`), so that
//! `size_of` in the front end and loads/stores in the backend cannot disagree.

pub mod arg_sharing;
pub mod divergence;
pub mod frame;
pub mod visit;

use std::fmt;

use crate::source::Span;

/// Index into `Program::functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);
/// Index into `Program::structs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StructId(pub u32);
/// Index into `Program::externs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExternId(pub u32);
/// Index into `Function::locals` of the function it appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// A source location, already resolved to line and column (1-based), so the
/// backend can bake `file:line:col` into runtime error messages without
/// access to the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Loc {
    /// Index into `Program::files`.
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

/// A whole program after checking and monomorphization.
#[derive(Clone, Debug)]
pub struct Program {
    /// Display names of the source files, as they appear in diagnostics
    /// (`Loc::file` indexes this).
    pub files: Vec<String>,
    /// Which files are standard-library modules (indexed like `files`; a
    /// file past its end is the user's). Backtraces mark the first frame
    /// outside them.
    pub library: Vec<bool>,
    pub structs: Vec<StructDef>,
    /// Every function instance that is reachable from `main` (or, for the
    /// REPL, from the entry being evaluated). Generic functions appear once
    /// per distinct list of type arguments.
    pub functions: Vec<Function>,
    pub externs: Vec<ExternFn>,
    /// The entry point: `fn main()` or `fn main() -> i64` (the exit status).
    pub main: FuncId,
}

/// Scalar and aggregate types. `Unit` is the type of statements and of
/// functions without a return type; `Str` only ever appears as the argument of
/// `print`, `panic` and `assert`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    I64,
    I32,
    U8,
    /// Unsigned 64-bit: the same bits as `I64`, with logical `>>`, unsigned
    /// `/ % < <= > >=` and unsigned printing.
    U64,
    Bool,
    Unit,
    Str,
    /// `[]T`: a view `(ptr, len)`, two machine words, `len` in elements.
    Slice(Box<Type>),
    /// `[N]T`: a fixed array held by value.
    Array(Box<Type>, u64),
    /// `reusable[]T`: a slice whose span lives in the runtime's builtin pool.
    /// Same two-word representation as `Slice`; `ptr` is null when the
    /// slice owns no span (zero bytes).
    Reusable(Box<Type>),
    Struct(StructId),
}

impl Type {
    pub fn is_integer(&self) -> bool {
        matches!(self, Type::I64 | Type::I32 | Type::U8 | Type::U64)
    }
    /// Scalars live in one Cranelift value; everything else in memory.
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Type::I64 | Type::I32 | Type::U8 | Type::U64 | Type::Bool
        )
    }
    /// The element type of a slice, reusable slice or array.
    pub fn element(&self) -> Option<&Type> {
        match self {
            Type::Slice(t) | Type::Array(t, _) | Type::Reusable(t) => Some(t),
            _ => None,
        }
    }
}

/// Size and alignment in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub size: u64,
    pub align: u64,
}

/// A struct after monomorphization (structs are not generic, but their
/// layout is computed once here).
#[derive(Clone, Debug)]
pub struct StructDef {
    /// Qualified display name, e.g. `slice_pool::Pool`.
    pub name: String,
    /// The file of the `use`d module that declares it (an index into
    /// [`Program::files`]); `None` for the root program's own items.
    pub module_file: Option<u32>,
    pub fields: Vec<Field>,
    pub layout: Layout,
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Type,
    /// Byte offset from the start of the struct (C layout rules).
    pub offset: u64,
    /// Declared `priv`: only its module's code reads or writes it.
    pub private: bool,
}

/// A function instance.
#[derive(Clone, Debug)]
pub struct Function {
    /// Qualified display name with type arguments, e.g.
    /// `slice_pool::alloc_slice::<i64>`. Unique within the program; the
    /// backend derives symbol names from it.
    pub name: String,
    /// The parameters, in order; each is a local of this function.
    pub params: Vec<Param>,
    pub ret: Type,
    /// Every local of the body: parameters first, then `let`/`var`
    /// bindings and `for` variables, each with a distinct id even when
    /// names shadow.
    pub locals: Vec<Local>,
    pub body: Block,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub local: LocalId,
    /// `ref` parameter: the caller passes the address of a mutable place;
    /// reads and writes of this local go through that address.
    pub by_ref: bool,
}

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    /// `var` (or `ref` parameter); `let`, value parameters and `for`
    /// variables are immutable.
    pub mutable: bool,
}

/// An external C function (`extern fn`), resolved by symbol name: the
/// runtime's `tern_*` functions or anything the linker can find.
#[derive(Clone, Debug)]
pub struct ExternFn {
    /// The C symbol name.
    pub name: String,
    /// Parameter types; a `ref` parameter is passed as a pointer.
    pub params: Vec<(Type, bool)>,
    /// `Unit` for no return value. Only scalars cross the C boundary.
    pub ret: Type,
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let` / `var`: initialise a fresh local.
    Let {
        local: LocalId,
        init: Expr,
    },
    /// `place = value`. `place` is a place expression (see `ExprKind`)
    /// rooted in a mutable local or `ref` parameter.
    Assign {
        place: Expr,
        value: Expr,
    },
    /// `place op= value`, with the place evaluated once. `op` is arithmetic
    /// or bitwise, never a comparison or `&&`/`||`.
    CompoundAssign {
        place: Expr,
        op: BinOp,
        value: Expr,
    },
    Expr(Expr),
    /// `else if` chains are nested `If`s in `else_`.
    If {
        cond: Expr,
        then: Block,
        else_: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for var in start..end`: `start` and `end` are evaluated once, before
    /// the first iteration; `var` (type of start/end) takes start, start+1,
    /// ... end-1; no iteration when start >= end.
    For {
        var: LocalId,
        start: Expr,
        end: Expr,
        body: Block,
    },
    /// `for var in seq` and `for index, var in seq`: `seq` (an array, a
    /// slice or a reusable slice) is evaluated once, its length read once;
    /// `var` takes each element by value, read when its iteration starts,
    /// and `index` (`i64`) its position. The element reads need no bounds
    /// check: the position is below the length read at the start, and the
    /// memory behind it cannot shrink (a slice is a view; an array is a
    /// place of fixed size).
    ForEach {
        index: Option<LocalId>,
        var: LocalId,
        seq: Expr,
        body: Block,
    },
    /// A nested block: its statements in order (what the checker desugars
    /// into: `for x in v` over a vector binds the vector first).
    Block(Block),
    Break,
    Continue,
    Return(Option<Expr>),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub loc: Loc,
    /// The source range, for diagnostics of passes over this program
    /// (`check::escape`); the backend uses `loc`.
    pub span: Span,
}

/// Place expressions are `Local`, `Field` and `Index`: they denote memory that
/// can be read, assigned (when rooted in a mutable binding) or passed by `ref`.
/// Their base may be any expression: the backend materialises an aggregate
/// rvalue (a struct or array returned by a call, say) in a stack slot.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer literal of the expression's type (`I64`, `I32`, `U8`); the
    /// value is already wrapped into that type's range.
    Int(i64),
    Bool(bool),
    /// Only as an argument of `print`, `panic`, `assert`.
    Str(String),
    Local(LocalId),
    /// `base.field`, by field index in `StructDef::fields`.
    Field(Box<Expr>, u32),
    /// `base[index]` on a slice, array or reusable slice; `index` is `i64`;
    /// bounds-checked (`0 <= index < len`).
    Index(Box<Expr>, Box<Expr>),
    /// `base[lo..hi]` on a slice, array (a place) or reusable slice; yields
    /// `[]T` viewing the same memory. Checked `0 <= lo <= hi <= len`.
    /// Missing bounds are `0` and `len`.
    SliceRange {
        base: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    Unary(UnOp, Box<Expr>),
    /// Both operands have the same type; for comparisons the expression's type
    /// is `Bool`; for shifts the right operand is the same type as the left.
    /// `And`/`Or` short-circuit.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T` between integer types (wrap/truncate/sign- or zero-extend by
    /// source signedness: i64, i32 signed; u8 unsigned) and from bool to an
    /// integer type (0 or 1). Casting a type to itself is allowed.
    Cast(Box<Expr>),
    Call {
        func: FuncId,
        args: Vec<Arg>,
    },
    CallExtern {
        func: ExternId,
        args: Vec<Arg>,
    },
    /// Field values in declaration order.
    StructLit {
        id: StructId,
        fields: Vec<Expr>,
    },
    /// `[value; count]`, `count` a constant.
    ArrayRepeat {
        value: Box<Expr>,
        count: u64,
    },
    /// `[a, b, c]` (beyond the fixed surface syntax of docs/language.md §1, used by tests).
    ArrayLit(Vec<Expr>),
    /// A string literal used as a value: its bytes, as a fresh `[N]u8`.
    Bytes(Vec<u8>),
    /// A string literal used where a `[]u8` is expected: every time the
    /// expression runs its bytes are copied into the hidden local array
    /// `local` (a `[N]u8` named [`TEXT_LOCAL`]), and the value is a slice of
    /// that array, living as long as the function's frame (the escape rule
    /// keeps it there, as for any local array).
    Text {
        local: LocalId,
        bytes: Vec<u8>,
    },
    /// `len(s)` of a slice, array or reusable slice, as `i64`.
    Len(Box<Expr>),
    Builtin(Builtin, Vec<Expr>),
}

/// A call argument.
#[derive(Clone, Debug)]
pub enum Arg {
    Value(Expr),
    /// `ref place`: the address of a place rooted in a mutable binding.
    Ref(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Wrapping negation (integers).
    Neg,
    /// Logical not on `Bool`, bitwise not on integers.
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Checked: division by zero is a runtime error; `MIN / -1` wraps to `MIN`.
    Div,
    /// Checked like `Div`; `MIN % -1` is `0`.
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    /// Shift amount taken modulo the bit width (so it never traps).
    Shl,
    /// Arithmetic for signed types (i64, i32), logical for u8.
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

/// The arms of an `if` statement as a flat list: each `(condition, block)`,
/// then the final `else` block if any (an `else` holding exactly one `if`
/// continues the chain). Passes walk long `else if` chains with it instead of
/// recursing once per arm.
pub struct IfArms<'a> {
    pub arms: Vec<(&'a Expr, &'a Block)>,
    pub last: Option<&'a Block>,
}

impl Expr {
    /// Whether evaluating the expression yields an aggregate in a temporary
    /// nobody else refers to (a call's result, a literal), as opposed to a
    /// place (a local, field or element): the backend and the interpreter
    /// let such a temporary become a local's storage or pass it by address.
    pub fn is_fresh_aggregate(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Call { .. }
                | ExprKind::StructLit { .. }
                | ExprKind::ArrayRepeat { .. }
                | ExprKind::ArrayLit(_)
                | ExprKind::Bytes(_)
        )
    }

    /// Whether this is an array place inside an element of a slice or
    /// reusable slice (through fields and array elements): an array in pool
    /// memory. Under `--sanitize` a view of it, or a `for` over it, carries
    /// the element's allocation's tag (`r[0][..]`, `s[1].a[..]`). (A slice
    /// stored there is not one: its header views other memory.)
    pub fn is_array_in_pool_element(&self) -> bool {
        matches!(self.ty, Type::Array(..)) && self.lies_in_pool_element()
    }

    /// Whether this is an array place reached through a `ref` parameter of
    /// `f` (`a`, `s.arr`, `m[1]` of one): memory of the caller's, perhaps of
    /// a pool element, behind an address that carries no sanitizer tag, so
    /// that a view of it looks its allocation up (`--sanitize`).
    pub fn is_array_behind_ref(&self, f: &Function) -> bool {
        matches!(self.ty, Type::Array(..)) && self.lies_behind_ref(f)
    }

    fn lies_behind_ref(&self, f: &Function) -> bool {
        match &self.kind {
            ExprKind::Local(id) => f.params.iter().any(|p| p.by_ref && p.local == *id),
            ExprKind::Field(b, _) => b.lies_behind_ref(f),
            ExprKind::Index(b, _) => matches!(b.ty, Type::Array(..)) && b.lies_behind_ref(f),
            _ => false,
        }
    }

    fn lies_in_pool_element(&self) -> bool {
        match &self.kind {
            ExprKind::Field(b, _) => b.lies_in_pool_element(),
            ExprKind::Index(b, _) => match b.ty {
                Type::Slice(_) | Type::Reusable(_) => true,
                Type::Array(..) => b.lies_in_pool_element(),
                _ => false,
            },
            _ => false,
        }
    }
}

impl Stmt {
    /// [`IfArms`] of an `If` statement; `None` for any other statement.
    pub fn if_arms(&self) -> Option<IfArms<'_>> {
        let Stmt::If { cond, then, else_ } = self else {
            return None;
        };
        let mut arms = vec![(cond, then)];
        let mut rest = else_.as_ref();
        while let Some(block) = rest {
            match block.stmts.as_slice() {
                [Stmt::If { cond, then, else_ }] => {
                    arms.push((cond, then));
                    rest = else_.as_ref();
                }
                _ => break,
            }
        }
        Some(IfArms { arms, last: rest })
    }
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

/// The name of the hidden local a string literal used as `[]u8` is copied
/// into ([`ExprKind::Text`]): generated names begin with `$`, which no source
/// a user writes can use.
pub const TEXT_LOCAL: &str = "$text";

/// Every builtin a program can call, as named in source: the one list of
/// them. The checker resolves calls and reserves the plain names with it.
pub const BUILTINS: &[BuiltinSpec] = &[
    BuiltinSpec::new("len", BuiltinFn::Len, 1, false),
    BuiltinSpec::new("print", BuiltinFn::Op(Builtin::Print), 1, false),
    BuiltinSpec::new("write", BuiltinFn::Op(Builtin::Write), 1, false),
    BuiltinSpec::new("eprint", BuiltinFn::Op(Builtin::Eprint), 1, false),
    BuiltinSpec::new("ewrite", BuiltinFn::Op(Builtin::Ewrite), 1, false),
    BuiltinSpec::new("panic", BuiltinFn::Op(Builtin::Panic), 1, false),
    BuiltinSpec::new("assert", BuiltinFn::Op(Builtin::Assert), 2, false),
    BuiltinSpec::new("size_of", BuiltinFn::SizeOf, 0, true),
    BuiltinSpec::new(
        "reusable::alloc",
        BuiltinFn::Op(Builtin::ReusableAlloc),
        1,
        true,
    ),
    BuiltinSpec::new(
        "reusable::append",
        BuiltinFn::Op(Builtin::ReusableAppend),
        2,
        false,
    ),
    BuiltinSpec::new(
        "reusable::resize",
        BuiltinFn::Op(Builtin::ReusableResize),
        2,
        false,
    ),
    BuiltinSpec::new(
        "reusable::free",
        BuiltinFn::Op(Builtin::ReusableFree),
        1,
        false,
    ),
    BuiltinSpec::new(
        "reusable::offset",
        BuiltinFn::Op(Builtin::ReusableOffset),
        1,
        false,
    ),
    BuiltinSpec::new(
        "unsafe::slice",
        BuiltinFn::Op(Builtin::UnsafeSlice),
        2,
        true,
    ),
    BuiltinSpec::new("unsafe::addr", BuiltinFn::Op(Builtin::UnsafeAddr), 1, false),
    BuiltinSpec::new("unsafe::copy", BuiltinFn::Op(Builtin::UnsafeCopy), 3, false),
];

/// Namespaces all of whose members are builtins: `reusable::x` and
/// `unsafe::x` are builtin calls (an unknown `x` is an error about builtins).
pub const BUILTIN_NAMESPACES: &[&str] = &["reusable", "unsafe"];

/// What a builtin call becomes in `tir` (see [`BUILTINS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinFn {
    /// `len(s)`: `ExprKind::Len`.
    Len,
    /// `size_of::<T>()`: a constant.
    SizeOf,
    /// `ExprKind::Builtin` of this operation.
    Op(Builtin),
}

/// One entry of [`BUILTINS`].
#[derive(Clone, Copy, Debug)]
pub struct BuiltinSpec {
    /// As called: `len`, `reusable::alloc`.
    pub name: &'static str,
    pub func: BuiltinFn,
    /// Arguments (`panic` also takes one more).
    pub args: usize,
    /// Takes one type argument (`::<T>`), which may be inferred.
    pub type_arg: bool,
}

impl BuiltinSpec {
    const fn new(name: &'static str, func: BuiltinFn, args: usize, type_arg: bool) -> BuiltinSpec {
        BuiltinSpec {
            name,
            func,
            args,
            type_arg,
        }
    }

    /// The builtin called `name`, if one is.
    pub fn named(name: &str) -> Option<&'static BuiltinSpec> {
        BUILTINS.iter().find(|b| b.name == name)
    }
}

/// Built-in operations. Argument lists are listed per variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `print(a, b, ...)`: one or more scalars or texts, separated by one
    /// space, and a newline. Integers in decimal (u8, u64 unsigned), bools as
    /// `true`/`false`, text (a string literal of type `Str`, a `[]u8` or a
    /// `[N]u8`) as its bytes. Returns `Unit`.
    Print,
    /// `write(a, b, ...)`: the values back to back, no separator, no newline.
    Write,
    /// `eprint(x)`: `print(x)` on stderr.
    Eprint,
    /// `ewrite(x)`: `write(x)` on stderr.
    Ewrite,
    /// `panic("msg")` or `panic("msg", detail)`: runtime error at the
    /// expression's location; the optional `detail: []u8` (bytes computed at
    /// run time, e.g. a library's error text) is appended to the literal.
    Panic,
    /// `assert(cond, "msg")`.
    Assert,
    /// `reusable::alloc::<T>(n)`: a zero-filled `reusable[]T` of `n` elements.
    ReusableAlloc,
    /// `reusable::append(s, v)`: `resize(s, len+1)` then store `v` at `len`.
    ReusableAppend,
    /// `reusable::resize(s, n)`: new length `n`, zero-filling growth.
    ReusableResize,
    /// `reusable::free(s)`: releases the span (no-op for zero bytes).
    ReusableFree,
    /// `reusable::offset(s)`: byte offset of the span in the builtin pool, or
    /// -1 when the slice owns no span.
    ReusableOffset,
    /// `unsafe::slice::<T>(ptr: i64, len: i64) -> []T`.
    UnsafeSlice,
    /// `unsafe::addr(x) -> i64`: the data pointer of a slice or reusable
    /// slice; otherwise the address of the place `x`.
    UnsafeAddr,
    /// `unsafe::copy(dst: i64, src: i64, bytes: i64)`: memmove.
    UnsafeCopy,
}

impl Program {
    /// Size and alignment of a value of type `ty`. Scalars are their natural
    /// width (bool is one byte); slices are two 8-byte words; arrays are
    /// `N * size` with the element's alignment; structs use `StructDef::layout`.
    pub fn layout(&self, ty: &Type) -> Layout {
        match ty {
            Type::I64 | Type::U64 => Layout { size: 8, align: 8 },
            Type::I32 => Layout { size: 4, align: 4 },
            Type::U8 | Type::Bool => Layout { size: 1, align: 1 },
            Type::Unit => Layout { size: 0, align: 1 },
            Type::Str | Type::Slice(_) | Type::Reusable(_) => Layout { size: 16, align: 8 },
            Type::Array(elem, n) => {
                let e = self.layout(elem);
                Layout {
                    size: e.size.saturating_mul(*n),
                    align: e.align,
                }
            }
            Type::Struct(id) => self.structs[id.0 as usize].layout,
        }
    }

    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// `ty` as written in Tern source (`[4]u8`, `reusable[]i64`,
    /// `slice_pool::Pool`); `None` for `()` and string literals, which
    /// cannot be written as types.
    pub fn type_name(&self, ty: &Type) -> Option<String> {
        Some(match ty {
            Type::I64 => "i64".into(),
            Type::I32 => "i32".into(),
            Type::U8 => "u8".into(),
            Type::U64 => "u64".into(),
            Type::Bool => "bool".into(),
            Type::Unit | Type::Str => return None,
            Type::Slice(e) => format!("[]{}", self.type_name(e)?),
            Type::Array(e, n) => format!("[{n}]{}", self.type_name(e)?),
            Type::Reusable(e) => format!("reusable[]{}", self.type_name(e)?),
            Type::Struct(id) => self.struct_def(*id).name.clone(),
        })
    }

    /// What the bytes of a value of `ty` mean, as text: every scalar's type,
    /// every field's name, offset and shape, every array's length, every
    /// slice's element shape (a slice's elements are read with it), every
    /// struct's size. Two types with the same shape read each other's values
    /// the same way; the REPL keeps a binding across a redefinition only if
    /// its type's shape did not change (a struct it reaches through a field
    /// or a slice, or a constant used as an array length, may have).
    pub fn value_shape(&self, ty: &Type) -> String {
        let mut out = String::new();
        self.shape_into(ty, &mut Vec::new(), &mut out);
        out
    }

    /// [`Program::value_shape`] into `out`; `open` holds the structs being
    /// described (a struct reached again through a slice is named only).
    fn shape_into(&self, ty: &Type, open: &mut Vec<StructId>, out: &mut String) {
        match ty {
            Type::I64 => out.push_str("i64"),
            Type::I32 => out.push_str("i32"),
            Type::U8 => out.push_str("u8"),
            Type::U64 => out.push_str("u64"),
            Type::Bool => out.push_str("bool"),
            Type::Unit => out.push_str("()"),
            Type::Str => out.push_str("str"),
            Type::Slice(e) => {
                out.push_str("[]");
                self.shape_into(e, open, out);
            }
            Type::Reusable(e) => {
                out.push_str("reusable[]");
                self.shape_into(e, open, out);
            }
            Type::Array(e, n) => {
                out.push_str(&format!("[{n}]"));
                self.shape_into(e, open, out);
            }
            Type::Struct(id) => {
                let def = self.struct_def(*id);
                out.push_str(&def.name);
                if open.contains(id) {
                    return;
                }
                open.push(*id);
                // A module's file and the fields' privacy are part of the
                // shape: a value kept from one module's struct must not pass
                // for another's of the same name and layout (a program's own
                // `slice_pool_pure.tern` without `priv`, whose functions
                // could then write the standard library's private fields).
                if let Some(file) = def.module_file.and_then(|f| self.files.get(f as usize)) {
                    out.push_str(&format!("<{file}>"));
                }
                out.push_str(&format!("({}){{", def.layout.size));
                for f in &def.fields {
                    let private = if f.private { "priv " } else { "" };
                    out.push_str(&format!("{private}{}@{}:", f.name, f.offset));
                    self.shape_into(&f.ty, open, out);
                    out.push(',');
                }
                out.push('}');
                open.pop();
            }
        }
    }

    pub fn struct_def(&self, id: StructId) -> &StructDef {
        &self.structs[id.0 as usize]
    }

    /// Whether file `file` is a standard-library module's.
    pub fn is_library(&self, file: u32) -> bool {
        self.library.get(file as usize).copied().unwrap_or(false)
    }

    /// Whether a call from `caller` to `callee` records its location under
    /// `--sanitize` (`tern_sanitize_site`), which errors and `freed at`s
    /// found inside a library then name: a call from the program's own
    /// files into another file. Calls the standard library makes record
    /// none, so the program's call into it is named (`bytes` growing
    /// through `vec` named a line of `bytes`). The backend and the
    /// interpreter both ask here.
    pub fn call_records_site(&self, caller: &Function, callee: FuncId) -> bool {
        !self.is_library(caller.loc.file)
            && self
                .functions
                .get(callee.0 as usize)
                .is_some_and(|f| f.loc.file != caller.loc.file)
    }

    /// `file:line:col` of `loc`.
    pub fn describe(&self, loc: Loc) -> String {
        let file = self
            .files
            .get(loc.file as usize)
            .map(String::as_str)
            .unwrap_or("<unknown>");
        format!("{file}:{}:{}", loc.line, loc.col)
    }
}

impl fmt::Display for Type {
    /// Types as written in Tern source, except structs, which print their id
    /// (use the front end's type printer for diagnostics).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::I64 => write!(f, "i64"),
            Type::I32 => write!(f, "i32"),
            Type::U8 => write!(f, "u8"),
            Type::U64 => write!(f, "u64"),
            Type::Bool => write!(f, "bool"),
            Type::Unit => write!(f, "()"),
            Type::Str => write!(f, "str"),
            Type::Slice(t) => write!(f, "[]{t}"),
            Type::Array(t, n) => write!(f, "[{n}]{t}"),
            Type::Reusable(t) => write!(f, "reusable[]{t}"),
            Type::Struct(id) => write!(f, "struct#{}", id.0),
        }
    }
}

// Chains (`a + b + ...`, `else if`) make the tree as deep as they are long,
// and a derived drop recurses once per level: these move the children out
// to a list first, so dropping a program never needs more stack than the
// nesting of its source.

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
    match std::mem::replace(kind, ExprKind::Int(0)) {
        ExprKind::Field(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::Cast(a)
        | ExprKind::Len(a)
        | ExprKind::ArrayRepeat { value: a, .. } => out.push(a),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
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
            match s {
                Stmt::If {
                    mut then, else_, ..
                } => {
                    pending.append(&mut then.stmts);
                    if let Some(mut e) = else_ {
                        pending.append(&mut e.stmts);
                    }
                }
                Stmt::While { mut body, .. } | Stmt::For { mut body, .. } => {
                    pending.append(&mut body.stmts);
                }
                _ => {}
            }
        }
    }
}
