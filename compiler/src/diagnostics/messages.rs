//! Every user-facing word the front end prints lives here: the error
//! messages, the label texts and the notes. Diagnostics are built from these
//! enums as data; wording changes happen in this one module.

use std::fmt;

/// What went wrong: one variant per kind of diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    // --- lexer ---
    UnexpectedChar(char),
    UnterminatedString,
    /// A carriage return written as it is inside a string or byte literal.
    BareCarriageReturn,
    UnterminatedComment,
    UnknownEscape(char),
    /// `\x` not followed by two hex digits.
    BadHexEscape,
    /// `\xHH` above `\x7f` in a string (its text is UTF-8).
    HexEscapeAboveAscii(u8),
    BadByteLiteral,
    IntTooLarge,
    MalformedInt(String),
    // --- parser ---
    Expected {
        expected: Expected,
        found: Found,
    },
    NestingTooDeep,
    ChainTooLong(u32),
    ChainedComparison,
    StructLitInCondition,
    UnclosedBrace,
    // --- mistakes of newcomers (with the fix in the message) ---
    FloatLiteral(String),
    CharLiteral(String, Option<u64>),
    MethodCall(String),
    InclusiveRange(Option<String>),
    NestedFn(String),
    /// `const` inside a function body (parsed as a `let`, so its uses do
    /// not cascade).
    ConstInBody(String),
    LoopKeyword,
    /// `return` in a REPL input (statements, not a function's body).
    ReturnInInput,
    // --- modules and names ---
    ModuleNotFound(String),
    /// One module name found as two files: the first a `use` resolved it
    /// to, and the one this `use` finds.
    ModuleNameClash {
        module: String,
        first: String,
        second: String,
    },
    ModuleNotUtf8 {
        module: String,
        file: String,
    },
    /// The root file has a byte that is not UTF-8 (shown at that byte).
    FileNotUtf8 {
        byte: u8,
    },
    ModuleTooLarge {
        module: String,
        file: String,
    },
    ModuleUnreadable {
        module: String,
        file: String,
        why: String,
    },
    DuplicateItem(String),
    DuplicateField(String),
    DuplicateParam(String),
    /// A generic parameter named `i64`, `u8`, ...
    ParamIsBuiltinType(String),
    ReservedName(String),
    UnknownName(String),
    UnknownModule(String),
    UnknownItemInModule {
        module: String,
        item: String,
    },
    UnknownType(String),
    /// A type name its module does not define, defined by more than one of
    /// the modules it uses.
    AmbiguousType {
        name: String,
        modules: Vec<String>,
    },
    NotAType(String),
    NotAFunction(String),
    FunctionNotValue(String),
    NotAValue(String),
    LenArg(String),
    BuiltinRef(String),
    TooManyInstances,
    /// The generic instances' bodies add up past `MAX_INSTANCE_BYTES`; the
    /// function whose instance went over.
    InstancesTooLarge(String),
    /// The generic instances' type arguments add up past
    /// `MAX_INSTANCE_TYPES` types; the function whose instance went over.
    InstanceTypesTooLarge(String),
    UnknownBuiltin(String),
    PrivateField {
        ty: String,
        field: String,
    },
    PrivateFieldLiteral {
        ty: String,
        field: String,
    },
    PrivateFn {
        module: String,
        item: String,
    },
    ModuleExtern {
        module: String,
        item: String,
    },
    // --- types ---
    Mismatch {
        expected: String,
        found: String,
    },
    LiteralOutOfRange {
        literal: String,
        ty: String,
    },
    BinaryOperands {
        op: String,
        lhs: String,
        rhs: String,
    },
    UnaryOperand {
        op: String,
        ty: String,
    },
    InvalidCast {
        from: String,
        to: String,
    },
    NotIndexable(String),
    NotSliceable(String),
    SliceTemporaryArray,
    NoField {
        ty: String,
        field: String,
    },
    StructLitMissing {
        name: String,
        field: String,
    },
    StructLitDuplicate(String),
    StructLitUnknown {
        name: String,
        field: String,
    },
    ArgCount {
        name: String,
        expected: usize,
        found: usize,
    },
    ArgCountAtLeast {
        name: String,
        expected: usize,
        found: usize,
    },
    TypeArgCount {
        name: String,
        expected: usize,
        found: usize,
    },
    NotGeneric(String),
    CannotInfer {
        name: String,
        param: String,
    },
    RefRequired(String),
    RefNotAllowed(String),
    RefNotPlace,
    AssignImmutable(String),
    RefImmutable(String),
    AssignTemporary,
    AssignNotPlace,
    AddrNotPlace,
    UnitValue,
    EmptyArrayInfer,
    PrintArg {
        name: String,
        ty: String,
    },
    NeedsStrLit(String),
    ExternType(String),
    ExternMismatch(String),
    ConstType(String),
    ConstNeedsType(String),
    NotConst,
    ConstDivZero,
    ConstCycle(String),
    ConstTooDeep,
    ArrayLen(String),
    TypeTooLarge,
    StructRecursive(String),
    StructLayoutCycle(String),
    // --- control flow ---
    OutsideLoop(String),
    ReturnMissingValue(String),
    ReturnValueInUnit,
    MissingReturn {
        name: String,
        ty: String,
    },
    NoMain,
    BadMain,
    InstantiationTooDeep(String),
    ForRangeType(String),
    ForEachSeq(String),
    /// A function's locals and temporaries exceed the frame limit.
    FrameTooLarge {
        name: String,
        bytes: u64,
    },
    // --- session programs (session.rs) ---
    /// A new binding of an input holds a slice of the input's frame.
    CannotKeep {
        name: String,
        array: EscapeOrigin,
    },
    /// The entry of an input needs more than the frame limit.
    InputFrameTooLarge {
        bytes: u64,
    },
    /// A new binding whose type cannot be stored (no value).
    NoValueToKeep(String),
    /// An expression input whose value cannot be stored.
    NoValueToShow,
    /// The host will not keep a binding or value this large.
    TooLargeToKeep {
        what: String,
        bytes: u64,
    },
    // --- frame escapes (check/escape.rs) ---
    /// A slice of a local array is returned.
    EscapeReturn(EscapeOrigin),
    /// A slice of a local array is stored where it may outlive the array.
    EscapeStore {
        array: EscapeOrigin,
        into: EscapeTarget,
    },
    /// A call gets a slice of a local array and an argument (the primary
    /// span) through which the callee could store it beyond the array.
    EscapeCall(EscapeOrigin),
    // --- stale operands (check/stale_operands.rs) ---
    /// An operand (the primary span) holds a slice header, or an address
    /// inside a reusable slice's span, that a call evaluated after it (or
    /// given it too) can free (the label).
    StaleOperand,
    /// An argument (the primary span) overlaps another argument of the same
    /// call through which the callee can free it (the label).
    StaleArgument,
    /// An argument (the primary span) points into, or views the same memory
    /// as another argument of, a library pool whose handle the call is
    /// given (the label).
    StaleBesideHandle,
    /// A `ref` argument (the primary span) that points into pool memory of
    /// a type the callee can free through that same argument (a value that
    /// holds a reusable slice of its own type).
    StaleSelfReference,
}

