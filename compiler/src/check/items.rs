//! Item collection (every module's names) and resolution of item signatures:
//! struct fields and layouts, constants, function and extern signatures, `main`.

use super::{
    Checker, ConstInfo, ExternInfo, FnInfo, ItemRef, Lazy, ModInfo, ParamSig, ParsedModule, Sig,
    StructInfo, Ty,
};
use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind};
use crate::source::Span;
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;

impl<'a> Checker<'a> {
    pub(super) fn collect(&mut self, modules: &'a [ParsedModule]) {
        for (mi, m) in modules.iter().enumerate() {
            let prefix = m.name.as_ref().map_or(String::new(), |n| format!("{n}::"));
            self.mods.push(ModInfo {
                items: HashMap::new(),
                uses: m.uses.clone(),
                broken: m.ast.broken.iter().cloned().collect(),
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

    /// A generic parameter named as a builtin type would be that type
    /// wherever it is written (builtin names win), so it is refused.
    /// Returns whether the name is allowed.
    fn check_param_name(&mut self, name: &str, span: Span) -> bool {
        let builtin = super::resolve::builtin_type(name).is_some();
        if builtin {
            self.sink
                .error(ErrorKind::ParamIsBuiltinType(name.to_string()), span);
        }
        !builtin
    }

    pub(super) fn resolve_items(&mut self) {
        for s in 0..self.structs.len() {
            let ast = self.structs[s].ast;
            for (i, g) in ast.generics.iter().enumerate() {
                if ast.generics[..i].iter().any(|h| h.name == g.name) {
                    self.sink
                        .error(ErrorKind::DuplicateParam(g.name.clone()), g.span);
                }
                self.check_param_name(&g.name, g.span);
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
                // Refused names bind nothing (the builtin type stays), so
                // calls do not also fail to infer them.
                if !self.check_param_name(&g.name, g.span) {
                    continue;
                }
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

    pub(super) fn find_main(
        &mut self,
        modules: &[ParsedModule],
        report_missing: bool,
    ) -> Option<usize> {
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
