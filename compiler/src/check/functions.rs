//! Function items as a whole: a body checked or built with its generics bound
//! (`body` checks the constructs), and the escape pass over the results.

use super::{Checker, Ty, body, escape, stale_operands};
use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind};
use crate::source::Span;
use crate::tir;

impl Checker<'_> {
    /// Check function `f` with its generic parameters opaque; returns its
    /// (discardable) body and the declaration span of each local.
    pub(super) fn check_fn(&mut self, f: usize) -> (tir::Function, Vec<Span>) {
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
    pub(super) fn fn_body(
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
            let binding = if p.by_ref {
                body::Binding::RefParam
            } else {
                body::Binding::ValueParam
            };
            let local = cx.declare(&p.name, ty, binding, pa.name.span);
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
        let body_span = ast.body.span;
        let lost_to_syntax = self
            .syntax_errors
            .iter()
            .any(|e| e.file == body_span.file && body_span.lo <= e.lo && e.lo <= body_span.hi);
        if !emit
            && ret != Ty::Unit
            && !ret.has_error()
            && !lost_to_syntax
            && !body::block_returns(&ast.body)
        {
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
    pub(super) fn check_escapes(&mut self, checked: &[(tir::Function, Vec<Span>)]) {
        let fields = self.field_types();
        let facts: Vec<escape::FnFacts> = checked.iter().map(facts_of).collect();
        let sums = escape::summaries(&facts, &fields);
        for f in &facts {
            for d in escape::check(f, &fields, &|id| sums.get(id.0 as usize)) {
                self.sink.push(d);
            }
        }
        self.operand_facts = self.operand_facts_of(&fields);
        let bodies: Vec<&tir::Block> = facts.iter().map(|f| f.body).collect();
        // Bodies checked opaquely name externs by item index.
        let externs = &self.externs;
        let extern_frees = |id: tir::ExternId| {
            let e = externs.get(id.0 as usize);
            e.is_none_or(|e| stale_operands::extern_frees(&e.ast.name.name))
        };
        let fns = &self.fns;
        let pure = |i: usize| stale_operands::PURE_RELEASES.contains(&fns[i].name.as_str());
        // Only the stdlib's own modules: a program's `vec_pool.tern` beside
        // it shares the name, not the trust.
        let sources = self.sources;
        self.item_pool_ops = (0..checked.len())
            .map(|i| {
                let f = &self.fns[i];
                stale_operands::pool_operation(&f.name)
                    && sources.file(f.ast.name.span.file).library
            })
            .collect();
        // A library pool carves memory of any type out of the spans it
        // frees (an `arena` chunk is a `reusable[]u8`): what its functions
        // free is not told by their spans' types; nor a generic function's.
        let pool_ops = &self.item_pool_ops;
        let opaque = |i: usize| !fns[i].sig.generics.is_empty() || pool_ops[i];
        self.item_frees = stale_operands::may_free(&bodies, &extern_frees, &pure, &opaque);
        let frees = |id: tir::FuncId| {
            let f = self.item_frees.get(id.0 as usize);
            f.cloned().unwrap_or(stale_operands::Frees::Anything)
        };
        let pool_op = |id: tir::FuncId| self.item_pool_ops.get(id.0 as usize) == Some(&true);
        let mut diags = Vec::new();
        for f in &facts {
            diags.extend(stale_operands::check(
                (f.body, f.params, f.locals),
                &self.operand_facts,
                &frees,
                &pool_op,
            ));
        }
        for d in diags {
            self.sink.push(d);
        }
        self.escape_summaries = sums;
    }

    /// The stale-operand pass's facts about the struct instances whose
    /// field types are `fields`, with which of them are library pools'
    /// handles (`stale_operands::POOL_HANDLES`) and which of those have a
    /// public slice field (`stale_operands::OPEN_HANDLES`).
    fn operand_facts_of(&self, fields: &[Vec<tir::Type>]) -> stale_operands::StructFacts {
        stale_operands::StructFacts::new(fields, self.structs_named(&stale_operands::POOL_HANDLES))
            .with_open(self.structs_named(&stale_operands::OPEN_HANDLES))
    }

    /// Per struct id: whether its name is one of `names`.
    fn structs_named(&self, names: &[&str]) -> Vec<bool> {
        let ids = self.struct_ids.borrow();
        ids.list
            .iter()
            .map(|(s, _)| names.contains(&self.structs[*s].name.as_str()))
            .collect()
    }

    /// The escape check of a generic instance: opaque parameters hid its
    /// arrays, so it is checked again with its types.
    pub(super) fn check_instance_escapes(&mut self, instance: &(tir::Function, Vec<Span>)) {
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
        if self.operand_facts.structs() != fields.len() {
            self.operand_facts = self.operand_facts_of(&fields);
        }
        // Calls in an instance name instances: through their items.
        let (items, item_frees) = (&self.instance_items, &self.item_frees);
        let frees = |id: tir::FuncId| {
            let item = items.get(id.0 as usize);
            let f = item.and_then(|&i| item_frees.get(i));
            f.cloned().unwrap_or(stale_operands::Frees::Anything)
        };
        let pool_ops = &self.item_pool_ops;
        let pool_op = |id: tir::FuncId| {
            let item = items.get(id.0 as usize);
            item.and_then(|&i| pool_ops.get(i)) == Some(&true)
        };
        let f = &instance.0;
        let diags = stale_operands::check(
            (&f.body, &f.params, &f.locals),
            &self.operand_facts,
            &frees,
            &pool_op,
        );
        for d in diags {
            self.sink.push(d);
        }
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