/// The array an escaping slice views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EscapeOrigin {
    /// A local (or value parameter) of the function.
    Local(String),
    /// An array inside a `ref` parameter: the caller's memory, perhaps a
    /// local of the caller.
    RefParam(String),
    /// A string literal used as `[]u8`: its bytes are a copy in the frame.
    Text,
}

impl fmt::Display for EscapeOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EscapeOrigin::Local(n) => write!(f, "local array `{n}`"),
            EscapeOrigin::Text => write!(f, "a string literal"),
            EscapeOrigin::RefParam(n) => write!(f, "an array in `ref` parameter `{n}`"),
        }
    }
}

/// Where an escaping store goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EscapeTarget {
    RefParam(String),
    SliceElement,
    ReusableElement,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            UnexpectedChar(c) if c.is_control() => {
                write!(f, "unexpected character `{}`", c.escape_default())
            }
            UnexpectedChar(c) => write!(f, "unexpected character `{c}`"),
            UnterminatedString => write!(f, "unterminated string literal"),
            BareCarriageReturn => write!(
                f,
                "a carriage return inside a literal must be written `\\r` (one written as it is would not show)"
            ),
            UnterminatedComment => write!(f, "unterminated block comment"),
            BadByteLiteral => write!(
                f,
                "a byte literal is one ASCII character or escape between `b'` and `'` (`b'a'`, `b'\\n'`)"
            ),
            BadHexEscape => write!(f, "`\\x` takes two hex digits (`\\x41`)"),
            HexEscapeAboveAscii(b) => write!(
                f,
                "`\\x{b:02x}` is past `\\x7f`: a string is UTF-8 text (write the character itself, or use a byte literal `b'\\x{b:02x}'`)"
            ),
            UnknownEscape(c) => write!(
                f,
                "unknown escape `\\{}` in string literal",
                c.escape_default()
            ),
            IntTooLarge => write!(f, "integer literal is too large"),
            MalformedInt(s) => write!(f, "malformed integer literal `{s}`"),
            Expected { expected, found } => write!(f, "expected {expected}, found {found}"),
            NestingTooDeep => write!(f, "expression nesting too deep"),
            ChainTooLong(limit) => write!(
                f,
                "chain too long: more than {limit} operators, casts, field or index accesses or `else if` arms on one path"
            ),
            ChainedComparison => write!(
                f,
                "comparison operators cannot be chained; use `&&` between comparisons"
            ),
            StructLitInCondition => write!(
                f,
                "struct literals are not allowed in `if`, `while` and `for` heads; wrap the literal in parentheses"
            ),
            UnclosedBrace => write!(f, "this `{{` is never closed"),
            FloatLiteral(s) => write!(
                f,
                "floating-point literal `{s}`: Tern has only integers (`i64`, `u64`, `i32`, `u8`)"
            ),
            CharLiteral(s, Some(v)) => write!(
                f,
                "character literal `{s}`: Tern has none; write its byte value `{v}`, or use a string"
            ),
            CharLiteral(s, None) => write!(
                f,
                "character literal `{s}`: Tern has none; write its bytes as integers, or use a string"
            ),
            MethodCall(m) if m == "len" => {
                write!(f, "`len` is a function, not a method: write `len(x)`")
            }
            MethodCall(m) => write!(
                f,
                "Tern has no methods: call `{m}(x, ...)` with the value as an argument"
            ),
            InclusiveRange(Some(end)) => write!(
                f,
                "`..=` is not supported: ranges exclude their end, write `..{end}`"
            ),
            InclusiveRange(None) => write!(
                f,
                "`..=` is not supported: ranges exclude their end, write `..END + 1`"
            ),
            NestedFn(n) => write!(
                f,
                "functions cannot be nested: move `fn {n}` out of the function around it"
            ),
            ConstInBody(n) => write!(
                f,
                "a `const` is an item: declare `{n}` outside the function, or bind it with `let` here"
            ),
            LoopKeyword => write!(f, "there is no `loop`: write `while true {{ ... }}`"),
            ReturnInInput => write!(
                f,
                "`return` outside a function: an input is not one, and returning would skip writing its bindings back (put the rest of the input under an `if`)"
            ),
            ModuleNotFound(m) => write!(f, "cannot find module `{m}`"),
            ModuleNameClash {
                module,
                first,
                second,
            } => write!(
                f,
                "module `{module}` names two files in this program, `{first}` and `{second}`: a name must name one module (rename the program's own file; the standard library's modules always use the standard library's)"
            ),
            ModuleNotUtf8 { module, file } => {
                write!(f, "module `{module}` ({file}) is not valid UTF-8")
            }
            FileNotUtf8 { byte } => write!(f, "the file is not valid UTF-8 (byte {byte:#04x})"),
            PrivateField { ty, field } => write!(
                f,
                "field `{field}` of `{ty}` is private to the module that declares `{ty}`"
            ),
            PrivateFieldLiteral { ty, field } => write!(
                f,
                "`{ty}` cannot be built outside its module: its field `{field}` is private (use the module's functions)"
            ),
            ModuleTooLarge { module, file } => write!(
                f,
                "module `{module}` ({file}) is larger than {} MiB, the limit of a source file",
                crate::MAX_SOURCE_BYTES >> 20
            ),
            ModuleUnreadable { module, file, why } => {
                write!(f, "cannot read module `{module}` ({file}): {why}")
            }
            DuplicateItem(n) => write!(f, "the name `{n}` is defined more than once"),
            DuplicateField(n) => write!(f, "field `{n}` is declared more than once"),
            DuplicateParam(n) => write!(f, "parameter `{n}` is declared more than once"),
            ParamIsBuiltinType(n) => write!(
                f,
                "a generic parameter cannot be named `{n}`: that is a builtin type"
            ),
            ReservedName(n) => write!(f, "`{n}` is a builtin name and cannot be redefined"),
            UnknownName(n) => write!(f, "cannot find `{n}` in this scope"),
            UnknownModule(m) => write!(
                f,
                "unknown module `{m}`; add `use {m};` at the top of the file"
            ),
            UnknownItemInModule { module, item } => {
                write!(f, "cannot find `{item}` in module `{module}`")
            }
            PrivateFn { module, item } => write!(
                f,
                "function `{module}::{item}` is private to module `{module}`"
            ),
            ModuleExtern { module, item } => write!(
                f,
                "`{module}::{item}` is an extern function of module `{module}`: only `{module}` can call it"
            ),
            UnknownType(n) => write!(f, "unknown type `{n}`"),
            AmbiguousType { name, modules } => write!(
                f,
                "type `{name}` is defined in the modules {}: write `{}::{name}`",
                {
                    let quoted: Vec<String> = modules.iter().map(|m| format!("`{m}`")).collect();
                    match quoted.split_last() {
                        Some((last, rest)) if !rest.is_empty() => {
                            format!("{} and {last}", rest.join(", "))
                        }
                        _ => quoted.join(""),
                    }
                },
                modules[0]
            ),
            NotAType(n) => write!(f, "`{n}` is not a type"),
            NotAFunction(n) => write!(f, "`{n}` is not a function"),
            FunctionNotValue(n) => {
                write!(
                    f,
                    "function `{n}` is not a value; functions can only be called"
                )
            }
            NotAValue(n) => write!(f, "`{n}` is not a value"),
            LenArg(t) => write!(
                f,
                "`len` expects a slice, an array or a reusable slice, found `{t}`"
            ),
            BuiltinRef(n) => write!(f, "`{n}` takes no `ref` arguments"),
            TooManyInstances => write!(f, "too many generic instantiations"),
            InstanceTypesTooLarge(name) => write!(
                f,
                "too many types in generic instantiations: the type arguments of `{name}`'s instances and the others add up to more than 1048576 types"
            ),
            InstancesTooLarge(name) => write!(
                f,
                "too much code in generic instantiations: instances of `{name}` and the others add up to more than 8 MiB of function bodies"
            ),
            UnknownBuiltin(n) => write!(f, "unknown builtin `{n}`"),
            Mismatch { expected, found } => {
                write!(
                    f,
                    "mismatched types: expected `{expected}`, found `{found}`"
                )
            }
            LiteralOutOfRange { literal, ty } => {
                write!(f, "integer literal `{literal}` is out of range for `{ty}`")
            }
            BinaryOperands { op, lhs, rhs } => {
                if lhs == rhs {
                    write!(f, "operator `{op}` cannot be applied to `{lhs}`")
                } else {
                    write!(
                        f,
                        "operator `{op}` cannot be applied to `{lhs}` and `{rhs}`"
                    )
                }
            }
            UnaryOperand { op, ty } => write!(f, "operator `{op}` cannot be applied to `{ty}`"),
            InvalidCast { from, to } => write!(f, "cannot cast `{from}` to `{to}`"),
            NotIndexable(t) => write!(f, "cannot index a value of type `{t}`"),
            NotSliceable(t) => write!(f, "cannot slice a value of type `{t}`"),
            SliceTemporaryArray => write!(
                f,
                "cannot slice a temporary array; bind it to a variable first"
            ),
            NoField { ty, field } => write!(f, "type `{ty}` has no field `{field}`"),
            StructLitMissing { name, field } => {
                write!(f, "missing field `{field}` in literal of struct `{name}`")
            }
            StructLitDuplicate(n) => write!(f, "field `{n}` is given more than once"),
            StructLitUnknown { name, field } => {
                write!(f, "struct `{name}` has no field `{field}`")
            }
            ArgCount {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}` takes {expected} argument{} but {found} {} given",
                if *expected == 1 { "" } else { "s" },
                if *found == 1 { "was" } else { "were" }
            ),
            ArgCountAtLeast {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}` takes at least {expected} argument{} but {found} {} given",
                if *expected == 1 { "" } else { "s" },
                if *found == 1 { "was" } else { "were" }
            ),
            TypeArgCount {
                name,
                expected,
                found,
            } => write!(
                f,
                "`{name}` takes {expected} type argument{} but {found} {} given",
                if *expected == 1 { "" } else { "s" },
                if *found == 1 { "was" } else { "were" }
            ),
            NotGeneric(n) => write!(f, "`{n}` takes no type arguments"),
            CannotInfer { name, param } => write!(
                f,
                "cannot infer type argument `{param}` of `{name}`; write `{name}::<...>`"
            ),
            RefRequired(p) => write!(
                f,
                "parameter `{p}` is a `ref` parameter; write `ref` before the argument"
            ),
            RefNotAllowed(p) => write!(f, "parameter `{p}` is not a `ref` parameter; remove `ref`"),
            RefNotPlace => write!(
                f,
                "a `ref` argument must be a mutable place: a `var`, a `ref` parameter, or a field or element of one"
            ),
            AssignImmutable(n) => write!(f, "cannot assign to immutable binding `{n}`"),
            RefImmutable(n) => write!(f, "cannot pass immutable binding `{n}` by `ref`"),
            AssignTemporary => write!(f, "cannot assign to a part of a temporary value"),
            AssignNotPlace => write!(f, "invalid left-hand side of assignment"),
            AddrNotPlace => write!(
                f,
                "`unsafe::addr` needs a slice, a reusable slice or a place"
            ),
            UnitValue => write!(f, "this expression has no value"),
            EmptyArrayInfer => write!(f, "cannot infer the element type of an empty array"),
            PrintArg { name, ty } => write!(
                f,
                "`{name}` expects an integer, a bool or text (a string, `[]u8`, `[N]u8`, `reusable[]u8`), found `{ty}`"
            ),
            NeedsStrLit(n) => write!(
                f,
                "`{n}` expects a string literal message (or a string constant)"
            ),
            ExternType(t) => write!(f, "type `{t}` cannot cross the C boundary"),
            ExternMismatch(n) => {
                write!(
                    f,
                    "extern function `{n}` is declared with different signatures"
                )
            }
            ConstType(t) => write!(
                f,
                "constants must be of type `i64`, `i32`, `u8` or `bool`, found `{t}`"
            ),
            ConstNeedsType(n) => write!(
                f,
                "constant `{n}` needs a type (`const {n}: i64 = ...;`): only a string constant (`const {n} = \"text\";`) leaves it out"
            ),
            NotConst => write!(f, "this expression is not a constant"),
            ConstDivZero => write!(f, "division by zero in a constant expression"),
            ConstCycle(n) => write!(f, "constant `{n}` depends on itself"),
            ConstTooDeep => write!(f, "constant evaluation nests too deep"),
            ArrayLen(v) => write!(f, "array length `{v}` is out of range"),
            TypeTooLarge => write!(f, "type is too large"),
            StructRecursive(n) => write!(f, "struct `{n}` contains itself by value"),
            StructLayoutCycle(n) => write!(
                f,
                "the layout of struct `{n}` depends on itself (through a constant or `size_of` in a field type)"
            ),
            OutsideLoop(k) => write!(f, "`{k}` outside of a loop"),
            ReturnMissingValue(t) => write!(f, "`return` needs a value of type `{t}`"),
            ReturnValueInUnit => write!(f, "this function returns no value"),
            MissingReturn { name, ty } => write!(
                f,
                "function `{name}` must return a value of type `{ty}` on every path"
            ),
            NoMain => write!(f, "no `main` function"),
            BadMain => write!(f, "`main` must be `fn main()` or `fn main() -> i64`"),
            InstantiationTooDeep(n) => write!(f, "generic instantiation of `{n}` nests too deep"),
            ForRangeType(t) => write!(f, "`for` range bounds must be integers, found `{t}`"),
            ForEachSeq(t) => write!(
                f,
                "cannot iterate over `{t}`: `for x in` takes an array, a slice, a reusable slice or a vector (a struct with fields `items` and `len`, as `vec::Vec`)"
            ),
            FrameTooLarge { name, bytes } => write!(
                f,
                "the stack frame of `{name}` needs up to {bytes} bytes, more than the limit of 512 MiB; keep large arrays in a pool (`reusable[]T`, `slice_pool`)"
            ),
            CannotKeep { name, array } => write!(
                f,
                "`{name}` cannot be kept: it holds a slice of {array}, which lives only while this input runs"
            ),
            InputFrameTooLarge { bytes } => write!(
                f,
                "this input needs up to {bytes} bytes of stack, more than the limit of 512 MiB; keep large arrays in a pool (`reusable[]T`, `slice_pool`)"
            ),
            NoValueToKeep(name) => write!(f, "`{name}` has no value to keep"),
            NoValueToShow => write!(f, "this expression has no value to show"),
            TooLargeToKeep { what, bytes } => {
                write!(f, "{what} is too large to keep ({bytes} bytes)")
            }
            EscapeReturn(array) => write!(
                f,
                "cannot return a slice of {array}: the array does not outlive this call"
            ),
            EscapeStore { array, into } => {
                let into = match into {
                    EscapeTarget::RefParam(p) => format!("through `ref` parameter `{p}`"),
                    EscapeTarget::SliceElement => "into a slice element".to_string(),
                    EscapeTarget::ReusableElement => "into a reusable slice element".to_string(),
                };
                write!(
                    f,
                    "cannot store a slice of {array} {into}: it could outlive the array"
                )
            }
            EscapeCall(array) => write!(
                f,
                "cannot pass this argument with a slice of {array}: the callee could store the slice through it, beyond the array's lifetime"
            ),
            StaleOperand => write!(
                f,
                "this operand holds pool memory (a reusable slice's, or a library pool's) that a call in the same expression can resize or free before the operand is used; evaluate the call first, in a `let`"
            ),
            StaleArgument => write!(
                f,
                "this argument overlaps another through which the call can resize or free pool memory: the callee could use it after the free"
            ),
            StaleBesideHandle => write!(
                f,
                "this argument points into a pool's memory (or views what another argument does) while the call is given the pool's handle: the callee could free it through the handle and use it after the free; pass the slice itself, once, and an element's value through a copy in a `var` (a copied slice still views the same memory)"
            ),
            StaleSelfReference => write!(
                f,
                "this `ref` points into pool memory of a type the callee can resize or free through it (the value holds a slice of its own type, which may be a copy of the one it lies in): the callee could move the memory under its `ref` and write there after the free; copy the element into a `var`, pass that, and store it back"
            ),
        }
    }
}

