//! Frame escapes: a slice of a local array must not outlive the array.
//!
//! `a[..]` on an array that lives in a function's frame (a `let`/`var`
//! local, a value parameter, or an element or field of one) is a pointer into
//! that frame. The rule, conservative and flow-insensitive, per function:
//!
//! * a value is **tainted** when it may hold such a pointer: a slice of an
//!   array in a local; a local that was ever given a tainted value (by `let`,
//!   by assignment to it or to a part of it, or by a call that got a `ref` to
//!   it together with a tainted value); a struct or array literal, or an
//!   element or field, of a tainted value; the result of a call given a
//!   tainted value (the callee may return its argument, or memory it
//!   allocated and stored the argument in: so the taint stays on every value
//!   that can hold a slice or reach memory that can, `reusable[][]T` too),
//!   `reusable::append`/`resize` of a tainted slice, or a `ref` to a place
//!   containing an array when the callee may return a slice of it (its
//!   [`Summary`]; an unknown callee may).
//! * a tainted value may not **leave**: be returned, assigned to a place
//!   outside the frame (through a `ref` parameter, into a slice or reusable
//!   slice element), appended to a reusable slice, or passed to a call with an
//!   argument through which the callee could store it outside the frame (a
//!   `ref` to a place outside the frame that can hold a slice, or any argument
//!   whose slices point at memory that can hold slices).
//! * a slice of an array inside a `ref` parameter is the caller's memory,
//!   perhaps the caller's own local array: it may be returned (the caller
//!   treats the result as a slice of what it passed) but is otherwise
//!   tainted like a local's, so it cannot be stored anywhere that outlives
//!   the call. That is what lets the caller assume that a callee given `ref a`
//!   stores no slice of `a` anywhere.
//!
//! Passing a slice of a local array down to a call and using it locally stay
//! legal. `unsafe::` builtins and `extern fn`s are outside the rule (their
//! contract is the programmer's). The pass is pure: it reads checked bodies
//! and returns diagnostics. Summaries are computed for the whole program
//! first (a worklist over callers, since recursion makes them depend on each
//! other), then every body is checked with them.

use std::collections::HashMap;

use crate::diagnostics::messages::{EscapeOrigin, EscapeTarget};
use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind, NoteKind};
use crate::source::Span;
use crate::tir::{Arg, Block, Builtin, Expr, ExprKind, FuncId, Local, Param, Stmt, Type};

/// What the pass needs to know about one function.
pub(crate) struct FnFacts<'a> {
    /// Every local (parameters first), as in `tir::Function::locals`.
    pub locals: &'a [Local],
    /// Declaration span of each local.
    pub local_spans: &'a [Span],
    pub params: &'a [Param],
    pub body: &'a Block,
}

/// Per parameter of a function: whether its result may be a slice of an
/// array inside that (`ref`) parameter.
pub(crate) type Summary = Vec<bool>;

/// The summaries of every function in `fns` (indexed like it; calls name
/// their callee by that index), to a fixpoint.
pub(crate) fn summaries(fns: &[FnFacts], struct_fields: &[Vec<Type>]) -> Vec<Summary> {
    let mut sums: Vec<Summary> = fns.iter().map(|f| vec![false; f.params.len()]).collect();
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); fns.len()];
    for (i, f) in fns.iter().enumerate() {
        let mut callees = Vec::new();
        crate::tir::visit::callees(f.body, &mut callees);
        callees.sort_unstable();
        callees.dedup();
        for c in callees {
            if let Some(list) = callers.get_mut(c.0 as usize) {
                list.push(i);
            }
        }
    }
    let mut queued = vec![true; fns.len()];
    let mut work: Vec<usize> = (0..fns.len()).rev().collect();
    while let Some(i) = work.pop() {
        queued[i] = false;
        let (_, sum) = run(&fns[i], struct_fields, &|id| sums.get(id.0 as usize), false);
        if sum != sums[i] {
            sums[i] = sum;
            for &c in &callers[i] {
                if !queued[c] {
                    queued[c] = true;
                    work.push(c);
                }
            }
        }
    }
    sums
}

/// The escape diagnostics of one function, given the summaries of its
/// callees (`None`: unknown callee, assumed to return slices of every array
/// it gets by `ref`).
pub(crate) fn check<'s>(
    f: &FnFacts,
    struct_fields: &[Vec<Type>],
    callee: &dyn Fn(FuncId) -> Option<&'s Summary>,
) -> Vec<Diagnostic> {
    run(f, struct_fields, callee, true).0
}

