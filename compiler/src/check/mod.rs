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

mod body;
mod escape;
mod fold;
mod frame;
mod ty;

use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind, Sink};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;
use std::rc::Rc;
pub(crate) use ty::Ty;
use ty::concrete;

/// Names the checker treats as builtins; items may not take them.
/// Deepest chain of constants referring to constants (or struct layouts
/// containing structs) evaluated recursively.
const MAX_ITEM_DEPTH: u32 = 64;
/// Bounds on monomorphization (runaway recursion like `f::<[]T>` in `f`).
const MAX_TYPE_DEPTH: u32 = 24;
const MAX_INSTANCES: usize = 10_000;
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
    queue: Vec<(usize, Vec<Ty>)>,
    extern_ids: HashMap<String, tir::ExternId>,
    extern_list: Vec<tir::ExternFn>,
    /// Monomorphization hit a limit (reported once); emission stops.
    mono_failed: bool,
    /// Field types of every struct instance, by `tir::StructId`, for the
    /// escape pass (extended as instances appear).
    field_types: Vec<Vec<tir::Type>>,
    /// Escape summaries of every function item (`escape::Summary`).
    escape_summaries: Vec<escape::Summary>,
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
        queue: Vec::new(),
        extern_ids: HashMap::new(),
        extern_list: Vec::new(),
        mono_failed: false,
        field_types: Vec::new(),
        escape_summaries: Vec::new(),
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

impl<'a> Checker<'a> {
    fn loc(&self, span: Span) -> tir::Loc {
        let (line, col) = self.sources.file(span.file).line_col(span.lo);
        tir::Loc {
            file: span.file,
            line,
            col,
        }
    }

    // ---- collection ----

    fn collect(&mut self, modules: &'a [ParsedModule]) {
        for (mi, m) in modules.iter().enumerate() {
            let prefix = m.name.as_ref().map_or(String::new(), |n| format!("{n}::"));
            self.mods.push(ModInfo {
                items: HashMap::new(),
                uses: m.uses.clone(),
            });
            for item in &m.ast.items {
                let (name, r) = match item {
                    ast::Item::Use(_) => continue,
                    ast::Item::Const(ci) => {
                        self.consts.push(ConstInfo {
                            module: mi,
                            ast: ci,
                            state: Lazy::Todo,
                        });
                        (&ci.name, ItemRef::Const(self.consts.len() - 1))
                    }
                    ast::Item::Struct(si) => {
                        self.structs.push(StructInfo {
                            module: mi,
                            ast: si,
                            name: format!("{prefix}{}", si.name.name),
                            generics: si.generics.iter().map(|g| g.name.clone()).collect(),
                            fields: Lazy::Todo,
                            field_spans: Vec::new(),
                        });
                        (&si.name, ItemRef::Struct(self.structs.len() - 1))
                    }
                    ast::Item::Fn(fi) => {
                        self.fns.push(FnInfo {
                            module: mi,
                            ast: fi,
                            name: format!("{prefix}{}", fi.name.name),
                            sig: Sig {
                                generics: Vec::new(),
                                params: Vec::new(),
                                ret: Ty::Unit,
                            },
                        });
                        (&fi.name, ItemRef::Fn(self.fns.len() - 1))
                    }
                    ast::Item::Extern(ei) => {
                        self.externs.push(ExternInfo {
                            module: mi,
                            ast: ei,
                            sig: Sig {
                                generics: Vec::new(),
                                params: Vec::new(),
                                ret: Ty::Unit,
                            },
                        });
                        (&ei.name, ItemRef::Extern(self.externs.len() - 1))
                    }
                };
                if tir::BuiltinSpec::named(&name.name).is_some()
                    || ["i64", "i32", "u8", "u64", "bool"].contains(&name.name.as_str())
                {
                    self.sink
                        .error(ErrorKind::ReservedName(name.name.clone()), name.span);
                    continue;
                }
                let items = &mut self.mods[mi].items;
                if let Some((_, first)) = items.get(&name.name) {
                    let first = *first;
                    self.sink.push(
                        Diagnostic::new(ErrorKind::DuplicateItem(name.name.clone()), name.span)
                            .label(first, LabelKind::FirstDefined),
                    );
                } else {
                    items.insert(name.name.clone(), (r, name.span));
                }
            }
        }
    }

    // ---- item resolution ----

