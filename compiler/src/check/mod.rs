//! Name resolution, type checking and monomorphization.
//!
//! The checker runs in two modes over the same code:
//! * **check**: every function body once, generic parameters opaque
//!   (`Ty::Param`), reporting every error; its output is discarded;
//! * **emit** (only when check found no error): starting from `main`, each
//!   reachable function instance is checked again with its type arguments
//!   substituted, producing the `tir::Function`s of the program.
//!
//! A generic body that checks with opaque parameters is valid for every
//! type argument (there are no trait bounds: a `T` value can only be moved,
//! stored and passed), so instantiation cannot fail.
//!
//! This module holds the checker's state and its shared helpers; the
//! `Checker` methods live by concern in:
//! * `items` — collecting each module's items, resolving their signatures;
//! * `resolve` — written types and item paths;
//! * `consts` — constant items and constant expressions;
//! * `layout` — struct fields and the layout of types;
//! * `functions` — a function item's body as a whole, and the passes over it;
//! * `body` — the statements and expressions of a body;
//! * `mono` — function instances and the emitted program;
//!
//! and the passes they use: `ty` (the checker's types), `fold` (constant
//! folding), `escape` (slices of local arrays leaving), `stale_operands`
//! (operands a call in the same expression can move), `frame` (frame sizes).

mod body;
mod consts;
mod escape;
mod fold;
mod frame;
mod functions;
mod items;
mod layout;
mod mono;
mod resolve;
mod stale_operands;
pub(crate) use stale_operands::StructFacts;
mod ty;

use crate::diagnostics::{ErrorKind, Sink};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;
use std::rc::Rc;
pub(crate) use ty::Ty;
use ty::concrete;

/// How deeply the lazy evaluation of constants and struct layouts may nest
/// (a constant whose type or value needs another constant, a layout that
/// needs the layout of a field's struct) before `ConstTooDeep` is reported:
/// bounds the checker's recursion on long chains of definitions.
const MAX_ITEM_DEPTH: u32 = 64;
/// Bounds on monomorphization (runaway recursion like `f::<[]T>` in `f`).
const MAX_TYPE_DEPTH: u32 = 24;
/// Bound on the types in one type's tree, type arguments included (see
/// `Ty::nests_too_deep`).
const MAX_TYPE_NODES: u32 = 4096;
const MAX_INSTANCES: usize = 10_000;
/// Bound on the source the generic instances check in all, counted as the
/// bytes of each instance's body: a few instances of a long generic body
/// cost what many of a short one do (2,500 statements doubling its type on
/// every call checked for 23 s and 5.9 GB before reaching `MAX_INSTANCES`).
/// The checker takes about a second per MiB of instances (measured
/// 2026-12-06: 11 MB of one 3.5 KB body in 3 125 instances, 8.6 s; 32 MiB of
/// nested literals, 31.7 s), so 8 MiB keeps the worst case near 8 s.
const MAX_INSTANCE_BYTES: u64 = 8 << 20;
/// Bound on the types in all generic instances' type arguments, added up:
/// what an instance costs the checker grows with its types (every
/// expression of type `T` holds `T`), so ten doublings of a type under
/// `MAX_TYPE_NODES`, instantiated five ways at every step, once took
/// `tern check` to 2.9 GB and an allocation failure before
/// `MAX_INSTANCES` was reached.
const MAX_INSTANCE_TYPES: u64 = 1 << 20;
/// Largest size of any type, in bytes (stack slots are addressed with 32 bits).
const MAX_TYPE_SIZE: u64 = 1 << 31;

/// One parsed file and its role.
pub(crate) struct ParsedModule {
    /// `None` for the root file; else the name `use` reaches it by.
    pub name: Option<String>,
    pub file: FileId,
    pub ast: ast::Module,
    /// `use NAME;` of this module: name -> index into the module list
    /// (absent when the module was not found, already reported).
    pub uses: HashMap<String, usize>,
}

#[derive(Clone, Copy, Debug)]
enum ItemRef {
    Const(usize),
    Struct(usize),
    Fn(usize),
    Extern(usize),
}

struct ModInfo {
    items: HashMap<String, (ItemRef, Span)>,
    uses: HashMap<String, usize>,
    /// Names of items that failed to parse ([`ast::Module::broken`]).
    broken: std::collections::HashSet<String>,
}

enum Lazy<T> {
    Todo,
    Busy,
    Done(T),
}

#[derive(Clone, Debug)]
struct ConstVal {
    ty: Ty,
    value: i64,
}

struct ConstInfo<'a> {
    module: usize,
    ast: &'a ast::ConstItem,
    state: Lazy<Option<ConstVal>>,
}