fn run<'s>(
    f: &FnFacts,
    struct_fields: &[Vec<Type>],
    callee: &dyn Fn(FuncId) -> Option<&'s Summary>,
    report: bool,
) -> (Vec<Diagnostic>, Summary) {
    let mut ref_param = vec![false; f.locals.len()];
    for p in f.params {
        if p.by_ref {
            ref_param[p.local.0 as usize] = true;
        }
    }
    let mut pass = Pass {
        facts: f,
        struct_fields,
        callee,
        ref_param,
        taint: vec![Taint::default(); f.locals.len()],
        changed: false,
        backwards: false,
        report: false,
        diags: Vec::new(),
        summary: vec![false; f.params.len()],
        holds: HashMap::new(),
        reaches: HashMap::new(),
        inline: HashMap::new(),
    };
    // Taint only grows, so this ends (in practice after two or three
    // rounds). Every statement's effect only adds to the taints, so any
    // order of the statements reaches the same fixpoint: the rounds take
    // the body forwards and backwards in turn, so that a chain of
    // assignments against the statements' order (`s0 = s1; s1 = s2; ...`)
    // is two rounds, not one round per link (16 000 links: 14.5 s -> 0.08 s
    // of `tern check`).
    loop {
        pass.changed = false;
        pass.block(f.body);
        if !pass.changed {
            break;
        }
        pass.backwards = !pass.backwards;
    }
    pass.backwards = false;
    pass.report = report;
    pass.block(f.body);
    (pass.diags, pass.summary)
}

/// Calls `f` with every struct `ty` names, at any depth of arrays, slices
/// and reusable slices.
fn named_structs(ty: &Type, f: &mut impl FnMut(u32)) {
    match ty {
        Type::Struct(id) => f(id.0),
        Type::Array(e, _) | Type::Slice(e) | Type::Reusable(e) => named_structs(e, f),
        _ => {}
    }
}

/// Where a place lives.
enum Home {
    /// In this frame, rooted in this local.
    Frame(u32),
    /// Outside the frame: the kind of memory, for the message.
    Outside(EscapeTarget),
}

/// The locals (arrays, or `ref` parameters) whose memory a value may point
/// into; sorted, usually empty or one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Taint(Vec<u32>);

impl Taint {
    fn of(local: u32) -> Taint {
        Taint(vec![local])
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Adds `other`'s origins; whether anything was new.
    fn add(&mut self, other: &Taint) -> bool {
        let before = self.0.len();
        for &o in &other.0 {
            if let Err(at) = self.0.binary_search(&o) {
                self.0.insert(at, o);
            }
        }
        self.0.len() != before
    }
    fn or(mut self, other: Taint) -> Taint {
        self.add(&other);
        self
    }
    /// The empty taint unless `keep`.
    fn when(self, keep: bool) -> Taint {
        if keep { self } else { Taint::default() }
    }
}

struct Pass<'a, 's> {
    facts: &'a FnFacts<'a>,
    struct_fields: &'a [Vec<Type>],
    callee: &'a dyn Fn(FuncId) -> Option<&'s Summary>,
    /// Whether each local is a `ref` parameter (its memory is the caller's).
    ref_param: Vec<bool>,
    /// Per local: where a pointer it holds may point.
    taint: Vec<Taint>,
    changed: bool,
    /// Whether this round takes each block's statements last to first.
    backwards: bool,
    /// Only the last round reports, once the taint is complete.
    report: bool,
    diags: Vec<Diagnostic>,
    /// This function's own summary, filled by its `return`s.
    summary: Summary,
    /// Memo of [`Pass::holds_slice`], [`Pass::reaches_slices`] and
    /// [`Pass::inline_array`] per struct.
    holds: HashMap<u32, bool>,
    reaches: HashMap<u32, bool>,
    inline: HashMap<u32, bool>,
}

impl Pass<'_, '_> {
    // ---- types ----

    /// Whether a value of `ty` itself can hold a slice (a pointer anywhere).
    fn holds_slice(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Slice(_) => true,
            Type::Array(e, _) => self.holds_slice(e),
            Type::Struct(id) => self.struct_fact(id.0, |p| &mut p.holds, Pass::holds_slice),
            _ => false,
        }
    }