/// Text attached to a secondary span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LabelKind {
    FirstDefined,
    DeclaredImmutable(String),
    ParamDeclared,
    LastStatement,
    /// The local array an escaping slice views.
    ArrayDeclared(String),
    /// The string literal whose frame copy an escaping slice views.
    TextCopied,
    /// The `ref` parameter whose array an escaping slice views.
    RefParamArray(String),
    /// The argument that carries a slice of a local array into a call.
    SliceOfLocal(String),
    /// The argument through which a call can resize a reusable slice.
    MayResize,
    /// A pool's handle a call is given (it can free the pool's memory).
    MayFreeThroughHandle,
}

impl fmt::Display for LabelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LabelKind::FirstDefined => write!(f, "first defined here"),
            LabelKind::DeclaredImmutable(n) => write!(f, "`{n}` is declared here, immutable"),
            LabelKind::ParamDeclared => write!(f, "parameter declared here"),
            LabelKind::LastStatement => write!(f, "the body can end here without `return`"),
            LabelKind::ArrayDeclared(n) => {
                write!(f, "`{n}` is declared here, in this function's frame")
            }
            LabelKind::TextCopied => {
                write!(f, "its bytes are copied into this function's frame here")
            }
            LabelKind::RefParamArray(n) => write!(
                f,
                "`{n}` refers to the caller's memory, which may be a local of the caller"
            ),
            LabelKind::SliceOfLocal(n) => write!(f, "this gives the callee a pointer into `{n}`"),
            LabelKind::MayResize => {
                write!(f, "the call can resize or free pool memory through this")
            }
            LabelKind::MayFreeThroughHandle => {
                write!(f, "the call can free the pool's memory through this handle")
            }
        }
    }
}

