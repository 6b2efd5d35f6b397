//! Resolution of written types and item paths (`a::b`) in a module's scope.

use super::{Checker, ItemRef, MAX_TYPE_SIZE, Ty, type_arg_count_error};
use crate::diagnostics::ErrorKind;
use crate::syntax::ast;

impl Checker<'_> {
    /// Resolve a written type in `module`, with `generics` in scope.
    pub(super) fn resolve_type(
        &mut self,
        t: &ast::TypeExpr,
        module: usize,
        generics: &[(String, Ty)],
    ) -> Ty {
        self.resolve_type_sized(t, module, generics, true)
    }

    /// `resolve_type`; with `check_sizes` false (a field type, resolved
    /// before any layout may be computed), array sizes are left to
    /// `struct_layout` and `check_indirect_sizes`.
    pub(super) fn resolve_type_sized(
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
                    let found = match builtin_type(name) {
                        Some(t) => Some(t),
                        None => generics
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
                match self.resolve_type_name(p, module) {
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
                        if ty.nests_too_deep() {
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
                    None => Ty::Error,
                }
            }
        }
    }

    /// Reports `kind` (an unknown single name) at `span`, unless the name is
    /// an item of `module` whose declaration failed to parse: that error
    /// was reported, and this one would only repeat it.
    pub(super) fn unknown_single(
        &mut self,
        module: usize,
        name: &str,
        kind: ErrorKind,
        span: crate::source::Span,
    ) {
        if !self.mods[module].broken.contains(name) {
            self.sink.error(kind, span);
        }
    }

    /// [`Self::resolve_path`] for a type name, reporting an unknown one. A
    /// single name its module does not define names the struct of that
    /// name in the one module the module uses that defines it: `use
    /// slice_pool;` then `SpanHeader` is `slice_pool::SpanHeader` (the
    /// design brief's own example writes it so). Defined in several, it is
    /// ambiguous.
    pub(super) fn resolve_type_name(&mut self, p: &ast::Path, module: usize) -> Option<ItemRef> {
        let [one] = p.segments.as_slice() else {
            return self.resolve_path(p, module);
        };
        if let Some((r, _)) = self.mods[module].items.get(&one.name) {
            return Some(*r);
        }
        let mut found: Vec<(&String, ItemRef)> = self.mods[module]
            .uses
            .iter()
            .filter_map(|(name, &m)| match self.mods[m].items.get(&one.name) {
                Some((r @ ItemRef::Struct(_), _)) => Some((name, *r)),
                _ => None,
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(b.0));
        match found.as_slice() {
            [(_, r)] => Some(*r),
            [] => {
                self.unknown_single(module, &one.name, ErrorKind::UnknownType(p.text()), p.span);
                None
            }
            many => {
                let kind = ErrorKind::AmbiguousType {
                    name: one.name.clone(),
                    modules: many.iter().map(|(m, _)| m.to_string()).collect(),
                };
                self.sink.error(kind, p.span);
                None
            }
        }
    }

    /// Look up an item path. For two segments, errors for unknown modules or
    /// items are reported here; for one segment the caller reports (its
    /// wording depends on what was expected).
    pub(super) fn resolve_path(&mut self, p: &ast::Path, module: usize) -> Option<ItemRef> {
        match p.segments.as_slice() {
            [one] => self.mods[module].items.get(&one.name).map(|(r, _)| *r),
            [m, item] => {
                let Some(&target) = self.mods[module].uses.get(&m.name) else {
                    // `reusable::alloc` without its call: a builtin, not a
                    // module to `use` (there is no such module).
                    let path = format!("{}::{}", m.name, item.name);
                    let kind = if crate::tir::BuiltinSpec::named(&path).is_some() {
                        ErrorKind::NotAValue(path)
                    } else if crate::tir::BUILTINS.iter().any(|b| {
                        b.name
                            .strip_prefix(m.name.as_str())
                            .is_some_and(|r| r.starts_with("::"))
                    }) {
                        ErrorKind::UnknownBuiltin(path)
                    } else {
                        ErrorKind::UnknownModule(m.name.clone())
                    };
                    let at = if matches!(kind, ErrorKind::UnknownModule(_)) {
                        m.span
                    } else {
                        p.span
                    };
                    self.sink.error(kind, at);
                    return None;
                };
                match self.mods[target].items.get(&item.name) {
                    // A `priv fn`, and every `extern fn`, belongs to the module
                    // that declares it: an extern is trusted code (docs/language.md
                    // section 15), so a module's externs are its own business,
                    // and a private function is how a module keeps helpers
                    // that assume its invariants out of other modules' reach.
                    Some((r @ (ItemRef::Fn(_) | ItemRef::Extern(_)), _))
                        if target != module && self.module_private(*r) =>
                    {
                        let (module, item_name) = (m.name.clone(), item.name.clone());
                        let kind = if matches!(r, ItemRef::Extern(_)) {
                            ErrorKind::ModuleExtern {
                                module,
                                item: item_name,
                            }
                        } else {
                            ErrorKind::PrivateFn {
                                module,
                                item: item_name,
                            }
                        };
                        self.sink.error(kind, item.span);
                        None
                    }
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

    /// Whether item `r` may be named only by its own module: a `priv fn`, or
    /// any `extern fn`.
    fn module_private(&self, r: ItemRef) -> bool {
        match r {
            ItemRef::Fn(f) => self.fns[f].ast.private,
            ItemRef::Extern(_) => true,
            ItemRef::Const(_) | ItemRef::Struct(_) => false,
        }
    }
}

/// The builtin type a name means (`i64`, `i32`, `u8`, `u64`, `bool`), whatever
/// else is in scope: a generic parameter cannot take these names.
pub(super) fn builtin_type(name: &str) -> Option<Ty> {
    match name {
        "i64" => Some(Ty::I64),
        "i32" => Some(Ty::I32),
        "u8" => Some(Ty::U8),
        "u64" => Some(Ty::U64),
        "bool" => Some(Ty::Bool),
        _ => None,
    }
}