    fn resolve_items(&mut self) {
        for s in 0..self.structs.len() {
            let ast = self.structs[s].ast;
            for (i, g) in ast.generics.iter().enumerate() {
                if ast.generics[..i].iter().any(|h| h.name == g.name) {
                    self.sink
                        .error(ErrorKind::DuplicateParam(g.name.clone()), g.span);
                }
            }
            self.struct_fields(s);
            // A generic struct's layout is its instances'.
            if self.structs[s].generics.is_empty() {
                self.struct_layout(s, &[], ast.name.span);
                self.struct_ids.borrow_mut().id(s as u32, &[]);
            }
        }
        // Arrays behind a slice in a field type (`[][N]T`) are not part of
        // the struct's layout; their size is checked now that every layout
        // is known.
        for s in 0..self.structs.len() {
            if let Lazy::Done(fields) = &self.structs[s].fields {
                let fields = fields.clone();
                for (i, (_, ty)) in fields.list.iter().enumerate() {
                    let span = self.structs[s].field_spans[i];
                    self.check_indirect_sizes(ty, span, true);
                }
            }
        }
        for k in 0..self.consts.len() {
            self.const_value(k);
        }
        for f in 0..self.fns.len() {
            let ast = self.fns[f].ast;
            let module = self.fns[f].module;
            let mut generics: Vec<(String, Ty)> = Vec::new();
            for g in &ast.generics {
                if generics.iter().any(|(n, _)| *n == g.name) {
                    self.sink
                        .error(ErrorKind::DuplicateParam(g.name.clone()), g.span);
                    continue;
                }
                generics.push((g.name.clone(), Ty::Param(g.name.clone())));
            }
            let params = self.param_sigs(&ast.params, module, &generics);
            let ret = match &ast.ret {
                Some(t) => self.resolve_type(t, module, &generics),
                None => Ty::Unit,
            };
            self.fns[f].sig = Sig {
                generics: generics.into_iter().map(|(n, _)| n).collect(),
                params,
                ret,
            };
        }
        let mut by_symbol: HashMap<String, usize> = HashMap::new();
        for e in 0..self.externs.len() {
            let ast = self.externs[e].ast;
            let module = self.externs[e].module;
            let params = self.param_sigs(&ast.params, module, &[]);
            for (p, pa) in params.iter().zip(&ast.params) {
                // Scalars, a slice as (pointer, length), a struct by `ref`.
                let ok = p.ty.is_scalar()
                    || (!p.by_ref && matches!(p.ty, Ty::Slice(_)))
                    || (p.by_ref && matches!(p.ty, Ty::Struct(..)));
                if !ok && !p.ty.has_error() {
                    let name = self.ty_name(&p.ty);
                    self.sink.error(ErrorKind::ExternType(name), pa.ty.span);
                }
            }
            let ret = match &ast.ret {
                Some(t) => {
                    let ty = self.resolve_type(t, module, &[]);
                    if !ty.is_scalar() && !ty.has_error() {
                        let name = self.ty_name(&ty);
                        self.sink.error(ErrorKind::ExternType(name), t.span);
                    }
                    ty
                }
                None => Ty::Unit,
            };
            let sig = Sig {
                generics: Vec::new(),
                params,
                ret,
            };
            // One symbol declared in several modules must agree (a repeat
            // within one module is already a duplicate item).
            match by_symbol.get(&ast.name.name) {
                Some(&first)
                    if self.externs[first].module != module
                        && !same_sig(&self.externs[first].sig, &sig) =>
                {
                    let first_span = self.externs[first].ast.name.span;
                    self.sink.push(
                        Diagnostic::new(
                            ErrorKind::ExternMismatch(ast.name.name.clone()),
                            ast.name.span,
                        )
                        .label(first_span, LabelKind::FirstDefined),
                    );
                }
                Some(_) => {}
                None => {
                    by_symbol.insert(ast.name.name.clone(), e);
                }
            }
            self.externs[e].sig = sig;
        }
    }

    fn param_sigs(
        &mut self,
        params: &[ast::Param],
        module: usize,
        generics: &[(String, Ty)],
    ) -> Vec<ParamSig> {
        let mut out: Vec<ParamSig> = Vec::with_capacity(params.len());
        let mut names: std::collections::HashSet<&str> = Default::default();
        for p in params {
            if !names.insert(&p.name.name) {
                self.sink
                    .error(ErrorKind::DuplicateParam(p.name.name.clone()), p.name.span);
            }
            let ty = self.resolve_type(&p.ty, module, generics);
            out.push(ParamSig {
                name: p.name.name.clone(),
                ty,
                by_ref: p.by_ref,
            });
        }
        out
    }