/// What the parser wanted where it stopped: the X of "expected X, found Y".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// A keyword or punctuation token, by its source text.
    Token(String),
    Item,
    Statement,
    Type,
    Expression,
    Identifier,
    EndOfExpression,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Token(t) => write!(f, "`{t}`"),
            Expected::Item => write!(f, "an item (`fn`, `struct`, `const`, `extern` or `use`)"),
            Expected::Statement => write!(f, "a statement"),
            Expected::Type => write!(f, "a type"),
            Expected::Expression => write!(f, "an expression"),
            Expected::Identifier => write!(f, "an identifier"),
            Expected::EndOfExpression => write!(f, "the end of the expression"),
        }
    }
}

/// The token the parser met instead: the Y of "expected X, found Y".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A name, keyword or punctuation token, by its source text.
    Token(String),
    IntLiteral,
    ByteLiteral,
    StrLiteral,
    EndOfFile,
    /// A token the lexer rejected (and reported).
    Invalid,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Token(t) => write!(f, "`{t}`"),
            Found::IntLiteral => write!(f, "an integer literal"),
            Found::ByteLiteral => write!(f, "a byte literal"),
            Found::StrLiteral => write!(f, "a string literal"),
            Found::EndOfFile => write!(f, "end of file"),
            Found::Invalid => write!(f, "an invalid token"),
        }
    }
}

