//! Struct fields (resolved on first use, with `priv` checks) and the C layout
//! of struct instances and other types.

use super::{Checker, Fields, Instance, Lazy, MAX_ITEM_DEPTH, MAX_TYPE_SIZE, Ty};
use crate::diagnostics::ErrorKind;
use crate::source::Span;
use crate::syntax::ast;
use crate::tir;
use std::collections::HashMap;
use std::rc::Rc;

impl Checker<'_> {
    /// Index and type of field `name` of the instance `args` of struct `s`;
    /// `Err(())` when the fields themselves are in error (reported).
    #[allow(clippy::result_unit_err)]
    pub(super) fn field(
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
    pub(super) fn private_field(
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
    fn struct_subst(&self, s: usize, args: &[Ty]) -> Vec<(String, Ty)> {
        self.structs[s]
            .generics
            .iter()
            .cloned()
            .zip(args.iter().cloned())
            .collect()
    }

    /// The field types of the instance `args` of struct `s`.
    pub(super) fn instance_fields(&mut self, s: usize, args: &[Ty]) -> Option<Vec<(String, Ty)>> {
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

    /// The fields of struct `s`, resolving them on first use. `None` when
    /// they are needed while being resolved (a field type that uses the
    /// struct itself, e.g. `[size_of::<S>()]u8` in `S`): reported once.
    pub(super) fn struct_fields(&mut self, s: usize) -> Option<Rc<Fields>> {
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
    pub(super) fn check_indirect_sizes(&mut self, ty: &Ty, span: Span, by_value: bool) {
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
    pub(super) fn struct_layout(
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
        if fields.iter().any(|(_, t)| t.nests_too_deep()) {
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
    pub(super) fn layout_of(&mut self, ty: &Ty, span: Span) -> Option<tir::Layout> {
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
}