/// The resolved fields of a struct, in declaration order, with an index by
/// name (structs may have many fields: lookups must not scan).
pub(crate) struct Fields {
    pub(crate) list: Vec<(String, Ty)>,
    /// Whether each field is `priv` (by index of `list`).
    pub(crate) private: Vec<bool>,
    index: HashMap<String, usize>,
}

impl Fields {
    /// Index of field `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

struct StructInfo<'a> {
    module: usize,
    ast: &'a ast::StructItem,
    name: String,
    /// Its generic parameters (a generic struct's fields are resolved with
    /// them opaque; an instance substitutes its type arguments).
    generics: Vec<String>,
    /// Field types. Resolving them evaluates the constants in array lengths
    /// but never a layout: a layout is needed only by `struct_layout` and
    /// `size_of`, so the two states below depend on each other exactly as
    /// the program's definitions do, and re-entering a `Busy` one is always
    /// a real cycle.
    fields: Lazy<Rc<Fields>>,
    /// Span of each written field type, by field index.
    field_spans: Vec<Span>,
}

/// A struct instance: the declaration's index and the type arguments.
type Instance = (usize, Vec<Ty>);

/// A struct layout and its field offsets; `None` after an error.
type StructLayout = Option<(tir::Layout, Vec<u64>)>;

/// The backend's struct ids: every struct instance lowered so far, in the
/// order of first use (non-generic structs first, in declaration order, so a
/// program without generic structs keeps its declaration numbering).
#[derive(Default)]
pub(crate) struct StructIds {
    ids: HashMap<Instance, u32>,
    list: Vec<Instance>,
}

impl StructIds {
    fn id(&mut self, s: u32, args: &[Ty]) -> tir::StructId {
        let key = (s as usize, args.to_vec());
        if let Some(&id) = self.ids.get(&key) {
            return tir::StructId(id);
        }
        let id = self.list.len() as u32;
        self.ids.insert(key.clone(), id);
        self.list.push(key);
        tir::StructId(id)
    }
}

#[derive(Clone, Debug)]
struct ParamSig {
    name: String,
    ty: Ty,
    by_ref: bool,
}

#[derive(Clone, Debug)]
struct Sig {
    generics: Vec<String>,
    params: Vec<ParamSig>,
    ret: Ty,
}

struct FnInfo<'a> {
    module: usize,
    ast: &'a ast::FnItem,
    name: String,
    sig: Sig,
}

struct ExternInfo<'a> {
    module: usize,
    ast: &'a ast::ExternItem,
    sig: Sig,
}

/// The whole checker state for one compilation.
pub(crate) struct Checker<'a> {
    sources: &'a SourceMap,
    /// Where the syntax errors reported before checking lie: a function
    /// whose body holds one gets no "must return a value on every path"
    /// (recovery may have skipped its `return`: an unterminated string
    /// takes the rest of the file).
    syntax_errors: Vec<Span>,
    mods: Vec<ModInfo>,
    consts: Vec<ConstInfo<'a>>,
    structs: Vec<StructInfo<'a>>,
    fns: Vec<FnInfo<'a>>,
    externs: Vec<ExternInfo<'a>>,
    sink: &'a mut Sink,
    item_depth: u32,
    /// Struct field lists being resolved right now (nesting count), and for
    /// each struct layout being computed, that count when it started: a
    /// layout needed again with more field lists open than when it started
    /// depends on itself through a field type, not by containment.
    fields_open: u32,
    layouts_open: Vec<(Instance, u32)>,
    /// Layout and field offsets of each struct instance; `None` after an error.
    layouts: HashMap<Instance, Lazy<StructLayout>>,
    /// The backend's id of each struct instance (`tir_ty`). Shared: lowering
    /// a type happens behind `&self` (expression nodes are made there).
    struct_ids: std::cell::RefCell<StructIds>,
    // --- emit mode ---
    instances: HashMap<(usize, Vec<Ty>), tir::FuncId>,
    /// How many of `instances` have type arguments (`MAX_INSTANCES`).
    generic_instances: usize,
    /// Bytes of the bodies of those instances (`MAX_INSTANCE_BYTES`).
    instance_bytes: u64,
    /// The types in the generic instances' type arguments, added up
    /// (`MAX_INSTANCE_TYPES`).
    instance_types: u64,
    /// Instances still to build: the item, its type arguments and the call
    /// that first asked for it (named by errors found in the instance).
    queue: Vec<(usize, Vec<Ty>, Span)>,
    extern_ids: HashMap<String, tir::ExternId>,
    extern_list: Vec<tir::ExternFn>,
    /// Monomorphization hit a limit (reported once); emission stops.
    mono_failed: bool,
    /// Field types of every struct instance, by `tir::StructId`, for the
    /// escape pass (extended as instances appear).
    field_types: Vec<Vec<tir::Type>>,
    /// Escape summaries of every function item (`escape::Summary`).
    escape_summaries: Vec<escape::Summary>,
    /// The stale-operand pass's facts about `field_types` (recomputed when
    /// new struct instances appear).
    operand_facts: stale_operands::StructFacts,
    /// Per function item: what a call of it can free
    /// (`stale_operands::may_free`).
    item_frees: Vec<stale_operands::Frees>,
    /// Per function item: whether it is a library pool's operation
    /// (`stale_operands::pool_operation`).
    item_pool_ops: Vec<bool>,
    /// The function item of each instance, by `tir::FuncId`.
    instance_items: Vec<usize>,
}