/// Text of a note printed after the snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteKind {
    UseVar(String),
    /// Assigning a value parameter.
    ValueParam(String),
    /// Assigning a `for` variable.
    ForVar(String),
    ReturnRule,
    ExpectedMain,
    EscapeRule,
    /// How the REPL keeps text: a string literal bound as the array it is.
    KeepText,
    /// Integer types never convert implicitly: (value's type, wanted type).
    CastHint(String, String),
    /// An error in a generic body found in one instance of it: the
    /// instance's name and where (`file:line:col`) it is first called.
    InInstance {
        name: String,
        at: String,
    },
    /// A module not found while the standard library is read from a
    /// directory the user named (`TERN_STDLIB`): the directory as shown, the
    /// module, and whether the directory is one.
    StdlibDir {
        dir: String,
        module: String,
        is_dir: bool,
    },
}

impl fmt::Display for NoteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoteKind::UseVar(n) => write!(f, "declare `{n}` with `var` to make it mutable"),
            NoteKind::ValueParam(n) => write!(
                f,
                "`{n}` is a value parameter: declare it `ref {n}: T` to change the caller's variable, or copy it into a `var`"
            ),
            NoteKind::ForVar(n) => write!(
                f,
                "a `for` variable is immutable: copy `{n}` into a `var` to change it"
            ),
            NoteKind::ReturnRule => write!(
                f,
                "a body returns on every path when its last statement is `return`, an expression without `;` before the body's `}}`, a call of `panic`, an `if` with `else` whose branches all return, or `while true` without `break`"
            ),
            NoteKind::ExpectedMain => write!(f, "add `fn main() {{ ... }}` to the root file"),
            NoteKind::EscapeRule => write!(
                f,
                "a slice of a local array can be used in its function and passed down to calls, but not returned or stored where it outlives the array; copy the elements into a pool slice (`reusable[]T`, `slice_pool`) to keep them"
            ),
            NoteKind::KeepText => write!(
                f,
                "to keep text, bind the literal as the array it is (`let s = \"abc\";` keeps a `[3]u8`) and take `s[..]` where a `[]u8` is wanted"
            ),
            NoteKind::InInstance { name, at } => {
                // A type argument can be thousands of types long; its head
                // names the instance well enough.
                const SHOWN: usize = 200;
                match name.char_indices().nth(SHOWN) {
                    Some((cut, _)) => write!(
                        f,
                        "in the instance `{} ...` ({} characters), called at {at}",
                        &name[..cut],
                        name.chars().count()
                    ),
                    None => write!(f, "in the instance `{name}`, called at {at}"),
                }
            }
            NoteKind::CastHint(from, to) => write!(
                f,
                "integer types never convert implicitly: convert the `{from}` with `as {to}`"
            ),
            NoteKind::StdlibDir {
                dir,
                module,
                is_dir: true,
            } => write!(
                f,
                "the standard library is read from `{dir}` (TERN_STDLIB), which has no `{module}.tern`"
            ),
            NoteKind::StdlibDir {
                dir, is_dir: false, ..
            } => write!(
                f,
                "the standard library is read from `{dir}` (TERN_STDLIB), which is not a directory"
            ),
        }
    }
}