    /// Whether memory reachable through the slices in a value of `ty` can
    /// hold a slice (a callee given the value could store one there).
    fn reaches_slices(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Slice(e) | Type::Reusable(e) => self.holds_slice(e) || self.reaches_slices(e),
            Type::Array(e, _) => self.reaches_slices(e),
            Type::Struct(id) => self.struct_fact(id.0, |p| &mut p.reaches, Pass::reaches_slices),
            _ => false,
        }
    }

    /// Whether a value of `ty` can lead to a slice: hold one, or point at
    /// memory that can (a `reusable[][]T` a callee filled with the slices it
    /// was given). What keeps a value's taint.
    fn carries_slices(&mut self, ty: &Type) -> bool {
        self.holds_slice(ty) || self.reaches_slices(ty)
    }

    /// Whether a value of `ty` contains an array by value (sliceable memory).
    fn inline_array(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Array(..) => true,
            Type::Struct(id) => self.struct_fact(id.0, |p| &mut p.inline, Pass::inline_array),
            _ => false,
        }
    }

    /// A fact about struct `id`: true when `of` holds for any field. The
    /// first question about one fact answers it for every struct at once, as
    /// a least fixpoint: every struct false, each field evaluated once, and
    /// when a struct turns true, the fields that name it are evaluated again
    /// (a worklist, so the work stays linear in the fields). Structs reach
    /// each other through `reusable[]` and slice fields in cycles, and an
    /// answer cached while a cycle was still open (a struct met again during
    /// its own computation counted as false) once made `B` in `A { b:
    /// reusable[]B, s: reusable[][]i64 }`, `B { a: reusable[]A }` reach no
    /// slices, and a local slice leave its frame through it.
    fn struct_fact(
        &mut self,
        id: u32,
        memo: fn(&mut Self) -> &mut HashMap<u32, bool>,
        of: fn(&mut Self, &Type) -> bool,
    ) -> bool {
        let all = self.struct_fields;
        if memo(self).is_empty() && !all.is_empty() {
            for i in 0..all.len() {
                memo(self).insert(i as u32, false);
            }
            // The fields that name each struct, anywhere in their type.
            let mut users: HashMap<u32, Vec<(usize, usize)>> = HashMap::new();
            let mut work = Vec::new();
            for (i, fields) in all.iter().enumerate() {
                for (k, t) in fields.iter().enumerate() {
                    named_structs(t, &mut |named| users.entry(named).or_default().push((i, k)));
                    if of(self, t) {
                        work.push(i);
                    }
                }
            }
            while let Some(i) = work.pop() {
                if memo(self).insert(i as u32, true) == Some(true) {
                    continue;
                }
                for &(u, k) in users.get(&(i as u32)).map_or(&[][..], |v| v) {
                    if !memo(self)[&(u as u32)] && of(self, &all[u][k]) {
                        work.push(u);
                    }
                }
            }
        }
        memo(self).get(&id).copied().unwrap_or(false)
    }

    // ---- places ----

    /// Where the memory of place `e` lives.
    fn home(&self, e: &Expr) -> Option<Home> {
        match &e.kind {
            ExprKind::Local(id) => Some(if self.ref_param[id.0 as usize] {
                let name = self.facts.locals[id.0 as usize].name.clone();
                Home::Outside(EscapeTarget::RefParam(name))
            } else {
                Home::Frame(id.0)
            }),
            ExprKind::Field(b, _) => self.home(b),
            ExprKind::Index(b, _) => match b.ty {
                Type::Array(..) => self.home(b),
                Type::Reusable(_) => Some(Home::Outside(EscapeTarget::ReusableElement)),
                _ => Some(Home::Outside(EscapeTarget::SliceElement)),
            },
            // A temporary: the checker allows no store into one.
            _ => None,
        }
    }

    /// The taint of the *address* of place `e`: the local (or `ref`
    /// parameter) whose memory it is in.
    fn address_taint(&mut self, e: &Expr) -> Taint {
        match &e.kind {
            ExprKind::Local(id) => Taint::of(id.0),
            ExprKind::Field(b, _) => self.address_taint(b),
            ExprKind::Index(b, i) => {
                self.value(i);
                match b.ty {
                    Type::Array(..) => self.address_taint(b),
                    // An element of a slice lives where the slice points.
                    _ => self.value(b),
                }
            }
            _ => self.value(e),
        }
    }

    // ---- values ----

    /// The taint of the value of `e`, applying the effects of the calls in it.
    fn value(&mut self, e: &Expr) -> Taint {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Bytes(_) => {
                Taint::default()
            }
            // A slice of the literal's copy in the frame: as of a local array.
            ExprKind::Text { local, .. } => Taint::of(local.0),
            ExprKind::Local(id) => self.taint[id.0 as usize].clone(),
            ExprKind::Field(b, _) => {
                let t = self.value(b);
                t.when(self.carries_slices(&e.ty))
            }
            ExprKind::Index(b, i) => {
                self.value(i);
                let t = self.value(b);
                t.when(self.carries_slices(&e.ty))
            }
            ExprKind::SliceRange { base, lo, hi } => {
                for x in [lo, hi].into_iter().flatten() {
                    self.value(x);
                }
                match base.ty {
                    Type::Array(..) => self.address_taint(base),
                    _ => self.value(base),
                }
            }
            ExprKind::Unary(_, x) | ExprKind::Cast(x) | ExprKind::Len(x) => {
                self.value(x);
                Taint::default()
            }
            ExprKind::Binary(_, l, r) => {
                self.value(l);
                self.value(r);
                Taint::default()
            }
            ExprKind::Call { func, args } => {
                // A callee may return its argument, or fresh memory (a
                // `reusable[]` it allocated) holding it.
                let t = self.call(*func, args);
                t.when(self.carries_slices(&e.ty))
            }
            ExprKind::CallExtern { args, .. } => {
                for a in args {
                    match a {
                        Arg::Value(x) => self.value(x),
                        Arg::Ref(x) => self.address_taint(x),
                    };
                }
                Taint::default()
            }
            ExprKind::StructLit { fields: items, .. } | ExprKind::ArrayLit(items) => {
                let mut t = Taint::default();
                for x in items {
                    let v = self.value(x);
                    t.add(&v);
                }
                t
            }
            ExprKind::ArrayRepeat { value, .. } => self.value(value),
            ExprKind::Builtin(b, args) => {
                let taints: Vec<Taint> = args.iter().map(|x| self.value(x)).collect();
                if *b == Builtin::ReusableAppend
                    && let (Some(t), Some(v)) = (taints.get(1), args.get(1))
                    && !t.is_empty()
                {
                    let origin = self.worst(t);
                    let kind = ErrorKind::EscapeStore {
                        array: self.origin(origin),
                        into: EscapeTarget::ReusableElement,
                    };
                    self.escape(kind, v.span, origin, None);
                }
                // A grown or resized reusable slice holds what it held.
                match b {
                    Builtin::ReusableAppend | Builtin::ReusableResize => taints
                        .into_iter()
                        .next()
                        .unwrap_or_default()
                        .when(self.carries_slices(&e.ty)),
                    _ => Taint::default(),
                }
            }
        }
    }

    /// A call's effects; returns the taint of its result.
    fn call(&mut self, func: FuncId, args: &[Arg]) -> Taint {
        let summary = (self.callee)(func);
        // What the callee could store (the values it is given) and what it
        // could return (those, and slices of arrays it gets by `ref` when its
        // summary says so; it may store no such slice, see `Pass::stmt`).
        let mut stored = Taint::default();
        let mut carrier = None;
        let mut returned = Taint::default();
        for (i, a) in args.iter().enumerate() {
            let (held, x) = match a {
                Arg::Value(x) => (self.value(x), x),
                Arg::Ref(x) => {
                    let addr = self.address_taint(x);
                    let may_return = match summary {
                        Some(s) => s.get(i).copied().unwrap_or(false),
                        None => self.inline_array(&x.ty),
                    };
                    returned.add(&addr.when(may_return));
                    (self.value(x), x)
                }
            };
            if carrier.is_none() && !held.is_empty() {
                carrier = Some(x.span);
            }
            stored.add(&held);
        }
        let Some(carrier) = carrier else {
            return returned;
        };
        // Where the callee could store what it was given.
        for a in args {
            match a {
                Arg::Ref(x) if self.holds_slice(&x.ty) || self.reaches_slices(&x.ty) => {
                    match self.home(x) {
                        Some(Home::Frame(id)) if !self.reaches_slices(&x.ty) => {
                            self.taint_local(id, &stored)
                        }
                        _ => self.escape_call(x.span, &stored, carrier),
                    }
                }
                Arg::Value(x) if self.reaches_slices(&x.ty) => {
                    self.escape_call(x.span, &stored, carrier)
                }
                _ => {}
            }
        }
        returned.or(stored)
    }

    fn escape_call(&mut self, at: Span, stored: &Taint, carrier: Span) {
        let origin = self.worst(stored);
        let kind = ErrorKind::EscapeCall(self.origin(origin));
        self.escape(kind, at, origin, Some(carrier));
    }

    // ---- statements ----

    fn block(&mut self, b: &Block) {
        if self.backwards {
            for s in b.stmts.iter().rev() {
                self.stmt(s);
            }
        } else {
            for s in &b.stmts {
                self.stmt(s);
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { local, init } => {
                let t = self.value(init);
                self.taint_local(local.0, &t);
            }
            Stmt::Assign { place, value } => {
                let t = self.value(value);
                self.address_taint(place);
                if !t.is_empty() {
                    self.store(place, value.span, &t);
                }
            }
            Stmt::CompoundAssign { place, value, .. } => {
                self.value(value);
                self.address_taint(place);
            }
            Stmt::Expr(e) => {
                self.value(e);
            }
            Stmt::If { .. } => {
                let chain = s.if_arms().expect("an if");
                for (cond, then) in chain.arms {
                    self.value(cond);
                    self.block(then);
                }
                if let Some(e) = chain.last {
                    self.block(e);
                }
            }
            Stmt::While { cond, body } => {
                self.value(cond);
                self.block(body);
            }
            Stmt::For {
                start, end, body, ..
            } => {
                self.value(start);
                self.value(end);
                self.block(body);
            }
            Stmt::ForEach { var, seq, body, .. } => {
                // Each element's value: what indexing the sequence gives.
                let t = self.value(seq);
                let elem = seq.ty.element().cloned().unwrap_or(Type::Unit);
                let t = t.when(self.carries_slices(&elem));
                self.taint_local(var.0, &t);
                self.block(body);
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Break | Stmt::Continue | Stmt::Return(None) => {}
            Stmt::Return(Some(e)) => {
                // A slice of an array behind a `ref` parameter is the caller's
                // memory: the caller treats the result as its own (through
                // this function's summary). A frame array cannot leave.
                let t = self.value(e);
                for &o in &t.0 {
                    if self.ref_param[o as usize]
                        && let Some(i) = self.facts.params.iter().position(|p| p.local.0 == o)
                    {
                        self.summary[i] = true;
                    }
                }
                if let Some(&origin) = t.0.iter().find(|&&o| !self.ref_param[o as usize]) {
                    let kind = ErrorKind::EscapeReturn(self.origin(origin));
                    self.escape(kind, e.span, origin, None);
                }
            }
        }
    }

    /// A tainted value stored into `place`.
    fn store(&mut self, place: &Expr, at: Span, t: &Taint) {
        match self.home(place) {
            Some(Home::Frame(id)) => self.taint_local(id, t),
            Some(Home::Outside(into)) => {
                let origin = self.worst(t);
                let kind = ErrorKind::EscapeStore {
                    array: self.origin(origin),
                    into,
                };
                self.escape(kind, at, origin, None);
            }
            None => {}
        }
    }

    fn taint_local(&mut self, id: u32, t: &Taint) {
        if self.taint[id as usize].add(t) {
            self.changed = true;
        }
    }

    /// The origin to name in a message: a local array before a `ref` parameter.
    fn worst(&self, t: &Taint) -> u32 {
        let local = t.0.iter().find(|&&o| !self.ref_param[o as usize]);
        *local.or(t.0.first()).unwrap_or(&0)
    }

    fn origin(&self, local: u32) -> EscapeOrigin {
        let name = self.facts.locals[local as usize].name.clone();
        if name == crate::tir::TEXT_LOCAL {
            EscapeOrigin::Text
        } else if self.ref_param[local as usize] {
            EscapeOrigin::RefParam(name)
        } else {
            EscapeOrigin::Local(name)
        }
    }

    fn escape(&mut self, kind: ErrorKind, at: Span, origin: u32, carrier: Option<Span>) {
        if !self.report {
            return;
        }
        let name = self.facts.locals[origin as usize].name.clone();
        let label = if name == crate::tir::TEXT_LOCAL {
            LabelKind::TextCopied
        } else if self.ref_param[origin as usize] {
            LabelKind::RefParamArray(name.clone())
        } else {
            LabelKind::ArrayDeclared(name.clone())
        };
        let mut d = Diagnostic::new(kind, at).label(self.facts.local_spans[origin as usize], label);
        if let Some(c) = carrier {
            d = d.label(c, LabelKind::SliceOfLocal(name));
        }
        self.diags.push(d.note(NoteKind::EscapeRule));
    }
}