/// Check the program made of `modules` (index 0 is the root) and, if it is
/// free of errors, build its typed program.
pub(crate) fn check_program(
    modules: &[ParsedModule],
    sources: &SourceMap,
    sink: &mut Sink,
    report_missing_main: bool,
) -> Option<tir::Program> {
    let mut c = Checker {
        sources,
        syntax_errors: sink.iter().map(|d| d.span).collect(),
        mods: Vec::new(),
        consts: Vec::new(),
        structs: Vec::new(),
        fns: Vec::new(),
        externs: Vec::new(),
        sink,
        item_depth: 0,
        fields_open: 0,
        layouts_open: Vec::new(),
        layouts: HashMap::new(),
        struct_ids: Default::default(),
        instances: HashMap::new(),
        generic_instances: 0,
        instance_bytes: 0,
        instance_types: 0,
        queue: Vec::new(),
        extern_ids: HashMap::new(),
        extern_list: Vec::new(),
        mono_failed: false,
        field_types: Vec::new(),
        escape_summaries: Vec::new(),
        operand_facts: stale_operands::StructFacts::new(&[], Vec::new()),
        item_frees: Vec::new(),
        item_pool_ops: Vec::new(),
        instance_items: Vec::new(),
    };
    c.collect(modules);
    c.resolve_items();
    let checked: Vec<(tir::Function, Vec<Span>)> =
        (0..c.fns.len()).map(|f| c.check_fn(f)).collect();
    c.check_escapes(&checked);
    drop(checked);
    let main = c.find_main(modules, report_missing_main);
    if !c.sink.is_empty() {
        return None;
    }
    let main = main?;
    c.emit(main)
}

impl Checker<'_> {
    fn loc(&self, span: Span) -> tir::Loc {
        let (line, col) = self.sources.file(span.file).line_col(span.lo);
        tir::Loc {
            file: span.file,
            line,
            col,
        }
    }

    /// The backend's type of `ty` (struct instances get their ids here).
    fn tir_ty(&self, ty: &Ty) -> tir::Type {
        let mut ids = self.struct_ids.borrow_mut();
        // Opaque parameters stand in as `i64`, like everywhere in `to_tir`.
        ty.to_tir(&mut |s, args| {
            let args: Vec<Ty> = args.iter().map(concrete).collect();
            ids.id(s, &args)
        })
    }

    /// A type as written in Tern, for messages and instance names.
    fn ty_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::I64 => "i64".into(),
            Ty::I32 => "i32".into(),
            Ty::U8 => "u8".into(),
            Ty::U64 => "u64".into(),
            Ty::Bool => "bool".into(),
            Ty::Unit => "()".into(),
            Ty::Str => "str".into(),
            Ty::Slice(t) => format!("[]{}", self.ty_name(t)),
            Ty::Array(t, n) => format!("[{n}]{}", self.ty_name(t)),
            Ty::Reusable(t) => format!("reusable[]{}", self.ty_name(t)),
            Ty::Struct(s, args) if args.is_empty() => self.structs[*s as usize].name.clone(),
            Ty::Struct(s, args) => {
                let list: Vec<String> = args.iter().map(|a| self.ty_name(a)).collect();
                format!("{}<{}>", self.structs[*s as usize].name, list.join(", "))
            }
            Ty::Param(n) => n.clone(),
            Ty::Error => "{error}".into(),
        }
    }
}

/// The error for `found` type arguments written after `name`, which takes
/// `expected` (`None` when they agree): functions, struct types and struct
/// literals share it.
fn type_arg_count_error(name: &str, expected: usize, found: usize) -> Option<ErrorKind> {
    match (expected, found) {
        _ if expected == found => None,
        (0, _) => Some(ErrorKind::NotGeneric(name.into())),
        _ => Some(ErrorKind::TypeArgCount {
            name: name.into(),
            expected,
            found,
        }),
    }
}