    /// Resolve a written type in `module`, with `generics` in scope.
    fn resolve_type(&mut self, t: &ast::TypeExpr, module: usize, generics: &[(String, Ty)]) -> Ty {
        self.resolve_type_sized(t, module, generics, true)
    }

    /// `resolve_type`; with `check_sizes` false (a field type, resolved
    /// before any layout may be computed), array sizes are left to
    /// `struct_layout` and `check_indirect_sizes`.
    fn resolve_type_sized(
        &mut self,
        t: &ast::TypeExpr,
        module: usize,
        generics: &[(String, Ty)],
        check_sizes: bool,
    ) -> Ty {
        match &t.kind {
            ast::TypeExprKind::Error => Ty::Error,
            ast::TypeExprKind::Slice(e) => Ty::Slice(Box::new(self.resolve_type_sized(
                e,
                module,
                generics,
                check_sizes,
            ))),
            ast::TypeExprKind::Reusable(e) => Ty::Reusable(Box::new(self.resolve_type_sized(
                e,
                module,
                generics,
                check_sizes,
            ))),
            ast::TypeExprKind::Array(len, e) => {
                let elem = self.resolve_type_sized(e, module, generics, check_sizes);
                let Some(n) = self.const_usize(len, module, generics) else {
                    return Ty::Error;
                };
                let ty = Ty::Array(Box::new(elem), n);
                if check_sizes
                    && let Some(l) = self.layout_of(&ty, t.span)
                    && l.size > MAX_TYPE_SIZE
                {
                    self.sink.error(ErrorKind::TypeTooLarge, t.span);
                    return Ty::Error;
                }
                ty
            }
            ast::TypeExprKind::Path(p, targs) => {
                let args: Vec<Ty> = targs
                    .iter()
                    .map(|t| self.resolve_type_sized(t, module, generics, check_sizes))
                    .collect();
                if p.segments.len() == 1 {
                    let name = p.segments[0].name.as_str();
                    let found = match name {
                        "i64" => Some(Ty::I64),
                        "i32" => Some(Ty::I32),
                        "u8" => Some(Ty::U8),
                        "u64" => Some(Ty::U64),
                        "bool" => Some(Ty::Bool),
                        _ => generics
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, t)| t.clone()),
                    };
                    if let Some(found) = found {
                        if !targs.is_empty() {
                            self.sink.error(ErrorKind::NotGeneric(name.into()), t.span);
                            return Ty::Error;
                        }
                        return found;
                    }
                }
                match self.resolve_path(p, module) {
                    Some(ItemRef::Struct(s)) => {
                        let (name, want) = (&self.structs[s].name, self.structs[s].generics.len());
                        if let Some(kind) = type_arg_count_error(name, want, args.len()) {
                            self.sink.error(kind, t.span);
                            return Ty::Error;
                        }
                        if args.iter().any(Ty::has_error) {
                            return Ty::Error;
                        }
                        let ty = Ty::Struct(s as u32, args);
                        if ty.depth() > MAX_TYPE_DEPTH {
                            let name = self.structs[s].name.clone();
                            self.sink
                                .error(ErrorKind::InstantiationTooDeep(name), t.span);
                            return Ty::Error;
                        }
                        ty
                    }
                    Some(_) => {
                        self.sink.error(ErrorKind::NotAType(p.text()), p.span);
                        Ty::Error
                    }
                    None => {
                        if p.segments.len() == 1 {
                            self.sink.error(ErrorKind::UnknownType(p.text()), p.span);
                        }
                        Ty::Error
                    }
                }
            }
        }
    }

    /// Look up an item path. For two segments, errors for unknown modules or
    /// items are reported here; for one segment the caller reports (its
    /// wording depends on what was expected).
    fn resolve_path(&mut self, p: &ast::Path, module: usize) -> Option<ItemRef> {
        match p.segments.as_slice() {
            [one] => self.mods[module].items.get(&one.name).map(|(r, _)| *r),
            [m, item] => {
                let Some(&target) = self.mods[module].uses.get(&m.name) else {
                    self.sink
                        .error(ErrorKind::UnknownModule(m.name.clone()), m.span);
                    return None;
                };
                match self.mods[target].items.get(&item.name) {
                    Some((r, _)) => Some(*r),
                    None => {
                        self.sink.error(
                            ErrorKind::UnknownItemInModule {
                                module: m.name.clone(),
                                item: item.name.clone(),
                            },
                            item.span,
                        );
                        None
                    }
                }
            }
            _ => {
                // Modules do not nest: `a::b::c` names nothing.
                self.sink.error(ErrorKind::UnknownName(p.text()), p.span);
                None
            }
        }
    }

    /// A constant array length: a non-negative integer constant expression.
    fn const_usize(
        &mut self,
        e: &ast::Expr,
        module: usize,
        generics: &[(String, Ty)],
    ) -> Option<u64> {
        let v = self.const_expr(e, module, generics, None)?;
        if !v.ty.is_integer() || v.value < 0 {
            let shown = if v.ty == Ty::Bool {
                (v.value != 0).to_string()
            } else {
                v.value.to_string()
            };
            self.sink.error(ErrorKind::ArrayLen(shown), e.span);
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
    pub(crate) fn const_text(&self, k: usize) -> Option<&'a str> {
        let ast = self.consts[k].ast;
        match (&ast.ty, &ast.value.kind) {
            (None, ast::ExprKind::Str(s)) => Some(s.as_str()),
            _ => None,
        }
    }

    /// The value of constant `k`, evaluating it on first use.
    fn const_value(&mut self, k: usize) -> Option<ConstVal> {
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

    /// Index and type of field `name` of the instance `args` of struct `s`;
    /// `Err(())` when the fields themselves are in error (reported).
    #[allow(clippy::result_unit_err)]
    pub(crate) fn field(
        &mut self,
        s: usize,
        args: &[Ty],
        name: &str,
    ) -> Result<Option<(usize, Ty)>, ()> {
        let fields = self.struct_fields(s).ok_or(())?;
        let subst = self.struct_subst(s, args);
        Ok(fields
            .position(name)
            .map(|i| (i, fields.list[i].1.subst(&subst))))
    }

    /// The first `priv` field of struct `s` when code of module `module`
    /// may not use it (`module` is not the struct's own): what keeps a
    /// module's invariants out of other modules' reach.
    pub(crate) fn private_field(
        &mut self,
        s: usize,
        module: usize,
        field: Option<usize>,
    ) -> Option<String> {
        if self.structs[s].module == module {
            return None;
        }
        let fields = self.struct_fields(s)?;
        let i = match field {
            Some(i) => i,
            None => fields.private.iter().position(|&p| p)?,
        };
        fields.private[i].then(|| fields.list[i].0.clone())
    }

    /// The substitution of struct `s`'s generic parameters by `args`.
    pub(crate) fn struct_subst(&self, s: usize, args: &[Ty]) -> Vec<(String, Ty)> {
        self.structs[s]
            .generics
            .iter()
            .cloned()
            .zip(args.iter().cloned())
            .collect()
    }

    /// The field types of the instance `args` of struct `s`.
    fn instance_fields(&mut self, s: usize, args: &[Ty]) -> Option<Vec<(String, Ty)>> {
        let fields = self.struct_fields(s)?;
        let subst = self.struct_subst(s, args);
        Some(
            fields
                .list
                .iter()
                .map(|(n, t)| (n.clone(), t.subst(&subst)))
                .collect(),
        )
    }

    /// The backend's type of `ty` (struct instances get their ids here).
    pub(crate) fn tir_ty(&self, ty: &Ty) -> tir::Type {
        let mut ids = self.struct_ids.borrow_mut();
        // Opaque parameters stand in as `i64`, like everywhere in `to_tir`.
        ty.to_tir(&mut |s, args| {
            let args: Vec<Ty> = args.iter().map(concrete).collect();
            ids.id(s, &args)
        })
    }

    /// The fields of struct `s`, resolving them on first use. `None` when
    /// they are needed while being resolved (a field type that uses the
    /// struct itself, e.g. `[size_of::<S>()]u8` in `S`): reported once.
    pub(crate) fn struct_fields(&mut self, s: usize) -> Option<Rc<Fields>> {
        match &self.structs[s].fields {
            Lazy::Done(f) => return Some(f.clone()),
            Lazy::Busy => {
                let name = self.structs[s].name.clone();
                let span = self.structs[s].ast.name.span;
                self.sink.error(ErrorKind::StructLayoutCycle(name), span);
                return None;
            }
            Lazy::Todo => {}
        }
        self.structs[s].fields = Lazy::Busy;
        self.fields_open += 1;
        let ast = self.structs[s].ast;
        let module = self.structs[s].module;
        let mut list: Vec<(String, Ty)> = Vec::with_capacity(ast.fields.len());
        let mut spans = Vec::with_capacity(ast.fields.len());
        let mut index: HashMap<String, usize> = HashMap::with_capacity(ast.fields.len());
        let mut private = Vec::with_capacity(ast.fields.len());
        for ast::FieldDecl {
            private: p,
            name,
            ty: t,
        } in &ast.fields
        {
            if index.contains_key(&name.name) {
                self.sink
                    .error(ErrorKind::DuplicateField(name.name.clone()), name.span);
                continue;
            }
            let generics: Vec<(String, Ty)> = self.structs[s]
                .generics
                .iter()
                .map(|g| (g.clone(), Ty::Param(g.clone())))
                .collect();
            let ty = self.resolve_type_sized(t, module, &generics, false);
            index.insert(name.name.clone(), list.len());
            list.push((name.name.clone(), ty));
            private.push(*p);
            spans.push(t.span);
        }
        self.fields_open -= 1;
        let fields = Rc::new(Fields {
            list,
            private,
            index,
        });
        self.structs[s].field_spans = spans;
        self.structs[s].fields = Lazy::Done(fields.clone());
        Some(fields)
    }

    /// Check the size of every array in `ty` that is reached through a
    /// slice (`by_value` false); arrays held by value are part of a layout
    /// that `struct_layout` checks.
    fn check_indirect_sizes(&mut self, ty: &Ty, span: Span, by_value: bool) {
        match ty {
            Ty::Array(e, _) if by_value || self.size_ok(ty, span) => {
                self.check_indirect_sizes(e, span, true);
            }
            Ty::Slice(e) | Ty::Reusable(e) => self.check_indirect_sizes(e, span, false),
            _ => {}
        }
    }

    /// C layout of the instance `args` of struct `s`; `None` after an error
    /// (recursive by value, too large, or a field type in error).
    fn struct_layout(
        &mut self,
        s: usize,
        args: &[Ty],
        use_span: Span,
    ) -> Option<(tir::Layout, Vec<u64>)> {
        let key: Instance = (s, args.to_vec());
        match self.layouts.get(&key) {
            Some(Lazy::Done(l)) => return l.clone(),
            Some(Lazy::Busy) => {
                let name = self.structs[s].name.clone();
                let span = self.structs[s].ast.name.span;
                let through_field_type = self
                    .layouts_open
                    .iter()
                    .rev()
                    .find(|(t, _)| *t == key)
                    .is_some_and(|(_, open)| *open < self.fields_open);
                let kind = if through_field_type {
                    ErrorKind::StructLayoutCycle(name)
                } else {
                    ErrorKind::StructRecursive(name)
                };
                self.sink.error(kind, span);
                return None;
            }
            _ => {}
        }
        if self.item_depth >= MAX_ITEM_DEPTH {
            self.sink.error(ErrorKind::ConstTooDeep, use_span);
            return None;
        }
        self.layouts.insert(key.clone(), Lazy::Busy);
        self.item_depth += 1;
        self.layouts_open.push((key.clone(), self.fields_open));
        let result = self.compute_layout(s, args);
        self.layouts_open.pop();
        self.item_depth -= 1;
        self.layouts.insert(key, Lazy::Done(result.clone()));
        result
    }

    fn compute_layout(&mut self, s: usize, args: &[Ty]) -> Option<(tir::Layout, Vec<u64>)> {
        let fields = self.instance_fields(s, args)?;
        // `struct W<T> { w: W<[2]T> }` has no end of instances: stop where
        // a type argument list would nest too deep.
        if fields.iter().any(|(_, t)| t.depth() > MAX_TYPE_DEPTH) {
            let name = self.structs[s].name.clone();
            let span = self.structs[s].ast.name.span;
            self.sink.error(ErrorKind::InstantiationTooDeep(name), span);
            return None;
        }
        let mut offset: u64 = 0;
        let mut align: u64 = 1;
        let mut offsets = Vec::with_capacity(fields.len());
        let mut ok = true;
        let span = self.structs[s].ast.name.span;
        for (i, (_, ty)) in fields.iter().enumerate() {
            match self.layout_of(ty, span) {
                Some(l) if l.size > MAX_TYPE_SIZE => {
                    let field_span = self.structs[s].field_spans.get(i).copied().unwrap_or(span);
                    self.sink.error(ErrorKind::TypeTooLarge, field_span);
                    ok = false;
                }
                Some(l) => {
                    offset = offset.div_ceil(l.align) * l.align;
                    offsets.push(offset);
                    offset = offset.saturating_add(l.size);
                    align = align.max(l.align);
                }
                None => ok = false,
            }
        }
        let size = offset.div_ceil(align) * align;
        if ok && size > MAX_TYPE_SIZE {
            self.sink.error(ErrorKind::TypeTooLarge, span);
            ok = false;
        }
        ok.then_some((tir::Layout { size, align }, offsets))
    }

    /// Layout of a concrete type; `None` for errors and generic parameters.
    fn layout_of(&mut self, ty: &Ty, span: Span) -> Option<tir::Layout> {
        Some(match ty {
            Ty::I64 | Ty::U64 => tir::Layout { size: 8, align: 8 },
            Ty::I32 => tir::Layout { size: 4, align: 4 },
            Ty::U8 | Ty::Bool => tir::Layout { size: 1, align: 1 },
            Ty::Unit => tir::Layout { size: 0, align: 1 },
            Ty::Str | Ty::Slice(_) | Ty::Reusable(_) => tir::Layout { size: 16, align: 8 },
            Ty::Array(e, n) => {
                let l = self.layout_of(e, span)?;
                tir::Layout {
                    size: l.size.saturating_mul(*n),
                    align: l.align,
                }
            }
            Ty::Struct(s, args) if !args.iter().any(Ty::has_param) => {
                self.struct_layout(*s as usize, args, span)?.0
            }
            Ty::Struct(..) => return None,
            Ty::Param(_) | Ty::Error => return None,
        })
    }

    /// A type as written in Tern, for messages and instance names.
    pub(crate) fn ty_name(&self, ty: &Ty) -> String {
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

    // ---- bodies ----

    /// Check function `f` with its generic parameters opaque; returns its
    /// (discardable) body and the declaration span of each local.
    fn check_fn(&mut self, f: usize) -> (tir::Function, Vec<Span>) {
        let generics: Vec<(String, Ty)> = self.fns[f]
            .sig
            .generics
            .iter()
            .map(|g| (g.clone(), Ty::Param(g.clone())))
            .collect();
        self.fn_body(f, generics, false)
    }

    /// Check (and in emit mode, build) the body of `f` with `generics`
    /// bound; also returns the declaration span of each local.
    fn fn_body(
        &mut self,
        f: usize,
        generics: Vec<(String, Ty)>,
        emit: bool,
    ) -> (tir::Function, Vec<Span>) {
        let ast = self.fns[f].ast;
        let module = self.fns[f].module;
        let sig = self.fns[f].sig.clone();
        let ret = sig.ret.subst(&generics);
        let mut cx = body::FnCx::new(module, generics.clone(), ret.clone(), emit);
        cx.push_scope();
        let mut params = Vec::new();
        for (p, pa) in sig.params.iter().zip(&ast.params) {
            let ty = p.ty.subst(&generics);
            let local = cx.declare(&p.name, ty, p.by_ref, pa.name.span);
            params.push(tir::Param {
                local,
                by_ref: p.by_ref,
            });
        }
        let body = self.block(&mut cx, &ast.body);
        cx.pop_scope();
        if emit && !generics.is_empty() {
            // Substitution can make a type too large that was fine opaque
            // (`[1_000_000]T` with `T = [4096]i64`).
            let mut tys = cx.local_tys.clone();
            tys.push(ret.clone());
            for t in &tys {
                if !self.size_ok(t, ast.name.span) {
                    break;
                }
            }
        }
        if !emit && ret != Ty::Unit && !ret.has_error() && !body::block_returns(&ast.body) {
            let ty = self.ty_name(&ret);
            let mut d = Diagnostic::new(
                ErrorKind::MissingReturn {
                    name: self.fns[f].name.clone(),
                    ty,
                },
                ast.name.span,
            )
            .note(NoteKind::ReturnRule);
            if let Some(last) = ast.body.stmts.last() {
                d = d.label(last.span, LabelKind::LastStatement);
            }
            self.sink.push(d);
        }
        let targs: Vec<Ty> = generics.iter().map(|(_, t)| t.clone()).collect();
        let mut name = self.fns[f].name.clone();
        if !targs.is_empty() {
            let list: Vec<String> = targs.iter().map(|t| self.ty_name(t)).collect();
            name = format!("{name}::<{}>", list.join(", "));
        }
        let mut locals = cx.locals;
        for (local, ty) in locals.iter_mut().zip(&cx.local_tys) {
            local.ty = self.tir_ty(ty);
        }
        let func = tir::Function {
            name,
            params,
            ret: self.tir_ty(&ret),
            locals,
            body,
            loc: self.loc(ast.name.span),
        };
        (func, cx.local_spans)
    }

    /// Field types of every struct instance lowered so far, by
    /// `tir::StructId`, for the escape pass. Lowering a field type may lower
    /// a new instance: the list grows until it covers them all.
    fn field_types(&mut self) -> Vec<Vec<tir::Type>> {
        while self.field_types.len() < self.struct_ids.borrow().list.len() {
            let (s, args) = self.struct_ids.borrow().list[self.field_types.len()].clone();
            // An instance without a layout (reported) lowers no field types,
            // so an endless family of instances ends here.
            let span = self.structs[s].ast.name.span;
            let types = match self.struct_layout(s, &args, span) {
                Some(_) => self
                    .instance_fields(s, &args)
                    .map_or_else(Vec::new, |fields| {
                        fields.iter().map(|(_, t)| self.tir_ty(t)).collect()
                    }),
                None => Vec::new(),
            };
            self.field_types.push(types);
        }
        self.field_types.clone()
    }

    /// Reports every way a slice of a local array leaves its function, for
    /// every function item checked opaquely (calls name items by index).
    fn check_escapes(&mut self, checked: &[(tir::Function, Vec<Span>)]) {
        let fields = self.field_types();
        let facts: Vec<escape::FnFacts> = checked.iter().map(facts_of).collect();
        let sums = escape::summaries(&facts, &fields);
        for f in &facts {
            for d in escape::check(f, &fields, &|id| sums.get(id.0 as usize)) {
                self.sink.push(d);
            }
        }
        self.escape_summaries = sums;
    }

    /// The escape check of a generic instance: opaque parameters hid its
    /// arrays, so it is checked again with its types.
    fn check_instance_escapes(&mut self, instance: &(tir::Function, Vec<Span>)) {
        let fields = self.field_types();
        let (items, sums) = (&self.instance_items, &self.escape_summaries);
        let callee = |id: tir::FuncId| {
            let item = *items.get(id.0 as usize)?;
            sums.get(item)
        };
        let diags = escape::check(&facts_of(instance), &fields, &callee);
        for d in diags {
            self.sink.push(d);
        }
    }

    fn find_main(&mut self, modules: &[ParsedModule], report_missing: bool) -> Option<usize> {
        let root = &self.mods[0];
        match root.items.get("main") {
            Some((ItemRef::Fn(f), _)) => {
                let f = *f;
                let sig = &self.fns[f].sig;
                let ok = sig.generics.is_empty()
                    && sig.params.is_empty()
                    && matches!(sig.ret, Ty::Unit | Ty::I64);
                if !ok {
                    let span = self.fns[f].ast.name.span;
                    self.sink.error(ErrorKind::BadMain, span);
                    return None;
                }
                Some(f)
            }
            Some((_, span)) => {
                let span = *span;
                self.sink.error(ErrorKind::BadMain, span);
                None
            }
            None if !report_missing => None,
            None => {
                let file = modules[0].file;
                self.sink.push(
                    Diagnostic::new(ErrorKind::NoMain, Span::new(file, 0, 0))
                        .note(NoteKind::ExpectedMain),
                );
                None
            }
        }
    }

    // ---- emission ----

    /// The id of the instance of `f` with `targs`, queueing it if new.
    fn instance(&mut self, f: usize, targs: Vec<Ty>, span: Span) -> tir::FuncId {
        if let Some(id) = self.instances.get(&(f, targs.clone())) {
            return *id;
        }
        if self.mono_failed {
            return tir::FuncId(0);
        }
        if targs.iter().any(|t| t.depth() > MAX_TYPE_DEPTH) {
            let name = self.fns[f].name.clone();
            self.sink.error(ErrorKind::InstantiationTooDeep(name), span);
            self.mono_failed = true;
            return tir::FuncId(0);
        }
        // Plain functions are instances too, one each: only instances with
        // type arguments are counted (runaway instantiation).
        if !targs.is_empty() && self.generic_instances >= MAX_INSTANCES {
            self.sink.error(ErrorKind::TooManyInstances, span);
            self.mono_failed = true;
            return tir::FuncId(0);
        }
        let id = tir::FuncId(self.instances.len() as u32);
        self.generic_instances += usize::from(!targs.is_empty());
        self.instances.insert((f, targs.clone()), id);
        self.instance_items.push(f);
        self.queue.push((f, targs));
        id
    }

    fn extern_id(&mut self, e: usize) -> tir::ExternId {
        let name = self.externs[e].ast.name.name.clone();
        if let Some(id) = self.extern_ids.get(&name) {
            return *id;
        }
        let sig = &self.externs[e].sig;
        let def = tir::ExternFn {
            name: name.clone(),
            params: sig
                .params
                .iter()
                .map(|p| (self.tir_ty(&p.ty), p.by_ref))
                .collect(),
            ret: self.tir_ty(&sig.ret),
        };
        let id = tir::ExternId(self.extern_list.len() as u32);
        self.extern_list.push(def);
        self.extern_ids.insert(name, id);
        id
    }

    fn emit(&mut self, main: usize) -> Option<tir::Program> {
        let main_id = self.instance(main, Vec::new(), self.fns[main].ast.name.span);
        let mut functions: Vec<Option<tir::Function>> = Vec::new();
        let mut next = 0usize;
        // Instances are numbered in discovery order; the queue is FIFO.
        while next < self.queue.len() && !self.mono_failed {
            let (f, targs) = self.queue[next].clone();
            let generics: Vec<(String, Ty)> = self.fns[f]
                .sig
                .generics
                .iter()
                .cloned()
                .zip(targs)
                .collect();
            let generic = !generics.is_empty();
            let instance = self.fn_body(f, generics, true);
            if generic {
                self.check_instance_escapes(&instance);
            }
            functions.push(Some(instance.0));
            next += 1;
        }
        if !self.sink.is_empty() {
            return None;
        }
        // Every struct instance the program lowered (lowering a field type
        // may add one: the list is walked as it grows).
        let mut structs = Vec::new();
        while structs.len() < self.struct_ids.borrow().list.len() {
            let (s, args) = self.struct_ids.borrow().list[structs.len()].clone();
            let fields = self.instance_fields(s, &args)?;
            let (layout, offsets) = self.struct_layout(s, &args, Span::default())?;
            let name = self.ty_name(&Ty::Struct(s as u32, args));
            structs.push(tir::StructDef {
                name,
                fields: fields
                    .iter()
                    .zip(offsets)
                    .map(|((n, t), offset)| tir::Field {
                        name: n.clone(),
                        ty: self.tir_ty(t),
                        offset,
                    })
                    .collect(),
                layout,
            });
        }
        if !self.sink.is_empty() {
            return None;
        }
        let program = tir::Program {
            files: self.sources.files.iter().map(|f| f.name.clone()).collect(),
            library: self.sources.files.iter().map(|f| f.library).collect(),
            structs,
            functions: functions.into_iter().flatten().collect(),
            externs: std::mem::take(&mut self.extern_list),
            main: main_id,
        };
        for (id, f) in program.functions.iter().enumerate() {
            let bytes = frame::bound(&program, f);
            if bytes > frame::MAX_FRAME_BYTES {
                let item = self.instance_items[id];
                let kind = ErrorKind::FrameTooLarge {
                    name: f.name.clone(),
                    bytes,
                };
                self.sink.error(kind, self.fns[item].ast.name.span);
            }
        }
        self.sink.is_empty().then_some(program)
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

fn facts_of((f, spans): &(tir::Function, Vec<Span>)) -> escape::FnFacts<'_> {
    escape::FnFacts {
        locals: &f.locals,
        local_spans: spans,
        params: &f.params,
        body: &f.body,
    }
}

/// Whether two extern signatures agree. A signature with an error type in it
/// (already reported) agrees with anything, so one mistake is one diagnostic.
fn same_sig(a: &Sig, b: &Sig) -> bool {
    let has_error = |s: &Sig| s.ret.has_error() || s.params.iter().any(|p| p.ty.has_error());
    if has_error(a) || has_error(b) {
        return true;
    }
    a.ret == b.ret
        && a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|(x, y)| x.ty == y.ty && x.by_ref == y.by_ref)
}
