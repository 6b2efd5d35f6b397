//! Monomorphization: numbering function instances and externs, and emitting
//! the `tir::Program` from `main`.

use super::{Checker, MAX_INSTANCE_BYTES, MAX_INSTANCE_TYPES, MAX_INSTANCES, Ty, frame};
use crate::diagnostics::{ErrorKind, NoteKind};
use crate::source::Span;
use crate::tir;

impl Checker<'_> {
    /// The id of the instance of `f` with `targs`, queueing it if new.
    pub(super) fn instance(&mut self, f: usize, targs: Vec<Ty>, span: Span) -> tir::FuncId {
        if let Some(id) = self.instances.get(&(f, targs.clone())) {
            return *id;
        }
        if self.mono_failed {
            return tir::FuncId(0);
        }
        if targs.iter().any(Ty::nests_too_deep) {
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
        if !targs.is_empty() {
            let body = self.fns[f].ast.body.span;
            self.instance_bytes += u64::from(body.hi.saturating_sub(body.lo));
            if self.instance_bytes > MAX_INSTANCE_BYTES {
                let name = self.fns[f].name.clone();
                self.sink.error(ErrorKind::InstancesTooLarge(name), span);
                self.mono_failed = true;
                return tir::FuncId(0);
            }
            self.instance_types += targs.iter().map(|t| u64::from(t.nodes())).sum::<u64>();
            if self.instance_types > MAX_INSTANCE_TYPES {
                let name = self.fns[f].name.clone();
                self.sink
                    .error(ErrorKind::InstanceTypesTooLarge(name), span);
                self.mono_failed = true;
                return tir::FuncId(0);
            }
        }
        let id = tir::FuncId(self.instances.len() as u32);
        self.generic_instances += usize::from(!targs.is_empty());
        self.instances.insert((f, targs.clone()), id);
        self.instance_items.push(f);
        self.queue.push((f, targs, span));
        id
    }

    pub(super) fn extern_id(&mut self, e: usize) -> tir::ExternId {
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

    pub(super) fn emit(&mut self, main: usize) -> Option<tir::Program> {
        let main_id = self.instance(main, Vec::new(), self.fns[main].ast.name.span);
        let mut functions: Vec<Option<tir::Function>> = Vec::new();
        let mut next = 0usize;
        // Instances are numbered in discovery order; the queue is FIFO.
        while next < self.queue.len() && !self.mono_failed {
            let (f, targs, site) = self.queue[next].clone();
            let generics: Vec<(String, Ty)> = self.fns[f]
                .sig
                .generics
                .iter()
                .cloned()
                .zip(targs)
                .collect();
            let generic = !generics.is_empty();
            let before = self.sink.len();
            let instance = self.fn_body(f, generics, true);
            if generic {
                self.check_instance_escapes(&instance);
                // The opaque check admitted operators, literals and casts at
                // a parameter; what this instance's types refuse is reported
                // in the generic body, with the instance and where it is made.
                let (line, col) = self.sources.file(site.file).line_col(site.lo);
                let at = format!("{}:{line}:{col}", self.sources.file(site.file).name);
                let name = instance.0.name.clone();
                self.sink.note_since(before, || NoteKind::InInstance {
                    name: name.clone(),
                    at: at.clone(),
                });
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
            let decl = self.structs[s].ast;
            let private = self.struct_fields(s)?.private.clone();
            structs.push(tir::StructDef {
                name,
                // Module 0 is the root: the program's (or session's) own items.
                module_file: (self.structs[s].module != 0).then_some(decl.name.span.file),
                fields: fields
                    .iter()
                    .zip(offsets)
                    .zip(&private)
                    .map(|(((n, t), offset), &private)| tir::Field {
                        name: n.clone(),
                        ty: self.tir_ty(t),
                        offset,
                        private,
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
